/* SPDX-License-Identifier: MIT */
/*
 * Structured failure reasons.  The library never prints and never names a
 * command-line option: a failing call returns a negative errno and, where
 * the caller passed a struct dmt_reason, fills in what went wrong in terms
 * of the library's own vocabulary (the params field, the value, the limit).
 * Front ends turn a reason into a message (tools/common maps fields to
 * option names).
 *
 * Fields are named by the params struct member they come from
 * ("data_block_size", "salt_size", "alg"); superblock fields by their
 * on-disk name prefixed with "sb." ("sb.version", "sb.hash_alg").
 *
 * One registry of codes, one range per subsystem; a code keeps its number
 * once released, new codes are added at the end of their range:
 *	0x000	generic and on-disk structures (this header)
 *	0x100	dm-verity and FEC (this header)
 *	0x200	dm-integrity (this header)
 *	0x300	fs-verity (this header)
 *	0x400	dm-crypt (<dmt/crypt.h>)
 *	0x500	LUKS2 (<dmt/luks2.h>)
 *	0x600	authenticated dm-crypt (<dmt/crypt_auth.h>)
 * dmt_reason_code_name() gives every code a stable lowercase name
 * ("bad-value", "verity-area-overlap"), dmt_reason_format() a default
 * English sentence.
 */
#ifndef DMT_REASON_H
#define DMT_REASON_H

#include <stddef.h>
#include <stdint.h>

enum dmt_reason_code {
	DMT_REASON_NONE = 0,

	/* ---- generic ---- */
	DMT_REASON_BAD_VALUE,		/* field has an invalid value */
	DMT_REASON_OUT_OF_RANGE,	/* field: value outside [min, max] */
	DMT_REASON_NOT_POWER_OF_2,	/* field: value */
	DMT_REASON_NOT_ALIGNED,		/* field: value not a multiple of max */
	DMT_REASON_TOO_LARGE,		/* field: value > max */
	DMT_REASON_TOO_SMALL,		/* field: value < min */
	DMT_REASON_MISSING,		/* field is required */
	DMT_REASON_CONFLICT,		/* field does not go with field2 */
	DMT_REASON_UNKNOWN_ALG,		/* field: name is not known */
	DMT_REASON_UNSUPPORTED,		/* field: name/value not supported */
	DMT_REASON_NEEDS_KEY,		/* field: name needs a key */
	DMT_REASON_KEY_SIZE,		/* key of value bytes, wants min..max */
	DMT_REASON_DEVICE_TOO_SMALL,	/* path: value bytes, needs min */
	DMT_REASON_SAME_FILE,		/* path and path2 are one file */
	DMT_REASON_IO,			/* path: errno in value (positive) */

	/* ---- on-disk structures ---- */
	DMT_REASON_BAD_MAGIC,		/* path: no superblock / header */
	DMT_REASON_SB_VERSION,		/* sb.version: value unsupported */
	DMT_REASON_SB_FIELD,		/* field: value not accepted */
	DMT_REASON_SB_CHECKSUM,		/* header or superblock MAC/csum */

	/* ---- verity / fec (lib/verity, lib/fec) ---- */
	DMT_REASON_VERITY_FIRST = 0x100,
	DMT_REASON_VERITY_DIGEST_TOO_BIG,	/* hash_block_size (value) under
						 * two digests (min) */
	DMT_REASON_VERITY_AREA_OVERLAP,	/* area field overlaps area field2
					 * ("data", "hash", "fec") */
	DMT_REASON_VERITY_FEC_LAYOUT,	/* FEC layout rejected: errno value */
	DMT_REASON_VERITY_FEC_BLOCK_SIZES,	/* FEC needs data_block_size ==
						 * hash_block_size */
	DMT_REASON_VERITY_SPILL,	/* temporary file for corrected
					 * blocks failed: errno value */

	/* ---- integrity (lib/integrity) ---- */
	DMT_REASON_INTEGRITY_FIRST = 0x200,
	DMT_REASON_INTEGRITY_KEY_UNUSED,	/* field: takes no key */
	DMT_REASON_INTEGRITY_NO_DEVICE_SIZE,	/* none holds value sectors */
	DMT_REASON_INTEGRITY_WONT_SHRINK,	/* path: value bytes > max */
	DMT_REASON_INTEGRITY_LEGACY_INTERLEAVE,	/* field: legacy padding
						 * below the kernel buffer */
	DMT_REASON_INTEGRITY_TAGGER,		/* alg: set-up failed (errno) */
	DMT_REASON_INTEGRITY_BAD_LAYOUT,	/* geometry refused layout */
	DMT_REASON_INTEGRITY_SB_INLINE,		/* inline-mode superblock */
	DMT_REASON_INTEGRITY_NEEDS_DATA_DEVICE,	/* sb: separate data device */
	DMT_REASON_INTEGRITY_INTERLEAVED,	/* sb: no data device */
	DMT_REASON_INTEGRITY_SB_PROVIDED,	/* device < provided sectors */
	DMT_REASON_INTEGRITY_JMAC_EXPECTED,	/* sb has a journal MAC */
	DMT_REASON_INTEGRITY_JMAC_UNEXPECTED,	/* sb has no journal MAC */
	DMT_REASON_INTEGRITY_DIRTY_BITMAP,	/* not closed cleanly */
	DMT_REASON_INTEGRITY_JOURNAL_COMMIT_IDS, /* value 1: a cipher given */
	DMT_REASON_INTEGRITY_JOURNAL_NOT_EMPTY,	/* not closed cleanly */
	DMT_REASON_INTEGRITY_JOURNAL_MAC,	/* a section MAC differs */
	DMT_REASON_INTEGRITY_TAG_MISMATCH,	/* value of max blocks */
	/* I/O on path, the positive errno in value */
	DMT_REASON_INTEGRITY_IO_SIZE,
	DMT_REASON_INTEGRITY_IO_GROW,
	DMT_REASON_INTEGRITY_IO_READ,
	DMT_REASON_INTEGRITY_IO_WRITE,
	DMT_REASON_INTEGRITY_IO_SB_READ,
	DMT_REASON_INTEGRITY_IO_SB_WRITE,
	DMT_REASON_INTEGRITY_IO_JOURNAL_READ,
	DMT_REASON_INTEGRITY_IO_JOURNAL_WRITE,
	DMT_REASON_INTEGRITY_IO_SYNC,

	/* ---- fs-verity (lib/fsverity) ---- */
	DMT_REASON_FSVERITY_FIRST = 0x300,
	/* path: the file is not value bytes long any more (it changed while
	 * it was read) */
	DMT_REASON_FSVERITY_SIZE_CHANGED,
	/* path: not a regular file (value: its st_mode) */
	DMT_REASON_FSVERITY_NOT_REGULAR,
	/* path: the file's contents changed while it was read (its
	 * modification or change time, or its hole map, moved) */
	DMT_REASON_FSVERITY_CHANGED,

	/* ---- dm-crypt, LUKS2, authenticated dm-crypt (lib/crypt): their
	 * codes are in <dmt/crypt.h>, <dmt/luks2.h> and <dmt/crypt_auth.h> */
	DMT_REASON_CRYPT_FIRST = 0x400,
};

struct dmt_reason {
	int code;		/* enum dmt_reason_code */
	const char *field;	/* params member or "sb.<field>" (static) */
	const char *field2;	/* the other field of a CONFLICT (static) */
	const char *name;	/* offending name (algorithm...), may point
				 * into the caller's params */
	const char *path;	/* the file it is about (dmt_file_path()) */
	const char *path2;
	uint64_t value;		/* offending value */
	uint64_t min, max;	/* the limits it broke, where meaningful */
	uint64_t reserved[8];	/* zeroed by the library */
};

/*
 * The stable name of a code ("bad-value", "luks2-keyslot"), NULL for a
 * code no header defines.
 */
const char *dmt_reason_code_name(int code);
/*
 * A default English sentence for r, in the library's vocabulary (path,
 * field, value, limits), e.g. "hash_block_size: hash block too small for
 * two digests: 32 (min 64)".  snprintf semantics: writes at most size bytes
 * including the NUL (buf may be NULL when size is 0) and returns the
 * length the whole sentence needs; an empty string for a NULL r.
 */
int dmt_reason_format(const struct dmt_reason *r, char *buf, size_t size);

/* Helpers for the library: fill *r when r is not NULL; return err. */
static inline int dmt_reason_set(struct dmt_reason *r, int err, int code,
				 const char *field, uint64_t value)
{
	if (r) {
		*r = (struct dmt_reason){ .code = code, .field = field,
					  .value = value };
	}
	return err;
}

#endif /* DMT_REASON_H */
