/* SPDX-License-Identifier: MIT */
/*
 * crypt-tool's pieces: the command and option indices of its table
 * (main.c), the state the commands share (struct ct, the framework's
 * c->priv: every secret it holds lives in locked memory and is wiped by
 * the cleanup), and the helpers of the other files.
 */
#ifndef DMT_CRYPT_TOOL_CT_H
#define DMT_CRYPT_TOOL_CT_H

#include <stdbool.h>
#include <stdint.h>

#include <dmt/crypt.h>
#include <dmt/io.h>
#include <dmt/luks2.h>
#include <dmt/reason.h>

#include "tools/common/cli.h"
#include "tools/common/engine.h"
#include "tools/common/json.h"
#include "tools/common/parse.h"
#include "tools/common/progress.h"
#include "tools/common/secret.h"

enum ct_cmd {
	CMD_FORMAT, CMD_DECRYPT, CMD_DUMP, CMD_SIZE, CMD_CHECK, CMD_COUNT
};

/* Indices in the option table (main.c), in --help order. */
enum ct_opt {
	O_TYPE, O_CIPHER, O_KEY_SIZE, O_SECTOR_SIZE, O_HASH, O_KEY_FILE,
	O_KEYFILE_OFFSET, O_KEYFILE_SIZE, O_OFFSET, O_SKIP, O_IV_LARGE,
	O_VOLUME_KEY_FILE, O_PBKDF, O_PBKDF_MEMORY, O_PBKDF_PARALLEL,
	O_ITER_TIME, O_PBKDF_FORCE_ITER, O_KEYSLOT_CIPHER, O_KEYSLOT_KEY_SIZE,
	O_KEY_SLOT, O_UUID, O_LABEL, O_SUBSYSTEM, O_METADATA_SIZE,
	O_KEYSLOTS_SIZE, O_HEADER, O_DATA_FROM, O_DEVICE_SIZE, O_WIPE,
	O_PAYLOAD_SIZE, O_INTEGRITY, O_ALLOW_BAD, O_THREADS, O_JSON, O_PROGRESS_FREQ, O_PROGRESS_JSON,
	O_ENGINE, O_COUNT
};

enum ct_type { CT_LUKS2, CT_PLAIN };

extern const struct cli_tool crypt_tool;

/* The dm-crypt mapping a command works on, whatever the type. */
struct ct_map {
	const char *cipher;		/* cryptsetup spelling */
	unsigned int key_size;		/* bytes */
	unsigned int sector_size;
	bool sector_size_given;		/* --sector-size (else the default) */
	uint64_t offset;		/* bytes on the data device */
	uint64_t iv_offset;		/* 512-byte units (skip / iv_tweak) */
	bool iv_large_sectors;
};

struct ct {
	const char *image;		/* as given */
	enum ct_type type;
	struct tool_secret pass, key;	/* passphrase, volume/plain key */
	struct dmt_file *image_file, *header_file, *payload_file, *out_file;
	struct dmt_luks2 *luks;
	struct tool_progress progress;
};

static inline struct ct *ct_of(struct cli *c)
{
	return c->priv;
}

/* secrets.c */
/* The passphrase as cryptsetup takes it: --key-file FILE (whole file, or
 * --keyfile-size bytes, after --keyfile-offset), --key-file - (all of
 * stdin, the same way), the terminal (asked twice when verify), or a line
 * of stdin (--keyfile-offset and --keyfile-size apply too).  Empty
 * passphrases are refused (tools/common/secret.h has every rule). */
int ct_read_passphrase(struct cli *c, const char *prompt_for, bool verify,
		       struct tool_secret *out);
/* Exactly len bytes of path after offset (--volume-key-file, plain key
 * files; key names the key in messages: "volume key"); a shorter file is
 * -EINVAL with a message. */
int ct_read_key_bytes(const char *path, uint64_t offset, size_t len,
		      const char *key, struct tool_secret *out);
/* The plain-mode key (cryptsetup 2.6.1's rules; hashed says whether the
 * --hash applied). */
int ct_plain_key(struct cli *c, const char *hash, size_t key_size,
		 bool verify, struct tool_secret *key, bool *hashed);
/* Whether --key-file names a regular file (not "-"). */
bool ct_key_file_regular(const struct cli *c);

/* options.c */
int ct_parse_type(struct cli *c);
/* --cipher / --key-size (bits) / --sector-size for the type; checked. */
int ct_map_options(struct cli *c, struct ct_map *m);
/* --device-size: 0 with *is_auto, or bytes; *given false when absent. */
int ct_device_size_opt(struct cli *c, uint64_t *bytes, bool *is_auto,
		       bool *given);
const char *ct_plain_hash(const struct cli *c);
/* cryptsetup open's plain command line for the mapping. */
void ct_plain_open_line(const struct cli *c, const struct ct_map *m,
			bool hashed, char *buf, size_t size);
/* The LUKS2 creation parameters of the options (strings point into c). */
int ct_luks2_params(struct cli *c, const struct ct_map *m,
		    struct dmt_luks2_params *p);
int ct_keyslot_params(struct cli *c, struct dmt_luks2_keyslot_params *kp);

/* io.c */
/* The engine over the files: n bytes of in at in_off -> out at out_off
 * (sectors from 0), with progress over [done_before, total). */
int ct_stream(struct cli *c, const struct ct_map *m, const uint8_t *key,
	      struct dmt_file *in, uint64_t in_off, struct dmt_file *out,
	      uint64_t out_off, uint64_t bytes, uint64_t first_sector,
	      bool encrypt);
/* Opens an output by the rule of every tool (tools/common/outfile.h):
 * in_place for an image or header (an existing one written in place and
 * locked, never a stream), else decrypt's output (a regular file
 * replaced under a temporary name, a FIFO or pipe written as a stream).
 * *created: a temporary that dmt_file_commit renames. */
int ct_open_output(struct dmt_file **f, const char *path, bool in_place,
		   bool *created);
int ct_finish_output(struct dmt_file *f, bool created);
bool ct_is_luks(struct dmt_file *f);
int ct_file_size(struct dmt_file *f, uint64_t *size);

/* reasons.c */
bool ct_reason_text(const struct cli *c, const struct dmt_reason *r,
		    char *buf, size_t size);
/* A library failure: the reason, or "what: strerror". */
void ct_print_why(const struct cli *c, const struct dmt_reason *r, int err,
		  const char *path, const char *what);

/* The commands (one file each). */
int ct_cmd_format(struct cli *c);
int ct_cmd_decrypt(struct cli *c);
int ct_cmd_dump(struct cli *c);
int ct_cmd_size(struct cli *c);
int ct_cmd_check(struct cli *c);

/* cmd_format.c: --data-from opened (differs from the image and --header). */
int ct_open_payload(struct cli *c, uint64_t *size);
/* LUKS2 without --sector-size: 512-byte sectors, as luksFormat 2.6.1
 * reverts, when --offset (sectors) is no multiple of 4096 or the image's
 * size after format (need: what --device-size auto gives a new image, 0
 * if always aligned) is no multiple of 4096 bytes. */
int ct_luks2_default_sector(struct cli *c, struct ct_map *m, uint64_t need);
/* After the header is created: the keyslot's costs (the benchmark), the
 * passphrase (asked twice on a terminal), the keyslot added to ct->luks. */
int ct_luks2_keyslot(struct cli *c, struct dmt_luks2_keyslot_params *kp,
		     int *keyslot);
/* cmd_decrypt.c: the LUKS2 header of the image (or --header) loaded into
 * ct->luks and unlocked with the passphrase (exit 2 when it is wrong). */
int ct_luks2_unlock(struct cli *c);

/* auth.c: authenticated LUKS2 (--integrity). */
int ct_auth_format(struct cli *c);
int ct_auth_size(struct cli *c, uint64_t payload);
/* decrypt of an image whose header has an integrity segment (after
 * ct_luks2_unlock); out is the output path. */
int ct_auth_decrypt(struct cli *c, const char *out);
/* Whether the loaded header has an integrity segment. */
bool ct_auth_header(struct cli *c);
/* What check (cmd_check.c) and decrypt share: the image with its
 * integrity segment into im (after ct_luks2_unlock, progress under name),
 * the failing sectors on stdout and stderr, the --json result. */
struct dmt_auth_image_params;
struct dmt_auth_result;
void ct_auth_image(struct cli *c, struct dmt_auth_image_params *im,
		   const char *name, const char *verb);
void ct_auth_report_bad(struct cli *c, const struct dmt_auth_result *r,
			const char *what);
void ct_auth_result_json(struct cli *c, const struct dmt_auth_result *r,
			 const char *out);

#endif /* DMT_CRYPT_TOOL_CT_H */
