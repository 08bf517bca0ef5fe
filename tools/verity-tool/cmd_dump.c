// SPDX-License-Identifier: MIT
/*
 * dump: the superblock, and the FEC layout it implies.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/verity-tool/vt.h"

int vt_cmd_dump(struct cli *cl)
{
	struct vt *c = cl->priv;
	struct dmt_verity_geometry g;
	struct vt_files f;
	int rc, err;

	rc = vt_num_opt(c, OPT_HASH_OFFSET, &c->p.hash_offset);
	if (!rc)
		rc = vt_fec_opts(c);
	if (rc)
		return rc;
	if (c->p.hash_offset % 512) {
		tool_err("Unsupported VERITY hash offset.");
		return TOOL_EXIT_USAGE;
	}
	memset(&f, 0, sizeof(f));
	err = dmt_file_open(c->args[0], DMT_OPEN_READ | DMT_OPEN_LOCK,
			    &f.hash_f);
	if (err)
		return vt_open_err(c->args[0], err);
	f.data = f.hash = f.hash_f;
	c->args[1] = c->args[0];
	rc = vt_load_params(c, &f);
	if (rc)
		goto out;
	err = dmt_verity_geometry(&c->p, &g, NULL);
	if (err) {
		tool_err("Device %s is not a valid VERITY device.", c->args[0]);
		rc = TOOL_EXIT_DEVICE;
		goto out;
	}
	if (c->fec) {
		uint64_t size;

		rc = vt_fec_block_sizes(c);
		if (rc)
			goto out;
		err = dmt_file_size(f.hash, &size);
		if (err) {
			tool_err_errno(c->args[0], "cannot get size", err);
			rc = tool_exit_code(err);
			goto out;
		}
		rc = vt_fec_plan(c, &g,
				 vt_same_target(cli_str(c->cli, OPT_FEC_DEVICE),
						c->args[0]),
				 size);
		if (rc)
			goto out;
	}
	if (c->cli->json)
		cli_json_print(c->cli, vt_json_params(c, &g));
	else
		vt_print_header(c, c->args[0], &g, NULL);
out:
	dmt_file_close(f.hash_f);
	return rc;
}
