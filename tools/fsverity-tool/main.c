// SPDX-License-Identifier: MIT
/*
 * fsverity-tool: fs-verity file digests, Merkle trees, descriptors and
 * built-in signatures for single files and whole trees, byte-identical to
 * fsverity-utils.  This file is its table for the CLI framework
 * (tools/common/cli.h): its commands and options (named as in
 * fsverity-utils 1.5 where they exist); each command is a cmd_<name>.c.
 *
 * Invoked as "fsverity" (a symlink, `ln -s fsverity-tool fsverity`; never
 * installed by default, it would clash with the fsverity package), it is
 * a drop-in for fsverity-utils 1.5's digest and sign: its exit codes (2
 * usage, 1 any other error), a stop at the first file that fails, and
 * getopt's unique prefixes of long options (--hash for --hash-alg).
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

static int prepare(struct cli *c)
{
	struct fvt *f = fvt_of(c);
	int err;

	fvt_out_init(&f->tree_out);
	fvt_out_init(&f->desc_out);
	fvt_out_init(&f->manifest);
	f->first_err = 0;
	err = fvt_combinations(c);
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
	dmt_sign_key_free(f->signer);
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

bool fvt_fsverity_mode;

/* fsverity 1.5's long options of a command (getopt_long's table). */
static const char *const digest_opts[] = {
	"hash-alg", "block-size", "salt", "out-merkle-tree", "out-descriptor",
	"compact", "for-builtin-sig", NULL,
};
static const char *const sign_opts[] = {
	"key", "cert", "pkcs11-engine", "pkcs11-module", "pkcs11-keyid",
	"hash-alg", "block-size", "salt", "out-merkle-tree", "out-descriptor",
	NULL,
};

/* "--pre[=value]" -> "--name[=value]" when pre is a prefix of exactly one
 * of fsverity's options (getopt_long: an exact name always wins). */
static const char *expand(const char *arg, const char *const *opts)
{
	size_t len = strcspn(arg + 2, "="), hits = 0;
	const char *full = NULL;
	char *out;

	for (size_t i = 0; opts[i]; i++) {
		if (strlen(opts[i]) == len && !strncmp(opts[i], arg + 2, len))
			return arg;
		if (!strncmp(opts[i], arg + 2, len)) {
			full = opts[i];
			hits++;
		}
	}
	if (hits != 1 || !len || !(out = malloc(strlen(full) + strlen(arg))))
		return arg;
	strcpy(out, "--");
	strcat(out, full);
	strcat(out, arg + 2 + len);
	return out;
}

static void expand_prefixes(int argc, const char **argv)
{
	const char *const *opts = !strcmp(argv[1], "digest") ? digest_opts :
				  !strcmp(argv[1], "sign")   ? sign_opts :
							       NULL;

	for (int i = 2; opts && i < argc && strcmp(argv[i], "--"); i++)
		if (!strncmp(argv[i], "--", 2) && argv[i][2])
			argv[i] = expand(argv[i], opts);
}

/* fsverity's commands that need the kernel's fs-verity. */
static int kernel_command(const char *cmd)
{
	static const char *const kernel[] = { "enable", "measure",
					      "dump_metadata" };

	for (size_t i = 0; i < sizeof(kernel) / sizeof(kernel[0]); i++) {
		if (!strcmp(cmd, kernel[i])) {
			tool_name = fsverity_tool.name;
			tool_err("%s needs the kernel's fs-verity on the file: "
				 "this is fsverity-tool (digest and sign "
				 "offline); use fsverity-utils' fsverity",
				 cmd);
			return 1;
		}
	}
	return -1;
}

int main(int argc, const char **argv)
{
	const char *base = argc ? strrchr(argv[0], '/') : NULL;
	int rc;

	base = base ? base + 1 : argc ? argv[0] : "";
	fvt_fsverity_mode = !strcmp(base, "fsverity");
	if (fvt_fsverity_mode && argc > 1) {
		rc = kernel_command(argv[1]);
		if (rc >= 0)
			return rc;
		expand_prefixes(argc, argv);
	}
	return cli_main(&fsverity_tool, argc, argv);
}
