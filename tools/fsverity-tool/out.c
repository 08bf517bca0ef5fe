// SPDX-License-Identifier: MIT
/*
 * Output files, by the rule of every tool (tools/common/outfile.h): a new
 * or regular file is written under a temporary name in its directory,
 * synced and renamed when complete, so a failed run leaves nothing under
 * the names asked for; a device in place; a FIFO or pipe as a stream
 * (the Merkle tree, written out of order, refuses one).
 * --out-merkle-tree and --out-descriptor take every file's metadata the
 * way fsverity-utils 1.5 writes it (each tree pwritten from offset 0, so
 * later files overwrite earlier ones' blocks; descriptors appended one
 * after another); --out-dir writes one pair per file.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tools/common/outfile.h"
#include "tools/fsverity-tool/fvt.h"

void fvt_out_init(struct fvt_out *o)
{
	o->f = NULL;
	o->pos = 0;
}

bool fvt_out_is_open(const struct fvt_out *o)
{
	return o->f != NULL;
}

int fvt_out_open(struct fvt_out *o, const char *path, bool seek)
{
	bool created;

	o->pos = 0;
	return tool_out_open(&o->f, path,
			     TOOL_OUT_PUBLIC | (seek ? TOOL_OUT_SEEK : 0),
			     "cannot create", &created);
}

int fvt_out_write(struct fvt_out *o, const void *buf, size_t len)
{
	int err = dmt_pwrite_full(o->f, buf, len, o->pos);

	if (err)
		tool_err_errno(dmt_file_path(o->f), "cannot write", err);
	else
		o->pos += len;
	return err;
}

int fvt_out_commit(struct fvt_out *o)
{
	int err = 0;

	if (!fvt_out_is_open(o))
		return 0;
	err = tool_out_commit(o->f);
	if (err)
		tool_err_errno(dmt_file_path(o->f), "cannot write", err);
	dmt_file_close(o->f);
	o->f = NULL;
	return err;
}

void fvt_out_abort(struct fvt_out *o)
{
	dmt_file_close(o->f);
	o->f = NULL;
}

/*
 * Complete outputs of many files (--out-dir) are synced and renamed in
 * groups: writeback starts as each one is done, then one syncfs flushes
 * the group and each is renamed; an fsync each would flush the disk's
 * cache once per file (2000 small files: 13 s became 55-90 s here).
 */
#define PENDING_MAX 64

static struct fvt_out pending[PENDING_MAX];
static size_t n_pending;

int fvt_out_flush(void)
{
	struct dmt_file *files[PENDING_MAX];
	size_t failed;
	int err;

	for (size_t i = 0; i < n_pending; i++)
		files[i] = pending[i].f;
	err = dmt_file_commit_many(files, n_pending, &failed);
	if (err)
		tool_err_errno(dmt_file_path(files[failed]), "cannot write",
			       err);
	for (size_t i = 0; i < n_pending; i++)
		fvt_out_abort(&pending[i]); /* closed; a failed one removed */
	n_pending = 0;
	return err;
}

int fvt_out_commit_later(struct fvt_out *o)
{
	if (!fvt_out_is_open(o))
		return 0;
	dmt_file_start_writeback(o->f, 0, (uint64_t)INT64_MAX);
	pending[n_pending++] = *o;
	fvt_out_init(o);
	return n_pending == PENDING_MAX ? fvt_out_flush() : 0;
}

/* mkdir -p of every directory of path below dir. */
static int make_parents(const char *dir, char *path)
{
	size_t skip = strlen(dir);

	for (char *s = path + skip + 1; (s = strchr(s, '/')); s++) {
		*s = 0;
		if (mkdir(path, 0777) < 0 && errno != EEXIST) {
			int err = -errno;

			*s = '/';
			return err;
		}
		*s = '/';
	}
	return 0;
}

int fvt_out_dir_path(const char *dir, const char *rel, const char *suffix,
		     char **out)
{
	int err;

	if (asprintf(out, "%s/%s%s", dir, rel, suffix) < 0) {
		*out = NULL;
		return -ENOMEM;
	}
	err = make_parents(dir, *out);
	if (err) {
		tool_err_errno(*out, "cannot create its directory", err);
		free(*out);
		*out = NULL;
	}
	return err;
}

/* ---- --out-dir for digest: one tree and one descriptor per file ---- */

static const char *out_dir;
static struct fvt_out cur_tree, cur_desc;
static bool cur_ready;

static int open_in_dir(struct fvt_out *o, const char *rel, const char *suf,
		       bool seek)
{
	char *path;
	int err = fvt_out_dir_path(out_dir, rel, suf, &path);

	if (err)
		return err;
	err = fvt_out_open(o, path, seek);
	free(path);
	return err;
}

static int dir_tree_size(void *ctx, uint64_t size)
{
	struct fvt_entry *e = ctx;
	int err = open_in_dir(&cur_tree, e->rel, ".merkle_tree", true);

	if (!err)
		err = open_in_dir(&cur_desc, e->rel, ".descriptor", false);
	(void)size;
	return err;
}

/* A tree block at its offset (the tree file refuses streams). */
static int tree_block(struct fvt_out *o, const void *block, size_t size,
		      uint64_t off)
{
	int err = dmt_pwrite_full(o->f, block, size, off);

	if (err)
		tool_err_errno(dmt_file_path(o->f), "cannot write", err);
	return err;
}

static int dir_tree_block(void *ctx, const void *block, size_t size,
			  uint64_t off)
{
	(void)ctx;
	return tree_block(&cur_tree, block, size, off);
}

static int dir_descriptor(void *ctx, const void *desc, size_t size)
{
	(void)ctx;
	return fvt_out_write(&cur_desc, desc, size);
}

int fvt_out_dir_callbacks(struct cli *c, struct fvt_entry *e)
{
	if (!cur_ready) {
		fvt_out_init(&cur_tree);
		fvt_out_init(&cur_desc);
		cur_ready = true;
	}
	out_dir = cli_str(c, O_OUT_DIR);
	e->cb = (struct dmt_fsverity_metadata_callbacks){
		.ctx = e,
		.merkle_tree_size = dir_tree_size,
		.merkle_tree_block = dir_tree_block,
		.descriptor = dir_descriptor,
	};
	return 0;
}

int fvt_out_dir_finish(struct cli *c, struct fvt_entry *e, bool ok)
{
	int err = 0;

	(void)c;
	(void)e;
	if (!cur_ready)
		return 0;
	if (ok) {
		err = fvt_out_commit_later(&cur_tree);
		if (!err)
			err = fvt_out_commit_later(&cur_desc);
	}
	fvt_out_abort(&cur_tree);
	fvt_out_abort(&cur_desc);
	return err;
}

/* ---- --out-merkle-tree / --out-descriptor: fsverity 1.5's layout ---- */

static int joint_tree_block(void *ctx, const void *block, size_t size,
			    uint64_t off)
{
	struct fvt *f = ctx;

	return fvt_out_is_open(&f->tree_out)
		       ? tree_block(&f->tree_out, block, size, off)
		       : 0;
}

static int joint_descriptor(void *ctx, const void *desc, size_t size)
{
	struct fvt *f = ctx;

	return fvt_out_is_open(&f->desc_out)
		       ? fvt_out_write(&f->desc_out, desc, size)
		       : 0;
}

int fvt_joint_outputs(struct cli *c)
{
	struct fvt *f = fvt_of(c);
	int err = 0;

	if (cli_given(c, O_OUT_TREE))
		err = fvt_out_open(&f->tree_out, cli_str(c, O_OUT_TREE), true);
	if (!err && cli_given(c, O_OUT_DESC))
		err = fvt_out_open(&f->desc_out, cli_str(c, O_OUT_DESC),
				   false);
	f->joint_cb = (struct dmt_fsverity_metadata_callbacks){
		.ctx = f,
		.merkle_tree_block = joint_tree_block,
		.descriptor = joint_descriptor,
	};
	return err;
}
