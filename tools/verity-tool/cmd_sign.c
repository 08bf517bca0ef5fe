// SPDX-License-Identifier: MIT
/*
 * sign, and the root hash signatures of build and verify.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>

#include <dmt/sign.h>
#include "tools/common/sign.h"
#include "tools/verity-tool/vt.h"

/* ---- signatures ---- */

#define SIG_MAX (1u << 20)

/* The key or certificate did not load (tools/common/sign.h). */
static int sign_error(const char *key, const char *cert, bool pass, int err)
{
	struct tool_sign_load l = { .key = key, .cert = cert, .pass = pass };

	return tool_sign_error(&l, err);
}

/* Builds the signature of root (ds bytes) with --sign-key/--key. */
int vt_sign_root(const struct vt *c, const char *root_hex,
		     uint8_t **sig, size_t *len)
{
	const char *key =
		cli_str(c->cli, c->act == ACT_SIGN ? OPT_KEY : OPT_SIGN_KEY);
	const char *cert = cli_str(c->cli, c->act == ACT_SIGN ? OPT_CERT
						     : OPT_SIGN_CERT);
	struct tool_secret pass = { 0 };
	struct dmt_sign_params sp;
	int err;

	if (cli_given(c->cli, OPT_PASS_FILE)) {
		/* --key-passphrase-file: its first line, tools/common/secret.h
		 */
		err = tool_read_passphrase_line(cli_str(c->cli, OPT_PASS_FILE),
						&pass);
		if (err)
			return tool_exit_code(err);
	}
	dmt_sign_params_init(&sp);
	sp.key = key;
	sp.cert = cert;
	sp.passphrase = (const char *)pass.p;
	err = dmt_sign_root_hash(&sp, root_hex, sig, len, NULL);
	tool_secret_free(&pass);
	return err ? sign_error(key, cert, cli_given(c->cli, OPT_PASS_FILE),
				err)
		   : 0;
}

/* build: a key that cannot sign fails before the tree is built. */
int vt_sign_probe(const struct vt *c, size_t ds)
{
	char zero[2 * DMT_DIGEST_MAX + 1];
	uint8_t *sig = NULL;
	size_t len;
	int rc;

	memset(zero, '0', 2 * ds);
	zero[2 * ds] = '\0';
	rc = vt_sign_root(c, zero, &sig, &len);
	free(sig);
	return rc;
}

/* verify, repair: --root-hash-signature over the root hash, --cert. */
int vt_check_signature(const struct vt *c, const uint8_t *root,
			   size_t ds)
{
	const char *path = cli_str(c->cli, OPT_SIG),
		   *cert = cli_str(c->cli, OPT_CERT);
	char text[2 * DMT_DIGEST_MAX + 1];
	uint8_t *sig = NULL;
	size_t len;
	int err, rc = 0;

	err = tool_read_small_file(path, 0, SIG_MAX, &sig, &len);
	if (err == -EINVAL) {
		tool_err("Invalid signature file %s.", path);
		return TOOL_EXIT_VERIFY;
	}
	if (err) {
		tool_err_errno(path, "cannot read the signature", err);
		return tool_exit_code(err);
	}
	tool_hex(root, ds, text);
	err = dmt_sign_verify_root_hash(sig, len, cert, text, NULL);
	if (err == -EBADMSG) {
		ERR_clear_error();
		tool_err("%s: the root hash signature does not verify with "
			 "%s.", path, cert);
		rc = TOOL_EXIT_VERIFY;
	} else if (err) {
		rc = sign_error(NULL, cert, false, err);
	} else {
		tool_verbose("Root hash signature %s verified with %s.", path,
			     cert);
	}
	free(sig);
	return rc;
}

/* sign: the root hash text from the argument or --root-hash-file. */
static int sign_root_text(struct vt *c, char text[2 * DMT_DIGEST_MAX + 1])
{
	const char *arg = c->nargs == 2 ? c->args[0] : NULL;
	uint8_t *raw = NULL, *bin = NULL;
	size_t len = 0;
	int err;

	if (cli_given(c->cli, OPT_ROOT_FILE) == (arg != NULL))
		return vt_usage_error("sign needs either <root_hash> or "
				   "--root-hash-file.");
	if (arg) {
		len = strlen(arg);
		if (len <= 2 * DMT_DIGEST_MAX)
			memcpy(text, arg, len);
	} else {
		err = tool_read_small_file(cli_str(c->cli, OPT_ROOT_FILE), 0,
					   4096, &raw, &len);
		if (err && err != -EINVAL) {
			tool_err_errno(cli_str(c->cli, OPT_ROOT_FILE),
				       "cannot read the root hash", err);
			return tool_exit_code(err);
		}
		/* veritysetup writes no newline, people do */
		while (len && strchr(" \t\r\n", raw[len - 1]))
			len--;
		if (len <= 2 * DMT_DIGEST_MAX)
			memcpy(text, raw, len);
		free(raw);
	}
	if (len > 2 * DMT_DIGEST_MAX)
		len = 0;
	text[len] = '\0';
	if (!len || tool_parse_hex(text, &bin, &len) || !len) {
		free(bin);
		tool_err("Invalid root hash string specified.");
		return TOOL_EXIT_USAGE;
	}
	free(bin);
	return 0;
}

int vt_cmd_sign(struct cli *cl)
{
	struct vt *c = cl->priv;
	const char *out = c->args[c->nargs - 1];
	char root[2 * DMT_DIGEST_MAX + 1];
	struct dmt_file *of = NULL;
	uint8_t *sig = NULL;
	size_t len = 0;
	int rc;

	rc = vt_sign_opts(c);
	if (!rc)
		rc = sign_root_text(c, root);
	if (!rc && cli_given(c->cli, OPT_ROOT_FILE) &&
	    vt_same_target(out, cli_str(c->cli, OPT_ROOT_FILE)))
		rc = vt_usage_error("The signature must not overwrite the root "
				 "hash file.");
	if (!rc)
		rc = vt_open_out(c, out, "signature", &of);
	if (!rc)
		rc = vt_sign_root(c, root, &sig, &len);
	if (!rc)
		rc = vt_write_out(of, sig, len);
	if (!rc)	/* renames a new file (in place: nothing to do) */
		rc = vt_commit(of, true, out);
	if (!rc)
		tool_verbose("Signature of %s written to %s (%zu bytes).", root,
			     out, len);
	dmt_file_close(of);
	free(sig);
	return rc;
}
