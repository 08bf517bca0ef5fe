// SPDX-License-Identifier: MIT
/*
 * The reason-code registry's names and default sentences (<dmt/reason.h>):
 * one entry per code of every public header, found by a linear search (the
 * codes are sparse: one range per subsystem).  The sentences speak the
 * library's vocabulary (params fields, "sb." fields, paths), never a
 * command-line option; front ends that know their options write their own.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <dmt/reason.h>
#include <dmt/crypt.h>
#include <dmt/crypt_auth.h>
#include <dmt/luks2.h>

/* Which members of struct dmt_reason the sentence shows. */
enum {
	RS_VALUE = 1 << 0,	/* "value V" */
	RS_MIN = 1 << 1,	/* "min N" */
	RS_MAX = 1 << 2,	/* "max N" */
	RS_ERRNO = 1 << 3,	/* value is a positive errno */
	RS_NAME = 1 << 4,	/* "name" */
	RS_FIELD2 = 1 << 5,	/* "and field2" */
	RS_PATH2 = 1 << 6,	/* "and path2" */
};
#define RS_RANGE (RS_VALUE | RS_MIN | RS_MAX)

struct reason_entry {
	int code;
	const char *name;	/* stable, lowercase */
	const char *text;	/* what went wrong */
	unsigned int show;
};

#define R(c, n, t, s) { DMT_REASON_##c, n, t, s }

static const struct reason_entry reasons[] = {
	R(NONE, "none", "no reason recorded", 0),

	/* generic */
	R(BAD_VALUE, "bad-value", "invalid value", RS_VALUE | RS_NAME),
	R(OUT_OF_RANGE, "out-of-range", "value out of range", RS_RANGE),
	R(NOT_POWER_OF_2, "not-power-of-2", "value is not a power of 2",
	  RS_VALUE),
	R(NOT_ALIGNED, "not-aligned", "value is not a multiple of the max",
	  RS_VALUE | RS_MAX),
	R(TOO_LARGE, "too-large", "value too large", RS_VALUE | RS_MAX),
	R(TOO_SMALL, "too-small", "value too small", RS_VALUE | RS_MIN),
	R(MISSING, "missing", "required but not given", 0),
	R(CONFLICT, "conflict", "conflicts with another field", RS_FIELD2),
	R(UNKNOWN_ALG, "unknown-alg", "unknown algorithm", RS_NAME),
	R(UNSUPPORTED, "unsupported", "not supported", RS_NAME | RS_VALUE),
	R(NEEDS_KEY, "needs-key", "the algorithm needs a key", RS_NAME),
	R(KEY_SIZE, "key-size", "wrong key size (bytes)", RS_RANGE),
	R(DEVICE_TOO_SMALL, "device-too-small", "device or file too small "
	  "(bytes)", RS_VALUE | RS_MIN),
	R(SAME_FILE, "same-file", "is the same file as another",
	  RS_PATH2 | RS_FIELD2),
	R(IO, "io", "I/O error", RS_ERRNO),

	/* on-disk structures */
	R(BAD_MAGIC, "bad-magic", "no valid superblock or header", 0),
	R(SB_VERSION, "sb-version", "unsupported superblock version",
	  RS_VALUE),
	R(SB_FIELD, "sb-field", "superblock field not accepted", RS_VALUE),
	R(SB_CHECKSUM, "sb-checksum", "superblock or header checksum "
	  "mismatch", 0),

	/* verity / fec */
	R(VERITY_DIGEST_TOO_BIG, "verity-digest-too-big", "hash block too "
	  "small for two digests", RS_VALUE | RS_MIN),
	R(VERITY_AREA_OVERLAP, "verity-area-overlap", "area overlaps "
	  "another area", RS_FIELD2),
	R(VERITY_FEC_LAYOUT, "verity-fec-layout", "FEC layout rejected",
	  RS_ERRNO),
	R(VERITY_FEC_BLOCK_SIZES, "verity-fec-block-sizes", "FEC needs equal "
	  "data and hash block sizes", 0),
	R(VERITY_SPILL, "verity-spill", "temporary file for corrected "
	  "blocks failed", RS_ERRNO),

	/* integrity */
	R(INTEGRITY_KEY_UNUSED, "integrity-key-unused", "the algorithm takes "
	  "no key", RS_NAME),
	R(INTEGRITY_NO_DEVICE_SIZE, "integrity-no-device-size", "no device "
	  "size gives that many sectors", RS_VALUE),
	R(INTEGRITY_WONT_SHRINK, "integrity-wont-shrink", "will not shrink "
	  "the file (bytes)", RS_VALUE | RS_MAX),
	R(INTEGRITY_LEGACY_INTERLEAVE, "integrity-legacy-interleave",
	  "legacy padding below the kernel buffer", RS_VALUE),
	R(INTEGRITY_TAGGER, "integrity-tagger", "tag algorithm set-up "
	  "failed", RS_NAME | RS_ERRNO),
	R(INTEGRITY_BAD_LAYOUT, "integrity-bad-layout", "geometry refused "
	  "the layout", RS_VALUE),
	R(INTEGRITY_SB_INLINE, "integrity-sb-inline", "inline-mode "
	  "superblock not supported", 0),
	R(INTEGRITY_NEEDS_DATA_DEVICE, "integrity-needs-data-device",
	  "superblock asks for a separate data device", 0),
	R(INTEGRITY_INTERLEAVED, "integrity-interleaved", "superblock has "
	  "no separate data device", 0),
	R(INTEGRITY_SB_PROVIDED, "integrity-sb-provided", "device smaller "
	  "than the provided sectors", RS_VALUE | RS_MIN),
	R(INTEGRITY_JMAC_EXPECTED, "integrity-jmac-expected", "superblock "
	  "has a journal MAC", 0),
	R(INTEGRITY_JMAC_UNEXPECTED, "integrity-jmac-unexpected",
	  "superblock has no journal MAC", 0),
	R(INTEGRITY_DIRTY_BITMAP, "integrity-dirty-bitmap", "bitmap not "
	  "closed cleanly", 0),
	R(INTEGRITY_JOURNAL_COMMIT_IDS, "integrity-journal-commit-ids",
	  "journal commit ids do not match", RS_VALUE),
	R(INTEGRITY_JOURNAL_NOT_EMPTY, "integrity-journal-not-empty",
	  "journal not closed cleanly", 0),
	R(INTEGRITY_JOURNAL_MAC, "integrity-journal-mac", "a journal section "
	  "MAC differs", 0),
	R(INTEGRITY_TAG_MISMATCH, "integrity-tag-mismatch", "tag mismatch "
	  "(blocks)", RS_VALUE | RS_MAX),
	R(INTEGRITY_IO_SIZE, "integrity-io-size", "cannot get the size",
	  RS_ERRNO),
	R(INTEGRITY_IO_GROW, "integrity-io-grow", "cannot grow the file",
	  RS_ERRNO),
	R(INTEGRITY_IO_READ, "integrity-io-read", "read error", RS_ERRNO),
	R(INTEGRITY_IO_WRITE, "integrity-io-write", "write error", RS_ERRNO),
	R(INTEGRITY_IO_SB_READ, "integrity-io-sb-read", "cannot read the "
	  "superblock", RS_ERRNO),
	R(INTEGRITY_IO_SB_WRITE, "integrity-io-sb-write", "cannot write the "
	  "superblock", RS_ERRNO),
	R(INTEGRITY_IO_JOURNAL_READ, "integrity-io-journal-read", "cannot "
	  "read the journal", RS_ERRNO),
	R(INTEGRITY_IO_JOURNAL_WRITE, "integrity-io-journal-write", "cannot "
	  "write the journal", RS_ERRNO),
	R(INTEGRITY_IO_SYNC, "integrity-io-sync", "sync failed", RS_ERRNO),

	/* fs-verity */
	R(FSVERITY_SIZE_CHANGED, "fsverity-size-changed", "the file size "
	  "changed while it was read", RS_VALUE),
	R(FSVERITY_NOT_REGULAR, "fsverity-not-regular", "not a regular file",
	  0),
	R(FSVERITY_CHANGED, "fsverity-changed", "the file changed while it "
	  "was read", 0),

	/* dm-crypt (<dmt/crypt.h>) */
	R(CRYPT_CIPHER, "crypt-cipher", "cipher not supported", RS_NAME),
	R(CRYPT_KEY_SIZE, "crypt-key-size", "wrong key size for the cipher "
	  "(bytes)", RS_RANGE),
	R(CRYPT_IV_OFFSET, "crypt-iv-offset", "IV offset not a multiple of "
	  "the sector size in 512-byte sectors", RS_VALUE),
	R(CRYPT_BACKEND, "crypt-backend", "the cipher backend refused the "
	  "key", 0),

	/* LUKS2 (<dmt/luks2.h>) */
	R(LUKS2_NO_HEADER, "luks2-no-header", "no usable LUKS2 header", 0),
	R(LUKS2_JSON_SIZE, "luks2-json-size", "metadata does not fit "
	  "(bytes)", RS_VALUE | RS_MAX),
	R(LUKS2_WRONG_PASSPHRASE, "luks2-wrong-passphrase", "no keyslot "
	  "accepted the passphrase", 0),
	R(LUKS2_KEYSLOT, "luks2-keyslot", "keyslot in use, not free or out of "
	  "range", RS_VALUE),
	R(LUKS2_NO_SPACE, "luks2-no-space", "no room for a keyslot (bytes)",
	  RS_VALUE),
	R(LUKS2_KDF, "luks2-kdf", "key derivation failed", RS_NAME),
	R(LUKS2_LAYOUT, "luks2-layout", "a header layout this library does "
	  "not decrypt", RS_NAME | RS_VALUE),
	R(LUKS2_INVALID, "luks2-invalid", "the metadata to write breaks a "
	  "rule", 0),

	/* authenticated dm-crypt (<dmt/crypt_auth.h>) */
	R(AUTH_COMBINATION, "auth-combination", "unsupported cipher and "
	  "integrity combination", RS_NAME),
	R(AUTH_KEY_SIZE, "auth-key-size", "wrong key size for the cipher "
	  "(bytes)", RS_RANGE),
	R(AUTH_TOO_SMALL, "auth-too-small", "the payload does not fit "
	  "(bytes)", RS_VALUE | RS_MIN),
	R(AUTH_NO_INTEGRITY, "auth-no-integrity", "no known integrity "
	  "segment in the header", 0),
	R(AUTH_SB, "auth-sb", "the dm-integrity superblock does not match "
	  "the header", 0),
};

static const struct reason_entry *find(int code)
{
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		if (reasons[i].code == code)
			return &reasons[i];
	}
	return NULL;
}

const char *dmt_reason_code_name(int code)
{
	const struct reason_entry *e = find(code);

	return e ? e->name : NULL;
}

/* snprintf onto the end of what is there: pos may pass size. */
static void put(char *buf, size_t size, size_t *pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t size, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(*pos < size ? buf + *pos : NULL,
		      *pos < size ? size - *pos : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		*pos += (size_t)n;
}

int dmt_reason_format(const struct dmt_reason *r, char *buf, size_t size)
{
	const struct reason_entry *e;
	size_t pos = 0;

	if (size && buf)
		buf[0] = '\0';
	else
		buf = NULL, size = 0;
	if (!r)
		return 0;
	e = find(r->code);
	if (r->path)
		put(buf, size, &pos, "%s: ", r->path);
	if (r->field)
		put(buf, size, &pos, "%s: ", r->field);
	if (!e) {
		put(buf, size, &pos, "reason code %#x", (unsigned int)r->code);
		goto out;
	}
	put(buf, size, &pos, "%s", e->text);
	if ((e->show & RS_NAME) && r->name)
		put(buf, size, &pos, " (%s)", r->name);
	if ((e->show & RS_FIELD2) && r->field2)
		put(buf, size, &pos, " (with %s)", r->field2);
	if ((e->show & RS_PATH2) && r->path2)
		put(buf, size, &pos, " (%s)", r->path2);
	if ((e->show & RS_ERRNO) && r->value)
		put(buf, size, &pos, ": %s", strerror((int)r->value));
	if (e->show & RS_VALUE)
		put(buf, size, &pos, ": %" PRIu64, r->value);
	if ((e->show & RS_MIN) && (e->show & RS_MAX) && r->max)
		put(buf, size, &pos, " (allowed %" PRIu64 "..%" PRIu64 ")",
		    r->min, r->max);
	else if ((e->show & RS_MIN) && r->min)
		put(buf, size, &pos, " (min %" PRIu64 ")", r->min);
	else if ((e->show & RS_MAX) && r->max)
		put(buf, size, &pos, " (max %" PRIu64 ")", r->max);
out:
	if (pos > INT32_MAX)
		return -EOVERFLOW;
	return (int)pos;
}
