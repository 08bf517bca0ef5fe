// SPDX-License-Identifier: MIT
/*
 * size: the sizes a build would write.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/verity-tool/vt.h"

/* size --json */
static void size_json(const struct vt *c, const struct dmt_verity_geometry *g,
		      uint64_t hash_dev)
{
	struct json_object *o = json_object_new_object();
	char name[DMT_VERITY_HASH_NAME_MAX];

	cli_json_add_str(o, "hash_algorithm", vt_lower_name(&c->p, name));
	cli_json_add_u64(o, "data_block_size", c->p.data_block_size);
	cli_json_add_u64(o, "hash_block_size", c->p.hash_block_size);
	cli_json_add_u64(o, "data_blocks", g->data_blocks);
	cli_json_add_u64(o, "levels", g->levels);
	cli_json_add_u64(o, "hash_offset", c->p.hash_offset);
	cli_json_add_u64(o, "hash_start_block", g->hash_start);
	cli_json_add_u64(o, "hash_blocks", g->hash_blocks);
	cli_json_add_u64(o, "hash_area_bytes", vt_hash_area_bytes(g));
	cli_json_add_u64(o, "hash_device_bytes", hash_dev);
	if (c->have_fl) {
		vt_json_fec(c, o);
		json_object_object_add(
			o, "fec_device_bytes",
			c->fl.shared ? NULL
				     : json_object_new_uint64(c->fl.fec_end));
	}
	cli_json_print(c->cli, o);
}

int vt_cmd_size(struct cli *cl)
{
	struct vt *c = cl->priv;
	struct dmt_verity_geometry g;
	uint64_t bytes = 0, hash_dev;
	int rc, err;

	rc = vt_tree_opts(c);
	if (!rc)
		rc = vt_fec_opts(c);
	if (!rc)
		rc = vt_check_params(c);
	if (!rc)
		rc = vt_fec_block_sizes(c);
	if (rc)
		return rc;
	if (cli_given(c->cli, OPT_DATA_SIZE) == (c->nargs == 1))
		return vt_usage_error("size needs either <data_path> or "
				   "--data-size.");
	if (cli_given(c->cli, OPT_DATA_SIZE) &&
	    tool_parse_size(cli_str(c->cli, OPT_DATA_SIZE), &bytes)) {
		tool_err("Invalid value for --data-size: '%s'.",
			 cli_str(c->cli, OPT_DATA_SIZE));
		return TOOL_EXIT_USAGE;
	}
	if (c->nargs == 1) {
		struct dmt_file *f;

		err = dmt_file_open(c->args[0], DMT_OPEN_READ, &f);
		if (!err)
			err = dmt_file_size(f, &bytes);
		dmt_file_close(f);
		if (err) {
			tool_err_errno(c->args[0], "cannot get size", err);
			return tool_exit_code(err);
		}
	}
	if (!c->p.data_blocks) {
		c->p.data_blocks = dmt_verity_blocks_for_size(&c->p, bytes);
		vt_warn_tail(c->nargs ? c->args[0] : "--data-size", bytes,
			  c->p.data_block_size);
	}
	if (!c->p.data_blocks) {
		tool_err("The data is smaller than one data block (%" PRIu32
			 " bytes).", c->p.data_block_size);
		return TOOL_EXIT_USAGE;
	}
	err = dmt_verity_geometry(&c->p, &g, NULL);
	if (err) {
		tool_err("Device offset overflow.");
		return TOOL_EXIT_USAGE;
	}
	/* FEC after the tree or in its own file (same sizes), or at
	 * --fec-offset of the hash file covering what lies before it */
	if (c->fec) {
		rc = vt_fec_plan(c, &g, cli_given(c->cli, OPT_FEC_OFFSET),
				 g.hash_end);
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
	printf("Hash area size:  \t%" PRIu64 " [bytes]\n",
	       vt_hash_area_bytes(&g));
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
