// SPDX-License-Identifier: MIT
/*
 * s390 CPACF: the software model of KIMD/KLMD/KMAC and every driver on top
 * of it (cc-3 loops, query masks, DMT_S390CAP, KMAC self-test, SHA block
 * functions, batched (HMAC-)SHA-2 on each path), checked against OpenSSL and
 * RFC 4231.  On s390x (real machine or qemu-s390x) the same drivers also run
 * on the real instructions, differentially against OpenSSL and the model.
 * DMT_TEST_REDUCED=1 shrinks the random matrices for emulated runs.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/helpers.h"
#include "lib/hash/s390/cpacf.h"

TestSuite(s390, .timeout = 120);

static const char *const hashes[] = { "sha224", "sha256", "sha384",
				      "sha512" };

static const EVP_MD *md_of(const char *hash)
{
	if (!strcmp(hash, "sha224"))
		return EVP_sha224();
	if (!strcmp(hash, "sha256"))
		return EVP_sha256();
	if (!strcmp(hash, "sha384"))
		return EVP_sha384();
	return EVP_sha512();
}

static unsigned int kmac_fc_of(const char *hash)
{
	if (!strcmp(hash, "sha224"))
		return DMT_CPACF_HMAC_SHA_224;
	if (!strcmp(hash, "sha256"))
		return DMT_CPACF_HMAC_SHA_256;
	if (!strcmp(hash, "sha384"))
		return DMT_CPACF_HMAC_SHA_384;
	return DMT_CPACF_HMAC_SHA_512;
}

static unsigned int kimd_fc_of(const char *hash)
{
	return strstr(hash, "224") || strstr(hash, "256") ? DMT_CPACF_SHA_256
							  : DMT_CPACF_SHA_512;
}

static struct dmt_cpacf *model(enum dmt_cpacf_preset preset, const char *cap,
			       unsigned int stop_every, bool stop_random,
			       uint64_t seed, bool opaque)
{
	struct dmt_cpacf_model_cfg cfg;
	struct dmt_cpacf *c = NULL;
	int rc;

	dmt_cpacf_model_preset(&cfg, preset);
	cfg.stop_every = stop_every;
	cfg.stop_random = stop_random;
	cfg.seed = seed;
	cfg.opaque_kmac_cv = opaque;
	rc = dmt_cpacf_model_new(&cfg, cap, &c);
	cr_assert_eq(rc, 0, "model_new: %d", rc);
	cr_assert_not_null(c);
	return c;
}

/* OpenSSL's digest or HMAC of one buffer. */
static void ref_mac(const char *hash, bool hmac, const uint8_t *key,
		    size_t klen, const uint8_t *msg, size_t len, uint8_t *out)
{
	unsigned int olen = 0;
	static const uint8_t nokey;

	if (hmac)
		cr_assert_not_null(HMAC(md_of(hash), klen ? key : &nokey,
					(int)klen, msg, len, out, &olen));
	else
		cr_assert_eq(EVP_Digest(msg, len, out, &olen, md_of(hash),
					NULL), 1);
	cr_assert_eq(olen, (unsigned int)EVP_MD_get_size(md_of(hash)));
}

struct framing {
	const char *hash;
	bool hmac;
	size_t key_size, prefix_size, header_size, msg_size, suffix_size;
	size_t n;
	size_t align;		/* message misalignment, bytes */
	uint64_t seed;
};

/*
 * Runs one batch on c and compares every output with OpenSSL over the
 * concatenation prefix || header || msg || suffix.  want_path NULL: any
 * path; a path of "none" expects -ENOTSUP.
 */
static void check_batch(struct dmt_cpacf *c, const struct framing *f,
			const char *want_path)
{
	size_t ds = (size_t)EVP_MD_get_size(md_of(f->hash));
	size_t msg_span = f->msg_size + f->align + 1;
	size_t cat_len = f->prefix_size + f->header_size + f->msg_size +
			 f->suffix_size;
	uint8_t *key = malloc(f->key_size + 1);
	uint8_t *prefix = malloc(f->prefix_size + 1);
	uint8_t *suffix = malloc(f->suffix_size + 1);
	uint8_t *headers = malloc(f->n * f->header_size + 1);
	uint8_t *data = malloc(f->n * msg_span + 1);
	uint8_t *out = malloc(f->n * ds + 1), *cat = malloc(cat_len + 1);
	const uint8_t **msgs = calloc(f->n + 1, sizeof(*msgs));
	uint8_t want[64];
	struct dmt_hmac_job job;
	enum dmt_cpacf_path path;
	int rc;

	cr_assert(key && prefix && suffix && headers && data && out && cat &&
		  msgs);
	th_fill_random(key, f->key_size, f->seed + 1);
	th_fill_random(prefix, f->prefix_size, f->seed + 2);
	th_fill_random(suffix, f->suffix_size, f->seed + 3);
	th_fill_random(headers, f->n * f->header_size, f->seed + 4);
	th_fill_random(data, f->n * msg_span, f->seed + 5);
	for (size_t i = 0; i < f->n; i++)
		msgs[i] = data + i * msg_span + f->align;

	memset(&job, 0, sizeof(job));
	job.hash = f->hash;
	job.key = f->hmac ? key : NULL;
	job.key_size = f->hmac ? f->key_size : 0;
	job.prefix = f->prefix_size ? prefix : NULL;
	job.prefix_size = f->prefix_size;
	job.suffix = f->suffix_size ? suffix : NULL;
	job.suffix_size = f->suffix_size;
	job.header_size = f->header_size;
	job.msg_size = f->msg_size;
	job.digest_size = ds;

	path = dmt_cpacf_batch_path(c, &job, f->hmac);
	if (want_path)
		cr_assert_str_eq(dmt_cpacf_path_name(path), want_path,
				 "%s hmac=%d", f->hash, f->hmac);
	memset(out, 0xee, f->n * ds);
	rc = dmt_cpacf_batch(c, &job, f->hmac, f->n, msgs,
			     f->header_size ? headers : NULL, out);
	if (path == DMT_CPACF_PATH_NONE) {
		cr_assert_eq(rc, -ENOTSUP);
		goto out;
	}
	cr_assert_eq(rc, 0, "%s hmac=%d path=%s", f->hash, f->hmac,
		     dmt_cpacf_path_name(path));
	for (size_t i = 0; i < f->n; i++) {
		uint8_t *p = cat;

		memcpy(p, prefix, f->prefix_size);
		p += f->prefix_size;
		memcpy(p, headers + i * f->header_size, f->header_size);
		p += f->header_size;
		memcpy(p, msgs[i], f->msg_size);
		p += f->msg_size;
		memcpy(p, suffix, f->suffix_size);
		ref_mac(f->hash, f->hmac, key, f->key_size, cat, cat_len, want);
		cr_assert_arr_eq(out + i * ds, want, ds,
				 "%s hmac=%d path=%s key=%zu prefix=%zu "
				 "header=%zu msg=%zu suffix=%zu n=%zu: "
				 "message %zu",
				 f->hash, f->hmac, dmt_cpacf_path_name(path),
				 f->key_size, f->prefix_size, f->header_size,
				 f->msg_size, f->suffix_size, f->n, i);
	}
out:
	free(key);
	free(prefix);
	free(suffix);
	free(headers);
	free(data);
	free(out);
	free(cat);
	free(msgs);
}

static void hex_mask(const uint8_t *m, char *out)
{
	for (int i = 0; i < DMT_CPACF_MASK_SIZE; i++)
		sprintf(out + 2 * i, "%02x", m[i]);
}

/* ---- the model itself ---- */

Test(s390, model_query_reports_installed_functions)
{
	/* Masks as the architecture numbers them (fc 0 = MSB of byte 0);
	 * QEMU 7.2's values are the ones measured in cross-arch.md. */
	static const struct {
		enum dmt_cpacf_preset p;
		const char *kimd, *kmac;
	} want[] = {
		{ DMT_CPACF_PRESET_NONE, "80000000000000000000000000000000",
		  "80000000000000000000000000000000" },
		{ DMT_CPACF_PRESET_QEMU72, "90000000000000000000000000000000",
		  "80000000000000000000000000000000" },
		{ DMT_CPACF_PRESET_Z15, "b0000000000000000000000000000000",
		  "80000000000000000000000000000000" },
		{ DMT_CPACF_PRESET_Z17, "b0000000000000000000000000000000",
		  "8000000000000000000000000000f000" },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct dmt_cpacf *c = model(want[i].p, NULL, 0, false, 0,
					    false);
		uint8_t q[DMT_CPACF_MASK_SIZE];
		char hex[33];

		for (int insn = 0; insn < DMT_CPACF_NINSN; insn++) {
			uint64_t gr0 = DMT_CPACF_QUERY;

			memset(q, 0x55, sizeof(q));
			cr_assert_eq(dmt_cpacf_run(c, (enum dmt_cpacf_insn)insn,
						   &gr0, q, NULL, 0), 0);
			hex_mask(q, hex);
			cr_assert_str_eq(hex, insn == DMT_CPACF_KMAC
						      ? want[i].kmac
						      : want[i].kimd,
					 "preset %zu insn %d", i, insn);
			/* Setup found the same (self-test passed). */
			hex_mask(c->mask[insn], hex);
			cr_assert_str_eq(hex, insn == DMT_CPACF_KMAC
						      ? want[i].kmac
						      : want[i].kimd);
		}
		dmt_cpacf_model_free(c);
	}
}

Test(s390, model_rejects_what_the_cpu_rejects)
{
	struct dmt_cpacf *c = model(DMT_CPACF_PRESET_QEMU72, NULL, 0, false,
				    0, false);
	struct dmt_cpacf_model_cfg cfg;
	struct dmt_cpacf_model_stats st;
	struct dmt_cpacf *bad = (struct dmt_cpacf *)1;
	uint8_t param[DMT_CPACF_PARAM_MAX] = { 0 }, data[256] = { 0 };
	const uint8_t *src = data;
	size_t len = 100;
	uint64_t gr0 = DMT_CPACF_SHA_512;

	/* KIMD takes whole blocks only. */
	cr_assert_eq(c->exec(c, DMT_CPACF_KIMD, &gr0, param, &src, &len),
		     DMT_CPACF_EXCEPTION);
	cr_assert_eq(len, 100);
	cr_assert_eq(src, data);
	/* Not installed on this model: SHA-256, KMAC HMAC. */
	gr0 = DMT_CPACF_SHA_256;
	len = 128;
	cr_assert_eq(c->exec(c, DMT_CPACF_KIMD, &gr0, param, &src, &len),
		     DMT_CPACF_EXCEPTION);
	gr0 = DMT_CPACF_HMAC_SHA_512;
	cr_assert_eq(c->exec(c, DMT_CPACF_KMAC, &gr0, param, &src, &len),
		     DMT_CPACF_EXCEPTION);
	/* The modifier bit must be zero. */
	gr0 = DMT_CPACF_SHA_512 | 0x80;
	cr_assert_eq(c->exec(c, DMT_CPACF_KLMD, &gr0, param, &src, &len),
		     DMT_CPACF_EXCEPTION);
	/* dmt_cpacf_run turns it into -EIO. */
	gr0 = DMT_CPACF_SHA_512;
	cr_assert_eq(dmt_cpacf_run(c, DMT_CPACF_KIMD, &gr0, param, data, 5),
		     -EIO);
	dmt_cpacf_model_get_stats(c, &st);
	cr_assert_eq(st.exceptions, 5);
	dmt_cpacf_model_free(c);

	/* KMAC: intermediate parts are whole blocks; no unknown flags. */
	c = model(DMT_CPACF_PRESET_Z17, NULL, 0, false, 0, false);
	gr0 = DMT_CPACF_HMAC_SHA_256 | DMT_CPACF_KMAC_IIMP;
	src = data;
	len = 65;
	cr_assert_eq(c->exec(c, DMT_CPACF_KMAC, &gr0, param, &src, &len),
		     DMT_CPACF_EXCEPTION);
	cr_assert_eq(gr0 & DMT_CPACF_KMAC_IKP, 0, "IKP set by a failed call");
	gr0 = DMT_CPACF_HMAC_SHA_256 | 0x2000;	/* CCUP: not modelled */
	cr_assert_eq(c->exec(c, DMT_CPACF_KMAC, &gr0, param, &src, &len),
		     DMT_CPACF_EXCEPTION);
	dmt_cpacf_model_free(c);

	/* A function the model cannot emulate (SHA-1) is refused. */
	dmt_cpacf_model_preset(&cfg, DMT_CPACF_PRESET_Z15);
	dmt_cpacf_mask_set(cfg.installed[DMT_CPACF_KIMD], 1);
	cr_assert_eq(dmt_cpacf_model_new(&cfg, NULL, &bad), -EINVAL);
	cr_assert_null(bad);
}

/* KIMD over whole blocks + KLMD over the rest, against OpenSSL. */
static void kimd_klmd_one(struct dmt_cpacf *c, const char *hash,
			  const uint8_t *msg, size_t len, size_t split)
{
	bool wide = kimd_fc_of(hash) == DMT_CPACF_SHA_512;
	size_t bs = wide ? 128 : 64, cvlen = wide ? 64 : 32;
	size_t ds = (size_t)EVP_MD_get_size(md_of(hash));
	const void *iv = dmt_sha512_iv;
	uint8_t param[80] = { 0 }, want[64];
	uint64_t gr0 = kimd_fc_of(hash);

	if (!strcmp(hash, "sha224"))
		iv = dmt_sha224_iv;
	else if (!strcmp(hash, "sha256"))
		iv = dmt_sha256_iv;
	else if (!strcmp(hash, "sha384"))
		iv = dmt_sha384_iv;
	size_t whole = split / bs * bs;

	for (int i = 0; i < 8; i++) {
		if (wide)
			dmt_cpacf_store64(param + 8 * i,
					  ((const uint64_t *)iv)[i]);
		else
			dmt_cpacf_store32(param + 4 * i,
					  ((const uint32_t *)iv)[i]);
	}
	cr_assert_eq(dmt_cpacf_run(c, DMT_CPACF_KIMD, &gr0, param, msg, whole),
		     0);
	/* MBL: the whole message, also what KIMD consumed. */
	if (wide)
		dmt_cpacf_store64(param + cvlen + 8, (uint64_t)len * 8);
	else
		dmt_cpacf_store64(param + cvlen, (uint64_t)len * 8);
	cr_assert_eq(dmt_cpacf_run(c, DMT_CPACF_KLMD, &gr0, param, msg + whole,
				   len - whole), 0);
	ref_mac(hash, false, NULL, 0, msg, len, want);
	cr_assert_arr_eq(param, want, ds, "%s len %zu split %zu on %s", hash,
			 len, whole, c->name);
}

Test(s390, model_kimd_klmd_match_openssl)
{
	static const unsigned int stops[] = { 0, 1, 2, 3, 7 };
	size_t maxlen = th_reduced() ? 300 : 700;
	uint8_t *buf = malloc(maxlen + 1);

	cr_assert_not_null(buf);
	th_fill_random(buf, maxlen, 11);
	for (size_t s = 0; s < sizeof(stops) / sizeof(stops[0]); s++) {
		struct dmt_cpacf *c = model(DMT_CPACF_PRESET_Z15, NULL,
					    stops[s], s == 4, s, false);
		struct dmt_cpacf_model_stats st;

		for (size_t h = 0; h < 4; h++)
			for (size_t len = 0; len <= maxlen;
			     len += (s ? 7 : 1)) {
				kimd_klmd_one(c, hashes[h], buf, len, len);
				kimd_klmd_one(c, hashes[h], buf, len, 0);
			}
		dmt_cpacf_model_get_stats(c, &st);
		if (stops[s])
			cr_assert_gt(st.partial[DMT_CPACF_KIMD][2] +
					     st.partial[DMT_CPACF_KLMD][3], 0,
				     "no partial completion forced");
		else
			cr_assert_eq(st.partial[DMT_CPACF_KLMD][2], 0);
		cr_assert_eq(st.exceptions, 0);
		dmt_cpacf_model_free(c);
	}
	free(buf);
}

/* One KMAC over a clear key <= bs, split into IIMP parts, vs OpenSSL. */
static void kmac_one(struct dmt_cpacf *c, const char *hash, const uint8_t *key,
		     size_t klen, const uint8_t *msg, size_t len, size_t split)
{
	bool wide = kimd_fc_of(hash) == DMT_CPACF_SHA_512;
	size_t bs = wide ? 128 : 64, cvlen = wide ? 64 : 32;
	size_t lenlen = wide ? 16 : 8;
	size_t ds = (size_t)EVP_MD_get_size(md_of(hash));
	uint8_t param[DMT_CPACF_PARAM_MAX] = { 0 }, want[64];
	uint64_t gr0 = kmac_fc_of(hash) | DMT_CPACF_KMAC_IIMP;
	size_t whole = split / bs * bs;

	memcpy(param + cvlen + lenlen, key, klen);
	dmt_cpacf_store64(param + cvlen + lenlen - 8, (uint64_t)len * 8);
	if (whole) {
		cr_assert_eq(dmt_cpacf_run(c, DMT_CPACF_KMAC, &gr0, param, msg,
					   whole), 0);
		/* The CPU reports that the key block is processed. */
		cr_assert_neq(gr0 & DMT_CPACF_KMAC_IKP, 0);
	}
	gr0 &= ~(uint64_t)DMT_CPACF_KMAC_IIMP;
	cr_assert_eq(dmt_cpacf_run(c, DMT_CPACF_KMAC, &gr0, param, msg + whole,
				   len - whole), 0);
	ref_mac(hash, true, key, klen, msg, len, want);
	cr_assert_arr_eq(param, want, ds, "%s key %zu len %zu split %zu",
			 hash, klen, len, whole);
}

Test(s390, model_kmac_matches_openssl)
{
	uint8_t key[128], msg[600];

	th_fill_random(key, sizeof(key), 21);
	th_fill_random(msg, sizeof(msg), 22);
	for (unsigned int stop = 0; stop <= 2; stop++) {
		struct dmt_cpacf *c = model(DMT_CPACF_PRESET_Z17, NULL, stop,
					    false, 0, false);
		struct dmt_cpacf_model_stats st;

		for (size_t h = 0; h < 4; h++) {
			size_t bs = kimd_fc_of(hashes[h]) == DMT_CPACF_SHA_512
					    ? 128 : 64;

			for (size_t klen = 0; klen <= bs;
			     klen += th_reduced() ? 31 : 9)
				kmac_one(c, hashes[h], key, klen, msg, 77, 0);
			for (size_t len = 0; len < sizeof(msg);
			     len += th_reduced() ? 37 : 13) {
				kmac_one(c, hashes[h], key, 20, msg, len, 0);
				kmac_one(c, hashes[h], key, 20, msg, len, len);
			}
		}
		dmt_cpacf_model_get_stats(c, &st);
		cr_assert_eq(st.exceptions, 0);
		if (stop)
			cr_assert_gt(st.partial[DMT_CPACF_KMAC]
					       [DMT_CPACF_HMAC_SHA_512], 0);
		dmt_cpacf_model_free(c);
	}
}

/* ---- capability masks ---- */

Test(s390, s390cap_masks_functions)
{
	uint8_t m[DMT_CPACF_NINSN][DMT_CPACF_MASK_SIZE], saved[sizeof(m)];
	char hex[33];

	memset(m, 0xff, sizeof(m));
	cr_assert_eq(dmt_cpacf_apply_cap(m, "kimd:~0x2000000000000000:~0"), 0);
	cr_assert_eq(m[DMT_CPACF_KIMD][0], 0xdf);
	cr_assert_eq(m[DMT_CPACF_KLMD][0], 0xff);
	cr_assert(!dmt_cpacf_mask_test(m[DMT_CPACF_KIMD], 2));
	cr_assert(dmt_cpacf_mask_test(m[DMT_CPACF_KIMD], 3));

	/* HMAC-SHA-256 is fc 0x71: byte 14, bit 0x40 = W1 bit 0x4000. */
	cr_assert_eq(dmt_cpacf_apply_cap(m, " kmac:~0:~0x4000 ; klmd:0x90"
					    "00000000000000:0"), 0);
	cr_assert(!dmt_cpacf_mask_test(m[DMT_CPACF_KMAC], 0x71));
	cr_assert(dmt_cpacf_mask_test(m[DMT_CPACF_KMAC], 0x70));
	cr_assert(dmt_cpacf_mask_test(m[DMT_CPACF_KMAC], 0x73));
	hex_mask(m[DMT_CPACF_KLMD], hex);
	cr_assert_str_eq(hex, "90000000000000000000000000000000");

	/* Decimal words; "none". */
	cr_assert_eq(dmt_cpacf_apply_cap(m, "kimd:0:18446744073709551615"), 0);
	cr_assert_eq(m[DMT_CPACF_KIMD][0], 0);
	cr_assert_eq(m[DMT_CPACF_KIMD][15], 0xff);
	cr_assert_eq(dmt_cpacf_apply_cap(m, "none"), 0);
	for (int i = 0; i < DMT_CPACF_NINSN; i++)
		for (int k = 0; k < DMT_CPACF_MASK_SIZE; k++)
			cr_assert_eq(m[i][k], 0);

	/* Malformed: error, masks untouched. */
	static const char *const bad[] = {
		"kimd", "kimd:1", "kimd:1:2:3", "km:0:0", "kimd:0x:0",
		"kimd:zz:0", "kimd:-1:0", "kimd:0x10000000000000000:0",
		"kimd:0:0;nonsense", "KIMD:0:0",
	};
	memset(m, 0xa5, sizeof(m));
	memcpy(saved, m, sizeof(m));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(dmt_cpacf_apply_cap(m, bad[i]), -EINVAL, "%s",
			     bad[i]);
		cr_assert_arr_eq(m, saved, sizeof(m), "%s", bad[i]);
	}
	cr_assert_eq(dmt_cpacf_apply_cap(m, ""), 0);
	cr_assert_arr_eq(m, saved, sizeof(m));
}

/* ---- drivers ---- */

/* The KIMD block functions, finished with software padding blocks. */
Test(s390, kimd_block_functions_match_openssl)
{
	uint8_t msg[128 * 40 + 256], want[64], got[64];

	th_fill_random(msg, sizeof(msg), 31);
	for (unsigned int stop = 0; stop <= 4; stop += 2) {
		struct dmt_cpacf *c = model(DMT_CPACF_PRESET_Z15, NULL, stop,
					    true, stop, false);

		for (size_t nb = 0; nb <= 40; nb += th_reduced() ? 13 : 3) {
			for (int wide = 0; wide <= 1; wide++) {
				size_t bs = wide ? 128 : 64, len = nb * bs;
				uint8_t pad[256] = { 0 };
				uint32_t s32[8];
				uint64_t s64[8];

				pad[0] = 0x80;
				dmt_cpacf_store64(pad + bs - 8,
						  (uint64_t)len * 8);
				if (wide) {
					memcpy(s64, dmt_sha512_iv, sizeof(s64));
					dmt_cpacf_sha512_blocks(c, s64, msg,
								nb);
					dmt_cpacf_sha512_blocks(c, s64, pad, 1);
					for (int i = 0; i < 8; i++)
						dmt_cpacf_store64(got + 8 * i,
								  s64[i]);
				} else {
					memcpy(s32, dmt_sha256_iv, sizeof(s32));
					dmt_cpacf_sha256_blocks(c, s32, msg + 1,
								nb);
					dmt_cpacf_sha256_blocks(c, s32, pad, 1);
					for (int i = 0; i < 8; i++)
						dmt_cpacf_store32(got + 4 * i,
								  s32[i]);
				}
				ref_mac(wide ? "sha512" : "sha256", false, NULL,
					0, wide ? msg : msg + 1, len, want);
				cr_assert_arr_eq(got, want, wide ? 64 : 32,
						 "wide=%d blocks=%zu stop=%u",
						 wide, nb, stop);
			}
		}
		dmt_cpacf_model_free(c);
	}
}

Test(s390, rfc4231_vectors_on_every_path)
{
	static const struct {
		/* key NULL: 131 bytes 0xaa */
		const char *hash, *key, *data, *mac;
	} v[] = {
		{ "sha224", "Jefe", "what do ya want for nothing?",
		  "a30e01098bc6dbbf45690f3a7e9e6d0f8bbea2a39e6148008fd05e44" },
		{ "sha256", "Jefe", "what do ya want for nothing?",
		  "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b9"
		  "64ec3843" },
		{ "sha384", "Jefe", "what do ya want for nothing?",
		  "af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec373"
		  "6322445e8e2240ca5e69e2c78b3239ecfab21649" },
		{ "sha512", "Jefe", "what do ya want for nothing?",
		  "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7"
		  "ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b"
		  "636e070a38bce737" },
		/* Test case 6: 131-byte key 0xaa.., hashed first. */
		{ "sha256", NULL,
		  "Test Using Larger Than Block-Size Key - Hash Key First",
		  "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f"
		  "0ee37f54" },
		{ "sha512", NULL,
		  "Test Using Larger Than Block-Size Key - Hash Key First",
		  "80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b0137"
		  "83f8f3526b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec"
		  "8b915a985d786598" },
	};
	/* KMAC preloaded, KMAC with CPU-derived key, KIMD/KLMD. */
	struct dmt_cpacf *cs[3] = {
		model(DMT_CPACF_PRESET_Z17, NULL, 1, false, 0, false),
		model(DMT_CPACF_PRESET_Z17, NULL, 1, false, 0, true),
		model(DMT_CPACF_PRESET_Z15, NULL, 1, false, 0, false),
	};
	static const char *const paths[] = { "kmac", "kmac-key", "kimd" };
	uint8_t aa[131];

	memset(aa, 0xaa, sizeof(aa));
	for (size_t k = 0; k < 3; k++) {
		for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
			const char *key = v[i].key;
			const uint8_t *msgs[1] = {
				(const uint8_t *)v[i].data
			};
			struct dmt_hmac_job job = {
				.hash = v[i].hash,
				.key = key ? (const uint8_t *)key : aa,
				.key_size = key ? strlen(key) : sizeof(aa),
				.msg_size = strlen(v[i].data),
				.digest_size = strlen(v[i].mac) / 2,
			};
			uint8_t out[64];
			char hex[129];

			cr_assert_str_eq(dmt_cpacf_path_name(
					     dmt_cpacf_batch_path(cs[k], &job,
								  true)),
					 paths[k]);
			cr_assert_eq(dmt_cpacf_batch(cs[k], &job, true, 1, msgs,
						     NULL, out), 0);
			for (size_t b = 0; b < job.digest_size; b++)
				sprintf(hex + 2 * b, "%02x", out[b]);
			cr_assert_str_eq(hex, v[i].mac, "%s vector %zu",
					 paths[k], i);
		}
		dmt_cpacf_model_free(cs[k]);
	}
}

/* The dm-integrity shape: [salt16] || le64 sector || sector data. */
Test(s390, integrity_shaped_batches_every_path)
{
	static const size_t msg_sizes[] = { 512, 4096 };
	static const size_t batch[] = { 1, 2, 7, 16 };
	struct {
		enum dmt_cpacf_preset p;
		bool opaque;
		const char *path;
	} cfgs[] = {
		{ DMT_CPACF_PRESET_Z17, false, "kmac" },
		{ DMT_CPACF_PRESET_Z17, true, "kmac-key" },
		{ DMT_CPACF_PRESET_Z15, false, "kimd" },
	};

	for (size_t k = 0; k < 3; k++) {
		struct dmt_cpacf *c = model(cfgs[k].p, NULL, 0, false, 0,
					    cfgs[k].opaque);

		for (size_t h = 0; h < 4; h++)
			for (size_t m = 0; m < 2; m++)
				for (size_t b = 0; b < 4; b++)
					for (size_t salt = 0; salt <= 16;
					     salt += 16) {
						struct framing f = {
							hashes[h], true, 32,
							salt, 8, msg_sizes[m],
							0, batch[b], b & 1,
							h * 100 + m * 10 + b,
						};

						if (th_reduced() && b == 3)
							continue;
						check_batch(c, &f,
							    cfgs[k].path);
					}
		dmt_cpacf_model_free(c);
	}
}

/* Random framings (key, prefix, header, message, suffix, batch size). */
static void random_framings(struct dmt_cpacf *c, const char *want_hmac_path,
			    const char *want_plain_path, unsigned int count,
			    uint64_t seed)
{
	static const size_t keys[] = { 0, 1, 20, 63, 64, 65, 127, 128, 129,
				       131, 300 };
	static const size_t prefixes[] = { 0, 1, 16, 32, 63, 64, 65, 200 };
	static const size_t msgs[] = { 0, 1, 47, 55, 56, 63, 64, 65, 111,
				       112, 119, 120, 127, 128, 129, 255, 256,
				       257, 512, 1000, 4096 };
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 7;

	for (unsigned int i = 0; i < count; i++) {
		struct framing f;
		uint64_t r[8];

		for (int k = 0; k < 8; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			r[k] = x;
		}
		f.hash = hashes[r[0] % 4];
		f.hmac = r[1] & 1;
		f.key_size = keys[r[2] % (sizeof(keys) / sizeof(keys[0]))];
		f.prefix_size = prefixes[r[3] % (sizeof(prefixes) /
						 sizeof(prefixes[0]))];
		f.header_size = (r[4] & 3) == 0 ? 0 : (r[4] & 3) == 1 ? 8
							: r[4] >> 58;
		f.msg_size = msgs[r[5] % (sizeof(msgs) / sizeof(msgs[0]))];
		f.suffix_size = (r[6] & 3) == 0 ? 32 : (r[6] & 3) == 1
							     ? r[6] >> 56 : 0;
		f.n = 1 + r[7] % 9;
		f.align = (r[7] >> 8) % 8;
		f.seed = r[7];
		check_batch(c, &f, f.hmac ? want_hmac_path : want_plain_path);
	}
}

Test(s390, random_framings_every_path)
{
	unsigned int count = th_reduced() ? 40 : 250;
	struct dmt_cpacf *c;

	c = model(DMT_CPACF_PRESET_Z17, NULL, 0, false, 0, false);
	random_framings(c, "kmac", "kimd", count, 1);
	dmt_cpacf_model_free(c);
	c = model(DMT_CPACF_PRESET_Z17, NULL, 0, false, 0, true);
	random_framings(c, "kmac-key", "kimd", count, 2);
	dmt_cpacf_model_free(c);
	c = model(DMT_CPACF_PRESET_Z15, NULL, 0, false, 0, false);
	random_framings(c, "kimd", "kimd", count, 3);
	dmt_cpacf_model_free(c);
}

/*
 * Partial completion after every block, or after a random 1..5: the
 * results stay right only if the driver re-executes with the updated
 * registers and keeps the IKP flag the CPU set in GR0.
 */
Test(s390, forced_partial_completion)
{
	unsigned int count = th_reduced() ? 15 : 80;

	for (unsigned int mode = 0; mode < 4; mode++) {
		struct dmt_cpacf *c = model(mode < 2 ? DMT_CPACF_PRESET_Z17
						     : DMT_CPACF_PRESET_Z15,
					    NULL, mode & 1 ? 5 : 1, mode & 1,
					    mode, false);
		struct dmt_cpacf_model_stats st;
		struct framing f = { "sha256", true, 32, 16, 8, 4096, 0, 3, 1,
				     mode };

		check_batch(c, &f, mode < 2 ? "kmac" : "kimd");
		f.hash = "sha512";
		check_batch(c, &f, mode < 2 ? "kmac" : "kimd");
		random_framings(c, mode < 2 ? "kmac" : "kimd", "kimd", count,
				10 + mode);
		dmt_cpacf_model_get_stats(c, &st);
		cr_assert_eq(st.exceptions, 0);
		if (mode < 2) {
			cr_assert_gt(st.partial[DMT_CPACF_KMAC]
					       [DMT_CPACF_HMAC_SHA_256], 0);
			cr_assert_gt(st.partial[DMT_CPACF_KMAC]
					       [DMT_CPACF_HMAC_SHA_512], 0);
		} else {
			cr_assert_gt(st.partial[DMT_CPACF_KLMD]
					       [DMT_CPACF_SHA_256], 0);
			cr_assert_gt(st.partial[DMT_CPACF_KLMD]
					       [DMT_CPACF_SHA_512], 0);
		}
		dmt_cpacf_model_free(c);
	}
}

/*
 * Mask each function off through DMT_S390CAP: it disappears from the
 * effective mask, is never executed, and every algorithm still gives the
 * right result on the next path down (or -ENOTSUP with no path left).
 */
Test(s390, query_masks_disable_each_function)
{
	static const struct {
		const char *cap;
		enum dmt_cpacf_insn insn;
		unsigned int fc;
	} fns[] = {
		{ "kimd:~0x2000000000000000:~0", DMT_CPACF_KIMD, 2 },
		{ "kimd:~0x1000000000000000:~0", DMT_CPACF_KIMD, 3 },
		{ "klmd:~0x2000000000000000:~0", DMT_CPACF_KLMD, 2 },
		{ "klmd:~0x1000000000000000:~0", DMT_CPACF_KLMD, 3 },
		{ "kmac:~0:~0x8000", DMT_CPACF_KMAC, 0x70 },
		{ "kmac:~0:~0x4000", DMT_CPACF_KMAC, 0x71 },
		{ "kmac:~0:~0x2000", DMT_CPACF_KMAC, 0x72 },
		{ "kmac:~0:~0x1000", DMT_CPACF_KMAC, 0x73 },
		{ "none", DMT_CPACF_KMAC, 0x71 },
	};

	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		struct dmt_cpacf *c = model(DMT_CPACF_PRESET_Z17, fns[i].cap,
					    0, false, 0, false);
		struct dmt_cpacf_model_stats st;

		cr_assert(!dmt_cpacf_has(c, fns[i].insn, fns[i].fc), "%s",
			  fns[i].cap);
		dmt_cpacf_model_reset_stats(c);
		for (size_t h = 0; h < 4; h++) {
			unsigned int kfc = kimd_fc_of(hashes[h]);
			bool kimd = dmt_cpacf_has(c, DMT_CPACF_KIMD, kfc) &&
				    dmt_cpacf_has(c, DMT_CPACF_KLMD, kfc);
			bool kmac = dmt_cpacf_has(c, DMT_CPACF_KMAC,
						  kmac_fc_of(hashes[h]));

			for (int hmac = 0; hmac <= 1; hmac++) {
				struct framing f = { hashes[h], hmac, 40, 16,
						     8, 700, 0, 2, 3, h };
				const char *want =
					hmac && kmac ? "kmac"
					: kimd	     ? "kimd"
						     : "none";

				check_batch(c, &f, want);
			}
		}
		dmt_cpacf_model_get_stats(c, &st);
		cr_assert_eq(st.execs[fns[i].insn][fns[i].fc], 0,
			     "%s: masked function executed", fns[i].cap);
		cr_assert_eq(st.exceptions, 0);
		dmt_cpacf_model_free(c);
	}
}

/*
 * The KMAC self-test: a CPU whose intermediate CV is not the plain SHA
 * state makes the preloaded path wrong; setup must notice and fall back to
 * letting the CPU derive the key block per message.
 */
Test(s390, kmac_selftest_picks_the_safe_path)
{
	struct dmt_cpacf *c = model(DMT_CPACF_PRESET_Z17, NULL, 0, false, 0,
				    false);
	struct dmt_cpacf *o = model(DMT_CPACF_PRESET_Z17, NULL, 3, false, 0,
				    true);

	cr_assert_eq(c->kmac_preload, 0xf);
	cr_assert_eq(o->kmac_preload, 0, "opaque CV accepted for preload");
	/* Still offered, and right (its own cc-3 resumes work). */
	for (unsigned int fc = 0x70; fc <= 0x73; fc++)
		cr_assert(dmt_cpacf_has(o, DMT_CPACF_KMAC, fc));
	random_framings(o, "kmac-key", "kimd", th_reduced() ? 10 : 40, 5);
	dmt_cpacf_model_free(c);
	dmt_cpacf_model_free(o);
}

Test(s390, bad_jobs_are_refused)
{
	struct dmt_cpacf *c = model(DMT_CPACF_PRESET_Z17, NULL, 0, false, 0,
				    false);
	struct dmt_hmac_job job = { .hash = "sha256", .msg_size = 4,
				    .digest_size = 32 };
	const uint8_t *msgs[1] = { (const uint8_t *)"abcd" };
	uint8_t out[64];

	job.hash = "md5";
	cr_assert_eq(dmt_cpacf_batch(c, &job, true, 1, msgs, NULL, out),
		     -EINVAL);
	job.hash = "sha256";
	job.digest_size = 31;
	cr_assert_eq(dmt_cpacf_batch(c, &job, true, 1, msgs, NULL, out),
		     -EINVAL);
	job.digest_size = 32;
	job.prefix_size = 3;
	cr_assert_eq(dmt_cpacf_batch(c, &job, false, 1, msgs, NULL, out),
		     -EINVAL);
	job.prefix_size = 0;
	/* n = 0 is fine and writes nothing. */
	memset(out, 0x11, sizeof(out));
	cr_assert_eq(dmt_cpacf_batch(c, &job, true, 0, msgs, NULL, out), 0);
	cr_assert_eq(out[0], 0x11);
	dmt_cpacf_model_free(c);
	cr_assert_eq(dmt_cpacf_batch_path(NULL, &job, true),
		     DMT_CPACF_PATH_NONE);
}

/* ---- the real instructions (s390x only) ---- */

#if defined(__s390x__)
/*
 * $DMT_TEST_S390_EXPECT (set by check-cross per QEMU CPU model) names the
 * masks detection must find: "none" or "KIMD,KLMD,KMAC" as 32 hex digits.
 */
Test(s390, hw_detection_matches_cpu_model)
{
	const char *e = getenv("DMT_TEST_S390_EXPECT");
	struct dmt_cpacf *hw = dmt_cpacf_hw();
	char got[3 * 33] = "", hex[33];

	if (!e)
		cr_skip_test("DMT_TEST_S390_EXPECT not set (real machine)");
	if (!strcmp(e, "none")) {
		cr_assert_null(hw, "CPACF used although HWCAP/STFLE deny MSA");
		return;
	}
	cr_assert_not_null(hw);
	for (int i = 0; i < DMT_CPACF_NINSN; i++) {
		hex_mask(hw->mask[i], hex);
		strcat(got, hex);
		if (i < 2)
			strcat(got, ",");
	}
	cr_assert_str_eq(got, e);
}

struct counting {
	struct dmt_cpacf c;
	struct dmt_cpacf *hw;
	unsigned long execs, partial;
};

static int counting_exec(struct dmt_cpacf *c, enum dmt_cpacf_insn insn,
			 uint64_t *gr0, uint8_t *param, const uint8_t **src,
			 size_t *len)
{
	struct counting *k = (struct counting *)c;
	int cc = k->hw->exec(k->hw, insn, gr0, param, src, len);

	k->execs++;
	k->partial += cc == 3;
	return cc;
}

/* Whatever this machine offers, against OpenSSL and the model. */
Test(s390, hw_functions_match_openssl_and_model)
{
	struct dmt_cpacf *hw = dmt_cpacf_hw();
	struct dmt_cpacf *m = model(DMT_CPACF_PRESET_Z17, NULL, 0, false, 0,
				    false);
	size_t big = th_reduced() ? 300000 : 1000003;
	struct counting k;
	uint8_t *buf;
	bool any = false;

	if (!hw)
		cr_skip_test("no CPACF on this machine (HWCAP MSA off)");
	buf = malloc(big + 16);
	cr_assert_not_null(buf);
	th_fill_random(buf, big + 16, 77);
	memset(&k, 0, sizeof(k));
	k.c = *hw;
	k.c.exec = counting_exec;
	k.hw = hw;
	for (size_t h = 0; h < 4; h++) {
		unsigned int fc = kimd_fc_of(hashes[h]);

		if (!dmt_cpacf_has(hw, DMT_CPACF_KIMD, fc) ||
		    !dmt_cpacf_has(hw, DMT_CPACF_KLMD, fc))
			continue;
		any = true;
		for (size_t len = 0; len < 600; len += 13)
			for (size_t al = 0; al < 3; al++) {
				kimd_klmd_one(hw, hashes[h], buf + al, len,
					      len);
				kimd_klmd_one(m, hashes[h], buf + al, len,
					      len);
			}
		k.execs = k.partial = 0;
		kimd_klmd_one(&k.c, hashes[h], buf + 1, big, big);
		cr_log_info("%s over %zu bytes: %lu executions, %lu cc 3",
			    hashes[h], big, k.execs, k.partial);
	}
	for (size_t h = 0; h < 4; h++) {
		struct framing f = { hashes[h], true, 32, 16, 8, 4096, 0, 9, 1,
				     h };

		if (dmt_cpacf_batch_path(hw, &(struct dmt_hmac_job){
						     .hash = hashes[h] },
					 true) == DMT_CPACF_PATH_NONE)
			continue;
		any = true;
		check_batch(hw, &f, NULL);
		f.key_size = 200;
		f.suffix_size = 32;
		check_batch(hw, &f, NULL);
		random_framings(hw, NULL, NULL, th_reduced() ? 20 : 100,
				40 + h);
	}
	/* No SHA-2 function (e.g. QEMU with them switched off): every job
	 * must go back to the engine. */
	for (size_t h = 0; h < 4 && !any; h++) {
		struct framing f = { hashes[h], true, 32, 16, 8, 512, 0, 2, 0,
				     h };

		check_batch(hw, &f, "none");
		f.hmac = false;
		check_batch(hw, &f, "none");
	}
	dmt_cpacf_model_free(m);
	free(buf);
}

/* $DMT_S390CAP on the real instructions (setup of a copy: no global). */
Test(s390, hw_s390cap_masks_real_functions)
{
	struct dmt_cpacf *hw = dmt_cpacf_hw();
	struct dmt_cpacf copy;
	uint8_t raw[DMT_CPACF_MASK_SIZE];
	uint64_t gr0 = DMT_CPACF_QUERY;

	if (!hw)
		cr_skip_test("no CPACF on this machine (HWCAP MSA off)");
	/* What the machine has, whatever $DMT_S390CAP says. */
	cr_assert_eq(dmt_cpacf_run(hw, DMT_CPACF_KLMD, &gr0, raw, NULL, 0), 0);
	copy = *hw;
	cr_assert_eq(dmt_cpacf_setup(&copy, "kimd:~0x3000000000000000:~0;"
					   "kmac:0:0"), 0);
	cr_assert(!dmt_cpacf_has(&copy, DMT_CPACF_KIMD, 2));
	cr_assert(!dmt_cpacf_has(&copy, DMT_CPACF_KIMD, 3));
	cr_assert(!dmt_cpacf_has(&copy, DMT_CPACF_KMAC, 0x71));
	cr_assert_eq(dmt_cpacf_has(&copy, DMT_CPACF_KLMD, 3),
		     dmt_cpacf_mask_test(raw, 3));
	for (size_t h = 0; h < 4; h++) {
		struct framing f = { hashes[h], true, 32, 16, 8, 512, 0, 2, 0,
				     h };

		check_batch(&copy, &f, "none");
	}
}
#endif
