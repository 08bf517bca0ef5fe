// SPDX-License-Identifier: MIT
/*
 * Hash engine tests (suite "hash"): published known answers through every
 * backend this machine can run, and every backend against OpenSSL (an
 * independent implementation) over lengths, batch sizes, framing, HMAC keys
 * and buffers that end at a guard page.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <xxhash.h>

#include "lib/common/cpu.h"
#include "lib/common/testhooks.h"
#include <dmt/hash.h>
#include "lib/hash/hash_priv.h"
#include "tests/support/helpers.h"

#define NMAX 70

/* ---- helpers ---- */

static void unhex(const char *hex, uint8_t *out, size_t *len)
{
	size_t i, n = strlen(hex) / 2;

	for (i = 0; i < n; i++) {
		unsigned int v;

		sscanf(hex + 2 * i, "%2x", &v);
		out[i] = (uint8_t)v;
	}
	*len = n;
}

/* The dispatcher's primitive of a hash: the engine spec's PRIMITIVE. */
static const char *prim_of(const char *alg)
{
	if (!strncmp(alg, "hmac(", 5))
		alg += 5;
	if (!strncmp(alg, "sha256", 6) || !strncmp(alg, "sha224", 6))
		return "sha256";
	if (!strncmp(alg, "sha512", 6) || !strncmp(alg, "sha384", 6))
		return "sha512";
	if (!strcmp(alg, "crc32c") || !strcmp(alg, "crc32") ||
	    !strcmp(alg, "xxhash64"))
		return alg;
	return "other";
}

/* The listing's entry for (primitive, engine); NULL if none (used by the
 * x86 CPU-mask tests only). */
static __attribute__((unused)) const struct dmt_engine_info *engine_info(const char *prim,
						 const char *name)
{
	static struct dmt_engine_info info[64];
	size_t n = dmt_engine_list(info, 64), i;

	for (i = 0; i < n && i < 64; i++)
		if (!strcmp(info[i].name, name) &&
		    !strcmp(info[i].primitive, prim))
			return &info[i];
	return NULL;
}

/* Skips the test (with the reason) unless this machine runs the engine
 * for at least one primitive. */
static void need_engine(const char *name)
{
	struct dmt_engine_info info[64];
	size_t n = dmt_engine_list(info, 64), i;
	bool built = false, runs = false;

	if (!name)
		return;
	for (i = 0; i < n && i < 64; i++) {
		if (strcmp(info[i].name, name))
			continue;
		built = true;
		runs |= info[i].available;
	}
	if (!built)
		cr_skip_test("engine %s: not built here (or nothing probed)",
			     name);
	if (!runs)
		cr_skip_test("engine %s: this CPU (or valgrind) cannot run it",
			     name);
}

struct cfg {
	const char *alg;
	/* NULL = default dispatch; a bare NAME is made strict for alg's
	 * primitive ("sha256=NAME") unless lenient */
	const char *engine;
	bool lenient;
	const uint8_t *key;
	size_t klen;
	const uint8_t *pre;
	size_t pl;
	const uint8_t *suf;
	size_t sl;
	size_t hs, ms;
};

static struct dmt_hasher *mk(const struct cfg *c, int *rc)
{
	static __thread char spec[64];
	const char *engine = c->engine;

	if (engine && !c->lenient && !strchr(engine, '=') &&
	    !strchr(engine, ',')) {
		snprintf(spec, sizeof(spec), "%s=%s", prim_of(c->alg), engine);
		engine = spec;
	}
	struct dmt_hasher_params p = {
		.alg = c->alg, .engine = engine,
		.key = c->key, .key_size = c->klen,
		.prefix = c->pre, .prefix_size = c->pl,
		.suffix = c->suf, .suffix_size = c->sl,
		.header_size = c->hs, .msg_size = c->ms,
	};
	struct dmt_hasher *h = NULL;

	*rc = dmt_hasher_new(&p, &h, NULL);
	return h;
}

static struct dmt_hasher *mk_ok(const struct cfg *c)
{
	int rc;
	struct dmt_hasher *h = mk(c, &rc);

	cr_assert_eq(rc, 0, "dmt_hasher_new(%s, engine %s, msg %zu, NULL): %d",
		     c->alg, c->engine ? c->engine : "default", c->ms, rc);
	return h;
}

/* OpenSSL name of a kernel hash name ("hmac(" stripped by the caller). */
static const char *ossl_name(const char *alg)
{
	static const char *const map[][2] = {
		{ "sha1", "SHA1" }, { "sha224", "SHA224" },
		{ "sha256", "SHA256" }, { "sha384", "SHA384" },
		{ "sha512", "SHA512" }, { "sha3-256", "SHA3-256" },
		{ "md5", "MD5" }, { "sm3", "SM3" },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(map[i][0], alg))
			return map[i][1];
	cr_assert_fail("no OpenSSL name for %s", alg);
	return NULL;
}

/* The reference: OpenSSL EVP digest, or EVP_MAC HMAC for hmac(x). */
static size_t ref_one(const struct cfg *c, const uint8_t *hdr,
		      const uint8_t *msg, uint8_t *out)
{
	static EVP_MD *mds[8];
	static const char *names[8];
	static EVP_MAC *hmac;
	bool is_hmac = !strncmp(c->alg, "hmac(", 5);
	char base[32];
	const char *on;
	EVP_MD *md = NULL;
	size_t i, len = 0;

	if (is_hmac)
		snprintf(base, sizeof(base), "%.*s", (int)strlen(c->alg) - 6,
			 c->alg + 5);
	else
		snprintf(base, sizeof(base), "%s", c->alg);
	on = ossl_name(base);
	for (i = 0; i < 8 && names[i]; i++)
		if (names[i] == on)
			md = mds[i];
	if (!md) {
		cr_assert_lt(i, 8);
		md = mds[i] = EVP_MD_fetch(NULL, on, NULL);
		names[i] = on;
		cr_assert_not_null(md);
	}
	if (is_hmac) {
		OSSL_PARAM prm[2] = {
			OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
							 (char *)on, 0),
			OSSL_PARAM_construct_end(),
		};
		EVP_MAC_CTX *m;

		if (!hmac)
			hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
		m = EVP_MAC_CTX_new(hmac);
		cr_assert(m && EVP_MAC_init(m, c->key, c->klen, prm));
		cr_assert(EVP_MAC_update(m, c->pre, c->pl) &&
			  EVP_MAC_update(m, hdr, c->hs) &&
			  EVP_MAC_update(m, msg, c->ms) &&
			  EVP_MAC_update(m, c->suf, c->sl) &&
			  EVP_MAC_final(m, out, &len, 64));
		EVP_MAC_CTX_free(m);
	} else {
		EVP_MD_CTX *x = EVP_MD_CTX_new();
		unsigned int ul;

		cr_assert(x && EVP_DigestInit_ex2(x, md, NULL) &&
			  EVP_DigestUpdate(x, c->pre, c->pl) &&
			  EVP_DigestUpdate(x, hdr, c->hs) &&
			  EVP_DigestUpdate(x, msg, c->ms) &&
			  EVP_DigestUpdate(x, c->suf, c->sl) &&
			  EVP_DigestFinal_ex(x, out, &ul));
		len = ul;
		EVP_MD_CTX_free(x);
	}
	return len;
}

static const char *ename(const struct cfg *c)
{
	return c->engine ? c->engine : "default";
}

/*
 * Hashes n messages (pointer array, or base/stride when msgs is NULL) and
 * compares each digest with OpenSSL's.
 */
static void check(struct dmt_hasher *h, const struct cfg *c, size_t n,
		  const uint8_t *const *msgs, const uint8_t *base,
		  size_t stride, const uint8_t *hdrs)
{
	uint8_t *got = malloc(n * 64 + 1), ref[64];
	size_t i, ds = dmt_hasher_digest_size(h);
	int rc;

	cr_assert_not_null(got);
	rc = msgs ? dmt_hasher_digest(h, n, msgs, hdrs, got) :
		    dmt_hasher_digest_strided(h, n, base, stride, hdrs, got);
	cr_assert_eq(rc, 0);
	for (i = 0; i < n; i++) {
		const uint8_t *m = msgs ? msgs[i] : base + i * stride;

		cr_assert_eq(ref_one(c, hdrs ? hdrs + i * c->hs : NULL, m,
				     ref), ds);
		if (memcmp(ref, got + i * ds, ds))
			cr_assert_fail("%s engine %s (%s): msg %zu of %zu "
				       "differs; len %zu prefix %zu header "
				       "%zu suffix %zu key %zu", c->alg,
				       ename(c), dmt_hasher_engine(h), i, n,
				       c->ms, c->pl, c->hs, c->sl, c->klen);
	}
	free(got);
}

static uint8_t *random_buf(size_t len, uint64_t seed)
{
	uint8_t *b = malloc(len);

	cr_assert_not_null(b);
	th_fill_random(b, len, seed);
	return b;
}

/*
 * The big odd batch: NMAX, or under DMT_TEST_REDUCED two full batches and
 * a remainder (fewer messages to hash per length).
 */
static size_t big_batch(unsigned int lanes)
{
	size_t b = 2 * (size_t)lanes + 3;

	return th_reduced() && b < NMAX ? b : NMAX;
}

/* Batch sizes around the backend's width, plus a big odd one. */
static size_t batch_sizes(unsigned int lanes, size_t *out)
{
	size_t cand[5] = { 1, lanes - 1, lanes, lanes + 1, big_batch(lanes) };
	size_t n = 0, i, j;

	for (i = 0; i < 5; i++) {
		bool dup = !cand[i];

		for (j = 0; j < n; j++)
			dup |= out[j] == cand[i];
		if (!dup)
			out[n++] = cand[i];
	}
	return n;
}

static unsigned int lanes_of(const char *alg, const char *engine)
{
	struct cfg c = { .alg = alg, .engine = engine };
	uint8_t k[4] = { 0 };
	struct dmt_hasher *h;
	unsigned int w;

	if (!strncmp(alg, "hmac(", 5)) {
		c.key = k;
		c.klen = sizeof(k);
	}
	h = mk_ok(&c);
	w = dmt_hasher_batch_width(h);
	dmt_hasher_free(h);
	return w;
}

/* Does the engine implement alg?  (It is available: need_engine ran.) */
static bool implements(const char *alg, const char *engine)
{
	struct cfg c = { .alg = alg, .engine = engine };
	uint8_t k[4] = { 0 };
	struct dmt_hasher *h;
	int rc;

	if (!strncmp(alg, "hmac(", 5)) {
		c.key = k;
		c.klen = sizeof(k);
	}
	h = mk(&c, &rc);
	dmt_hasher_free(h);
	/* -ENOENT: no backend of that name for alg's primitive */
	cr_assert(rc == 0 || rc == -ENOENT, "%s/%s: %d", alg, engine, rc);
	return rc == 0;
}

static const char *const sha_algs[] = {
	"sha256", "sha512", "sha224", "sha384", "hmac(sha256)",
	"hmac(sha512)", "hmac(sha224)", "hmac(sha384)", "sha1",
	"hmac(sha1)", "sha3-256", "md5", "sm3",
};
#define NSHA (sizeof(sha_algs) / sizeof(sha_algs[0]))

static const uint8_t test_key[] = "0123456789abcdef0123456789abcdef";

static void set_key(struct cfg *c)
{
	if (!strncmp(c->alg, "hmac(", 5)) {
		c->key = test_key;
		c->klen = 32;
	}
}

/* ---- known answers (FIPS 180-4 examples, RFC 4231, RFC 3720) ---- */

static const char s448[] =
	"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
static const char s896[] =
	"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
	"hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";

static const struct kat {
	const char *alg, *msg;	/* msg NULL: one million 'a' */
	const char *hex;
} kats[] = {
	{ "sha1", "abc", "a9993e364706816aba3e25717850c26c9cd0d89d" },
	{ "sha1", "", "da39a3ee5e6b4b0d3255bfef95601890afd80709" },
	{ "sha1", s448, "84983e441c3bd26ebaae4aa1f95129e5e54670f1" },
	{ "sha1", NULL, "34aa973cd4c4daa4f61eeb2bdbad27316534016f" },
	{ "sha224", "abc",
	  "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7" },
	{ "sha224", "",
	  "d14a028c2a3a2bc9476102bb288234c415a2b01f828ea62ac5b3e42f" },
	{ "sha224", s448,
	  "75388b16512776cc5dba5da1fd890150b0c6455cb4f58b1952522525" },
	{ "sha224", NULL,
	  "20794655980c91d8bbb4c1ea97618a4bf03f42581948b2ee4ee7ad67" },
	{ "sha256", "abc", "ba7816bf8f01cfea414140de5dae2223"
			   "b00361a396177a9cb410ff61f20015ad" },
	{ "sha256", "", "e3b0c44298fc1c149afbf4c8996fb924"
			"27ae41e4649b934ca495991b7852b855" },
	{ "sha256", s448, "248d6a61d20638b8e5c026930c3e6039"
			  "a33ce45964ff2167f6ecedd419db06c1" },
	{ "sha256", NULL, "cdc76e5c9914fb9281a1c7e284d73e67"
			  "f1809a48a497200e046d39ccc7112cd0" },
	{ "sha384", "abc", "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded163"
			   "1a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7" },
	{ "sha384", "", "38b060a751ac96384cd9327eb1b1e36a21fdb71114be0743"
			"4c0cc7bf63f6e1da274edebfe76f65fbd51ad2f14898b95b" },
	{ "sha384", s896, "09330c33f71147e83d192fc782cd1b4753111b173b3b05d2"
			  "2fa08086e3b0f712fcc7c71a557e2db966c3e9fa91746039" },
	{ "sha384", NULL, "9d0e1809716474cb086e834e310a4a1ced149e9c00f24852"
			  "7972cec5704c2a5b07b8b3dc38ecc4ebae97ddd87f3d8985" },
	{ "sha512", "abc",
	  "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
	  "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f" },
	{ "sha512", "",
	  "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"
	  "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e" },
	{ "sha512", s896,
	  "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018"
	  "501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909" },
	{ "sha512", NULL,
	  "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973eb"
	  "de0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b" },
};

/*
 * Hashes `msg` n times in one batch (every lane) with the engine and checks
 * each digest against want.  Returns false if the engine lacks alg.
 */
static bool kat_run(const char *alg, const char *engine, const uint8_t *key,
		    size_t klen, const uint8_t *msg, size_t len,
		    const uint8_t *want, size_t wlen)
{
	struct cfg c = { .alg = alg, .engine = engine, .key = key,
			 .klen = klen, .ms = len };
	const uint8_t *ptr[NMAX];
	uint8_t out[NMAX * 64];
	struct dmt_hasher *h;
	size_t n, i;
	int rc;

	h = mk(&c, &rc);
	if (rc == -ENOENT)
		return false;	/* no backend of that name for alg */
	cr_assert_eq(rc, 0, "%s engine %s: %d", alg, engine, rc);
	n = dmt_hasher_batch_width(h) + 1;
	for (i = 0; i < n; i++)
		ptr[i] = msg;
	cr_assert_eq(dmt_hasher_digest(h, 1, ptr, NULL, out), 0);
	cr_assert_eq(memcmp(out, want, wlen), 0, "%s engine %s, 1 message",
		     alg, engine);
	cr_assert_eq(dmt_hasher_digest(h, n, ptr, NULL, out), 0);
	for (i = 0; i < n; i++)
		cr_assert_eq(memcmp(out + i * dmt_hasher_digest_size(h), want,
				    wlen), 0, "%s engine %s, lane %zu of %zu",
			     alg, engine, i, n);
	dmt_hasher_free(h);
	return true;
}

/* Runs a known answer through every available engine that has alg. */
static void kat_all(const char *alg, const uint8_t *key, size_t klen,
		    const uint8_t *msg, size_t len, const char *hex)
{
	struct dmt_engine_info info[64];
	uint8_t want[64];
	size_t wl, n = dmt_engine_list(info, 64), i, ran = 0;

	unhex(hex, want, &wl);
	for (i = 0; i < n && i < 64; i++)
		if (info[i].available &&
		    !strcmp(info[i].primitive, prim_of(alg)))
			ran += kat_run(alg, info[i].name, key, klen, msg, len,
				       want, wl);
	cr_assert_gt(ran, 0, "no engine ran %s", alg);
}

Test(hash, kat_sha)
{
	uint8_t *million = malloc(1000000);
	size_t i;

	cr_assert_not_null(million);
	memset(million, 'a', 1000000);
	for (i = 0; i < sizeof(kats) / sizeof(kats[0]); i++) {
		const struct kat *k = &kats[i];

		if (k->msg)
			kat_all(k->alg, NULL, 0, (const uint8_t *)k->msg,
				strlen(k->msg), k->hex);
		else
			kat_all(k->alg, NULL, 0, million, 1000000, k->hex);
	}
	free(million);
}

Test(hash, kat_hmac_rfc4231)
{
	static const char *const data[7] = {
		"Hi There", "what do ya want for nothing?", NULL, NULL,
		"Test With Truncation",
		"Test Using Larger Than Block-Size Key - Hash Key First",
		"This is a test using a larger than block-size key and a "
		"larger than block-size data. The key needs to be hashed "
		"before being used by the HMAC algorithm.",
	};
	static const char *const h256[7] = {
		"b0344c61d8db38535ca8afceaf0bf12b"
		"881dc200c9833da726e9376c2e32cff7",
		"5bdcc146bf60754e6a042426089575c7"
		"5a003f089d2739839dec58b964ec3843",
		"773ea91e36800e46854db8ebd09181a7"
		"2959098b3ef8c122d9635514ced565fe",
		"82558a389a443c0ea4cc819899f2083a"
		"85f0faa3e578f8077a2e3ff46729665b",
		"a3b6167473100ee06e0c796c2955552b",
		"60e431591ee0b67f0d8a26aacbf5b77f"
		"8e0bc6213728c5140546040f0ee37f54",
		"9b09ffa71b942fcb27635fbcd5b0e944"
		"bfdc63644f0713938a7f51535c3a35e2",
	};
	static const char *const h512[7] = {
		"87aa7cdea5ef619d4ff0b4241a1d6cb0"
		"2379f4e2ce4ec2787ad0b30545e17cde"
		"daa833b7d6b8a702038b274eaea3f4e4"
		"be9d914eeb61f1702e696c203a126854",
		"164b7a7bfcf819e2e395fbe73b56e0a3"
		"87bd64222e831fd610270cd7ea250554"
		"9758bf75c05a994a6d034f65f8f0e6fd"
		"caeab1a34d4a6b4b636e070a38bce737",
		"fa73b0089d56a284efb0f0756c890be9"
		"b1b5dbdd8ee81a3655f83e33b2279d39"
		"bf3e848279a722c806b485a47e67c807"
		"b946a337bee8942674278859e13292fb",
		"b0ba465637458c6990e5a8c5f61d4af7"
		"e576d97ff94b872de76f8050361ee3db"
		"a91ca5c11aa25eb4d679275cc5788063"
		"a5f19741120c4f2de2adebeb10a298dd",
		"415fad6271580a531d4179bc891d87a6",
		"80b24263c7c1a3ebb71493c1dd7be8b4"
		"9b46d1f41b4aeec1121b013783f8f352"
		"6b56d037e05f2598bd0fd2215d6a1e52"
		"95e64f73f63f0aec8b915a985d786598",
		"e37b6a775dc87dbaa4dfa9f96e5e3ffd"
		"debd71f8867289865df5a32d20cdc944"
		"b6022cac3c4982b10d5eeb55c3e4de15"
		"134676fb6de0446065c97440fa8c6a58",
	};
	uint8_t key[131], msg[50];
	size_t klen, mlen, t, i;

	for (t = 0; t < 7; t++) {
		switch (t) {
		case 0: klen = 20; memset(key, 0x0b, klen); break;
		case 1: klen = 4; memcpy(key, "Jefe", 4); break;
		case 2: klen = 20; memset(key, 0xaa, klen); break;
		case 3:
			klen = 25;
			for (i = 0; i < klen; i++)
				key[i] = (uint8_t)(i + 1);
			break;
		case 4: klen = 20; memset(key, 0x0c, klen); break;
		default: klen = 131; memset(key, 0xaa, klen); break;
		}
		if (data[t]) {
			mlen = strlen(data[t]);
			kat_all("hmac(sha256)", key, klen,
				(const uint8_t *)data[t], mlen, h256[t]);
			kat_all("hmac(sha512)", key, klen,
				(const uint8_t *)data[t], mlen, h512[t]);
			/* cryptsetup's spelling of the same algorithm */
			kat_all("HMAC-SHA256", key, klen,
				(const uint8_t *)data[t], mlen, h256[t]);
		} else {
			memset(msg, t == 2 ? 0xdd : 0xcd, sizeof(msg));
			kat_all("hmac(sha256)", key, klen, msg, sizeof(msg),
				h256[t]);
			kat_all("hmac(sha512)", key, klen, msg, sizeof(msg),
				h512[t]);
		}
	}
}

/* Bit-at-a-time reflected CRC: independent of the table/SIMD code. */
static uint32_t crc_bitwise(uint32_t poly, uint32_t crc, const uint8_t *p,
			    size_t len)
{
	int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ ((crc & 1) ? poly : 0);
	}
	return crc;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

Test(hash, kat_crc)
{
	uint8_t buf[32], want[4];
	size_t i;
	int v;
	static const uint32_t rfc3720[4] = {
		0x8a9136aa, 0x62a8ab43, 0x46dd794e, 0x113fdb5c,
	};

	for (v = 0; v < 4; v++) {
		for (i = 0; i < 32; i++)
			buf[i] = v == 0 ? 0 : v == 1 ? 0xff :
				 v == 2 ? (uint8_t)i : (uint8_t)(31 - i);
		/* the digest is the CRC stored little-endian */
		for (i = 0; i < 4; i++)
			want[i] = (uint8_t)(rfc3720[v] >> (8 * i));
		{
			char hex[9];

			snprintf(hex, sizeof(hex), "%02x%02x%02x%02x",
				 want[0], want[1], want[2], want[3]);
			kat_all("crc32c", NULL, 0, buf, 32, hex);
		}
	}
	kat_all("crc32c", NULL, 0, (const uint8_t *)"123456789", 9,
		"839206e3");
	kat_all("CRC32C", NULL, 0, (const uint8_t *)"123456789", 9,
		"839206e3");
	/* the kernel's crc32: no pre/post inversion */
	kat_all("crc32", NULL, 0, (const uint8_t *)"123456789", 9,
		"882dfd2d");
	/* formats.md 2.9: crc32c over salt || le64(0) || 512 zero bytes */
	{
		uint8_t salt[16], blk[512] = { 0 }, hdr[8] = { 0 }, out[4];
		struct cfg c = { .alg = "crc32c", .pre = salt, .pl = 16,
				 .hs = 8, .ms = 512 };
		struct dmt_hasher *h;
		const uint8_t *m = blk;

		for (i = 0; i < 16; i++)
			salt[i] = (uint8_t)i;
		h = mk_ok(&c);
		cr_assert_eq(dmt_hasher_digest(h, 1, &m, hdr, out), 0);
		cr_assert_eq(le32(out), 0x5798f126);
		hdr[0] = 1;
		cr_assert_eq(dmt_hasher_digest(h, 1, &m, hdr, out), 0);
		cr_assert_eq(le32(out), 0xa51d943a);
		dmt_hasher_free(h);
	}
}

/* dm-integrity tags from kernel-written volumes (formats.md 2.9). */
Test(hash, kat_integrity_tags)
{
	static const uint8_t zero[4096];
	uint8_t salt[16], hdr[8] = { 8 }, out[32], want[32];
	struct cfg c = { .alg = "sha256", .pre = salt, .pl = 16, .hs = 8,
			 .ms = 4096 };
	struct cfg c2 = { .alg = "crc32c", .hs = 8, .ms = 512 };
	const uint8_t *m = zero;
	struct dmt_hasher *h;
	size_t i, wl;

	for (i = 0; i < 16; i++)
		salt[i] = (uint8_t)i;
	unhex("578bd821e65b025ec7d16b3648966f5f"
	      "580343d81e1d121b1bb3cc3a029055f1", want, &wl);
	h = mk_ok(&c);
	cr_assert_eq(dmt_hasher_digest(h, 1, &m, hdr, out), 0);
	cr_assert_eq(memcmp(out, want, 32), 0);
	dmt_hasher_free(h);
	hdr[0] = 0;
	h = mk_ok(&c2);
	cr_assert_eq(dmt_hasher_digest(h, 1, &m, hdr, out), 0);
	cr_assert_eq(le32(out), 0x82e840c7);
	dmt_hasher_free(h);
}

/* Seeded CRCs (kernel setkey: the raw register's initial value). */
static void crc_check(const char *engine, const char *name, bool keyed,
		      size_t len, const uint8_t *buf)
{
	static const uint8_t seed[4] = { 0x78, 0x56, 0x34, 0x12 };
	const uint8_t pre[5] = "salt!", suf[3] = "end";
	const uint8_t *hdr = buf + 4000;
	bool c32 = !strcmp(name, "crc32");
	uint32_t poly = c32 ? 0xEDB88320u : 0x82F63B78u;
	struct cfg c = { .alg = name, .engine = engine,
			 .key = keyed ? seed : NULL, .klen = keyed ? 4 : 0,
			 .pre = pre, .pl = 5, .suf = suf, .sl = 3, .hs = 8,
			 .ms = len };
	struct dmt_hasher *h = mk_ok(&c);
	uint8_t out[9 * 4];
	size_t i;

	cr_assert_eq(dmt_hasher_digest_strided(h, 9, buf + 1, 97, hdr, out),
		     0);
	for (i = 0; i < 9; i++) {
		uint32_t r = keyed ? 0x12345678u : c32 ? 0 : 0xffffffffu;

		r = crc_bitwise(poly, r, pre, 5);
		r = crc_bitwise(poly, r, hdr + 8 * i, 8);
		r = crc_bitwise(poly, r, buf + 1 + i * 97, len);
		r = crc_bitwise(poly, r, suf, 3);
		if (!c32)
			r = ~r;
		cr_assert_eq(le32(out + 4 * i), r, "%s/%s len %zu msg %zu",
			     name, engine, len, i);
	}
	dmt_hasher_free(h);
}

static void crc_engine(const char *engine)
{
	static const size_t lens[] = { 0, 1, 7, 8, 9, 31, 32, 33, 95, 96, 97,
				       512, 4096, 4097 };
	static const char *const names[] = { "crc32c", "crc32" };
	uint8_t *buf = random_buf(5000, 7);
	size_t a, li, ran = 0;
	int keyed;

	need_engine(engine);
	for (a = 0; a < 2; a++) {
		if (!implements(names[a], engine))
			continue;
		for (keyed = 0; keyed < 2; keyed++)
			for (li = 0; li < sizeof(lens) / sizeof(lens[0]); li++)
				crc_check(engine, names[a], keyed, lens[li],
					  buf);
		ran++;
	}
	cr_assert_gt(ran, 0);
	free(buf);
}

Test(hash, crc_sse42) { crc_engine("sse42"); }
Test(hash, crc_arm64) { crc_engine("arm64-crc"); }
Test(hash, crc_table) { crc_engine("crc-table"); }
Test(hash, crc_table_short_name) { crc_engine("table"); }

Test(hash, xxhash64)
{
	uint8_t *buf = random_buf(70000, 11), out[NMAX * 8], cat[300];
	static const uint8_t seed[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	size_t lens[] = { 0, 1, 31, 32, 33, 100, 4096, 65536 }, li, i;
	int keyed;

	for (keyed = 0; keyed < 2; keyed++) {
		for (li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
			struct cfg c = { .alg = "xxhash64",
					 .key = keyed ? seed : NULL,
					 .klen = keyed ? 8 : 0,
					 .ms = lens[li] };
			struct dmt_hasher *h = mk_ok(&c);
			size_t n = lens[li] > 4096 ? 1 : 5;

			cr_assert_eq(dmt_hasher_digest_strided(h, n, buf, 13,
							       NULL, out), 0);
			for (i = 0; i < n; i++) {
				uint64_t want = XXH64(buf + 13 * i, lens[li],
					keyed ? 0x0807060504030201ull : 0);
				uint64_t got = 0;
				int b;

				for (b = 7; b >= 0; b--)
					got = got << 8 | out[8 * i + b];
				cr_assert_eq(got, want, "len %zu", lens[li]);
			}
			dmt_hasher_free(h);
		}
	}
	/* prefix/header/suffix are hashed as one stream */
	{
		struct cfg c = { .alg = "xxhash64", .pre = buf, .pl = 17,
				 .hs = 8, .suf = buf + 100, .sl = 5,
				 .ms = 200 };
		struct dmt_hasher *h = mk_ok(&c);
		const uint8_t *m = buf + 1000;
		uint64_t got = 0;
		int b;

		memcpy(cat, buf, 17);
		memcpy(cat + 17, buf + 500, 8);
		memcpy(cat + 25, m, 200);
		memcpy(cat + 225, buf + 100, 5);
		cr_assert_eq(dmt_hasher_digest(h, 1, &m, buf + 500, out), 0);
		for (b = 7; b >= 0; b--)
			got = got << 8 | out[b];
		cr_assert_eq(got, XXH64(cat, 230, 0));
		dmt_hasher_free(h);
	}
	free(buf);
}

/* ---- every backend against OpenSSL ---- */

/*
 * Is len in the sweep 0..maxlen?  All of them, or under DMT_TEST_REDUCED
 * every length up to 300 (every padding case of one and two blocks), then
 * every 61st (coprime to the block sizes: all residues turn up) and the
 * edges around powers of two and maxlen.
 */
static bool sweep_has(size_t len, size_t maxlen)
{
	size_t p;

	if (!th_reduced() || len <= 300 || (len - 300) % 61 == 0 ||
	    len + 1 >= maxlen)
		return true;
	for (p = 512; p <= maxlen; p *= 2)
		if (len + 1 >= p && len <= p + 1)
			return true;
	return false;
}

/*
 * Every length 0..4096 (and a few big ones) at batch sizes around the
 * backend's width.  Messages are strided through one random buffer with
 * an odd stride, so their alignment varies.
 */
static void sweep_lengths(const char *engine, const char *alg, size_t maxlen,
			  bool big)
{
	static const size_t bigs[] = { 8200, 65536, 65600 };
	size_t nb[5], nnb, len, li, b, i, stride, top = maxlen + 1 + 3, nref;
	uint8_t *buf = random_buf(NMAX * (65600 + 16) + 64, 1), *got;
	uint8_t (*ref)[64] = malloc(NMAX * 64);
	const uint8_t *ptr[NMAX];

	got = malloc(NMAX * 64);
	cr_assert(ref && got);
	nnb = batch_sizes(lanes_of(alg, engine), nb);
	for (nref = 0, b = 0; b < nnb; b++)
		nref = nb[b] > nref ? nb[b] : nref;	/* the biggest */
	for (li = 0; li < top; li++) {
		struct cfg c = { .alg = alg, .engine = engine };
		struct dmt_hasher *h;
		size_t ds;

		if (li > maxlen && !big)
			break;
		if (li <= maxlen && !sweep_has(li, maxlen))
			continue;
		len = li <= maxlen ? li : bigs[li - maxlen - 1];
		stride = len + 13;
		c.ms = len;
		set_key(&c);
		h = mk_ok(&c);
		ds = dmt_hasher_digest_size(h);
		for (i = 0; i < nref; i++) {
			ptr[i] = buf + (len % 7) + i * stride;
			ref_one(&c, NULL, ptr[i], ref[i]);
		}
		for (b = 0; b < nnb; b++) {
			/* the pointer-array API for the biggest batch */
			if (nb[b] == nref)
				cr_assert_eq(dmt_hasher_digest(h, nb[b], ptr,
							       NULL, got), 0);
			else
				cr_assert_eq(dmt_hasher_digest_strided(h,
					     nb[b], ptr[0], stride, NULL, got),
					     0);
			for (i = 0; i < nb[b]; i++)
				if (memcmp(got + i * ds, ref[i], ds))
					cr_assert_fail("%s engine %s (%s): len "
						       "%zu batch %zu msg %zu",
						       alg, ename(&c),
						       dmt_hasher_engine(h),
						       len, nb[b], i);
		}
		dmt_hasher_free(h);
	}
	free(buf);
	free(ref);
	free(got);
}

/*
 * Batch sizes 1..NMAX: all, or under DMT_TEST_REDUCED every one up to two
 * full batches and a remainder, then every 7th, and NMAX.
 */
static size_t next_batch(size_t n, unsigned int lanes)
{
	if (!th_reduced() || n < 2 * (size_t)lanes + 2 || n == NMAX)
		return n + 1;
	return n + 7 < NMAX ? n + 7 : NMAX;
}

/* Every batch size 1..70 at a few lengths (remainder handling). */
static void sweep_batches(const char *engine, const char *alg)
{
	static const size_t lens[] = { 0, 55, 64, 512, 4096, 4104, 4120 };
	uint8_t *buf = random_buf(NMAX * 4200, 2), *got = malloc(NMAX * 64);
	uint8_t (*ref)[64] = malloc(NMAX * 64);
	unsigned int lanes = lanes_of(alg, engine);
	size_t li, n, i;

	cr_assert(ref && got);
	for (li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		struct cfg c = { .alg = alg, .engine = engine,
				 .ms = lens[li] };
		struct dmt_hasher *h;
		size_t ds, stride = lens[li] + 5;

		set_key(&c);
		h = mk_ok(&c);
		ds = dmt_hasher_digest_size(h);
		for (i = 0; i < NMAX; i++)
			ref_one(&c, NULL, buf + 3 + i * stride, ref[i]);
		for (n = 1; n <= NMAX; n = next_batch(n, lanes)) {
			memset(got, 0, NMAX * 64);
			cr_assert_eq(dmt_hasher_digest_strided(h, n, buf + 3,
				     stride, NULL, got), 0);
			for (i = 0; i < n; i++)
				if (memcmp(got + i * ds, ref[i], ds))
					cr_assert_fail("%s engine %s (%s): len "
						       "%zu batch %zu msg %zu",
						       alg, ename(&c),
						       dmt_hasher_engine(h),
						       lens[li], n, i);
			/* nothing written past n digests */
			for (i = n * ds; i < NMAX * 64; i++)
				cr_assert_eq(got[i], 0);
		}
		dmt_hasher_free(h);
	}
	free(buf);
	free(ref);
	free(got);
}

/* Salt before and/or after, 8- and 64-byte headers. */
static void framing(const char *engine, const char *alg)
{
	static const size_t pls[] = { 0, 1, 32, 33, 63, 64, 65, 255, 256 };
	static const size_t sls[] = { 0, 3, 32, 129 };
	static const size_t hss[] = { 0, 8, 64 };
	static const size_t lens[] = { 0, 55, 64, 512, 4096, 4104 };
	uint8_t *buf = random_buf(20 * 4200, 3), *salt = random_buf(300, 4);
	uint8_t *hdrs = random_buf(20 * 64, 5);
	size_t p, s, hh, l, n, lanes = lanes_of(alg, engine);

	for (p = 0; p < sizeof(pls) / sizeof(pls[0]); p++)
	for (s = 0; s < sizeof(sls) / sizeof(sls[0]); s++)
	for (hh = 0; hh < sizeof(hss) / sizeof(hss[0]); hh++)
	for (l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
		struct cfg c = { .alg = alg, .engine = engine,
				 .pre = salt, .pl = pls[p],
				 .suf = salt + 7, .sl = sls[s],
				 .hs = hss[hh], .ms = lens[l] };
		struct dmt_hasher *h;

		/* keep the product modest: suffixes with fewer lengths */
		if (sls[s] && lens[l] != 64 && lens[l] != 4096 &&
		    lens[l] != 55)
			continue;
		set_key(&c);
		h = mk_ok(&c);
		n = lanes + 1 > 20 ? 20 : lanes + 1;
		check(h, &c, n, NULL, buf + 1, lens[l] + 3,
		      c.hs ? hdrs : NULL);
		check(h, &c, 1, NULL, buf, lens[l], c.hs ? hdrs : NULL);
		dmt_hasher_free(h);
	}
	free(buf);
	free(salt);
	free(hdrs);
}

/* HMAC keys of every length 0..200 (hashed first above the block size). */
static void hmac_keys(const char *engine, const char *alg)
{
	uint8_t *buf = random_buf(20 * 200, 6), *key = random_buf(200, 8);
	uint8_t hdrs[20 * 8];
	size_t kl, lanes = lanes_of(alg, engine), n;

	memset(hdrs, 0x5a, sizeof(hdrs));
	n = lanes + 1 > 20 ? 20 : lanes + 1;
	for (kl = 0; kl <= 200; kl++) {
		struct cfg c = { .alg = alg, .engine = engine, .key = key,
				 .klen = kl, .pre = key + 3, .pl = 32,
				 .hs = 8, .ms = 100 };
		struct dmt_hasher *h = mk_ok(&c);

		check(h, &c, n, NULL, buf, 100, hdrs);
		dmt_hasher_free(h);
	}
	free(buf);
	free(key);
}

/* Messages and headers ending exactly at a PROT_NONE page. */
static void guard_pages(const char *engine, const char *alg)
{
	static const size_t lens[] = { 0, 1, 55, 63, 64, 65, 127, 128, 129,
				       1000, 4095, 4096, 4097, 4104 };
	size_t l, i, n, lanes = lanes_of(alg, engine);

	n = lanes + 1 > NMAX ? NMAX : lanes + 1;
	for (l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
		struct cfg c = { .alg = alg, .engine = engine, .hs = 8,
				 .ms = lens[l] };
		size_t all = n * lens[l] + 1;
		uint8_t *cont = th_guard_alloc(all);
		uint8_t *hdrs = th_guard_alloc(n * 8);
		uint8_t *sep[NMAX];
		struct dmt_hasher *h;

		th_fill_random(cont, all, l);
		th_fill_random(hdrs, n * 8, l + 100);
		set_key(&c);
		h = mk_ok(&c);
		/* contiguous, the last message touching the guard page */
		check(h, &c, n, NULL, cont + 1, lens[l], hdrs);
		/* one guarded allocation per message */
		for (i = 0; i < n; i++) {
			sep[i] = th_guard_alloc(lens[l]);
			th_fill_random(sep[i], lens[l], i);
		}
		check(h, &c, n, (const uint8_t *const *)sep, NULL, 0, hdrs);
		for (i = 0; i < n; i++)
			th_guard_free(sep[i], lens[l]);
		dmt_hasher_free(h);
		th_guard_free(cont, all);
		th_guard_free(hdrs, n * 8);
	}
}

static void engine_sweep(const char *engine)
{
	size_t a, ran = 0;

	need_engine(engine);
	for (a = 0; a < NSHA; a++) {
		const char *alg = sha_algs[a];
		bool main_alg = !strcmp(alg, "sha256") ||
				!strcmp(alg, "sha512");

		if (!implements(alg, engine))
			continue;
		sweep_lengths(engine, alg, main_alg ? 4096 : 300, main_alg);
		ran++;
	}
	cr_assert_gt(ran, 0);
}

static void engine_misc(const char *engine)
{
	size_t a, ran = 0;

	need_engine(engine);
	for (a = 0; a < NSHA; a++) {
		const char *alg = sha_algs[a];

		if (!implements(alg, engine))
			continue;
		sweep_batches(engine, alg);
		framing(engine, alg);
		guard_pages(engine, alg);
		if (!strncmp(alg, "hmac(", 5))
			hmac_keys(engine, alg);
		ran++;
	}
	cr_assert_gt(ran, 0);
}

#define ENGINE_TESTS(id, name)						\
	Test(hash, lengths_##id) { engine_sweep(name); }		\
	Test(hash, misc_##id) { engine_misc(name); }

ENGINE_TESTS(portable, "portable")
ENGINE_TESTS(shani, "shani")
ENGINE_TESTS(shani_2x, "shani-2x")
ENGINE_TESTS(avx2, "avx2")
ENGINE_TESTS(avx512, "avx512")
ENGINE_TESTS(ce, "ce")
ENGINE_TESTS(ce_2x, "ce-2x")
ENGINE_TESTS(cpacf, "cpacf")
ENGINE_TESTS(openssl, "openssl")
ENGINE_TESTS(default, NULL)

/* ---- API behaviour ---- */

Test(hash, registry)
{
	const struct dmt_hash_alg *a;
	char list[1024];
	size_t need;

	cr_assert_eq(dmt_hash_alg_lookup("SHA256", &a), 0);
	cr_assert_str_eq(dmt_hash_alg_name(a), "sha256");
	cr_assert_eq(dmt_hash_alg_digest_size(a), 32);
	cr_assert(!dmt_hash_alg_needs_key(a));
	cr_assert(!dmt_hash_alg_takes_key(a));
	cr_assert_eq(dmt_hash_alg_lookup("hmac-sha512", &a), 0);
	cr_assert_str_eq(dmt_hash_alg_name(a), "hmac(sha512)");
	cr_assert(dmt_hash_alg_needs_key(a));
	cr_assert_eq(dmt_hash_alg_lookup("crc32c", &a), 0);
	cr_assert(dmt_hash_alg_takes_key(a) && !dmt_hash_alg_needs_key(a));
	cr_assert_eq(dmt_hash_alg_digest_size(a), 4);
	cr_assert_eq(dmt_hash_alg_lookup("xxhash64", &a), 0);
	cr_assert_eq(dmt_hash_alg_digest_size(a), 8);
	cr_assert_eq(dmt_hash_alg_lookup("sha257", &a), -ENOENT);
	cr_assert_eq(dmt_hash_alg_lookup("hmac(crc32c)", &a), -ENOENT);
	cr_assert_eq(dmt_hash_alg_lookup("", &a), -ENOENT);

	need = dmt_hash_alg_list(list, sizeof(list));
	cr_assert_eq(need, strlen(list));
	cr_assert_not_null(strstr(list, "sha256, "));
	cr_assert_not_null(strstr(list, "hmac(sha256)"));
	cr_assert_not_null(strstr(list, "crc32c"));
	cr_assert_not_null(strstr(list, "xxhash64"));
	/* truncated, still terminated, same length reported */
	cr_assert_eq(dmt_hash_alg_list(list, 10), need);
	cr_assert_lt(strlen(list), 10);
}

Test(hash, bad_params)
{
	struct dmt_hasher_params p = { .alg = "sha256", .msg_size = 64 };
	struct dmt_hasher *h;
	uint8_t k[8] = { 0 };

	p.header_size = 65;
	cr_assert_eq(dmt_hasher_new(&p, &h, NULL), -EINVAL);
	cr_assert_null(h);
	p.header_size = 0;
	p.prefix_size = 4;
	cr_assert_eq(dmt_hasher_new(&p, &h, NULL), -EINVAL);
	p.prefix_size = 0;
	p.key = k;
	p.key_size = 8;		/* unkeyed hash */
	cr_assert_eq(dmt_hasher_new(&p, &h, NULL), -EINVAL);
	p.alg = "hmac(sha256)";
	p.key = NULL;
	p.key_size = 0;		/* missing key */
	cr_assert_eq(dmt_hasher_new(&p, &h, NULL), -EINVAL);
	p.alg = "crc32c";
	p.key = k;
	p.key_size = 3;		/* the kernel takes exactly 4 bytes */
	cr_assert_eq(dmt_hasher_new(&p, &h, NULL), -EINVAL);
	p.alg = "xxhash64";
	p.key_size = 4;		/* ... and 8 here */
	cr_assert_eq(dmt_hasher_new(&p, &h, NULL), -EINVAL);
	p.alg = "nope";
	cr_assert_eq(dmt_hasher_new(&p, &h, NULL), -ENOENT);
	p.alg = "sha256";
	p.key = NULL;
	p.key_size = 0;
	p.engine = "no-such-engine";
	cr_assert_eq(dmt_hasher_new(&p, &h, NULL), -ENOENT);
	cr_assert_null(h);
	p.engine = "sha256=sse42";	/* exists, not for sha256: strict */
	cr_assert_eq(dmt_hasher_new(&p, &h, NULL), -ENOENT);
	p.engine = "nosuch=portable";
	cr_assert_eq(dmt_hasher_new(&p, &h, NULL), -EINVAL);
	p.alg = "sha1";
	p.engine = "other=portable";	/* portable lacks sha1 */
	cr_assert_eq(dmt_hasher_new(&p, &h, NULL), -ENOENT);
	p.alg = "crc32";
	p.engine = "crc32=openssl";
	cr_assert_eq(dmt_hasher_new(&p, &h, NULL), -ENOENT);
	/* a bad item anywhere in the spec fails every hasher */
	p.engine = "crc32=table,sha512=nosuch";
	cr_assert_eq(dmt_hasher_new(&p, &h, NULL), -ENOENT);
	cr_assert_null(h);
}

Test(hash, clone_and_zero)
{
	static const uint8_t salt[40] = "a salt longer than the key...";
	struct cfg c = { .alg = "hmac(sha256)", .key = test_key, .klen = 32,
			 .pre = salt, .pl = 40, .hs = 8, .ms = 4096 };
	uint8_t *buf = random_buf(40 * 4096, 9), hdrs[40 * 8];
	uint8_t a[40 * 32], b[40 * 32];
	struct dmt_hasher *h = mk_ok(&c), *k;

	memset(hdrs, 1, sizeof(hdrs));
	cr_assert_eq(dmt_hasher_clone(h, &k), 0);
	cr_assert_str_eq(dmt_hasher_engine(k), dmt_hasher_engine(h));
	cr_assert_eq(dmt_hasher_digest_strided(h, 40, buf, 4096, hdrs, a), 0);
	dmt_hasher_free(h);	/* the clone owns its own state */
	cr_assert_eq(dmt_hasher_digest_strided(k, 40, buf, 4096, hdrs, b), 0);
	cr_assert_eq(memcmp(a, b, sizeof(a)), 0);
	cr_assert_eq(dmt_hasher_digest_strided(k, 0, buf, 4096, hdrs, b), 0);
	check(k, &c, 40, NULL, buf, 4096, hdrs);
	dmt_hasher_free(k);
	dmt_hasher_free(NULL);
	free(buf);
}

struct thr {
	struct dmt_hasher *h;
	const uint8_t *buf;
	uint8_t out[64 * 32];
};

static void *thr_fn(void *arg)
{
	struct thr *t = arg;
	int i;

	for (i = 0; i < 50; i++)
		if (dmt_hasher_digest_strided(t->h, 64, t->buf, 4096, NULL,
					      t->out))
			return arg;
	return NULL;
}

Test(hash, threads_with_clones)
{
	struct cfg c = { .alg = "sha256", .ms = 4096 };
	uint8_t *buf = random_buf(64 * 4096, 10), want[64 * 32];
	struct dmt_hasher *h = mk_ok(&c);
	struct thr t[3];
	pthread_t id[3];
	int i;

	cr_assert_eq(dmt_hasher_digest_strided(h, 64, buf, 4096, NULL, want),
		     0);
	for (i = 0; i < 3; i++) {
		cr_assert_eq(dmt_hasher_clone(h, &t[i].h), 0);
		t[i].buf = buf;
		cr_assert_eq(pthread_create(&id[i], NULL, thr_fn, &t[i]), 0);
	}
	for (i = 0; i < 3; i++) {
		void *r;

		pthread_join(id[i], &r);
		cr_assert_null(r);
		cr_assert_eq(memcmp(t[i].out, want, sizeof(want)), 0);
		dmt_hasher_free(t[i].h);
	}
	check(h, &c, 64, NULL, buf, 4096, NULL);
	dmt_hasher_free(h);
	free(buf);
}

static const char *engine_of(const char *alg, const char *spec)
{
	static char name[32];
	struct cfg c = { .alg = alg, .engine = spec, .lenient = true,
			 .ms = 100 };
	static const uint8_t k[4];
	struct dmt_hasher *h;

	if (!strncmp(alg, "hmac(", 5)) {
		c.key = k;
		c.klen = sizeof(k);
	}
	h = mk_ok(&c);
	snprintf(name, sizeof(name), "%s", dmt_hasher_engine(h));
	dmt_hasher_free(h);
	return name;
}

/* Every primitive has exactly one default, and it runs here. */
Test(hash, engine_list)
{
	static const char *const prims[] = { "sha256", "sha512", "crc32c",
					     "crc32", "xxhash64", "other",
					     "gf256" };
	struct dmt_engine_info info[64];
	size_t n, i, p;

	n = dmt_engine_list(info, 64);
	cr_assert_gt(n, 8);
	cr_assert_leq(n, 64);
	cr_assert_eq(dmt_engine_list(info, 3), n, "count without room");
	n = dmt_engine_list(info, 64);
	for (p = 0; p < sizeof(prims) / sizeof(prims[0]); p++) {
		size_t defaults = 0, cands = 0;

		for (i = 0; i < n; i++) {
			if (strcmp(info[i].primitive, prims[p]))
				continue;
			cands++;
			cr_assert(info[i].lanes >= 1 && info[i].lanes <= 16);
			cr_assert(!info[i].is_default || info[i].available);
			cr_assert_not_null(info[i].desc);
			cr_assert_not_null(info[i].algs);
			if (!info[i].is_default)
				continue;
			defaults++;
			/* the listed default is what the dispatcher uses */
			cr_assert_str_eq(dmt_engine_resolve(NULL, prims[p]),
					 info[i].name, "%s", prims[p]);
		}
		cr_assert_geq(cands, 1, "%s has no candidates", prims[p]);
		cr_assert_eq(defaults, 1, "%s: %zu defaults", prims[p],
			     defaults);
	}
	/* grouped by primitive: a new group's name was not seen before */
	for (i = 1; i < n; i++) {
		if (!strcmp(info[i].primitive, info[i - 1].primitive))
			continue;
		for (p = 0; p + 1 < i; p++)
			cr_assert_str_neq(info[p].primitive, info[i].primitive);
	}
	/* hashers report the listed defaults */
	cr_assert_str_eq(engine_of("sha256", NULL),
			 dmt_engine_resolve(NULL, "sha256"));
	cr_assert_str_eq(engine_of("sha384", NULL),
			 dmt_engine_resolve(NULL, "sha512"));
	cr_assert_str_eq(engine_of("crc32c", NULL),
			 dmt_engine_resolve(NULL, "crc32c"));
	cr_assert_str_eq(engine_of("sha1", NULL),
			 dmt_engine_resolve(NULL, "other"));
	cr_assert_null(dmt_engine_resolve(NULL, "nosuch"));
	cr_assert_null(dmt_engine_resolve("nosuch", "sha256"));
}

/* A bare NAME is lenient: primitives without that backend keep theirs. */
Test(hash, engine_bare_name)
{
	const char *crc_def = dmt_engine_resolve(NULL, "crc32c");

	cr_assert_str_eq(engine_of("sha256", "portable"), "portable");
	cr_assert_str_eq(engine_of("sha512", "portable"), "portable");
	cr_assert_str_eq(engine_of("hmac(sha256)", "portable"), "portable");
	cr_assert_str_eq(engine_of("sha1", "portable"), "openssl");
	cr_assert_str_eq(engine_of("crc32c", "portable"), crc_def);
	cr_assert_str_eq(dmt_engine_resolve("portable", "gf256"), "portable");
	cr_assert_str_eq(engine_of("sha256", "openssl"), "openssl");
	/* "table" is the short name of crc-table */
	cr_assert_str_eq(engine_of("crc32c", "table"), "crc-table");
	cr_assert_str_eq(engine_of("crc32c", "crc-table"), "crc-table");
	cr_assert_str_eq(engine_of("crc32", "table"), "crc-table");
	cr_assert_str_eq(engine_of("sha256", "table"),
			 dmt_engine_resolve(NULL, "sha256"));
	cr_assert_str_eq(engine_of("sha256", "auto"),
			 dmt_engine_resolve(NULL, "sha256"));
	cr_assert_str_eq(engine_of("sha256", ""),
			 dmt_engine_resolve(NULL, "sha256"));
	cr_assert_eq(dmt_engine_spec_check("portable", NULL, 0), 0);
	cr_assert_eq(dmt_engine_spec_check("PORTABLE", NULL, 0), 0);
	cr_assert_eq(dmt_engine_spec_check("auto", NULL, 0), 0);
	cr_assert_eq(dmt_engine_spec_check(NULL, NULL, 0), 0);
}

/* PRIMITIVE=NAME lists: each item for its primitive only, later wins. */
Test(hash, engine_spec_list)
{
	const char *def256 = dmt_engine_resolve(NULL, "sha256");
	const char *def512 = dmt_engine_resolve(NULL, "sha512");
	const char *spec = "sha512=portable,crc32c=table,gf256=portable";

	cr_assert_str_eq(engine_of("sha512", spec), "portable");
	cr_assert_str_eq(engine_of("sha384", spec), "portable");
	cr_assert_str_eq(engine_of("sha256", spec), def256);
	cr_assert_str_eq(engine_of("crc32c", spec), "crc-table");
	cr_assert_str_eq(dmt_engine_resolve(spec, "gf256"), "portable");
	cr_assert_str_eq(engine_of("sha256", "sha256=openssl"), "openssl");
	cr_assert_str_eq(engine_of("sha256", "sha256=portable,sha256=auto"),
			 def256);
	cr_assert_str_eq(engine_of("sha512", "portable,sha512=openssl"),
			 "openssl");
	cr_assert_str_eq(engine_of("sha512", "sha512=openssl,portable"),
			 "portable");
	cr_assert_str_eq(engine_of("sha512", "SHA512=Portable"), "portable");
	cr_assert_str_eq(engine_of("sha512", "sha256=portable"), def512);
	cr_assert_eq(dmt_engine_spec_check(spec, NULL, 0), 0);
}

Test(hash, engine_spec_errors)
{
	static const struct {
		const char *spec;
		int err;
		const char *bad;
	} cases[] = {
		{ "nosuch", -ENOENT, "nosuch" },
		{ "sha256=nosuch", -ENOENT, "sha256=nosuch" },
		{ "crc32c=portable", -ENOENT, "crc32c=portable" },
		{ "gf256=table", -ENOENT, "gf256=table" },
		{ "sha256=portable,crc32c=shani", -ENOENT, "crc32c=shani" },
		{ "sha999=portable", -EINVAL, "sha999=portable" },
		{ "=portable", -EINVAL, "=portable" },
		{ "sha256=", -EINVAL, "sha256=" },
		{ "sha256=portable,", -EINVAL, "" },
		{ ",portable", -EINVAL, "" },
		{ "portable,,table", -EINVAL, "" },
	};
	char bad[64], tiny[4];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		strcpy(bad, "untouched");
		cr_assert_eq(dmt_engine_spec_check(cases[i].spec, bad,
						   sizeof(bad)),
			     cases[i].err, "%s", cases[i].spec);
		cr_assert_str_eq(bad, cases[i].bad, "%s", cases[i].spec);
		cr_assert_null(dmt_engine_resolve(cases[i].spec, "sha256"));
	}
	cr_assert_eq(dmt_engine_spec_check("nosuch", tiny, sizeof(tiny)),
		     -ENOENT);
	cr_assert_str_eq(tiny, "nos");
}

#if defined(__x86_64__)
/* Masked features: the dispatcher must avoid them and say -ENOTSUP. */
Test(hash, cpu_mask)
{
	uint32_t f = dmt_cpu_features();
	struct cfg c = { .alg = "sha256", .ms = 4096 };
	struct cfg c5 = { .alg = "sha512", .ms = 4096 };
	uint8_t *buf = random_buf(20 * 4096, 12);
	struct dmt_hasher *h;
	int rc;

	if (!(f & DMT_CPU_X86_AVX512))
		cr_skip_test("no AVX-512 on this CPU (or under valgrind)");
	dmt_cpu_mask_off(DMT_CPU_X86_AVX512);
	cr_assert_eq(dmt_cpu_features() & DMT_CPU_X86_AVX512, 0);
	cr_assert_eq(dmt_engine_spec_check("avx512", NULL, 0), -ENOTSUP);
	cr_assert_eq(dmt_engine_spec_check("sha512=avx512", NULL, 0),
		     -ENOTSUP);
	cr_assert(!engine_info("sha256", "avx512")->available);
	cr_assert(!engine_info("sha512", "avx512")->available);
	c.engine = "avx512";	/* made strict: sha256=avx512 */
	h = mk(&c, &rc);
	cr_assert_eq(rc, -ENOTSUP);
	cr_assert_null(h);
	c.lenient = true;	/* runs nowhere: rejected, not ignored */
	h = mk(&c, &rc);
	cr_assert_eq(rc, -ENOTSUP);
	c.lenient = false;
	if (f & DMT_CPU_X86_GFNI) {
		cr_assert_str_neq(dmt_engine_resolve(NULL, "gf256"), "gfni",
				  "GFNI needs AVX-512 vectors");
		cr_assert_eq(dmt_engine_spec_check("gf256=gfni", NULL, 0),
			     -ENOTSUP);
		cr_assert_eq(dmt_engine_spec_check("gfni", NULL, 0),
			     -ENOTSUP);
	}
	c.engine = NULL;
	h = mk_ok(&c);
	cr_assert_str_neq(dmt_hasher_engine(h), "avx512");
	check(h, &c, 20, NULL, buf, 4096, NULL);
	dmt_hasher_free(h);
	h = mk_ok(&c5);
	cr_assert_str_neq(dmt_hasher_engine(h), "avx512");
	check(h, &c5, 20, NULL, buf, 4096, NULL);
	dmt_hasher_free(h);

	/* nothing vectorised left: still correct */
	dmt_cpu_mask_off(DMT_CPU_X86_SHANI | DMT_CPU_X86_AVX2 |
			 DMT_CPU_X86_SSE42);
	h = mk_ok(&c);
	cr_assert_str_eq(dmt_hasher_engine(h), "openssl");
	check(h, &c, 20, NULL, buf, 4096, NULL);
	dmt_hasher_free(h);
	c.alg = "crc32c";
	h = mk_ok(&c);
	cr_assert_str_eq(dmt_hasher_engine(h), "crc-table");
	dmt_hasher_free(h);
	free(buf);
}
#endif

Test(hash, oneshot)
{
	uint8_t out[64], want[64];
	size_t ds = 0, wl;

	cr_assert_eq(dmt_hash_oneshot("sha256", NULL, 0, "abc", 3, out, &ds),
		     0);
	cr_assert_eq(ds, 32);
	unhex("ba7816bf8f01cfea414140de5dae2223"
	      "b00361a396177a9cb410ff61f20015ad", want, &wl);
	cr_assert_eq(memcmp(out, want, 32), 0);
	cr_assert_eq(dmt_hash_oneshot("sha256", NULL, 0, NULL, 0, out, &ds),
		     0);
	unhex("e3b0c44298fc1c149afbf4c8996fb924"
	      "27ae41e4649b934ca495991b7852b855", want, &wl);
	cr_assert_eq(memcmp(out, want, 32), 0);
	cr_assert_eq(dmt_hash_oneshot("nope", NULL, 0, "", 0, out, &ds),
		     -ENOENT);
}
