/* SPDX-License-Identifier: MIT */
/*
 * The walk every bulk pass of the library runs on (verity build and
 * verify, FEC encode and scan, integrity format, check and recalculate).
 *
 * A pass is a range of items (blocks, units, groups) handed out in chunks
 * to worker threads (lib/common/threads), optionally in windows with a
 * hook before (read-ahead) and after (flushing level buffers) each one.
 * The walk owns what those passes used to write each for itself:
 * - progress: one accumulator, reported through struct dmt_progress every
 *   `step` bytes and at the end;
 * - cancellation: a progress callback returning non-zero stops the walk,
 *   which returns -EINTR;
 * - the first error: the failure at the lowest item wins (every item below
 *   it still runs, every item above it is skipped), so the error and the
 *   file reported are the same whatever the thread count;
 * - hole splitting (dmt_walk_extents), the one user of SEEK_DATA/SEEK_HOLE,
 *   and the hashing of data blocks around holes and zero blocks that verity
 *   build and fs-verity share (dmt_walk_hash_blocks, dmt_zero_tree);
 * - the memory budget of the bulk buffers (DMT_WALK_MEM_BUDGET).
 * Internal to the library: not part of include/dmt.
 */
#ifndef DMT_LIB_COMMON_WALK_H
#define DMT_LIB_COMMON_WALK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <dmt/hash.h>
#include <dmt/io.h>
#include <dmt/progress.h>

/* Progress is reported at most once per this many bytes (and at the end). */
#define DMT_WALK_PROGRESS_STEP (8ull << 20)

struct dmt_walk {
	unsigned int threads;		/* workers of every pass (>= 1) */
	struct dmt_progress progress;
	uint64_t total;			/* progress total, bytes */
	uint64_t step;			/* report every step bytes */
	/* state: use the functions below */
	pthread_mutex_t lock;
	uint64_t done, reported;
	uint64_t stop_at;		/* items >= stop_at are not run */
	bool cancelled;
	bool failed;
	int err;			/* the first error (lowest item) */
	uint64_t err_item;
	const struct dmt_file *err_file;	/* its file, if an I/O error */
	int err_code;			/* the caller's reason code for it */
	uint64_t unfinished;		/* see dmt_walk_unfinished() */
};

/* One pass over items [0, items), chunk items per call of fn. */
struct dmt_walk_pass {
	uint64_t items;
	uint64_t chunk;			/* 0: 1 */
	uint64_t window;		/* items per window; 0: one window */
	unsigned int threads;		/* 0: the walk's; fewer when small */
	/* fn(ctx, worker, begin, end): worker is 0..threads-1 */
	int (*fn)(void *ctx, unsigned int worker, uint64_t begin,
		  uint64_t end);
	/* on the calling thread, around every window (optional) */
	int (*window_begin)(void *ctx, uint64_t begin, uint64_t end);
	int (*window_end)(void *ctx, uint64_t begin, uint64_t end);
	void *ctx;
	uint64_t base;			/* added to item numbers for ordering
					 * errors across passes of one walk */
};

/* threads 0: dmt_default_threads(). progress may be NULL. */
void dmt_walk_init(struct dmt_walk *w, unsigned int threads,
		   const struct dmt_progress *progress, uint64_t total);
void dmt_walk_destroy(struct dmt_walk *w);

/* Runs a pass; 0, or the walk's first error (also kept for later). */
int dmt_walk_run(struct dmt_walk *w, const struct dmt_walk_pass *pass);

/* Adds finished bytes, reports now and then; -EINTR once cancelled. */
int dmt_walk_progress(struct dmt_walk *w, uint64_t bytes);

/*
 * Records err (not 0) as a failure of the item being run on this thread
 * (outside a pass: item 0 of the walk), with the file it hit when it is
 * an I/O error (f may be NULL; -EINTR and -ENOMEM never name a file) and
 * the caller's reason code.  The lowest item wins.  Returns err.
 */
int dmt_walk_fail(struct dmt_walk *w, int err, const struct dmt_file *f,
		  int code);

/* True when the item being run on this thread need not finish (an error
 * at a lower item, or cancellation). */
bool dmt_walk_stopped(struct dmt_walk *w);

/*
 * The lowest item (walk-wide number) of the passes run so far that may
 * not have finished (it failed, or was skipped after a failure or a
 * cancellation); UINT64_MAX when every item finished.  Items are handed
 * out in order, so every item below it finished: where to resume.
 */
uint64_t dmt_walk_unfinished(const struct dmt_walk *w);

/* The first error's file and code (NULL / 0 when none). */
const struct dmt_file *dmt_walk_error_file(const struct dmt_walk *w);
int dmt_walk_error_code(const struct dmt_walk *w);

/*
 * Memory for the bulk buffers of one pass (data and tags in flight, work
 * items, ring slots), shared out among its threads and slots rather than
 * given per thread: with the program, its libraries, the level buffers
 * and the threads' stacks, every command of every tool stays under 64 MiB
 * of peak RSS whatever the image size and the thread count.
 */
#define DMT_WALK_MEM_BUDGET (32ull << 20)

/* budget / parts, rounded down to a multiple of align (a power of two),
 * then clamped to [least, most] (least wins). */
uint64_t dmt_walk_share(uint64_t budget, uint64_t parts, uint64_t align,
			uint64_t least, uint64_t most);

/*
 * What the hole map looked like: the count and the sum of the offsets
 * of the bytes found in holes.  Both add up over disjoint ranges, so
 * ranges looked at by different workers at different times add up to the
 * print of one look at the whole file when (and, but for a vanishing
 * chance, only when) the map did not change in between.
 */
struct dmt_hole_print {
	uint64_t bytes, sum;
};

void dmt_hole_print_add(struct dmt_hole_print *p, uint64_t off, uint64_t len);
void dmt_hole_print_merge(struct dmt_hole_print *p,
			  const struct dmt_hole_print *q);
bool dmt_hole_print_equal(const struct dmt_hole_print *a,
			  const struct dmt_hole_print *b);

/*
 * Cuts [off, end) of f into runs of whole blocks of bs bytes (counted from
 * off) that lie inside a hole, and runs that may hold data (a block with
 * any byte of data counts as data), and calls fn(ctx, run_off, run_len,
 * data) for each in order, alternating.  Where the file system cannot
 * tell, everything is data.  Every extent is looked at (a hole inside a
 * block too), and when print is not NULL the holes of [off, end) are
 * added to it.  Stops at fn's first non-zero return, which it returns.
 */
typedef int (*dmt_extent_fn)(void *ctx, uint64_t off, uint64_t len,
			     bool data);
int dmt_walk_extents_print(struct dmt_file *f, uint64_t off, uint64_t end,
			   uint64_t bs, dmt_extent_fn fn, void *ctx,
			   struct dmt_hole_print *print);
int dmt_walk_extents(struct dmt_file *f, uint64_t off, uint64_t end,
		     uint64_t bs, dmt_extent_fn fn, void *ctx);

/* True when no byte of [off, end) lies in a hole (as far as the file
 * system tells). */
bool dmt_walk_all_data(struct dmt_file *f, uint64_t off, uint64_t end);

/*
 * Data blocks of a file into digests, the way verity build and fs-verity
 * hash them: blocks in holes are never read and all-zero blocks never
 * hashed, both get zero_digest (what the zero block hashes to), so the
 * digests are those of reading and hashing everything.  One per worker;
 * the caller fills the fields above "out".
 */
struct dmt_walk_blocks {
	struct dmt_file *f;
	uint64_t size;			/* bytes of f; a block's bytes past
					 * it are zeros (UINT64_MAX: none) */
	uint32_t bs, ds;		/* block and digest sizes */
	const uint8_t *zero_digest;
	struct dmt_hasher *h;		/* one block -> its digest */
	uint8_t *io;			/* room for the blocks of one call */
	const uint8_t **msgs;		/* as many pointers */
	uint8_t *dig;			/* as many digests */
	/* out, added up over the calls */
	uint64_t zero_blocks;		/* blocks given zero_digest */
	struct dmt_hole_print holes;	/* the hole map as it was seen */
	bool read_failed;		/* the error came from a read of f */
};

/* Digests of blocks [b0, b1) into out, ds apart. */
int dmt_walk_hash_blocks(struct dmt_walk_blocks *wb, uint64_t b0, uint64_t b1,
			 uint8_t *out);

/*
 * The digests of all-zero subtrees, the same at every position of a tree:
 * z[0] of a zero data block of dbs bytes (h_data), z[i + 1] of a hash block
 * of hbs bytes (h_hash) whose per slots, slot bytes apart, all hold z[i]
 * (the rest zeros).  Fills z[0..n], ds bytes each.
 */
int dmt_zero_tree(struct dmt_hasher *h_data, uint32_t dbs,
		  struct dmt_hasher *h_hash, uint32_t hbs, uint32_t ds,
		  uint32_t slot, uint32_t per, unsigned int n, uint8_t *z);
/* A hash block of hbs bytes whose per slots all hold digest. */
void dmt_zero_tree_block(uint8_t *block, uint32_t hbs, const uint8_t *digest,
			 uint32_t ds, uint32_t slot, uint32_t per);

#endif /* DMT_LIB_COMMON_WALK_H */
