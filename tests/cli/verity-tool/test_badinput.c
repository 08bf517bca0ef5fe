// SPDX-License-Identifier: MIT
/*
 * verity-tool on bad input (suite "badinput_verity"): missing, unreadable,
 * empty and odd-sized files, impossible --data-blocks, overlapping areas,
 * truncated hash files, hostile superblocks crafted byte by byte, unknown
 * algorithms, malformed hex, outputs equal to inputs or not writable,
 * locked files and a full stdout.  Each must fail with the documented exit
 * code, one stderr line naming the file (or the option) at fault, no
 * crash, and no input modified or output left under its final name.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <sys/file.h>

#include "tests/support/badinput.h"

#define VT "verity-tool"

struct vfix {
	char *dir;
	char *data;		/* 1 MiB of random data: 256 blocks */
	char *hash;		/* its tree, salt "-" */
	char root[160];		/* root hash (hex) */
};

static const char *vt(void)
{
	return th_tool("verity-tool");
}

static void vfix_init(struct vfix *f)
{
	struct bi_res r;

	memset(f, 0, sizeof(*f));
	f->dir = th_mkdtemp();
	f->data = th_path(f->dir, "data.img");
	f->hash = th_path(f->dir, "hash.img");
	th_write_random_file(f->data, 1 << 20, 0x5eed);
	bi_run(&r, f->dir, NULL, "%s build --salt - %s %s", vt(), f->data,
	       f->hash);
	bi_expect_ok(&r);
	bi_root_hash(r.out, f->root, sizeof(f->root));
	bi_free(&r);
}

static void vfix_fini(struct vfix *f)
{
	th_rmtree(f->dir);
	free(f->dir);
	free(f->data);
	free(f->hash);
}

/* Runs a command that must fail cleanly and leave every file of the
 * fixture directory as it was. */
static void expect_fail_clean(struct vfix *f, int want, const char *needle,
			      int flags, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void expect_fail_clean(struct vfix *f, int want, const char *needle,
			      int flags, const char *fmt, ...)
{
	char *before = bi_dir_state(f->dir, NULL);
	struct bi_res r;
	va_list ap;

	va_start(ap, fmt);
	bi_vrun(&r, f->dir, NULL, fmt, ap);
	va_end(ap);
	bi_expect_fail(&r, VT, want, needle, flags);
	bi_expect_state(f->dir, NULL, before, &r);
	bi_free(&r);
}

static void le(uint8_t *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- missing, unreadable, empty, odd-sized files ---- */

Test(badinput_verity, missing_files)
{
	struct vfix f;
	char *missing;

	vfix_init(&f);
	missing = th_path(f.dir, "missing.img");
	expect_fail_clean(&f, 4, missing, 0, "%s build %s %s/new.hash", vt(),
			  missing, f.dir);
	expect_fail_clean(&f, 4, missing, 0, "%s verify %s %s %s", vt(),
			  missing, f.hash, f.root);
	expect_fail_clean(&f, 4, missing, 0, "%s verify %s %s %s", vt(),
			  f.data, missing, f.root);
	expect_fail_clean(&f, 4, missing, 0, "%s dump %s", vt(), missing);
	expect_fail_clean(&f, 4, missing, 0, "%s size %s", vt(), missing);
	expect_fail_clean(&f, 4, missing, 0,
			  "%s verify --root-hash-file %s %s %s", vt(), missing,
			  f.data, f.hash);
	/* a directory where a file is expected */
	expect_fail_clean(&f, 4, f.dir, 0, "%s build %s %s", vt(), f.data,
			  f.dir);
	free(missing);
	vfix_fini(&f);
}

Test(badinput_verity, unreadable_files)
{
	struct bi_opts nobody = { .nobody = true };
	struct vfix f;
	struct bi_res r;
	const char *tool;
	char *w, *before;

	bi_need_root();
	vfix_init(&f);
	bi_open_dir(f.dir);
	tool = bi_nobody_tool(f.dir, vt());
	w = bi_world_dir(f.dir, "w");
	cr_assert_eq(chmod(f.data, 0600), 0);
	cr_assert_eq(chmod(f.hash, 0644), 0);

	before = bi_dir_state(f.dir, "w");
	bi_run(&r, f.dir, &nobody, "%s build %s %s/new.hash", tool, f.data,
	       w);
	bi_expect_fail(&r, VT, 4, f.data, 0);
	bi_expect_absent(w, "new.hash");
	bi_free(&r);
	bi_run(&r, f.dir, &nobody, "%s verify %s %s %s", tool, f.data, f.hash,
	       f.root);
	bi_expect_fail(&r, VT, 4, f.data, 0);
	bi_free(&r);

	/* readable data, unreadable tree */
	cr_assert_eq(chmod(f.data, 0644), 0);
	cr_assert_eq(chmod(f.hash, 0600), 0);
	bi_run(&r, f.dir, &nobody, "%s verify %s %s %s", tool, f.data, f.hash,
	       f.root);
	bi_expect_fail(&r, VT, 4, f.hash, 0);
	bi_free(&r);
	bi_run(&r, f.dir, &nobody, "%s dump %s", tool, f.hash);
	bi_expect_fail(&r, VT, 4, f.hash, 0);
	cr_assert_eq(chmod(f.data, 0600), 0);
	cr_assert_eq(chmod(f.hash, 0644), 0);
	bi_expect_state(f.dir, "w", before, &r);
	bi_free(&r);
	free(w);
	vfix_fini(&f);
}

Test(badinput_verity, zero_length_files)
{
	struct vfix f;
	char *empty;

	vfix_init(&f);
	empty = th_path(f.dir, "empty.img");
	th_write_file(empty, "", 0);
	expect_fail_clean(&f, 4, empty, 0, "%s build %s %s/new.hash", vt(),
			  empty, f.dir);
	expect_fail_clean(&f, 4, empty, 0, "%s verify %s %s %s", vt(), empty,
			  f.hash, f.root);
	expect_fail_clean(&f, 4, empty, 0, "%s verify %s %s %s", vt(), f.data,
			  empty, f.root);
	expect_fail_clean(&f, 4, empty, 0, "%s dump %s", vt(), empty);
	/* an empty root hash file is a malformed root hash */
	expect_fail_clean(&f, 1, "root hash", 0,
			  "%s verify --root-hash-file %s %s %s", vt(), empty,
			  f.data, f.hash);
	free(empty);
	vfix_fini(&f);
}

/*
 * A data file that ends inside a block: veritysetup silently protects
 * only the whole blocks, so a tail that would not be protected must at
 * least be reported (a warning naming the file), or refused.
 */
Test(badinput_verity, size_not_multiple_of_block)
{
	struct vfix f;
	struct bi_res r;
	char *odd, *small;

	vfix_init(&f);
	odd = th_path(f.dir, "odd.img");
	small = th_path(f.dir, "small.img");
	th_write_random_file(odd, 3 * 4096 + 1000, 7);
	th_write_random_file(small, 4095, 8);

	/* smaller than one block: nothing to protect */
	expect_fail_clean(&f, 4, small, 0, "%s build %s %s/new.hash", vt(),
			  small, f.dir);

	bi_run(&r, f.dir, NULL, "%s build --salt - %s %s/odd.hash", vt(), odd,
	       f.dir);
	cr_assert_eq(r.sig, 0);
	if (r.rc == 0) {
		cr_expect(strstr(r.out, "Data blocks:     \t3\n"),
			  "whole blocks only: %s", r.out);
		cr_expect(strstr(r.err, odd),
			  "the unprotected tail of %s (1000 bytes) is not "
			  "reported; stderr: '%s'", odd, r.err);
	} else {
		bi_expect_fail(&r, VT, 4, odd, 0);
	}
	bi_free(&r);
	/* the same for the size action */
	bi_run(&r, f.dir, NULL, "%s size %s", vt(), odd);
	cr_assert_eq(r.sig, 0);
	if (r.rc == 0)
		cr_expect(strstr(r.err, odd),
			  "size: the unprotected tail of %s is not reported",
			  odd);
	else
		bi_expect_fail(&r, VT, 4, odd, 0);
	bi_free(&r);
	free(odd);
	free(small);
	vfix_fini(&f);
}

Test(badinput_verity, data_blocks_larger_than_file)
{
	struct vfix f;

	vfix_init(&f);
	expect_fail_clean(&f, 4, f.data, 0,
			  "%s build --data-blocks 257 %s %s/new.hash", vt(),
			  f.data, f.dir);
	/* more than 64-bit offsets can address: a usage error */
	expect_fail_clean(&f, 1, NULL, 0,
			  "%s build --data-blocks 18446744073709551615 %s "
			  "%s/new.hash", vt(), f.data, f.dir);
	expect_fail_clean(&f, 1, "data-blocks", 0,
			  "%s build --data-blocks 18446744073709551616 %s "
			  "%s/new.hash", vt(), f.data, f.dir);
	expect_fail_clean(&f, 1, "data-blocks", 0,
			  "%s build --data-blocks -1 %s %s/new.hash", vt(),
			  f.data, f.dir);
	/* verify --no-superblock with more blocks than the data holds */
	expect_fail_clean(&f, 4, f.data, 0,
			  "%s verify --no-superblock --salt - --hash-offset "
			  "4096 --data-blocks 300 %s %s %s", vt(), f.data,
			  f.hash, f.root);
	vfix_fini(&f);
}

/* Data and tree on one file must not overlap (veritysetup's rule). */
Test(badinput_verity, overlapping_areas_one_file)
{
	struct vfix f;
	char *one;

	vfix_init(&f);
	one = th_path(f.dir, "one.img");
	bi_copy(f.data, one);
	expect_fail_clean(&f, 1, one, 0, "%s build %s %s", vt(), one, one);
	expect_fail_clean(&f, 1, one, 0,
			  "%s build --data-blocks 200 --hash-offset 409600 %s "
			  "%s", vt(), one, one);
	expect_fail_clean(&f, 1, one, 0,
			  "%s build --no-superblock --data-blocks 10 "
			  "--hash-offset 4096 %s %s", vt(), one, one);
	/* the same file under two names (hard link) */
	{
		char *lnk = th_path(f.dir, "link.img");

		cr_assert_eq(link(one, lnk), 0);
		expect_fail_clean(&f, 1, one, 0, "%s build %s %s", vt(), one,
				  lnk);
		free(lnk);
	}
	/* a valid one-file image whose superblock claims more data blocks
	 * than fit before the tree */
	{
		struct bi_res r;
		char root[160], *before;
		uint8_t n[8];

		bi_run(&r, f.dir, NULL, "%s build --salt - --data-blocks 128 "
		       "--hash-offset 524288 %s %s", vt(), one, one);
		bi_expect_ok(&r);
		bi_root_hash(r.out, root, sizeof(root));
		bi_free(&r);
		le(n, 200, 8);
		bi_patch(one, 524288 + 72, n, 8);
		before = bi_dir_state(f.dir, NULL);
		bi_run(&r, f.dir, NULL, "%s verify --hash-offset 524288 %s %s "
		       "%s", vt(), one, one, root);
		cr_expect(r.rc == 1 || r.rc == 4, "exit %d", r.rc);
		bi_expect_fail(&r, VT, r.rc, one, 0);
		bi_expect_state(f.dir, NULL, before, &r);
		bi_free(&r);
	}
	free(one);
	vfix_fini(&f);
}

Test(badinput_verity, truncated_hash_file)
{
	struct vfix f;
	char *t1, *t2;

	vfix_init(&f);
	t1 = th_path(f.dir, "trunc1.hash");
	t2 = th_path(f.dir, "trunc2.hash");
	bi_copy(f.hash, t1);
	cr_assert_eq(truncate(t1, 8192), 0);	/* sb + 1 of 2 levels */
	bi_copy(f.hash, t2);
	cr_assert_eq(truncate(t2, 300), 0);	/* inside the superblock */

	expect_fail_clean(&f, 4, t1, 0, "%s verify %s %s %s", vt(), f.data,
			  t1, f.root);
	expect_fail_clean(&f, 4, t2, 0, "%s verify %s %s %s", vt(), f.data,
			  t2, f.root);
	expect_fail_clean(&f, 4, t2, 0, "%s dump %s", vt(), t2);
	free(t1);
	free(t2);
	vfix_fini(&f);
}

/* ---- hostile superblocks, crafted byte by byte ---- */

struct sb_case {
	const char *name;
	size_t off;
	uint8_t bytes[32];
	size_t len;
	bool dump_ok;		/* dump may show it (verify still fails) */
	const char *verify_names; /* "data" or NULL (the hash file) */
	const char *why;	/* what the message says (veritysetup's words) */
};

#define LE32(v) { (uint8_t)(v), (uint8_t)((v) >> 8), (uint8_t)((v) >> 16), \
		  (uint8_t)((v) >> 24) }

static const struct sb_case sb_cases[] = {
	{ "bad magic", 0, "VERITY", 6, false, NULL,
	  "is not a valid VERITY device" },
	{ "version 0", 8, LE32(0u), 4, false, NULL,
	  "Unsupported VERITY version 0." },
	{ "version 2", 8, LE32(2u), 4, false, NULL,
	  "Unsupported VERITY version 2." },
	{ "version 0xffffffff", 8, LE32(0xffffffffu), 4, false, NULL,
	  "Unsupported VERITY version 4294967295." },
	{ "hash type 2", 12, LE32(2u), 4, false, NULL,
	  "Unsupported VERITY hash type 2." },
	{ "hash type 0x80000000", 12, LE32(0x80000000u), 4, false, NULL,
	  "Unsupported VERITY hash type 2147483648." },
	{ "empty algorithm", 32, { 0 }, 1, false, NULL,
	  "no hash algorithm name" },
	{ "unknown algorithm", 32, "sha257", 7, false, NULL,
	  "Hash algorithm sha257 not supported." },
	{ "keyed algorithm", 32, "hmac(sha256)", 13, false, NULL,
	  "Hash algorithm hmac(sha256) not supported." },
	{ "crc algorithm", 32, "crc32c\0\0", 8, false, NULL,
	  "Hash algorithm crc32c not supported." },
	{ "unterminated algorithm", 32,
	  "sha256sha256sha256sha256sha256ab", 32, false, NULL,
	  "no hash algorithm name" },
	{ "data block size 0", 64, LE32(0u), 4, false, NULL,
	  "Unsupported VERITY block size." },
	{ "data block size 4097", 64, LE32(4097u), 4, false, NULL,
	  "Unsupported VERITY block size." },
	{ "data block size 256", 64, LE32(256u), 4, false, NULL,
	  "Unsupported VERITY block size." },
	{ "data block size 2^31", 64, LE32(0x80000000u), 4, false, NULL,
	  "Unsupported VERITY block size." },
	{ "hash block size 1 MiB", 68, LE32(1u << 20), 4, false, NULL,
	  "Unsupported VERITY block size." },
	{ "hash block size 3", 68, LE32(3u), 4, false, NULL,
	  "Unsupported VERITY block size." },
	{ "hash block size 0xffffffff", 68, LE32(0xffffffffu), 4, false,
	  NULL, "Unsupported VERITY block size." },
	{ "0 data blocks", 72, { 0 }, 8, false, NULL, "data_blocks 0" },
	{ "2^63 data blocks", 79, { 0x80 }, 1, false, NULL,
	  "VERITY header corrupted (data_blocks 922337203685477" },
	{ "2^64-1 data blocks", 72,
	  { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, 8, false,
	  NULL, "data_blocks 18446744073709551615" },
	/* valid on its own, far larger than the data file */
	{ "2^40 data blocks", 72, { 0, 0, 0, 0, 0, 1 }, 8, true, "data",
	  NULL },
	/* INT64_MAX / 4096: the largest count a 4096-byte block allows */
	{ "2^51-1 data blocks", 72,
	  { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x07, 0 }, 8, true, "data",
	  NULL },
	{ "2^51 data blocks", 72, { 0, 0, 0, 0, 0, 0, 0x08, 0 }, 8, false,
	  NULL, "data_blocks 2251799813685248" },
	{ "salt size 257", 80, { 0x01, 0x01 }, 2, false, NULL,
	  "salt size 257" },
	{ "salt size 0xffff", 80, { 0xff, 0xff }, 2, false, NULL,
	  "salt size 65535" },
};

Test(badinput_verity, hostile_superblocks)
{
	struct vfix f;
	char *bad = NULL;

	vfix_init(&f);
	for (size_t i = 0; i < sizeof(sb_cases) / sizeof(sb_cases[0]); i++) {
		const struct sb_case *c = &sb_cases[i];
		char name[64];
		struct bi_res r;
		char *before;

		snprintf(name, sizeof(name), "sb%02zu.hash", i);
		free(bad);
		bad = th_path(f.dir, name);
		bi_copy(f.hash, bad);
		bi_patch(bad, c->off, c->bytes, c->len);
		cr_log_info("superblock case: %s", c->name);

		before = bi_dir_state(f.dir, NULL);
		bi_run(&r, f.dir, NULL, "%s verify %s %s %s", vt(), f.data,
		       bad, f.root);
		bi_expect_fail(&r, VT, 4, c->verify_names ? f.data : bad, 0);
		/* why it is rejected, as veritysetup says (without --debug) */
		if (c->why)
			cr_expect(strstr(r.err, c->why), "[%s] want '%s': %s",
				  c->name, c->why, r.err);
		bi_expect_state(f.dir, NULL, before, &r);
		bi_free(&r);

		before = bi_dir_state(f.dir, NULL);
		bi_run(&r, f.dir, NULL, "%s dump --json %s", vt(), bad);
		if (c->dump_ok) {
			bi_expect_ok(&r);
		} else {
			/* --json failures: the framework's error object */
			bi_expect_fail(&r, VT, 4, bad, BI_STDOUT);
			cr_expect(strstr(r.out, "\"error\"") &&
				  strstr(r.out, "\"exit_code\":4"), "[%s] %s",
				  c->name, r.out);
			if (c->why)
				cr_expect(strstr(r.out, c->why), "[%s] %s",
					  c->name, r.out);
		}
		bi_expect_state(f.dir, NULL, before, &r);
		bi_free(&r);
	}
	free(bad);
	vfix_fini(&f);
}

/* Random 512-byte superblocks with the right magic and version. */
Test(badinput_verity, garbage_superblocks)
{
	struct vfix f;
	char *bad;
	uint8_t sb[512];

	vfix_init(&f);
	bad = th_path(f.dir, "garbage.hash");
	for (uint64_t seed = 1; seed <= 24; seed++) {
		struct bi_res r;

		bi_copy(f.hash, bad);
		th_fill_random(sb, sizeof(sb), seed);
		if (seed % 2) {
			memcpy(sb, "verity\0\0", 8);
			le(sb + 8, 1, 4);
			le(sb + 12, seed % 4 == 1, 4);
		}
		bi_patch(bad, 0, sb, sizeof(sb));
		bi_run(&r, f.dir, NULL, "%s verify %s %s %s", vt(), f.data,
		       bad, f.root);
		bi_expect_fail(&r, VT, 4, NULL, BI_MULTI);
		bi_free(&r);
		bi_run(&r, f.dir, NULL, "%s dump %s", vt(), bad);
		cr_expect_eq(r.sig, 0, "dump crashed on garbage seed %llu",
			     (unsigned long long)seed);
		cr_expect(r.rc == 0 || r.rc == 4, "dump exit %d", r.rc);
		bi_free(&r);
	}
	free(bad);
	vfix_fini(&f);
}

/* ---- bad options ---- */

Test(badinput_verity, unknown_algorithms)
{
	struct vfix f;

	vfix_init(&f);
	expect_fail_clean(&f, 1, "sha257", 0, "%s build --hash sha257 %s "
			  "%s/new.hash", vt(), f.data, f.dir);
	expect_fail_clean(&f, 1, "hmac(sha256)", 0,
			  "%s build --hash 'hmac(sha256)' %s %s/new.hash",
			  vt(), f.data, f.dir);
	expect_fail_clean(&f, 1, "crc32c", 0,
			  "%s build --hash crc32c %s %s/new.hash", vt(),
			  f.data, f.dir);
	expect_fail_clean(&f, 1, "aaaa", 0,
			  "%s build --hash aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
			  "aaaaaaaaaaaaaaaaaaaaaaa %s %s/new.hash", vt(),
			  f.data, f.dir);
	expect_fail_clean(&f, 1, "sha257", 0,
			  "%s verify --no-superblock --salt - --hash sha257 "
			  "%s %s %s", vt(), f.data, f.hash, f.root);
	expect_fail_clean(&f, 1, "nosuchengine", 0,
			  "%s build --engine nosuchengine %s %s/new.hash",
			  vt(), f.data, f.dir);
	vfix_fini(&f);
}

Test(badinput_verity, malformed_numbers_and_options)
{
	static const char *const bad[] = {
		"--data-block-size 4095", "--data-block-size 0",
		"--data-block-size 1048576", "--data-block-size 4k",
		"--hash-block-size 64", "--hash-block-size 4294971392",
		"--hash-offset 100", "--hash-offset 0x1000",
		"--format 2", "--format -1", "--threads 99999",
		"--progress-frequency x", "--uuid 1234", "--no-such-option",
		"--hash-block-size 512 --hash sha512 --hash sha256x",
	};
	struct vfix f;

	vfix_init(&f);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_fail_clean(&f, 1, NULL, BI_MULTI,
				  "%s build %s %s %s/new.hash", vt(), bad[i],
				  f.data, f.dir);
	/* wrong number of arguments, unknown action */
	expect_fail_clean(&f, 1, NULL, BI_MULTI, "%s build %s", vt(), f.data);
	expect_fail_clean(&f, 1, NULL, BI_MULTI, "%s frobnicate %s", vt(),
			  f.data);
	expect_fail_clean(&f, 1, NULL, BI_MULTI, "%s", vt());
	vfix_fini(&f);
}

Test(badinput_verity, malformed_hex)
{
	struct vfix f;
	char *rf, odd[200];

	vfix_init(&f);
	expect_fail_clean(&f, 1, "salt", 0, "%s build --salt zz %s "
			  "%s/new.hash", vt(), f.data, f.dir);
	expect_fail_clean(&f, 1, "salt", 0, "%s build --salt abc %s "
			  "%s/new.hash", vt(), f.data, f.dir);
	{
		/* 257 bytes */
		char s[2 * 257 + 1];

		memset(s, 'a', sizeof(s) - 1);
		s[sizeof(s) - 1] = '\0';
		expect_fail_clean(&f, 1, "salt", 0, "%s build --salt %s %s "
				  "%s/new.hash", vt(), s, f.data, f.dir);
	}
	/* root hashes: not hex, odd length, too short, too long */
	snprintf(odd, sizeof(odd), "%.63s", f.root);
	expect_fail_clean(&f, 1, "root hash", 0, "%s verify %s %s %s", vt(),
			  f.data, f.hash, odd);
	snprintf(odd, sizeof(odd), "%.62s", f.root);
	expect_fail_clean(&f, 1, "root hash", 0, "%s verify %s %s %s", vt(),
			  f.data, f.hash, odd);
	snprintf(odd, sizeof(odd), "%s00", f.root);
	expect_fail_clean(&f, 1, "root hash", 0, "%s verify %s %s %s", vt(),
			  f.data, f.hash, odd);
	snprintf(odd, sizeof(odd), "%.62sxy", f.root);
	expect_fail_clean(&f, 1, "root hash", 0, "%s verify %s %s %s", vt(),
			  f.data, f.hash, odd);
	/* a root hash file with a wrong length or non-hex bytes */
	rf = th_path(f.dir, "root.txt");
	th_write_file(rf, f.root, 62);
	expect_fail_clean(&f, 1, "root hash", 0,
			  "%s verify --root-hash-file %s %s %s", vt(), rf,
			  f.data, f.hash);
	snprintf(odd, sizeof(odd), "%.62sg!", f.root);
	th_write_file(rf, odd, 64);
	expect_fail_clean(&f, 1, "root hash", 0,
			  "%s verify --root-hash-file %s %s %s", vt(), rf,
			  f.data, f.hash);
	free(rf);
	vfix_fini(&f);
}

/* ---- outputs ---- */

/* --root-hash-file naming an input must not overwrite it. */
Test(badinput_verity, root_hash_file_is_data)
{
	struct vfix f;

	vfix_init(&f);
	expect_fail_clean(&f, 1, f.data, 0,
			  "%s build --root-hash-file %s %s %s/new.hash", vt(),
			  f.data, f.data, f.dir);
	bi_expect_absent(f.dir, "new.hash");
	vfix_fini(&f);
}

Test(badinput_verity, root_hash_file_is_hash)
{
	struct vfix f;

	vfix_init(&f);
	expect_fail_clean(&f, 1, f.hash, 0,
			  "%s build --salt - --root-hash-file %s %s %s", vt(),
			  f.hash, f.data, f.hash);
	vfix_fini(&f);
}

Test(badinput_verity, unwritable_outputs)
{
	struct bi_opts nobody = { .nobody = true };
	struct vfix f;
	struct bi_res r;
	const char *tool;
	char *w, *ro, *before, *wbefore;

	bi_need_root();
	vfix_init(&f);
	bi_open_dir(f.dir);
	tool = bi_nobody_tool(f.dir, vt());
	w = bi_world_dir(f.dir, "w");
	ro = th_path(f.dir, "ro");
	cr_assert_eq(mkdir(ro, 0755), 0);

	/* a new tree in a directory nobody cannot write */
	before = bi_dir_state(f.dir, "w");
	bi_run(&r, f.dir, &nobody, "%s build %s %s/new.hash", tool, f.data,
	       ro);
	bi_expect_fail(&r, VT, 4, "new.hash", 0);
	bi_expect_absent(ro, "new.hash");
	bi_free(&r);
	/* an existing read-only tree */
	bi_run(&r, f.dir, &nobody, "%s build --salt - %s %s", tool, f.data,
	       f.hash);
	bi_expect_fail(&r, VT, 4, f.hash, 0);
	bi_expect_state(f.dir, "w", before, &r);
	bi_free(&r);

	/* the tree is writable but the root hash file is not: nothing may
	 * appear under the final names */
	wbefore = bi_dir_state(w, NULL);
	bi_run(&r, f.dir, &nobody, "%s build --root-hash-file %s/root.txt "
	       "%s %s/new.hash", tool, ro, f.data, w);
	bi_expect_fail(&r, VT, 4, "root.txt", 0);
	bi_expect_absent(ro, "root.txt");
	bi_expect_state(w, NULL, wbefore, &r);
	bi_free(&r);
	free(w);
	free(ro);
	vfix_fini(&f);
}

/* A file locked by another process: exit 5. */
Test(badinput_verity, locked_files)
{
	struct vfix f;
	int fd;

	vfix_init(&f);
	fd = open(f.data, O_RDONLY);
	cr_assert(fd >= 0);
	cr_assert_eq(flock(fd, LOCK_EX), 0);
	expect_fail_clean(&f, 5, f.data, 0, "%s build %s %s/new.hash", vt(),
			  f.data, f.dir);
	expect_fail_clean(&f, 5, f.data, 0, "%s verify %s %s %s", vt(),
			  f.data, f.hash, f.root);
	close(fd);

	/* a tree being read elsewhere cannot be rebuilt in place */
	fd = open(f.hash, O_RDONLY);
	cr_assert(fd >= 0);
	cr_assert_eq(flock(fd, LOCK_SH), 0);
	expect_fail_clean(&f, 5, f.hash, 0, "%s build --salt - %s %s", vt(),
			  f.data, f.hash);
	close(fd);
	fd = open(f.hash, O_RDONLY);
	cr_assert_eq(flock(fd, LOCK_EX), 0);
	expect_fail_clean(&f, 5, f.hash, 0, "%s dump %s", vt(), f.hash);
	close(fd);
	vfix_fini(&f);
}

/* Results that cannot be written (stdout on a full disk) are an error
 * with a message, not a silent exit code. */
Test(badinput_verity, stdout_full)
{
	struct vfix f;
	struct bi_res r;

	vfix_init(&f);
	bi_run(&r, f.dir, NULL, "%s dump %s >/dev/full", vt(), f.hash);
	bi_expect_fail(&r, VT, 4, NULL, 0);
	bi_free(&r);
	bi_run(&r, f.dir, NULL, "%s size --data-size 1G --json >/dev/full",
	       vt());
	bi_expect_fail(&r, VT, 4, NULL, 0);
	bi_free(&r);
	vfix_fini(&f);
}

/* An option given twice: the last one wins (and nothing leaks under
 * SANITIZE=address). */
Test(badinput_verity, repeated_options)
{
	struct vfix f;
	struct bi_res r;

	vfix_init(&f);
	bi_run(&r, f.dir, NULL, "%s build --hash sha1 --hash sha256 --salt 00 "
	       "--salt - %s %s/new.hash", vt(), f.data, f.dir);
	bi_expect_ok(&r);
	cr_expect(strstr(r.out, "Hash algorithm:  \tsha256\n"), "%s", r.out);
	cr_expect(strstr(r.out, f.root), "same tree as the fixture: %s",
		  r.out);
	bi_free(&r);
	vfix_fini(&f);
}
