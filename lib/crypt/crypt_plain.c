// SPDX-License-Identifier: MIT
/*
 * Plain dm-crypt key from a passphrase, as cryptsetup 2.6.1 makes it
 * (formats.md, plain mode): "HASH[:LEN]" or "plain[:LEN]"; round i feeds
 * i bytes 'A' and then the passphrase, rounds concatenate to the key size
 * (the hashalot convention), and the key bytes after LEN stay zero.
 * Also which hash names work here (the list messages show).
 */
#include <dmt/crypt.h>
#include "lib/crypt/crypt_priv.h"

#include <errno.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dmt/reason.h>

#define HASH_NAME_MAX 64

/*
 * "NAME[:LEN]" as cryptsetup 2.6.1 reads it: LEN as sscanf's %zd (blanks
 * and a sign before it, anything after the digits ignored), at most the
 * key size; *len_given says whether there was one.
 */
static int split_spec(const char *spec, char name[HASH_NAME_MAX],
		      size_t key_size, size_t *hashed, bool *len_given,
		      struct dmt_reason *r)
{
	const char *colon = strchr(spec, ':');
	size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
	long long v;
	char *end;

	if (!nlen || nlen >= HASH_NAME_MAX)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_BAD_VALUE, "hash",
				      0);
	memcpy(name, spec, nlen);
	name[nlen] = '\0';
	*hashed = key_size;
	*len_given = colon != NULL;
	if (!colon)
		return 0;
	errno = 0;
	v = strtoll(colon + 1, &end, 10);
	if (end == colon + 1 || errno || v < 0)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_BAD_VALUE, "hash",
				      0);
	if ((unsigned long long)v > key_size) {
		dmt_reason_set(r, -EINVAL, DMT_REASON_TOO_LARGE, "hash",
			       (uint64_t)v);
		if (r)
			r->max = key_size;
		return -EINVAL;
	}
	*hashed = (size_t)v;
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

/*
 * "plain" alone is the passphrase itself, cut or zero-padded to the key
 * (the cryptsetup CLI drops the hash then, and libcryptsetup copies what
 * there is); "plain:LEN" takes exactly LEN bytes of it.
 */
static int plain_copy(const void *pass, size_t pass_len, uint8_t *key,
		      size_t key_size, size_t hashed, bool len_given,
		      struct dmt_reason *r)
{
	if (!len_given) {
		memcpy(key, pass, pass_len < key_size ? pass_len : key_size);
		return 0;
	}
	if (pass_len < hashed) {
		dmt_reason_set(r, -EINVAL, DMT_REASON_TOO_SMALL, "passphrase",
			       pass_len);
		if (r)
			r->min = hashed;
		return -EINVAL;
	}
	memcpy(key, pass, hashed);
	return 0;
}

int dmt_crypt_plain_hash(const char *hash_spec, const void *pass,
			 size_t pass_len, uint8_t *key, size_t key_size,
			 struct dmt_reason *r)
{
	char name[HASH_NAME_MAX];
	const EVP_MD *md;
	size_t hashed;
	bool len_given;
	int ret;

	ret = split_spec(hash_spec ? hash_spec : "", name, key_size, &hashed,
			 &len_given, r);
	if (ret)
		return ret;
	memset(key, 0, key_size);
	if (!strcmp(name, "plain"))
		return plain_copy(pass, pass_len, key, key_size, hashed,
				  len_given, r);
	md = dmt_crypt_hash_usable(name) ? EVP_get_digestbyname(name) : NULL;
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

/* The names cryptsetup 2.6.1 knows (lib/crypto_backend) that OpenSSL
 * spells the same. */
static const char *const hash_names[] = {
	"sha1",	    "sha224",	"sha256",   "sha384",	 "sha512",
	"sha3-224", "sha3-256", "sha3-384", "sha3-512", "ripemd160",
	"whirlpool", "sm3",
};

bool dmt_crypt_hash_usable(const char *name)
{
	EVP_MD *md = name ? EVP_MD_fetch(NULL, name, NULL) : NULL;
	bool ok = md && EVP_MD_get_size(md) > 0;

	EVP_MD_free(md);
	return ok;
}

static char hash_list[256];

static void build_hash_list(void)
{
	size_t n = 0;

	for (size_t i = 0; i < sizeof(hash_names) / sizeof(hash_names[0]); i++)
		if (dmt_crypt_hash_usable(hash_names[i]))
			n += (size_t)snprintf(hash_list + n, sizeof(hash_list) - n,
					      "%s%s", n ? ", " : "",
					      hash_names[i]);
}

const char *dmt_crypt_supported_hashes(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, build_hash_list);
	return hash_list;
}
