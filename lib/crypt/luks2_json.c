// SPDX-License-Identifier: MIT
/*
 * LUKS2 JSON metadata through json-c (formats.md, LUKS2 JSON): the objects
 * luksFormat writes, in its member order, 64-bit numbers as decimal
 * strings, binary values base64; and the checks a reader makes before it
 * trusts offsets and sizes.
 */
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/crypt/luks2_priv.h"

json_object *luks2_u64_obj(uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	return json_object_new_string(buf);
}

char *luks2_base64(const uint8_t *b, size_t len)
{
	char *out = malloc(4 * ((len + 2) / 3) + 1);

	if (out)
		EVP_EncodeBlock((unsigned char *)out, b, (int)len);
	return out;
}

int luks2_unbase64(const char *s, uint8_t *out, size_t max, size_t *len)
{
	size_t slen = strlen(s), pad = 0;
	uint8_t *tmp;
	int n;

	if (!slen || slen % 4 || slen / 4 * 3 > max + 2)
		return -EINVAL;
	tmp = malloc(slen / 4 * 3);
	if (!tmp)
		return -ENOMEM;
	n = EVP_DecodeBlock(tmp, (const unsigned char *)s, (int)slen);
	pad = (s[slen - 1] == '=') + (s[slen - 2] == '=');
	if (n < 0 || (size_t)n - pad > max) {
		free(tmp);
		return -EINVAL;
	}
	*len = (size_t)n - pad;
	memcpy(out, tmp, *len);
	free(tmp);
	return 0;
}

/* "a.b.c": nested members. */
json_object *luks2_json_get(json_object *j, const char *path)
{
	char buf[128], *save = NULL, *tok;

	if (strlen(path) >= sizeof(buf))
		return NULL;
	strcpy(buf, path);
	for (tok = strtok_r(buf, ".", &save); j && tok;
	     tok = strtok_r(NULL, ".", &save)) {
		if (!json_object_is_type(j, json_type_object) ||
		    !json_object_object_get_ex(j, tok, &j))
			return NULL;
	}
	return j;
}

const char *luks2_json_str(json_object *j, const char *path)
{
	json_object *o = luks2_json_get(j, path);

	return o && json_object_is_type(o, json_type_string) ?
		       json_object_get_string(o) :
		       NULL;
}

/* A decimal string (offsets and sizes) or, for small values, an int. */
int luks2_json_u64(json_object *j, const char *path, uint64_t *v)
{
	json_object *o = luks2_json_get(j, path);
	const char *s;
	char *end;

	if (o && json_object_is_type(o, json_type_int)) {
		int64_t i = json_object_get_int64(o);

		if (i < 0)
			return -EINVAL;
		*v = (uint64_t)i;
		return 0;
	}
	if (!o || !json_object_is_type(o, json_type_string))
		return -EINVAL;
	s = json_object_get_string(o);
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return *end || errno ? -EINVAL : 0;
}

static json_object *segment_new(const struct dmt_luks2_params *p,
				const char *cipher, uint64_t data_offset)
{
	json_object *s = json_object_new_object();

	json_object_object_add(s, "type", json_object_new_string("crypt"));
	json_object_object_add(s, "offset", luks2_u64_obj(data_offset));
	json_object_object_add(s, "size", json_object_new_string("dynamic"));
	json_object_object_add(s, "iv_tweak", json_object_new_string("0"));
	json_object_object_add(s, "encryption", json_object_new_string(cipher));
	json_object_object_add(s, "sector_size",
			       json_object_new_int((int)p->sector_size));
	return s;
}

static json_object *digest_new(const struct dmt_luks2_params *p,
			       const uint8_t *dsalt, const uint8_t *digest,
			       size_t digest_len)
{
	json_object *d = json_object_new_object(), *segs;
	char *salt64 = luks2_base64(dsalt, DMT_LUKS2_SALT_SIZE);
	char *dig64 = luks2_base64(digest, digest_len);

	segs = json_object_new_array();
	json_object_array_add(segs, json_object_new_string("0"));
	json_object_object_add(d, "type", json_object_new_string("pbkdf2"));
	json_object_object_add(d, "keyslots", json_object_new_array());
	json_object_object_add(d, "segments", segs);
	json_object_object_add(d, "hash",
			       json_object_new_string(p->digest_hash));
	json_object_object_add(d, "iterations",
			       json_object_new_int((int)p->digest_iterations));
	json_object_object_add(d, "salt", json_object_new_string(salt64));
	json_object_object_add(d, "digest", json_object_new_string(dig64));
	free(salt64);
	free(dig64);
	return d;
}

/* The metadata of a fresh header: no keyslot yet, one segment, digest. */
json_object *luks2_json_new(const struct dmt_luks2_params *p,
			    const char *cipher, size_t vk_len,
			    uint64_t data_offset, uint64_t metadata_size,
			    uint64_t keyslots_size, const uint8_t *dsalt,
			    const uint8_t *digest, size_t digest_len)
{
	json_object *j = json_object_new_object(), *o;

	(void)vk_len;
	json_object_object_add(j, "keyslots", json_object_new_object());
	json_object_object_add(j, "tokens", json_object_new_object());
	o = json_object_new_object();
	json_object_object_add(o, "0", segment_new(p, cipher, data_offset));
	json_object_object_add(j, "segments", o);
	o = json_object_new_object();
	json_object_object_add(o, "0",
			       digest_new(p, dsalt, digest, digest_len));
	json_object_object_add(j, "digests", o);
	o = json_object_new_object();
	json_object_object_add(o, "json_size",
			       luks2_u64_obj(metadata_size -
					     DMT_LUKS2_BIN_HDR_SIZE));
	json_object_object_add(o, "keyslots_size",
			       luks2_u64_obj(keyslots_size));
	json_object_object_add(j, "config", o);
	return j;
}

/* ---- validation ---- */

static bool is_obj(json_object *j, const char *path)
{
	json_object *o = luks2_json_get(j, path);

	return o && json_object_is_type(o, json_type_object);
}

static bool is_int(json_object *j, const char *path)
{
	json_object *o = luks2_json_get(j, path);

	return o && json_object_is_type(o, json_type_int);
}

static int validate_segment(json_object *seg, const char **why)
{
	uint64_t v, ss;

	if (!luks2_json_str(seg, "type")) {
		*why = "segments.type";
		return -EINVAL;
	}
	if (strcmp(luks2_json_str(seg, "type"), "crypt"))
		return 0; /* other segment types: not ours to judge */
	if (luks2_json_u64(seg, "offset", &v) || v % 512) {
		*why = "segments.offset";
		return -EINVAL;
	}
	if (!luks2_json_str(seg, "size") ||
	    (strcmp(luks2_json_str(seg, "size"), "dynamic") &&
	     (luks2_json_u64(seg, "size", &v) || v % 512))) {
		*why = "segments.size";
		return -EINVAL;
	}
	if (luks2_json_u64(seg, "iv_tweak", &v)) {
		*why = "segments.iv_tweak";
		return -EINVAL;
	}
	if (!luks2_json_str(seg, "encryption")) {
		*why = "segments.encryption";
		return -EINVAL;
	}
	if (!is_int(seg, "sector_size") ||
	    luks2_json_u64(seg, "sector_size", &ss) || ss < 512 || ss > 4096 ||
	    (ss & (ss - 1))) {
		*why = "segments.sector_size";
		return -EINVAL;
	}
	return 0;
}

static int validate_keyslot(json_object *ks, uint64_t area_lo,
			    uint64_t area_hi, const char **why)
{
	uint64_t off, size, v, stripes;
	const char *kdf = luks2_json_str(ks, "kdf.type");

	if (!luks2_json_str(ks, "type")) {
		*why = "keyslots.type";
		return -EINVAL;
	}
	if (luks2_json_u64(ks, "area.offset", &off) ||
	    luks2_json_u64(ks, "area.size", &size) || off % 512 ||
	    off < area_lo || size > area_hi - off || off > area_hi) {
		*why = "keyslots.area";
		return -EINVAL;
	}
	if (strcmp(luks2_json_str(ks, "type"), "luks2"))
		return 0;
	if (!is_int(ks, "key_size") || luks2_json_u64(ks, "key_size", &v) ||
	    !v || v > 512 || !is_int(ks, "area.key_size") ||
	    !luks2_json_str(ks, "area.encryption") || !is_int(ks, "af.stripes") ||
	    !luks2_json_str(ks, "af.hash")) {
		*why = "keyslots.key_size";
		return -EINVAL;
	}
	/* 4000 stripes (all cryptsetup writes or reads), and the split
	 * must fit its area */
	if (luks2_json_u64(ks, "af.stripes", &stripes) ||
	    stripes != DMT_LUKS2_STRIPES ||
	    dmt_luks2_af_sectors_size(v, DMT_LUKS2_STRIPES) > size) {
		*why = "keyslots.af";
		return -EINVAL;
	}
	if (!kdf || !luks2_json_str(ks, "kdf.salt") ||
	    (!strcmp(kdf, "pbkdf2") ?
		     !is_int(ks, "kdf.iterations") || !luks2_json_str(ks, "kdf.hash") :
		     !is_int(ks, "kdf.time") || !is_int(ks, "kdf.memory") ||
			     !is_int(ks, "kdf.cpus"))) {
		*why = "keyslots.kdf";
		return -EINVAL;
	}
	return 0;
}

static int validate_digest(json_object *d, const char **why)
{
	json_object *a = luks2_json_get(d, "keyslots");

	if (!luks2_json_str(d, "type") || !a ||
	    !json_object_is_type(a, json_type_array) ||
	    !(a = luks2_json_get(d, "segments")) ||
	    !json_object_is_type(a, json_type_array)) {
		*why = "digests";
		return -EINVAL;
	}
	if (strcmp(luks2_json_str(d, "type"), "pbkdf2"))
		return 0;
	if (!luks2_json_str(d, "hash") || !is_int(d, "iterations") ||
	    !luks2_json_str(d, "salt") || !luks2_json_str(d, "digest")) {
		*why = "digests.pbkdf2";
		return -EINVAL;
	}
	return 0;
}

static int validate_sections(json_object *j, uint64_t area_lo,
			     uint64_t area_hi, const char **why)
{
	uint64_t off;
	int ret = 0;

	json_object_object_foreach(luks2_json_get(j, "segments"), sk, seg)
	{
		(void)sk;
		ret = validate_segment(seg, why);
		if (ret)
			return ret;
		/* data must not start inside the keyslots area */
		if (!luks2_json_u64(seg, "offset", &off) && off &&
		    off < area_hi) {
			*why = "segments.offset";
			return -EINVAL;
		}
	}
	json_object_object_foreach(luks2_json_get(j, "keyslots"), kk, ks)
	{
		char *end;
		unsigned long n = strtoul(kk, &end, 10);

		if (*end || n >= DMT_LUKS2_KEYSLOTS_MAX || !ks) {
			*why = "keyslots";
			return -EINVAL;
		}
		ret = validate_keyslot(ks, area_lo, area_hi, why);
		if (ret)
			return ret;
	}
	json_object_object_foreach(luks2_json_get(j, "digests"), dk, d)
	{
		(void)dk;
		ret = validate_digest(d, why);
		if (ret)
			return ret;
	}
	return 0;
}

int luks2_json_validate(json_object *j, uint64_t hdr_size,
			uint64_t *keyslots_size, const char **why)
{
	static const char *const tops[] = { "keyslots", "tokens", "segments",
					    "digests", "config" };
	uint64_t v;

	for (size_t i = 0; i < sizeof(tops) / sizeof(tops[0]); i++) {
		if (!is_obj(j, tops[i])) {
			*why = tops[i];
			return -EINVAL;
		}
	}
	if (luks2_json_u64(j, "config.json_size", &v) ||
	    v != hdr_size - DMT_LUKS2_BIN_HDR_SIZE) {
		*why = "config.json_size";
		return -EINVAL;
	}
	if (luks2_json_u64(j, "config.keyslots_size", keyslots_size) ||
	    *keyslots_size % LUKS2_AREA_ALIGN ||
	    *keyslots_size > (UINT64_MAX >> 2)) {
		*why = "config.keyslots_size";
		return -EINVAL;
	}
	return validate_sections(j, 2 * hdr_size,
				 2 * hdr_size + *keyslots_size, why);
}
