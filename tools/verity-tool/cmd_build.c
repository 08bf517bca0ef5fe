// SPDX-License-Identifier: MIT
/*
 * build (alias format): tree, FEC parity and superblock through
 * dmt_verity_format(), then the root hash file, signature and sidecars.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/random.h>
#include <uuid/uuid.h>

#include <dmt/sign.h>
#include "tools/verity-tool/vt.h"

/* ---- salt, uuid, root hash ---- */

static int make_salt_uuid(struct vt *c)
{
	struct dmt_verity_params *p = &c->p;
	const char *seed = cli_str(c->cli, OPT_SEED);
	uuid_t u;

	if (seed &&
	    (cli_given(c->cli, OPT_SALT) || cli_given(c->cli, OPT_UUID)))
		return vt_usage_error("--seed derives salt and UUID: do not "
				   "combine it with --salt or --uuid.");
	if (!cli_given(c->cli, OPT_SALT)) {
		p->salt_size = 32;
		if (seed ? tool_seed_derive(seed, "verity-salt", p->salt, 32)
			 : getrandom(p->salt, 32, 0) != 32) {
			tool_err("Cannot generate the salt.");
			return TOOL_EXIT_DEVICE;
		}
	}
	if (cli_given(c->cli, OPT_UUID)) {
		if (uuid_parse(cli_str(c->cli, OPT_UUID), u)) {
			tool_err("Wrong VERITY UUID format provided on device "
				 "%s.", c->args[1]);
			return TOOL_EXIT_USAGE;
		}
		memcpy(p->uuid, u, 16);
		snprintf(c->uuid_text, sizeof(c->uuid_text), "%s",
			 cli_str(c->cli, OPT_UUID));
	} else {
		if (seed) {
			if (tool_seed_uuid(seed, "verity-uuid", p->uuid)) {
				tool_err("Cannot derive the UUID.");
				return TOOL_EXIT_DEVICE;
			}
		} else {
			uuid_generate_random(u);
			memcpy(p->uuid, u, 16);
		}
		uuid_unparse_lower(p->uuid, c->uuid_text);
	}
	/* veritysetup prints no UUID when there is no superblock */
	if (p->no_superblock)
		c->uuid_text[0] = '\0';
	return 0;
}

/* build's outputs besides the images */
enum { OUT_ROOT, OUT_SIG, OUT_SIDE_ROOT, OUT_SIDE_SIG, OUT_N };

static const char *const out_what[OUT_N] = {
	"root hash file", "root hash signature", "root hash sidecar",
	"root hash signature sidecar",
};

/* Paths of the outputs asked for (malloc'ed; NULL when not). */
static int out_paths(struct vt *c, char *paths[OUT_N])
{
	bool sign = cli_given(c->cli, OPT_SIGN_KEY);
	char *verity = NULL;
	int err = 0;

	if (cli_given(c->cli, OPT_ROOT_FILE))
		paths[OUT_ROOT] = strdup(cli_str(c->cli, OPT_ROOT_FILE));
	if (cli_given(c->cli, OPT_SIG))
		paths[OUT_SIG] = strdup(cli_str(c->cli, OPT_SIG));
	if (cli_given(c->cli, OPT_SIDECAR)) {
		err = dmt_sign_sidecar_path(c->args[0],
					    DMT_SIGN_SIDECAR_ROOTHASH,
					    &paths[OUT_SIDE_ROOT]);
		if (!err && sign)
			err = dmt_sign_sidecar_path(c->args[0],
						    DMT_SIGN_SIDECAR_ROOTHASH_SIG,
						    &paths[OUT_SIDE_SIG]);
		if (!err)
			err = dmt_sign_sidecar_path(c->args[0],
						    DMT_SIGN_SIDECAR_VERITY,
						    &verity);
		if (err) {
			tool_err_errno(c->args[0], "no sidecar file names",
				       err);
			return tool_exit_code(err);
		}
		if (!vt_same_target(verity, c->args[1]))
			tool_info("%s: note: systemd looks for the hash tree "
				  "of %s in %s.", tool_name, c->args[0],
				  verity);
		free(verity);
	}
	if ((cli_given(c->cli, OPT_ROOT_FILE) && !paths[OUT_ROOT]) ||
	    (cli_given(c->cli, OPT_SIG) && !paths[OUT_SIG])) {
		tool_err("Out of memory.");
		return TOOL_EXIT_NOMEM;
	}
	return 0;
}

/* Progress of the library's stages: the tree hashes the data, the FEC
 * pass encodes the covered area into parity. */
static struct dmt_progress format_begin(void *ctx, enum dmt_verity_stage s)
{
	struct vt *c = ctx;
	struct dmt_progress none = { 0 };

	c->stage = s;
	if (s == DMT_VERITY_STAGE_TREE) {
		tool_progress_init(&c->prog, c->args[0], "hashed", c->prog_freq,
				   cli_given(c->cli, OPT_PROG_JSON));
	} else if (s == DMT_VERITY_STAGE_FEC_ENCODE) {
		c->have_fl = true;
		vt_debug_fec(c);
		tool_progress_init(&c->prog, cli_str(c->cli, OPT_FEC_DEVICE),
				   "encoded", c->prog_freq,
				   cli_given(c->cli, OPT_PROG_JSON));
	} else {
		return none;
	}
	return tool_progress_hook(&c->prog);
}

static void format_end(void *ctx, enum dmt_verity_stage s, int err)
{
	struct vt *c = ctx;

	if (s == DMT_VERITY_STAGE_TREE || s == DMT_VERITY_STAGE_FEC_ENCODE)
		tool_progress_finish(&c->prog, !err);
}

/* dmt_verity_format(): tree, FEC, superblock (veritysetup's order). */
static int format_images(struct vt *c, struct vt_files *f,
			 struct dmt_verity_result *res)
{
	struct dmt_verity_stages st = { format_begin, format_end, c };
	struct dmt_verity_fec_params fec = vt_fec_opts_for(c, f);
	struct dmt_verity_geometry g;
	struct dmt_reason why = { 0 };
	int err;

	dmt_verity_geometry(&c->p, &g, NULL);
	vt_debug_geometry(c, &g);
	c->stage = DMT_VERITY_STAGE_TREE;
	err = dmt_verity_format(&c->p, f->data, f->hash, &fec, &st, res,
				&c->fl, &why);
	if (!err)
		return 0;
	if (why.code)
		return vt_fec_layout_error(c, &why, err);
	if (c->stage == DMT_VERITY_STAGE_FEC_ENCODE)
		return vt_lib_error(NULL, cli_str(c->cli, OPT_FEC_DEVICE), err);
	if (c->stage == DMT_VERITY_STAGE_SUPERBLOCK)
		return vt_lib_error(NULL, c->args[1], err);
	return vt_lib_error(res->error_path, c->args[1], err);
}

/* Root hash file, signature and sidecars, then every new file renamed
 * into place (the images first). */
static int write_outputs(struct vt *c, struct vt_files *f,
			 const struct dmt_verity_result *res,
			 struct dmt_file *outs[OUT_N], char *paths[OUT_N])
{
	char root_hex[2 * DMT_DIGEST_MAX + 1];
	uint8_t *sig = NULL;
	size_t sig_len = 0;
	int rc = 0, i;

	tool_hex(res->root_hash, res->root_hash_size, root_hex);
	if (cli_given(c->cli, OPT_SIGN_KEY))
		rc = vt_sign_root(c, root_hex, &sig, &sig_len);
	for (i = 0; i < OUT_N && !rc; i++) {
		if (!paths[i])
			continue;
		if (i == OUT_ROOT || i == OUT_SIDE_ROOT)
			rc = vt_write_root_file(outs[i], res->root_hash,
					     res->root_hash_size);
		else
			rc = vt_write_out(outs[i], sig, sig_len);
	}
	free(sig);
	if (rc)
		return rc;
	/* veritysetup syncs the images too; new files are renamed */
	rc = vt_commit(f->hash, f->created, c->args[1]);
	if (!rc && f->data != f->hash && f->data_rw)
		rc = vt_commit(f->data, false, c->args[0]);
	if (!rc && f->fec && f->fec == f->fec_f)
		rc = vt_commit(f->fec, f->fec_created,
			       cli_str(c->cli, OPT_FEC_DEVICE));
	/* in-place outputs were synced by write_out: this renames new ones */
	for (i = 0; i < OUT_N && !rc; i++)
		if (paths[i])
			rc = vt_commit(outs[i], true, paths[i]);
	return rc;
}

/* Everything that can fail before the images are opened. */
static int build_setup(struct vt *c, struct dmt_file *outs[OUT_N],
		       char *paths[OUT_N])
{
	int rc, i;

	rc = vt_tree_opts(c);
	if (!rc)
		rc = vt_fec_opts(c);
	if (!rc)
		rc = vt_sign_opts(c);
	if (!rc)
		rc = make_salt_uuid(c);
	if (!rc)
		rc = vt_check_params(c);
	if (!rc)
		rc = vt_fec_block_sizes(c);
	if (!rc)
		rc = out_paths(c, paths);
	if (!rc && cli_given(c->cli, OPT_SIGN_KEY))
		rc = vt_sign_probe(c, dmt_verity_digest_size(c->p.hash_name));
	for (i = 0; i < OUT_N && !rc; i++)
		if (paths[i])
			rc = vt_open_out(c, paths[i], out_what[i], &outs[i]);
	return rc;
}

int vt_cmd_build(struct cli *cl)
{
	struct vt *c = cl->priv;
	struct dmt_file *outs[OUT_N] = { NULL };
	struct dmt_verity_result res;
	char *paths[OUT_N] = { NULL };
	bool opened = false;
	struct vt_files f;
	int rc, i;

	rc = build_setup(c, outs, paths);
	if (!rc) {
		rc = vt_open_files(c, &f, VT_OPEN_BUILD);
		opened = !rc;
	}
	if (!rc)
		rc = vt_resolve_data(c, &f);
	if (!rc)
		rc = format_images(c, &f, &res);
	if (!rc)
		rc = write_outputs(c, &f, &res, outs, paths);
	if (rc)
		goto out;
	c->sig_out = paths[OUT_SIG];
	c->sidecar_root = paths[OUT_SIDE_ROOT];
	c->sidecar_sig = paths[OUT_SIDE_SIG];
	tool_verbose("%" PRIu64 " data blocks hashed (%" PRIu64
		     " holes or zero) by the %s engine on %u thread%s.",
		     res.geo.data_blocks, res.zero_blocks, res.engine,
		     c->p.threads, c->p.threads == 1 ? "" : "s");
	if (c->cli->json)
		rc = vt_json_build(c, &res);
	else
		vt_print_header(c, c->args[1], &res.geo, res.root_hash);
out:
	if (opened)
		vt_close_files(&f);
	for (i = 0; i < OUT_N; i++) {
		dmt_file_close(outs[i]);
		free(paths[i]);
	}
	return rc;
}
