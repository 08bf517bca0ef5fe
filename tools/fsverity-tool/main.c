// SPDX-License-Identifier: MIT
/*
 * fsverity-tool: fs-verity file digests, Merkle trees, descriptors and
 * built-in signatures for single files and whole trees, byte-identical to
 * fsverity-utils.  The tool is its table (tool.c) run by the CLI framework.
 *
 * Invoked as "fsverity" (a symlink, `ln -s fsverity-tool fsverity`; never
 * installed by default, it would clash with the fsverity package), it is
 * a drop-in for fsverity-utils 1.5's digest and sign: its exit codes (2
 * usage, 1 any other error), a stop at the first file that fails, and
 * getopt's unique prefixes of long options (--hash for --hash-alg).
 */
#include <stdlib.h>
#include <string.h>

#include "tools/fsverity-tool/fvt.h"

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
