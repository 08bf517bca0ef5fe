// SPDX-License-Identifier: MIT
/*
 * GF(2^8) multiply-accumulate with AVX2 for CPUs without GFNI: the split-
 * nibble method.  c * x = c * (x & 15) ^ c * (x & 0xf0), so each RS
 * coefficient is two 16-entry tables and one VPSHUFB per nibble looks up
 * 32 products at once (the tables sit in both 128-bit halves).
 *
 * Same loop order as the GFNI version: per 64-byte column, a few roots'
 * accumulators stay in registers while every row of the band goes by.
 * Two 32-byte vectors per row share each table load; four roots per pass
 * (8 accumulators, 2 x 2 nibble vectors, 2 tables, the mask) fill the 16
 * ymm registers.
 */
#include "lib/fec/fec_gf256.h"
#include "lib/common/dispatch.h"

#include <immintrin.h>

#define NA_MAX 4

/* na is a compile-time constant at every call site (see the switch). */
static inline __attribute__((always_inline)) void
mac_cols(uint8_t *acc, size_t acc_stride, unsigned int roots,
	 const uint8_t *in, size_t in_stride, size_t nrows,
	 const uint8_t *tbls, size_t x, const unsigned int na)
{
	const __m256i nib = _mm256_set1_epi8(0x0f);
	__m256i a0[NA_MAX], a1[NA_MAX];
	unsigned int t;
	size_t r;

#pragma GCC unroll 4
	for (t = 0; t < na; t++) {
		a0[t] = _mm256_loadu_si256((const void *)(acc + t * acc_stride +
							  x));
		a1[t] = _mm256_loadu_si256((const void *)(acc + t * acc_stride +
							  x + 32));
	}
	for (r = 0; r < nrows; r++) {
		const uint8_t *p = in + r * in_stride + x;
		const __m256i v0 = _mm256_loadu_si256((const void *)p);
		const __m256i v1 = _mm256_loadu_si256((const void *)(p + 32));
		const __m256i l0 = _mm256_and_si256(v0, nib);
		const __m256i l1 = _mm256_and_si256(v1, nib);
		const __m256i h0 = _mm256_and_si256(_mm256_srli_epi16(v0, 4),
						    nib);
		const __m256i h1 = _mm256_and_si256(_mm256_srli_epi16(v1, 4),
						    nib);
		const uint8_t *m = tbls + r * roots * 32;

#pragma GCC unroll 4
		for (t = 0; t < na; t++) {
			const __m256i tl = _mm256_broadcastsi128_si256(
				_mm_loadu_si128((const void *)(m + t * 32)));
			const __m256i th = _mm256_broadcastsi128_si256(
				_mm_loadu_si128((const void *)(m + t * 32 +
							       16)));

			a0[t] = _mm256_xor_si256(a0[t], _mm256_xor_si256(
				_mm256_shuffle_epi8(tl, l0),
				_mm256_shuffle_epi8(th, h0)));
			a1[t] = _mm256_xor_si256(a1[t], _mm256_xor_si256(
				_mm256_shuffle_epi8(tl, l1),
				_mm256_shuffle_epi8(th, h1)));
		}
	}
#pragma GCC unroll 4
	for (t = 0; t < na; t++) {
		_mm256_storeu_si256((void *)(acc + t * acc_stride + x), a0[t]);
		_mm256_storeu_si256((void *)(acc + t * acc_stride + x + 32),
				    a1[t]);
	}
}

void dmt_gf256_mac_avx2(uint8_t *acc, size_t acc_stride, unsigned int roots,
			const uint8_t *in, size_t in_stride, size_t nrows,
			const uint8_t *tbls, size_t len)
{
	unsigned int i0;
	size_t x;

	for (x = 0; x < len; x += 64) {
		for (i0 = 0; i0 < roots; i0 += NA_MAX) {
			uint8_t *a = acc + i0 * acc_stride;
			const uint8_t *m = tbls + i0 * 32;

			switch (roots - i0 < NA_MAX ? roots - i0 : NA_MAX) {
			case 1:
				mac_cols(a, acc_stride, roots, in, in_stride,
					 nrows, m, x, 1);
				break;
			case 2:
				mac_cols(a, acc_stride, roots, in, in_stride,
					 nrows, m, x, 2);
				break;
			case 3:
				mac_cols(a, acc_stride, roots, in, in_stride,
					 nrows, m, x, 3);
				break;
			default:
				mac_cols(a, acc_stride, roots, in, in_stride,
					 nrows, m, x, 4);
				break;
			}
		}
	}
	_mm256_zeroupper();
}

/* The dispatcher's entry (lib/common/dispatch.h): coefficients prepared once
 * per encoder, then every band goes through mac. */
static void avx2_prep(uint8_t c, void *out)
{
	dmt_gf256_nibble_tables(c, out);
}

static void avx2_mac(uint8_t *acc, size_t acc_stride, unsigned int roots,
		    const uint8_t *in, size_t in_stride, size_t nrows,
		    const void *coefs, size_t len)
{
	dmt_gf256_mac_avx2(acc, acc_stride, roots, in, in_stride, nrows,
			    (const uint8_t *)coefs, len);
}

const struct dmt_gf256_ops dmt_gf256_ops_avx2 = {
	.prep = avx2_prep, .mac = avx2_mac, .coef_size = 32,
};
