/* SPDX-License-Identifier: MIT */
/*
 * Internal interface of the hash engine: shared between lib/hash/hash*.c and
 * lib/hash/sha*.c.  The backend types, the batched-HMAC hook and the
 * platform hook (lib/hash/s390/, CPACF) are the dispatcher's, in
 * lib/common/backends.h.
 */
#ifndef DMT_HASH_BACKEND_H
#define DMT_HASH_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/common/backends.h"

/* Initial hash values (FIPS 180-4), host-endian words. */
extern const uint32_t dmt_sha256_iv[8];
extern const uint32_t dmt_sha224_iv[8];
extern const uint64_t dmt_sha512_iv[8];
extern const uint64_t dmt_sha384_iv[8];

/* ---- SHA-2 multi-lane framing (lib/hash_mb.c) ---- */

/* A block function, or (both NULL) the OpenSSL one-message fallback. */
struct dmt_mb_fn {
	const char *name;
	unsigned int lanes;
	dmt_sha256_blocks_fn f256;
	dmt_sha512_blocks_fn f512;
};

/*
 * Layout of one pass over prefix || header || msg || suffix after the
 * prefix's whole blocks have been absorbed into st0.  The logical stream
 * after st0 is: staged head (head_len bytes: prefix tail, header, first k
 * message bytes), `direct` message bytes hashed in place from the caller's
 * buffer, staged tail (tail_len bytes: last tail_msg message bytes, suffix,
 * padding, length).  With no direct part everything is in the tail.
 */
struct dmt_mb_pass {
	bool wide;		/* SHA-512 family: 128-byte blocks */
	size_t lp, hs, ms;
	size_t k, direct, tail_msg;
	size_t head_len, tail_len;
	size_t stride;		/* staging bytes per lane */
	union {
		uint32_t w32[8];
		uint64_t w64[8];
	} st0;
};

/* Computes the layout; returns the per-lane staging size. */
size_t dmt_mb_pass_plan(struct dmt_mb_pass *p, bool wide, size_t prefix_size,
			size_t header_size, size_t msg_size,
			size_t suffix_size);
/*
 * Absorbs the prefix into st0 (from iv) and writes the constant staging
 * bytes of `lanes` lanes.
 */
void dmt_mb_pass_prepare(struct dmt_mb_pass *p, const void *iv,
			 const uint8_t *prefix, size_t prefix_size,
			 const uint8_t *suffix, size_t suffix_size,
			 uint8_t *stage, unsigned int lanes);
/*
 * Hashes m <= fn->lanes messages with fn (unused lanes recompute lane 0).
 * With outer != NULL (HMAC) the inner digests (digest_size bytes) are then
 * hashed as the outer pass.  Writes m * digest_size bytes to out.
 */
void dmt_mb_run(const struct dmt_mb_fn *fn, const struct dmt_mb_pass *inner,
		uint8_t *in_stage, const struct dmt_mb_pass *outer,
		uint8_t *out_stage, size_t m, const uint8_t *const *msgs,
		const uint8_t *headers, size_t digest_size, uint8_t *out);

#endif /* DMT_HASH_BACKEND_H */
