// SPDX-License-Identifier: MIT
/*
 * AES-XTS, AES-CBC and AES-GCM with VAES/VPCLMULQDQ on 512-bit vectors.
 *
 * XTS (IEEE 1619): tweak
 * T = AES_k2(IV); block j: C = AES_k1(P ^ T_j) ^ T_j, T_{j+1} = T_j * x in
 * GF(2^128) (little-endian, reduction 0x87).  Four tweaks per vector,
 * advanced by x^4 per vector with one carry-less multiply; four vectors
 * (16 blocks) in flight to cover the AES latency.
 *
 * CBC: encryption is serial within a sector, so 16 sectors are encrypted
 * side by side (lane i of vector v is sector 4v + i); decryption is
 * parallel within a sector (P_j = D(C_j) ^ C_{j-1}), 16 blocks at once.
 *
 * GCM (authenticated dm-crypt's aes-gcm-random, one sector per call):
 * CTR 16 blocks at a time, GHASH as described at its section.
 *
 * Compiled only with
 * its own ISA flags (mk/crypt.mk); used when the CPU has them.
 */
#include <cpuid.h>
#include <immintrin.h>
#include <openssl/crypto.h>
#include <stdbool.h>
#include <string.h>

#include "lib/common/cpu.h"
#include "lib/crypt/aes_arch.h"
#include "lib/common/dispatch.h"

/* AVX-512 with OS state (and not masked off by a test) from lib/common;
 * CPUID leaf 7 ECX bits 9/10 (VAES, VPCLMULQDQ), leaf 1 ECX 25 (AES). */
bool dmt_xts_vaes_usable(void)
{
	unsigned int a, b, c, d;

	if (!(dmt_cpu_features() & DMT_CPU_X86_AVX512))
		return false;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 25)))
		return false;
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return false;
	return (c & (1u << 9)) && (c & (1u << 10));
}

/* ---- key schedule (AES-NI) ---- */

static __m128i expand_step(__m128i key, __m128i assist)
{
	key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
	key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
	key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
	return _mm_xor_si128(key, assist);
}

#define EXP128(i, rcon)                                                       \
	rk[i] = expand_step(rk[i - 1],                                        \
			    _mm_shuffle_epi32(                                \
				    _mm_aeskeygenassist_si128(rk[i - 1], rcon), \
				    0xff))

static void expand128(const uint8_t *key, __m128i rk[15])
{
	rk[0] = _mm_loadu_si128((const __m128i *)key);
	EXP128(1, 0x01);
	EXP128(2, 0x02);
	EXP128(3, 0x04);
	EXP128(4, 0x08);
	EXP128(5, 0x10);
	EXP128(6, 0x20);
	EXP128(7, 0x40);
	EXP128(8, 0x80);
	EXP128(9, 0x1b);
	EXP128(10, 0x36);
}

#define EXP256(i, rcon)                                                       \
	do {                                                                  \
		rk[i] = expand_step(                                          \
			rk[i - 2],                                            \
			_mm_shuffle_epi32(                                    \
				_mm_aeskeygenassist_si128(rk[i - 1], rcon),   \
				0xff));                                       \
		if (i + 1 < 15)                                               \
			rk[i + 1] = expand_step(                              \
				rk[i - 1],                                    \
				_mm_shuffle_epi32(                            \
					_mm_aeskeygenassist_si128(rk[i], 0),  \
					0xaa));                               \
	} while (0)

static void expand256(const uint8_t *key, __m128i rk[15])
{
	rk[0] = _mm_loadu_si128((const __m128i *)key);
	rk[1] = _mm_loadu_si128((const __m128i *)(key + 16));
	EXP256(2, 0x01);
	EXP256(4, 0x02);
	EXP256(6, 0x04);
	EXP256(8, 0x08);
	EXP256(10, 0x10);
	EXP256(12, 0x20);
	EXP256(14, 0x40);
}

static void store_keys(struct dmt_xts_key *k, const __m128i *ek,
		       const __m128i *tk);

void dmt_xts_vaes_setkey(struct dmt_xts_key *k, const uint8_t *key,
			 size_t key_len)
{
	size_t half = key_len / 2;
	__m128i ek[15], tk[15];

	k->rounds = half == 16 ? 10 : 14;
	if (half == 16) {
		expand128(key, ek);
		expand128(key + half, tk);
	} else {
		expand256(key, ek);
		expand256(key + half, tk);
	}
	store_keys(k, ek, tk);
	OPENSSL_cleanse(ek, sizeof(ek));
	OPENSSL_cleanse(tk, sizeof(tk));
}

void dmt_cbc_vaes_setkey(struct dmt_xts_key *k, const uint8_t *key,
			 size_t key_len)
{
	__m128i ek[15];

	k->rounds = key_len == 16 ? 10 : 14;
	if (key_len == 16)
		expand128(key, ek);
	else
		expand256(key, ek);
	store_keys(k, ek, ek);
	OPENSSL_cleanse(ek, sizeof(ek));
}

static void store_keys(struct dmt_xts_key *k, const __m128i *ek,
		       const __m128i *tk)
{
	for (unsigned int i = 0; i <= k->rounds; i++) {
		__m128i d = i == 0 || i == k->rounds ?
				    ek[k->rounds - i] :
				    _mm_aesimc_si128(ek[k->rounds - i]);

		_mm_store_si128((__m128i *)k->ek[i], ek[i]);
		_mm_store_si128((__m128i *)k->tk[i], tk[i]);
		_mm_store_si128((__m128i *)k->dk[i], d);
	}
}

/* ---- tweaks ---- */

/* t * x^n per 128-bit lane, n <= 8 (the carry times 0x87 stays small). */
static inline __m512i mul_xn(__m512i t, int n, __m512i poly)
{
	__m512i carry = _mm512_srli_epi64(t, 64 - n);

	return _mm512_xor_si512(
		_mm512_xor_si512(_mm512_slli_epi64(t, n),
				 _mm512_bslli_epi128(carry, 8)),
		_mm512_clmulepi64_epi128(carry, poly, 0x01));
}

/* t * x^n_lane for per-lane counts 0..8 (a count of 0 leaves the lane). */
static inline __m512i mul_xv(__m512i t, __m512i n, __m512i poly)
{
	__m512i carry = _mm512_srlv_epi64(
		t, _mm512_sub_epi64(_mm512_set1_epi64(64), n));

	return _mm512_xor_si512(
		_mm512_xor_si512(_mm512_sllv_epi64(t, n),
				 _mm512_bslli_epi128(carry, 8)),
		_mm512_clmulepi64_epi128(carry, poly, 0x01));
}

/* T = AES_k2(iv) for four IVs at once (one per 128-bit lane). */
static __m512i tweak4(const struct dmt_xts_key *k, const uint8_t *ivs)
{
	__m512i t = _mm512_loadu_si512(ivs);
	unsigned int r;

	t = _mm512_xor_si512(t, _mm512_broadcast_i32x4(_mm_load_si128(
					(const __m128i *)k->tk[0])));
	for (r = 1; r < k->rounds; r++)
		t = _mm512_aesenc_epi128(
			t, _mm512_broadcast_i32x4(
				   _mm_load_si128((const __m128i *)k->tk[r])));
	return _mm512_aesenclast_epi128(
		t, _mm512_broadcast_i32x4(
			   _mm_load_si128((const __m128i *)k->tk[r])));
}

/* ---- bulk ---- */

#define ROUNDS4(op, x0, x1, x2, x3, key)                                      \
	do {                                                                  \
		x0 = op(x0, key);                                             \
		x1 = op(x1, key);                                             \
		x2 = op(x2, key);                                             \
		x3 = op(x3, key);                                             \
	} while (0)

static void crypt16(const __m512i *rk, unsigned int rounds, bool enc,
		    const uint8_t *in, uint8_t *out, __m512i t0, __m512i poly)
{
	__m512i t1 = mul_xn(t0, 4, poly), t2 = mul_xn(t1, 4, poly),
		t3 = mul_xn(t2, 4, poly);
	__m512i x0 = _mm512_xor_si512(_mm512_loadu_si512(in), t0);
	__m512i x1 = _mm512_xor_si512(_mm512_loadu_si512(in + 64), t1);
	__m512i x2 = _mm512_xor_si512(_mm512_loadu_si512(in + 128), t2);
	__m512i x3 = _mm512_xor_si512(_mm512_loadu_si512(in + 192), t3);
	unsigned int r;

	ROUNDS4(_mm512_xor_si512, x0, x1, x2, x3, rk[0]);
	if (enc) {
		for (r = 1; r < rounds; r++)
			ROUNDS4(_mm512_aesenc_epi128, x0, x1, x2, x3, rk[r]);
		ROUNDS4(_mm512_aesenclast_epi128, x0, x1, x2, x3, rk[r]);
	} else {
		for (r = 1; r < rounds; r++)
			ROUNDS4(_mm512_aesdec_epi128, x0, x1, x2, x3, rk[r]);
		ROUNDS4(_mm512_aesdeclast_epi128, x0, x1, x2, x3, rk[r]);
	}
	_mm512_storeu_si512(out, _mm512_xor_si512(x0, t0));
	_mm512_storeu_si512(out + 64, _mm512_xor_si512(x1, t1));
	_mm512_storeu_si512(out + 128, _mm512_xor_si512(x2, t2));
	_mm512_storeu_si512(out + 192, _mm512_xor_si512(x3, t3));
}

/* One sector from its first tweaks [T, Tx, Tx^2, Tx^3]. */
static void crypt_sector(const __m512i *rk, unsigned int rounds, bool enc,
			 const uint8_t *in, uint8_t *out, size_t len,
			 __m512i t, __m512i poly)
{
	for (size_t off = 0; off + 256 <= len; off += 256) {
		crypt16(rk, rounds, enc, in + off, out + off, t, poly);
		t = mul_xn(mul_xn(t, 8, poly), 8, poly);
	}
}

void dmt_xts_vaes_crypt(const struct dmt_xts_key *k, bool enc,
			const uint8_t *ivs, size_t n, const uint8_t *in,
			uint8_t *out, size_t len)
{
	dmt_xts_vaes_crypt_tweaks(k, enc, ivs, 16, n, in, out, len);
}

void dmt_xts_vaes_crypt_tweaks(const struct dmt_xts_key *k, bool enc,
			       const uint8_t *ivs, size_t iv_stride, size_t n,
			       const uint8_t *in, uint8_t *out, size_t len)
{
	const __m512i poly = _mm512_set1_epi64(0x87);
	const __m512i lanes = _mm512_set_epi64(3, 3, 2, 2, 1, 1, 0, 0);
	uint8_t pad[64] __attribute__((aligned(64)));
	__m512i rk[15];

	for (unsigned int i = 0; i <= k->rounds; i++)
		rk[i] = _mm512_broadcast_i32x4(_mm_load_si128(
			(const __m128i *)(enc ? k->ek[i] : k->dk[i])));
	for (size_t s = 0; s < n; s += 4) {
		size_t m = n - s < 4 ? n - s : 4;
		__m512i t4;

		memset(pad, 0, sizeof(pad));
		for (size_t i = 0; i < m; i++)
			memcpy(pad + 16 * i, ivs + (s + i) * iv_stride, 16);
		t4 = tweak4(k, pad);
		_mm512_store_si512(pad, t4);
		for (size_t i = 0; i < m; i++) {
			__m512i t = _mm512_broadcast_i32x4(
				_mm_load_si128((const __m128i *)(pad + 16 * i)));

			crypt_sector(rk, k->rounds, enc, in + (s + i) * len,
				     out + (s + i) * len, len,
				     mul_xv(t, lanes, poly), poly);
		}
	}
	OPENSSL_cleanse(pad, sizeof(pad));
}

/* ---- CBC ---- */

#define AES4(op, x0, x1, x2, x3, rk, rounds, last)                            \
	do {                                                                  \
		unsigned int r_;                                              \
		ROUNDS4(_mm512_xor_si512, x0, x1, x2, x3, rk[0]);             \
		for (r_ = 1; r_ < rounds; r_++)                               \
			ROUNDS4(op, x0, x1, x2, x3, rk[r_]);                  \
		ROUNDS4(last, x0, x1, x2, x3, rk[r_]);                        \
	} while (0)

/* Block off of the four sectors p[0..3] in one vector, and back. */
static inline __m512i gather4(const uint8_t *const *p, size_t off)
{
	__m512i v = _mm512_castsi128_si512(
		_mm_loadu_si128((const __m128i *)(p[0] + off)));

	v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(p[1] + off)), 1);
	v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(p[2] + off)), 2);
	return _mm512_inserti32x4(
		v, _mm_loadu_si128((const __m128i *)(p[3] + off)), 3);
}

static inline void scatter4(uint8_t *const *p, size_t off, __m512i v)
{
	_mm_storeu_si128((__m128i *)(p[0] + off), _mm512_castsi512_si128(v));
	_mm_storeu_si128((__m128i *)(p[1] + off), _mm512_extracti32x4_epi32(v, 1));
	_mm_storeu_si128((__m128i *)(p[2] + off), _mm512_extracti32x4_epi32(v, 2));
	_mm_storeu_si128((__m128i *)(p[3] + off), _mm512_extracti32x4_epi32(v, 3));
}

/* Up to 16 sectors side by side; missing lanes repeat the last sector
 * (same input, same output: their stores are harmless). */
static void cbc_encrypt16(const __m512i *rk, unsigned int rounds,
			  const uint8_t *ivs, size_t m, const uint8_t *in,
			  uint8_t *out, size_t len)
{
	const uint8_t *ip[16];
	uint8_t *op[16];
	uint8_t iv[256];
	__m512i c0, c1, c2, c3;

	for (size_t i = 0; i < 16; i++) {
		size_t s = i < m ? i : m - 1;

		ip[i] = in + s * len;
		op[i] = out + s * len;
		memcpy(iv + 16 * i, ivs + 16 * s, 16);
	}
	c0 = _mm512_loadu_si512(iv);
	c1 = _mm512_loadu_si512(iv + 64);
	c2 = _mm512_loadu_si512(iv + 128);
	c3 = _mm512_loadu_si512(iv + 192);
	for (size_t off = 0; off < len; off += 16) {
		c0 = _mm512_xor_si512(c0, gather4(ip, off));
		c1 = _mm512_xor_si512(c1, gather4(ip + 4, off));
		c2 = _mm512_xor_si512(c2, gather4(ip + 8, off));
		c3 = _mm512_xor_si512(c3, gather4(ip + 12, off));
		AES4(_mm512_aesenc_epi128, c0, c1, c2, c3, rk, rounds,
		     _mm512_aesenclast_epi128);
		scatter4(op, off, c0);
		scatter4(op + 4, off, c1);
		scatter4(op + 8, off, c2);
		scatter4(op + 12, off, c3);
	}
}

/* One sector; in == out works: predecessors come from registers. */
static void cbc_decrypt1(const __m512i *rk, unsigned int rounds,
			 const uint8_t *iv, const uint8_t *in, uint8_t *out,
			 size_t len)
{
	__m512i carry = _mm512_inserti32x4(
		_mm512_setzero_si512(), _mm_loadu_si128((const __m128i *)iv), 3);

	for (size_t off = 0; off + 256 <= len; off += 256) {
		__m512i c0 = _mm512_loadu_si512(in + off),
			c1 = _mm512_loadu_si512(in + off + 64),
			c2 = _mm512_loadu_si512(in + off + 128),
			c3 = _mm512_loadu_si512(in + off + 192);
		__m512i x0 = c0, x1 = c1, x2 = c2, x3 = c3;

		AES4(_mm512_aesdec_epi128, x0, x1, x2, x3, rk, rounds,
		     _mm512_aesdeclast_epi128);
		/* predecessor of lane i is the block one lane down */
		x0 = _mm512_xor_si512(x0, _mm512_alignr_epi64(c0, carry, 6));
		x1 = _mm512_xor_si512(x1, _mm512_alignr_epi64(c1, c0, 6));
		x2 = _mm512_xor_si512(x2, _mm512_alignr_epi64(c2, c1, 6));
		x3 = _mm512_xor_si512(x3, _mm512_alignr_epi64(c3, c2, 6));
		carry = c3;
		_mm512_storeu_si512(out + off, x0);
		_mm512_storeu_si512(out + off + 64, x1);
		_mm512_storeu_si512(out + off + 128, x2);
		_mm512_storeu_si512(out + off + 192, x3);
	}
}

void dmt_cbc_vaes_crypt(const struct dmt_xts_key *k, bool enc,
			const uint8_t *ivs, size_t n, const uint8_t *in,
			uint8_t *out, size_t len)
{
	__m512i rk[15];

	for (unsigned int i = 0; i <= k->rounds; i++)
		rk[i] = _mm512_broadcast_i32x4(_mm_load_si128(
			(const __m128i *)(enc ? k->ek[i] : k->dk[i])));
	for (size_t s = 0; enc && s < n; s += 16)
		cbc_encrypt16(rk, k->rounds, ivs + 16 * s,
			      n - s < 16 ? n - s : 16, in + s * len,
			      out + s * len, len);
	for (size_t s = 0; !enc && s < n; s++)
		cbc_decrypt1(rk, k->rounds, ivs + 16 * s, in + s * len,
			     out + s * len, len);
}

/* ---- GCM ---- */

/*
 * GHASH in the byte-reflected representation of the Intel carry-less
 * multiplication white paper (Gueron, Kounavis): every block is
 * byte-swapped on load, products are carry-less, the 256-bit product is
 * shifted left by one and reduced modulo x^128 + x^7 + x^2 + x + 1.
 * 32 blocks are folded per reduction: block j of a 512-byte stretch is
 * multiplied by H^(32-j) (the running hash folded into block 0), the
 * unreduced products summed, then reduced once.
 */
static inline __m128i bswap128(__m128i x)
{
	return _mm_shuffle_epi8(x, _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
						10, 11, 12, 13, 14, 15));
}

/* [hi:lo] (unshifted 255-bit product) -> reduced field element */
static inline __m128i gf_reduce(__m128i lo, __m128i hi)
{
	__m128i t7 = _mm_srli_epi32(lo, 31), t8 = _mm_srli_epi32(hi, 31), t9;
	__m128i t2, t4, t5;

	lo = _mm_slli_epi32(lo, 1);
	hi = _mm_slli_epi32(hi, 1);
	t9 = _mm_srli_si128(t7, 12);
	t8 = _mm_slli_si128(t8, 4);
	t7 = _mm_slli_si128(t7, 4);
	lo = _mm_or_si128(lo, t7);
	hi = _mm_or_si128(_mm_or_si128(hi, t8), t9);
	t7 = _mm_xor_si128(_mm_xor_si128(_mm_slli_epi32(lo, 31),
					 _mm_slli_epi32(lo, 30)),
			   _mm_slli_epi32(lo, 25));
	t8 = _mm_srli_si128(t7, 4);
	lo = _mm_xor_si128(lo, _mm_slli_si128(t7, 12));
	t2 = _mm_srli_epi32(lo, 1);
	t4 = _mm_srli_epi32(lo, 2);
	t5 = _mm_srli_epi32(lo, 7);
	t2 = _mm_xor_si128(_mm_xor_si128(t2, t4), _mm_xor_si128(t5, t8));
	return _mm_xor_si128(hi, _mm_xor_si128(lo, t2));
}

/* One 128-bit carry-less multiply (lane 0 of the 512-bit instruction: the
 * file is built for VPCLMULQDQ, not the 128-bit PCLMUL). */
#define CLMUL128(a, b, imm)                                                   \
	_mm512_castsi512_si128(_mm512_clmulepi64_epi128(                      \
		_mm512_castsi128_si512(a), _mm512_castsi128_si512(b), imm))

static inline __m128i gf_mul(__m128i a, __m128i b)
{
	__m128i lo = CLMUL128(a, b, 0x00);
	__m128i hi = CLMUL128(a, b, 0x11);
	__m128i mid = _mm_xor_si128(CLMUL128(a, b, 0x10),
				    CLMUL128(a, b, 0x01));

	return gf_reduce(_mm_xor_si128(lo, _mm_slli_si128(mid, 8)),
			 _mm_xor_si128(hi, _mm_srli_si128(mid, 8)));
}

static __m128i aes_block(const struct dmt_gcm_key *k, __m128i x)
{
	unsigned int r;

	x = _mm_xor_si128(x, _mm_load_si128((const __m128i *)k->ek[0]));
	for (r = 1; r < k->rounds; r++)
		x = _mm_aesenc_si128(x,
				     _mm_load_si128((const __m128i *)k->ek[r]));
	return _mm_aesenclast_si128(x,
				    _mm_load_si128((const __m128i *)k->ek[r]));
}

void dmt_gcm_vaes_setkey(struct dmt_gcm_key *k, const uint8_t *key,
			 size_t key_len)
{
	__m128i ek[15], h, p;

	k->rounds = key_len == 16 ? 10 : 14;
	if (key_len == 16)
		expand128(key, ek);
	else
		expand256(key, ek);
	for (unsigned int i = 0; i <= k->rounds; i++)
		_mm_store_si128((__m128i *)k->ek[i], ek[i]);
	h = bswap128(aes_block(k, _mm_setzero_si128()));
	p = h;
	for (int i = 31; i >= 0; i--) {	/* hp[i] = H^(32 - i) */
		_mm_store_si128((__m128i *)k->hp[i], p);
		p = gf_mul(p, h);
	}
	OPENSSL_cleanse(ek, sizeof(ek));
	h = p = _mm_setzero_si128();
}

/* Horizontal xor of the four 128-bit lanes. */
static inline __m128i xor_lanes(__m512i v)
{
	__m256i x = _mm256_xor_si256(_mm512_castsi512_si256(v),
				     _mm512_extracti64x4_epi64(v, 1));

	return _mm_xor_si128(_mm256_castsi256_si128(x),
			     _mm256_extracti128_si256(x, 1));
}

/* x = GHASH state folded with the 4 * nv byte-swapped blocks c[], block j
 * times pw[j] (the powers down to H^1), one reduction for all. */
static __m128i ghash_fold(__m128i x, __m512i *c, int nv,
			  const uint8_t (*pw)[16])
{
	__m512i lo, hi, mid;

	c[0] = _mm512_xor_si512(c[0], _mm512_inserti32x4(
					      _mm512_setzero_si512(), x, 0));
	lo = hi = mid = _mm512_setzero_si512();
	for (int v = 0; v < nv; v++) {
		__m512i h = _mm512_load_si512(pw[4 * v]);

		lo = _mm512_xor_si512(lo, _mm512_clmulepi64_epi128(c[v], h, 0x00));
		hi = _mm512_xor_si512(hi, _mm512_clmulepi64_epi128(c[v], h, 0x11));
		mid = _mm512_xor_si512(
			mid, _mm512_xor_si512(
				     _mm512_clmulepi64_epi128(c[v], h, 0x01),
				     _mm512_clmulepi64_epi128(c[v], h, 0x10)));
	}
	{
		__m128i l = xor_lanes(lo), hh = xor_lanes(hi),
			m = xor_lanes(mid);

		return gf_reduce(_mm_xor_si128(l, _mm_slli_si128(m, 8)),
				 _mm_xor_si128(hh, _mm_srli_si128(m, 8)));
	}
}

/* 16 counter blocks from ctr (IV || be32 counter, counter as a little
 * endian dword in lane position 3 of ctr_le), AES'd: the key stream. */
static void keystream16(const __m512i *rk, unsigned int rounds,
			__m512i ctr_le, __m512i *ks)
{
	const __m512i to_be = _mm512_broadcast_i32x4(_mm_set_epi8(
		12, 13, 14, 15, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));
	const __m512i four = _mm512_broadcast_i32x4(_mm_set_epi32(4, 0, 0, 0));
	__m512i x0 = _mm512_shuffle_epi8(ctr_le, to_be);
	__m512i c1 = _mm512_add_epi32(ctr_le, four);
	__m512i x1 = _mm512_shuffle_epi8(c1, to_be);
	__m512i c2 = _mm512_add_epi32(c1, four);
	__m512i x2 = _mm512_shuffle_epi8(c2, to_be);
	__m512i x3 = _mm512_shuffle_epi8(_mm512_add_epi32(c2, four), to_be);
	unsigned int r;

	ROUNDS4(_mm512_xor_si512, x0, x1, x2, x3, rk[0]);
	for (r = 1; r < rounds; r++)
		ROUNDS4(_mm512_aesenc_epi128, x0, x1, x2, x3, rk[r]);
	ROUNDS4(_mm512_aesenclast_epi128, x0, x1, x2, x3, rk[r]);
	ks[0] = x0;
	ks[1] = x1;
	ks[2] = x2;
	ks[3] = x3;
}

/* GHASH of up to 64 bytes of AAD, zero-padded to whole blocks. */
static __m128i ghash_aad(const struct dmt_gcm_key *k, const uint8_t *aad,
			 size_t len)
{
	__m128i x = _mm_setzero_si128(), h = _mm_load_si128(
						 (const __m128i *)k->hp[31]);

	for (size_t off = 0; off < len; off += 16) {
		uint8_t blk[16] = { 0 };

		memcpy(blk, aad + off, len - off < 16 ? len - off : 16);
		x = gf_mul(_mm_xor_si128(x, bswap128(_mm_loadu_si128(
						    (const __m128i *)blk))),
			   h);
	}
	return x;
}

void dmt_gcm_vaes_crypt(const struct dmt_gcm_key *k, bool enc,
			const uint8_t *iv, const uint8_t *aad, size_t aad_len,
			const uint8_t *in, uint8_t *out, size_t len,
			uint8_t *tag)
{
	const __m512i bs = _mm512_broadcast_i32x4(_mm_set_epi8(
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
	const __m512i lanes = _mm512_set_epi32(3, 0, 0, 0, 2, 0, 0, 0, 1, 0,
					       0, 0, 0, 0, 0, 0);
	const __m512i sixteen = _mm512_broadcast_i32x4(
		_mm_set_epi32(16, 0, 0, 0));
	uint8_t j0[16];
	__m512i rk[15], ctr;
	__m128i x, lenblk, t;

	for (unsigned int i = 0; i <= k->rounds; i++)
		rk[i] = _mm512_broadcast_i32x4(
			_mm_load_si128((const __m128i *)k->ek[i]));
	memcpy(j0, iv, 12);
	memset(j0 + 12, 0, 4);
	/* ctr_le: IV, then the counter 2, 3, 4, 5 as little-endian dwords */
	ctr = _mm512_add_epi32(
		_mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)j0)),
		_mm512_add_epi32(lanes, _mm512_broadcast_i32x4(
						_mm_set_epi32(2, 0, 0, 0))));
	j0[15] = 1;
	x = ghash_aad(k, aad, aad_len);
	/* 512 bytes per reduction (256 for a last odd stretch) */
	for (size_t off = 0; off + 256 <= len;) {
		int nv = off + 512 <= len ? 8 : 4;
		__m512i ks[8], c[8];

		for (int q = 0; q < nv; q += 4) {
			keystream16(rk, k->rounds, ctr, ks + q);
			ctr = _mm512_add_epi32(ctr, sixteen);
		}
		for (int v = 0; v < nv; v++) {
			__m512i d = _mm512_loadu_si512(in + off + 64 * v);
			__m512i o = _mm512_xor_si512(d, ks[v]);

			_mm512_storeu_si512(out + off + 64 * v, o);
			c[v] = _mm512_shuffle_epi8(enc ? o : d, bs);
		}
		x = ghash_fold(x, c, nv, k->hp + (nv == 8 ? 0 : 16));
		off += (size_t)nv * 64;
	}
	lenblk = _mm_set_epi64x((long long)aad_len * 8, (long long)len * 8);
	x = gf_mul(_mm_xor_si128(x, lenblk),
		   _mm_load_si128((const __m128i *)k->hp[31]));
	t = _mm_xor_si128(bswap128(x),
			  aes_block(k, _mm_loadu_si128((const __m128i *)j0)));
	_mm_storeu_si128((__m128i *)tag, t);
}

/* The dispatcher's "vaes" entry (lib/common/dispatch.c). */
const struct dmt_aes_ops dmt_aes_ops_vaes = {
	.xts_setkey = dmt_xts_vaes_setkey,
	.xts_crypt = dmt_xts_vaes_crypt,
	.xts_crypt_tweaks = dmt_xts_vaes_crypt_tweaks,
	.cbc_setkey = dmt_cbc_vaes_setkey,
	.cbc_crypt = dmt_cbc_vaes_crypt,
	.gcm_setkey = dmt_gcm_vaes_setkey,
	.gcm_crypt = dmt_gcm_vaes_crypt,
};
