/* SPDX-License-Identifier: MIT */
/*
 * Internal to the library and its tests: what lib/hash/hash.c offers
 * beyond <dmt/hash.h>.
 */
#ifndef DMT_LIB_HASH_PRIV_H
#define DMT_LIB_HASH_PRIV_H

#include <stddef.h>

#include <dmt/hash.h>

/*
 * Writes the supported names, ", "-separated, NUL-terminated, into buf
 * (truncated to size).  Returns the length the full list needs.
 */
size_t dmt_hash_alg_list(char *buf, size_t size);
/* Useful batch width: the widest lane count of the chosen backend (1 if
 * the backend gains nothing from batching). */
unsigned int dmt_hasher_batch_width(const struct dmt_hasher *h);

#endif /* DMT_LIB_HASH_PRIV_H */
