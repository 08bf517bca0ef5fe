// SPDX-License-Identifier: MIT
/*
 * Standalone self-test of the per-ISA block functions in lib/arch/.  Every
 * backend the CPU can run is compared with a reference for many block
 * counts, random states, misaligned and shared data pointers, and data that
 * ends right before an inaccessible page (a read past nblocks would crash).
 * References: OpenSSL's SHA256_Transform/SHA512_Transform on x86-64 (from
 * the same random states), and a plain C compression function compiled into
 * this file, itself checked against the FIPS 180 "abc" vectors.
 *
 * Standalone on purpose: it links only the backend objects, so it also runs
 * under qemu-user for arm64, where there is no Criterion.
 *
 *	backend_selftest [--bench] [--seed N]
 *
 * Prints "N passed, N failed"; exit status 0 only if nothing failed.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "lib/common/backends.h"
#if defined(__x86_64__)
#include "lib/fec/fec_gf256.h"
#endif

#if defined(__x86_64__)
#include <cpuid.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#define HAVE_OPENSSL 1
#elif defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

static unsigned long n_pass, n_fail;
static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: reproducible from --seed. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static void check(int ok, const char *what, const char *name, size_t arg)
{
	if (ok) {
		n_pass++;
		return;
	}
	n_fail++;
	fprintf(stderr, "FAIL: %s %s (%zu)\n", what, name, arg);
}

/* ---- portable references ---- */

static const uint32_t K256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b,
	0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
	0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7,
	0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
	0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152,
	0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
	0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
	0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
	0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static const uint64_t K512[80] = {
	0x428a2f98d728ae22ULL, 0x7137449123ef65cdULL, 0xb5c0fbcfec4d3b2fULL,
	0xe9b5dba58189dbbcULL, 0x3956c25bf348b538ULL, 0x59f111f1b605d019ULL,
	0x923f82a4af194f9bULL, 0xab1c5ed5da6d8118ULL, 0xd807aa98a3030242ULL,
	0x12835b0145706fbeULL, 0x243185be4ee4b28cULL, 0x550c7dc3d5ffb4e2ULL,
	0x72be5d74f27b896fULL, 0x80deb1fe3b1696b1ULL, 0x9bdc06a725c71235ULL,
	0xc19bf174cf692694ULL, 0xe49b69c19ef14ad2ULL, 0xefbe4786384f25e3ULL,
	0x0fc19dc68b8cd5b5ULL, 0x240ca1cc77ac9c65ULL, 0x2de92c6f592b0275ULL,
	0x4a7484aa6ea6e483ULL, 0x5cb0a9dcbd41fbd4ULL, 0x76f988da831153b5ULL,
	0x983e5152ee66dfabULL, 0xa831c66d2db43210ULL, 0xb00327c898fb213fULL,
	0xbf597fc7beef0ee4ULL, 0xc6e00bf33da88fc2ULL, 0xd5a79147930aa725ULL,
	0x06ca6351e003826fULL, 0x142929670a0e6e70ULL, 0x27b70a8546d22ffcULL,
	0x2e1b21385c26c926ULL, 0x4d2c6dfc5ac42aedULL, 0x53380d139d95b3dfULL,
	0x650a73548baf63deULL, 0x766a0abb3c77b2a8ULL, 0x81c2c92e47edaee6ULL,
	0x92722c851482353bULL, 0xa2bfe8a14cf10364ULL, 0xa81a664bbc423001ULL,
	0xc24b8b70d0f89791ULL, 0xc76c51a30654be30ULL, 0xd192e819d6ef5218ULL,
	0xd69906245565a910ULL, 0xf40e35855771202aULL, 0x106aa07032bbd1b8ULL,
	0x19a4c116b8d2d0c8ULL, 0x1e376c085141ab53ULL, 0x2748774cdf8eeb99ULL,
	0x34b0bcb5e19b48a8ULL, 0x391c0cb3c5c95a63ULL, 0x4ed8aa4ae3418acbULL,
	0x5b9cca4f7763e373ULL, 0x682e6ff3d6b2b8a3ULL, 0x748f82ee5defb2fcULL,
	0x78a5636f43172f60ULL, 0x84c87814a1f0ab72ULL, 0x8cc702081a6439ecULL,
	0x90befffa23631e28ULL, 0xa4506cebde82bde9ULL, 0xbef9a3f7b2c67915ULL,
	0xc67178f2e372532bULL, 0xca273eceea26619cULL, 0xd186b8c721c0c207ULL,
	0xeada7dd6cde0eb1eULL, 0xf57d4f7fee6ed178ULL, 0x06f067aa72176fbaULL,
	0x0a637dc5a2c898a6ULL, 0x113f9804bef90daeULL, 0x1b710b35131c471bULL,
	0x28db77f523047d84ULL, 0x32caab7b40c72493ULL, 0x3c9ebe0a15c9bebcULL,
	0x431d67c49c100d4cULL, 0x4cc5d4becb3e42b6ULL, 0x597f299cfc657e2aULL,
	0x5fcb6fab3ad6faecULL, 0x6c44198c4a475817ULL,
};

static const uint32_t IV256[8] = {
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

static const uint64_t IV512[8] = {
	0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL,
	0xa54ff53a5f1d36f1ULL, 0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL,
	0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL,
};

static uint32_t ror32(uint32_t x, int n)
{
	return (x >> n) | (x << (32 - n));
}

static uint64_t ror64(uint64_t x, int n)
{
	return (x >> n) | (x << (64 - n));
}

static void ref_sha256(uint32_t *s, const uint8_t *p, size_t nblocks)
{
	uint32_t w[64], v[8], t1, t2;
	int i;

	for (; nblocks; nblocks--, p += 64) {
		for (i = 0; i < 16; i++)
			w[i] = (uint32_t)p[4 * i] << 24 |
			       (uint32_t)p[4 * i + 1] << 16 |
			       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
		for (i = 16; i < 64; i++)
			w[i] = (ror32(w[i - 2], 17) ^ ror32(w[i - 2], 19) ^
				(w[i - 2] >> 10)) + w[i - 7] +
			       (ror32(w[i - 15], 7) ^ ror32(w[i - 15], 18) ^
				(w[i - 15] >> 3)) + w[i - 16];
		memcpy(v, s, sizeof(v));
		for (i = 0; i < 64; i++) {
			t1 = v[7] + (ror32(v[4], 6) ^ ror32(v[4], 11) ^
				     ror32(v[4], 25)) +
			     ((v[4] & v[5]) ^ (~v[4] & v[6])) + K256[i] + w[i];
			t2 = (ror32(v[0], 2) ^ ror32(v[0], 13) ^
			      ror32(v[0], 22)) +
			     ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
			memmove(v + 1, v, 7 * sizeof(v[0]));
			v[4] += t1;
			v[0] = t1 + t2;
		}
		for (i = 0; i < 8; i++)
			s[i] += v[i];
	}
}

static void ref_sha512(uint64_t *s, const uint8_t *p, size_t nblocks)
{
	uint64_t w[80], v[8], t1, t2;
	int i, j;

	for (; nblocks; nblocks--, p += 128) {
		for (i = 0; i < 16; i++)
			for (w[i] = 0, j = 0; j < 8; j++)
				w[i] = w[i] << 8 | p[8 * i + j];
		for (i = 16; i < 80; i++)
			w[i] = (ror64(w[i - 2], 19) ^ ror64(w[i - 2], 61) ^
				(w[i - 2] >> 6)) + w[i - 7] +
			       (ror64(w[i - 15], 1) ^ ror64(w[i - 15], 8) ^
				(w[i - 15] >> 7)) + w[i - 16];
		memcpy(v, s, sizeof(v));
		for (i = 0; i < 80; i++) {
			t1 = v[7] + (ror64(v[4], 14) ^ ror64(v[4], 18) ^
				     ror64(v[4], 41)) +
			     ((v[4] & v[5]) ^ (~v[4] & v[6])) + K512[i] + w[i];
			t2 = (ror64(v[0], 28) ^ ror64(v[0], 34) ^
			      ror64(v[0], 39)) +
			     ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
			memmove(v + 1, v, 7 * sizeof(v[0]));
			v[4] += t1;
			v[0] = t1 + t2;
		}
		for (i = 0; i < 8; i++)
			s[i] += v[i];
	}
}

static uint32_t ref_crc32c(uint32_t crc, const uint8_t *p, size_t len)
{
	int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (crc & 1 ? 0x82F63B78 : 0);
	}
	return crc;
}

/* ---- backends this CPU can run ---- */

struct crc_backend {
	const char *name;
	uint32_t (*fn)(uint32_t crc, const uint8_t *p, size_t len);
	int usable;
};

#if defined(__x86_64__)
/* GF(2^8) multiply-add (lib/fec/fec_gf256.h): nibble tables or matrices. */
typedef void (*gf_tbl_fn)(uint8_t *acc, size_t acc_stride, unsigned int roots,
			  const uint8_t *in, size_t in_stride, size_t nrows,
			  const uint8_t *tbls, size_t len);
typedef void (*gf_mat_fn)(uint8_t *acc, size_t acc_stride, unsigned int roots,
			  const uint8_t *in, size_t in_stride, size_t nrows,
			  const uint64_t *mats, size_t len);
struct gf_backend {
	const char *name;
	gf_tbl_fn tbl;
	gf_mat_fn mat;
	int usable;
};
static struct gf_backend gf_list[4];
static int ngf;
#endif

#define MAX_LANES 16
static const struct dmt_sha256_backend *sha256_list[8];
static const struct dmt_sha512_backend *sha512_list[4];
static struct crc_backend crc_list[4];
static int n256, n512, ncrc;

#if defined(__x86_64__)
static int xgetbv_ok(uint64_t need)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((((uint64_t)hi << 32) | lo) & need) == need;
}

static void find_backends(void)
{
	unsigned int a, b, d, b7 = 0, c7 = 0, c1;
	int osxsave, avx2, avx512, shani, sse42, pclmul, ssse3, gfni;

	__cpuid(1, a, b, c1, d);
	if (__get_cpuid_max(0, NULL) >= 7)
		__cpuid_count(7, 0, a, b7, c7, d);
	osxsave = !!(c1 & (1u << 27));
	sse42 = !!(c1 & (1u << 20));
	pclmul = !!(c1 & (1u << 1));
	ssse3 = !!(c1 & (1u << 9));
	gfni = !!(c7 & (1u << 8));
	shani = (b7 >> 29) & 1 && (c1 & (1u << 19));
	avx2 = (b7 >> 5) & 1 && osxsave && xgetbv_ok(0x6);
	avx512 = (b7 >> 16) & 1 && (b7 >> 30) & 1 && (b7 >> 31) & 1 &&
		 osxsave && xgetbv_ok(0xe6);

	/* AVX first, so the SHA-NI runs follow dirty-upper-state code. */
	if (avx512)
		sha256_list[n256++] = &dmt_sha256_avx512;
	if (avx2)
		sha256_list[n256++] = &dmt_sha256_avx2;
	if (shani) {
		sha256_list[n256++] = &dmt_sha256_shani;
		sha256_list[n256++] = &dmt_sha256_shani_2x;
	}
	if (avx512)
		sha512_list[n512++] = &dmt_sha512_avx512;
	if (avx2)
		sha512_list[n512++] = &dmt_sha512_avx2;
	crc_list[ncrc++] = (struct crc_backend){
		"sse42", dmt_crc32c_sse42, sse42 && pclmul };
	gf_list[ngf++] = (struct gf_backend){ "gfni", NULL,
		dmt_gf256_mac_gfni, gfni && avx512 };
	gf_list[ngf++] = (struct gf_backend){ "avx2", dmt_gf256_mac_avx2,
		NULL, avx2 };
	gf_list[ngf++] = (struct gf_backend){ "ssse3", dmt_gf256_mac_ssse3,
		NULL, ssse3 };
	printf("cpu: shani %d avx2 %d avx512 %d sse42 %d pclmul %d ssse3 %d"
	       " gfni %d\n", shani, avx2, avx512, sse42, pclmul, ssse3, gfni);
}
#elif defined(__aarch64__)
static void find_backends(void)
{
	unsigned long hw = getauxval(AT_HWCAP);

	if (hw & HWCAP_SHA2) {
		sha256_list[n256++] = &dmt_sha256_ce;
		sha256_list[n256++] = &dmt_sha256_ce_2x;
	}
	crc_list[ncrc++] = (struct crc_backend){
		"arm64", dmt_crc32c_arm64, !!(hw & HWCAP_CRC32) };
	printf("cpu: sha2 %d crc32 %d\n", !!(hw & HWCAP_SHA2),
	       !!(hw & HWCAP_CRC32));
}
#else
static void find_backends(void)
{
}
#endif

/* ---- test data: BUF_SIZE bytes followed by an inaccessible page ---- */

#define BUF_SIZE (512 * 1024)
static uint8_t *buf;

static int alloc_buf(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, BUF_SIZE + pg, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t i;

	if (m == MAP_FAILED)
		return -errno;
	if (mprotect(m + BUF_SIZE, pg, PROT_NONE)) {
		munmap(m, BUF_SIZE + pg);
		return -errno;
	}
	buf = m;
	for (i = 0; i < BUF_SIZE; i++)
		buf[i] = (uint8_t)rnd();
	return 0;
}

/*
 * Where `len` bytes of one lane start: anywhere (any alignment), or ending
 * exactly at the guard page, or the same place as lane 0.
 */
static const uint8_t *place(size_t len, const uint8_t *lane0)
{
	switch (rnd() % 8) {
	case 0:
		return buf + BUF_SIZE - len;
	case 1:
		if (lane0)
			return lane0;
		/* fall through */
	default:
		return buf + rnd() % (BUF_SIZE - len + 1);
	}
}

static const size_t block_counts[] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100,
};

#define NCOUNTS (sizeof(block_counts) / sizeof(block_counts[0]))
#define TRIALS 6
#define CANARY32 0xa5c3e1f7u
#define CANARY64 0xa5c3e1f70f1e2d3cULL

static void test_sha256(const struct dmt_sha256_backend *bk)
{
	uint32_t st[MAX_LANES * 8 + 8], ref[MAX_LANES * 8];
	const uint8_t *data[MAX_LANES];
	unsigned int l, lanes = bk->lanes;
	size_t ci, i;
	int t, ok;

	check(lanes >= 1 && lanes <= MAX_LANES, "lane count", bk->name, lanes);
	if (lanes < 1 || lanes > MAX_LANES)
		return;
	for (ci = 0; ci < NCOUNTS; ci++) {
		size_t nb = block_counts[ci];

		for (t = 0; t < TRIALS; t++) {
			for (l = 0; l < lanes; l++)
				data[l] = place(nb * 64, l ? data[0] : NULL);
			for (i = 0; i < lanes * 8; i++)
				st[i] = ref[i] = (uint32_t)rnd();
			for (i = lanes * 8; i < lanes * 8 + 8; i++)
				st[i] = CANARY32;
			for (l = 0; l < lanes; l++)
				ref_sha256(ref + 8 * l, data[l], nb);
			bk->blocks(st, data, nb);
			ok = !memcmp(st, ref, lanes * 32);
			for (i = lanes * 8; i < lanes * 8 + 8; i++)
				ok &= st[i] == CANARY32;
			check(ok, "sha256 blocks vs reference", bk->name, nb);
		}
	}

	/* FIPS 180 "abc" through one padded block in every lane. */
	{
		static const uint32_t want[8] = {
			0xba7816bf, 0x8f01cfea, 0x414140de, 0x5dae2223,
			0xb00361a3, 0x96177a9c, 0xb410ff61, 0xf20015ad,
		};
		uint8_t blk[64] = { 'a', 'b', 'c', 0x80 };

		blk[63] = 24;
		for (l = 0; l < lanes; l++) {
			memcpy(st + 8 * l, IV256, sizeof(IV256));
			data[l] = blk;
		}
		bk->blocks(st, data, 1);
		for (ok = 1, l = 0; l < lanes; l++)
			ok &= !memcmp(st + 8 * l, want, sizeof(want));
		check(ok, "sha256 abc", bk->name, lanes);
	}
}

static void test_sha512(const struct dmt_sha512_backend *bk)
{
	uint64_t st[MAX_LANES * 8 + 8], ref[MAX_LANES * 8];
	const uint8_t *data[MAX_LANES];
	unsigned int l, lanes = bk->lanes;
	size_t ci, i;
	int t, ok;

	check(lanes >= 1 && lanes <= MAX_LANES, "lane count", bk->name, lanes);
	if (lanes < 1 || lanes > MAX_LANES)
		return;
	for (ci = 0; ci < NCOUNTS; ci++) {
		size_t nb = block_counts[ci];

		for (t = 0; t < TRIALS; t++) {
			for (l = 0; l < lanes; l++)
				data[l] = place(nb * 128, l ? data[0] : NULL);
			for (i = 0; i < lanes * 8; i++)
				st[i] = ref[i] = rnd();
			for (i = lanes * 8; i < lanes * 8 + 8; i++)
				st[i] = CANARY64;
			for (l = 0; l < lanes; l++)
				ref_sha512(ref + 8 * l, data[l], nb);
			bk->blocks(st, data, nb);
			ok = !memcmp(st, ref, lanes * 64);
			for (i = lanes * 8; i < lanes * 8 + 8; i++)
				ok &= st[i] == CANARY64;
			check(ok, "sha512 blocks vs reference", bk->name, nb);
		}
	}
}

static void test_crc(const struct crc_backend *bk)
{
	size_t len, i;
	uint32_t c;

	/* Every length up to 2 KiB, then random ones, random alignment. */
	for (len = 0; len <= 2048; len++) {
		const uint8_t *p = place(len, NULL);

		c = (uint32_t)rnd();
		check(bk->fn(c, p, len) == ref_crc32c(c, p, len),
		      "crc32c vs reference", bk->name, len);
	}
	for (i = 0; i < 200; i++) {
		const uint8_t *p;

		len = rnd() % (i < 100 ? 70000 : BUF_SIZE);
		p = place(len, NULL);
		c = (uint32_t)rnd();
		check(bk->fn(c, p, len) == ref_crc32c(c, p, len),
		      "crc32c vs reference", bk->name, len);
	}
	/* Check value: crc32c("123456789") = 0xe3069283 (inverted). */
	c = ~bk->fn(~0u, (const uint8_t *)"123456789", 9);
	check(c == 0xe3069283, "crc32c check value", bk->name, 9);
}

/* ---- GF(2^8) multiply-add for FEC (x86-64) ---- */

#if defined(__x86_64__)
/* Shift-and-add multiply in GF(2^8) mod x^8+x^4+x^3+x^2+1 (0x11d). */
static uint8_t gf_mul_ref(uint8_t a, uint8_t b)
{
	unsigned int x = a, r = 0;

	for (; b; b >>= 1) {
		if (b & 1)
			r ^= x;
		x <<= 1;
		if (x & 0x100)
			x ^= 0x11d;
	}
	return (uint8_t)r;
}

/* The field itself: alpha = 2 is primitive and alpha^8 = 0x1d. */
static void test_gf_reference(void)
{
	unsigned int x = 1, i, order = 0, a, b;
	int ok = 1;

	for (i = 1; i <= 255; i++) {
		x = gf_mul_ref((uint8_t)x, 2);
		if (x == 1 && !order)
			order = i;
		if (i == 8)
			ok &= x == 0x1d;
	}
	check(ok && order == 255, "reference", "gf256 alpha", order);
	for (ok = 1, i = 0; i < 2000; i++) {
		a = (unsigned int)rnd() & 0xff;
		b = (unsigned int)rnd() & 0xff;
		x = (unsigned int)rnd() & 0xff;
		ok &= gf_mul_ref((uint8_t)a, (uint8_t)b) ==
		      gf_mul_ref((uint8_t)b, (uint8_t)a);
		ok &= gf_mul_ref((uint8_t)a, (uint8_t)(b ^ x)) ==
		      (gf_mul_ref((uint8_t)a, (uint8_t)b) ^
		       gf_mul_ref((uint8_t)a, (uint8_t)x));
	}
	check(ok, "reference", "gf256 field laws", 0);
}

/* Our own encodings of a coefficient, built from gf_mul_ref. */
static void gf_nibbles(uint8_t c, uint8_t *t)
{
	unsigned int j;

	for (j = 0; j < 16; j++) {
		t[j] = gf_mul_ref(c, (uint8_t)j);
		t[16 + j] = gf_mul_ref(c, (uint8_t)(j << 4));
	}
}

static uint64_t gf_matrix(uint8_t c)
{
	uint64_t m = 0;
	unsigned int i, k;

	/* GF2P8AFFINEQB: result bit i = parity(x & matrix byte 7 - i) */
	for (i = 0; i < 8; i++)
		for (k = 0; k < 8; k++)
			if (gf_mul_ref(c, (uint8_t)(1u << k)) & (1u << i))
				m |= 1ull << (8 * (7 - i) + k);
	return m;
}

/* Guarded scratch for accumulators and coefficient encodings. */
#define GF_ACC_SIZE (64 * 1024)
#define GF_COEF_SIZE (253 * 24 * 64)
static uint8_t *gf_acc_buf, *gf_coef_buf;

static uint8_t *guarded(size_t size)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t span = (size + pg - 1) / pg * pg;
	uint8_t *m = mmap(NULL, span + pg, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	if (mprotect(m + span, pg, PROT_NONE)) {
		munmap(m, span + pg);
		return NULL;
	}
	return m + span - size;	/* the last byte is right before the guard */
}

/*
 * One call: roots accumulator planes and nrows input rows, every buffer
 * (input, accumulators, coefficients) ending right at a guard page, bytes
 * between planes checked untouched.  Returns 1 when it matches.
 */
static int gf_trial(const struct gf_backend *bk, unsigned int roots,
		    size_t nrows, size_t len)
{
	static uint8_t coef[253 * 24], want[GF_ACC_SIZE];
	size_t in_stride = len + (rnd() % 3) * 64 + (rnd() % 2) * (rnd() % 64);
	size_t acc_stride = len + (rnd() % 3) * 16;
	size_t in_span = nrows ? (nrows - 1) * in_stride + len : 0;
	size_t acc_span = (roots - 1) * acc_stride + len;
	size_t n = nrows * roots, i, r, x;
	const uint8_t *in = buf + BUF_SIZE - in_span;
	uint8_t *acc = gf_acc_buf + GF_ACC_SIZE - acc_span;
	uint8_t *tb = gf_coef_buf + GF_COEF_SIZE - n * 32;
	uint64_t *mats;
	unsigned int t;

	if (rnd() % 2)	/* or anywhere, any alignment */
		in = buf + rnd() % (BUF_SIZE - in_span + 1);
	for (i = 0; i < n; i++) {
		coef[i] = (uint8_t)rnd();
		if (rnd() % 8 == 0)
			coef[i] = (uint8_t)(rnd() % 2);	/* 0 and 1 too */
	}
	for (i = 0; i < acc_span; i++)
		acc[i] = want[i] = (uint8_t)rnd();
	for (r = 0; r < nrows; r++)
		for (t = 0; t < roots; t++)
			for (x = 0; x < len; x++)
				want[t * acc_stride + x] ^= gf_mul_ref(
					coef[r * roots + t],
					in[r * in_stride + x]);
	if (bk->mat) {
		/* 8 copies per coefficient: 64 bytes, at the guard too */
		mats = (uint64_t *)(gf_coef_buf + GF_COEF_SIZE - n * 64);
		for (i = 0; i < n * 8; i++)
			mats[i] = i % 8 ? mats[i - 1] : gf_matrix(coef[i / 8]);
		bk->mat(acc, acc_stride, roots, in, in_stride, nrows, mats,
			len);
	} else {
		for (i = 0; i < n; i++)
			gf_nibbles(coef[i], tb + 32 * i);
		bk->tbl(acc, acc_stride, roots, in, in_stride, nrows, tb, len);
	}
	return !memcmp(acc, want, acc_span);
}

static void test_gf(const struct gf_backend *bk)
{
	static const unsigned int roots_list[] = {
		1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 23, 24,
	};
	static const size_t rows_list[] = { 0, 1, 2, 3, 5, 11, 64, 253 };
	static const size_t lens[] = { 0, 64, 128, 192, 448, 1024 };
	size_t ri, li, ni;

	for (ri = 0; ri < sizeof(roots_list) / sizeof(roots_list[0]); ri++)
		for (li = 0; li < sizeof(lens) / sizeof(lens[0]); li++)
			for (ni = 0; ni < sizeof(rows_list) /
				     sizeof(rows_list[0]); ni++) {
				unsigned int roots = roots_list[ri];
				size_t nrows = rows_list[ni];

				/* keep the C reference's work bounded */
				if (nrows * lens[li] * roots > (1u << 18))
					continue;
				check(gf_trial(bk, roots, nrows, lens[li]),
				      "gf256 mac vs reference", bk->name,
				      roots * 100000 + nrows * 1000 +
				      lens[li] / 64);
			}
	/* the RS geometries at full height, narrow */
	check(gf_trial(bk, 2, 253, 64), "gf256 mac vs reference", bk->name,
	      2);
	check(gf_trial(bk, 24, 231, 64), "gf256 mac vs reference", bk->name,
	      24);
}
#endif

/* The references themselves, against published vectors and OpenSSL. */
static void test_references(void)
{
	static const uint64_t want512[8] = {
		0xddaf35a193617abaULL, 0xcc417349ae204131ULL,
		0x12e6fa4e89a97ea2ULL, 0x0a9eeee64b55d39aULL,
		0x2192992a274fc1a8ULL, 0x36ba3c23a3feebbdULL,
		0x454d4423643ce80eULL, 0x2a9ac94fa54ca49fULL,
	};
	static const uint32_t want256[8] = {
		0xba7816bf, 0x8f01cfea, 0x414140de, 0x5dae2223,
		0xb00361a3, 0x96177a9c, 0xb410ff61, 0xf20015ad,
	};
	uint8_t b256[64] = { 'a', 'b', 'c', 0x80 };
	uint8_t b512[128] = { 'a', 'b', 'c', 0x80 };
	uint32_t s256[8];
	uint64_t s512[8];

	b256[63] = 24;
	b512[127] = 24;
	memcpy(s256, IV256, sizeof(s256));
	ref_sha256(s256, b256, 1);
	check(!memcmp(s256, want256, sizeof(s256)), "reference", "sha256", 0);
	memcpy(s512, IV512, sizeof(s512));
	ref_sha512(s512, b512, 1);
	check(!memcmp(s512, want512, sizeof(s512)), "reference", "sha512", 0);
	check(~ref_crc32c(~0u, (const uint8_t *)"123456789", 9) == 0xe3069283,
	      "reference", "crc32c", 0);
#ifdef HAVE_OPENSSL
	{
		int t;

		for (t = 0; t < 200; t++) {
			size_t nb = rnd() % 20, i;
			const uint8_t *p = place(nb * 128, NULL);
			SHA256_CTX c256;
			SHA512_CTX c512;

			for (i = 0; i < 8; i++) {
				s256[i] = c256.h[i] = (uint32_t)rnd();
				s512[i] = c512.h[i] = rnd();
			}
			for (i = 0; i < 2 * nb; i++)
				SHA256_Transform(&c256, p + 64 * i);
			for (i = 0; i < nb; i++)
				SHA512_Transform(&c512, p + 128 * i);
			ref_sha256(s256, p, 2 * nb);
			ref_sha512(s512, p, nb);
			check(!memcmp(s256, c256.h, sizeof(s256)),
			      "reference vs OpenSSL", "sha256", nb);
			check(!memcmp(s512, c512.h, sizeof(s512)),
			      "reference vs OpenSSL", "sha512", nb);
		}
	}
#endif
}

/* ---- benchmark: thread CPU time, median of 5 ---- */

#define MSG 4096
#define POOL (256 * 1024)	/* stays in L2 */
#define RUNS 5

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static uint64_t sink;

enum bench_kind { B_SHA256, B_SHA512, B_CRC, B_EVP };

struct bench {
	enum bench_kind kind;
	const char *name;
	const struct dmt_sha256_backend *s256;
	const struct dmt_sha512_backend *s512;
	const struct crc_backend *crc;
	const void *md;
	size_t msg;
};

/* Hashes the pool `reps` times; returns bytes hashed. */
static size_t bench_once(const struct bench *b, int reps)
{
	uint32_t st32[MAX_LANES * 8] = { 0 };
	uint64_t st64[MAX_LANES * 8] = { 0 };
	const uint8_t *data[MAX_LANES];
	size_t done = 0, m, l;
	int r;

	for (r = 0; r < reps; r++) {
		switch (b->kind) {
		case B_SHA256:
			for (m = 0; m + b->s256->lanes * b->msg <= POOL;
			     m += b->s256->lanes * b->msg) {
				for (l = 0; l < b->s256->lanes; l++)
					data[l] = buf + m + l * b->msg;
				b->s256->blocks(st32, data, b->msg / 64);
				done += b->s256->lanes * b->msg;
			}
			sink += st32[0];
			break;
		case B_SHA512:
			for (m = 0; m + b->s512->lanes * b->msg <= POOL;
			     m += b->s512->lanes * b->msg) {
				for (l = 0; l < b->s512->lanes; l++)
					data[l] = buf + m + l * b->msg;
				b->s512->blocks(st64, data, b->msg / 128);
				done += b->s512->lanes * b->msg;
			}
			sink += st64[0];
			break;
		case B_CRC:
			for (m = 0; m + b->msg <= POOL; m += b->msg) {
				sink += b->crc->fn((uint32_t)m, buf + m,
						   b->msg);
				done += b->msg;
			}
			break;
		case B_EVP:
#ifdef HAVE_OPENSSL
		{
			EVP_MD_CTX *ctx = EVP_MD_CTX_new();
			unsigned char out[64];
			unsigned int olen;

			if (!ctx)
				return 0;
			for (m = 0; m + b->msg <= POOL; m += b->msg) {
				if (!EVP_DigestInit_ex2(ctx, b->md, NULL) ||
				    !EVP_DigestUpdate(ctx, buf + m, b->msg) ||
				    !EVP_DigestFinal_ex(ctx, out, &olen))
					break;
				sink += out[0];
				done += b->msg;
			}
			EVP_MD_CTX_free(ctx);
		}
#endif
			break;
		}
	}
	return done;
}

static void bench_run(const struct bench *b)
{
	double gbs[RUNS], t0, t;
	int reps = 1, i;
	size_t bytes;

	/* Calibrate to about 0.1 s of CPU time per run. */
	for (;;) {
		t0 = cpu_now();
		bytes = bench_once(b, reps);
		t = cpu_now() - t0;
		if (t > 0.02 || reps > (1 << 20) || !bytes)
			break;
		reps *= 2;
	}
	if (!bytes)
		return;
	reps = (int)(reps * 0.1 / (t > 0 ? t : 0.1)) + 1;
	for (i = 0; i < RUNS; i++) {
		t0 = cpu_now();
		bytes = bench_once(b, reps);
		gbs[i] = (double)bytes / (cpu_now() - t0) / 1e9;
	}
	qsort(gbs, RUNS, sizeof(gbs[0]), cmp_double);
	printf("bench %-18s %5zu-byte messages: %6.2f GB/s (median of %d,"
	       " min %.2f max %.2f)\n", b->name, b->msg, gbs[RUNS / 2], RUNS,
	       gbs[0], gbs[RUNS - 1]);
}

static void bench_all(void)
{
	static const size_t sizes[] = { 4096, 512 };
	char names[16][40];
	struct bench b;
	size_t si;
	int i, k = 0;

	for (si = 0; si < 2; si++) {
		size_t msg = sizes[si];

#ifdef HAVE_OPENSSL
		EVP_MD *md = EVP_MD_fetch(NULL, "SHA256", NULL);

		if (md) {
			b = (struct bench){ .kind = B_EVP, .md = md,
					    .name = "openssl-evp-sha256",
					    .msg = msg };
			bench_run(&b);
			EVP_MD_free(md);
		}
#endif
		for (i = 0; i < n256; i++) {
			snprintf(names[k % 16], sizeof(names[0]), "sha256-%s",
				 sha256_list[i]->name);
			b = (struct bench){ .kind = B_SHA256,
					    .s256 = sha256_list[i],
					    .name = names[k++ % 16],
					    .msg = msg };
			bench_run(&b);
		}
#ifdef HAVE_OPENSSL
		md = EVP_MD_fetch(NULL, "SHA512", NULL);
		if (md) {
			b = (struct bench){ .kind = B_EVP, .md = md,
					    .name = "openssl-evp-sha512",
					    .msg = msg };
			bench_run(&b);
			EVP_MD_free(md);
		}
#endif
		for (i = 0; i < n512; i++) {
			snprintf(names[k % 16], sizeof(names[0]), "sha512-%s",
				 sha512_list[i]->name);
			b = (struct bench){ .kind = B_SHA512,
					    .s512 = sha512_list[i],
					    .name = names[k++ % 16],
					    .msg = msg };
			bench_run(&b);
		}
		for (i = 0; i < ncrc; i++) {
			if (!crc_list[i].usable)
				continue;
			snprintf(names[k % 16], sizeof(names[0]), "crc32c-%s",
				 crc_list[i].name);
			b = (struct bench){ .kind = B_CRC, .crc = &crc_list[i],
					    .name = names[k++ % 16],
					    .msg = msg };
			bench_run(&b);
		}
	}
}

#if defined(__x86_64__)
/*
 * FEC encode kernel, in the encoder's geometry (lib/fec/fec.c plan_groups
 * for 4 KiB blocks and a large image: group width min(8 MiB / roots,
 * 1 MiB), rows of width + 64 bytes, bands of 4 MiB), every band of the
 * 255 - roots rows in turn.  MB/s of input per CPU-second.
 */
struct gf_bench {
	const struct gf_backend *bk;	/* NULL: lib's portable table code */
	unsigned int roots;
	size_t width, stride, band, rsn;
	const uint8_t *in, *coef, *tbls;
	const uint64_t *mats;
	uint8_t *acc;
};

static size_t gf_bench_once(const struct gf_bench *g, int reps)
{
	size_t done = 0, r0, k;
	int rep;

	for (rep = 0; rep < reps; rep++) {
		for (r0 = 0; r0 < g->rsn; r0 += g->band) {
			k = g->rsn - r0 < g->band ? g->rsn - r0 : g->band;
			if (!g->bk)
				dmt_gf256_mac_portable(g->acc, g->width,
					g->roots, g->in, g->stride, k,
					g->coef + r0 * g->roots, g->width);
			else if (g->bk->mat)
				g->bk->mat(g->acc, g->width, g->roots, g->in,
					   g->stride, k,
					   g->mats + r0 * g->roots * 8,
					   g->width);
			else
				g->bk->tbl(g->acc, g->width, g->roots, g->in,
					   g->stride, k,
					   g->tbls + r0 * g->roots * 32,
					   g->width);
			done += k * g->width;
		}
	}
	sink += g->acc[0];
	return done;
}

static double gf_bench_run(const struct gf_bench *g)
{
	double mbs[RUNS], t0, t;
	int reps = 1, i;
	size_t bytes;

	for (;;) {
		t0 = cpu_now();
		bytes = gf_bench_once(g, reps);
		t = cpu_now() - t0;
		if (t > 0.02 || reps > (1 << 20))
			break;
		reps *= 2;
	}
	reps = (int)(reps * 0.1 / (t > 0 ? t : 0.1)) + 1;
	for (i = 0; i < RUNS; i++) {
		t0 = cpu_now();
		bytes = gf_bench_once(g, reps);
		mbs[i] = (double)bytes / (cpu_now() - t0) / 1e6;
	}
	qsort(mbs, RUNS, sizeof(mbs[0]), cmp_double);
	return mbs[RUNS / 2];
}

static void bench_gf(void)
{
	static const unsigned int roots_list[] = { 2, 24 };
	struct gf_bench g;
	uint8_t *in, *coef, *tbls, *acc;
	uint64_t *mats;
	double base, v;
	size_t ri, i, n;
	int b;

	for (ri = 0; ri < 2; ri++) {
		memset(&g, 0, sizeof(g));
		g.roots = roots_list[ri];
		g.width = (8u << 20) / g.roots;
		if (g.width > (1u << 20))
			g.width = 1u << 20;
		g.width = g.width / 4096 * 4096;
		g.stride = g.width + 64;
		g.band = (4u << 20) / g.stride;
		g.rsn = 255 - g.roots;
		n = g.rsn * g.roots;
		in = malloc(g.band * g.stride);
		acc = calloc(g.roots, g.width);
		coef = malloc(n);
		tbls = malloc(n * 32);
		mats = malloc(n * 64);
		if (!in || !acc || !coef || !tbls || !mats)
			goto next;
		for (i = 0; i < g.band * g.stride; i++)
			in[i] = (uint8_t)rnd();
		for (i = 0; i < n; i++) {
			coef[i] = (uint8_t)rnd();
			gf_nibbles(coef[i], tbls + 32 * i);
		}
		for (i = 0; i < n * 8; i++)
			mats[i] = i % 8 ? mats[i - 1] : gf_matrix(coef[i / 8]);
		g.in = in;
		g.acc = acc;
		g.coef = coef;
		g.tbls = tbls;
		g.mats = mats;
		base = gf_bench_run(&g);
		printf("bench gf256-%-8s roots %2u (width %zu, %zu-row bands):"
		       " %6.0f MB/s\n", "portable", g.roots, g.width, g.band,
		       base);
		for (b = 0; b < ngf; b++) {
			if (!gf_list[b].usable)
				continue;
			g.bk = &gf_list[b];
			v = gf_bench_run(&g);
			printf("bench gf256-%-8s roots %2u (width %zu, %zu-row "
			       "bands): %6.0f MB/s = %.1fx portable\n",
			       gf_list[b].name, g.roots, g.width, g.band, v,
			       v / base);
		}
next:
		free(in);
		free(acc);
		free(coef);
		free(tbls);
		free(mats);
	}
}
#endif

int main(int argc, char **argv)
{
	int do_bench = 0, i, err;

	rng_state = 0x9e3779b97f4a7c15ULL;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--bench")) {
			do_bench = 1;
		} else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			rng_state = strtoull(argv[++i], NULL, 0) | 1;
		} else {
			fprintf(stderr,
				"usage: %s [--bench] [--seed N]\n", argv[0]);
			return 1;
		}
	}
	printf("seed 0x%llx\n", (unsigned long long)rng_state);
	err = alloc_buf();
	if (err) {
		fprintf(stderr, "backend_selftest: mmap: %s\n", strerror(-err));
		return 1;
	}
	find_backends();
	test_references();
	for (i = 0; i < n256; i++) {
		test_sha256(sha256_list[i]);
		printf("tested sha256 %s (%u lanes)\n", sha256_list[i]->name,
		       sha256_list[i]->lanes);
	}
	for (i = 0; i < n512; i++) {
		test_sha512(sha512_list[i]);
		printf("tested sha512 %s (%u lanes)\n", sha512_list[i]->name,
		       sha512_list[i]->lanes);
	}
#if defined(__x86_64__)
	test_gf_reference();
	gf_acc_buf = guarded(GF_ACC_SIZE);
	gf_coef_buf = guarded(GF_COEF_SIZE);
	if (!gf_acc_buf || !gf_coef_buf) {
		fprintf(stderr, "backend_selftest: mmap: %s\n",
			strerror(errno));
		return 1;
	}
	for (i = 0; i < ngf; i++) {
		if (!gf_list[i].usable) {
			printf("skipped gf256 %s: CPU lacks it\n",
			       gf_list[i].name);
			continue;
		}
		test_gf(&gf_list[i]);
		printf("tested gf256 %s\n", gf_list[i].name);
	}
#endif
	for (i = 0; i < ncrc; i++) {
		if (!crc_list[i].usable) {
			printf("skipped crc32c %s: CPU lacks it\n",
			       crc_list[i].name);
			continue;
		}
		test_crc(&crc_list[i]);
		printf("tested crc32c %s\n", crc_list[i].name);
	}
	if (do_bench && !n_fail) {
		bench_all();
#if defined(__x86_64__)
		bench_gf();
#endif
	}
	printf("%lu passed, %lu failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
