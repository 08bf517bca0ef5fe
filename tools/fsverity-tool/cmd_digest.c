// SPDX-License-Identifier: MIT
/*
 * digest: fsverity digest's lines ("<alg>:<hex> <path>", --compact,
 * --for-builtin-sig), or one JSON object per file; --out-merkle-tree and
 * --out-descriptor as fsverity 1.5 writes them, --out-dir per file.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/fsverity-tool/fvt.h"

#define HEX_MAX (2 * DMT_FSVERITY_FORMATTED_MAX + 1)

/* JSON of an entry's digest (the caller adds to it and prints it). */
struct json_object *fvt_entry_json(struct cli *c, const struct fvt_entry *e)
{
	struct fvt *f = fvt_of(c);
	const struct fvt_entry *o = fvt_origin(f, e);
	uint8_t fmt[DMT_FSVERITY_FORMATTED_MAX];
	size_t fmt_len = dmt_fsverity_format_digest(&o->digest, fmt);
	struct json_object *j = json_object_new_object();
	char hex[HEX_MAX], salt[2 * DMT_FSVERITY_MAX_SALT + 1];

	cli_json_add_str(j, "path", e->path);
	cli_json_add_u64(j, "size", o->size);
	cli_json_add_str(
		j, "algorithm",
		dmt_fsverity_hash_alg_name(o->digest.digest_algorithm));
	cli_json_add_u64(j, "block_size", f->p.block_size);
	tool_hex(f->salt, f->salt_len, salt);
	cli_json_add_str(j, "salt", salt);
	tool_hex(o->digest.digest, o->digest.digest_size, hex);
	cli_json_add_str(j, "digest", hex);
	tool_hex(fmt, fmt_len, hex);
	cli_json_add_str(j, "formatted_digest", hex);
	return j;
}

void fvt_json_line(struct cli *c, struct json_object *j)
{
	tool_progress_clear(STDOUT_FILENO);
	printf("%s\n", json_object_to_json_string_ext(
			       j, JSON_C_TO_STRING_PLAIN |
					  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(j);
	c->json_printed = true;
}

static int print_digest(struct cli *c, struct fvt_entry *e)
{
	const struct fvt_entry *o = fvt_origin(fvt_of(c), e);
	uint8_t fmt[DMT_FSVERITY_FORMATTED_MAX];
	char hex[HEX_MAX];

	if (c->json) {
		fvt_json_line(c, fvt_entry_json(c, e));
		return 0;
	}
	tool_progress_clear(STDOUT_FILENO);
	if (cli_given(c, O_FOR_BUILTIN_SIG)) {
		size_t n = dmt_fsverity_format_digest(&o->digest, fmt);

		tool_hex(fmt, n, hex);
	} else {
		tool_hex(o->digest.digest, o->digest.digest_size, hex);
	}
	if (cli_given(c, O_COMPACT))
		printf("%s\n", hex);
	else if (cli_given(c, O_FOR_BUILTIN_SIG))
		printf("%s %s\n", hex, e->path);
	else
		printf("%s:%s %s\n",
		       dmt_fsverity_hash_alg_name(o->digest.digest_algorithm),
		       hex, e->path);
	return 0;
}

/* --out-dir DIR: created when missing (its parent must exist). */
int fvt_make_out_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		tool_err_errno(dir, "cannot create --out-dir", -errno);
		return -errno;
	}
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		tool_err("%s: --out-dir is not a directory", dir);
		return -ENOTDIR;
	}
	return 0;
}

int fvt_cmd_digest(struct cli *c)
{
	struct fvt *f = fvt_of(c);
	bool joint = cli_given(c, O_OUT_TREE) || cli_given(c, O_OUT_DESC);
	int err;

	if (joint && cli_given(c, O_OUT_DIR)) {
		tool_err("--out-dir writes each file's tree and descriptor; it "
			 "does not go with --out-merkle-tree/--out-descriptor");
		return -EINVAL;
	}
	/* a line per file into a file or pipe: fewer, bigger writes (a
	 * terminal keeps its line buffering) */
	if (!isatty(STDOUT_FILENO))
		setvbuf(stdout, NULL, _IOFBF, 64u << 10);
	f->out_dir_meta = cli_given(c, O_OUT_DIR);
	/* fsverity 1.5 writes a linked file's metadata once per path */
	f->dedup = !joint && !f->out_dir_meta;
	if (f->out_dir_meta) {
		err = fvt_make_out_dir(cli_str(c, O_OUT_DIR));
		if (err)
			return err;
	}
	f->emit = print_digest;
	fvt_plan(c);
	/* --out-dir checks every output name before it writes one */
	f->streaming = f->defer_stat && !f->out_dir_meta;
	if (f->streaming) {
		/* hashed and printed while listed: memory stays bounded */
		err = fvt_joint_outputs(c);
		if (!err)
			err = fvt_run_begin(c);
		return err ? err
			   : fvt_run_end(c, fvt_collect(c, c->args, c->nargs));
	}
	err = fvt_collect(c, c->args, c->nargs);
	if (!err)
		err = fvt_joint_outputs(c);
	return err ? err : fvt_run(c);
}
