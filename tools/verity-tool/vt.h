/* SPDX-License-Identifier: MIT */
/*
 * Internal to verity-tool: its state of one run (the framework's c->priv)
 * and what the files share: main.c (the command and option tables),
 * options.c (option values), reasons.c (library reasons as messages),
 * files.c and output.c (helpers) and one cmd_<name>.c per command.
 */
#ifndef DMT_VERITY_TOOL_VT_H
#define DMT_VERITY_TOOL_VT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include <dmt/fec.h>
#include <dmt/hash.h>
#include <dmt/io.h>
#include <dmt/reason.h>
#include <dmt/verity.h>
#include "tools/common/cli.h"
#include "tools/common/engine.h"
#include "tools/common/hex.h"
#include "tools/common/json.h"
#include "tools/common/parse.h"
#include "tools/common/progress.h"
#include "tools/common/secret.h"

/* Commands, in the order of the framework's command table (main.c). */
enum vt_cmd { CMD_BUILD, CMD_FORMAT, CMD_VERIFY, CMD_REPAIR, CMD_SIGN,
	      CMD_DUMP, CMD_SIZE, CMD_COUNT };

/* What a command does; option masks are built from these. */
enum action {
	ACT_BUILD = CLI_CMD(CMD_BUILD) | CLI_CMD(CMD_FORMAT),
	ACT_VERIFY = CLI_CMD(CMD_VERIFY),
	ACT_REPAIR = CLI_CMD(CMD_REPAIR),
	ACT_SIGN = CLI_CMD(CMD_SIGN),
	ACT_DUMP = CLI_CMD(CMD_DUMP),
	ACT_SIZE = CLI_CMD(CMD_SIZE),
};
#define ACT_CHECK (ACT_VERIFY | ACT_REPAIR)
#define ACT_TREE (ACT_BUILD | ACT_CHECK)
#define ACT_ALL (ACT_TREE | ACT_DUMP | ACT_SIZE)
#define ACT_FEC (ACT_ALL)

/* The tool's options: indices into the framework's option table. */
enum opt_id {
	OPT_HASH,
	OPT_DBS,
	OPT_HBS,
	OPT_DATA_BLOCKS,
	OPT_HASH_OFFSET,
	OPT_SALT,
	OPT_UUID,
	OPT_FORMAT,
	OPT_NO_SB,
	OPT_ROOT_FILE,
	OPT_FEC_DEVICE,
	OPT_FEC_ROOTS,
	OPT_FEC_OFFSET,
	OPT_SIGN_KEY,
	OPT_SIGN_CERT,
	OPT_KEY,
	OPT_PASS_FILE,
	OPT_CERT,
	OPT_SIG,
	OPT_SIDECAR,
	OPT_THREADS,
	OPT_JSON,
	OPT_SEED,
	OPT_PROG_FREQ,
	OPT_PROG_JSON,
	OPT_ENGINE,
	OPT_DATA_SIZE,
	OPT_COUNT
};

/* The option table (main.c): long names for messages. */
extern const struct cli_option vt_options[OPT_COUNT];

/* verity-tool's state of one run (the framework's c->priv). */
struct vt {
	struct cli *cli;		/* the framework's parsed line */
	enum action act;
	const char *args[4];
	int nargs;
	struct dmt_verity_params p;
	char uuid_text[40];		/* as printed by build */
	char hash_text[DMT_VERITY_HASH_NAME_MAX];
	int prog_freq;			/* --progress-frequency */
	struct tool_progress prog;

	/* FEC: --fec-device given (size: any --fec-* option) */
	bool fec;
	unsigned int fec_roots;
	uint64_t fec_offset;
	bool have_fl;			/* fl is known */
	struct dmt_fec_layout fl;
	/* the library stage running or last run, for messages */
	enum dmt_verity_stage stage;
	/* build: what was written besides the images, for --json */
	const char *sig_out, *sidecar_root, *sidecar_sig;
};


enum vt_open_mode { VT_OPEN_READ, VT_OPEN_BUILD, VT_OPEN_REPAIR };

struct vt_files {
	struct dmt_file *data_f, *hash_f, *fec_f;	/* owned */
	struct dmt_file *data, *hash;	/* hash == data on one file */
	struct dmt_file *fec;		/* NULL, fec_f, hash or data */
	bool data_rw;			/* data opened for writing */
	bool created;			/* new hash file: temp + rename */
	bool fec_created;		/* same for the FEC file */
};

/* Blocks named in a FEC report without -v (the count goes on). */
#define FEC_PRINT_MAX 32

/* ---- options.c ---- */
int vt_usage_error(const char *msg);
int vt_num_opt(struct vt *c, enum opt_id id, uint64_t *out);
int vt_tree_opts(struct vt *c);
int vt_fec_opts(struct vt *c);
int vt_fec_block_sizes(const struct vt *c);
int vt_sign_opts(const struct vt *c);
int vt_check_params(struct vt *c);
/* FEC layout without the FEC file (dump, size): veritysetup's arithmetic. */
int vt_fec_plan(struct vt *c, const struct dmt_verity_geometry *g,
		bool shared, uint64_t hash_file_bytes);

/* ---- reasons.c ---- */
/* The framework's reason_text hook (dev: the hash file). */
bool vt_reason_text(const struct cli *cl, const struct dmt_reason *r,
		    char *buf, size_t size);
/* Prints a reason (remembered for the --json error object). */
void vt_reason_err(const struct vt *c, const struct dmt_reason *r);

/* ---- files.c ---- */
int vt_open_err(const char *path, int err);
void vt_close_files(struct vt_files *f);
bool vt_same_target(const char *a, const char *b);
int vt_open_files(struct vt *c, struct vt_files *f, enum vt_open_mode mode);
void vt_warn_tail(const char *path, uint64_t size, uint32_t dbs);
int vt_resolve_data(struct vt *c, struct vt_files *f);
int vt_open_out(struct vt *c, const char *path, const char *what,
	     struct dmt_file **rf);
int vt_write_out(struct dmt_file *rf, const void *buf, size_t len);
int vt_write_root_file(struct dmt_file *rf, const uint8_t *root, size_t ds);
int vt_get_root(struct vt *c, size_t ds, uint8_t *root);
int vt_lib_error(const char *path, const char *fallback, int err);
int vt_commit(struct dmt_file *f, bool created, const char *path);
/* The FEC settings of the command line over the open files. */
struct dmt_verity_fec_params vt_fec_opts_for(const struct vt *c,
					     struct vt_files *f);
/* A failed FEC layout: the message for the reason, the exit code. */
int vt_fec_layout_error(const struct vt *c, const struct dmt_reason *why,
		     int err);

/* ---- cmd_check.c ---- */
/* Fills c->p from the superblock (or the options with --no-superblock). */
int vt_load_params(struct vt *c, struct vt_files *f);

/* ---- output.c ---- */
void vt_salt_text(const struct dmt_verity_params *p,
	       char out[2 * DMT_VERITY_SALT_MAX + 1]);
void vt_print_header(const struct vt *c, const char *hash_path,
		  const struct dmt_verity_geometry *g, const uint8_t *root);
const char *vt_lower_name(const struct dmt_verity_params *p, char *buf);
uint64_t vt_hash_area_bytes(const struct dmt_verity_geometry *g);
void vt_json_fec(const struct vt *c, struct json_object *o);
struct json_object *vt_json_params(const struct vt *c,
				const struct dmt_verity_geometry *g);
int vt_json_build(const struct vt *c, const struct dmt_verity_result *res);
void vt_debug_geometry(const struct vt *c, const struct dmt_verity_geometry *g);
void vt_debug_fec(const struct vt *c);

/* ---- cmd_sign.c ---- */
int vt_sign_root(const struct vt *c, const char *root_hex, uint8_t **sig,
	      size_t *len);
int vt_sign_probe(const struct vt *c, size_t ds);
int vt_check_signature(const struct vt *c, const uint8_t *root, size_t ds);

/* ---- the commands (cmd_<name>.c): verify and repair are vt_cmd_check ---- */
int vt_cmd_build(struct cli *cl);
int vt_cmd_check(struct cli *cl);
int vt_cmd_sign(struct cli *cl);
int vt_cmd_dump(struct cli *cl);
int vt_cmd_size(struct cli *cl);

#endif /* DMT_VERITY_TOOL_VT_H */
