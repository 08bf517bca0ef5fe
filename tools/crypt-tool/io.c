// SPDX-License-Identifier: MIT
/*
 * crypt-tool's files: outputs by the rule of every tool
 * (tools/common/outfile.h), the LUKS magic, and the engine run over a
 * file range with progress.
 */
#include <errno.h>
#include <string.h>

#include "tools/common/outfile.h"
#include "tools/crypt-tool/ct.h"

int ct_open_output(struct dmt_file **f, const char *path, bool in_place,
		   bool *created)
{
	/* images and headers are written out of order, an existing one in
	 * place; decrypt's output is replaced, or written as a stream */
	unsigned int flags = TOOL_OUT_LOCK;

	if (in_place)
		flags |= TOOL_OUT_IN_PLACE | TOOL_OUT_SEEK;
	return tool_out_open(f, path, flags, "cannot create the output",
			     created);
}

/* Synced, then renamed into place (new files). */
int ct_finish_output(struct dmt_file *f, bool created)
{
	int err = dmt_file_sync(f);

	if (!err && created)
		err = dmt_file_commit(f);
	if (err)
		tool_err_errno(dmt_file_path(f), "cannot complete the file", err);
	return err;
}

bool ct_is_luks(struct dmt_file *f)
{
	static const uint8_t magic[6] = { 'L', 'U', 'K', 'S', 0xba, 0xbe };
	uint8_t buf[6];

	return !dmt_pread_full(f, buf, sizeof(buf), 0) &&
	       !memcmp(buf, magic, sizeof(buf));
}

int ct_file_size(struct dmt_file *f, uint64_t *size)
{
	int err = dmt_file_size(f, size);

	if (err)
		tool_err_errno(dmt_file_path(f), "cannot get the size", err);
	return err;
}

int ct_stream(struct cli *c, const struct ct_map *m, const uint8_t *key,
	      struct dmt_file *in, uint64_t in_off, struct dmt_file *out,
	      uint64_t out_off, uint64_t bytes, uint64_t first_sector,
	      bool encrypt)
{
	struct ct *ct = ct_of(c);
	struct dmt_reason why = { 0 };
	struct dmt_crypt *eng = NULL;
	struct dmt_crypt_stream_params s = {
		.in = in,
		.out = out,
		.in_offset = in_off,
		.out_offset = out_off,
		.bytes = bytes,
		.first_sector = first_sector,
		.encrypt = encrypt,
		.progress = tool_progress_hook(&ct->progress),
	};
	int err;

	if (!bytes)
		return 0;
	err = dmt_crypt_new(
		&(struct dmt_crypt_params){.cipher = m->cipher,
					   .key = key,
					   .key_size = m->key_size,
					   .sector_size = m->sector_size,
					   .iv_large_sectors =
						   m->iv_large_sectors,
					   .iv_offset = m->iv_offset,
					   .threads = c->threads,
					   .engine = tool_engine_spec()},
		&eng, &why);
	if (err) {
		ct_print_why(c, &why, err, NULL, "cipher setup");
		return err;
	}
	tool_verbose("%s: %s on %u %s", ct->image, dmt_crypt_engine_name(eng),
		     c->threads, cli_plural(c->threads, "thread", "threads"));
	err = dmt_crypt_stream_run(eng, &s, NULL);
	dmt_crypt_free(eng);
	/* a reader gone (EPIPE) is the output's, which the caller names */
	if (err && err != -EINTR && err != -EPIPE)
		tool_err_errno(ct->image, encrypt ? "encryption failed" :
			       "decryption failed", err);
	return err;
}
