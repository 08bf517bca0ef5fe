// SPDX-License-Identifier: MIT
/*
 * One file's Merkle tree in one streaming pass on the walk
 * (lib/common/walk.c), the scheme of lib/verity/verity_build.c: data is
 * hashed in windows split across the workers straight into the level-0
 * buffer (fs-verity digests are 32 or 64 bytes, so a block holds exactly
 * 2^n of them and slots are contiguous); a full level buffer goes to the
 * callback block by block and is hashed, in parallel again, into the next
 * level's buffer.  Every level is bounded (FV_LEVEL_BYTES), nothing is
 * read twice.
 *
 * Holes cost nothing: the subtree of all-zero data blocks is the same at
 * every position, so a hole that covers whole blocks of a level enters
 * that level as precomputed zero-subtree digests (docs/formats.md),
 * at every level up, and its tree blocks, when they are asked for, are one
 * constant block; smaller holes and all-zero blocks inside a work item get
 * the zero block's digest without a read or a hash (dmt_walk_hash_blocks,
 * as verity build does).
 *
 * From an fd, every worker preads its own work item; from a read callback
 * the calling thread reads a window that the workers then hash.  A file
 * read from an fd is watched: its size, times and hole map at the end must
 * be those it had when it was looked at, or it changed while it was read
 * (fv_watch_end).
 */
#include "lib/fsverity/fsverity_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/common/file.h"
#include "lib/common/walk.h"

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
	/* zero_digests(s, i): an entry of level i over all-zero data (level
	 * 0: the digest of a zero data block), ds bytes apart */
	uint8_t zd[(FV_MAX_LEVELS + 1) * DMT_FSVERITY_MAX_DIGEST];
	uint8_t *zblock;	  /* a tree block of zero-subtree digests */
	unsigned int zblock_of;	  /* ... of level zblock_of - 1; 0: none */
	struct dmt_walk walk;
	struct dmt_file file;	  /* the fd source */
	struct dmt_walk_blocks *wb; /* per worker, fd source */
	struct dmt_hole_print skipped; /* holes entered as zero subtrees */
	struct stat st0;	  /* the fd source when first looked at */
	/* the job the walk is running */
	uint64_t job_first;	/* first data block of the window */
	unsigned int job_level; /* level receiving the digests */
	const uint8_t *job_src; /* blocks being hashed */
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

static uint64_t per_block(const struct stream *s)
{
	return 1ull << s->e->hpb_bits;
}

static const uint8_t *zero_digest(const struct stream *s, unsigned int i)
{
	return s->zd + (size_t)i * s->e->ds;
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
	struct dmt_walk_blocks *wb;
	size_t bs = s->e->bs;
	int err;

	if (s->src->fd < 0)
		return dmt_hasher_digest_strided(s->e->w[wid].h,
						 (size_t)(end - begin),
						 s->job_src + begin * bs, bs,
						 NULL, slot(s, 0, begin));
	wb = &s->wb[wid];
	err = dmt_walk_hash_blocks(wb, s->job_first + begin,
				   s->job_first + end, slot(s, 0, begin));
	if (err && wb->read_failed)
		dmt_walk_fail(&s->walk, err, &s->file, DMT_REASON_IO);
	return err;
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
	uint64_t room;
	int err;

	while (n) {
		struct dmt_walk_pass pass = { .items = n, .chunk = chunk,
					      .fn = block_job, .ctx = s };

		room = i < s->g.levels ? (s->lv[i].cap << e->hpb_bits) -
						 s->lv[i].pending
				       : n;
		if (pass.items > room)
			pass.items = room;
		/* upper levels are small: threads only when it pays */
		if (pass.items * e->bs < (1u << 20))
			pass.threads = 1;
		s->job_level = i;
		s->job_src = src;
		err = dmt_walk_run(&s->walk, &pass);
		if (err || i >= s->g.levels)
			return err;
		s->lv[i].pending += pass.items;
		src += pass.items * e->bs;
		n -= pass.items;
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
	uint64_t hpb = per_block(s), j;
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

/* ---- holes: zero subtrees ---- */

/* n copies of zd[i] into level i's buffer (the root above the top). */
static int put_zero(struct stream *s, unsigned int i, uint64_t n)
{
	struct level *l = &s->lv[i];
	uint64_t full, k;

	if (n && i >= s->g.levels) {
		memcpy(s->root, zero_digest(s, i), s->e->ds);
		return 0;
	}
	while (n) {
		full = l->cap << s->e->hpb_bits;
		k = full - l->pending < n ? full - l->pending : n;
		for (uint64_t j = 0; j < k; j++)
			memcpy(slot(s, i, j), zero_digest(s, i),
			       s->e->ds);
		l->pending += k;
		n -= k;
		if (l->pending == full) {
			int err = flush(s, i);

			if (err)
				return err;
		}
	}
	return 0;
}

/* n whole blocks of level i, all of zd[i], to the callback. */
static int zero_blocks(struct stream *s, unsigned int i, uint64_t n)
{
	const struct dmt_fsverity_metadata_callbacks *cb = s->cb;
	struct fv_engine *e = s->e;
	struct level *l = &s->lv[i];
	int err;

	if (cb && cb->merkle_tree_block && s->zblock_of != i + 1) {
		dmt_zero_tree_block(s->zblock, e->bs, zero_digest(s, i), e->ds,
				    e->ds,
				    (uint32_t)per_block(s));
		s->zblock_of = i + 1;
	}
	for (uint64_t j = 0; cb && cb->merkle_tree_block && j < n; j++) {
		uint64_t blk = s->g.level_start[i] + l->written + j;

		err = cb->merkle_tree_block(cb->ctx, s->zblock, e->bs,
					    blk * e->bs);
		if (err)
			return err;
	}
	l->written += n;
	return 0;
}

/*
 * n entries of level i (the root above the top) over all-zero data: the
 * whole blocks they fill are zero-subtree blocks, which enter level i + 1
 * as zd[i + 1] the same way, the rest are copies in the buffer.
 */
static int zero_run(struct stream *s, unsigned int i, uint64_t n)
{
	uint64_t hpb = per_block(s), head, whole;
	int err;

	if (i >= s->g.levels)
		return put_zero(s, i, n);
	head = (hpb - s->lv[i].pending % hpb) % hpb;
	if (head > n)
		head = n;
	err = put_zero(s, i, head);
	n -= head;
	whole = n >> s->e->hpb_bits;
	if (!err && whole) {
		/* what is buffered precedes the run (whole blocks) */
		err = flush(s, i);
		if (!err)
			err = zero_blocks(s, i, whole);
		if (!err)
			err = zero_run(s, i + 1, whole);
	}
	return err ? err : put_zero(s, i, n & (hpb - 1));
}

/* ---- data ---- */

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

	if (s->src->fd >= 0)
		return FV_WINDOW_PER_THREAD * e->threads / e->bs
			       ? FV_WINDOW_PER_THREAD * e->threads / e->bs
			       : 1;
	return e->threads * e->item_blocks;
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

/* Data blocks [b0, b1), window by window. */
static int hash_range(struct stream *s, uint64_t b0, uint64_t b1)
{
	struct fv_engine *e = s->e;
	struct level *l = &s->lv[0];
	uint64_t n, window = window_blocks(s);
	int err;

	while (b0 < b1) {
		n = s->g.levels ? (l->cap << e->hpb_bits) - l->pending : 1;
		if (n > window)
			n = window;
		if (n > b1 - b0)
			n = b1 - b0;
		if (s->src->fd < 0) {
			err = read_window(s, b0, n);
			if (err)
				return err;
		}
		s->job_first = b0;
		err = dmt_walk_run(&s->walk, &(struct dmt_walk_pass){
			.items = n, .chunk = data_chunk(e, n), .fn = data_job,
			.ctx = s, .base = b0 });
		if (err || !s->g.levels)
			return err;
		l->pending += n;
		b0 += n;
		if (l->pending == l->cap << e->hpb_bits) {
			err = flush(s, 0);
			if (err)
				return err;
		}
	}
	return 0;
}

/* A run of the file's extents, cut at whole level-0 blocks of data
 * blocks: data is hashed, a hole enters the tree as zero subtrees. */
static int file_run(void *ctx, uint64_t off, uint64_t len, bool data)
{
	struct stream *s = ctx;
	uint64_t bs = s->e->bs, b0 = off / bs, b1 = (off + len + bs - 1) / bs;

	if (data)
		return hash_range(s, b0, b1);
	dmt_hole_print_add(&s->skipped, off, len);
	return zero_run(s, 0, b1 - b0);
}

static int hash_data(struct stream *s)
{
	uint64_t end = s->g.data_blocks * s->e->bs;
	int err;

	if (s->src->fd < 0)
		err = hash_range(s, 0, s->g.data_blocks);
	else
		err = dmt_walk_extents(&s->file, 0, end,
				       (uint64_t)s->e->bs << s->e->hpb_bits,
				       file_run, s);
	/* complete the levels bottom-up: each final flush feeds the next */
	for (unsigned int i = 0; !err && i < s->g.levels; i++)
		err = flush(s, i);
	return err;
}

/* ---- set-up and the watch on the file ---- */

static int alloc_stream(struct stream *s)
{
	struct fv_engine *e = s->e;
	uint64_t most = FV_LEVEL_BYTES / e->bs ? FV_LEVEL_BYTES / e->bs : 1;

	for (unsigned int i = 0; i < s->g.levels; i++) {
		struct level *l = &s->lv[i];

		l->cap = s->g.level_blocks[i] < most ? s->g.level_blocks[i]
						     : most;
		l->buf = calloc(l->cap, e->bs);
		if (!l->buf)
			return -ENOMEM;
	}
	if (s->cb && s->cb->merkle_tree_block) {
		s->zblock = malloc(e->bs);
		if (!s->zblock)
			return -ENOMEM;
	}
	if (s->src->fd < 0)
		return 0;
	s->wb = calloc(e->threads, sizeof(*s->wb));
	if (!s->wb)
		return -ENOMEM;
	for (unsigned int i = 0; i < e->threads; i++)
		s->wb[i] = (struct dmt_walk_blocks){
			.f = &s->file, .size = s->g.size, .bs = e->bs,
			.ds = e->ds, .zero_digest = s->zd, .h = e->w[i].h,
			.io = e->w[i].io, .msgs = e->w[i].msgs,
			.dig = e->w[i].dig2 };
	return 0;
}

static bool same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

static int nothing(void *ctx, uint64_t off, uint64_t len, bool data)
{
	return 0;
}

static int fv_changed(const struct fv_source *src, struct dmt_reason *r)
{
	dmt_reason_set(r, -ESTALE, DMT_REASON_FSVERITY_CHANGED, NULL, 0);
	if (r)
		r->path = src->path;
	return -ESTALE;
}

static int watch_start(struct stream *s, struct dmt_reason *r)
{
	if (fstat(s->src->fd, &s->st0) < 0) {
		int err = -errno;

		dmt_reason_set(r, err, DMT_REASON_IO, NULL, (uint64_t)-err);
		if (r)
			r->path = s->src->path;
		return err;
	}
	if ((uint64_t)s->st0.st_size != s->g.size)
		return fv_size_changed(s->src, s->g.size, r);
	return 0;
}

/*
 * The file as hashed is the file now: no byte past its end (it did not
 * grow), the same size, modification and change times, and the same hole
 * map as the workers saw it.  A hole punched while it was read changes
 * the map (data became zeros: another content), and so does data written
 * into a hole; other writes change the times (as far as the file system's
 * timestamps tell them apart).
 */
static int watch_end(struct stream *s, struct dmt_reason *r)
{
	struct dmt_hole_print seen = s->skipped, now = { 0 };
	struct stat st;
	uint8_t c;
	ssize_t n;

	do {
		n = pread(s->src->fd, &c, 1, (off_t)s->g.size);
	} while (n < 0 && errno == EINTR);
	if (n > 0 || fstat(s->src->fd, &st) < 0 ||
	    (uint64_t)st.st_size != s->g.size)
		return fv_size_changed(s->src, s->g.size, r);
	if (!same_time(&st.st_mtim, &s->st0.st_mtim) ||
	    !same_time(&st.st_ctim, &s->st0.st_ctim))
		return fv_changed(s->src, r);
	for (unsigned int i = 0; i < s->e->threads; i++)
		dmt_hole_print_merge(&seen, &s->wb[i].holes);
	dmt_walk_extents_print(&s->file, 0, s->g.data_blocks * s->e->bs,
			       s->e->bs, nothing, NULL, &now);
	return dmt_hole_print_equal(&seen, &now) ? 0 : fv_changed(s->src, r);
}

static int stream_run(struct stream *s, struct dmt_reason *r)
{
	const struct dmt_fsverity_metadata_callbacks *cb = s->cb;
	struct fv_engine *e = s->e;
	int err;

	err = cb && cb->merkle_tree_size
		      ? cb->merkle_tree_size(cb->ctx, s->g.tree_blocks * e->bs)
		      : 0;
	if (!err)
		err = alloc_stream(s);
	if (!err)
		err = dmt_zero_tree(e->w[0].h, e->bs, e->w[0].h, e->bs, e->ds,
				    e->ds, (uint32_t)per_block(s), s->g.levels,
				    s->zd);
	if (!err && s->src->fd >= 0)
		err = watch_start(s, r);
	if (!err)
		err = hash_data(s);
	if (!err && s->src->fd >= 0)
		err = watch_end(s, r);
	return err;
}

int fv_stream_root(struct fv_engine *e, const struct fv_source *src,
		   uint64_t size,
		   const struct dmt_fsverity_metadata_callbacks *cb,
		   uint8_t *root, struct dmt_reason *r)
{
	struct stream *s = calloc(1, sizeof(*s));
	const struct dmt_file *bad;
	int err;

	if (!s)
		return -ENOMEM;
	s->e = e;
	s->src = src;
	s->cb = cb;
	s->root = root;
	s->file = (struct dmt_file){ .fd = src->fd, .path = (char *)src->path,
				     .direct_fd = -1 };
	memset(root, 0, e->ds); /* the root of an empty file */
	fv_geometry(e, size, &s->g);
	dmt_walk_init(&s->walk, e->threads, NULL, 0);
	err = stream_run(s, r);
	bad = dmt_walk_error_file(&s->walk);
	if (bad && err == -ENODATA) {
		fv_size_changed(src, size, r);
	} else if (bad) {
		dmt_reason_set(r, err, DMT_REASON_IO, NULL, (uint64_t)-err);
		if (r)
			r->path = src->path;
	}
	dmt_walk_destroy(&s->walk);
	for (unsigned int i = 0; i < s->g.levels; i++)
		free(s->lv[i].buf);
	free(s->zblock);
	free(s->wb);
	free(s);
	return err;
}
