/* SPDX-License-Identifier: MIT */
/*
 * The backend types of the dispatcher (lib/common/dispatch.h): the
 * interface between the hash engine (lib/hash/hash.c, hash_mb.c) and the
 * per-ISA block functions in lib/hash/arch/ and lib/hash/s390/, which
 * define them.
 * Backends only compress whole blocks; framing (prefix, header, padding,
 * length) is the engine's job.  Kept here, below every subsystem, so the
 * dispatcher's table includes nothing from lib/hash.
 */
#ifndef DMT_COMMON_BACKENDS_H
#define DMT_COMMON_BACKENDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Compress nblocks 64-byte blocks into each of `lanes` independent SHA-256
 * states.  state holds lanes * 8 words, lane-major (state[l * 8 + i]);
 * data[l] points at lane l's nblocks * 64 bytes (any alignment).
 */
typedef void (*dmt_sha256_blocks_fn)(uint32_t *state,
				     const uint8_t *const *data,
				     size_t nblocks);
/* Same for SHA-512: 128-byte blocks, state[l * 8 + i] 64-bit words. */
typedef void (*dmt_sha512_blocks_fn)(uint64_t *state,
				     const uint8_t *const *data,
				     size_t nblocks);
/* CRC update without pre/post inversion (raw reflected register). */
typedef uint32_t (*dmt_crc32_fn)(uint32_t crc, const uint8_t *p, size_t len);

struct dmt_sha256_backend {
	const char *name;
	unsigned int lanes;
	uint32_t cpu_needs;	/* DMT_CPU_* bits, all required */
	dmt_sha256_blocks_fn blocks;
};

struct dmt_sha512_backend {
	const char *name;
	unsigned int lanes;
	uint32_t cpu_needs;
	dmt_sha512_blocks_fn blocks;
};

/* Portable C, always present (lib/hash/sha256.c, lib/hash/sha512.c). */
extern const struct dmt_sha256_backend dmt_sha256_portable;
extern const struct dmt_sha512_backend dmt_sha512_portable;

#if defined(__x86_64__)
extern const struct dmt_sha256_backend dmt_sha256_shani;	/* 1 lane */
extern const struct dmt_sha256_backend dmt_sha256_shani_2x;	/* 2 lanes */
extern const struct dmt_sha256_backend dmt_sha256_avx2;		/* 8 lanes */
extern const struct dmt_sha256_backend dmt_sha256_avx512;	/* 16 lanes */
extern const struct dmt_sha512_backend dmt_sha512_avx512;	/* 8 lanes */
extern const struct dmt_sha512_backend dmt_sha512_avx2;		/* 4 lanes */
uint32_t dmt_crc32c_sse42(uint32_t crc, const uint8_t *p, size_t len);
#endif
#if defined(__aarch64__)
extern const struct dmt_sha256_backend dmt_sha256_ce;		/* 1 lane */
extern const struct dmt_sha256_backend dmt_sha256_ce_2x;	/* 2 lanes */
uint32_t dmt_crc32c_arm64(uint32_t crc, const uint8_t *p, size_t len);
#endif

/* Table-driven reflected CRCs (lib/hash/crc32.c). */
uint32_t dmt_crc32c_table(uint32_t crc, const uint8_t *p, size_t len);
uint32_t dmt_crc32_le_table(uint32_t crc, const uint8_t *p, size_t len);

/* Widest lane count the framing code handles. */
#define DMT_MB_MAX_LANES 16

/*
 * One HMAC batch as the engine would compute it: for every i,
 *	out[i] = HMAC(key, prefix || headers[i] || msgs[i] || suffix)
 * truncated to nothing (digest_size is the full size of `hash`).
 */
struct dmt_hmac_job {
	const char *hash;	/* kernel name of the hash: "sha256", ... */
	const uint8_t *key;	/* the key as the user gave it */
	size_t key_size;
	const uint8_t *prefix;
	size_t prefix_size;
	const uint8_t *suffix;
	size_t suffix_size;
	size_t header_size;
	size_t msg_size;
	size_t digest_size;
};

/*
 * Returns 0, or -ENOTSUP to let the engine fall back to its block-function
 * path for this job (e.g. the machine lacks this KMAC function code).
 */
typedef int (*dmt_hmac_batch_fn)(const struct dmt_hmac_job *job, size_t n,
				 const uint8_t *const *msgs,
				 const uint8_t *headers, uint8_t *out);

/*
 * What a platform module provides.  Any member may be NULL.  The block
 * backends follow the structs above (their cpu_needs must include
 * DMT_CPU_S390_MSA so that masking it off disables them); the engine adds
 * framing, lanes and the HMAC construction around them.
 */
struct dmt_platform_hooks {
	const struct dmt_sha256_backend *sha256;
	const struct dmt_sha512_backend *sha512;
	dmt_hmac_batch_fn hmac_batch;
};

#if defined(__s390x__)
/*
 * Implemented in lib/hash/s390/ (required on s390x builds).  Called once, from
 * the engine's one-time initialisation (under pthread_once), after CPU
 * detection; it queries CPACF and fills in what this machine supports.
 * The backends become engine "cpacf" (sha256/sha224 via sha256,
 * sha512/sha384 via sha512); hmac(...) of a hash whose block backend is
 * present goes through hmac_batch when set (with the block path as the
 * fallback on -ENOTSUP).  Everything it points at must live for the whole
 * process.  With neither backend the engine is listed as unavailable.
 */
void dmt_s390_probe(struct dmt_platform_hooks *hooks);
#endif

#endif /* DMT_COMMON_BACKENDS_H */
