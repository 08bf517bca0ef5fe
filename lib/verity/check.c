// SPDX-License-Identifier: MIT
/*
 * veritysetup verify with FEC, and repair (include/dmt/verity.h,
 * dmt_verity_check): verify -> FEC correction -> verify again through the
 * corrections, or FEC repair -> sync -> verify the files again.  A
 * correction is trusted only when its digest checks out against a parent
 * that is itself proven all the way up to the root hash.
 */
#include <dmt/verity.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/common/overlay.h"
#include "lib/common/reserved.h"
#include "lib/fec/fec_priv.h"
#include "lib/verity/verity_priv.h"

struct check_run {
	struct dmt_verity_params p;	/* data_blocks resolved */
	struct dmt_verity_geometry g;
	const struct dmt_fec_layout *l;
	const uint8_t *root;
	struct dmt_hasher *hd, *hh;
	uint8_t *pbuf;			/* a parent block per tree level */
	uint64_t *trusted;		/* tree blocks proven up to the root */
	struct dmt_overlay *ov;		/* corrected blocks (covered numbers) */
	struct dmt_verity_check_result *res;
};

static bool test_bit(const uint64_t *bits, uint64_t i)
{
	return bits[i / 64] >> (i % 64) & 1;
}

/*
 * Checks a block against the tree all the way up to the root hash (a
 * repair must never be trusted on a forged or damaged parent): its digest
 * against its parent's entry, then the parent likewise, unless it was
 * proven before in this run.  Parents are read through
 * dmt_fec_read_block(), so blocks corrected in this run count.
 */
static int check_chain(struct check_run *r, struct dmt_fec *fec, bool is_hash,
		       uint64_t fb, const uint8_t *data, unsigned int depth)
{
	const struct dmt_verity_geometry *g = &r->g;
	const struct dmt_fec_layout *l = r->l;
	uint8_t dig[DMT_DIGEST_MAX], *pb;
	uint64_t parent, t;
	uint32_t off;
	int loc, v;

	loc = dmt_verity_digest_location(g, is_hash, fb, &parent, &off);
	if (loc < 0)
		return DMT_FEC_BLOCK_UNKNOWN;	/* not part of the tree */
	v = dmt_hasher_digest(is_hash ? r->hh : r->hd, 1, &data, NULL, dig);
	if (v < 0)
		return v;
	if (loc == 1)
		return memcmp(dig, r->root, g->digest_size) ?
			DMT_FEC_BLOCK_BAD : DMT_FEC_BLOCK_OK;
	if (parent < l->hash_start || depth > g->levels)
		return -EINVAL;
	pb = r->pbuf + (size_t)depth * l->block_size;
	v = dmt_fec_read_block(fec, l->data_blocks + parent - l->hash_start,
			       pb);
	if (v < 0)
		return v;
	if (memcmp(dig, pb + off, g->digest_size))
		return DMT_FEC_BLOCK_BAD;
	t = parent - g->hash_start;
	if (test_bit(r->trusted, t))
		return DMT_FEC_BLOCK_OK;
	v = check_chain(r, fec, true, parent, pb, depth + 1);
	if (v == DMT_FEC_BLOCK_OK)
		r->trusted[t / 64] |= 1ull << (t % 64);
	return v == DMT_FEC_BLOCK_UNKNOWN ? DMT_FEC_BLOCK_BAD : v;
}

static int fec_check(void *ctx, struct dmt_fec *fec, uint64_t block,
		     const uint8_t *data)
{
	struct check_run *r = ctx;
	uint64_t fb;
	bool is_hash = dmt_fec_block_is_hash(r->l, block, &fb);

	return check_chain(r, fec, is_hash, fb, data, 0);
}

static int list_add(struct dmt_verity_blocks *b, uint64_t v)
{
	b->total++;
	if (b->n >= DMT_VERITY_LIST_MAX)
		return 0;
	if (!(b->n & (b->n - 1)) && b->n >= 64) {
		uint64_t *n = realloc(b->v, 2 * b->n * sizeof(*n));

		if (!n)
			return -ENOMEM;
		b->v = n;
	} else if (!b->v) {
		b->v = malloc(64 * sizeof(*b->v));
		if (!b->v)
			return -ENOMEM;
	}
	b->v[b->n++] = v;
	return 0;
}

static int fec_report(void *ctx, uint64_t block, enum dmt_fec_outcome what,
		      const uint8_t *data)
{
	struct check_run *r = ctx;

	(void)data;	/* the overlay has it (verify) or the file (repair) */
	switch (what) {
	case DMT_FEC_CORRECTED:
		return list_add(&r->res->corrected, block);
	case DMT_FEC_CORRECTED_UNVERIFIED:
		return list_add(&r->res->unverified, block);
	case DMT_FEC_UNREPAIRABLE:
		return list_add(&r->res->unrepairable, block);
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void sort_list(struct dmt_verity_blocks *b)
{
	/* qsort() may not be handed a NULL array, even an empty one */
	if (b->n)
		qsort(b->v, b->n, sizeof(*b->v), cmp_u64);
}

/* The corrections as the verifier sees them (struct dmt_verity_overlay):
 * read from the worker threads at once, the overlay is sealed. */
static uint64_t ov_next(void *ctx, bool is_hash, uint64_t from)
{
	const struct check_run *r = ctx;
	const struct dmt_fec_layout *l = r->l;
	uint64_t cb;

	if (!is_hash) {
		if (from >= l->data_blocks)
			return UINT64_MAX;
		cb = dmt_overlay_next(r->ov, from);
		return cb < l->data_blocks ? cb : UINT64_MAX;
	}
	if (from < l->hash_start)
		from = l->hash_start;
	if (from - l->hash_start >= l->hash_blocks)
		return UINT64_MAX;
	cb = dmt_overlay_next(r->ov, l->data_blocks + (from - l->hash_start));
	return cb != UINT64_MAX ? l->hash_start + (cb - l->data_blocks)
				: UINT64_MAX;
}

static int ov_read(void *ctx, bool is_hash, uint64_t block, uint8_t *buf)
{
	const struct check_run *r = ctx;
	const struct dmt_fec_layout *l = r->l;
	uint64_t cb = is_hash ? l->data_blocks + (block - l->hash_start)
			      : block;
	int err = dmt_overlay_get(r->ov, cb, buf);

	return err < 0 ? err : err ? 0 : -EINVAL;
}

static int run_init(struct check_run *r, const struct dmt_verity_params *p,
		    struct dmt_file *data, const uint8_t *root,
		    struct dmt_verity_check_result *res)
{
	uint64_t size;
	int err;

	r->p = *p;
	r->root = root;
	r->res = res;
	r->l = &res->fec_layout;
	if (!r->p.data_blocks) {
		err = dmt_file_size(data, &size);
		if (err)
			return err;
		r->p.data_blocks = dmt_verity_blocks_for_size(&r->p, size);
	}
	err = dmt_verity_geometry(&r->p, &r->g, NULL);
	if (!err)
		err = dmt_verity_hasher_new(&r->p, false, &r->hd);
	if (!err)
		err = dmt_verity_hasher_new(&r->p, true, &r->hh);
	return err;
}

static void run_free(struct check_run *r)
{
	dmt_hasher_free(r->hd);
	dmt_hasher_free(r->hh);
	free(r->pbuf);
	free(r->trusted);
	dmt_overlay_free(r->ov);
}

/* One tree verification (through the corrections when ov is given). */
static int verify_stage(struct check_run *r, enum dmt_verity_stage s,
			struct dmt_file *data, struct dmt_file *hash,
			const struct dmt_verity_overlay *ov,
			const struct dmt_verity_stages *st)
{
	struct dmt_verity_params q = r->p;
	struct dmt_verity_report *rep = &r->res->rep;
	int err;

	q.progress = vt_stage_begin(st, s);
	q.overlay = ov;
	err = dmt_verity_verify(&q, data, hash, r->root, r->g.digest_size,
				rep, NULL);
	if (err && err != -EBADMSG)
		r->res->error_path = rep->error_path;
	return vt_stage_end(st, s, err);
}

/* The FEC pass: corrections into the overlay (verify) or the files. */
static int fec_stage(struct check_run *r, struct dmt_file *data,
		     struct dmt_file *hash, const struct dmt_verity_fec_params *fec,
		     unsigned int flags, const struct dmt_verity_stages *st,
		     struct dmt_reason *why)
{
	struct dmt_fec_ops ops = { fec_check, fec_report, r };
	struct dmt_verity_check_result *res = r->res;
	struct dmt_fec_params fp = {
		.roots = r->l->roots, .block_size = r->l->block_size,
		.data_blocks = r->l->data_blocks,
		.hash_start = r->l->hash_start,
		.hash_blocks = r->l->hash_blocks,
		.fec_offset = r->l->fec_offset,
		.data = data, .hash = hash, .fec = fec->file,
		.threads = r->p.threads,
		.engine = r->p.engine,
	};
	int err;

	r->pbuf = malloc(((size_t)r->g.levels + 1) * r->l->block_size);
	r->trusted = calloc(r->g.hash_blocks / 64 + 1, sizeof(uint64_t));
	err = r->pbuf && r->trusted ? 0 : -ENOMEM;
	if (!err)
		err = dmt_overlay_new(r->l->block_size, DMT_OVERLAY_MEM_BUDGET,
				      &r->ov);
	if (err)
		return err;
	res->fec_ran = true;
	fp.progress = vt_stage_begin(st, DMT_VERITY_STAGE_FEC);
	err = dmt_fec_correct(&fp, &ops, flags & DMT_VERITY_CHECK_REPAIR ?
			      DMT_FEC_REPAIR : 0, r->ov, &res->fec, NULL);
	if (err && err != -EBADMSG && dmt_overlay_spill_failed(r->ov))
		dmt_reason_set(why, 0, DMT_REASON_VERITY_SPILL, NULL,
			       (uint64_t)-err);
	if (!err || err == -EBADMSG)
		err = dmt_overlay_seal(r->ov) ? -ENOMEM : err;
	sort_list(&res->corrected);
	sort_list(&res->unverified);
	sort_list(&res->unrepairable);
	return vt_stage_end(st, DMT_VERITY_STAGE_FEC, err);
}

/* repair: what was written reaches the disk before it is checked. */
static int sync_stage(struct check_run *r, struct dmt_file *data,
		      struct dmt_file *hash, const struct dmt_verity_fec_params *fec,
		      const struct dmt_verity_stages *st)
{
	int err;

	vt_stage_begin(st, DMT_VERITY_STAGE_SYNC);
	err = dmt_file_sync(data);
	if (!err && hash != data)
		err = dmt_file_sync(hash);
	if (!err && fec->file != data && fec->file != hash &&
	    fec->file->writable)
		err = dmt_file_sync(fec->file);
	(void)r;
	return vt_stage_end(st, DMT_VERITY_STAGE_SYNC, err);
}

/* After the first verification failed (or right away for repair). */
static int correct(struct check_run *r, struct dmt_file *data,
		   struct dmt_file *hash, const struct dmt_verity_fec_params *fec,
		   unsigned int flags, const struct dmt_verity_stages *st,
		   struct dmt_reason *why)
{
	struct dmt_verity_overlay ov = { ov_next, ov_read, r };
	struct dmt_verity_check_result *res = r->res;
	int err;

	err = fec_stage(r, data, hash, fec, flags, st, why);
	if (err && err != -EBADMSG)
		return err;
	if (flags & DMT_VERITY_CHECK_REPAIR) {
		err = sync_stage(r, data, hash, fec, st);
		if (err)
			return err;
		res->reverified = true;
		return verify_stage(r, DMT_VERITY_STAGE_REVERIFY, data, hash,
				    NULL, st);
	}
	if (!dmt_overlay_count(r->ov) || res->unrepairable.total)
		return -EBADMSG;	/* nothing FEC could fix */
	res->reverified = true;
	return verify_stage(r, DMT_VERITY_STAGE_REVERIFY, data, hash, &ov, st);
}

int dmt_verity_check(const struct dmt_verity_params *p, struct dmt_file *data,
		     struct dmt_file *hash, const struct dmt_verity_fec_params *fec,
		     const uint8_t *root, size_t root_size, unsigned int flags,
		     const struct dmt_verity_stages *st,
		     struct dmt_verity_check_result *res,
		     struct dmt_reason *why)
{
	bool with_fec = fec && fec->file;
	struct check_run r = { 0 };
	int err;

	memset(res, 0, sizeof(*res));
	err = DMT_CHECK_RESERVED(p, why);
	if (!err && fec)
		err = DMT_CHECK_RESERVED(fec, why);
	if (err)
		return err;
	if ((flags & DMT_VERITY_CHECK_REPAIR) && !with_fec)
		return dmt_reason_set(why, -EINVAL, DMT_REASON_MISSING, "fec",
				      0);
	err = run_init(&r, p, data, root, res);
	if (!err && root_size != r.g.digest_size)
		err = -EINVAL;
	if (!err && with_fec)
		err = dmt_verity_fec_layout(&r.p, data, hash, fec, true,
					    &res->fec_layout, why);
	if (err)
		goto out;
	if (!(flags & DMT_VERITY_CHECK_REPAIR)) {
		err = verify_stage(&r, DMT_VERITY_STAGE_VERIFY, data, hash,
				   NULL, st);
		if (err != -EBADMSG || !with_fec)
			goto out;
	}
	err = correct(&r, data, hash, fec, flags, st, why);
out:
	run_free(&r);
	return err;
}

void dmt_verity_check_result_free(struct dmt_verity_check_result *res)
{
	free(res->corrected.v);
	free(res->unverified.v);
	free(res->unrepairable.v);
	res->corrected = res->unverified = res->unrepairable =
		(struct dmt_verity_blocks){ 0 };
}
