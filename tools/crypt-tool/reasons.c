// SPDX-License-Identifier: MIT
/* lib/crypt's reasons in crypt-tool's words (cryptsetup's where it has
 * one, "No key available with this passphrase."); options are named
 * through the option table (main.c), never spelled here. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <dmt/crypt_auth.h>

#include "tools/crypt-tool/ct.h"

/* An option's long name from the option table (main.c), for "--%s". */
static const char *opt(const struct cli *c, int o)
{
	return c->tool->options[o].name;
}

static bool auth_text(const struct cli *c, const struct dmt_reason *r,
		      char *buf, size_t size)
{
	switch (r->code) {
	case DMT_REASON_AUTH_COMBINATION:
		snprintf(buf, size, "--%s %s with --%s %s is not a supported combination (supported: %s)",
			 opt(c, O_CIPHER),
			 cli_str(c, O_CIPHER) ? cli_str(c, O_CIPHER) : "(none)",
			 opt(c, O_INTEGRITY),
			 cli_str(c, O_INTEGRITY) ? cli_str(c, O_INTEGRITY) : "(none)",
			 dmt_auth_supported());
		return true;
	case DMT_REASON_AUTH_KEY_SIZE:
		snprintf(buf, size, "--%s: %" PRIu64 " bits is not valid for this cipher with --%s",
			 opt(c, O_KEY_SIZE), r->value * 8, opt(c, O_INTEGRITY));
		return true;
	case DMT_REASON_AUTH_TOO_SMALL:
		snprintf(buf, size, "the payload (%" PRIu64 " bytes) needs a device of %" PRIu64 " bytes",
			 r->value, r->min);
		return true;
	case DMT_REASON_AUTH_NO_INTEGRITY:
		snprintf(buf, size, "the LUKS2 header has no integrity segment we know");
		return true;
	case DMT_REASON_INTEGRITY_JOURNAL_NOT_EMPTY:
		snprintf(buf, size, "the dm-integrity journal is not empty (section %" PRIu64 " entry %" PRIu64 "): the device was not closed cleanly, or a journal entry is corrupted; open and close it once with cryptsetup to replay it",
			 r->value, r->min);
		return true;
	case DMT_REASON_INTEGRITY_JOURNAL_COMMIT_IDS:
		snprintf(buf, size, "the dm-integrity journal is damaged (commit ids of section %" PRIu64 " sector %" PRIu64 " match no sequence): the kernel cannot use it either",
			 r->value, r->min);
		return true;
	case DMT_REASON_AUTH_SB:
		snprintf(buf, size, "the dm-integrity superblock is missing or does not match the header (%s)",
			 r->field ? r->field : "?");
		return true;
	}
	return false;
}

static bool luks2_text(const struct cli *c, const struct dmt_reason *r,
		       char *buf, size_t size)
{
	switch (r->code) {
	case DMT_REASON_LUKS2_NO_HEADER:
		snprintf(buf, size, "no valid LUKS2 header (%s)",
			 !r->field ? "unreadable" :
			 !strcmp(r->field, "magic") ? "no LUKS2 magic" :
			 !strcmp(r->field, "size") ? "the file is too short" :
			 !strcmp(r->field, "checksum") ? "checksum mismatch in both copies" :
			 r->field);
		if (r->field && (!strcmp(r->field, "version") ||
				 !strcmp(r->field, "hdr_size") ||
				 !strcmp(r->field, "hdr_offset")))
			snprintf(buf, size, "no valid LUKS2 header (bad %s)",
				 r->field);
		return true;
	case DMT_REASON_LUKS2_LAYOUT:
		snprintf(buf, size, "the LUKS2 header is valid, but not a layout crypt-tool reads: %s",
			 r->field ? r->field : "?");
		if (r->field && !strcmp(r->field, "requirements"))
			snprintf(buf, size, "the LUKS2 header has the mandatory requirement '%s' (a reencryption in progress, or a feature crypt-tool does not know); finish it with cryptsetup first",
				 r->name ? r->name : "?");
		else if (r->field && !strcmp(r->field, "segments"))
			snprintf(buf, size, "the LUKS2 header has %" PRIu64 " data segments; crypt-tool reads a header with one",
				 r->value);
		else if (r->field && !strcmp(r->field, "segment 0 type"))
			snprintf(buf, size, "the LUKS2 data segment is of type '%s', not crypt",
				 r->name ? r->name : "?");
		else if (r->field && !strcmp(r->field, "segment 0 sector_size"))
			snprintf(buf, size, "the LUKS2 data segment's sector size %" PRIu64 " is not one dm-crypt takes (512..4096, a power of 2)",
				 r->value);
		else if (r->field && !strcmp(r->field, "segment 0 size"))
			snprintf(buf, size, "the LUKS2 data segment's size %" PRIu64 " reaches past the largest offset",
				 r->value);
		return true;
	case DMT_REASON_LUKS2_INVALID:
		snprintf(buf, size, "the LUKS2 metadata to write would not be valid (%s)",
			 r->field ? r->field : "?");
		return true;
	case DMT_REASON_LUKS2_JSON_SIZE:
		snprintf(buf, size, "the LUKS2 metadata (%" PRIu64
			 " bytes) does not fit the header (%" PRIu64
			 "): raise --%s", r->value, r->max,
			 opt(c, O_METADATA_SIZE));
		return true;
	case DMT_REASON_LUKS2_WRONG_PASSPHRASE:
		snprintf(buf, size, "No key available with this passphrase.");
		return true;
	case DMT_REASON_LUKS2_KEYSLOT:
		snprintf(buf, size, "--%s %" PRIu64 ": not a usable keyslot",
			 opt(c, O_KEY_SLOT), r->value);
		return true;
	case DMT_REASON_LUKS2_NO_SPACE:
		snprintf(buf, size, "no room in the keyslots area for a keyslot of %"
			 PRIu64 " bytes (--%s)", r->value,
			 opt(c, O_KEYSLOTS_SIZE));
		return true;
	case DMT_REASON_LUKS2_KDF:
		snprintf(buf, size, "key derivation failed: %s",
			 r->name ? r->name : "?");
		return true;
	}
	return false;
}

static bool field_is(const struct dmt_reason *r, const char *field)
{
	return r->field && !strcmp(r->field, field);
}

/* The LUKS2 creation parameters luksFormat refuses, in option words. */
static bool param_text(const struct cli *c, const struct dmt_reason *r,
		       char *buf, size_t size)
{
	if (field_is(r, "uuid")) {
		snprintf(buf, size, "--%s: '%s' is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx in hex digits)",
			 opt(c, O_UUID), cli_str(c, O_UUID) ? cli_str(c, O_UUID) : "");
		return true;
	}
	if (field_is(r, "metadata_size")) {
		snprintf(buf, size, "--%s: %" PRIu64 " bytes is not a LUKS2 header size (16k, 32k, 64k, 128k, 256k, 512k, 1m, 2m or 4m)",
			 opt(c, O_METADATA_SIZE), r->value);
		return true;
	}
	if (field_is(r, "keyslots_size") && r->code == DMT_REASON_BAD_VALUE) {
		snprintf(buf, size, "--%s: %" PRIu64 " bytes: needs a multiple of 4096, at most 128m",
			 opt(c, O_KEYSLOTS_SIZE), r->value);
		return true;
	}
	if (field_is(r, "keyslots_size")) {
		snprintf(buf, size, "--%s/--%s: no room for a keyslots area below the data offset",
			 opt(c, O_KEYSLOTS_SIZE), opt(c, O_OFFSET));
		return true;
	}
	if (field_is(r, "data_offset") && r->code == DMT_REASON_TOO_SMALL) {
		snprintf(buf, size, "--%s %" PRIu64 ": the data offset is inside the header (%" PRIu64 " bytes: 2 x --%s at least, %" PRIu64 " sectors)",
			 opt(c, O_OFFSET), r->value / 512, r->min,
			 opt(c, O_METADATA_SIZE), r->min / 512);
		return true;
	}
	return false;
}

bool ct_reason_text(const struct cli *c, const struct dmt_reason *r,
		    char *buf, size_t size)
{
	int key_opt = field_is(r, "keyslot.key_size") ? O_KEYSLOT_KEY_SIZE
						      : O_KEY_SIZE;

	switch (r->code) {
	case DMT_REASON_CRYPT_CIPHER:
		snprintf(buf, size, "cipher '%s' is not supported (supported: %s)",
			 r->name ? r->name : "?", dmt_crypt_supported_ciphers());
		return true;
	case DMT_REASON_CRYPT_KEY_SIZE:
		if (r->min == r->max || !r->max)
			snprintf(buf, size, "--%s: %" PRIu64 " bits is not valid for this cipher",
				 opt(c, key_opt), r->value * 8);
		else
			snprintf(buf, size, "--%s: %" PRIu64 " bits is not valid for this cipher (%" PRIu64 "..%" PRIu64 " bits)",
				 opt(c, key_opt), r->value * 8, r->min * 8, r->max * 8);
		return true;
	case DMT_REASON_CRYPT_IV_OFFSET:
		snprintf(buf, size, "--%s %" PRIu64
			 " is not a multiple of the sector size with --%s",
			 opt(c, O_SKIP), r->value, opt(c, O_IV_LARGE));
		return true;
	case DMT_REASON_CRYPT_BACKEND:
		snprintf(buf, size, "the cipher refused the key (an XTS key needs two different halves)");
		return true;
	}
	return luks2_text(c, r, buf, size) || auth_text(c, r, buf, size) ||
	       param_text(c, r, buf, size);
}

void ct_print_why(const struct cli *c, const struct dmt_reason *r, int err,
		  const char *path, const char *what)
{
	struct dmt_reason why = *r;

	if (!why.code) {
		tool_err_errno(path ? path : ct_of((struct cli *)c)->image, what,
			       err);
		return;
	}
	if (!why.path)
		why.path = path;
	cli_reason_err_errno(c, &why, err == -EINVAL || err == -EPERM ||
				      err == -EMEDIUMTYPE || err == -ENODATA ||
				      err == -ENOSPC || err == -ENOTSUP ? 0 : err);
}
