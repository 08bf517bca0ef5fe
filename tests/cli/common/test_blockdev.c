// SPDX-License-Identifier: MIT
/*
 * Block devices, through loop devices over files: both tools write a device
 * in place, byte for byte what they write to a regular file of the same
 * size; read it back (verify, check); see damage written through the device;
 * and refuse a device that is too small, naming it, with exit code 4 and
 * the device untouched.  Needs root and /dev/loop-control: where losetup
 * cannot attach a device the tests are skipped, and say so.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/helpers.h"

#define SALT16	  "000102030405060708090a0b0c0d0e0f"
#define SALT32	  SALT16 SALT16
#define UUID	  "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f0"
#define MAX_LOOPS 3

static char *dir;
static char loops[MAX_LOOPS][64];
static unsigned int nloops;

static void setup(void)
{
	dir = th_mkdtemp();
	nloops = 0;
}

static void teardown(void)
{
	for (unsigned int i = 0; i < nloops; i++)
		th_sh(NULL, NULL, "losetup -d %s", loops[i]);
	th_rmtree(dir);
	free(dir);
}

static char *p(const char *name)
{
	return th_path(dir, name);
}

/* A loop device over a new zero file of `size` bytes; skips the test when
 * this machine cannot attach one. */
static const char *loop_new(const char *name, uint64_t size)
{
	char *backing = p(name), *out = NULL, *err = NULL;
	int rc;

	cr_assert_lt(nloops, MAX_LOOPS);
	if (geteuid() != 0)
		cr_skip("loop devices need root");
	if (!th_have_cmd("losetup"))
		cr_skip("losetup is not installed (util-linux / mount)");
	cr_assert_eq(th_sh(NULL, NULL, "truncate -s %llu %s",
			   (unsigned long long)size, backing),
		     0);
	rc = th_sh(&out, &err, "losetup --find --show %s", backing);
	if (rc != 0 || strncmp(out, "/dev/", 5))
		cr_skip("cannot attach a loop device here: %s", err);
	out[strcspn(out, "\n")] = 0;
	snprintf(loops[nloops], sizeof(loops[0]), "%s", out);
	free(out);
	free(err);
	free(backing);
	return loops[nloops++];
}

static uint64_t size_of(const char *path)
{
	struct stat st;

	cr_assert_eq(stat(path, &st), 0, "%s", path);
	return (uint64_t)st.st_size;
}

/* The first `len` bytes of a and b are equal, and b holds only zeros after
 * them. */
static void expect_prefix(const char *a, const char *b, size_t len)
{
	size_t la, lb;
	uint8_t *x = th_read_file(a, &la), *y = th_read_file(b, &lb);

	cr_assert_geq(la, len);
	cr_assert_geq(lb, len);
	cr_expect_eq(memcmp(x, y, len), 0,
		     "%s differs from %s in the first %zu bytes", b, a, len);
	for (size_t i = len; i < lb; i++) {
		if (y[i]) {
			cr_expect_fail("%s: byte %zu after the image is %#x", b,
				       i, y[i]);
			break;
		}
	}
	free(x);
	free(y);
}

TestSuite(blockdev, .init = setup, .fini = teardown);

Test(blockdev, verity_hash_device)
{
	char *data = p("data.img"), *ref = p("ref.hash"), *out = NULL,
	     *err = NULL;
	const char *vt = th_tool("verity-tool"), *hdev, *ddev;
	char root[80] = "", root2[80] = "";
	int rc;

	/* 4 MiB: a three-level tree at 512-byte hash blocks */
	th_write_random_file(data, 4 << 20, 91);
	hdev = loop_new("hash.backing", 1 << 20);
	rc = th_sh(&out, &err,
		   "%s build --salt " SALT32 " --uuid " UUID
		   " --hash-block-size 512 %s %s | sed -n 's/^Root "
		   "hash:[[:space:]]*//p'",
		   vt, data, ref);
	cr_assert_eq(rc, 0, "%s", err);
	snprintf(root, sizeof(root), "%.64s", out);
	free(out);
	free(err);
	rc = th_sh(&out, &err,
		   "%s build --salt " SALT32 " --uuid " UUID
		   " --hash-block-size 512 %s %s | sed -n 's/^Root "
		   "hash:[[:space:]]*//p'",
		   vt, data, hdev);
	cr_assert_eq(rc, 0, "%s", err);
	snprintf(root2, sizeof(root2), "%.64s", out);
	free(out);
	free(err);
	cr_assert_eq(strlen(root), 64, "no root hash printed");
	cr_expect_str_eq(root2, root);
	/* the device keeps its size; the tree is what the file holds */
	cr_expect_eq(size_of(p("hash.backing")), 1 << 20);
	expect_prefix(ref, p("hash.backing"), (size_t)size_of(ref));

	rc = th_sh(NULL, &err, "%s verify %s %s %s", vt, data, hdev, root);
	cr_expect_eq(rc, 0, "verify with the hash device: %s", err);
	free(err);

	/* the data on a device as well, damaged through the device */
	ddev = loop_new("data.backing", 4 << 20);
	cr_assert_eq(th_sh(NULL, NULL, "dd if=%s of=%s bs=1M status=none", data,
			   ddev),
		     0);
	rc = th_sh(NULL, &err, "%s verify %s %s %s", vt, ddev, hdev, root);
	cr_expect_eq(rc, 0, "verify of data and hash devices: %s", err);
	free(err);
	cr_assert_eq(th_sh(NULL, NULL,
			   "printf '\\377' | dd of=%s bs=1 seek=1048577 "
			   "conv=notrunc,fsync status=none",
			   ddev),
		     0);
	rc = th_sh(&out, &err, "%s verify %s %s %s", vt, ddev, hdev, root);
	cr_expect_eq(rc, 2, "verify of a damaged data device: exit %d", rc);
	cr_expect(strstr(err, "256") != NULL, "data block 256 not reported: %s",
		  err);
	free(out);
	free(err);
	free(data);
	free(ref);
}

Test(blockdev, verity_device_too_small)
{
	char *data = p("data.img"), *err = NULL, *before, *after;
	const char *dev;
	char hex[65];
	int rc;

	th_write_random_file(data, 16 << 20, 92);
	dev = loop_new("small.backing", 64 << 10);
	th_sha256_file(p("small.backing"), hex);
	before = strdup(hex);
	rc = th_sh(NULL, &err, "%s build --salt - %s %s",
		   th_tool("verity-tool"), data, dev);
	cr_expect_eq(rc, 4, "exit %d: %s", rc, err);
	cr_expect(strstr(err, dev) != NULL, "message does not name %s: %s", dev,
		  err);
	th_sha256_file(p("small.backing"), hex);
	after = hex;
	cr_expect_str_eq(after, before, "the too small device was written");
	free(before);
	free(err);
	free(data);
}

Test(blockdev, integrity_format_in_place)
{
	const char *it = th_tool("integrity-tool"), *dev;
	char *payload = p("payload"), *ref = p("ref.img"), *err = NULL;
	const uint64_t size = 24 << 20;
	int rc;

	th_write_random_file(payload, 5 << 20, 93);
	dev = loop_new("dev.backing", size);
	/* the reference: a regular file of the same size, in place */
	cr_assert_eq(th_sh(NULL, NULL, "truncate -s %llu %s",
			   (unsigned long long)size, ref),
		     0);
	rc = th_sh(NULL, &err,
		   "%s format -q -I sha256 -s 4096 --salt " SALT16
		   " --data-from %s %s",
		   it, payload, ref);
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	rc = th_sh(NULL, &err,
		   "%s format -q -I sha256 -s 4096 --salt " SALT16
		   " --data-from %s %s",
		   it, payload, dev);
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	cr_expect(th_files_equal(ref, p("dev.backing")),
		  "the device differs from the same format of a file");

	rc = th_sh(NULL, &err, "%s check -I sha256 %s", it, dev);
	cr_expect_eq(rc, 0, "check of the device: %s", err);
	free(err);
	/* one data byte through the device: its sector must fail */
	cr_assert_eq(th_sh(NULL, NULL,
			   "printf '\\377' | dd of=%s bs=1 seek=%d "
			   "conv=notrunc,fsync status=none",
			   dev, 3 << 20),
		     0);
	rc = th_sh(NULL, &err, "%s check -I sha256 %s", it, dev);
	cr_expect_eq(rc, 2, "check of a damaged device: exit %d: %s", rc, err);
	free(err);
	rc = th_sh(NULL, &err, "%s recalculate -I sha256 %s", it, dev);
	cr_expect_eq(rc, 0, "recalculate of the device: %s", err);
	free(err);
	rc = th_sh(NULL, &err, "%s check -I sha256 %s", it, dev);
	cr_expect_eq(rc, 0, "check after recalculate: %s", err);
	free(err);
	free(payload);
	free(ref);
}

Test(blockdev, integrity_device_too_small)
{
	const char *it = th_tool("integrity-tool"), *dev;
	char *payload = p("payload"), *err = NULL, *before;
	char hex[65];
	int rc;

	th_write_random_file(payload, 8 << 20, 94);
	dev = loop_new("small.backing", 4 << 20);
	th_sha256_file(p("small.backing"), hex);
	before = strdup(hex);
	rc = th_sh(NULL, &err, "%s format -q --data-from %s %s", it, payload,
		   dev);
	cr_expect_eq(rc, 4, "exit %d: %s", rc, err);
	cr_expect(strstr(err, dev) != NULL, "message does not name %s: %s", dev,
		  err);
	cr_expect(strstr(err, "needs at least") &&
			  !strstr(err, "--device-size"),
		  "no size needed, or a suggestion to grow a device: %s", err);
	th_sha256_file(p("small.backing"), hex);
	cr_expect_str_eq(hex, before, "the too small device was written");
	free(err);
	/* a device cannot be grown */
	rc = th_sh(NULL, &err, "%s format -q --device-size 64M %s", it, dev);
	cr_expect_neq(rc, 0, "--device-size grew a block device");
	cr_expect(strstr(err, dev) != NULL, "message does not name %s: %s", dev,
		  err);
	th_sha256_file(p("small.backing"), hex);
	cr_expect_str_eq(hex, before, "the device was written");
	free(err);
	free(before);
	free(payload);
}
