// SPDX-License-Identifier: MIT
/* Portable SHA-512 block function (FIPS 180-4), reference and fallback. */
#include <stdint.h>
#include <string.h>

#include "lib/common/backends.h"
#include "lib/hash/hash_backend.h"
#include "lib/common/cpu.h"
#include "lib/hash/arch/sha2_constants.h"

const uint64_t dmt_sha512_iv[8] = {
	0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL,
	0xa54ff53a5f1d36f1ULL, 0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL,
	0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL,
};

const uint64_t dmt_sha384_iv[8] = {
	0xcbbb9d5dc1059ed8ULL, 0x629a292a367cd507ULL, 0x9159015a3070dd17ULL,
	0x152fecd8f70e5939ULL, 0x67332667ffc00b31ULL, 0x8eb44a8768581511ULL,
	0xdb0c2e0d64f98fa7ULL, 0x47b5481dbefa4fa4ULL,
};

static inline uint64_t ror64(uint64_t x, unsigned int n)
{
	return (x >> n) | (x << (64 - n));
}

static inline uint64_t load_be64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static void sha512_block(uint64_t *st, const uint8_t *p)
{
	uint64_t w[80], a, b, c, d, e, f, g, h, t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = load_be64(p + 8 * i);
	for (i = 16; i < 80; i++) {
		uint64_t s0 = ror64(w[i - 15], 1) ^ ror64(w[i - 15], 8) ^
			      (w[i - 15] >> 7);
		uint64_t s1 = ror64(w[i - 2], 19) ^ ror64(w[i - 2], 61) ^
			      (w[i - 2] >> 6);

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = st[0]; b = st[1]; c = st[2]; d = st[3];
	e = st[4]; f = st[5]; g = st[6]; h = st[7];
	for (i = 0; i < 80; i++) {
		t1 = h + (ror64(e, 14) ^ ror64(e, 18) ^ ror64(e, 41)) +
		     ((e & f) ^ (~e & g)) + dmt_sha512_k[i] + w[i];
		t2 = (ror64(a, 28) ^ ror64(a, 34) ^ ror64(a, 39)) +
		     ((a & b) ^ (a & c) ^ (b & c));
		h = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	st[0] += a; st[1] += b; st[2] += c; st[3] += d;
	st[4] += e; st[5] += f; st[6] += g; st[7] += h;
}

static void sha512_portable_blocks(uint64_t *state, const uint8_t *const *data,
				   size_t nblocks)
{
	const uint8_t *p = data[0];

	while (nblocks--) {
		sha512_block(state, p);
		p += 128;
	}
}

const struct dmt_sha512_backend dmt_sha512_portable = {
	.name = "portable",
	.lanes = 1,
	.cpu_needs = 0,
	.blocks = sha512_portable_blocks,
};
