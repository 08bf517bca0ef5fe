// SPDX-License-Identifier: MIT
/*
 * crypt-tool format's geometry and words beside cryptsetup 2.6.1 (issue
 * 21, points 4, 7, 8, 9): data offsets and device sizes luksFormat
 * refuses or answers with 512-byte sectors (our dump and luksDump of the
 * two images say the same), the warning about untagged sectors exactly
 * when check finds them, options named in their refusals, the units of
 * check --json, --progress-json's device, and images with no room for
 * data (cryptsetup's sentence).
 */
#if !defined(DMT_NO_LIBCRYPTSETUP) && __has_include(<libcryptsetup.h>)
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/helpers.h"

#define PASS "format test passphrase"
#define CHEAP "--batch-mode --pbkdf pbkdf2 --pbkdf-force-iterations 1000 " \
	      "--key-file pw"
#define CS_CHEAP "-q --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --key-file pw"

static char *dir;

static void setup(void)
{
	char *pw, *pay, *empty;

	dir = th_mkdtemp();
	pw = th_path(dir, "pw");
	pay = th_path(dir, "pay");
	empty = th_path(dir, "empty");
	th_write_file(pw, PASS, strlen(PASS));
	th_write_random_file(pay, 100000, 3);
	th_write_file(empty, "", 0);
	free(pw);
	free(pay);
	free(empty);
}

static void teardown(void)
{
	th_rmtree(dir);
	free(dir);
}

/* sh in the test directory, "$CT" crypt-tool, stdin the passphrase. */
#define sh(out, err, ...) th_sh_tools(out, err, dir, "pw", __VA_ARGS__)

static bool exists(const char *name)
{
	char *path = th_path(dir, name);
	bool e = access(path, F_OK) == 0;

	free(path);
	return e;
}

/* luksDump's data segment of an image (offset, length, cipher, sector). */
static char *segment(const char *img)
{
	char *out = NULL;

	cr_assert_eq(sh(&out, NULL, "cryptsetup luksDump %s | sed -n "
			"'/^Data segments:/,/^Keyslots:/p' | grep -v '^Keyslots:'",
			img), 0, "luksDump %s", img);
	return out;
}

static void expect_same_segment(const char *ours, const char *theirs)
{
	char *a = segment(ours), *b = segment(theirs);

	cr_expect_str_eq(a, b, "%s vs %s", ours, theirs);
	free(a);
	free(b);
}

/* exit 1 from both, a message naming what, no image left. */
static void expect_both_refuse(const char *opts, const char *theirs_msg,
			       const char *ours_msg)
{
	char *err = NULL;
	int rc;

	rc = sh(NULL, &err, "rm -f cs.img && truncate -s 20M cs.img && "
		"cryptsetup luksFormat " CS_CHEAP " %s cs.img", opts);
	cr_expect_eq(rc, 1, "luksFormat %s: exit %d: %s", opts, rc, err);
	cr_expect(strstr(err, theirs_msg), "luksFormat %s: %s", opts, err);
	free(err);
	err = NULL;
	rc = sh(NULL, &err, "rm -f ours.img && \"$CT\" format " CHEAP " %s "
		"--data-from pay ours.img", opts);
	cr_expect_eq(rc, 1, "format %s: exit %d: %s", opts, rc, err);
	cr_expect(strstr(err, ours_msg), "format %s: %s", opts, err);
	cr_expect(!strstr(err, "multiple of 0"), "%s", err);
	cr_expect(!exists("ours.img"), "format %s left the image", opts);
	free(err);
}

Test(crypt_format, offset_and_size_as_luksformat, .init = setup,
     .fini = teardown, .timeout = 120)
{
	char *err = NULL;

	/* crypt_set_data_offset: a multiple of 4096 bytes, any sector size */
	expect_both_refuse("--offset 100", "Data offset is not multiple of 4096 bytes.",
			   "--offset 100: the data offset is not a multiple of 4096 bytes");
	expect_both_refuse("--offset 100 --sector-size 512",
			   "Data offset is not multiple of 4096 bytes.",
			   "--offset 100");
	/* an offset of 4096-byte blocks: the same segment; lib/setup.c
	 * compares it in sectors with the sector size in bytes, so 4104
	 * sectors give 512-byte sectors and 8192 keep 4096 */
	for (int i = 0; i < 2; i++) {
		err = NULL;
		cr_assert_eq(sh(NULL, &err, "rm -f cs.img ours.img && truncate -s "
				"20M cs.img && cryptsetup luksFormat " CS_CHEAP
				" --offset %d cs.img && \"$CT\" format " CHEAP
				" --offset %d --device-size 20M --data-from pay "
				"ours.img", i ? 8192 : 4104, i ? 8192 : 4104), 0,
			     "%s", err);
		free(err);
		expect_same_segment("ours.img", "cs.img");
	}
	/* size agrees with format's sector size (auto: whole sectors) */
	err = NULL;
	cr_expect_eq(sh(NULL, &err, "rm -f a.img && \"$CT\" format " CHEAP
			" --offset 4104 --data-from pay a.img && test $(\"$CT\" size "
			"--payload-size 100000 --offset 4104) = $(stat -c %%s a.img) "
			"&& test $(stat -c %%s a.img) = $((4104 * 512 + 100352))"), 0,
		     "%s", err);
	free(err);
	err = NULL;
	/* a device size that is no multiple of 4096: 512-byte sectors
	 * without --sector-size (new image, in place), refused with it */
	err = NULL;
	cr_assert_eq(sh(NULL, &err, "rm -f cs.img ours.img && truncate -s "
			"20972032 cs.img && cp cs.img inplace.img && cryptsetup "
			"luksFormat " CS_CHEAP " cs.img && \"$CT\" format " CHEAP
			" --device-size 20972032 --data-from pay ours.img && "
			"\"$CT\" format " CHEAP " --data-from pay inplace.img"), 0,
		     "%s", err);
	free(err);
	expect_same_segment("ours.img", "cs.img");
	expect_same_segment("inplace.img", "cs.img");
	err = NULL;
	cr_expect_eq(sh(NULL, &err, "rm -f cs.img && truncate -s 20972032 cs.img "
			"&& cryptsetup luksFormat " CS_CHEAP " --sector-size 4096 "
			"cs.img"), 1, "%s", err);
	cr_expect(strstr(err, "Device size is not aligned to requested sector size."),
		  "%s", err);
	free(err);
	err = NULL;
	cr_expect_eq(sh(NULL, &err, "\"$CT\" format " CHEAP " --sector-size 4096 "
			"--device-size 20972032 --data-from pay s.img"), 1, "%s",
		     err);
	cr_expect(strstr(err, "not a multiple of the 4096-byte --sector-size"),
		  "%s", err);
	cr_expect(!exists("s.img"));
	free(err);
}

/*
 * Plain with sectors over 512 bytes: the kernel maps neither an offset nor
 * an IV offset that is no multiple of the sector (cryptsetup open takes
 * the first: dm-crypt's logical block is the sector, "start=3 not aligned
 * to h/w logical block size 4096"; the second: "Invalid iv_offset
 * sector"), nor bytes after the offset that are not whole sectors.
 */
Test(crypt_format, plain_offsets_the_kernel_maps, .init = setup,
     .fini = teardown)
{
	static const char *const refused[][2] = {
		{ "--offset 3", "--offset 3: not a multiple of the 4096-byte sector size" },
		{ "--skip 5", "--skip 5: not a multiple of the 4096-byte sector size" },
		{ "--offset 8 --device-size 1049088",
		  "not a multiple of the 4096-byte --sector-size" },
	};
	char *err = NULL, *k64 = th_path(dir, "k64");

	th_write_random_file(k64, 64, 9);
	free(k64);
	cr_expect_eq(sh(NULL, &err, "\"$CT\" format --type plain --key-file k64 "
			"--sector-size 4096 --offset 8 --skip 16 --data-from pay "
			"p.img && \"$CT\" decrypt --type plain --key-file k64 "
			"--sector-size 4096 --offset 8 --skip 16 p.img out && cmp "
			"-n 100000 pay out && test $(stat -c %%s p.img) = "
			"$((8 * 512 + 102400))"), 0, "%s", err);
	free(err);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		err = NULL;
		cr_expect_eq(sh(NULL, &err, "\"$CT\" format --type plain --key-file "
				"k64 --sector-size 4096 %s --data-from pay r.img",
				refused[i][0]), 1, "%s: %s", refused[i][0], err);
		cr_expect(strstr(err, refused[i][1]), "%s: %s", refused[i][0], err);
		cr_expect(!exists("r.img"), "%s: image left", refused[i][0]);
		free(err);
	}
}

/* The untagged-sectors warning exactly when check finds such sectors. */
Test(crypt_format, integrity_warning_when_true, .init = setup,
     .fini = teardown, .timeout = 60)
{
	static const char *const integ =
		"--integrity hmac-sha256 --cipher aes-xts-random";
	char *err = NULL, *out = NULL;

	/* 100000 bytes: the last 4096-byte sector padded, all tagged */
	cr_assert_eq(sh(NULL, &err, "\"$CT\" format " CHEAP " %s --data-from "
			"pay a.img", integ), 0, "%s", err);
	cr_expect(!strstr(err, "fail to read"), "spurious: %s", err);
	free(err);
	err = NULL;
	cr_expect_eq(sh(&out, &err, "\"$CT\" check --key-file pw a.img"), 0,
		     "%s", err);
	cr_expect(strstr(err, "all 25 sectors authenticated"), "%s", err);
	free(out);
	free(err);
	/* room after the payload: the warning, and check agrees */
	err = NULL;
	cr_assert_eq(sh(NULL, &err, "\"$CT\" format " CHEAP " %s --device-size "
			"20M --data-from pay b.img", integ), 0, "%s", err);
	cr_expect(strstr(err, "the 917 sectors after the payload"), "%s", err);
	free(err);
	err = NULL;
	out = NULL;
	cr_expect_eq(sh(&out, &err, "\"$CT\" check --key-file pw b.img"), 2,
		     "%s", err);
	cr_expect(strstr(err, "917 of 942 4096-byte sectors failed"), "%s", err);
	free(out);
	free(err);
	/* --wipe: every sector tagged, no warning */
	err = NULL;
	cr_assert_eq(sh(NULL, &err, "\"$CT\" format " CHEAP " %s --wipe "
			"--device-size 20M --data-from pay c.img", integ), 0,
		     "%s", err);
	cr_expect(!strstr(err, "fail to read"), "%s", err);
	free(err);
}

/* Refusals that name the option and what it takes (exit 1). */
Test(crypt_format, messages_name_the_option, .init = setup,
     .fini = teardown, .timeout = 60)
{
	static const char *const cases[][2] = {
		{ "--uuid bad", "--uuid: 'bad' is not a UUID" },
		{ "--luks2-metadata-size 5k",
		  "5120 bytes is not a LUKS2 header size (16k, 32k, 64k" },
		{ "--luks2-keyslots-size 5000", "needs a multiple of 4096" },
		{ "--hash whirlpool", "'whirlpool' is not supported here (supported: sha1" },
		{ "--type plain --hash whirlpool", "(supported: plain, sha1" },
		{ "--integrity hmac-sha256 --cipher aes-xts-plain64",
		  "--cipher aes-xts-plain64 with --integrity hmac-sha256 is not a "
		  "supported combination" },
		{ "--device-size 83886081",
		  "83886081 bytes is not a multiple of 512" },
		{ "--type plain --device-size 83886081",
		  "83886081 bytes is not a multiple of 512" },
	};

	char *k64 = th_path(dir, "k64");

	th_write_random_file(k64, 64, 9);
	free(k64);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool plain = strstr(cases[i][0], "--type plain");
		char *err = NULL;
		int rc = sh(NULL, &err, "\"$CT\" format %s %s --data-from pay "
			    "m.img", plain ? "--batch-mode --key-file k64" : CHEAP,
			    cases[i][0]);

		cr_expect_eq(rc, 1, "%s: exit %d: %s", cases[i][0], rc, err);
		cr_expect(strstr(err, cases[i][1]), "%s: %s", cases[i][0], err);
		cr_expect(!exists("m.img"), "%s: image left", cases[i][0]);
		free(err);
	}
}

/* check --json: units in the names; --progress-json names the image. */
Test(crypt_format, json_units_and_progress_device, .init = setup,
     .fini = teardown, .timeout = 60)
{
	char *out = NULL, *err = NULL;
	json_object *j, *v;

	cr_assert_eq(sh(NULL, &err, "\"$CT\" format " CHEAP " --integrity "
			"hmac-sha256 --cipher aes-xts-random --device-size 20M "
			"--data-from pay a.img && \"$CT\" format " CHEAP
			" --data-from pay l.img"), 0, "%s", err);
	free(err);
	err = NULL;
	cr_expect_eq(sh(&out, &err, "\"$CT\" check --json --key-file pw a.img"),
		     2, "%s", err);
	free(err);
	j = json_tokener_parse(out);
	cr_assert(j, "%s", out);
	cr_assert(json_object_object_get_ex(j, "sector_size", &v));
	cr_expect_eq(json_object_get_int64(v), 4096);
	cr_assert(json_object_object_get_ex(j, "first_bad_sectors", &v));
	cr_expect_eq(json_object_get_int64(json_object_array_get_idx(v, 0)), 25);
	cr_assert(json_object_object_get_ex(j, "first_bad_512", &v));
	cr_expect_eq(json_object_get_int64(json_object_array_get_idx(v, 0)), 200);
	cr_assert(json_object_object_get_ex(j, "first_bad", &v));
	cr_expect_eq(json_object_get_int64(json_object_array_get_idx(v, 0)), 200);
	json_object_put(j);
	free(out);
	for (int i = 0; i < 2; i++) {
		const char *img = i ? "a.img" : "l.img";

		err = NULL;
		sh(NULL, &err, "rm -f out.bin && \"$CT\" decrypt --progress-json "
		   "--allow-bad-sectors --key-file pw %s out.bin; \"$CT\" decrypt "
		   "--progress-json --key-file pw %s out2.bin", img, img);
		cr_expect(strstr(err, "{\"device\":\"") &&
				  !strstr(err, "\"device\":\"out"),
			  "%s: %s", img, err);
		free(err);
	}
}

/* No room for data: cryptsetup's sentence (luksFormat prints it too). */
Test(crypt_format, empty_payload_warns, .init = setup, .fini = teardown,
     .timeout = 60)
{
	static const char *const sentence =
		"is too small for activation, there is no remaining space for data.";
	char *out = NULL, *err = NULL, *k64 = th_path(dir, "k64");

	th_write_random_file(k64, 64, 9);
	free(k64);
	cr_assert_eq(sh(&out, &err, "truncate -s 16M cs.img && cryptsetup "
			"luksFormat " CS_CHEAP " cs.img"), 0, "%s", err);
	cr_expect(strstr(out, sentence), "luksFormat: %s", out);
	free(out);
	free(err);
	for (int i = 0; i < 3; i++) {
		static const char *const opts[] = {
			CHEAP, "--type plain --key-file k64",
			CHEAP " --header h.img",
		};

		err = NULL;
		cr_assert_eq(sh(NULL, &err, "rm -f e.img && \"$CT\" format %s "
				"--data-from empty e.img", opts[i]), 0, "%s", err);
		cr_expect(strstr(err, "Device e.img ") && strstr(err, sentence),
			  "%s: %s", opts[i], err);
		free(err);
	}
	/* room for data: no word */
	err = NULL;
	cr_assert_eq(sh(NULL, &err, "\"$CT\" format " CHEAP " --device-size 17M "
			"--data-from empty f.img"), 0, "%s", err);
	cr_expect(!strstr(err, sentence), "%s", err);
	free(err);
}

/*
 * The AES code is the dispatcher's choice (--list-engines: aes-xts,
 * aes-cbc), forcible by --engine or $DMT_ENGINE: each forced backend this
 * CPU runs writes the same image as OpenSSL, and -v names the one used.
 */
Test(crypt_format, engine_forces_the_aes_backend, .init = setup,
     .fini = teardown)
{
	static const char *const specs[] = { "openssl", "aes-xts=openssl",
					     "aes-xts=vaes", "aes-xts=auto" };
	char *out = NULL, *err = NULL, *k64 = th_path(dir, "k64");
	char *pay = th_path(dir, "pay");

	th_write_random_file(k64, 64, 11);
	th_write_random_file(pay, 262144, 12);
	cr_assert_eq(sh(NULL, &err, "\"$CT\" format --type plain --key-file k64"
			" --data-from pay --engine openssl ref.img"), 0, "%s",
		     err);
	free(err);
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		int rc = sh(&out, &err, "rm -f t.img; DMT_ENGINE=%s \"$CT\" -v format "
			    "--type plain --key-file k64 --data-from pay t.img"
			    " && cmp ref.img t.img", specs[i]);

		/* vaes forced on a CPU without it: refused, exit 1 */
		if (rc && strstr(err, "cannot run on this CPU")) {
			cr_log_info("%s: not on this CPU", specs[i]);
		} else {
			cr_expect_eq(rc, 0, "%s: %s", specs[i], err);
			if (strstr(specs[i], "openssl"))
				cr_expect(strstr(err, "openssl on"), "%s: %s",
					  specs[i], err);
			if (!strcmp(specs[i], "aes-xts=vaes"))
				cr_expect(strstr(err, "vaes on"), "%s", err);
		}
		free(out);
		free(err);
	}
	free(k64);
	free(pay);
}
#endif
