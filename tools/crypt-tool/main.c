// SPDX-License-Identifier: MIT
/*
 * crypt-tool: dm-crypt images (plain and LUKS2) encrypted and read back
 * offline.  This file is its table for the CLI framework
 * (tools/common/cli.h): its commands and its options, named and counted as cryptsetup 2.6.1 names
 * and counts them (--key-size in bits, --offset and --skip in 512-byte
 * sectors, --pbkdf-memory in KiB, --iter-time in ms); each command is a
 * cmd_<name>.c.
 */
#include <stdlib.h>
#include <string.h>

#include <dmt/hash.h>

#include "tools/crypt-tool/ct.h"

#define F CLI_CMD(CMD_FORMAT)
#define D CLI_CMD(CMD_DECRYPT)
#define P CLI_CMD(CMD_DUMP)
#define S CLI_CMD(CMD_SIZE)
#define K CLI_CMD(CMD_CHECK)
#define ALL (F | D | P | S | K)

static const struct cli_command commands[CMD_COUNT] = {
	[CMD_FORMAT] = { "format", ct_cmd_format,
			 "write an encrypted image of --data-from (plain or LUKS2)",
			 "<image>", 1, 1 },
	[CMD_DECRYPT] = { "decrypt", ct_cmd_decrypt,
			  "write the decrypted contents of an image to a file",
			  "<image> <output>", 2, 2 },
	[CMD_DUMP] = { "dump", ct_cmd_dump,
		       "print a LUKS2 header like cryptsetup luksDump",
		       "<image>", 1, 1 },
	[CMD_SIZE] = { "size", ct_cmd_size,
		       "print the image size --device-size auto gives a payload",
		       "--payload-size BYTES", 0, 0 },
	[CMD_CHECK] = { "check", ct_cmd_check,
			"verify every sector's tag of an authenticated LUKS2 image",
			"<image>", 1, 1 },
};

#define STR CLI_STRING
#define NUM CLI_NUMBER
#define U32 UINT32_MAX
static const struct cli_option options[O_COUNT] = {
	[O_TYPE] = { "type", 'M', STR, "TYPE",
		     "plain or luks2 (default luks2; decrypt: from the header)",
		     F | D | S, "type", 0, 0 },
	[O_CIPHER] = { "cipher", 'c', STR, "CIPHER",
		       "aes-xts-plain64 (default), aes-xts-plain, "
		       "aes-cbc-essiv:sha256 or aes-cbc-plain64; with "
		       "--integrity: aes-xts-random, aes-gcm-random, "
		       "chacha20-random or aegis128-random", F | D | S,
		       "cipher", 0, 0 },
	[O_KEY_SIZE] = { "key-size", 's', NUM, "BITS",
			 "Volume key size in bits (default 512 XTS, 256 CBC; "
			 "--integrity: the cipher part)", F | D | S, "key_size", 4096, 0 },
	[O_SECTOR_SIZE] = { "sector-size", 0, NUM, "BYTES",
			    "Encryption sector size, 512..4096 (default: LUKS2 "
			    "4096, plain 512)", F | D | S, "sector_size", 4096,
			    0 },
	[O_HASH] = { "hash", 'h', STR, "HASH",
		     "Plain: passphrase hash (default sha256); LUKS2: PBKDF2, "
		     "AF and digest hash (default sha256)", F | D, "hash", 0,
		     0 },
	[O_KEY_FILE] = { "key-file", 'd', STR, "FILE",
			 "Passphrase (LUKS2) or key (plain) from FILE; - is stdin",
			 F | D | K, "key_file", 0, 0 },
	[O_KEYFILE_OFFSET] = { "keyfile-offset", 0, NUM, "BYTES",
			       "Skip BYTES at the start of the key file", F | D | K,
			       "keyfile_offset", 0, 0 },
	[O_KEYFILE_SIZE] = { "keyfile-size", 'l', NUM, "BYTES",
			     "Read at most BYTES of the key file", F | D | K,
			     "keyfile_size", TOOL_SECRET_MAX, 0 },
	[O_OFFSET] = { "offset", 'o', NUM, "SECTORS",
		       "Data start in 512-byte sectors (plain default 0, LUKS2 "
		       "default 32768; detached 0)", F | D | S, "data_offset",
		       0, 0 },
	[O_SKIP] = { "skip", 'p', NUM, "SECTORS",
		     "Plain: IV offset in 512-byte sectors (default 0)", F | D,
		     "iv_offset", 0, 0 },
	[O_IV_LARGE] = { "iv-large-sectors", 0, CLI_NONE, NULL,
			 "Plain: IV counts sector-size units, not 512 bytes",
			 F | D, "iv_large_sectors", 0, 0 },
	[O_VOLUME_KEY_FILE] = { "volume-key-file", 0, STR, "FILE",
				"LUKS2: the volume key from FILE (default random)",
				F, "volume_key", 0, 0 },
	[O_PBKDF] = { "pbkdf", 0, STR, "TYPE",
		      "argon2id (default), argon2i or pbkdf2", F, "pbkdf.type",
		      0, 0 },
	[O_PBKDF_MEMORY] = { "pbkdf-memory", 0, NUM, "KIB",
			     "Argon2 memory cost (default 1048576)", F,
			     "pbkdf.memory_kb", 4194304, 0 },
	[O_PBKDF_PARALLEL] = { "pbkdf-parallel", 0, NUM, "THREADS",
			       "Argon2 threads (default 4)", F,
			       "pbkdf.parallel", 4, 0 },
	[O_ITER_TIME] = { "iter-time", 'i', NUM, "MS",
			  "PBKDF benchmark target (default 2000 ms)", F,
			  "iter_time", U32, 0 },
	[O_PBKDF_FORCE_ITER] = { "pbkdf-force-iterations", 0, NUM, "N",
				 "PBKDF2 iterations or Argon2 time cost, no "
				 "benchmark", F, "pbkdf.iterations", U32, 0 },
	[O_KEYSLOT_CIPHER] = { "keyslot-cipher", 0, STR, "CIPHER",
			       "Keyslot area cipher (default aes-xts-plain64)",
			       F, "keyslot.cipher", 0, 0 },
	[O_KEYSLOT_KEY_SIZE] = { "keyslot-key-size", 0, NUM, "BITS",
				 "Keyslot area key size (default 512)", F,
				 "keyslot.key_size", 4096, 0 },
	[O_KEY_SLOT] = { "key-slot", 'S', NUM, "N",
			 "Keyslot to use (format: default 0; decrypt: any)",
			 F | D | K, "keyslot", DMT_LUKS2_KEYSLOTS_MAX - 1, 0 },
	[O_UUID] = { "uuid", 0, STR, "UUID", "LUKS2 UUID (default random)", F,
		     "uuid", 0, 0 },
	[O_LABEL] = { "label", 0, STR, "LABEL", "LUKS2 label", F, "label", 0,
		      0 },
	[O_SUBSYSTEM] = { "subsystem", 0, STR, "NAME", "LUKS2 subsystem", F,
			  "subsystem", 0, 0 },
	[O_METADATA_SIZE] = { "luks2-metadata-size", 0, CLI_SIZE, "BYTES",
			      "LUKS2 header copy size, 16k..4m (default 16k)",
			      F | S, "metadata_size", 0, 0 },
	[O_KEYSLOTS_SIZE] = { "luks2-keyslots-size", 0, CLI_SIZE, "BYTES",
			      "LUKS2 keyslots area size", F | S,
			      "keyslots_size", 0, 0 },
	[O_HEADER] = { "header", 0, STR, "FILE",
		       "LUKS2 header in FILE (detached); <image> holds the data",
		       F | D | P | S | K, "header", 0, 0 },
	[O_DATA_FROM] = { "data-from", 0, STR, "FILE",
			  "Payload placed at the start of the mapped device", F,
			  "data_from", 0, 0 },
	[O_DEVICE_SIZE] = { "device-size", 0, STR, "SIZE|auto",
			    "Size of the image (K/M/G/T: powers of 1024); auto "
			    "(default for a new file): just what the payload needs",
			    F, "device_size", 0, 0 },
	[O_WIPE] = { "wipe", 0, CLI_NONE, NULL,
		     "Encrypt zeros after the payload to the end of the image",
		     F, "wipe", 0, 0 },
	[O_PAYLOAD_SIZE] = { "payload-size", 0, CLI_SIZE, "BYTES",
			     "Payload size for the size command", S,
			     "payload_size", 0, 0 },
	[O_INTEGRITY] = { "integrity", 'I', STR, "ALG",
			  "Authenticated LUKS2: hmac-sha256, hmac-sha512, "
			  "hmac-sha1 (aes-xts-random), aead (aes-gcm-random, "
			  "aegis128-random) or poly1305 (chacha20-random)",
			  F | S, "integrity", 0, 0 },
	[O_ALLOW_BAD] = { "allow-bad-sectors", 0, CLI_NONE, NULL,
			  "Authenticated LUKS2: write sectors whose tag fails "
			  "too (still exit 2)", D, "allow_bad_sectors", 0, 0 },
	[O_THREADS] = CLI_OPT_THREADS(F | D | K),
	[O_JSON] = CLI_OPT_JSON(ALL),
	[O_PROGRESS_FREQ] = CLI_OPT_PROGRESS_FREQUENCY(F | D | K),
	[O_PROGRESS_JSON] = CLI_OPT_PROGRESS_JSON(F | D | K),
	[O_ENGINE] = CLI_OPT_ENGINE(F | D | K),
};

static int prepare(struct cli *c)
{
	struct ct *ct = ct_of(c);

	ct->image = c->nargs ? c->args[0] : NULL;
	ct->image_file = NULL;
	ct->header_file = NULL;
	ct->payload_file = NULL;
	ct->out_file = NULL;
	return ct_parse_type(c);
}

static void cleanup(struct cli *c)
{
	struct ct *ct = ct_of(c);

	dmt_luks2_free(ct->luks);
	ct->luks = NULL;
	tool_secret_free(&ct->pass);
	tool_secret_free(&ct->key);
	dmt_file_close(ct->out_file);
	dmt_file_close(ct->payload_file);
	dmt_file_close(ct->header_file);
	dmt_file_close(ct->image_file);
}

const struct cli_tool crypt_tool = {
	.name = "crypt-tool",
	.summary = "crypt-tool: make and read dm-crypt images (plain, LUKS2) offline",
	.commands = commands,
	.n_commands = CMD_COUNT,
	.options = options,
	.n_options = O_COUNT,
	.map_hint = "use `cryptsetup open` (for plain images: the command "
		    "line `crypt-tool format` prints)",
	.help_tail =
		"\nDefaults: LUKS2 with aes-xts-plain64, 512-bit key, 4096-byte "
		"sectors,\n\t16 MiB data offset, argon2id (2000 ms), as "
		"cryptsetup 2.6.1 luksFormat on a file;\n\tplain: "
		"aes-xts-plain64, 256-bit key, sha256, 512-byte sectors (the\n"
		"\tcomplete `cryptsetup open --type plain` line is printed).\n"
		"Secrets are never taken from the command line.\n",
	.prepare = prepare,
	.reason_text = ct_reason_text,
	.priv_size = sizeof(struct ct),
	.cleanup = cleanup,
};

int main(int argc, const char **argv)
{
	return cli_main(&crypt_tool, argc, argv);
}
