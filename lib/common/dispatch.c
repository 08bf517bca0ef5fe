// SPDX-License-Identifier: MIT
/*
 * The dispatcher: which backend computes each CPU-dispatched primitive
 * (SHA-256, SHA-512, CRC-32C, ..., FEC's GF(2^8) multiply-accumulate).
 * One table of backends, one default rule per primitive, one parser for
 * the engine spec that forces a choice.  The choice travels in the
 * caller's params; nothing here is process-wide except the table.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <dmt/hash.h>
#include "lib/common/cpu.h"
#include "lib/common/dispatch.h"

/*
 * Not const: the platform hook fills the "cpacf" entry at init.  The
 * order is the listing's; for the non-SHA-2 primitives, see
 * dmt_engine_default().
 */
#define MB(n, d, s2, s5) \
	{ .name = n, .desc = d, .kind = DMT_EK_MB, .s256 = s2, .s512 = s5 }

static struct dmt_engine engines[] = {
	{ .name = "portable",
	  .desc = "portable C (SHA-2 one message at a time, GF(2^8) tables)",
	  .kind = DMT_EK_MB, .s256 = &dmt_sha256_portable,
	  .s512 = &dmt_sha512_portable, .gf = &dmt_gf256_ops_portable },
#if defined(__x86_64__)
	MB("shani", "x86 SHA extensions, 1 message", &dmt_sha256_shani, NULL),
	MB("shani-2x", "x86 SHA extensions, 2 messages interleaved",
	   &dmt_sha256_shani_2x, NULL),
	/* GF(2^8) backends in order of preference (dmt_engine_default()) */
	{ .name = "gfni", .desc = "GFNI affine multiply on AVX-512 vectors",
	  .kind = DMT_EK_GF, .needs = DMT_CPU_X86_GFNI | DMT_CPU_X86_AVX512,
	  .gf = &dmt_gf256_ops_gfni },
	{ .name = "avx2",
	  .desc = "AVX2, 8 SHA-256 / 4 SHA-512 messages (one per lane); "
		  "GF(2^8) by PSHUFB nibble tables",
	  .kind = DMT_EK_MB, .s256 = &dmt_sha256_avx2,
	  .s512 = &dmt_sha512_avx2, .needs = DMT_CPU_X86_AVX2,
	  .gf = &dmt_gf256_ops_avx2 },
	{ .name = "ssse3", .desc = "SSSE3 PSHUFB nibble tables (GF(2^8))",
	  .kind = DMT_EK_GF, .needs = DMT_CPU_X86_SSSE3,
	  .gf = &dmt_gf256_ops_ssse3 },
	MB("avx512", "AVX-512, 16 SHA-256 / 8 SHA-512 messages",
	   &dmt_sha256_avx512, &dmt_sha512_avx512),
#endif
#if defined(__aarch64__)
	MB("ce", "ARMv8 crypto extensions, 1 message", &dmt_sha256_ce, NULL),
	MB("ce-2x", "ARMv8 crypto extensions, 2 messages interleaved",
	   &dmt_sha256_ce_2x, NULL),
#endif
#if defined(__s390x__)
	MB("cpacf", "s390 CPACF (KIMD/KLMD, KMAC)", NULL, NULL),
#endif
	{ .name = "openssl",
	  .desc = "OpenSSL EVP, 1 message at a time, context reused",
	  .kind = DMT_EK_OPENSSL },
#if defined(__x86_64__)
	{ .name = "vaes",
	  .desc = "VAES + VPCLMULQDQ on AVX-512 vectors, 16 blocks in flight",
	  .kind = DMT_EK_AES, .aes = &dmt_aes_ops_vaes,
	  .needs = DMT_CPU_X86_VAES | DMT_CPU_X86_AVX512 },
#endif
#if defined(__x86_64__)
	{ .name = "sse42", .desc = "SSE4.2 crc32 instruction, 3 streams",
	  .kind = DMT_EK_CRC, .crc32c = dmt_crc32c_sse42,
	  .needs = DMT_CPU_X86_SSE42 | DMT_CPU_X86_PCLMUL },
#endif
#if defined(__aarch64__)
	{ .name = "arm64-crc", .desc = "ARMv8 CRC32 instructions",
	  .kind = DMT_EK_CRC, .crc32c = dmt_crc32c_arm64,
	  .needs = DMT_CPU_ARM64_CRC32 },
#endif
	{ .name = "crc-table", .alias = "table",
	  .desc = "table-driven CRC, slicing by 8 (also: table)",
	  .kind = DMT_EK_CRC,
	  .crc32c = dmt_crc32c_table, .crc32 = dmt_crc32_le_table },
	{ .name = "libxxhash", .desc = "libxxhash XXH64", .kind = DMT_EK_XXH },
};
#define NENGINES (sizeof(engines) / sizeof(engines[0]))

static const struct {
	const char *name;
	const char *algs;
} prims[DMT_PRIM_COUNT] = {
	[DMT_PRIM_SHA256] = { "sha256", "sha256 sha224, hmac(...)" },
	[DMT_PRIM_SHA512] = { "sha512", "sha512 sha384, hmac(...)" },
	[DMT_PRIM_CRC32C] = { "crc32c", "crc32c" },
	[DMT_PRIM_CRC32] = { "crc32", "crc32" },
	[DMT_PRIM_XXH64] = { "xxhash64", "xxhash64" },
	[DMT_PRIM_OTHER] = { "other", "sha1 sha3 sm3 md5 rmd160 blake2b-512, "
				      "hmac(...)" },
	[DMT_PRIM_GF256] = { "gf256", "FEC Reed-Solomon parity" },
	[DMT_PRIM_AES_XTS] = { "aes-xts", "aes-xts-plain64 aes-xts-random" },
	[DMT_PRIM_AES_CBC] = { "aes-cbc", "aes-cbc-* (vaes: 128/256-bit keys)" },
	[DMT_PRIM_AES_GCM] = { "aes-gcm", "aes-gcm-random (vaes: 128/256-bit keys)" },
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void dispatch_init_once(void)
{
#if defined(__s390x__)
	struct dmt_platform_hooks hooks = { 0 };
	size_t i;

	dmt_s390_probe(&hooks);
	for (i = 0; i < NENGINES; i++) {
		if (strcmp(engines[i].name, "cpacf"))
			continue;
		engines[i].s256 = hooks.sha256;
		engines[i].s512 = hooks.sha512;
		engines[i].hmac_batch = hooks.hmac_batch;
	}
#endif
}

void dmt_dispatch_init(void)
{
	pthread_once(&init_once, dispatch_init_once);
}

bool dmt_engine_has(const struct dmt_engine *e, enum dmt_prim prim)
{
	switch (prim) {
	case DMT_PRIM_SHA256:
		return e->kind == DMT_EK_OPENSSL ||
		       (e->s256 && e->s256->lanes <= DMT_MB_MAX_LANES);
	case DMT_PRIM_SHA512:
		return e->kind == DMT_EK_OPENSSL ||
		       (e->s512 && e->s512->lanes <= DMT_MB_MAX_LANES);
	case DMT_PRIM_CRC32C:
		return e->crc32c;
	case DMT_PRIM_CRC32:
		return e->crc32;
	case DMT_PRIM_XXH64:
		return e->kind == DMT_EK_XXH;
	case DMT_PRIM_OTHER:
		return e->kind == DMT_EK_OPENSSL;
	case DMT_PRIM_GF256:
		return e->gf != NULL;
	case DMT_PRIM_AES_XTS:
	case DMT_PRIM_AES_CBC:
	case DMT_PRIM_AES_GCM:
		return e->kind == DMT_EK_OPENSSL || e->aes;
	case DMT_PRIM_COUNT:
		break;
	}
	return false;
}

static uint32_t eng_needs(const struct dmt_engine *e, enum dmt_prim prim)
{
	if (prim == DMT_PRIM_SHA256 && e->s256)
		return e->s256->cpu_needs;
	if (prim == DMT_PRIM_SHA512 && e->s512)
		return e->s512->cpu_needs;
	if (prim == DMT_PRIM_CRC32C || prim == DMT_PRIM_CRC32 ||
	    prim == DMT_PRIM_GF256 || prim == DMT_PRIM_AES_XTS ||
	    prim == DMT_PRIM_AES_CBC || prim == DMT_PRIM_AES_GCM)
		return e->needs;
	return 0;
}

bool dmt_engine_runs(const struct dmt_engine *e, enum dmt_prim prim,
		     uint32_t cpu)
{
	uint32_t needs;

	if (!dmt_engine_has(e, prim))
		return false;
	needs = eng_needs(e, prim);
	return (cpu & needs) == needs;
}

static unsigned int eng_lanes(const struct dmt_engine *e, enum dmt_prim prim)
{
	if (prim == DMT_PRIM_SHA256 && e->s256)
		return e->s256->lanes;
	if (prim == DMT_PRIM_SHA512 && e->s512)
		return e->s512->lanes;
	return 1;
}

const struct dmt_engine *dmt_engine_named(const char *name)
{
	size_t i;

	for (i = 0; i < NENGINES; i++)
		if (!strcasecmp(engines[i].name, name) ||
		    (engines[i].alias && !strcasecmp(engines[i].alias, name)))
			return &engines[i];
	return NULL;
}

/* ---- default choice ---- */

/* Single-core MB/s at 4 KiB messages; 0 = do not use. */
struct speed {
	const char *eng;
	unsigned int s256, s512;
};

/* AMD Zen 5 (family 1Ah, full-width AVX-512): measured, bench_hash. */
static const struct speed speed_zen5[] = {
	{ "avx512", 4660, 4190 }, { "shani-2x", 2470, 0 },
	{ "shani", 1620, 0 }, { "avx2", 1360, 0 },
	{ "openssl", 1960, 1130 }, { NULL, 0, 0 },
};

/*
 * Intel with AVX-512 (Emerald Rapids, docs/performance.md); SHA-512 AVX-512
 * not measured there, only known to beat OpenSSL's 540 MB/s AVX2 code.
 */
static const struct speed speed_intel512[] = {
	{ "avx512", 2750, 1500 }, { "shani-2x", 1740, 0 },
	{ "shani", 1330, 0 }, { "avx2", 1000, 0 },
	{ "openssl", 1250, 540 }, { NULL, 0, 0 },
};

/*
 * Everything else, by relative figures: AMD before Zen 5 runs AVX-512 at
 * half width (behind 2-way SHA-NI, which gains 1.6-2x there); OpenSSL
 * has SHA-NI/CE/CPACF code when we do, else its AVX2/NEON/scalar code.
 */
static const struct speed speed_other[] = {
	{ "shani-2x", 2400, 0 }, { "avx512", 2300, 1200 },
	{ "shani", 1330, 0 }, { "ce-2x", 1800, 0 }, { "ce", 1000, 0 },
	{ "cpacf", 1300, 1300 }, { "avx2", 1000, 610 },
	{ NULL, 0, 0 },
};

static unsigned int eng_speed(const struct dmt_engine *e, bool wide,
			      uint32_t cpu)
{
	const struct speed *t = speed_other;
	const char *name = e ? e->name : "openssl";

	if ((cpu & DMT_CPU_X86_AVX512) && (cpu & DMT_CPU_X86_INTEL))
		t = speed_intel512;
	else if ((cpu & DMT_CPU_X86_AVX512) && (cpu & DMT_CPU_X86_AMD) &&
		 dmt_cpu_x86_family() >= 0x1a)
		t = speed_zen5;
	for (; t->eng; t++)
		if (!strcmp(t->eng, name))
			return wide ? t->s512 : t->s256;
	if (!strcmp(name, "portable"))
		return wide ? 330 : 220;
	if (!strcmp(name, "openssl"))
		return wide ? 540 :
		       cpu & (DMT_CPU_X86_SHANI | DMT_CPU_ARM64_SHA2 |
			      DMT_CPU_S390_MSA) ? 1250 : 350;
	return 0;
}

/*
 * For each count r of messages left below the first backend's lane count,
 * the hasher then picks which backend takes the next group: a group costs
 * lanes/speed whatever its fill, so it minimises the sum of those over the
 * remainder (e.g. 9 leftover messages are cheaper as one half-empty
 * AVX-512 group than as 2-way SHA-NI pairs, and a lone message goes to
 * whichever 1-lane code is fastest, OpenSSL's included).
 */
void dmt_default_plan(enum dmt_prim prim, bool openssl_ok, uint32_t cpu,
		      struct dmt_plan *p)
{
	bool wide = prim == DMT_PRIM_SHA512;
	unsigned int i, j, sp;

	dmt_dispatch_init();
	p->n = 0;
	for (i = 0; i <= NENGINES && p->n < DMT_PLAN_MAX; i++) {
		const struct dmt_engine *e = i < NENGINES ? &engines[i] : NULL;

		if (e && (e->kind != DMT_EK_MB ||
			  !dmt_engine_runs(e, prim, cpu)))
			continue;
		if (!e && !openssl_ok)
			continue;
		sp = eng_speed(e, wide, cpu);
		if (!sp)
			continue;
		/* insertion sort, fastest first */
		for (j = p->n; j > 0 && p->speed[j - 1] < sp; j--) {
			p->eng[j] = p->eng[j - 1];
			p->speed[j] = p->speed[j - 1];
		}
		p->eng[j] = e;
		p->speed[j] = sp;
		p->n++;
	}
}

/*
 * Non-SHA-2 primitives: a backend that needs CPU features (sse42,
 * arm64-crc, gfni, vaes) when this CPU has them, else the one that needs
 * none (the tables, libxxhash, OpenSSL).
 */
const struct dmt_engine *dmt_engine_default(enum dmt_prim prim, uint32_t cpu)
{
	const struct dmt_engine *plain = NULL;
	size_t i;

	dmt_dispatch_init();
	for (i = 0; i < NENGINES; i++) {
		const struct dmt_engine *e = &engines[i];

		if (!dmt_engine_runs(e, prim, cpu))
			continue;
		if (eng_needs(e, prim))
			return e;
		if (!plain)
			plain = e;
	}
	return plain;
}

/* The backend the default dispatch names first for prim. */
static const struct dmt_engine *default_first(enum dmt_prim prim,
					      uint32_t cpu)
{
	struct dmt_plan pl;

	if (prim != DMT_PRIM_SHA256 && prim != DMT_PRIM_SHA512)
		return dmt_engine_default(prim, cpu);
	dmt_default_plan(prim, true, cpu, &pl);
	return pl.n && pl.eng[0] ? pl.eng[0] : dmt_engine_named("openssl");
}

/* ---- the engine spec ---- */

static int prim_lookup(const char *name, size_t len)
{
	int i;

	for (i = 0; i < DMT_PRIM_COUNT; i++)
		if (strlen(prims[i].name) == len &&
		    !strncasecmp(prims[i].name, name, len))
			return i;
	return -1;
}

/* PRIMITIVE=NAME: strict for that primitive. */
static int choose_one(int prim, const char *name, uint32_t cpu,
		      struct dmt_engine_choice *c)
{
	const struct dmt_engine *e;

	if (!strcasecmp(name, "auto")) {
		c->eng[prim] = NULL;
		return 0;
	}
	e = dmt_engine_named(name);
	if (!e || !dmt_engine_has(e, (enum dmt_prim)prim))
		return -ENOENT;
	if (!dmt_engine_runs(e, (enum dmt_prim)prim, cpu))
		return -ENOTSUP;
	c->eng[prim] = e;
	return 0;
}

/* Bare NAME: every primitive the backend has and runs here. */
static int choose_all(const char *name, uint32_t cpu,
		      struct dmt_engine_choice *c)
{
	const struct dmt_engine *e = dmt_engine_named(name);
	int prim, ran = 0;

	if (!e)
		return -ENOENT;
	for (prim = 0; prim < DMT_PRIM_COUNT; prim++) {
		if (!dmt_engine_runs(e, (enum dmt_prim)prim, cpu))
			continue;
		c->eng[prim] = e;
		ran++;
	}
	return ran ? 0 : -ENOTSUP;
}

static int choose_item(const char *item, uint32_t cpu,
		       struct dmt_engine_choice *c)
{
	const char *eq = strchr(item, '=');
	int prim;

	if (!*item)
		return -EINVAL;
	if (!eq)
		return strcasecmp(item, "auto") ? choose_all(item, cpu, c) : 0;
	prim = prim_lookup(item, (size_t)(eq - item));
	if (prim < 0 || !eq[1])
		return -EINVAL;
	return choose_one(prim, eq + 1, cpu, c);
}

int dmt_engine_choose(const char *spec, uint32_t cpu,
		      struct dmt_engine_choice *c, char *bad, size_t bad_size)
{
	char item[96];
	const char *p = spec;
	size_t len;
	int rc = 0;

	dmt_dispatch_init();
	memset(c, 0, sizeof(*c));
	if (!spec || !*spec)
		return 0;
	for (;;) {
		len = strcspn(p, ",");
		snprintf(item, sizeof(item), "%.*s", (int)len, p);
		rc = len < sizeof(item) ? choose_item(item, cpu, c) : -EINVAL;
		if (rc || !p[len])
			break;
		p += len + 1;
	}
	if (rc && bad_size)
		snprintf(bad, bad_size, "%s", item);
	if (rc)
		memset(c, 0, sizeof(*c));
	return rc;
}

int dmt_engine_spec_check(const char *spec, char *bad, size_t bad_size)
{
	struct dmt_engine_choice c;

	return dmt_engine_choose(spec, dmt_cpu_features(), &c, bad, bad_size);
}

const char *dmt_engine_resolve(const char *spec, const char *primitive)
{
	uint32_t cpu = dmt_cpu_features();
	struct dmt_engine_choice c;
	int prim = primitive ? prim_lookup(primitive, strlen(primitive)) : -1;

	if (prim < 0 || dmt_engine_choose(spec, cpu, &c, NULL, 0))
		return NULL;
	if (c.eng[prim])
		return c.eng[prim]->name;
	return default_first((enum dmt_prim)prim, cpu)->name;
}

int dmt_gf256_choose(const char *spec, const struct dmt_gf256_ops **ops)
{
	uint32_t cpu = dmt_cpu_features();
	struct dmt_engine_choice c;
	int rc = dmt_engine_choose(spec, cpu, &c, NULL, 0);

	if (rc)
		return rc;
	*ops = (c.eng[DMT_PRIM_GF256] ? c.eng[DMT_PRIM_GF256] :
		 dmt_engine_default(DMT_PRIM_GF256, cpu))->gf;
	return 0;
}

int dmt_aes_choose(const char *spec, enum dmt_prim prim,
		   const struct dmt_aes_ops **ops)
{
	uint32_t cpu = dmt_cpu_features();
	struct dmt_engine_choice c;
	int rc = dmt_engine_choose(spec, cpu, &c, NULL, 0);

	if (rc)
		return rc;
	*ops = (c.eng[prim] ? c.eng[prim] : dmt_engine_default(prim, cpu))->aes;
	return 0;
}

/* ---- listing ---- */

size_t dmt_engine_list(struct dmt_engine_info *out, size_t max)
{
	uint32_t cpu = dmt_cpu_features();
	size_t i, k = 0;
	int prim;

	dmt_dispatch_init();
	for (prim = 0; prim < DMT_PRIM_COUNT; prim++) {
		const struct dmt_engine *def =
			default_first((enum dmt_prim)prim, cpu);

		for (i = 0; i < NENGINES; i++) {
			const struct dmt_engine *e = &engines[i];
			struct dmt_engine_info *o;

			if (!dmt_engine_has(e, (enum dmt_prim)prim))
				continue;
			if (k++ >= max)
				continue;
			o = &out[k - 1];
			o->name = e->name;
			o->primitive = prims[prim].name;
			o->algs = prims[prim].algs;
			o->desc = e->desc;
			o->lanes = eng_lanes(e, (enum dmt_prim)prim);
			o->available = dmt_engine_runs(e, (enum dmt_prim)prim,
						       cpu);
			o->is_default = e == def;
		}
	}
	return k;
}
