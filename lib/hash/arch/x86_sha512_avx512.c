// SPDX-License-Identifier: MIT
/*
 * SHA-512 over 8 independent messages, one per 64-bit lane of a zmm
 * register (this machine class has no SHA-512 instructions).  Same layout
 * as the 16-lane SHA-256: blocks are transposed so that one register holds
 * the same message word of every lane, vprorq does the rotations and
 * vpternlogq Ch, Maj and the three-way XORs.
 *
 * Ends with vzeroupper (SHA-NI code runs in legacy SSE encoding and is very
 * slow with a dirty upper state).
 */
#if defined(__x86_64__)

#include <immintrin.h>

#include "lib/common/cpu.h"
#include "lib/common/backends.h"
#include "lib/hash/arch/sha2_constants.h"

#define LANES 8

#define XOR3(x, y, z)	_mm512_ternarylogic_epi64((x), (y), (z), 0x96)
#define CH(e, f, g)	_mm512_ternarylogic_epi64((e), (f), (g), 0xCA)
#define MAJ(a, b, c)	_mm512_ternarylogic_epi64((a), (b), (c), 0xE8)
#define ROR(x, n)	_mm512_ror_epi64((x), (n))
#define ADD(x, y)	_mm512_add_epi64((x), (y))

#define BSIG0(a)	XOR3(ROR(a, 28), ROR(a, 34), ROR(a, 39))
#define BSIG1(e)	XOR3(ROR(e, 14), ROR(e, 18), ROR(e, 41))
#define SSIG0(w)	XOR3(ROR(w, 1), ROR(w, 8), _mm512_srli_epi64(w, 7))
#define SSIG1(w)	XOR3(ROR(w, 19), ROR(w, 61), _mm512_srli_epi64(w, 6))

/*
 * Round t; W[t & 15] already holds this round's message word.  h + W + K
 * and Ch are summed before Sigma1 joins, which shortens the e -> e chain.
 */
#define RND(a, b, c, d, e, f, g, h, t)					\
	do {								\
		__m512i t0_ = ADD(ADD(h, w[(t) & 15]),			\
				  _mm512_set1_epi64((long long)dmt_sha512_k[t])); \
		__m512i s1_ = BSIG1(e);					\
		t0_ = ADD(t0_, CH(e, f, g));				\
		h = ADD(ADD(t0_, s1_), ADD(BSIG0(a), MAJ(a, b, c)));	\
		d = ADD(ADD(d, t0_), s1_);				\
	} while (0)

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

/* 8x8 transpose of 64-bit words: out[j] = word j of rows r[0..7]. */
static inline __attribute__((always_inline)) void
transpose8(__m512i *out, const __m512i *r)
{
	__m512i t[8];
	int i, c;

	for (i = 0; i < 8; i += 2) {
		t[i] = _mm512_unpacklo_epi64(r[i], r[i + 1]);
		t[i + 1] = _mm512_unpackhi_epi64(r[i], r[i + 1]);
	}
	/* t[2p + c] 128-bit lane j = word 2j + c of rows 2p, 2p+1. */
	for (c = 0; c < 2; c++) {
		__m512i v0 = _mm512_shuffle_i64x2(t[c], t[2 + c], 0x44);
		__m512i v1 = _mm512_shuffle_i64x2(t[c], t[2 + c], 0xEE);
		__m512i v2 = _mm512_shuffle_i64x2(t[4 + c], t[6 + c], 0x44);
		__m512i v3 = _mm512_shuffle_i64x2(t[4 + c], t[6 + c], 0xEE);

		out[c] = _mm512_shuffle_i64x2(v0, v2, 0x88);
		out[2 + c] = _mm512_shuffle_i64x2(v0, v2, 0xDD);
		out[4 + c] = _mm512_shuffle_i64x2(v1, v3, 0x88);
		out[6 + c] = _mm512_shuffle_i64x2(v1, v3, 0xDD);
	}
}

static inline __attribute__((always_inline)) void
load_transpose(__m512i *w, const uint8_t *const *data, size_t off)
{
	const __m512i bswap = _mm512_set4_epi32(0x08090a0b, 0x0c0d0e0f,
						0x00010203, 0x04050607);
	__m512i lo[8], hi[8];
	int i;

	for (i = 0; i < LANES; i++) {
		const uint8_t *p = data[i] + off;

		lo[i] = _mm512_shuffle_epi8(
			_mm512_loadu_si512((const void *)p), bswap);
		hi[i] = _mm512_shuffle_epi8(
			_mm512_loadu_si512((const void *)(p + 64)), bswap);
	}
	transpose8(w, lo);
	transpose8(w + 8, hi);
}

static void sha512_avx512_8x(uint64_t *state, const uint8_t *const *data,
			     size_t nblocks)
{
	__m512i a, b, c, d, e, f, g, h, w[16], s[8];
	size_t off;
	int i;

	/* 8 lanes x 8 words: the lane-major state is itself an 8x8 matrix. */
	for (i = 0; i < 8; i++)
		w[i] = _mm512_loadu_si512((const void *)(state + 8 * i));
	transpose8(s, w);
	a = s[0];
	b = s[1];
	c = s[2];
	d = s[3];
	e = s[4];
	f = s[5];
	g = s[6];
	h = s[7];

	for (off = 0; off < nblocks * 128; off += 128) {
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
		SRND8(64);
		SRND8(72);
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
	transpose8(s, w);
	for (i = 0; i < 8; i++)
		_mm512_storeu_si512((void *)(state + 8 * i), s[i]);
	_mm256_zeroupper();
}

const struct dmt_sha512_backend dmt_sha512_avx512 = {
	.name = "avx512",
	.lanes = LANES,
	.cpu_needs = DMT_CPU_X86_AVX512,
	.blocks = sha512_avx512_8x,
};

#endif /* __x86_64__ */
