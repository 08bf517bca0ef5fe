/* SPDX-License-Identifier: MIT */
/*
 * fsverity-tool's pieces: the option and command indices of its table
 * (main.c), the option values (options.c), why a file failed
 * (reasons.c), the list of files a run digests (walk.c), the run over the
 * library's batch interface (run.c) with its outputs (out.c), and the
 * commands (cmd_digest.c, cmd_sign.c).
 */
#ifndef DMT_FSVERITY_TOOL_FVT_H
#define DMT_FSVERITY_TOOL_FVT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <dmt/fsverity.h>
#include <dmt/io.h>
#include <dmt/reason.h>
#include <dmt/sign.h>

#include "tools/common/cli.h"
#include "tools/common/engine.h"
#include "tools/common/hex.h"
#include "tools/common/json.h"
#include "tools/common/parse.h"
#include "tools/common/progress.h"
#include "tools/common/secret.h"

enum fvt_cmd { CMD_DIGEST, CMD_SIGN, CMD_COUNT };

/* Indices in the option table (main.c), in --help order. */
enum fvt_opt {
	O_HASH_ALG, O_BLOCK_SIZE, O_SALT, O_COMPACT, O_FOR_BUILTIN_SIG,
	O_OUT_TREE, O_OUT_DESC, O_OUT_DIR, O_KEY, O_CERT, O_PASS_FILE,
	O_PKCS11_ENGINE, O_PKCS11_MODULE, O_PKCS11_KEYID, O_MANIFEST,
	O_RECURSIVE, O_FILES_FROM, O_NULL, O_STRICT, O_STOP_ON_ERROR,
	O_JSON, O_THREADS, O_PROGRESS_FREQ, O_PROGRESS_JSON, O_ENGINE,
	O_COUNT
};

extern const struct cli_tool fsverity_tool;
/* Invoked as "fsverity": fsverity-utils 1.5's exit codes and first-error
 * stop (main.c; the man page's COMPATIBILITY section). */
extern bool fvt_fsverity_mode;

/* One path of the run, in output order. */
struct fvt_entry {
	char *path;		/* as printed */
	char *rel;		/* relative output name (--out-dir) */
	uint64_t size;		/* from stat, or FVT_SIZE_UNKNOWN (the
				 * library's fstat finds it) */
	long alias;		/* >= 0: a hard link of that entry */
	uint64_t nlink;		/* links, from the library's fstat (0: it
				 * did none) */
	int err;		/* found while listing (not submitted) */
	const char *why;	/* message for err (static) */
	bool done;		/* result below is final */
	struct dmt_fsverity_digest digest;
	struct dmt_reason reason;
	struct dmt_fsverity_metadata_callbacks cb;	/* --out-dir */
};

#define FVT_SIZE_UNKNOWN UINT64_MAX

/* A printed, freed entry kept for the link_of results that may name it. */
struct fvt_kept {
	size_t at; /* its index */
	struct fvt_entry e;
};

/*
 * The entries base .. base + n - 1 (indices count from the first entry of
 * the run).  A streamed run frees the printed ones as it goes, keeping a
 * copy of those with several links (kept, in index order).
 */
struct fvt_list {
	struct fvt_entry *e;
	size_t n, cap;
	size_t base;
	uint64_t total_bytes;
	struct fvt_kept *kept;
	size_t nkept, kept_cap;
};

/* An output (tools/common/outfile.h), written in order from pos or, the
 * tree, at offsets. */
struct fvt_out {
	struct dmt_file *f;
	uint64_t pos;
};

/* What the commands share (c->priv). */
struct fvt {
	struct dmt_fsverity_params p;
	uint8_t *salt;
	size_t salt_len;
	bool dedup;			/* hard links hashed once */
	/* no stat while listing: the library's open and fstat find the type,
	 * size and links (not with progress, whose total needs the sizes) */
	bool defer_stat;
	bool planned;			/* fvt_plan() ran */
	/* digest without --out-dir or progress: the list is hashed and
	 * printed while it is made, in blocks, and freed behind */
	bool streaming;
	struct dmt_fsverity_batch *batch; /* between fvt_run_begin/_end */
	size_t queued;			/* entries handed to the batch */
	struct fvt_list list;
	struct fvt_out tree_out, desc_out, manifest;
	struct dmt_fsverity_metadata_callbacks joint_cb;
	size_t next_print;		/* first entry not printed yet */
	int first_err;			/* exit status of the first failure */
	bool stop_on_error;
	bool stop;			/* --stop-on-error hit */
	bool out_dir_meta;		/* digest --out-dir */
	uint64_t bytes_done;
	struct tool_progress progress;
	/* the command's per-result action (print, sign) */
	int (*emit)(struct cli *c, struct fvt_entry *e);
	struct tool_secret pass;	/* sign: passphrase, locked, wiped */
	struct dmt_sign_key *signer;	/* sign: the loaded key */
	const char *sigfile;		/* sign FILE SIGFILE */
};

static inline struct fvt *fvt_of(struct cli *c)
{
	return c->priv;
}

/* options.c: the shared parameters into f->p; refused combinations */
int fvt_params(struct cli *c);
int fvt_combinations(struct cli *c);

/* walk.c: the files of the arguments, -r and --files-from, in order.
 * fvt_plan() decides defer_stat (and starts the progress); fvt_collect()
 * calls it if the command did not.  A streamed run (f->streaming, between
 * fvt_run_begin() and fvt_run_end()) hands each block of entries to the
 * batch as it is listed. */
void fvt_plan(struct cli *c);
int fvt_collect(struct cli *c, const char *const *args, int nargs);
struct fvt_entry *fvt_entry_at(struct fvt *f, size_t i);
void fvt_list_free(struct fvt_list *l);

/* "is a directory" / "FIFO", ...: the entry's error for a path of mode
 * that is no regular file (the listing's and the library's alike). */
void fvt_not_regular(struct fvt_entry *e, mode_t mode);
/* An entry's why for a character device named as FILE: digested as
 * fsverity-utils digests it, with the size stat gives it (0), so as an
 * empty file, never read. */
extern const char fvt_char_device[];

/* run.c: digests every listed file; emit() per entry in order.  Returns
 * 0 or the exit code of the first failure.  fvt_run() is begin, push and
 * end; push queues the entries listed since the last push (streaming:
 * and frees the printed ones); end takes the listing's error. */
int fvt_run(struct cli *c);
int fvt_run_begin(struct cli *c);
int fvt_run_push(struct cli *c);
/* Streaming: every queued entry hashed and printed now (the printed
 * ones freed). */
int fvt_run_drain(struct cli *c);
int fvt_run_end(struct cli *c, int listing_err);
/* An emit() that only lets the results stand (sign prints later). */
int fvt_emit_nothing(struct cli *c, struct fvt_entry *e);
/* The exit code of an entry's failure. */
int fvt_entry_exit(const struct fvt_entry *e);
/* "PATH: why" on stderr (and a JSON line with --json). */
void fvt_entry_error(struct cli *c, const struct fvt_entry *e);
/* The digest of e, or of the entry it is a hard link of. */
const struct fvt_entry *fvt_origin(const struct fvt *f,
				   const struct fvt_entry *e);

/* out.c: seek for an output written out of order (a Merkle tree);
 * errors are printed with the path. */
void fvt_out_init(struct fvt_out *o);
bool fvt_out_is_open(const struct fvt_out *o);
int fvt_out_open(struct fvt_out *o, const char *path, bool seek);
int fvt_out_write(struct fvt_out *o, const void *buf, size_t len);
int fvt_out_commit(struct fvt_out *o);
void fvt_out_abort(struct fvt_out *o);
/* A complete output of one of many files: synced and renamed with the
 * next group (fvt_out_flush: every pending one; the first error). */
int fvt_out_commit_later(struct fvt_out *o);
int fvt_out_flush(void);
/* DIR/rel + suffix, with the directories in between created. */
int fvt_out_dir_path(const char *dir, const char *rel, const char *suffix,
		     char **out);
/* --out-merkle-tree / --out-descriptor opened, f->joint_cb set. */
int fvt_joint_outputs(struct cli *c);
int fvt_out_dir_callbacks(struct cli *c, struct fvt_entry *e);
int fvt_out_dir_finish(struct cli *c, struct fvt_entry *e, bool ok);

/* cmd_digest.c: an entry's digest as JSON; one JSON line on stdout. */
struct json_object;
struct json_object *fvt_entry_json(struct cli *c, const struct fvt_entry *e);
void fvt_json_line(struct cli *c, struct json_object *j);
int fvt_make_out_dir(const char *dir);

/* The commands. */
int fvt_cmd_digest(struct cli *c);
int fvt_cmd_sign(struct cli *c);

#endif /* DMT_FSVERITY_TOOL_FVT_H */
