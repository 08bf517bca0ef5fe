/* SPDX-License-Identifier: MIT */
/*
 * Inside lib/integrity: the bulk pass ("walk") that format, check and
 * recalculate share, and the superblock and journal transfers.
 */
#ifndef DMT_LIB_INTEGRITY_INTERNAL_H
#define DMT_LIB_INTEGRITY_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include <dmt/integrity.h>
#include <dmt/io.h>
#include <dmt/reason.h>

#include "lib/common/walk.h"
#include "lib/integrity/integrity_priv.h"

enum op_kind { OP_FORMAT, OP_CHECK, OP_RECALC };

/*
 * The operations fill a result with its reason beside it (the public
 * entry points, integrity_api.c, hand both out): every struct
 * dmt_integrity_result inside lib/integrity is the res of one of these.
 */
struct dmt_integrity_run {
	struct dmt_integrity_result res;
	struct dmt_reason reason;
};
#define DMT_INTEGRITY_REASON(r)                                                \
	(&((struct dmt_integrity_run *)(void *)((char *)(r)-offsetof(          \
		   struct dmt_integrity_run, res)))                            \
		  ->reason)

/* The operations behind the public ones (r: the res of a run). */
int dmt_integrity_run_plan(const struct dmt_integrity_params *o,
			   struct dmt_integrity_result *r);
int dmt_integrity_run_write(const struct dmt_integrity_params *o,
			    struct dmt_integrity_result *r);
int dmt_integrity_run_check(const struct dmt_integrity_params *o,
			    struct dmt_integrity_result *r);
int dmt_integrity_run_recalculate(const struct dmt_integrity_params *o,
				  struct dmt_integrity_result *r);

struct worker {
	struct dmt_integrity_tagger *t;
	uint8_t *buf;		/* one data chunk */
	uint8_t *tags;		/* the unit's computed tags */
	uint8_t *stored;	/* check: the unit's tags on disk */
	uint8_t *ubuf;		/* a whole unit: its tag run, then data */
};

/* One walk over logical blocks; the caller fills the first group. */
struct op {
	enum op_kind kind;
	const struct dmt_integrity_params *o;
	struct dmt_integrity_result *r;
	struct dmt_integrity_geom *g;
	struct dmt_file *meta;		/* superblock, journal, tags */
	struct dmt_file *src;		/* where block data is read */
	struct dmt_file *dst;		/* format writes data here */
	bool src_is_payload;		/* src offsets = logical offsets */
	uint64_t src_limit;		/* payload bytes (else no limit) */
	bool fresh;			/* dst data area is known all-zero */
	struct dmt_integrity_tagger *tagger;
	/* the walk's own */
	unsigned int bs;		/* block size in bytes */
	uint64_t first_block, end_block;
	uint64_t unit_blocks, chunk_blocks, ubase, n_units;
	const uint8_t *zero;
	struct worker *w;
	unsigned int nw;
	size_t ubuf_bytes;		/* tag run + unit data */
	bool walked;			/* the walk was started */
	uint64_t resume_unit;		/* the first unit not finished */
	pthread_mutex_t lock;		/* the result's lists and counters */
	/* progress, cancellation, the first failure (in unit order) */
	struct dmt_walk walk;
};

/* Runs the walk over blocks [first, end); on an I/O failure the reason
 * is in the run's reason. */
int dmt_integrity_walk(struct op *op, uint64_t first, uint64_t end);
/* First logical sector whose tag may be missing after a failed walk. */
uint64_t dmt_integrity_walk_resume(const struct op *op);

/* Superblock area (MAC'ed when the flags say so); sector 0. */
int dmt_integrity_write_sb(struct dmt_file *f, struct dmt_integrity_sb *sb,
			   const struct dmt_integrity_mac *mac, bool meta_dev);
int dmt_integrity_read_sector0(struct dmt_file *f, uint8_t sector0[512]);
/* The whole journal, empty (sequence 0) / checked into rep. */
int dmt_integrity_write_journal(struct dmt_file *f,
				const struct dmt_integrity_geom *g,
				const struct dmt_integrity_sb *sb,
				const struct dmt_integrity_mac *mac,
				struct dmt_integrity_jcrypt *jc);
int dmt_integrity_verify_journal(struct dmt_file *f,
				 const struct dmt_integrity_geom *g,
				 const struct dmt_integrity_sb *sb,
				 const struct dmt_integrity_mac *mac,
				 struct dmt_integrity_jcrypt *jc,
				 struct dmt_integrity_journal_report *rep);

/* Fills the run's reason when err is not 0 and no reason is there yet;
 * returns err. */
int dmt_integrity_why(struct dmt_integrity_result *r, int err, int code,
		      const struct dmt_file *f, const char *field,
		      uint64_t value);

/* Shared setup of the operations (integrity_setup.c). */
int dmt_integrity_check_reserved(const struct dmt_integrity_params *o,
				 struct dmt_reason *r);
int dmt_integrity_open_jcrypt(const struct dmt_integrity_params *o,
			      const struct dmt_integrity_geom *g,
			      struct dmt_integrity_jcrypt **out,
			      struct dmt_integrity_result *r);
int dmt_integrity_make_tagger(const struct dmt_integrity_params *o,
			      const struct dmt_integrity_sb *sb,
			      struct dmt_integrity_tagger **t,
			      struct dmt_integrity_result *r);

#endif /* DMT_LIB_INTEGRITY_INTERNAL_H */
