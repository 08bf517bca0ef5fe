// SPDX-License-Identifier: MIT
/*
 * SHA-512 over 4 independent messages, one per 64-bit lane of a ymm
 * register, for CPUs with AVX2 but no AVX-512 (and no SHA-512
 * instructions).  Blocks are transposed so that one register holds the
 * same message word of every lane, as in x86_sha512_avx512.c.  AVX2 has
 * no 64-bit rotate and no ternary logic, so rotations are two shifts and
 * an OR folded into the XOR chains (shifts compose: the three right
 * shifts of a Sigma share one XOR tree, the three left shifts another),
 * and the byte-multiple rotate of sigma0 is one VPSHUFB.
 *
 * The whole message schedule of a block (W + K, 80 vectors) is computed
 * first into a stack array, so the rounds need only the eight working
 * variables in registers.
 *
 * Ends with vzeroupper (SHA-NI code runs in legacy SSE encoding and is slow
 * with a dirty upper state).
 */
#if defined(__x86_64__)

#include <immintrin.h>

#include "lib/common/cpu.h"
#include "lib/common/backends.h"
#include "lib/hash/arch/sha2_constants.h"

#define LANES 4

#define ADD(x, y)	_mm256_add_epi64((x), (y))
#define XOR(x, y)	_mm256_xor_si256((x), (y))
#define AND(x, y)	_mm256_and_si256((x), (y))
#define OR(x, y)	_mm256_or_si256((x), (y))
#define SHR(x, n)	_mm256_srli_epi64((x), (n))
#define SHL(x, n)	_mm256_slli_epi64((x), (n))

/* ror(x, a) ^ ror(x, b) ^ ror(x, c) */
#define ROR3(x, a, b, c)						\
	XOR(XOR(XOR(SHR(x, a), SHR(x, b)), SHR(x, c)),			\
	    XOR(XOR(SHL(x, 64 - (a)), SHL(x, 64 - (b))), SHL(x, 64 - (c))))

#define BSIG0(a)	ROR3(a, 28, 34, 39)
#define BSIG1(e)	ROR3(e, 14, 18, 41)

static inline __attribute__((always_inline)) __m256i ssig0(__m256i w,
							  __m256i ror8)
{
	/* ror 1 ^ ror 8 ^ shr 7 */
	return XOR(XOR(OR(SHR(w, 1), SHL(w, 63)), _mm256_shuffle_epi8(w, ror8)),
		   SHR(w, 7));
}

static inline __attribute__((always_inline)) __m256i ssig1(__m256i w)
{
	/* ror 19 ^ ror 61 ^ shr 6 */
	return XOR(XOR(XOR(SHR(w, 19), SHR(w, 61)), SHR(w, 6)),
		   XOR(SHL(w, 45), SHL(w, 3)));
}

/*
 * Round t: wk[t] = W + K.  Ch = ((f ^ g) & e) ^ g; Maj = ((a ^ b) & (b ^ c))
 * ^ b, where b ^ c is the previous round's a ^ b (carried in abx).
 */
#define RND(a, b, c, d, e, f, g, h, t)					\
	do {								\
		__m256i t1_ = ADD(ADD(h, WK(t)),			\
				  XOR(AND(XOR(f, g), e), g));		\
		__m256i ab_ = XOR(a, b);				\
		t1_ = ADD(t1_, BSIG1(e));				\
		h = ADD(BSIG0(a), XOR(AND(ab_, bc), b));		\
		bc = ab_;						\
		d = ADD(d, t1_);					\
		h = ADD(h, t1_);					\
	} while (0)

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

#define SCHED(t)							\
	(w[(t) & 15] = ADD(ADD(w[(t) & 15], ssig0(w[((t) + 1) & 15], ror8)), \
			   ADD(w[((t) + 9) & 15], ssig1(w[((t) + 14) & 15]))))

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

#define WK(t) ADD(w[(t) & 15], _mm256_set1_epi64x((long long)dmt_sha512_k[t]))

/* 4x4 transpose of 64-bit words: out[j] = word j of rows r[0..3]. */
static inline __attribute__((always_inline)) void
transpose4(__m256i *out, __m256i r0, __m256i r1, __m256i r2, __m256i r3)
{
	__m256i t0 = _mm256_unpacklo_epi64(r0, r1);	/* r0.0 r1.0 r0.2 r1.2 */
	__m256i t1 = _mm256_unpackhi_epi64(r0, r1);	/* r0.1 r1.1 r0.3 r1.3 */
	__m256i t2 = _mm256_unpacklo_epi64(r2, r3);
	__m256i t3 = _mm256_unpackhi_epi64(r2, r3);

	out[0] = _mm256_permute2x128_si256(t0, t2, 0x20);
	out[1] = _mm256_permute2x128_si256(t1, t3, 0x20);
	out[2] = _mm256_permute2x128_si256(t0, t2, 0x31);
	out[3] = _mm256_permute2x128_si256(t1, t3, 0x31);
}

/* The 16 message words of one block of every lane, byte-swapped. */
static inline __attribute__((always_inline)) void
load_block(__m256i *w, const uint8_t *const *data, size_t off)
{
	const __m256i bswap = _mm256_set_epi64x(
		0x08090a0b0c0d0e0fLL, 0x0001020304050607LL,
		0x08090a0b0c0d0e0fLL, 0x0001020304050607LL);
	__m256i r[LANES];
	int q, l;

	for (q = 0; q < 4; q++) {
		for (l = 0; l < LANES; l++)
			r[l] = _mm256_shuffle_epi8(_mm256_loadu_si256(
				(const void *)(data[l] + off + 32 * q)), bswap);
		transpose4(w + 4 * q, r[0], r[1], r[2], r[3]);
	}
}

static void sha512_avx2_4x(uint64_t *state, const uint8_t *const *data,
			   size_t nblocks)
{
	/* byte rotate right by 8 bits within each 64-bit word */
	const __m256i ror8 = _mm256_set_epi64x(
		0x080f0e0d0c0b0a09LL, 0x0007060504030201LL,
		0x080f0e0d0c0b0a09LL, 0x0007060504030201LL);
	__m256i a, b, c, d, e, f, g, h, bc, s[8], w[16];
	size_t off;
	int t;

	/* lane-major state: words 0-3 and 4-7 of each lane, transposed */
	for (t = 0; t < 8; t++)
		w[t] = _mm256_loadu_si256((const void *)(state + 4 * t));
	transpose4(s, w[0], w[2], w[4], w[6]);
	transpose4(s + 4, w[1], w[3], w[5], w[7]);
	a = s[0];
	b = s[1];
	c = s[2];
	d = s[3];
	e = s[4];
	f = s[5];
	g = s[6];
	h = s[7];

	for (off = 0; off < nblocks * 128; off += 128) {
		const __m256i sa = a, sb = b, sc = c, sd = d;
		const __m256i se = e, sf = f, sg = g, sh = h;

		load_block(w, data, off);
		bc = XOR(b, c);
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

	/* back to lane-major: lane l = words 0-3, then 4-7 */
	transpose4(s, a, b, c, d);
	transpose4(s + 4, e, f, g, h);
	for (t = 0; t < LANES; t++) {
		_mm256_storeu_si256((void *)(state + 8 * t), s[t]);
		_mm256_storeu_si256((void *)(state + 8 * t + 4), s[4 + t]);
	}
	_mm256_zeroupper();
}

const struct dmt_sha512_backend dmt_sha512_avx2 = {
	.name = "avx2",
	.lanes = LANES,
	.cpu_needs = DMT_CPU_X86_AVX2,
	.blocks = sha512_avx2_4x,
};

#endif /* __x86_64__ */
