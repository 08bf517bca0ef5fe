// SPDX-License-Identifier: MIT
/*
 * PKCS#7 root hash signatures with OpenSSL, with the flag set fsverity-
 * utils and systemd-repart use (DETACHED, NOCERTS, NOATTR, BINARY; PARTIAL
 * so the digest can be chosen per signer).  Keys and certificates come
 * through OSSL_STORE so provider URIs work like file names.
 */
#include <dmt/sign.h>

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/pkcs7.h>
#include <openssl/store.h>
#include <openssl/ui.h>
#include <openssl/x509.h>

#include "lib/common/reserved.h"

#define SIGN_FLAGS (PKCS7_DETACHED | PKCS7_NOCERTS | PKCS7_NOATTR | \
		    PKCS7_BINARY)
#define ROOT_HEX_MAX 128	/* sha512 */

/* The signed string: lower-case hex, nothing else. */
static int root_lower(const char *in, char out[ROOT_HEX_MAX + 1])
{
	size_t i, len = in ? strlen(in) : 0;

	if (!len || len % 2 || len > ROOT_HEX_MAX)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (!isxdigit((unsigned char)in[i]))
			return -EINVAL;
		out[i] = (char)tolower((unsigned char)in[i]);
	}
	out[len] = 0;
	return 0;
}

/* "scheme:" as in RFC 3986, so "pkcs11:..." is a URI, "./a:b" is not. */
static bool uri_scheme(const char *s, bool *is_file)
{
	const char *p = s;

	*is_file = false;
	if (!isalpha((unsigned char)*p))
		return false;
	while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' ||
	       *p == '.')
		p++;
	if (*p != ':')
		return false;
	*is_file = p - s == 4 && !strncasecmp(s, "file", 4);
	return true;
}

/* Never prompts: hands over the given passphrase or fails. */
static int pass_cb(char *buf, int size, int rwflag, void *u)
{
	const char *pass = u;
	size_t len;

	(void)rwflag;
	if (!pass)
		return -1;
	len = strlen(pass);
	if (len > (size_t)size)
		return -1;
	memcpy(buf, pass, len);
	return (int)len;
}

/* First object of `type` (OSSL_STORE_INFO_PKEY or _CERT) at uri. */
static int load_object(const char *uri, const char *pass, int type,
		       void **out)
{
	OSSL_STORE_CTX *ctx = NULL;
	OSSL_STORE_INFO *info;
	UI_METHOD *ui = NULL;
	bool scheme, is_file;
	int r;

	*out = NULL;
	if (!uri || !*uri)
		return -EINVAL;
	scheme = uri_scheme(uri, &is_file);
	if (!scheme && access(uri, R_OK) < 0)
		return -errno;
	r = -ENOMEM;
	ui = UI_UTIL_wrap_read_pem_callback(pass_cb, 0);
	if (!ui)
		goto out;
	ctx = OSSL_STORE_open(uri, ui, (void *)pass, NULL, NULL);
	if (!ctx) {
		r = !scheme ? -ENOKEY : is_file ? -ENOENT : -ENOTSUP;
		goto out;
	}
	/* a hint only: not every loader can filter */
	OSSL_STORE_expect(ctx, type);
	r = -ENOKEY;
	/* NULL is also an object the loader skipped for the expect() hint
	 * (the key before the certificate in one PEM file): go on, but not
	 * forever on a broken file */
	for (int skipped = 0; !*out && !OSSL_STORE_eof(ctx);) {
		info = OSSL_STORE_load(ctx);
		if (!info && ++skipped > 64)
			break;
		if (!info)
			continue;
		if (OSSL_STORE_INFO_get_type(info) == type)
			*out = type == OSSL_STORE_INFO_PKEY ?
				(void *)OSSL_STORE_INFO_get1_PKEY(info) :
				(void *)OSSL_STORE_INFO_get1_CERT(info);
		OSSL_STORE_INFO_free(info);
	}
	if (*out)
		r = 0;
out:
	if (ctx)
		OSSL_STORE_close(ctx);
	if (ui)
		UI_destroy_method(ui);
	return r;
}

void dmt_sign_params_init(struct dmt_sign_params *p)
{
	memset(p, 0, sizeof(*p));
}

/* A loaded key and certificate, for many signatures. */
struct dmt_sign_key {
	EVP_PKEY *pkey;
	X509 *x;
};

/* The reason for a failed load_object() of what (field) at path. */
static int load_err(struct dmt_reason *r, int err, const char *field,
		    const char *path)
{
	if (err == -ENOKEY)
		dmt_reason_set(r, err, DMT_REASON_MISSING, field, 0);
	else if (err == -ENOTSUP)
		dmt_reason_set(r, err, DMT_REASON_UNSUPPORTED, field, 0);
	else
		dmt_reason_set(r, err, DMT_REASON_IO, field, (uint64_t)-err);
	if (r)
		r->path = path;
	return err;
}

static int load_cert(const char *cert, X509 **x, struct dmt_reason *r)
{
	int err = load_object(cert, NULL, OSSL_STORE_INFO_CERT, (void **)x);

	return err < 0 ? load_err(r, err, "cert", cert) : 0;
}

static int check_root(const char *root_hex, char hex[ROOT_HEX_MAX + 1],
		      struct dmt_reason *r)
{
	int err = root_lower(root_hex, hex);

	if (err < 0)
		dmt_reason_set(r, err, DMT_REASON_BAD_VALUE, "root_hex", 0);
	return err;
}

void dmt_sign_key_free(struct dmt_sign_key *k)
{
	if (!k)
		return;
	X509_free(k->x);
	EVP_PKEY_free(k->pkey);
	free(k);
}

int dmt_sign_key_new(const struct dmt_sign_params *p,
		     struct dmt_sign_key **out, struct dmt_reason *r)
{
	struct dmt_sign_key *k = NULL;
	int err;

	*out = NULL;
	err = DMT_CHECK_RESERVED(p, r);
	if (err)
		goto out;
	err = -ENOMEM;
	k = calloc(1, sizeof(*k));
	if (!k)
		goto out;
	err = load_object(p->key, p->passphrase, OSSL_STORE_INFO_PKEY,
			  (void **)&k->pkey);
	if (err < 0) {
		load_err(r, err, "key", p->key);
		goto out;
	}
	err = load_cert(p->cert, &k->x, r);
	if (err < 0)
		goto out;
	if (X509_check_private_key(k->x, k->pkey) != 1) {
		err = dmt_reason_set(r, -EINVAL, DMT_REASON_CONFLICT, "key", 0);
		if (r)
			r->field2 = "cert";
	}
out:
	if (err)
		dmt_sign_key_free(k);
	else
		*out = k;
	return err;
}

/*
 * Any message, any digest: what `fsverity sign` makes over a
 * struct fsverity_formatted_digest (the signer's digest is the file's hash
 * algorithm there).  Same flags as dmt_sign_root_hash.
 */
static int sign_md(struct dmt_sign_key *k, const EVP_MD *md, const void *data,
		   size_t len, uint8_t **sig, size_t *sig_len,
		   struct dmt_reason *r)
{
	PKCS7 *p7 = NULL;
	BIO *bio = NULL;
	unsigned char *der = NULL;
	int der_len, err;

	err = -ENOMEM;
	bio = BIO_new_mem_buf(data, (int)len);
	p7 = PKCS7_sign(NULL, NULL, NULL, NULL, SIGN_FLAGS | PKCS7_PARTIAL);
	if (!bio || !p7)
		goto out;
	/* e.g. a key type PKCS#7 can't sign with */
	if (!PKCS7_sign_add_signer(p7, k->x, k->pkey, md, SIGN_FLAGS) ||
	    PKCS7_final(p7, bio, SIGN_FLAGS) != 1) {
		err = dmt_reason_set(r, -EINVAL, DMT_REASON_UNSUPPORTED, "key",
				     0);
		goto out;
	}
	err = -EINVAL;
	der_len = i2d_PKCS7(p7, &der);
	if (der_len <= 0)
		goto out;
	err = -ENOMEM;
	*sig = malloc((size_t)der_len);
	if (!*sig)
		goto out;
	memcpy(*sig, der, (size_t)der_len);
	*sig_len = (size_t)der_len;
	err = 0;
out:
	OPENSSL_free(der);
	PKCS7_free(p7);
	BIO_free(bio);
	return err;
}

int dmt_sign_data(struct dmt_sign_key *k, const char *digest_name,
		  const void *data, size_t len, uint8_t **sig, size_t *sig_len,
		  struct dmt_reason *r)
{
	const EVP_MD *md = digest_name ? EVP_get_digestbyname(digest_name) :
					 NULL;

	*sig = NULL;
	*sig_len = 0;
	if (!k)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_MISSING, "key", 0);
	if (!md) {
		dmt_reason_set(r, -EINVAL, DMT_REASON_UNKNOWN_ALG,
			       "digest_name", 0);
		if (r)
			r->name = digest_name;
		return -EINVAL;
	}
	if (!data || !len || len > INT32_MAX)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_BAD_VALUE, "len",
				      len);
	return sign_md(k, md, data, len, sig, sig_len, r);
}

int dmt_sign_root_hash(const struct dmt_sign_params *p, const char *root_hex,
		       uint8_t **sig, size_t *sig_len, struct dmt_reason *r)
{
	char hex[ROOT_HEX_MAX + 1];
	struct dmt_sign_key *k = NULL;
	int err;

	*sig = NULL;
	*sig_len = 0;
	err = DMT_CHECK_RESERVED(p, r);
	if (!err)
		err = check_root(root_hex, hex, r);
	if (!err)
		err = dmt_sign_key_new(p, &k, r);
	if (!err)
		err = sign_md(k, EVP_sha256(), hex, strlen(hex), sig, sig_len,
			      r);
	dmt_sign_key_free(k);
	return err;
}

int dmt_sign_verify_root_hash(const uint8_t *sig, size_t sig_len,
			      const char *cert, const char *root_hex,
			      struct dmt_reason *r)
{
	char hex[ROOT_HEX_MAX + 1];
	const unsigned char *p = sig;
	STACK_OF(X509) *certs = NULL;
	PKCS7 *p7 = NULL;
	X509 *x = NULL;
	BIO *bio = NULL;
	int err;

	err = check_root(root_hex, hex, r);
	if (err < 0)
		goto out;
	err = load_cert(cert, &x, r);
	if (err < 0)
		goto out;
	err = dmt_reason_set(r, -EBADMSG, DMT_REASON_BAD_VALUE, "sig", 0);
	if (!sig || !sig_len || sig_len > INT32_MAX)
		goto out;
	p7 = d2i_PKCS7(NULL, &p, (long)sig_len);
	if (!p7 || p != sig + sig_len || !PKCS7_type_is_signed(p7))
		goto out;
	err = -ENOMEM;
	certs = sk_X509_new_null();
	bio = BIO_new_mem_buf(hex, (int)strlen(hex));
	if (!certs || !bio || !sk_X509_push(certs, x))
		goto out;
	/*
	 * NOINTERN: only our certificate may be the signer, never one
	 * carried in the signature; NOVERIFY: no chain, like the kernel.
	 */
	err = PKCS7_verify(p7, certs, NULL, bio, NULL,
			   PKCS7_NOINTERN | PKCS7_NOVERIFY | PKCS7_NOCHAIN |
			   PKCS7_BINARY) == 1 ? 0 : -EBADMSG;
	if (err)
		dmt_reason_set(r, err, DMT_REASON_BAD_VALUE, "sig", 0);
out:
	sk_X509_free(certs);	/* x is freed below, not by the stack */
	BIO_free(bio);
	PKCS7_free(p7);
	X509_free(x);
	return err;
}

int dmt_sign_sidecar_path(const char *image, enum dmt_sign_sidecar which,
			  char **out)
{
	static const char *const suffix[] = {
		[DMT_SIGN_SIDECAR_ROOTHASH] = ".roothash",
		[DMT_SIGN_SIDECAR_ROOTHASH_SIG] = ".roothash.p7s",
		[DMT_SIGN_SIDECAR_VERITY] = ".verity",
	};
	size_t len, slen;

	*out = NULL;
	if (!image || !*image ||
	    (unsigned int)which > DMT_SIGN_SIDECAR_VERITY)
		return -EINVAL;
	len = strlen(image);
	if (len >= 4 && !strcmp(image + len - 4, ".raw"))
		len -= 4;
	slen = strlen(suffix[which]);
	*out = malloc(len + slen + 1);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, image, len);
	memcpy(*out + len, suffix[which], slen + 1);
	return 0;
}
