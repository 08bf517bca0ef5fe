// SPDX-License-Identifier: MIT
/*
 * dm-verity FEC tests (suite "fec"): parity byte-identical to veritysetup
 * for several roots / block sizes / sizes (separate and shared FEC file,
 * every thread count and both the GFNI and the table path), the published
 * TV2 vector, the RS decoder at and beyond its limits, and end-to-end
 * correction of damaged data, hash and parity blocks checked against the
 * real hash tree.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "lib/common/cpu.h"
#include <dmt/fec.h>
#include "lib/fec/fec_priv.h"
#include <dmt/hash.h>
#include "lib/fec/fec_gf256.h"
#include <dmt/io.h>
#include "lib/common/testhooks.h"
#include "tests/support/helpers.h"

#define SALT_HEX "000102030405060708090a0b0c0d0e0f" \
		 "101112131415161718191a1b1c1d1e1f"
#define UUID "12345678-1234-1234-1234-123456789abc"
#define VS "PATH=$PATH:/usr/sbin:/sbin veritysetup"

/* ---- helpers ---- */

static void need_veritysetup(void)
{
	if (!th_have_cmd("veritysetup"))
		cr_skip("veritysetup (cryptsetup-bin) is not installed");
}

static void sha256(const void *a, size_t alen, const void *b, size_t blen,
		   uint8_t md[32])
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	cr_assert_not_null(c);
	EVP_DigestInit_ex(c, EVP_sha256(), NULL);
	EVP_DigestUpdate(c, a, alen);
	EVP_DigestUpdate(c, b, blen);
	EVP_DigestFinal_ex(c, md, NULL);
	EVP_MD_CTX_free(c);
}

/* veritysetup format with FEC; extra: more options or "". */
static void vs_format(const char *data, const char *hash, const char *fec,
		      unsigned int roots, uint32_t bs, const char *extra)
{
	char *err = NULL;
	int rc = th_sh(NULL, &err,
		       VS " format '%s' '%s' --fec-device '%s' --fec-roots %u"
		       " --data-block-size %u --hash-block-size %u"
		       " --salt " SALT_HEX " --uuid " UUID " %s",
		       data, hash, fec, roots, bs, bs, extra);

	cr_assert_eq(rc, 0, "veritysetup format failed: %s", err);
	free(err);
}

struct files {
	struct dmt_file *data, *hash, *fec;
	bool shared;
};

static void files_open(struct files *f, const char *data, const char *hash,
		       const char *fec, int fec_flags)
{
	memset(f, 0, sizeof(*f));
	cr_assert_eq(dmt_file_open(data, DMT_OPEN_RW, &f->data), 0);
	cr_assert_eq(dmt_file_open(hash, DMT_OPEN_RW, &f->hash), 0);
	f->shared = !fec;
	if (fec)
		cr_assert_eq(dmt_file_open(fec, fec_flags, &f->fec), 0);
}

static void files_close(struct files *f)
{
	dmt_file_close(f->data);
	dmt_file_close(f->hash);
	if (!f->shared)
		dmt_file_close(f->fec);
}

static void params_init(struct dmt_fec_params *p, struct files *f,
			unsigned int roots, uint32_t bs, uint64_t n,
			unsigned int threads)
{
	memset(p, 0, sizeof(*p));
	p->roots = roots;
	p->block_size = bs;
	p->data_blocks = n;
	p->hash_start = 1;	/* superblock at 0, tree from block 1 */
	p->data = f->data;
	p->hash = f->hash;
	p->fec = f->shared ? f->hash : f->fec;
	p->threads = threads;
}

/* Our encoder into a fresh file `out`; returns dmt_fec_encode's value. */
static int encode_to(const char *data, const char *hash, const char *out,
		     unsigned int roots, uint32_t bs, uint64_t n,
		     unsigned int threads, struct dmt_fec_layout *l)
{
	struct dmt_fec_params p;
	struct files f;
	int r;

	unlink(out);
	files_open(&f, data, hash, out, DMT_OPEN_RW | DMT_OPEN_CREATE);
	params_init(&p, &f, roots, bs, n, threads);
	r = dmt_fec_encode(&p, l, NULL);
	files_close(&f);
	return r;
}

/* ---- layout ---- */

Test(fec, layout_matches_formats_doc)
{
	struct dmt_fec_layout l;

	/* formats.md 1.6: 1 GiB, 4096, roots 2, hash tree 2065 blocks */
	cr_assert_eq(dmt_fec_geometry(2, 4096, 262144, 1, 2065, 0, &l), 0);
	cr_expect_eq(l.fec_blocks, 264209);
	cr_expect_eq(l.rounds, 1045);
	cr_expect_eq(l.parity_blocks, 2090);
	cr_expect_eq(l.parity_bytes, 8560640);
	cr_expect_eq(l.rsn, 253);
	/* 1.8 example: 1024 data blocks + 9 hash blocks -> fec_blocks 1033 */
	cr_assert_eq(dmt_fec_geometry(2, 4096, 1024, 1, 9, 8192, &l), 0);
	cr_expect_eq(l.fec_blocks, 1033);
	cr_expect_eq(l.fec_start, 2);
	cr_expect_eq(l.fec_end, 8192 + 5 * 2 * 4096);

	cr_expect_eq(dmt_fec_geometry(1, 4096, 10, 1, 1, 0, &l), -EINVAL);
	cr_expect_eq(dmt_fec_geometry(25, 4096, 10, 1, 1, 0, &l), -EINVAL);
	cr_expect_eq(dmt_fec_geometry(2, 3000, 10, 1, 1, 0, &l), -EINVAL);
	cr_expect_eq(dmt_fec_geometry(2, 256, 10, 1, 1, 0, &l), -EINVAL);
	cr_expect_eq(dmt_fec_geometry(2, 1 << 20, 10, 1, 1, 0, &l), -EINVAL);
	cr_expect_eq(dmt_fec_geometry(2, 4096, 0, 1, 1, 0, &l), -EINVAL);
	cr_expect_eq(dmt_fec_geometry(2, 4096, 10, 1, 1, 100, &l), -EINVAL);
	cr_expect_eq(dmt_fec_geometry(2, 4096, UINT64_MAX / 2, 1, 1, 0, &l),
		     -ERANGE);
}

/* ---- golden vector: TV2 of formats.md 1.6, no external tool ---- */

/* Builds the TV2 hash image (format 1, sha256, superblock, 2 levels). */
static void write_tv2(const char *data, const char *hash)
{
	static const uint8_t uuid[16] = { 0x12, 0x34, 0x56, 0x78, 0x12, 0x34,
					  0x12, 0x34, 0x12, 0x34, 0x12, 0x34,
					  0x56, 0x78, 0x9a, 0xbc };
	uint8_t *d = malloc(256 * 4096), *h = calloc(4, 4096), salt[32];
	unsigned int k;

	cr_assert(d && h);
	for (k = 0; k < 32; k++)
		salt[k] = (uint8_t)k;
	for (k = 0; k < 256; k++)
		memset(d + k * 4096, (int)k, 4096);
	th_write_file(data, d, 256 * 4096);
	memcpy(h, "verity\0\0", 8);
	h[8] = 1;			/* version */
	h[12] = 1;			/* hash type */
	memcpy(h + 16, uuid, 16);
	memcpy(h + 32, "sha256", 6);
	h[65] = 0x10;			/* 4096 */
	h[69] = 0x10;
	h[73] = 0x01;			/* 256 blocks */
	h[80] = 32;			/* salt size */
	memcpy(h + 88, salt, 32);
	/* level 0 at blocks 2-3, level 1 (top) at block 1 */
	for (k = 0; k < 256; k++)
		sha256(salt, 32, d + k * 4096, 4096, h + 2 * 4096 + k * 32);
	for (k = 0; k < 2; k++)
		sha256(salt, 32, h + (2 + k) * 4096, 4096, h + 4096 + k * 32);
	th_write_file(hash, h, 4 * 4096);
	free(d);
	free(h);
}

Test(fec, tv2_golden_vector)
{
	char *dir = th_mkdtemp(), *data = th_path(dir, "tv2.img");
	char *hash = th_path(dir, "tv2.hash"), *fec = th_path(dir, "tv2.fec");
	char hex[65];
	struct dmt_fec_layout l;

	write_tv2(data, hash);
	th_sha256_file(hash, hex);
	cr_assert_str_eq(hex, "990d30cf8fcc54722559019ec44ff6395ae8edd8"
			 "f53006192f094171368ed628",
			 "test's own TV2 hash image is wrong");
	cr_assert_eq(encode_to(data, hash, fec, 2, 4096, 256, 0, &l), 0);
	cr_expect_eq(l.hash_blocks, 3);
	cr_expect_eq(l.parity_blocks, 4);
	th_sha256_file(fec, hex);
	cr_expect_str_eq(hex, "3f34bd465792dabb4b10352aad91274d964a8216"
			 "a518aa70af4f0be6b731dde2");
	th_rmtree(dir);
	free(dir);
	free(data);
	free(hash);
	free(fec);
}

/*
 * The golden vector through every GF(2^8) backend the dispatcher lists and
 * this CPU runs, each forced by the params' engine spec ("gf256=NAME").
 */
Test(fec, every_gf256_backend_forced_by_engine_spec)
{
	char *dir = th_mkdtemp(), *data = th_path(dir, "tv2.img");
	char *hash = th_path(dir, "tv2.hash"), *fec = th_path(dir, "tv2.fec");
	char hex[65], spec[64];
	struct dmt_engine_info info[64];
	struct dmt_fec_layout l;
	struct dmt_fec_params p;
	struct files f;
	size_t i, n = dmt_engine_list(info, 64);
	unsigned int ran = 0;

	cr_assert_leq(n, 64);
	write_tv2(data, hash);
	for (i = 0; i < n; i++) {
		if (strcmp(info[i].primitive, "gf256") || !info[i].available)
			continue;
		snprintf(spec, sizeof(spec), "gf256=%s", info[i].name);
		unlink(fec);
		files_open(&f, data, hash, fec, DMT_OPEN_RW | DMT_OPEN_CREATE);
		params_init(&p, &f, 2, 4096, 256, 0);
		p.engine = spec;
		cr_assert_eq(dmt_fec_encode(&p, &l, NULL), 0, "%s", spec);
		files_close(&f);
		th_sha256_file(fec, hex);
		cr_expect_str_eq(hex, "3f34bd465792dabb4b10352aad91274d964a8216"
				 "a518aa70af4f0be6b731dde2", "%s", spec);
		ran++;
	}
	/* portable at least; x86-64 always has SSSE3-or-better here */
	cr_expect_geq(ran, 1);
	th_rmtree(dir);
	free(dir);
	free(data);
	free(hash);
	free(fec);
}

/* ---- byte-identical to veritysetup ---- */

struct cfg {
	unsigned int roots;
	uint32_t bs;
	uint64_t blocks;
	uint64_t tail;		/* bytes after the last whole block */
};

/*
 * The multiply-add path the encoder takes with these CPU features (the
 * order of lib/fec/fec.c's setup_simd).
 */
static const char *mac_path(uint32_t cpu)
{
	if ((cpu & (DMT_CPU_X86_GFNI | DMT_CPU_X86_AVX512)) ==
	    (DMT_CPU_X86_GFNI | DMT_CPU_X86_AVX512))
		return "gfni";
	if (cpu & DMT_CPU_X86_AVX2)
		return "avx2";
	if (cpu & DMT_CPU_X86_SSSE3)
		return "ssse3";
	return "table";
}

/*
 * veritysetup's parity for every config, then ours with each thread count
 * (nt of them), once per multiply-add path this CPU has: features are
 * masked off one by one (GFNI, AVX2, SSSE3) and a pass runs whenever that
 * changes the path, down to the table path.
 */
static void compare_configs(const struct cfg *cfgs, size_t n,
			    const unsigned int *threads, unsigned int nt,
			    const char *dir)
{
	static const uint32_t masks[] = { 0, DMT_CPU_X86_GFNI,
					  DMT_CPU_X86_AVX2,
					  DMT_CPU_X86_SSSE3 };
	char name[64], *data, *hash, *vfec, *ofec = th_path(dir, "o.fec");
	const char *path, *prev = NULL;
	unsigned int pass, t;
	size_t i;

	for (pass = 0; pass < sizeof(masks) / sizeof(masks[0]); pass++) {
		dmt_cpu_mask_off(masks[pass]);
		path = mac_path(dmt_cpu_features());
		if (prev && !strcmp(path, prev))
			continue;
		for (i = 0; i < n; i++) {
			const struct cfg *c = &cfgs[i];

			snprintf(name, sizeof(name), "d%zu.img", i);
			data = th_path(dir, name);
			snprintf(name, sizeof(name), "h%zu.img", i);
			hash = th_path(dir, name);
			snprintf(name, sizeof(name), "v%zu.fec", i);
			vfec = th_path(dir, name);
			if (!prev) {
				th_write_random_file(data, c->blocks * c->bs +
						     c->tail,
						     c->blocks * 7 + c->roots);
				vs_format(data, hash, vfec, c->roots, c->bs,
					  "");
			}
			for (t = 0; t < nt; t++) {
				cr_assert_eq(encode_to(data, hash, ofec,
						       c->roots, c->bs,
						       c->blocks, threads[t],
						       NULL), 0);
				cr_assert(th_files_equal(vfec, ofec),
					  "roots %u bs %u blocks %llu threads"
					  " %u %s: parity differs from "
					  "veritysetup", c->roots, c->bs,
					  (unsigned long long)c->blocks,
					  threads[t], path);
			}
			free(data);
			free(hash);
			free(vfec);
		}
		prev = path;
	}
	free(ofec);
}

/*
 * Thread counts.  Every config here is one group of rounds, so threads
 * past the first have nothing to do: one count under DMT_TEST_REDUCED.
 */
static const unsigned int threads_all[] = { 1, 2, 3 };
static const unsigned int threads_one[] = { 1 };

Test(fec, identical_to_veritysetup_small)
{
	static const struct cfg cfgs[] = {
		{ 2, 4096, 300, 0 },	/* 2 rounds, hash area 3 blocks */
		{ 8, 4096, 1000, 77 },
		{ 24, 4096, 777, 0 },
		{ 2, 512, 5000, 511 },
		{ 8, 1024, 3000, 0 },
		{ 24, 512, 3001, 100 },
		{ 3, 2048, 1234, 0 },	/* odd roots */
		{ 17, 4096, 1, 0 },	/* one data block, no tree */
	};
	char *dir;

	need_veritysetup();
	dir = th_mkdtemp();
	if (th_reduced())
		compare_configs(cfgs, sizeof(cfgs) / sizeof(cfgs[0]),
				threads_one, 1, dir);
	else
		compare_configs(cfgs, sizeof(cfgs) / sizeof(cfgs[0]),
				threads_all, 3, dir);
	th_rmtree(dir);
	free(dir);
}

/*
 * Big enough for several groups of rounds (separate reads per row): 105
 * rounds of roots 24 overflow one group's accumulators (85 rounds) at any
 * thread count.  Under DMT_TEST_REDUCED the cheapest split instead (encode
 * cost grows with roots): roots 2, 128 rounds, enough for lib/fec.c
 * plan_groups to give 3 threads 3 groups.
 */
Test(fec, identical_to_veritysetup_multigroup, .timeout = 120)
{
	static const struct cfg full = { 24, 4096, 24000, 0 };
	static const struct cfg reduced = { 2, 4096, 32000, 0 };
	static const unsigned int three[] = { 3 };
	char *dir;

	need_veritysetup();
	dir = th_mkdtemp();
	if (th_reduced())
		compare_configs(&reduced, 1, three, 1, dir);
	else
		compare_configs(&full, 1, threads_all, 3, dir);
	th_rmtree(dir);
	free(dir);
}

Test(fec, identical_to_veritysetup_shared_hash_file)
{
	static const unsigned int roots[] = { 2, 8, 24 };
	char *dir, *data, *vhash, *ohash;
	uint64_t off = 200 * 4096;	/* metadata gap after the tree */
	/* 25-27 rounds, 4 under DMT_TEST_REDUCED */
	uint64_t n = th_reduced() ? 600 : 6000;
	struct dmt_fec_params p;
	struct dmt_fec_layout l;
	struct files f;
	char extra[64];
	unsigned int i, twice;

	need_veritysetup();
	dir = th_mkdtemp();
	data = th_path(dir, "d.img");
	vhash = th_path(dir, "vh.img");
	ohash = th_path(dir, "oh.img");
	th_write_random_file(data, n * 4096, 99);
	for (i = 0; i < 3; i++) {
		/* veritysetup needs the gap up to --fec-offset to exist */
		unlink(vhash);
		cr_assert_eq(th_sh(NULL, NULL, "truncate -s %llu '%s'",
				   (unsigned long long)off, vhash), 0);
		snprintf(extra, sizeof(extra), "--fec-offset %llu",
			 (unsigned long long)off);
		vs_format(data, vhash, vhash, roots[i], 4096, extra);
		for (twice = 0; twice < 2; twice++) {
			/* same tree and gap, parity cut off */
			cr_assert_eq(th_sh(NULL, NULL, "cp '%s' '%s' && "
					   "truncate -s %llu '%s'", vhash,
					   ohash, (unsigned long long)off,
					   ohash), 0);
			/* once as one struct dmt_file, once as two opens of
			 * the same file (found by inode) */
			files_open(&f, data, ohash, twice ? ohash : NULL,
				   DMT_OPEN_RW);
			params_init(&p, &f, roots[i], 4096, n, 2);
			p.fec_offset = off;
			cr_assert_eq(dmt_fec_encode(&p, &l, NULL), 0);
			files_close(&f);
			cr_expect(l.shared);
			cr_expect_eq(l.hash_blocks, 199);
			cr_expect(th_files_equal(vhash, ohash),
				  "roots %u: shared-file parity differs",
				  roots[i]);
		}
	}
	th_rmtree(dir);
	free(dir);
	free(data);
	free(vhash);
	free(ohash);
}

Test(fec, parameter_errors)
{
	char *dir = th_mkdtemp(), *data = th_path(dir, "d.img");
	char *hash = th_path(dir, "h.img"), *fec = th_path(dir, "f.img");
	struct dmt_fec_params p;
	struct files f;

	th_write_random_file(data, 100 * 4096, 1);
	th_write_random_file(hash, 4 * 4096, 2);
	files_open(&f, data, hash, fec, DMT_OPEN_RW | DMT_OPEN_CREATE);
	params_init(&p, &f, 2, 4096, 100, 1);

	p.roots = 25;
	cr_expect_eq(dmt_fec_encode(&p, NULL, NULL), -EINVAL);
	p.roots = 2;
	p.fec_offset = 1000;
	cr_expect_eq(dmt_fec_encode(&p, NULL, NULL), -EINVAL);
	p.fec_offset = 0;
	/* data file too short for the covered area */
	p.data_blocks = 101;
	cr_expect_eq(dmt_fec_encode(&p, NULL, NULL), -ENODATA);
	p.data_blocks = 100;
	/* hash file shorter than hash_start */
	p.hash_start = 5;
	cr_expect_eq(dmt_fec_encode(&p, NULL, NULL), -ENODATA);
	p.hash_start = 1;
	/* parity over the data it protects */
	p.fec = f.data;
	p.fec_offset = 50 * 4096;
	cr_expect_eq(dmt_fec_encode(&p, NULL, NULL), -EINVAL);
	/* shared with the hash file but starting inside the tree */
	p.fec = f.hash;
	p.fec_offset = 0;
	cr_expect_eq(dmt_fec_encode(&p, NULL, NULL), -EINVAL);
	p.fec = f.fec;
	cr_expect_eq(dmt_fec_encode(&p, NULL, NULL), 0);
	files_close(&f);
	th_rmtree(dir);
	free(dir);
	free(data);
	free(hash);
	free(fec);
}

static int abort_progress(void *ctx, uint64_t done, uint64_t total)
{
	int *calls = ctx;

	cr_expect_leq(done, total);
	return ++*calls >= 2;
}

Test(fec, progress_and_abort)
{
	char *dir = th_mkdtemp(), *data = th_path(dir, "d.img");
	char *hash = th_path(dir, "h.img"), *fec = th_path(dir, "f.img");
	struct dmt_fec_params p;
	struct files f;
	int calls = 0;

	/* 64 MiB: several 16 MiB bands, so the hook runs more than once */
	th_write_random_file(data, 16384 * 4096ull, 3);
	th_write_random_file(hash, 130 * 4096, 4);
	files_open(&f, data, hash, fec, DMT_OPEN_RW | DMT_OPEN_CREATE);
	params_init(&p, &f, 2, 4096, 16384, 1);
	p.progress.fn = abort_progress;
	p.progress.ctx = &calls;
	cr_expect_eq(dmt_fec_encode(&p, NULL, NULL), -EINTR);
	cr_expect_eq(calls, 2);
	files_close(&f);
	th_rmtree(dir);
	free(dir);
	free(data);
	free(hash);
	free(fec);
}

/* ---- the RS decoder on its own ---- */

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* n distinct positions in [0, 255) */
static void pick(uint64_t *s, int *pos, int n)
{
	int i, k;

	for (i = 0; i < n; i++) {
again:
		pos[i] = (int)(rng(s) % 255);
		for (k = 0; k < i; k++)
			if (pos[k] == pos[i])
				goto again;
	}
}

Test(fec, rs_decoder_limits)
{
	static const unsigned int roots[] = { 2, 3, 8, 24 };
	uint8_t orig[255], cw[255];
	int pos[255], r;
	uint64_t s = 12345;
	unsigned int i, trial, t, e, fails;
	struct dmt_rs rs;

	for (i = 0; i < 4; i++) {
		unsigned int R = roots[i];

		cr_assert_eq(dmt_rs_init(&rs, R), 0);
		fails = 0;
		for (trial = 0; trial < 300; trial++) {
			for (t = 0; t < rs.rsn; t++)
				orig[t] = (uint8_t)rng(&s);
			dmt_rs_encode(&rs, orig, orig + rs.rsn);
			memcpy(cw, orig, 255);
			cr_assert_eq(dmt_rs_decode(&rs, cw, NULL, 0), 0);

			/* e erasures + t errors with 2t + e <= roots */
			e = (unsigned int)(rng(&s) % (R + 1));
			t = (R - e) / 2;
			pick(&s, pos, (int)(e + t));
			for (r = 0; r < (int)(e + t); r++)
				cw[pos[r]] ^= (uint8_t)(1 + rng(&s) % 255);
			r = dmt_rs_decode(&rs, cw, pos, (int)e);
			cr_assert_geq(r, 0, "roots %u: %u erasures + %u errors"
				      " not corrected", R, e, t);
			cr_assert_arr_eq(cw, orig, 255);

			/* one error too many, no erasures: refused, or (a
			 * miscorrection the digest check must catch) some
			 * other valid codeword, never garbage */
			memcpy(cw, orig, 255);
			pick(&s, pos, (int)(R / 2 + 1));
			for (r = 0; r < (int)(R / 2 + 1); r++)
				cw[pos[r]] ^= (uint8_t)(1 + rng(&s) % 255);
			r = dmt_rs_decode(&rs, cw, NULL, 0);
			if (r >= 0) {
				uint8_t par[24];

				dmt_rs_encode(&rs, cw, par);
				cr_assert_arr_eq(par, cw + rs.rsn, R,
						 "roots %u: decoder returned a"
						 " non-codeword", R);
			}
			fails += r < 0;
		}
		/*
		 * With 8+ roots almost every over-limit word is refused; a
		 * 2-root code fixes any single error, so nearly every word is
		 * within distance 1 of some codeword and no such claim holds.
		 */
		if (R >= 8)
			cr_expect_gt(fails, 250, "roots %u: only %u of 300 "
				     "refused", R, fails);
		/* more erasures than roots is refused */
		cr_expect_eq(dmt_rs_decode(&rs, cw, pos, (int)R + 1), -1);
	}
}

/* The vector paths against the scalar Karn encoder, odd widths. */
Test(fec, mac_paths_match_scalar_encoder)
{
	static const unsigned int roots[] = { 2, 7, 8, 9, 16, 24 };
	struct dmt_rs rs;
	unsigned int i, j, k;
	size_t len = 192, x;
	uint8_t *in, *acc, *acc2, msg[255], par[24];
	uint64_t *mats, s = 777;

	in = malloc(253 * len);
	acc = malloc(24 * len);
	acc2 = malloc(24 * len);
	mats = malloc(253 * 24 * 8 * sizeof(*mats));
	cr_assert(in && acc && acc2 && mats);
	for (i = 0; i < 6; i++) {
		cr_assert_eq(dmt_rs_init(&rs, roots[i]), 0);
		for (x = 0; x < rs.rsn * len; x++)
			in[x] = (uint8_t)rng(&s);
		memset(acc, 0, 24 * len);
		dmt_gf256_mac_portable(acc, len, rs.roots, in, len, rs.rsn,
				       rs.coef, len);
		for (x = 0; x < len; x++) {
			for (j = 0; j < rs.rsn; j++)
				msg[j] = in[j * len + x];
			dmt_rs_encode(&rs, msg, par);
			for (k = 0; k < rs.roots; k++)
				cr_assert_eq(acc[k * len + x], par[k]);
		}
#if defined(__x86_64__)
		if ((dmt_cpu_features() & (DMT_CPU_X86_GFNI |
					   DMT_CPU_X86_AVX512)) !=
		    (DMT_CPU_X86_GFNI | DMT_CPU_X86_AVX512))
			continue;
		for (x = 0; x < (size_t)rs.rsn * rs.roots * 8; x++)
			mats[x] = dmt_gf256_affine_matrix(rs.coef[x / 8]);
		memset(acc2, 0, 24 * len);
		/* in two bands, as the encoder does */
		dmt_gf256_mac_gfni(acc2, len, rs.roots, in, len, 100, mats,
				   len);
		dmt_gf256_mac_gfni(acc2, len, rs.roots, in + 100 * len, len,
				   rs.rsn - 100, mats + 100 * rs.roots * 8,
				   len);
		cr_assert_arr_eq(acc2, acc, rs.roots * len);
#endif
	}
#if defined(__x86_64__)
	/* the PSHUFB paths, on the same inputs, in two bands */
	for (i = 0; i < 6; i++) {
		static const uint32_t need[2] = { DMT_CPU_X86_SSSE3,
						  DMT_CPU_X86_AVX2 };
		uint8_t *tb = (uint8_t *)mats;

		cr_assert_eq(dmt_rs_init(&rs, roots[i]), 0);
		for (x = 0; x < rs.rsn * len; x++)
			in[x] = (uint8_t)rng(&s);
		memset(acc, 0, 24 * len);
		dmt_gf256_mac_portable(acc, len, rs.roots, in, len, rs.rsn,
				       rs.coef, len);
		for (x = 0; x < (size_t)rs.rsn * rs.roots; x++)
			dmt_gf256_nibble_tables(rs.coef[x], tb + x * 32);
		for (j = 0; j < 2; j++) {
			void (*fn)(uint8_t *, size_t, unsigned int,
				   const uint8_t *, size_t, size_t,
				   const uint8_t *, size_t) =
				j ? dmt_gf256_mac_avx2 : dmt_gf256_mac_ssse3;

			if (!(dmt_cpu_features() & need[j]))
				continue;
			memset(acc2, 0, 24 * len);
			fn(acc2, len, rs.roots, in, len, 100, tb, len);
			fn(acc2, len, rs.roots, in + 100 * len, len,
			   rs.rsn - 100, tb + 100 * rs.roots * 32, len);
			cr_assert_arr_eq(acc2, acc, rs.roots * len,
					 "%s, roots %u",
					 j ? "avx2" : "ssse3", rs.roots);
		}
	}
#endif
	free(in);
	free(acc);
	free(acc2);
	free(mats);
}

/* ---- correction against the real tree ---- */

/* Geometry of a veritysetup tree (sha256, format 1, superblock at 0). */
struct tree {
	uint64_t n;
	uint32_t bs;
	unsigned int bits, levels;
	uint64_t start[16], blocks[16];
	uint8_t salt[32], root[32];
	/* reports */
	uint64_t corrected[512], bad[512];
	uint8_t *corrected_data[512];
	size_t ncorrected, nbad, nunverified;
};

static void tree_init(struct tree *t, uint64_t n, uint32_t bs,
		      const char *root_file)
{
	size_t len, k;
	uint8_t *hex;
	unsigned int i;

	memset(t, 0, sizeof(*t));
	t->n = n;
	t->bs = bs;
	while ((1u << (t->bits + 1)) <= bs / 32)
		t->bits++;
	while (t->bits * t->levels < 64 && ((n - 1) >> (t->bits * t->levels)))
		t->levels++;
	for (i = 0; i < t->levels; i++)
		t->blocks[i] = ((n - 1) >> (t->bits * (i + 1))) + 1;
	t->start[t->levels - 1] = 1;
	for (i = t->levels - 1; i > 0; i--)
		t->start[i - 1] = t->start[i] + t->blocks[i];
	for (k = 0; k < 32; k++)
		t->salt[k] = (uint8_t)k;
	hex = th_read_file(root_file, &len);
	cr_assert_geq(len, 64);
	for (k = 0; k < 32; k++) {
		unsigned int v;

		cr_assert_eq(sscanf((char *)hex + 2 * k, "%2x", &v), 1);
		t->root[k] = (uint8_t)v;
	}
	free(hex);
}

static void tree_free(struct tree *t)
{
	size_t k;

	for (k = 0; k < t->ncorrected; k++)
		free(t->corrected_data[k]);
}

/* The check callback: the block against its digest in its parent. */
static int tree_check(void *ctx, struct dmt_fec *fec, uint64_t block,
		      const uint8_t *data)
{
	struct tree *t = ctx;
	const struct dmt_fec_layout *l = dmt_fec_get_layout(fec);
	uint64_t idx, hb, parent;
	unsigned int level, i;
	uint8_t md[32], *pbuf;
	int r, v;

	sha256(t->salt, 32, data, t->bs, md);
	if (block < t->n) {
		level = 0;
		idx = block;
	} else {
		hb = l->hash_start + (block - t->n);
		for (i = 0; i < t->levels; i++)
			if (hb >= t->start[i] &&
			    hb < t->start[i] + t->blocks[i])
				break;
		if (i == t->levels)
			return DMT_FEC_BLOCK_UNKNOWN;
		if (i == t->levels - 1)
			return memcmp(md, t->root, 32) ? DMT_FEC_BLOCK_BAD :
				DMT_FEC_BLOCK_OK;
		level = i + 1;
		idx = hb - t->start[i];
	}
	parent = t->start[level] + (idx >> t->bits);
	pbuf = malloc(t->bs);
	cr_assert_not_null(pbuf);
	r = dmt_fec_read_block(fec, t->n + parent - l->hash_start, pbuf);
	cr_assert_eq(r, 0);
	v = memcmp(md, pbuf + (idx & ((1u << t->bits) - 1)) * 32, 32) ?
		DMT_FEC_BLOCK_BAD : DMT_FEC_BLOCK_OK;
	free(pbuf);
	return v;
}

static int tree_report(void *ctx, uint64_t block, enum dmt_fec_outcome what,
		       const uint8_t *data)
{
	struct tree *t = ctx;

	if (what == DMT_FEC_CORRECTED) {
		cr_assert_lt(t->ncorrected, 512);
		t->corrected_data[t->ncorrected] = malloc(t->bs);
		memcpy(t->corrected_data[t->ncorrected], data, t->bs);
		t->corrected[t->ncorrected++] = block;
	} else if (what == DMT_FEC_UNREPAIRABLE) {
		cr_assert_lt(t->nbad, 512);
		t->bad[t->nbad++] = block;
	} else {
		t->nunverified++;
	}
	return 0;
}

struct image {
	char *dir, *data, *hash, *fec, *root;
	char *odata, *ohash, *ofec;	/* pristine copies */
	uint64_t n;
	uint32_t bs;
	unsigned int roots;
	struct dmt_fec_layout l;
};

static void image_make(struct image *im, unsigned int roots, uint32_t bs,
		       uint64_t n)
{
	char extra[512];

	need_veritysetup();
	memset(im, 0, sizeof(*im));
	im->dir = th_mkdtemp();
	im->data = th_path(im->dir, "d.img");
	im->hash = th_path(im->dir, "h.img");
	im->fec = th_path(im->dir, "f.img");
	im->root = th_path(im->dir, "root");
	im->odata = th_path(im->dir, "d.orig");
	im->ohash = th_path(im->dir, "h.orig");
	im->ofec = th_path(im->dir, "f.orig");
	im->n = n;
	im->bs = bs;
	im->roots = roots;
	th_write_random_file(im->data, n * bs, n + roots);
	snprintf(extra, sizeof(extra), "--root-hash-file '%s'", im->root);
	vs_format(im->data, im->hash, im->fec, roots, bs, extra);
	cr_assert_eq(th_sh(NULL, NULL, "cp '%s' '%s' && cp '%s' '%s' && "
			   "cp '%s' '%s'", im->data, im->odata, im->hash,
			   im->ohash, im->fec, im->ofec), 0);
	cr_assert_eq(dmt_fec_geometry(roots, bs, n, 1,
				      0, 0, &im->l), 0);
}

/* Covered block of row j in round r. */
static uint64_t cblock(const struct image *im, uint64_t hash_blocks,
		       unsigned int j, uint64_t round)
{
	uint64_t rounds = (im->n + hash_blocks + im->l.rsn - 1) / im->l.rsn;

	return j * rounds + round;
}

/* Overwrites a covered block with garbage (or flips one byte). */
static void damage(const struct image *im, uint64_t block, bool one_byte,
		   uint64_t seed)
{
	const char *path = block < im->n ? im->data : im->hash;
	uint64_t off = block < im->n ? block * im->bs :
		(1 + block - im->n) * im->bs;
	uint8_t *buf = malloc(im->bs);
	int fd = open(path, O_RDWR);

	cr_assert(buf && fd >= 0);
	if (one_byte) {
		cr_assert_eq(pread(fd, buf, 1, (off_t)(off + seed % im->bs)),
			     1);
		buf[0] ^= 0x5a;
		cr_assert_eq(pwrite(fd, buf, 1,
				    (off_t)(off + seed % im->bs)), 1);
	} else {
		th_fill_random(buf, im->bs, seed);
		cr_assert_eq(pwrite(fd, buf, im->bs, (off_t)off),
			     (ssize_t)im->bs);
	}
	close(fd);
	free(buf);
}

static int run_fec(const struct image *im, struct tree *t, unsigned int flags,
		   struct dmt_fec_stats *st)
{
	struct dmt_fec_params p;
	struct dmt_fec_ops ops = { tree_check, tree_report, t };
	struct files f;
	int r;

	files_open(&f, im->data, im->hash, im->fec,
		   (flags & DMT_FEC_REPAIR) ? DMT_OPEN_RW : DMT_OPEN_READ);
	params_init(&p, &f, im->roots, im->bs, im->n, 2);
	r = dmt_fec_verify_and_correct(&p, &ops, flags, st, NULL);
	files_close(&f);
	return r;
}

static bool block_is_original(const struct image *im, uint64_t block,
			      const uint8_t *data)
{
	const char *path = block < im->n ? im->odata : im->ohash;
	uint64_t off = block < im->n ? block * im->bs :
		(1 + block - im->n) * im->bs;
	uint8_t *buf = malloc(im->bs);
	int fd = open(path, O_RDONLY);
	bool same;

	cr_assert(buf && fd >= 0);
	cr_assert_eq(pread(fd, buf, im->bs, (off_t)off), (ssize_t)im->bs);
	same = !memcmp(buf, data, im->bs);
	close(fd);
	free(buf);
	return same;
}

static void image_free(struct image *im)
{
	th_rmtree(im->dir);
	free(im->dir);
	free(im->data);
	free(im->hash);
	free(im->fec);
	free(im->root);
	free(im->odata);
	free(im->ohash);
	free(im->ofec);
}

static uint64_t hash_file_blocks(const struct image *im)
{
	size_t len;
	uint8_t *h = th_read_file(im->hash, &len);

	free(h);
	return len / im->bs - 1;
}

Test(fec, clean_image_has_nothing_to_correct)
{
	struct image im;
	struct tree t;
	struct dmt_fec_stats st;

	image_make(&im, 2, 4096, 1000);
	tree_init(&t, im.n, im.bs, im.root);
	cr_expect_eq(run_fec(&im, &t, DMT_FEC_REPAIR, &st), 0);
	cr_expect_eq(st.bad_rounds, 0);
	cr_expect_eq(st.corrected_blocks + st.unrepairable_blocks, 0);
	cr_expect(th_files_equal(im.data, im.odata));
	tree_free(&t);
	image_free(&im);
}

/*
 * roots 8: round A has 4 garbage blocks (unknown errors: 4 per codeword,
 * the limit without erasures), round B 8 garbage data blocks (needs the
 * digests as erasures), round C single flipped bytes in 6 blocks, round D
 * 9 bad blocks (beyond any repair).  17 rounds of 4096-byte blocks, or
 * under DMT_TEST_REDUCED 6 rounds of 1024-byte blocks (decoding cost is
 * per byte of a round).
 */
Test(fec, corrects_up_to_the_limit_and_detects_beyond)
{
	static const unsigned int full[4] = { 2, 5, 7, 9 };
	static const unsigned int reduced[4] = { 1, 2, 3, 4 };
	const unsigned int *rd = th_reduced() ? reduced : full;
	struct image im;
	struct tree t;
	struct dmt_fec_stats st;
	uint64_t hb, blocks[32];
	unsigned int nb = 0, nd = 0, k, j;
	uint64_t beyond[16];

	if (th_reduced())
		image_make(&im, 8, 1024, 1200);
	else
		image_make(&im, 8, 4096, 4000);
	hb = hash_file_blocks(&im);
	for (j = 0; j < 4; j++)
		blocks[nb++] = cblock(&im, hb, 3 + j * 40, rd[0]);
	for (j = 0; j < 8; j++)
		blocks[nb++] = cblock(&im, hb, 10 + j * 25, rd[1]);
	for (j = 0; j < 6; j++)
		blocks[nb++] = cblock(&im, hb, 1 + j * 30, rd[2]);
	for (j = 0; j < 9; j++)
		beyond[nd++] = cblock(&im, hb, 2 + j * 20, rd[3]);
	for (k = 0; k < nb; k++) {
		cr_assert_lt(blocks[k], im.n);
		damage(&im, blocks[k], k >= 12, 1000 + k);
	}
	for (k = 0; k < nd; k++) {
		cr_assert_lt(beyond[k], im.n);
		damage(&im, beyond[k], false, 5000 + k);
	}

	/* check only: nothing written, corrections reported */
	tree_init(&t, im.n, im.bs, im.root);
	cr_expect_eq(run_fec(&im, &t, 0, &st), -EBADMSG);
	cr_expect_eq(st.bad_rounds, 4);
	cr_expect_eq(st.corrected_blocks, nb);
	cr_expect_eq(st.unrepairable_blocks, nd);
	cr_expect_eq(st.written_blocks, 0);
	cr_expect_eq(t.ncorrected, nb);
	cr_expect_eq(t.nbad, nd);
	for (k = 0; k < t.ncorrected; k++)
		cr_expect(block_is_original(&im, t.corrected[k],
					    t.corrected_data[k]),
			  "block %llu corrected to wrong contents",
			  (unsigned long long)t.corrected[k]);
	for (k = 0; k < t.nbad; k++) {
		bool listed = false;

		for (j = 0; j < nd; j++)
			listed |= t.bad[k] == beyond[j];
		cr_expect(listed, "block %llu wrongly unrepairable",
			  (unsigned long long)t.bad[k]);
	}
	cr_expect(!th_files_equal(im.data, im.odata));
	tree_free(&t);

	/* repair: everything but round D restored */
	tree_init(&t, im.n, im.bs, im.root);
	cr_expect_eq(run_fec(&im, &t, DMT_FEC_REPAIR, &st), -EBADMSG);
	cr_expect_eq(st.corrected_blocks, nb);
	cr_expect_eq(st.written_blocks, nb);
	tree_free(&t);
	{
		uint8_t *a, *b;
		size_t la, lb;
		uint64_t blk;

		a = th_read_file(im.data, &la);
		b = th_read_file(im.odata, &lb);
		cr_assert_eq(la, lb);
		for (blk = 0; blk < im.n; blk++) {
			bool is_beyond = false;

			for (j = 0; j < nd; j++)
				is_beyond |= blk == beyond[j];
			cr_expect_eq(!memcmp(a + blk * im.bs, b + blk * im.bs,
					     im.bs), !is_beyond,
				     "data block %llu",
				     (unsigned long long)blk);
		}
		free(a);
		free(b);
	}
	cr_expect(th_files_equal(im.hash, im.ohash));
	cr_expect(th_files_equal(im.fec, im.ofec));
	image_free(&im);
}

/*
 * Hash blocks damaged too: the top block, a level-0 block and data blocks
 * under it (in other rounds), so data checks only pass once the hash
 * blocks are corrected.  Also 512-byte blocks and 4 levels.
 */
Test(fec, corrects_hash_tree_and_data_under_it)
{
	static const unsigned int flags[] = { 0, DMT_FEC_REPAIR };
	struct image im;
	struct tree t;
	struct dmt_fec_stats st;
	uint64_t dmg[8];
	unsigned int k, i, nd = 0;

	image_make(&im, 2, 512, 20000);
	tree_init(&t, im.n, im.bs, im.root);
	cr_assert_eq(t.levels, 4);
	/* top block (hash block 1), one level-0 block, one level-1 block */
	dmg[nd++] = im.n + 0;
	dmg[nd++] = im.n + (t.start[0] - 1) + 3;
	dmg[nd++] = im.n + (t.start[1] - 1);
	/* data blocks under level-0 block 3 (16 digests per block) */
	dmg[nd++] = 3 * 16 + 1;
	dmg[nd++] = 3 * 16 + 9;
	/* a data block under level-1 block 0 in yet another round */
	dmg[nd++] = 100;
	for (k = 0; k < nd; k++)
		damage(&im, dmg[k], false, 77 + k);
	tree_free(&t);

	for (i = 0; i < 2; i++) {
		tree_init(&t, im.n, im.bs, im.root);
		cr_expect_eq(run_fec(&im, &t, flags[i], &st), 0,
			     "flags %u: unrepairable %llu", flags[i],
			     (unsigned long long)st.unrepairable_blocks);
		cr_expect_eq(st.corrected_blocks, nd);
		cr_expect_eq(t.ncorrected, nd);
		for (k = 0; k < t.ncorrected; k++)
			cr_expect(block_is_original(&im, t.corrected[k],
						    t.corrected_data[k]));
		tree_free(&t);
	}
	cr_expect(th_files_equal(im.data, im.odata));
	cr_expect(th_files_equal(im.hash, im.ohash));
	image_free(&im);
}

Test(fec, damaged_parity_only)
{
	struct image im;
	struct tree t;
	struct dmt_fec_stats st;
	size_t len;
	uint8_t *buf;
	unsigned int k;

	/* 14 rounds of 4096-byte blocks, or under DMT_TEST_REDUCED 5 of
	 * 1024 bytes: still 4 distinct ones damaged below */
	if (th_reduced())
		image_make(&im, 24, 1024, 1000);
	else
		image_make(&im, 24, 4096, 3000);
	buf = th_read_file(im.fec, &len);
	free(buf);
	th_flip_byte(im.fec, 5, 0xff);
	th_flip_byte(im.fec, len / 2, 0x11);
	th_flip_byte(im.fec, len - 1, 0x80);
	/* round 3, codeword 100: 16 of its 24 parity bytes, beyond
	 * decoding; every block verifies, so the parity is recomputed */
	for (k = 0; k < 16; k++)
		th_flip_byte(im.fec, (3 * im.bs + 100) * 24 + k, 0x3c);

	tree_init(&t, im.n, im.bs, im.root);
	cr_expect_eq(run_fec(&im, &t, 0, &st), 0);
	cr_expect_eq(st.bad_rounds, 4);
	cr_expect_eq(st.parity_rounds_bad, st.bad_rounds);
	cr_expect_eq(st.corrected_blocks + st.unrepairable_blocks, 0);
	cr_expect(!th_files_equal(im.fec, im.ofec));
	tree_free(&t);

	tree_init(&t, im.n, im.bs, im.root);
	cr_expect_eq(run_fec(&im, &t, DMT_FEC_REPAIR, &st), 0);
	cr_expect_eq(st.parity_rounds_fixed, st.bad_rounds);
	cr_expect(th_files_equal(im.fec, im.ofec));
	cr_expect(th_files_equal(im.data, im.odata));
	tree_free(&t);
	image_free(&im);
}

/* ---- the corrected-block overlay (lib/common/overlay.h) ---- */

#include "lib/common/overlay.h"

/* Memory first, then the temporary file: every block reads back, keys
 * come out in order, numbers without contents are known but empty. */
Test(fec, overlay_spills_to_a_file)
{
	enum { BS = 512, N = 300 };
	struct dmt_overlay *o;
	uint8_t buf[BS], want[BS];

	/* budget for 64 blocks: 236 of them go to the file */
	cr_assert_eq(dmt_overlay_new(BS, 64 * BS, &o), 0);
	for (uint64_t i = 0; i < N; i++) {
		th_fill_random(buf, BS, 1000 + i);
		cr_assert_eq(dmt_overlay_put(o, (i * 7919) % 100003, buf), 0);
	}
	cr_assert_eq(dmt_overlay_put(o, 5, NULL), 0);	/* number only */
	th_fill_random(buf, BS, 42);			/* replaces */
	cr_assert_eq(dmt_overlay_put(o, 7919, buf), 0);
	cr_expect_eq(dmt_overlay_count(o), N + 1);
	cr_expect_not(dmt_overlay_spill_failed(o));
	for (uint64_t i = 0; i < N; i++) {
		th_fill_random(want, BS, i == 1 ? 42 : 1000 + i);
		cr_assert_eq(dmt_overlay_get(o, (i * 7919) % 100003, buf), 1);
		cr_assert(!memcmp(buf, want, BS), "block %" PRIu64, i);
	}
	cr_expect(dmt_overlay_has(o, 5));
	cr_expect_eq(dmt_overlay_get(o, 5, buf), 0);
	cr_expect_not(dmt_overlay_has(o, 6));
	cr_expect_eq(dmt_overlay_get(o, 6, buf), 0);
	cr_assert_eq(dmt_overlay_seal(o), 0);
	for (uint64_t from = 0; from < 100010; from += 97) {
		uint64_t want_next = UINT64_MAX;

		for (uint64_t i = 0; i < N; i++) {
			uint64_t k = (i * 7919) % 100003;

			if (k >= from && k < want_next)
				want_next = k;
		}
		cr_assert_eq(dmt_overlay_next(o, from), want_next, "from %"
			     PRIu64, from);
	}
	/* 5 has no contents: next() skips it (no key falls in 1..5) */
	cr_expect_gt(dmt_overlay_next(o, 1), 5);
	dmt_overlay_free(o);
}

/* A temporary file that cannot be made is an error, said as such. */
Test(fec, overlay_spill_failure_is_reported)
{
	struct dmt_overlay *o;
	uint8_t buf[512] = { 1 };
	char *old = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;

	setenv("TMPDIR", "/nonexistent/dir", 1);
	cr_assert_eq(dmt_overlay_new(512, 0, &o), 0);
	cr_expect_lt(dmt_overlay_put(o, 3, buf), 0);
	cr_expect(dmt_overlay_spill_failed(o));
	dmt_overlay_free(o);
	if (old)
		setenv("TMPDIR", old, 1);
	else
		unsetenv("TMPDIR");
	free(old);
}
