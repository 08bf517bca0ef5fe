/* SPDX-License-Identifier: MIT */
/* Internal to lib/crypt: the authenticated-image helpers. */
#ifndef DMT_CRYPT_AUTH_PRIV_H
#define DMT_CRYPT_AUTH_PRIV_H

#include <dmt/crypt_auth.h>
#include <dmt/io.h>

#include "lib/crypt/crypt_priv.h"

/*
 * After the superblock and geometry are in r: 0 when the dm-integrity
 * journal is empty; -EUCLEAN with the reason INTEGRITY_JOURNAL_NOT_EMPTY
 * (value: section, min: entry of the first used entry) or
 * INTEGRITY_JOURNAL_COMMIT_IDS (value: section, min: sector) otherwise.
 */
int dmt_auth_journal_check(struct dmt_file *data, struct dmt_auth_result *r,
			   struct dmt_reason *rs);

/* The same as dmt_auth_lookup from a LUKS2 segment's "encryption" and
 * "integrity.type" and the volume key size. */
int dmt_auth_lookup_luks2(const char *cipher, const char *luks2_type,
			  size_t volume_key_size, struct dmt_auth_spec *s,
			  struct dmt_reason *r);
const struct dmt_auth_spec *dmt_auth_get_spec(const struct dmt_auth *a);

/* ---- AEGIS-128 (own code; OpenSSL 3.0 has none) ---- */
void dmt_aegis128_encrypt(const uint8_t key[16], const uint8_t iv[16],
			  const uint8_t *ad, size_t ad_len, const uint8_t *in,
			  uint8_t *out, size_t len, uint8_t tag[16]);
/* 0, or -EBADMSG when the tag (tag_len 1..16 bytes) differs. */
int dmt_aegis128_decrypt(const uint8_t key[16], const uint8_t iv[16],
			 const uint8_t *ad, size_t ad_len, const uint8_t *in,
			 uint8_t *out, size_t len, const uint8_t *tag,
			 size_t tag_len);

#endif /* DMT_CRYPT_AUTH_PRIV_H */
