/* SPDX-License-Identifier: MIT */
/* Worker threads for bulk hashing: a parallel-for over index ranges. */
#ifndef DMT_THREADS_H
#define DMT_THREADS_H

#include <stddef.h>
#include <stdint.h>

/* Default thread count: CPUs in the affinity mask, capped by the cgroup
 * (v2 cpu.max, v1 cfs_quota/period) quota, at least 1. */
unsigned int dmt_default_threads(void);

/*
 * Calls fn(ctx, worker, begin, end) over [0, n) split into chunks of
 * `chunk` items, handed out dynamically to `threads` workers (worker is
 * 0..threads-1, so callers can keep per-worker state).  Runs inline when
 * threads <= 1.  The first non-zero return of any call stops handing out
 * further chunks and is returned.
 */
typedef int (*dmt_range_fn)(void *ctx, unsigned int worker, uint64_t begin,
			    uint64_t end);
int dmt_parallel_for(unsigned int threads, uint64_t n, uint64_t chunk,
		     dmt_range_fn fn, void *ctx);

#endif /* DMT_THREADS_H */
