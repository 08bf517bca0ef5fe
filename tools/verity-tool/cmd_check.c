// SPDX-License-Identifier: MIT
/*
 * verify and repair: dmt_verity_check() (verify -> FEC -> verify again,
 * or repair -> sync -> verify) and its report.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uuid/uuid.h>

#include "tools/verity-tool/vt.h"

/* One verify or repair run. */
struct check_ctx {
	struct vt *c;
	struct vt_files *f;
	bool repair;
	struct dmt_verity_geometry g;
	struct dmt_verity_check_result res;
	uint8_t root[DMT_DIGEST_MAX];
};

/* Fills c->p from the superblock (or the options with --no-superblock). */
int vt_load_params(struct vt *c, struct vt_files *f)
{
	struct dmt_reason why = { 0 };
	int err;

	if (c->p.no_superblock)
		return 0;
	err = dmt_verity_sb_read(f->hash, &c->p, &why);
	if (err == -EMEDIUMTYPE) {
		/* say why, as veritysetup does */
		vt_reason_err(c, &why);
		return TOOL_EXIT_DEVICE;
	}
	if (err) {
		tool_err_errno(c->args[1], "cannot read the superblock", err);
		return tool_exit_code(err);
	}
	/* like veritysetup, the superblock wins over format options */
	for (int id = OPT_HASH; id <= OPT_FORMAT; id++) {
		if (cli_given(c->cli, id) && id != OPT_HASH_OFFSET &&
		    id != OPT_UUID)
			tool_verbose("--%s ignored: %s has a superblock.",
				     vt_options[id].name, c->args[1]);
	}
	snprintf(c->hash_text, sizeof(c->hash_text), "%s", c->p.hash_name);
	uuid_unparse_lower(c->p.uuid, c->uuid_text);
	return 0;
}

static void report_text(const struct vt *c,
			const struct dmt_verity_report *rep)
{
	const struct dmt_verity_bad *h = &rep->first_hash;

	if (rep->bad_hash_blocks && h->padding)
		tool_err("%s: spare area is not zeroed at position %" PRIu64
			 " (hash block %" PRIu64 " of level %" PRIu32 ").",
			 c->args[1], h->offset, h->index, h->level);
	else if (rep->bad_hash_blocks)
		tool_err("%s: hash block %" PRIu64 " of level %" PRIu32
			 " (position %" PRIu64 ") is corrupted.",
			 c->args[1], h->index, h->level, h->offset);
	if (rep->bad_data_blocks)
		tool_err("%s: data block %" PRIu64 " (position %" PRIu64
			 ") is corrupted.", c->args[0], rep->first_data.index,
			 rep->first_data.offset);
	if (!rep->root_ok)
		tool_err("Verification of root hash failed.");
	tool_err("Verification failed: %" PRIu64 " corrupted data blocks, %"
		 PRIu64 " corrupted hash blocks, %" PRIu64
		 " unverifiable blocks%s.", rep->bad_data_blocks,
		 rep->bad_hash_blocks, rep->unverifiable_blocks,
		 rep->root_ok ? "" : ", root hash mismatch");
}

static struct json_object *json_fec_run(const struct check_ctx *k);

static void report_json(const struct check_ctx *k, bool ok)
{
	const struct vt *c = k->c;
	const struct dmt_verity_geometry *g = &k->g;
	const struct dmt_verity_report *rep = &k->res.rep;
	struct json_object *o = vt_json_params(c, g), *b;
	char root[2 * DMT_DIGEST_MAX + 1];

	tool_hex(rep->root_hash, rep->root_hash_size, root);
	cli_json_add_bool(o, "verified", ok);
	cli_json_add_str(o, "root_hash", root);
	cli_json_add_bool(o, "root_hash_ok", rep->root_ok);
	cli_json_add_u64(o, "bad_data_blocks", rep->bad_data_blocks);
	cli_json_add_u64(o, "bad_hash_blocks", rep->bad_hash_blocks);
	cli_json_add_u64(o, "unverifiable_blocks", rep->unverifiable_blocks);
	b = NULL;
	if (rep->bad_data_blocks) {
		b = json_object_new_object();
		cli_json_add_u64(b, "index", rep->first_data.index);
		cli_json_add_u64(b, "offset", rep->first_data.offset);
	}
	json_object_object_add(o, "first_bad_data_block", b);
	b = NULL;
	if (rep->bad_hash_blocks) {
		b = json_object_new_object();
		cli_json_add_u64(b, "level", rep->first_hash.level);
		cli_json_add_u64(b, "index", rep->first_hash.index);
		cli_json_add_u64(b, "offset", rep->first_hash.offset);
		cli_json_add_bool(b, "padding", rep->first_hash.padding);
	}
	json_object_object_add(o, "first_bad_hash_block", b);
	if (cli_given(c->cli, OPT_SIG))
		cli_json_add_bool(o, "root_hash_signature_ok", true);
	if (k->res.fec_ran)
		json_object_object_add(o, "fec", json_fec_run(k));
	cli_json_print(c->cli, o);
}

/* Where a covered block is, for messages and JSON. */
static const char *const area_names[] = {
	[DMT_VERITY_AREA_DATA] = "data",
	[DMT_VERITY_AREA_HASH] = "hash",
	[DMT_VERITY_AREA_METADATA] = "metadata",
};

static void print_blocks(const struct check_ctx *k,
			 const struct dmt_verity_blocks *b, const char *what,
			 bool error)
{
	size_t i, show = b->n;
	struct dmt_verity_where w;
	const char *path;
	char desc[96];

	if (tool_verbosity < 1 && show > FEC_PRINT_MAX)
		show = FEC_PRINT_MAX;
	for (i = 0; i < show; i++) {
		dmt_verity_locate(&k->g, &k->res.fec_layout, b->v[i], &w);
		path = k->c->args[w.area != DMT_VERITY_AREA_DATA];
		if (w.area == DMT_VERITY_AREA_HASH)
			snprintf(desc, sizeof(desc), "hash block %" PRIu64
				 " of level %d", w.index, w.level);
		else if (w.area == DMT_VERITY_AREA_DATA)
			snprintf(desc, sizeof(desc), "data block %" PRIu64,
				 w.index);
		else
			snprintf(desc, sizeof(desc), "block %" PRIu64
				 " after the hash tree", w.index);
		if (error)
			tool_err("%s: %s (position %" PRIu64 ") %s.", path,
				 desc, w.offset, what);
		else
			tool_info("%s: %s: %s (position %" PRIu64 ") %s.",
				  tool_name, path, desc, w.offset, what);
	}
	if (b->total > show && error)
		tool_err("... and %" PRIu64 " more blocks %s.",
			 b->total - show, what);
	else if (b->total > show)
		tool_info("%s: ... and %" PRIu64 " more blocks %s.", tool_name,
			  b->total - show, what);
}

static void fec_print(const struct check_ctx *k)
{
	const struct dmt_fec_stats *st = &k->res.fec;
	bool repair = k->repair;

	print_blocks(k, &k->res.corrected, repair ? "repaired with FEC"
						  : "corrected with FEC",
		     false);
	print_blocks(k, &k->res.unverified, repair ?
		     "corrected with FEC but not written: no digest to "
		     "check it against" :
		     "corrected with FEC but not checked: no digest covers "
		     "it", false);
	print_blocks(k, &k->res.unrepairable, "cannot be repaired with FEC",
		     true);
	if (st->parity_rounds_bad)
		tool_info("%s: %s: the parity of %" PRIu64 " FEC rounds is "
			  "damaged%s.",
			  tool_name, cli_str(k->c->cli, OPT_FEC_DEVICE),
			  st->parity_rounds_bad,
			  !repair ? ""
			  : st->parity_rounds_fixed == st->parity_rounds_bad
				  ? ", rewritten"
				  : ", not rewritten");
}

static struct json_object *json_blocks(const struct check_ctx *k,
				       const struct dmt_verity_blocks *b)
{
	struct json_object *a = json_object_new_array();
	struct dmt_verity_where w;

	for (size_t i = 0; i < b->n && i < 1000; i++) {
		struct json_object *o = json_object_new_object();

		dmt_verity_locate(&k->g, &k->res.fec_layout, b->v[i], &w);
		cli_json_add_str(o, "area", area_names[w.area]);
		if (w.level >= 0)
			json_object_object_add(o, "level",
					       json_object_new_int(w.level));
		cli_json_add_u64(o, "index", w.index);
		cli_json_add_u64(o, "offset", w.offset);
		json_object_array_add(a, o);
	}
	return a;
}

static struct json_object *json_fec_run(const struct check_ctx *k)
{
	struct json_object *o = json_object_new_object();
	const struct dmt_verity_check_result *r = &k->res;
	const struct dmt_fec_stats *st = &r->fec;

	cli_json_add_u64(o, "corrected_blocks", r->corrected.total);
	cli_json_add_u64(o, "corrected_bytes", st->corrected_bytes);
	cli_json_add_u64(o, "unverified_blocks", r->unverified.total);
	cli_json_add_u64(o, "unrepairable_blocks", r->unrepairable.total);
	cli_json_add_u64(o, "damaged_parity_rounds", st->parity_rounds_bad);
	if (k->repair) {
		cli_json_add_u64(o, "written_blocks", st->written_blocks);
		cli_json_add_u64(o, "rewritten_parity_rounds",
				 st->parity_rounds_fixed);
	}
	json_object_object_add(o, "corrected", json_blocks(k, &r->corrected));
	json_object_object_add(o, "unrepairable",
			       json_blocks(k, &r->unrepairable));
	return o;
}

/* ---- the library's stages: progress, and what happened between ---- */

static struct dmt_progress check_begin(void *ctx, enum dmt_verity_stage s)
{
	struct check_ctx *k = ctx;
	struct vt *c = k->c;
	struct dmt_progress none = { 0 };
	const char *dev;

	c->stage = s;
	if (s == DMT_VERITY_STAGE_VERIFY || s == DMT_VERITY_STAGE_REVERIFY)
		dev = c->args[0];
	else if (s == DMT_VERITY_STAGE_FEC)
		dev = cli_str(c->cli, OPT_FEC_DEVICE);
	else
		return none;
	tool_progress_init(&c->prog, dev, "verified", c->prog_freq,
			   cli_given(c->cli, OPT_PROG_JSON));
	return tool_progress_hook(&c->prog);
}

/* The first verification failed and FEC will try: say how much. */
static void trying_fec(const struct dmt_verity_report *rep)
{
	uint64_t n = rep->bad_data_blocks + rep->bad_hash_blocks;
	char more[48] = "";

	/* blocks under a corrupted hash block cannot be told good or bad */
	if (rep->unverifiable_blocks)
		snprintf(more, sizeof(more), ", %" PRIu64 " unverifiable",
			 rep->unverifiable_blocks);
	if (n)
		tool_info("%s: %" PRIu64 " block%s corrupted%s, trying FEC.",
			  tool_name, n, n == 1 ? "" : "s", more);
	else
		tool_info("%s: root hash mismatch, trying FEC.", tool_name);
}

static void check_end(void *ctx, enum dmt_verity_stage s, int err)
{
	struct check_ctx *k = ctx;

	if (s == DMT_VERITY_STAGE_SYNC)
		return;
	tool_progress_finish(&k->c->prog, !err || err == -EBADMSG);
	if (s == DMT_VERITY_STAGE_VERIFY && err == -EBADMSG && k->c->fec)
		trying_fec(&k->res.rep);
	if (s == DMT_VERITY_STAGE_FEC && (!err || err == -EBADMSG))
		fec_print(k);
}

/* A library failure other than a failed verification. */
static int check_error(struct check_ctx *k, const struct dmt_reason *why,
		       int err)
{
	struct vt *c = k->c;

	if (why->code == DMT_REASON_VERITY_SPILL) {
		tool_err("cannot keep corrected blocks in a temporary file "
			 "(TMPDIR or /var/tmp): %s", dmt_strerror(err));
		return tool_exit_code(err);
	}
	if (why->code)
		return vt_fec_layout_error(c, why, err);
	if (c->stage == DMT_VERITY_STAGE_FEC)
		return vt_lib_error(NULL, cli_str(c->cli, OPT_FEC_DEVICE), err);
	if (c->stage == DMT_VERITY_STAGE_SYNC)
		return vt_lib_error(NULL, c->args[0], err);
	return vt_lib_error(k->res.error_path, c->args[0], err);
}

/* The outcome, once dmt_verity_check() returned 0 or -EBADMSG. */
static int check_outcome(struct check_ctx *k, int err)
{
	const struct dmt_fec_stats *st = &k->res.fec;
	struct vt *c = k->c;

	if (c->cli->json)
		report_json(k, !err);
	if (err && !k->res.fec_ran) {
		report_text(c, &k->res.rep);
		return TOOL_EXIT_VERIFY;
	}
	if (err) {
		if (k->res.reverified)
			report_text(c, &k->res.rep);
		tool_err("Errors cannot be repaired with FEC device.");
		return TOOL_EXIT_VERIFY;
	}
	if (!k->res.fec_ran)
		return 0;
	if (!k->repair)
		tool_info("Found %" PRIu64 " repairable errors with FEC "
			  "device.", st->corrected_bytes);
	else if (st->written_blocks)
		tool_info("Repaired %" PRIu64 " blocks (%" PRIu64 " bytes) "
			  "with FEC device.", st->written_blocks,
			  st->corrected_bytes);
	else if (!st->parity_rounds_fixed)
		tool_verbose("Nothing to repair.");
	return 0;
}

/* Options, files, superblock, root hash, FEC layout and signature. */
static int check_setup(struct check_ctx *k)
{
	struct vt *c = k->c;
	struct vt_files *f = k->f;
	struct dmt_verity_fec_params fec;
	struct dmt_reason why = { 0 };
	int rc, err;

	rc = vt_load_params(c, f);
	if (!rc)
		rc = vt_fec_block_sizes(c);
	if (!rc)
		rc = vt_resolve_data(c, f);
	if (!rc)
		rc = vt_get_root(c, dmt_verity_digest_size(c->p.hash_name),
			      k->root);
	if (rc)
		return rc;
	dmt_verity_geometry(&c->p, &k->g, NULL);
	vt_debug_geometry(c, &k->g);
	if (c->fec) {
		fec = vt_fec_opts_for(c, f);
		err = dmt_verity_fec_layout(&c->p, f->data, f->hash, &fec,
					    true, &c->fl, &why);
		if (err)
			return vt_fec_layout_error(c, &why, err);
		c->have_fl = true;
		vt_debug_fec(c);
	}
	if (cli_given(c->cli, OPT_SIG))
		rc = vt_check_signature(c, k->root, k->g.digest_size);
	return rc;
}

/*
 * verify and repair, through dmt_verity_check(): verify: the tree first
 * (like veritysetup); only when that fails, a FEC pass that corrects into
 * an overlay, then the tree again through it.  repair: a FEC pass that
 * writes every correction proven up to the root hash (and rewrites
 * damaged parity), then the tree again from the files.
 */
int vt_cmd_check(struct cli *cl)
{
	struct vt *c = cl->priv;
	struct check_ctx k = { .c = c, .repair = c->act == ACT_REPAIR };
	struct dmt_verity_stages st = { check_begin, check_end, &k };
	struct dmt_verity_fec_params fec;
	struct dmt_reason why = { 0 };
	struct vt_files f;
	int rc, err;

	k.f = &f;
	rc = vt_tree_opts(c);
	if (!rc)
		rc = vt_fec_opts(c);
	if (!rc)
		rc = vt_sign_opts(c);
	if (rc)
		return rc;
	if (k.repair && !c->fec)
		return vt_usage_error("repair needs --fec-device.");
	if (c->p.no_superblock && !cli_given(c->cli, OPT_SALT))
		return vt_usage_error(k.repair ? "repair --no-superblock needs "
					      "--salt (- for none)."
					    : "verify --no-superblock needs "
					      "--salt (- for none).");
	rc = vt_check_params(c);
	if (!rc)
		rc = vt_open_files(c, &f,
				   k.repair ? VT_OPEN_REPAIR : VT_OPEN_READ);
	if (rc)
		return rc;
	rc = check_setup(&k);
	if (rc)
		goto out;
	fec = vt_fec_opts_for(c, &f);
	err = dmt_verity_check(&c->p, f.data, f.hash, &fec, k.root,
			       k.g.digest_size,
			       k.repair ? DMT_VERITY_CHECK_REPAIR : 0, &st,
			       &k.res, &why);
	if (err && err != -EBADMSG)
		rc = check_error(&k, &why, err);
	else
		rc = check_outcome(&k, err);
out:
	dmt_verity_check_result_free(&k.res);
	vt_close_files(&f);
	return rc;
}
