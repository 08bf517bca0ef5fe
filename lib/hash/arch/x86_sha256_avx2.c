// SPDX-License-Identifier: MIT
/*
 * SHA-256 over 8 independent messages, one per 32-bit lane of a ymm
 * register: for CPUs with AVX2 but without SHA-NI.  Each block of the 8
 * messages is transposed so that one register holds the same message word
 * of every lane.  AVX2 has no vector rotate, so each rotation is two shifts
 * and an OR.
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

#define ADD(x, y)	_mm256_add_epi32((x), (y))
#define XOR(x, y)	_mm256_xor_si256((x), (y))
#define AND(x, y)	_mm256_and_si256((x), (y))
#define OR(x, y)	_mm256_or_si256((x), (y))
#define SHR(x, n)	_mm256_srli_epi32((x), (n))
#define SHL(x, n)	_mm256_slli_epi32((x), (n))
/* XOR of three rotations, written as six shifts: no OR needed. */
#define ROR3(x, p, q, r)						\
	XOR(XOR(XOR(SHR(x, p), SHL(x, 32 - (p))),			\
		XOR(SHR(x, q), SHL(x, 32 - (q)))),			\
	    XOR(SHR(x, r), SHL(x, 32 - (r))))

#define BSIG0(a)	ROR3(a, 2, 13, 22)
#define BSIG1(e)	ROR3(e, 6, 11, 25)
#define SSIG0(w)							\
	XOR(XOR(XOR(SHR(w, 7), SHL(w, 25)), XOR(SHR(w, 18), SHL(w, 14))), \
	    SHR(w, 3))
#define SSIG1(w)							\
	XOR(XOR(XOR(SHR(w, 17), SHL(w, 15)), XOR(SHR(w, 19), SHL(w, 13))), \
	    SHR(w, 10))
#define CH(e, f, g)	XOR(AND(XOR(f, g), e), g)
#define MAJ(a, b, c)	OR(AND(OR(a, b), c), AND(a, b))

/*
 * Round t; W[t & 15] already holds this round's message word.  h + W + K
 * and Ch are summed before Sigma1 joins, which shortens the e -> e chain.
 */
#define RND(a, b, c, d, e, f, g, h, t)					\
	do {								\
		__m256i t0_ = ADD(ADD(h, w[(t) & 15]),			\
				  _mm256_set1_epi32((int)dmt_sha256_k[t]));	\
		__m256i s1_ = BSIG1(e);					\
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

/* In-place 8x8 transpose of 32-bit words: r[i][j] <-> r[j][i]. */
static inline __attribute__((always_inline)) void transpose8(__m256i *r)
{
	__m256i t[8], u[8];
	int i, c;

	for (i = 0; i < 8; i += 2) {
		t[i] = _mm256_unpacklo_epi32(r[i], r[i + 1]);
		t[i + 1] = _mm256_unpackhi_epi32(r[i], r[i + 1]);
	}
	for (i = 0; i < 8; i += 4) {
		u[i] = _mm256_unpacklo_epi64(t[i], t[i + 2]);
		u[i + 1] = _mm256_unpackhi_epi64(t[i], t[i + 2]);
		u[i + 2] = _mm256_unpacklo_epi64(t[i + 1], t[i + 3]);
		u[i + 3] = _mm256_unpackhi_epi64(t[i + 1], t[i + 3]);
	}
	/* u[4k + c] 128-bit lane j = word 4j + c of rows 4k..4k+3. */
	for (c = 0; c < 4; c++) {
		r[c] = _mm256_permute2x128_si256(u[c], u[4 + c], 0x20);
		r[4 + c] = _mm256_permute2x128_si256(u[c], u[4 + c], 0x31);
	}
}

static inline __attribute__((always_inline)) void
load_transpose(__m256i *w, const uint8_t *const *data, size_t off)
{
	const __m256i bswap = _mm256_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4,
					       11, 10, 9, 8, 15, 14, 13, 12,
					       3, 2, 1, 0, 7, 6, 5, 4,
					       11, 10, 9, 8, 15, 14, 13, 12);
	int i;

	for (i = 0; i < LANES; i++) {
		const uint8_t *p = data[i] + off;

		w[i] = _mm256_shuffle_epi8(
			_mm256_loadu_si256((const __m256i *)p), bswap);
		w[8 + i] = _mm256_shuffle_epi8(
			_mm256_loadu_si256((const __m256i *)(p + 32)), bswap);
	}
	transpose8(w);
	transpose8(w + 8);
}

static void sha256_avx2_8x(uint32_t *state, const uint8_t *const *data,
			   size_t nblocks)
{
	__m256i a, b, c, d, e, f, g, h, w[16], s[8];
	size_t off;
	int i;

	/* 8 lanes x 8 words: the lane-major state is itself an 8x8 matrix. */
	for (i = 0; i < 8; i++)
		s[i] = _mm256_loadu_si256((const __m256i *)(state + 8 * i));
	transpose8(s);
	a = s[0];
	b = s[1];
	c = s[2];
	d = s[3];
	e = s[4];
	f = s[5];
	g = s[6];
	h = s[7];

	for (off = 0; off < nblocks * 64; off += 64) {
		const __m256i sa = a, sb = b, sc = c, sd = d;
		const __m256i se = e, sf = f, sg = g, sh = h;

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

	s[0] = a;
	s[1] = b;
	s[2] = c;
	s[3] = d;
	s[4] = e;
	s[5] = f;
	s[6] = g;
	s[7] = h;
	transpose8(s);
	for (i = 0; i < 8; i++)
		_mm256_storeu_si256((__m256i *)(state + 8 * i), s[i]);
	_mm256_zeroupper();
}

const struct dmt_sha256_backend dmt_sha256_avx2 = {
	.name = "avx2",
	.lanes = LANES,
	.cpu_needs = DMT_CPU_X86_AVX2,
	.blocks = sha256_avx2_8x,
};

#endif /* __x86_64__ */
