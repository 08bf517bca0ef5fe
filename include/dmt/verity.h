/* SPDX-License-Identifier: MIT */
/*
 * dm-verity hash trees: geometry, the cryptsetup superblock, building and
 * verifying, bit-identical to veritysetup (cryptsetup 2.6.1) and the kernel.
 * See docs/formats.md section 1 for the on-disk format.
 *
 * The caller opens the files (struct dmt_file, lib/io.h), so locking and
 * "new file under a temporary name" stay in the front end.  Data and hash
 * may be the same struct dmt_file (tree appended at hash_offset).
 *
 * The geometry is public so that other layers (FEC over data + hash area,
 * signatures over the root hash, size queries) can be computed from it
 * without building anything.
 */
#ifndef DMT_VERITY_H
#define DMT_VERITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dmt/fec.h>
#include <dmt/hash.h>
#include <dmt/io.h>
#include <dmt/progress.h>
#include <dmt/reason.h>

#define DMT_VERITY_SB_SIZE 512
#define DMT_VERITY_SALT_MAX 256
#define DMT_VERITY_HASH_NAME_MAX 32	/* including the NUL */
#define DMT_VERITY_BLOCK_MIN 512u
#define DMT_VERITY_BLOCK_MAX (512u << 10)
#define DMT_VERITY_MAX_LEVELS 63	/* kernel limit */

struct dmt_verity_overlay;

struct dmt_verity_params {
	/* format (what the superblock records) */
	char hash_name[DMT_VERITY_HASH_NAME_MAX]; /* "sha256"; any case */
	uint32_t hash_type;		/* 1 normal, 0 Chrome OS */
	uint32_t data_block_size;
	uint32_t hash_block_size;
	uint64_t data_blocks;		/* 0: whole data file */
	uint64_t hash_offset;		/* bytes into the hash file */
	uint8_t salt[DMT_VERITY_SALT_MAX];
	size_t salt_size;
	uint8_t uuid[16];		/* raw, textual byte order */
	bool no_superblock;

	/* execution: never changes the output */
	unsigned int threads;		/* 0: dmt_default_threads() */
	const char *engine;		/* NULL: default dispatch */
	struct dmt_progress progress;

	/* verify: blocks to check instead of the files' (NULL: none) */
	const struct dmt_verity_overlay *overlay;

	uint64_t reserved[8];		/* must be zero */
};

/*
 * Corrected contents laid over the files, for checking what FEC would
 * repair without writing it.  Called from the worker threads at once.
 */
struct dmt_verity_overlay {
	/* First replaced block >= from: a data block (is_hash false) or a
	 * hash-file block (in hash blocks); UINT64_MAX when none. */
	uint64_t (*next)(void *ctx, bool is_hash, uint64_t from);
	/* Copies the contents of that block (data or hash block size). */
	int (*read)(void *ctx, bool is_hash, uint64_t block, uint8_t *buf);
	void *ctx;
};

/*
 * Where everything lives.  Levels are numbered from the bottom (level 0
 * holds the digests of the data blocks); on disk the highest level comes
 * first, at hash_start.
 */
struct dmt_verity_geometry {
	uint64_t data_blocks;
	uint32_t data_block_size;
	uint32_t hash_block_size;
	uint32_t digest_size;
	uint32_t digest_slot;		/* digest stride in a hash block */
	uint32_t hash_per_block_bits;	/* fan-out is 1 << bits */
	uint32_t levels;		/* 0 when there is one data block */
	uint64_t hash_offset;		/* superblock position, bytes */
	uint64_t hash_start;		/* first tree block (hash blocks) */
	uint64_t hash_blocks;		/* tree blocks, as veritysetup */
	uint64_t hash_end;		/* byte just past the tree */
	uint64_t level_start[DMT_VERITY_MAX_LEVELS];	/* in hash blocks */
	uint64_t level_blocks[DMT_VERITY_MAX_LEVELS];
	uint64_t reserved[8];		/* zeroed by the library */
};

/* Verification outcome, filled by dmt_verity_verify(). */
enum dmt_verity_area {
	DMT_VERITY_AREA_NONE = 0,
	DMT_VERITY_AREA_DATA,
	DMT_VERITY_AREA_HASH,
	DMT_VERITY_AREA_METADATA,	/* hash file after the tree (FEC) */
};

struct dmt_verity_bad {
	enum dmt_verity_area area;
	uint32_t level;			/* hash area: tree level */
	uint64_t index;			/* data block, or in its level */
	uint64_t offset;		/* byte in the data or hash file */
	bool padding;			/* spare area not zero (offset:
					 * the first non-zero byte) */
};

struct dmt_verity_report {
	bool root_ok;			/* root hash matches the top */
	/*
	 * A block is corrupted when its parent entry can be trusted (the
	 * path up to the root hash checks out) and does not match, or when
	 * a hash block has non-zero padding.  A mismatch under a corrupted
	 * block cannot be attributed and is counted as unverifiable.
	 */
	uint64_t bad_data_blocks;
	uint64_t bad_hash_blocks;
	uint64_t unverifiable_blocks;
	struct dmt_verity_bad first_data;	/* lowest bad data block */
	struct dmt_verity_bad first_hash;	/* highest level, lowest idx */
	uint8_t root_hash[DMT_DIGEST_MAX];	/* as recomputed */
	size_t root_hash_size;
	const char *error_path;	/* I/O error: the file's path (owned by
				 * its struct dmt_file) */
	uint64_t reserved[8];	/* zeroed by the library */
};

struct dmt_verity_result {
	uint8_t root_hash[DMT_DIGEST_MAX];
	size_t root_hash_size;
	struct dmt_verity_geometry geo;
	uint64_t zero_blocks;		/* data blocks that were holes or
					 * all zero (not hashed) */
	char engine[32];		/* backend that hashed the data */
	const char *error_path;		/* as in dmt_verity_report */
	uint64_t reserved[8];		/* zeroed by the library */
};

/* veritysetup's defaults: sha256, 4096/4096, format 1, superblock, no
 * salt (the front end makes the random one), zero uuid.  Every function
 * taking a struct dmt_verity_params rejects nonzero reserved words
 * (BAD_VALUE reserved). */
void dmt_verity_params_init(struct dmt_verity_params *p);

/* True if name is a hash veritysetup-style trees can use (known to the
 * engine and unkeyed). */
bool dmt_verity_hash_supported(const char *name);
/* Its digest size, 0 when not supported. */
size_t dmt_verity_digest_size(const char *name);

/*
 * Checks everything that does not need the files.  Returns 0 or -EINVAL
 * with *r (may be NULL) saying which field is wrong: UNSUPPORTED
 * hash_name, BAD_VALUE hash_type / data_block_size / hash_block_size,
 * NOT_ALIGNED hash_offset, TOO_LARGE salt_size or data_blocks (offsets
 * overflow), DMT_REASON_VERITY_DIGEST_TOO_BIG, BAD_VALUE reserved.  data_blocks may be 0 here
 * (resolved from the data file later).
 */
int dmt_verity_check_params(const struct dmt_verity_params *p,
			    struct dmt_reason *r);

/* Geometry for p (data_blocks must be set).  -EINVAL on bad parameters
 * (reasons as dmt_verity_check_params, MISSING data_blocks), -ERANGE
 * (TOO_LARGE data_blocks) when the layout overflows 64-bit offsets. */
int dmt_verity_geometry(const struct dmt_verity_params *p,
			struct dmt_verity_geometry *g, struct dmt_reason *r);

/* Default data_blocks for a data file of `bytes`: floor(bytes / dbs). */
uint64_t dmt_verity_blocks_for_size(const struct dmt_verity_params *p,
				    uint64_t bytes);

/* ---- superblock ---- */

/* 512 bytes, hash name lower-cased.  -EINVAL with the reasons of
 * dmt_verity_check_params. */
int dmt_verity_sb_encode(const struct dmt_verity_params *p,
			 uint8_t sb[DMT_VERITY_SB_SIZE], struct dmt_reason *r);
/*
 * Fills the format fields of p (hash name, type, block sizes, data blocks,
 * salt, uuid) from a superblock; leaves the execution fields and
 * hash_offset alone.  -EMEDIUMTYPE if it is not a valid, supported verity
 * superblock; *r (may be NULL) says why: BAD_MAGIC, SB_VERSION (value),
 * SB_FIELD sb.hash_type / sb.salt_size / sb.data_blocks /
 * sb.data_block_size / sb.hash_block_size (value), UNSUPPORTED
 * sb.algorithm (name points into sb), DMT_REASON_VERITY_DIGEST_TOO_BIG.
 */
int dmt_verity_sb_decode(const uint8_t sb[DMT_VERITY_SB_SIZE],
			 struct dmt_verity_params *p, struct dmt_reason *r);
/* Reads and decodes the superblock at p->hash_offset of hash.  A file
 * too short for one is BAD_MAGIC.  On UNSUPPORTED sb.algorithm the name
 * is copied to p->hash_name (r->name points there); p is otherwise
 * unchanged on failure. */
int dmt_verity_sb_read(struct dmt_file *hash, struct dmt_verity_params *p,
		       struct dmt_reason *r);

/* ---- tree ---- */

/*
 * Writes the hash tree (each level once, highest level first on disk) and
 * then, unless p->no_superblock, the superblock.  data_blocks 0 means the
 * whole data file.  A shorter hash file is first grown to the size
 * veritysetup leaves (never cut); a device must be large enough.
 * Errors: -EINVAL parameters (or data and hash overlap on one file),
 * -ENODATA data file too small, -EINTR aborted by the progress hook,
 * -ENOMEM, I/O errors (res->error_path names the file).  On error the
 * hash file may hold a partial tree; the superblock is only written after
 * the tree.  r (may be NULL): the reasons of dmt_verity_check_params.
 */
int dmt_verity_build(const struct dmt_verity_params *p, struct dmt_file *data,
		     struct dmt_file *hash, struct dmt_verity_result *res,
		     struct dmt_reason *r);

/*
 * Recomputes the whole tree from the data and compares every stored
 * digest, the zero padding of every hash block and the root hash
 * (root_size must be the digest size).  Returns 0 when everything is
 * intact, -EBADMSG on any mismatch (details in rep), other errors as
 * dmt_verity_build (-ENODATA when the data or hash file is too small;
 * -EINVAL with BAD_VALUE root_size when root_size is not the digest size).
 */
int dmt_verity_verify(const struct dmt_verity_params *p, struct dmt_file *data,
		      struct dmt_file *hash, const uint8_t *root,
		      size_t root_size, struct dmt_verity_report *rep,
		      struct dmt_reason *r);

/* ---- single blocks (for FEC correction and other checkers) ---- */

/*
 * Where the digest of a block is stored: data block `block` (is_hash
 * false) or hash-file block `block` (is_hash true, a tree block).  Sets
 * *parent to the hash-file block holding the digest and *offset to its
 * byte offset in that block.  Returns 0, 1 when the block's digest is the
 * root hash (the top block, or data block 0 of a one-block tree), or
 * -EINVAL when the block is not covered by the tree.
 */
int dmt_verity_digest_location(const struct dmt_verity_geometry *g,
			       bool is_hash, uint64_t block, uint64_t *parent,
			       uint32_t *offset);

/*
 * Where covered FEC block `block` (lib/fec numbering: data blocks, then
 * hash-file blocks from l->hash_start) lies: area DATA (index: data
 * block), HASH (level, index in the level) or METADATA (index: hash-file
 * block after the tree); offset is its byte in its file.
 */
struct dmt_verity_where {
	enum dmt_verity_area area;
	int level;			/* HASH: tree level, else -1 */
	uint64_t index;
	uint64_t offset;
};
void dmt_verity_locate(const struct dmt_verity_geometry *g,
		       const struct dmt_fec_layout *l, uint64_t block,
		       struct dmt_verity_where *w);

/* ---- format and check with forward error correction ---- */

/* veritysetup's --fec-device: parity over data and tree. */
struct dmt_verity_fec_params {
	struct dmt_file *file;		/* NULL: no FEC; may be the hash or
					 * data handle (shared file) */
	unsigned int roots;		/* 2..24, 0: DMT_FEC_ROOTS_DEFAULT */
	uint64_t offset;		/* parity area, bytes into file */
	uint64_t reserved[8];		/* must be zero */
};

/* Zeroes *p: no FEC file, default roots, offset 0.  The functions taking
 * one reject nonzero reserved words (BAD_VALUE reserved). */
void dmt_verity_fec_params_init(struct dmt_verity_fec_params *p);

/* The steps of dmt_verity_format() and dmt_verity_check(), in order. */
enum dmt_verity_stage {
	DMT_VERITY_STAGE_TREE,		/* format: hash data, write tree */
	DMT_VERITY_STAGE_FEC_ENCODE,	/* format: write the parity */
	DMT_VERITY_STAGE_SUPERBLOCK,	/* format: write it, last */
	DMT_VERITY_STAGE_VERIFY,	/* check: tree against the files */
	DMT_VERITY_STAGE_FEC,		/* check: parity scan, correction */
	DMT_VERITY_STAGE_SYNC,		/* repair: corrections to disk */
	DMT_VERITY_STAGE_REVERIFY,	/* check: tree through the
					 * corrections (or repaired files) */
};

/*
 * Optional hooks around every stage that runs: begin() returns the
 * progress hook for it (may be NULL: none), end() gets its outcome (0,
 * -EBADMSG for a failed verification, another -errno), with the result
 * struct already updated.
 */
struct dmt_verity_stages {
	struct dmt_progress (*begin)(void *ctx, enum dmt_verity_stage s);
	void (*end)(void *ctx, enum dmt_verity_stage s, int err);
	void *ctx;
};

/*
 * veritysetup format: the tree, then (fec->file given) the parity, then
 * the superblock (unless p->no_superblock), as veritysetup orders them.
 * The parity covers the hash file up to fec->offset when it shares the
 * hash file, else to its end.  fl (may be NULL) gets the FEC layout, filled
 * before the FEC_ENCODE stage begins.  Errors as dmt_verity_build, plus:
 * -EINVAL with DMT_REASON_VERITY_AREA_OVERLAP (field, field2 among
 * "data", "hash", "fec") or DMT_REASON_VERITY_FEC_LAYOUT (value: errno);
 * -ENODATA with DEVICE_TOO_SMALL field "hash" when the hash file ends
 * before the tree starts.  I/O errors name the file in res->error_path
 * where it is known.
 */
int dmt_verity_format(const struct dmt_verity_params *p,
		      struct dmt_file *data, struct dmt_file *hash,
		      const struct dmt_verity_fec_params *fec,
		      const struct dmt_verity_stages *stages,
		      struct dmt_verity_result *res, struct dmt_fec_layout *fl,
		      struct dmt_reason *r);

/*
 * FEC layout over open files, as veritysetup measures it (p->data_blocks
 * set): overlap checks, then dmt_fec_layout(); with `existing` the FEC
 * file must also hold the whole parity area (-ENODATA, DEVICE_TOO_SMALL
 * field "fec", value its size, min the end of the area).  Reasons as
 * dmt_verity_format, plus DMT_REASON_VERITY_FEC_BLOCK_SIZES.
 */
int dmt_verity_fec_layout(const struct dmt_verity_params *p,
			  struct dmt_file *data, struct dmt_file *hash,
			  const struct dmt_verity_fec_params *fec, bool existing,
			  struct dmt_fec_layout *fl, struct dmt_reason *r);

/*
 * The same without files (dump, size): the parity shares the hash file
 * (covering it up to offset) or not (covering hash_file_bytes of it).
 */
int dmt_verity_fec_plan(const struct dmt_verity_geometry *g,
			unsigned int roots, uint64_t offset, bool shared,
			uint64_t hash_file_bytes, struct dmt_fec_layout *fl,
			struct dmt_reason *r);

/* Covered FEC block numbers, ascending (dmt_verity_locate() names them). */
#define DMT_VERITY_LIST_MAX 65536
struct dmt_verity_blocks {
	uint64_t *v;
	size_t n;			/* listed: at most DMT_VERITY_LIST_MAX */
	uint64_t total;			/* all of them */
};

struct dmt_verity_check_result {
	struct dmt_verity_report rep;	/* the last tree verification */
	bool fec_ran;			/* the FEC stage ran */
	bool reverified;		/* ... and the tree was checked again */
	struct dmt_fec_layout fec_layout;	/* with FEC */
	struct dmt_fec_stats fec;
	struct dmt_verity_blocks corrected;	/* proven up to the root */
	struct dmt_verity_blocks unverified;	/* no digest covers them */
	struct dmt_verity_blocks unrepairable;
	const char *error_path;		/* I/O error: the file, if known */
	uint64_t reserved[8];		/* zeroed by the library */
};

enum {
	/* write the corrections back (and rewrite damaged parity when the
	 * FEC file is writable), sync, then verify the files again */
	DMT_VERITY_CHECK_REPAIR = 1 << 0,
};

/*
 * veritysetup verify, with FEC (fec->file given) and repair.  verify:
 * the tree first; only when that fails, a FEC pass that corrects into a
 * corrected-block overlay (memory, then a temporary file), then the tree
 * again with the corrections laid over the files.  REPAIR: a FEC pass
 * that writes every correction proven up to the root hash (a block is
 * trusted only when its digest and every parent's up to root check out),
 * sync, then the tree again from the files.  p->data_blocks 0: the whole
 * data file.
 *
 * Returns 0 when everything verifies (after correction), -EBADMSG when
 * it does not (res says what), other errors as dmt_verity_verify, the
 * reasons of dmt_verity_fec_layout(existing), and -errno with
 * DMT_REASON_VERITY_SPILL when the temporary file for corrected blocks
 * failed.  Free res with dmt_verity_check_result_free() either way.
 */
int dmt_verity_check(const struct dmt_verity_params *p, struct dmt_file *data,
		     struct dmt_file *hash, const struct dmt_verity_fec_params *fec,
		     const uint8_t *root, size_t root_size, unsigned int flags,
		     const struct dmt_verity_stages *stages,
		     struct dmt_verity_check_result *res,
		     struct dmt_reason *r);
void dmt_verity_check_result_free(struct dmt_verity_check_result *res);

#endif /* DMT_VERITY_H */
