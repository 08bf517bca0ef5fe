/* SPDX-License-Identifier: MIT */
/*
 * Internal: the one corrected-block overlay.  Blocks of a fixed size keyed
 * by a 64-bit block number, kept in memory up to a budget and past it in an
 * unlinked temporary file ($TMPDIR, else /var/tmp), so memory stays bounded
 * however many blocks FEC corrects.  Used by lib/fec (blocks accepted in a
 * run) and lib/verity/check.c (the corrected view that verify re-checks).
 *
 * Writes (dmt_overlay_put) come from one thread; once dmt_overlay_seal()
 * has been called, lookups may run on any number of threads at once.
 */
#ifndef DMT_LIB_COMMON_OVERLAY_H
#define DMT_LIB_COMMON_OVERLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Default memory budget for the contents of corrected blocks. */
#define DMT_OVERLAY_MEM_BUDGET (64u << 20)

struct dmt_overlay;

/* -ENOMEM, -EINVAL (block_size 0). */
int dmt_overlay_new(uint32_t block_size, size_t mem_budget,
		    struct dmt_overlay **out);
void dmt_overlay_free(struct dmt_overlay *o);

/*
 * Records block (contents data, block_size bytes; NULL: remember the block
 * number only).  Replaces an earlier entry.  Errors: -ENOMEM, or the
 * errno of the temporary file (dmt_overlay_spill_failed() then says so).
 */
int dmt_overlay_put(struct dmt_overlay *o, uint64_t block,
		    const uint8_t *data);
/* Whether block was put (with or without contents). */
bool dmt_overlay_has(const struct dmt_overlay *o, uint64_t block);
/* Copies the contents of block into buf: 1 when it has contents, 0 when it
 * is absent or was put without, < 0 on a read error. */
int dmt_overlay_get(const struct dmt_overlay *o, uint64_t block,
		    uint8_t *buf);
/* Blocks put so far. */
size_t dmt_overlay_count(const struct dmt_overlay *o);
/* True once the temporary file failed (the error dmt_overlay_put gave). */
bool dmt_overlay_spill_failed(const struct dmt_overlay *o);

/* Sorts the keys for dmt_overlay_next(); call after the last put. */
int dmt_overlay_seal(struct dmt_overlay *o);
/* Smallest block >= from that has contents, UINT64_MAX when none (sealed
 * overlays only). */
uint64_t dmt_overlay_next(const struct dmt_overlay *o, uint64_t from);

#endif /* DMT_LIB_COMMON_OVERLAY_H */
