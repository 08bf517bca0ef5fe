// SPDX-License-Identifier: MIT
/*
 * Plain dm-crypt key from a passphrase, as cryptsetup 2.6.1 hashes it
 * (formats.md, plain mode): "HASH[:LEN]" or "plain[:LEN]"; round i feeds
 * i bytes 'A' and then the passphrase, rounds concatenate to the key size
 * (the hashalot convention), and the key bytes after LEN stay zero.
 */
#include <dmt/crypt.h>

#include <errno.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include <dmt/reason.h>

#define HASH_NAME_MAX 64

static int split_spec(const char *spec, char name[HASH_NAME_MAX],
		      size_t key_size, size_t *hashed, struct dmt_reason *r)
{
	const char *colon = strchr(spec, ':');
	size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
	char *end;

	if (!nlen || nlen >= HASH_NAME_MAX)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_BAD_VALUE, "hash",
				      0);
	memcpy(name, spec, nlen);
	name[nlen] = '\0';
	*hashed = key_size;
	if (!colon)
		return 0;
	errno = 0;
	*hashed = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_BAD_VALUE, "hash",
				      0);
	if (*hashed > key_size) {
		dmt_reason_set(r, -EINVAL, DMT_REASON_TOO_LARGE, "hash",
			       *hashed);
		if (r)
			r->max = key_size;
		return -EINVAL;
	}
	return 0;
}

static int hash_rounds(const EVP_MD *md, const void *pass, size_t pass_len,
		       uint8_t *key, size_t len)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	uint8_t digest[EVP_MAX_MD_SIZE];
	size_t dlen = (size_t)EVP_MD_get_size(md);
	int ret = ctx ? 0 : -ENOMEM;

	for (size_t round = 0; !ret && len; round++) {
		size_t take = len < dlen ? len : dlen;

		if (!EVP_DigestInit_ex(ctx, md, NULL))
			ret = -EINVAL;
		for (size_t i = 0; !ret && i < round; i++)
			if (!EVP_DigestUpdate(ctx, "A", 1))
				ret = -EINVAL;
		if (!ret && (!EVP_DigestUpdate(ctx, pass, pass_len) ||
			     !EVP_DigestFinal_ex(ctx, digest, NULL)))
			ret = -EINVAL;
		if (!ret) {
			memcpy(key, digest, take);
			key += take;
			len -= take;
		}
	}
	dmt_secure_wipe(digest, sizeof(digest));
	EVP_MD_CTX_free(ctx);
	return ret;
}

int dmt_crypt_plain_hash(const char *hash_spec, const void *pass,
			 size_t pass_len, uint8_t *key, size_t key_size,
			 struct dmt_reason *r)
{
	char name[HASH_NAME_MAX];
	const EVP_MD *md;
	size_t hashed;
	int ret;

	ret = split_spec(hash_spec ? hash_spec : "", name, key_size, &hashed,
			 r);
	if (ret)
		return ret;
	memset(key, 0, key_size);
	if (!strcmp(name, "plain")) {
		if (pass_len < hashed) {
			dmt_reason_set(r, -EINVAL, DMT_REASON_TOO_SMALL,
				       "passphrase", pass_len);
			if (r)
				r->min = hashed;
			return -EINVAL;
		}
		memcpy(key, pass, hashed);
		return 0;
	}
	md = EVP_get_digestbyname(name);
	if (!md || EVP_MD_get_size(md) <= 0) {
		dmt_reason_set(r, -EINVAL, DMT_REASON_UNKNOWN_ALG, "hash", 0);
		if (r)
			r->name = hash_spec;
		return -EINVAL;
	}
	ret = hash_rounds(md, pass, pass_len, key, hashed);
	if (ret)
		dmt_secure_wipe(key, key_size);
	return ret;
}
