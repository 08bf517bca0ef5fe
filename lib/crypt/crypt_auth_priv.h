/* SPDX-License-Identifier: MIT */
/* Internal to lib/crypt: the authenticated-image helpers. */
#ifndef DMT_CRYPT_AUTH_PRIV_H
#define DMT_CRYPT_AUTH_PRIV_H

#include <dmt/crypt_auth.h>
#include <dmt/io.h>

/*
 * After the superblock and geometry are in r: 0 when the dm-integrity
 * journal is empty; -EUCLEAN with the reason INTEGRITY_JOURNAL_NOT_EMPTY
 * (value: section, min: entry of the first used entry) or
 * INTEGRITY_JOURNAL_COMMIT_IDS (value: section, min: sector) otherwise.
 */
int dmt_auth_journal_check(struct dmt_file *data, struct dmt_auth_result *r);

#endif /* DMT_CRYPT_AUTH_PRIV_H */
