// SPDX-License-Identifier: MIT
/*
 * SHA-256 block functions with the ARMv8 Crypto Extensions: one message at
 * a time, and two messages interleaved (the idea of Linux's
 * sha256_ce_finup2x).  sha256h/sha256h2 form one long dependency chain per
 * message; a second independent chain fills the crypto unit's pipeline,
 * which is worth 1.6-2x on cores that can run two SHA-256 streams.
 *
 * Built with -march=armv8-a+crypto; the dispatcher checks HWCAP_SHA2.
 */
#if defined(__aarch64__)

#include <arm_neon.h>

#include "lib/common/cpu.h"
#include "lib/common/backends.h"
#include "lib/hash/arch/sha2_constants.h"

/* Message words are big-endian. */
static inline void load_msg(uint32x4_t *m, const uint8_t *p)
{
	int i;

	for (i = 0; i < 4; i++)
		m[i] = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(p + 16 * i)));
}

/*
 * Four rounds with message group j (held in m[j & 3]), then, while groups
 * remain to be derived, replace it with group j + 4.
 */
#define ROUNDS4(m, j, abcd, efgh)					\
	do {								\
		uint32x4_t wk_ = vaddq_u32((m)[(j) & 3],		\
					   vld1q_u32(&dmt_sha256_k[4 * (j)]));	\
		uint32x4_t abcd0_ = (abcd);				\
		if ((j) < 12)						\
			(m)[(j) & 3] = vsha256su1q_u32(			\
				vsha256su0q_u32((m)[(j) & 3],		\
						(m)[((j) + 1) & 3]),	\
				(m)[((j) + 2) & 3], (m)[((j) + 3) & 3]); \
		(abcd) = vsha256hq_u32((abcd), (efgh), wk_);		\
		(efgh) = vsha256h2q_u32((efgh), abcd0_, wk_);		\
	} while (0)

static void sha256_ce_1x(uint32_t *state, const uint8_t *const *data,
			 size_t nblocks)
{
	const uint8_t *p = data[0];
	uint32x4_t abcd = vld1q_u32(state), efgh = vld1q_u32(state + 4);
	uint32x4_t m[4];

	while (nblocks--) {
		const uint32x4_t s0 = abcd, s1 = efgh;
		int j;

		load_msg(m, p);
		p += 64;
		for (j = 0; j < 16; j++)
			ROUNDS4(m, j, abcd, efgh);
		abcd = vaddq_u32(abcd, s0);
		efgh = vaddq_u32(efgh, s1);
	}
	vst1q_u32(state, abcd);
	vst1q_u32(state + 4, efgh);
}

static void sha256_ce_2x(uint32_t *state, const uint8_t *const *data,
			 size_t nblocks)
{
	const uint8_t *pa = data[0], *pb = data[1];
	uint32x4_t a0 = vld1q_u32(state), a1 = vld1q_u32(state + 4);
	uint32x4_t b0 = vld1q_u32(state + 8), b1 = vld1q_u32(state + 12);
	uint32x4_t ma[4], mb[4];

	while (nblocks--) {
		const uint32x4_t sa0 = a0, sa1 = a1, sb0 = b0, sb1 = b1;
		int j;

		load_msg(ma, pa);
		load_msg(mb, pb);
		pa += 64;
		pb += 64;
		for (j = 0; j < 16; j++) {
			ROUNDS4(ma, j, a0, a1);
			ROUNDS4(mb, j, b0, b1);
		}
		a0 = vaddq_u32(a0, sa0);
		a1 = vaddq_u32(a1, sa1);
		b0 = vaddq_u32(b0, sb0);
		b1 = vaddq_u32(b1, sb1);
	}
	vst1q_u32(state, a0);
	vst1q_u32(state + 4, a1);
	vst1q_u32(state + 8, b0);
	vst1q_u32(state + 12, b1);
}

const struct dmt_sha256_backend dmt_sha256_ce = {
	.name = "ce",
	.lanes = 1,
	.cpu_needs = DMT_CPU_ARM64_SHA2,
	.blocks = sha256_ce_1x,
};

const struct dmt_sha256_backend dmt_sha256_ce_2x = {
	.name = "ce-2x",
	.lanes = 2,
	.cpu_needs = DMT_CPU_ARM64_SHA2,
	.blocks = sha256_ce_2x,
};

#endif /* __aarch64__ */
