// SPDX-License-Identifier: MIT
/*
 * AEGIS-128 (Wu and Preneel, CAESAR final portfolio, v1.1), as the
 * kernel's "aegis128" AEAD: 128-bit key, 128-bit nonce, five 16-byte state
 * words, one AES round per update.  Written from the specification:
 *	Update(S, m): S0' = R(S4, S0 ^ m), S1' = R(S0, S1), S2' = R(S1, S2),
 *	              S3' = R(S2, S3), S4' = R(S3, S4)
 *	R(a, k) = MixColumns(ShiftRows(SubBytes(a))) ^ k  (one AES round)
 *	Init: S = {K^N, c1, c0, K^c0, K^c1}, ten updates with K, K^N, K...
 *	AD and message in 16-byte blocks (zero-padded); C = P ^ S1 ^ S4 ^
 *	(S2 & S3), then Update(P)
 *	Final: t = S3 ^ (le64(adlen bits) || le64(msglen bits)), seven
 *	Update(t), tag = S0 ^ S1 ^ S2 ^ S3 ^ S4
 * The round is AES-NI's aesenc where the CPU has it, a table otherwise.
 */
#include <dmt/crypt_auth.h>

#include "lib/crypt/crypt_auth_priv.h"

#include <errno.h>
#include <string.h>

#include <openssl/crypto.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

static const uint8_t const0[16] = { 0x00, 0x01, 0x01, 0x02, 0x03, 0x05,
				    0x08, 0x0d, 0x15, 0x22, 0x37, 0x59,
				    0x90, 0xe9, 0x79, 0x62 };
static const uint8_t const1[16] = { 0xdb, 0x3d, 0x18, 0x55, 0x6d, 0xc2,
				    0x2f, 0xf1, 0x20, 0x11, 0x31, 0x42,
				    0x73, 0xb5, 0x28, 0xdd };

static const uint8_t sbox[256] = {
	0x63, 0x7c, 0x77, 0x7b, 0xf2, 0x6b, 0x6f, 0xc5, 0x30, 0x01, 0x67, 0x2b,
	0xfe, 0xd7, 0xab, 0x76, 0xca, 0x82, 0xc9, 0x7d, 0xfa, 0x59, 0x47, 0xf0,
	0xad, 0xd4, 0xa2, 0xaf, 0x9c, 0xa4, 0x72, 0xc0, 0xb7, 0xfd, 0x93, 0x26,
	0x36, 0x3f, 0xf7, 0xcc, 0x34, 0xa5, 0xe5, 0xf1, 0x71, 0xd8, 0x31, 0x15,
	0x04, 0xc7, 0x23, 0xc3, 0x18, 0x96, 0x05, 0x9a, 0x07, 0x12, 0x80, 0xe2,
	0xeb, 0x27, 0xb2, 0x75, 0x09, 0x83, 0x2c, 0x1a, 0x1b, 0x6e, 0x5a, 0xa0,
	0x52, 0x3b, 0xd6, 0xb3, 0x29, 0xe3, 0x2f, 0x84, 0x53, 0xd1, 0x00, 0xed,
	0x20, 0xfc, 0xb1, 0x5b, 0x6a, 0xcb, 0xbe, 0x39, 0x4a, 0x4c, 0x58, 0xcf,
	0xd0, 0xef, 0xaa, 0xfb, 0x43, 0x4d, 0x33, 0x85, 0x45, 0xf9, 0x02, 0x7f,
	0x50, 0x3c, 0x9f, 0xa8, 0x51, 0xa3, 0x40, 0x8f, 0x92, 0x9d, 0x38, 0xf5,
	0xbc, 0xb6, 0xda, 0x21, 0x10, 0xff, 0xf3, 0xd2, 0xcd, 0x0c, 0x13, 0xec,
	0x5f, 0x97, 0x44, 0x17, 0xc4, 0xa7, 0x7e, 0x3d, 0x64, 0x5d, 0x19, 0x73,
	0x60, 0x81, 0x4f, 0xdc, 0x22, 0x2a, 0x90, 0x88, 0x46, 0xee, 0xb8, 0x14,
	0xde, 0x5e, 0x0b, 0xdb, 0xe0, 0x32, 0x3a, 0x0a, 0x49, 0x06, 0x24, 0x5c,
	0xc2, 0xd3, 0xac, 0x62, 0x91, 0x95, 0xe4, 0x79, 0xe7, 0xc8, 0x37, 0x6d,
	0x8d, 0xd5, 0x4e, 0xa9, 0x6c, 0x56, 0xf4, 0xea, 0x65, 0x7a, 0xae, 0x08,
	0xba, 0x78, 0x25, 0x2e, 0x1c, 0xa6, 0xb4, 0xc6, 0xe8, 0xdd, 0x74, 0x1f,
	0x4b, 0xbd, 0x8b, 0x8a, 0x70, 0x3e, 0xb5, 0x66, 0x48, 0x03, 0xf6, 0x0e,
	0x61, 0x35, 0x57, 0xb9, 0x86, 0xc1, 0x1d, 0x9e, 0xe1, 0xf8, 0x98, 0x11,
	0x69, 0xd9, 0x8e, 0x94, 0x9b, 0x1e, 0x87, 0xe9, 0xce, 0x55, 0x28, 0xdf,
	0x8c, 0xa1, 0x89, 0x0d, 0xbf, 0xe6, 0x42, 0x68, 0x41, 0x99, 0x2d, 0x0f,
	0xb0, 0x54, 0xbb, 0x16,
};

struct blk {
	uint8_t b[16];
};

static uint8_t xtime(uint8_t x)
{
	return (uint8_t)((x << 1) ^ ((x >> 7) * 0x1b));
}

/* One AES encryption round of a with round key k (the state is column
 * major: byte 4c + r is row r of column c). */
static void round_portable(struct blk *out, const struct blk *a,
			   const struct blk *k)
{
	uint8_t t[16];

	for (int c = 0; c < 4; c++)
		for (int r = 0; r < 4; r++)
			t[4 * c + r] = sbox[a->b[4 * ((c + r) & 3) + r]];
	for (int c = 0; c < 4; c++) {
		uint8_t *col = t + 4 * c;
		uint8_t all = col[0] ^ col[1] ^ col[2] ^ col[3];
		uint8_t c0 = col[0];

		for (int r = 0; r < 4; r++) {
			uint8_t next = r == 3 ? c0 : col[r + 1];

			out->b[4 * c + r] = (uint8_t)(col[r] ^ all ^
						      xtime(col[r] ^ next) ^
						      k->b[4 * c + r]);
		}
	}
}

static void blk_xor(struct blk *o, const struct blk *a, const struct blk *b)
{
	for (int i = 0; i < 16; i++)
		o->b[i] = a->b[i] ^ b->b[i];
}

static void update_portable(struct blk s[5], const struct blk *m)
{
	struct blk n[5], t;

	blk_xor(&t, &s[0], m);
	round_portable(&n[0], &s[4], &t);
	for (int i = 1; i < 5; i++)
		round_portable(&n[i], &s[i - 1], &s[i]);
	memcpy(s, n, sizeof(n));
}

struct aegis {
	struct blk s[5];
};

#if defined(__x86_64__)
__attribute__((target("aes,sse2"))) static void
update_aesni(struct blk s[5], const struct blk *m)
{
	__m128i s0 = _mm_loadu_si128((const __m128i *)s[0].b);
	__m128i s1 = _mm_loadu_si128((const __m128i *)s[1].b);
	__m128i s2 = _mm_loadu_si128((const __m128i *)s[2].b);
	__m128i s3 = _mm_loadu_si128((const __m128i *)s[3].b);
	__m128i s4 = _mm_loadu_si128((const __m128i *)s[4].b);
	__m128i mm = _mm_loadu_si128((const __m128i *)m->b);

	_mm_storeu_si128((__m128i *)s[0].b,
			 _mm_aesenc_si128(s4, _mm_xor_si128(s0, mm)));
	_mm_storeu_si128((__m128i *)s[1].b, _mm_aesenc_si128(s0, s1));
	_mm_storeu_si128((__m128i *)s[2].b, _mm_aesenc_si128(s1, s2));
	_mm_storeu_si128((__m128i *)s[3].b, _mm_aesenc_si128(s2, s3));
	_mm_storeu_si128((__m128i *)s[4].b, _mm_aesenc_si128(s3, s4));
}

static int have_aesni(void)
{
	static int cached = -1;

	if (cached < 0)
		cached = __builtin_cpu_supports("aes") ? 1 : 0;
	return cached;
}
#endif

static void update(struct aegis *st, const struct blk *m)
{
#if defined(__x86_64__)
	if (have_aesni()) {
		update_aesni(st->s, m);
		return;
	}
#endif
	update_portable(st->s, m);
}

static void init(struct aegis *st, const uint8_t key[16],
		 const uint8_t iv[16])
{
	struct blk k, kn;

	memcpy(k.b, key, 16);
	for (int i = 0; i < 16; i++)
		kn.b[i] = key[i] ^ iv[i];
	st->s[0] = kn;
	memcpy(st->s[1].b, const1, 16);
	memcpy(st->s[2].b, const0, 16);
	for (int i = 0; i < 16; i++) {
		st->s[3].b[i] = key[i] ^ const0[i];
		st->s[4].b[i] = key[i] ^ const1[i];
	}
	for (int i = 0; i < 5; i++) {
		update(st, &k);
		update(st, &kn);
	}
}

static void absorb_ad(struct aegis *st, const uint8_t *ad, size_t len)
{
	struct blk m;

	for (; len >= 16; len -= 16, ad += 16) {
		memcpy(m.b, ad, 16);
		update(st, &m);
	}
	if (len) {
		memset(m.b, 0, 16);
		memcpy(m.b, ad, len);
		update(st, &m);
	}
}

static void keystream(const struct aegis *st, struct blk *z)
{
	for (int i = 0; i < 16; i++)
		z->b[i] = st->s[1].b[i] ^ st->s[4].b[i] ^
			  (st->s[2].b[i] & st->s[3].b[i]);
}

/* One (possibly partial) block: len 1..16. */
static void crypt_block(struct aegis *st, const uint8_t *in, uint8_t *out,
			size_t len, bool enc)
{
	struct blk z, p;

	keystream(st, &z);
	memset(p.b, 0, 16);
	for (size_t i = 0; i < len; i++) {
		uint8_t x = in[i] ^ z.b[i];

		p.b[i] = enc ? in[i] : x;
		out[i] = x;
	}
	update(st, &p);
}

static void finish(struct aegis *st, size_t ad_len, size_t len,
		   uint8_t tag[16])
{
	struct blk t;
	uint64_t bits[2] = { (uint64_t)ad_len * 8, (uint64_t)len * 8 };

	for (int i = 0; i < 16; i++)
		t.b[i] = (uint8_t)(bits[i / 8] >> (8 * (i % 8)));
	for (int i = 0; i < 16; i++)
		t.b[i] ^= st->s[3].b[i];
	for (int i = 0; i < 7; i++)
		update(st, &t);
	for (int i = 0; i < 16; i++)
		tag[i] = st->s[0].b[i] ^ st->s[1].b[i] ^ st->s[2].b[i] ^
			 st->s[3].b[i] ^ st->s[4].b[i];
}

static void run(const uint8_t key[16], const uint8_t iv[16],
		const uint8_t *ad, size_t ad_len, const uint8_t *in,
		uint8_t *out, size_t len, uint8_t tag[16], bool enc)
{
	struct aegis st;

	init(&st, key, iv);
	absorb_ad(&st, ad, ad_len);
	for (size_t off = 0; off < len; off += 16)
		crypt_block(&st, in + off, out + off,
			    len - off < 16 ? len - off : 16, enc);
	finish(&st, ad_len, len, tag);
	OPENSSL_cleanse(&st, sizeof(st));
}

void dmt_aegis128_encrypt(const uint8_t key[16], const uint8_t iv[16],
			  const uint8_t *ad, size_t ad_len, const uint8_t *in,
			  uint8_t *out, size_t len, uint8_t tag[16])
{
	run(key, iv, ad, ad_len, in, out, len, tag, true);
}

int dmt_aegis128_decrypt(const uint8_t key[16], const uint8_t iv[16],
			 const uint8_t *ad, size_t ad_len, const uint8_t *in,
			 uint8_t *out, size_t len, const uint8_t *tag,
			 size_t tag_len)
{
	uint8_t t[16];
	int ret;

	if (!tag_len || tag_len > 16)
		return -EINVAL;
	run(key, iv, ad, ad_len, in, out, len, t, false);
	ret = CRYPTO_memcmp(t, tag, tag_len) ? -EBADMSG : 0;
	OPENSSL_cleanse(t, sizeof(t));
	return ret;
}
