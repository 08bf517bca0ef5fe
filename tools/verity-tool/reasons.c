// SPDX-License-Identifier: MIT
/*
 * The library's reasons in veritysetup's words (its parameter and
 * superblock messages); the rest goes to the framework, which names the
 * field's option through the option table (main.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tools/verity-tool/vt.h"

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

static bool reason_line(const struct dmt_reason *r, const char *dev,
			char *buf, size_t size)
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

	return reason_line(r, dev, buf, size);
}

void vt_reason_err(const struct vt *c, const struct dmt_reason *r)
{
	struct dmt_reason q = *r;

	/* "Device %s is not a valid VERITY device." names it itself */
	if (q.code == DMT_REASON_BAD_MAGIC)
		q.path = NULL;
	cli_reason_err(c->cli, &q);
}
