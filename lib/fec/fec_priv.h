/* SPDX-License-Identifier: MIT */
/* Internal to the library: FEC correction into a caller's overlay. */
#ifndef DMT_LIB_FEC_PRIV_H
#define DMT_LIB_FEC_PRIV_H

#include <dmt/fec.h>

struct dmt_overlay;

/*
 * Layout without touching files: hash_blocks must be given (the number of
 * covered hash-file blocks).  -EINVAL on bad roots, block size, offset or
 * empty area; -ERANGE when offsets overflow.  (The public form is
 * dmt_verity_fec_plan().)
 */
int dmt_fec_geometry(unsigned int roots, uint32_t block_size,
		     uint64_t data_blocks, uint64_t hash_start,
		     uint64_t hash_blocks, uint64_t fec_offset,
		     struct dmt_fec_layout *l);

/*
 * dmt_fec_verify_and_correct() with the accepted blocks recorded in ov
 * (block size p->block_size, keyed by covered block number): contents when
 * only checking, block numbers only with DMT_FEC_REPAIR (the files hold
 * the corrections).  lib/verity/check.c re-verifies through it.
 */
int dmt_fec_correct(const struct dmt_fec_params *p,
		    const struct dmt_fec_ops *ops, unsigned int flags,
		    struct dmt_overlay *ov, struct dmt_fec_stats *stats,
		    struct dmt_reason *r);

#endif /* DMT_LIB_FEC_PRIV_H */
