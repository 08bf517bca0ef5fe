/* SPDX-License-Identifier: MIT */
/*
 * integrity-tool's pieces: the option and command indices of its table
 * (main.c), the state every command shares (struct it, the framework's
 * c->priv), and the helpers of options.c and output.c.
 */
#ifndef DMT_INTEGRITY_TOOL_IT_H
#define DMT_INTEGRITY_TOOL_IT_H

#include <stdbool.h>
#include <stdint.h>

#include <dmt/integrity.h>
#include <dmt/reason.h>

#include "tools/common/cli.h"
#include "tools/common/engine.h"
#include "tools/common/hex.h"
#include "tools/common/json.h"
#include "tools/common/parse.h"
#include "tools/common/progress.h"
#include "tools/common/secret.h"

#define IT_MAX_KEY_SIZE 4096

enum it_cmd { CMD_FORMAT, CMD_CHECK, CMD_RECALC, CMD_DUMP, CMD_SIZE,
	      CMD_COUNT };

/* Indices in the option table (main.c), in --help order. */
enum it_opt {
	O_INTEGRITY, O_KEY_FILE, O_KEY_SIZE, O_TAG_SIZE, O_SECTOR_SIZE,
	O_JOURNAL_SIZE, O_INTERLEAVE, O_BUFFER, O_JMAC, O_JMAC_KEY_FILE,
	O_JMAC_KEY_SIZE, O_JCRYPT, O_JCRYPT_KEY_FILE, O_JCRYPT_KEY_SIZE,
	O_DATA_DEVICE, O_BITMAP, O_BITMAP_SPB, O_LEGACY_PADDING,
	O_LEGACY_HMAC, O_SALT, O_SEED, O_THREADS, O_JSON, O_DEVICE_SIZE,
	O_DATA_FROM, O_NO_WIPE, O_PAYLOAD_SIZE, O_ALLOW_DISCARDS,
	O_RECALC_RESET, O_PROGRESS_FREQ, O_PROGRESS_JSON, O_ENGINE,
	O_COUNT
};

/* The tool's table (main.c), for main() and the fuzz target. */
extern const struct cli_tool integrity_tool;

/* What the commands share (c->priv). */
struct it {
	const char *device;		/* as given */
	const char *data_path, *payload_path;
	struct dmt_integrity_params o;	/* o.meta...: the open files (owned) */
	struct dmt_reason why;		/* the last operation's failure */
	/* locked memory, wiped and freed by the cleanup */
	struct tool_secret key, jkey, ckey;
	struct tool_progress progress;
};

static inline struct it *it_of(struct cli *c)
{
	return c->priv;
}

/* options.c: the layout, keys and salt of the options given. */
int it_fill_layout(struct cli *c);
int it_fill_keys(struct cli *c);
int it_fill_salt(struct cli *c);

/* files.c: opens o.meta, o.data, o.payload for the command (messages
 * printed); it_close_files closes what is open. */
int it_open_files(struct cli *c);
void it_close_files(struct it *it);
/* Whether an existing device holds anything but zeros (looked at up to
 * a few MiB of its data extents). */
bool it_device_has_data(struct dmt_file *f);

/* output.c */
const char *it_canonical_alg(const char *name);
void it_flag_names(uint32_t flags, char *buf, size_t size);
struct json_object *it_sb_json(const struct dmt_integrity_sb *sb);
void it_geom_json(struct json_object *j, const struct dmt_integrity_geom *g);
/* --debug: the superblock and geometry in one line each. */
void it_debug_geometry(const struct dmt_integrity_result *r);
/* The dm table line for `dmsetup create`; false (and a note in *why)
 * when a path cannot be written in the kernel's table syntax. */
bool it_table_line(const struct it *it, const struct dmt_integrity_sb *sb,
		   char *buf, size_t size, const char **why);
/* The failure of a library call: its reason (or the errno) as one line. */
void it_print_why(const struct cli *c, const struct dmt_integrity_result *r,
		  int err);
bool it_reason_text(const struct cli *c, const struct dmt_reason *r,
		    char *buf, size_t size);

/* The commands (one cmd_<name>.c each). */
int it_cmd_format(struct cli *c);
int it_cmd_check(struct cli *c);
int it_cmd_recalculate(struct cli *c);
int it_cmd_dump(struct cli *c);
int it_cmd_size(struct cli *c);
/* check's walk (cmd_check.c), recalculate's too */
int it_check_run(struct cli *c, bool recalc);

#endif /* DMT_INTEGRITY_TOOL_IT_H */
