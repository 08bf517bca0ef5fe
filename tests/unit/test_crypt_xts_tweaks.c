// SPDX-License-Identifier: MIT
/*
 * Our VAES XTS with explicit per-sector tweaks (dmt_xts_vaes_crypt_tweaks,
 * lib/crypt/arch/x86_aes_vaes.c): what authenticated dm-crypt's
 * aes-xts-random uses, each sector's 16-byte random IV read where it sits
 * in the tags (a stride of tag_size).  Checked against OpenSSL EVP
 * aes-xts sector by sector: both key sizes, every sector size, many
 * sectors (not a multiple of the 4 tweaks computed at once), random
 * tweaks with every byte set, the strides of the three hmac tag layouts,
 * both directions, in place and out of place.  And the engine: its VAES
 * path and its EVP fallback (AVX-512 masked off) read each other's
 * sectors.
 */
#include <criterion/criterion.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "lib/common/cpu.h"
#include "lib/common/testhooks.h"
#include "lib/crypt/aes_arch.h"
#include "tests/support/helpers.h"
#include <dmt/crypt.h>
#include <dmt/crypt_auth.h>

/* One sector by OpenSSL EVP aes-xts with tweak iv. */
static void evp_xts(const uint8_t *key, size_t key_len, bool enc,
		    const uint8_t *iv, const uint8_t *in, uint8_t *out,
		    size_t len)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int l;

	cr_assert(c);
	cr_assert(EVP_CipherInit_ex(c, key_len == 32 ? EVP_aes_128_xts() :
						       EVP_aes_256_xts(),
				    NULL, key, iv, enc));
	cr_assert(EVP_CipherUpdate(c, out, &l, in, (int)len));
	EVP_CIPHER_CTX_free(c);
}

static void tweaks_case(size_t key_len, size_t ss, size_t stride, size_t n,
			bool in_place, uint64_t seed)
{
	struct dmt_xts_key *k = aligned_alloc(64, sizeof(*k));
	uint8_t key[64], *ivs = malloc(n * stride), *pt = malloc(n * ss);
	uint8_t *ct = malloc(n * ss), *want = malloc(ss), *back = malloc(n * ss);

	th_fill_random(key, key_len, seed);
	th_fill_random(ivs, n * stride, seed + 1);
	th_fill_random(pt, n * ss, seed + 2);
	dmt_xts_vaes_setkey(k, key, key_len);
	if (in_place) {
		memcpy(ct, pt, n * ss);
		dmt_xts_vaes_crypt_tweaks(k, true, ivs, stride, n, ct, ct, ss);
	} else {
		dmt_xts_vaes_crypt_tweaks(k, true, ivs, stride, n, pt, ct, ss);
	}
	for (size_t i = 0; i < n; i++) {
		evp_xts(key, key_len, true, ivs + i * stride, pt + i * ss, want,
			ss);
		cr_assert(!memcmp(ct + i * ss, want, ss),
			  "key %zu ss %zu stride %zu: sector %zu of %zu differs "
			  "from OpenSSL", key_len, ss, stride, i, n);
	}
	if (in_place) {
		memcpy(back, ct, n * ss);
		dmt_xts_vaes_crypt_tweaks(k, false, ivs, stride, n, back, back,
					  ss);
	} else {
		dmt_xts_vaes_crypt_tweaks(k, false, ivs, stride, n, ct, back,
					  ss);
	}
	cr_assert(!memcmp(back, pt, n * ss),
		  "key %zu ss %zu stride %zu: decryption is not the inverse",
		  key_len, ss, stride);
	free(k);
	free(ivs);
	free(pt);
	free(ct);
	free(want);
	free(back);
}

Test(crypt_xts_tweaks, equals_openssl, .timeout = 60)
{
	/* 16: contiguous IVs; 48, 80, 36: hmac-sha256/-sha512/-sha1 tags */
	static const size_t strides[] = { 16, 48, 80, 36 };
	uint64_t seed = 100;

	if (!dmt_xts_vaes_usable())
		cr_skip_test("no VAES/VPCLMULQDQ/AVX-512 on this CPU");
	for (size_t key_len = 32; key_len <= 64; key_len += 32)
		for (size_t ss = 512; ss <= 4096; ss *= 2)
			for (size_t s = 0; s < 4; s++)
				tweaks_case(key_len, ss, strides[s],
					    ss == 512 ? 203 : 37, s & 1,
					    seed += 7);
	/* fewer sectors than one group of four tweaks */
	for (size_t n = 1; n <= 5; n++)
		tweaks_case(64, 4096, 48, n, false, seed += 7);
}

/* Stride 16 is the plain interface: dmt_xts_vaes_crypt gives the same. */
Test(crypt_xts_tweaks, stride_16_is_the_plain_call)
{
	struct dmt_xts_key *k = aligned_alloc(64, sizeof(*k));
	size_t n = 9, ss = 4096;
	uint8_t key[64], ivs[9 * 16], *pt = malloc(n * ss);
	uint8_t *a = malloc(n * ss), *b = malloc(n * ss);

	if (!dmt_xts_vaes_usable())
		cr_skip_test("no VAES/VPCLMULQDQ/AVX-512 on this CPU");
	th_fill_random(key, sizeof(key), 1);
	th_fill_random(ivs, sizeof(ivs), 2);
	th_fill_random(pt, n * ss, 3);
	dmt_xts_vaes_setkey(k, key, sizeof(key));
	dmt_xts_vaes_crypt(k, true, ivs, n, pt, a, ss);
	dmt_xts_vaes_crypt_tweaks(k, true, ivs, 16, n, pt, b, ss);
	cr_assert(!memcmp(a, b, n * ss));
	free(k);
	free(pt);
	free(a);
	free(b);
}

static struct dmt_auth *open_hmac(const struct dmt_auth_spec *s,
				  const uint8_t *key, unsigned int ss)
{
	struct dmt_auth *a;

	cr_assert_eq(dmt_auth_new(
			     &(struct dmt_auth_params){
				     .spec = s,
				     .key = key,
				     .key_size = s->cipher_key_size +
						 s->mac_key_size,
				     .sector_size = ss,
				     .threads = 2},
			     &a, NULL),
		     0);
	return a;
}

/* The engine's VAES path and its EVP fallback (AVX-512 masked off: for
 * the rest of the process, so every case's VAES engine is opened first):
 * each decrypts (and authenticates) what the other encrypted. */
Test(crypt_xts_tweaks, engine_paths_agree)
{
	static const char *const integ[] = { "hmac-sha256", "hmac-sha512",
					     "hmac-sha1" };
	enum { CASES = 6 };
	struct dmt_auth_spec s[CASES];
	struct dmt_auth *vaes[CASES], *evp;
	uint8_t key[128];
	size_t n = 300;

	if (!dmt_xts_vaes_usable())
		cr_skip_test("no VAES/VPCLMULQDQ/AVX-512 on this CPU");
	th_fill_random(key, sizeof(key), 40);
	for (int round = 0; round < 2; round++)
		for (int c = 0; c < CASES; c++) {
			unsigned int ss = c & 1 ? 4096 : 512;
			uint8_t bad[300], *tags, *pt, *ct, *back;

			if (!round) {
				/* hmac-sha256 with AES-256, the others 128 */
				cr_assert_eq(dmt_auth_lookup("aes-xts-random",
							     integ[c / 2],
							     c < 2 ? 64 : 32,
							     &s[c], NULL), 0);
				vaes[c] = open_hmac(&s[c], key, ss);
				continue;
			}
			dmt_cpu_mask_off(DMT_CPU_X86_AVX512);
			cr_assert_not(dmt_xts_vaes_usable());
			evp = open_hmac(&s[c], key, ss);
			pt = malloc(n * ss);
			ct = malloc(n * ss);
			back = malloc(n * ss);
			tags = malloc(n * s[c].tag_size);
			th_fill_random(pt, n * ss, 50 + c);
			cr_assert_eq(dmt_auth_encrypt(vaes[c], 77, n, pt, ct,
						      tags), 0);
			cr_assert_eq(dmt_auth_decrypt(evp, 77, n, ct, back, tags,
						      bad), 0);
			cr_assert(!memcmp(back, pt, n * ss));
			cr_assert_eq(dmt_auth_encrypt(evp, 77, n, pt, ct, tags),
				     0);
			cr_assert_eq(dmt_auth_decrypt(vaes[c], 77, n, ct, back,
						      tags, bad), 0);
			cr_assert(!memcmp(back, pt, n * ss),
				  "%s ss %u: VAES does not decrypt EVP's "
				  "sectors", integ[c / 2], ss);
			/* and a flipped ciphertext byte fails there */
			ct[5 * ss + 9] ^= 1;
			cr_assert_eq(dmt_auth_decrypt(vaes[c], 77, n, ct, back,
						      tags, bad), 1);
			cr_assert(bad[5]);
			dmt_auth_free(vaes[c]);
			dmt_auth_free(evp);
			free(pt);
			free(ct);
			free(back);
			free(tags);
		}
}
