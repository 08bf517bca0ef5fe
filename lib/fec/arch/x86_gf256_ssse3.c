// SPDX-License-Identifier: MIT
/*
 * GF(2^8) multiply-accumulate with SSSE3 PSHUFB, for x86-64 CPUs with
 * neither GFNI nor AVX2: the split-nibble method of x86_gf256_avx2.c on
 * 16-byte vectors.  c * x = c * (x & 15) ^ c * (x & 0xf0): two 16-entry
 * tables per RS coefficient, one PSHUFB per nibble.  Per pass four roots'
 * accumulators for a 32-byte column stay in registers while every row of
 * the band goes by.
 */
#include "lib/fec/fec_gf256.h"
#include "lib/common/dispatch.h"

#include <tmmintrin.h>

#define NA_MAX 4

static inline __attribute__((always_inline)) void
mac_cols(uint8_t *acc, size_t acc_stride, unsigned int roots,
	 const uint8_t *in, size_t in_stride, size_t nrows,
	 const uint8_t *tbls, size_t x, const unsigned int na)
{
	const __m128i nib = _mm_set1_epi8(0x0f);
	__m128i a0[NA_MAX], a1[NA_MAX];
	unsigned int t;
	size_t r;

#pragma GCC unroll 4
	for (t = 0; t < na; t++) {
		a0[t] = _mm_loadu_si128((const void *)(acc + t * acc_stride +
						       x));
		a1[t] = _mm_loadu_si128((const void *)(acc + t * acc_stride +
						       x + 16));
	}
	for (r = 0; r < nrows; r++) {
		const uint8_t *p = in + r * in_stride + x;
		const __m128i v0 = _mm_loadu_si128((const void *)p);
		const __m128i v1 = _mm_loadu_si128((const void *)(p + 16));
		const __m128i l0 = _mm_and_si128(v0, nib);
		const __m128i l1 = _mm_and_si128(v1, nib);
		const __m128i h0 = _mm_and_si128(_mm_srli_epi16(v0, 4), nib);
		const __m128i h1 = _mm_and_si128(_mm_srli_epi16(v1, 4), nib);
		const uint8_t *m = tbls + r * roots * 32;

#pragma GCC unroll 4
		for (t = 0; t < na; t++) {
			const __m128i tl =
				_mm_loadu_si128((const void *)(m + t * 32));
			const __m128i th =
				_mm_loadu_si128((const void *)(m + t * 32 + 16));

			a0[t] = _mm_xor_si128(a0[t], _mm_xor_si128(
				_mm_shuffle_epi8(tl, l0),
				_mm_shuffle_epi8(th, h0)));
			a1[t] = _mm_xor_si128(a1[t], _mm_xor_si128(
				_mm_shuffle_epi8(tl, l1),
				_mm_shuffle_epi8(th, h1)));
		}
	}
#pragma GCC unroll 4
	for (t = 0; t < na; t++) {
		_mm_storeu_si128((void *)(acc + t * acc_stride + x), a0[t]);
		_mm_storeu_si128((void *)(acc + t * acc_stride + x + 16),
				 a1[t]);
	}
}

void dmt_gf256_mac_ssse3(uint8_t *acc, size_t acc_stride, unsigned int roots,
			 const uint8_t *in, size_t in_stride, size_t nrows,
			 const uint8_t *tbls, size_t len)
{
	unsigned int i0;
	size_t x;

	for (x = 0; x < len; x += 32) {
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
}

/* The dispatcher's entry (lib/common/dispatch.h): coefficients prepared once
 * per encoder, then every band goes through mac. */
static void ssse3_prep(uint8_t c, void *out)
{
	dmt_gf256_nibble_tables(c, out);
}

static void ssse3_mac(uint8_t *acc, size_t acc_stride, unsigned int roots,
		     const uint8_t *in, size_t in_stride, size_t nrows,
		     const void *coefs, size_t len)
{
	dmt_gf256_mac_ssse3(acc, acc_stride, roots, in, in_stride, nrows,
			     (const uint8_t *)coefs, len);
}

const struct dmt_gf256_ops dmt_gf256_ops_ssse3 = {
	.prep = ssse3_prep, .mac = ssse3_mac, .coef_size = 32,
};
