// SPDX-License-Identifier: MIT
/*
 * Authenticated dm-crypt (lib/crypt/crypt_auth*.c):
 *  - every combination's sector format re-derived with OpenSSL alone in
 *    the test (AAD = le64(512-byte sector) || IV, tag = T || IV, volume
 *    key = cipher key || MAC key): what the engine wrote decrypts and
 *    authenticates here;
 *  - AEGIS-128: round trip, every tampering refused;
 *  - images: format / check / decrypt round trips, a flipped ciphertext
 *    byte and a flipped tag byte named at the right 512-byte sector,
 *    decrypt refusing them unless allowed, too small a device refused
 *    with the size needed;
 *  - libcryptsetup 2.6.1 loads our headers (cipher, integrity info,
 *    volume key size, our volume key for our passphrase) and luksDump
 *    shows the integrity segment.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/helpers.h"
#include <dmt/crypt.h>
#include <dmt/crypt_auth.h>
#include <dmt/io.h>
#include <dmt/luks2.h>

#include "lib/common/cpu.h"
#include "lib/common/testhooks.h"
#include "lib/crypt/aes_arch.h"
#include "lib/crypt/crypt_auth_priv.h"

#if !defined(DMT_NO_LIBCRYPTSETUP) && __has_include(<libcryptsetup.h>)
#include <libcryptsetup.h>
#define HAVE_LIBCRYPTSETUP 1
#endif

static const char *const combos[][2] = {
	{ "aes-xts-random", "hmac-sha256" }, { "aes-xts-random", "hmac-sha512" },
	{ "aes-xts-random", "hmac-sha1" },   { "aes-gcm-random", "aead" },
	{ "chacha20-random", "poly1305" },   { "aegis128-random", "aead" },
};
#define N_COMBOS (sizeof(combos) / sizeof(combos[0]))

static void le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* One sector by OpenSSL alone: true if it authenticates and decrypts to
 * want. */
static bool openssl_sector(const struct dmt_auth_spec *s, const uint8_t *key,
			   unsigned int ss, uint64_t sector, const uint8_t *ct,
			   const uint8_t *tag, const uint8_t *want)
{
	const uint8_t *iv = tag + s->auth_tag_size;
	uint8_t aad[8 + 16], pt[4096], mac[64];
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	bool ok = false;
	int l;

	le64(aad, sector * (ss / 512));
	memcpy(aad + 8, iv, s->iv_size);
	if (s->kind == DMT_AUTH_HMAC_XTS) {
		uint8_t msg[8 + 16 + 4096];
		unsigned int ml;

		memcpy(msg, aad, 8 + s->iv_size);
		memcpy(msg + 8 + s->iv_size, ct, ss);
		HMAC(EVP_get_digestbyname(s->integrity + 5),
		     key + s->cipher_key_size, (int)s->mac_key_size, msg,
		     8 + s->iv_size + ss, mac, &ml);
		ok = !memcmp(mac, tag, s->auth_tag_size);
		EVP_DecryptInit_ex(c, EVP_aes_256_xts(), NULL, key, iv);
		EVP_DecryptUpdate(c, pt, &l, ct, (int)ss);
	} else {
		const EVP_CIPHER *e = s->kind == DMT_AUTH_GCM ?
					      EVP_aes_256_gcm() :
					      EVP_chacha20_poly1305();

		EVP_DecryptInit_ex(c, e, NULL, NULL, NULL);
		EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL);
		EVP_DecryptInit_ex(c, NULL, NULL, key, iv);
		EVP_DecryptUpdate(c, NULL, &l, aad, 8 + 12);
		EVP_DecryptUpdate(c, pt, &l, ct, (int)ss);
		EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, 16, (void *)tag);
		ok = EVP_DecryptFinal_ex(c, pt + l, &l) == 1;
	}
	EVP_CIPHER_CTX_free(c);
	return ok && !memcmp(pt, want, ss);
}

static void engine_vs_openssl(const char *cipher, const char *integ,
			      unsigned int ss)
{
	struct dmt_auth_spec s;
	struct dmt_auth *a;
	struct dmt_reason r = { 0 };
	uint8_t key[128];	/* the largest: xts 64 + hmac-sha512 64 */
	size_t n = 300;
	uint8_t *pt = malloc(n * ss), *ct = malloc(n * ss), *tags;

	cr_assert_eq(dmt_auth_lookup(cipher, integ, 0, &s, &r), 0);
	tags = malloc(n * s.tag_size);
	th_fill_random(key, sizeof(key), 5);
	th_fill_random(pt, n * ss, 6);
	cr_assert_eq(
		dmt_auth_new(
			&(struct dmt_auth_params){
				.spec = &s,
				.key = key,
				.key_size = s.cipher_key_size + s.mac_key_size,
				.sector_size = ss,
				.threads = 2},
			&a, &r),
		0);
	cr_assert_eq(dmt_auth_encrypt(a, 1000, n, pt, ct, tags), 0);
	for (size_t i = 0; i < n; i += 37)
		cr_assert(openssl_sector(&s, key, ss, 1000 + i, ct + i * ss,
					 tags + i * s.tag_size, pt + i * ss),
			  "%s+%s ss %u: sector %zu does not verify with "
			  "OpenSSL", cipher, integ, ss, i);
	/* the wrong sector number must not verify (AAD binds it) */
	cr_assert_not(openssl_sector(&s, key, ss, 1001, ct, tags, pt));
	dmt_auth_free(a);
	free(pt);
	free(ct);
	free(tags);
}

Test(crypt_auth, sectors_match_openssl)
{
	for (size_t i = 0; i < 5; i++) /* not AEGIS: OpenSSL has none */
		for (unsigned int ss = 512; ss <= 4096; ss *= 8)
			engine_vs_openssl(combos[i][0], combos[i][1], ss);
}

Test(crypt_auth, decrypt_and_bad_flags)
{
	for (size_t c = 0; c < N_COMBOS; c++) {
		struct dmt_auth_spec s;
		struct dmt_auth *a;
		size_t n = 200, ss = 512;
		uint8_t key[128], *pt = malloc(n * ss), *ct = malloc(n * ss);
		uint8_t *back = malloc(n * ss), bad[200], *tags;

		cr_assert_eq(dmt_auth_lookup(combos[c][0], combos[c][1], 0, &s,
					     NULL), 0);
		tags = malloc(n * s.tag_size);
		th_fill_random(key, sizeof(key), 9);
		th_fill_random(pt, n * ss, 10);
		cr_assert_eq(dmt_auth_new(
				     &(struct dmt_auth_params){
					     .spec = &s,
					     .key = key,
					     .key_size = s.cipher_key_size +
							 s.mac_key_size,
					     .sector_size = (unsigned int)ss},
				     &a, NULL),
			     0);
		cr_assert_eq(dmt_auth_encrypt(a, 0, n, pt, ct, tags), 0);
		cr_assert_eq(dmt_auth_decrypt(a, 0, n, ct, back, tags, bad), 0);
		cr_assert_eq(memcmp(back, pt, n * ss), 0, "%s", combos[c][0]);
		ct[17 * ss + 3] ^= 1;			/* ciphertext */
		tags[150 * s.tag_size] ^= 0x80;		/* auth tag */
		tags[90 * s.tag_size + s.auth_tag_size] ^= 1; /* IV */
		cr_assert_eq(dmt_auth_decrypt(a, 0, n, ct, NULL, tags, bad), 3,
			     "%s+%s", combos[c][0], combos[c][1]);
		cr_assert(bad[17] && bad[90] && bad[150] && !bad[16] && !bad[0]);
		/* shifted by one sector: every AAD differs */
		cr_assert_eq(dmt_auth_decrypt(a, 1, 4, ct, NULL, tags, bad), 4);
		dmt_auth_free(a);
		free(pt);
		free(ct);
		free(back);
		free(tags);
	}
}

Test(crypt_auth, aegis128_tamper)
{
	uint8_t key[16], iv[16], ad[24], pt[100], ct[100], back[100], tag[16];

	th_fill_random(key, 16, 1);
	th_fill_random(iv, 16, 2);
	th_fill_random(ad, 24, 3);
	th_fill_random(pt, 100, 4);
	for (size_t len = 0; len <= 100; len += 25) {
		dmt_aegis128_encrypt(key, iv, ad, 24, pt, ct, len, tag);
		cr_assert_eq(dmt_aegis128_decrypt(key, iv, ad, 24, ct, back, len,
						  tag, 16), 0);
		cr_assert_eq(memcmp(back, pt, len), 0);
		if (len)
			cr_assert_neq(memcmp(ct, pt, len), 0);
		ad[5] ^= 1;
		cr_assert_eq(dmt_aegis128_decrypt(key, iv, ad, 24, ct, back,
						  len, tag, 16), -EBADMSG);
		ad[5] ^= 1;
		iv[0] ^= 1;
		cr_assert_eq(dmt_aegis128_decrypt(key, iv, ad, 24, ct, back,
						  len, tag, 16), -EBADMSG);
		iv[0] ^= 1;
		if (len) {
			ct[len - 1] ^= 4;
			cr_assert_eq(dmt_aegis128_decrypt(key, iv, ad, 24, ct,
							  back, len, tag, 16),
				     -EBADMSG);
		}
	}
}

/* ---- images ---- */

static const char pass[] = "auth passphrase";
/* progress hook every image format and check of these tests use */
static struct dmt_progress img_progress;

struct img {
	char *dir, *path, *payload;
	struct dmt_auth_result res;
	struct dmt_reason reason;
};

static int make_image(struct img *im, const char *cipher, const char *integ,
		      unsigned int ss, size_t payload, bool wipe,
		      uint64_t device_size)
{
	struct dmt_auth_spec s;
	struct dmt_luks2 *h;
	struct dmt_file *d = NULL, *p = NULL;
	struct dmt_reason r = { 0 };
	int ret;

	im->dir = th_mkdtemp();
	im->path = th_path(im->dir, "img");
	im->payload = th_path(im->dir, "payload");
	th_write_random_file(im->payload, payload, 42);
	cr_assert_eq(dmt_auth_lookup(cipher, integ, 0, &s, &r), 0);
	cr_assert_eq(dmt_luks2_create_auth(&(struct dmt_luks2_params){
		.sector_size = ss, .data_offset = 1 << 20 }, &s, &h, &r), 0);
	cr_assert_geq(dmt_luks2_add_keyslot(h, &(struct dmt_luks2_keyslot_params){
		.keyslot = -1, .pbkdf = { .type = "pbkdf2", .hash = "sha256",
			    .iterations = 1000 } },
		pass, strlen(pass), &r), 0);
	cr_assert_eq(dmt_file_open(im->path, DMT_OPEN_RW | DMT_OPEN_CREATE, &d),
		     0);
	cr_assert_eq(dmt_file_open(im->payload, DMT_OPEN_READ, &p), 0);
	ret = dmt_auth_format(&(struct dmt_auth_image_params){
		.h = h, .data = d, .payload = p, .wipe = wipe,
		.device_size = device_size, .device_size_auto = !device_size,
		.threads = 2, .progress = img_progress }, &im->res, &im->reason);
	dmt_file_close(d);
	dmt_file_close(p);
	dmt_luks2_free(h);
	return ret;
}

/* check (out NULL) or decrypt into out. */
static int verify(struct img *im, const char *out, bool allow_bad)
{
	struct dmt_luks2 *h;
	struct dmt_file *d = NULL, *o = NULL;
	int ret;

	cr_assert_eq(dmt_file_open(im->path, DMT_OPEN_READ, &d), 0);
	cr_assert_eq(dmt_luks2_load(d, &h, NULL), 0);
	cr_assert_geq(dmt_luks2_unlock(h, -1, pass, strlen(pass), NULL), 0);
	if (out)
		cr_assert_eq(
			dmt_file_open(out, DMT_OPEN_RW | DMT_OPEN_CREATE, &o),
			0);
	struct dmt_auth_image_params ai = { .h = h, .data = d, .output = o,
				     .allow_bad = allow_bad,
				     .progress = img_progress };
	ret = out ? dmt_auth_decrypt_image(&ai, &im->res, &im->reason) :
		    dmt_auth_check(&ai, &im->res, &im->reason);
	dmt_file_close(o);
	dmt_file_close(d);
	dmt_luks2_free(h);
	return ret;
}

static void img_free(struct img *im)
{
	th_rmtree(im->dir);
	free(im->dir);
	free(im->path);
	free(im->payload);
}

Test(crypt_auth, image_round_trip_and_corruption)
{
	for (size_t c = 0; c < N_COMBOS; c++) {
		for (unsigned int ss = 512; ss <= 4096; ss *= 8) {
			struct img im;
			size_t plen = 300 * 1024, len;
			char *out;
			uint8_t *got, *want;

			cr_assert_eq(make_image(&im, combos[c][0], combos[c][1],
						ss, plen, c % 2 == 0, 5 << 20),
				     0, "%s+%s %u: reason %d need %lu",
				     combos[c][0], combos[c][1], ss,
				     im.reason.code,
				     (unsigned long)im.res.need_bytes);
			cr_assert_geq(im.res.mapped_bytes, plen);
			struct dmt_integrity_geom g = im.res.geom;
			uint64_t doff = im.res.data_offset;
			unsigned int ts = im.res.spec.tag_size;

			int vr = verify(&im, NULL, false);

			cr_assert_eq(vr, (c % 2 == 0 ? 0 : -EBADMSG),
				     "%s+%s %u clean: %d", combos[c][0],
				     combos[c][1], ss, vr);
			if (c % 2) /* no wipe: the sectors after the payload fail */
				cr_assert_eq(im.res.first_bad[0], plen / 512);
			out = th_path(im.dir, "out");
			cr_assert_eq(verify(&im, out, true),
				     (c % 2 == 0 ? 0 : -EBADMSG));
			got = th_read_file(out, &len);
			want = th_read_file(im.payload, &len);
			cr_assert_eq(memcmp(got, want, plen), 0);
			free(got);
			free(want);
			/* a ciphertext byte of sector 40 (512-byte units: 40 *
			 * spb), a tag byte of sector 70 */
			uint64_t a = 40 * (ss / 512), b = 70 * (ss / 512);

			th_flip_byte(im.path,
				     doff + (dmt_integrity_data_sector(&g, a) << 9) +
					     5, 0x10);
			th_flip_byte(im.path,
				     doff + dmt_integrity_tag_offset(&g, b) + ts - 1 -
					     (ts - im.res.spec.auth_tag_size),
				     0x01);
			cr_assert_eq(verify(&im, NULL, false), -EBADMSG);
			cr_assert_geq(im.res.n_first_bad, 2);
			cr_assert_eq(im.res.first_bad[0], a, "%s %u: %lu", combos[c][0],
				     ss, (unsigned long)im.res.first_bad[0]);
			cr_assert_eq(im.res.first_bad[1], b);
			cr_assert_eq(verify(&im, out, false), -EBADMSG);
			cr_assert_eq(im.res.first_bad[0], a);
			free(out);
			img_free(&im);
		}
	}
}

Test(crypt_auth, device_too_small)
{
	struct img im;

	cr_assert_eq(make_image(&im, "aes-gcm-random", "aead", 4096, 4 << 20,
				false, 3 << 20), -ENOSPC);
	cr_assert_eq(im.reason.code, DMT_REASON_AUTH_TOO_SMALL);
	cr_assert_gt(im.res.need_bytes, (4u << 20) + (1u << 20));
	img_free(&im);
	/* the size asked for is enough, one sector less is not */
	struct dmt_auth_spec gs;
	uint64_t need;

	cr_assert_eq(dmt_auth_lookup("aes-gcm-random", "aead", 0, &gs, NULL), 0);
	cr_assert_eq(dmt_auth_min_device(&gs, 4096, 1 << 20, 0, 4 << 20, &need, NULL),
		     0);
	cr_assert_eq(make_image(&im, "aes-gcm-random", "aead", 4096, 4 << 20,
				false, need), 0);
	cr_assert_eq(im.res.device_bytes, need);
	img_free(&im);
	cr_assert_eq(make_image(&im, "aes-gcm-random", "aead", 4096, 4 << 20,
				false, need - 4096), -ENOSPC);
	cr_assert_eq(im.res.need_bytes, need);
	img_free(&im);
	cr_assert_eq(dmt_auth_lookup("aes-xts-random", "aead", 0,
				     &(struct dmt_auth_spec){ 0 }, NULL),
		     -EINVAL);
	cr_assert_eq(dmt_auth_lookup("aegis128-random", "aead", 32,
				     &(struct dmt_auth_spec){ 0 }, NULL),
		     -EINVAL);
}

#ifdef HAVE_LIBCRYPTSETUP
Test(crypt_auth, libcryptsetup_reads_our_headers)
{
	static const struct {
		const char *integ_name;
		int tag, key;
		size_t vk;
	} want[] = {
		{ "hmac(sha256)", 48, 32, 96 }, { "hmac(sha512)", 80, 64, 128 },
		{ "hmac(sha1)", 36, 20, 84 },  { "aead", 28, 0, 32 },
		{ "poly1305", 28, 0, 32 },     { "aead", 32, 0, 16 },
	};

	for (size_t c = 0; c < N_COMBOS; c++) {
		struct img im;
		struct crypt_device *cd;
		struct crypt_params_integrity ip;
		char vk[256], *out = NULL;
		size_t vk_len = sizeof(vk);
		char mode[64];

		cr_assert_eq(make_image(&im, combos[c][0], combos[c][1], 4096,
					64 * 1024, false, 0), 0);
		cr_assert_eq(crypt_init(&cd, im.path), 0);
		cr_assert_eq(crypt_load(cd, CRYPT_LUKS2, NULL), 0,
			     "crypt_load %s", combos[c][0]);
		snprintf(mode, sizeof(mode), "%s-%s", crypt_get_cipher(cd),
			 crypt_get_cipher_mode(cd));
		cr_assert_str_eq(mode, combos[c][0]);
		cr_assert_eq(crypt_get_volume_key_size(cd), (int)want[c].vk);
		cr_assert_eq(crypt_get_integrity_info(cd, &ip), 0);
		cr_assert_str_eq(ip.integrity, want[c].integ_name);
		cr_assert_eq((int)ip.tag_size, want[c].tag, "%s: tag %u",
			     combos[c][0], ip.tag_size);
		cr_assert_eq((int)ip.integrity_key_size, want[c].key);
		cr_assert_geq(crypt_volume_key_get(cd, CRYPT_ANY_SLOT, vk,
						   &vk_len, pass, strlen(pass)),
			      0);
		cr_assert_eq(vk_len, want[c].vk);
		crypt_free(cd);
		cr_assert_eq(th_sh(&out, NULL, "cryptsetup luksDump '%s'",
				   im.path), 0);
		cr_assert(strstr(out, "integrity: ") &&
			  strstr(out, want[c].integ_name), "%s", out);
		free(out);
		img_free(&im);
	}
}
#endif

/* Against what cryptsetup 2.6.1 + kernel 6.1 made (testdata/crypt/auth):
 * the same segment JSON, volume key size, config, and a byte-identical
 * dm-integrity superblock for the same parameters and device size. */
#include <json-c/json.h>

static void same_as_luksformat(const char *name, const char *cipher,
			       const char *integ, unsigned int ss)
{
	char path[256];
	struct img im;
	struct dmt_luks2 *h;
	struct dmt_file *d = NULL;
	json_object *ref, *ours;
	uint8_t *sb_ref, *file;
	size_t len, flen;

	snprintf(path, sizeof(path), "testdata/crypt/auth/luksformat-%s.json",
		 name);
	ref = json_object_from_file(path);
	cr_assert(ref, "%s", path);
	snprintf(path, sizeof(path), "testdata/crypt/auth/luksformat-%s.sb",
		 name);
	sb_ref = th_read_file(path, &len);
	cr_assert_eq(len, 512);
	cr_assert_eq(make_image(&im, cipher, integ, ss, 64 * 1024, false,
				4 << 20), 0);
	file = th_read_file(im.path, &flen);
	cr_assert_eq(memcmp(file + (1 << 20), sb_ref, 512), 0,
		     "%s: dm-integrity superblock differs", name);
	cr_assert_eq(dmt_file_open(im.path, DMT_OPEN_READ, &d), 0);
	cr_assert_eq(dmt_luks2_load(d, &h, NULL), 0);
	ours = json_tokener_parse(dmt_luks2_json(h));
	static const char *const keys[] = { "segments", "config" };
	for (size_t i = 0; i < 2; i++) {
		json_object *a, *b;

		json_object_object_get_ex(ref, keys[i], &a);
		json_object_object_get_ex(ours, keys[i], &b);
		cr_assert(json_object_equal(a, b), "%s: %s: %s vs %s", name,
			  keys[i], json_object_to_json_string(a),
			  json_object_to_json_string(b));
	}
	json_object *ka, *kb, *sa, *sb;

	json_object_object_get_ex(ref, "keyslots", &ka);
	json_object_object_get_ex(ours, "keyslots", &kb);
	json_object_object_get_ex(json_object_object_get(ka, "0"), "key_size",
				  &sa);
	json_object_object_get_ex(json_object_object_get(kb, "0"), "key_size",
				  &sb);
	cr_assert_eq(json_object_get_int(sa), json_object_get_int(sb));
	json_object_put(ref);
	json_object_put(ours);
	dmt_luks2_free(h);
	dmt_file_close(d);
	free(sb_ref);
	free(file);
	img_free(&im);
}

Test(crypt_auth, same_as_cryptsetup_luksformat)
{
	same_as_luksformat("xts-hmac-sha256-4096", "aes-xts-random",
			   "hmac-sha256", 4096);
	same_as_luksformat("gcm-aead-512", "aes-gcm-random", "aead", 512);
	same_as_luksformat("aegis128-aead-4096", "aegis128-random", "aead",
			   4096);
}

/* Sector 1 as the kernel encrypted it: our engine must authenticate and
 * decrypt it, and refuse it after one flipped bit. */
static void kernel_sector(const char *name, const char *cipher,
			  const char *integ, unsigned int ss)
{
	char path[256], *hex;
	uint8_t key[128], *ct, *tag, *plain, out[4096], bad[1];
	size_t len, klen, n;
	struct dmt_auth_spec s;
	struct dmt_auth *a;

	snprintf(path, sizeof(path), "testdata/crypt/auth/kernel-%s.vk", name);
	hex = (char *)th_read_file(path, &len);
	for (klen = 0; klen < sizeof(key) && 2 * klen + 1 < len; klen++)
		sscanf(hex + 2 * klen, "%2hhx", &key[klen]);
	free(hex);
	snprintf(path, sizeof(path), "testdata/crypt/auth/kernel-%s.sector",
		 name);
	ct = th_read_file(path, &n);
	cr_assert_eq(n, ss);
	snprintf(path, sizeof(path), "testdata/crypt/auth/kernel-%s.tag", name);
	tag = th_read_file(path, &n);
	snprintf(path, sizeof(path), "testdata/crypt/auth/kernel-%s.plain",
		 name);
	plain = th_read_file(path, &len);
	cr_assert_eq(len, ss);
	cr_assert_eq(dmt_auth_lookup_luks2(cipher, integ, klen, &s, NULL), 0);
	cr_assert_eq(n, s.tag_size);
	cr_assert_eq(dmt_auth_new(&(struct dmt_auth_params){.spec = &s,
							    .key = key,
							    .key_size = klen,
							    .sector_size = ss,
							    .threads = 1},
				  &a, NULL),
		     0);
	cr_assert_eq(dmt_auth_decrypt(a, 1, 1, ct, out, tag, bad), 0,
		     "%s: the kernel's sector does not verify", name);
	cr_assert_eq(memcmp(out, plain, ss), 0, "%s", name);
	ct[100] ^= 1;
	cr_assert_eq(dmt_auth_decrypt(a, 1, 1, ct, out, tag, bad), 1);
	ct[100] ^= 1;
	cr_assert_eq(dmt_auth_decrypt(a, 2, 1, ct, out, tag, bad), 1,
		     "%s: another sector number must not verify", name);
	dmt_auth_free(a);
	free(ct);
	free(tag);
	free(plain);
}

Test(crypt_auth, kernel_encrypted_sectors)
{
	kernel_sector("xts-hmac-sha256-4096", "aes-xts-random", "hmac(sha256)",
		      4096);
	kernel_sector("gcm-aead-512", "aes-gcm-random", "aead", 512);
	kernel_sector("aegis128-aead-4096", "aegis128-random", "aead", 4096);
}

/* Our VAES GCM (aes-gcm-random's sectors where the CPU has it) against
 * OpenSSL EVP: both key sizes, AAD lengths around the block size, sector
 * lengths (and multiples of 256 that are not of 512), random IVs;
 * decryption in place gives the plaintext and the same tag. */
static void own_gcm_case(size_t key_len, size_t aad_len, size_t len,
			 uint64_t seed)
{
	struct dmt_gcm_key *k = aligned_alloc(64, sizeof(*k));
	uint8_t key[32], iv[12], aad[64], tag[16], want_tag[16], tag2[16];
	uint8_t *pt = malloc(len), *ct = malloc(len), *want = malloc(len);
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int l;

	th_fill_random(key, sizeof(key), seed);
	th_fill_random(iv, sizeof(iv), seed + 1);
	th_fill_random(aad, sizeof(aad), seed + 2);
	th_fill_random(pt, len, seed + 3);
	cr_assert(EVP_EncryptInit_ex(c, key_len == 16 ? EVP_aes_128_gcm() :
							EVP_aes_256_gcm(),
				     NULL, key, iv));
	cr_assert(EVP_EncryptUpdate(c, NULL, &l, aad, (int)aad_len));
	cr_assert(EVP_EncryptUpdate(c, want, &l, pt, (int)len));
	cr_assert(EVP_EncryptFinal_ex(c, want + l, &l));
	cr_assert(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, 16, want_tag));
	EVP_CIPHER_CTX_free(c);
	dmt_gcm_vaes_setkey(k, key, key_len);
	dmt_gcm_vaes_crypt(k, true, iv, aad, aad_len, pt, ct, len, tag);
	cr_assert(!memcmp(ct, want, len), "key %zu aad %zu len %zu: "
		  "ciphertext differs from OpenSSL", key_len, aad_len, len);
	cr_assert(!memcmp(tag, want_tag, 16), "key %zu aad %zu len %zu: tag "
		  "differs from OpenSSL", key_len, aad_len, len);
	dmt_gcm_vaes_crypt(k, false, iv, aad, aad_len, ct, ct, len, tag2);
	cr_assert(!memcmp(ct, pt, len) && !memcmp(tag2, want_tag, 16));
	free(k);
	free(pt);
	free(ct);
	free(want);
}

Test(crypt_auth, own_gcm_equals_openssl)
{
	static const size_t aads[] = { 0, 8, 16, 20, 33, 64 };
	/* 512 bytes per GHASH reduction, and a last 256 */
	static const size_t lens[] = { 256, 512, 768, 1024, 2048, 3840, 4096 };
	uint64_t seed = 500;

	if (!dmt_xts_vaes_usable())
		cr_skip_test("no VAES/VPCLMULQDQ/AVX-512 on this CPU");
	for (size_t kl = 16; kl <= 32; kl += 16)
		for (size_t a = 0; a < 6; a++)
			for (size_t l = 0; l < 7; l++)
				for (int rep = 0; rep < 3; rep++)
					own_gcm_case(kl, aads[a], lens[l],
						     seed += 5);
}

/* The engine's VAES GCM and its EVP path (AVX-512 masked off: for the
 * rest of the process, so every case's own engine is opened first) read
 * each other's sectors, and both refuse a flipped tag byte. */
Test(crypt_auth, gcm_engine_paths_agree)
{
	enum { CASES = 4 };
	struct dmt_auth_spec s[CASES];
	struct dmt_auth *own[CASES], *evp;
	uint8_t key[32];
	size_t n = 300;

	if (!dmt_xts_vaes_usable())
		cr_skip_test("no VAES/VPCLMULQDQ/AVX-512 on this CPU");
	th_fill_random(key, sizeof(key), 60);
	for (int round = 0; round < 2; round++)
		for (int c = 0; c < CASES; c++) {
			size_t kl = c & 1 ? 32 : 16;
			unsigned int ss = c & 2 ? 4096 : 512;
			struct dmt_auth_params p = { .spec = &s[c], .key = key,
						     .key_size = kl,
						     .sector_size = ss,
						     .threads = 2 };
			uint8_t *pt, *ct, *back, *tags, bad[300];

			if (!round) {
				cr_assert_eq(dmt_auth_lookup("aes-gcm-random",
							     "aead", kl, &s[c],
							     NULL), 0);
				cr_assert_eq(dmt_auth_new(&p, &own[c], NULL),
					     0);
				continue;
			}
			dmt_cpu_mask_off(DMT_CPU_X86_AVX512);
			cr_assert_eq(dmt_auth_new(&p, &evp, NULL), 0);
			pt = malloc(n * ss);
			ct = malloc(n * ss);
			back = malloc(n * ss);
			tags = malloc(n * s[c].tag_size);
			th_fill_random(pt, n * ss, 61 + c);
			cr_assert_eq(dmt_auth_encrypt(own[c], 9, n, pt, ct, tags),
				     0);
			cr_assert_eq(dmt_auth_decrypt(evp, 9, n, ct, back, tags,
						      bad), 0);
			cr_assert(!memcmp(back, pt, n * ss));
			cr_assert_eq(dmt_auth_encrypt(evp, 9, n, pt, ct, tags), 0);
			cr_assert_eq(dmt_auth_decrypt(own[c], 9, n, ct, back,
						      tags, bad), 0);
			cr_assert(!memcmp(back, pt, n * ss),
				  "key %zu ss %u: own GCM does not decrypt "
				  "EVP's sectors", kl, ss);
			tags[7 * s[c].tag_size + 3] ^= 1;
			cr_assert_eq(dmt_auth_decrypt(own[c], 9, n, ct, back,
						      tags, bad), 1);
			cr_assert(bad[7]);
			cr_assert_eq(dmt_auth_decrypt(evp, 9, n, ct, NULL, tags,
						      bad), 1);
			/* the sector number is bound (AAD) */
			cr_assert_eq(dmt_auth_decrypt(own[c], 10, n, ct, NULL,
						      tags, bad), (int)n);
			dmt_auth_free(own[c]);
			dmt_auth_free(evp);
			free(pt);
			free(ct);
			free(back);
			free(tags);
		}
}

/*
 * The walk's pipeline (loader, cipher, storer threads over a ring of 3
 * slots of 4 MiB chunks) over many chunks: a payload of 21 MiB + 5000
 * bytes (whole chunks, the last one zero-filled after the payload) round
 * trips; a write or read failing mid-walk, or the progress hook asking to
 * stop, ends the walk with that error (no hang), the failure named.  The
 * hook arms the fault after the 2nd chunk is stored, when the loader has
 * read at most 4 of the 6 chunks (its slot is freed after the hook).
 */
enum { STOP_NONE, STOP_WRITE, STOP_READ, STOP_ASK };
struct stopper {
	int mode, calls;
	uint64_t last;
};

static int stop_at_second(void *ctx, uint64_t done, uint64_t total)
{
	struct stopper *st = ctx;

	cr_assert_gt(done, st->last);	/* in order, serialized */
	cr_assert_leq(done, total);
	st->last = done;
	if (++st->calls != 2)
		return 0;
	if (st->mode == STOP_WRITE)
		dmt_io_fault_set("img", DMT_IO_WRITE, 1, EIO, false);
	if (st->mode == STOP_READ)
		dmt_io_fault_set("img", DMT_IO_READ, 1, EIO, false);
	return st->mode == STOP_ASK;
}

Test(crypt_auth, pipeline_many_chunks_faults_and_stop, .timeout = 60)
{
	static const size_t which[] = { 0, 3 };	/* hmac-sha256, gcm */
	size_t plen = (21 << 20) + 5000;

	for (size_t w = 0; w < 2; w++) {
		const char *ci = combos[which[w]][0], *in = combos[which[w]][1];
		struct stopper st = { STOP_NONE, 0, 0 };
		struct img im;
		char *out;
		uint8_t *got, *want;
		size_t len;

		img_progress = (struct dmt_progress){ stop_at_second, &st };
		cr_assert_eq(make_image(&im, ci, in, 4096, plen, true, 0), 0);
		cr_assert_geq(st.calls, 6, "%s: %d chunks", ci, st.calls);
		cr_assert_eq(st.last, im.res.mapped_bytes);
		st = (struct stopper){ STOP_NONE, 0, 0 };
		cr_assert_eq(verify(&im, NULL, false), 0);
		out = th_path(im.dir, "out");
		st = (struct stopper){ STOP_NONE, 0, 0 };
		cr_assert_eq(verify(&im, out, false), 0);
		got = th_read_file(out, &len);
		want = th_read_file(im.payload, &len);
		cr_assert_eq(memcmp(got, want, plen), 0, "%s+%s", ci, in);
		free(got);
		free(want);
		/* check: a read of the image fails after the 2nd chunk */
		st = (struct stopper){ STOP_READ, 0, 0 };
		cr_assert_eq(verify(&im, NULL, false), -EIO);
		cr_assert_eq(im.reason.code, DMT_REASON_IO);
		dmt_io_fault_clear();
		st = (struct stopper){ STOP_ASK, 0, 0 };
		cr_assert_eq(verify(&im, out, false), -EINTR);
		free(out);
		img_free(&im);
		/* format: a write fails, or the hook stops it */
		st = (struct stopper){ STOP_WRITE, 0, 0 };
		cr_assert_eq(make_image(&im, ci, in, 4096, plen, true, 0), -EIO);
		cr_assert_eq(im.reason.code, DMT_REASON_IO);
		cr_assert_eq(st.calls, 2);
		dmt_io_fault_clear();
		img_free(&im);
		st = (struct stopper){ STOP_ASK, 0, 0 };
		cr_assert_eq(make_image(&im, ci, in, 4096, plen, true, 0),
			     -EINTR);
		img_free(&im);
		img_progress = (struct dmt_progress){ 0 };
	}
}
