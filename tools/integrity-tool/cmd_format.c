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
	struct dmt_integrity_params *o = &it_of(c)->o;
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
	if (it->o.data && r->data_device_bytes % ss)
		tool_warn("%s: the last %" PRIu64
			  " bytes are not used (the size is not a multiple of the %" PRIu64
			  "-byte sector size)", it->data_path,
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
			 it->o.payload ?
			 "run the same format again (the payload may be incomplete)" :
			 "finish with `integrity-tool recalculate` (same options) or run format again");
}

static void print_json(struct cli *c, const struct dmt_integrity_result *r)
{
	const struct it *it = it_of(c);
	const struct dmt_integrity_params *o = &it->o;
	json_object *j = json_object_new_object();
	const char *why;
	char table[2048];

	cli_json_add_str(j, "device", it->device);
	cli_json_add_u64(j, "device_size", r->device_bytes);
	if (o->data) {
		cli_json_add_str(j, "data_device", it->data_path);
		cli_json_add_u64(j, "data_device_size", r->data_device_bytes);
	}
	cli_json_add_str(j, "integrity", it_canonical_alg(o->alg));
	cli_json_add_u64(j, "tag_size", r->sb.tag_size);
	cli_json_add_u64(j, "sector_size", 512u << r->sb.log2_sectors_per_block);
	cli_json_add_u64(j, "provided_data_sectors", r->sb.provided_data_sectors);
	cli_json_add_u64(j, "provided_data_bytes",
			 r->sb.provided_data_sectors * 512);
	if (o->payload) {
		cli_json_add_str(j, "data_from", it->payload_path);
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

static int format_options(struct cli *c)
{
	struct it *it = it_of(c);
	int err = device_size_opt(c);

	if (err)
		return err;
	if (cli_given(c, O_DATA_FROM) && cli_given(c, O_NO_WIPE)) {
		tool_err("--data-from needs the data area written: drop --no-wipe");
		return -EINVAL;
	}
	if (cli_given(c, O_DATA_FROM) && cli_given(c, O_DATA_DEVICE)) {
		tool_err("%s: --data-from does not apply with --data-device: the data device itself holds the data",
			 it->device);
		return -EINVAL;
	}
	it->o.no_wipe = cli_given(c, O_NO_WIPE);
	return 0;
}

/* Asks before overwriting data (as integritysetup does). */
static int confirm_overwrite(struct cli *c)
{
	struct it *it = it_of(c);
	char warning[1200];

	if (it->o.created || !it_device_has_data(it->o.meta))
		return 0;
	snprintf(warning, sizeof(warning),
		 "Device %s already contains data; format overwrites it.",
		 it->device);
	if (cli_confirm(c, warning))
		return 0;
	tool_err("%s: format cancelled, the device was not changed",
		 it->device);
	return -EINVAL;
}

/*
 * What is written, as integritysetup says it: before the progress line
 * when there is one (as integritysetup), else once it is done, so that a
 * failure leaves nothing on stdout.
 */
static void print_summary(struct cli *c, const struct dmt_integrity_result *r)
{
	struct it *it = it_of(c);

	if (c->json)
		return;
	printf("Formatted with tag size %u, internal integrity %s.\n",
	       r->sb.tag_size, it_canonical_alg(it->o.alg));
	fflush(stdout);
}

static void print_done(struct cli *c, const struct dmt_integrity_result *r)
{
	struct it *it = it_of(c);

	warn_unused_tail(it, r);
	tool_verbose("%s: tags by %s on %u %s", it->device, r->engine,
		     it->o.threads, cli_plural(it->o.threads, "thread", "threads"));
	if (c->json) {
		print_json(c, r);
		return;
	}
	tool_verbose("%s: %" PRIu64 " bytes usable (provided_data_sectors %" PRIu64
		     "), %s", it->device, r->sb.provided_data_sectors * 512,
		     r->sb.provided_data_sectors,
		     it->o.no_wipe ? "tags not written (--no-wipe)" :
				     "every tag written");
}

int it_cmd_format(struct cli *c)
{
	struct it *it = it_of(c);
	struct dmt_integrity_result r;
	int err;

	err = format_options(c);
	if (!err)
		err = it_open_files(c);
	if (err)
		return err;
	err = dmt_integrity_format_plan(&it->o, &r, &it->why);
	if (err) {
		report_failure(c, &r, err);
		return err;
	}
	err = confirm_overwrite(c);
	if (err)
		return err;
	it_debug_geometry(&r);
	tool_progress_init(&it->progress, it->device, "written",
			   c->progress_frequency, c->progress_json);
	it->o.progress = tool_progress_hook(&it->progress);
	if (it->progress.enabled)
		print_summary(c, &r);
	err = dmt_integrity_format_write(&it->o, &r, &it->why);
	tool_progress_finish(&it->progress, !err);
	if (err) {
		report_failure(c, &r, err);
		return err;
	}
	if (!it->progress.enabled)
		print_summary(c, &r);
	print_done(c, &r);
	return 0;
}
