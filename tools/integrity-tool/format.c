// SPDX-License-Identifier: MIT
/* integrity-tool format: superblock, journal, data and every tag. */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "tools/integrity-tool/it.h"

static int device_size_opt(struct cli *c)
{
	struct dmt_integrity_opts *o = &it_of(c)->o;
	const char *s = cli_str(c, O_DEVICE_SIZE);

	if (!s)
		return 0;
	if (!strcmp(s, "auto")) {
		o->device_size_auto = true;
		return 0;
	}
	if (tool_parse_size(s, &o->device_size) || !o->device_size) {
		tool_err("--device-size: invalid size '%s'", s);
		return -EINVAL;
	}
	return 0;
}

/* The kernel ignores a device's partial last sector (or block). */
static void warn_unused_tail(const struct it *it,
			     const struct dmt_integrity_result *r)
{
	uint64_t ss = 512u << r->sb.log2_sectors_per_block;

	if (r->device_bytes % 512)
		tool_warn("%s: the last %" PRIu64
			  " bytes are not used (the size is not a multiple of 512)",
			  it->device, r->device_bytes % 512);
	if (it->o.data_device && r->data_device_bytes % ss)
		tool_warn("%s: the last %" PRIu64
			  " bytes are not used (the size is not a multiple of the %" PRIu64
			  "-byte sector size)", it->o.data_device,
			  r->data_device_bytes % ss, ss);
}

static void report_failure(struct cli *c, const struct dmt_integrity_result *r,
			   int err)
{
	const struct it *it = it_of(c);
	struct stat st;

	it_print_why(c, r, err);
	if (err == -ENODATA && r->need_bytes) {
		/* a block device cannot be grown: no option to offer */
		if (!stat(it->device, &st) && S_ISBLK(st.st_mode))
			tool_err("%s: needs at least %" PRIu64 " bytes",
				 it->device, r->need_bytes);
		else
			tool_err("%s: needs at least %" PRIu64
				 " bytes (--device-size %" PRIu64 ")",
				 it->device, r->need_bytes, r->need_bytes);
	}
	if (err == -EINTR)
		tool_err("%s: format interrupted; %s", it->device,
			 r->created ? "nothing was written" :
			 it->o.data_from ?
			 "run the same format again (the payload may be incomplete)" :
			 "finish with `integrity-tool recalculate` (same options) or run format again");
}

static void print_json(struct cli *c, const struct dmt_integrity_result *r)
{
	const struct it *it = it_of(c);
	const struct dmt_integrity_opts *o = &it->o;
	json_object *j = json_object_new_object();
	const char *why;
	char table[2048];

	cli_json_add_str(j, "device", it->device);
	cli_json_add_u64(j, "device_size", r->device_bytes);
	if (o->data_device) {
		cli_json_add_str(j, "data_device", o->data_device);
		cli_json_add_u64(j, "data_device_size", r->data_device_bytes);
	}
	cli_json_add_str(j, "integrity", it_canonical_alg(o->alg));
	cli_json_add_u64(j, "tag_size", r->sb.tag_size);
	cli_json_add_u64(j, "sector_size", 512u << r->sb.log2_sectors_per_block);
	cli_json_add_u64(j, "provided_data_sectors", r->sb.provided_data_sectors);
	cli_json_add_u64(j, "provided_data_bytes",
			 r->sb.provided_data_sectors * 512);
	if (o->data_from) {
		cli_json_add_str(j, "data_from", o->data_from);
		cli_json_add_u64(j, "payload_size", r->payload_bytes);
	}
	cli_json_add_bool(j, "tags_written", !o->no_wipe);
	it_geom_json(j, &r->geom);
	cli_json_add_str(j, "engine", r->engine);
	json_object_object_add(j, "superblock", it_sb_json(&r->sb));
	if (it_table_line(it, &r->sb, table, sizeof(table), &why)) {
		cli_json_add_str(j, "table", table);
	} else {
		cli_json_add_str(j, "table", NULL);
		cli_json_add_str(j, "table_note", why);
	}
	cli_json_print(c, j);
}

int it_cmd_format(struct cli *c)
{
	struct it *it = it_of(c);
	struct dmt_integrity_result r;
	int err;

	err = device_size_opt(c);
	if (err)
		return err;
	if (cli_given(c, O_DATA_FROM) && cli_given(c, O_NO_WIPE)) {
		tool_err("--data-from needs the data area written: drop --no-wipe");
		return -EINVAL;
	}
	it->o.data_from = cli_str(c, O_DATA_FROM);
	it->o.no_wipe = cli_given(c, O_NO_WIPE);
	tool_progress_init(&it->progress, it->device, "written",
			   c->progress_frequency, c->progress_json);
	it->o.progress = tool_progress_hook(&it->progress);

	err = dmt_integrity_format(&it->o, &r);
	tool_progress_finish(&it->progress, !err);
	if (err) {
		report_failure(c, &r, err);
		return err;
	}
	warn_unused_tail(it, &r);
	if (c->json) {
		print_json(c, &r);
		return 0;
	}
	printf("Formatted with tag size %u, internal integrity %s.\n",
	       r.sb.tag_size, it_canonical_alg(it->o.alg));
	tool_verbose("%s: %" PRIu64 " bytes usable (provided_data_sectors %" PRIu64
		     "), %s", it->device, r.sb.provided_data_sectors * 512,
		     r.sb.provided_data_sectors,
		     it->o.no_wipe ? "tags not written (--no-wipe)" :
				     "every tag written");
	return 0;
}
