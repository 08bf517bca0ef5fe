// SPDX-License-Identifier: MIT
/*
 * Output files: written under a temporary name in the same directory and
 * renamed when complete, so a failed run leaves nothing under the names
 * asked for.  --out-merkle-tree and --out-descriptor take every file's
 * metadata the way fsverity-utils 1.5 writes it (each tree pwritten from
 * offset 0, so later files overwrite earlier ones' blocks; descriptors
 * appended one after another); --out-dir writes one pair per file.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/fsverity-tool/fvt.h"

void fvt_hex(const uint8_t *p, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * len] = 0;
}

int fvt_write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Where an output goes: a new or regular file is replaced by rename (a
 * symlink to one: its target), anything else (/dev/stdout, a FIFO) is
 * written in place: renaming over a device node would replace it.
 */
static int out_target(const char *path, char **target, bool *in_place)
{
	struct stat st;

	*in_place = false;
	*target = NULL;
	if (lstat(path, &st) < 0 || S_ISREG(st.st_mode)) {
		*target = strdup(path);
		return *target ? 0 : -ENOMEM;
	}
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		*target = realpath(path, NULL);
		return *target ? 0 : -errno;
	}
	*in_place = true;
	*target = strdup(path);
	return *target ? 0 : -ENOMEM;
}

static int open_in_place(struct fvt_out *o)
{
	o->fd = open(o->path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (o->fd < 0) {
		int err = -errno;

		tool_err_errno(o->path, "cannot open", err);
		free(o->path);
		o->path = NULL;
		return err;
	}
	return 0;
}

int fvt_out_open(struct fvt_out *o, const char *path)
{
	char *dup = NULL, *dir;
	bool in_place;
	mode_t mask;
	int err;

	o->fd = -1;
	o->path = o->tmp = NULL;
	err = out_target(path, &o->path, &in_place);
	if (err) {
		tool_err_errno(path, "cannot resolve", err);
		return err;
	}
	if (in_place)
		return open_in_place(o);
	dup = strdup(o->path);
	if (!dup)
		return -ENOMEM;
	dir = dirname(dup);
	if (asprintf(&o->tmp, "%s/.fsverity-tool.XXXXXX", dir) < 0) {
		o->tmp = NULL;
		free(dup);
		return -ENOMEM;
	}
	free(dup);
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	if (o->fd < 0) {
		err = -errno;
		tool_err_errno(path, "cannot create", err);
		free(o->tmp);
		o->tmp = NULL;
		return err;
	}
	/* the mode a plain open(O_CREAT, 0666) would give */
	mask = umask(0);
	umask(mask);
	fchmod(o->fd, 0666 & ~mask);
	return 0;
}

int fvt_out_commit(struct fvt_out *o)
{
	int err = 0;

	if (!o->tmp && o->fd >= 0) { /* written in place */
		if (close(o->fd) < 0)
			err = -errno;
		o->fd = -1;
		if (err)
			tool_err_errno(o->path, "cannot write", err);
		free(o->path);
		o->path = NULL;
		return err;
	}
	if (!o->tmp)
		return 0;
	if (close(o->fd) < 0)
		err = -errno;
	o->fd = -1;
	if (!err && rename(o->tmp, o->path) < 0)
		err = -errno;
	if (err) {
		tool_err_errno(o->path, "cannot write", err);
		unlink(o->tmp);
	}
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
	return err;
}

void fvt_out_abort(struct fvt_out *o)
{
	if (o->fd >= 0)
		close(o->fd);
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
	o->fd = -1;
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
static struct fvt_out cur_tree = {.fd = -1}, cur_desc = {.fd = -1};

static int open_in_dir(struct fvt_out *o, const char *rel, const char *suf)
{
	char *path;
	int err = fvt_out_dir_path(out_dir, rel, suf, &path);

	if (err)
		return err;
	err = fvt_out_open(o, path);
	free(path);
	return err;
}

static int dir_tree_size(void *ctx, uint64_t size)
{
	struct fvt_entry *e = ctx;
	int err = open_in_dir(&cur_tree, e->rel, ".merkle_tree");

	if (!err)
		err = open_in_dir(&cur_desc, e->rel, ".descriptor");
	(void)size;
	return err;
}

static int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

static int dir_tree_block(void *ctx, const void *block, size_t size,
			  uint64_t off)
{
	(void)ctx;
	return pwrite_all(cur_tree.fd, block, size, off);
}

static int dir_descriptor(void *ctx, const void *desc, size_t size)
{
	(void)ctx;
	return fvt_write_all(cur_desc.fd, desc, size);
}

int fvt_out_dir_callbacks(struct cli *c, struct fvt_entry *e)
{
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
	if (ok) {
		err = fvt_out_commit(&cur_tree);
		if (!err)
			err = fvt_out_commit(&cur_desc);
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

	return f->tree_out.fd >= 0
		       ? pwrite_all(f->tree_out.fd, block, size, off)
		       : 0;
}

static int joint_descriptor(void *ctx, const void *desc, size_t size)
{
	struct fvt *f = ctx;

	return f->desc_out.fd >= 0 ? fvt_write_all(f->desc_out.fd, desc, size)
				   : 0;
}

int fvt_joint_outputs(struct cli *c)
{
	struct fvt *f = fvt_of(c);
	int err = 0;

	if (cli_given(c, O_OUT_TREE))
		err = fvt_out_open(&f->tree_out, cli_str(c, O_OUT_TREE));
	if (!err && cli_given(c, O_OUT_DESC))
		err = fvt_out_open(&f->desc_out, cli_str(c, O_OUT_DESC));
	f->joint_cb = (struct dmt_fsverity_metadata_callbacks){
		.ctx = f,
		.merkle_tree_block = joint_tree_block,
		.descriptor = joint_descriptor,
	};
	return err;
}
