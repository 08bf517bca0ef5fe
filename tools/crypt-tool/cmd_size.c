// SPDX-License-Identifier: MIT
/*
 * crypt-tool size: the image size `format --device-size auto` gives a
 * payload (LUKS2: the data offset luksFormat would choose with these
 * options, then whole sectors; with --header: the data device only).
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>

#include "tools/crypt-tool/ct.h"

int ct_cmd_size(struct cli *c)
{
	struct ct *ct = ct_of(c);
	struct dmt_luks2_params p;
	struct dmt_luks2_segment seg;
	struct dmt_reason why = { 0 };
	struct ct_map m;
	uint64_t payload, bytes, header = 0;
	int err;

	if (!cli_given(c, O_PAYLOAD_SIZE)) {
		tool_err("size needs --payload-size BYTES");
		return -EINVAL;
	}
	payload = cli_num(c, O_PAYLOAD_SIZE, 0);
	if (cli_given(c, O_INTEGRITY)) {
		if (ct->type != CT_LUKS2) {
			tool_err("--integrity applies to --type luks2 only");
			return -EINVAL;
		}
		return ct_auth_size(c, payload);
	}
	err = ct_map_options(c, &m);
	if (!err && ct->type == CT_LUKS2)
		err = ct_luks2_params(c, &m, &p);
	/* format's sector size for this --offset (no image: nothing else) */
	if (!err && ct->type == CT_LUKS2)
		err = ct_luks2_default_sector(c, &m, 0);
	p.sector_size = m.sector_size;
	if (err)
		return err;
	if (ct->type == CT_LUKS2) {
		/* the header luksFormat would write (a throw-away volume key;
		 * its digest needs no benchmark) */
		p.digest_iterations = 1000;
		err = dmt_luks2_create(&p, &ct->luks, &why);
		if (err) {
			ct_print_why(c, &why, err, NULL, "invalid parameters");
			return err;
		}
		dmt_luks2_get_segment(ct->luks, &seg);
		m.offset = seg.offset;
		header = dmt_luks2_header_size(ct->luks);
	}
	bytes = m.offset + (payload + m.sector_size - 1) / m.sector_size *
				   m.sector_size;
	if (c->json) {
		json_object *j = json_object_new_object();

		cli_json_add_str(j, "type", ct->type == CT_PLAIN ? "plain" : "luks2");
		cli_json_add_u64(j, "payload_size", payload);
		cli_json_add_u64(j, "device_size", bytes);
		cli_json_add_u64(j, "data_offset", m.offset);
		cli_json_add_u64(j, "sector_size", m.sector_size);
		if (ct->type == CT_LUKS2)
			cli_json_add_u64(j, "header_size", header);
		cli_json_print(c, j);
	} else {
		printf("%" PRIu64 "\n", bytes);
	}
	return 0;
}
