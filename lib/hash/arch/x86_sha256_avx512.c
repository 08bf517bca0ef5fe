// SPDX-License-Identifier: MIT
/*
 * SHA-256 over 16 independent messages, one per 32-bit lane of a zmm
 * register.  Each block of the 16 messages is loaded as 16 rows and
 * transposed so that one register holds the same message word of every
 * lane; rounds then run as plain vector code with vprord for the rotations
 * and vpternlogd for Ch, Maj and the three-way XORs.  The message schedule
 * is kept in a 16-register ring.
 *
 * Every exit path ends with vzeroupper (SHA-NI code runs in legacy SSE
 * encoding and is very slow with a dirty upper state).
 */
#if defined(__x86_64__)

#include <immintrin.h>

#include "lib/common/cpu.h"
#include "lib/common/backends.h"
#include "lib/hash/arch/sha2_constants.h"

#define LANES 16

#define XOR3(x, y, z)	_mm512_ternarylogic_epi32((x), (y), (z), 0x96)
#define CH(e, f, g)	_mm512_ternarylogic_epi32((e), (f), (g), 0xCA)
#define MAJ(a, b, c)	_mm512_ternarylogic_epi32((a), (b), (c), 0xE8)
#define ROR(x, n)	_mm512_ror_epi32((x), (n))
#define ADD(x, y)	_mm512_add_epi32((x), (y))

#define BSIG0(a)	XOR3(ROR(a, 2), ROR(a, 13), ROR(a, 22))
#define BSIG1(e)	XOR3(ROR(e, 6), ROR(e, 11), ROR(e, 25))
#define SSIG0(w)	XOR3(ROR(w, 7), ROR(w, 18), _mm512_srli_epi32(w, 3))
#define SSIG1(w)	XOR3(ROR(w, 17), ROR(w, 19), _mm512_srli_epi32(w, 10))

/*
 * Round t; W[t & 15] already holds this round's message word.  The sums
 * are grouped so that only ror, xor3 and one add separate e from the next
 * e (h + W + K and Ch do not wait for Sigma1).
 */
#define RND(a, b, c, d, e, f, g, h, t)					\
	do {								\
		__m512i t0_ = ADD(ADD(h, w[(t) & 15]),			\
				  _mm512_set1_epi32((int)dmt_sha256_k[t]));	\
		__m512i s1_ = BSIG1(e);					\
		t0_ = ADD(t0_, CH(e, f, g));				\
		h = ADD(ADD(t0_, s1_), ADD(BSIG0(a), MAJ(a, b, c)));	\
		d = ADD(ADD(d, t0_), s1_);				\
	} while (0)

/* Message schedule step for round t >= 16, in place in the ring. */
#define SCHED(t)							\
	(w[(t) & 15] = ADD(ADD(w[(t) & 15], SSIG0(w[((t) + 1) & 15])),	\
			   ADD(w[((t) + 9) & 15], SSIG1(w[((t) + 14) & 15]))))

#define RND8(t)								\
	do {								\
		RND(a, b, c, d, e, f, g, h, (t) + 0);			\
		RND(h, a, b, c, d, e, f, g, (t) + 1);			\
		RND(g, h, a, b, c, d, e, f, (t) + 2);			\
		RND(f, g, h, a, b, c, d, e, (t) + 3);			\
		RND(e, f, g, h, a, b, c, d, (t) + 4);			\
		RND(d, e, f, g, h, a, b, c, (t) + 5);			\
		RND(c, d, e, f, g, h, a, b, (t) + 6);			\
		RND(b, c, d, e, f, g, h, a, (t) + 7);			\
	} while (0)

#define SRND8(t)							\
	do {								\
		SCHED((t) + 0); RND(a, b, c, d, e, f, g, h, (t) + 0);	\
		SCHED((t) + 1); RND(h, a, b, c, d, e, f, g, (t) + 1);	\
		SCHED((t) + 2); RND(g, h, a, b, c, d, e, f, (t) + 2);	\
		SCHED((t) + 3); RND(f, g, h, a, b, c, d, e, (t) + 3);	\
		SCHED((t) + 4); RND(e, f, g, h, a, b, c, d, (t) + 4);	\
		SCHED((t) + 5); RND(d, e, f, g, h, a, b, c, (t) + 5);	\
		SCHED((t) + 6); RND(c, d, e, f, g, h, a, b, (t) + 6);	\
		SCHED((t) + 7); RND(b, c, d, e, f, g, h, a, (t) + 7);	\
	} while (0)

/*
 * Load block `blk` of all 16 lanes, byte-swapped, and transpose so that
 * w[i] holds word i of every lane.
 */
static inline __attribute__((always_inline)) void
load_transpose(__m512i *w, const uint8_t *const *data, size_t off)
{
	const __m512i bswap = _mm512_set4_epi32(0x0c0d0e0f, 0x08090a0b,
						0x04050607, 0x00010203);
	__m512i r[16], t[16];
	int i, c;

	for (i = 0; i < 16; i++)
		r[i] = _mm512_shuffle_epi8(
			_mm512_loadu_si512((const void *)(data[i] + off)),
			bswap);
	/* 4x4 transposes of 32-bit words inside each 128-bit lane. */
	for (i = 0; i < 16; i += 2) {
		t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
		t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
	}
	for (i = 0; i < 16; i += 4) {
		r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
		r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
		r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
		r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
	}
	/* r[4k + c] lane j = word 4j + c of rows 4k..4k+3; move the lanes. */
	for (c = 0; c < 4; c++) {
		__m512i v0 = _mm512_shuffle_i32x4(r[c], r[4 + c], 0x44);
		__m512i v1 = _mm512_shuffle_i32x4(r[c], r[4 + c], 0xEE);
		__m512i v2 = _mm512_shuffle_i32x4(r[8 + c], r[12 + c], 0x44);
		__m512i v3 = _mm512_shuffle_i32x4(r[8 + c], r[12 + c], 0xEE);

		w[c] = _mm512_shuffle_i32x4(v0, v2, 0x88);
		w[4 + c] = _mm512_shuffle_i32x4(v0, v2, 0xDD);
		w[8 + c] = _mm512_shuffle_i32x4(v1, v3, 0x88);
		w[12 + c] = _mm512_shuffle_i32x4(v1, v3, 0xDD);
	}
}

/*
 * Row l = [lane l's 8 words | lane l + 8's 8 words] <-> row i = [word i of
 * lanes 0..7 | word i of lanes 8..15]: an 8x8 transpose inside each 256-bit
 * half, which is its own inverse.  Cheaper than gather/scatter, which
 * matters for the short calls (final padding blocks).
 */
static inline __attribute__((always_inline)) void transpose_state(__m512i *r)
{
	const __m512i lo = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
	const __m512i hi = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
	__m512i t[8], u[8];
	int i, c;

	for (i = 0; i < 8; i += 2) {
		t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
		t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
	}
	for (i = 0; i < 8; i += 4) {
		u[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
		u[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
		u[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
		u[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
	}
	/* u[4k + c] 128-bit lane j = word 4(j & 1) + c of 4 rows. */
	for (c = 0; c < 4; c++) {
		r[c] = _mm512_permutex2var_epi64(u[c], lo, u[4 + c]);
		r[4 + c] = _mm512_permutex2var_epi64(u[c], hi, u[4 + c]);
	}
}

static void sha256_avx512_16x(uint32_t *state, const uint8_t *const *data,
			      size_t nblocks)
{
	__m512i a, b, c, d, e, f, g, h, w[16];
	size_t off;
	int i;

	for (i = 0; i < 8; i++)
		w[i] = _mm512_inserti64x4(_mm512_castsi256_si512(
			_mm256_loadu_si256((const __m256i *)(state + 8 * i))),
			_mm256_loadu_si256((const __m256i *)(state + 64 +
							     8 * i)), 1);
	transpose_state(w);
	a = w[0];
	b = w[1];
	c = w[2];
	d = w[3];
	e = w[4];
	f = w[5];
	g = w[6];
	h = w[7];

	for (off = 0; off < nblocks * 64; off += 64) {
		const __m512i sa = a, sb = b, sc = c, sd = d;
		const __m512i se = e, sf = f, sg = g, sh = h;

		load_transpose(w, data, off);
		RND8(0);
		RND8(8);
		SRND8(16);
		SRND8(24);
		SRND8(32);
		SRND8(40);
		SRND8(48);
		SRND8(56);
		a = ADD(a, sa);
		b = ADD(b, sb);
		c = ADD(c, sc);
		d = ADD(d, sd);
		e = ADD(e, se);
		f = ADD(f, sf);
		g = ADD(g, sg);
		h = ADD(h, sh);
	}

	w[0] = a;
	w[1] = b;
	w[2] = c;
	w[3] = d;
	w[4] = e;
	w[5] = f;
	w[6] = g;
	w[7] = h;
	transpose_state(w);
	for (i = 0; i < 8; i++) {
		_mm256_storeu_si256((__m256i *)(state + 8 * i),
				    _mm512_castsi512_si256(w[i]));
		_mm256_storeu_si256((__m256i *)(state + 64 + 8 * i),
				    _mm512_extracti64x4_epi64(w[i], 1));
	}
	_mm256_zeroupper();
}

const struct dmt_sha256_backend dmt_sha256_avx512 = {
	.name = "avx512",
	.lanes = LANES,
	.cpu_needs = DMT_CPU_X86_AVX512,
	.blocks = sha256_avx512_16x,
};

#endif /* __x86_64__ */
