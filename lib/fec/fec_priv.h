/* SPDX-License-Identifier: MIT */
/* Internal to the library: FEC correction into a caller's overlay. */
#ifndef DMT_LIB_FEC_PRIV_H
#define DMT_LIB_FEC_PRIV_H

#include <dmt/fec.h>

struct dmt_overlay;

/*
 * dmt_fec_verify_and_correct() with the accepted blocks recorded in ov
 * (block size p->block_size, keyed by covered block number): contents when
 * only checking, block numbers only with DMT_FEC_REPAIR (the files hold
 * the corrections).  lib/verity/check.c re-verifies through it.
 */
int dmt_fec_correct(const struct dmt_fec_params *p,
		    const struct dmt_fec_ops *ops, unsigned int flags,
		    struct dmt_overlay *ov, struct dmt_fec_stats *stats);

#endif /* DMT_LIB_FEC_PRIV_H */
