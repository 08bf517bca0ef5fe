// SPDX-License-Identifier: MIT
/*
 * veritysetup format with FEC in one call (tree, parity, superblock, in
 * veritysetup's order), and the FEC layout glue that format and check
 * share: overlap rules, how much of the hash file the parity covers, where
 * a covered block lies.
 */
#include <dmt/verity.h>

#include <errno.h>
#include <string.h>

#include "lib/common/reserved.h"
#include "lib/verity/verity_priv.h"
#include "lib/fec/fec_priv.h"

static int overlap(struct dmt_reason *why, const char *a, const char *b)
{
	dmt_reason_set(why, 0, DMT_REASON_VERITY_AREA_OVERLAP, a, 0);
	if (why)
		why->field2 = b;
	return -EINVAL;
}

static int fec_layout_err(struct dmt_reason *why, int err,
			  const struct dmt_file *f)
{
	dmt_reason_set(why, 0, DMT_REASON_VERITY_FEC_LAYOUT, "fec",
		       (uint64_t)-err);
	if (why)
		why->path = dmt_file_path(f);
	return err;
}

/* veritysetup's overlap checks, before anything is written (stricter: the
 * parity may not start inside the tree's last block either). */
static int fec_overlap(const struct dmt_verity_params *p,
		       const struct dmt_verity_geometry *g,
		       const struct dmt_file *data, const struct dmt_file *hash,
		       const struct dmt_verity_fec_params *fec, struct dmt_reason *why)
{
	if (p->data_block_size != p->hash_block_size)
		return dmt_reason_set(why, -EINVAL,
				      DMT_REASON_VERITY_FEC_BLOCK_SIZES,
				      "data_block_size", p->data_block_size);
	if (fec->file == hash && fec->offset < g->hash_end)
		return overlap(why, "hash", "fec");
	if (fec->file == data &&
	    p->data_blocks * p->data_block_size > fec->offset)
		return overlap(why, "data", "fec");
	return 0;
}

static void fec_params(const struct dmt_verity_params *p,
		       const struct dmt_verity_geometry *g,
		       struct dmt_file *data, struct dmt_file *hash,
		       const struct dmt_verity_fec_params *fec,
		       struct dmt_fec_params *fp)
{
	memset(fp, 0, sizeof(*fp));
	fp->roots = fec->roots ? fec->roots : DMT_FEC_ROOTS_DEFAULT;
	fp->block_size = p->data_block_size;
	fp->data_blocks = p->data_blocks;
	fp->hash_start = g->hash_start;
	fp->fec_offset = fec->offset;
	fp->data = data;
	fp->hash = hash;
	fp->fec = fec->file;
	fp->threads = p->threads;
	fp->engine = p->engine;
}

/* The layout from the files (fec_overlap passed). */
static int fec_resolve(const struct dmt_fec_params *fp,
		       struct dmt_fec_layout *fl, struct dmt_reason *why)
{
	int err = dmt_fec_layout(fp, fl, NULL);

	if (err == -ENODATA) {
		dmt_reason_set(why, 0, DMT_REASON_DEVICE_TOO_SMALL, "hash", 0);
		if (why)
			why->path = dmt_file_path(fp->hash);
		return err;
	}
	return err ? fec_layout_err(why, err, fp->fec) : 0;
}

void dmt_verity_fec_params_init(struct dmt_verity_fec_params *p)
{
	memset(p, 0, sizeof(*p));
}

int dmt_verity_fec_layout(const struct dmt_verity_params *p,
			  struct dmt_file *data, struct dmt_file *hash,
			  const struct dmt_verity_fec_params *fec, bool existing,
			  struct dmt_fec_layout *fl, struct dmt_reason *why)
{
	struct dmt_verity_geometry g;
	struct dmt_fec_params fp;
	uint64_t size;
	int err;

	memset(fl, 0, sizeof(*fl));
	err = fec ? DMT_CHECK_RESERVED(fec, why) : 0;
	if (err)
		return err;
	err = dmt_verity_geometry(p, &g, NULL);
	if (err)
		return dmt_reason_set(why, err, DMT_REASON_BAD_VALUE,
				      "data_blocks", p->data_blocks);
	err = fec_overlap(p, &g, data, hash, fec, why);
	if (err)
		return err;
	fec_params(p, &g, data, hash, fec, &fp);
	err = fec_resolve(&fp, fl, why);
	if (err || !existing)
		return err;
	err = dmt_file_size(fec->file, &size);
	if (err) {
		dmt_reason_set(why, 0, DMT_REASON_IO, "fec", (uint64_t)-err);
		if (why)
			why->path = dmt_file_path(fec->file);
		return err;
	}
	if (size >= fl->fec_end)
		return 0;
	dmt_reason_set(why, 0, DMT_REASON_DEVICE_TOO_SMALL, "fec", size);
	if (why) {
		why->min = fl->fec_end;
		why->path = dmt_file_path(fec->file);
	}
	return -ENODATA;
}

int dmt_verity_fec_plan(const struct dmt_verity_geometry *g,
			unsigned int roots, uint64_t offset, bool shared,
			uint64_t hash_file_bytes, struct dmt_fec_layout *fl,
			struct dmt_reason *why)
{
	uint64_t bs = g->data_block_size;
	uint64_t end = (shared ? offset : hash_file_bytes) / bs;
	int err;

	memset(fl, 0, sizeof(*fl));
	if (shared && offset < g->hash_end)
		return overlap(why, "hash", "fec");
	err = dmt_fec_geometry(roots ? roots : DMT_FEC_ROOTS_DEFAULT,
			       g->data_block_size, g->data_blocks,
			       g->hash_start,
			       end > g->hash_start ? end - g->hash_start : 0,
			       offset, fl);
	if (err)
		return dmt_reason_set(why, err, DMT_REASON_VERITY_FEC_LAYOUT,
				      "fec", (uint64_t)-err);
	fl->shared = shared;
	return 0;
}

void dmt_verity_locate(const struct dmt_verity_geometry *g,
		       const struct dmt_fec_layout *l, uint64_t block,
		       struct dmt_verity_where *w)
{
	uint64_t fb;
	unsigned int i;

	w->level = -1;
	if (!dmt_fec_block_is_hash(l, block, &fb)) {
		w->area = DMT_VERITY_AREA_DATA;
		w->index = fb;
		w->offset = fb * g->data_block_size;
		return;
	}
	w->area = DMT_VERITY_AREA_METADATA;
	w->index = fb;
	w->offset = fb * g->hash_block_size;
	for (i = 0; i < g->levels; i++) {
		if (fb >= g->level_start[i] &&
		    fb < g->level_start[i] + g->level_blocks[i]) {
			w->area = DMT_VERITY_AREA_HASH;
			w->level = (int)i;
			w->index = fb - g->level_start[i];
			return;
		}
	}
}

struct dmt_progress vt_stage_begin(const struct dmt_verity_stages *st,
				       enum dmt_verity_stage s)
{
	struct dmt_progress none = { 0 };

	return st && st->begin ? st->begin(st->ctx, s) : none;
}

int vt_stage_end(const struct dmt_verity_stages *st,
		     enum dmt_verity_stage s, int err)
{
	if (st && st->end)
		st->end(st->ctx, s, err);
	return err;
}

/* Parity, then the superblock, after the tree. */
static int format_fec(const struct dmt_verity_params *q,
		      const struct dmt_verity_geometry *g,
		      struct dmt_file *data, struct dmt_file *hash,
		      const struct dmt_verity_fec_params *fec,
		      const struct dmt_verity_stages *st,
		      struct dmt_fec_layout *fl, struct dmt_reason *why)
{
	struct dmt_fec_params fp;
	int err;

	fec_params(q, g, data, hash, fec, &fp);
	err = fec_resolve(&fp, fl, why);
	if (err)
		return err;
	fp.progress = vt_stage_begin(st, DMT_VERITY_STAGE_FEC_ENCODE);
	err = vt_stage_end(st, DMT_VERITY_STAGE_FEC_ENCODE,
			dmt_fec_encode(&fp, NULL, NULL));
	if (err || q->no_superblock)
		return err;
	vt_stage_begin(st, DMT_VERITY_STAGE_SUPERBLOCK);
	return vt_stage_end(st, DMT_VERITY_STAGE_SUPERBLOCK,
			 dmt_verity_sb_write(hash, q));
}

int dmt_verity_format(const struct dmt_verity_params *p,
		      struct dmt_file *data, struct dmt_file *hash,
		      const struct dmt_verity_fec_params *fec,
		      const struct dmt_verity_stages *st,
		      struct dmt_verity_result *res, struct dmt_fec_layout *fl,
		      struct dmt_reason *why)
{
	struct dmt_verity_params q = *p;
	struct dmt_verity_geometry g;
	struct dmt_fec_layout own;
	bool with_fec = fec && fec->file;
	uint64_t size;
	int err;

	memset(res, 0, sizeof(*res));
	if (!fl)
		fl = &own;
	memset(fl, 0, sizeof(*fl));
	if (!q.data_blocks && !dmt_file_size(data, &size))
		q.data_blocks = dmt_verity_blocks_for_size(&q, size);
	err = dmt_verity_check_params(&q, why);
	if (!err && fec)
		err = DMT_CHECK_RESERVED(fec, why);
	if (err)
		return err;
	if (with_fec) {
		err = dmt_verity_geometry(&q, &g, NULL);
		if (!err)
			err = fec_overlap(&q, &g, data, hash, fec, why);
		if (err)
			return err;
	}
	q.progress = vt_stage_begin(st, DMT_VERITY_STAGE_TREE);
	err = vt_stage_end(st, DMT_VERITY_STAGE_TREE,
			vt_build(&q, data, hash, !with_fec, res, NULL));
	if (err || !with_fec)
		return err;
	return format_fec(&q, &res->geo, data, hash, fec, st, fl, why);
}
