// SPDX-License-Identifier: MIT
/*
 * integrity-tool on bad input (suite "badinput_integrity"): missing,
 * unreadable, empty, odd-sized and truncated images, payloads that do not
 * fit, the device given twice, hostile superblocks crafted byte by byte,
 * unknown algorithms, malformed hex, wrong key sizes, unwritable outputs,
 * locked images and a full stdout.  Each must fail with the documented
 * exit code, one stderr line naming the file (or the option) at fault, no
 * crash, and no input modified or output left under its final name.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <sys/file.h>

#include "tests/support/badinput.h"

#define IT "integrity-tool"

struct ifix {
	char *dir;
	char *img;		/* 4 MiB, formatted (crc32c) */
	char *payload;		/* 64 KiB of random data */
};

static const char *it(void)
{
	return th_tool("integrity-tool");
}

static void ifix_init(struct ifix *f)
{
	struct bi_res r;

	memset(f, 0, sizeof(*f));
	f->dir = th_mkdtemp();
	f->img = th_path(f->dir, "image.img");
	f->payload = th_path(f->dir, "payload.bin");
	th_write_random_file(f->payload, 64 << 10, 0x1d);
	bi_run(&r, f->dir, NULL, "%s format --seed fixture --device-size 4M "
	       "--data-from %s %s", it(), f->payload, f->img);
	bi_expect_ok(&r);
	bi_free(&r);
	bi_run(&r, f->dir, NULL, "%s check %s", it(), f->img);
	bi_expect_ok(&r);
	bi_free(&r);
}

static void ifix_fini(struct ifix *f)
{
	th_rmtree(f->dir);
	free(f->dir);
	free(f->img);
	free(f->payload);
}

static void expect_fail_clean(struct ifix *f, int want, const char *needle,
			      int flags, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void expect_fail_clean(struct ifix *f, int want, const char *needle,
			      int flags, const char *fmt, ...)
{
	char *before = bi_dir_state(f->dir, NULL);
	struct bi_res r;
	va_list ap;

	va_start(ap, fmt);
	bi_vrun(&r, f->dir, NULL, fmt, ap);
	va_end(ap);
	bi_expect_fail(&r, IT, want, needle, flags);
	bi_expect_state(f->dir, NULL, before, &r);
	bi_free(&r);
}

static void le(uint8_t *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- missing, unreadable, empty, odd-sized files ---- */

Test(badinput_integrity, missing_files)
{
	struct ifix f;
	char *missing;

	ifix_init(&f);
	missing = th_path(f.dir, "missing.img");
	expect_fail_clean(&f, 4, missing, 0, "%s check %s", it(), missing);
	expect_fail_clean(&f, 4, missing, 0, "%s recalculate %s", it(),
			  missing);
	expect_fail_clean(&f, 4, missing, 0, "%s dump %s", it(), missing);
	/* format does not create a file without --device-size */
	expect_fail_clean(&f, 4, missing, 0, "%s format %s", it(), missing);
	expect_fail_clean(&f, 4, missing, 0, "%s format --data-from %s %s",
			  it(), missing, f.img);
	expect_fail_clean(&f, 4, missing, 0,
			  "%s format --data-from %s --device-size 4M "
			  "%s/new.img",
			  it(), missing, f.dir);
	expect_fail_clean(&f, 4, missing, 0, "%s check --data-device %s %s",
			  it(), missing, f.img);
	expect_fail_clean(&f, 4, missing, 0,
			  "%s format -I hmac-sha256 --integrity-key-file %s %s",
			  it(), missing, f.img);
	expect_fail_clean(&f, 4, missing, 0, "%s size --data-device %s", it(),
			  missing);
	expect_fail_clean(&f, 4, f.dir, 0, "%s check %s", it(), f.dir);
	free(missing);
	ifix_fini(&f);
}

Test(badinput_integrity, unreadable_files)
{
	struct bi_opts nobody = { .nobody = true };
	struct ifix f;
	struct bi_res r;
	const char *tool;
	char *w, *before, *key;

	bi_need_root();
	ifix_init(&f);
	bi_open_dir(f.dir);
	tool = bi_nobody_tool(f.dir, it());
	w = bi_world_dir(f.dir, "w");
	key = th_path(f.dir, "key.bin");
	th_write_random_file(key, 32, 3);
	cr_assert_eq(chmod(f.img, 0600), 0);
	cr_assert_eq(chmod(f.payload, 0600), 0);
	cr_assert_eq(chmod(key, 0600), 0);
	before = bi_dir_state(f.dir, "w");

	bi_run(&r, f.dir, &nobody, "%s check %s", tool, f.img);
	bi_expect_fail(&r, IT, 4, f.img, 0);
	bi_free(&r);
	bi_run(&r, f.dir, &nobody, "%s dump %s", tool, f.img);
	bi_expect_fail(&r, IT, 4, f.img, 0);
	bi_free(&r);
	bi_run(&r, f.dir, &nobody, "%s format --device-size 4M --data-from %s "
	       "%s/new.img", tool, f.payload, w);
	bi_expect_fail(&r, IT, 4, f.payload, 0);
	bi_expect_absent(w, "new.img");
	bi_free(&r);
	bi_run(&r, f.dir, &nobody, "%s format --device-size 4M -I hmac-sha256 "
	       "--integrity-key-file %s %s/new.img", tool, key, w);
	bi_expect_fail(&r, IT, 4, key, 0);
	bi_expect_absent(w, "new.img");
	bi_free(&r);
	bi_expect_state(f.dir, "w", before, &r);
	free(key);
	free(w);
	ifix_fini(&f);
}

Test(badinput_integrity, zero_length_files)
{
	struct ifix f;
	char *empty;

	ifix_init(&f);
	empty = th_path(f.dir, "empty.img");
	th_write_file(empty, "", 0);
	expect_fail_clean(&f, 4, empty, 0, "%s check %s", it(), empty);
	expect_fail_clean(&f, 4, empty, 0, "%s recalculate %s", it(), empty);
	expect_fail_clean(&f, 4, empty, 0, "%s dump %s", it(), empty);
	/* too small to format: a hint with the size needed may follow */
	expect_fail_clean(&f, 4, empty, BI_MULTI, "%s format %s", it(), empty);
	/* an empty key is no key */
	expect_fail_clean(&f, 1, empty, 0,
			  "%s check -I hmac-sha256 --integrity-key-file %s %s",
			  it(), empty, f.img);
	free(empty);
	ifix_fini(&f);
}

/*
 * A device that ends inside a sector (or a block): the kernel ignores the
 * tail, so it must at least be reported, or refused.
 */
Test(badinput_integrity, size_not_multiple_of_sector)
{
	struct ifix f;
	struct bi_res r;
	char *odd;

	ifix_init(&f);
	odd = th_path(f.dir, "odd.img");
	th_write_file(odd, "", 0);
	cr_assert_eq(truncate(odd, (4 << 20) + 100), 0);
	bi_run(&r, f.dir, NULL, "%s format %s", it(), odd);
	cr_assert_eq(r.sig, 0);
	if (r.rc == 0)
		cr_expect(strstr(r.err, odd),
			  "the last 100 bytes of %s are silently unused; "
			  "stderr: '%s'", odd, r.err);
	else
		bi_expect_fail(&r, IT, 4, odd, 0);
	bi_free(&r);
	bi_run(&r, f.dir, NULL, "%s format --sector-size 4096 %s", it(), odd);
	cr_assert_eq(r.sig, 0);
	if (r.rc == 0)
		cr_expect(strstr(r.err, odd),
			  "a partial 4096-byte block of %s is silently "
			  "unused; stderr: '%s'", odd, r.err);
	else
		bi_expect_fail(&r, IT, 4, odd, 0);
	bi_free(&r);
	free(odd);
	ifix_fini(&f);
}

/* A payload larger than the device, a device too small for anything. */
Test(badinput_integrity, payload_larger_than_device)
{
	struct ifix f;
	char *big, *tiny;

	ifix_init(&f);
	big = th_path(f.dir, "big.bin");
	tiny = th_path(f.dir, "tiny.img");
	th_write_random_file(big, 5 << 20, 9);
	th_write_file(tiny, "", 0);
	cr_assert_eq(truncate(tiny, 64 << 10), 0);
	expect_fail_clean(&f, 4, f.img, BI_MULTI, "%s format --data-from %s %s",
			  it(), big, f.img);
	expect_fail_clean(&f, 4, tiny, BI_MULTI, "%s format %s", it(), tiny);
	expect_fail_clean(&f, 4, "new.img", BI_MULTI,
			  "%s format --data-from %s --device-size 1M "
			  "%s/new.img", it(), big, f.dir);
	bi_expect_absent(f.dir, "new.img");
	/* a journal larger than the device */
	expect_fail_clean(&f, 4, f.img, BI_MULTI,
			  "%s format --journal-size 8M %s", it(), f.img);
	/* refusing to shrink */
	expect_fail_clean(&f, 1, f.img, 0, "%s format --device-size 1M %s",
			  it(), f.img);
	free(big);
	free(tiny);
	ifix_fini(&f);
}

/* The same file as device and payload, or as metadata and data device. */
Test(badinput_integrity, output_equals_input)
{
	struct ifix f;
	char *lnk;

	ifix_init(&f);
	lnk = th_path(f.dir, "link.img");
	cr_assert_eq(link(f.img, lnk), 0);
	expect_fail_clean(&f, 1, f.img, 0, "%s format --data-from %s %s",
			  it(), f.img, f.img);
	expect_fail_clean(&f, 1, NULL, 0, "%s format --data-from %s %s",
			  it(), lnk, f.img);
	expect_fail_clean(&f, 1, f.img, 0, "%s format --data-device %s %s",
			  it(), f.img, f.img);
	expect_fail_clean(&f, 1, NULL, 0, "%s check --data-device %s %s",
			  it(), lnk, f.img);
	free(lnk);
	ifix_fini(&f);
}

Test(badinput_integrity, truncated_image)
{
	struct ifix f;
	char *t1, *t2;

	ifix_init(&f);
	t1 = th_path(f.dir, "trunc1.img");
	t2 = th_path(f.dir, "trunc2.img");
	bi_copy(f.img, t1);
	cr_assert_eq(truncate(t1, 2 << 20), 0);
	bi_copy(f.img, t2);
	cr_assert_eq(truncate(t2, 300), 0);
	expect_fail_clean(&f, 4, t1, 0, "%s check %s", it(), t1);
	expect_fail_clean(&f, 4, t1, 0, "%s recalculate %s", it(), t1);
	expect_fail_clean(&f, 4, t2, 0, "%s check %s", it(), t2);
	expect_fail_clean(&f, 4, t2, 0, "%s dump %s", it(), t2);
	free(t1);
	free(t2);
	ifix_fini(&f);
}

/* ---- hostile superblocks ---- */

struct sb_case {
	const char *name;
	size_t off;
	uint64_t val;
	size_t len;
};

static const struct sb_case sb_cases[] = {
	{ "bad magic", 0, 'I', 1 },
	{ "version 0", 8, 0, 1 },
	{ "version 6", 8, 6, 1 },
	{ "version 255", 8, 255, 1 },
	{ "interleave 2^1", 9, 1, 1 },
	{ "interleave 2^32", 9, 32, 1 },
	{ "interleave 2^255", 9, 255, 1 },
	{ "tag size 0", 10, 0, 2 },
	{ "tag size 425", 10, 425, 2 },
	{ "tag size 65535", 10, 65535, 2 },
	{ "0 journal sections", 12, 0, 4 },
	{ "2^32-1 journal sections", 12, 0xffffffffu, 4 },
	{ "65536 journal sections", 12, 65536, 4 },
	{ "provided 2^64-1 sectors", 16, UINT64_MAX, 8 },
	{ "provided 2^63 sectors", 16, 1ull << 63, 8 },
	{ "provided 1M sectors", 16, 1u << 20, 8 },
	{ "inline flag", 24, 0x20 | 0x08 | 0x10, 4 },
	{ "all flags", 24, 0xffffffffu, 4 },
	{ "recalculating at 2^64-1", 24, 0x02 | 0x08 | 0x10, 4 },
	{ "sector size 2^4 sectors", 28, 4, 1 },
	{ "sector size 2^255 sectors", 28, 255, 1 },
};

Test(badinput_integrity, hostile_superblocks)
{
	struct ifix f;
	char *bad;

	ifix_init(&f);
	bad = th_path(f.dir, "bad.img");
	for (size_t i = 0; i < sizeof(sb_cases) / sizeof(sb_cases[0]); i++) {
		const struct sb_case *c = &sb_cases[i];
		uint8_t b[8];
		struct bi_res r;
		char *before;

		bi_copy(f.img, bad);
		le(b, c->val, c->len);
		bi_patch(bad, c->off, b, c->len);
		if (i == 18) {	/* with recalc_sector far away */
			le(b, UINT64_MAX, 8);
			bi_patch(bad, 32, b, 8);
		}
		cr_log_info("superblock case: %s", c->name);

		before = bi_dir_state(f.dir, NULL);
		bi_run(&r, f.dir, NULL, "%s check %s", it(), bad);
		if (i == 18 && r.rc == 0) {
			/* recalculation "past the end" is finished: every
			 * tag counts and every tag is right */
			cr_expect(strstr(r.out, "all tags match"), "%s",
				  r.out);
		} else {
			cr_expect(r.rc == 4 || r.rc == 1,
				  "[%s] exit %d", c->name, r.rc);
			bi_expect_fail(&r, IT, r.rc, bad, BI_MULTI);
		}
		bi_expect_state(f.dir, NULL, before, &r);
		bi_free(&r);

		/* recalculate may only write an image it can read */
		before = bi_dir_state(f.dir, NULL);
		bi_run(&r, f.dir, NULL, "%s recalculate %s", it(), bad);
		cr_assert_eq(r.sig, 0, "[%s] recalculate crashed", c->name);
		if (r.rc) {
			bi_expect_fail(&r, IT, r.rc, bad, BI_MULTI);
			bi_expect_state(f.dir, NULL, before, &r);
		} else {
			free(before);
		}
		bi_free(&r);

		bi_run(&r, f.dir, NULL, "%s dump --json %s", it(), bad);
		cr_expect_eq(r.sig, 0, "[%s] dump crashed", c->name);
		if (r.rc) {
			/* --json: the failure as an error object on stdout */
			bi_expect_fail(&r, IT, 4, bad, BI_STDOUT);
			cr_expect(strstr(r.out, "\"error\"") &&
				  strstr(r.out, "\"exit_code\":4"),
				  "[%s] no error object: %s", c->name, r.out);
		}
		bi_free(&r);
	}
	free(bad);
	ifix_fini(&f);
}

Test(badinput_integrity, garbage_superblocks)
{
	struct ifix f;
	char *bad;
	uint8_t sb[512];

	ifix_init(&f);
	bad = th_path(f.dir, "garbage.img");
	for (uint64_t seed = 1; seed <= 24; seed++) {
		struct bi_res r;

		bi_copy(f.img, bad);
		th_fill_random(sb, sizeof(sb), seed);
		if (seed % 2) {
			memcpy(sb, "integrt", 8);
			sb[8] = (uint8_t)(1 + seed % 5);
		}
		bi_patch(bad, 0, sb, sizeof(sb));
		bi_run(&r, f.dir, NULL, "%s check %s", it(), bad);
		cr_expect_eq(r.sig, 0, "check crashed on seed %llu",
			     (unsigned long long)seed);
		cr_expect(r.rc == 1 || r.rc == 2 || r.rc == 4,
			  "check of garbage seed %llu: exit %d",
			  (unsigned long long)seed, r.rc);
		bi_free(&r);
		bi_run(&r, f.dir, NULL, "%s dump %s", it(), bad);
		cr_expect_eq(r.sig, 0);
		cr_expect(r.rc == 0 || r.rc == 4, "dump exit %d", r.rc);
		bi_free(&r);
	}
	free(bad);
	ifix_fini(&f);
}

/* ---- bad options ---- */

Test(badinput_integrity, unknown_algorithms)
{
	struct ifix f;

	ifix_init(&f);
	expect_fail_clean(&f, 1, "algorithm", 0, "%s format -I sha257 %s",
			  it(), f.img);
	expect_fail_clean(&f, 1, "algorithm", 0, "%s check -I sha257 %s",
			  it(), f.img);
	expect_fail_clean(&f, 1, "algorithm", 0,
			  "%s format --journal-integrity sha257 %s", it(),
			  f.img);
	expect_fail_clean(&f, 1, "sha257", 0, "%s size -I sha257 "
			  "--payload-size 1M", it());
	expect_fail_clean(&f, 1, "journal-crypt", 0,
			  "%s format --journal-crypt 'cbc(aes)' %s", it(),
			  f.img);
	/* the payload file stands in for a key file */
	expect_fail_clean(&f, 1, "unsupported cipher", 0,
			  "%s format --journal-crypt 'xts(aes)' "
			  "--journal-crypt-key-file %s "
			  "--journal-crypt-key-size 32 %s", it(), f.payload,
			  f.img);
	expect_fail_clean(&f, 1, "key size", 0,
			  "%s format --journal-crypt chacha20 "
			  "--journal-crypt-key-file %s "
			  "--journal-crypt-key-size 16 %s", it(), f.payload,
			  f.img);
	expect_fail_clean(&f, 1, "unsupported cipher", 0,
			  "%s check --journal-crypt 'ecb(aes)' "
			  "--journal-crypt-key-file %s "
			  "--journal-crypt-key-size 16 %s", it(), f.payload,
			  f.img);
	expect_fail_clean(&f, 1, "nosuchengine", 0,
			  "%s check --engine nosuchengine %s", it(), f.img);
	ifix_fini(&f);
}

Test(badinput_integrity, malformed_numbers_and_options)
{
	static const char *const bad[] = {
		"--sector-size 1000", "--sector-size 8192", "--sector-size x",
		"--tag-size 0", "--tag-size 425", "--tag-size -4",
		"--journal-size 1Q", "--journal-size 99999999999999999999",
		"--interleave-sectors 4294967296", "--buffer-sectors x",
		"--bitmap-sectors-per-bit 8", "--device-size 0",
		"--device-size 12X", "--threads 1025", "--threads -1",
		"--progress-frequency 1.5", "--no-such-option",
		"--integrity-key-size 32", "--salt 00 --seed x",
		"--integrity-legacy-hmac --seed x", "--no-wipe --data-from x",
		"--integrity-bitmap-mode --journal-integrity crc32c",
	};
	struct ifix f;

	ifix_init(&f);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_fail_clean(&f, 1, NULL, 0, "%s format %s %s", it(),
				  bad[i], f.img);
	expect_fail_clean(&f, 1, NULL, 0, "%s", it());
	expect_fail_clean(&f, 1, NULL, 0, "%s frobnicate %s", it(), f.img);
	expect_fail_clean(&f, 1, NULL, 0, "%s check", it());
	expect_fail_clean(&f, 1, NULL, 0, "%s check %s %s", it(), f.img,
			  f.img);
	expect_fail_clean(&f, 1, NULL, 0, "%s check --salt %0*d %s", it(), 32,
			  0, f.img);
	expect_fail_clean(&f, 1, NULL, 0, "%s size", it());
	expect_fail_clean(&f, 1, NULL, 0, "%s size --payload-size 1Z", it());
	ifix_fini(&f);
}

Test(badinput_integrity, malformed_hex)
{
	struct ifix f;

	ifix_init(&f);
	expect_fail_clean(&f, 1, "salt", 0, "%s format --salt zz %s", it(),
			  f.img);
	expect_fail_clean(&f, 1, "salt", 0, "%s format --salt %031d %s", it(),
			  0, f.img);
	expect_fail_clean(&f, 1, "salt", 0, "%s format --salt %030d %s", it(),
			  0, f.img);
	expect_fail_clean(&f, 1, "salt", 0, "%s format --salt %034d %s", it(),
			  0, f.img);
	expect_fail_clean(&f, 1, "salt", 0, "%s format --salt %030dxy %s",
			  it(), 0, f.img);
	ifix_fini(&f);
}

Test(badinput_integrity, wrong_key_lengths)
{
	struct ifix f;
	char *k3, *k32, *kbig;

	ifix_init(&f);
	k3 = th_path(f.dir, "k3.bin");
	k32 = th_path(f.dir, "k32.bin");
	kbig = th_path(f.dir, "kbig.bin");
	th_write_random_file(k3, 3, 1);
	th_write_random_file(k32, 32, 2);
	th_write_random_file(kbig, 8192, 3);
	/* shorter than --integrity-key-size: a wrong size is exit 1 */
	expect_fail_clean(&f, 1, k3, 0, "%s format -I hmac-sha256 "
			  "--integrity-key-file %s --integrity-key-size 32 %s",
			  it(), k3, f.img);
	/* sizes out of range */
	expect_fail_clean(&f, 1, "key-size", 0, "%s format -I hmac-sha256 "
			  "--integrity-key-file %s --integrity-key-size 0 %s",
			  it(), k32, f.img);
	expect_fail_clean(&f, 1, "key-size", 0, "%s format -I hmac-sha256 "
			  "--integrity-key-file %s --integrity-key-size 9999 "
			  "%s", it(), k32, f.img);
	/* a whole-file key larger than any key */
	expect_fail_clean(&f, 1, kbig, 0, "%s format -I hmac-sha256 "
			  "--integrity-key-file %s %s", it(), kbig, f.img);
	/* a key for an unkeyed algorithm, no key for a keyed one */
	expect_fail_clean(&f, 1, NULL, 0, "%s format -I crc32c "
			  "--integrity-key-file %s %s", it(), k32, f.img);
	expect_fail_clean(&f, 1, "key", 0, "%s check -I hmac-sha256 %s", it(),
			  f.img);
	expect_fail_clean(&f, 1, "key", 0, "%s format --journal-integrity "
			  "hmac-sha256 %s", it(), f.img);
	free(k3);
	free(k32);
	free(kbig);
	ifix_fini(&f);
}

/* ---- outputs ---- */

Test(badinput_integrity, unwritable_outputs)
{
	struct bi_opts nobody = { .nobody = true };
	struct ifix f;
	struct bi_res r;
	const char *tool;
	char *ro, *before;

	bi_need_root();
	ifix_init(&f);
	bi_open_dir(f.dir);
	tool = bi_nobody_tool(f.dir, it());
	ro = th_path(f.dir, "ro");
	cr_assert_eq(mkdir(ro, 0755), 0);
	cr_assert_eq(chmod(f.img, 0644), 0);
	before = bi_dir_state(f.dir, NULL);

	bi_run(&r, f.dir, &nobody, "%s format --device-size 4M %s/new.img",
	       tool, ro);
	bi_expect_fail(&r, IT, 4, "new.img", 0);
	bi_expect_absent(ro, "new.img");
	bi_free(&r);
	bi_run(&r, f.dir, &nobody, "%s format %s", tool, f.img);
	bi_expect_fail(&r, IT, 4, f.img, 0);
	bi_free(&r);
	bi_run(&r, f.dir, &nobody, "%s recalculate %s", tool, f.img);
	bi_expect_fail(&r, IT, 4, f.img, 0);
	bi_free(&r);
	/* a read-only image can still be checked */
	bi_run(&r, f.dir, &nobody, "%s check %s", tool, f.img);
	bi_expect_ok(&r);
	bi_expect_state(f.dir, NULL, before, &r);
	bi_free(&r);
	free(ro);
	ifix_fini(&f);
}

Test(badinput_integrity, locked_image)
{
	struct ifix f;
	int fd;

	ifix_init(&f);
	fd = open(f.img, O_RDONLY);
	cr_assert(fd >= 0);
	cr_assert_eq(flock(fd, LOCK_EX), 0);
	expect_fail_clean(&f, 5, f.img, 0, "%s check %s", it(), f.img);
	expect_fail_clean(&f, 5, f.img, 0, "%s recalculate %s", it(), f.img);
	expect_fail_clean(&f, 5, f.img, 0, "%s format %s", it(), f.img);
	close(fd);
	/* readers block writers, not other readers */
	fd = open(f.img, O_RDONLY);
	cr_assert_eq(flock(fd, LOCK_SH), 0);
	expect_fail_clean(&f, 5, f.img, 0, "%s format %s", it(), f.img);
	expect_fail_clean(&f, 5, f.img, 0, "%s recalculate %s", it(), f.img);
	{
		struct bi_res r;

		bi_run(&r, f.dir, NULL, "%s check %s", it(), f.img);
		bi_expect_ok(&r);
		bi_free(&r);
	}
	close(fd);
	ifix_fini(&f);
}

Test(badinput_integrity, stdout_full)
{
	struct ifix f;
	struct bi_res r;

	ifix_init(&f);
	bi_run(&r, f.dir, NULL, "%s dump %s >/dev/full", it(), f.img);
	bi_expect_fail(&r, IT, 4, NULL, 0);
	bi_free(&r);
	bi_run(&r, f.dir, NULL, "%s check --json %s >/dev/full", it(), f.img);
	bi_expect_fail(&r, IT, 4, NULL, 0);
	bi_free(&r);
	bi_run(&r, f.dir, NULL, "%s size --payload-size 1M >/dev/full", it());
	bi_expect_fail(&r, IT, 4, NULL, 0);
	bi_free(&r);
	ifix_fini(&f);
}

/*
 * An option given twice: the last one wins and nothing leaks (under
 * SANITIZE=address the leak checker turns a leaked copy into exit 1).
 */
Test(badinput_integrity, repeated_options)
{
	struct ifix f;
	struct bi_res r;

	ifix_init(&f);
	bi_run(&r, f.dir, NULL, "%s format -I sha256 -I crc32c --sector-size "
	       "4096 --sector-size 512 %s", it(), f.img);
	bi_expect_ok(&r);
	bi_free(&r);
	bi_run(&r, f.dir, NULL, "%s dump %s", it(), f.img);
	bi_expect_ok(&r);
	cr_expect(strstr(r.out, "integrity_tag_size 4\n"), "%s", r.out);
	cr_expect(strstr(r.out, "sector_size 512\n"), "%s", r.out);
	bi_free(&r);
	bi_run(&r, f.dir, NULL, "%s check -I sha1 -I crc32c %s", it(), f.img);
	bi_expect_ok(&r);
	bi_free(&r);
	ifix_fini(&f);
}
