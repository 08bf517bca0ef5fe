/* SPDX-License-Identifier: MIT */
/*
 * dm-verity forward error correction, byte-identical to veritysetup
 * --fec-device (cryptsetup 2.6.1) and readable by the kernel's
 * dm-verity-fec.  See docs/formats.md 1.9 for the layout.
 *
 * The "covered area" is the message the code protects: data blocks
 * 0..data_blocks-1 of the data file, then hash_blocks blocks of the hash
 * file starting at block hash_start (the superblock is not covered).  It is
 * seen as a rsn x rounds matrix of blocks (row j = covered blocks
 * j*rounds .. j*rounds+rounds-1, zero past the end) and every byte column
 * of every round is one RS(255, rsn) codeword whose roots parity bytes are
 * stored at fec_offset + (round * block_size + byte) * roots.
 *
 * The caller opens the files (struct dmt_file, lib/io.h), as for
 * lib/verity.h.  The FEC area may share the hash file (pass the same
 * struct dmt_file, or another one on the same inode).
 */
#ifndef DMT_FEC_H
#define DMT_FEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dmt/io.h>
#include <dmt/progress.h>
#include <dmt/reason.h>

#define DMT_FEC_RSM 255			/* symbols per codeword */
#define DMT_FEC_ROOTS_MIN 2
#define DMT_FEC_ROOTS_MAX 24
#define DMT_FEC_ROOTS_DEFAULT 2

struct dmt_fec_params {
	unsigned int roots;		/* parity bytes per codeword 2..24 */
	uint32_t block_size;		/* data == hash block size */
	uint64_t data_blocks;		/* N, from byte 0 of data */
	uint64_t hash_start;		/* first covered hash-file block */
	/*
	 * Covered hash-file blocks from hash_start.  0 derives it the way
	 * veritysetup does: up to fec_offset when the FEC area shares the
	 * hash file, else to the end of the hash file (rounded down to a
	 * block), so trailing metadata is covered too.
	 */
	uint64_t hash_blocks;
	uint64_t fec_offset;		/* bytes into the FEC file, % 512 */
	struct dmt_file *data;
	struct dmt_file *hash;
	struct dmt_file *fec;		/* may be == hash */

	/* execution: never changes the output */
	unsigned int threads;		/* 0: dmt_default_threads() */
	const char *engine;		/* engine spec (<dmt/hash.h>), NULL */
	struct dmt_progress progress;

	uint64_t reserved[8];		/* must be zero */
};

/* Zeroes *p, roots DMT_FEC_ROOTS_DEFAULT; the rest must be set. */
void dmt_fec_params_init(struct dmt_fec_params *p);

/* Sizes, all derived from the parameters (and the hash file size). */
struct dmt_fec_layout {
	unsigned int roots;
	unsigned int rsn;		/* 255 - roots message symbols */
	uint32_t block_size;
	uint64_t data_blocks;
	uint64_t hash_start;
	uint64_t hash_blocks;		/* covered hash-file blocks */
	uint64_t fec_blocks;		/* kernel fec_blocks: N + hash */
	uint64_t rounds;		/* ceil(fec_blocks / rsn) */
	uint64_t parity_blocks;		/* rounds * roots (FEC blocks) */
	uint64_t parity_bytes;		/* parity_blocks * block_size */
	uint64_t fec_offset;
	uint64_t fec_start;		/* kernel fec_start, in blocks */
	uint64_t fec_end;		/* fec_offset + parity_bytes */
	bool shared;			/* FEC area is in the hash file */
	uint64_t reserved[8];		/* zeroed by the library */
};

/*
 * Layout for p, deriving hash_blocks from the files when it is 0.  Also
 * rejects a parity area overlapping the covered area of the same file.
 * -EINVAL with r (may be NULL): MISSING data / hash / fec / data_blocks,
 * OUT_OF_RANGE roots (min, max), BAD_VALUE block_size, NOT_ALIGNED
 * fec_offset, DMT_REASON_VERITY_AREA_OVERLAP field "fec" with field2
 * "data" or "hash", BAD_VALUE reserved; -ERANGE (TOO_LARGE data_blocks)
 * when offsets overflow; -ENODATA (DEVICE_TOO_SMALL "hash", path) when
 * the hash file ends before hash_start; IO "hash" when its size is not
 * known.
 */
int dmt_fec_layout(const struct dmt_fec_params *p, struct dmt_fec_layout *l,
		   struct dmt_reason *r);

/* Maps a covered block to its file: data block, or hash-file block. */
static inline bool dmt_fec_block_is_hash(const struct dmt_fec_layout *l,
					 uint64_t block, uint64_t *file_block)
{
	if (block < l->data_blocks) {
		*file_block = block;
		return false;
	}
	*file_block = l->hash_start + (block - l->data_blocks);
	return true;
}

/*
 * Computes and writes the parity area (l->parity_bytes at fec_offset; the
 * FEC file grows as needed).  Reads the covered area once, in large
 * chunks, on all threads.  layout may be NULL.  Errors: those of
 * dmt_fec_layout() (with r), -ENODATA (data or hash file shorter than the
 * covered area), -EINTR (progress hook), -ENOMEM, I/O errors.
 */
int dmt_fec_encode(const struct dmt_fec_params *p,
		   struct dmt_fec_layout *layout, struct dmt_reason *r);

/* ---- checking and correction ---- */

struct dmt_fec;		/* handle passed to the check callback */

/* What a check callback says about a block's contents. */
enum dmt_fec_verdict {
	DMT_FEC_BLOCK_OK = 0,		/* matches its expected digest */
	DMT_FEC_BLOCK_BAD = 1,		/* does not match */
	DMT_FEC_BLOCK_UNKNOWN = 2,	/* no digest covers it (metadata
					 * after the tree) */
};

/* What happened to a block, for the report callback. */
enum dmt_fec_outcome {
	DMT_FEC_CORRECTED = 0,		/* corrected and verified */
	DMT_FEC_CORRECTED_UNVERIFIED,	/* corrected, nothing to check it
					 * against: never written back */
	DMT_FEC_UNREPAIRABLE,
};

struct dmt_fec_ops {
	/*
	 * Checks `data` (block_size bytes) as the contents of covered block
	 * `block` against its expected verity digest.  Parent hash blocks
	 * should be read with dmt_fec_read_block(), which returns blocks
	 * already corrected in this run.  Returns an enum dmt_fec_verdict or
	 * a negative errno (aborts).  Required.
	 */
	int (*check)(void *ctx, struct dmt_fec *fec, uint64_t block,
		     const uint8_t *data);
	/*
	 * Optional: told once about every corrected or unrepairable block;
	 * `data` is the corrected contents (NULL when unrepairable).  A
	 * negative return aborts.
	 */
	int (*report)(void *ctx, uint64_t block, enum dmt_fec_outcome what,
		      const uint8_t *data);
	void *ctx;
};

enum {
	/* Write verified corrections back to the data and hash files, and
	 * rewrite damaged parity when the FEC file is writable. */
	DMT_FEC_REPAIR = 1 << 0,
};

struct dmt_fec_stats {
	uint64_t bad_rounds;		/* rounds whose parity mismatched */
	uint64_t corrected_blocks;	/* DMT_FEC_CORRECTED */
	uint64_t unverified_blocks;	/* DMT_FEC_CORRECTED_UNVERIFIED */
	uint64_t unrepairable_blocks;
	uint64_t corrected_bytes;	/* symbols fixed in those blocks */
	uint64_t parity_rounds_bad;	/* rounds with damaged parity only */
	uint64_t parity_rounds_fixed;	/* ... rewritten (REPAIR) */
	uint64_t written_blocks;	/* blocks written back */
	uint64_t reserved[8];		/* zeroed by the library */
};

/*
 * Checks the whole covered area against the parity (one streaming pass,
 * as fast as encoding), then decodes every round whose parity does not
 * match: first without erasures, then, if a codeword fails or a corrected
 * block does not verify, with every block the check callback calls BAD
 * marked as an erasure (up to roots of them per round, like the kernel).
 * A correction is trusted only when the check callback says OK.  Rounds
 * are revisited while corrections make progress, so a data block whose
 * hash block was corrupted too is checked against the corrected one.
 *
 * Returns 0 when no block is left unrepairable (including when nothing was
 * wrong), -EBADMSG otherwise; stats (may be NULL) are filled either way.
 * Other errors: as dmt_fec_encode (with r), or what a callback returned.
 * Memory: a few buffers per thread, one round (rsn blocks) for decoding,
 * plus the corrected blocks kept for dmt_fec_read_block (in memory up to
 * 64 MiB, past that in an unlinked file in $TMPDIR or /var/tmp).
 */
int dmt_fec_verify_and_correct(const struct dmt_fec_params *p,
			       const struct dmt_fec_ops *ops,
			       unsigned int flags,
			       struct dmt_fec_stats *stats,
			       struct dmt_reason *r);

/*
 * Reads covered block `block` into buf (block_size bytes): the corrected
 * contents when this run corrected and verified it, else the file's.
 * Only valid inside a callback.  Blocks past the covered area read as
 * zeros.
 */
int dmt_fec_read_block(struct dmt_fec *fec, uint64_t block, uint8_t *buf);

/* The layout of the run (inside callbacks). */
const struct dmt_fec_layout *dmt_fec_get_layout(const struct dmt_fec *fec);

#endif /* DMT_FEC_H */
