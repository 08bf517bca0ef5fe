// SPDX-License-Identifier: MIT
/*
 * Option values shared by the commands: numbers, tree format, FEC and
 * signature options, and the library's reasons turned into messages.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "tools/verity-tool/vt.h"

/* One line, as the framework's own usage messages. */
int usage_error(const char *msg)
{
	tool_err("%s", msg);
	return TOOL_EXIT_USAGE;
}

/* ---- option values ---- */

int num_opt(struct vt *c, enum opt_id id, uint64_t *out)
{
	if (!GIVEN(c, id))
		return 0;
	if (tool_parse_u64(VAL(c, id), out)) {
		tool_err("Invalid value for --%s: '%s' (plain number "
			 "expected).", OPT_NAME(id), VAL(c, id));
		return TOOL_EXIT_USAGE;
	}
	return 0;
}

static int block_opt(struct vt *c, enum opt_id id, uint32_t *out)
{
	uint64_t v = *out;
	int rc = num_opt(c, id, &v);

	if (rc)
		return rc;
	if (v > UINT32_MAX)
		v = 0;	/* rejected by dmt_verity_check_params */
	*out = (uint32_t)v;
	return 0;
}

/* Format options shared by build, verify --no-superblock and size. */
int tree_opts(struct vt *c)
{
	struct dmt_verity_params *p = &c->p;
	uint64_t v;
	int rc;

	if (GIVEN(c, OPT_HASH)) {
		if (strlen(VAL(c, OPT_HASH)) >= sizeof(p->hash_name) ||
		    !dmt_verity_hash_supported(VAL(c, OPT_HASH))) {
			tool_err("Hash algorithm %s not supported.",
				 VAL(c, OPT_HASH));
			return TOOL_EXIT_USAGE;
		}
		strcpy(p->hash_name, VAL(c, OPT_HASH));
	}
	rc = block_opt(c, OPT_DBS, &p->data_block_size);
	if (!rc)
		rc = block_opt(c, OPT_HBS, &p->hash_block_size);
	if (!rc)
		rc = num_opt(c, OPT_DATA_BLOCKS, &p->data_blocks);
	if (!rc)
		rc = num_opt(c, OPT_HASH_OFFSET, &p->hash_offset);
	if (rc)
		return rc;
	if (GIVEN(c, OPT_FORMAT)) {
		rc = num_opt(c, OPT_FORMAT, &v);
		if (rc)
			return rc;
		if (v > 1) {
			tool_err("Unsupported VERITY hash type %s.",
				 VAL(c, OPT_FORMAT));
			return TOOL_EXIT_USAGE;
		}
		p->hash_type = (uint32_t)v;
	}
	p->no_superblock = GIVEN(c, OPT_NO_SB);
	if (GIVEN(c, OPT_SALT)) {
		uint8_t *salt;
		size_t len;

		if (tool_parse_hex(VAL(c, OPT_SALT), &salt, &len)) {
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
int fec_opts(struct vt *c)
{
	uint64_t v;
	int rc;

	c->fec_roots = DMT_FEC_ROOTS_DEFAULT;
	if (GIVEN(c, OPT_FEC_ROOTS)) {
		rc = num_opt(c, OPT_FEC_ROOTS, &v);
		if (rc)
			return rc;
		if (v < DMT_FEC_ROOTS_MIN || v > DMT_FEC_ROOTS_MAX) {
			tool_err("Invalid number of parity bytes.");
			return TOOL_EXIT_USAGE;
		}
		c->fec_roots = (unsigned int)v;
	}
	rc = num_opt(c, OPT_FEC_OFFSET, &c->fec_offset);
	if (rc)
		return rc;
	if (c->fec_offset % 512) {
		tool_err("Unsupported VERITY FEC offset.");
		return TOOL_EXIT_USAGE;
	}
	c->fec = GIVEN(c, OPT_FEC_DEVICE);
	if (c->act == ACT_SIZE)
		c->fec |= GIVEN(c, OPT_FEC_ROOTS) || GIVEN(c, OPT_FEC_OFFSET);
	else if (!c->fec && (GIVEN(c, OPT_FEC_ROOTS) ||
			     GIVEN(c, OPT_FEC_OFFSET)))
		tool_verbose("--fec-roots and --fec-offset are ignored "
			     "without --fec-device.");
	return 0;
}

/* FEC needs one block size for data and tree (once the format is known). */
int fec_block_sizes(const struct vt *c)
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
int sign_opts(const struct vt *c)
{
	if (c->act == ACT_BUILD) {
		if (GIVEN(c, OPT_SIGN_KEY) != GIVEN(c, OPT_SIGN_CERT))
			return usage_error("--sign-key and --sign-cert go "
					   "together.");
		if (GIVEN(c, OPT_SIGN_KEY) && !GIVEN(c, OPT_SIG) &&
		    !GIVEN(c, OPT_SIDECAR))
			return usage_error("--sign-key needs "
					   "--root-hash-signature FILE or "
					   "--sidecar to say where the "
					   "signature goes.");
		if (GIVEN(c, OPT_SIG) && !GIVEN(c, OPT_SIGN_KEY))
			return usage_error("build --root-hash-signature needs "
					   "--sign-key and --sign-cert.");
		if (GIVEN(c, OPT_PASS_FILE) && !GIVEN(c, OPT_SIGN_KEY))
			return usage_error("--key-passphrase-file needs "
					   "--sign-key.");
	}
	if ((c->act & ACT_CHECK) &&
	    GIVEN(c, OPT_SIG) != GIVEN(c, OPT_CERT))
		return usage_error("--root-hash-signature and --cert go "
				   "together.");
	if (c->act == ACT_SIGN && (!GIVEN(c, OPT_KEY) || !GIVEN(c, OPT_CERT)))
		return usage_error("sign needs --key and --cert.");
	return 0;
}

/* Reasons of dmt_verity_sb_read(): why a superblock is rejected. */
static bool sb_reason_text(const struct dmt_reason *r, const char *dev,
			   char *buf, size_t size)
{
	const char *f = r->field ? r->field : "";

	if (r->code == DMT_REASON_BAD_MAGIC)
		snprintf(buf, size, "Device %s is not a valid VERITY device.",
			 dev);
	else if (r->code == DMT_REASON_SB_VERSION)
		snprintf(buf, size, "Unsupported VERITY version %" PRIu64 ".",
			 r->value);
	else if (r->code == DMT_REASON_SB_FIELD &&
		 !strcmp(f, "sb.hash_type"))
		snprintf(buf, size, "Unsupported VERITY hash type %" PRIu64
			 ".", r->value);
	else if (r->code == DMT_REASON_SB_FIELD && strstr(f, "block_size"))
		snprintf(buf, size, "Unsupported VERITY block size.");
	else if (r->code == DMT_REASON_SB_FIELD &&
		 !strcmp(f, "sb.salt_size"))
		snprintf(buf, size, "VERITY header corrupted (salt size %"
			 PRIu64 ", at most %d).", r->value,
			 DMT_VERITY_SALT_MAX);
	else if (r->code == DMT_REASON_SB_FIELD)
		snprintf(buf, size, "VERITY header corrupted (%s %" PRIu64
			 ").", f + 3, r->value);
	else if (r->code == DMT_REASON_UNSUPPORTED && r->name && *r->name)
		snprintf(buf, size, "Hash algorithm %s not supported.",
			 r->name);
	else if (r->code == DMT_REASON_UNSUPPORTED)
		snprintf(buf, size, "VERITY header corrupted (no hash "
			 "algorithm name).");
	else
		return false;
	return true;
}

/* The library's parameter reasons in veritysetup's words. */
static bool param_reason_text(const struct dmt_reason *r, char *buf,
			      size_t size)
{
	const char *f = r->field ? r->field : "";

	switch (r->code) {
	case DMT_REASON_UNSUPPORTED:
		snprintf(buf, size, "Hash algorithm %s not supported.",
			 r->name ? r->name : "");
		return true;
	case DMT_REASON_BAD_VALUE:
		if (!strcmp(f, "hash_type"))
			snprintf(buf, size, "Unsupported VERITY hash type.");
		else if (strstr(f, "block_size"))
			snprintf(buf, size, "Unsupported VERITY block size.");
		else
			return false;
		return true;
	case DMT_REASON_NOT_ALIGNED:
		if (strcmp(f, "hash_offset"))
			return false;
		snprintf(buf, size, "Unsupported VERITY hash offset.");
		return true;
	case DMT_REASON_TOO_LARGE:
		snprintf(buf, size, "%s", !strcmp(f, "salt_size") ?
			 "Salt is too long (at most 256 bytes)." :
			 "Device offset overflow.");
		return true;
	case DMT_REASON_VERITY_DIGEST_TOO_BIG:
		snprintf(buf, size,
			 "Digest size too big for the hash block size.");
		return true;
	case DMT_REASON_VERITY_FEC_BLOCK_SIZES:
		snprintf(buf, size, "Block sizes must match for FEC.");
		return true;
	case DMT_REASON_VERITY_AREA_OVERLAP:
		snprintf(buf, size, "%s area overlaps with %s area.",
			 !strcmp(f, "data") ? "Data" : "Hash",
			 r->field2 && !strcmp(r->field2, "hash") ? "hash"
								 : "FEC");
		return true;
	}
	return false;
}

bool reason_text(const struct dmt_reason *r, const char *dev, char *buf,
		 size_t size)
{
	const char *f = r->field ? r->field : "";

	if (!strncmp(f, "sb.", 3) || r->code == DMT_REASON_BAD_MAGIC ||
	    r->code == DMT_REASON_SB_VERSION)
		return sb_reason_text(r, dev, buf, size);
	return param_reason_text(r, buf, size);
}

bool vt_reason_text(const struct cli *cl, const struct dmt_reason *r,
		    char *buf, size_t size)
{
	const struct vt *c = cl->priv;
	const char *dev = c && c->nargs ? c->args[c->nargs > 1] : "";

	return reason_text(r, dev, buf, size);
}

void vt_reason_err(const struct vt *c, const struct dmt_reason *r)
{
	struct dmt_reason q = *r;

	/* "Device %s is not a valid VERITY device." names it itself */
	if (q.code == DMT_REASON_BAD_MAGIC)
		q.path = NULL;
	cli_reason_err(c->cli, &q);
}

int check_params(struct vt *c)
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
