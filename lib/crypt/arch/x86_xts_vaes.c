// SPDX-License-Identifier: MIT
/*
 * AES-XTS with VAES/VPCLMULQDQ on 512-bit vectors (IEEE 1619): tweak
 * T = AES_k2(IV); block j: C = AES_k1(P ^ T_j) ^ T_j, T_{j+1} = T_j * x in
 * GF(2^128) (little-endian, reduction 0x87).  Four tweaks per vector,
 * advanced by x^4 per vector with one carry-less multiply; four vectors
 * (16 blocks) in flight to cover the AES latency.  Compiled only with
 * its own ISA flags (mk/crypt.mk); used when the CPU has them.
 */
#include <cpuid.h>
#include <immintrin.h>
#include <openssl/crypto.h>
#include <stdbool.h>
#include <string.h>

#include "lib/common/cpu.h"
#include "lib/crypt/xts_arch.h"

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
	for (unsigned int i = 0; i <= k->rounds; i++) {
		__m128i d = i == 0 || i == k->rounds ?
				    ek[k->rounds - i] :
				    _mm_aesimc_si128(ek[k->rounds - i]);

		_mm_store_si128((__m128i *)k->ek[i], ek[i]);
		_mm_store_si128((__m128i *)k->tk[i], tk[i]);
		_mm_store_si128((__m128i *)k->dk[i], d);
	}
	OPENSSL_cleanse(ek, sizeof(ek));
	OPENSSL_cleanse(tk, sizeof(tk));
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
		memcpy(pad, ivs + 16 * s, 16 * m);
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
