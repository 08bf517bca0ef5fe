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
 * passphrase argument.  On failure the OpenSSL error queue is left for the
 * caller to print if it wants to.
 */
#ifndef DMT_SIGN_H
#define DMT_SIGN_H

#include <stddef.h>
#include <stdint.h>

/*
 * Signs root_hex (hex digits, either case; what is signed is the lower-
 * case form).  *sig is malloc'ed DER.  Errors: -EINVAL bad root hash
 * string, or key and certificate don't match; -ENOENT/-EACCES... a file
 * can't be opened; -ENOKEY no private key / certificate found there (or a
 * wrong or missing passphrase); -ENOTSUP a URI scheme no loader handles;
 * -ENOMEM.
 */
int dmt_sign_root_hash(const char *key, const char *cert,
		       const char *passphrase, const char *root_hex,
		       uint8_t **sig, size_t *sig_len);

/*
 * Checks a DER signature over root_hex against cert only (certificates
 * inside the signature are ignored; no chain or purpose checks, as the
 * kernel trusts the key in its keyring).  Returns 0, -EBADMSG when the
 * signature does not verify or is not a PKCS#7 signature, or the errors of
 * dmt_sign_root_hash for the certificate.
 */
int dmt_verify_root_hash_sig(const uint8_t *sig, size_t sig_len,
			     const char *cert, const char *root_hex);

/* systemd's companion files next to an image (dissect-image.c). */
enum dmt_sidecar {
	DMT_SIDECAR_ROOTHASH,		/* <image>.roothash */
	DMT_SIDECAR_ROOTHASH_SIG,	/* <image>.roothash.p7s */
	DMT_SIDECAR_VERITY,		/* <image>.verity */
};

/*
 * malloc'ed path of a companion file: image + suffix, where a trailing
 * ".raw" of image is dropped first ("foo.raw" -> "foo.verity").
 * -EINVAL for an empty image name, -ENOMEM.
 */
int dmt_sidecar_path(const char *image, enum dmt_sidecar which, char **out);

/*
 * A detached PKCS#7 signature (flags as above) over len bytes of data with
 * the digest digest_name ("sha256", "sha512": fs-verity signs its
 * formatted digest with the file's hash algorithm).  Errors as
 * dmt_sign_root_hash; -EINVAL also for an unknown digest or empty data.
 */
int dmt_sign_buffer(const char *key, const char *cert, const char *passphrase,
		    const char *digest_name, const void *data, size_t len,
		    uint8_t **sig, size_t *sig_len);

/*
 * The same for many messages with one key: dmt_signer_new() loads the key
 * and certificate once (errors as dmt_sign_root_hash), dmt_signer_sign()
 * signs (-EINVAL: unknown digest, empty data, a key PKCS#7 cannot use).
 * A signer is used by one thread at a time.
 */
struct dmt_signer;
int dmt_signer_new(const char *key, const char *cert, const char *passphrase,
		   struct dmt_signer **out);
int dmt_signer_sign(struct dmt_signer *s, const char *digest_name,
		    const void *data, size_t len, uint8_t **sig,
		    size_t *sig_len);
void dmt_signer_free(struct dmt_signer *s);

#endif /* DMT_SIGN_H */
