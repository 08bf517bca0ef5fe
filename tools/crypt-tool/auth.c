// SPDX-License-Identifier: MIT
/*
 * crypt-tool with --integrity: authenticated LUKS2 (dm-crypt in AEAD mode
 * over a tag-only dm-integrity device, include/dmt/crypt_auth.h).  format
 * writes the header, the dm-integrity metadata and every payload sector
 * with its tag, so `cryptsetup open` needs no wipe; check verifies every
 * tag; decrypt refuses a sector whose tag fails (--allow-bad-sectors
 * writes it anyway).  Bad sectors are named as the kernel names them: in
 * 512-byte units of the mapped device.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include <dmt/crypt_auth.h>

#include "tools/crypt-tool/ct.h"

/* The spec of --cipher/--integrity/--key-size, and --sector-size. */
static int auth_options(struct cli *c, struct dmt_auth_spec *s,
			struct ct_map *m)
{
	struct dmt_reason why = { 0 };
	uint64_t bits = cli_num(c, O_KEY_SIZE, 0);
	int err;

	memset(m, 0, sizeof(*m));
	if (!cli_given(c, O_CIPHER)) {
		tool_err("--integrity needs --cipher (supported: %s)",
			 dmt_auth_supported());
		return -EINVAL;
	}
	if (bits % 8) {
		tool_err("--key-size: %" PRIu64 " is not a multiple of 8 bits",
			 bits);
		return -EINVAL;
	}
	err = dmt_auth_lookup(cli_str(c, O_CIPHER), cli_str(c, O_INTEGRITY),
			      (size_t)(bits / 8), s, &why);
	if (err) {
		cli_reason_err(c, &why);
		return err;
	}
	m->cipher = s->cipher;
	m->key_size = (unsigned int)(s->cipher_key_size + s->mac_key_size);
	m->sector_size_given = cli_given(c, O_SECTOR_SIZE);
	m->sector_size = (unsigned int)cli_num(c, O_SECTOR_SIZE, 4096);
	if (m->sector_size < 512 || m->sector_size > 4096 ||
	    (m->sector_size & (m->sector_size - 1))) {
		tool_err("--sector-size: %u is not a power of 2 in 512..4096",
			 m->sector_size);
		return -EINVAL;
	}
	if (cli_given(c, O_SKIP) || cli_given(c, O_IV_LARGE)) {
		tool_err("--skip and --iv-large-sectors apply to --type plain only");
		return -EINVAL;
	}
	return 0;
}

/* Header with its keyslot and the volume key (cipher || MAC key). */
static int auth_header(struct cli *c, const struct dmt_auth_spec *s,
		       struct ct_map *m, struct dmt_luks2_pbkdf *pbkdf,
		       int *keyslot)
{
	struct ct *ct = ct_of(c);
	struct dmt_luks2_params p;
	struct dmt_luks2_keyslot_params kp;
	struct dmt_reason why = { 0 };
	int err;

	/* a new image's size is whole 4096-byte blocks: need 0 */
	err = ct_luks2_default_sector(c, m, 0);
	if (!err)
		err = ct_luks2_params(c, m, &p);
	if (!err && cli_given(c, O_VOLUME_KEY_FILE))
		err = ct_read_key_bytes(cli_str(c, O_VOLUME_KEY_FILE), 0,
					m->key_size,
					"volume key",
					&ct->key);
	if (err)
		return err;
	/* the parameters checked before the benchmark and the passphrase */
	p.volume_key = ct->key.p;
	err = dmt_luks2_create_auth(&p, s, &ct->luks, &why);
	if (err) {
		ct_print_why(c, &why, err, NULL, "cannot create the header");
		return err;
	}
	err = ct_luks2_keyslot(c, &kp, keyslot);
	*pbkdf = kp.pbkdf;
	return err;
}

static int open_for_format(struct cli *c, bool *created, bool *hdr_created)
{
	struct ct *ct = ct_of(c);
	const char *header = cli_str(c, O_HEADER);
	char warning[1200];
	int err = ct_open_output(&ct->image_file, ct->image, true, created);

	if (!err && !*created) {
		snprintf(warning, sizeof(warning),
			 "This will overwrite data on %s irrevocably.",
			 ct->image);
		if (!cli_confirm(c, warning)) {
			tool_err("%s: format cancelled, the image was not changed",
				 ct->image);
			return -EINVAL;
		}
	}
	if (!err && header)
		err = ct_open_output(&ct->header_file, header, true,
				     hdr_created);
	return err;
}

/* --device-size on a block device: no larger than the device. */
static int fits_device(struct cli *c, uint64_t want)
{
	struct ct *ct = ct_of(c);
	uint64_t have;
	int err = ct_file_size(ct->image_file, &have);

	if (!err && want > have) {
		tool_err("%s: --device-size %" PRIu64 " is larger than the device (%"
			 PRIu64 " bytes)", ct->image, want, have);
		err = -ENOSPC;
	}
	return err;
}

static void format_json(struct cli *c, const struct dmt_auth_result *r,
			const struct ct_map *m, int keyslot,
			const struct dmt_luks2_pbkdf *pbkdf)
{
	struct ct *ct = ct_of(c);
	json_object *j = json_object_new_object();
	json_object *k = json_object_new_object();

	cli_json_add_str(j, "image", ct->image);
	cli_json_add_str(j, "type", "luks2");
	cli_json_add_str(j, "cipher", r->spec.cipher);
	cli_json_add_str(j, "integrity", r->spec.integrity);
	cli_json_add_str(j, "integrity_type", r->spec.luks2_type);
	cli_json_add_u64(j, "key_size", r->spec.cipher_key_size * 8);
	cli_json_add_u64(j, "integrity_key_size", r->spec.mac_key_size * 8);
	cli_json_add_u64(j, "tag_size", r->spec.tag_size);
	cli_json_add_u64(j, "sector_size", m->sector_size);
	cli_json_add_u64(j, "data_offset", r->data_offset);
	cli_json_add_u64(j, "payload_size", r->payload_bytes);
	cli_json_add_u64(j, "device_size", r->device_bytes);
	cli_json_add_u64(j, "mapped_size", r->mapped_bytes);
	cli_json_add_bool(j, "wiped", cli_given(c, O_WIPE));
	if (cli_given(c, O_HEADER))
		cli_json_add_str(j, "header", cli_str(c, O_HEADER));
	cli_json_add_str(j, "uuid", dmt_luks2_uuid(ct->luks));
	cli_json_add_u64(j, "keyslot", (uint64_t)keyslot);
	cli_json_add_str(k, "type", pbkdf->type);
	if (pbkdf->hash)
		cli_json_add_str(k, "hash", pbkdf->hash);
	cli_json_add_u64(k, "iterations", pbkdf->iterations);
	if (!pbkdf->hash) {
		cli_json_add_u64(k, "memory", pbkdf->memory_kb);
		cli_json_add_u64(k, "parallel", pbkdf->parallel);
	}
	json_object_object_add(j, "pbkdf", k);
	cli_json_print(c, j);
}

/*
 * The sectors format wrote are the payload's, the last one padded with
 * zeros (all of them with --wipe): the mapped device's sectors after
 * those have no valid tag, and read with EILSEQ (check: bad) until
 * written.  Said only when there are such sectors.
 */
static void warn_untagged(struct cli *c, const struct dmt_auth_result *r,
			  bool wipe)
{
	uint64_t bs = (uint64_t)r->geom.spb << 9;
	uint64_t written = (r->payload_bytes + bs - 1) / bs * bs;
	uint64_t mapped = r->geom.provided << 9;

	if (wipe || mapped <= written)
		return;
	tool_info("%s: the %" PRIu64 " sectors after the payload (bytes %" PRIu64 "..%" PRIu64 " of the mapped device) fail to read until written (--wipe encrypts zeros there)",
		  ct_of(c)->image, (mapped - written) / bs, written, mapped - 1);
}

int ct_auth_format(struct cli *c)
{
	struct ct *ct = ct_of(c);
	struct dmt_auth_spec s;
	struct dmt_auth_image_params im = {0};
	struct dmt_auth_result r;
	struct dmt_reason why = {0};
	struct dmt_luks2_pbkdf pbkdf;
	struct ct_map m;
	uint64_t payload, want;
	bool created = false, hdr_created = false, is_auto, given;
	int keyslot = 0, err;

	err = auth_options(c, &s, &m);
	if (!err)
		err = ct_device_size_opt(c, &want, &is_auto, &given);
	if (!err)
		err = ct_open_payload(c, &payload);
	if (!err)
		err = auth_header(c, &s, &m, &pbkdf, &keyslot);
	if (!err)
		err = open_for_format(c, &created, &hdr_created);
	if (!err && given && !is_auto && dmt_file_is_blockdev(ct->image_file))
		err = fits_device(c, want);
	if (err)
		return err;
	im.h = ct->luks;
	im.header = cli_given(c, O_HEADER) ? ct->header_file : NULL;
	im.data = ct->image_file;
	im.payload = ct->payload_file;
	im.device_size = want;
	/* a new file is as large as the payload needs unless told */
	im.device_size_auto = is_auto || (!given && created);
	im.wipe = cli_given(c, O_WIPE);
	im.threads = c->threads;
	im.engine = tool_engine_spec();	/* --engine / $DMT_ENGINE */
	tool_progress_init(&ct->progress, ct->image, "written",
			   c->progress_frequency, c->progress_json);
	im.progress = tool_progress_hook(&ct->progress);
	err = dmt_auth_format(&im, &r, &why);
	tool_progress_finish(&ct->progress, !err);
	if (err == -EINTR) {
		tool_err("%s: format interrupted; %s", ct->image, created ?
			 "nothing was written" :
			 "the image is incomplete (run format again)");
		return err;
	}
	if (err == -ENOSPC && why.code == DMT_REASON_AUTH_TOO_SMALL) {
		tool_err("%s: the payload (%" PRIu64 " bytes) needs a device of %"
			 PRIu64 " bytes with --integrity %s and %u-byte sectors, the device would have %" PRIu64,
			 ct->image, r.payload_bytes, r.need_bytes, s.integrity,
			 m.sector_size, r.device_bytes);
		return err;
	}
	if (err) {
		ct_print_why(c, &why, err, ct->image, "format failed");
		return err;
	}
	err = ct_finish_output(ct->image_file, created);
	if (!err && im.header)
		err = ct_finish_output(ct->header_file, hdr_created);
	if (err)
		return err;
	tool_verbose("cryptsetup open%s%s %s NAME", im.header ? " --header " : "",
		     im.header ? cli_str(c, O_HEADER) : "", ct->image);
	warn_untagged(c, &r, im.wipe);
	if (c->json)
		format_json(c, &r, &m, keyslot, &pbkdf);
	return 0;
}

int ct_auth_size(struct cli *c, uint64_t payload)
{
	struct ct *ct = ct_of(c);
	struct dmt_auth_spec s;
	struct dmt_luks2_params p;
	struct dmt_luks2_segment seg;
	struct dmt_reason why = { 0 };
	struct ct_map m;
	uint64_t bytes = 0;
	int err = auth_options(c, &s, &m);

	if (!err)
		err = ct_luks2_default_sector(c, &m, 0);
	if (!err)
		err = ct_luks2_params(c, &m, &p);
	if (err)
		return err;
	/* the header format would write (a throw-away volume key) */
	p.digest_iterations = 1000;
	err = dmt_luks2_create_auth(&p, &s, &ct->luks, &why);
	if (err) {
		ct_print_why(c, &why, err, NULL, "invalid parameters");
		return err;
	}
	dmt_luks2_get_segment(ct->luks, &seg);
	err = dmt_auth_min_device(&s, m.sector_size, seg.offset, 0, payload,
				  &bytes, NULL);
	if (err) {
		tool_err("--payload-size %" PRIu64 ": too large for --integrity %s",
			 payload, s.integrity);
		return err;
	}
	if (c->json) {
		json_object *j = json_object_new_object();

		cli_json_add_str(j, "type", "luks2");
		cli_json_add_str(j, "integrity", s.integrity);
		cli_json_add_u64(j, "payload_size", payload);
		cli_json_add_u64(j, "device_size", bytes);
		cli_json_add_u64(j, "data_offset", seg.offset);
		cli_json_add_u64(j, "sector_size", m.sector_size);
		cli_json_add_u64(j, "tag_size", s.tag_size);
		cli_json_add_u64(j, "header_size", dmt_luks2_header_size(ct->luks));
		cli_json_print(c, j);
	} else {
		printf("%" PRIu64 "\n", bytes);
	}
	return 0;
}

bool ct_auth_header(struct cli *c)
{
	struct dmt_auth_spec s;
	struct dmt_reason why = { 0 };

	return dmt_luks2_auth_spec(ct_of(c)->luks, &s, &why) == 0;
}

/* The failing sectors: stdout, one a line (the first few), and a count. */
void ct_auth_report_bad(struct cli *c, const struct dmt_auth_result *r,
		       const char *what)
{
	struct ct *ct = ct_of(c);

	if (!c->json)
		for (size_t i = 0; i < r->n_first_bad; i++)
			printf("bad sector %" PRIu64 "\n", r->first_bad[i]);
	if (r->bad)
		tool_err("%s: %" PRIu64 " of %" PRIu64 " %u-byte sectors failed authentication (%s listed in 512-byte units of the mapped device, as the kernel names them)%s",
			 ct->image, r->bad, r->sectors, r->geom.spb << 9,
			 r->bad > r->n_first_bad ? "the first" : "all", what);
}

void ct_auth_result_json(struct cli *c, const struct dmt_auth_result *r,
			const char *out)
{
	struct ct *ct = ct_of(c);
	json_object *j = json_object_new_object();
	json_object *bad = json_object_new_array();
	json_object *bad512 = json_object_new_array();
	json_object *bads = json_object_new_array();

	cli_json_add_str(j, "image", ct->image);
	if (out)
		cli_json_add_str(j, "output", out);
	cli_json_add_str(j, "cipher", r->spec.cipher);
	cli_json_add_str(j, "integrity", r->spec.integrity);
	cli_json_add_u64(j, "data_offset", r->data_offset);
	cli_json_add_u64(j, "mapped_size", r->mapped_bytes);
	/* sectors, bad_sectors, first_bad_sectors: sector_size units;
	 * first_bad (kept as it was) = first_bad_512: 512-byte units, as
	 * the kernel names a failing sector */
	cli_json_add_u64(j, "sector_size", (uint64_t)r->geom.spb << 9);
	cli_json_add_u64(j, "sectors", r->sectors);
	cli_json_add_u64(j, "bad_sectors", r->bad);
	for (size_t i = 0; i < r->n_first_bad; i++) {
		json_object_array_add(bad, json_object_new_int64(
						   (int64_t)r->first_bad[i]));
		json_object_array_add(bad512, json_object_new_int64(
						      (int64_t)r->first_bad[i]));
		json_object_array_add(bads, json_object_new_int64(
			(int64_t)(r->first_bad[i] / r->geom.spb)));
	}
	json_object_object_add(j, "first_bad", bad);
	json_object_object_add(j, "first_bad_512", bad512);
	json_object_object_add(j, "first_bad_sectors", bads);
	cli_json_print(c, j);
}

/* An image with an integrity segment into im (after ct_luks2_unlock),
 * progress under name. */
void ct_auth_image(struct cli *c, struct dmt_auth_image_params *im,
		   const char *name, const char *verb)
{
	struct ct *ct = ct_of(c);

	dmt_auth_image_params_init(im);
	im->h = ct->luks;
	im->header = cli_given(c, O_HEADER) ? ct->header_file : NULL;
	im->data = ct->image_file;
	im->threads = c->threads;
	im->engine = tool_engine_spec();
	tool_progress_init(&ct->progress, name, verb, c->progress_frequency,
			   c->progress_json);
	im->progress = tool_progress_hook(&ct->progress);
}

int ct_auth_decrypt(struct cli *c, const char *out)
{
	struct ct *ct = ct_of(c);
	struct dmt_auth_image_params im;
	struct dmt_auth_result r;
	struct dmt_reason why = {0};
	bool created, allow = cli_given(c, O_ALLOW_BAD);
	int done, err = ct_open_output(&ct->out_file, out, false, &created);

	if (err)
		return err;
	ct_auth_image(c, &im, ct->image, "written");
	im.output = ct->out_file;
	im.allow_bad = allow;
	err = dmt_auth_decrypt_image(&im, &r, &why);
	tool_progress_finish(&ct->progress, !err || err == -EBADMSG);
	if (err == -EINTR)
		return err;
	if (err && err != -EBADMSG) {
		ct_print_why(c, &why, err, ct->image, "decrypt failed");
		return err;
	}
	ct_auth_report_bad(c, &r, allow ? "; written as decrypted (--allow-bad-sectors)" :
			   "; nothing written (--allow-bad-sectors writes them)");
	/* refused: the output is never left under its name */
	if (err && !allow)
		return err;
	done = ct_finish_output(ct->out_file, created);
	if (done)
		return done;
	if (c->json)
		ct_auth_result_json(c, &r, out);
	return err;
}
