// SPDX-License-Identifier: MIT
/*
 * Digests of many files (dmt_fsverity_batch_*).
 *
 * Files are queued (at most GROUP_FILES).  A full queue is opened and
 * sized by the workers (files named by path), then as many small files as
 * fit GROUP_DATA bytes form a group (the rest wait for the next one).  The
 * group is read (one pread per file, the files spread over the workers),
 * then hashed round by round: round 0 is
 * every data block of every file of the group, round r every block of
 * tree level r - 1 of the files that have one.  Each round is one list of
 * equal-length messages cut into chunks for the workers, so the engine's
 * lanes are filled across files: the one block of a 3 KiB file is hashed
 * in the same dmt_hash call as blocks of its neighbours.  The descriptors
 * of the group are hashed in one call too.  Trees are built in the group's
 * tree buffer in their final (top-down) layout.
 *
 * A file too big for a group is streamed alone with all workers
 * (fsverity_stream.c) when its turn comes among the group's results, so
 * results leave in submission order.
 */
#include "lib/fsverity/fsverity_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dmt/threads.h>

/* Open files per group (path items keep an fd until they are read). */
#define GROUP_FILES 256
/* Data bytes per group; a file whose blocks take more than
 * GROUP_SMALL is streamed alone. */
#define GROUP_DATA  (8u << 20)
#define GROUP_SMALL (1u << 20)

struct item {
	struct dmt_fsverity_file f;
	char *path;  /* copy of f.path */
	bool own_fd; /* opened here: closed after reading */
	bool sized;  /* opened (paths) and size known */
	bool big;    /* streamed alone */
	uint64_t size;
	struct fv_geo g;
	uint64_t data_off, slot_bytes; /* in the group's data buffer */
	uint64_t tree_off;	       /* in the group's tree buffer */
	int err;
	struct dmt_reason reason;
	uint8_t root[DMT_FSVERITY_MAX_DIGEST];
};

/* One round of messages: msgs[i] is hashed into outs[i]. */
struct round {
	const uint8_t **msgs;
	uint8_t **outs;
	size_t n, cap;
};

struct dmt_fsverity_batch {
	struct fv_engine e;
	dmt_fsverity_done_fn done;
	void *done_ctx;
	struct item *items; /* the queue, GROUP_FILES */
	unsigned int nitems;
	unsigned int ngroup; /* items[0, ngroup): the group */
	uint64_t tree_used;
	uint8_t *data; /* GROUP_DATA (+ one block) */
	uint8_t *tree;
	uint64_t tree_cap;
	uint8_t *desc; /* GROUP_FILES descriptors */
	uint8_t *desc_digest;
	struct round rd;
	uint64_t chunk; /* messages per work item */
	int stopped;	/* done's non-zero return */
};

static uint64_t round_up(uint64_t v, uint64_t bs)
{
	return (v + bs - 1) / bs * bs;
}

int dmt_fsverity_batch_new(const struct dmt_fsverity_batch_params *p,
			   struct dmt_fsverity_batch **out,
			   struct dmt_reason *r)
{
	struct dmt_fsverity_batch *b = calloc(1, sizeof(*b));
	uint64_t data_cap;
	int err;

	*out = NULL;
	if (!b)
		return -ENOMEM;
	err = fv_engine_init(&b->e, &p->tree, r);
	if (err) {
		free(b);
		return err;
	}
	b->done = p->done;
	b->done_ctx = p->done_ctx;
	/* a small file may need one block more than its data (the byte
	 * read past the end that tells a file grew) */
	data_cap = round_up(GROUP_DATA, b->e.bs) + b->e.bs;
	b->chunk = (256u << 10) / b->e.bs;
	if (b->chunk < 64)
		b->chunk = 64;
	if (b->chunk > b->e.item_blocks)
		b->chunk = b->e.item_blocks;
	b->items = calloc(GROUP_FILES, sizeof(*b->items));
	/* blocks bigger than a group's small file: every file is streamed */
	if (b->e.bs <= GROUP_SMALL)
		b->data = aligned_alloc(4096, round_up(data_cap, 4096));
	b->desc = malloc(GROUP_FILES * DMT_FSVERITY_DESCRIPTOR_SIZE);
	b->desc_digest = malloc(GROUP_FILES * DMT_FSVERITY_MAX_DIGEST);
	if (!b->items || (!b->data && b->e.bs <= GROUP_SMALL) || !b->desc ||
	    !b->desc_digest) {
		dmt_fsverity_batch_free(b);
		return -ENOMEM;
	}
	*out = b;
	return 0;
}

static void item_release(struct item *it)
{
	if (it->own_fd && it->f.fd >= 0)
		close(it->f.fd);
	it->f.fd = -1;
	it->own_fd = false;
	free(it->path);
	it->path = NULL;
}

void dmt_fsverity_batch_free(struct dmt_fsverity_batch *b)
{
	if (!b)
		return;
	for (unsigned int i = 0; b->items && i < b->nitems; i++)
		item_release(&b->items[i]);
	fv_engine_free(&b->e);
	free(b->items);
	free(b->data);
	free(b->tree);
	free(b->desc);
	free(b->desc_digest);
	free(b->rd.msgs);
	free(b->rd.outs);
	free(b);
}

/* ---- reading ---- */

/* One pread per file of size bytes and the byte after: a file that is
 * shorter or longer than announced changed while it was being read. */
static int read_job(void *ctx, unsigned int wid, uint64_t begin, uint64_t end)
{
	struct dmt_fsverity_batch *b = ctx;

	for (uint64_t i = begin; i < end; i++) {
		struct item *it = &b->items[i];
		uint8_t *slot = b->data + it->data_off;
		size_t want = (size_t)it->size + 1, got = 0;

		if (it->err || it->big || it->f.fd < 0)
			continue;
		while (got < want) {
			ssize_t n = pread(it->f.fd, slot + got, want - got,
					  (off_t)got);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				if (n < 0)
					it->err = -errno;
				break;
			}
			got += (size_t)n;
		}
		if (it->err) {
			dmt_reason_set(&it->reason, it->err, DMT_REASON_IO,
				       NULL, (uint64_t)-it->err);
			it->reason.path = it->path;
		} else if (got != it->size) {
			struct fv_source src = {.path = it->path};

			it->err = fv_size_changed(&src, it->size, &it->reason);
		}
		memset(slot + it->size, 0, it->slot_bytes - it->size);
		if (it->own_fd) {
			close(it->f.fd);
			it->f.fd = -1;
			it->own_fd = false;
		}
	}
	(void)wid;
	return 0;
}

/* Read callbacks run on the calling thread, one after another. */
static void read_callback_items(struct dmt_fsverity_batch *b)
{
	for (unsigned int i = 0; i < b->ngroup; i++) {
		struct item *it = &b->items[i];
		uint8_t *slot = b->data + it->data_off;
		uint64_t done = 0;

		if (it->err || it->big || it->f.fd >= 0)
			continue;
		while (done < it->size && !it->err) {
			uint64_t k = it->size - done;

			if (k > (4u << 20))
				k = 4u << 20;
			it->err = it->f.read_fn(it->f.read_ctx, slot + done,
						(size_t)k);
			done += k;
		}
		memset(slot + it->size, 0, it->slot_bytes - it->size);
	}
}

/* ---- hashing rounds ---- */

static int round_add(struct round *rd, const uint8_t *msg, uint8_t *out)
{
	if (rd->n == rd->cap) {
		size_t cap = rd->cap ? rd->cap * 2 : 4096;
		const uint8_t **m = realloc(rd->msgs, cap * sizeof(*m));

		if (!m)
			return -ENOMEM;
		rd->msgs = m;
		uint8_t **o = realloc(rd->outs, cap * sizeof(*o));

		if (!o)
			return -ENOMEM;
		rd->outs = o;
		rd->cap = cap;
	}
	rd->msgs[rd->n] = msg;
	rd->outs[rd->n++] = out;
	return 0;
}

static int round_job(void *ctx, unsigned int wid, uint64_t begin, uint64_t end)
{
	struct dmt_fsverity_batch *b = ctx;
	struct fv_worker *w = &b->e.w[wid];
	size_t ds = b->e.ds;
	int err;

	err = dmt_hasher_digest(w->h, (size_t)(end - begin), b->rd.msgs + begin,
				NULL, w->dig);
	for (uint64_t i = begin; !err && i < end; i++)
		memcpy(b->rd.outs[i], w->dig + (i - begin) * ds, ds);
	return err;
}

static int run_round(struct dmt_fsverity_batch *b)
{
	unsigned int threads = b->e.threads;

	if (b->rd.n * b->e.bs < (1u << 20))
		threads = 1; /* a thread start costs more than this */
	return dmt_parallel_for(threads, b->rd.n, b->chunk, round_job, b);
}

/* Round r: the data blocks (r == 0) or the blocks of level r - 1 of every
 * file that has them, hashed into level r or the root. */
static int collect_round(struct dmt_fsverity_batch *b, unsigned int r,
			 bool *any)
{
	size_t bs = b->e.bs, ds = b->e.ds;
	int err;

	b->rd.n = 0;
	*any = false;
	for (unsigned int i = 0; i < b->ngroup; i++) {
		struct item *it = &b->items[i];
		const struct fv_geo *g = &it->g;
		uint8_t *tree = b->tree + it->tree_off;
		const uint8_t *src;
		uint64_t n;

		if (it->err || it->big || !it->size || r > g->levels)
			continue;
		if (r == 0) {
			src = b->data + it->data_off;
			n = g->data_blocks;
		} else {
			src = tree + g->level_start[r - 1] * bs;
			n = g->level_blocks[r - 1];
		}
		for (uint64_t k = 0; k < n; k++) {
			uint8_t *out =
				r < g->levels
					? tree + g->level_start[r] * bs + k * ds
					: it->root;

			err = round_add(&b->rd, src + k * bs, out);
			if (err)
				return err;
		}
		*any = true;
	}
	return 0;
}

static int hash_group(struct dmt_fsverity_batch *b)
{
	bool any = true;
	int err = 0;

	for (unsigned int r = 0; any && !err; r++) {
		err = collect_round(b, r, &any);
		if (!err && any)
			err = run_round(b);
	}
	return err;
}

/* ---- results ---- */

static int emit_tree(struct dmt_fsverity_batch *b, struct item *it)
{
	const struct dmt_fsverity_metadata_callbacks *cb =
		it->f.metadata_callbacks;
	size_t bs = b->e.bs;
	int err = 0;

	if (!cb)
		return 0;
	if (cb->merkle_tree_size)
		err = cb->merkle_tree_size(cb->ctx, it->g.tree_blocks * bs);
	for (uint64_t k = 0;
	     !err && cb->merkle_tree_block && k < it->g.tree_blocks; k++)
		err = cb->merkle_tree_block(
			cb->ctx, b->tree + it->tree_off + k * bs, bs, k * bs);
	return err;
}

static int report(struct dmt_fsverity_batch *b, struct item *it,
		  const uint8_t *desc, const uint8_t *digest)
{
	const struct dmt_fsverity_metadata_callbacks *cb =
		it->f.metadata_callbacks;
	struct dmt_fsverity_result res = {
		.user = it->f.user, .path = it->path, .size = it->size};

	if (!it->err && cb && cb->descriptor)
		it->err = cb->descriptor(cb->ctx, desc,
					 DMT_FSVERITY_DESCRIPTOR_SIZE);
	res.err = it->err;
	if (it->err) {
		res.reason = it->reason;
	} else {
		fv_digest_init(&b->e, &res.digest);
		memcpy(res.digest.digest, digest, b->e.ds);
	}
	b->stopped = b->done ? b->done(b->done_ctx, &res) : 0;
	return b->stopped;
}

static int run_big(struct dmt_fsverity_batch *b, struct item *it);

static int finish_group(struct dmt_fsverity_batch *b)
{
	const size_t dsz = DMT_FSVERITY_DESCRIPTOR_SIZE;
	unsigned int i;
	int err;

	for (i = 0; i < b->ngroup; i++) {
		struct item *it = &b->items[i];

		if (!it->err && !it->big)
			fv_descriptor(&b->e, it->size, it->root,
				      b->desc + i * dsz);
		else
			memset(b->desc + i * dsz, 0, dsz);
	}
	err = dmt_hasher_digest_strided(b->e.hdesc, b->ngroup, b->desc, dsz,
					NULL, b->desc_digest);
	for (i = 0; !err && i < b->ngroup; i++) {
		struct item *it = &b->items[i];

		if (it->big && !it->err) {
			err = run_big(b, it);
			continue;
		}
		if (!it->err)
			it->err = emit_tree(b, it);
		err = report(b, it, b->desc + i * dsz,
			     b->desc_digest + i * b->e.ds);
	}
	return err;
}

/* Opens a path, finds the size of a path or fd; errors stay in the item
 * (reported in order). */
static void open_item(struct item *it)
{
	struct stat st;

	it->sized = true;
	if (it->f.fd < 0 && it->path) {
		it->f.fd = open(it->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (it->f.fd < 0) {
			it->err = -errno;
			goto io_error;
		}
		it->own_fd = true;
		it->size = UINT64_MAX;
	}
	if (it->f.fd < 0 || it->size != UINT64_MAX)
		return;
	if (fstat(it->f.fd, &st) < 0) {
		it->err = -errno;
		goto io_error;
	}
	if (!S_ISREG(st.st_mode)) {
		it->err = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		dmt_reason_set(&it->reason, it->err,
			       DMT_REASON_FSVERITY_NOT_REGULAR, NULL,
			       st.st_mode);
		it->reason.path = it->path;
		return;
	}
	it->size = (uint64_t)st.st_size;
	return;
io_error:
	dmt_reason_set(&it->reason, it->err, DMT_REASON_IO, NULL,
		       (uint64_t)-it->err);
	it->reason.path = it->path;
}

static int open_job(void *ctx, unsigned int wid, uint64_t begin, uint64_t end)
{
	struct dmt_fsverity_batch *b = ctx;

	for (uint64_t i = begin; i < end; i++) {
		if (!b->items[i].sized)
			open_item(&b->items[i]);
	}
	(void)wid;
	return 0;
}

static int reserve_tree(struct dmt_fsverity_batch *b, uint64_t bytes)
{
	uint64_t cap = b->tree_cap ? b->tree_cap : (1u << 20);
	uint8_t *t;

	if (bytes <= b->tree_cap)
		return 0;
	while (cap < bytes)
		cap *= 2;
	t = realloc(b->tree, cap);
	if (!t)
		return -ENOMEM;
	b->tree = t;
	b->tree_cap = cap;
	return 0;
}

/* The group: the queued files from the start that fit GROUP_DATA (big
 * ones and errors take no room); their places in the buffers. */
static int plan_group(struct dmt_fsverity_batch *b)
{
	uint64_t data_cap = round_up(GROUP_DATA, b->e.bs) + b->e.bs;
	uint64_t data = 0, tree = 0;
	unsigned int i;

	for (i = 0; i < b->nitems; i++) {
		struct item *it = &b->items[i];
		uint64_t slot;

		if (it->err)
			continue;
		fv_geometry(&b->e, it->size, &it->g);
		/* fds: room for the byte past the end */
		slot = round_up(it->size + (it->f.fd >= 0), b->e.bs);
		it->big = slot > GROUP_SMALL;
		if (it->big)
			continue;
		if (data + slot > data_cap)
			break;
		it->data_off = data;
		it->slot_bytes = slot;
		it->tree_off = tree;
		data += slot;
		tree += it->g.tree_blocks * b->e.bs;
	}
	b->ngroup = i;
	b->tree_used = tree;
	return reserve_tree(b, tree);
}

/* Opens and sizes the queue, then hashes and reports one group; the
 * files that did not fit stay queued. */
static int run_group(struct dmt_fsverity_batch *b)
{
	unsigned int i, rest;
	int err;

	if (!b->nitems)
		return 0;
	err = dmt_parallel_for(b->e.threads, b->nitems, 16, open_job, b);
	if (!err)
		err = plan_group(b);
	if (!err && b->tree_used)
		memset(b->tree, 0, b->tree_used);
	if (!err) {
		read_callback_items(b);
		err = dmt_parallel_for(b->e.threads, b->ngroup, 8, read_job, b);
	}
	if (!err)
		err = hash_group(b);
	if (!err)
		err = finish_group(b);
	for (i = 0; i < b->ngroup; i++)
		item_release(&b->items[i]);
	rest = b->nitems - b->ngroup;
	memmove(b->items, b->items + b->ngroup, rest * sizeof(*b->items));
	memset(b->items + rest, 0, b->ngroup * sizeof(*b->items));
	b->nitems = rest;
	b->ngroup = 0;
	return err;
}

/* A file too big for a group: streamed alone with every worker. */
static int run_big(struct dmt_fsverity_batch *b, struct item *it)
{
	struct fv_source src = {.fd = it->f.fd,
				.read_fn = it->f.read_fn,
				.read_ctx = it->f.read_ctx,
				.path = it->path};
	uint8_t desc[DMT_FSVERITY_DESCRIPTOR_SIZE];
	uint8_t digest[DMT_FSVERITY_MAX_DIGEST];
	const uint8_t *msg = desc;
	int err = 0;

	it->err =
		fv_stream_root(&b->e, &src, it->size, it->f.metadata_callbacks,
			       it->root, &it->reason);
	if (!it->err) {
		fv_descriptor(&b->e, it->size, it->root, desc);
		err = dmt_hasher_digest(b->e.hdesc, 1, &msg, NULL, digest);
	}
	if (!err)
		err = report(b, it, desc, digest);
	item_release(it);
	return err;
}

int dmt_fsverity_batch_add(struct dmt_fsverity_batch *b,
			   const struct dmt_fsverity_file *f)
{
	struct item it = {.f = *f, .size = f->size};
	int err = 0;

	if (b->stopped)
		return b->stopped;
	if (f->fd < 0 && !f->path && !f->read_fn)
		return -EINVAL;
	if (f->path) {
		it.path = strdup(f->path);
		if (!it.path)
			return -ENOMEM;
	}
	/* paths are opened by the workers when the queue is full */
	it.sized = f->fd < 0 && !f->path;
	if (b->nitems == GROUP_FILES)
		err = run_group(b);
	if (err) {
		item_release(&it);
		return err;
	}
	b->items[b->nitems++] = it;
	return 0;
}

int dmt_fsverity_batch_finish(struct dmt_fsverity_batch *b)
{
	int err = 0;

	while (!err && !b->stopped && b->nitems)
		err = run_group(b);
	return b->stopped ? b->stopped : err;
}
