// SPDX-License-Identifier: MIT
/*
 * The dispatcher seen from the library's users (suite "engine"): an engine
 * spec in the params changes which backend runs, never the bytes.  FEC's
 * GF(2^8) backend and the CRC backends, which used to be chosen outside
 * the engine table, are forced like the SHA-2 ones.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dmt/fec.h>
#include <dmt/hash.h>
#include <dmt/io.h>
#include "lib/common/cpu.h"
#include "lib/common/testhooks.h"
#include "tests/support/helpers.h"

#define BS 4096u
#define DATA_BLOCKS 300u
#define HASH_BLOCKS 12u

static char *dir, *data, *hash;

static void setup(void)
{
	dir = th_mkdtemp();
	data = th_path(dir, "data");
	hash = th_path(dir, "hash");
	th_write_random_file(data, (uint64_t)DATA_BLOCKS * BS, 1);
	th_write_random_file(hash, (uint64_t)HASH_BLOCKS * BS, 2);
}

static void teardown(void)
{
	th_rmtree(dir);
	free(dir);
	free(data);
	free(hash);
}

/* dmt_fec_encode() with engine spec `engine` into a fresh file `name`. */
static int encode(const char *engine, const char *name, unsigned int roots)
{
	struct dmt_file *d = NULL, *h = NULL, *f = NULL;
	struct dmt_fec_params p;
	char *out = th_path(dir, name);
	int r;

	unlink(out);
	cr_assert_eq(dmt_file_open(data, DMT_OPEN_READ, &d), 0);
	cr_assert_eq(dmt_file_open(hash, DMT_OPEN_READ, &h), 0);
	cr_assert_eq(dmt_file_open(out, DMT_OPEN_RW | DMT_OPEN_CREATE, &f),
		     0);
	memset(&p, 0, sizeof(p));
	p.roots = roots;
	p.block_size = BS;
	p.data_blocks = DATA_BLOCKS;
	p.hash_start = 1;
	p.data = d;
	p.hash = h;
	p.fec = f;
	p.threads = 2;
	p.engine = engine;
	r = dmt_fec_encode(&p, NULL, NULL);
	dmt_file_close(d);
	dmt_file_close(h);
	dmt_file_close(f);
	free(out);
	return r;
}

static void expect_same(const char *a, const char *b, const char *what)
{
	char *pa = th_path(dir, a), *pb = th_path(dir, b);

	cr_expect(th_files_equal(pa, pb), "%s: %s differs from %s", what, a,
		  b);
	free(pa);
	free(pb);
}

static bool gfni_runs(void)
{
	return dmt_engine_spec_check("gf256=gfni", NULL, 0) == 0;
}

Test(engine, fec_gf256_forced_same_parity, .init = setup, .fini = teardown)
{
	static const unsigned int roots[] = { 2, 7, 24 };
	size_t i;

	cr_assert_str_eq(dmt_engine_resolve("gf256=portable", "gf256"),
			 "portable");
	cr_assert_str_eq(dmt_engine_resolve("portable", "gf256"), "portable");
	if (gfni_runs()) {
		cr_assert_str_eq(dmt_engine_resolve(NULL, "gf256"), "gfni");
		cr_assert_str_eq(dmt_engine_resolve("gfni", "gf256"), "gfni");
	}
	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		char what[32];

		snprintf(what, sizeof(what), "roots %u", roots[i]);
		cr_assert_eq(encode(NULL, "default.fec", roots[i]), 0);
		cr_assert_eq(encode("gf256=portable", "portable.fec", roots[i]),
			     0);
		cr_assert_eq(encode("sha256=portable,crc32c=table,"
				    "gf256=portable", "list.fec", roots[i]),
			     0);
		cr_assert_eq(encode("portable", "bare.fec", roots[i]), 0);
		expect_same("default.fec", "portable.fec", what);
		expect_same("default.fec", "list.fec", what);
		expect_same("default.fec", "bare.fec", what);
		if (!gfni_runs())
			continue;
		cr_assert_eq(encode("gf256=gfni", "gfni.fec", roots[i]), 0);
		expect_same("default.fec", "gfni.fec", what);
	}
}

Test(engine, fec_bad_spec_rejected, .init = setup, .fini = teardown)
{
	cr_expect_eq(encode("gf256=nosuch", "x.fec", 2), -ENOENT);
	cr_expect_eq(encode("gf256=table", "x.fec", 2), -ENOENT);
	cr_expect_eq(encode("gf999=portable", "x.fec", 2), -EINVAL);
	cr_expect_eq(encode("nosuch", "x.fec", 2), -ENOENT);
	/* a spec for other primitives only leaves gf256 on its default */
	cr_expect_eq(encode("crc32c=table", "x.fec", 2), 0);
}

#if defined(__x86_64__)
/* The FEC really asks the dispatcher: with GFNI masked off, forcing it
 * fails and the default falls back to the tables. */
Test(engine, fec_gfni_masked, .init = setup, .fini = teardown)
{
	if (!gfni_runs())
		cr_skip_test("this CPU (or valgrind) cannot run gfni");
	cr_assert_eq(encode(NULL, "before.fec", 4), 0);
	dmt_cpu_mask_off(DMT_CPU_X86_GFNI);
	/* next in line: the PSHUFB nibble tables, else the portable path */
	cr_assert_str_eq(dmt_engine_resolve(NULL, "gf256"),
			 dmt_cpu_features() & DMT_CPU_X86_AVX2	? "avx2"
			 : dmt_cpu_features() & DMT_CPU_X86_SSSE3 ? "ssse3"
								  : "portable");
	cr_expect_eq(encode("gf256=gfni", "x.fec", 4), -ENOTSUP);
	cr_expect_eq(encode("gfni", "x.fec", 4), -ENOTSUP);
	cr_assert_eq(encode(NULL, "after.fec", 4), 0);
	expect_same("before.fec", "after.fec", "GFNI masked");
}
#endif

/* crc32c: the forced backend is the one reported; the tags do not move. */
Test(engine, crc32c_forced_same_digests)
{
	static const uint8_t salt[16] = "0123456789abcdef";
	static const struct {
		const char *spec;
		bool table;	/* forces the table backend */
	} specs[] = {
		{ NULL, false }, { "crc32c=table", true }, { "table", true },
		{ "crc-table", true }, { "crc32c=auto", false },
		{ "crc32c=table,crc32c=auto", false },
		{ "portable", false }, { "sha256=portable", false },
	};
	uint8_t *buf = malloc(64 * 512), hdrs[64 * 8], ref[64 * 4], got[64 * 4];
	const char *def = dmt_engine_resolve(NULL, "crc32c");
	size_t i;

	cr_assert(buf);
	th_fill_random(buf, 64 * 512, 3);
	th_fill_random(hdrs, sizeof(hdrs), 4);
	for (i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct dmt_hasher_params p = {
			.alg = "crc32c", .prefix = salt, .prefix_size = 16,
			.header_size = 8, .msg_size = 512,
			.engine = specs[i].spec,
		};
		const char *want = specs[i].table ? "crc-table" : def;
		struct dmt_hasher *h;

		cr_assert_eq(dmt_hasher_new(&p, &h, NULL), 0, "%s", specs[i].spec);
		cr_expect_str_eq(dmt_hasher_engine(h), want, "%s",
				 specs[i].spec);
		cr_assert_eq(dmt_hasher_digest_strided(h, 64, buf, 512, hdrs,
						       i ? got : ref), 0);
		if (i)
			cr_expect_arr_eq(got, ref, sizeof(ref), "%s",
					 specs[i].spec);
		dmt_hasher_free(h);
	}
	free(buf);
}
