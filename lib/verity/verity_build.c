// SPDX-License-Identifier: MIT
/*
 * Building a dm-verity hash tree in one streaming pass.
 *
 * Every level has a buffer of at most VT_LEVEL_BYTES.  Data is hashed in
 * windows, split across the workers, into the level-0 buffer; a full
 * buffer is written out with one pwrite and its blocks are hashed (again
 * in parallel) into the next level's buffer, which cascades upwards the
 * same way.  So each level is written exactly once, nothing is read back,
 * and memory stays bounded whatever the image size.  The superblock is
 * written last, as veritysetup does.
 */
#include "lib/verity/verity_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>


struct level {
	uint8_t *buf;
	uint64_t cap;			/* blocks */
	uint64_t pending;		/* digests in buf */
	uint64_t written;		/* blocks on disk */
};

struct builder {
	struct vt t;
	struct level lv[DMT_VERITY_MAX_LEVELS];
	uint8_t root[DMT_DIGEST_MAX];
	/* the job dmt_parallel_for is running */
	uint64_t job_first;		/* first data block of the window */
	unsigned int job_level;		/* level receiving the digests */
	const uint8_t *job_src;		/* hash blocks being hashed */
};

static void put_digests(struct vt *t, struct level *l, uint64_t idx,
			const uint8_t *dig, uint64_t n)
{
	size_t ds = t->g.digest_size;
	uint64_t i;

	for (i = 0; i < n; i++)
		memcpy(vt_slot(t, l->buf, idx + i), dig + i * ds, ds);
}

static int data_job(void *ctx, unsigned int wid, uint64_t begin, uint64_t end)
{
	struct builder *b = ctx;
	struct vt *t = &b->t;
	struct level *l = &b->lv[0];
	uint64_t idx = l->pending + (begin - b->job_first), n = end - begin;
	bool direct = vt_direct(t);
	uint8_t *out = direct ? vt_slot(t, l->buf, idx) : t->w[wid].dig;
	int err;

	if (dmt_walk_stopped(&t->walk))
		return -EINTR;
	err = vt_hash_data(t, wid, begin, end, out);
	if (err)
		return err;
	if (!direct)
		put_digests(t, l, idx, out, n);
	return vt_progress(t, n * t->g.data_block_size);
}

static int block_job(void *ctx, unsigned int wid, uint64_t begin, uint64_t end)
{
	struct builder *b = ctx;
	struct vt *t = &b->t;
	struct level *l = &b->lv[b->job_level];
	uint64_t idx = l->pending + begin, n = end - begin;
	bool direct = vt_direct(t);
	uint8_t *out = direct ? vt_slot(t, l->buf, idx) : t->w[wid].dig;
	int err;

	err = vt_hash_blocks(t, wid, b->job_src + begin * t->g.hash_block_size,
			     (size_t)n, out);
	if (err)
		return err;
	if (!direct)
		put_digests(t, l, idx, out, n);
	return 0;
}

static int flush(struct builder *b, unsigned int i);

/* Hashes n blocks of level i - 1 into level i's buffer. */
static int feed(struct builder *b, unsigned int i, const uint8_t *src,
		uint64_t n)
{
	struct vt *t = &b->t;
	struct level *l = &b->lv[i];
	uint64_t hbs = t->g.hash_block_size, chunk = (512u << 10) / hbs;
	int err;

	if (!chunk)
		chunk = 1;
	while (n) {
		uint64_t k = l->cap * t->hpb - l->pending;
		unsigned int threads = t->threads;

		if (k > n)
			k = n;
		/* upper levels are small: threads only when it pays */
		if (k * hbs < (1u << 20))
			threads = 1;
		struct dmt_walk_pass pass = { .items = k, .chunk = chunk,
					      .threads = threads,
					      .fn = block_job, .ctx = b };

		b->job_level = i;
		b->job_src = src;
		err = dmt_walk_run(&t->walk, &pass);
		if (err)
			return err;
		l->pending += k;
		src += k * hbs;
		n -= k;
		if (l->pending == l->cap * t->hpb) {
			err = flush(b, i);
			if (err)
				return err;
		}
	}
	return 0;
}

/*
 * Writes the buffered blocks of level i (only ever called when the buffer
 * is full or the level complete, so there is never a partial block to
 * keep) and hashes them into level i + 1, or into the root.
 */
static int flush(struct builder *b, unsigned int i)
{
	struct vt *t = &b->t;
	struct level *l = &b->lv[i];
	uint64_t hbs = t->g.hash_block_size;
	uint64_t n = (l->pending + t->hpb - 1) / t->hpb;
	int err;

	if (!n)
		return 0;
	err = vt_io(t, t->hash,
		    dmt_pwrite_full(t->hash, l->buf, n * hbs,
				    (t->g.level_start[i] + l->written) * hbs));
	if (err)
		return err;
	dmt_file_start_writeback(t->hash,
				 (t->g.level_start[i] + l->written) * hbs,
				 n * hbs);
	if (i + 1 < t->g.levels)
		err = feed(b, i + 1, l->buf, n);
	else
		err = vt_hash_blocks(t, 0, l->buf, 1, b->root);
	if (err)
		return err;
	l->written += n;
	l->pending = 0;
	memset(l->buf, 0, n * hbs);
	return 0;
}

static int alloc_levels(struct builder *b)
{
	struct vt *t = &b->t;
	uint64_t hbs = t->g.hash_block_size, most = VT_LEVEL_BYTES / hbs;
	unsigned int i;

	if (!most)
		most = 1;
	for (i = 0; i < t->g.levels; i++) {
		struct level *l = &b->lv[i];

		l->cap = t->g.level_blocks[i] < most ? t->g.level_blocks[i]
						      : most;
		l->buf = calloc(l->cap, hbs);
		if (!l->buf)
			return -ENOMEM;
	}
	return 0;
}

/* Before a window: read-ahead of the next one. */
static int data_window_begin(void *ctx, uint64_t b0, uint64_t b1)
{
	struct builder *b = ctx;

	b->job_first = b0;
	vt_readahead(&b->t, b1, b1 + (b1 - b0));
	return 0;
}

/* After a window: its digests are in the level-0 buffer. */
static int data_window_end(void *ctx, uint64_t b0, uint64_t b1)
{
	struct builder *b = ctx;
	struct level *l = &b->lv[0];

	l->pending += b1 - b0;
	if (l->pending == l->cap * b->t.hpb)
		return flush(b, 0);
	return 0;
}

/*
 * Windows never straddle a flush of the level-0 buffer: its capacity in
 * data blocks is a power of two (or more than the data), and so is the
 * window cut from it.
 */
static uint64_t data_window(struct builder *b)
{
	uint64_t cap = b->lv[0].cap * b->t.hpb, win = vt_window_blocks(&b->t);

	if (win >= cap)
		return cap;
	while (win & (win - 1))
		win &= win - 1;
	return win;
}

static int hash_data(struct builder *b)
{
	struct vt *t = &b->t;
	struct dmt_walk_pass pass = {
		.items = t->g.data_blocks, .chunk = t->item_blocks,
		.window = data_window(b), .fn = data_job,
		.window_begin = data_window_begin,
		.window_end = data_window_end, .ctx = b,
	};
	int err;

	err = dmt_walk_run(&t->walk, &pass);
	if (err)
		return err;
	/* Complete levels bottom-up: each final flush feeds the next. */
	for (unsigned int i = 0; i < t->g.levels; i++) {
		err = flush(b, i);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The size veritysetup leaves a short hash file at: the end of the tree,
 * or for a one-block tree (no levels) the end of the superblock rounded
 * up to the block it rewrites (the filesystem block, at most a page and
 * at most hbs).  Longer files are never cut.
 */
static uint64_t hash_file_end(struct vt *t)
{
	uint64_t bs = (uint64_t)sysconf(_SC_PAGESIZE), end;
	struct statvfs sv;

	if (t->g.levels)
		return t->g.hash_end;
	if (t->p.no_superblock)
		return 0;
	if (!fstatvfs(t->hash->fd, &sv) && sv.f_bsize && sv.f_bsize <= bs)
		bs = sv.f_bsize;
	if (bs > t->g.hash_block_size)
		bs = t->g.hash_block_size;
	end = t->p.hash_offset + DMT_VERITY_SB_SIZE;
	return (end + bs - 1) / bs * bs;
}

static int size_hash_file(struct vt *t)
{
	uint64_t size;
	int err;

	if (!t->hash->is_blockdev)
		return vt_io(t, t->hash,
			     dmt_file_extend(t->hash, hash_file_end(t)));
	err = dmt_file_size(t->hash, &size);
	if (!err && size < t->g.hash_end)
		err = -ENOSPC;
	return vt_io(t, t->hash, err);
}

int vt_build(const struct dmt_verity_params *p, struct dmt_file *data,
	     struct dmt_file *hash, bool write_sb, struct dmt_verity_result *res,
	     struct dmt_reason *why)
{
	struct builder *b;
	struct vt *t;
	unsigned int i;
	int err;

	memset(res, 0, sizeof(*res));
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	t = &b->t;
	err = vt_init(t, p, data, hash, false, why);
	if (err)
		goto out;
	err = size_hash_file(t);
	if (err)
		goto out;
	t->walk.total = t->g.data_blocks * t->g.data_block_size;

	if (t->g.levels == 0) {
		/* one data block: the root is its digest, no tree */
		err = vt_hash_data(t, 0, 0, 1, b->root);
		if (!err)
			err = vt_progress(t, t->g.data_block_size);
	} else {
		err = alloc_levels(b);
		if (!err)
			err = hash_data(b);
	}
	if (err)
		goto out;

	if (write_sb && !t->p.no_superblock) {
		uint8_t sb[DMT_VERITY_SB_SIZE];

		err = dmt_verity_sb_encode(&t->p, sb, NULL);
		if (!err)
			err = vt_io(t, hash,
				    dmt_pwrite_full(hash, sb, sizeof(sb),
						    t->p.hash_offset));
		if (err)
			goto out;
	}

	memcpy(res->root_hash, b->root, t->g.digest_size);
	res->root_hash_size = t->g.digest_size;
	res->geo = t->g;
	for (i = 0; i < t->threads; i++)
		res->zero_blocks += t->w[i].zero_blocks;
	strncpy(res->engine, dmt_hasher_engine(t->w[0].hd),
		sizeof(res->engine) - 1);
out:
	if (err)
		res->error_path = vt_error_path(t);
	for (i = 0; i < DMT_VERITY_MAX_LEVELS; i++)
		free(b->lv[i].buf);
	vt_free(t);
	free(b);
	return err;
}

int dmt_verity_build(const struct dmt_verity_params *p, struct dmt_file *data,
		     struct dmt_file *hash, struct dmt_verity_result *res,
		     struct dmt_reason *why)
{
	return vt_build(p, data, hash, true, res, why);
}
