// SPDX-License-Identifier: MIT
/*
 * dm-integrity format on open files: plan (sizes, geometry, salt; nothing
 * written), then write (superblock, journal, data and every tag).
 */
#include "lib/integrity/integrity_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

/* The payload's and the data device's sizes; need = sectors to provide. */
static int source_sizes(const struct dmt_integrity_params *o,
			struct dmt_integrity_layout *l, uint64_t *need,
			struct dmt_integrity_result *r)
{
	int err;

	*need = 0;
	if (o->payload) {
		err = dmt_file_size(o->payload, &r->payload_bytes);
		if (err)
			return dmt_integrity_why(r, err,
						 DMT_REASON_INTEGRITY_IO_SIZE,
						 o->payload, NULL, -err);
		*need = (r->payload_bytes + l->sector_size - 1) /
			l->sector_size * (l->sector_size / 512);
	}
	if (o->data) {
		err = dmt_file_size(o->data, &r->data_device_bytes);
		if (err)
			return dmt_integrity_why(r, err,
						 DMT_REASON_INTEGRITY_IO_SIZE,
						 o->data, NULL, -err);
		l->data_dev_sectors = r->data_device_bytes >> 9;
		*need = l->data_dev_sectors &
			~(uint64_t)(l->sector_size / 512 - 1);
	}
	return 0;
}

/* The layout of the options, before the device size is known. */
static int plan_layout(const struct dmt_integrity_params *o,
		       struct dmt_integrity_layout *l,
		       struct dmt_integrity_result *r)
{
	int err;

	*l = o->layout;
	if (!l->tag_size) {
		unsigned int ts;

		err = dmt_integrity_default_tag_size(o->alg, &ts);
		if (err)
			return err;
		l->tag_size = ts;
	}
	l->meta_dev = o->data != NULL;
	if (l->journal_mac && !o->journal_mac.alg)
		return dmt_integrity_why(r, -EINVAL, DMT_REASON_MISSING, NULL,
					 "journal_mac.alg", 0);
	l->journal_mac = o->journal_mac.alg != NULL;
	if (l->meta_dev && o->payload) {
		dmt_integrity_why(r, -EINVAL, DMT_REASON_CONFLICT, NULL,
				  "data_from", 0);
		DMT_INTEGRITY_REASON(r)->field2 = "data_device";
		return -EINVAL;
	}
	return 0;
}

/* The size meta gets: as is, device_size, or the smallest that holds the
 * payload (device_size_auto). */
static int plan_device_size(const struct dmt_integrity_params *o,
			    struct dmt_integrity_layout *l, uint64_t need,
			    struct dmt_integrity_result *r)
{
	uint64_t size = 0, target = o->device_size;
	int err;

	if (o->device_size_auto && !o->payload && !l->meta_dev) {
		dmt_integrity_why(r, -EINVAL, DMT_REASON_MISSING, NULL,
				  "data_from", 0);
		DMT_INTEGRITY_REASON(r)->field2 = "device_size";
		return -EINVAL;
	}
	if (o->device_size_auto) {
		err = dmt_integrity_min_device(l, need, &target, NULL);
		if (err)
			return dmt_integrity_why(
				r, err, DMT_REASON_INTEGRITY_NO_DEVICE_SIZE,
				NULL, "data_from", need);
	}
	if (!o->created) {
		err = dmt_file_size(o->meta, &size);
		if (err)
			return dmt_integrity_why(r, err,
						 DMT_REASON_INTEGRITY_IO_SIZE,
						 o->meta, NULL, -err);
	}
	if (target && size > target) {
		dmt_integrity_why(r, -EINVAL, DMT_REASON_INTEGRITY_WONT_SHRINK,
				  o->meta, "device_size", size);
		DMT_INTEGRITY_REASON(r)->max = target;
		return -EINVAL;
	}
	r->device_bytes = size > target ? size : target;
	l->dev_sectors = r->device_bytes >> 9;
	if (!l->meta_dev)
		l->data_dev_sectors = 0;
	return 0;
}

/* 2.6 caveat: below the kernel's buffer size (128 sectors by default)
 * legacy padding makes it misplace tags. */
static int legacy_padding_ok(const struct dmt_integrity_layout *l,
			     const struct dmt_integrity_sb *sb,
			     const struct dmt_integrity_geom *g,
			     struct dmt_integrity_result *r)
{
	unsigned int buf = l->buffer_sectors > 128 ? l->buffer_sectors : 128;
	unsigned int lb = 31 - (unsigned int)__builtin_clz(buf);

	if (g->meta_dev || (sb->flags & DMT_INTEGRITY_SB_FIXED_PADDING))
		return 0;
	if ((unsigned int)__builtin_ctzll(g->metadata_run) < lb)
		lb = (unsigned int)__builtin_ctzll(g->metadata_run);
	if (g->log2_interleave < lb)
		return dmt_integrity_why(r, -EINVAL,
					 DMT_REASON_INTEGRITY_LEGACY_INTERLEAVE,
					 NULL, "layout.interleave_sectors",
					 1ull << g->log2_interleave);
	return 0;
}

static int plan_geometry(const struct dmt_integrity_params *o,
			 const struct dmt_integrity_layout *l, uint64_t need,
			 struct dmt_integrity_result *r)
{
	int err = dmt_integrity_geom_format(l, &r->sb, &r->geom, NULL);

	if (err == -ENODATA || (!err && need > r->geom.provided)) {
		err = -ENODATA;
		if (dmt_integrity_min_device(l, need ? need : 8,
					     &r->need_bytes, NULL))
			r->need_bytes = 0;
		dmt_integrity_why(r, err, DMT_REASON_DEVICE_TOO_SMALL, o->meta,
				  o->payload && r->need_bytes ? "data_from" : NULL,
				  r->device_bytes);
		DMT_INTEGRITY_REASON(r)->min = r->need_bytes;
		return err;
	}
	if (err)
		return dmt_integrity_why(r, err,
					 DMT_REASON_INTEGRITY_BAD_LAYOUT, NULL,
					 "layout", 0);
	return legacy_padding_ok(l, &r->sb, &r->geom, r);
}

static int plan_salt(const struct dmt_integrity_params *o,
		     struct dmt_integrity_sb *sb)
{
	if (!(sb->flags & DMT_INTEGRITY_SB_FIXED_HMAC))
		return 0;
	if (o->have_salt)
		memcpy(sb->salt, o->salt, sizeof(sb->salt));
	else if (getrandom(sb->salt, sizeof(sb->salt), 0) !=
		 (ssize_t)sizeof(sb->salt))
		return -errno;
	return 0;
}

/* The tag algorithm and the journal cipher can be set up (so that the
 * write does not fail on them after a front end asked to go on). */
static int plan_algorithms(const struct dmt_integrity_params *o,
			   struct dmt_integrity_result *r)
{
	struct dmt_integrity_tagger *tagger = NULL;
	struct dmt_integrity_jcrypt *jc = NULL;
	int err = dmt_integrity_make_tagger(o, &r->sb, &tagger, r);

	if (!err)
		err = dmt_integrity_open_jcrypt(o, &r->geom, &jc, r);
	dmt_integrity_tagger_free(tagger);
	dmt_integrity_jcrypt_free(jc);
	return err;
}

int dmt_integrity_run_plan(const struct dmt_integrity_params *o,
			   struct dmt_integrity_result *r)
{
	struct dmt_integrity_layout l;
	uint64_t need;
	int err;

	memset(r, 0, sizeof(*r));
	r->created = o->created;
	err = dmt_integrity_params_check(o, DMT_INTEGRITY_REASON(r));
	if (!err)
		err = plan_layout(o, &l, r);
	if (!err)
		err = source_sizes(o, &l, &need, r);
	if (!err)
		err = plan_device_size(o, &l, need, r);
	if (!err)
		err = plan_geometry(o, &l, need, r);
	if (!err)
		err = plan_salt(o, &r->sb);
	return err ? err : plan_algorithms(o, r);
}

/* ---- write ---- */

/* Sets up the walk that writes data (format in place / payload) and
 * tags. */
static void format_op(const struct dmt_integrity_params *o, struct op *op,
		      struct dmt_integrity_geom *g,
		      struct dmt_integrity_tagger *tagger,
		      struct dmt_integrity_result *r)
{
	op->kind = OP_FORMAT;
	op->o = o;
	op->r = r;
	op->g = g;
	op->meta = o->meta;
	op->tagger = tagger;
	if (g->meta_dev) {
		op->src = o->data;
		return;
	}
	op->dst = o->meta;
	op->fresh = o->created;
	if (o->payload) {
		op->src = o->payload;
		op->src_is_payload = true;
		op->src_limit = r->payload_bytes;
	}
}

/* The file at its size, and (in place) the old superblock gone first. */
static int format_start(const struct dmt_integrity_params *o,
			struct dmt_integrity_result *r)
{
	uint8_t zero[DMT_INTEGRITY_SB_BYTES] = { 0 };
	uint64_t size = 0;
	int err = o->created ? 0 : dmt_file_size(o->meta, &size);

	if (err)
		return dmt_integrity_why(r, err, DMT_REASON_INTEGRITY_IO_SIZE,
					 o->meta, NULL, -err);
	if (r->device_bytes > size) {
		err = dmt_file_extend(o->meta, r->device_bytes);
		if (err)
			return dmt_integrity_why(r, err,
						 DMT_REASON_INTEGRITY_IO_GROW,
						 o->meta, NULL, -err);
	}
	if (o->created)
		return 0;
	err = dmt_pwrite_full(o->meta, zero, sizeof(zero), 0);
	return dmt_integrity_why(r, err, DMT_REASON_INTEGRITY_IO_WRITE,
				 o->meta, NULL, -err);
}

/*
 * Order for an interrupted in-place format: the old superblock goes
 * first, then the journal, then a superblock that says tags from
 * recalc_sector on are not valid yet, the tags, and the final one last.
 */
static int format_body(const struct dmt_integrity_params *o, struct op *op,
		       struct dmt_integrity_jcrypt *jc, bool *sb_written)
{
	struct dmt_integrity_result *r = op->r;
	struct dmt_integrity_sb tmp = r->sb;
	int err;

	err = dmt_integrity_write_journal(o->meta, op->g, &r->sb,
					  &o->journal_mac, jc);
	if (err)
		return dmt_integrity_why(r, err,
					 DMT_REASON_INTEGRITY_IO_JOURNAL_WRITE,
					 o->meta, NULL, -err);
	if (o->no_wipe)
		return 0;
	tmp.flags |= DMT_INTEGRITY_SB_RECALCULATING;
	tmp.recalc_sector = 0;
	err = dmt_integrity_write_sb(o->meta, &tmp, &o->journal_mac,
				     op->g->meta_dev);
	if (err)
		return dmt_integrity_why(r, err,
					 DMT_REASON_INTEGRITY_IO_SB_WRITE,
					 o->meta, NULL, -err);
	*sb_written = true;
	if (op->dst)
		dmt_file_enable_direct(op->dst);
	return dmt_integrity_walk(op, 0, op->g->provided >> op->g->log2_spb);
}

static int format_finish(const struct dmt_integrity_params *o,
			 struct dmt_integrity_result *r)
{
	int err = dmt_integrity_write_sb(o->meta, &r->sb, &o->journal_mac,
					 r->geom.meta_dev);

	if (err)
		return dmt_integrity_why(r, err,
					 DMT_REASON_INTEGRITY_IO_SB_WRITE,
					 o->meta, NULL, -err);
	err = dmt_file_sync(o->meta);
	if (!err)
		err = dmt_file_commit(o->meta);
	return dmt_integrity_why(r, err, DMT_REASON_INTEGRITY_IO_SYNC, o->meta,
				 NULL, -err);
}

/* After a failed walk: a superblock that says where valid tags end. */
static void format_leave_resumable(const struct dmt_integrity_params *o,
				   const struct op *op,
				   struct dmt_integrity_result *r)
{
	struct dmt_integrity_sb tmp = r->sb;

	tmp.flags |= DMT_INTEGRITY_SB_RECALCULATING;
	tmp.recalc_sector = dmt_integrity_walk_resume(op);
	if (!dmt_integrity_write_sb(o->meta, &tmp, &o->journal_mac,
				    r->geom.meta_dev))
		dmt_file_sync(o->meta);
	r->sb = tmp;
}

int dmt_integrity_run_write(const struct dmt_integrity_params *o,
			    struct dmt_integrity_result *r)
{
	struct dmt_integrity_tagger *tagger = NULL;
	struct dmt_integrity_jcrypt *jc = NULL;
	struct dmt_integrity_geom g = r->geom;
	struct op op;
	bool sb_written = false;
	int err;

	memset(&op, 0, sizeof(op));
	err = dmt_integrity_make_tagger(o, &r->sb, &tagger, r);
	if (!err)
		err = dmt_integrity_open_jcrypt(o, &g, &jc, r);
	if (!err)
		err = format_start(o, r);
	if (!err) {
		format_op(o, &op, &g, tagger, r);
		err = format_body(o, &op, jc, &sb_written);
	}
	if (!err)
		err = format_finish(o, r);
	if (err && !o->created && sb_written && op.walked)
		format_leave_resumable(o, &op, r);
	dmt_integrity_tagger_free(tagger);
	dmt_integrity_jcrypt_free(jc);
	return err;
}
