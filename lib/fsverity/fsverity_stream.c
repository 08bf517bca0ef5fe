// SPDX-License-Identifier: MIT
/*
 * One file's Merkle tree in one streaming pass (the scheme of
 * lib/verity/verity_build.c): data is hashed in windows split across the
 * workers straight into the level-0 buffer (fs-verity digests are 32 or 64
 * bytes, so a block holds exactly 2^n of them and slots are contiguous); a
 * full level buffer goes to the callback block by block and is hashed, in
 * parallel again, into the next level's buffer.  Every level is bounded
 * (FV_LEVEL_BYTES), nothing is read twice.
 *
 * From an fd, every worker preads its own work item; from a read callback
 * the calling thread reads a window that the workers then hash.
 */
#include "lib/fsverity/fsverity_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dmt/threads.h>

struct level {
	uint8_t *buf;
	uint64_t cap;	  /* blocks */
	uint64_t pending; /* digests in buf */
	uint64_t written; /* blocks handed out */
};

struct stream {
	struct fv_engine *e;
	const struct fv_source *src;
	const struct dmt_fsverity_metadata_callbacks *cb;
	struct fv_geo g;
	struct level lv[FV_MAX_LEVELS];
	uint8_t *root;
	/* the job dmt_parallel_for is running */
	uint64_t job_first;	/* first data block of the window */
	unsigned int job_level; /* level receiving the digests */
	const uint8_t *job_src; /* blocks being hashed */
	bool read_failed;	/* a pread failed (not a callback) */
};

int fv_pread(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENODATA;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* Digest slot idx of level i's buffer, or the root above the top. */
static uint8_t *slot(struct stream *s, unsigned int i, uint64_t idx)
{
	if (i >= s->g.levels)
		return s->root;
	return s->lv[i].buf + (s->lv[i].pending + idx) * s->e->ds;
}

/* Bytes of blocks [b0, b0 + n) that lie inside the file. */
static size_t bytes_in_file(const struct stream *s, uint64_t b0, uint64_t n)
{
	uint64_t start = b0 * s->e->bs, end = (b0 + n) * s->e->bs;

	if (end > s->g.size)
		end = s->g.size;
	return (size_t)(end - start);
}

static int data_job(void *ctx, unsigned int wid, uint64_t begin, uint64_t end)
{
	struct stream *s = ctx;
	struct fv_worker *w = &s->e->w[wid];
	uint64_t b0 = s->job_first + begin, n = end - begin;
	size_t bs = s->e->bs, len;
	const uint8_t *base;
	int err;

	if (s->src->fd >= 0) {
		len = bytes_in_file(s, b0, n);
		err = fv_pread(s->src->fd, w->io, len, b0 * bs);
		if (err) {
			__atomic_store_n(&s->read_failed, true,
					 __ATOMIC_RELAXED);
			return err;
		}
		memset(w->io + len, 0, n * bs - len);
		base = w->io;
	} else {
		base = s->job_src + begin * bs;
	}
	return dmt_hasher_digest_strided(w->h, (size_t)n, base, bs, NULL,
					 slot(s, 0, begin));
}

static int block_job(void *ctx, unsigned int wid, uint64_t begin, uint64_t end)
{
	struct stream *s = ctx;
	size_t bs = s->e->bs;

	return dmt_hasher_digest_strided(s->e->w[wid].h, (size_t)(end - begin),
					 s->job_src + begin * bs, bs, NULL,
					 slot(s, s->job_level, begin));
}

static int flush(struct stream *s, unsigned int i);

/* Hashes n blocks of level i - 1 into level i (the root above the top). */
static int feed(struct stream *s, unsigned int i, const uint8_t *src,
		uint64_t n)
{
	struct fv_engine *e = s->e;
	uint64_t chunk = (512u << 10) / e->bs ? (512u << 10) / e->bs : 1;
	int err;

	while (n) {
		uint64_t k = n;
		unsigned int threads = e->threads;

		if (i < s->g.levels &&
		    k > (s->lv[i].cap << e->hpb_bits) - s->lv[i].pending)
			k = (s->lv[i].cap << e->hpb_bits) - s->lv[i].pending;
		/* upper levels are small: threads only when it pays */
		if (k * e->bs < (1u << 20))
			threads = 1;
		s->job_level = i;
		s->job_src = src;
		err = dmt_parallel_for(threads, k, chunk, block_job, s);
		if (err || i >= s->g.levels)
			return err;
		s->lv[i].pending += k;
		src += k * e->bs;
		n -= k;
		if (s->lv[i].pending == s->lv[i].cap << e->hpb_bits) {
			err = flush(s, i);
			if (err)
				return err;
		}
	}
	return 0;
}

/* Hands the buffered (complete) blocks of level i to the callback and
 * hashes them into the level above. */
static int flush(struct stream *s, unsigned int i)
{
	const struct dmt_fsverity_metadata_callbacks *cb = s->cb;
	struct fv_engine *e = s->e;
	struct level *l = &s->lv[i];
	uint64_t hpb = 1ull << e->hpb_bits, j;
	uint64_t n = (l->pending + hpb - 1) / hpb;
	int err;

	if (!n)
		return 0;
	for (j = 0; cb && cb->merkle_tree_block && j < n; j++) {
		uint64_t blk = s->g.level_start[i] + l->written + j;

		err = cb->merkle_tree_block(cb->ctx, l->buf + j * e->bs, e->bs,
					    blk * e->bs);
		if (err)
			return err;
	}
	err = feed(s, i + 1, l->buf, n);
	if (err)
		return err;
	l->written += n;
	l->pending = 0;
	memset(l->buf, 0, n * e->bs);
	return 0;
}

/* Reads blocks [b0, b0 + n) through the callback into the window. */
static int read_window(struct stream *s, uint64_t b0, uint64_t n)
{
	struct fv_engine *e = s->e;
	size_t len = bytes_in_file(s, b0, n), done = 0;
	int err;

	if (!e->window) {
		e->window = aligned_alloc(4096,
					  e->threads * e->item_blocks * e->bs);
		if (!e->window)
			return -ENOMEM;
	}
	while (done < len) {
		size_t k = len - done < (4u << 20) ? len - done : (4u << 20);

		err = s->src->read_fn(s->src->read_ctx, e->window + done, k);
		if (err)
			return err;
		done += k;
	}
	memset(e->window + len, 0, n * e->bs - len);
	s->job_src = e->window;
	return 0;
}

static uint64_t window_blocks(const struct stream *s)
{
	const struct fv_engine *e = s->e;
	uint64_t items =
		s->src->fd >= 0 ? FV_WINDOW_PER_THREAD / FV_ITEM_BYTES : 1;

	return items * e->threads * e->item_blocks;
}

/* Work items of a window: at most a worker's buffer, small enough that
 * a window of a few MiB is shared evenly. */
static uint64_t data_chunk(const struct fv_engine *e, uint64_t n)
{
	uint64_t least = (256u << 10) / e->bs, k = n / (8 * e->threads);

	if (k < least)
		k = least;
	if (k > e->item_blocks)
		k = e->item_blocks;
	return k ? k : 1;
}

static int hash_data(struct stream *s)
{
	struct fv_engine *e = s->e;
	struct level *l = &s->lv[0];
	uint64_t next = 0, n, window = window_blocks(s);
	int err;

	while (next < s->g.data_blocks) {
		n = s->g.levels ? (l->cap << e->hpb_bits) - l->pending : 1;
		if (n > window)
			n = window;
		if (n > s->g.data_blocks - next)
			n = s->g.data_blocks - next;
		if (s->src->fd < 0) {
			err = read_window(s, next, n);
			if (err)
				return err;
		}
		s->job_first = next;
		err = dmt_parallel_for(e->threads, n, data_chunk(e, n),
				       data_job, s);
		if (err || !s->g.levels)
			return err;
		l->pending += n;
		next += n;
		if (l->pending == l->cap << e->hpb_bits) {
			err = flush(s, 0);
			if (err)
				return err;
		}
	}
	/* complete the levels bottom-up: each final flush feeds the next */
	for (unsigned int i = 0; i < s->g.levels; i++) {
		err = flush(s, i);
		if (err)
			return err;
	}
	return 0;
}

static int alloc_levels(struct stream *s)
{
	uint64_t most =
		FV_LEVEL_BYTES / s->e->bs ? FV_LEVEL_BYTES / s->e->bs : 1;

	for (unsigned int i = 0; i < s->g.levels; i++) {
		struct level *l = &s->lv[i];

		l->cap = s->g.level_blocks[i] < most ? s->g.level_blocks[i]
						     : most;
		l->buf = calloc(l->cap, s->e->bs);
		if (!l->buf)
			return -ENOMEM;
	}
	return 0;
}

/* A file that grew while it was read is not the size that was hashed. */
static int check_grown(const struct stream *s, struct dmt_reason *r)
{
	uint8_t c;
	ssize_t n;

	do {
		n = pread(s->src->fd, &c, 1, (off_t)s->g.size);
	} while (n < 0 && errno == EINTR);
	if (n > 0)
		return fv_size_changed(s->src, s->g.size, r);
	return 0;
}

int fv_stream_root(struct fv_engine *e, const struct fv_source *src,
		   uint64_t size,
		   const struct dmt_fsverity_metadata_callbacks *cb,
		   uint8_t *root, struct dmt_reason *r)
{
	struct stream *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	s->e = e;
	s->src = src;
	s->cb = cb;
	s->root = root;
	memset(root, 0, e->ds); /* the root of an empty file */
	fv_geometry(e, size, &s->g);
	err = cb && cb->merkle_tree_size
		      ? cb->merkle_tree_size(cb->ctx, s->g.tree_blocks * e->bs)
		      : 0;
	if (!err)
		err = alloc_levels(s);
	if (!err)
		err = hash_data(s);
	if (!err && src->fd >= 0)
		err = check_grown(s, r);
	if (s->read_failed && err == -ENODATA) {
		fv_size_changed(src, size, r);
	} else if (s->read_failed) {
		dmt_reason_set(r, err, DMT_REASON_IO, NULL, (uint64_t)-err);
		if (r)
			r->path = src->path;
	}
	for (unsigned int i = 0; i < s->g.levels; i++)
		free(s->lv[i].buf);
	free(s);
	return err;
}
