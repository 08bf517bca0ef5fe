/* SPDX-License-Identifier: MIT */
/*
 * fs-verity file digests (docs/formats.md, "fs-verity"): the Merkle tree
 * the kernel builds over a file, its 256-byte descriptor, and the file
 * digest = hash(descriptor) that `fsverity digest` prints and
 * FS_IOC_MEASURE_VERITY returns.
 *
 * Two interfaces:
 * - dmt_fsverity_compute_digest(): one file from a read callback, in the
 *   shape of libfsverity_compute_digest() (same parameters, same callbacks,
 *   same bytes), hashed with the multibuffer engine and worker threads;
 * - dmt_fsverity_batch_*(): many files.  The data blocks of small files
 *   are hashed together (one file's single block shares a dmt_hash call
 *   with other files' blocks, so every lane of the engine is busy), each
 *   worker taking runs of consecutive files from open to digest, big
 *   files with all threads; results come back in submission order on the
 *   calling thread, memory stays bounded whatever the number of files.
 *
 * Every function returns 0 or a negative errno and, where a struct
 * dmt_reason is passed, says why (fields named as in the params structs:
 * "version", "hash_algorithm", "block_size", "salt_size", "salt").
 */
#ifndef DMT_FSVERITY_H
#define DMT_FSVERITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dmt/reason.h>

/* Hash algorithm numbers of the on-disk format (FS_VERITY_HASH_ALG_*). */
#define DMT_FSVERITY_HASH_SHA256 1
#define DMT_FSVERITY_HASH_SHA512 2

#define DMT_FSVERITY_DESCRIPTOR_SIZE 256
#define DMT_FSVERITY_MAX_DIGEST	     64
#define DMT_FSVERITY_MAX_SALT	     32
/* Block sizes: powers of two from 2 * digest size up to this (what
 * fsverity-utils 1.5 accepts; the kernel: 1024 up to the page size and the
 * filesystem block size). */
#define DMT_FSVERITY_MAX_BLOCK_SIZE	(1u << 30)
#define DMT_FSVERITY_DEFAULT_BLOCK_SIZE 4096
/* "FSVerity" + le16 algorithm + le16 size + digest */
#define DMT_FSVERITY_FORMATTED_MAX (8 + 2 + 2 + DMT_FSVERITY_MAX_DIGEST)

/* As struct libfsverity_metadata_callbacks: each may be NULL; a non-zero
 * (negative errno) return stops the computation and is returned. */
struct dmt_fsverity_metadata_callbacks {
	void *ctx;
	/* total Merkle tree size, before any block (also when it is 0) */
	int (*merkle_tree_size)(void *ctx, uint64_t size);
	/* one tree block, at its offset in the FS_IOC_READ_VERITY_METADATA
	 * layout (levels top-down); offsets do not come in order */
	int (*merkle_tree_block)(void *ctx, const void *block, size_t size,
				 uint64_t offset);
	/* the 256-byte descriptor, after the tree */
	int (*descriptor)(void *ctx, const void *descriptor, size_t size);
};

struct dmt_fsverity_params {
	uint32_t version;	 /* must be 1 */
	uint32_t hash_algorithm; /* DMT_FSVERITY_HASH_*; 0 = sha256 */
	uint64_t file_size;	 /* bytes (compute_digest only) */
	uint32_t block_size;	 /* 0 = 4096 */
	uint32_t salt_size;	 /* 0..32 */
	const uint8_t *salt;
	/* compute_digest only; the batch takes them per file */
	const struct dmt_fsverity_metadata_callbacks *metadata_callbacks;
	unsigned int threads; /* 0 = dmt_default_threads() */
	const char *engine;   /* hash backend by name; NULL = default */
	uint64_t reserved[8]; /* must be zero */
};

/* Zeroes *p and sets version 1 (the rest: the defaults above). */
void dmt_fsverity_params_init(struct dmt_fsverity_params *p);

struct dmt_fsverity_digest {
	uint16_t digest_algorithm; /* DMT_FSVERITY_HASH_* */
	uint16_t digest_size;	   /* 32 or 64 */
	uint8_t digest[DMT_FSVERITY_MAX_DIGEST];
};

/*
 * Reads the next count bytes of the file into buf (all of them); returns 0
 * or a negative errno, which is passed back.  Called with at most a few MiB
 * at a time, always from the calling thread.
 */
typedef int (*dmt_fsverity_read_fn)(void *fd, void *buf, size_t count);

/* "sha256" / "sha512" <-> DMT_FSVERITY_HASH_*; 0 / NULL when unknown. */
uint32_t dmt_fsverity_hash_alg_by_name(const char *name);
const char *dmt_fsverity_hash_alg_name(uint32_t alg);
/* 32, 64, or 0 when unknown. */
size_t dmt_fsverity_digest_size(uint32_t alg);

/* Checks version, algorithm, block size, salt and the reserved words
 * (file_size is free). */
int dmt_fsverity_check_params(const struct dmt_fsverity_params *p,
			      struct dmt_reason *r);

/*
 * The digest of a file of p->file_size bytes read through read_fn, with
 * p->metadata_callbacks called on the tree blocks and the descriptor.
 * Returns 0, -EINVAL (bad params, see r), -ENOMEM, -ENOTSUP (engine), or
 * what read_fn or a callback returned.
 */
int dmt_fsverity_compute_digest(void *fd, dmt_fsverity_read_fn read_fn,
				const struct dmt_fsverity_params *p,
				struct dmt_fsverity_digest *out,
				struct dmt_reason *r);

/*
 * struct fsverity_formatted_digest, what built-in signatures and IMA sign:
 * "FSVerity", le16 algorithm, le16 digest size, the digest.  Writes
 * 12 + digest_size bytes to out, returns that count (0 for a bad digest).
 */
size_t dmt_fsverity_format_digest(const struct dmt_fsverity_digest *d,
				  uint8_t out[DMT_FSVERITY_FORMATTED_MAX]);

/* ---- many files ---- */

struct dmt_fsverity_batch;

/* One file to digest: by open fd, by path, or by read callback. */
struct dmt_fsverity_file {
	int fd;			      /* >= 0: read with pread from offset 0 */
	const char *path;	      /* fd < 0: opened and closed by the batch
				       * (also names the file in reasons) */
	dmt_fsverity_read_fn read_fn; /* fd < 0, path NULL: read this */
	void *read_ctx;
	/* bytes.  For fd and path, UINT64_MAX = as fstat says; another
	 * value (say from the caller's own stat) is what the file must
	 * hold: the batch does no fstat then, and a file found shorter or
	 * longer as it is read is reported (SIZE_CHANGED), or NOT_REGULAR
	 * when it is no regular file any more. */
	uint64_t size;
	const struct dmt_fsverity_metadata_callbacks *metadata_callbacks;
	void *user; /* handed back in the result */
	uint64_t reserved[8]; /* must be zero */
};

/* Zeroes *f, fd -1, size UINT64_MAX (as fstat says). */
void dmt_fsverity_file_init(struct dmt_fsverity_file *f);

struct dmt_fsverity_result {
	void *user;
	const char *path; /* the file's path, if it was given */
	uint64_t size;
	int err;		  /* 0, or why this file has no digest (the
				   * reason is done's r) */
	struct dmt_fsverity_digest digest; /* when !err and !link_of */
	/* links_once: another path of this file's inode was queued in this
	 * batch, and its user pointer is here; this path was not read (no
	 * digest: it is that file's, which may be reported after this one). */
	void *link_of;
	/* links of the file's inode when the batch fstat'ed it, else 0 (a
	 * caller that frees results as they come keeps those over 1 for the
	 * link_of that may follow) */
	uint64_t nlink;
	uint64_t reserved[8];
};

/*
 * Called once per file, in submission order, on the thread that called
 * dmt_fsverity_batch_add() or _finish(); res and r are only valid during
 * the call.  r is never NULL: why the file has no digest when res->err,
 * code DMT_REASON_NONE otherwise.  A non-zero return stops the batch and
 * is returned by the add/finish call.
 */
typedef int (*dmt_fsverity_done_fn)(void *ctx,
				    const struct dmt_fsverity_result *res,
				    const struct dmt_reason *r);

struct dmt_fsverity_batch_params {
	struct dmt_fsverity_params tree; /* file_size, callbacks unused */
	dmt_fsverity_done_fn done;
	void *done_ctx;
	/*
	 * Hash each inode once: of the files the batch fstat's itself (fd or
	 * path with size UINT64_MAX) that have several links, the first path
	 * of an inode to be opened is read; every other is reported with
	 * link_of set (and its size).  Which path is first is up to the
	 * threads, not the order; the digests are the same either way.
	 * Files with metadata callbacks or a NULL user pointer are always
	 * read.
	 */
	bool links_once;
	uint64_t reserved[8]; /* must be zero (tree's too) */
};

/* Zeroes *p, dmt_fsverity_params_init(&p->tree). */
void dmt_fsverity_batch_params_init(struct dmt_fsverity_batch_params *p);

int dmt_fsverity_batch_new(const struct dmt_fsverity_batch_params *p,
			   struct dmt_fsverity_batch **out,
			   struct dmt_reason *r);
/*
 * Queues a file; may hash queued files and report them before returning.
 * A file that cannot be read is reported through done with its error; the
 * batch goes on.  Returns 0, -EINVAL (no source, or a nonzero reserved
 * word: see r, which may be NULL), -ENOMEM, or done's non-zero return.
 */
int dmt_fsverity_batch_add(struct dmt_fsverity_batch *b,
			   const struct dmt_fsverity_file *f,
			   struct dmt_reason *r);
/* Hashes and reports every queued file. */
int dmt_fsverity_batch_finish(struct dmt_fsverity_batch *b);
/* Closes the files it opened; unreported files are dropped. */
void dmt_fsverity_batch_free(struct dmt_fsverity_batch *b);

#endif /* DMT_FSVERITY_H */
