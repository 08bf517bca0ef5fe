// SPDX-License-Identifier: MIT
/*
 * GF(2^8) multiply-accumulate with GFNI on 512-bit vectors.  GF2P8MULB is
 * hard-wired to the AES polynomial (0x11b), so multiplication by each RS
 * coefficient in GF(2^8)/0x11d is done with GF2P8AFFINEQB and a per-
 * constant 8x8 bit matrix instead.  Accumulators stay in registers (up to
 * eight roots per pass) while all rows of a band stream through.
 *
 * The matrices come pre-broadcast (8 copies, one 64-byte vector each), not
 * as one qword per constant: clang 14's assembler encodes the displacement
 * of a {1to8} broadcast operand of VGF2P8AFFINEQB unscaled (as if the
 * element were a byte), so a folded broadcast load reads the wrong matrix.
 * Full-vector operands are encoded correctly by gcc and clang alike.
 */
#include "lib/fec/fec_gf256.h"
#include "lib/common/dispatch.h"

#include <immintrin.h>

/* na is a compile-time constant at every call site, so the loops unroll
 * into na register accumulators. */
static inline __attribute__((always_inline)) void
mac_cols(uint8_t *acc, size_t acc_stride, unsigned int roots,
	 const uint8_t *in, size_t in_stride, size_t nrows,
	 const uint64_t *mats, size_t x, const unsigned int na)
{
	__m512i a[8];
	unsigned int t;
	size_t r;

#pragma GCC unroll 8
	for (t = 0; t < na; t++)
		a[t] = _mm512_loadu_si512(acc + t * acc_stride + x);
	for (r = 0; r < nrows; r++) {
		const __m512i v = _mm512_loadu_si512(in + r * in_stride + x);
		const uint64_t *m = mats + r * roots * 8;

#pragma GCC unroll 8
		for (t = 0; t < na; t++)
			a[t] = _mm512_xor_si512(a[t],
				_mm512_gf2p8affine_epi64_epi8(v,
					_mm512_loadu_si512(m + t * 8), 0));
	}
#pragma GCC unroll 8
	for (t = 0; t < na; t++)
		_mm512_storeu_si512(acc + t * acc_stride + x, a[t]);
}

void dmt_gf256_mac_gfni(uint8_t *acc, size_t acc_stride, unsigned int roots,
			const uint8_t *in, size_t in_stride, size_t nrows,
			const uint64_t *mats, size_t len)
{
	unsigned int i0, na;
	size_t x;

	for (x = 0; x < len; x += 64) {
		for (i0 = 0; i0 < roots; i0 += 8) {
			uint8_t *a = acc + i0 * acc_stride;
			const uint64_t *m = mats + i0 * 8;

			na = roots - i0 < 8 ? roots - i0 : 8;
			switch (na) {
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
			case 4:
				mac_cols(a, acc_stride, roots, in, in_stride,
					 nrows, m, x, 4);
				break;
			case 5:
				mac_cols(a, acc_stride, roots, in, in_stride,
					 nrows, m, x, 5);
				break;
			case 6:
				mac_cols(a, acc_stride, roots, in, in_stride,
					 nrows, m, x, 6);
				break;
			case 7:
				mac_cols(a, acc_stride, roots, in, in_stride,
					 nrows, m, x, 7);
				break;
			default:
				mac_cols(a, acc_stride, roots, in, in_stride,
					 nrows, m, x, 8);
				break;
			}
		}
	}
}

/* The dispatcher's entry (lib/common/dispatch.h): coefficients prepared once
 * per encoder, then every band goes through mac. */
static void gfni_prep(uint8_t c, void *out)
{
	uint64_t m = dmt_gf256_affine_matrix(c), *o = out;
	unsigned int k;

	/* pre-broadcast: one 64-byte vector per constant (see above) */
	for (k = 0; k < 8; k++)
		o[k] = m;
}

static void gfni_mac(uint8_t *acc, size_t acc_stride, unsigned int roots,
		    const uint8_t *in, size_t in_stride, size_t nrows,
		    const void *coefs, size_t len)
{
	dmt_gf256_mac_gfni(acc, acc_stride, roots, in, in_stride, nrows,
			    (const uint64_t *)coefs, len);
}

const struct dmt_gf256_ops dmt_gf256_ops_gfni = {
	.prep = gfni_prep, .mac = gfni_mac, .coef_size = 8 * sizeof(uint64_t),
};
