// SPDX-License-Identifier: MIT
/*
 * CRC32C (Castagnoli) with the SSE4.2 crc32 instruction.  The instruction
 * has a latency of about three cycles but issues every cycle, so large
 * buffers are cut into three equal streams hashed side by side; the three
 * partial CRCs are then joined with one carry-less multiply each (shifting
 * a CRC over L zero bytes is a multiplication by x^(8L) mod P).
 *
 * Raw reflected register in and out: no pre/post inversion here.
 */
#if defined(__x86_64__)

#include <string.h>
#include <immintrin.h>

#include "lib/common/backends.h"

/* Each of the three streams is 32 * n bytes, n = 1..CRC_MAXN. */
#define CRC_STEP 32
#define CRC_MAXN 128

/*
 * For stream length L = 32 * (i + 1): { x^(16L - 33), x^(8L - 33) } mod P,
 * bit-reflected.  clmul(crc, x^(k - 33)) followed by a crc32 of the 64-bit
 * product with a zero register yields crc * x^k mod P (the product is
 * implicitly multiplied by x^33: x^32 by the instruction, x by the
 * reflected clmul).
 */
static const uint32_t crc_shift[CRC_MAXN][2] = {
	{ 0x9e4addf8, 0xba4fc28e }, { 0x0d3b6092, 0x9e4addf8 },
	{ 0xab7aff2a, 0x0715ce53 }, { 0xb9e02b86, 0x0d3b6092 },
	{ 0xbac2fd7b, 0x878a92a7 }, { 0xd270f1a2, 0xab7aff2a },
	{ 0x1b03397f, 0x83348832 }, { 0xdd7e3b0c, 0xb9e02b86 },
	{ 0x271d9844, 0xb6dd949b }, { 0x6b749fb2, 0xbac2fd7b },
	{ 0xe6fc4e6a, 0xce7f39f4 }, { 0xd7a4825c, 0xd270f1a2 },
	{ 0x26f6a60a, 0x2b3cac5d }, { 0x68bce87a, 0x1b03397f },
	{ 0x3771e98f, 0xb3e32c28 }, { 0x170076fa, 0xdd7e3b0c },
	{ 0xff0dba97, 0x10746f3c }, { 0x86d8e4d2, 0x271d9844 },
	{ 0xb3af077a, 0x93a5f730 }, { 0xdd66cbbb, 0x6b749fb2 },
	{ 0xc9c8b782, 0xcec3662e }, { 0xd813b325, 0xe6fc4e6a },
	{ 0x6d9a4957, 0xb0cd4768 }, { 0x9ef68d35, 0xd7a4825c },
	{ 0x2664fd8b, 0x0167d312 }, { 0x363bd6b3, 0x26f6a60a },
	{ 0x00bcf5f6, 0x98d8d9cb }, { 0xaa7c7ad5, 0x68bce87a },
	{ 0x6d390dec, 0x6956fc3b }, { 0xf48642e9, 0x3771e98f },
	{ 0x9a5ede41, 0x2178513a }, { 0xa51b6135, 0x170076fa },
	{ 0x021ac5ef, 0x6f345e45 }, { 0xcbbe4ee1, 0xff0dba97 },
	{ 0xdefba41c, 0xf872e54c }, { 0xbedc6ba1, 0x86d8e4d2 },
	{ 0xb1630f04, 0x5bb8f1bc }, { 0x63d097e9, 0xb3af077a },
	{ 0x4be7fd90, 0xca6ef3ac }, { 0x22c3799f, 0xdd66cbbb },
	{ 0x50bfaade, 0xe9e28eb4 }, { 0x889774e1, 0xc9c8b782 },
	{ 0x33bc58b3, 0x93e106a4 }, { 0x8515c07f, 0xd813b325 },
	{ 0x465a4eee, 0x2342001e }, { 0xc00df280, 0x6d9a4957 },
	{ 0xd6748e82, 0xd2c3ed1a }, { 0x359674f7, 0x9ef68d35 },
	{ 0x86d42d06, 0xf2271e60 }, { 0xf8448640, 0x2664fd8b },
	{ 0x95ffd7dc, 0x02ee03b2 }, { 0x5f0e0438, 0x363bd6b3 },
	{ 0x50c2cb16, 0x5fabe670 }, { 0x7f47463d, 0x00bcf5f6 },
	{ 0x4ac726eb, 0x17f27698 }, { 0x96a1f19b, 0xaa7c7ad5 },
	{ 0x4ce8bfe5, 0xded288f8 }, { 0xb58ac6fe, 0x6d390dec },
	{ 0xd6b1825a, 0x6353c1cc }, { 0x23d5e7e5, 0xf48642e9 },
	{ 0xf370b37f, 0xdd35bc8d }, { 0xc776b648, 0x9a5ede41 },
	{ 0x24e6fe8f, 0x45cddf4e }, { 0x82f89c77, 0xa51b6135 },
	{ 0xc4cedd32, 0x80f2886b }, { 0x195bc82d, 0x021ac5ef },
	{ 0xa2edbd17, 0x75451b04 }, { 0xcfeff4b3, 0xcbbe4ee1 },
	{ 0x4a9d4498, 0xe0cdcf86 }, { 0x4de20a7c, 0xdefba41c },
	{ 0x7956e76a, 0xddaf5114 }, { 0x005bb964, 0xbedc6ba1 },
	{ 0x99e44d01, 0x3ae30875 }, { 0x3888ed03, 0xb1630f04 },
	{ 0xf6e6d69e, 0xd6c3a807 }, { 0x1ad321bc, 0x63d097e9 },
	{ 0xe1a468d0, 0x94eb256e }, { 0x87d07ae0, 0x4be7fd90 },
	{ 0x5cc19671, 0x80ba859a }, { 0xca110698, 0x22c3799f },
	{ 0x480e7e4d, 0xb3a6da94 }, { 0xa00bae3d, 0x50bfaade },
	{ 0xa160e585, 0x7d14748f }, { 0x0e0126b2, 0x889774e1 },
	{ 0xfa0f2bd0, 0x5aa1f3cf }, { 0xb0a3f16d, 0x33bc58b3 },
	{ 0xf5c40599, 0xbd0bb25f }, { 0xe3e0d8bf, 0x8515c07f },
	{ 0x8209b906, 0xd8440525 }, { 0x6bce9345, 0x465a4eee },
	{ 0x826401ea, 0x077d54e0 }, { 0x66c774dd, 0xc00df280 },
	{ 0xb4b09dc1, 0xa52f58ec }, { 0x605e8045, 0xd6748e82 },
	{ 0xc6e71129, 0x51aeef66 }, { 0xb9d68d49, 0x359674f7 },
	{ 0x5347cf9b, 0x1baaa809 }, { 0xafc06654, 0x86d42d06 },
	{ 0x1136e0c6, 0x1c2cce0a }, { 0xdbf6533d, 0xf8448640 },
	{ 0x711299ce, 0xe81cf154 }, { 0xfab852fc, 0x95ffd7dc },
	{ 0xf903302c, 0x84ee89ac }, { 0x51c0477e, 0x5f0e0438 },
	{ 0xfc160434, 0xaeb3e622 }, { 0x080a2325, 0x50c2cb16 },
	{ 0x7d1ddda1, 0x1a6889b8 }, { 0x60867a83, 0x7f47463d },
	{ 0xbd3dd9fb, 0x828d550b }, { 0xfa96021e, 0x4ac726eb },
	{ 0x35809c2d, 0x5e9f28eb }, { 0xa9232e2b, 0x96a1f19b },
	{ 0xadaab557, 0xb0ed8196 }, { 0xa0bd36d3, 0x4ce8bfe5 },
	{ 0x6dad97a6, 0xd1a9427c }, { 0x11e2d681, 0xb58ac6fe },
	{ 0xef93fc47, 0xf22fd3e2 }, { 0xb95f1760, 0xd6b1825a },
	{ 0x6f157c58, 0x6664d9c1 }, { 0xf7ac8f1f, 0x23d5e7e5 },
	{ 0x7e7697a7, 0x1495d20d }, { 0x67eeb525, 0xf370b37f },
	{ 0x6a987040, 0xe9415bce }, { 0xf11494b6, 0xc776b648 },
	{ 0xe12e0a15, 0xcecfcd43 }, { 0xd33a036c, 0x24e6fe8f },
	{ 0x844b5904, 0x45aa5d4a }, { 0x54a86326, 0x82f89c77 },
};

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t crc_serial(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t c = crc;
	uint32_t v;

	for (; len >= 8; p += 8, len -= 8)
		c = _mm_crc32_u64(c, load64(p));
	crc = (uint32_t)c;
	if (len >= 4) {
		memcpy(&v, p, sizeof(v));
		crc = _mm_crc32_u32(crc, v);
		p += 4;
		len -= 4;
	}
	while (len--)
		crc = _mm_crc32_u8(crc, *p++);
	return crc;
}

uint32_t dmt_crc32c_sse42(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len >= 3 * CRC_STEP) {
		size_t n = len / (3 * CRC_STEP), l, i;
		const uint8_t *pb, *pc;
		uint64_t a = crc, b = 0, c = 0;
		__m128i prod, ka, kb;

		if (n > CRC_MAXN)
			n = CRC_MAXN;
		l = n * CRC_STEP;
		pb = p + l;
		pc = pb + l;
		for (i = 0; i < l; i += CRC_STEP) {
			a = _mm_crc32_u64(a, load64(p + i));
			b = _mm_crc32_u64(b, load64(pb + i));
			c = _mm_crc32_u64(c, load64(pc + i));
			a = _mm_crc32_u64(a, load64(p + i + 8));
			b = _mm_crc32_u64(b, load64(pb + i + 8));
			c = _mm_crc32_u64(c, load64(pc + i + 8));
			a = _mm_crc32_u64(a, load64(p + i + 16));
			b = _mm_crc32_u64(b, load64(pb + i + 16));
			c = _mm_crc32_u64(c, load64(pc + i + 16));
			a = _mm_crc32_u64(a, load64(p + i + 24));
			b = _mm_crc32_u64(b, load64(pb + i + 24));
			c = _mm_crc32_u64(c, load64(pc + i + 24));
		}
		/* crc = a * x^(16l) + b * x^(8l) + c (mod P) */
		ka = _mm_cvtsi32_si128((int)crc_shift[n - 1][0]);
		kb = _mm_cvtsi32_si128((int)crc_shift[n - 1][1]);
		prod = _mm_xor_si128(
			_mm_clmulepi64_si128(_mm_cvtsi32_si128((int)a), ka, 0),
			_mm_clmulepi64_si128(_mm_cvtsi32_si128((int)b), kb, 0));
		crc = (uint32_t)_mm_crc32_u64(0,
				(uint64_t)_mm_cvtsi128_si64(prod));
		crc ^= (uint32_t)c;
		p += 3 * l;
		len -= 3 * l;
	}
	return crc_serial(crc, p, len);
}

#endif /* __x86_64__ */
