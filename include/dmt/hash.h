/* SPDX-License-Identifier: MIT */
/*
 * Multibuffer hash engine: hash many equal-length messages from one prepared
 * prefix state in one call (the kernel's finup_mb / sha256_finup_2x idea).
 *
 * Every message i hashed by a hasher is
 *	prefix || header[i] || msg[i] || suffix
 * where prefix and suffix are fixed at creation (verity salt before or after
 * the block, dm-integrity's 16-byte salt), header[i] is an optional
 * per-message field of fixed size (dm-integrity's le64 sector number) and
 * every msg[i] has the same length.  For keyed algorithms (hmac(...)) the
 * whole message is MAC'ed with the key; inner and outer hashes both go
 * through the batched path.
 *
 * A hasher is not thread-safe; clone one per thread (cheap: prepared states
 * are copied, nothing is re-derived).
 */
#ifndef DMT_HASH_H
#define DMT_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dmt/reason.h>

#define DMT_DIGEST_MAX 64

struct dmt_hash_alg;
struct dmt_hasher;

/*
 * Look up an algorithm by its Linux crypto API name ("sha256",
 * "hmac(sha256)", "crc32c", "xxhash64", ...) or cryptsetup's spelling
 * ("hmac-sha256"); case-insensitive.  Returns 0 or -ENOENT.
 */
int dmt_hash_alg_lookup(const char *name, const struct dmt_hash_alg **alg);
/* Canonical kernel name, e.g. "hmac(sha256)". */
const char *dmt_hash_alg_name(const struct dmt_hash_alg *alg);
size_t dmt_hash_alg_digest_size(const struct dmt_hash_alg *alg);
/* True for hmac(...): a key is required. */
bool dmt_hash_alg_needs_key(const struct dmt_hash_alg *alg);
/* True if a key is accepted (hmac; xxhash64 seed; crc32/crc32c seed). */
bool dmt_hash_alg_takes_key(const struct dmt_hash_alg *alg);

struct dmt_hasher_params {
	const char *alg;	/* registry name, see dmt_hash_alg_lookup() */
	const void *key;	/* hmac key; seed for xxhash64 (8 bytes LE) */
	size_t key_size;
	const void *prefix;	/* hashed before every message (may be NULL) */
	size_t prefix_size;
	const void *suffix;	/* hashed after every message (may be NULL) */
	size_t suffix_size;
	size_t header_size;	/* per-message header bytes (0..64) */
	size_t msg_size;	/* length of every message */
	const char *engine;	/* engine spec (see below); NULL = default */
	uint64_t reserved[8];	/* must be zero (dmt_hasher_params_init) */
};

/* Zeroes *p (no algorithm: alg must be set). */
void dmt_hasher_params_init(struct dmt_hasher_params *p);

/*
 * Returns 0, -ENOENT (unknown algorithm or engine), -EINVAL (bad sizes,
 * missing key, malformed engine spec, nonzero reserved), -ENOTSUP (the
 * spec forces a backend this CPU cannot run, or OpenSSL lacks the
 * algorithm), -ENOMEM.  r (may be NULL): UNKNOWN_ALG alg (name),
 * NEEDS_KEY alg, KEY_SIZE key_size (value, min, max), MISSING key /
 * prefix / suffix, TOO_LARGE header_size / prefix_size / suffix_size /
 * key_size / msg_size, UNSUPPORTED alg or key, BAD_VALUE or UNSUPPORTED
 * engine (name: the spec), BAD_VALUE reserved.
 */
int dmt_hasher_new(const struct dmt_hasher_params *p, struct dmt_hasher **out,
		   struct dmt_reason *r);
int dmt_hasher_clone(const struct dmt_hasher *h, struct dmt_hasher **out);
void dmt_hasher_free(struct dmt_hasher *h);

size_t dmt_hasher_digest_size(const struct dmt_hasher *h);
/* Name of the backend that hashes this algorithm, e.g. "avx512". */
const char *dmt_hasher_engine(const struct dmt_hasher *h);

/*
 * Hash n messages.  msgs[i] points at msg_size bytes (any alignment);
 * headers is n * header_size bytes (NULL when header_size is 0); out
 * receives n * digest_size bytes.  n may be anything from 0 up.
 * Returns 0 or a negative errno (only an OpenSSL failure can fail).
 */
int dmt_hasher_digest(struct dmt_hasher *h, size_t n,
		      const uint8_t *const *msgs, const uint8_t *headers,
		      uint8_t *out);
/* Same, for messages at base + i * stride. */
int dmt_hasher_digest_strided(struct dmt_hasher *h, size_t n,
			      const uint8_t *base, size_t stride,
			      const uint8_t *headers, uint8_t *out);

/* One-shot convenience for small non-batched uses (seed derivation...). */
int dmt_hash_oneshot(const char *alg, const void *key, size_t key_size,
		     const void *msg, size_t len, uint8_t *out,
		     size_t *digest_size);

/* ---- backends ("engines") ---- */

/*
 * Every CPU-dispatched primitive has candidate backends, one chosen by
 * default for this CPU.  Primitives: "sha256" (sha256, sha224 and their
 * hmac), "sha512" (sha512, sha384 and their hmac), "crc32c", "crc32",
 * "xxhash64", "other" (the algorithms only OpenSSL provides) and "gf256"
 * (the GF(2^8) multiply-accumulate of FEC encoding).
 *
 * An engine spec (the `engine` field of dmt_hasher_params,
 * dmt_verity_params, dmt_integrity_params and dmt_fec_params) forces a
 * choice; it is a comma-separated list of items, later ones winning:
 *	NAME		 that backend for every primitive that has one by
 *			 that name and that this CPU runs it for; the other
 *			 primitives keep their default (lenient)
 *	PRIMITIVE=NAME	 that backend for that primitive; an error if it
 *			 has no such backend or this CPU cannot run it
 *			 (strict)
 *	auto, PRIMITIVE=auto, NULL or ""	the default
 * e.g. "portable", "sha256=shani-2x,crc32c=table,gf256=portable".
 */
struct dmt_engine_info {
	const char *name;	/* "portable", "shani", "shani-2x", ... */
	const char *primitive;	/* "sha256", "crc32c", "gf256", ... */
	const char *algs;	/* the primitive's algorithms */
	const char *desc;	/* one line */
	unsigned int lanes;	/* messages per call for this primitive */
	bool available;		/* this CPU can run it for this primitive */
	bool is_default;	/* the default choice for this primitive */
};

/*
 * One entry per (primitive, candidate backend), grouped by primitive;
 * fills up to max entries, returns the total number.
 */
size_t dmt_engine_list(struct dmt_engine_info *out, size_t max);
/*
 * Checks an engine spec against this CPU: 0, -EINVAL (malformed item or
 * unknown primitive), -ENOENT (unknown backend, or none of that name for
 * the primitive) or -ENOTSUP (this CPU cannot run it: for a bare NAME, for
 * any of its primitives).  On error the offending item is copied into bad
 * (NUL-terminated, truncated to bad_size; bad may be NULL if bad_size is 0).
 */
int dmt_engine_spec_check(const char *spec, char *bad, size_t bad_size);
/*
 * Name of the backend the dispatcher uses for primitive under spec (for
 * SHA-2, the widest of its default plan, as dmt_hasher_engine reports);
 * NULL for an unknown primitive or an invalid spec.
 */
const char *dmt_engine_resolve(const char *spec, const char *primitive);
/* Name of the environment variable the tools read for the same purpose. */
#define DMT_ENGINE_ENV "DMT_ENGINE"

#endif /* DMT_HASH_H */
