// SPDX-License-Identifier: MIT
/*
 * The checks every LUKS2 reader makes on the JSON metadata before anything
 * in it is used: what libcryptsetup 2.6.1 accepts and refuses
 * (LUKS2_hdr_validate and the functions it calls, then the keyslot
 * handlers' own checks), in its order, and its one repair (leftover KDF
 * parameters of an older cryptsetup).  formats.md, LUKS2 JSON metadata,
 * lists the rules.  Every member's JSON type is checked before a json-c
 * accessor reads it.  A refusal names the object and the member
 * ("keyslot 1: no digest", "segment 0: flags is not an array") in a
 * per-thread buffer.
 *
 * Where libcryptsetup compares every keyslot or segment with every other
 * (area overlaps, digest references), this sorts or hashes: the same
 * verdict in O(n log n) on a hostile 4 MiB header.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/crypt/luks2_priv.h"

#define MAX_KEYSLOTS_AREA (128u << 20)
#define REQ_OFFLINE_REENCRYPT 1u
#define REQ_ONLINE_REENCRYPT 2u
#define REQ_UNKNOWN 0x80000000u

static _Thread_local char why_buf[192];

/* A name from the header, safe to print: printable ASCII, shortened. */
static const char *printable(const char *s, char *buf, size_t size)
{
	size_t i;

	for (i = 0; s[i] && i + 4 < size; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	strcpy(buf + i, s[i] ? "..." : "");
	return buf;
}

/* "<obj> <key>: <what>" (obj NULL: the top level). Returns -EINVAL. */
static int __attribute__((format(printf, 3, 4)))
fail(const char *obj, const char *key, const char *fmt, ...)
{
	char name[24];
	int n = 0;
	va_list ap;

	if (obj)
		n = snprintf(why_buf, sizeof(why_buf), key ? "%s %s: " : "%s: ",
			     obj, key ? printable(key, name, sizeof(name)) : "");
	va_start(ap, fmt);
	vsnprintf(why_buf + n, sizeof(why_buf) - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static const char *type_name(json_type t)
{
	return t == json_type_object ? "an object" :
	       t == json_type_array  ? "an array" :
	       t == json_type_string ? "a string" :
				       "an integer";
}

/* json_contains(): member k (shown as sub + k) of type t, or NULL with
 * the reason. */
static json_object *need(json_object *o, const char *obj, const char *key,
			 const char *sub, const char *k, json_type t)
{
	json_object *v;

	if (!luks2_member(o, k, &v)) {
		if (!json_object_is_type(o, json_type_object) && !*sub)
			fail(obj, key, "not an object");
		else
			fail(obj, key, "%s%s is missing", sub, k);
		return NULL;
	}
	if (!json_object_is_type(v, t)) {
		fail(obj, key, "%s%s is not %s", sub, k, type_name(t));
		return NULL;
	}
	return v;
}

/* json_contains_string(): a string of at least one byte. */
static json_object *need_str(json_object *o, const char *obj, const char *key,
			     const char *sub, const char *k)
{
	json_object *v = need(o, obj, key, sub, k, json_type_string);

	if (v && !*json_object_get_string(v)) {
		fail(obj, key, "%s%s is empty", sub, k);
		return NULL;
	}
	return v;
}

/* An integer member in 0..UINT32_MAX (validate_json_uint32). */
static bool is_u32(json_object *v)
{
	int64_t i = json_object_get_int64(v);

	return i >= 0 && i <= (int64_t)UINT32_MAX;
}

/* Every element of array a a string. */
static int strings_only(json_object *a, const char *obj, const char *key,
			const char *what)
{
	size_t n = json_object_array_length(a);

	for (size_t i = 0; i < n; i++)
		if (!json_object_is_type(json_object_array_get_idx(a, i),
					 json_type_string))
			return fail(obj, key, "%s[%zu] is not a string", what, i);
	return 0;
}

/* Keyslot, digest, segment and token names are decimal numbers. */
static bool named(const char *obj, const char *key)
{
	return luks2_numbered(key) ||
	       fail(obj, key, "the name is not a number") == 0;
}

/* validate_keyslots_array / validate_segments_array: every element names
 * an object of section (the keyslots or the segments). */
static int refs_exist(json_object *a, json_object *section, const char *obj,
		      const char *key, const char *kind)
{
	size_t n = json_object_array_length(a);
	char name[24];
	json_object *v;

	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(a, i);

		if (!json_object_is_type(e, json_type_string))
			return fail(obj, key, "%ss[%zu] is not a string", kind,
				    i);
		if (!luks2_member(section, json_object_get_string(e), &v))
			return fail(obj, key, "%s %s does not exist", kind,
				    printable(json_object_get_string(e), name,
					      sizeof(name)));
		if (!json_object_is_type(v, json_type_object))
			return fail(obj, key, "%s %s is not an object", kind,
				    printable(json_object_get_string(e), name,
					      sizeof(name)));
	}
	return 0;
}

/* ---- requirements, tokens, digests ---- */

/* "online-reencrypt" or "online-reencrypt-v<digits>" */
static bool reencrypt_candidate(const char *s)
{
	if (!strcmp(s, "online-reencrypt"))
		return true;
	if (strncmp(s, "online-reencrypt-v", 18) || !s[18])
		return false;
	return luks2_numbered(s + 18);
}

/* The mandatory requirements as libcryptsetup knows them. */
static uint32_t requirements(json_object *j, bool *candidate)
{
	json_object *a = luks2_json_get(j, "config.requirements.mandatory");
	size_t n = json_object_is_type(a, json_type_array) ?
			   json_object_array_length(a) :
			   0;
	uint32_t reqs = 0;

	*candidate = false;
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(a, i);
		const char *s = json_object_is_type(e, json_type_string) ?
					json_object_get_string(e) :
					"";

		if (!strcmp(s, "offline-reencrypt"))
			reqs |= REQ_OFFLINE_REENCRYPT;
		else if (!strcmp(s, "online-reencrypt") ||
			 !strcmp(s, "online-reencrypt-v2") ||
			 !strcmp(s, "online-reencrypt-v3"))
			reqs |= REQ_ONLINE_REENCRYPT;
		else
			reqs |= REQ_UNKNOWN;
		*candidate |= reencrypt_candidate(s);
	}
	return reqs;
}

static int check_requirements(json_object *j)
{
	json_object *cfg, *req, *mand;
	unsigned int online = 0;

	cfg = need(j, NULL, NULL, "", "config", json_type_object);
	if (!cfg)
		return -EINVAL;
	if (luks2_member(cfg, "requirements", &req)) {
		if (!json_object_is_type(req, json_type_object))
			return fail("config", NULL,
				    "requirements is not an object");
		if (luks2_member(req, "mandatory", &mand)) {
			size_t n;

			if (!json_object_is_type(mand, json_type_array))
				return fail("config", NULL,
					    "requirements.mandatory is not an array");
			if (strings_only(mand, "config", NULL,
					 "requirements.mandatory"))
				return -EINVAL;
			n = json_object_array_length(mand);
			for (size_t i = 0; i < n; i++)
				online += reencrypt_candidate(json_object_get_string(
					json_object_array_get_idx(mand, i)));
		}
	}
	if (online > 1)
		return fail("config", NULL,
			    "requirements: more than one online-reencrypt requirement");
	return 0;
}

static int check_tokens(json_object *j)
{
	json_object *tokens, *keyslots, *a;

	tokens = need(j, NULL, NULL, "", "tokens", json_type_object);
	if (!tokens)
		return -EINVAL;
	json_object_object_foreach(tokens, key, t)
	{
		if (!named("token", key))
			return -EINVAL;
		/* keyslots are checked later; the references must hold now */
		if (!luks2_member(j, "keyslots", &keyslots))
			return fail(NULL, NULL, "keyslots is missing");
		if (!need_str(t, "token", key, "", "type") ||
		    !(a = need(t, "token", key, "", "keyslots",
			       json_type_array)) ||
		    refs_exist(a, keyslots, "token", key, "keyslot"))
			return -EINVAL;
	}
	return 0;
}

static int check_digests(json_object *j)
{
	json_object *digests, *keyslots, *segments, *ka, *sa;

	digests = need(j, NULL, NULL, "", "digests", json_type_object);
	keyslots = digests ? need(j, NULL, NULL, "", "keyslots",
				  json_type_object) :
			     NULL;
	segments = keyslots ? need(j, NULL, NULL, "", "segments",
				   json_type_object) :
			      NULL;
	if (!segments)
		return -EINVAL;
	json_object_object_foreach(digests, key, d)
	{
		if (!named("digest", key))
			return -EINVAL;
		if (!need_str(d, "digest", key, "", "type") ||
		    !(ka = need(d, "digest", key, "", "keyslots",
				json_type_array)) ||
		    !(sa = need(d, "digest", key, "", "segments",
				json_type_array)) ||
		    refs_exist(ka, keyslots, "digest", key, "keyslot") ||
		    refs_exist(sa, segments, "digest", key, "segment"))
			return -EINVAL;
	}
	return 0;
}

/* ---- segments ---- */

struct interval {
	uint64_t offset, length;	/* length UINT64_MAX: "dynamic" */
	const char *name;		/* the keyslot, or NULL: segment id */
	int id;
};

static int crypt_segment(json_object *seg, const char *key, uint64_t size,
			 const struct luks2_refs *seg_refs)
{
	json_object *iv, *ss, *in;
	uint64_t v, tweak;

	if (!(iv = need_str(seg, "segment", key, "", "iv_tweak")) ||
	    !need_str(seg, "segment", key, "", "encryption") ||
	    !(ss = need(seg, "segment", key, "", "sector_size",
			json_type_int)))
		return -EINVAL;
	if (luks2_member(seg, "integrity", &in) &&
	    (!need(seg, "segment", key, "", "integrity", json_type_object) ||
	     !need_str(in, "segment", key, "integrity.", "type") ||
	     !need_str(in, "segment", key, "integrity.", "journal_encryption") ||
	     !need_str(in, "segment", key, "integrity.", "journal_integrity")))
		return -EINVAL;
	if (!is_u32(ss))
		return fail("segment", key, "sector_size is out of range");
	v = (uint64_t)json_object_get_int64(ss);
	if (!v || v % 512)
		return fail("segment", key,
			    "sector_size %" PRIu64 " is not a multiple of 512", v);
	if (!luks2_numbered(json_object_get_string(iv)) ||
	    !luks2_str_u64(json_object_get_string(iv), &tweak))
		return fail("segment", key, "iv_tweak is not a number");
	if (size % v)
		return fail("segment", key,
			    "size is not a multiple of sector_size %" PRIu64, v);
	if (!luks2_refs_get(seg_refs, key, NULL))
		return fail("segment", key, "no digest");
	return 0;
}

/* The members every segment has; *size 0 for "dynamic". */
static int segment_common(json_object *seg, const char *key, uint64_t *size)
{
	json_object *type, *off, *sz, *flags;
	uint64_t offset;

	if (!named("segment", key))
		return -EINVAL;
	if (!(type = need_str(seg, "segment", key, "", "type")) ||
	    !(off = need_str(seg, "segment", key, "", "offset")) ||
	    !(sz = need_str(seg, "segment", key, "", "size")))
		return -EINVAL;
	if (!luks2_numbered(json_object_get_string(off)) ||
	    !luks2_str_u64(json_object_get_string(off), &offset))
		return fail("segment", key, "offset is not a number");
	*size = 0;
	if (strcmp(json_object_get_string(sz), "dynamic") &&
	    (!luks2_numbered(json_object_get_string(sz)) ||
	     !luks2_str_u64(json_object_get_string(sz), size) || !*size))
		return fail("segment", key,
			    "size is neither \"dynamic\" nor a number above 0");
	if (offset % 512)
		return fail("segment", key, "offset is not a multiple of 512");
	if (*size % 512)
		return fail("segment", key, "size is not a multiple of 512");
	if (luks2_member(seg, "flags", &flags)) {
		if (!json_object_is_type(flags, json_type_array))
			return fail("segment", key, "flags is not an array");
		if (strings_only(flags, "segment", key, "flags"))
			return -EINVAL;
	}
	return 0;
}

static int cmp_interval(const void *a, const void *b)
{
	const struct interval *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/*
 * Sorted by offset, an interval overlaps an earlier one exactly when it
 * starts before the furthest end so far: libcryptsetup's pairwise test
 * (one starts inside the other) without the n^2 pairs.  what: "segment"
 * or "keyslot"; ends are exclusive, UINT64_MAX length is unbounded.
 */
static int overlaps(struct interval *ix, size_t n, const char *what)
{
	const struct interval *far = NULL;
	uint64_t end = 0;
	char a[16], b[16], nb[24];

	qsort(ix, n, sizeof(*ix), cmp_interval);
	for (size_t i = 0; i < n; i++) {
		uint64_t e = ix[i].length == UINT64_MAX ?
				     UINT64_MAX :
				     ix[i].offset + ix[i].length;

		if (far && ix[i].offset < end) {
			snprintf(a, sizeof(a), "%d", ix[i].id);
			snprintf(b, sizeof(b), "%d", far->id);
			return fail(what, ix[i].name ?: a, "%soverlaps %s %s",
				    ix[i].name ? "area " : "", what,
				    far->name ? printable(far->name, nb,
							  sizeof(nb)) :
						b);
		}
		if (!far || e > end) {
			end = e;
			far = &ix[i];
		}
	}
	return 0;
}

/* validate_segment_intervals over the regular segments 0..n-1. */
static int segment_intervals(json_object *segments, int n)
{
	struct interval *ix = calloc((size_t)n, sizeof(*ix));
	char key[16];
	int ret = 0;

	if (!ix)
		return -ENOMEM;
	for (int i = 0; !ret && i < n; i++) {
		json_object *s, *size;

		snprintf(key, sizeof(key), "%u", i);
		if (!luks2_member(segments, key, &s)) {
			ret = fail("segments", NULL, "segment %d is missing", i);
			break;
		}
		luks2_member(s, "size", &size);
		ix[i] = (struct interval){ .id = i,
					   .offset = luks2_u64_of(
						   luks2_json_get(s, "offset")),
					   .length = luks2_u64_of(size) ?:
							     UINT64_MAX };
		if (ix[i].length == UINT64_MAX && i != n - 1)
			ret = fail("segment", key,
				   "only the last regular segment may be dynamic");
		/* with two or more, every fixed end must be representable */
		else if (n > 1 && ix[i].length != UINT64_MAX &&
			 ix[i].offset > UINT64_MAX - ix[i].length)
			ret = fail("segment", key, "offset + size overflows");
	}
	if (!ret)
		ret = overlaps(ix, (size_t)n, "segment");
	free(ix);
	return ret;
}

/* validate_reencrypt_segments: under an online reencryption, the backup
 * segments and what the regular segments may be. */
static bool same_segment(json_object *a, json_object *b)
{
	const char *ta = luks2_json_str(a, "type"), *tb = luks2_json_str(b, "type");
	json_object *sa, *sb;

	if (!ta || !tb || strcmp(ta, tb))
		return false;
	if (strcmp(ta, "crypt"))
		return true;
	luks2_member(a, "sector_size", &sa);
	luks2_member(b, "sector_size", &sb);
	return (json_object_is_type(sa, json_type_int) ?
			json_object_get_int(sa) : 512) ==
		       (json_object_is_type(sb, json_type_int) ?
				json_object_get_int(sb) : 512) &&
	       !strcmp(luks2_json_str(a, "encryption") ?: "null",
		       luks2_json_str(b, "encryption") ?: "null");
}

static int reencrypt_segments(json_object *j, json_object *segments,
			      int first_backup, int count)
{
	json_object *s, *final = NULL, *previous = NULL;
	char key[16];
	bool candidate;

	if (!(requirements(j, &candidate) & REQ_ONLINE_REENCRYPT))
		return 0;
	for (int i = first_backup; i < count; i++) {
		snprintf(key, sizeof(key), "%u", i);
		luks2_member(segments, key, &s);
		if (luks2_segment_flag(s, "backup-final", 0))
			final = s;
		else if (luks2_segment_flag(s, "backup-previous", 0))
			previous = s;
	}
	if (!final || !previous)
		return fail("segments", NULL,
			    "reencryption without backup-final and backup-previous segments");
	for (int i = 0; i < first_backup; i++) {
		snprintf(key, sizeof(key), "%u", i);
		luks2_member(segments, key, &s);
		if (luks2_segment_flag(s, "in-reencryption", 0) ?
			    !same_segment(s, final) :
			    !same_segment(s, final) && !same_segment(s, previous))
			return fail("segment", key,
				    "matches no backup segment of the reencryption");
	}
	return 0;
}

/* The segments: each one, their order and overlaps, the reencryption. */
static int check_segments(json_object *j)
{
	json_object *segments, *digests;
	struct luks2_refs *refs;
	int count, first_backup = -1, ret = 0;
	char key[16];

	segments = need(j, NULL, NULL, "", "segments", json_type_object);
	if (!segments)
		return -EINVAL;
	count = json_object_object_length(segments);
	if (count < 1)
		return fail("segments", NULL, "there is none");
	if (!luks2_member(j, "digests", &digests))
		return fail(NULL, NULL, "digests is missing");
	refs = luks2_refs_new(digests, "segments");
	if (!refs)
		return -ENOMEM;
	json_object_object_foreach(segments, k, seg)
	{
		uint64_t size;
		int i = atoi(k);

		ret = segment_common(seg, k, &size);
		if (!ret && luks2_segment_flag(seg, "backup-", 7)) {
			if (first_backup < 0 || i < first_backup)
				first_backup = i;
		} else if (!ret && first_backup >= 0 && i >= first_backup) {
			ret = fail("segment", k,
				   "a regular segment after backup segment %d",
				   first_backup);
		}
		if (!ret && !strcmp(luks2_json_str(seg, "type"), "crypt"))
			ret = crypt_segment(seg, k, size, refs);
		if (ret)
			break;
	}
	luks2_refs_free(refs);
	if (ret)
		return ret;
	if (first_backup == 0)
		return fail("segment", "0", "a backup segment (no regular segment)");
	if (first_backup >= count)
		return fail("segments", NULL, "a gap before backup segment %d",
			    first_backup);
	if (first_backup < 0)
		first_backup = count;
	ret = segment_intervals(segments, first_backup);
	for (int i = first_backup; !ret && i < count; i++) {
		snprintf(key, sizeof(key), "%u", i);
		if (!luks2_member(segments, key, &digests))
			ret = fail("segments", NULL, "segment %d is missing", i);
	}
	return ret ? ret : reencrypt_segments(j, segments, first_backup, count);
}

/* ---- keyslots, config, areas, size ---- */

static int check_keyslots(json_object *j)
{
	json_object *keyslots, *ks;

	keyslots = need(j, NULL, NULL, "", "keyslots", json_type_object);
	if (!keyslots)
		return -EINVAL;
	json_object_object_foreach(keyslots, key, val)
	{
		if (!named("keyslot", key))
			return -EINVAL;
		if (!need_str(val, "keyslot", key, "", "type") ||
		    !(ks = need(val, "keyslot", key, "", "key_size",
				json_type_int)))
			return -EINVAL;
		if (!is_u32(ks))
			return fail("keyslot", key, "key_size is out of range");
	}
	return 0;
}

/* json_segments_get_minimal_offset: the lowest regular segment offset (0
 * if one is 0: a detached header). */
static uint64_t min_segment_offset(json_object *segments)
{
	uint64_t min = UINT64_MAX, v;

	json_object_object_foreach(segments, k, seg)
	{
		(void)k;
		if (luks2_segment_flag(seg, "backup-", 7))
			continue;
		v = luks2_u64_of(luks2_json_get(seg, "offset"));
		if (!v)
			return 0;
		if (v < min)
			min = v;
	}
	return min;
}

static bool legal_metadata_size(uint64_t s)
{
	for (uint64_t m = DMT_LUKS2_DEFAULT_METADATA;
	     m <= DMT_LUKS2_MAX_METADATA; m *= 2)
		if (s == m)
			return true;
	return false;
}

static int check_config(json_object *j)
{
	json_object *cfg, *js, *ks, *flags;
	uint64_t json_size, keyslots_size, metadata, data;

	if (!(cfg = need(j, NULL, NULL, "", "config", json_type_object)) ||
	    !(js = need_str(cfg, "config", NULL, "", "json_size")))
		return -EINVAL;
	if (!luks2_str_u64(json_object_get_string(js), &json_size))
		return fail("config", NULL, "json_size is not a number");
	if (!(ks = need_str(cfg, "config", NULL, "", "keyslots_size")))
		return -EINVAL;
	if (!luks2_str_u64(json_object_get_string(ks), &keyslots_size))
		return fail("config", NULL, "keyslots_size is not a number");
	/* wraps as in libcryptsetup; the size check below catches it */
	metadata = json_size + DMT_LUKS2_BIN_HDR_SIZE;
	if (!legal_metadata_size(metadata))
		return fail("config", NULL,
			    "json_size %" PRIu64 " is not that of a legal header size",
			    json_size);
	if (keyslots_size % LUKS2_AREA_ALIGN || keyslots_size > MAX_KEYSLOTS_AREA)
		return fail("config", NULL,
			    "keyslots_size %" PRIu64 " is not a multiple of 4096 up to 128 MiB",
			    keyslots_size);
	data = min_segment_offset(luks2_json_get(j, "segments"));
	if (data && (data < keyslots_size || data - keyslots_size < 2 * metadata))
		return fail("config", NULL,
			    "keyslots_size %" PRIu64 " does not fit below the data offset %" PRIu64,
			    keyslots_size, data);
	if (luks2_member(cfg, "flags", &flags)) {
		if (!json_object_is_type(flags, json_type_array))
			return fail("config", NULL, "flags is not an array");
		if (strings_only(flags, "config", NULL, "flags"))
			return -EINVAL;
	}
	return 0;
}

/* One keyslot's area into *ix (hdr_validate_areas). */
static int area_of(json_object *ks, const char *key, struct interval *ix)
{
	json_object *area, *off, *size;

	if (!(area = need(ks, "keyslot", key, "", "area", json_type_object)) ||
	    !need_str(area, "keyslot", key, "area.", "type") ||
	    !(off = need_str(area, "keyslot", key, "area.", "offset")) ||
	    !(size = need_str(area, "keyslot", key, "area.", "size")))
		return -EINVAL;
	if (!luks2_numbered(json_object_get_string(off)) ||
	    !luks2_str_u64(json_object_get_string(off), &ix->offset))
		return fail("keyslot", key, "area.offset is not a number");
	if (!luks2_numbered(json_object_get_string(size)) ||
	    !luks2_str_u64(json_object_get_string(size), &ix->length))
		return fail("keyslot", key, "area.size is not a number");
	ix->name = key;
	return 0;
}

/* Areas inside [2 * metadata, 2 * metadata + keyslots_size), no two
 * overlapping (validate_intervals). */
static int check_areas(json_object *j)
{
	json_object *keyslots = luks2_json_get(j, "keyslots");
	uint64_t metadata = luks2_u64_of(luks2_json_get(j, "config.json_size")) +
			    DMT_LUKS2_BIN_HDR_SIZE;
	uint64_t end = 2 * metadata +
		       luks2_u64_of(luks2_json_get(j, "config.keyslots_size"));
	size_t n = (size_t)json_object_object_length(keyslots), i = 0;
	struct interval *ix;
	int ret = 0;

	if (!n)
		return 0;
	ix = calloc(n, sizeof(*ix));
	if (!ix)
		return -ENOMEM;
	json_object_object_foreach(keyslots, key, ks)
	{
		struct interval *a = &ix[i++];

		ret = area_of(ks, key, a);
		if (!ret && a->offset < 2 * metadata)
			ret = fail("keyslot", key,
				   "area.offset %" PRIu64 " is inside the metadata",
				   a->offset);
		else if (!ret && !a->length)
			ret = fail("keyslot", key, "area.size is 0");
		else if (!ret && (a->offset > UINT64_MAX - a->length ||
				  a->offset + a->length > end))
			ret = fail("keyslot", key,
				   "area ends past the keyslots area (%" PRIu64 ")",
				   end);
		if (ret)
			break;
	}
	if (!ret)
		ret = overlaps(ix, n, "keyslot");
	free(ix);
	return ret;
}

/* The serialised metadata fits the JSON area the binary header gives. */
static int check_json_size(json_object *j, uint64_t json_area_size)
{
	uint64_t want = luks2_u64_of(luks2_json_get(j, "config.json_size"));
	size_t len = strlen(json_object_to_json_string_ext(
		j, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));

	if (want != json_area_size)
		return fail("config", NULL,
			    "json_size %" PRIu64 " is not the header's %" PRIu64,
			    want, json_area_size);
	if (len > want)
		return fail("config", NULL,
			    "the metadata (%zu bytes) does not fit json_size",
			    len);
	return 0;
}

/* ---- the keyslot types libcryptsetup knows ---- */

static int luks2_kdf(json_object *kdf, const char *key)
{
	int count = json_object_object_length(kdf);
	json_object *t = need_str(kdf, "keyslot", key, "kdf.", "type");
	const char *type;

	if (!t)
		return -EINVAL;
	type = json_object_get_string(t);
	if (!strcmp(type, "pbkdf2")) {
		/* type, salt, hash, iterations only */
		if (count != 4)
			return fail("keyslot", key, "kdf has %d members, pbkdf2 takes 4",
				    count);
		if (!need_str(kdf, "keyslot", key, "kdf.", "hash") ||
		    !need(kdf, "keyslot", key, "kdf.", "iterations",
			  json_type_int) ||
		    !need_str(kdf, "keyslot", key, "kdf.", "salt"))
			return -EINVAL;
	} else if (!strcmp(type, "argon2i") || !strcmp(type, "argon2id")) {
		/* type, salt, time, memory, cpus only */
		if (count != 5)
			return fail("keyslot", key, "kdf has %d members, %s takes 5",
				    count, type);
		if (!need(kdf, "keyslot", key, "kdf.", "time", json_type_int) ||
		    !need(kdf, "keyslot", key, "kdf.", "memory", json_type_int) ||
		    !need(kdf, "keyslot", key, "kdf.", "cpus", json_type_int) ||
		    !need_str(kdf, "keyslot", key, "kdf.", "salt"))
			return -EINVAL;
	}
	/* another KDF passes here and fails when the keyslot is opened */
	return 0;
}

/* luks2_keyslot_validate */
static int luks2_keyslot(json_object *ks, const char *key)
{
	json_object *kdf, *af, *area, *t;

	if (!(kdf = need(ks, "keyslot", key, "", "kdf", json_type_object)) ||
	    !(af = need(ks, "keyslot", key, "", "af", json_type_object)) ||
	    !(area = need(ks, "keyslot", key, "", "area", json_type_object)) ||
	    luks2_kdf(kdf, key))
		return -EINVAL;
	if (!(t = need_str(af, "keyslot", key, "af.", "type")))
		return -EINVAL;
	if (strcmp(json_object_get_string(t), "luks1"))
		return fail("keyslot", key, "af.type is not \"luks1\"");
	if (!need_str(af, "keyslot", key, "af.", "hash") ||
	    !need(af, "keyslot", key, "af.", "stripes", json_type_int) ||
	    !(t = need_str(area, "keyslot", key, "area.", "type")))
		return -EINVAL;
	if (strcmp(json_object_get_string(t), "raw"))
		return fail("keyslot", key, "area.type is not \"raw\"");
	if (!need_str(area, "keyslot", key, "area.", "encryption") ||
	    !need(area, "keyslot", key, "area.", "key_size", json_type_int) ||
	    !need_str(area, "keyslot", key, "area.", "offset") ||
	    !need_str(area, "keyslot", key, "area.", "size"))
		return -EINVAL;
	return 0;
}

/* reenc_keyslot_validate */
static int reencrypt_keyslot(json_object *ks, const char *key)
{
	json_object *area = luks2_json_get(ks, "area"), *v, *mode, *dir;
	const char *type = luks2_json_str(area, "type");
	uint64_t shift;

	if (!type || !(v = need(ks, "keyslot", key, "", "key_size",
				json_type_int)) ||
	    !(mode = need_str(ks, "keyslot", key, "", "mode")) ||
	    !(dir = need_str(ks, "keyslot", key, "", "direction")))
		return -EINVAL;
	if (!is_u32(v) || json_object_get_int64(v) != 1)
		return fail("keyslot", key, "key_size of a reencrypt keyslot is not 1");
	if (strcmp(json_object_get_string(mode), "reencrypt") &&
	    strcmp(json_object_get_string(mode), "encrypt") &&
	    strcmp(json_object_get_string(mode), "decrypt"))
		return fail("keyslot", key, "mode is not reencrypt, encrypt or decrypt");
	if (strcmp(json_object_get_string(dir), "forward") &&
	    strcmp(json_object_get_string(dir), "backward"))
		return fail("keyslot", key, "direction is not forward or backward");
	if (!strcmp(type, "checksum") || !strcmp(type, "datashift-checksum")) {
		if (!need_str(area, "keyslot", key, "area.", "hash") ||
		    !(v = need(area, "keyslot", key, "area.", "sector_size",
			       json_type_int)))
			return -EINVAL;
		if (!is_u32(v) || json_object_get_int64(v) < 512 ||
		    (json_object_get_int64(v) & (json_object_get_int64(v) - 1)))
			return fail("keyslot", key,
				    "area.sector_size is not a power of 2 from 512");
	} else if (!strcmp(type, "datashift") ||
		   !strcmp(type, "datashift-journal")) {
		if (!(v = need_str(area, "keyslot", key, "area.", "shift_size")))
			return -EINVAL;
		shift = luks2_u64_of(v);
		if (!shift || shift % 512)
			return fail("keyslot", key,
				    "area.shift_size is not a multiple of 512 above 0");
	}
	return 0;
}

/* LUKS2_keyslots_validate: the types' own checks, one digest per luks2
 * keyslot, one reencrypt keyslot exactly when reencryption is required. */
static int check_keyslot_types(json_object *j)
{
	json_object *keyslots = luks2_json_get(j, "keyslots");
	struct luks2_refs *refs;
	unsigned int reencrypt = 0, n;
	const char *last = NULL;
	bool candidate;
	uint32_t reqs = requirements(j, &candidate);
	char name[16];
	int ret = 0;

	refs = luks2_refs_new(luks2_json_get(j, "digests"), "keyslots");
	if (!refs)
		return -ENOMEM;
	json_object_object_foreach(keyslots, key, ks)
	{
		const char *type = luks2_json_str(ks, "type");

		if (!strcmp(type, "luks2")) {
			ret = luks2_keyslot(ks, key);
			/* the digest lists the keyslot by atoi(name) */
			snprintf(name, sizeof(name), "%u", (unsigned int)atoi(key));
			n = ret ? 1 : luks2_refs_get(refs, name, NULL);
			if (n != 1)
				ret = n ? fail("keyslot", key, "in %u digests", n) :
					  fail("keyslot", key, "no digest");
		} else if (!strcmp(type, "reencrypt")) {
			ret = reencrypt_keyslot(ks, key);
			reencrypt++;
			last = key;
		}
		if (ret)
			break;
	}
	luks2_refs_free(refs);
	if (ret)
		return ret;
	if ((reqs & REQ_ONLINE_REENCRYPT) && !reencrypt)
		return fail("config", NULL,
			    "an online-reencrypt requirement without a reencrypt keyslot");
	if (reencrypt && !candidate)
		return fail("keyslot", last,
			    "a reencrypt keyslot without an online-reencrypt requirement");
	if (reencrypt > 1)
		return fail("keyslot", last, "a second reencrypt keyslot");
	return 0;
}

/* ---- the whole ---- */

int luks2_hdr_validate(json_object *j, uint64_t json_area_size,
		       const char **why)
{
	int (*const checks[])(json_object *) = {
		check_requirements, check_tokens, check_digests, check_segments,
		check_keyslots,	    check_config, check_areas,
	};
	int ret = 0;

	why_buf[0] = '\0';
	if (!json_object_is_type(j, json_type_object))
		ret = fail(NULL, NULL, "the metadata is not a JSON object");
	for (size_t i = 0; !ret && i < sizeof(checks) / sizeof(checks[0]); i++)
		ret = checks[i](j);
	if (!ret)
		ret = check_json_size(j, json_area_size);
	if (!ret)
		ret = check_keyslot_types(j);
	if (ret == -ENOMEM)
		fail(NULL, NULL, "out of memory");
	*why = why_buf;
	return ret;
}

/*
 * LUKS2_hdr_repair: cryptsetup before 2.0.3 could leave the parameters of
 * a keyslot's previous KDF behind; a reader drops every kdf member its
 * type does not take (and validates again).
 */
void luks2_hdr_repair(json_object *j)
{
	static const char *const pbkdf2[] = { "type", "salt", "hash",
					      "iterations", NULL };
	static const char *const argon2[] = { "type", "salt", "time", "memory",
					      "cpus", NULL };
	json_object *keyslots;

	if (!luks2_member(j, "keyslots", &keyslots) ||
	    !json_object_is_type(keyslots, json_type_object))
		return;
	json_object_object_foreach(keyslots, key, ks)
	{
		json_object *kdf = luks2_json_get(ks, "kdf");
		const char *kt = luks2_json_str(kdf, "type");
		const char *type = luks2_json_str(ks, "type");
		const char *const *keep;

		(void)key;
		if (!type || strcmp(type, "luks2") || !kt ||
		    !json_object_is_type(kdf, json_type_object))
			continue;
		keep = !strcmp(kt, "pbkdf2") ? pbkdf2 :
		       !strcmp(kt, "argon2i") || !strcmp(kt, "argon2id") ? argon2 :
									   NULL;
		json_object_object_foreach(kdf, m, v)
		{
			size_t i = 0;

			(void)v;
			while (keep && keep[i] && strcmp(keep[i], m))
				i++;
			if (keep && !keep[i])
				json_object_object_del(kdf, m);
		}
	}
}

/* Makes text the per-thread reason again (a copy's, after the checks of
 * another copy reused the buffer). */
const char *luks2_why_keep(const char *text)
{
	if (text != why_buf)
		snprintf(why_buf, sizeof(why_buf), "%s", text);
	return why_buf;
}
