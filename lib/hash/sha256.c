// SPDX-License-Identifier: MIT
/*
 * Portable SHA-256 block function (FIPS 180-4): the reference backend every
 * SIMD backend is tested against, and the fallback on any CPU.
 */
#include <stdint.h>
#include <string.h>

#include "lib/common/backends.h"
#include "lib/hash/hash_backend.h"
#include "lib/common/cpu.h"
#include "lib/hash/arch/sha2_constants.h"

const uint32_t dmt_sha256_iv[8] = {
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

const uint32_t dmt_sha224_iv[8] = {
	0xc1059ed8, 0x367cd507, 0x3070dd17, 0xf70e5939,
	0xffc00b31, 0x68581511, 0x64f98fa7, 0xbefa4fa4,
};

static inline uint32_t ror32(uint32_t x, unsigned int n)
{
	return (x >> n) | (x << (32 - n));
}

static inline uint32_t load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void sha256_block(uint32_t *st, const uint8_t *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, h, t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = load_be32(p + 4 * i);
	for (i = 16; i < 64; i++) {
		uint32_t s0 = ror32(w[i - 15], 7) ^ ror32(w[i - 15], 18) ^
			      (w[i - 15] >> 3);
		uint32_t s1 = ror32(w[i - 2], 17) ^ ror32(w[i - 2], 19) ^
			      (w[i - 2] >> 10);

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = st[0]; b = st[1]; c = st[2]; d = st[3];
	e = st[4]; f = st[5]; g = st[6]; h = st[7];
	for (i = 0; i < 64; i++) {
		t1 = h + (ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25)) +
		     ((e & f) ^ (~e & g)) + dmt_sha256_k[i] + w[i];
		t2 = (ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22)) +
		     ((a & b) ^ (a & c) ^ (b & c));
		h = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	st[0] += a; st[1] += b; st[2] += c; st[3] += d;
	st[4] += e; st[5] += f; st[6] += g; st[7] += h;
}

static void sha256_portable_blocks(uint32_t *state, const uint8_t *const *data,
				   size_t nblocks)
{
	const uint8_t *p = data[0];

	while (nblocks--) {
		sha256_block(state, p);
		p += 64;
	}
}

const struct dmt_sha256_backend dmt_sha256_portable = {
	.name = "portable",
	.lanes = 1,
	.cpu_needs = 0,
	.blocks = sha256_portable_blocks,
};
