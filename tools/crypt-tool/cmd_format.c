// SPDX-License-Identifier: MIT
/*
 * crypt-tool format: --data-from encrypted to an image that `cryptsetup
 * open` maps to it from the first sector.  Order of the writes: a new
 * image is a temporary file renamed at the end; in place, the old LUKS2
 * header area is cleared first, then the data is written, and the new
 * header last, so an interruption never leaves a header over data that
 * is not all there.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "tools/crypt-tool/ct.h"

/* What format writes where. */
struct plan {
	struct ct_map m;
	uint64_t payload;		/* bytes of --data-from */
	uint64_t need;			/* image bytes the payload needs */
	uint64_t device;		/* image bytes after format */
	bool created, header_created;
	struct dmt_file *data;		/* the image */
	struct dmt_file *hdr;		/* LUKS2: image or --header */
	bool hashed;			/* plain: the passphrase was hashed */
	int keyslot;
	struct dmt_luks2_pbkdf pbkdf;
};

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

int ct_open_payload(struct cli *c, uint64_t *size)
{
	struct ct *ct = ct_of(c);
	const char *payload = cli_str(c, O_DATA_FROM);
	const char *header = cli_str(c, O_HEADER);
	int err;

	if (!payload) {
		tool_err("format needs --data-from PAYLOAD");
		return -EINVAL;
	}
	if (dmt_same_file(ct->image, payload) ||
	    (header && dmt_same_file(header, payload))) {
		tool_err("%s: the payload must differ from the image (encrypting a device in place is `cryptsetup reencrypt --encrypt`)",
			 payload);
		return -EINVAL;
	}
	if (header && dmt_same_file(header, ct->image)) {
		tool_err("%s: --header must differ from the image", header);
		return -EINVAL;
	}
	err = dmt_file_open(payload, DMT_OPEN_READ, &ct->payload_file);
	if (err) {
		tool_err_errno(payload, "cannot read the payload", err);
		return err;
	}
	return ct_file_size(ct->payload_file, size);
}

/* The size of an existing image or device (0: none yet). */
static int existing_size(const char *path, uint64_t *size)
{
	struct dmt_file *f;
	struct stat st;
	int err;

	*size = 0;
	if (!path || stat(path, &st) ||
	    (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)))
		return 0;
	if (S_ISREG(st.st_mode)) {
		*size = (uint64_t)st.st_size;
		return 0;
	}
	err = dmt_file_open(path, DMT_OPEN_READ, &f);
	if (!err)
		err = dmt_file_size(f, size);
	dmt_file_close(f);
	if (err)
		tool_err_errno(path, "cannot read the device size", err);
	return err;
}

int ct_luks2_default_sector(struct cli *c, struct ct_map *m, uint64_t need)
{
	struct ct *ct = ct_of(c);
	uint64_t want, have, final;
	bool is_auto, given;
	int err = ct_device_size_opt(c, &want, &is_auto, &given);

	if (!err)
		err = existing_size(ct->image, &have);
	if (err || m->sector_size_given)
		return err;
	/* lib/setup.c compares the offset in 512-byte sectors with the
	 * sector size in bytes: only offsets of 2 MiB multiples keep 4096 */
	if (cli_num(c, O_OFFSET, 0) % 4096) {
		m->sector_size = 512;
		tool_info("--offset %" PRIu64 ": not a multiple of 4096 sectors: 512-byte sectors (as luksFormat without --sector-size: \"Data offset not aligned to sector size. Reverting to 512 bytes.\")",
			  cli_num(c, O_OFFSET, 0));
		return 0;
	}
	/* the size the image has once formatted (size_image's rule) */
	if (given && !is_auto)
		final = want;
	else if (!given && have)
		final = have;
	else
		final = have > need ? have : need;
	if (final % 4096 == 0)
		return 0;
	m->sector_size = 512;
	tool_info("%s: %" PRIu64 " bytes, not a multiple of 4096: 512-byte sectors (as luksFormat without --sector-size: \"Device size is not aligned to sector size. Reverting to 512 bytes.\")",
		  ct->image, final);
	return 0;
}

/* The image's size: --device-size, auto (a new file's default), or
 * what an existing file or device has; never less than need. */
static int size_image(struct cli *c, struct plan *pl)
{
	struct ct *ct = ct_of(c);
	uint64_t want, have = 0;
	bool is_auto, given;
	int err = ct_device_size_opt(c, &want, &is_auto, &given);

	if (!err && !pl->created)
		err = ct_file_size(pl->data, &have);
	if (err)
		return err;
	if (!given && !pl->created)
		want = have;
	else if (!given || is_auto)
		want = pl->need > have ? pl->need : have;
	if (want < pl->need) {
		tool_err("%s: the payload (%" PRIu64 " bytes) needs an image of %"
			 PRIu64 " bytes, the image would have %" PRIu64 "%s",
			 ct->image, pl->payload, pl->need, want,
			 dmt_file_is_blockdev(pl->data) ? "" :
			 " (--device-size auto)");
		return -ENOSPC;
	}
	if (dmt_file_is_blockdev(pl->data) && want > have) {
		tool_err("%s: --device-size %" PRIu64 " is larger than the device (%"
			 PRIu64 " bytes)", ct->image, want, have);
		return -ENOSPC;
	}
	if (pl->m.sector_size > 512 && (want - pl->m.offset) % pl->m.sector_size) {
		/* only with --sector-size: luksFormat and plain open refuse */
		tool_err("%s: %" PRIu64 " bytes after the data offset are not a multiple of the %u-byte --sector-size (cryptsetup: Device size is not aligned to requested sector size.)",
			 ct->image, want - pl->m.offset, pl->m.sector_size);
		return -EINVAL;
	}
	pl->device = want;
	if (want <= pl->m.offset)
		/* cryptsetup's words (lib/setup.c), the format goes on */
		tool_warn("Device %s is too small for activation, there is no remaining space for data.",
			  ct->image);
	if (want > have && !dmt_file_is_blockdev(pl->data))
		err = dmt_file_extend(pl->data, want);
	if (err)
		tool_err_errno(ct->image, "cannot grow the image", err);
	return err;
}

static int open_image(struct cli *c, struct plan *pl)
{
	struct ct *ct = ct_of(c);
	int err = ct_open_output(&ct->image_file, ct->image, true,
				 &pl->created);
	char warning[1200];

	if (err)
		return err;
	pl->data = ct->image_file;
	if (pl->created)
		return 0;
	snprintf(warning, sizeof(warning),
		 "This will overwrite data on %s irrevocably.", ct->image);
	if (cli_confirm(c, warning))
		return 0;
	tool_err("%s: format cancelled, the image was not changed", ct->image);
	return -EINVAL;
}

/* Payload, then (--wipe) encrypted zeros to the end of the mapping. */
static int write_data(struct cli *c, struct plan *pl, const uint8_t *key)
{
	struct ct *ct = ct_of(c);
	const struct ct_map *m = &pl->m;
	uint64_t padded = round_up(pl->payload, m->sector_size);
	uint64_t end = m->offset + (pl->device - m->offset) / m->sector_size *
					   m->sector_size;
	struct dmt_file *zero;
	int err;

	/* bulk writes around the page cache: no writeback left for the sync */
	dmt_file_enable_direct(pl->data);
	tool_progress_init(&ct->progress, ct->image, "written",
			   c->progress_frequency, c->progress_json);
	err = ct_stream(c, m, key, ct->payload_file, 0, pl->data, m->offset,
			pl->payload, 0, true);
	if (!err && cli_given(c, O_WIPE) && end > m->offset + padded) {
		err = dmt_file_open("/dev/zero", DMT_OPEN_READ, &zero);
		if (!err) {
			err = ct_stream(c, m, key, zero, 0, pl->data,
					m->offset + padded,
					end - m->offset - padded,
					padded / m->sector_size, true);
			dmt_file_close(zero);
		}
	}
	tool_progress_finish(&ct->progress, !err);
	if (err == -EINTR)
		tool_err("%s: format interrupted; %s", ct->image, pl->created ?
			 "nothing was written" :
			 "the image is incomplete (run format again)");
	return err;
}

static void print_json(struct cli *c, const struct plan *pl, const char *line)
{
	struct ct *ct = ct_of(c);
	json_object *j = json_object_new_object();

	cli_json_add_str(j, "image", ct->image);
	cli_json_add_str(j, "type", ct->type == CT_PLAIN ? "plain" : "luks2");
	cli_json_add_str(j, "cipher", pl->m.cipher);
	cli_json_add_u64(j, "key_size", pl->m.key_size * 8);
	cli_json_add_u64(j, "sector_size", pl->m.sector_size);
	cli_json_add_u64(j, "data_offset", pl->m.offset);
	cli_json_add_u64(j, "iv_offset", pl->m.iv_offset);
	cli_json_add_u64(j, "payload_size", pl->payload);
	cli_json_add_u64(j, "device_size", pl->device);
	cli_json_add_bool(j, "wiped", cli_given(c, O_WIPE));
	if (ct->type == CT_LUKS2) {
		json_object *k = json_object_new_object();

		if (cli_given(c, O_HEADER))
			cli_json_add_str(j, "header", cli_str(c, O_HEADER));
		cli_json_add_str(j, "uuid", dmt_luks2_uuid(ct->luks));
		cli_json_add_u64(j, "keyslot", (uint64_t)pl->keyslot);
		cli_json_add_str(k, "type", pl->pbkdf.type);
		if (pl->pbkdf.hash)
			cli_json_add_str(k, "hash", pl->pbkdf.hash);
		cli_json_add_u64(k, "iterations", pl->pbkdf.iterations);
		if (!pl->pbkdf.hash) {
			cli_json_add_u64(k, "memory", pl->pbkdf.memory_kb);
			cli_json_add_u64(k, "parallel", pl->pbkdf.parallel);
		}
		json_object_object_add(j, "pbkdf", k);
	} else {
		cli_json_add_bool(j, "iv_large_sectors", pl->m.iv_large_sectors);
		cli_json_add_str(j, "hash", pl->hashed ? ct_plain_hash(c) : NULL);
	}
	cli_json_add_str(j, "open_command", line);
	cli_json_print(c, j);
}

static int format_plain(struct cli *c, struct plan *pl)
{
	struct ct *ct = ct_of(c);
	char line[4096];
	int err;

	for (int o = O_VOLUME_KEY_FILE; o <= O_KEYSLOTS_SIZE; o++)
		if (cli_given(c, o)) {
			tool_err("--%s applies to --type luks2 only",
				 c->tool->options[o].name);
			return -EINVAL;
		}
	if (cli_given(c, O_HEADER)) {
		tool_err("--header applies to --type luks2 only");
		return -EINVAL;
	}
	err = ct_plain_key(c, ct_plain_hash(c), pl->m.key_size, true, &ct->key,
			   &pl->hashed);
	if (err)
		return err;
	pl->need = pl->m.offset + round_up(pl->payload, pl->m.sector_size);
	err = open_image(c, pl);
	if (!err)
		err = size_image(c, pl);
	if (!err)
		err = write_data(c, pl, ct->key.p);
	if (!err)
		err = ct_finish_output(pl->data, pl->created);
	if (err)
		return err;
	ct_plain_open_line(c, &pl->m, pl->hashed, line, sizeof(line));
	tool_info("%s", line);
	if (c->json)
		print_json(c, pl, line);
	return 0;
}

int ct_luks2_keyslot(struct cli *c, struct dmt_luks2_keyslot_params *kp,
		     int *keyslot)
{
	struct ct *ct = ct_of(c);
	struct dmt_reason why = { 0 };
	int err = ct_keyslot_params(c, kp);

	if (!err)
		err = ct_read_passphrase(c, ct->image, true, &ct->pass);
	if (err)
		return err;
	*keyslot = dmt_luks2_add_keyslot(ct->luks, kp, ct->pass.p, ct->pass.len,
					 &why);
	err = *keyslot < 0 ? *keyslot : 0;
	tool_secret_free(&ct->pass);
	if (err)
		ct_print_why(c, &why, err, NULL, "cannot add the keyslot");
	return err;
}

/* The header, its keyslot and the volume key, before any file opens. */
static int luks2_header(struct cli *c, struct plan *pl)
{
	struct ct *ct = ct_of(c);
	struct dmt_luks2_params p;
	struct dmt_luks2_keyslot_params kp;
	struct dmt_luks2_segment seg;
	struct dmt_reason why = { 0 };
	int err;

	err = ct_luks2_params(c, &pl->m, &p);
	/* the data offset luksFormat gives, for the size auto makes */
	if (!err)
		err = ct_luks2_default_sector(c, &pl->m, (p.detached ?
			p.data_offset : p.data_offset ? p.data_offset :
			DMT_LUKS2_DEFAULT_DATA_OFFSET) +
			round_up(pl->payload, 4096));
	p.sector_size = pl->m.sector_size;
	if (!err && cli_given(c, O_VOLUME_KEY_FILE))
		err = ct_read_key_bytes(cli_str(c, O_VOLUME_KEY_FILE), 0,
					pl->m.key_size,
					"volume key",
					&ct->key);
	if (err)
		return err;
	/* the parameters checked before the benchmark and the passphrase */
	p.volume_key = ct->key.p;
	err = dmt_luks2_create(&p, &ct->luks, &why);
	if (err) {
		ct_print_why(c, &why, err, NULL, "cannot create the header");
		return err;
	}
	err = ct_luks2_keyslot(c, &kp, &pl->keyslot);
	if (err)
		return err;
	pl->pbkdf = kp.pbkdf;
	dmt_luks2_get_segment(ct->luks, &seg);
	pl->m.offset = seg.offset;
	pl->m.iv_offset = seg.iv_tweak;
	return 0;
}

/*
 * The old header cleared: our header area, and the first 4 KiB at every
 * offset a secondary copy of any size can have (an old header with larger
 * copies than ours), so an interrupted format leaves no header at all.
 * Everything cleared is written again (header or data) by a complete run.
 */
static int clear_header(struct plan *pl, struct dmt_luks2 *h)
{
	static const uint8_t zeros[65536];
	uint64_t end = dmt_luks2_header_size(h), size = 0;
	int err = dmt_file_size(pl->hdr, &size);

	if (end > size)
		end = size;
	for (uint64_t off = 0; !err && off < end; off += sizeof(zeros))
		err = dmt_pwrite_full(pl->hdr, zeros,
				      end - off < sizeof(zeros) ?
					      (size_t)(end - off) : sizeof(zeros),
				      off);
	for (uint64_t off = DMT_LUKS2_DEFAULT_METADATA;
	     !err && off <= DMT_LUKS2_MAX_METADATA; off *= 2)
		if (off >= end && off + DMT_LUKS2_BIN_HDR_SIZE <= size)
			err = dmt_pwrite_full(pl->hdr, zeros,
					      DMT_LUKS2_BIN_HDR_SIZE, off);
	if (!err)
		err = dmt_file_sync(pl->hdr);
	if (err)
		tool_err_errno(dmt_file_path(pl->hdr), "cannot clear the header", err);
	return err;
}

static int write_header(struct cli *c, struct plan *pl)
{
	struct ct *ct = ct_of(c);
	struct dmt_reason why = { 0 };
	int err;

	err = ct_finish_output(pl->data, pl->created && pl->hdr != pl->data);
	if (!err)
		err = dmt_luks2_write(ct->luks, pl->hdr, &why);
	if (err) {
		ct_print_why(c, &why, err, dmt_file_path(pl->hdr),
			     "cannot write the header");
		return err;
	}
	return ct_finish_output(pl->hdr, pl->hdr == pl->data ? pl->created :
				    pl->header_created);
}

static int format_luks2(struct cli *c, struct plan *pl)
{
	struct ct *ct = ct_of(c);
	const char *header = cli_str(c, O_HEADER);
	const uint8_t *vk;
	char line[4096];
	size_t vk_len;
	int err;

	err = luks2_header(c, pl);
	if (err)
		return err;
	pl->need = pl->m.offset + round_up(pl->payload, pl->m.sector_size);
	err = open_image(c, pl);
	pl->hdr = pl->data;
	if (!err && header) {
		err = ct_open_output(&ct->header_file, header, true,
				     &pl->header_created);
		pl->hdr = ct->header_file;
	}
	if (!err)
		err = size_image(c, pl);
	if (!err && (pl->hdr == pl->data ? !pl->created : !pl->header_created))
		err = clear_header(pl, ct->luks);
	vk = dmt_luks2_volume_key(ct->luks, &vk_len);
	if (!err)
		err = write_data(c, pl, vk);
	if (!err)
		err = write_header(c, pl);
	if (err)
		return err;
	snprintf(line, sizeof(line), "cryptsetup open%s%s %s NAME",
		 header ? " --header " : "", header ? header : "", ct->image);
	tool_verbose("%s", line);
	if (c->json)
		print_json(c, pl, line);
	return 0;
}

int ct_cmd_format(struct cli *c)
{
	struct ct *ct = ct_of(c);
	struct plan pl = { 0 };
	int err;

	if (cli_given(c, O_INTEGRITY)) {
		if (ct->type != CT_LUKS2) {
			tool_err("--integrity applies to --type luks2 only");
			return -EINVAL;
		}
		return ct_auth_format(c);
	}
	err = ct_map_options(c, &pl.m);
	if (!err)
		err = ct_open_payload(c, &pl.payload);
	if (err)
		return err;
	if (ct->type == CT_LUKS2 && (cli_given(c, O_SKIP) ||
				     cli_given(c, O_IV_LARGE))) {
		tool_err("--skip and --iv-large-sectors apply to --type plain only");
		return -EINVAL;
	}
	return ct->type == CT_PLAIN ? format_plain(c, &pl) :
				      format_luks2(c, &pl);
}
