// SPDX-License-Identifier: MIT
/*
 * The dm-crypt cipher engine (formats.md, dm-crypt): the four cipher specs
 * the kernel and OpenSSL share, IVs generated inside, many sectors per
 * call.  Every worker owns an encryption and a decryption context keyed
 * once at open; per sector only the IV is set (EVP_CipherInit_ex with
 * NULL cipher and key), so no key schedule and no allocation per sector.
 * ESSIV IVs are made a batch at a time with one ECB call.
 */
#include <dmt/crypt.h>
#include "lib/common/reserved.h"
#include "lib/crypt/crypt_priv.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include <dmt/reason.h>
#include <dmt/threads.h>

#include "lib/crypt/aes_arch.h"
#include "lib/common/dispatch.h"

#define IV_SIZE 16
/* Sectors whose IVs are made in one go (ESSIV: one ECB call). */
#define IV_BATCH 64
/* Bytes per parallel chunk, and below which a call stays on one thread. */
#define CHUNK_BYTES (256u << 10)
#define INLINE_BYTES (1u << 20)

static const struct dmt_crypt_cipher ciphers[] = {
	{ "aes-xts-plain64", DMT_CRYPT_XTS, DMT_CRYPT_IV_PLAIN64, 64 },
	{ "aes-xts-plain", DMT_CRYPT_XTS, DMT_CRYPT_IV_PLAIN, 64 },
	{ "aes-cbc-essiv:sha256", DMT_CRYPT_CBC, DMT_CRYPT_IV_ESSIV_SHA256,
	  32 },
	{ "aes-cbc-plain64", DMT_CRYPT_CBC, DMT_CRYPT_IV_PLAIN64, 32 },
};

const char *dmt_crypt_supported_ciphers(void)
{
	return "aes-xts-plain64, aes-xts-plain, aes-cbc-essiv:sha256, "
	       "aes-cbc-plain64";
}

int dmt_crypt_cipher_lookup(const char *spec, struct dmt_crypt_cipher *out,
			    struct dmt_reason *r)
{
	for (size_t i = 0; spec && i < sizeof(ciphers) / sizeof(ciphers[0]);
	     i++) {
		if (!strcmp(spec, ciphers[i].name)) {
			*out = ciphers[i];
			return 0;
		}
	}
	dmt_reason_set(r, -EINVAL, DMT_REASON_CRYPT_CIPHER, "cipher", 0);
	if (r)
		r->name = spec;
	return -EINVAL;
}

int dmt_crypt_check_key_size(const struct dmt_crypt_cipher *c,
			     size_t key_size, struct dmt_reason *r)
{
	bool ok = c->mode == DMT_CRYPT_XTS ?
			  key_size == 32 || key_size == 64 :
			  key_size == 16 || key_size == 24 || key_size == 32;

	if (ok)
		return 0;
	dmt_reason_set(r, -EINVAL, DMT_REASON_CRYPT_KEY_SIZE, "key_size",
		       key_size);
	if (r) {
		r->min = c->mode == DMT_CRYPT_XTS ? 32 : 16;
		r->max = c->mode == DMT_CRYPT_XTS ? 64 : 32;
	}
	return -EINVAL;
}

static const EVP_CIPHER *evp_for(const struct dmt_crypt_cipher *c,
				 size_t key_size)
{
	if (c->mode == DMT_CRYPT_XTS)
		return key_size == 32 ? EVP_aes_128_xts() : EVP_aes_256_xts();
	return key_size == 16 ? EVP_aes_128_cbc() :
	       key_size == 24 ? EVP_aes_192_cbc() : EVP_aes_256_cbc();
}

struct crypt_worker {
	EVP_CIPHER_CTX *enc, *dec, *essiv;
};

struct dmt_crypt {
	struct dmt_crypt_cipher spec;
	unsigned int sector_size;
	unsigned int shift;		/* log2(sector_size / 512) */
	bool iv_large_sectors;
	uint64_t iv_offset;
	unsigned int threads;
	struct crypt_worker *w;
	struct dmt_xts_key *xk;		/* our XTS (secure memory), or NULL */
	dmt_aes_sectors_fn own;		/* with xk: the dispatcher's choice */
};

const char *dmt_crypt_engine_name(const struct dmt_crypt *c)
{
	return c->xk ? "vaes" : "openssl";
}

unsigned int dmt_crypt_sector_size(const struct dmt_crypt *c)
{
	return c->sector_size;
}

static int keyed_ctx(EVP_CIPHER_CTX **out, const EVP_CIPHER *evp,
		     const uint8_t *key, int enc)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

	if (!ctx)
		return -ENOMEM;
	if (!EVP_CipherInit_ex(ctx, evp, NULL, key, NULL, enc) ||
	    !EVP_CIPHER_CTX_set_padding(ctx, 0)) {
		EVP_CIPHER_CTX_free(ctx);
		return -EINVAL;
	}
	*out = ctx;
	return 0;
}

/* Keys every worker's contexts; the ESSIV key is sha256(volume key). */
static int crypt_prepare(struct dmt_crypt *c, const uint8_t *key,
			 size_t key_size)
{
	const EVP_CIPHER *evp = evp_for(&c->spec, key_size);
	uint8_t *salt = NULL;
	int ret = 0;

	if (c->spec.ivgen == DMT_CRYPT_IV_ESSIV_SHA256) {
		salt = dmt_secure_alloc(32);
		if (!salt)
			return -ENOMEM;
		if (!EVP_Digest(key, key_size, salt, NULL, EVP_sha256(),
				NULL))
			ret = -EINVAL;
	}
	for (unsigned int i = 0; !ret && i < c->threads; i++) {
		ret = keyed_ctx(&c->w[i].enc, evp, key, 1);
		if (!ret)
			ret = keyed_ctx(&c->w[i].dec, evp, key, 0);
		if (!ret && salt)
			ret = keyed_ctx(&c->w[i].essiv, EVP_aes_256_ecb(), salt,
					1);
	}
	dmt_secure_free(salt);
	return ret;
}

static int check_geometry(const struct dmt_crypt_params *p,
			  struct dmt_reason *r)
{
	unsigned int ss = p->sector_size;

	if (ss < DMT_CRYPT_MIN_SECTOR || ss > DMT_CRYPT_MAX_SECTOR)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_OUT_OF_RANGE,
				      "sector_size", ss);
	if (ss & (ss - 1))
		return dmt_reason_set(r, -EINVAL, DMT_REASON_NOT_POWER_OF_2,
				      "sector_size", ss);
	if (p->iv_large_sectors && p->iv_offset % (ss / 512))
		return dmt_reason_set(r, -EINVAL, DMT_REASON_CRYPT_IV_OFFSET,
				      "iv_offset", p->iv_offset);
	return 0;
}

/*
 * Our own AES code where the dispatcher picks it for this mode (default:
 * VAES where the CPU has it; the params' engine spec may force
 * aes-xts=openssl or aes-cbc=openssl): XTS, and CBC with AES-128/256.
 */
static int own_aes(struct dmt_crypt *c, const struct dmt_crypt_params *p)
{
	bool xts = c->spec.mode == DMT_CRYPT_XTS;
	const struct dmt_aes_ops *ops;
	int ret = dmt_aes_choose(p->engine, xts ? DMT_PRIM_AES_XTS :
					      DMT_PRIM_AES_CBC, &ops);

	if (ret || !ops || (!xts && p->key_size == 24))
		return ret;
	c->xk = dmt_secure_alloc(sizeof(*c->xk));
	if (!c->xk)
		return -ENOMEM;
	(xts ? ops->xts_setkey : ops->cbc_setkey)(c->xk, p->key, p->key_size);
	c->own = xts ? ops->xts_crypt : ops->cbc_crypt;
	return 0;
}

void dmt_crypt_params_init(struct dmt_crypt_params *p)
{
	*p = (struct dmt_crypt_params){0};
}

int dmt_crypt_new(const struct dmt_crypt_params *p, struct dmt_crypt **out,
		  struct dmt_reason *r)
{
	struct dmt_crypt *c = NULL;
	int ret;

	*out = NULL;
	ret = DMT_CHECK_RESERVED(p, r);
	if (ret)
		return ret;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	ret = dmt_crypt_cipher_lookup(p->cipher, &c->spec, r);
	if (!ret)
		ret = dmt_crypt_check_key_size(&c->spec, p->key_size, r);
	if (!ret)
		ret = check_geometry(p, r);
	if (ret)
		goto out;
	c->sector_size = p->sector_size;
	c->shift = (unsigned int)__builtin_ctz(p->sector_size / 512);
	c->iv_large_sectors = p->iv_large_sectors;
	c->iv_offset = p->iv_offset;
	c->threads = p->threads ? p->threads : dmt_default_threads();
	c->w = calloc(c->threads, sizeof(*c->w));
	if (!c->w) {
		ret = -ENOMEM;
		goto out;
	}
	ret = crypt_prepare(c, p->key, p->key_size);
	if (!ret)
		ret = own_aes(c, p);
	if (ret == -EINVAL)
		dmt_reason_set(r, ret, DMT_REASON_CRYPT_BACKEND, "key", 0);
out:
	if (ret)
		dmt_crypt_free(c);
	else
		*out = c;
	return ret;
}

void dmt_crypt_free(struct dmt_crypt *c)
{
	if (!c)
		return;
	for (unsigned int i = 0; c->w && i < c->threads; i++) {
		/* EVP_CIPHER_CTX_free cleanses the key schedules */
		EVP_CIPHER_CTX_free(c->w[i].enc);
		EVP_CIPHER_CTX_free(c->w[i].dec);
		EVP_CIPHER_CTX_free(c->w[i].essiv);
	}
	free(c->w);
	dmt_secure_free(c->xk);
	free(c);
}

static inline uint64_t iv_sector(const struct dmt_crypt *c, uint64_t s)
{
	uint64_t v = (s << c->shift) + c->iv_offset;

	return c->iv_large_sectors ? v >> c->shift : v;
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* IVs of k (<= IV_BATCH) sectors into ivs[k * IV_SIZE]. */
static int make_ivs(const struct dmt_crypt *c, struct crypt_worker *w,
		    const uint64_t *list, uint64_t first, size_t k,
		    uint8_t *ivs)
{
	int len;

	memset(ivs, 0, k * IV_SIZE);
	for (size_t i = 0; i < k; i++) {
		uint64_t v = iv_sector(c, list ? list[i] : first + i);

		if (c->spec.ivgen == DMT_CRYPT_IV_PLAIN)
			v &= 0xffffffffu;
		put_le64(ivs + i * IV_SIZE, v);
	}
	if (c->spec.ivgen != DMT_CRYPT_IV_ESSIV_SHA256)
		return 0;
	if (!EVP_EncryptUpdate(w->essiv, ivs, &len, ivs, (int)(k * IV_SIZE)))
		return -EIO;
	return 0;
}

struct crypt_job {
	struct dmt_crypt *c;
	bool enc;
	uint64_t first;
	const uint64_t *list;
	const uint8_t *in;
	uint8_t *out;
};

static int crypt_range(void *arg, unsigned int worker, uint64_t begin,
		       uint64_t end)
{
	struct crypt_job *j = arg;
	struct dmt_crypt *c = j->c;
	struct crypt_worker *w = &c->w[worker];
	EVP_CIPHER_CTX *ctx = j->enc ? w->enc : w->dec;
	size_t ss = c->sector_size;
	uint8_t ivs[IV_BATCH * IV_SIZE];
	int len, ret = 0;

	for (uint64_t b = begin; !ret && b < end; b += IV_BATCH) {
		size_t k = end - b > IV_BATCH ? IV_BATCH : (size_t)(end - b);

		ret = make_ivs(c, w, j->list ? j->list + b : NULL,
			       j->first + b, k, ivs);
		if (!ret && c->xk)
			c->own(c->xk, j->enc, ivs, k, j->in + (size_t)b * ss,
			       j->out + (size_t)b * ss, ss);
		for (size_t i = 0; !ret && !c->xk && i < k; i++) {
			size_t off = (size_t)(b + i) * ss;

			if (!EVP_CipherInit_ex(ctx, NULL, NULL, NULL,
					       ivs + i * IV_SIZE, -1) ||
			    !EVP_CipherUpdate(ctx, j->out + off, &len,
					      j->in + off, (int)ss))
				ret = -EIO;
		}
	}
	return ret;
}

static int crypt_run(struct dmt_crypt *c, bool enc, uint64_t first,
		     const uint64_t *list, size_t n, const void *in, void *out)
{
	struct crypt_job j = { c, enc, first, list, in, out };
	uint64_t bytes = (uint64_t)n * c->sector_size;
	uint64_t chunk = CHUNK_BYTES / c->sector_size;
	unsigned int threads = bytes < INLINE_BYTES ? 1 : c->threads;

	if (!n)
		return 0;
	return dmt_parallel_for(threads, n, chunk, crypt_range, &j);
}

int dmt_crypt_encrypt(struct dmt_crypt *c, uint64_t first, size_t n,
		      const void *in, void *out)
{
	return crypt_run(c, true, first, NULL, n, in, out);
}

int dmt_crypt_decrypt(struct dmt_crypt *c, uint64_t first, size_t n,
		      const void *in, void *out)
{
	return crypt_run(c, false, first, NULL, n, in, out);
}

int dmt_crypt_encrypt_list(struct dmt_crypt *c, const uint64_t *sectors,
			   size_t n, const void *in, void *out)
{
	return crypt_run(c, true, 0, sectors, n, in, out);
}

int dmt_crypt_decrypt_list(struct dmt_crypt *c, const uint64_t *sectors,
			   size_t n, const void *in, void *out)
{
	return crypt_run(c, false, 0, sectors, n, in, out);
}
