/* SPDX-License-Identifier: MIT */
/*
 * Internal to lib/verity*.c: the hashing machinery that building and
 * verifying share (per-worker hashers and buffers, data read with large
 * preads, hole and zero-block shortcuts, progress).
 */
#ifndef DMT_VERITY_PRIV_H
#define DMT_VERITY_PRIV_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dmt/verity.h>

#include "lib/common/file.h"
#include "lib/common/walk.h"

/* Data handed to the workers at once (and announced to the kernel for
 * read-ahead): 128 MiB per thread, at least 32 MiB, at most 1 GiB.  Digests
 * go straight into the level buffer, so a window costs no memory; large
 * windows mean few barriers where fast workers wait for the slowest item
 * (8 MiB per thread measured 15% slower on 2 cores). */
#define VT_WINDOW_BYTES (32ull << 20)
#define VT_WINDOW_PER_THREAD (128ull << 20)
#define VT_WINDOW_MAX (1ull << 30)
/* Worker threads at most (each has ~1 MiB of buffers, less when its
 * share of DMT_WALK_MEM_BUDGET is smaller). */
#define VT_MAX_THREADS 256
/* Data per work item (one pread). */
#define VT_ITEM_BYTES (1u << 20)
/* A tree level is buffered and written in pieces of at most this. */
#define VT_LEVEL_BYTES (4u << 20)

struct vt_worker {
	struct dmt_hasher *hd;		/* data blocks */
	struct dmt_hasher *hh;		/* hash blocks */
	uint8_t *io;			/* pread buffer, one work item */
	uint8_t *dig;			/* digests of one work item */
	uint8_t *dig2;			/* scratch for scattering */
	const uint8_t **msgs;		/* non-zero blocks of an item */
	uint8_t *parent;		/* verify: parent blocks of an item */
	uint64_t zero_blocks;
};

struct vt {
	struct dmt_verity_params p;	/* data_blocks resolved */
	struct dmt_verity_geometry g;
	struct dmt_file *data, *hash;
	unsigned int threads;
	struct vt_worker *w;
	uint64_t item_blocks;		/* data blocks per work item */
	uint64_t hitem_blocks;		/* hash blocks per work item */
	uint32_t hpb;			/* digests per hash block */
	uint8_t zero_digest[DMT_DIGEST_MAX];

	/* progress, cancellation, the first error and its file */
	struct dmt_walk walk;
	pthread_mutex_t lock;		/* verify: the report */
};

/*
 * A hasher for one kind of verity block (data when hash_block is false,
 * tree blocks otherwise) with the salt placed as the format requires.
 * Clone it per thread (dmt_hasher_clone).
 */
int dmt_verity_hasher_new(const struct dmt_verity_params *p, bool hash_block,
			  struct dmt_hasher **out);
/* Encodes and writes the superblock at p->hash_offset of hash. */
int dmt_verity_sb_write(struct dmt_file *hash,
			const struct dmt_verity_params *p);

/*
 * Resolves data_blocks, checks sizes and overlap, creates the hashers and
 * buffers of every worker (need_parent: verify's parent-block buffer).
 */
int vt_init(struct vt *t, const struct dmt_verity_params *p,
	    struct dmt_file *data, struct dmt_file *hash, bool need_parent,
	    struct dmt_reason *why);
void vt_free(struct vt *t);

/* dmt_verity_build(), the superblock only when write_sb (format writes it
 * after the FEC parity, as veritysetup does). */
int vt_build(const struct dmt_verity_params *p, struct dmt_file *data,
	     struct dmt_file *hash, bool write_sb, struct dmt_verity_result *res,
	     struct dmt_reason *why);

/* Asks the kernel to start reading data blocks [b0, b1) ahead; once a
 * window, from the main thread (every hint walks the page cache: per work
 * item from the workers measured 4% slower). */
void vt_readahead(struct vt *t, uint64_t b0, uint64_t b1);

/* Digests of data blocks [b0, b1) (at most item_blocks) into out, ds
 * apart; holes and all-zero blocks get the precomputed zero digest;
 * blocks of the overlay (verify) are hashed from it. */
int vt_hash_data(struct vt *t, unsigned int wid, uint64_t b0, uint64_t b1,
		 uint8_t *out);
/* Lays the overlay's hash-file blocks [first, first + n) over buf. */
int vt_overlay_hash(struct vt *t, uint8_t *buf, uint64_t first, uint64_t n);
/* Digests of n contiguous hash blocks. */
int vt_hash_blocks(struct vt *t, unsigned int wid, const uint8_t *src,
		   size_t n, uint8_t *out);

/* The hooks of struct dmt_verity_stages, where given (end passes err
 * through). */
struct dmt_progress vt_stage_begin(const struct dmt_verity_stages *st,
				   enum dmt_verity_stage s);
int vt_stage_end(const struct dmt_verity_stages *st, enum dmt_verity_stage s,
		 int err);

/* Data blocks per window. */
uint64_t vt_window_blocks(const struct vt *t);

/* Adds finished bytes, reports now and then; -EINTR when cancelled. */
static inline int vt_progress(struct vt *t, uint64_t bytes)
{
	return dmt_walk_progress(&t->walk, bytes);
}

/* Passes err through, recording it (and the file of an I/O error) as the
 * walk's failure at the item being run. */
static inline int vt_io(struct vt *t, struct dmt_file *f, int err)
{
	return dmt_walk_fail(&t->walk, err, f, 0);
}

/* The file of the first I/O error, for the result. */
static inline const char *vt_error_path(const struct vt *t)
{
	const struct dmt_file *f = dmt_walk_error_file(&t->walk);

	return f ? f->path : NULL;
}

/* Where digest idx of a level buffer lives. */
static inline uint8_t *vt_slot(const struct vt *t, uint8_t *buf, uint64_t idx)
{
	return buf + (idx >> t->g.hash_per_block_bits) * t->g.hash_block_size +
	       (idx & (t->hpb - 1)) * t->g.digest_slot;
}

/* Digests can be written straight into a level buffer when slots are
 * contiguous across blocks (power-of-two digest sizes). */
static inline bool vt_direct(const struct vt *t)
{
	return t->g.digest_slot == t->g.digest_size &&
	       (uint64_t)t->hpb * t->g.digest_slot == t->g.hash_block_size;
}

#endif /* DMT_VERITY_PRIV_H */
