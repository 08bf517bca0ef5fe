/* SPDX-License-Identifier: MIT */
/* Progress reporting from long library operations. */
#ifndef DMT_PROGRESS_H
#define DMT_PROGRESS_H

#include <stdint.h>

/*
 * Called now and then (at most every few MiB) with the bytes done so far
 * and the total.  Calls are serialized by the library but may come from any
 * worker thread.  A non-zero return aborts the operation, which then
 * returns -EINTR (used for SIGINT/SIGTERM).
 */
typedef int (*dmt_progress_fn)(void *ctx, uint64_t done, uint64_t total);

struct dmt_progress {
	dmt_progress_fn fn;	/* NULL: no reporting */
	void *ctx;
};

#endif /* DMT_PROGRESS_H */
