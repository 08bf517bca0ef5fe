// SPDX-License-Identifier: MIT
/* A failed key or certificate load as one message (sign.h). */
#include "tools/common/sign.h"

#include <errno.h>
#include <stdio.h>

#include <openssl/err.h>

#include "tools/common/exit.h"
#include "tools/common/msg.h"

static const char *hint_of(const struct tool_sign_load *l, char *buf,
			   size_t size)
{
	if (l->cert_opt) {
		snprintf(buf, size, "%s defaults to the key file; give %s",
			 l->cert_opt, l->cert_opt);
		return buf;
	}
	return l->pass ? "wrong passphrase?"
		       : "an encrypted key needs --key-passphrase-file";
}

int tool_sign_error(const struct tool_sign_load *l, int err)
{
	const char *sep = l->key ? ", " : "", *key = l->key ? l->key : "";
	char hint[96];

	/* the library leaves OpenSSL's reasons queued: shown with --debug */
	if (tool_verbosity >= 2)
		ERR_print_errors_fp(stderr);
	ERR_clear_error();
	switch (err) {
	case -ENOKEY:
		tool_err("%s%s%s: no usable %s found (%s)", key, sep, l->cert,
			 l->key ? "private key or certificate" : "certificate",
			 hint_of(l, hint, sizeof(hint)));
		return TOOL_EXIT_DEVICE;
	case -ENOTSUP:
		tool_err("%s%s%s: no OpenSSL loader or provider handles this "
			 "URI", key, sep, l->cert);
		return TOOL_EXIT_USAGE;
	case -EINVAL:
		if (l->key)
			tool_err("%s, %s: the key and the certificate do not "
				 "match, or the key cannot sign PKCS#7",
				 l->key, l->cert);
		else
			tool_err("%s: not a usable certificate", l->cert);
		return TOOL_EXIT_USAGE;
	default:
		tool_err_errno(l->key ? l->key : l->cert, "cannot load", err);
		return tool_exit_code(err);
	}
}
