/* SPDX-License-Identifier: MIT */
/*
 * Root hash signatures as the kernel (dm-verity root_hash_sig_key_desc)
 * and systemd (<image>.roothash.p7s) expect them: a detached PKCS#7
 * SignedData in DER over the root hash as a lower-case hex string without
 * a newline, SHA-256, no certificates and no signed attributes (what
 * `openssl smime -sign -nocerts -noattr -binary -outform der` makes).
 *
 * Keys and certificates are PEM or DER files, or any URI an OpenSSL
 * store loader or provider handles (e.g. "pkcs11:..." with pkcs11-provider
 * configured).  The library never prompts: an encrypted key needs the
 * passphrase.  On failure the OpenSSL error queue is left for the caller
 * to print if it wants to.
 *
 * One family, dmt_sign_*: the key and certificate are named by a struct
 * dmt_sign_params; dmt_sign_root_hash() loads them for one signature,
 * struct dmt_sign_key (dmt_sign_key_new) keeps them loaded for many
 * (dmt_sign_data).
 */
#ifndef DMT_SIGN_H
#define DMT_SIGN_H

#include <stddef.h>
#include <stdint.h>

#include <dmt/reason.h>

struct dmt_sign_params {
	const char *key;		/* private key: file or URI */
	const char *cert;		/* its certificate: file or URI */
	const char *passphrase;		/* encrypted key; NULL: none */
	uint64_t reserved[8];		/* must be zero */
};

/* Zeroes *p (key and cert must be set). */
void dmt_sign_params_init(struct dmt_sign_params *p);

/*
 * Signs root_hex (hex digits, either case; what is signed is the lower-
 * case form) with p's key.  *sig is malloc'ed DER.  Errors, with r (may
 * be NULL): -EINVAL bad root hash string (BAD_VALUE root_hex), key and
 * certificate don't match (CONFLICT key, cert), a key PKCS#7 cannot use
 * (UNSUPPORTED key) or nonzero reserved words (BAD_VALUE reserved);
 * -ENOENT/-EACCES... a file can't be opened (IO key or cert, path);
 * -ENOKEY no private key / certificate found there, or a wrong or missing
 * passphrase (MISSING key or cert, path); -ENOTSUP a URI scheme no loader
 * handles (UNSUPPORTED key or cert, path); -ENOMEM.
 */
int dmt_sign_root_hash(const struct dmt_sign_params *p, const char *root_hex,
		       uint8_t **sig, size_t *sig_len, struct dmt_reason *r);

/*
 * Checks a DER signature over root_hex against cert only (certificates
 * inside the signature are ignored; no chain or purpose checks, as the
 * kernel trusts the key in its keyring).  Returns 0, -EBADMSG when the
 * signature does not verify or is not a PKCS#7 signature (BAD_VALUE sig),
 * or the errors of dmt_sign_root_hash for the certificate and root_hex.
 */
int dmt_sign_verify_root_hash(const uint8_t *sig, size_t sig_len,
			      const char *cert, const char *root_hex,
			      struct dmt_reason *r);

/* systemd's companion files next to an image (dissect-image.c). */
enum dmt_sign_sidecar {
	DMT_SIGN_SIDECAR_ROOTHASH,	/* <image>.roothash */
	DMT_SIGN_SIDECAR_ROOTHASH_SIG,	/* <image>.roothash.p7s */
	DMT_SIGN_SIDECAR_VERITY,	/* <image>.verity */
};

/*
 * malloc'ed path of a companion file: image + suffix, where a trailing
 * ".raw" of image is dropped first ("foo.raw" -> "foo.verity").
 * -EINVAL for an empty image name or an unknown which, -ENOMEM.
 */
int dmt_sign_sidecar_path(const char *image, enum dmt_sign_sidecar which,
			  char **out);

/*
 * Many signatures with one key: dmt_sign_key_new() loads the key and
 * certificate once (errors as dmt_sign_root_hash), dmt_sign_data() makes
 * a detached PKCS#7 signature (flags as above) over len bytes of data
 * with the digest digest_name ("sha256", "sha512": fs-verity signs its
 * formatted digest with the file's hash algorithm); -EINVAL: unknown
 * digest (UNKNOWN_ALG digest_name), empty data (BAD_VALUE len), a key
 * PKCS#7 cannot use (UNSUPPORTED key).  A key is used by one thread at a
 * time.
 */
struct dmt_sign_key;
int dmt_sign_key_new(const struct dmt_sign_params *p,
		     struct dmt_sign_key **out, struct dmt_reason *r);
int dmt_sign_data(struct dmt_sign_key *k, const char *digest_name,
		  const void *data, size_t len, uint8_t **sig, size_t *sig_len,
		  struct dmt_reason *r);
void dmt_sign_key_free(struct dmt_sign_key *k);

#endif /* DMT_SIGN_H */
