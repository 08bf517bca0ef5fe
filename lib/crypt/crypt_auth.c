// SPDX-License-Identifier: MIT
/*
 * The authenticated dm-crypt sector engine (formats.md, authenticated
 * dm-crypt): the six cipher/integrity pairs, and many sectors per call on
 * every core.  Each worker owns its prepared state, keyed once at open:
 * an OpenSSL context (XTS, GCM, ChaCha20-Poly1305; per sector only the IV
 * is set; XTS and AES-GCM go through our VAES code instead where the CPU
 * has it, XTS a whole range per call with the random IVs read from the
 * tags as the tweaks) and for hmac-* a clone of the batched hasher (inner
 * and outer HMAC states prepared once), which MACs a whole range of
 * sectors in one call with "le64 sector || IV" as each message's header.
 */
#include <dmt/crypt_auth.h>

#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include <dmt/crypt.h>
#include "lib/common/reserved.h"
#include "lib/crypt/crypt_auth_priv.h"
#include "lib/crypt/crypt_priv.h"
#include <dmt/hash.h>
#include <dmt/threads.h>

#include "lib/crypt/aes_arch.h"
#include "lib/common/dispatch.h"

/* Sectors per parallel chunk (and per random-IV call of a worker). */
#define CHUNK_SECTORS 64
#define MAX_IV 16
#define AAD_MAX (8 + MAX_IV)

static const struct dmt_auth_spec specs[] = {
	{ "aes-xts-random", "hmac-sha256", "hmac(sha256)",
	  "capi:authenc(hmac(sha256),xts(aes))-random", DMT_AUTH_HMAC_XTS,
	  "hmac(sha256)", 16, 32, 48, 64, 32 },
	{ "aes-xts-random", "hmac-sha512", "hmac(sha512)",
	  "capi:authenc(hmac(sha512),xts(aes))-random", DMT_AUTH_HMAC_XTS,
	  "hmac(sha512)", 16, 64, 80, 64, 64 },
	{ "aes-xts-random", "hmac-sha1", "hmac(sha1)",
	  "capi:authenc(hmac(sha1),xts(aes))-random", DMT_AUTH_HMAC_XTS,
	  "hmac(sha1)", 16, 20, 36, 64, 20 },
	{ "aes-gcm-random", "aead", "aead", "capi:gcm(aes)-random",
	  DMT_AUTH_GCM, NULL, 12, 16, 28, 32, 0 },
	{ "chacha20-random", "poly1305", "poly1305",
	  "capi:rfc7539(chacha20,poly1305)-random", DMT_AUTH_CHACHAPOLY, NULL,
	  12, 16, 28, 32, 0 },
	{ "aegis128-random", "aead", "aead", "capi:aegis128-random",
	  DMT_AUTH_AEGIS128, NULL, 16, 16, 32, 16, 0 },
};
#define N_SPECS (sizeof(specs) / sizeof(specs[0]))

const char *dmt_auth_supported(void)
{
	return "aes-xts-random+hmac-sha256, aes-xts-random+hmac-sha512, "
	       "aes-xts-random+hmac-sha1, aes-gcm-random+aead, "
	       "chacha20-random+poly1305, aegis128-random+aead";
}

static bool key_size_ok(const struct dmt_auth_spec *s, size_t k)
{
	switch (s->kind) {
	case DMT_AUTH_HMAC_XTS:
		return k == 32 || k == 64;
	case DMT_AUTH_GCM:
		return k == 16 || k == 24 || k == 32;
	case DMT_AUTH_CHACHAPOLY:
		return k == 32;
	default:
		return k == 16;
	}
}

static int lookup(const char *cipher, const char *integ, bool luks2_name,
		  size_t key_size, struct dmt_auth_spec *s,
		  struct dmt_reason *r)
{
	for (size_t i = 0; cipher && integ && i < N_SPECS; i++) {
		const struct dmt_auth_spec *c = &specs[i];

		if (strcmp(cipher, c->cipher) ||
		    (strcmp(integ, c->luks2_type) &&
		     (luks2_name || strcmp(integ, c->integrity))))
			continue;
		*s = *c;
		if (key_size)
			s->cipher_key_size = key_size;
		if (!key_size_ok(s, s->cipher_key_size))
			return dmt_reason_set(r, -EINVAL,
					      DMT_REASON_AUTH_KEY_SIZE,
					      "key_size", s->cipher_key_size);
		return 0;
	}
	dmt_reason_set(r, -EINVAL, DMT_REASON_AUTH_COMBINATION, "integrity",
		       0);
	if (r)
		r->name = integ ? integ : cipher;
	return -EINVAL;
}

int dmt_auth_lookup(const char *cipher, const char *integrity,
		    size_t cipher_key_size, struct dmt_auth_spec *s,
		    struct dmt_reason *r)
{
	return lookup(cipher, integrity, false, cipher_key_size, s, r);
}

int dmt_auth_lookup_luks2(const char *cipher, const char *luks2_type,
			  size_t volume_key_size, struct dmt_auth_spec *s,
			  struct dmt_reason *r)
{
	size_t mac = 0;

	for (size_t i = 0; cipher && luks2_type && i < N_SPECS; i++)
		if (!strcmp(specs[i].luks2_type, luks2_type))
			mac = specs[i].mac_key_size;
	if (volume_key_size <= mac)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_AUTH_KEY_SIZE,
				      "key_size", volume_key_size);
	return lookup(cipher, luks2_type, true, volume_key_size - mac, s, r);
}

/* ---- engine ---- */

struct auth_worker {
	EVP_CIPHER_CTX *enc, *dec;
	struct dmt_hasher *mac;
	uint8_t *aad;			/* CHUNK_SECTORS * (8 + iv) */
	uint8_t *macs;			/* CHUNK_SECTORS * digest */
	uint8_t *scratch;		/* one sector: verify-only output */
};

struct dmt_auth {
	struct dmt_auth_spec spec;
	unsigned int sector_size, threads;
	uint8_t aegis_key[16];
	struct dmt_xts_key *xk;		/* hmac-*: our VAES XTS, or NULL */
	struct dmt_gcm_key *gk;		/* gcm: our VAES GCM, or NULL */
	const struct dmt_aes_ops *aes;	/* the dispatcher's, with xk or gk */
	struct auth_worker *w;
};

static const EVP_CIPHER *evp_cipher(const struct dmt_auth_spec *s)
{
	switch (s->kind) {
	case DMT_AUTH_HMAC_XTS:
		return s->cipher_key_size == 32 ? EVP_aes_128_xts() :
						  EVP_aes_256_xts();
	case DMT_AUTH_GCM:
		return s->cipher_key_size == 16 ? EVP_aes_128_gcm() :
		       s->cipher_key_size == 24 ? EVP_aes_192_gcm() :
						  EVP_aes_256_gcm();
	case DMT_AUTH_CHACHAPOLY:
		return EVP_chacha20_poly1305();
	default:
		return NULL;
	}
}

static EVP_CIPHER_CTX *ctx_new(const struct dmt_auth_spec *s,
			       const uint8_t *key, int enc)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	const EVP_CIPHER *ci = evp_cipher(s);

	if (!c || !EVP_CipherInit_ex(c, ci, NULL, NULL, NULL, enc) ||
	    (s->kind != DMT_AUTH_HMAC_XTS &&
	     !EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_IVLEN, (int)s->iv_size,
				  NULL)) ||
	    !EVP_CipherInit_ex(c, NULL, NULL, key, NULL, enc)) {
		EVP_CIPHER_CTX_free(c);
		return NULL;
	}
	return c;
}

static int worker_init(struct dmt_auth *a, struct auth_worker *w,
		       const struct dmt_auth_params *p,
		       const struct dmt_hasher *proto)
{
	const struct dmt_auth_spec *s = &a->spec;

	w->aad = malloc(CHUNK_SECTORS * (8 + s->iv_size));
	w->scratch = malloc(p->sector_size);
	if (!w->aad || !w->scratch)
		return -ENOMEM;
	if (s->kind == DMT_AUTH_AEGIS128)
		return 0;
	w->enc = ctx_new(s, p->key, 1);
	w->dec = ctx_new(s, p->key, 0);
	if (!w->enc || !w->dec)
		return -EINVAL;
	if (!proto)
		return 0;
	w->macs = malloc(CHUNK_SECTORS * DMT_DIGEST_MAX);
	if (!w->macs)
		return -ENOMEM;
	return dmt_hasher_clone(proto, &w->mac);
}

static int make_hasher(const struct dmt_auth_params *p,
		       struct dmt_hasher **out)
{
	const struct dmt_auth_spec *s = p->spec;
	struct dmt_hasher_params hp = {
		.alg = s->mac_alg,
		.key = p->key + s->cipher_key_size,
		.key_size = s->mac_key_size,
		.header_size = 8 + s->iv_size,
		.msg_size = p->sector_size,
		.engine = p->engine,
	};

	return dmt_hasher_new(&hp, out, NULL);
}

/*
 * Our VAES code where the CPU has it, keyed once (secure memory): XTS
 * with the random IVs as tweaks, GCM with AES-128/256 (AES-192 stays with
 * OpenSSL).  Several times OpenSSL 3.0's per-sector EVP calls here: no
 * per-sector parameter machinery, a range of sectors per XTS call, 32
 * blocks per GHASH reduction.
 */
static int own_keys(struct dmt_auth *a, const uint8_t *key,
		    const char *engine)
{
	const struct dmt_auth_spec *s = &a->spec;
	bool gcm = s->kind == DMT_AUTH_GCM;
	int ret;

	if (s->kind != DMT_AUTH_HMAC_XTS && !gcm)
		return 0;
	ret = dmt_aes_choose(engine, gcm ? DMT_PRIM_AES_GCM : DMT_PRIM_AES_XTS,
			     &a->aes);
	if (ret || !a->aes)
		return ret;
	if (!gcm) {
		a->xk = dmt_secure_alloc(sizeof(*a->xk));
		if (!a->xk)
			return -ENOMEM;
		a->aes->xts_setkey(a->xk, key, s->cipher_key_size);
	} else if (s->cipher_key_size != 24) {
		a->gk = dmt_secure_alloc(sizeof(*a->gk));
		if (!a->gk)
			return -ENOMEM;
		a->aes->gcm_setkey(a->gk, key, s->cipher_key_size);
	}
	return 0;
}

void dmt_auth_params_init(struct dmt_auth_params *p)
{
	*p = (struct dmt_auth_params){0};
}

int dmt_auth_new(const struct dmt_auth_params *p, struct dmt_auth **out,
		 struct dmt_reason *r)
{
	const struct dmt_auth_spec *s = p->spec;
	struct dmt_hasher *proto = NULL;
	struct dmt_auth *a;
	int ret = 0;

	*out = NULL;
	ret = DMT_CHECK_RESERVED(p, r);
	if (ret)
		return ret;
	if (p->key_size != s->cipher_key_size + s->mac_key_size)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_AUTH_KEY_SIZE,
				      "key_size", p->key_size);
	if (p->sector_size < 512 || p->sector_size > 4096 ||
	    (p->sector_size & (p->sector_size - 1)))
		return dmt_reason_set(r, -EINVAL, DMT_REASON_BAD_VALUE,
				      "sector_size", p->sector_size);
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->spec = *s;
	a->sector_size = p->sector_size;
	a->threads = p->threads ? p->threads : dmt_default_threads();
	a->w = calloc(a->threads, sizeof(*a->w));
	if (s->kind == DMT_AUTH_AEGIS128)
		memcpy(a->aegis_key, p->key, 16);
	if (!a->w)
		ret = -ENOMEM;
	if (!ret && s->mac_alg)
		ret = make_hasher(p, &proto);
	if (!ret)
		ret = own_keys(a, p->key, p->engine);
	for (unsigned int i = 0; !ret && i < a->threads; i++)
		ret = worker_init(a, &a->w[i], p, proto);
	dmt_hasher_free(proto);
	if (ret) {
		dmt_auth_free(a);
		return dmt_reason_set(r, ret, DMT_REASON_CRYPT_BACKEND,
				      "key", 0);
	}
	*out = a;
	return 0;
}

void dmt_auth_free(struct dmt_auth *a)
{
	if (!a)
		return;
	for (unsigned int i = 0; a->w && i < a->threads; i++) {
		EVP_CIPHER_CTX_free(a->w[i].enc);
		EVP_CIPHER_CTX_free(a->w[i].dec);
		dmt_hasher_free(a->w[i].mac);
		free(a->w[i].aad);
		if (a->w[i].scratch)
			OPENSSL_cleanse(a->w[i].scratch, a->sector_size);
		free(a->w[i].scratch);
		if (a->w[i].macs)
			OPENSSL_cleanse(a->w[i].macs,
					CHUNK_SECTORS * DMT_DIGEST_MAX);
		free(a->w[i].macs);
	}
	free(a->w);
	dmt_secure_free(a->xk);
	dmt_secure_free(a->gk);
	OPENSSL_cleanse(a, sizeof(*a));
	free(a);
}

const struct dmt_auth_spec *dmt_auth_get_spec(const struct dmt_auth *a)
{
	return &a->spec;
}

/* ---- per range ---- */

struct job {
	struct dmt_auth *a;
	uint64_t first;
	const uint8_t *in;
	uint8_t *out;
	uint8_t *tags;			/* encrypt: written */
	const uint8_t *ctags;		/* decrypt: read */
	uint8_t *bad;
	bool enc;
	uint64_t nbad;			/* under the parallel_for's lock: */
	int err;			/* each worker adds its own count */
};

/* AAD of sector i of the range: le64(512-byte number) || IV. */
static void fill_aad(const struct dmt_auth *a, uint8_t *aad, uint64_t sector,
		     const uint8_t *iv)
{
	uint64_t s512 = sector * (a->sector_size >> 9);

	for (int i = 0; i < 8; i++)
		aad[i] = (uint8_t)(s512 >> (8 * i));
	memcpy(aad + 8, iv, a->spec.iv_size);
}

/* One sector through an EVP AEAD (GCM, ChaCha20-Poly1305). */
static int evp_aead(EVP_CIPHER_CTX *c, bool enc, const uint8_t *aad,
		    size_t aad_len, const uint8_t *iv, const uint8_t *in,
		    uint8_t *out, size_t len, uint8_t *tag, size_t tag_len)
{
	int l;

	if (!EVP_CipherInit_ex(c, NULL, NULL, NULL, iv, enc) ||
	    !EVP_CipherUpdate(c, NULL, &l, aad, (int)aad_len) ||
	    !EVP_CipherUpdate(c, out, &l, in, (int)len))
		return -EIO;
	if (enc)
		return EVP_CipherFinal_ex(c, out + l, &l) &&
			       EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG,
						   (int)tag_len, tag) ?
			       0 :
			       -EIO;
	if (!EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, (int)tag_len, tag))
		return -EIO;
	return EVP_CipherFinal_ex(c, out + l, &l) ? 0 : -EBADMSG;
}

static int xts_sector(EVP_CIPHER_CTX *c, bool enc, const uint8_t *iv,
		      const uint8_t *in, uint8_t *out, size_t len)
{
	int l;

	return EVP_CipherInit_ex(c, NULL, NULL, NULL, iv, enc) &&
		       EVP_CipherUpdate(c, out, &l, in, (int)len) ?
		       0 :
		       -EIO;
}

/* HMAC-XTS: encrypt then MAC the ciphertexts in one batch; decrypt
 * checks the batch first, then deciphers. */
static int range_hmac(struct job *j, struct auth_worker *w, uint64_t b,
		      uint64_t e, uint64_t *nbad)
{
	const struct dmt_auth_spec *s = &j->a->spec;
	size_t ss = j->a->sector_size, n = (size_t)(e - b), dl = s->auth_tag_size;
	const uint8_t *ct = j->enc ? j->out + b * ss : j->in + b * ss;
	const uint8_t *tags = j->enc ? j->tags : j->ctags;
	int err = 0;

	if (j->enc && j->a->xk)
		j->a->aes->xts_crypt_tweaks(j->a->xk, true,
					  j->tags + b * s->tag_size + dl,
					  s->tag_size, n, j->in + b * ss,
					  j->out + b * ss, ss);
	for (size_t i = 0; j->enc && !j->a->xk && !err && i < n; i++)
		err = xts_sector(w->enc, true,
				 j->tags + (b + i) * s->tag_size + dl,
				 j->in + (b + i) * ss, j->out + (b + i) * ss,
				 ss);
	for (size_t i = 0; i < n; i++)
		fill_aad(j->a, w->aad + i * (8 + s->iv_size), j->first + b + i,
			 tags + (b + i) * s->tag_size + dl);
	if (!err)
		err = dmt_hasher_digest_strided(w->mac, n, ct, ss, w->aad,
						w->macs);
	for (size_t i = 0; !err && i < n; i++) {
		uint8_t *t = j->tags ? j->tags + (b + i) * s->tag_size : NULL;
		size_t dsz = dmt_hasher_digest_size(w->mac);
		bool bad;

		if (j->enc) {
			memcpy(t, w->macs + i * dsz, dl);
			continue;
		}
		bad = CRYPTO_memcmp(w->macs + i * dsz,
				    j->ctags + (b + i) * s->tag_size, dl) != 0;
		*nbad += bad;
		if (j->bad)
			j->bad[b + i] = bad;
		if (j->out && !j->a->xk)
			err = xts_sector(w->dec, false,
					 j->ctags + (b + i) * s->tag_size + dl,
					 j->in + (b + i) * ss,
					 j->out + (b + i) * ss, ss);
	}
	if (!err && !j->enc && j->out && j->a->xk)
		j->a->aes->xts_crypt_tweaks(j->a->xk, false,
					  j->ctags + b * s->tag_size + dl,
					  s->tag_size, n, j->in + b * ss,
					  j->out + b * ss, ss);
	return err;
}

static int aead_sector(struct job *j, struct auth_worker *w, uint64_t k,
		       uint8_t *scratch, uint64_t *nbad)
{
	const struct dmt_auth_spec *s = &j->a->spec;
	size_t ss = j->a->sector_size, dl = s->auth_tag_size;
	size_t al = 8 + s->iv_size;
	const uint8_t *tag = j->enc ? j->tags + k * s->tag_size :
				      j->ctags + k * s->tag_size;
	uint8_t *out = j->out ? j->out + k * ss : scratch;
	int err;

	fill_aad(j->a, w->aad, j->first + k, tag + dl);
	if (s->kind == DMT_AUTH_AEGIS128) {
		if (j->enc) {
			dmt_aegis128_encrypt(j->a->aegis_key, tag + dl, w->aad,
					     al, j->in + k * ss, out, ss,
					     j->tags + k * s->tag_size);
			return 0;
		}
		err = dmt_aegis128_decrypt(j->a->aegis_key, tag + dl, w->aad,
					   al, j->in + k * ss, out, ss, tag,
					   dl);
	} else if (j->a->gk) {
		uint8_t t[16];

		j->a->aes->gcm_crypt(j->a->gk, j->enc, tag + dl, w->aad, al,
				   j->in + k * ss, out, ss,
				   j->enc ? j->tags + k * s->tag_size : t);
		err = j->enc || !CRYPTO_memcmp(t, tag, dl) ? 0 : -EBADMSG;
	} else {
		err = evp_aead(j->enc ? w->enc : w->dec, j->enc, w->aad, al,
			       tag + dl, j->in + k * ss, out, ss,
			       (uint8_t *)tag, dl);
	}
	if (j->enc || (err && err != -EBADMSG))
		return err;
	*nbad += err == -EBADMSG;
	if (j->bad)
		j->bad[k] = err == -EBADMSG;
	return 0;
}

static int range_fn(void *ctx, unsigned int worker, uint64_t b, uint64_t e)
{
	struct job *j = ctx;
	struct auth_worker *w = &j->a->w[worker];
	const struct dmt_auth_spec *s = &j->a->spec;
	uint64_t nbad = 0;
	uint8_t iv[CHUNK_SECTORS * MAX_IV];
	int err = 0;

	if (j->enc) {
		/* fresh random IVs for the whole range, in one call */
		err = dmt_random_bytes(iv, (size_t)(e - b) * s->iv_size);
		for (uint64_t k = b; !err && k < e; k++)
			memcpy(j->tags + k * s->tag_size + s->auth_tag_size,
			       iv + (k - b) * s->iv_size, s->iv_size);
	}
	if (!err && s->kind == DMT_AUTH_HMAC_XTS)
		err = range_hmac(j, w, b, e, &nbad);
	for (uint64_t k = b; !err && s->kind != DMT_AUTH_HMAC_XTS && k < e; k++)
		err = aead_sector(j, w, k, w->scratch, &nbad);
	__atomic_add_fetch(&j->nbad, nbad, __ATOMIC_RELAXED);
	return err;
}

static int run(struct dmt_auth *a, struct job *j, size_t n)
{
	unsigned int threads = n >= 2 * CHUNK_SECTORS ? a->threads : 1;
	int err = dmt_parallel_for(threads, n, CHUNK_SECTORS, range_fn, j);

	return err ? err : (int)j->nbad;
}

int dmt_auth_encrypt(struct dmt_auth *a, uint64_t first, size_t n,
		     const void *in, void *out, uint8_t *tags)
{
	struct job j = { .a = a, .first = first, .in = in, .out = out,
			 .tags = tags, .enc = true };

	return run(a, &j, n);
}

int dmt_auth_decrypt(struct dmt_auth *a, uint64_t first, size_t n,
		     const void *in, void *out, const uint8_t *tags,
		     uint8_t *bad)
{
	struct job j = { .a = a, .first = first, .in = in, .out = out,
			 .ctags = tags, .bad = bad };

	return run(a, &j, n);
}
