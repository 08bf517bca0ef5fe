/* SPDX-License-Identifier: MIT */
/*
 * Internal to verity-tool: the parsed command line and what the command
 * files (build.c, check.c, sign.c, info.c) share.
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
	const char *act_name;
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

#define GIVEN(c, id) cli_given((c)->cli, (id))
#define VAL(c, id) cli_str((c)->cli, (id))
#define OPT_NAME(id) (vt_options[(id)].name)

enum open_mode { OPEN_READ, OPEN_BUILD, OPEN_REPAIR };

struct files {
	struct dmt_file data_f, hash_f, fec_f;
	struct dmt_file *data, *hash;	/* hash == data on one file */
	struct dmt_file *fec;		/* NULL, &fec_f, hash or data */
	bool data_rw;			/* data opened for writing */
	bool created;			/* new hash file: temp + rename */
	bool fec_created;		/* same for the FEC file */
};

/* Blocks named in a FEC report without -v (the count goes on). */
#define FEC_PRINT_MAX 32

/* ---- opts.c ---- */
int usage_error(const char *msg);
int num_opt(struct vt *c, enum opt_id id, uint64_t *out);
int tree_opts(struct vt *c);
int fec_opts(struct vt *c);
int fec_block_sizes(const struct vt *c);
int sign_opts(const struct vt *c);
int check_params(struct vt *c);
/* A library reason as one message line (veritysetup's wording where it
 * has one); dev names the hash file for superblock reasons. */
bool reason_text(const struct dmt_reason *r, const char *dev, char *buf,
		 size_t size);
/* The framework's reason_text hook (dev: the hash file). */
bool vt_reason_text(const struct cli *cl, const struct dmt_reason *r,
		    char *buf, size_t size);
/* Prints a reason (remembered for the --json error object). */
void vt_reason_err(const struct vt *c, const struct dmt_reason *r);

/* ---- files.c ---- */
int open_err(const char *path, int err);
void close_files(struct files *f);
bool same_target(const char *a, const char *b);
int open_files(struct vt *c, struct files *f, enum open_mode mode);
void warn_tail(const char *path, uint64_t size, uint32_t dbs);
int resolve_data(struct vt *c, struct files *f);
int open_out(struct vt *c, const char *path, const char *what,
	     struct dmt_file *rf);
int write_out(struct dmt_file *rf, const void *buf, size_t len);
int write_root_file(struct dmt_file *rf, const uint8_t *root, size_t ds);
int get_root(struct vt *c, size_t ds, uint8_t *root);
int lib_error(const char *path, const char *fallback, int err);
int commit(struct dmt_file *f, bool created, const char *path);
/* The FEC settings of the command line over the open files. */
struct dmt_verity_fec fec_opts_for(const struct vt *c, struct files *f);
/* A failed FEC layout: the message for the reason, the exit code. */
int fec_layout_error(const struct vt *c, const struct dmt_reason *why,
		     int err);

/* ---- check.c ---- */
/* Fills c->p from the superblock (or the options with --no-superblock). */
int load_params(struct vt *c, struct files *f);

/* ---- output.c ---- */
void salt_text(const struct dmt_verity_params *p,
	       char out[2 * DMT_VERITY_SALT_MAX + 1]);
void print_header(const struct vt *c, const char *hash_path,
		  const struct dmt_verity_geometry *g, const uint8_t *root);
const char *lower_name(const struct dmt_verity_params *p, char *buf);
uint64_t hash_area_bytes(const struct dmt_verity_geometry *g);
void json_fec(const struct vt *c, struct json_object *o);
struct json_object *json_params(const struct vt *c,
				const struct dmt_verity_geometry *g);
int json_build(const struct vt *c, const struct dmt_verity_result *res);
void debug_geometry(const struct vt *c, const struct dmt_verity_geometry *g);
void debug_fec(const struct vt *c);

/* ---- sign.c ---- */
int sign_root(const struct vt *c, const char *root_hex, uint8_t **sig,
	      size_t *len);
int sign_probe(const struct vt *c, size_t ds);
int check_signature(const struct vt *c, const uint8_t *root, size_t ds);

/* ---- commands ---- */
int act_build(struct vt *c);
int act_check(struct vt *c);
int act_sign(struct vt *c);
int act_dump(struct vt *c);
int act_size(struct vt *c);

#endif /* DMT_VERITY_TOOL_VT_H */
