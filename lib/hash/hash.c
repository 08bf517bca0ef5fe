// SPDX-License-Identifier: MIT
/*
 * Hash engine: algorithm registry, backend ("engine") dispatch and the
 * hasher objects.  SHA-2 goes through the multi-lane framing of
 * lib/hash_mb.c on the fastest block functions of this CPU; every other
 * digest goes through OpenSSL EVP with the algorithm fetched once and one
 * context per hasher, reused for every message.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include <dmt/hash.h>
#include "lib/hash/hash_priv.h"
#include <dmt/reason.h>
#include "lib/common/cpu.h"
#include "lib/common/dispatch.h"
#include "lib/common/reserved.h"
#include "lib/hash/hash_backend.h"

/* ---- registry ---- */

enum alg_kind { AK_SHA256, AK_SHA512, AK_EVP, AK_CRC32C, AK_CRC32, AK_XXH64 };

struct dmt_hash_alg {
	const char *name;	/* kernel crypto API name */
	const char *ossl;	/* OpenSSL fetch name, NULL if none */
	enum alg_kind kind;
	bool hmac;
	unsigned int digest_size;
	const void *iv;		/* SHA-2 only */
};

#define SHA2(n, o, k, ds, iv) \
	{ n, o, k, false, ds, iv }, { "hmac(" n ")", o, k, true, ds, iv }
#define EVPH(n, o, ds) \
	{ n, o, AK_EVP, false, ds, NULL }, \
	{ "hmac(" n ")", o, AK_EVP, true, ds, NULL }

static const struct dmt_hash_alg algs[] = {
	EVPH("sha1", "SHA1", 20),
	SHA2("sha224", "SHA224", AK_SHA256, 28, dmt_sha224_iv),
	SHA2("sha256", "SHA256", AK_SHA256, 32, dmt_sha256_iv),
	SHA2("sha384", "SHA384", AK_SHA512, 48, dmt_sha384_iv),
	SHA2("sha512", "SHA512", AK_SHA512, 64, dmt_sha512_iv),
	{ "crc32c", NULL, AK_CRC32C, false, 4, NULL },
	{ "crc32", NULL, AK_CRC32, false, 4, NULL },
	{ "xxhash64", NULL, AK_XXH64, false, 8, NULL },
	EVPH("sha3-224", "SHA3-224", 28),
	EVPH("sha3-256", "SHA3-256", 32),
	EVPH("sha3-384", "SHA3-384", 48),
	EVPH("sha3-512", "SHA3-512", 64),
	EVPH("sm3", "SM3", 32),
	EVPH("md5", "MD5", 16),
	EVPH("rmd160", "RIPEMD160", 20),
	{ "blake2b-512", "BLAKE2B-512", AK_EVP, false, 64, NULL },
};
#define NALGS (sizeof(algs) / sizeof(algs[0]))

/* Fetched once; NULL where this OpenSSL lacks the algorithm. */
static EVP_MD *alg_md[NALGS];

static size_t alg_index(const struct dmt_hash_alg *a)
{
	return (size_t)(a - algs);
}

static bool alg_usable(const struct dmt_hash_alg *a)
{
	return !a->ossl || a->kind != AK_EVP || alg_md[alg_index(a)];
}

/* ---- engines: lib/common/dispatch.c chooses, this file frames ---- */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void engine_init(void)
{
	size_t i;

	for (i = 0; i < NALGS; i++) {
		/* hmac(x) shares x's EVP_MD (x precedes it in the table). */
		if (algs[i].hmac && i && algs[i - 1].ossl &&
		    !strcmp(algs[i - 1].ossl, algs[i].ossl))
			alg_md[i] = alg_md[i - 1];
		else if (algs[i].ossl)
			alg_md[i] = EVP_MD_fetch(NULL, algs[i].ossl, NULL);
	}
}

static void init(void)
{
	pthread_once(&init_once, engine_init);
	dmt_dispatch_init();
}

static enum dmt_prim alg_prim(const struct dmt_hash_alg *a)
{
	switch (a->kind) {
	case AK_SHA256:
		return DMT_PRIM_SHA256;
	case AK_SHA512:
		return DMT_PRIM_SHA512;
	case AK_CRC32C:
		return DMT_PRIM_CRC32C;
	case AK_CRC32:
		return DMT_PRIM_CRC32;
	case AK_XXH64:
		return DMT_PRIM_XXH64;
	case AK_EVP:
		break;
	}
	return DMT_PRIM_OTHER;
}

/* ---- hashers ---- */

enum path { PATH_MB, PATH_EVP, PATH_CRC, PATH_XXH };

struct dmt_hasher {
	size_t alloc_size;
	const struct dmt_hash_alg *alg;
	const char *engine_name;
	enum path path;
	size_t ds, hs, ms, prefix_size, suffix_size, key_size;
	size_t off_prefix, off_suffix, off_key, off_pads, off_in, off_out;
	uint8_t *prefix, *suffix, *key, *pads, *in_stage, *out_stage;

	/* SHA-2 multi-lane path */
	struct dmt_mb_fn fn[DMT_PLAN_MAX];
	unsigned int nfn, width;
	uint8_t pick[DMT_MB_MAX_LANES + 1];
	struct dmt_mb_pass inner, outer;
	dmt_hmac_batch_fn hmac_batch;

	/* OpenSSL path (also the MB plan's fallback) */
	const EVP_MD *md;
	EVP_MD_CTX *ctx;	/* work context */
	EVP_MD_CTX *tin;	/* after [ipad ||] prefix */
	EVP_MD_CTX *tout;	/* after opad (HMAC) */
	bool need_ctx;
	size_t evp_bs;		/* HMAC block size; pads = ipad || opad */

	/* CRC and XXH64 paths */
	dmt_crc32_fn crc;
	uint32_t crc0;
	bool crc_invert;
	XXH64_state_t xxh0;

	uint8_t data[] __attribute__((aligned(64)));
};

int dmt_hash_alg_lookup(const char *name, const struct dmt_hash_alg **alg)
{
	char buf[64];
	size_t i, len;

	init();
	if (!name)
		return -ENOENT;
	len = strlen(name);
	/* cryptsetup spells hmac(x) as hmac-x */
	if (!strncasecmp(name, "hmac-", 5) && len + 2 < sizeof(buf)) {
		snprintf(buf, sizeof(buf), "hmac(%s)", name + 5);
		name = buf;
	}
	for (i = 0; i < NALGS; i++) {
		if (strcasecmp(algs[i].name, name) || !alg_usable(&algs[i]))
			continue;
		*alg = &algs[i];
		return 0;
	}
	return -ENOENT;
}

const char *dmt_hash_alg_name(const struct dmt_hash_alg *alg)
{
	return alg->name;
}

size_t dmt_hash_alg_digest_size(const struct dmt_hash_alg *alg)
{
	return alg->digest_size;
}

bool dmt_hash_alg_needs_key(const struct dmt_hash_alg *alg)
{
	return alg->hmac;
}

bool dmt_hash_alg_takes_key(const struct dmt_hash_alg *alg)
{
	return alg->hmac || alg->kind == AK_CRC32C || alg->kind == AK_CRC32 ||
	       alg->kind == AK_XXH64;
}

size_t dmt_hash_alg_list(char *buf, size_t size)
{
	size_t i, len = 0;

	init();
	if (size)
		buf[0] = '\0';
	for (i = 0; i < NALGS; i++) {
		size_t n;

		if (!alg_usable(&algs[i]))
			continue;
		n = strlen(algs[i].name) + (len ? 2 : 0);
		if (size && len + n < size) {
			strcat(buf, len ? ", " : "");
			strcat(buf, algs[i].name);
		}
		len += n;
	}
	return len;
}

/* Key size the kernel's setkey accepts for seeded checksums. */
static int check_key(const struct dmt_hash_alg *a, const void *key,
		     size_t key_size, struct dmt_reason *r)
{
	if (key_size && !key)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_MISSING, "key", 0);
	if (a->hmac) {
		if (key)
			return 0;
		dmt_reason_set(r, -EINVAL, DMT_REASON_NEEDS_KEY, "alg", 0);
		if (r)
			r->name = a->name;
		return -EINVAL;
	}
	if (!key_size)
		return 0;
	if (a->kind == AK_CRC32C || a->kind == AK_CRC32) {
		if (key_size == 4)
			return 0;
		goto bad_size;
	}
	if (a->kind == AK_XXH64) {
		if (key_size == 8)
			return 0;
		goto bad_size;
	}
	dmt_reason_set(r, -EINVAL, DMT_REASON_UNSUPPORTED, "key", 0);
	if (r)
		r->name = a->name;
	return -EINVAL;
bad_size:
	if (r) {
		*r = (struct dmt_reason){ .code = DMT_REASON_KEY_SIZE,
					  .field = "key_size", .name = a->name,
					  .value = key_size };
		r->min = r->max = a->kind == AK_XXH64 ? 8 : 4;
	}
	return -EINVAL;
}

/* Which engine the spec forces for alg's primitive (NULL: the default). */
static int choose_engine(const struct dmt_hash_alg *a, const char *spec,
			 uint32_t cpu, const struct dmt_engine **out)
{
	struct dmt_engine_choice c;
	int rc = dmt_engine_choose(spec, cpu, &c, NULL, 0);

	*out = rc ? NULL : c.eng[alg_prim(a)];
	return rc;
}

static void fix_pointers(struct dmt_hasher *h)
{
	h->prefix = h->data + h->off_prefix;
	h->suffix = h->data + h->off_suffix;
	h->key = h->data + h->off_key;
	h->pads = h->data + h->off_pads;
	h->in_stage = h->data + h->off_in;
	h->out_stage = h->data + h->off_out;
}

static size_t align64(size_t v)
{
	return (v + 63) & ~(size_t)63;
}

static void set_fn(struct dmt_mb_fn *fn, const struct dmt_engine *e,
		   const struct dmt_hash_alg *a)
{
	memset(fn, 0, sizeof(*fn));
	if (!e) {
		fn->name = "openssl";
		fn->lanes = 1;
	} else if (a->kind == AK_SHA512) {
		fn->name = e->name;
		fn->lanes = e->s512->lanes;
		fn->f512 = e->s512->blocks;
	} else {
		fn->name = e->name;
		fn->lanes = e->s256->lanes;
		fn->f256 = e->s256->blocks;
	}
}

/* Remainder plan, see dmt_default_plan() (lib/common/dispatch.c). */
static void make_picks(struct dmt_hasher *h, const struct dmt_plan *p)
{
	double best[DMT_MB_MAX_LANES + 1], cost[DMT_PLAN_MAX];
	unsigned int r, i;

	for (i = 0; i < h->nfn; i++)
		cost[i] = (double)h->fn[i].lanes /
			  (p->speed[i] ? p->speed[i] : 1);
	best[0] = 0;
	h->pick[0] = 0;
	for (r = 1; r < h->fn[0].lanes; r++) {
		best[r] = -1;
		for (i = 0; i < h->nfn; i++) {
			unsigned int m = r < h->fn[i].lanes ? r :
					 h->fn[i].lanes;
			double c = cost[i] + best[r - m];

			if (best[r] < 0 || c < best[r]) {
				best[r] = c;
				h->pick[r] = (uint8_t)i;
			}
		}
	}
}

/* Key material for HMAC: the key, hashed first when longer than a block. */
static int hmac_pads(struct dmt_hasher *h, const EVP_MD *md, size_t bs,
		     const uint8_t *key, size_t key_size)
{
	uint8_t kh[EVP_MAX_MD_SIZE];
	unsigned int khlen;
	size_t i;

	if (key_size > bs) {
		if (!EVP_Digest(key, key_size, kh, &khlen, md, NULL))
			return -ENOMEM;
		key = kh;
		key_size = khlen;
	}
	memset(h->pads, 0, 2 * bs);
	memcpy(h->pads, key, key_size);
	memcpy(h->pads + bs, key, key_size);
	for (i = 0; i < bs; i++) {
		h->pads[i] ^= 0x36;
		h->pads[bs + i] ^= 0x5c;
	}
	return 0;
}

static int prepare_mb(struct dmt_hasher *h)
{
	const struct dmt_hash_alg *a = h->alg;
	bool wide = a->kind == AK_SHA512;
	size_t bs = wide ? 128 : 64, ptot = h->prefix_size;
	uint8_t *pbuf = h->prefix;
	int rc = 0;

	if (a->hmac) {
		/* inner prefix = ipad block || prefix */
		ptot += bs;
		pbuf = malloc(ptot);
		if (!pbuf)
			return -ENOMEM;
		memcpy(pbuf, h->pads, bs);
		memcpy(pbuf + bs, h->prefix, h->prefix_size);
	}
	dmt_mb_pass_prepare(&h->inner, a->iv, pbuf, ptot, h->suffix,
			    h->suffix_size, h->in_stage, h->width);
	if (a->hmac) {
		dmt_mb_pass_prepare(&h->outer, a->iv, h->pads + bs, bs, NULL,
				    0, h->out_stage, h->width);
		free(pbuf);
	}
	return rc;
}

/*
 * OpenSSL path: contexts holding the state after [ipad ||] prefix and after
 * opad, copied into the work context per message (OpenSSL 3.0 has no way
 * to reuse a context without re-creating its provider state, so this is
 * the cheapest: the prefix and pad blocks are never re-hashed).
 */
static int evp_templates(struct dmt_hasher *h)
{
	h->ctx = EVP_MD_CTX_new();
	h->tin = EVP_MD_CTX_new();
	if (!h->ctx || !h->tin ||
	    !EVP_DigestInit_ex2(h->tin, h->md, NULL) ||
	    (h->alg->hmac && !EVP_DigestUpdate(h->tin, h->pads, h->evp_bs)) ||
	    !EVP_DigestUpdate(h->tin, h->prefix, h->prefix_size))
		return -ENOMEM;
	if (!h->alg->hmac)
		return 0;
	h->tout = EVP_MD_CTX_new();
	if (!h->tout || !EVP_DigestInit_ex2(h->tout, h->md, NULL) ||
	    !EVP_DigestUpdate(h->tout, h->pads + h->evp_bs, h->evp_bs))
		return -ENOMEM;
	return 0;
}

static int hasher_setup(struct dmt_hasher *h, const struct dmt_hasher_params *p,
			const struct dmt_engine *e)
{
	const struct dmt_hash_alg *a = h->alg;
	uint64_t seed = 0;
	size_t i;
	int rc;

	if (p->prefix_size)
		memcpy(h->prefix, p->prefix, p->prefix_size);
	if (p->suffix_size)
		memcpy(h->suffix, p->suffix, p->suffix_size);
	if (p->key_size)
		memcpy(h->key, p->key, p->key_size);
	if (a->hmac) {
		rc = hmac_pads(h, h->md, h->evp_bs, h->key, h->key_size);
		if (rc)
			return rc;
	}
	if (h->need_ctx) {
		rc = evp_templates(h);
		if (rc)
			return rc;
	}
	switch (h->path) {
	case PATH_MB:
		return prepare_mb(h);
	case PATH_EVP:
		return 0;
	case PATH_CRC:
		h->crc = a->kind == AK_CRC32 ? e->crc32 : e->crc32c;
		/* kernel: crc32c init ~0 and final xor; crc32 neither */
		h->crc_invert = a->kind == AK_CRC32C;
		h->crc0 = h->crc_invert ? 0xffffffffu : 0;
		if (h->key_size == 4)
			h->crc0 = (uint32_t)h->key[0] |
				  (uint32_t)h->key[1] << 8 |
				  (uint32_t)h->key[2] << 16 |
				  (uint32_t)h->key[3] << 24;
		h->crc0 = h->crc(h->crc0, h->prefix, h->prefix_size);
		return 0;
	case PATH_XXH:
		for (i = h->key_size; i-- > 0;)
			seed = seed << 8 | h->key[i];
		if (XXH64_reset(&h->xxh0, seed) == XXH_ERROR ||
		    XXH64_update(&h->xxh0, h->prefix, h->prefix_size) ==
		    XXH_ERROR)
			return -EINVAL;
		return 0;
	}
	return 0;
}

static int check_params(const struct dmt_hasher_params *p,
			const struct dmt_hash_alg **a, struct dmt_reason *r)
{
	int rc = DMT_CHECK_RESERVED(p, r);

	if (rc)
		return rc;
	rc = dmt_hash_alg_lookup(p->alg, a);
	if (rc) {
		dmt_reason_set(r, rc, DMT_REASON_UNKNOWN_ALG, "alg", 0);
		if (r)
			r->name = p->alg;
		return rc;
	}
	if (p->header_size > 64)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_TOO_LARGE,
				      "header_size", p->header_size);
	if (p->prefix_size && !p->prefix)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_MISSING, "prefix",
				      0);
	if (p->suffix_size && !p->suffix)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_MISSING, "suffix",
				      0);
	if (p->prefix_size > (1u << 30))
		return dmt_reason_set(r, -EINVAL, DMT_REASON_TOO_LARGE,
				      "prefix_size", p->prefix_size);
	if (p->suffix_size > (1u << 30))
		return dmt_reason_set(r, -EINVAL, DMT_REASON_TOO_LARGE,
				      "suffix_size", p->suffix_size);
	if (p->key_size > (1u << 30))
		return dmt_reason_set(r, -EINVAL, DMT_REASON_TOO_LARGE,
				      "key_size", p->key_size);
	if (p->msg_size > ((size_t)1 << 60))
		return dmt_reason_set(r, -EINVAL, DMT_REASON_TOO_LARGE,
				      "msg_size", p->msg_size);
	return check_key(*a, p->key, p->key_size, r);
}

/* Staging sizes of a hasher, besides prefix, suffix and key. */
struct hasher_sizes {
	size_t pads, in, out;
};

/* SHA-2 on block functions: the plan, its lanes, the staging it needs. */
static void setup_mb(struct dmt_hasher *t, const struct dmt_plan *pl,
		     const struct dmt_hasher_params *p, struct hasher_sizes *sz)
{
	const struct dmt_hash_alg *a = t->alg;
	bool wide = a->kind == AK_SHA512;
	size_t bs = wide ? 128 : 64;
	unsigned int i;

	t->nfn = pl->n;
	for (i = 0; i < pl->n; i++) {
		set_fn(&t->fn[i], pl->eng[i], a);
		if (t->fn[i].lanes > t->width)
			t->width = t->fn[i].lanes;
		/* an OpenSSL fallback in the plan needs the EVP context */
		if (!t->fn[i].f256 && !t->fn[i].f512)
			t->need_ctx = true;
	}
	make_picks(t, pl);
	t->engine_name = t->fn[0].name;
	t->hmac_batch = a->hmac ? pl->eng[0]->hmac_batch : NULL;
	sz->in = t->width *
		 dmt_mb_pass_plan(&t->inner, wide,
				  p->prefix_size + (a->hmac ? bs : 0),
				  p->header_size, p->msg_size, p->suffix_size);
	if (a->hmac) {
		t->evp_bs = bs;
		sz->out = t->width * dmt_mb_pass_plan(&t->outer, wide, bs, 0,
						      a->digest_size, 0);
		sz->pads = 2 * bs;
	}
}

/*
 * Chooses the path and backend of alg (e: the forced engine or NULL) and
 * fills in what the hasher needs besides its buffers.
 */
static int setup_path(struct dmt_hasher *t, const struct dmt_engine **e,
		      uint32_t cpu, const struct dmt_hasher_params *p,
		      struct hasher_sizes *sz)
{
	const struct dmt_hash_alg *a = t->alg;
	struct dmt_plan pl = { { NULL }, { 0 }, 0 };

	switch (a->kind) {
	case AK_SHA256:
	case AK_SHA512:
		if (*e && (*e)->kind == DMT_EK_MB) {
			pl.eng[0] = *e;
			pl.n = 1;
		} else if (!*e) {
			dmt_default_plan(alg_prim(a), t->md != NULL, cpu, &pl);
		}
		/* a plan of just the OpenSSL fallback is the EVP path */
		if (pl.n && pl.eng[0]) {
			t->path = PATH_MB;
			setup_mb(t, &pl, p, sz);
			return 0;
		}
		break;
	case AK_EVP:
		break;
	case AK_XXH64:
	case AK_CRC32C:
	case AK_CRC32:
		t->path = a->kind == AK_XXH64 ? PATH_XXH : PATH_CRC;
		if (!*e)
			*e = dmt_engine_default(alg_prim(a), cpu);
		t->engine_name = (*e)->name;
		return 0;
	}
	t->path = PATH_EVP;
	t->need_ctx = true;
	if (!t->md)
		return -ENOTSUP;
	t->engine_name = "openssl";
	if (a->hmac) {
		t->evp_bs = (size_t)EVP_MD_get_block_size(t->md);
		sz->pads = 2 * t->evp_bs;
	}
	return 0;
}

/* Offsets of the buffers in the hasher's data[]; returns its size. */
static size_t layout(struct dmt_hasher *t, const struct hasher_sizes *sz)
{
	size_t off = 0;

	t->off_prefix = off;
	off += align64(t->prefix_size);
	t->off_suffix = off;
	off += align64(t->suffix_size);
	t->off_key = off;
	off += align64(t->key_size);
	t->off_pads = off;
	off += align64(sz->pads);
	t->off_in = off;
	off += align64(sz->in);
	t->off_out = off;
	off += align64(sz->out);
	return sizeof(*t) + off;
}

void dmt_hasher_params_init(struct dmt_hasher_params *p)
{
	memset(p, 0, sizeof(*p));
}

int dmt_hasher_new(const struct dmt_hasher_params *p, struct dmt_hasher **out,
		   struct dmt_reason *r)
{
	const struct dmt_hash_alg *a;
	const struct dmt_engine *e;
	struct dmt_hasher tmp, *h = NULL;
	struct hasher_sizes sz = { 0, 0, 0 };
	uint32_t cpu = dmt_cpu_features();
	int rc;

	*out = NULL;
	rc = check_params(p, &a, r);
	if (rc)
		goto out;
	rc = choose_engine(a, p->engine, cpu, &e);
	if (rc) {
		dmt_reason_set(r, rc, rc == -ENOTSUP ? DMT_REASON_UNSUPPORTED :
			       DMT_REASON_BAD_VALUE, "engine", 0);
		if (r)
			r->name = p->engine;
		goto out;
	}

	memset(&tmp, 0, sizeof(tmp));
	tmp.alg = a;
	tmp.ds = a->digest_size;
	tmp.hs = p->header_size;
	tmp.ms = p->msg_size;
	tmp.prefix_size = p->prefix_size;
	tmp.suffix_size = p->suffix_size;
	tmp.key_size = p->key_size;
	tmp.width = 1;
	tmp.md = alg_md[alg_index(a)];
	rc = setup_path(&tmp, &e, cpu, p, &sz);
	if (rc) {
		dmt_reason_set(r, rc, DMT_REASON_UNSUPPORTED, "alg", 0);
		if (r)
			r->name = a->name;
		goto out;
	}
	tmp.alloc_size = layout(&tmp, &sz);

	rc = -ENOMEM;
	h = aligned_alloc(64, align64(tmp.alloc_size));
	if (!h)
		goto out;
	memcpy(h, &tmp, sizeof(tmp));
	fix_pointers(h);
	rc = hasher_setup(h, p, e);
	if (rc)
		goto out;
	*out = h;
	h = NULL;
out:
	dmt_hasher_free(h);
	return rc;
}

int dmt_hasher_clone(const struct dmt_hasher *h, struct dmt_hasher **out)
{
	struct dmt_hasher *c;
	int rc = -ENOMEM;

	*out = NULL;
	c = aligned_alloc(64, align64(h->alloc_size));
	if (!c)
		goto out;
	memcpy(c, h, h->alloc_size);
	fix_pointers(c);
	c->ctx = c->tin = c->tout = NULL;
	if (h->need_ctx) {
		c->ctx = EVP_MD_CTX_new();
		c->tin = EVP_MD_CTX_new();
		c->tout = h->tout ? EVP_MD_CTX_new() : NULL;
		if (!c->ctx || !c->tin || (h->tout && !c->tout) ||
		    !EVP_MD_CTX_copy_ex(c->tin, h->tin) ||
		    (h->tout && !EVP_MD_CTX_copy_ex(c->tout, h->tout)))
			goto out;
	}
	*out = c;
	c = NULL;
	rc = 0;
out:
	dmt_hasher_free(c);
	return rc;
}

void dmt_hasher_free(struct dmt_hasher *h)
{
	if (!h)
		return;
	EVP_MD_CTX_free(h->ctx);
	EVP_MD_CTX_free(h->tin);
	EVP_MD_CTX_free(h->tout);
	/* keys and pads live in the block: do not leave them in the heap */
	OPENSSL_cleanse(h, h->alloc_size);
	free(h);
}

size_t dmt_hasher_digest_size(const struct dmt_hasher *h)
{
	return h->ds;
}

unsigned int dmt_hasher_batch_width(const struct dmt_hasher *h)
{
	return h->path == PATH_MB ? h->fn[0].lanes : 1;
}

const char *dmt_hasher_engine(const struct dmt_hasher *h)
{
	return h->engine_name;
}

/* One message through OpenSSL, from the prepared contexts. */
static int evp_one(struct dmt_hasher *h, const uint8_t *msg,
		   const uint8_t *hdr, uint8_t *out)
{
	uint8_t md[EVP_MAX_MD_SIZE];
	unsigned int len;
	EVP_MD_CTX *c = h->ctx;

	if (!EVP_MD_CTX_copy_ex(c, h->tin) ||
	    !EVP_DigestUpdate(c, hdr, h->hs) ||
	    !EVP_DigestUpdate(c, msg, h->ms) ||
	    !EVP_DigestUpdate(c, h->suffix, h->suffix_size) ||
	    !EVP_DigestFinal_ex(c, md, &len))
		return -EIO;
	if (h->tout &&
	    (!EVP_MD_CTX_copy_ex(c, h->tout) ||
	     !EVP_DigestUpdate(c, md, len) ||
	     !EVP_DigestFinal_ex(c, md, &len)))
		return -EIO;
	memcpy(out, md, h->ds);
	return 0;
}

static void crc_one(const struct dmt_hasher *h, const uint8_t *msg,
		    const uint8_t *hdr, uint8_t *out)
{
	uint32_t c = h->crc0;

	c = h->crc(c, hdr, h->hs);
	c = h->crc(c, msg, h->ms);
	c = h->crc(c, h->suffix, h->suffix_size);
	if (h->crc_invert)
		c = ~c;
	out[0] = (uint8_t)c;
	out[1] = (uint8_t)(c >> 8);
	out[2] = (uint8_t)(c >> 16);
	out[3] = (uint8_t)(c >> 24);
}

static void xxh_one(const struct dmt_hasher *h, const uint8_t *msg,
		    const uint8_t *hdr, uint8_t *out)
{
	XXH64_state_t s = h->xxh0;
	uint64_t v;
	int i;

	XXH64_update(&s, hdr, h->hs);
	XXH64_update(&s, msg, h->ms);
	XXH64_update(&s, h->suffix, h->suffix_size);
	v = XXH64_digest(&s);
	for (i = 0; i < 8; i++)
		out[i] = (uint8_t)(v >> (8 * i));
}

static int digest_mb(struct dmt_hasher *h, size_t n,
		     const uint8_t *const *msgs, const uint8_t *base,
		     size_t stride, const uint8_t *headers, uint8_t *out)
{
	const uint8_t *ptr[DMT_MB_MAX_LANES];
	size_t i = 0, j, m;
	int rc;

	while (i < n) {
		size_t r = n - i;
		const struct dmt_mb_fn *fn =
			&h->fn[r >= h->fn[0].lanes ? 0 : h->pick[r]];
		const uint8_t *hd = headers ? headers + i * h->hs : NULL;

		m = r < fn->lanes ? r : fn->lanes;
		for (j = 0; j < m; j++)
			ptr[j] = msgs ? msgs[i + j] : base + (i + j) * stride;
		if (fn->f256 || fn->f512) {
			dmt_mb_run(fn, &h->inner, h->in_stage,
				   h->alg->hmac ? &h->outer : NULL,
				   h->out_stage, m, ptr, hd, h->ds,
				   out + i * h->ds);
		} else {
			for (j = 0; j < m; j++) {
				rc = evp_one(h, ptr[j],
					     hd ? hd + j * h->hs : NULL,
					     out + (i + j) * h->ds);
				if (rc)
					return rc;
			}
		}
		i += m;
	}
	return 0;
}

/* Platform HMAC (CPACF KMAC), 64 messages per call for strided input. */
static int digest_hmac_hook(struct dmt_hasher *h, size_t n,
			    const uint8_t *const *msgs, const uint8_t *base,
			    size_t stride, const uint8_t *headers,
			    uint8_t *out)
{
	const uint8_t *ptr[64];
	struct dmt_hmac_job job = {
		.hash = h->alg->name + 5,	/* "hmac(" */
		.key = h->key, .key_size = h->key_size,
		.prefix = h->prefix, .prefix_size = h->prefix_size,
		.suffix = h->suffix, .suffix_size = h->suffix_size,
		.header_size = h->hs, .msg_size = h->ms,
		.digest_size = h->ds,
	};
	char hash[16];
	size_t i, j, m;
	int rc = 0;

	/* "hmac(sha256)" -> "sha256" */
	snprintf(hash, sizeof(hash), "%.*s", (int)strlen(job.hash) - 1,
		 job.hash);
	job.hash = hash;
	if (msgs)
		return h->hmac_batch(&job, n, msgs, headers, out);
	for (i = 0; i < n && !rc; i += m) {
		m = n - i < 64 ? n - i : 64;
		for (j = 0; j < m; j++)
			ptr[j] = base + (i + j) * stride;
		rc = h->hmac_batch(&job, m, ptr,
				   headers ? headers + i * h->hs : NULL,
				   out + i * h->ds);
	}
	return rc;
}

static int digest_any(struct dmt_hasher *h, size_t n,
		      const uint8_t *const *msgs, const uint8_t *base,
		      size_t stride, const uint8_t *headers, uint8_t *out)
{
	size_t i;
	int rc;

	if (h->hs && !headers && n)
		return -EINVAL;
	switch (h->path) {
	case PATH_MB:
		if (h->hmac_batch) {
			rc = digest_hmac_hook(h, n, msgs, base, stride,
					      headers, out);
			if (rc != -ENOTSUP)
				return rc;
			h->hmac_batch = NULL;
		}
		return digest_mb(h, n, msgs, base, stride, headers, out);
	case PATH_EVP:
		for (i = 0; i < n; i++) {
			rc = evp_one(h, msgs ? msgs[i] : base + i * stride,
				     headers ? headers + i * h->hs : NULL,
				     out + i * h->ds);
			if (rc)
				return rc;
		}
		return 0;
	case PATH_CRC:
		for (i = 0; i < n; i++)
			crc_one(h, msgs ? msgs[i] : base + i * stride,
				headers ? headers + i * h->hs : NULL,
				out + i * h->ds);
		return 0;
	case PATH_XXH:
		for (i = 0; i < n; i++)
			xxh_one(h, msgs ? msgs[i] : base + i * stride,
				headers ? headers + i * h->hs : NULL,
				out + i * h->ds);
		return 0;
	}
	return -EINVAL;
}

int dmt_hasher_digest(struct dmt_hasher *h, size_t n,
		      const uint8_t *const *msgs, const uint8_t *headers,
		      uint8_t *out)
{
	return digest_any(h, n, msgs, NULL, 0, headers, out);
}

int dmt_hasher_digest_strided(struct dmt_hasher *h, size_t n,
			      const uint8_t *base, size_t stride,
			      const uint8_t *headers, uint8_t *out)
{
	return digest_any(h, n, NULL, base, stride, headers, out);
}

int dmt_hash_oneshot(const char *alg, const void *key, size_t key_size,
		     const void *msg, size_t len, uint8_t *out,
		     size_t *digest_size)
{
	struct dmt_hasher_params p = {
		.alg = alg, .key = key, .key_size = key_size, .msg_size = len,
	};
	struct dmt_hasher *h;
	const uint8_t *m = msg ? msg : (const uint8_t *)"";
	int rc;

	rc = dmt_hasher_new(&p, &h, NULL);
	if (rc)
		return rc;
	rc = dmt_hasher_digest(h, 1, &m, NULL, out);
	if (!rc && digest_size)
		*digest_size = h->ds;
	dmt_hasher_free(h);
	return rc;
}
