// SPDX-License-Identifier: MIT
/*
 * integrity-tool: format, check, recalculate and dump dm-integrity images
 * offline.  This file is its table for the CLI framework
 * (tools/common/cli.h): its commands, its options (named as in
 * integritysetup where they exist) and the setup every command shares;
 * each command is a cmd_<name>.c.
 */
#include <stdlib.h>
#include <string.h>

#include <dmt/hash.h>

#include "tools/integrity-tool/it.h"

#define F CLI_CMD(CMD_FORMAT)
#define C CLI_CMD(CMD_CHECK)
#define R CLI_CMD(CMD_RECALC)
#define D CLI_CMD(CMD_DUMP)
#define S CLI_CMD(CMD_SIZE)
#define ALL (F | C | R | D | S)

static const struct cli_command commands[CMD_COUNT] = {
	[CMD_FORMAT] = { "format", it_cmd_format,
			 "write superblock, journal, data and every tag",
			 "<device>", 1, 1 },
	[CMD_CHECK] = { "check", it_cmd_check,
			"verify the journal and every tag", "<device>", 1, 1 },
	[CMD_RECALC] = { "recalculate", it_cmd_recalculate,
			 "recompute tags in place (all, or from recalc_sector)",
			 "<device>", 1, 1 },
	[CMD_DUMP] = { "dump", it_cmd_dump,
		       "print the superblock like integritysetup dump",
		       "<device>", 1, 1 },
	[CMD_SIZE] = { "size", it_cmd_size,
		       "print the device size needed for a payload",
		       "--payload-size BYTES", 0, 0 },
};

#define STR CLI_STRING
#define NUM CLI_NUMBER
#define U32 UINT32_MAX
static const struct cli_option options[O_COUNT] = {
	[O_INTEGRITY] = { "integrity", 'I', STR, "ALG",
			  "Data integrity algorithm (default crc32c)",
			  F | C | R | S, "alg", 0, 0 },
	[O_KEY_FILE] = { "integrity-key-file", 0, STR, "FILE",
			 "Read the integrity key (hmac) from a file", F | C | R,
			 "key", 0, 0 },
	[O_KEY_SIZE] = { "integrity-key-size", 0, NUM, "BYTES",
			 "Size of the integrity key", F | C | R, "key_size",
			 U32, 0 },
	[O_TAG_SIZE] = { "tag-size", 't', NUM, "BYTES",
			 "Tag size per sector (default: algorithm's)", F | S,
			 "layout.tag_size", U32, 0 },
	[O_SECTOR_SIZE] = { "sector-size", 's', NUM, "BYTES",
			    "Sector size, 512..4096 (default 512)", F | S,
			    "layout.sector_size", U32, 0 },
	[O_JOURNAL_SIZE] = { "journal-size", 'j', CLI_SIZE, "SIZE",
			     "Journal size (default 1/128 of the device, max 64M)",
			     F | S, "layout.journal_sectors", 0, 0 },
	[O_INTERLEAVE] = { "interleave-sectors", 0, NUM, "SECTORS",
			   "Interleave sectors (default 32768)", F | S,
			   "layout.interleave_sectors", U32, 0 },
	[O_BUFFER] = { "buffer-sectors", 0, NUM, "SECTORS",
		       "Kernel buffer size (default 128)", F | C | R | S,
		       "layout.buffer_sectors", U32, 0 },
	[O_JMAC] = { "journal-integrity", 0, STR, "ALG",
		     "Journal integrity algorithm (journal MAC)", F | C | R | S,
		     "journal_mac.alg", 0, 0 },
	[O_JMAC_KEY_FILE] = { "journal-integrity-key-file", 0, STR, "FILE",
			      "Read the journal integrity key from a file",
			      F | C | R, "journal_mac.key", 0, 0 },
	[O_JMAC_KEY_SIZE] = { "journal-integrity-key-size", 0, NUM, "BYTES",
			      "Size of the journal integrity key", F | C | R,
			      "journal_mac.key_size", U32, 0 },
	[O_JCRYPT] = { "journal-crypt", 0, STR, "ALG",
		       "Journal encryption: ctr(aes), cbc(aes) or chacha20",
		       F | C | R, "journal_crypt.alg", 0, 0 },
	[O_JCRYPT_KEY_FILE] = { "journal-crypt-key-file", 0, STR, "FILE",
				"Journal encryption key file", F | C | R,
				"journal_crypt.key", 0, 0 },
	[O_JCRYPT_KEY_SIZE] = { "journal-crypt-key-size", 0, NUM, "BYTES",
				"Journal encryption key size", F | C | R,
				"journal_crypt.key_size", U32, 0 },
	[O_DATA_DEVICE] = { "data-device", 0, STR, "PATH",
			    "Separate data device (<device> then holds metadata only)",
			    F | C | R | S, "data_device", 0, 0 },
	[O_BITMAP] = { "integrity-bitmap-mode", 'B', CLI_NONE, NULL,
		       "Image for bitmap mode (stores the bitmap granularity)",
		       F | S, "bitmap_mode", 0, 0 },
	[O_BITMAP_SPB] = { "bitmap-sectors-per-bit", 0, NUM, "SECTORS",
			   "Bitmap granularity (default 32768)", F | S,
			   "layout.sectors_per_bit", 0, 0 },
	[O_LEGACY_PADDING] = { "integrity-legacy-padding", 0, CLI_NONE, NULL,
			       "Legacy 128 KiB metadata padding (old kernels)",
			       F | S, "layout.fix_padding", 0, 0 },
	[O_LEGACY_HMAC] = { "integrity-legacy-hmac", 0, CLI_NONE, NULL,
			    "No salt and no superblock MAC (old kernels)",
			    F | S, "layout.fix_hmac", 0, 0 },
	[O_SALT] = { "salt", 0, STR, "HEX",
		     "Superblock salt (32 hex digits) instead of a random one",
		     F, "salt", 0, 0 },
	[O_SEED] = { "seed", 0, STR, "STRING",
		     "Derive the salt from STRING (reproducible images)", F,
		     "seed", 0, 0 },
	[O_THREADS] = CLI_OPT_THREADS(F | C | R),
	[O_JSON] = CLI_OPT_JSON(ALL),
	[O_DEVICE_SIZE] = { "device-size", 0, STR, "SIZE|auto",
			    "Create or grow the device file to SIZE (K/M/G/T: "
			    "powers of 1024), or 'auto'", F, "device_size", 0,
			    0 },
	[O_DATA_FROM] = { "data-from", 0, STR, "FILE",
			  "Payload placed at the start of the mapped device",
			  F, "data_from", 0, 0 },
	[O_NO_WIPE] = { "no-wipe", 0, CLI_NONE, NULL,
			"Write superblock and journal only (no tags)", F,
			"no_wipe", 0, 0 },
	[O_PAYLOAD_SIZE] = { "payload-size", 0, CLI_SIZE, "BYTES",
			     "Payload size for the size command", S,
			     "payload_size", 0, 0 },
	[O_ALLOW_DISCARDS] = { "allow-discards", 0, CLI_NONE, NULL,
			       "Accept discarded blocks (tags all 0xF6)", C,
			       "allow_discards", 0, 0 },
	[O_RECALC_RESET] = { "integrity-recalculate-reset", 0, CLI_NONE, NULL,
			     "Recalculate from sector 0", R, "recalc_reset", 0,
			     0 },
	[O_PROGRESS_FREQ] = CLI_OPT_PROGRESS_FREQUENCY(F | C | R),
	[O_PROGRESS_JSON] = CLI_OPT_PROGRESS_JSON(F | C | R),
	[O_ENGINE] = CLI_OPT_ENGINE(ALL),
};

/* Setup every command shares: the options into struct it. */
static int prepare(struct cli *c)
{
	struct it *it = it_of(c);
	struct dmt_reason why = { 0 };
	int err;

	it->device = c->nargs ? c->args[0] : NULL;
	it->data_path = cli_str(c, O_DATA_DEVICE);
	it->payload_path = cli_str(c, O_DATA_FROM);
	it->o.alg = cli_given(c, O_INTEGRITY) ? cli_str(c, O_INTEGRITY) :
						"crc32c";
	it->o.threads = c->threads;
	it->o.engine = tool_engine_spec();	/* --engine / $DMT_ENGINE */
	if (c->cmd == CMD_DUMP)
		return 0;
	err = it_fill_layout(c);
	if (!err)
		err = it_fill_keys(c);
	if (!err && c->cmd == CMD_FORMAT)
		err = it_fill_salt(c);
	/* algorithms and keys before any file is opened */
	if (!err && c->cmd != CMD_SIZE)
		err = dmt_integrity_params_check(&it->o, &why);
	if (err && why.code)
		cli_reason_err(c, &why);
	return err;
}

static void cleanup(struct cli *c)
{
	struct it *it = it_of(c);

	it_close_files(it);
	tool_secret_free(&it->key);
	tool_secret_free(&it->jkey);
	tool_secret_free(&it->ckey);
}

const struct cli_tool integrity_tool = {
	.name = "integrity-tool",
	.summary = "integrity-tool: make and check dm-integrity images offline",
	.commands = commands,
	.n_commands = CMD_COUNT,
	.options = options,
	.n_options = O_COUNT,
	.map_hint = "use `integritysetup open` with the same options, or "
		    "`dmsetup create` with the \"table\" that "
		    "`integrity-tool format --json` prints",
	.help_tail =
		"\nDefault compiled-in dm-integrity parameters:\n"
		"\tTag size: 4 bytes, Checksum algorithm: crc32c, sector size 512,\n"
		"\tinterleave 32768 sectors, journal 1/128 of the device (max 64 MiB),\n"
		"\tfix_padding and fix_hmac (superblock version 5, random salt)\n",
	.prepare = prepare,
	.reason_text = it_reason_text,
	.priv_size = sizeof(struct it),
	.cleanup = cleanup,
};

int main(int argc, const char **argv)
{
	return cli_main(&integrity_tool, argc, argv);
}
