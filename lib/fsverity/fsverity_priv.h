/* SPDX-License-Identifier: MIT */
/*
 * Internal to lib/fsverity: tree geometry, the hashing engine (per-worker
 * hashers and buffers shared by the one-file and the batch paths) and the
 * streaming tree builder.
 */
#ifndef DMT_FSVERITY_PRIV_H
#define DMT_FSVERITY_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dmt/fsverity.h>
#include <dmt/hash.h>

/* A u64 file size needs at most 58 levels (64-byte blocks, 2 per block);
 * the kernel stops at 8. */
#define FV_MAX_LEVELS 64
/* Data per work item: one pread, one dmt_hash call (less when the
 * threads' share of DMT_WALK_MEM_BUDGET is smaller). */
#define FV_ITEM_BYTES (1u << 20)
/* A tree level is buffered (and handed to the callback) in pieces of at
 * most this. */
#define FV_LEVEL_BYTES (4u << 20)
/* Data handed to the workers at once when they pread it themselves. */
#define FV_WINDOW_PER_THREAD (64ull << 20)
#define FV_MAX_THREADS	     256

struct fv_geo {
	uint64_t size; /* file bytes */
	uint64_t data_blocks;
	unsigned int levels;		      /* 0: one data block or none */
	uint64_t level_blocks[FV_MAX_LEVELS]; /* level 0 = above the data */
	uint64_t level_start[FV_MAX_LEVELS];  /* first block in the tree */
	uint64_t tree_blocks;
};

struct fv_worker {
	struct dmt_hasher *h;  /* salt || block */
	uint8_t *io;	       /* item_blocks blocks */
	uint8_t *dig;	       /* item digests (batch scatter) */
	const uint8_t **msgs;  /* the stream: non-zero blocks of an item */
	uint8_t *dig2;	       /* and their digests */
};

struct fv_engine {
	uint32_t alg, bs, ds, salt_size;
	unsigned int hpb_bits; /* log2(digests per block) */
	uint8_t salt[DMT_FSVERITY_MAX_SALT];
	unsigned int threads;
	uint64_t item_blocks; /* blocks per work item */
	struct fv_worker *w;
	struct dmt_hasher *hdesc; /* plain hash of a descriptor */
	uint8_t *window;	  /* read-callback data, threads items */
};

/* Checks p, resolves defaults, creates the hashers and buffers. */
int fv_engine_init(struct fv_engine *e, const struct dmt_fsverity_params *p,
		   struct dmt_reason *r);
void fv_engine_free(struct fv_engine *e);

void fv_geometry(const struct fv_engine *e, uint64_t size, struct fv_geo *g);

/* The descriptor of a file of size bytes with this root hash. */
void fv_descriptor(const struct fv_engine *e, uint64_t size,
		   const uint8_t *root,
		   uint8_t desc[DMT_FSVERITY_DESCRIPTOR_SIZE]);
void fv_digest_init(const struct fv_engine *e, struct dmt_fsverity_digest *d);

/* Where a file's data comes from. */
struct fv_source {
	int fd;			      /* >= 0: pread */
	dmt_fsverity_read_fn read_fn; /* else: sequential reads */
	void *read_ctx;
	const char *path; /* for reasons */
};

/*
 * The root hash of a file of size bytes, streaming: data in windows over
 * all workers, holes as zero subtrees, every level buffered in bounded
 * pieces that go to cb->merkle_tree_block as they are complete.  From an
 * fd, a file that changed while it was read fails: -ENODATA with
 * SIZE_CHANGED (its size), -ESTALE with CHANGED (its times or its hole
 * map).
 */
int fv_stream_root(struct fv_engine *e, const struct fv_source *src,
		   uint64_t size,
		   const struct dmt_fsverity_metadata_callbacks *cb,
		   uint8_t *root, struct dmt_reason *r);

/* Full pread of len bytes at off; -ENODATA (size changed) at early EOF. */
int fv_pread(int fd, void *buf, size_t len, uint64_t off);

/* Marks a size change of the file: err -ENODATA, reason SIZE_CHANGED. */
int fv_size_changed(const struct fv_source *src, uint64_t size,
		    struct dmt_reason *r);

/* Merkle tree bytes for a file of size bytes (0 for one block or less);
 * 0 or -EINVAL for bad params. */
int dmt_fsverity_tree_size(const struct dmt_fsverity_params *p, uint64_t size,
			   uint64_t *tree_size);

#endif /* DMT_FSVERITY_PRIV_H */
