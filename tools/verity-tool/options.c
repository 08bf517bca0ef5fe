// SPDX-License-Identifier: MIT
/*
 * Option values shared by the commands: numbers, tree format, FEC and
 * signature options (the option table itself is in main.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "tools/verity-tool/vt.h"

/* One line, as the framework's own usage messages. */
int vt_usage_error(const char *msg)
{
	tool_err("%s", msg);
	return TOOL_EXIT_USAGE;
}

/* ---- option values ---- */

int vt_num_opt(struct vt *c, enum opt_id id, uint64_t *out)
{
	if (!cli_given(c->cli, id))
		return 0;
	if (tool_parse_u64(cli_str(c->cli, id), out)) {
		tool_err("Invalid value for --%s: '%s' (plain number "
			 "expected).",
			 vt_options[id].name, cli_str(c->cli, id));
		return TOOL_EXIT_USAGE;
	}
	return 0;
}

static int block_opt(struct vt *c, enum opt_id id, uint32_t *out)
{
	uint64_t v = *out;
	int rc = vt_num_opt(c, id, &v);

	if (rc)
		return rc;
	if (v > UINT32_MAX)
		v = 0;	/* rejected by dmt_verity_check_params */
	*out = (uint32_t)v;
	return 0;
}

/* Format options shared by build, verify --no-superblock and size. */
int vt_tree_opts(struct vt *c)
{
	struct dmt_verity_params *p = &c->p;
	uint64_t v;
	int rc;

	if (cli_given(c->cli, OPT_HASH)) {
		if (strlen(cli_str(c->cli, OPT_HASH)) >= sizeof(p->hash_name) ||
		    !dmt_verity_hash_supported(cli_str(c->cli, OPT_HASH))) {
			tool_err("Hash algorithm %s not supported.",
				 cli_str(c->cli, OPT_HASH));
			return TOOL_EXIT_USAGE;
		}
		strcpy(p->hash_name, cli_str(c->cli, OPT_HASH));
	}
	rc = block_opt(c, OPT_DBS, &p->data_block_size);
	if (!rc)
		rc = block_opt(c, OPT_HBS, &p->hash_block_size);
	if (!rc)
		rc = vt_num_opt(c, OPT_DATA_BLOCKS, &p->data_blocks);
	if (!rc)
		rc = vt_num_opt(c, OPT_HASH_OFFSET, &p->hash_offset);
	if (rc)
		return rc;
	if (cli_given(c->cli, OPT_FORMAT)) {
		rc = vt_num_opt(c, OPT_FORMAT, &v);
		if (rc)
			return rc;
		if (v > 1) {
			tool_err("Unsupported VERITY hash type %s.",
				 cli_str(c->cli, OPT_FORMAT));
			return TOOL_EXIT_USAGE;
		}
		p->hash_type = (uint32_t)v;
	}
	p->no_superblock = cli_given(c->cli, OPT_NO_SB);
	if (cli_given(c->cli, OPT_SALT)) {
		uint8_t *salt;
		size_t len;

		if (tool_parse_hex(cli_str(c->cli, OPT_SALT), &salt, &len)) {
			tool_err("Invalid salt string specified.");
			return TOOL_EXIT_USAGE;
		}
		if (len > DMT_VERITY_SALT_MAX) {
			free(salt);
			tool_err("Invalid salt string specified (at most %d "
				 "bytes).", DMT_VERITY_SALT_MAX);
			return TOOL_EXIT_USAGE;
		}
		if (len)
			memcpy(p->salt, salt, len);
		p->salt_size = len;
		free(salt);
	}
	/* --threads, --progress-frequency: parsed by the framework */
	p->threads = c->cli->threads;
	snprintf(c->hash_text, sizeof(c->hash_text), "%s", p->hash_name);
	return 0;
}

/* --fec-* options, with veritysetup's checks and wording. */
int vt_fec_opts(struct vt *c)
{
	uint64_t v;
	int rc;

	c->fec_roots = DMT_FEC_ROOTS_DEFAULT;
	if (cli_given(c->cli, OPT_FEC_ROOTS)) {
		rc = vt_num_opt(c, OPT_FEC_ROOTS, &v);
		if (rc)
			return rc;
		if (v < DMT_FEC_ROOTS_MIN || v > DMT_FEC_ROOTS_MAX) {
			tool_err("Invalid number of parity bytes.");
			return TOOL_EXIT_USAGE;
		}
		c->fec_roots = (unsigned int)v;
	}
	rc = vt_num_opt(c, OPT_FEC_OFFSET, &c->fec_offset);
	if (rc)
		return rc;
	if (c->fec_offset % 512) {
		tool_err("Unsupported VERITY FEC offset.");
		return TOOL_EXIT_USAGE;
	}
	c->fec = cli_given(c->cli, OPT_FEC_DEVICE);
	if (c->act == ACT_SIZE)
		c->fec |= cli_given(c->cli, OPT_FEC_ROOTS) ||
			  cli_given(c->cli, OPT_FEC_OFFSET);
	else if (!c->fec && (cli_given(c->cli, OPT_FEC_ROOTS) ||
			     cli_given(c->cli, OPT_FEC_OFFSET)))
		tool_verbose("--fec-roots and --fec-offset are ignored "
			     "without --fec-device.");
	return 0;
}

/* FEC needs one block size for data and tree (once the format is known). */
int vt_fec_block_sizes(const struct vt *c)
{
	uint32_t bs = c->p.data_block_size;

	if (!c->fec)
		return 0;
	if (bs != c->p.hash_block_size) {
		tool_err("Block sizes must match for FEC.");
		return TOOL_EXIT_USAGE;
	}
	/* the kernel's fec_start is in blocks */
	if (c->act == ACT_BUILD && c->fec_offset % bs)
		tool_warn("--fec-offset %" PRIu64 " is not a multiple of the "
			  "block size (%" PRIu32 "): the kernel cannot use "
			  "this FEC area.", c->fec_offset, bs);
	return 0;
}

/* Signature options: pairs that only make sense together. */
int vt_sign_opts(const struct vt *c)
{
	if (c->act == ACT_BUILD) {
		if (cli_given(c->cli, OPT_SIGN_KEY) !=
		    cli_given(c->cli, OPT_SIGN_CERT))
			return vt_usage_error("--sign-key and --sign-cert go "
					   "together.");
		if (cli_given(c->cli, OPT_SIGN_KEY) &&
		    !cli_given(c->cli, OPT_SIG) &&
		    !cli_given(c->cli, OPT_SIDECAR))
			return vt_usage_error("--sign-key needs "
					   "--root-hash-signature FILE or "
					   "--sidecar to say where the "
					   "signature goes.");
		if (cli_given(c->cli, OPT_SIG) &&
		    !cli_given(c->cli, OPT_SIGN_KEY))
			return vt_usage_error(
				"build --root-hash-signature needs "
				"--sign-key and --sign-cert.");
		if (cli_given(c->cli, OPT_PASS_FILE) &&
		    !cli_given(c->cli, OPT_SIGN_KEY))
			return vt_usage_error("--key-passphrase-file needs "
					   "--sign-key.");
	}
	if ((c->act & ACT_CHECK) &&
	    cli_given(c->cli, OPT_SIG) != cli_given(c->cli, OPT_CERT))
		return vt_usage_error("--root-hash-signature and --cert go "
				   "together.");
	if (c->act == ACT_SIGN &&
	    (!cli_given(c->cli, OPT_KEY) || !cli_given(c->cli, OPT_CERT)))
		return vt_usage_error("sign needs --key and --cert.");
	return 0;
}

/* FEC layout without the FEC file (dump, size): veritysetup's arithmetic. */
int vt_fec_plan(struct vt *c, const struct dmt_verity_geometry *g,
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
	vt_debug_fec(c);
	return 0;
}

int vt_check_params(struct vt *c)
{
	struct dmt_reason why;
	long page = sysconf(_SC_PAGESIZE);

	if (dmt_verity_check_params(&c->p, &why)) {
		vt_reason_err(c, &why);
		return TOOL_EXIT_USAGE;
	}
	if (c->act == ACT_BUILD && page > 0 &&
	    c->p.data_block_size > (uint64_t)page)
		tool_warn("Kernel cannot activate device if data block size "
			  "exceeds page size (%ld).", page);
	return 0;
}
