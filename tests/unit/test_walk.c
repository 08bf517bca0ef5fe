// SPDX-License-Identifier: MIT
/*
 * The walk of the bulk passes (suite "walk", lib/common/walk.c): hole
 * splitting and the prints of hole maps, data blocks hashed around holes
 * and zero blocks, zero-subtree digests, the memory budget's shares,
 * windows and their hooks, progress totals, cancellation in the middle of
 * a pass, and the first error in item order (with faults injected through
 * lib/common/testhooks.h).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dmt/hash.h>
#include <dmt/io.h>
#include "lib/common/testhooks.h"
#include "lib/common/walk.h"
#include "tests/support/helpers.h"

static char *dir;

static void setup(void)
{
	dir = th_mkdtemp();
}

static void teardown(void)
{
	dmt_io_fault_clear();
	th_rmtree(dir);
	free(dir);
}

/* ---- hole splitting ---- */

struct runs {
	uint64_t off[64], len[64];
	bool data[64];
	int n;
};

static int collect(void *ctx, uint64_t off, uint64_t len, bool data)
{
	struct runs *r = ctx;

	cr_assert_lt(r->n, 64);
	r->off[r->n] = off;
	r->len[r->n] = len;
	r->data[r->n] = data;
	r->n++;
	return 0;
}

static bool fs_has_holes(const char *path)
{
	int fd = open(path, O_RDONLY);
	off_t h = lseek(fd, 0, SEEK_HOLE);

	close(fd);
	return h == 0;
}

Test(walk, extents_split_holes, .init = setup, .fini = teardown)
{
	char *p = th_path(dir, "sparse");
	uint8_t blk[12288], *buf = malloc(4u << 20);
	struct dmt_file *f = NULL;
	struct runs r = { 0 };
	uint64_t pos, holes = 0;
	int fd, i;

	th_fill_random(blk, sizeof(blk), 1);
	fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);
	cr_assert_eq(ftruncate(fd, 4u << 20), 0);
	cr_assert_eq(pwrite(fd, blk, sizeof(blk), 1u << 20),
		     (ssize_t)sizeof(blk));
	cr_assert_eq(pwrite(fd, blk, 4096, (4u << 20) - 4096), 4096);
	fsync(fd);
	close(fd);
	cr_assert_eq(dmt_file_open(p, DMT_OPEN_READ, &f), 0);
	cr_assert_eq(dmt_pread_full(f, buf, 4u << 20, 0), 0);
	/* an offset off the block grid: holes are whole blocks from off */
	cr_assert_eq(dmt_walk_extents(f, 100, 4u << 20, 4096, collect, &r), 0);
	for (i = 0, pos = 100; i < r.n; i++) {
		cr_assert_eq(r.off[i], pos, "runs are contiguous, in order");
		cr_assert_gt(r.len[i], 0);
		pos += r.len[i];
		if (r.data[i])
			continue;
		holes += r.len[i];
		if (r.off[i] + r.len[i] < (4u << 20))
			cr_expect_eq(r.len[i] % 4096, 0,
				     "whole blocks of hole");
		for (uint64_t k = r.off[i]; k < r.off[i] + r.len[i]; k++)
			cr_assert_eq(buf[k], 0, "a hole run holds data at %lu",
				     (unsigned long)k);
	}
	cr_assert_eq(pos, 4u << 20, "the runs cover the range");
	if (fs_has_holes(p))
		cr_expect_gt(holes, (2u << 20), "holes were found");
	/* the written blocks fall in data runs */
	for (i = 0; i < r.n; i++)
		if (r.off[i] <= (1u << 20) && r.off[i] + r.len[i] > (1u << 20))
			cr_expect(r.data[i]);
	cr_expect(r.data[r.n - 1], "the last block is data");
	cr_expect(!dmt_walk_all_data(f, 0, 4u << 20) || !fs_has_holes(p));
	cr_expect(dmt_walk_all_data(f, 1u << 20, (1u << 20) + 12288));
	dmt_file_close(f);
	free(buf);
	free(p);
}

static int no_run(void *ctx, uint64_t off, uint64_t len, bool data)
{
	return 0;
}

/* A 64 KiB file: data, a 4 KiB hole, data, then a hole to the end. */
static char *small_holes_file(struct dmt_file **f)
{
	char *p = th_path(dir, "inner");
	uint8_t blk[4096];
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);

	th_fill_random(blk, sizeof(blk), 5);
	cr_assert_eq(ftruncate(fd, 65536), 0);
	cr_assert_eq(pwrite(fd, blk, 4096, 0), 4096);
	cr_assert_eq(pwrite(fd, blk, 4096, 8192), 4096);
	fsync(fd);
	close(fd);
	cr_assert_eq(dmt_file_open(p, DMT_OPEN_READ, f), 0);
	return p;
}

/* A hole inside a big block leaves the block data but is in the print,
 * and prints of a range add up however it is cut at block edges. */
Test(walk, extents_see_holes_inside_blocks, .init = setup, .fini = teardown)
{
	struct dmt_hole_print whole = { 0 }, parts = { 0 }, by_hand = { 0 };
	struct dmt_file *f = NULL;
	struct runs r = { 0 };
	char *p = small_holes_file(&f);

	if (!fs_has_holes(p) && lseek(dmt_file_fd(f), 4096, SEEK_HOLE) != 4096)
		cr_skip("the file system reports no holes");
	cr_assert_eq(dmt_walk_extents_print(f, 0, 65536, 32768, collect, &r,
					    &whole), 0);
	cr_assert_eq(r.n, 2);
	cr_expect(r.data[0] && r.off[0] == 0 && r.len[0] == 32768);
	cr_expect(!r.data[1] && r.off[1] == 32768 && r.len[1] == 32768);
	dmt_hole_print_add(&by_hand, 4096, 4096);
	dmt_hole_print_add(&by_hand, 12288, 65536 - 12288);
	cr_expect(dmt_hole_print_equal(&whole, &by_hand),
		  "print %lu/%lu", (unsigned long)whole.bytes,
		  (unsigned long)whole.sum);
	for (uint64_t at = 0; at < 65536; at += 4096)
		cr_assert_eq(dmt_walk_extents_print(f, at, at + 4096, 4096,
						    no_run, NULL, &parts), 0);
	cr_expect(dmt_hole_print_equal(&whole, &parts));
	/* as many hole bytes elsewhere: another print */
	by_hand = (struct dmt_hole_print){ 0 };
	dmt_hole_print_add(&by_hand, 0, 4096);
	dmt_hole_print_add(&by_hand, 12288, 65536 - 12288);
	cr_expect(!dmt_hole_print_equal(&whole, &by_hand));
	dmt_file_close(f);
	free(p);
}

/* dmt_walk_hash_blocks == reading and hashing every block (holes, a
 * written zero block, a last block past the size zero-padded). */
Test(walk, hash_blocks_around_holes_and_zeros, .init = setup,
     .fini = teardown)
{
	struct dmt_hasher_params hp = { .alg = "sha256", .msg_size = 4096 };
	uint8_t *io = aligned_alloc(4096, 16 * 4096), *want = malloc(16 * 32);
	uint8_t *got = malloc(16 * 32), *blk = calloc(1, 4096), zd[32];
	const uint8_t *msgs[16];
	uint8_t dig[16 * 32];
	struct dmt_hasher *h;
	struct dmt_file *f = NULL;
	char *p = small_holes_file(&f);
	uint64_t size = 65536 - 100;
	int fd = open(p, O_RDWR);

	/* a zero block written over data, and the size cut short */
	cr_assert_eq(pwrite(fd, blk, 4096, 8192), 4096);
	cr_assert_eq(ftruncate(fd, (off_t)size), 0);
	close(fd);
	cr_assert_eq(dmt_hasher_new(&hp, &h, NULL), 0);
	cr_assert_eq(dmt_zero_tree(h, 4096, NULL, 0, 32, 0, 0, 0, zd), 0);
	for (unsigned int i = 0; i < 16; i++) {
		size_t have = i * 4096 + 4096 > size ? size - i * 4096 : 4096;

		memset(blk, 0, 4096);
		cr_assert_eq(dmt_pread_full(f, blk, have, i * 4096), 0);
		cr_assert_eq(dmt_hasher_digest_strided(h, 1, blk, 4096, NULL,
						       want + i * 32), 0);
	}
	for (unsigned int split = 1; split <= 16; split *= 4) {
		struct dmt_walk_blocks wb = {
			.f = f, .size = size, .bs = 4096, .ds = 32,
			.zero_digest = zd, .h = h, .io = io, .msgs = msgs,
			.dig = dig };

		for (unsigned int b = 0; b < 16; b += split)
			cr_assert_eq(dmt_walk_hash_blocks(&wb, b, b + split,
							  got + b * 32), 0);
		cr_assert_eq(memcmp(got, want, 16 * 32), 0, "split %u", split);
		/* block 2 (written zeros) at least, the holes if seen */
		cr_expect_geq(wb.zero_blocks, 1);
		cr_expect(!wb.read_failed);
	}
	dmt_hasher_free(h);
	dmt_file_close(f);
	free(io);
	free(want);
	free(got);
	free(blk);
	free(p);
}

/* z[i + 1] is the digest of a block of per slots of z[i], zero-padded
 * (slots wider than the digest, as verity format 1 pads them). */
Test(walk, zero_tree_digests)
{
	struct dmt_hasher_params hp = { .alg = "sha256", .msg_size = 1024 };
	struct dmt_hasher *h;
	uint8_t z[4 * 32], blk[1024], d[32];

	cr_assert_eq(dmt_hasher_new(&hp, &h, NULL), 0);
	cr_assert_eq(dmt_zero_tree(h, 1024, h, 1024, 32, 40, 25, 3, z), 0);
	memset(blk, 0, sizeof(blk));
	cr_assert_eq(dmt_hasher_digest_strided(h, 1, blk, 1024, NULL, d), 0);
	cr_expect_eq(memcmp(d, z, 32), 0);
	for (int i = 0; i < 3; i++) {
		memset(blk, 0, sizeof(blk));
		for (int k = 0; k < 25; k++)
			memcpy(blk + k * 40, z + i * 32, 32);
		cr_assert_eq(dmt_hasher_digest_strided(h, 1, blk, 1024, NULL,
						       d), 0);
		cr_expect_eq(memcmp(d, z + (i + 1) * 32, 32), 0, "level %d",
			     i + 1);
	}
	dmt_hasher_free(h);
}

Test(walk, budget_shares)
{
	/* a thread's share, at least a block, at most an item */
	cr_expect_eq(dmt_walk_share(32u << 20, 2, 4096, 4096, 1u << 20),
		     1u << 20);
	cr_expect_eq(dmt_walk_share(32u << 20, 256, 4096, 4096, 1u << 20),
		     128u << 10);
	cr_expect_eq(dmt_walk_share(32u << 20, 100000, 65536, 65536,
				    1u << 20), 65536);
	cr_expect_eq(dmt_walk_share(32u << 20, 3, 4096, 4096, UINT64_MAX),
		     ((32u << 20) / 3) & ~4095ull);
	cr_expect_eq(dmt_walk_share(32u << 20, 0, 1, 1, UINT64_MAX),
		     32u << 20);
}

/* ---- windows, hand-out and progress ---- */

#define N_ITEMS 1000

struct seen {
	struct dmt_walk *w;
	int visits[N_ITEMS];
	uint64_t windows, last_end, done_before;
	int fail_at[2], fail_err[2];
	int sleep_us_at;	/* this item waits before it runs */
	uint64_t window;	/* 0: one window */
	uint64_t progress_calls, last_done, cancel_after;
	bool after_cancel;
	uint64_t unfinished;	/* dmt_walk_unfinished() after the run */
};

static int visit(void *ctx, unsigned int worker, uint64_t b, uint64_t e)
{
	struct seen *s = ctx;

	cr_assert_lt(worker, 4);
	for (uint64_t i = b; i < e; i++) {
		if ((int)i == s->sleep_us_at)
			usleep(20000);
		for (int k = 0; k < 2; k++)
			if ((int)i == s->fail_at[k])
				return s->fail_err[k];
		__atomic_fetch_add(&s->visits[i], 1, __ATOMIC_RELAXED);
		if (dmt_walk_progress(s->w, 512))
			return -EINTR;
	}
	return 0;
}

static int win_begin(void *ctx, uint64_t b, uint64_t e)
{
	struct seen *s = ctx;

	cr_assert_eq(b, s->last_end, "windows in order, no gap");
	if (s->window)
		cr_assert_leq(e - b, s->window);
	for (uint64_t i = b; i < e; i++)
		cr_assert_eq(s->visits[i], 0, "item run before its window");
	return 0;
}

static int win_end(void *ctx, uint64_t b, uint64_t e)
{
	struct seen *s = ctx;

	for (uint64_t i = b; i < e; i++)
		cr_assert_eq(s->visits[i], 1, "window ended before item %lu",
			     (unsigned long)i);
	s->windows++;
	s->last_end = e;
	return 0;
}

static int count_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct seen *s = ctx;

	cr_assert(!s->after_cancel, "progress after cancellation");
	cr_assert_geq(done, s->last_done);
	cr_assert_eq(total, N_ITEMS * 512ull);
	s->last_done = done;
	s->progress_calls++;
	if (s->cancel_after && done >= s->cancel_after) {
		s->after_cancel = true;
		return 1;
	}
	return 0;
}

static void run(struct seen *s, unsigned int threads, int *ret)
{
	struct dmt_walk w;
	struct dmt_progress p = { .fn = count_progress, .ctx = s };
	struct dmt_walk_pass pass = { .items = N_ITEMS, .chunk = 7,
				      .window = s->window, .fn = visit,
				      .window_begin = win_begin,
				      .window_end = win_end, .ctx = s };

	dmt_walk_init(&w, threads, &p, N_ITEMS * 512ull);
	w.step = 4096;
	s->w = &w;
	*ret = dmt_walk_run(&w, &pass);
	s->unfinished = dmt_walk_unfinished(&w);
	if (s->after_cancel)
		cr_expect_eq(dmt_walk_progress(&w, 1), -EINTR,
			     "still cancelled afterwards");
	dmt_walk_destroy(&w);
}

Test(walk, windows_and_progress_totals)
{
	for (unsigned int threads = 1; threads <= 4; threads++) {
		struct seen *s = calloc(1, sizeof(*s));
		int ret;

		s->fail_at[0] = s->fail_at[1] = s->sleep_us_at = -1;
		s->window = 100;
		run(s, threads, &ret);
		cr_assert_eq(ret, 0);
		cr_expect_eq(s->windows, 10);
		for (int i = 0; i < N_ITEMS; i++)
			cr_assert_eq(s->visits[i], 1, "item %d", i);
		cr_expect_eq(s->last_done, N_ITEMS * 512ull,
			     "the last report is the total");
		/* every 4096 bytes, and the end */
		cr_expect_eq(s->progress_calls, N_ITEMS * 512 / 4096);
		cr_expect_eq(s->unfinished, UINT64_MAX, "every item finished");
		free(s);
	}
}

Test(walk, cancel_mid_walk)
{
	for (unsigned int threads = 1; threads <= 4; threads += 3) {
		struct seen *s = calloc(1, sizeof(*s));
		uint64_t ran = 0;
		int ret;

		s->fail_at[0] = s->fail_at[1] = s->sleep_us_at = -1;
		s->cancel_after = 300 * 512;
		s->window = 100;
		run(s, threads, &ret);
		cr_assert_eq(ret, -EINTR);
		for (int i = 0; i < N_ITEMS; i++)
			ran += s->visits[i];
		cr_expect_geq(ran, 300);
		cr_expect_lt(ran, 500, "the walk went on after the cancel");
		cr_expect_lt(s->windows, 5);
		/* where to resume: everything below it ran */
		cr_expect_leq(s->unfinished, ran);
		for (uint64_t i = 0; i < s->unfinished; i++)
			cr_assert_eq(s->visits[i], 1, "item %lu below the "
				     "unfinished one did not run",
				     (unsigned long)i);
		free(s);
	}
}

Test(walk, first_error_in_item_order)
{
	/* item 800 fails first in time (item 370 waits), item 370 wins */
	for (int round = 0; round < 6; round++) {
		struct seen *s = calloc(1, sizeof(*s));
		int ret;

		s->fail_at[0] = 800;
		s->fail_err[0] = -EIO;
		s->fail_at[1] = 370;
		s->fail_err[1] = -ENOSPC;
		s->sleep_us_at = 370;
		/* one window, so item 800 can fail before 370 does */
		run(s, 1 + round % 4, &ret);
		cr_assert_eq(ret, -ENOSPC, "round %d: %d", round, ret);
		for (int i = 0; i < 370; i++)
			cr_assert_eq(s->visits[i], 1,
				     "item %d below the failure did not run", i);
		cr_assert_eq(s->visits[800], 0);
		/* the failing item's chunk (7 items) may not have finished */
		cr_expect(s->unfinished <= 370 && s->unfinished > 370 - 7,
			  "resume at the failure's chunk, not %lu",
			  (unsigned long)s->unfinished);
		free(s);
	}
}

/* ---- the file of the first I/O error, with injected faults ---- */

struct reader {
	struct dmt_walk *w;
	struct dmt_file *f;
	uint8_t buf[4][4096];
};

static int read_item(void *ctx, unsigned int worker, uint64_t b, uint64_t e)
{
	struct reader *r = ctx;

	for (uint64_t i = b; i < e; i++) {
		int err = dmt_pread_full(r->f, r->buf[worker], 4096, i * 4096);

		if (err)
			return dmt_walk_fail(r->w, err, r->f, 42);
	}
	return 0;
}

Test(walk, injected_fault_names_the_file, .init = setup, .fini = teardown)
{
	char *p = th_path(dir, "victim");
	struct dmt_file *f = NULL;

	th_write_random_file(p, 64 * 4096, 2);
	cr_assert_eq(dmt_file_open(p, DMT_OPEN_READ, &f), 0);
	for (unsigned int threads = 1; threads <= 4; threads++) {
		struct reader *r = calloc(1, sizeof(*r));
		struct dmt_walk w;
		struct dmt_walk_pass pass = { .items = 64, .fn = read_item,
					      .ctx = r };
		int ret;

		r->f = f;
		r->w = &w;
		dmt_walk_init(&w, threads, NULL, 0);
		dmt_io_fault_set("victim", DMT_IO_READ, 10, EIO, false);
		ret = dmt_walk_run(&w, &pass);
		dmt_io_fault_clear();
		cr_expect_eq(ret, -EIO);
		cr_expect_eq(dmt_walk_error_file(&w), f);
		cr_expect_eq(dmt_walk_error_code(&w), 42);
		dmt_walk_destroy(&w);
		free(r);
	}
	dmt_file_close(f);
	free(p);
}

Test(walk, same_file_rule, .init = setup, .fini = teardown)
{
	char *a = th_path(dir, "a"), *b = th_path(dir, "b"),
	     *l = th_path(dir, "l");
	struct dmt_file *fa = NULL, *fb = NULL, *fl = NULL;

	th_write_random_file(a, 4096, 3);
	th_write_random_file(b, 4096, 4);
	cr_assert_eq(link(a, l), 0);
	cr_assert_eq(dmt_file_open(a, DMT_OPEN_READ, &fa), 0);
	cr_assert_eq(dmt_file_open(b, DMT_OPEN_READ, &fb), 0);
	cr_assert_eq(dmt_file_open(l, DMT_OPEN_READ, &fl), 0);
	cr_expect(dmt_file_same(fa, fl));
	cr_expect(!dmt_file_same(fa, fb));
	cr_expect(dmt_same_file(a, l));
	cr_expect(!dmt_same_file(a, b));
	dmt_file_close(fa);
	dmt_file_close(fb);
	dmt_file_close(fl);
	free(a);
	free(b);
	free(l);
}
