// SPDX-License-Identifier: MIT
/*
 * A loaded header as `cryptsetup luksDump` 2.6.1 prints it, byte for byte
 * (LUKS2_hdr_dump and the keyslot, token and digest handlers' dumps):
 * segments, keyslots, tokens and digests 0..31 (digests 0..7) in numeric
 * order, the members each handler shows, the "(unbound)" mark, and the
 * way it turns a member of another JSON type into text or a number (the
 * json-c accessor it uses, applied here after a type check).  Members the
 * validation leaves unchecked (a digest's hash, an unknown segment's
 * cipher) are printed as libcryptsetup prints them, "(null)" included.
 */
#include <dmt/luks2.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/crypt/luks2_priv.h"

#define TOKENS_MAX 32
#define SEGMENTS_MAX 32
#define DIGESTS_MAX 8

/* json_object_get_string() of any member: JSON text for other types;
 * a JSON null or a missing member as glibc's printf shows the NULL that
 * luksDump passes it. */
static const char *text_of(json_object *o)
{
	if (!o)
		return "(null)";
	if (json_object_is_type(o, json_type_string))
		return json_object_get_string(o);
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_SPACED);
}

/* The types json-c's get_int()/get_int64() read a number from (0 for
 * objects, arrays and null). */
static bool scalar(json_object *o)
{
	json_type t = json_object_get_type(o);

	return t == json_type_int || t == json_type_double ||
	       t == json_type_boolean || t == json_type_string;
}

static int64_t int64_of(json_object *o)
{
	return scalar(o) ? json_object_get_int64(o) : 0;
}

static int int_of(json_object *o)
{
	return scalar(o) ? json_object_get_int(o) : 0;
}

static json_object *get(json_object *o, const char *k)
{
	json_object *v;

	return luks2_member(o, k, &v) ? v : NULL;
}

static bool has(json_object *o, const char *k)
{
	json_object *v;

	return luks2_member(o, k, &v);
}

/* Base64 as hex, 16 bytes a line; nothing at all if it does not decode. */
static void hexprint(FILE *out, json_object *o)
{
	bool str = json_object_is_type(o, json_type_string);
	const char *s = str ? json_object_get_string(o) : "";
	uint8_t *buf;
	size_t len;

	if (luks2_b64_decode(s, str ? (size_t)json_object_get_string_len(o) : 0,
			     &buf, &len))
		return;
	for (size_t i = 0; i < len; i++) {
		if (i && !(i % 16))
			fputs("\n\t            ", out);
		fprintf(out, "%02x ", buf[i]);
	}
	fputc('\n', out);
	free(buf);
}

static void dump_config(FILE *out, json_object *j)
{
	json_object *flags = luks2_json_get(j, "config.flags");
	json_object *req = luks2_json_get(j, "config.requirements.mandatory");
	size_t nf = json_object_is_type(flags, json_type_array) ?
			    json_object_array_length(flags) :
			    0;
	size_t nr = json_object_is_type(req, json_type_array) ?
			    json_object_array_length(req) :
			    0;

	fputs("Flags:       \t", out);
	for (size_t i = 0; i < nf; i++)
		fprintf(out, "%s ", text_of(json_object_array_get_idx(flags, i)));
	fprintf(out, "%s\n%s", nf ? "" : "(no flags)", nr ? "" : "\n");
	if (nr) {
		fputs("Requirements:\t", out);
		for (size_t i = 0; i < nr; i++)
			fprintf(out, "%s ",
				text_of(json_object_array_get_idx(req, i)));
		fputs("\n\n", out);
	}
}

static void dump_segment(FILE *out, json_object *s)
{
	json_object *size = get(s, "size"), *in = get(s, "integrity"), *flags;
	size_t n;

	fprintf(out, "\toffset: %" PRIu64 " [bytes]\n",
		luks2_u64_of(get(s, "offset")));
	if (!strcmp(text_of(size), "dynamic"))
		fputs("\tlength: (whole device)\n", out);
	else
		fprintf(out, "\tlength: %" PRIu64 " [bytes]\n",
			luks2_u64_of(size));
	if (has(s, "encryption"))
		fprintf(out, "\tcipher: %s\n", text_of(get(s, "encryption")));
	if (has(s, "sector_size"))
		fprintf(out, "\tsector: %" PRIu32 " [bytes]\n",
			(uint32_t)int64_of(get(s, "sector_size")));
	if (has(in, "type"))
		fprintf(out, "\tintegrity: %s\n", text_of(get(in, "type")));
	flags = get(s, "flags");
	n = json_object_is_type(flags, json_type_array) ?
		    json_object_array_length(flags) :
		    0;
	for (size_t i = 0; i < n; i++)
		fprintf(out, i ? ", %s" : "\tflags : %s",
			text_of(json_object_array_get_idx(flags, i)));
	if (n)
		fputc('\n', out);
	fputc('\n', out);
}

static void dump_segments(FILE *out, json_object *j)
{
	json_object *all = get(j, "segments"), *s;
	char key[16];

	fputs("Data segments:\n", out);
	for (int i = 0; i < SEGMENTS_MAX; i++) {
		snprintf(key, sizeof(key), "%d", i);
		if (!luks2_member(all, key, &s))
			continue;
		fprintf(out, "  %s: %s\n", key, text_of(get(s, "type")));
		dump_segment(out, s);
	}
}

static void dump_luks2_keyslot(FILE *out, json_object *ks)
{
	json_object *kdf = get(ks, "kdf"), *af = get(ks, "af");
	json_object *area = get(ks, "area");
	const char *type;

	if (!has(ks, "kdf") || !has(ks, "af") || !has(ks, "area"))
		return;
	fprintf(out, "\tCipher:     %s\n", text_of(get(area, "encryption")));
	fprintf(out, "\tCipher key: %u bits\n",
		(uint32_t)int64_of(get(area, "key_size")) * 8);
	type = text_of(get(kdf, "type"));
	fprintf(out, "\tPBKDF:      %s\n", type);
	if (type && !strcmp(type, "pbkdf2")) {
		fprintf(out, "\tHash:       %s\n", text_of(get(kdf, "hash")));
		fprintf(out, "\tIterations: %" PRIu64 "\n",
			luks2_u64_of(get(kdf, "iterations")));
	} else {
		fprintf(out, "\tTime cost:  %" PRIu64 "\n",
			(uint64_t)int64_of(get(kdf, "time")));
		fprintf(out, "\tMemory:     %" PRIu64 "\n",
			(uint64_t)int64_of(get(kdf, "memory")));
		fprintf(out, "\tThreads:    %" PRIu64 "\n",
			(uint64_t)int64_of(get(kdf, "cpus")));
	}
	fputs("\tSalt:       ", out);
	hexprint(out, get(kdf, "salt"));
	fprintf(out, "\tAF stripes: %u\n", (unsigned int)int_of(get(af, "stripes")));
	fprintf(out, "\tAF hash:    %s\n", text_of(get(af, "hash")));
	fprintf(out, "\tArea offset:%" PRIu64 " [bytes]\n",
		luks2_u64_of(get(area, "offset")));
	fprintf(out, "\tArea length:%" PRIu64 " [bytes]\n",
		luks2_u64_of(get(area, "size")));
}

static void dump_reencrypt_keyslot(FILE *out, json_object *ks)
{
	json_object *area = get(ks, "area");
	const char *res = text_of(get(area, "type"));

	if (!has(ks, "direction") || !has(ks, "mode") || !has(ks, "area") ||
	    !has(area, "type"))
		return;
	fprintf(out, "\t%-12s%s\n", "Mode:", text_of(get(ks, "mode")));
	fprintf(out, "\t%-12s%s\n", "Direction:", text_of(get(ks, "direction")));
	fprintf(out, "\t%-12s%s\n", "Resilience:", res);
	if (res && !strcmp(res, "checksum")) {
		fprintf(out, "\t%-12s%s\n", "Hash:", text_of(get(area, "hash")));
		fprintf(out, "\t%-12s%d [bytes]\n", "Hash data:",
			int_of(get(area, "sector_size")));
	} else if (res && !strcmp(res, "datashift")) {
		fprintf(out, "\t%-12s%" PRIu64 "[bytes]\n", "Shift size:",
			luks2_u64_of(get(area, "shift_size")));
	}
	fprintf(out, "\tArea offset:%" PRIu64 " [bytes]\n",
		luks2_u64_of(get(area, "offset")));
	fprintf(out, "\tArea length:%" PRIu64 " [bytes]\n",
		luks2_u64_of(get(area, "size")));
}

/* libcryptsetup's "(unbound)": the keyslot's digest (the first listing
 * it) is not the first digest of any regular segment 0..n-1. */
static bool unbound(json_object *j, const char *slot,
		    const struct luks2_refs *ks_refs,
		    const struct luks2_refs *seg_refs)
{
	json_object *segments = get(j, "segments");
	unsigned int regular = 0;
	char key[16];
	int digest, d;

	luks2_refs_get(ks_refs, slot, &digest);
	if (digest < 0)
		return digest == -ENOENT;
	json_object_object_foreach(segments, k, s)
	{
		(void)k;
		regular += !luks2_segment_flag(s, "backup-", 7);
	}
	for (unsigned int i = 0; i < regular; i++) {
		snprintf(key, sizeof(key), "%u", i);
		luks2_refs_get(seg_refs, key, &d);
		if (d == digest)
			return false;
	}
	return true;
}

static const char *priority(json_object *ks)
{
	json_object *p;
	int v = luks2_member(ks, "priority", &p) ? int_of(p) : 1;

	return v == 0 ? "ignored" : v == 1 ? "normal" : v == 2 ? "preferred" :
								 "invalid";
}

static void dump_keyslot(FILE *out, json_object *j, const char *slot,
			 json_object *ks, const struct luks2_refs *refs[2])
{
	json_object *digests = get(j, "digests");
	const char *type = text_of(get(ks, "type"));

	fprintf(out, "  %s: %s%s\n", slot, type,
		unbound(j, slot, refs[0], refs[1]) ? " (unbound)" : "");
	if (has(ks, "key_size"))
		fprintf(out, "\tKey:        %u bits\n",
			(uint32_t)int64_of(get(ks, "key_size")) * 8);
	fprintf(out, "\tPriority:   %s\n", priority(ks));
	if (type && !strcmp(type, "luks2"))
		dump_luks2_keyslot(out, ks);
	else if (type && !strcmp(type, "reencrypt"))
		dump_reencrypt_keyslot(out, ks);
	json_object_object_foreach(digests, dk, d)
	{
		json_object *a = get(d, "keyslots");
		size_t n = json_object_is_type(a, json_type_array) ?
				   json_object_array_length(a) :
				   0;

		for (size_t i = 0; i < n; i++)
			if (!strcmp(slot, text_of(json_object_array_get_idx(a, i))))
				fprintf(out, "\tDigest ID:  %s\n", dk);
	}
}

static void dump_tokens(FILE *out, json_object *j)
{
	json_object *all = get(j, "tokens"), *t, *a;
	char key[16];

	fputs("Tokens:\n", out);
	for (int i = 0; i < TOKENS_MAX; i++) {
		const char *type;
		size_t n;

		snprintf(key, sizeof(key), "%d", i);
		if (!luks2_member(all, key, &t))
			continue;
		type = text_of(get(t, "type"));
		fprintf(out, "  %s: %s\n", key, type);
		/* the one built-in token type */
		if (type && !strcmp(type, "luks2-keyring") &&
		    has(t, "key_description"))
			fprintf(out, "\tKey description: %s\n",
				text_of(get(t, "key_description")));
		a = get(t, "keyslots");
		n = json_object_is_type(a, json_type_array) ?
			    json_object_array_length(a) :
			    0;
		for (size_t k = 0; k < n; k++)
			fprintf(out, "\tKeyslot:    %s\n",
				text_of(json_object_array_get_idx(a, k)));
	}
}

static void dump_digests(FILE *out, json_object *j)
{
	json_object *all = get(j, "digests"), *d;
	const char *type;
	char key[16];

	fputs("Digests:\n", out);
	for (int i = 0; i < DIGESTS_MAX; i++) {
		snprintf(key, sizeof(key), "%d", i);
		if (!luks2_member(all, key, &d))
			continue;
		type = text_of(get(d, "type"));
		fprintf(out, "  %s: %s\n", key, type);
		if (!type || strcmp(type, "pbkdf2"))
			continue;
		fprintf(out, "\tHash:       %s\n", text_of(get(d, "hash")));
		fprintf(out, "\tIterations: %" PRIu64 "\n",
			(uint64_t)int64_of(get(d, "iterations")));
		fputs("\tSalt:       ", out);
		hexprint(out, get(d, "salt"));
		fputs("\tDigest:     ", out);
		hexprint(out, get(d, "digest"));
	}
}

static int dump_keyslots(FILE *out, json_object *j)
{
	const struct luks2_refs *refs[2];
	struct luks2_refs *ks_refs, *seg_refs;
	json_object *all = get(j, "keyslots"), *ks;
	char key[16];

	ks_refs = luks2_refs_new(get(j, "digests"), "keyslots");
	seg_refs = luks2_refs_new(get(j, "digests"), "segments");
	if (!ks_refs || !seg_refs) {
		luks2_refs_free(ks_refs);
		luks2_refs_free(seg_refs);
		return -ENOMEM;
	}
	refs[0] = ks_refs;
	refs[1] = seg_refs;
	fputs("Keyslots:\n", out);
	for (int i = 0; i < DMT_LUKS2_KEYSLOTS_MAX; i++) {
		snprintf(key, sizeof(key), "%d", i);
		if (luks2_member(all, key, &ks))
			dump_keyslot(out, j, key, ks, refs);
	}
	luks2_refs_free(ks_refs);
	luks2_refs_free(seg_refs);
	return 0;
}

int dmt_luks2_dump(const struct dmt_luks2 *h, char **text)
{
	const char *uuid = h->bin.uuid, *label = h->bin.label;
	const char *subsystem = h->bin.subsystem;
	json_object *j = h->jobj;
	size_t size = 0;
	FILE *out;
	int ret;

	*text = NULL;
	out = open_memstream(text, &size);
	if (!out)
		return -ENOMEM;
	fprintf(out, "LUKS header information\n");
	fprintf(out, "Version:       \t%u\n", 2u);
	fprintf(out, "Epoch:         \t%" PRIu64 "\n", h->bin.seqid);
	fprintf(out, "Metadata area: \t%" PRIu64 " [bytes]\n",
		luks2_u64_of(luks2_json_get(j, "config.json_size")) +
			DMT_LUKS2_BIN_HDR_SIZE);
	fprintf(out, "Keyslots area: \t%" PRIu64 " [bytes]\n",
		luks2_u64_of(luks2_json_get(j, "config.keyslots_size")));
	fprintf(out, "UUID:          \t%s\n", *uuid ? uuid : "(no UUID)");
	fprintf(out, "Label:         \t%s\n", *label ? label : "(no label)");
	fprintf(out, "Subsystem:     \t%s\n",
		*subsystem ? subsystem : "(no subsystem)");
	dump_config(out, j);
	dump_segments(out, j);
	ret = dump_keyslots(out, j);
	dump_tokens(out, j);
	dump_digests(out, j);
	if (fclose(out) || ret) {
		free(*text);
		*text = NULL;
		return ret ? ret : -ENOMEM;
	}
	return 0;
}
