/* SPDX-License-Identifier: MIT */
/*
 * Internal to lib/fec*.c and lib/fec/arch/: GF(2^8) arithmetic
 * over x^8+x^4+x^3+x^2+1 (0x11d) and the Reed-Solomon code dm-verity uses
 * (fcr 0, prim 1, libfec/Phil Karn conventions).
 */
#ifndef DMT_FEC_GF256_H
#define DMT_FEC_GF256_H

#include <stddef.h>
#include <stdint.h>

#include <dmt/fec.h>

#define DMT_GF256_POLY 0x11d

/* Tables, filled once by dmt_gf256_init() (thread-safe, idempotent). */
struct dmt_gf256_tables {
	uint8_t exp[512];		/* alpha^i, doubled to skip a mod */
	uint8_t log[256];		/* log[0] = 255 (A0, "zero") */
	uint8_t mul[256][256];
};
const struct dmt_gf256_tables *dmt_gf256_init(void);

/* 8x8 bit matrix (GF2P8AFFINEQB layout) multiplying by constant c. */
uint64_t dmt_gf256_affine_matrix(uint8_t c);
/*
 * Split-nibble tables of constant c for PSHUFB: t[j] = c * j and
 * t[16 + j] = c * (j << 4), j < 16, so c * x = t[x & 15] ^ t[16 + (x >> 4)].
 */
void dmt_gf256_nibble_tables(uint8_t c, uint8_t t[32]);

/*
 * Multiply-accumulate over byte vectors, the whole encoder's work:
 *	for every row r < nrows and root i < roots:
 *		acc_i[x] ^= coef[r * roots + i] * in_r[x],  x < len
 * acc_i is at acc + i * acc_stride, in_r at in + r * in_stride; len is a
 * multiple of 64.  The GFNI version takes the coefficients as matrices
 * (dmt_gf256_affine_matrix) in the same order, each one repeated 8 times
 * (a 64-byte vector, aligned or not): mats[(r * roots + i) * 8 + 0..7].
 */
void dmt_gf256_mac_portable(uint8_t *acc, size_t acc_stride,
			    unsigned int roots, const uint8_t *in,
			    size_t in_stride, size_t nrows,
			    const uint8_t *coef, size_t len);
#if defined(__x86_64__)
void dmt_gf256_mac_gfni(uint8_t *acc, size_t acc_stride, unsigned int roots,
			const uint8_t *in, size_t in_stride, size_t nrows,
			const uint64_t *mats, size_t len);
/*
 * PSHUFB versions (CPUs without GFNI): the coefficients as split-nibble
 * tables (dmt_gf256_nibble_tables) in the same order, 32 bytes each, any
 * alignment: tbls[(r * roots + i) * 32 + 0..31].
 */
void dmt_gf256_mac_avx2(uint8_t *acc, size_t acc_stride, unsigned int roots,
			const uint8_t *in, size_t in_stride, size_t nrows,
			const uint8_t *tbls, size_t len);
void dmt_gf256_mac_ssse3(uint8_t *acc, size_t acc_stride, unsigned int roots,
			 const uint8_t *in, size_t in_stride, size_t nrows,
			 const uint8_t *tbls, size_t len);
#endif

/* ---- the code ---- */

struct dmt_rs {
	unsigned int roots;
	unsigned int rsn;
	uint8_t gen[DMT_FEC_ROOTS_MAX + 1];	/* g(x), gen[i] of x^i */
	/* coef[j * roots + i]: parity byte i contributed by message symbol j
	 * = coefficient of x^(roots-1-i) in x^(254-j) mod g(x). */
	uint8_t coef[(DMT_FEC_RSM - DMT_FEC_ROOTS_MIN) * DMT_FEC_ROOTS_MAX];
};

/* -EINVAL unless 2 <= roots <= 24. */
int dmt_rs_init(struct dmt_rs *rs, unsigned int roots);
/* Systematic encoder, one codeword: msg[rsn] -> par[roots] (Karn's
 * encode_rs_char, the reference the fast path is tested against). */
void dmt_rs_encode(const struct dmt_rs *rs, const uint8_t *msg,
		   uint8_t *par);
/*
 * Decodes cw[255] in place (message then parity).  eras lists up to roots
 * known-bad positions (0..254).  Returns the number of corrected symbols
 * (0 for a clean codeword) or -1 when uncorrectable; the result is always
 * a valid codeword when >= 0.
 */
int dmt_rs_decode(const struct dmt_rs *rs, uint8_t *cw, const int *eras,
		  int neras);

#endif /* DMT_FEC_GF256_H */
