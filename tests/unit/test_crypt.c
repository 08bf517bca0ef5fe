// SPDX-License-Identifier: MIT
/*
 * lib/crypt cipher engine: known answers (testdata/crypt/cipher-kat.txt,
 * made by make_vectors.py with python3-cryptography), both directions
 * against plain OpenSSL with IVs computed here, listed sectors, thread
 * independence, refusals; plain-mode key hashing against libcryptsetup's
 * crypt_volume_key_get on a plain device.
 */
#include <criterion/criterion.h>
#include <errno.h>
#if !defined(DMT_NO_LIBCRYPTSETUP) && __has_include(<libcryptsetup.h>)
#include <libcryptsetup.h>
#define HAVE_LIBCRYPTSETUP 1
#endif
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/support/helpers.h"
#include <dmt/crypt.h>
#include <dmt/hash.h>
#include <dmt/io.h>
#include <dmt/reason.h>

#include "lib/crypt/crypt_priv.h"

static void unhex(const char *hex, uint8_t *out, size_t *len)
{
	size_t n = strlen(hex) / 2;

	for (size_t i = 0; i < n; i++)
		cr_assert_eq(sscanf(hex + 2 * i, "%2hhx", &out[i]), 1);
	*len = n;
}

static void tohex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static void pattern(uint8_t *buf, size_t len)
{
	for (size_t j = 0; j < len; j++)
		buf[j] = (uint8_t)((j * 31 + 7) & 0xff);
}

static char *kat_path(void)
{
	const char *src = getenv("DMT_SRC");
	char *p;

	cr_assert(asprintf(&p, "%s/testdata/crypt/cipher-kat.txt",
			   src && *src ? src : ".") > 0);
	return p;
}

static struct dmt_crypt *open_engine(const char *cipher, const uint8_t *key,
				     size_t ks, unsigned int ss, bool large,
				     uint64_t off, unsigned int threads)
{
	struct dmt_crypt_params p = { .cipher = cipher, .key = key,
				      .key_size = ks, .sector_size = ss,
				      .iv_large_sectors = large,
				      .iv_offset = off, .threads = threads };
	struct dmt_reason r = { 0 };
	struct dmt_crypt *c = NULL;

	cr_assert_eq(dmt_crypt_new(&p, &c, &r), 0, "%s ks %zu ss %u: %d",
		     cipher, ks, ss, r.code);
	return c;
}

Test(crypt, known_answers)
{
	char *path = kat_path(), line[512];
	FILE *fp = fopen(path, "r");
	int cases = 0;

	cr_assert(fp, "%s", path);
	while (fgets(line, sizeof(line), fp)) {
		char cipher[32], keyhex[160], want[65], got[65];
		unsigned int ss, large, count;
		unsigned long long off, first;
		uint8_t key[64], digest[32], *buf;
		size_t ks;
		struct dmt_crypt *c;

		if (line[0] == '#')
			continue;
		cr_assert_eq(sscanf(line, "%31s %159s %u %u %llu %llu %u %64s",
				    cipher, keyhex, &ss, &large, &off, &first,
				    &count, want), 8, "%s", line);
		unhex(keyhex, key, &ks);
		buf = malloc((size_t)ss * count);
		pattern(buf, (size_t)ss * count);
		c = open_engine(cipher, key, ks, ss, large, off, 1);
		cr_assert_eq(dmt_crypt_encrypt(c, first, count, buf, buf), 0);
		EVP_Digest(buf, (size_t)ss * count, digest, NULL, EVP_sha256(),
			   NULL);
		tohex(digest, 32, got);
		cr_expect_str_eq(got, want, "%s", line);
		cr_assert_eq(dmt_crypt_decrypt(c, first, count, buf, buf), 0);
		for (size_t j = 0; j < (size_t)ss * count; j++)
			cr_assert_eq(buf[j], (uint8_t)((j * 31 + 7) & 0xff),
				     "%s: decrypt byte %zu", line, j);
		dmt_crypt_free(c);
		free(buf);
		cases++;
	}
	fclose(fp);
	free(path);
	cr_expect_geq(cases, 80, "only %d vectors", cases);
}

/* ---- against OpenSSL directly, IVs computed here ---- */

static void openssl_sector(const char *cipher, const uint8_t *key,
			   size_t ks, uint64_t ivs, int enc, const uint8_t *in,
			   uint8_t *out, size_t ss)
{
	bool xts = strstr(cipher, "-xts-") != NULL;
	const EVP_CIPHER *evp =
		xts ? (ks == 32 ? EVP_aes_128_xts() : EVP_aes_256_xts()) :
		      (ks == 16 ? EVP_aes_128_cbc() :
		       ks == 24 ? EVP_aes_192_cbc() : EVP_aes_256_cbc());
	uint8_t iv[16] = { 0 };
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int len;

	if (strstr(cipher, "-plain") && !strstr(cipher, "plain64"))
		ivs &= 0xffffffffu;
	for (int i = 0; i < 8; i++)
		iv[i] = (uint8_t)(ivs >> (8 * i));
	if (strstr(cipher, "essiv")) {
		uint8_t salt[32];
		EVP_CIPHER_CTX *e = EVP_CIPHER_CTX_new();

		EVP_Digest(key, ks, salt, NULL, EVP_sha256(), NULL);
		cr_assert(EVP_EncryptInit_ex(e, EVP_aes_256_ecb(), NULL, salt,
					     NULL));
		EVP_CIPHER_CTX_set_padding(e, 0);
		cr_assert(EVP_EncryptUpdate(e, iv, &len, iv, 16));
		EVP_CIPHER_CTX_free(e);
	}
	cr_assert(EVP_CipherInit_ex(ctx, evp, NULL, key, iv, enc));
	EVP_CIPHER_CTX_set_padding(ctx, 0);
	cr_assert(EVP_CipherUpdate(ctx, out, &len, in, (int)ss));
	EVP_CIPHER_CTX_free(ctx);
}

static const char *const all_ciphers[] = { "aes-xts-plain64", "aes-xts-plain",
					   "aes-cbc-essiv:sha256",
					   "aes-cbc-plain64" };

Test(crypt, both_directions_against_openssl)
{
	const unsigned int sizes[] = { 512, 1024, 2048, 4096 };
	const size_t n = 37;
	uint8_t key[64];

	th_fill_random(key, sizeof(key), 5);
	for (size_t ci = 0; ci < 4; ci++) {
		const char *cipher = all_ciphers[ci];
		size_t ks = strstr(cipher, "xts") ? 64 : 32;

		for (size_t si = 0; si < 4; si++) {
			unsigned int ss = sizes[si];
			unsigned int spb = ss / 512;
			bool large = si & 1;
			uint64_t off = 8 * spb, first = 1000;
			uint8_t *pt = malloc(n * ss), *ct = malloc(n * ss),
				*ref = malloc(n * ss);
			struct dmt_crypt *c =
				open_engine(cipher, key, ks, ss, large, off, 2);

			th_fill_random(pt, n * ss, ss + ci);
			cr_assert_eq(dmt_crypt_encrypt(c, first, n, pt, ct), 0);
			for (size_t i = 0; i < n; i++) {
				uint64_t v = (first + i) * spb + off;

				if (large)
					v /= spb;
				openssl_sector(cipher, key, ks, v, 0,
					       ct + i * ss, ref + i * ss, ss);
				openssl_sector(cipher, key, ks, v, 1,
					       pt + i * ss, ct + i * ss, ss);
			}
			cr_expect_eq(memcmp(ref, pt, n * ss), 0,
				     "%s ss %u: engine -> openssl", cipher, ss);
			cr_assert_eq(dmt_crypt_decrypt(c, first, n, ct, ref), 0);
			cr_expect_eq(memcmp(ref, pt, n * ss), 0,
				     "%s ss %u: openssl -> engine", cipher, ss);
			dmt_crypt_free(c);
			free(pt);
			free(ct);
			free(ref);
		}
	}
}

/* A listed set gives each sector what a consecutive run gives it; the
 * thread count never changes a byte (runs big enough to go parallel). */
Test(crypt, list_and_threads)
{
	const unsigned int ss = 4096;
	const size_t n = 1024; /* 4 MiB: parallel */
	uint8_t key[64], *pt = malloc(n * ss), *a = malloc(n * ss),
			 *b = malloc(n * ss), *l = malloc(5 * ss);
	const uint64_t list[5] = { 700, 3, 1023, 3, 0 };

	th_fill_random(key, sizeof(key), 9);
	th_fill_random(pt, n * ss, 10);
	for (size_t ci = 0; ci < 4; ci++) {
		size_t ks = ci < 2 ? 64 : 32;
		struct dmt_crypt *c1 =
			open_engine(all_ciphers[ci], key, ks, ss, 0, 0, 1);
		struct dmt_crypt *c4 =
			open_engine(all_ciphers[ci], key, ks, ss, 0, 0, 4);

		cr_assert_eq(dmt_crypt_encrypt(c1, 0, n, pt, a), 0);
		cr_assert_eq(dmt_crypt_encrypt(c4, 0, n, pt, b), 0);
		cr_expect_eq(memcmp(a, b, n * ss), 0, "%s", all_ciphers[ci]);
		for (int i = 0; i < 5; i++)
			memcpy(l + i * ss, pt + list[i] * ss, ss);
		cr_assert_eq(dmt_crypt_encrypt_list(c4, list, 5, l, l), 0);
		for (int i = 0; i < 5; i++)
			cr_expect_eq(memcmp(l + i * ss, a + list[i] * ss, ss),
				     0, "%s list %d", all_ciphers[ci], i);
		cr_assert_eq(dmt_crypt_decrypt_list(c1, list, 5, l, l), 0);
		for (int i = 0; i < 5; i++)
			cr_expect_eq(memcmp(l + i * ss, pt + list[i] * ss, ss),
				     0);
		cr_assert_eq(dmt_crypt_decrypt(c4, 0, n, b, b), 0);
		cr_expect_eq(memcmp(b, pt, n * ss), 0);
		dmt_crypt_free(c1);
		dmt_crypt_free(c4);
	}
	free(pt);
	free(a);
	free(b);
	free(l);
}

Test(crypt, refusals)
{
	uint8_t key[64] = { 1 };
	struct dmt_crypt_params p = { .cipher = "aes-ctr-plain64", .key = key,
				      .key_size = 64, .sector_size = 512 };
	struct dmt_crypt_cipher ci;
	struct dmt_reason r = { 0 };
	struct dmt_crypt *c = NULL;

	cr_expect_eq(dmt_crypt_new(&p, &c, &r), -EINVAL);
	cr_expect_eq(r.code, DMT_REASON_CRYPT_CIPHER);
	cr_expect_str_eq(r.name, "aes-ctr-plain64");
	cr_expect_null(c);
	cr_expect(strstr(dmt_crypt_supported_ciphers(),
			 "aes-cbc-essiv:sha256"));
	cr_expect_eq(dmt_crypt_cipher_lookup("aes-xts-essiv:sha256", &ci, &r),
		     -EINVAL);

	p.cipher = "aes-xts-plain64";
	p.key_size = 48;
	cr_expect_eq(dmt_crypt_new(&p, &c, &r), -EINVAL);
	cr_expect_eq(r.code, DMT_REASON_CRYPT_KEY_SIZE);
	cr_expect_eq(r.value, 48);
	p.key_size = 64;
	p.sector_size = 8192;
	cr_expect_eq(dmt_crypt_new(&p, &c, &r), -EINVAL);
	cr_expect_eq(r.code, DMT_REASON_OUT_OF_RANGE);
	p.sector_size = 1536;
	cr_expect_eq(dmt_crypt_new(&p, &c, &r), -EINVAL);
	cr_expect_eq(r.code, DMT_REASON_NOT_POWER_OF_2);
	p.sector_size = 4096;
	p.iv_large_sectors = true;
	p.iv_offset = 4;
	cr_expect_eq(dmt_crypt_new(&p, &c, &r), -EINVAL);
	cr_expect_eq(r.code, DMT_REASON_CRYPT_IV_OFFSET);
	p.iv_offset = 16;
	cr_assert_eq(dmt_crypt_new(&p, &c, &r), 0);
	cr_expect_eq(dmt_crypt_sector_size(c), 4096);
	dmt_crypt_free(c);
}

#ifdef HAVE_LIBCRYPTSETUP
/* ---- plain-mode key hashing: libcryptsetup hashes the same way ---- */

/*
 * The key `cryptsetup open --type plain --hash HASH` makes.  The CLI drops
 * the hash "plain" (src/cryptsetup.c) and libcryptsetup's process_key then
 * copies the passphrase, cut or zero-padded; its API gives no key of a
 * device without a hash, so that rule is written out here (the kernel
 * suite's crypt-plain-hashplain-* cases prove it on a mapping).
 */
static void plain_vk_oracle(const char *dir, const char *hash,
			    const char *pass, size_t key_size, uint8_t *vk)
{
	struct crypt_params_plain pp = { .hash = hash };
	struct crypt_device *cd = NULL;
	char *dev;
	size_t len = key_size;

	if (!strcmp(hash, "plain")) {
		memset(vk, 0, key_size);
		memcpy(vk, pass, strlen(pass) < key_size ? strlen(pass) :
							   key_size);
		return;
	}
	dev = th_path(dir, "plain.img");

	th_write_random_file(dev, 1 << 20, 1);
	cr_assert_eq(crypt_init(&cd, dev), 0);
	cr_assert_eq(crypt_format(cd, CRYPT_PLAIN, "aes", "xts-plain64", NULL,
				  NULL, key_size, &pp), 0, "%s", hash);
	cr_assert_eq(crypt_volume_key_get(cd, CRYPT_ANY_SLOT, (char *)vk, &len,
					  pass, strlen(pass)), 0, "%s", hash);
	cr_assert_eq(len, key_size);
	crypt_free(cd);
	free(dev);
}

Test(crypt, plain_hash_as_cryptsetup)
{
	static const char *const long_pass =
		"correct horse battery staple, long enough";
	const struct {
		const char *hash;
		size_t key_size;
		const char *pass;
	} cases[] = {
		{ "ripemd160", 64, long_pass }, { "sha256", 64, long_pass },
		{ "sha256", 32, long_pass },	{ "sha512", 64, long_pass },
		{ "sha1", 32, long_pass },	{ "sha256:20", 64, long_pass },
		{ "sha256:20", 64, "xxxxxxxx" },
		/* plain: cut to the key, or zero-padded (issue 27) */
		{ "plain", 32, long_pass },	{ "plain", 32, "xxxxxxxx" },
		{ "plain", 64, long_pass },	{ "plain:16", 32, long_pass },
		{ "plain:8", 32, "xxxxxxxx" },	{ "plain:0", 32, "xxxxxxxx" },
		{ "plain: 4", 32, "xxxxxxxx" }, { "sha1:+7x", 32, long_pass },
	};
	char *dir = th_mkdtemp();

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t want[64], got[64];
		struct dmt_reason r = { 0 };
		const char *pass = cases[i].pass;

		plain_vk_oracle(dir, cases[i].hash, pass, cases[i].key_size,
				want);
		cr_assert_eq(dmt_crypt_plain_hash(cases[i].hash, pass,
						  strlen(pass), got,
						  cases[i].key_size, &r),
			     0, "%s", cases[i].hash);
		cr_expect_eq(memcmp(got, want, cases[i].key_size), 0, "%s/%zu",
			     cases[i].hash, cases[i].key_size);
	}
	th_rmtree(dir);
	free(dir);
}

#endif /* HAVE_LIBCRYPTSETUP */

Test(crypt, plain_hash_refusals)
{
	uint8_t key[32];
	struct dmt_reason r = { 0 };

	cr_expect_eq(dmt_crypt_plain_hash("nohash", "x", 1, key, 32, &r),
		     -EINVAL);
	cr_expect_eq(r.code, DMT_REASON_UNKNOWN_ALG);
	cr_expect_eq(dmt_crypt_plain_hash("sha256:40", "x", 1, key, 32, &r),
		     -EINVAL);
	cr_expect_eq(r.code, DMT_REASON_TOO_LARGE);
	cr_expect_eq(dmt_crypt_plain_hash("sha256:x", "x", 1, key, 32, &r),
		     -EINVAL);
	cr_expect_eq(dmt_crypt_plain_hash("sha256:", "x", 1, key, 32, &r),
		     -EINVAL);
	cr_expect_eq(dmt_crypt_plain_hash("sha256:-1", "x", 1, key, 32, &r),
		     -EINVAL);
	/* plain:N takes exactly N bytes: a shorter passphrase is refused */
	cr_expect_eq(dmt_crypt_plain_hash("plain:6", "short", 5, key, 32, &r),
		     -EINVAL);
	cr_expect_eq(r.code, DMT_REASON_TOO_SMALL);
	cr_expect_eq(r.min, 6);
	cr_expect_eq(dmt_crypt_plain_hash("plain:33", "x", 1, key, 32, &r),
		     -EINVAL);
	cr_expect_eq(r.code, DMT_REASON_TOO_LARGE);
	/* plain alone: the passphrase zero-padded to the key */
	cr_assert_eq(dmt_crypt_plain_hash("plain", "short", 5, key, 32, &r), 0);
	cr_expect_eq(memcmp(key, "short", 5), 0);
	for (size_t i = 5; i < sizeof(key); i++)
		cr_expect_eq(key[i], 0, "byte %zu", i);
	cr_expect(dmt_crypt_hash_usable("sha256"));
	cr_expect(!dmt_crypt_hash_usable("whirlpool-not-a-hash"));
	cr_expect(strstr(dmt_crypt_supported_hashes(), "sha256"));
}

#ifdef HAVE_LIBCRYPTSETUP
/* What libcryptsetup refuses, we refuse (plain:N past the passphrase). */
Test(crypt, plain_hash_refusals_as_cryptsetup)
{
	struct crypt_params_plain pp = { .hash = "plain:9" };
	struct crypt_device *cd = NULL;
	char *dir = th_mkdtemp(), *dev = th_path(dir, "plain.img");
	uint8_t key[32];
	size_t len = sizeof(key);

	th_write_random_file(dev, 1 << 20, 1);
	cr_assert_eq(crypt_init(&cd, dev), 0);
	cr_assert_eq(crypt_format(cd, CRYPT_PLAIN, "aes", "cbc-essiv:sha256",
				  NULL, NULL, sizeof(key), &pp), 0);
	cr_expect_lt(crypt_volume_key_get(cd, CRYPT_ANY_SLOT, (char *)key, &len,
					  "xxxxxxxx", 8), 0);
	cr_expect_eq(dmt_crypt_plain_hash("plain:9", "xxxxxxxx", 8, key,
					  sizeof(key), NULL), -EINVAL);
	crypt_free(cd);
	th_rmtree(dir);
	free(dir);
	free(dev);
}
#endif

Test(crypt, secure_memory)
{
	uint8_t *p = dmt_secure_alloc(100);
	uint8_t buf[64];

	cr_assert_not_null(p);
	for (int i = 0; i < 100; i++)
		cr_assert_eq(p[i], 0);
	memset(p, 0xaa, 100);
	dmt_secure_free(p);
	dmt_secure_free(NULL);
	memset(buf, 0, sizeof(buf));
	cr_assert_eq(dmt_random_bytes(buf, sizeof(buf)), 0);
	/* 64 zero bytes from getrandom: 2^-512 */
	cr_expect_neq(memcmp(buf, (uint8_t[64]){ 0 }, 64), 0);
}

/* Our VAES code (where the CPU has it: XTS, CBC with AES-128/256)
 * against OpenSSL, every size and key size, both directions, sector
 * counts that leave partial groups of 4 and 16. */
Test(crypt, own_aes_equals_openssl, .timeout = 60)
{
	static const struct {
		const char *cipher;
		size_t ks;
	} cases[] = { { "aes-xts-plain64", 64 },      { "aes-xts-plain", 32 },
		      { "aes-cbc-essiv:sha256", 32 }, { "aes-cbc-plain64", 16 },
		      { "aes-cbc-plain64", 32 } };
	const unsigned int sizes[] = { 512, 1024, 2048, 4096 };
	const size_t n = 301;
	uint8_t key[64], *pt = malloc(n * 4096), *a = malloc(n * 4096),
			 *b = malloc(n * 4096);

	for (size_t ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++) {
		for (int si = 0; si < 4; si++) {
			unsigned int ss = sizes[si];
			struct dmt_crypt_params p = {
				.cipher = cases[ci].cipher, .key = key,
				.key_size = cases[ci].ks, .sector_size = ss,
				.threads = 2, .iv_offset = (uint64_t)si << 33 };
			struct dmt_crypt *fast, *ref;

			th_fill_random(key, sizeof(key), ci * 4 + si);
			th_fill_random(pt, n * ss, ss);
			const char *prim = strstr(p.cipher, "xts") ?
						   "aes-xts" : "aes-cbc";
			const char *want = dmt_engine_resolve(NULL, prim);

			cr_assert_eq(dmt_crypt_new(&p, &fast, NULL), 0);
			/* the dispatcher's default is what runs (AES-192 CBC
			 * stays with OpenSSL) */
			cr_assert(want);
			cr_expect_str_eq(dmt_crypt_engine_name(fast),
					 p.key_size == 24 ? "openssl" : want,
					 "%s ks %zu", p.cipher, p.key_size);
			/* forcing OpenSSL: a bare name, as --engine takes */
			p.engine = "openssl";
			cr_assert_eq(dmt_crypt_new(&p, &ref, NULL), 0);
			cr_expect_str_eq(dmt_crypt_engine_name(ref), "openssl");
			p.engine = NULL;
			cr_assert_eq(dmt_crypt_encrypt(fast, 12345, n, pt, a), 0);
			cr_assert_eq(dmt_crypt_encrypt(ref, 12345, n, pt, b), 0);
			cr_expect_eq(memcmp(a, b, n * ss), 0, "%s %s ks %zu ss %u",
				     dmt_crypt_engine_name(fast), p.cipher,
				     p.key_size, ss);
			/* in place, both ways */
			cr_assert_eq(dmt_crypt_decrypt(fast, 12345, n, b, b), 0);
			cr_expect_eq(memcmp(b, pt, n * ss), 0, "%s decrypt",
				     p.cipher);
			cr_assert_eq(dmt_crypt_encrypt(fast, 12345, n, b, b), 0);
			cr_expect_eq(memcmp(a, b, n * ss), 0);
			dmt_crypt_free(fast);
			dmt_crypt_free(ref);
		}
	}
	free(pt);
	free(a);
	free(b);
}

/* ---- file to file ---- */

static int count_progress(void *ctx, uint64_t done, uint64_t total)
{
	uint64_t *last = ctx;

	cr_expect_gt(done, *last);
	cr_expect_leq(done, total);
	*last = done;
	return 0;
}

static int stop_progress(void *ctx, uint64_t done, uint64_t total)
{
	return 1;
}

Test(crypt, stream_file_to_file, .timeout = 60)
{
	char *dir = th_mkdtemp(), *in = th_path(dir, "in"),
	     *out = th_path(dir, "out");
	/* 3 chunks and a bit, not a whole number of sectors */
	const size_t bytes = (48u << 20) + 4096 * 3 + 100, ss = 4096;
	const size_t padded = (bytes + ss - 1) / ss * ss;
	uint8_t key[64], *pt = calloc(1, padded), *want = malloc(padded), *got;
	struct dmt_crypt_params p = { .cipher = "aes-xts-plain64", .key = key,
				      .key_size = 64, .sector_size = ss };
	struct dmt_file *fi = NULL, *fo = NULL;
	struct dmt_crypt *c;
	uint64_t last = 0;
	size_t len;

	th_fill_random(key, sizeof(key), 1);
	th_fill_random(pt, bytes, 2);
	th_write_file(in, pt, bytes);
	cr_assert_eq(dmt_crypt_new(&p, &c, NULL), 0);
	cr_assert_eq(dmt_crypt_encrypt(c, 7, padded / ss, pt, want), 0);
	cr_assert_eq(dmt_file_open(in, DMT_OPEN_READ, &fi), 0);
	cr_assert_eq(dmt_file_open(out, DMT_OPEN_RW | DMT_OPEN_CREATE, &fo), 0);
	struct dmt_crypt_stream_params s = { .in = fi, .out = fo, .out_offset = 8192,
				      .bytes = bytes, .first_sector = 7,
				      .encrypt = true,
				      .progress = { count_progress, &last } };
	cr_assert_eq(dmt_crypt_stream_run(c, &s, NULL), 0);
	cr_expect_eq(last, padded);
	dmt_file_close(fo);
	got = th_read_file(out, &len);
	cr_assert_eq(len, 8192 + padded);
	cr_expect_eq(memcmp(got + 8192, want, padded), 0);
	free(got);
	/* back: decrypting the image gives the payload and zero padding */
	cr_assert_eq(dmt_file_open(out, DMT_OPEN_READ, &fo), 0);
	cr_assert_eq(dmt_file_open(in, DMT_OPEN_RW, &fi), 0);
	s = (struct dmt_crypt_stream_params){ .in = fo, .out = fi, .in_offset = 8192,
				       .bytes = padded, .first_sector = 7 };
	cr_assert_eq(dmt_crypt_stream_run(c, &s, NULL), 0);
	got = th_read_file(in, &len);
	cr_assert_eq(len, padded);
	cr_expect_eq(memcmp(got, pt, padded), 0);
	free(got);
	/* a stop request, and an input too short */
	s.progress = (struct dmt_progress){ stop_progress, NULL };
	cr_expect_eq(dmt_crypt_stream_run(c, &s, NULL), -EINTR);
	s.progress.fn = NULL;
	s.bytes = padded + 8192 + 1;
	cr_expect_eq(dmt_crypt_stream_run(c, &s, NULL), -ENODATA);
	dmt_file_close(fi);
	dmt_file_close(fo);
	dmt_crypt_free(c);
	free(pt);
	free(want);
	free(in);
	free(out);
	th_rmtree(dir);
	free(dir);
}

/*
 * A sparse input: the ciphertext of its holes is that of zeros (not
 * zeros), and the holes were never read (none of their pages is in the
 * page cache afterwards, where reading them would have put zero pages).
 */
Test(crypt, stream_sparse_input_holes_from_memory, .timeout = 60)
{
	char *dir = th_mkdtemp(), *in = th_path(dir, "in"),
	     *out = th_path(dir, "out");
	const size_t bytes = (40u << 20) + 1000, ss = 512, page = 4096;
	const size_t padded = (bytes + ss - 1) / ss * ss;
	uint8_t key[64], *pt = calloc(1, padded), *want = malloc(padded), *got;
	unsigned char *vec = malloc(bytes / page + 1);
	struct dmt_crypt_params p = { .cipher = "aes-xts-plain64", .key = key,
				      .key_size = 64, .sector_size = ss };
	struct dmt_file *fi = NULL, *fo = NULL;
	struct dmt_crypt *c;
	size_t len, resident = 0;
	void *map;
	int fd;

	th_fill_random(key, sizeof(key), 3);
	/* data at 3 MiB (unaligned length) and in the last bytes */
	th_fill_random(pt + (3u << 20), 70000, 4);
	th_fill_random(pt + bytes - 1000, 1000, 5);
	fd = open(in, O_RDWR | O_CREAT | O_TRUNC, 0600);
	cr_assert_eq(ftruncate(fd, (off_t)bytes), 0);
	cr_assert_eq(pwrite(fd, pt + (3u << 20), 70000, 3u << 20), 70000);
	cr_assert_eq(pwrite(fd, pt + bytes - 1000, 1000, bytes - 1000), 1000);
	cr_assert_eq(fsync(fd), 0);
	cr_assert_eq(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	cr_assert_eq(dmt_crypt_new(&p, &c, NULL), 0);
	cr_assert_eq(dmt_crypt_encrypt(c, 0, padded / ss, pt, want), 0);
	cr_assert_eq(dmt_file_open(in, DMT_OPEN_READ, &fi), 0);
	cr_assert_eq(dmt_file_open(out, DMT_OPEN_RW | DMT_OPEN_CREATE, &fo), 0);
	struct dmt_crypt_stream_params s = { .in = fi, .out = fo, .bytes = bytes,
				      .encrypt = true };
	cr_assert_eq(dmt_crypt_stream_run(c, &s, NULL), 0);
	dmt_file_close(fo);
	got = th_read_file(out, &len);
	cr_assert_eq(len, padded);
	cr_expect_eq(memcmp(got, want, padded), 0);
	map = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
	cr_assert_neq(map, MAP_FAILED);
	cr_assert_eq(mincore(map, bytes, vec), 0);
	/* the pages of the hole from 8 MiB to 36 MiB */
	for (size_t i = (8u << 20) / page; i < (36u << 20) / page; i++)
		resident += vec[i] & 1;
	cr_expect_eq(resident, 0, "%zu pages of the hole were read", resident);
	munmap(map, bytes);
	/* an input cut short after it was opened: not its holes as zeros */
	cr_assert_eq(ftruncate(fd, (off_t)bytes - 5000), 0);
	cr_assert_eq(dmt_file_open(out, DMT_OPEN_RW, &fo), 0);
	cr_expect_eq(dmt_crypt_stream_run(c, &s, NULL), -ENODATA);
	dmt_file_close(fo);
	close(fd);
	dmt_file_close(fi);
	dmt_crypt_free(c);
	free(got);
	free(pt);
	free(want);
	free(vec);
	free(in);
	free(out);
	th_rmtree(dir);
	free(dir);
}
