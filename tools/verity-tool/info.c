// SPDX-License-Identifier: MIT
/*
 * dump and size: the superblock and the sizes a build would write.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/verity-tool/vt.h"

/* FEC layout without the FEC file (dump, size): veritysetup's arithmetic. */
static int fec_plan(struct vt *c, const struct dmt_verity_geometry *g,
		    bool shared, uint64_t hash_file_bytes)
{
	struct dmt_reason why = { 0 };
	int err;

	err = dmt_verity_fec_plan(g, c->fec_roots, c->fec_offset, shared,
				  hash_file_bytes, &c->fl, &why);
	if (err && why.code == DMT_REASON_VERITY_FEC_LAYOUT) {
		tool_err("Invalid FEC parameters: %s", dmt_strerror(err));
		return tool_exit_code(err);
	}
	if (err) {
		vt_reason_err(c, &why);
		return TOOL_EXIT_USAGE;
	}
	c->have_fl = true;
	debug_fec(c);
	return 0;
}

int act_dump(struct vt *c)
{
	struct dmt_verity_geometry g;
	struct files f;
	int rc, err;

	rc = num_opt(c, OPT_HASH_OFFSET, &c->p.hash_offset);
	if (!rc)
		rc = fec_opts(c);
	if (rc)
		return rc;
	if (c->p.hash_offset % 512) {
		tool_err("Unsupported VERITY hash offset.");
		return TOOL_EXIT_USAGE;
	}
	memset(&f, 0, sizeof(f));
	dmt_file_init(&f.hash_f);
	err = dmt_file_open(&f.hash_f, c->args[0],
			    DMT_OPEN_READ | DMT_OPEN_LOCK);
	if (err)
		return open_err(c->args[0], err);
	f.data = f.hash = &f.hash_f;
	c->args[1] = c->args[0];
	rc = load_params(c, &f);
	if (rc)
		goto out;
	err = dmt_verity_geometry(&c->p, &g);
	if (err) {
		tool_err("Device %s is not a valid VERITY device.", c->args[0]);
		rc = TOOL_EXIT_DEVICE;
		goto out;
	}
	if (c->fec) {
		uint64_t size;

		rc = fec_block_sizes(c);
		if (rc)
			goto out;
		err = dmt_file_size(f.hash, &size);
		if (err) {
			tool_err_errno(c->args[0], "cannot get size", err);
			rc = tool_exit_code(err);
			goto out;
		}
		rc = fec_plan(c, &g, same_target(VAL(c, OPT_FEC_DEVICE),
						 c->args[0]), size);
		if (rc)
			goto out;
	}
	if (c->cli->json)
		cli_json_print(c->cli, json_params(c, &g));
	else
		print_header(c, c->args[0], &g, NULL);
out:
	dmt_file_close(&f.hash_f);
	return rc;
}

/* size --json */
static void size_json(const struct vt *c, const struct dmt_verity_geometry *g,
		      uint64_t hash_dev)
{
	struct json_object *o = json_object_new_object();
	char name[DMT_VERITY_HASH_NAME_MAX];

	cli_json_add_str(o, "hash_algorithm", lower_name(&c->p, name));
	cli_json_add_u64(o, "data_block_size", c->p.data_block_size);
	cli_json_add_u64(o, "hash_block_size", c->p.hash_block_size);
	cli_json_add_u64(o, "data_blocks", g->data_blocks);
	cli_json_add_u64(o, "levels", g->levels);
	cli_json_add_u64(o, "hash_offset", c->p.hash_offset);
	cli_json_add_u64(o, "hash_start_block", g->hash_start);
	cli_json_add_u64(o, "hash_blocks", g->hash_blocks);
	cli_json_add_u64(o, "hash_area_bytes", hash_area_bytes(g));
	cli_json_add_u64(o, "hash_device_bytes", hash_dev);
	if (c->have_fl) {
		json_fec(c, o);
		json_object_object_add(o, "fec_device_bytes", c->fl.shared ? NULL :
			 json_object_new_uint64(c->fl.fec_end));
	}
	cli_json_print(c->cli, o);
}

int act_size(struct vt *c)
{
	struct dmt_verity_geometry g;
	uint64_t bytes = 0, hash_dev;
	int rc, err;

	rc = tree_opts(c);
	if (!rc)
		rc = fec_opts(c);
	if (!rc)
		rc = check_params(c);
	if (!rc)
		rc = fec_block_sizes(c);
	if (rc)
		return rc;
	if (GIVEN(c, OPT_DATA_SIZE) == (c->nargs == 1))
		return usage_error("size needs either <data_path> or "
				   "--data-size.");
	if (GIVEN(c, OPT_DATA_SIZE) &&
	    tool_parse_size(VAL(c, OPT_DATA_SIZE), &bytes)) {
		tool_err("Invalid value for --data-size: '%s'.",
			 VAL(c, OPT_DATA_SIZE));
		return TOOL_EXIT_USAGE;
	}
	if (c->nargs == 1) {
		struct dmt_file f;

		err = dmt_file_open(&f, c->args[0], DMT_OPEN_READ);
		if (!err)
			err = dmt_file_size(&f, &bytes);
		dmt_file_close(&f);
		if (err) {
			tool_err_errno(c->args[0], "cannot get size", err);
			return tool_exit_code(err);
		}
	}
	if (!c->p.data_blocks) {
		c->p.data_blocks = dmt_verity_blocks_for_size(&c->p, bytes);
		warn_tail(c->nargs ? c->args[0] : "--data-size", bytes,
			  c->p.data_block_size);
	}
	if (!c->p.data_blocks) {
		tool_err("The data is smaller than one data block (%" PRIu32
			 " bytes).", c->p.data_block_size);
		return TOOL_EXIT_USAGE;
	}
	err = dmt_verity_geometry(&c->p, &g);
	if (err) {
		tool_err("Device offset overflow.");
		return TOOL_EXIT_USAGE;
	}
	/* FEC after the tree or in its own file (same sizes), or at
	 * --fec-offset of the hash file covering what lies before it */
	if (c->fec) {
		rc = fec_plan(c, &g, GIVEN(c, OPT_FEC_OFFSET), g.hash_end);
		if (rc)
			return rc;
	}
	hash_dev = c->have_fl && c->fl.shared ? c->fl.fec_end : g.hash_end;
	if (c->cli->json) {
		size_json(c, &g, hash_dev);
		return 0;
	}
	printf("Data blocks:     \t%" PRIu64 "\n", g.data_blocks);
	printf("Hash levels:     \t%" PRIu32 "\n", g.levels);
	printf("Hash blocks:     \t%" PRIu64 "\n", g.hash_blocks);
	printf("Hash area size:  \t%" PRIu64 " [bytes]\n", hash_area_bytes(&g));
	printf("Hash device size: \t%" PRIu64 " [bytes]\n", hash_dev);
	if (!c->have_fl)
		return 0;
	printf("FEC RS roots:    \t%u\n", c->fl.roots);
	printf("FEC blocks:      \t%" PRIu64 "\n", c->fl.parity_blocks);
	printf("FEC area size:   \t%" PRIu64 " [bytes]\n", c->fl.parity_bytes);
	if (!c->fl.shared)
		printf("FEC device size: \t%" PRIu64 " [bytes]\n",
		       c->fl.fec_end);
	return 0;
}
