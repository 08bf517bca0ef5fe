// SPDX-License-Identifier: MIT
/* integrity-tool size: the device size a payload needs. */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>

#include <dmt/io.h>

#include "tools/integrity-tool/it.h"

/* --payload-size, or the size of --data-device. */
static int payload_size(struct cli *c, uint64_t *bytes)
{
	const char *data = it_of(c)->data_path;
	struct dmt_file *f;
	int err;

	if (cli_given(c, O_PAYLOAD_SIZE)) {
		*bytes = cli_num(c, O_PAYLOAD_SIZE, 0);
		return 0;
	}
	if (!data) {
		tool_err("size needs --payload-size BYTES");
		return -EINVAL;
	}
	err = dmt_file_open(data, DMT_OPEN_READ, &f);
	if (!err) {
		err = dmt_file_size(f, bytes);
		dmt_file_close(f);
	}
	if (err)
		tool_err_errno(data, "cannot get the size", err);
	return err;
}

static void print_json(struct cli *c, const struct dmt_integrity_layout *l,
		       const struct dmt_integrity_geom *g, uint64_t payload,
		       uint64_t bytes, uint64_t data_bytes)
{
	json_object *j = json_object_new_object();

	cli_json_add_u64(j, "payload_size", payload);
	cli_json_add_u64(j, "device_size", bytes);
	if (l->meta_dev)
		cli_json_add_u64(j, "data_device_size", data_bytes);
	cli_json_add_u64(j, "provided_data_sectors", g->provided);
	cli_json_add_u64(j, "journal_sections", g->journal_sections);
	cli_json_add_u64(j, "tag_size", g->tag_size);
	cli_json_add_u64(j, "sector_size", l->sector_size);
	it_geom_json(j, g);
	cli_json_print(c, j);
}

int it_cmd_size(struct cli *c)
{
	struct it *it = it_of(c);
	struct dmt_integrity_layout l = it->o.layout;
	struct dmt_integrity_sb sb;
	struct dmt_integrity_geom g;
	uint64_t payload, bytes, need, data_bytes = 0;
	int err;

	if (!l.tag_size) {
		unsigned int ts;

		err = dmt_integrity_default_tag_size(it->o.alg, &ts);
		if (err) {
			tool_err("--integrity: unknown algorithm '%s'",
				 it->o.alg);
			return -EINVAL;
		}
		l.tag_size = ts;
	}
	err = payload_size(c, &payload);
	if (err)
		return err;
	need = (payload + l.sector_size - 1) / l.sector_size *
	       (l.sector_size / 512);
	l.meta_dev = it->data_path != NULL;
	if (l.meta_dev) {
		data_bytes = need * 512;
		l.data_dev_sectors = need ? need : l.sector_size / 512;
	}
	err = dmt_integrity_min_device(&l, need, &bytes, NULL);
	if (err) {
		tool_err("no device size can hold %" PRIu64 " bytes with these options",
			 payload);
		return err;
	}
	l.dev_sectors = bytes >> 9;
	err = dmt_integrity_geom_format(&l, &sb, &g, NULL);
	if (err) {
		tool_err("invalid parameters: %s", dmt_strerror(err));
		return err;
	}
	if (c->json)
		print_json(c, &l, &g, payload, bytes, data_bytes);
	else
		printf("%" PRIu64 "\n", bytes);
	return 0;
}
