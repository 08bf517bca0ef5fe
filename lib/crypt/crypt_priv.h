/* SPDX-License-Identifier: MIT */
/*
 * Building blocks of lib/crypt that only the library (and the unit tests
 * linked with its objects) use: random bytes, the listed-sector engine
 * calls, and the check of the reserved words of a params struct.
 */
#ifndef DMT_LIB_CRYPT_PRIV_H
#define DMT_LIB_CRYPT_PRIV_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <dmt/crypt.h>
#include <dmt/reason.h>

/* Bytes from getrandom() (blocking until the pool is ready). */
int dmt_random_bytes(void *buf, size_t len);

/* The same as dmt_crypt_encrypt/decrypt for a listed set: sector
 * sectors[i] is at in/out + i * size. */
int dmt_crypt_encrypt_list(struct dmt_crypt *c, const uint64_t *sectors,
			   size_t n, const void *in, void *out);
int dmt_crypt_decrypt_list(struct dmt_crypt *c, const uint64_t *sectors,
			   size_t n, const void *in, void *out);

#endif /* DMT_LIB_CRYPT_PRIV_H */
