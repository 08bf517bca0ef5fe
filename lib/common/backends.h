/* SPDX-License-Identifier: MIT */
/*
 * Internal interface between the engine (lib/hash*.c) and the per-ISA
 * block functions in lib/arch/ and lib/s390/.  Backends only compress whole
 * blocks; framing (prefix, header, padding, length) is the engine's job.
 */
#ifndef DMT_ARCH_BACKENDS_H
#define DMT_ARCH_BACKENDS_H

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

/* Portable C, always present (lib/sha256.c, lib/sha512.c). */
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

/* Table-driven reflected CRCs (lib/crc32.c). */
uint32_t dmt_crc32c_table(uint32_t crc, const uint8_t *p, size_t len);
uint32_t dmt_crc32_le_table(uint32_t crc, const uint8_t *p, size_t len);

#endif /* DMT_ARCH_BACKENDS_H */
