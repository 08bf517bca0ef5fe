// SPDX-License-Identifier: MIT
/*
 * Opening the images and the small outputs, the data size rules, the
 * root hash argument, and library errors as messages.
 */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/common/outfile.h"
#include "tools/verity-tool/vt.h"

int vt_open_err(const char *path, int err)
{
	if (err == -EBUSY)
		tool_err("%s: in use by another process (locked).", path);
	else
		tool_err_errno(path, "cannot open", err);
	return tool_exit_code(err);
}

void vt_close_files(struct vt_files *f)
{
	dmt_file_close(f->data_f);
	dmt_file_close(f->hash_f);
	dmt_file_close(f->fec_f);
	f->data_f = f->hash_f = f->fec_f = NULL;
}

/* Absolute form of a path whose directory exists (the file need not). */
static bool canon_path(const char *path, char out[PATH_MAX])
{
	char *d = strdup(path), *b = strdup(path), dir[PATH_MAX];
	bool ok = d && b && realpath(dirname(d), dir) &&
		  snprintf(out, PATH_MAX, "%s/%s", dir, basename(b)) <
			  PATH_MAX;

	free(d);
	free(b);
	return ok;
}

/* Same file, or two spellings of one path that does not exist yet. */
bool vt_same_target(const char *a, const char *b)
{
	char ca[PATH_MAX], cb[PATH_MAX];
	struct stat st;

	if (dmt_same_file(a, b))
		return true;
	if (!stat(a, &st) || !stat(b, &st))
		return false;
	return canon_path(a, ca) && canon_path(b, cb) && !strcmp(ca, cb);
}

/* build's hash or FEC file: in place when it exists (veritysetup's rule),
 * else new under a temporary name; written out of order, so never a
 * stream (tools/common/outfile.h). */
static int open_image_out(struct dmt_file **f, const char *path,
			  bool *created)
{
	int err = tool_out_open(f, path,
				TOOL_OUT_IN_PLACE | TOOL_OUT_SEEK |
					TOOL_OUT_LOCK,
				"cannot open", created);

	return err ? tool_exit_code(err) : 0;
}

static int open_fec(struct vt *c, struct vt_files *f, enum vt_open_mode mode)
{
	const char *path = cli_str(c->cli, OPT_FEC_DEVICE);
	int flags, err;

	if (vt_same_target(path, c->args[1])) {
		f->fec = f->hash;
		return 0;
	}
	if (vt_same_target(path, c->args[0])) {
		f->fec = f->data;
		return 0;
	}
	if (mode == VT_OPEN_BUILD) {
		err = open_image_out(&f->fec_f, path, &f->fec_created);
		if (!err)
			f->fec = f->fec_f;
		return err;
	}
	flags = (mode == VT_OPEN_REPAIR ? DMT_OPEN_RW : DMT_OPEN_READ) |
		DMT_OPEN_LOCK;
	err = dmt_file_open(path, flags, &f->fec_f);
	if (mode == VT_OPEN_REPAIR &&
	    (err == -EACCES || err == -EROFS || err == -EPERM)) {
		/* blocks can still be repaired, damaged parity can't */
		tool_info("%s: read-only, damaged parity will not be "
			  "rewritten.", path);
		flags = DMT_OPEN_READ | DMT_OPEN_LOCK;
		err = dmt_file_open(path, flags, &f->fec_f);
	}
	if (err)
		return vt_open_err(path, err);
	f->fec = f->fec_f;
	return 0;
}

int vt_open_files(struct vt *c, struct vt_files *f, enum vt_open_mode mode)
{
	const char *dpath = c->args[0], *hpath = c->args[1];
	const char *fpath = c->fec ? cli_str(c->cli, OPT_FEC_DEVICE) : NULL;
	int err, hflags, dflags = DMT_OPEN_READ | DMT_OPEN_LOCK;

	memset(f, 0, sizeof(*f));
	if (dmt_same_file(dpath, hpath)) {
		err = dmt_file_open(
			hpath,
			(mode != VT_OPEN_READ ? DMT_OPEN_RW : DMT_OPEN_READ) |
				DMT_OPEN_LOCK,
			&f->hash_f);
		if (err)
			return vt_open_err(hpath, err);
		f->data = f->hash = f->hash_f;
		goto fec;
	}
	/* repair writes data blocks, build may put FEC on the data file */
	if (mode == VT_OPEN_REPAIR ||
	    (mode == VT_OPEN_BUILD && fpath && !vt_same_target(fpath, hpath) &&
	     vt_same_target(fpath, dpath)))
		dflags = DMT_OPEN_RW | DMT_OPEN_LOCK;
	err = dmt_file_open(dpath, dflags, &f->data_f);
	if (err)
		return vt_open_err(dpath, err);
	f->data = f->data_f;
	f->data_rw = dflags & DMT_OPEN_RW;
	hflags = (mode == VT_OPEN_REPAIR ? DMT_OPEN_RW : DMT_OPEN_READ) |
		 DMT_OPEN_LOCK;
	err = mode == VT_OPEN_BUILD ?
		      open_image_out(&f->hash_f, hpath, &f->created) :
		      dmt_file_open(hpath, hflags, &f->hash_f);
	if (err) {
		vt_close_files(f);
		return mode == VT_OPEN_BUILD ? err : vt_open_err(hpath, err);
	}
	f->hash = f->hash_f;
fec:
	if (!fpath)
		return 0;
	err = open_fec(c, f, mode);
	if (err)
		vt_close_files(f);
	return err;
}

/* A partial last block is not protected (veritysetup says nothing). */
void vt_warn_tail(const char *path, uint64_t size, uint32_t dbs)
{
	if (size >= dbs && size % dbs)
		tool_warn("%s: the last %" PRIu64 " bytes are not a whole "
			  "data block and are not protected.", path,
			  size % dbs);
}

/* data_blocks from the file when not given; the one-file overlap rule. */
int vt_resolve_data(struct vt *c, struct vt_files *f)
{
	struct dmt_verity_params *p = &c->p;
	struct dmt_verity_geometry g;
	uint64_t size, need, area;
	int err;

	err = dmt_file_size(f->data, &size);
	if (err) {
		tool_err_errno(c->args[0], "cannot get size", err);
		return tool_exit_code(err);
	}
	if (!p->data_blocks) {
		p->data_blocks = dmt_verity_blocks_for_size(p, size);
		vt_warn_tail(c->args[0], size, p->data_block_size);
	}
	if (!p->data_blocks) {
		tool_err("%s: smaller than one data block (%" PRIu32
			 " bytes).", c->args[0], p->data_block_size);
		return TOOL_EXIT_DEVICE;
	}
	need = p->data_blocks * p->data_block_size;
	if (need > size) {
		tool_err("%s: too small: %" PRIu64 " data blocks of %" PRIu32
			 " bytes need %" PRIu64 " bytes, it has %" PRIu64 ".",
			 c->args[0], p->data_blocks, p->data_block_size, need,
			 size);
		return TOOL_EXIT_DEVICE;
	}
	err = dmt_verity_geometry(p, &g, NULL);
	if (err) {
		tool_err("Device offset overflow.");
		return TOOL_EXIT_USAGE;
	}
	area = p->no_superblock ? g.hash_start * g.hash_block_size
				: p->hash_offset;
	if (p->hash_offset < area)
		area = p->hash_offset;
	if (f->data == f->hash && need > area) {
		tool_err("%s: Data area overlaps with hash area.", c->args[0]);
		return TOOL_EXIT_USAGE;
	}
	/* verify: say which file is short before reading anything */
	if ((c->act & ACT_CHECK) && g.levels) {
		err = dmt_file_size(f->hash, &size);
		if (!err && size < g.hash_end) {
			tool_err("%s: too small: the hash tree ends at byte %"
				 PRIu64 ", the file has %" PRIu64 ".",
				 c->args[1], g.hash_end, size);
			return TOOL_EXIT_DEVICE;
		}
	}
	return 0;
}

/*
 * A small output of build or sign (--root-hash-file, signatures, sidecar
 * files), never one of the images.  Opened before any work so that an
 * unwritable place fails first.  By the rule of every tool
 * (tools/common/outfile.h): a new or regular file is written under a
 * temporary name and renamed after the images, a device in place, a FIFO
 * or pipe as a stream.
 */
int vt_open_out(struct vt *c, const char *path, const char *what,
		    struct dmt_file **rf)
{
	bool created;
	int err;

	for (int i = 0; i < c->nargs; i++) {
		if (c->act == ACT_BUILD && vt_same_target(path, c->args[i])) {
			tool_err("%s: the %s must not be the data or hash "
				 "file.", path, what);
			return TOOL_EXIT_USAGE;
		}
	}
	if (c->fec && vt_same_target(path, cli_str(c->cli, OPT_FEC_DEVICE))) {
		tool_err("%s: the %s must not be the FEC file.", path, what);
		return TOOL_EXIT_USAGE;
	}
	err = tool_out_open(rf, path, 0, "cannot write the file", &created);
	return err ? tool_exit_code(err) : 0;
}

/* Writes the whole contents of an output opened by vt_open_out (before the
 * images are committed, so a failure here leaves no new images either). */
int vt_write_out(struct dmt_file *rf, const void *buf, size_t len)
{
	const char *path = dmt_file_path(rf);
	int err = dmt_pwrite_full(rf, buf, len, 0);

	if (!err)
		err = dmt_file_sync(rf);
	if (err) {
		tool_err_errno(path, "cannot write the file", err);
		return tool_exit_code(err);
	}
	return 0;
}

/* Lower-case hex, no newline (what veritysetup and systemd write). */
int vt_write_root_file(struct dmt_file *rf, const uint8_t *root,
			   size_t ds)
{
	char text[2 * DMT_DIGEST_MAX + 1];

	tool_hex(root, ds, text);
	return vt_write_out(rf, text, 2 * ds);
}

/* Root hash from the argument or --root-hash-file (2*ds hex chars). */
int vt_get_root(struct vt *c, size_t ds, uint8_t *root)
{
	const char *arg = c->nargs > 2 ? c->args[2] : NULL;
	char text[2 * DMT_DIGEST_MAX + 1];
	uint8_t *bin = NULL, *raw = NULL;
	size_t len = 0;
	int err;

	if (cli_given(c->cli, OPT_ROOT_FILE)) {
		err = tool_read_small_file(cli_str(c->cli, OPT_ROOT_FILE),
					   2 * ds, 2 * ds, &raw, &len);
		if (err == -ENODATA || err == -EINVAL) {
			tool_err("Invalid root hash string specified.");
			return TOOL_EXIT_USAGE;
		}
		if (err) {
			tool_err_errno(cli_str(c->cli, OPT_ROOT_FILE),
				       "cannot read the root hash", err);
			return tool_exit_code(err);
		}
		memcpy(text, raw, len);
		text[len] = '\0';
		free(raw);
		if (arg && strcasecmp(arg, text)) {
			tool_err("The root hash argument and --root-hash-file "
				 "differ.");
			return TOOL_EXIT_USAGE;
		}
		arg = text;
	}
	if (!arg)
		return vt_usage_error("Command requires <root_hash> or "
				   "--root-hash-file option as argument.");
	if (!*arg || tool_parse_hex(arg, &bin, &len) || len != ds) {
		free(bin);
		tool_err("Invalid root hash string specified.");
		return TOOL_EXIT_USAGE;
	}
	memcpy(root, bin, ds);
	free(bin);
	return 0;
}

/* ---- actions ---- */

/* path: the file the library says failed, else the likeliest one. */
int vt_lib_error(const char *path, const char *fallback, int err)
{
	if (!path)
		path = fallback;
	if (err == -EINTR)
		return TOOL_EXIT_SIGNAL;
	if (err == -ENODATA)
		tool_err("%s: file too small.", path);
	else if (err == -EINVAL)
		tool_err("%s: invalid parameters.", path);
	else
		tool_err("%s: %s", path, dmt_strerror(err));
	return tool_exit_code(err);
}

/* Writes and commits after the tree: a new file appears complete or not
 * at all, and only once the images are in place. */
int vt_commit(struct dmt_file *f, bool created, const char *path)
{
	int err = created ? dmt_file_commit(f) : dmt_file_sync(f);

	return err ? vt_lib_error(NULL, path, err) : 0;
}

struct dmt_verity_fec_params vt_fec_opts_for(const struct vt *c,
					     struct vt_files *f)
{
	struct dmt_verity_fec_params fec = {
		.file = c->fec ? f->fec : NULL,
		.roots = c->fec_roots,
		.offset = c->fec_offset,
	};

	return fec;
}

int vt_fec_layout_error(const struct vt *c, const struct dmt_reason *why,
		     int err)
{
	const char *fpath = cli_str(c->cli, OPT_FEC_DEVICE);
	const char *f = why->field ? why->field : "";

	if (why->code == DMT_REASON_DEVICE_TOO_SMALL && !strcmp(f, "hash")) {
		tool_err("%s: too small: it ends before the hash tree starts.",
			 c->args[1]);
		return TOOL_EXIT_DEVICE;
	}
	if (why->code == DMT_REASON_DEVICE_TOO_SMALL) {
		tool_err("%s: too small: the FEC area ends at byte %" PRIu64
			 ", the file has %" PRIu64 ".", fpath, why->min,
			 why->value);
		return TOOL_EXIT_DEVICE;
	}
	if (why->code == DMT_REASON_IO) {
		tool_err_errno(fpath, "cannot get size", err);
		return tool_exit_code(err);
	}
	if (why->code == DMT_REASON_VERITY_FEC_LAYOUT) {
		tool_err("%s: invalid FEC layout: %s", fpath,
			 dmt_strerror(err));
		return tool_exit_code(err);
	}
	vt_reason_err(c, why);
	return TOOL_EXIT_USAGE;
}
