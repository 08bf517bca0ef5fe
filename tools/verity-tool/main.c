// SPDX-License-Identifier: MIT
/*
 * verity-tool: build, verify, repair, dump and size dm-verity hash trees,
 * with veritysetup's forward error correction, and sign root hashes.
 * Arguments and output follow veritysetup (cryptsetup 2.6.1) so it can
 * replace `veritysetup format/verify/dump` in image pipelines; the work
 * is done by lib/verity, lib/fec and lib/sign.  The command line is
 * tools/common's framework (cli.h): this file has the command and option
 * tables, each command is a cmd_<name>.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tools/verity-tool/vt.h"

#define S CLI_STRING
#define F CLI_NONE
const struct cli_option vt_options[OPT_COUNT] = {
	[OPT_HASH] = { "hash", 'h', S, "NAME",
		       "Hash algorithm (default sha256)", ACT_TREE | ACT_SIZE,
		       "hash_name", 0, 0 },
	[OPT_DBS] = { "data-block-size", 0, S, "BYTES",
		      "Block size on the data device (default 4096)",
		      ACT_TREE | ACT_SIZE, "data_block_size", 0, 0 },
	[OPT_HBS] = { "hash-block-size", 0, S, "BYTES",
		      "Block size on the hash device (default 4096)",
		      ACT_TREE | ACT_SIZE, "hash_block_size", 0, 0 },
	[OPT_DATA_BLOCKS] = { "data-blocks", 0, S, "BLOCKS",
			      "Number of data blocks to protect (default: "
			      "whole file)", ACT_TREE | ACT_SIZE,
			      "data_blocks", 0, 0 },
	[OPT_HASH_OFFSET] = { "hash-offset", 0, S, "BYTES",
			      "Superblock / hash area offset on the hash "
			      "device", ACT_ALL, "hash_offset", 0, 0 },
	[OPT_SALT] = { "salt", 's', S, "HEX",
		       "Salt as hex, - for none (default 32 random bytes)",
		       ACT_TREE, "salt_size", 0, 0 },
	[OPT_UUID] = { "uuid", 0, S, "UUID",
		       "UUID recorded in the superblock (default random)",
		       ACT_TREE, NULL, 0, 0 },
	[OPT_FORMAT] = { "format", 0, S, "0|1",
			 "Hash type: 1 normal (default), 0 original Chrome "
			 "OS", ACT_TREE | ACT_SIZE, "hash_type", 0, 0 },
	[OPT_NO_SB] = { "no-superblock", 0, F, NULL,
			"Do not write / read a superblock",
			ACT_TREE | ACT_SIZE, NULL, 0, 0 },
	[OPT_ROOT_FILE] = { "root-hash-file", 0, S, "FILE",
			    "Write (build) or read (verify, repair, sign) the "
			    "root hash as hex", ACT_TREE | ACT_SIGN, NULL, 0,
			    0 },
	[OPT_FEC_DEVICE] = { "fec-device", 0, S, "PATH",
			     "Reed-Solomon parity file (may be the hash file, "
			     "see --fec-offset)", ACT_FEC, "fec", 0, 0 },
	[OPT_FEC_ROOTS] = { "fec-roots", 0, S, "N",
			    "FEC parity bytes per codeword, 2..24 (default 2)",
			    ACT_FEC, "roots", 0, 0 },
	[OPT_FEC_OFFSET] = { "fec-offset", 0, S, "BYTES",
			     "Start of the parity area on the FEC file "
			     "(default 0)", ACT_FEC, "fec_offset", 0, 0 },
	[OPT_SIGN_KEY] = { "sign-key", 0, S, "KEY",
			   "build: sign the root hash with this private key "
			   "(file or URI)", ACT_BUILD, NULL, 0, 0 },
	[OPT_SIGN_CERT] = { "sign-cert", 0, S, "CERT",
			    "build: certificate of --sign-key (file or URI)",
			    ACT_BUILD, NULL, 0, 0 },
	[OPT_KEY] = { "key", 0, S, "KEY",
		      "sign: private key (file or URI, e.g. pkcs11:)",
		      ACT_SIGN, NULL, 0, 0 },
	[OPT_PASS_FILE] = { "key-passphrase-file", 0, S, "FILE",
			    "Passphrase of an encrypted --key/--sign-key (or a "
			    "token PIN): the first line of FILE",
			    ACT_BUILD | ACT_SIGN, NULL, 0, 0 },
	[OPT_CERT] = { "cert", 0, S, "CERT",
		       "sign: certificate of --key; verify: check the "
		       "signature with it", ACT_CHECK | ACT_SIGN, NULL, 0, 0 },
	[OPT_SIG] = { "root-hash-signature", 0, S, "FILE",
		      "PKCS#7 signature of the root hash: written (build), "
		      "checked (verify)", ACT_BUILD | ACT_CHECK, NULL, 0, 0 },
	[OPT_SIDECAR] = { "sidecar", 0, F, NULL,
			  "build: also write systemd's <image>.roothash (and "
			  ".roothash.p7s)", ACT_BUILD, NULL, 0, 0 },
	/* CLI_OPT_THREADS, but up to 4096 as verity-tool always took */
	[OPT_THREADS] = { "threads", 0, CLI_NUMBER, "N",
			  "Worker threads (default: available CPUs)",
			  ACT_TREE, "threads", 4096, 0 },
	[OPT_JSON] = CLI_OPT_JSON(ACT_ALL),
	[OPT_SEED] = { "seed", 0, S, "STRING",
		       "Derive salt and UUID from STRING (reproducible "
		       "builds)", ACT_BUILD, NULL, 0, 0 },
	[OPT_PROG_FREQ] = CLI_OPT_PROGRESS_FREQUENCY(ACT_TREE),
	[OPT_PROG_JSON] = CLI_OPT_PROGRESS_JSON(ACT_TREE),
	[OPT_ENGINE] = CLI_OPT_ENGINE(ACT_TREE),
	[OPT_DATA_SIZE] = { "data-size", 0, S, "BYTES",
			    "size: data size instead of a data file (K, M, "
			    "G... suffixes)", ACT_SIZE, NULL, 0, 0 },
};

static const struct cli_command commands[CMD_COUNT] = {
	[CMD_BUILD] = {"build", vt_cmd_build,
		       "build the hash tree (alias: format)",
		       "<data_path> <hash_path>", 2, 2},
	[CMD_FORMAT] = {"format", vt_cmd_build, "the same as build",
			"<data_path> <hash_path>", 2, 2},
	[CMD_VERIFY] = {"verify", vt_cmd_check, "check data and tree",
			"<data_path> <hash_path> [<root_hash>]", 2, 3},
	[CMD_REPAIR] = {"repair", vt_cmd_check,
			"write FEC corrections back (needs --fec-device)",
			"<data_path> <hash_path> [<root_hash>]", 2, 3},
	[CMD_SIGN] = {"sign", vt_cmd_sign,
		      "sign a root hash (needs --key and --cert)",
		      "[<root_hash>] <out.p7s>", 1, 2},
	[CMD_DUMP] = {"dump", vt_cmd_dump, "show the superblock", "<hash_path>",
		      1, 1},
	[CMD_SIZE] = {"size", vt_cmd_size,
		      "hash area size a build would write (or --data-size)",
		      "[<data_path>]", 0, 1},
};

/* After parsing: the state every command starts from. */
static int prepare(struct cli *cl)
{
	struct vt *c = cl->priv;
	static const enum action acts[CMD_COUNT] = {
		ACT_BUILD, ACT_BUILD, ACT_VERIFY, ACT_REPAIR, ACT_SIGN,
		ACT_DUMP, ACT_SIZE,
	};

	c->cli = cl;
	c->act = acts[cl->cmd];
	for (c->nargs = 0; c->nargs < cl->nargs && c->nargs < 4; c->nargs++)
		c->args[c->nargs] = cl->args[c->nargs];
	dmt_verity_params_init(&c->p);
	c->p.engine = tool_engine_spec();	/* --engine / $DMT_ENGINE */
	c->p.threads = cl->threads;
	c->prog_freq = cl->progress_frequency > 86400
			       ? 86400 : cl->progress_frequency;
	return 0;
}

static const struct cli_tool verity_tool = {
	.name = "verity-tool",
	.summary = "Build, verify, repair, dump and size dm-verity hash trees "
		   "offline (veritysetup format/verify/dump compatible).",
	.commands = commands,
	.n_commands = CMD_COUNT,
	.options = vt_options,
	.n_options = OPT_COUNT,
	.map_hint = "use `veritysetup open` (--json prints the command as "
		    "\"veritysetup_open\")",
	.help_tail = "\nDefault compiled-in dm-verity parameters:\n"
		     "\tHash: sha256, Data block (bytes): 4096, Hash block "
		     "(bytes): 4096, Salt size: 32, Hash format: 1\n"
		     "\tFEC roots: 2\n\n"
		     "verify also exits 2 when only the root hash differs "
		     "(veritysetup: 1) or the\nroot hash signature does not "
		     "verify; with --fec-device, verify and repair\nexit 0 "
		     "when everything verifies after correction.\n",
	.prepare = prepare,
	.reason_text = vt_reason_text,
	.priv_size = sizeof(struct vt),
};

int main(int argc, const char **argv)
{
	return cli_main(&verity_tool, argc, argv);
}
