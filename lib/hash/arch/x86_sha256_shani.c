// SPDX-License-Identifier: MIT
/*
 * SHA-256 block functions with the x86 SHA extensions: one message at a
 * time, and two messages interleaved.  sha256rnds2 has a latency of several
 * cycles but a shorter issue interval, so two independent dependency chains
 * keep the SHA unit busier than one.
 *
 * Built with -msse4.1 -msha only: SHA-NI exists in legacy SSE encoding and
 * runs very slowly after AVX code that left the upper state dirty, so this
 * file must never get AVX flags (the AVX backends end with vzeroupper).
 */
#if defined(__x86_64__)

#include <immintrin.h>

#include "lib/common/cpu.h"
#include "lib/common/backends.h"
#include "lib/hash/arch/sha2_constants.h"

/* Byte swap of each 32-bit word: message words are big-endian. */
#define BSWAP_MASK _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL)

/*
 * The SHA instructions keep the state as ABEF / CDGH; the lane-major state
 * array is ABCD EFGH.
 */
static inline void load_state(const uint32_t *s, __m128i *abef, __m128i *cdgh)
{
	__m128i dcba = _mm_loadu_si128((const __m128i *)s);
	__m128i hgfe = _mm_loadu_si128((const __m128i *)(s + 4));
	__m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
	__m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);

	*abef = _mm_alignr_epi8(cdab, efgh, 8);
	*cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
}

static inline void store_state(uint32_t *s, __m128i abef, __m128i cdgh)
{
	__m128i feba = _mm_shuffle_epi32(abef, 0x1B);
	__m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);

	_mm_storeu_si128((__m128i *)s, _mm_blend_epi16(feba, dchg, 0xF0));
	_mm_storeu_si128((__m128i *)(s + 4), _mm_alignr_epi8(dchg, feba, 8));
}

/*
 * Message words 4j..4j+3 (j >= 4) from the previous four groups, held in a
 * ring of four registers: m[j & 3] still holds group j - 4 on entry.
 */
#define SCHED(m, j)							\
	do {								\
		__m128i t_ = _mm_alignr_epi8((m)[((j) - 1) & 3],	\
					     (m)[((j) - 2) & 3], 4);	\
		(m)[(j) & 3] = _mm_sha256msg1_epu32((m)[(j) & 3],	\
						    (m)[((j) - 3) & 3]); \
		(m)[(j) & 3] = _mm_add_epi32((m)[(j) & 3], t_);	\
		(m)[(j) & 3] = _mm_sha256msg2_epu32((m)[(j) & 3],	\
						    (m)[((j) - 1) & 3]); \
	} while (0)

/* Four rounds with message group j. */
#define ROUNDS4(m, j, s0, s1)						\
	do {								\
		__m128i w_ = _mm_add_epi32((m)[(j) & 3],		\
			_mm_load_si128((const __m128i *)&dmt_sha256_k[4 * (j)])); \
		(s1) = _mm_sha256rnds2_epu32((s1), (s0), w_);		\
		w_ = _mm_shuffle_epi32(w_, 0x0E);			\
		(s0) = _mm_sha256rnds2_epu32((s0), (s1), w_);		\
	} while (0)

static inline void load_msg(__m128i *m, const uint8_t *p)
{
	const __m128i mask = BSWAP_MASK;
	int i;

	for (i = 0; i < 4; i++)
		m[i] = _mm_shuffle_epi8(
			_mm_loadu_si128((const __m128i *)(p + 16 * i)), mask);
}

static void sha256_shani_1x(uint32_t *state, const uint8_t *const *data,
			    size_t nblocks)
{
	const uint8_t *p = data[0];
	__m128i s0, s1, m[4];

	load_state(state, &s0, &s1);
	while (nblocks--) {
		const __m128i save0 = s0, save1 = s1;
		int j;

		load_msg(m, p);
		p += 64;
#pragma GCC unroll 16
		for (j = 0; j < 16; j++) {
			if (j >= 4)
				SCHED(m, j);
			ROUNDS4(m, j, s0, s1);
		}
		s0 = _mm_add_epi32(s0, save0);
		s1 = _mm_add_epi32(s1, save1);
	}
	store_state(state, s0, s1);
}

static void sha256_shani_2x(uint32_t *state, const uint8_t *const *data,
			    size_t nblocks)
{
	const uint8_t *pa = data[0], *pb = data[1];
	__m128i a0, a1, b0, b1, ma[4], mb[4];

	load_state(state, &a0, &a1);
	load_state(state + 8, &b0, &b1);
	while (nblocks--) {
		const __m128i sa0 = a0, sa1 = a1, sb0 = b0, sb1 = b1;
		int j;

		load_msg(ma, pa);
		load_msg(mb, pb);
		pa += 64;
		pb += 64;
#pragma GCC unroll 16
		for (j = 0; j < 16; j++) {
			if (j >= 4) {
				SCHED(ma, j);
				SCHED(mb, j);
			}
			ROUNDS4(ma, j, a0, a1);
			ROUNDS4(mb, j, b0, b1);
		}
		a0 = _mm_add_epi32(a0, sa0);
		a1 = _mm_add_epi32(a1, sa1);
		b0 = _mm_add_epi32(b0, sb0);
		b1 = _mm_add_epi32(b1, sb1);
	}
	store_state(state, a0, a1);
	store_state(state + 8, b0, b1);
}

const struct dmt_sha256_backend dmt_sha256_shani = {
	.name = "shani",
	.lanes = 1,
	.cpu_needs = DMT_CPU_X86_SHANI,
	.blocks = sha256_shani_1x,
};

const struct dmt_sha256_backend dmt_sha256_shani_2x = {
	.name = "shani-2x",
	.lanes = 2,
	.cpu_needs = DMT_CPU_X86_SHANI,
	.blocks = sha256_shani_2x,
};

#endif /* __x86_64__ */
