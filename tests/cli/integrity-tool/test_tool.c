// SPDX-License-Identifier: MIT
/*
 * integrity-tool end to end: format / check / recalculate / dump / size,
 * with the images verified by the independent references of
 * test_integrity_oracle.c and, where installed, `integritysetup dump`.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/helpers.h"
#include "tests/support/integrity_oracle.h"

#define SALT "000102030405060708090a0b0c0d0e0f"

static char *dir;

static void setup(void)
{
	dir = th_mkdtemp();
}

static void teardown(void)
{
	th_rmtree(dir);
	free(dir);
}

static char *p(const char *name)
{
	return th_path(dir, name);
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	cr_assert_eq(stat(path, &st), 0, "%s", path);
	return (uint64_t)st.st_size;
}

static void read_at(const char *path, uint64_t off, void *buf, size_t len)
{
	int fd = open(path, O_RDONLY);

	cr_assert(fd >= 0);
	cr_assert_eq(pread(fd, buf, len, (off_t)off), (ssize_t)len);
	close(fd);
}

static void write_at(const char *path, uint64_t off, const void *buf,
		     size_t len)
{
	int fd = open(path, O_WRONLY);

	cr_assert(fd >= 0);
	cr_assert_eq(pwrite(fd, buf, len, (off_t)off), (ssize_t)len);
	close(fd);
}

static void geo(const char *img, bool meta, struct it_geo *g)
{
	uint8_t sb[512];

	read_at(img, 0, sb, 512);
	it_geo_from_sb(sb, meta, g);
}

static int tool(char **out, char **err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* it_tool with captured output printed on failure of expectations. */
static int tool(char **out, char **err, const char *fmt, ...)
{
	char *args;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	cr_assert(vasprintf(&args, fmt, ap) >= 0);
	va_end(ap);
	rc = it_tool(out, err, "%s", args);
	free(args);
	return rc;
}

static void must(const char *what, int rc, char *err)
{
	cr_assert_eq(rc, 0, "%s failed (%d): %s", what, rc, err ? err : "");
}

/* ---- round trips ---- */

struct rt_case {
	const char *alg;	/* as given to --integrity */
	const char *ref;	/* reference name */
	unsigned int ss, tag;
	bool key;
};

static void round_trip(const struct rt_case *c)
{
	char *img = p("img"), *pay = p("pay"), *key = p("key");
	char *out = NULL, *err = NULL, keyopt[512] = "", tagopt[32] = "";
	static const uint8_t keybytes[32] = "0123456789abcdef0123456789abcde";
	/* ends mid-block; 16M device, a smaller one under DMT_TEST_REDUCED */
	const uint64_t plen = ((th_reduced() ? 2u : 5u) << 20) + 1234;
	const unsigned int dev_mib = th_reduced() ? 8 : 16;
	uint8_t *want, *got;
	uint64_t first = 0;
	struct it_geo g;
	int rc;

	th_write_random_file(pay, plen, 11);
	if (c->key) {
		th_write_file(key, keybytes, sizeof(keybytes));
		snprintf(keyopt, sizeof(keyopt),
			 "--integrity-key-file '%s' --integrity-key-size 32",
			 key);
	}
	if (c->tag)
		snprintf(tagopt, sizeof(tagopt), "--tag-size %u", c->tag);
	rc = tool(&out, &err,
		  "format -q --integrity '%s' %s %s --sector-size %u --salt "
		  SALT " --device-size %uM --data-from '%s' '%s'",
		  c->alg, keyopt, tagopt, c->ss, dev_mib, pay, img);
	must("format", rc, err);
	free(out);
	free(err);
	rc = tool(&out, &err, "check --integrity '%s' %s '%s'", c->alg, keyopt,
		  img);
	must("check", rc, err);
	cr_expect(strstr(out, "all tags match"), "%s", out);
	free(out);
	free(err);

	geo(img, false, &g);
	cr_expect_eq(g.spb * 512, c->ss);
	if (c->tag)
		cr_expect_eq(g.tag, c->tag);
	cr_expect_eq(it_verify_image(img, NULL, c->ref,
				     c->key ? keybytes : NULL,
				     c->key ? sizeof(keybytes) : 0, &first), 0,
		     "%s/%u: first bad sector %llu", c->alg, c->ss,
		     (unsigned long long)first);
	/* the payload reads back through the layout; the rest is zero */
	want = th_read_file(pay, NULL);
	got = malloc(plen + 8192);
	cr_assert(got);
	it_read_logical(img, NULL, 0, got, plen + 8192);
	cr_expect_arr_eq(got, want, plen, "%s: payload differs", c->alg);
	for (size_t i = plen; i < plen + 8192; i++)
		cr_assert_eq(got[i], 0, "%s: byte %zu after the payload",
			     c->alg, i);
	it_read_logical(img, NULL, g.provided * 512 - 4096, got, 4096);
	for (size_t i = 0; i < 4096; i++)
		cr_assert_eq(got[i], 0, "%s: last bytes not zero", c->alg);
	free(want);
	free(got);
	free(img);
	free(pay);
	free(key);
}

Test(integrity_tool, roundtrip_crc32c_512, .init = setup, .fini = teardown)
{
	const struct rt_case c = { "crc32c", "crc32c", 512, 0, false };

	round_trip(&c);
}

Test(integrity_tool, roundtrip_crc32_1024, .init = setup, .fini = teardown)
{
	const struct rt_case c = { "crc32", "crc32", 1024, 0, false };

	round_trip(&c);
}

Test(integrity_tool, roundtrip_sha1_2048, .init = setup, .fini = teardown)
{
	const struct rt_case c = { "sha1", "sha1", 2048, 0, false };

	round_trip(&c);
}

Test(integrity_tool, roundtrip_sha256_4096, .init = setup, .fini = teardown)
{
	const struct rt_case c = { "sha256", "sha256", 4096, 0, false };

	round_trip(&c);
}

Test(integrity_tool, roundtrip_hmac_sha256_512, .init = setup,
     .fini = teardown)
{
	const struct rt_case c = { "hmac-sha256", "hmac(sha256)", 512, 0,
				   true };

	round_trip(&c);
}

Test(integrity_tool, roundtrip_xxhash64_4096, .init = setup,
     .fini = teardown)
{
	const struct rt_case c = { "xxhash64", "xxhash64", 4096, 0, false };

	round_trip(&c);
}

/* Tags shorter than the digest (truncated) and longer (zero-padded). */
Test(integrity_tool, roundtrip_tag_sizes, .init = setup, .fini = teardown)
{
	const struct rt_case cases[] = {
		{ "sha256", "sha256", 512, 8, false },
		{ "crc32c", "crc32c", 2048, 12, false },
		{ "xxhash64", "xxhash64", 1024, 16, false },
		{ "hmac(sha256)", "hmac(sha256)", 4096, 40, true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		round_trip(&cases[i]);
}

/* Fixed padding with the smallest interleave: many areas, exact mapping. */
Test(integrity_tool, roundtrip_small_interleave, .init = setup,
     .fini = teardown)
{
	char *img = p("img"), *pay = p("pay"), *out = NULL, *err = NULL;
	uint8_t *want, *got;
	uint64_t first = 0;
	struct it_geo g;

	th_write_random_file(pay, 300000, 5);
	must("format", tool(&out, &err,
			    "format -q -t 8 --interleave-sectors 8 --salt " SALT
			    " --device-size 16M --data-from '%s' '%s'",
			    pay, img), err);
	free(out);
	free(err);
	geo(img, false, &g);
	cr_expect_eq(g.provided, 16288);	/* formats.md 2.7 */
	cr_expect_eq(g.li, 3);
	must("check", tool(&out, &err, "check '%s'", img), err);
	free(out);
	free(err);
	cr_expect_eq(it_verify_image(img, NULL, "crc32c", NULL, 0, &first), 0,
		     "first bad %llu", (unsigned long long)first);
	want = th_read_file(pay, NULL);
	got = malloc(300000);
	it_read_logical(img, NULL, 0, got, 300000);
	cr_expect_arr_eq(got, want, 300000);
	free(want);
	free(got);
	free(img);
	free(pay);
}

/* Separate metadata device: data untouched, tags contiguous. */
Test(integrity_tool, data_device, .init = setup, .fini = teardown)
{
	char *meta = p("meta"), *data = p("data"), *out = NULL, *err = NULL;
	char before[65], after[65];
	uint64_t first = 0, size;
	struct it_geo g;
	uint8_t sb[64];

	th_write_random_file(data, 8u << 20, 21);
	th_sha256_file(data, before);
	must("format", tool(&out, &err,
			    "format -q --salt " SALT " --device-size auto "
			    "--data-device '%s' '%s'", data, meta), err);
	free(out);
	free(err);
	th_sha256_file(data, after);
	cr_expect_str_eq(before, after, "the data device was modified");
	read_at(meta, 0, sb, 64);
	cr_expect_eq(sb[8], 5, "version %u", sb[8]);
	cr_expect_eq(sb[9], 0, "log2_interleave must be 0");
	cr_expect_eq(sb[24], 0x10, "flags %#x: fix_hmac only", sb[24]);
	geo(meta, true, &g);
	cr_expect_eq(g.provided, 16384);
	must("check", tool(&out, &err, "check --data-device '%s' '%s'", data,
			   meta), err);
	free(out);
	free(err);
	cr_expect_eq(it_verify_image(meta, data, "crc32c", NULL, 0, &first), 0);
	/* the auto size is the one `size` prints */
	must("size", tool(&out, &err, "size --data-device '%s'", data), err);
	size = strtoull(out, NULL, 10);
	cr_expect_eq(size, file_size(meta), "size says %s", out);
	free(out);
	free(err);
	/* without --data-device the superblock is refused with a reason */
	cr_expect_eq(tool(&out, &err, "check '%s'", meta), 1);
	cr_expect(strstr(err, "--data-device"), "%s", err);
	free(out);
	free(err);
	/* a data byte flipped is found */
	th_flip_byte(data, 123456, 0x10);
	cr_expect_eq(tool(&out, &err, "check --data-device '%s' '%s'", data,
			  meta), 2);
	cr_expect(strstr(out, "First mismatching sectors: 241"), "%s", out);
	free(out);
	free(err);
	free(meta);
	free(data);
}

/* Legacy options give the superblock versions the kernel picks. */
Test(integrity_tool, legacy_versions, .init = setup, .fini = teardown)
{
	static const struct {
		const char *opts;
		uint8_t version, flags;
	} cases[] = {
		{ "", 5, 0x18 },
		{ "--integrity-legacy-hmac", 4, 0x08 },
		{ "--integrity-legacy-padding", 5, 0x10 },
		{ "--integrity-legacy-padding --integrity-legacy-hmac", 1, 0 },
		{ "--integrity-legacy-padding --integrity-legacy-hmac "
		  "--interleave-sectors 128", 1, 0 },
	};
	char *img = p("img"), *pay = p("pay");

	th_write_random_file(pay, 1u << 20, 8);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out = NULL, *err = NULL;
		uint64_t first = 0;
		uint8_t sb[64];

		unlink(img);
		must(cases[i].opts, tool(&out, &err,
			"format -q %s %s --device-size 16M --data-from '%s' '%s'",
			cases[i].opts,
			strstr(cases[i].opts, "hmac") ? "" : "--salt " SALT,
			pay, img), err);
		free(out);
		free(err);
		read_at(img, 0, sb, 64);
		cr_expect_eq(sb[8], cases[i].version, "%s: version %u",
			     cases[i].opts, sb[8]);
		cr_expect_eq(sb[24], cases[i].flags, "%s: flags %#x",
			     cases[i].opts, sb[24]);
		must("check", tool(&out, &err, "check '%s'", img), err);
		free(out);
		free(err);
		cr_expect_eq(it_verify_image(img, NULL, "crc32c", NULL, 0,
					     &first), 0, "%s", cases[i].opts);
	}
	free(img);
	free(pay);
}

/* Keyed hash and a journal MAC: superblock MAC and section MACs. */
Test(integrity_tool, journal_mac_and_keys, .init = setup, .fini = teardown)
{
	char *img = p("img"), *k1 = p("k1"), *k2 = p("k2"), *k3 = p("k3");
	char *out = NULL, *err = NULL, keys[1024];
	static const uint8_t ik[16] = "internal-key-16", jk[20] = "journal-key-twenty!",
			     bad[20] = "journal-key-twenty?";
	uint8_t s0[512], mac[32], msg[16 + 8 + 8 * 80], sec[512];
	uint64_t first = 0;
	struct it_geo g;
	size_t ml;

	th_write_file(k1, ik, sizeof(ik));
	th_write_file(k2, jk, sizeof(jk));
	th_write_file(k3, bad, sizeof(bad));
	snprintf(keys, sizeof(keys),
		 "-I hmac-sha256 --integrity-key-file '%s' "
		 "--journal-integrity hmac-sha256 "
		 "--journal-integrity-key-file '%s'", k1, k2);
	must("format", tool(&out, &err, "format -q %s --salt " SALT
			    " --device-size 16M '%s'", keys, img), err);
	free(out);
	free(err);
	read_at(img, 0, s0, 512);
	cr_expect_eq(s0[24], 0x19, "flags %#x", s0[24]);
	cr_expect_eq(s0[8], 5);
	/* 2.4: hmac over bytes 0..479 with the journal key at 480..511 */
	it_hmac_sha256(jk, sizeof(jk), s0, 480, mac);
	cr_expect_arr_eq(s0 + 480, mac, 32, "superblock MAC");
	geo(img, false, &g);
	cr_expect_eq(g.section_sectors, 88);
	cr_expect_eq(g.sections, 2);	/* formats.md 2.7 */
	cr_expect_eq(g.provided, 30536);
	/* 2.5: section 1 MAC = hmac(salt || le64(1) || 80 sector fields) */
	memcpy(msg, g.salt, 16);
	memset(msg + 16, 0, 8);
	msg[16] = 1;
	ml = 24;
	for (int n = 0; n < 80; n++, ml += 8)
		memcpy(msg + ml, "\0\0\0\0\xff\xff\xff\xff", 8);
	it_hmac_sha256(jk, sizeof(jk), msg, ml, mac);
	for (int j = 0; j < 4; j++) {
		read_at(img, 4096 + (88 + j) * 512, sec, 512);
		cr_expect_arr_eq(sec + 496, mac + 8 * j, 8, "slice %d", j);
	}
	must("check", tool(&out, &err, "check %s '%s'", keys, img), err);
	free(out);
	free(err);
	cr_expect_eq(it_verify_image(img, NULL, "hmac(sha256)", ik, sizeof(ik),
				     &first), 0);
	/* the journal MAC options are required, and the key must be right */
	cr_expect_eq(tool(&out, &err, "check -I hmac-sha256 "
			  "--integrity-key-file '%s' '%s'", k1, img), 1);
	cr_expect(strstr(err, "journal"), "%s", err);
	free(out);
	free(err);
	cr_expect_eq(tool(&out, &err, "check -I hmac-sha256 "
			  "--integrity-key-file '%s' --journal-integrity "
			  "hmac-sha256 --journal-integrity-key-file '%s' '%s'",
			  k1, k3, img), 2);
	cr_expect(strstr(err, "superblock MAC"), "%s", err);
	free(out);
	free(err);
	/* an interrupted run's superblock: flag set, MAC'ed */
	s0[24] |= 0x02;
	s0[32] = 0x10;
	it_hmac_sha256(jk, sizeof(jk), s0, 480, s0 + 480);
	write_at(img, 0, s0, 512);
	must("check", tool(&out, &err, "check %s '%s'", keys, img), err);
	cr_expect(strstr(out, "sectors 0..16 "), "%s", out);
	free(out);
	free(err);
	/* recalculate clears the flag and redoes the superblock MAC */
	must("recalculate", tool(&out, &err, "recalculate -q %s '%s'", keys,
				 img), err);
	free(out);
	free(err);
	read_at(img, 0, s0, 512);
	cr_expect_eq(s0[24], 0x19, "flags %#x", s0[24]);
	cr_expect_eq(s0[32], 0);
	it_hmac_sha256(jk, sizeof(jk), s0, 480, mac);
	cr_expect_arr_eq(s0 + 480, mac, 32, "superblock MAC after recalc");
	must("check", tool(&out, &err, "check %s '%s'", keys, img), err);
	free(out);
	free(err);
	free(img);
	free(k1);
	free(k2);
	free(k3);
}

/* ---- corruption ---- */

static int check_rc(const char *img, const char *extra, char **out,
		    char **err)
{
	return tool(out, err, "check %s '%s'", extra, img);
}

Test(integrity_tool, corruption_detected, .init = setup, .fini = teardown)
{
	char *img = p("img"), *pay = p("pay"), *out = NULL, *err = NULL;
	struct it_geo g;
	uint64_t off;

	th_write_random_file(pay, 2u << 20, 4);
	must("format", tool(&out, &err, "format -q --salt " SALT
			    " --device-size 16M --data-from '%s' '%s'",
			    pay, img), err);
	free(out);
	free(err);
	geo(img, false, &g);

	/* a data byte */
	off = it_data_byte(&g, 1000) + 17;
	th_flip_byte(img, off, 0x01);
	cr_expect_eq(check_rc(img, "", &out, &err), 2, "%s", err);
	cr_expect(strstr(out, "1 of 32328 blocks have wrong tags"), "%s", out);
	cr_expect(strstr(out, "First mismatching sectors: 1000\n"), "%s", out);
	free(out);
	free(err);
	th_flip_byte(img, off, 0x01);

	/* a tag byte (in a block past the payload: a zero block) */
	off = it_tag_byte(&g, 30000) + 2;
	th_flip_byte(img, off, 0x80);
	cr_expect_eq(check_rc(img, "", &out, &err), 2);
	cr_expect(strstr(out, "First mismatching sectors: 30000\n"), "%s", out);
	free(out);
	free(err);
	th_flip_byte(img, off, 0x80);

	/* a journal commit id */
	off = 4096 + 37 * 512 + 504 + 3;
	th_flip_byte(img, off, 0x04);
	cr_expect_eq(check_rc(img, "", &out, &err), 2);
	cr_expect(strstr(err, "commit id"), "%s", err);
	cr_expect(strstr(out, "section 0 sector 37"), "%s", out);
	free(out);
	free(err);
	th_flip_byte(img, off, 0x04);

	/* an unused marker: the journal looks used -> refused, exit 4 */
	off = 4096 + 5 * 512 + 2 * 24 + 7;	/* entry 21 */
	th_flip_byte(img, off, 0x01);
	cr_expect_eq(check_rc(img, "", &out, &err), 4);
	cr_expect(strstr(err, "journal is not empty"), "%s", err);
	cr_expect(strstr(err, "section 0 entry 21"), "%s", err);
	free(out);
	free(err);
	th_flip_byte(img, off, 0x01);

	/* restored: clean again */
	must("check", check_rc(img, "", &out, &err), err);
	free(out);
	free(err);
	free(img);
	free(pay);
}

Test(integrity_tool, recalculate_fixes_tags, .init = setup, .fini = teardown)
{
	char *img = p("img"), *pay = p("pay"), *out = NULL, *err = NULL;
	struct it_geo g;
	uint8_t sb[64];

	th_write_random_file(pay, 3u << 20, 14);
	must("format", tool(&out, &err, "format -q -I sha256 -s 4096 --salt "
			    SALT " --device-size 16M --data-from '%s' '%s'",
			    pay, img), err);
	free(out);
	free(err);
	geo(img, false, &g);
	/* change data behind the tags' back */
	th_flip_byte(img, it_data_byte(&g, 800), 0xff);
	th_flip_byte(img, it_data_byte(&g, 4000) + 4095, 0x01);
	cr_expect_eq(tool(&out, &err, "check -I sha256 '%s'", img), 2);
	cr_expect(strstr(out, "2 of 4030 blocks"), "%s", out);
	free(out);
	free(err);
	must("recalculate", tool(&out, &err, "recalculate -I sha256 '%s'",
				 img), err);
	free(out);
	free(err);
	must("check", tool(&out, &err, "check -I sha256 '%s'", img), err);
	free(out);
	free(err);
	cr_expect_eq(it_verify_image(img, NULL, "sha256", NULL, 0, NULL), 0);
	/* done: no recalculating flag (kernel 6.1 would make keyed devices
	 * need legacy_recalculate with it) */
	read_at(img, 0, sb, 64);
	cr_expect_eq(sb[24], 0x18, "flags %#x", sb[24]);
	cr_expect_eq(sb[32] | sb[33] << 8 | sb[34] << 16, 0);
	free(img);
	free(pay);
}

/* --no-wipe writes no tags; recalculate then makes the image whole. */
Test(integrity_tool, no_wipe_then_recalculate, .init = setup,
     .fini = teardown)
{
	char *img = p("img"), *out = NULL, *err = NULL;

	th_write_random_file(img, 16u << 20, 77);
	must("format", tool(&out, &err, "format -q --no-wipe --salt " SALT
			    " '%s'", img), err);
	free(out);
	free(err);
	cr_expect_eq(tool(&out, &err, "check '%s'", img), 2);
	free(out);
	free(err);
	must("recalculate", tool(&out, &err, "recalculate '%s'", img), err);
	cr_expect(strstr(out, "recalculated 32328 blocks"), "%s", out);
	free(out);
	free(err);
	must("check", tool(&out, &err, "check '%s'", img), err);
	free(out);
	free(err);
	cr_expect_eq(it_verify_image(img, NULL, "crc32c", NULL, 0, NULL), 0);
	free(img);
}

/* RECALCULATING: only sectors below recalc_sector are checked. */
Test(integrity_tool, check_while_recalculating, .init = setup,
     .fini = teardown)
{
	char *img = p("img"), *out = NULL, *err = NULL;
	uint8_t flags[4] = { 0x1a, 0, 0, 0 }, rs[8] = { 0 };
	struct it_geo g;
	uint64_t boundary = 20000;

	must("format", tool(&out, &err, "format -q --salt " SALT
			    " --device-size 16M '%s'", img), err);
	free(out);
	free(err);
	geo(img, false, &g);
	write_at(img, 24, flags, 4);
	for (int i = 0; i < 8; i++)
		rs[i] = (uint8_t)(boundary >> (8 * i));
	write_at(img, 32, rs, 8);
	th_flip_byte(img, it_tag_byte(&g, 25000), 0x01);
	must("check", tool(&out, &err, "check '%s'", img), err);
	cr_expect(strstr(out, "recalculating: only sectors 0..20000"), "%s",
		  out);
	cr_expect(strstr(out, "20000 blocks"), "%s", out);
	free(out);
	free(err);
	th_flip_byte(img, it_tag_byte(&g, 19999), 0x01);
	cr_expect_eq(tool(&out, &err, "check '%s'", img), 2);
	free(out);
	free(err);
	/* recalculate continues from recalc_sector */
	must("recalculate", tool(&out, &err, "recalculate '%s'", img), err);
	cr_expect(strstr(out, "sectors 20000..32328"), "%s", out);
	free(out);
	free(err);
	cr_expect_eq(tool(&out, &err, "check '%s'", img), 2,
		     "sector 19999 was before recalc_sector: still bad");
	free(out);
	free(err);
	must("reset", tool(&out, &err, "recalculate "
			   "--integrity-recalculate-reset '%s'", img), err);
	free(out);
	free(err);
	must("check", tool(&out, &err, "check '%s'", img), err);
	free(out);
	free(err);
	free(img);
}

Test(integrity_tool, dirty_bitmap_and_discards, .init = setup,
     .fini = teardown)
{
	char *img = p("img"), *out = NULL, *err = NULL;
	uint8_t f6[4] = { 0xf6, 0xf6, 0xf6, 0xf6 }, flags[4];
	struct it_geo g;

	must("format", tool(&out, &err, "format -q --salt " SALT
			    " --device-size 16M '%s'", img), err);
	free(out);
	free(err);
	geo(img, false, &g);
	write_at(img, it_tag_byte(&g, 5), f6, 4);
	cr_expect_eq(tool(&out, &err, "check '%s'", img), 2);
	cr_expect(strstr(out, "1 blocks discarded"), "%s", out);
	free(out);
	free(err);
	must("check --allow-discards", tool(&out, &err,
			"check --allow-discards '%s'", img), err);
	cr_expect(strstr(out, "accepted"), "%s", out);
	free(out);
	free(err);
	read_at(img, 24, flags, 4);
	flags[0] |= 0x04;
	write_at(img, 24, flags, 4);
	cr_expect_eq(tool(&out, &err, "check '%s'", img), 4);
	cr_expect(strstr(err, "dirty bitmap"), "%s", err);
	free(out);
	free(err);
	free(img);
}

/* ---- determinism ---- */

Test(integrity_tool, threads_and_engines_identical, .init = setup,
     .fini = teardown)
{
	char *pay = p("pay"), *img = p("img"), *out = NULL, *err = NULL;
	char ref[2][65], h[65], *line, *save = NULL;
	static const char *const algs[2] = { "sha256", "crc32c" };
	/*
	 * Two 16 MiB work units (interleave areas), or under
	 * DMT_TEST_REDUCED four of 2 MiB.
	 */
	const char *size = th_reduced() ?
		"--device-size 8M --interleave-sectors 4096" :
		"--device-size 24M";
	int engines = 0;

	th_write_random_file(pay, (th_reduced() ? 2u : 6u) << 20, 99);
	for (int a = 0; a < 2; a++) {
		unlink(img);
		must("format", tool(&out, &err, "format -q -I %s --threads 1 "
				    "--salt " SALT " %s "
				    "--data-from '%s' '%s'", algs[a], size,
				    pay, img), err);
		free(out);
		free(err);
		th_sha256_file(img, ref[a]);
		unlink(img);
		must("format", tool(&out, &err, "format -q -I %s --threads 2 "
				    "--salt " SALT " %s "
				    "--data-from '%s' '%s'", algs[a], size,
				    pay, img), err);
		free(out);
		free(err);
		th_sha256_file(img, h);
		cr_expect_str_eq(h, ref[a], "%s: --threads 2 differs", algs[a]);
	}
	must("list", tool(&out, &err, "--list-engines"), err);
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[64], status[16];

		if (sscanf(line, "%63s %*s %15s", name, status) != 2 ||
		    !strcmp(name, "ENGINE") || !strcmp(status, "unavailable"))
			continue;
		for (int a = 0; a < 2; a++) {
			char *o2 = NULL, *e2 = NULL;

			unlink(img);
			must(name, tool(&o2, &e2, "format -q -I %s --engine %s "
					"--threads 2 --salt " SALT
					" %s --data-from '%s' '%s'",
					algs[a], name, size, pay, img), e2);
			free(o2);
			free(e2);
			th_sha256_file(img, h);
			cr_expect_str_eq(h, ref[a], "engine %s, %s differs",
					 name, algs[a]);
		}
		engines++;
	}
	cr_expect_geq(engines, 1);
	free(out);
	free(err);
	free(pay);
	free(img);
}

/* --seed: salt = HMAC-SHA256(seed, "integrity-salt")[0..16). */
Test(integrity_tool, seed_salt, .init = setup, .fini = teardown)
{
	char *a = p("a"), *b = p("b"), *out = NULL, *err = NULL;
	uint8_t mac[32], s0[64];

	must("a", tool(&out, &err, "format -q --seed build-42 --device-size 8M "
		       "'%s'", a), err);
	free(out);
	free(err);
	must("b", tool(&out, &err, "format -q --seed build-42 --device-size 8M "
		       "'%s'", b), err);
	free(out);
	free(err);
	cr_expect(th_files_equal(a, b));
	it_hmac_sha256((const uint8_t *)"build-42", 8,
		       (const uint8_t *)"integrity-salt", 14, mac);
	read_at(a, 0, s0, 64);
	cr_expect_arr_eq(s0 + 48, mac, 16);
	unlink(b);
	must("b2", tool(&out, &err, "format -q --device-size 8M '%s'", b), err);
	free(out);
	free(err);
	cr_expect(!th_files_equal(a, b), "random salt expected");
	free(a);
	free(b);
}

/* In place over old contents: data reads back as zeros, tags valid. */
Test(integrity_tool, in_place_over_garbage, .init = setup, .fini = teardown)
{
	char *img = p("img"), *out = NULL, *err = NULL;
	uint8_t buf[65536];
	struct it_geo g;

	th_write_random_file(img, 16u << 20, 1234);
	must("format", tool(&out, &err, "format -q --salt " SALT " '%s'", img),
	     err);
	free(out);
	free(err);
	cr_expect_eq(file_size(img), 16u << 20);
	must("check", tool(&out, &err, "check '%s'", img), err);
	free(out);
	free(err);
	geo(img, false, &g);
	for (uint64_t off = 0; off < g.provided * 512; off += 3u << 20) {
		it_read_logical(img, NULL, off, buf, sizeof(buf));
		for (size_t i = 0; i < sizeof(buf); i++)
			cr_assert_eq(buf[i], 0, "logical byte %llu",
				     (unsigned long long)(off + i));
	}
	cr_expect_eq(it_verify_image(img, NULL, "crc32c", NULL, 0, NULL), 0);
	free(img);
}

/* ---- sizes ---- */

Test(integrity_tool, size_and_auto, .init = setup, .fini = teardown)
{
	char *pay = p("pay"), *img = p("img"), *small = p("small");
	char *out = NULL, *err = NULL;
	uint64_t need;

	th_write_random_file(pay, 9000000, 3);
	must("size", tool(&out, &err, "size -I sha256 -s 4096 "
			  "--payload-size 9000000"), err);
	need = strtoull(out, NULL, 10);
	free(out);
	free(err);
	must("format", tool(&out, &err, "format -q -I sha256 -s 4096 --salt "
			    SALT " --device-size auto --data-from '%s' '%s'",
			    pay, img), err);
	free(out);
	free(err);
	cr_expect_eq(file_size(img), need);
	/* one 4 KiB less is too small, and the error says what is needed */
	cr_expect_eq(tool(&out, &err, "format -q -I sha256 -s 4096 "
			  "--device-size %llu --data-from '%s' '%s'",
			  (unsigned long long)(need - 4096), pay, small), 4);
	cr_expect(strstr(err, "needs at least"), "%s", err);
	cr_expect(access(small, F_OK) != 0, "no file may be left");
	free(out);
	free(err);
	must("size json", tool(&out, &err, "size --json -I sha256 -s 4096 "
			       "--payload-size 9000000"), err);
	{
		json_object *j = json_tokener_parse(out), *v;

		cr_assert(j, "not JSON: %s", out);
		cr_assert(json_object_object_get_ex(j, "device_size", &v));
		cr_expect_eq((uint64_t)json_object_get_uint64(v), need);
		cr_assert(json_object_object_get_ex(j, "provided_data_sectors",
						    &v));
		cr_expect_geq((uint64_t)json_object_get_uint64(v),
			      (9000000 + 4095) / 4096 * 8);
		json_object_put(j);
	}
	free(out);
	free(err);
	free(pay);
	free(img);
	free(small);
}

Test(integrity_tool, device_size_rules, .init = setup, .fini = teardown)
{
	char *img = p("img"), *missing = p("missing"), *out = NULL, *err = NULL;

	cr_expect_eq(tool(&out, &err, "format -q '%s'", missing), 4);
	cr_expect(strstr(err, "--device-size"), "%s", err);
	free(out);
	free(err);
	must("create", tool(&out, &err, "format -q --device-size 12M '%s'",
			    img), err);
	free(out);
	free(err);
	cr_expect_eq(file_size(img), 12u << 20);
	cr_expect_eq(tool(&out, &err, "format -q --device-size 8M '%s'", img),
		     1);
	cr_expect(strstr(err, "refusing to shrink"), "%s", err);
	free(out);
	free(err);
	must("grow", tool(&out, &err, "format -q --device-size 20M '%s'", img),
	     err);
	free(out);
	free(err);
	cr_expect_eq(file_size(img), 20u << 20);
	free(img);
	free(missing);
}

/* ---- output formats ---- */

Test(integrity_tool, dump_like_integritysetup, .init = setup,
     .fini = teardown)
{
	static const char *const variants[] = {
		"--salt " SALT,
		"--integrity-legacy-padding --integrity-legacy-hmac",
		"-s 4096 -I sha256 --salt " SALT,
	};
	char *img = p("img"), *out = NULL, *err = NULL, *ref = NULL;

	if (!th_have_cmd("integritysetup"))
		cr_skip("integritysetup is not installed");
	for (size_t i = 0; i < 3; i++) {
		for (int recalc = 0; recalc < 2; recalc++) {
			unlink(img);
			must("format", tool(&out, &err, "format -q %s "
					    "--device-size 16M '%s'",
					    variants[i], img), err);
			free(out);
			free(err);
			if (recalc) {
				/* as an interrupted recalculation leaves it */
				uint8_t f[1], rs[2] = { 0x34, 0x12 };

				read_at(img, 24, f, 1);
				f[0] |= 0x02;
				write_at(img, 24, f, 1);
				write_at(img, 32, rs, 2);
			}
			must("dump", tool(&out, &err, "dump '%s'", img), err);
			cr_assert_eq(th_sh(&ref, NULL,
					   "PATH=$PATH:/usr/sbin:/sbin "
					   "integritysetup dump '%s'", img), 0);
			cr_expect_str_eq(out, ref, "%s%s:\nours:\n%s\ntheirs:\n%s",
					 variants[i], recalc ? " recalc" : "",
					 out, ref);
			free(out);
			free(err);
			free(ref);
		}
	}
	free(img);
}

Test(integrity_tool, json_outputs, .init = setup, .fini = teardown)
{
	char *img = p("img"), *out = NULL, *err = NULL;
	json_object *j, *v, *sb;

	must("format", tool(&out, &err, "format --json --salt " SALT
			    " --device-size 16M '%s'", img), err);
	j = json_tokener_parse(out);
	cr_assert(j, "not JSON: %s", out);
	cr_assert(json_object_object_get_ex(j, "provided_data_sectors", &v));
	cr_expect_eq(json_object_get_uint64(v), 32328);
	cr_assert(json_object_object_get_ex(j, "superblock", &sb));
	cr_assert(json_object_object_get_ex(sb, "salt", &v));
	cr_expect_str_eq(json_object_get_string(v), SALT);
	cr_assert(json_object_object_get_ex(j, "table", &v));
	cr_expect(strstr(json_object_get_string(v), "0 32328 integrity "),
		  "%s", json_object_get_string(v));
	json_object_put(j);
	free(out);
	free(err);
	must("check", tool(&out, &err, "check --json '%s'", img), err);
	j = json_tokener_parse(out);
	cr_assert(j, "not JSON: %s", out);
	cr_assert(json_object_object_get_ex(j, "result", &v));
	cr_expect_str_eq(json_object_get_string(v), "ok");
	cr_assert(json_object_object_get_ex(j, "blocks", &v));
	cr_expect_eq(json_object_get_uint64(v), 32328);
	json_object_put(j);
	free(out);
	free(err);
	th_flip_byte(img, 94208, 1);
	cr_expect_eq(tool(&out, &err, "check --json '%s'", img), 2);
	j = json_tokener_parse(out);
	cr_assert(j, "not JSON: %s", out);
	cr_assert(json_object_object_get_ex(j, "mismatches", &v));
	cr_expect_eq(json_object_get_uint64(v), 1);
	json_object_put(j);
	free(out);
	free(err);
	must("dump", tool(&out, &err, "dump --json '%s'", img), err);
	j = json_tokener_parse(out);
	cr_assert(j, "not JSON: %s", out);
	cr_assert(json_object_object_get_ex(j, "version", &v));
	cr_expect_eq(json_object_get_uint64(v), 5);
	json_object_put(j);
	free(out);
	free(err);
	free(img);
}

/* Tags of a --no-wipe image are not valid yet: the table the tool prints
 * must ask the kernel to recalculate them (a wiped image's must not). */
Test(integrity_tool, no_wipe_table_recalculates, .init = setup,
     .fini = teardown)
{
	char *img = p("img"), *out = NULL, *err = NULL;
	json_object *j, *v;
	int wipe;

	for (wipe = 0; wipe < 2; wipe++) {
		must("format", tool(&out, &err, "format --json %s --salt " SALT
				    " --device-size 16M '%s'",
				    wipe ? "" : "--no-wipe", img), err);
		j = json_tokener_parse(out);
		cr_assert(j, "not JSON: %s", out);
		cr_assert(json_object_object_get_ex(j, "table", &v));
		if (wipe)
			cr_expect(!strstr(json_object_get_string(v),
					  "recalculate"), "%s",
				  json_object_get_string(v));
		else
			cr_expect(strstr(json_object_get_string(v),
					 " fix_hmac recalculate"), "%s",
				  json_object_get_string(v));
		json_object_put(j);
		free(out);
		free(err);
		unlink(img);
	}
	free(img);
}

Test(integrity_tool, bitmap_granularity, .init = setup, .fini = teardown)
{
	char *img = p("img"), *out = NULL, *err = NULL;
	uint8_t sb[64];

	must("format", tool(&out, &err, "format -q -B --bitmap-sectors-per-bit "
			    "65536 --device-size 16M '%s'", img), err);
	free(out);
	free(err);
	read_at(img, 0, sb, 64);
	cr_expect_eq(sb[29], 16, "log2_blocks_per_bitmap_bit %u", sb[29]);
	cr_expect_eq(sb[8], 5);
	must("check", tool(&out, &err, "check '%s'", img), err);
	free(out);
	free(err);
	free(img);
}

/*
 * --journal-crypt: the journal is written encrypted (the kernel suite opens
 * such images; testdata has kernel-made journals), check needs the same
 * cipher and key to read it.
 */
Test(integrity_tool, journal_crypt_round_trip, .init = setup, .fini = teardown)
{
	char *img = p("img"), *key = p("key"), *key2 = p("key2"), *out = NULL,
	     *err = NULL;
	static const char *const algs[] = { "ctr-aes", "cbc(aes)", "chacha20" };

	th_write_random_file(key, 32, 41);
	th_write_random_file(key2, 32, 42);
	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++) {
		unlink(img);
		must("format", tool(NULL, &err, "format -q --device-size 16M "
				    "--journal-size 1M --journal-crypt '%s' "
				    "--journal-crypt-key-file '%s' '%s'",
				    algs[i], key, img), err);
		free(err);
		cr_expect_eq(tool(&out, &err, "check --journal-crypt '%s' "
				  "--journal-crypt-key-file '%s' '%s'", algs[i],
				  key, img), 0, "%s: %s", algs[i], err);
		free(out);
		free(err);
		cr_expect_eq(tool(&out, &err, "check '%s'", img), 2, "%s",
			     algs[i]);
		cr_expect(strstr(err, "give --journal-crypt") != NULL, "%s: %s",
			  algs[i], err);
		free(out);
		free(err);
		cr_expect_eq(tool(&out, &err, "check --journal-crypt '%s' "
				  "--journal-crypt-key-file '%s' '%s'", algs[i],
				  key2, img), 2, "%s: wrong key", algs[i]);
		cr_expect(strstr(err, "wrong --journal-crypt") != NULL, "%s: %s",
			  algs[i], err);
		free(out);
		free(err);
	}
	free(img);
	free(key);
	free(key2);
}

/* ---- refusals ---- */

Test(integrity_tool, bad_inputs, .init = setup, .fini = teardown)
{
	static const struct {
		const char *args;
		int rc;
		const char *msg;
	} cases[] = {
		{ "format --journal-crypt 'cbc(aes)' IMG", 1,
		  "--journal-crypt-key-file" },
		{ "format --journal-crypt-key-file IMG IMG", 1,
		  "needs --journal-crypt" },
		{ "format -B --journal-crypt chacha20 --journal-crypt-key-file IMG "
		  "--journal-crypt-key-size 32 IMG", 1, "bitmap" },
		{ "format --salt 0011 IMG", 1, "--salt" },
		{ "format --salt " SALT " --seed x IMG", 1, "exclusive" },
		{ "format -I nosuchhash IMG", 1,
		  "--integrity: unknown algorithm 'nosuchhash' (see --list-engines)" },
		{ "format -I hmac-sha256 IMG", 1, "needs a key" },
		{ "format --tag-size 0 IMG", 1, "--tag-size" },
		{ "format --tag-size 425 IMG", 1, "--tag-size" },
		{ "format --sector-size 1000 IMG", 1, "--sector-size" },
		{ "format --sector-size 8192 IMG", 1, "--sector-size" },
		{ "format --integrity-legacy-padding --interleave-sectors 64 IMG",
		  1, "interleave" },
		{ "format --threads x IMG", 1, "--threads" },
		{ "format --device-size 12Q IMG", 1, "--device-size" },
		{ "format --allow-discards IMG", 1, "not allowed" },
		{ "check --data-from IMG IMG", 1, "not allowed" },
		{ "format IMG IMG", 1, "exactly one" },
		{ "frobnicate IMG", 1, "unknown command" },
		{ "format --no-wipe --data-from IMG IMG", 1, "--no-wipe" },
		{ "format --integrity-legacy-hmac --salt " SALT " IMG", 1, "salt" },
		{ "format -B --journal-integrity sha256 IMG", 1, "bitmap" },
		{ "format --bitmap-sectors-per-bit 8 IMG", 1, "bitmap-mode" },
		{ "format --engine nosuch IMG", 1, "unknown engine" },
		{ "check MISSING", 4, "MISSING" },
		{ "dump NOTINT", 4, "not a valid" },
		{ "check NOTINT", 4, "not a dm-integrity device" },
		{ "size", 1, "--payload-size" },
	};
	char *img = p("img"), *missing = p("missing"), *notint = p("notint");

	th_write_random_file(img, 16u << 20, 0);
	th_write_random_file(notint, 1u << 20, 5);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char args[1024], *o = args, *out = NULL, *err = NULL;
		const char *s = cases[i].args;

		/* substitute the file names */
		while (*s) {
			if (!strncmp(s, "IMG", 3)) {
				o += sprintf(o, "'%s'", img);
				s += 3;
			} else if (!strncmp(s, "MISSING", 7)) {
				o += sprintf(o, "'%s'", missing);
				s += 7;
			} else if (!strncmp(s, "NOTINT", 6)) {
				o += sprintf(o, "'%s'", notint);
				s += 6;
			} else {
				*o++ = *s++;
			}
		}
		*o = '\0';
		cr_expect_eq(tool(&out, &err, "%s", args), cases[i].rc,
			     "%s: rc, stderr: %s", cases[i].args, err);
		cr_expect(strstr(err, cases[i].msg) ||
			  (!strcmp(cases[i].msg, "MISSING") &&
			   strstr(err, "missing")),
			  "%s: stderr lacks '%s': %s", cases[i].args,
			  cases[i].msg, err);
		free(out);
		free(err);
	}
	free(img);
	free(missing);
	free(notint);
}

/* A device locked by someone else: exit 5. */
Test(integrity_tool, locked_device, .init = setup, .fini = teardown)
{
	char *img = p("img"), *out = NULL, *err = NULL;
	int fd;

	must("format", tool(&out, &err, "format -q --device-size 8M '%s'", img),
	     err);
	free(out);
	free(err);
	fd = open(img, O_RDONLY);
	cr_assert(fd >= 0);
	cr_assert_eq(flock(fd, LOCK_EX), 0);
	cr_expect_eq(tool(&out, &err, "format -q '%s'", img), 5);
	cr_expect(strstr(err, "in use"), "%s", err);
	free(out);
	free(err);
	cr_expect_eq(tool(&out, &err, "check '%s'", img), 5);
	free(out);
	free(err);
	close(fd);
	must("check", tool(&out, &err, "check '%s'", img), err);
	free(out);
	free(err);
	free(img);
}

/* A sparse payload: holes are not read, and read back as zeros. */
static void make_sparse(const char *path, uint8_t *content, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	/* data islands at odd, unaligned offsets; the file ends in a hole */
	static const size_t at[][2] = { { 0, 5000 }, { 1048576 + 333, 70000 },
					{ 4194304 - 100, 200 },
					{ 6291456, 1048576 } };

	cr_assert(fd >= 0);
	memset(content, 0, len);
	cr_assert_eq(ftruncate(fd, (off_t)len), 0);
	for (size_t i = 0; i < 4; i++) {
		th_fill_random(content + at[i][0], at[i][1], 100 + i);
		cr_assert_eq(pwrite(fd, content + at[i][0], at[i][1],
				    (off_t)at[i][0]), (ssize_t)at[i][1]);
	}
	close(fd);
}

Test(integrity_tool, sparse_payload, .init = setup, .fini = teardown)
{
	const size_t len = (9u << 20) + 4321;
	char *pay = p("pay"), *img = p("img"), *old = p("old");
	char *out = NULL, *err = NULL;
	uint8_t *content = malloc(len), *got = malloc(len);
	uint64_t first = 0;

	cr_assert(content && got);
	make_sparse(pay, content, len);
	/* new file (holes stay holes) and in place over old contents */
	th_write_random_file(old, 24u << 20, 55);
	must("new", tool(&out, &err, "format -q -s 1024 --salt " SALT
			 " --device-size 24M --data-from '%s' '%s'", pay, img),
	     err);
	free(out);
	free(err);
	must("old", tool(&out, &err, "format -q -s 1024 --salt " SALT
			 " --data-from '%s' '%s'", pay, old), err);
	free(out);
	free(err);
	cr_expect(th_files_equal(img, old),
		  "in-place and new-file images differ");
	it_read_logical(img, NULL, 0, got, len);
	cr_expect_arr_eq(got, content, len, "payload differs");
	cr_expect_eq(it_verify_image(old, NULL, "crc32c", NULL, 0, &first), 0,
		     "first bad %llu", (unsigned long long)first);
	must("check", tool(&out, &err, "check '%s'", old), err);
	free(out);
	free(err);
	free(content);
	free(got);
	free(pay);
	free(img);
	free(old);
}
