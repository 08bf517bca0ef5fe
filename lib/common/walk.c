// SPDX-License-Identifier: MIT
/* The walk of every bulk pass: see walk.h. */
#include "lib/common/walk.h"

#include <errno.h>
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

static int run_chunk(void *ctx, unsigned int worker, uint64_t begin,
		     uint64_t end)
{
	struct run *r = ctx;
	struct dmt_walk *w = r->w;
	uint64_t item = r->pass->base + r->first + begin;
	int err;

	cur_item = item;
	/* -ECANCELED only stops dmt_parallel_for handing out more */
	if (dmt_walk_stopped(w))
		return -ECANCELED;
	err = r->pass->fn(r->pass->ctx, worker, r->first + begin,
			  r->first + end);
	if (err) {
		dmt_walk_fail(w, err, NULL, 0);
		return -ECANCELED;
	}
	return 0;
}

/* A window hook, as if it were the window's first item. */
static int hook(struct dmt_walk *w, const struct dmt_walk_pass *pass,
		int (*fn)(void *, uint64_t, uint64_t), uint64_t b0,
		uint64_t b1)
{
	cur_item = pass->base + b0;
	if (!fn || dmt_walk_stopped(w))
		return 0;
	return dmt_walk_fail(w, fn(pass->ctx, b0, b1), NULL, 0);
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

int dmt_walk_extents(struct dmt_file *f, uint64_t off, uint64_t end,
		     uint32_t bs, dmt_extent_fn fn, void *ctx)
{
	uint64_t pos = off, ds, de, hs, he;
	int err;

	while (pos < end) {
		err = dmt_file_next_data(f, pos, end, &ds, &de);
		if (err)
			return err;
		/* whole blocks inside the hole first */
		hs = ds >= end ? end : off + (ds - off) / bs * bs;
		if (hs < pos)
			hs = pos;
		if (hs > pos) {
			err = fn(ctx, pos, hs - pos, false);
			if (err)
				return err;
		}
		if (hs >= end)
			break;
		/* then the blocks the data extent touches */
		he = off + (de - off + bs - 1) / bs * bs;
		if (he <= hs)
			he = hs + bs;
		if (he > end)
			he = end;
		err = fn(ctx, hs, he - hs, true);
		if (err)
			return err;
		pos = he;
	}
	return 0;
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
