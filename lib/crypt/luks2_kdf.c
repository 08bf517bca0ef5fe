// SPDX-License-Identifier: MIT
/*
 * LUKS2 key material (formats.md, LUKS2 keyslots): passphrase -> keyslot
 * key through PBKDF2 (OpenSSL) or Argon2i/Argon2id (libargon2, version
 * 0x13, no secret, no associated data), the anti-forensic split with the
 * hash diffuser, the pbkdf2 volume-key digest, and the keyslot area
 * cipher (512-byte sectors, IVs counted from the area's start).  The
 * costs for a target time are luks2_bench.c's.
 */
#include <errno.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include <dmt/crypt.h>
#include "lib/crypt/crypt_priv.h"
#include <dmt/reason.h>

#include "lib/crypt/luks2_priv.h"

/* A sysroot without libargon2 (cross builds) gets PBKDF2 only. */
#if __has_include(<argon2.h>) && !defined(DMT_NO_ARGON2)
#include <argon2.h>
#define HAVE_ARGON2 1
#endif

static int kdf_fail(struct dmt_reason *r, const char *why)
{
	dmt_reason_set(r, -EINVAL, DMT_REASON_LUKS2_KDF, "pbkdf", 0);
	if (r)
		r->name = why;
	return -EINVAL;
}

static int argon2_kdf(const struct dmt_luks2_pbkdf *kdf, const void *pass,
		      size_t pass_len, const uint8_t *salt, size_t salt_len,
		      uint8_t *key, size_t key_len, struct dmt_reason *r)
{
#ifdef HAVE_ARGON2
	argon2_type type = !strcmp(kdf->type, "argon2id") ? Argon2_id :
							    Argon2_i;
	int ret = argon2_hash(kdf->iterations, kdf->memory_kb, kdf->parallel,
			      pass, pass_len, salt, salt_len, key, key_len,
			      NULL, 0, type, ARGON2_VERSION_13);

	if (ret == ARGON2_MEMORY_ALLOCATION_ERROR)
		return dmt_reason_set(r, -ENOMEM, DMT_REASON_LUKS2_KDF,
				      "pbkdf", 0);
	if (ret != ARGON2_OK) {
		dmt_secure_wipe(key, key_len);
		return kdf_fail(r, argon2_error_message(ret));
	}
	return 0;
#else
	kdf_fail(r, "built without libargon2");
	return -EOPNOTSUPP;
#endif
}

int dmt_luks2_kdf(const struct dmt_luks2_pbkdf *kdf, const void *pass,
		  size_t pass_len, const uint8_t *salt, size_t salt_len,
		  uint8_t *key, size_t key_len, struct dmt_reason *r)
{
	if (!kdf->type)
		return kdf_fail(r, "no type");
	if (!strcmp(kdf->type, "pbkdf2")) {
		const EVP_MD *md =
			EVP_get_digestbyname(kdf->hash ? kdf->hash : "sha256");

		if (!md)
			return kdf_fail(r, "unknown hash");
		if (!kdf->iterations)
			return kdf_fail(r, "zero iterations");
		if (!PKCS5_PBKDF2_HMAC(pass_len ? pass : "", (int)pass_len,
				       salt, (int)salt_len,
				       (int)kdf->iterations, md, (int)key_len,
				       key))
			return kdf_fail(r, "pbkdf2 failed");
		return 0;
	}
	if (strcmp(kdf->type, "argon2id") && strcmp(kdf->type, "argon2i"))
		return kdf_fail(r, "unknown type");
	return argon2_kdf(kdf, pass, pass_len, salt, salt_len, key, key_len,
			  r);
}

/* ---- anti-forensic split ---- */

/* d = H(be32(i) || d_i) per digest-sized piece of the block, in place */
static int diffuse(EVP_MD_CTX *ctx, const EVP_MD *md, uint8_t *block,
		   size_t len)
{
	size_t dlen = (size_t)EVP_MD_get_size(md);
	uint8_t out[EVP_MAX_MD_SIZE];
	int ret = 0;

	for (size_t i = 0, off = 0; !ret && off < len; i++, off += dlen) {
		size_t n = len - off < dlen ? len - off : dlen;
		uint8_t be[4] = { (uint8_t)(i >> 24), (uint8_t)(i >> 16),
				  (uint8_t)(i >> 8), (uint8_t)i };

		if (!EVP_DigestInit_ex(ctx, md, NULL) ||
		    !EVP_DigestUpdate(ctx, be, 4) ||
		    !EVP_DigestUpdate(ctx, block + off, n) ||
		    !EVP_DigestFinal_ex(ctx, out, NULL))
			ret = -EINVAL;
		else
			memcpy(block + off, out, n);
	}
	dmt_secure_wipe(out, sizeof(out));
	return ret;
}

/*
 * The common loop: acc = 0; for each of the first stripes-1 blocks
 * acc = diffuse(acc ^ block); the last block is acc ^ key.  Split fills
 * the first blocks with random bytes and writes the last; merge reads
 * them all and recovers the key.
 */
static int af_run(uint8_t *stripes_buf, size_t key_len, unsigned int stripes,
		  const char *hash, uint8_t *key, bool split)
{
	const EVP_MD *md = EVP_get_digestbyname(hash ? hash : "sha256");
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	uint8_t *acc = dmt_secure_alloc(key_len);
	size_t last = (size_t)(stripes - 1) * key_len;
	int ret = md && ctx && acc && stripes ? 0 : -EINVAL;

	if (!ret && split)
		ret = dmt_random_bytes(stripes_buf, last);
	for (unsigned int i = 0; !ret && i + 1 < stripes; i++) {
		for (size_t j = 0; j < key_len; j++)
			acc[j] ^= stripes_buf[(size_t)i * key_len + j];
		ret = diffuse(ctx, md, acc, key_len);
	}
	for (size_t j = 0; !ret && j < key_len; j++) {
		if (split)
			stripes_buf[last + j] = acc[j] ^ key[j];
		else
			key[j] = acc[j] ^ stripes_buf[last + j];
	}
	dmt_secure_free(acc);
	EVP_MD_CTX_free(ctx);
	return ret;
}

int dmt_luks2_af_split(const uint8_t *key, size_t key_len, unsigned int stripes,
		       const char *hash, uint8_t *out)
{
	return af_run(out, key_len, stripes, hash, (uint8_t *)key, true);
}

int dmt_luks2_af_merge(const uint8_t *in, size_t key_len, unsigned int stripes,
		       const char *hash, uint8_t *key)
{
	return af_run((uint8_t *)in, key_len, stripes, hash, key, false);
}

size_t dmt_luks2_af_sectors_size(size_t key_len, unsigned int stripes)
{
	return (key_len * stripes + 511) / 512 * 512;
}

int luks2_digest_compute(const char *hash, uint32_t iterations,
			 const uint8_t *vk, size_t vk_len, const uint8_t *salt,
			 uint8_t *digest, size_t digest_len)
{
	const EVP_MD *md = EVP_get_digestbyname(hash);

	if (!md || !iterations ||
	    !PKCS5_PBKDF2_HMAC((const char *)vk, (int)vk_len, salt,
			       DMT_LUKS2_SALT_SIZE, (int)iterations, md,
			       (int)digest_len, digest))
		return -EINVAL;
	return 0;
}

/* The keyslot cipher over len bytes (whole 512-byte sectors) in place. */
int luks2_area_crypt(const char *cipher, const uint8_t *key, size_t key_len,
		     bool enc, uint8_t *buf, size_t len, struct dmt_reason *r)
{
	struct dmt_crypt_params p = { .cipher = cipher, .key = key,
				      .key_size = key_len, .sector_size = 512,
				      .threads = 1 };
	struct dmt_crypt *c;
	int ret = dmt_crypt_new(&p, &c, r);

	if (ret)
		return ret;
	ret = enc ? dmt_crypt_encrypt(c, 0, len / 512, buf, buf) :
		    dmt_crypt_decrypt(c, 0, len / 512, buf, buf);
	dmt_crypt_free(c);
	return ret;
}
