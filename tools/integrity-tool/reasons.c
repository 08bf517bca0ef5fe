// SPDX-License-Identifier: MIT
/*
 * integrity-tool's words for the library's reasons (lib/integrity never
 * names an option; this file does).  Codes not here get the framework's
 * generic text.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <dmt/io.h>

#include "tools/integrity-tool/it.h"

/* Fixed sentences, by code. */
static const struct {
	int code;
	const char *text;
} fixed[] = {
	{ DMT_REASON_INTEGRITY_NO_DEVICE_SIZE,
	  "no device size can hold the payload" },
	{ DMT_REASON_INTEGRITY_WONT_SHRINK,
	  "the device is larger than the requested size (refusing to shrink it)" },
	{ DMT_REASON_INTEGRITY_TAGGER, "cannot set up the integrity algorithm" },
	{ DMT_REASON_INTEGRITY_BAD_LAYOUT, "invalid format parameters" },
	{ DMT_REASON_INTEGRITY_SB_INLINE,
	  "inline mode (tags in the device's hardware metadata) cannot be handled on an image" },
	{ DMT_REASON_INTEGRITY_NEEDS_DATA_DEVICE,
	  "the superblock is for a separate data device: give --data-device" },
	{ DMT_REASON_INTEGRITY_INTERLEAVED,
	  "the superblock is for interleaved data and tags: --data-device does not apply" },
	{ DMT_REASON_INTEGRITY_SB_PROVIDED,
	  "the device is smaller than provided_data_sectors in the superblock" },
	{ DMT_REASON_INTEGRITY_JMAC_EXPECTED,
	  "the superblock has a journal MAC (have_journal_mac): give --journal-integrity and its key" },
	{ DMT_REASON_INTEGRITY_JMAC_UNEXPECTED,
	  "the superblock has no journal MAC: drop --journal-integrity" },
	{ DMT_REASON_INTEGRITY_DIRTY_BITMAP,
	  "dirty bitmap: the device was not closed cleanly in bitmap mode; open and close it once with integritysetup to settle it" },
	{ DMT_REASON_INTEGRITY_JOURNAL_NOT_EMPTY,
	  "the journal is not empty: the device was not closed cleanly (or a journal entry is corrupted); open and close it once with integritysetup to replay it" },
	{ DMT_REASON_INTEGRITY_JOURNAL_MAC, "journal section MAC mismatch" },
	{ DMT_REASON_INTEGRITY_TAG_MISMATCH, "tag mismatch" },
	{ DMT_REASON_SB_CHECKSUM,
	  "superblock MAC mismatch (corrupted superblock or wrong journal key)" },
	{ DMT_REASON_INTEGRITY_IO_SIZE, "cannot get the size" },
	{ DMT_REASON_INTEGRITY_IO_GROW,
	  "cannot grow the device to the requested size" },
	{ DMT_REASON_INTEGRITY_IO_READ, "read error" },
	{ DMT_REASON_INTEGRITY_IO_WRITE, "write error" },
	{ DMT_REASON_INTEGRITY_IO_SB_READ, "cannot read the superblock" },
	{ DMT_REASON_INTEGRITY_IO_SB_WRITE, "cannot write the superblock" },
	{ DMT_REASON_INTEGRITY_IO_JOURNAL_READ, "cannot read the journal" },
	{ DMT_REASON_INTEGRITY_IO_JOURNAL_WRITE, "cannot write the journal" },
	{ DMT_REASON_INTEGRITY_IO_SYNC, "cannot write the device to disk" },
};

/* Superblock fields the kernel refuses, in the words of before. */
static const struct {
	const char *field;
	const char *text;
} sb_fields[] = {
	{ "sb.integrity_tag_size", "invalid tag size in the superblock" },
	{ "sb.log2_sectors_per_block", "invalid sector size in the superblock" },
	{ "sb.journal_sections", "corrupted superblock: journal_sections is" },
	{ "sb.log2_interleave_sectors",
	  "invalid interleave_sectors in the superblock" },
	{ "sb.provided_data_sectors",
	  "provided_data_sectors is not a whole number of blocks" },
};

static bool is(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* Why a superblock is refused: not one, or which version / field. */
static bool sb_text(const struct cli *c, const struct dmt_reason *r,
		    char *buf, size_t size)
{
	const char *what = c->cmd == CMD_DUMP ?
		"not a valid INTEGRITY device" : "not a dm-integrity device";

	if (r->code == DMT_REASON_BAD_MAGIC) {
		snprintf(buf, size, "%s (%s)", what, c->cmd == CMD_DUMP ?
			 "no dm-integrity superblock" : "no valid superblock");
		return true;
	}
	if (r->code == DMT_REASON_SB_VERSION) {
		snprintf(buf, size, "%s: unsupported superblock version %" PRIu64
			 " (this tool reads versions 1..%d)", what, r->value,
			 DMT_INTEGRITY_MAX_VERSION);
		return true;
	}
	for (size_t i = 0; r->code == DMT_REASON_SB_FIELD &&
			   i < sizeof(sb_fields) / sizeof(sb_fields[0]); i++) {
		if (!is(r->field, sb_fields[i].field))
			continue;
		snprintf(buf, size, "%s (%s %" PRIu64 ")", sb_fields[i].text,
			 r->field + 3, r->value);
		return true;
	}
	return false;
}

/* Reasons whose words depend on the field. */
static bool field_text(const struct dmt_reason *r, char *buf, size_t size)
{
	const char *text = NULL;

	if (r->code == DMT_REASON_NEEDS_KEY && is(r->field, "alg"))
		text = "the integrity algorithm needs a key (--integrity-key-file)";
	else if (r->code == DMT_REASON_NEEDS_KEY)
		text = "the journal integrity algorithm needs a key (--journal-integrity-key-file)";
	else if (r->code == DMT_REASON_INTEGRITY_KEY_UNUSED)
		text = "the integrity algorithm takes no key";
	else if (r->code == DMT_REASON_UNSUPPORTED &&
		 is(r->field, "journal_crypt.alg"))
		text = "--journal-crypt: unsupported cipher (supported: ctr(aes), cbc(aes), chacha20)";
	else if (r->code == DMT_REASON_KEY_SIZE &&
		 is(r->field, "journal_crypt.key"))
		text = "--journal-crypt: wrong key size for this cipher (aes: 16, 24 or 32 bytes; chacha20: 32)";
	else if (r->code == DMT_REASON_MISSING && is(r->field2, "device_size"))
		text = "--device-size auto needs --data-from";
	else if (r->code == DMT_REASON_MISSING &&
		 is(r->field, "journal_mac.alg"))
		text = "journal MAC requested without an algorithm";
	else if (r->code == DMT_REASON_CONFLICT && is(r->field, "data_from"))
		text = "--data-from does not apply with --data-device: the data device itself holds the data";
	else if (r->code == DMT_REASON_DEVICE_TOO_SMALL)
		text = is(r->field, "data_from") ?
		       "the device is too small for the payload" :
		       is(r->field, "sb") ?
		       "the device is too small for its superblock" :
		       "the device is too small";
	else if (r->code == DMT_REASON_INTEGRITY_LEGACY_INTERLEAVE)
		text = is(r->field, "layout.interleave_sectors") ?
		       "legacy padding needs --interleave-sectors of at least the kernel's buffer size (128, or --buffer-sectors): the kernel misplaces tags below it" :
		       "legacy padding with interleave_sectors below the kernel's buffer size: the kernel misplaces tags on such a device";
	else if (r->code == DMT_REASON_INTEGRITY_JOURNAL_COMMIT_IDS)
		text = r->value ?
		       "journal commit ids do not match: a wrong --journal-crypt cipher or key, or a corrupted journal (the kernel would fail every I/O)" :
		       "journal commit ids do not match: the kernel would fail every I/O on this device (or the journal is encrypted: give --journal-crypt and its key)";
	if (text)
		snprintf(buf, size, "%s", text);
	return text != NULL;
}

bool it_reason_text(const struct cli *c, const struct dmt_reason *r,
		    char *buf, size_t size)
{
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		if (fixed[i].code == r->code) {
			snprintf(buf, size, "%s", fixed[i].text);
			return true;
		}
	}
	return sb_text(c, r, buf, size) || field_text(r, buf, size);
}

/* The errno goes after the reason unless the reason says it all. */
static bool errno_adds(int err)
{
	return err != -EINVAL && err != -EBADMSG && err != -EUCLEAN &&
	       err != -EMEDIUMTYPE && err != -ENODATA;
}

void it_print_why(const struct cli *c, const struct dmt_integrity_result *r,
		  int err)
{
	const struct it *it = c->priv;
	struct dmt_reason why = it->why;

	if (!why.code) {
		tool_err_errno(it->device, "failed", err);
		return;
	}
	if (!why.path && why.code != DMT_REASON_UNKNOWN_ALG)
		why.path = it->device;
	cli_reason_err_errno(c, &why, errno_adds(err) ? err : 0);
}
