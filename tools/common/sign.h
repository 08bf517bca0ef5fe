/* SPDX-License-Identifier: MIT */
/* The signing tools' one report of a failed key or certificate load
 * (sign.c): verity-tool's sign/build --sign-key, fsverity-tool's sign. */
#ifndef DMT_TOOLS_SIGN_H
#define DMT_TOOLS_SIGN_H

#include <stdbool.h>

struct tool_sign_load {
	const char *key;	/* NULL: only a certificate was loaded */
	const char *cert;
	bool pass;		/* a passphrase was given */
	/* the certificate is the key file because no certificate option was
	 * given: named in the hint (NULL: it was given) */
	const char *cert_opt;
};

/* Prints the failure of dmt_sign_key_new / a certificate load (err) with
 * OpenSSL's queue under --debug, and returns the exit code. */
int tool_sign_error(const struct tool_sign_load *l, int err);

#endif /* DMT_TOOLS_SIGN_H */
