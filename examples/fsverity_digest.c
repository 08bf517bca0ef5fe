/* SPDX-License-Identifier: MIT */
/*
 * fsverity_digest DIR
 *
 * Prints the fs-verity digest (sha256, 4096-byte blocks, no salt: what
 * the kernel measures once `fsverity enable` ran with its defaults) of
 * every regular file under DIR, one line per file in the form of
 * `fsverity digest`: "sha256:<hex> <path>".  The files go through one
 * batch, which hashes the blocks of many files together on every core.
 * docs/libdmt.md, "fs-verity digests of a file tree", walks through it.
 *
 * Build: cc -o fsverity_digest fsverity_digest.c \
 *		$(pkg-config --cflags --libs libdmt)
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <dmt/fsverity.h>
#include <dmt/io.h>

#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static struct dmt_fsverity_batch *batch;
static int failures;
static int add_err;

/* Called in submission order for every file, on this thread. */
static int done(void *ctx, const struct dmt_fsverity_result *res,
		const struct dmt_reason *r)
{
	(void)ctx;
	(void)r; /* why, in the library's terms (r->code, r->field...) */
	if (res->err) {
		fprintf(stderr, "%s: %s\n", res->path, dmt_strerror(res->err));
		failures++;
	} else {
		printf("%s:", dmt_fsverity_hash_alg_name(
				      res->digest.digest_algorithm));
		for (unsigned int i = 0; i < res->digest.digest_size; i++)
			printf("%02x", res->digest.digest[i]);
		printf(" %s\n", res->path);
	}
	free(res->user); /* the path we queued (res->path is it) */
	return 0;
}

static int visit(const char *path, const struct stat *st, int type,
		 struct FTW *ftw)
{
	struct dmt_fsverity_file f;

	(void)st;
	(void)ftw;
	if (type != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	dmt_fsverity_file_init(&f); /* fd -1, size UINT64_MAX: fstat */
	/* nftw reuses its buffer: the batch keeps the path until done() */
	f.path = f.user = strdup(path);
	if (!f.path) {
		add_err = -ENOMEM;
		return 1;
	}
	add_err = dmt_fsverity_batch_add(batch, &f, NULL);
	return add_err ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct dmt_fsverity_batch_params bp;
	struct dmt_reason why = {0};
	int err;

	/* params structs: _init() first (defaults, reserved words zero) */
	dmt_fsverity_batch_params_init(&bp); /* version 1 */
	bp.tree.hash_algorithm = DMT_FSVERITY_HASH_SHA256;
	bp.tree.block_size = 4096;
	bp.done = done;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	err = dmt_fsverity_batch_new(&bp, &batch, &why);
	if (err) {
		fprintf(stderr, "fsverity_digest: %s (%s)\n", dmt_strerror(err),
			why.field ? why.field : "-");
		return 1;
	}
	/* files only, symbolic links not followed (as fsverity's own walk) */
	if (nftw(argv[1], visit, 32, FTW_PHYS) != 0 && !add_err)
		add_err = -errno;
	err = add_err ? add_err : dmt_fsverity_batch_finish(batch);
	dmt_fsverity_batch_free(batch);
	if (err) {
		fprintf(stderr, "%s: %s\n", argv[1], dmt_strerror(err));
		return 1;
	}
	return failures ? 1 : 0;
}
