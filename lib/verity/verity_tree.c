// SPDX-License-Identifier: MIT
/*
 * Hashing machinery shared by verity_build.c and verity_verify.c.
 *
 * Data is read with one pread per work item (1 MiB, into a buffer that
 * stays in the worker's cache while it is hashed; measured cheaper in CPU
 * than mapping the file, whose page-table setup and teardown cost more
 * than the copy).  Holes (SEEK_DATA/SEEK_HOLE) are never read and all-zero
 * blocks are never hashed: both get one precomputed digest, so the output
 * is the same.
 */
#include "lib/verity/verity_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dmt/threads.h>

static int alloc_workers(struct vt *t, bool need_parent)
{
	size_t ds = t->g.digest_size, hbs = t->g.hash_block_size;
	uint64_t most = t->item_blocks > t->hitem_blocks ? t->item_blocks
							 : t->hitem_blocks;
	size_t most_bytes = t->item_blocks * t->g.data_block_size;

	if (most_bytes < t->hitem_blocks * hbs)
		most_bytes = t->hitem_blocks * hbs;
	struct dmt_hasher *hd = NULL, *hh = NULL;
	unsigned int i;
	int err;

	t->w = calloc(t->threads, sizeof(*t->w));
	if (!t->w)
		return -ENOMEM;
	err = dmt_verity_hasher_new(&t->p, false, &hd);
	if (!err)
		err = dmt_verity_hasher_new(&t->p, true, &hh);
	if (err)
		goto out;
	for (i = 0; i < t->threads; i++) {
		struct vt_worker *w = &t->w[i];

		if (i == 0) {
			w->hd = hd;
			w->hh = hh;
			hd = hh = NULL;
		} else {
			err = dmt_hasher_clone(t->w[0].hd, &w->hd);
			if (!err)
				err = dmt_hasher_clone(t->w[0].hh, &w->hh);
			if (err)
				goto out;
		}
		w->dig = malloc(most * ds);
		w->dig2 = malloc(most * ds);
		w->msgs = malloc(t->item_blocks * sizeof(*w->msgs));
		if (!w->dig || !w->dig2 || !w->msgs)
			goto nomem;
		w->io = aligned_alloc(4096, most_bytes);
		if (!w->io)
			goto nomem;
		if (need_parent) {
			w->parent = malloc((most / t->hpb + 2) * hbs);
			if (!w->parent)
				goto nomem;
		}
	}
	err = 0;
	goto out;
nomem:
	err = -ENOMEM;
out:
	dmt_hasher_free(hd);
	dmt_hasher_free(hh);
	return err;
}

static int zero_digest(struct vt *t)
{
	return dmt_zero_tree(t->w[0].hd, t->g.data_block_size, NULL, 0,
			     t->g.digest_size, 0, 0, 0, t->zero_digest);
}

/* Blocks of bs bytes in a work item: a power of two, VT_ITEM_BYTES or
 * a thread's share of the memory budget if smaller, at least one. */
static uint64_t item_blocks(unsigned int threads, uint32_t bs)
{
	uint64_t n = dmt_walk_share(DMT_WALK_MEM_BUDGET, threads, bs, bs,
				    VT_ITEM_BYTES) / bs;

	return 1ull << (63 - __builtin_clzll(n));
}

int vt_init(struct vt *t, const struct dmt_verity_params *p,
	    struct dmt_file *data, struct dmt_file *hash, bool need_parent,
	    struct dmt_reason *why)
{
	uint64_t dsize, data_end, area;
	int err;

	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->lock, NULL);
	dmt_walk_init(&t->walk, 1, &p->progress, 0);
	t->p = *p;
	t->data = data;
	t->hash = hash;
	/* only verification looks through an overlay */
	if (!need_parent)
		t->p.overlay = NULL;

	err = dmt_verity_check_params(&t->p, why);
	if (err)
		return err;
	err = vt_io(t, data, dmt_file_size(data, &dsize));
	if (err)
		return err;
	if (!t->p.data_blocks)
		t->p.data_blocks = dmt_verity_blocks_for_size(&t->p, dsize);
	if (!t->p.data_blocks)
		return vt_io(t, data, -ENODATA);
	err = dmt_verity_geometry(&t->p, &t->g, why);
	if (err)
		return err;
	data_end = t->p.data_blocks * t->p.data_block_size;
	if (data_end > dsize)
		return vt_io(t, data, -ENODATA);
	/* One file: the hash area (superblock or tree) must follow the data
	 * (veritysetup: "Data area overlaps with hash area."). */
	area = t->g.hash_start * t->g.hash_block_size;
	if (!t->p.no_superblock || t->p.hash_offset < area)
		area = t->p.hash_offset;
	if (dmt_file_same(data, hash) && data_end > area)
		return -EINVAL;

	t->hpb = 1u << t->g.hash_per_block_bits;
	t->threads = t->p.threads ? t->p.threads : dmt_default_threads();
	if (t->threads > VT_MAX_THREADS)
		t->threads = VT_MAX_THREADS;
	/* a worker's buffers: its share of the budget, at most an item */
	t->item_blocks = item_blocks(t->threads, t->g.data_block_size);
	t->hitem_blocks = item_blocks(t->threads, t->g.hash_block_size);
	/* no more workers than there is work */
	if (t->threads > t->g.data_blocks / t->item_blocks + 1)
		t->threads =
			(unsigned int)(t->g.data_blocks / t->item_blocks + 1);
	t->walk.threads = t->threads;

	err = alloc_workers(t, need_parent);
	if (err)
		return err;
	return zero_digest(t);
}

void vt_free(struct vt *t)
{
	unsigned int i;

	for (i = 0; t->w && i < t->threads; i++) {
		struct vt_worker *w = &t->w[i];

		dmt_hasher_free(w->hd);
		dmt_hasher_free(w->hh);
		free(w->io);
		free(w->dig);
		free(w->dig2);
		free(w->msgs);
		free(w->parent);
	}
	free(t->w);
	t->w = NULL;
	pthread_mutex_destroy(&t->lock);
	dmt_walk_destroy(&t->walk);
}

void vt_readahead(struct vt *t, uint64_t b0, uint64_t b1)
{
	uint64_t dbs = t->g.data_block_size;

	if (b1 > t->g.data_blocks)
		b1 = t->g.data_blocks;
	/* only a hint: cold files are read while the previous window is
	 * being hashed */
	if (b0 < b1)
		posix_fadvise(t->data->fd, (off_t)(b0 * dbs),
			      (off_t)((b1 - b0) * dbs), POSIX_FADV_WILLNEED);
}

/* Digests of the overlay's data blocks in [b0, b1) replace the files'. */
static int overlay_data(struct vt *t, struct vt_worker *w, uint64_t b0,
			uint64_t b1, uint8_t *out)
{
	const struct dmt_verity_overlay *o = t->p.overlay;
	const uint8_t *msg = w->io;
	size_t ds = t->g.digest_size;
	uint64_t b;
	int err;

	for (b = o->next(o->ctx, false, b0); b < b1;
	     b = o->next(o->ctx, false, b + 1)) {
		err = o->read(o->ctx, false, b, w->io);
		if (!err)
			err = dmt_hasher_digest(w->hd, 1, &msg, NULL,
						out + (b - b0) * ds);
		if (err)
			return err;
	}
	return 0;
}

int vt_overlay_hash(struct vt *t, uint8_t *buf, uint64_t first, uint64_t n)
{
	const struct dmt_verity_overlay *o = t->p.overlay;
	uint64_t b;
	int err;

	if (!o)
		return 0;
	for (b = o->next(o->ctx, true, first); b < first + n;
	     b = o->next(o->ctx, true, b + 1)) {
		err = o->read(o->ctx, true, b,
			      buf + (b - first) * t->g.hash_block_size);
		if (err)
			return err;
	}
	return 0;
}

int vt_hash_data(struct vt *t, unsigned int wid, uint64_t b0, uint64_t b1,
		 uint8_t *out)
{
	struct vt_worker *w = &t->w[wid];
	struct dmt_walk_blocks wb = {
		.f = t->data, .size = UINT64_MAX, .bs = t->g.data_block_size,
		.ds = t->g.digest_size, .zero_digest = t->zero_digest,
		.h = w->hd, .io = w->io, .msgs = w->msgs, .dig = w->dig2,
	};
	int err;

	err = dmt_walk_hash_blocks(&wb, b0, b1, out);
	w->zero_blocks += wb.zero_blocks;
	if (err)
		return wb.read_failed ? vt_io(t, t->data, err) : err;
	return t->p.overlay ? overlay_data(t, w, b0, b1, out) : 0;
}

int vt_hash_blocks(struct vt *t, unsigned int wid, const uint8_t *src,
		   size_t n, uint8_t *out)
{
	return dmt_hasher_digest_strided(t->w[wid].hh, n, src,
					 t->g.hash_block_size, NULL, out);
}

uint64_t vt_window_blocks(const struct vt *t)
{
	uint64_t bytes = VT_WINDOW_PER_THREAD * t->threads;

	if (bytes < VT_WINDOW_BYTES)
		bytes = VT_WINDOW_BYTES;
	if (bytes > VT_WINDOW_MAX)
		bytes = VT_WINDOW_MAX;
	return bytes / t->g.data_block_size;
}
