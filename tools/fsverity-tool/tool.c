// SPDX-License-Identifier: MIT
/*
 * fsverity-tool's table for the CLI framework (tools/common/cli.h): its
 * commands and options (named as in fsverity-utils 1.5 where they exist),
 * and the fs-verity parameters every command shares.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include <dmt/hash.h>

#include "tools/fsverity-tool/fvt.h"

#define D CLI_CMD(CMD_DIGEST)
#define S CLI_CMD(CMD_SIGN)
#define ALL (D | S)

static const struct cli_command commands[CMD_COUNT] = {
	[CMD_DIGEST] = { "digest", fvt_cmd_digest,
			 "print the fs-verity digest of each file "
			 "(fsverity digest)", "FILE...", 0, INT_MAX },
	[CMD_SIGN] = { "sign", fvt_cmd_sign,
		       "sign a file's digest for built-in signature "
		       "verification (fsverity sign); many files with "
		       "--out-dir/--manifest", "FILE SIGFILE | FILE...", 0,
		       INT_MAX },
};

#define STR CLI_STRING
#define NONE CLI_NONE
/* as fsverity-utils: an option with an argument at most once */
#define ONCE CLI_ONCE
static const struct cli_option options[O_COUNT] = {
	[O_HASH_ALG] = { "hash-alg", 0, STR, "HASH_ALG",
			 "Hash algorithm: sha256 (default) or sha512", ALL,
			 "hash_algorithm", 0, ONCE },
	[O_BLOCK_SIZE] = { "block-size", 0, CLI_NUMBER, "BLOCK_SIZE",
			   "Merkle tree block size (default 4096)", ALL,
			   "block_size", UINT32_MAX, ONCE },
	[O_SALT] = { "salt", 0, STR, "SALT",
		     "Salt, in hex (at most 32 bytes)", ALL, "salt", 0, ONCE },
	[O_COMPACT] = { "compact", 0, NONE, NULL,
			"Print the digest only (no algorithm, no path)", D,
			NULL, 0, 0 },
	[O_FOR_BUILTIN_SIG] = { "for-builtin-sig", 0, NONE, NULL,
				"Print the formatted digest (what built-in "
				"signatures sign), in hex", D, NULL, 0, 0 },
	[O_OUT_TREE] = { "out-merkle-tree", 0, STR, "FILE",
			 "Write the Merkle tree(s) to FILE (as fsverity "
			 "1.5)", ALL, NULL, 0, ONCE },
	[O_OUT_DESC] = { "out-descriptor", 0, STR, "FILE",
			 "Write the descriptor(s) to FILE (as fsverity 1.5)",
			 ALL, NULL, 0, ONCE },
	[O_OUT_DIR] = { "out-dir", 0, STR, "DIR",
			"Per file: digest writes DIR/<file>.merkle_tree and "
			".descriptor, sign DIR/<file>.sig", ALL, NULL, 0, ONCE },
	[O_KEY] = { "key", 0, STR, "KEY",
		    "Private key (PEM or DER file, or a URI such as "
		    "pkcs11:...)", S, NULL, 0, ONCE },
	[O_CERT] = { "cert", 0, STR, "CERT",
		     "Certificate of the key (file or URI; default: the key "
		     "file)", S, NULL, 0, ONCE },
	[O_PASS_FILE] = { "key-passphrase-file", 0, STR, "FILE",
			  "Passphrase of an encrypted --key (or a token PIN): "
			  "the file's first line", S, NULL, 0, ONCE },
	[O_PKCS11_ENGINE] = { "pkcs11-engine", 0, STR, "SOFILE",
			      "Refused: OpenSSL 3 has no PKCS#11 engine here "
			      "(use --key pkcs11:...)", S, NULL, 0, ONCE },
	[O_PKCS11_MODULE] = { "pkcs11-module", 0, STR, "SOFILE",
			      "Refused (see --pkcs11-engine)", S, NULL, 0,
			      ONCE },
	[O_PKCS11_KEYID] = { "pkcs11-keyid", 0, STR, "KEYID",
			     "Refused (see --pkcs11-engine)", S, NULL, 0, ONCE },
	[O_MANIFEST] = { "manifest", 0, STR, "FILE",
			 "sign: JSON lines of path, digest and base64 "
			 "signature", S, NULL, 0, ONCE },
	[O_RECURSIVE] = { "recursive", 'r', NONE, NULL,
			  "Every regular file under the DIR arguments "
			  "(sorted; symlinks, devices, FIFOs skipped)", ALL,
			  NULL, 0, 0 },
	[O_FILES_FROM] = { "files-from", 0, STR, "FILE",
			   "Also the paths listed in FILE ('-': stdin), one "
			   "a line", ALL, NULL, 0, ONCE },
	[O_NULL] = { "null", '0', NONE, NULL,
		     "--files-from paths end with NUL, not newline", ALL,
		     NULL, 0, 0 },
	[O_STRICT] = { "strict", 0, NONE, NULL,
		       "Under -r, a symlink, device, FIFO or socket is an "
		       "error, not a note", ALL, NULL, 0, 0 },
	[O_STOP_ON_ERROR] = { "stop-on-error", 0, NONE, NULL,
			      "Stop at the first file that fails (fsverity "
			      "1.5)", ALL, NULL, 0, 0 },
	[O_JSON] = { "json", 0, NONE, NULL,
		     "One JSON object per file on stdout", ALL, NULL, 0, 0 },
	[O_THREADS] = CLI_OPT_THREADS(ALL),
	[O_PROGRESS_FREQ] = CLI_OPT_PROGRESS_FREQUENCY(ALL),
	[O_PROGRESS_JSON] = CLI_OPT_PROGRESS_JSON(ALL),
	[O_ENGINE] = CLI_OPT_ENGINE(ALL),
};

/* A name, or as fsverity-utils takes it a number (1 sha256, 2 sha512). */
static uint32_t hash_alg(const char *s)
{
	uint64_t n;

	if (!tool_parse_u64(s, &n))
		return dmt_fsverity_hash_alg_name((uint32_t)n) && n < 65536
			       ? (uint32_t)n
			       : 0;
	return dmt_fsverity_hash_alg_by_name(s);
}

/* --hash-alg, --block-size, --salt into f->p. */
int fvt_params(struct cli *c)
{
	struct fvt *f = fvt_of(c);
	struct dmt_reason r = { 0 };
	const char *alg = cli_str(c, O_HASH_ALG);
	const char *salt = cli_str(c, O_SALT);
	int err;

	f->p.version = 1;
	f->p.hash_algorithm = DMT_FSVERITY_HASH_SHA256;
	/* what fsverity refuses while it reads the options is a usage
	 * error (its exit 2); sizes it takes and libfsverity then refuses
	 * are not */
	c->usage_error = true;
	if (alg) {
		f->p.hash_algorithm = hash_alg(alg);
		if (!f->p.hash_algorithm) {
			tool_err("--hash-alg: unknown hash algorithm '%s' "
				 "(available: sha256 sha512)", alg);
			return -EINVAL;
		}
	}
	f->p.block_size = (uint32_t)cli_num(c, O_BLOCK_SIZE,
					    DMT_FSVERITY_DEFAULT_BLOCK_SIZE);
	if (cli_given(c, O_BLOCK_SIZE) &&
	    (!f->p.block_size || (f->p.block_size & (f->p.block_size - 1)) ||
	     f->p.block_size >= INT_MAX)) {
		tool_err("--block-size: %s is not a power of 2",
			 cli_str(c, O_BLOCK_SIZE));
		return -EINVAL;
	}
	if (salt) {
		if (!strcmp(salt, "-") ||
		    tool_parse_hex(salt, &f->salt, &f->salt_len)) {
			tool_err("--salt: '%s' is not a valid hex string", salt);
			return -EINVAL;
		}
		f->p.salt = f->salt;
		f->p.salt_size = (uint32_t)f->salt_len;
	}
	c->usage_error = false;
	if (f->salt_len > DMT_FSVERITY_MAX_SALT) {
		tool_err("--salt: %zu bytes, at most %d", f->salt_len,
			 DMT_FSVERITY_MAX_SALT);
		return -EINVAL;
	}
	f->p.threads = c->threads;
	f->p.engine = tool_engine_spec();
	err = dmt_fsverity_check_params(&f->p, &r);
	if (err)
		cli_reason_err(c, &r);
	return err;
}

/* Options that would be ignored in this combination: refused. */
static int combinations(struct cli *c)
{
	int err = -EINVAL;

	c->usage_error = true;
	if (c->json && (cli_given(c, O_COMPACT) ||
			cli_given(c, O_FOR_BUILTIN_SIG)))
		tool_err("--json prints every field (digest and "
			 "formatted_digest); it does not go with --%s",
			 cli_given(c, O_COMPACT) ? "compact"
						 : "for-builtin-sig");
	else if (cli_given(c, O_STRICT) && !cli_given(c, O_RECURSIVE))
		tool_err("--strict applies to the files -r finds; give -r");
	else
		err = c->usage_error = 0;
	return err;
}

static int prepare(struct cli *c)
{
	struct fvt *f = fvt_of(c);
	int err;

	fvt_out_init(&f->tree_out);
	fvt_out_init(&f->desc_out);
	fvt_out_init(&f->manifest);
	f->first_err = 0;
	err = combinations(c);
	return err ? err : fvt_params(c);
}

/* fsverity-utils' codes when invoked as fsverity: 2 usage, 1 else. */
static int exit_status(const struct cli *c, int code)
{
	if (!fvt_fsverity_mode || !code || code == TOOL_EXIT_SIGNAL)
		return code;
	return c->usage_error ? 2 : 1;
}

static void cleanup(struct cli *c)
{
	struct fvt *f = fvt_of(c);

	fvt_out_abort(&f->tree_out);
	fvt_out_abort(&f->desc_out);
	fvt_out_abort(&f->manifest);
	fvt_list_free(&f->list);
	dmt_signer_free(f->signer);
	free(f->salt);
	tool_secret_free(&f->pass);
}

const struct cli_tool fsverity_tool = {
	.name = "fsverity-tool",
	.summary = "fsverity-tool: fs-verity digests, Merkle trees and "
		   "signatures, as fsverity-utils makes them, for many files",
	.commands = commands,
	.n_commands = CMD_COUNT,
	.options = options,
	.n_options = O_COUNT,
	.map_hint = "use `fsverity enable` on the file",
	.help_tail =
		"\nDefaults: --hash-alg sha256, --block-size 4096, no salt.\n"
		"fsverity-utils' exit codes map as: its 2 (usage) is our 1, "
		"its 1 (error) our 4\n(or 1 for a bad parameter, 3 out of "
		"memory).  Invoked as fsverity (ln -s fsverity-tool\n"
		"fsverity) it exits as fsverity does and stops at the first "
		"file that fails.\n",
	.prepare = prepare,
	.priv_size = sizeof(struct fvt),
	.cleanup = cleanup,
	.exit_status = exit_status,
};
