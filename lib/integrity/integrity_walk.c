// SPDX-License-Identifier: MIT
/*
 * The bulk pass of dm-integrity format / check / recalculate, and the
 * superblock and journal transfers they share.
 *
 * The logical device is cut into units of up to 16 MiB that never cross an
 * interleave area, so a unit's tags are one contiguous byte range: each
 * worker reads a unit's data in large chunks, hashes whole chunks through
 * the engine, and writes (or compares) the unit's tags with one transfer.
 * Holes (in the payload, the image or the data device) are never read:
 * their tags come from a shared zero block, which is what the kernel's
 * wipe produces.  The workers share one memory budget
 * (DMT_WALK_MEM_BUDGET): units and chunks are as large as a worker's
 * share allows (at most 16 MiB and 4 MiB), and there are never more
 * workers than the budget holds with the smallest units.
 */
#include "lib/integrity/integrity_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dmt/hash.h>
#include <dmt/io.h>
#include <dmt/threads.h>

#include "lib/common/file.h"

#define UNIT_SECTORS_MAX 32768		/* 16 MiB of data per unit */
#define UNIT_BYTES_MIN (64u << 10)	/* data of the smallest unit */
#define UNIT_TAG_BYTES_MAX (4u << 20)
#define ZERO_BYTES (1u << 20)
#define JOURNAL_BATCH_BYTES (4u << 20)
#define IO_WORKERS_PER_THREAD 2

/* The first failing transfer of a walk (in unit order) is the reason. */
static int io_fail(struct op *op, int err, const struct dmt_file *f,
		   int code)
{
	return dmt_walk_fail(&op->walk, err, f, code);
}

int dmt_integrity_why(struct dmt_integrity_result *r, int err, int code,
		      const struct dmt_file *f, const char *field,
		      uint64_t value)
{
	if (err && r && !DMT_INTEGRITY_REASON(r)->code)
		*DMT_INTEGRITY_REASON(r) = (struct dmt_reason){
			.code = code,
			.field = field,
			.value = value,
			.path = f ? dmt_file_path(f) : NULL};
	return err;
}

/* ---- small helpers ---- */

int dmt_integrity_read_sector0(struct dmt_file *f, uint8_t sector0[512])
{
	return dmt_pread_full(f, sector0, 512, 0);
}

/* Writes the 4096-byte superblock area (MAC'ed when needed). */
int dmt_integrity_write_sb(struct dmt_file *f, struct dmt_integrity_sb *sb,
			   const struct dmt_integrity_mac *mac, bool meta_dev)
{
	uint8_t area[DMT_INTEGRITY_SB_BYTES];
	int err;

	sb->version = dmt_integrity_sb_version(sb->flags, meta_dev, false);
	memset(area, 0, sizeof(area));
	dmt_integrity_sb_encode(sb, area);
	if ((sb->flags & DMT_INTEGRITY_SB_FIXED_HMAC) &&
	    (sb->flags & DMT_INTEGRITY_SB_HAVE_JOURNAL_MAC)) {
		err = dmt_integrity_sb_mac_write(mac, area);
		if (err)
			return err;
	}
	return dmt_pwrite_full(f, area, sizeof(area), 0);
}

struct zero_ctx {
	struct dmt_file *f;
	const uint8_t *zero;
};

/* Punches (or, where it can't, writes zeros over) one data extent. */
static int zero_extent(void *ctx, uint64_t off, uint64_t len, bool data)
{
	struct zero_ctx *z = ctx;
	struct dmt_file *f = z->f;
	int mode = FALLOC_FL_KEEP_SIZE | (dmt_file_is_blockdev(f) ?
					  FALLOC_FL_ZERO_RANGE :
					  FALLOC_FL_PUNCH_HOLE);
	uint64_t end = off + len;
	int err;

	if (!data || !fallocate(f->fd, mode, (off_t)off, (off_t)len))
		return 0;
	while (off < end) {
		size_t n = end - off < ZERO_BYTES ? (size_t)(end - off) :
						    ZERO_BYTES;

		err = dmt_pwrite_full(f, z->zero, n, off);
		if (err)
			return err;
		off += n;
	}
	return 0;
}

/* Zeroes [off, off+len) of a file, leaving holes alone. */
static int zero_range(struct dmt_file *f, uint64_t off, uint64_t len,
		      const uint8_t *zero)
{
	struct zero_ctx z = { .f = f, .zero = zero };

	return dmt_walk_extents(f, off, off + len, 1, zero_extent, &z);
}

static void record_sector(uint64_t *list, size_t *n, uint64_t s)
{
	size_t i, k = *n;

	/* keep the DMT_INTEGRITY_REPORT_MAX smallest, sorted */
	if (k == DMT_INTEGRITY_REPORT_MAX && s >= list[k - 1])
		return;
	if (k < DMT_INTEGRITY_REPORT_MAX)
		k++;
	for (i = k - 1; i > 0 && list[i - 1] > s; i--)
		list[i] = list[i - 1];
	list[i] = s;
	*n = k;
}

static bool all_filler(const uint8_t *tag, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (tag[i] != DMT_INTEGRITY_DISCARD_FILLER)
			return false;
	return true;
}

/* ---- the per-unit walk ---- */

static int worker_init(struct op *op, struct worker *w)
{
	size_t tag_bytes = (size_t)op->unit_blocks * op->g->tag_size;
	int err;

	err = dmt_integrity_tagger_clone(op->tagger, &w->t);
	if (err)
		return err;
	/* page-aligned for O_DIRECT */
	if (posix_memalign((void **)&w->buf, 4096,
			   (size_t)op->chunk_blocks * op->bs))
		w->buf = NULL;
	w->tags = malloc(tag_bytes);
	if (op->kind == OP_CHECK)
		w->stored = malloc(tag_bytes);
	if (!w->buf || !w->tags || (op->kind == OP_CHECK && !w->stored))
		return -ENOMEM;
	return 0;
}

static void worker_free(struct worker *w)
{
	dmt_integrity_tagger_free(w->t);
	free(w->buf);
	free(w->tags);
	free(w->stored);
	free(w->ubuf);
	memset(w, 0, sizeof(*w));
}

/* Source byte offset of logical block b. */
static uint64_t src_offset(const struct op *op, uint64_t b)
{
	uint64_t s = b << op->g->log2_spb;

	if (op->src_is_payload)
		return s << 9;
	return dmt_integrity_data_sector(op->g, s) << 9;
}

/* Blocks [a, b) hold zeros: tags from the zero block, zero the target. */
static int zero_blocks(struct op *op, struct worker *w, uint64_t ub0,
		       uint64_t a, uint64_t b)
{
	const struct dmt_integrity_geom *g = op->g;
	int err;

	err = dmt_integrity_tags(w->t, a << g->log2_spb, b - a, op->zero, 0,
				 w->tags + (a - ub0) * g->tag_size);
	if (err || !op->dst || op->fresh)
		return err;
	err = zero_range(op->dst,
			 dmt_integrity_data_sector(g, a << g->log2_spb) << 9,
			 (b - a) * op->bs, op->zero);
	return io_fail(op, err, op->dst, DMT_REASON_INTEGRITY_IO_WRITE);
}

/* Blocks [a, b) (within one chunk) may hold data: read, hash, copy. */
static int data_blocks(struct op *op, struct worker *w, uint64_t ub0,
		       uint64_t a, uint64_t b)
{
	const struct dmt_integrity_geom *g = op->g;
	uint64_t off = src_offset(op, a), len = (b - a) * op->bs, have = len;
	int err;

	if (op->src_is_payload && off + have > op->src_limit)
		have = op->src_limit - off;
	err = dmt_pread_full(op->src, w->buf, (size_t)have, off);
	if (err)
		return io_fail(op, err, op->src, DMT_REASON_INTEGRITY_IO_READ);
	if (have < len)
		memset(w->buf + have, 0, (size_t)(len - have));
	err = dmt_integrity_tags(w->t, a << g->log2_spb, b - a, w->buf,
				 op->bs, w->tags + (a - ub0) * g->tag_size);
	if (err || !op->dst)
		return err;
	off = dmt_integrity_data_sector(g, a << g->log2_spb) << 9;
	err = dmt_pwrite_full(op->dst, w->buf, (size_t)len, off);
	return io_fail(op, err, op->dst, DMT_REASON_INTEGRITY_IO_WRITE);
}

struct chunk_ctx {
	struct op *op;
	struct worker *w;
	uint64_t ub0, a, base;
};

/* One extent of a chunk's source: zero blocks or blocks with data. */
static int chunk_extent(void *ctx, uint64_t off, uint64_t len, bool data)
{
	struct chunk_ctx *c = ctx;
	uint64_t bs = c->op->bs;
	uint64_t da = c->a + (off - c->base) / bs;
	uint64_t db = c->a + (off + len - c->base + bs - 1) / bs;

	if (data)
		return data_blocks(c->op, c->w, c->ub0, da, db);
	return zero_blocks(c->op, c->w, c->ub0, da, db);
}

/* One chunk [a, b): split into hole and data extents of the source. */
static int do_chunk(struct op *op, struct worker *w, uint64_t ub0,
		    uint64_t a, uint64_t b)
{
	struct chunk_ctx c = { .op = op, .w = w, .ub0 = ub0, .a = a,
			       .base = src_offset(op, a) };
	uint64_t bs = op->bs, limit = c.base + (b - a) * bs, tail;
	int err;

	if (!op->src)
		return zero_blocks(op, w, ub0, a, b);
	if (op->src_is_payload && limit > op->src_limit)
		limit = op->src_limit > c.base ? op->src_limit : c.base;
	err = dmt_walk_extents(op->src, c.base, limit, (uint32_t)bs,
			       chunk_extent, &c);
	if (err)
		return io_fail(op, err, op->src, DMT_REASON_INTEGRITY_IO_READ);
	/* past the payload: zeros */
	tail = a + (limit - c.base + bs - 1) / bs;
	return tail < b ? zero_blocks(op, w, ub0, tail, b) : 0;
}

static int compare_tags(struct op *op, struct worker *w,
			const uint8_t *stored, uint64_t ub0, uint64_t ub1)
{
	struct dmt_integrity_result *r = op->r;
	unsigned int t = op->g->tag_size;
	uint64_t b, bad = 0, disc = 0;

	for (b = ub0; b < ub1; b++) {
		const uint8_t *have = stored + (b - ub0) * t;
		uint64_t s = b << op->g->log2_spb;
		bool filler;

		if (!memcmp(have, w->tags + (b - ub0) * t, t))
			continue;
		filler = all_filler(have, t);
		if (filler)
			disc++;
		if (filler && op->o->allow_discards) {
			pthread_mutex_lock(&op->lock);
			record_sector(r->first_discarded, &r->n_first_discarded,
				      s);
			pthread_mutex_unlock(&op->lock);
			continue;
		}
		bad++;
		pthread_mutex_lock(&op->lock);
		record_sector(r->first_bad, &r->n_first_bad, s);
		if (filler)
			record_sector(r->first_discarded,
				      &r->n_first_discarded, s);
		pthread_mutex_unlock(&op->lock);
	}
	if (bad || disc) {
		pthread_mutex_lock(&op->lock);
		r->mismatches += bad;
		r->discarded += disc;
		pthread_mutex_unlock(&op->lock);
	}
	return 0;
}

/*
 * Format in place: the bytes the kernel never addresses (after the last tag
 * of a run, after the last data sector) are zeroed too, so that the image
 * does not depend on what the device held before.
 */
static int zero_unused(struct op *op, uint64_t ub1, uint64_t tags_end)
{
	const struct dmt_integrity_geom *g = op->g;
	uint64_t dev_end = g->meta_sectors << 9, s1 = ub1 << g->log2_spb;
	bool last = ub1 == op->end_block;
	int err = 0;

	if (g->meta_dev)
		return last ? zero_range(op->meta, tags_end,
					 dev_end - tags_end, op->zero) : 0;
	if (last || !(s1 & ((1ull << g->log2_interleave) - 1))) {
		uint64_t area_start = ((s1 - 1) >> g->log2_interleave)
				      << g->log2_interleave;
		uint64_t run_end = dmt_integrity_tag_offset(g, area_start) +
				   (g->metadata_run << 9);

		err = zero_range(op->meta, tags_end, run_end - tags_end,
				 op->zero);
	}
	if (!err && last) {
		uint64_t data_end =
			(dmt_integrity_data_sector(g, s1 - 1) + 1) << 9;

		if (data_end < dev_end)
			err = zero_range(op->meta, data_end, dev_end - data_end,
					 op->zero);
	}
	return err;
}

/*
 * Format from a payload, or check, on one device: a unit whose source is
 * all data moves in large transfers, and where the unit holds a whole
 * area (or its end) its tag run and data, which lie next to each other,
 * in a single one (the gap after the tags is unused: zeros).
 */
static bool unit_fused(const struct op *op, uint64_t ub0, uint64_t ub1)
{
	uint64_t base = src_offset(op, ub0), end = base + (ub1 - ub0) * op->bs;

	if (op->g->meta_dev || !op->src ||
	    !(op->kind == OP_CHECK ||
	      (op->kind == OP_FORMAT && op->src_is_payload && op->dst)))
		return false;
	if (op->src_is_payload && end > op->src_limit)
		return false;
	return dmt_walk_all_data(op->src, base, end);
}

/* The tag run and the data of the unit are next to each other. */
static bool unit_adjacent(const struct op *op, uint64_t ub0, uint64_t ub1)
{
	uint64_t mask = (1ull << op->g->log2_interleave) - 1;

	return !((ub0 << op->g->log2_spb) & mask) &&
	       (!((ub1 << op->g->log2_spb) & mask) || ub1 == op->end_block);
}

static int fused_unit(struct op *op, struct worker *w, uint64_t ub0,
		      uint64_t ub1)
{
	const struct dmt_integrity_geom *g = op->g;
	uint64_t s0 = ub0 << g->log2_spb, len = (ub1 - ub0) * op->bs;
	uint64_t tag_off = dmt_integrity_tag_offset(g, s0);
	uint64_t data_off = dmt_integrity_data_sector(g, s0) << 9;
	size_t tag_len = (size_t)(ub1 - ub0) * g->tag_size;
	bool one = unit_adjacent(op, ub0, ub1);
	size_t pre = one ? (size_t)(data_off - tag_off) : 0;
	uint8_t *data = w->ubuf + pre;
	struct dmt_file *f = op->kind == OP_CHECK ? op->src : op->dst;
	int err, code = op->kind == OP_CHECK ? DMT_REASON_INTEGRITY_IO_READ :
					       DMT_REASON_INTEGRITY_IO_WRITE;

	if (op->kind == OP_CHECK) {
		err = one ? dmt_pread_full(f, w->ubuf, pre + len, tag_off) :
			    dmt_pread_full(f, data, len, data_off);
		if (!err && !one)
			err = dmt_pread_full(f, w->stored, tag_len, tag_off);
		if (err)
			return io_fail(op, err, f, code);
		err = dmt_integrity_tags(w->t, s0, ub1 - ub0, data, op->bs,
					 w->tags);
		return err ? err : compare_tags(op, w, one ? w->ubuf :
						w->stored, ub0, ub1);
	}
	err = dmt_pread_full(op->src, data, len, src_offset(op, ub0));
	if (err)
		return io_fail(op, err, op->src, DMT_REASON_INTEGRITY_IO_READ);
	err = dmt_integrity_tags(w->t, s0, ub1 - ub0, data, op->bs,
				 one ? w->ubuf : w->tags);
	if (err)
		return err;
	if (one) {
		memset(w->ubuf + tag_len, 0, pre - tag_len);
		err = dmt_pwrite_full(f, w->ubuf, pre + len, tag_off);
	} else {
		err = dmt_pwrite_full(f, data, len, data_off);
		if (!err)
			err = dmt_pwrite_full(f, w->tags, tag_len, tag_off);
	}
	if (!err && !op->fresh)
		err = zero_unused(op, ub1, tag_off + tag_len);
	return io_fail(op, err, f, code);
}

/* A unit in chunks, hole by hole. */
static int chunked_unit(struct op *op, struct worker *w, uint64_t ub0,
			uint64_t ub1)
{
	const struct dmt_integrity_geom *g = op->g;
	uint64_t tag_off = dmt_integrity_tag_offset(g, ub0 << g->log2_spb), a;
	size_t tag_len = (size_t)(ub1 - ub0) * g->tag_size;
	int err;

	if (op->kind == OP_CHECK) {
		err = dmt_pread_full(op->meta, w->stored, tag_len, tag_off);
		if (err)
			return io_fail(op, err, op->meta,
				       DMT_REASON_INTEGRITY_IO_READ);
	}
	for (a = ub0; a < ub1; a += op->chunk_blocks) {
		uint64_t b = a + op->chunk_blocks < ub1 ? a + op->chunk_blocks :
							  ub1;

		err = do_chunk(op, w, ub0, a, b);
		if (err)
			return err;
	}
	if (op->kind == OP_CHECK)
		err = compare_tags(op, w, w->stored, ub0, ub1);
	else
		err = dmt_pwrite_full(op->meta, w->tags, tag_len, tag_off);
	if (!err && op->kind == OP_FORMAT && !op->fresh)
		err = zero_unused(op, ub1, tag_off + tag_len);
	if (err)
		return io_fail(op, err, op->meta,
			       op->kind == OP_CHECK ?
				       DMT_REASON_INTEGRITY_IO_READ :
				       DMT_REASON_INTEGRITY_IO_WRITE);
	return 0;
}

static int do_unit(struct op *op, struct worker *w, uint64_t u)
{
	uint64_t ub0 = (op->ubase + u) * op->unit_blocks;
	uint64_t ub1 = ub0 + op->unit_blocks;
	int err;

	if (ub0 < op->first_block)
		ub0 = op->first_block;
	if (ub1 > op->end_block)
		ub1 = op->end_block;
	if (unit_fused(op, ub0, ub1)) {
		if (!w->ubuf &&
		    posix_memalign((void **)&w->ubuf, 4096, op->ubuf_bytes))
			return -ENOMEM;
		err = fused_unit(op, w, ub0, ub1);
	} else {
		err = chunked_unit(op, w, ub0, ub1);
	}
	if (err)
		return err;
	return dmt_walk_progress(&op->walk, (ub1 - ub0) * op->bs);
}

static int unit_fn(void *ctx, unsigned int worker, uint64_t begin,
		   uint64_t end)
{
	struct op *op = ctx;
	struct worker *w = &op->w[worker < op->nw ? worker : 0];
	int err;

	if (!w->t) {
		err = worker_init(op, w);
		if (err)
			return err;
	}
	for (uint64_t u = begin; u < end; u++) {
		if (dmt_walk_stopped(&op->walk))
			return -EINTR;
		err = do_unit(op, w, u);
		if (err)
			return err;
	}
	return 0;
}

/* A worker's buffers for units of ub blocks: the chunk, the unit's tag
 * run and data (fused transfers), its computed and stored tags. */
static uint64_t worker_bytes(const struct op *op, uint64_t ub)
{
	uint64_t data = ub * op->bs;

	return (data < DMT_IO_CHUNK ? data : DMT_IO_CHUNK) +
	       (op->g->metadata_run << 9) + data + 2 * ub * op->g->tag_size;
}

/* The largest unit: 16 MiB, within an interleave area, 4 MiB of tags. */
static uint64_t unit_most(const struct op *op)
{
	const struct dmt_integrity_geom *g = op->g;
	uint64_t ub = UNIT_SECTORS_MAX >> g->log2_spb, tb;

	if (!g->meta_dev && ub > (1ull << (g->log2_interleave - g->log2_spb)))
		ub = 1ull << (g->log2_interleave - g->log2_spb);
	tb = UNIT_TAG_BYTES_MAX / g->tag_size;
	while (ub > tb)
		ub >>= 1;
	return ub;
}

/* The smallest unit worth a transfer (or the largest, if smaller). */
static uint64_t unit_least(const struct op *op)
{
	uint64_t ub = unit_most(op);

	while (ub > 1 && (ub >> 1) * op->bs >= UNIT_BYTES_MIN)
		ub >>= 1;
	return ub;
}

/*
 * Units that never cross an interleave area (so their tags are one
 * range), as large as a worker's share of the budget holds: a power of
 * two of blocks, halved until the worker's buffers fit.
 */
static void plan_units(struct op *op, uint64_t first, uint64_t end)
{
	uint64_t ub = unit_most(op), least = unit_least(op);
	uint64_t share = DMT_WALK_MEM_BUDGET / op->nw;

	op->first_block = first;
	op->end_block = end;
	while (ub > least && worker_bytes(op, ub) > share)
		ub >>= 1;
	op->unit_blocks = ub;
	op->chunk_blocks = DMT_IO_CHUNK / op->bs < ub ? DMT_IO_CHUNK / op->bs
						     : ub;
	op->ubase = first / ub;
	op->n_units = end > first ? (end + ub - 1) / ub - op->ubase : 0;
	op->ubuf_bytes = (size_t)(op->g->metadata_run << 9) + ub * op->bs;
}

/*
 * Workers of a walk.  Where units move in single large transfers (format
 * from a payload, check) twice as many as threads: while some wait for
 * their transfer, the others hash, so the disk always has requests in
 * flight (the tags do not depend on who computes them).  Never more than
 * the budget holds with the smallest units.
 */
static unsigned int walk_threads(const struct op *op)
{
	unsigned int threads = op->o->threads ? op->o->threads : 1;
	uint64_t most = DMT_WALK_MEM_BUDGET / worker_bytes(op, unit_least(op));
	bool large = !op->g->meta_dev && op->src &&
		     (op->kind == OP_CHECK ||
		      (op->kind == OP_FORMAT && op->src_is_payload && op->dst));

	if (large && threads <= 64)
		threads *= IO_WORKERS_PER_THREAD;
	if (threads > most)
		threads = most ? (unsigned int)most : 1;
	return threads;
}

int dmt_integrity_walk(struct op *op, uint64_t first, uint64_t end)
{
	unsigned int threads;
	struct dmt_walk_pass pass = { .fn = unit_fn, .ctx = op };
	const struct dmt_file *ef;
	uint8_t *zero = NULL;
	int err;

	op->bs = 512u << op->g->log2_spb;
	threads = walk_threads(op);
	op->nw = threads;
	plan_units(op, first, end);
	pass.items = op->n_units;
	op->walked = true;
	op->resume_unit = 0;
	zero = calloc(1, ZERO_BYTES);
	op->w = calloc(threads, sizeof(*op->w));
	if (!zero || !op->w) {
		err = -ENOMEM;
		goto out;
	}
	op->zero = zero;
	/* a check reads every byte once: around the page cache */
	if (op->kind == OP_CHECK && op->src)
		dmt_file_enable_direct(op->src);
	pthread_mutex_init(&op->lock, NULL);
	dmt_walk_init(&op->walk, threads, &op->o->progress,
		      (end - first) * op->bs);
	err = dmt_walk_run(&op->walk, &pass);
	op->resume_unit = dmt_walk_unfinished(&op->walk);
	ef = dmt_walk_error_file(&op->walk);
	if (err && ef && !DMT_INTEGRITY_REASON(op->r)->code)
		*DMT_INTEGRITY_REASON(op->r) = (struct dmt_reason){
			.code = dmt_walk_error_code(&op->walk),
			.path = dmt_file_path(ef),
			.value = (uint64_t)-err};
	dmt_walk_destroy(&op->walk);
	pthread_mutex_destroy(&op->lock);
	for (unsigned int i = 0; i < threads; i++)
		worker_free(&op->w[i]);
out:
	free(op->w);
	op->w = NULL;
	free(zero);
	op->zero = NULL;
	return err;
}

uint64_t dmt_integrity_walk_resume(const struct op *op)
{
	uint64_t u = op->resume_unit < op->n_units ? op->resume_unit
						  : op->n_units;
	uint64_t b = (op->ubase + u) * op->unit_blocks;

	if (b < op->first_block)
		b = op->first_block;
	if (b > op->end_block)
		b = op->end_block;
	return b << op->g->log2_spb;
}

/* ---- journal ---- */

int dmt_integrity_write_journal(struct dmt_file *f,
				const struct dmt_integrity_geom *g,
				const struct dmt_integrity_sb *sb,
				const struct dmt_integrity_mac *mac,
				struct dmt_integrity_jcrypt *jc)
{
	size_t sec_bytes = (size_t)g->section_sectors * 512;
	uint32_t per = (uint32_t)(JOURNAL_BATCH_BYTES / sec_bytes), i, k;
	uint8_t *buf;
	int err = 0;

	if (!per)
		per = 1;
	buf = malloc(per * sec_bytes);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < g->journal_sections; i += k) {
		for (k = 0; k < per && i + k < g->journal_sections; k++) {
			err = dmt_integrity_journal_section(
				g, sb, mac, jc, i + k, 0, buf + k * sec_bytes);
			if (err)
				goto out;
		}
		err = dmt_pwrite_full(f, buf, k * sec_bytes,
				      (DMT_INTEGRITY_SB_SECTORS +
				       (uint64_t)i * g->section_sectors) << 9);
		if (err)
			goto out;
	}
out:
	free(buf);
	return err;
}

int dmt_integrity_verify_journal(struct dmt_file *f,
				 const struct dmt_integrity_geom *g,
				 const struct dmt_integrity_sb *sb,
				 const struct dmt_integrity_mac *mac,
				 struct dmt_integrity_jcrypt *jc,
				 struct dmt_integrity_journal_report *rep)
{
	size_t sec_bytes = (size_t)g->section_sectors * 512;
	uint32_t per = (uint32_t)(JOURNAL_BATCH_BYTES / sec_bytes), i, k;
	uint8_t *buf;
	int err = 0;

	memset(rep, 0, sizeof(*rep));
	if (!per)
		per = 1;
	buf = malloc(per * sec_bytes);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < g->journal_sections; i += k) {
		k = g->journal_sections - i < per ? g->journal_sections - i :
						    per;
		err = dmt_pread_full(f, buf, k * sec_bytes,
				     (DMT_INTEGRITY_SB_SECTORS +
				      (uint64_t)i * g->section_sectors) << 9);
		if (err)
			goto out;
		for (uint32_t j = 0; j < k; j++) {
			err = dmt_integrity_journal_verify_section(
				g, sb, mac, jc, i + j, buf + j * sec_bytes,
				rep);
			if (err)
				goto out;
		}
	}
out:
	free(buf);
	return err;
}

