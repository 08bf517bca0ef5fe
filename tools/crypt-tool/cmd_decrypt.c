// SPDX-License-Identifier: MIT
/*
 * crypt-tool decrypt: what `cryptsetup open` would map, read back offline
 * into a file (new files under a temporary name: a failure leaves nothing
 * under the output's name).  LUKS2 from its header (or --header), plain
 * with the options format was given.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "tools/crypt-tool/ct.h"

/* A header that cannot be used is a file problem (exit 4) whatever the
 * library's errno. */
static int load_error(int err)
{
	return err == -ENOMEM ? err : -EMEDIUMTYPE;
}

int ct_luks2_unlock(struct cli *c)
{
	struct ct *ct = ct_of(c);
	struct dmt_file *hf = ct->image_file;
	struct dmt_reason why = { 0 };
	struct dmt_luks2_segment seg;
	int err, slot = (int)cli_num(c, O_KEY_SLOT, (uint64_t)-1);

	if (cli_given(c, O_HEADER)) {
		err = dmt_file_open(cli_str(c, O_HEADER), DMT_OPEN_READ,
				    &ct->header_file);
		if (err) {
			tool_err_errno(cli_str(c, O_HEADER),
				       "cannot read the header", err);
			return err;
		}
		hf = ct->header_file;
	}
	err = dmt_luks2_load(hf, &ct->luks, &why);
	if (err) {
		ct_print_why(c, &why, err, dmt_file_path(hf), "cannot read the header");
		return load_error(err);
	}
	if (dmt_luks2_loaded_copy(ct->luks))
		tool_warn("%s: the primary header is damaged; using the secondary copy",
			  dmt_file_path(hf));
	/* a valid header we cannot map (a reencryption in progress...) is
	 * refused before the passphrase is asked for */
	err = dmt_luks2_data_segment(ct->luks, &seg, &why);
	if (err) {
		ct_print_why(c, &why, err, dmt_file_path(hf), "cannot use the header");
		return load_error(err);
	}
	err = ct_read_passphrase(c, ct->image, false, &ct->pass);
	if (err)
		return err;
	err = dmt_luks2_unlock(ct->luks, slot, ct->pass.p, ct->pass.len, &why);
	tool_secret_free(&ct->pass);
	if (err < 0) {
		ct_print_why(c, &why, err, NULL, "cannot unlock");
		return err == -EPERM ? TOOL_EXIT_VERIFY : err;
	}
	tool_verbose("Key slot %d unlocked.", err);
	return 0;
}

static int luks2_map(struct cli *c, struct ct_map *m, const uint8_t **key,
		     bool *fixed)
{
	struct ct *ct = ct_of(c);
	struct dmt_luks2_segment seg;
	size_t len;
	int err = dmt_luks2_get_segment(ct->luks, &seg);

	if (err)
		return err;
	*key = dmt_luks2_volume_key(ct->luks, &len);
	memset(m, 0, sizeof(*m));
	m->cipher = seg.cipher;
	m->key_size = (unsigned int)len;
	m->sector_size = seg.sector_size;
	m->offset = seg.offset;
	m->iv_offset = seg.iv_tweak;
	*fixed = seg.size != DMT_LUKS2_SIZE_DYNAMIC;
	return 0;
}

static int plain_map(struct cli *c, struct ct_map *m, const uint8_t **key)
{
	struct ct *ct = ct_of(c);
	bool hashed;
	int err = ct_map_options(c, m);

	if (!err)
		err = ct_plain_key(c, ct_plain_hash(c), m->key_size, false,
				   &ct->key, &hashed);
	*key = ct->key.p;
	return err;
}

/* Bytes the mapping has: whole sectors after the data offset (a fixed
 * LUKS2 segment size wins). */
static int mapped_bytes(struct cli *c, const struct ct_map *m, bool fixed,
			uint64_t *bytes)
{
	struct ct *ct = ct_of(c);
	struct dmt_luks2_segment seg;
	uint64_t size;
	int err = ct_file_size(ct->image_file, &size);

	if (err)
		return err;
	if (size < m->offset) {
		tool_err("%s: %" PRIu64 " bytes, shorter than the data offset %" PRIu64,
			 ct->image, size, m->offset);
		return -ENODATA;
	}
	*bytes = (size - m->offset) / m->sector_size * m->sector_size;
	if (fixed) {
		err = dmt_luks2_get_segment(ct->luks, &seg);
		if (err)
			return err;
		if (seg.size > *bytes) {
			tool_err("%s: the segment needs %" PRIu64 " bytes after the data offset, the image has %" PRIu64,
				 ct->image, seg.size, *bytes);
			return -ENODATA;
		}
		*bytes = seg.size;
	}
	return 0;
}

int ct_cmd_decrypt(struct cli *c)
{
	struct ct *ct = ct_of(c);
	const char *out = c->args[1];
	const uint8_t *key = NULL;
	struct ct_map m;
	uint64_t bytes = 0;
	bool created, luks, fixed = false;
	int err;

	if (dmt_same_file(ct->image, out) ||
	    (cli_given(c, O_HEADER) && dmt_same_file(cli_str(c, O_HEADER), out))) {
		tool_err("%s: the output must differ from the image", out);
		return -EINVAL;
	}
	err = dmt_file_open(ct->image, DMT_OPEN_READ | DMT_OPEN_LOCK,
			    &ct->image_file);
	if (err) {
		tool_err_errno(ct->image, "cannot read the image", err);
		return err;
	}
	luks = cli_given(c, O_HEADER) || (!cli_given(c, O_TYPE) ?
					   ct_is_luks(ct->image_file) :
					   ct->type == CT_LUKS2);
	if (!luks && !cli_given(c, O_TYPE)) {
		tool_err("%s: no LUKS2 header (a plain image needs --type plain and the options it was formatted with)",
			 ct->image);
		return -EMEDIUMTYPE;
	}
	if (luks) {
		err = ct_luks2_unlock(c);
		if (err)
			return err;
		if (ct_auth_header(c))
			return ct_auth_decrypt(c, out);
	}
	if (cli_given(c, O_ALLOW_BAD)) {
		tool_err("--allow-bad-sectors applies to authenticated LUKS2 images (--integrity) only");
		return -EINVAL;
	}
	err = luks ? luks2_map(c, &m, &key, &fixed) : plain_map(c, &m, &key);
	if (!err)
		err = mapped_bytes(c, &m, fixed, &bytes);
	if (!err)
		err = ct_open_output(&ct->out_file, out, false, &created);
	if (err)
		return err;
	dmt_file_enable_direct(ct->out_file);
	/* --progress-json "device": the image read, as in format and check */
	tool_progress_init(&ct->progress, ct->image, "written",
			   c->progress_frequency, c->progress_json);
	err = ct_stream(c, &m, key, ct->image_file, m.offset, ct->out_file, 0,
			bytes, 0, false);
	tool_progress_finish(&ct->progress, !err);
	if (!err)
		err = dmt_file_sync(ct->out_file);
	if (!err && created)
		err = dmt_file_commit(ct->out_file);
	if (err) {
		if (err != -EINTR)
			tool_err_errno(out, "cannot write the output", err);
		return err;
	}
	if (c->json) {
		json_object *j = json_object_new_object();

		cli_json_add_str(j, "image", ct->image);
		cli_json_add_str(j, "type", luks ? "luks2" : "plain");
		cli_json_add_str(j, "output", out);
		cli_json_add_u64(j, "bytes", bytes);
		cli_json_add_str(j, "cipher", m.cipher);
		cli_json_add_u64(j, "sector_size", m.sector_size);
		cli_json_add_u64(j, "data_offset", m.offset);
		cli_json_print(c, j);
	}
	return 0;
}
