// SPDX-License-Identifier: MIT
/*
 * Verifying a dm-verity tree offline, top-down: the top block against the
 * root hash, then every level against its (already checked) parent, then
 * the data against level 0.  A bitmap per level records which blocks can
 * be trusted, so a mismatch is blamed on the right block: under a
 * corrupted hash block the children's mismatches are "unverifiable", not
 * corruptions of their own.  Like veritysetup, the padding of every hash
 * block must be zero.  Hash blocks are read with large preads, data as in
 * the builder (large preads, holes and zero blocks never hashed).
 */
#include "lib/verity/verity_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>


struct verifier {
	struct vt t;
	struct dmt_verity_report *rep;
	uint64_t *pbits;		/* trusted blocks of the parent level */
	uint64_t *cbits;		/* same, child level being checked */
	unsigned int clevel;		/* child level of a hash job */
};

/* Per-item findings, merged under the lock once per item. */
struct finding {
	uint64_t bad, unverifiable;
	struct dmt_verity_bad first;
};

static bool test_bit(const uint64_t *bits, uint64_t i)
{
	return bits[i >> 6] >> (i & 63) & 1;
}

static void set_bit(uint64_t *bits, uint64_t i)
{
	__atomic_fetch_or(&bits[i >> 6], 1ull << (i & 63), __ATOMIC_RELAXED);
}

/* Digests held by block j of level c (the last block may be partial). */
static uint64_t used_slots(const struct vt *t, unsigned int c, uint64_t j)
{
	uint64_t cnt = c ? t->g.level_blocks[c - 1] : t->g.data_blocks;
	uint64_t left = cnt - j * t->hpb;

	return left < t->hpb ? left : t->hpb;
}

/* Offset of the first non-zero padding byte, or -1. */
static long pad_error(const struct vt *t, const uint8_t *blk, uint64_t used)
{
	size_t ds = t->g.digest_size, slot = t->g.digest_slot;
	size_t hbs = t->g.hash_block_size, k;
	uint64_t e;

	for (e = 0; slot > ds && e < used; e++) {
		for (k = e * slot + ds; k < (e + 1) * slot; k++)
			if (blk[k])
				return (long)k;
	}
	for (k = (size_t)used * slot; k < hbs; k++)
		if (blk[k])
			return (long)k;
	return -1;
}

static void note(struct finding *f, enum dmt_verity_area area,
		 unsigned int level, uint64_t index, uint64_t offset,
		 bool padding)
{
	if (!f->bad++) {
		f->first.area = area;
		f->first.level = level;
		f->first.index = index;
		f->first.offset = offset;
		f->first.padding = padding;
	}
}

static int merge(struct verifier *v, const struct finding *f, bool data,
		 uint64_t bytes)
{
	struct dmt_verity_report *rep = v->rep;
	struct dmt_verity_bad *first = data ? &rep->first_data
					    : &rep->first_hash;

	pthread_mutex_lock(&v->t.lock);
	if (data)
		rep->bad_data_blocks += f->bad;
	else
		rep->bad_hash_blocks += f->bad;
	rep->unverifiable_blocks += f->unverifiable;
	/* levels are checked top-down, so only a lower index of the same
	 * level can replace the first one found */
	if (f->bad && (first->area == DMT_VERITY_AREA_NONE ||
		       (first->level == f->first.level &&
			first->index > f->first.index)))
		*first = f->first;
	pthread_mutex_unlock(&v->t.lock);
	return vt_progress(&v->t, bytes);
}

/* Reads the parent blocks [p0, p1] of level pl into the worker buffer. */
static int read_parents(struct vt *t, struct vt_worker *w, unsigned int pl,
			uint64_t p0, uint64_t p1)
{
	uint64_t hbs = t->g.hash_block_size;
	int err;

	err = vt_io(t, t->hash,
		    dmt_pread_full(t->hash, w->parent,
				   (size_t)((p1 - p0 + 1) * hbs),
				   (t->g.level_start[pl] + p0) * hbs));
	if (!err)
		err = vt_overlay_hash(t, w->parent, t->g.level_start[pl] + p0,
				      p1 - p0 + 1);
	return err;
}

static int hash_job(void *ctx, unsigned int wid, uint64_t begin, uint64_t end)
{
	struct verifier *v = ctx;
	struct vt *t = &v->t;
	struct vt_worker *w = &t->w[wid];
	unsigned int c = v->clevel, bits = t->g.hash_per_block_bits;
	uint64_t hbs = t->g.hash_block_size, n = end - begin, j;
	uint64_t p0 = begin >> bits, p1 = (end - 1) >> bits;
	size_t ds = t->g.digest_size;
	struct finding f = { 0 };
	int err;

	if (dmt_walk_stopped(&t->walk))
		return -EINTR;
	err = vt_io(t, t->hash,
		    dmt_pread_full(t->hash, w->io, (size_t)(n * hbs),
				   (t->g.level_start[c] + begin) * hbs));
	if (!err)
		err = vt_overlay_hash(t, w->io, t->g.level_start[c] + begin, n);
	if (!err)
		err = read_parents(t, w, c + 1, p0, p1);
	if (!err)
		err = vt_hash_blocks(t, wid, w->io, (size_t)n, w->dig);
	if (err)
		return err;
	for (j = begin; j < end; j++) {
		const uint8_t *blk = w->io + (j - begin) * hbs;
		uint64_t pj = j >> bits, off = (t->g.level_start[c] + j) * hbs;
		const uint8_t *exp = w->parent + (pj - p0) * hbs +
				     (j & (t->hpb - 1)) * t->g.digest_slot;
		long pad = pad_error(t, blk, used_slots(t, c, j));
		bool trusted = test_bit(v->pbits, pj);
		bool match = !memcmp(w->dig + (j - begin) * ds, exp, ds);

		if (trusted && match && pad < 0)
			set_bit(v->cbits, j);
		else if (pad >= 0)
			note(&f, DMT_VERITY_AREA_HASH, c, j,
			     off + (uint64_t)pad, true);
		else if (trusted)
			note(&f, DMT_VERITY_AREA_HASH, c, j, off, false);
		else if (!match)
			f.unverifiable++;
	}
	return merge(v, &f, false, n * hbs);
}

static int data_job(void *ctx, unsigned int wid, uint64_t begin, uint64_t end)
{
	struct verifier *v = ctx;
	struct vt *t = &v->t;
	struct vt_worker *w = &t->w[wid];
	unsigned int bits = t->g.hash_per_block_bits;
	uint64_t b0 = begin, b1 = end, j;
	uint64_t hbs = t->g.hash_block_size, p0 = b0 >> bits;
	size_t ds = t->g.digest_size;
	struct finding f = { 0 };
	int err;

	if (dmt_walk_stopped(&t->walk))
		return -EINTR;
	err = vt_hash_data(t, wid, b0, b1, w->dig);
	if (!err)
		err = read_parents(t, w, 0, p0, (b1 - 1) >> bits);
	if (err)
		return err;
	for (j = b0; j < b1; j++) {
		uint64_t pj = j >> bits;
		const uint8_t *exp = w->parent + (pj - p0) * hbs +
				     (j & (t->hpb - 1)) * t->g.digest_slot;

		if (!memcmp(w->dig + (j - b0) * ds, exp, ds))
			continue;
		if (test_bit(v->pbits, pj))
			note(&f, DMT_VERITY_AREA_DATA, 0, j,
			     j * t->g.data_block_size, false);
		else
			f.unverifiable++;
	}
	return merge(v, &f, true, (b1 - b0) * t->g.data_block_size);
}

static uint64_t *new_bits(uint64_t n)
{
	return calloc((size_t)((n + 63) / 64), sizeof(uint64_t));
}

/* The top block against the root hash. */
static int check_top(struct verifier *v, const uint8_t *root)
{
	struct vt *t = &v->t;
	struct vt_worker *w = &t->w[0];
	unsigned int top = t->g.levels - 1;
	uint64_t hbs = t->g.hash_block_size, off = t->g.level_start[top] * hbs;
	struct dmt_verity_report *rep = v->rep;
	long pad;
	int err;

	err = vt_io(t, t->hash, dmt_pread_full(t->hash, w->io, (size_t)hbs,
						off));
	if (!err)
		err = vt_overlay_hash(t, w->io, t->g.level_start[top], 1);
	if (!err)
		err = vt_hash_blocks(t, 0, w->io, 1, rep->root_hash);
	if (err)
		return err;
	rep->root_ok = !memcmp(rep->root_hash, root, t->g.digest_size);
	pad = pad_error(t, w->io, used_slots(t, top, 0));
	if (pad >= 0) {
		struct finding f = { 0 };

		note(&f, DMT_VERITY_AREA_HASH, top, 0, off + (uint64_t)pad,
		     true);
		err = merge(v, &f, false, 0);
		if (err)
			return err;
	}
	v->pbits = new_bits(1);
	if (!v->pbits)
		return -ENOMEM;
	if (rep->root_ok && pad < 0)
		set_bit(v->pbits, 0);
	return vt_progress(t, hbs);
}

/* Before a data window: read-ahead of the next one. */
static int data_window_begin(void *ctx, uint64_t b0, uint64_t b1)
{
	struct verifier *v = ctx;

	vt_readahead(&v->t, b1, b1 + (b1 - b0));
	return 0;
}

static int check_tree(struct verifier *v)
{
	struct vt *t = &v->t;
	struct dmt_walk_pass data = {
		.items = t->g.data_blocks, .chunk = t->item_blocks,
		.window = vt_window_blocks(t), .fn = data_job,
		.window_begin = data_window_begin, .ctx = v,
	};
	int err;

	for (unsigned int c = t->g.levels - 1; c-- > 0;) {
		struct dmt_walk_pass level = { .items = t->g.level_blocks[c],
					       .chunk = t->hitem_blocks,
					       .fn = hash_job, .ctx = v };

		v->cbits = new_bits(t->g.level_blocks[c]);
		if (!v->cbits)
			return -ENOMEM;
		v->clevel = c;
		err = dmt_walk_run(&t->walk, &level);
		free(v->pbits);
		v->pbits = v->cbits;
		v->cbits = NULL;
		if (err)
			return err;
	}
	return dmt_walk_run(&t->walk, &data);
}

int dmt_verity_verify(const struct dmt_verity_params *p, struct dmt_file *data,
		      struct dmt_file *hash, const uint8_t *root,
		      size_t root_size, struct dmt_verity_report *rep,
		      struct dmt_reason *why)
{
	struct verifier *v;
	struct vt *t;
	uint64_t size;
	int err;

	memset(rep, 0, sizeof(*rep));
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->rep = rep;
	t = &v->t;
	err = vt_init(t, p, data, hash, true, why);
	if (err)
		goto out;
	if (root_size != t->g.digest_size) {
		err = dmt_reason_set(why, -EINVAL, DMT_REASON_BAD_VALUE,
				     "root_size", root_size);
		goto out;
	}
	rep->root_hash_size = t->g.digest_size;
	t->walk.total = t->g.data_blocks * t->g.data_block_size +
		   t->g.hash_blocks * t->g.hash_block_size;

	if (t->g.levels == 0) {
		/* one data block: the root is its digest */
		err = vt_hash_data(t, 0, 0, 1, rep->root_hash);
		if (err)
			goto out;
		rep->root_ok = !memcmp(rep->root_hash, root, root_size);
		err = vt_progress(t, t->g.data_block_size);
	} else {
		err = dmt_file_size(hash, &size);
		if (!err && size < t->g.hash_end)
			err = -ENODATA;
		vt_io(t, hash, err);
		if (!err)
			err = check_top(v, root);
		if (!err)
			err = check_tree(v);
	}
	if (err)
		goto out;
	if (!rep->root_ok || rep->bad_data_blocks || rep->bad_hash_blocks ||
	    rep->unverifiable_blocks)
		err = -EBADMSG;
out:
	if (err && err != -EBADMSG)
		rep->error_path = vt_error_path(t);
	free(v->pbits);
	free(v->cbits);
	vt_free(t);
	free(v);
	return err;
}
