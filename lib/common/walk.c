// SPDX-License-Identifier: MIT
/* The walk of every bulk pass: see walk.h. */
#include "lib/common/walk.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <dmt/threads.h>

/* The item this thread is running (walk-wide number), for dmt_walk_fail()
 * and dmt_walk_stopped(); 0 outside a pass. */
static __thread uint64_t cur_item;

void dmt_walk_init(struct dmt_walk *w, unsigned int threads,
		   const struct dmt_progress *progress, uint64_t total)
{
	memset(w, 0, sizeof(*w));
	w->threads = threads ? threads : dmt_default_threads();
	if (!w->threads)
		w->threads = 1;
	if (progress)
		w->progress = *progress;
	w->total = total;
	w->step = DMT_WALK_PROGRESS_STEP;
	w->stop_at = UINT64_MAX;
	w->unfinished = UINT64_MAX;
	pthread_mutex_init(&w->lock, NULL);
}

void dmt_walk_destroy(struct dmt_walk *w)
{
	pthread_mutex_destroy(&w->lock);
}

/* Under the lock: the failure at item wins when no lower one is known. */
static void record(struct dmt_walk *w, uint64_t item, int err,
		   const struct dmt_file *f, int code)
{
	if (w->failed && w->err_item <= item)
		return;
	w->failed = true;
	w->err = err;
	w->err_item = item;
	w->err_file = err == -EINTR || err == -ENOMEM ? NULL : f;
	w->err_code = w->err_file ? code : 0;
	if (item < w->stop_at)
		__atomic_store_n(&w->stop_at, item, __ATOMIC_RELAXED);
}

int dmt_walk_fail(struct dmt_walk *w, int err, const struct dmt_file *f,
		  int code)
{
	if (!err)
		return 0;
	pthread_mutex_lock(&w->lock);
	record(w, cur_item, err, f, code);
	pthread_mutex_unlock(&w->lock);
	return err;
}

bool dmt_walk_stopped(struct dmt_walk *w)
{
	return cur_item >= __atomic_load_n(&w->stop_at, __ATOMIC_RELAXED);
}

int dmt_walk_progress(struct dmt_walk *w, uint64_t bytes)
{
	int ret = 0;

	pthread_mutex_lock(&w->lock);
	w->done += bytes;
	if (w->cancelled) {
		ret = -EINTR;
	} else if (w->progress.fn && (w->done - w->reported >= w->step ||
				      w->done >= w->total)) {
		w->reported = w->done;
		if (w->progress.fn(w->progress.ctx, w->done, w->total)) {
			/* everything stops, the error is -EINTR unless a
			 * lower item failed already */
			w->cancelled = true;
			record(w, cur_item, -EINTR, NULL, 0);
			__atomic_store_n(&w->stop_at, 0, __ATOMIC_RELAXED);
			ret = -EINTR;
		}
	}
	pthread_mutex_unlock(&w->lock);
	return ret;
}

uint64_t dmt_walk_unfinished(const struct dmt_walk *w)
{
	return w->unfinished;
}

const struct dmt_file *dmt_walk_error_file(const struct dmt_walk *w)
{
	return w->failed ? w->err_file : NULL;
}

int dmt_walk_error_code(const struct dmt_walk *w)
{
	return w->failed ? w->err_code : 0;
}

struct run {
	struct dmt_walk *w;
	const struct dmt_walk_pass *pass;
	uint64_t first;			/* first item of the window */
};

static void note_unfinished(struct dmt_walk *w, uint64_t item)
{
	pthread_mutex_lock(&w->lock);
	if (item < w->unfinished)
		w->unfinished = item;
	pthread_mutex_unlock(&w->lock);
}

static int run_chunk(void *ctx, unsigned int worker, uint64_t begin,
		     uint64_t end)
{
	struct run *r = ctx;
	struct dmt_walk *w = r->w;
	uint64_t item = r->pass->base + r->first + begin;
	int err;

	cur_item = item;
	if (!dmt_walk_stopped(w)) {
		err = r->pass->fn(r->pass->ctx, worker, r->first + begin,
				  r->first + end);
		if (!err)
			return 0;
		dmt_walk_fail(w, err, NULL, 0);
	}
	note_unfinished(w, item);
	/* only stops dmt_parallel_for handing out more */
	return -ECANCELED;
}

/* A window hook, as if it were the window's first item. */
static int hook(struct dmt_walk *w, const struct dmt_walk_pass *pass,
		int (*fn)(void *, uint64_t, uint64_t), uint64_t b0,
		uint64_t b1)
{
	int err;

	cur_item = pass->base + b0;
	if (!fn || dmt_walk_stopped(w))
		return 0;
	err = dmt_walk_fail(w, fn(pass->ctx, b0, b1), NULL, 0);
	if (err)
		note_unfinished(w, cur_item);
	return err;
}

int dmt_walk_run(struct dmt_walk *w, const struct dmt_walk_pass *pass)
{
	uint64_t chunk = pass->chunk ? pass->chunk : 1;
	uint64_t window = pass->window ? pass->window : pass->items;
	unsigned int threads = pass->threads ? pass->threads : w->threads;
	struct run r = { .w = w, .pass = pass };
	uint64_t next, n;

	for (next = 0; next < pass->items && !w->failed; next += n) {
		n = pass->items - next < window ? pass->items - next : window;
		if (hook(w, pass, pass->window_begin, next, next + n))
			break;
		r.first = next;
		dmt_parallel_for(threads, n, chunk, run_chunk, &r);
		cur_item = pass->base + next;
		if (w->failed)
			break;
		if (hook(w, pass, pass->window_end, next, next + n))
			break;
	}
	cur_item = 0;
	return w->failed ? w->err : 0;
}

uint64_t dmt_walk_share(uint64_t budget, uint64_t parts, uint64_t align,
			uint64_t least, uint64_t most)
{
	uint64_t v = (budget / (parts ? parts : 1)) & ~(align - 1);

	if (v > most)
		v = most;
	return v < least ? least : v;
}

/* ---- hole maps ---- */

void dmt_hole_print_add(struct dmt_hole_print *p, uint64_t off, uint64_t len)
{
	uint64_t last = off + len - 1;

	if (!len)
		return;
	p->bytes += len;
	/* off + ... + last, mod 2^64: halve the even factor first */
	p->sum += len % 2 ? len * ((off + last) / 2) : (len / 2) * (off + last);
}

void dmt_hole_print_merge(struct dmt_hole_print *p,
			  const struct dmt_hole_print *q)
{
	p->bytes += q->bytes;
	p->sum += q->sum;
}

bool dmt_hole_print_equal(const struct dmt_hole_print *a,
			  const struct dmt_hole_print *b)
{
	return a->bytes == b->bytes && a->sum == b->sum;
}

/* The blocks of [off, end) cut into runs: the pending data run is handed
 * out when a whole hole block follows it, or at the end. */
struct cutter {
	uint64_t off, end, bs;
	uint64_t ps, pe;		/* pending data [ps, pe); pe: frontier */
	bool pending;
	dmt_extent_fn fn;
	void *ctx;
};

static uint64_t block_down(const struct cutter *c, uint64_t v)
{
	return c->off + (v - c->off) / c->bs * c->bs;
}

static uint64_t block_up(const struct cutter *c, uint64_t v)
{
	uint64_t up = c->off + (v - c->off + c->bs - 1) / c->bs * c->bs;

	/* no overflow past end: a partial last block ends there */
	return up > c->end || up < v ? c->end : up;
}

/* Bytes [ds, de) hold data. */
static int cut_data(struct cutter *c, uint64_t ds, uint64_t de)
{
	uint64_t hs = block_down(c, ds), he = block_up(c, de);
	int err;

	if (!c->pending || hs > c->pe) {
		if (c->pending) {
			err = c->fn(c->ctx, c->ps, c->pe - c->ps, true);
			if (err)
				return err;
		}
		if (hs > c->pe) {
			err = c->fn(c->ctx, c->pe, hs - c->pe, false);
			if (err)
				return err;
		}
		c->ps = hs < c->pe ? c->pe : hs;
		c->pending = true;
	}
	if (he > c->pe)
		c->pe = he;
	return 0;
}

int dmt_walk_extents_print(struct dmt_file *f, uint64_t off, uint64_t end,
			   uint64_t bs, dmt_extent_fn fn, void *ctx,
			   struct dmt_hole_print *print)
{
	struct cutter c = { .off = off, .end = end, .bs = bs ? bs : 1,
			    .ps = off, .pe = off, .fn = fn, .ctx = ctx };
	uint64_t pos = off, ds, de;
	int err;

	while (pos < end) {
		err = dmt_file_next_data(f, pos, end, &ds, &de);
		if (err)
			return err;
		/* what no file system says (a device that ignores the
		 * offset): data from here on */
		if (ds < pos)
			ds = pos, de = end;
		else if (ds < end && de <= ds)
			de = end;
		if (print)
			dmt_hole_print_add(print, pos, ds - pos);
		if (ds >= end)
			break;
		err = cut_data(&c, ds, de);
		if (err)
			return err;
		/* from the end of this extent: a hole inside a block is
		 * looked at too */
		pos = de;
	}
	if (c.pending) {
		err = fn(ctx, c.ps, c.pe - c.ps, true);
		if (err)
			return err;
	}
	return c.pe < end ? fn(ctx, c.pe, end - c.pe, false) : 0;
}

int dmt_walk_extents(struct dmt_file *f, uint64_t off, uint64_t end,
		     uint64_t bs, dmt_extent_fn fn, void *ctx)
{
	return dmt_walk_extents_print(f, off, end, bs, fn, ctx, NULL);
}

bool dmt_walk_all_data(struct dmt_file *f, uint64_t off, uint64_t end)
{
	uint64_t ds, de;

	if (off >= end)
		return true;
	if (dmt_file_next_data(f, off, end, &ds, &de))
		return false;
	return ds == off && de >= end;
}

/* ---- data blocks around holes and zero blocks ---- */

static bool block_is_zero(const uint8_t *p, size_t len)
{
	const uint64_t *q = (const uint64_t *)(const void *)p;
	size_t i, n = len / 8;

	if (q[0] | q[n - 1])
		return false;
	for (i = 0; i + 8 <= n; i += 8) {
		if (q[i] | q[i + 1] | q[i + 2] | q[i + 3] | q[i + 4] |
		    q[i + 5] | q[i + 6] | q[i + 7])
			return false;
	}
	for (; i < n; i++)
		if (q[i])
			return false;
	return true;
}

static void put_zero_digests(struct dmt_walk_blocks *wb, uint8_t *out,
			     uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		memcpy(out + i * wb->ds, wb->zero_digest, wb->ds);
	wb->zero_blocks += n;
}

/* Blocks [b0, b1) that may hold data: read, hash the non-zero ones in
 * one call. */
static int hash_run(struct dmt_walk_blocks *wb, uint64_t b0, uint64_t b1,
		    uint8_t *out)
{
	size_t bs = wb->bs, ds = wb->ds, n = (size_t)(b1 - b0), i, k, nz = 0;
	uint64_t off = b0 * bs, len = n * bs, have = len;
	int err;

	if (wb->size < off + len)
		have = wb->size > off ? wb->size - off : 0;
	err = dmt_pread_full(wb->f, wb->io, (size_t)have, off);
	if (err) {
		wb->read_failed = true;
		return err;
	}
	memset(wb->io + have, 0, (size_t)(len - have));
	for (i = 0; i < n; i++) {
		if (!block_is_zero(wb->io + i * bs, bs))
			wb->msgs[nz++] = wb->io + i * bs;
	}
	if (nz == n)
		return dmt_hasher_digest_strided(wb->h, n, wb->io, bs, NULL,
						 out);
	if (nz) {
		err = dmt_hasher_digest(wb->h, nz, wb->msgs, NULL, wb->dig);
		if (err)
			return err;
	}
	for (i = 0, k = 0; i < n; i++) {
		if (k < nz && wb->msgs[k] == wb->io + i * bs)
			memcpy(out + i * ds, wb->dig + k++ * ds, ds);
		else
			put_zero_digests(wb, out + i * ds, 1);
	}
	return 0;
}

struct blocks_run {
	struct dmt_walk_blocks *wb;
	uint64_t b0;
	uint8_t *out;
};

/* One run of dmt_walk_hash_blocks: a hole or blocks that may hold data. */
static int blocks_run(void *ctx, uint64_t off, uint64_t len, bool data)
{
	struct blocks_run *r = ctx;
	struct dmt_walk_blocks *wb = r->wb;
	uint64_t hs = off / wb->bs, he = (off + len + wb->bs - 1) / wb->bs;
	uint8_t *out = r->out + (hs - r->b0) * wb->ds;

	if (data)
		return hash_run(wb, hs, he, out);
	put_zero_digests(wb, out, he - hs);
	return 0;
}

int dmt_walk_hash_blocks(struct dmt_walk_blocks *wb, uint64_t b0, uint64_t b1,
			 uint8_t *out)
{
	struct blocks_run r = { .wb = wb, .b0 = b0, .out = out };

	return dmt_walk_extents_print(wb->f, b0 * wb->bs, b1 * wb->bs, wb->bs,
				      blocks_run, &r, &wb->holes);
}

void dmt_zero_tree_block(uint8_t *block, uint32_t hbs, const uint8_t *digest,
			 uint32_t ds, uint32_t slot, uint32_t per)
{
	memset(block, 0, hbs);
	for (uint32_t i = 0; i < per; i++)
		memcpy(block + (size_t)i * slot, digest, ds);
}

int dmt_zero_tree(struct dmt_hasher *h_data, uint32_t dbs,
		  struct dmt_hasher *h_hash, uint32_t hbs, uint32_t ds,
		  uint32_t slot, uint32_t per, unsigned int n, uint8_t *z)
{
	uint8_t *block = calloc(1, dbs > hbs ? dbs : hbs);
	int err;

	if (!block)
		return -ENOMEM;
	err = dmt_hasher_digest_strided(h_data, 1, block, dbs, NULL, z);
	for (unsigned int i = 0; !err && i < n; i++) {
		dmt_zero_tree_block(block, hbs, z + (size_t)i * ds, ds, slot,
				    per);
		err = dmt_hasher_digest_strided(h_hash, 1, block, hbs, NULL,
						z + (size_t)(i + 1) * ds);
	}
	free(block);
	return err;
}
