// SPDX-License-Identifier: MIT
/*
 * dm-integrity check and recalculate on open files, and the superblock
 * read they (and dump) start from.
 */
#include "lib/integrity/integrity_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int dmt_integrity_read_sb(struct dmt_file *f, struct dmt_integrity_sb *sb,
			  uint64_t *device_bytes, struct dmt_reason *why)
{
	uint8_t sector0[512];
	int err, code = DMT_REASON_INTEGRITY_IO_SIZE;

	err = dmt_file_size(f, device_bytes);
	if (!err) {
		code = DMT_REASON_INTEGRITY_IO_SB_READ;
		err = dmt_integrity_read_sector0(f, sector0);
	}
	if (err == -ENODATA) {
		/* shorter than a superblock: none there */
		memset(sb, 0, sizeof(*sb));
		err = dmt_reason_set(why, -EMEDIUMTYPE, DMT_REASON_BAD_MAGIC,
				     NULL, 0);
	} else if (err) {
		dmt_reason_set(why, err, code, NULL, (uint64_t)-err);
	} else {
		err = dmt_integrity_sb_decode(sector0, sb, why);
	}
	if (err && why)
		why->path = dmt_file_path(f);
	return err;
}

/*
 * A superblock with a MAC (fix_hmac, journal MAC key): -EBADMSG with the
 * reason when it does not match, 0 when it does or there is none; sets
 * r->sb_mac_checked when it was compared.
 */
static int check_sb_mac(const struct dmt_integrity_params *o,
			const struct dmt_integrity_sb *sb,
			struct dmt_integrity_result *r)
{
	uint8_t sector0[512];
	int err;

	if (!(sb->flags & DMT_INTEGRITY_SB_FIXED_HMAC) ||
	    !(sb->flags & DMT_INTEGRITY_SB_HAVE_JOURNAL_MAC))
		return 0;
	err = dmt_integrity_read_sector0(o->meta, sector0);
	if (err)
		return dmt_integrity_why(r, err,
					 DMT_REASON_INTEGRITY_IO_SB_READ,
					 o->meta, NULL, -err);
	err = dmt_integrity_sb_mac_verify(&o->journal_mac, sector0);
	if (err == -EBADMSG)
		dmt_integrity_why(r, err, DMT_REASON_SB_CHECKSUM, o->meta,
				  "journal_mac.key", 0);
	r->sb_mac_checked = !err || err == -EBADMSG;
	return err;
}

/* Superblock and geometry of an existing device, checked as the kernel
 * checks them; fills r->sb, r->geom and the sizes. */
static int open_existing(const struct dmt_integrity_params *o,
			 struct dmt_integrity_result *r)
{
	int err;

	memset(r, 0, sizeof(*r));
	err = dmt_integrity_params_check(o, DMT_INTEGRITY_REASON(r));
	if (!err)
		err = dmt_integrity_read_sb(o->meta, &r->sb, &r->device_bytes,
					    DMT_INTEGRITY_REASON(r));
	if (!err && o->data) {
		err = dmt_file_size(o->data, &r->data_device_bytes);
		dmt_integrity_why(r, err, DMT_REASON_INTEGRITY_IO_SIZE, o->data,
				  NULL, -err);
	}
	if (err)
		return err;
	err = dmt_integrity_geom_from_sb(
		&r->sb, o->data != NULL, r->device_bytes >> 9,
		r->data_device_bytes >> 9, o->buffer_sectors, &r->geom,
		DMT_INTEGRITY_REASON(r));
	if (err) {
		DMT_INTEGRITY_REASON(r)->path = dmt_file_path(o->meta);
		return err;
	}
	if (!!(r->sb.flags & DMT_INTEGRITY_SB_HAVE_JOURNAL_MAC) !=
	    !!o->journal_mac.alg)
		return dmt_integrity_why(r, -EINVAL, o->journal_mac.alg ?
					 DMT_REASON_INTEGRITY_JMAC_UNEXPECTED :
					 DMT_REASON_INTEGRITY_JMAC_EXPECTED,
					 o->meta, "journal_mac.alg", 0);
	return 0;
}

/* The journal: -EUCLEAN when not empty, verdict -EBADMSG for bad commit
 * ids or section MACs. */
static int check_journal(const struct dmt_integrity_params *o,
			 struct dmt_integrity_result *r, int *verdict)
{
	struct dmt_integrity_jcrypt *jc = NULL;
	const struct dmt_integrity_journal_report *jr = &r->journal;
	int err;

	err = dmt_integrity_open_jcrypt(o, &r->geom, &jc, r);
	if (err)
		return err;
	err = dmt_integrity_verify_journal(o->meta, &r->geom, &r->sb,
					   &o->journal_mac, jc, &r->journal);
	dmt_integrity_jcrypt_free(jc);
	if (err)
		return dmt_integrity_why(r, err,
					 DMT_REASON_INTEGRITY_IO_JOURNAL_READ,
					 o->meta, NULL, -err);
	if (jr->bad_commit_ids) {
		dmt_integrity_why(r, -EBADMSG,
				  DMT_REASON_INTEGRITY_JOURNAL_COMMIT_IDS,
				  o->meta, "journal_crypt.alg",
				  o->journal_crypt.alg != NULL);
		*verdict = -EBADMSG;
	} else if (jr->used_entries) {
		return dmt_integrity_why(r, -EUCLEAN,
					 DMT_REASON_INTEGRITY_JOURNAL_NOT_EMPTY,
					 o->meta, NULL, jr->used_entries);
	}
	if (jr->bad_macs) {
		dmt_integrity_why(r, -EBADMSG, DMT_REASON_INTEGRITY_JOURNAL_MAC,
				  o->meta, "journal_mac.key", jr->bad_macs);
		*verdict = -EBADMSG;
	}
	return 0;
}

/* A walk of kind over blocks [first, end). */
static int tags_walk(const struct dmt_integrity_params *o, enum op_kind kind,
		     uint64_t first, uint64_t end, struct op *op,
		     struct dmt_integrity_result *r)
{
	struct dmt_integrity_tagger *tagger = NULL;
	int err = dmt_integrity_make_tagger(o, &r->sb, &tagger, r);

	if (err)
		return err;
	op->kind = kind;
	op->o = o;
	op->r = r;
	op->g = &r->geom;
	op->meta = o->meta;
	op->src = r->geom.meta_dev ? o->data : o->meta;
	op->tagger = tagger;
	err = dmt_integrity_walk(op, first, end);
	dmt_integrity_tagger_free(tagger);
	op->tagger = NULL;
	return err;
}

int dmt_integrity_run_check(const struct dmt_integrity_params *o,
			    struct dmt_integrity_result *r)
{
	const struct dmt_integrity_geom *g = &r->geom;
	uint64_t end;
	struct op op;
	int err, verdict = 0;

	memset(&op, 0, sizeof(op));
	err = open_existing(o, r);
	if (!err) {
		err = check_sb_mac(o, &r->sb, r);
		if (err == -EBADMSG) {
			verdict = err;
			err = 0;
		}
	}
	if (!err && (r->sb.flags & DMT_INTEGRITY_SB_DIRTY_BITMAP))
		err = dmt_integrity_why(r, -EUCLEAN,
					DMT_REASON_INTEGRITY_DIRTY_BITMAP,
					o->meta, NULL, 0);
	if (!err)
		err = check_journal(o, r, &verdict);
	if (err)
		return err;
	end = r->sb.provided_data_sectors;
	if ((r->sb.flags & DMT_INTEGRITY_SB_RECALCULATING) &&
	    r->sb.recalc_sector < end)
		end = r->sb.recalc_sector;
	end >>= g->log2_spb;
	r->start_sector = 0;
	r->end_sector = end << g->log2_spb;
	err = tags_walk(o, OP_CHECK, 0, end, &op, r);
	if (err)
		return err;
	r->blocks = end;
	if (r->mismatches) {
		dmt_integrity_why(r, -EBADMSG,
				  DMT_REASON_INTEGRITY_TAG_MISMATCH, o->meta,
				  NULL, r->mismatches);
		DMT_INTEGRITY_REASON(r)->max = r->blocks;
		verdict = -EBADMSG;
	}
	return verdict;
}

/* Where recalculation starts: recalc_sector unless reset, whole blocks. */
static uint64_t recalc_start(const struct dmt_integrity_params *o,
			     const struct dmt_integrity_result *r)
{
	uint64_t start = 0;

	if ((r->sb.flags & DMT_INTEGRITY_SB_RECALCULATING) &&
	    !o->recalc_reset) {
		start = r->sb.recalc_sector;
		if (start > r->sb.provided_data_sectors)
			start = r->sb.provided_data_sectors;
	}
	return start & ~(uint64_t)(r->geom.spb - 1);
}

/* Writes sb (and syncs); a failure is the reason unless quiet. */
static int write_sb_synced(const struct dmt_integrity_params *o,
			   struct dmt_integrity_sb *sb, bool sync, bool quiet,
			   struct dmt_integrity_result *r)
{
	int err = dmt_integrity_write_sb(o->meta, sb, &o->journal_mac,
					 r->geom.meta_dev);

	if (!err && sync)
		err = dmt_file_sync(o->meta);
	return quiet ? err :
		       dmt_integrity_why(r, err,
					 DMT_REASON_INTEGRITY_IO_SB_WRITE,
					 o->meta, NULL, -err);
}

int dmt_integrity_run_recalculate(const struct dmt_integrity_params *o,
				  struct dmt_integrity_result *r)
{
	struct dmt_integrity_sb tmp;
	uint64_t start, end;
	struct op op;
	int err;

	memset(&op, 0, sizeof(op));
	err = open_existing(o, r);
	/* the superblock is rewritten: its MAC must be right */
	if (!err)
		err = check_sb_mac(o, &r->sb, r);
	if (err)
		return err;
	start = recalc_start(o, r);
	end = r->sb.provided_data_sectors;
	r->start_sector = start;
	r->end_sector = end;
	tmp = r->sb;
	tmp.flags |= DMT_INTEGRITY_SB_RECALCULATING;
	tmp.recalc_sector = start;
	err = write_sb_synced(o, &tmp, false, false, r);
	if (err)
		return err;
	err = tags_walk(o, OP_RECALC, start >> r->geom.log2_spb,
			end >> r->geom.log2_spb, &op, r);
	if (!err) {
		r->blocks = (end - start) >> r->geom.log2_spb;
		/*
		 * Every tag is valid: clear the flag.  (The kernel itself
		 * leaves it set with recalc_sector = provided_data_sectors,
		 * but kernel 6.1 then refuses to open keyed devices without
		 * legacy_recalculate, because integritysetup adds
		 * `recalculate` whenever the flag is set.)
		 */
		tmp.flags &= ~(uint32_t)DMT_INTEGRITY_SB_RECALCULATING;
		tmp.recalc_sector = 0;
		err = write_sb_synced(o, &tmp, true, false, r);
	} else if (op.walked) {
		tmp.recalc_sector = dmt_integrity_walk_resume(&op);
		write_sb_synced(o, &tmp, true, true, r);
	}
	r->sb = tmp;
	return err;
}
