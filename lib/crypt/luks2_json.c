// SPDX-License-Identifier: MIT
/*
 * LUKS2 JSON metadata through json-c (formats.md, LUKS2 JSON): the objects
 * luksFormat writes, in its member order, 64-bit numbers as decimal
 * strings, binary values base64; and the checks a reader makes before it
 * trusts offsets and sizes.
 */
#include <errno.h>
#include <json-c/linkhash.h>
#include <openssl/crypto.h>
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

/* -1 for a character outside the alphabet, 64 for the padding '=' */
static int b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return c == '=' ? 64 : -1;
}

/* The next character that is not white space (NUL counts as white space,
 * as in libcryptsetup), or -2 at the end. */
static int b64_next(const char **p, size_t *left)
{
	while (*left && strchr(" \t\n\r", **p)) {
		(*p)++;
		(*left)--;
	}
	if (!*left)
		return -2;
	(*left)--;
	return b64_value(*(*p)++);
}

static bool b64_only_space(const char *p, size_t left)
{
	return b64_next(&p, &left) == -2;
}

/*
 * libcryptsetup 2.6.1's decoder (crypt_base64_decode): groups of four,
 * white space anywhere, '=' only as the last one or two characters of
 * the last group, unused bits zero, nothing but white space after it.
 */
int luks2_b64_decode(const char *in, size_t in_len, uint8_t **out,
		     size_t *out_len)
{
	uint8_t *buf = malloc(in_len / 4 * 3 + 3), *z = buf;
	int v[4], ret = -EINVAL;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		v[0] = b64_next(&in, &in_len);
		if (v[0] == -2) {
			ret = 0;
			break;
		}
		for (int i = 1; i < 4; i++)
			v[i] = b64_next(&in, &in_len);
		if (v[0] < 0 || v[1] < 0 || v[2] < 0 || v[3] < 0 ||
		    v[0] == 64 || v[1] == 64 || (v[2] == 64 && v[3] != 64))
			break;
		if (v[2] == 64 || v[3] == 64) {
			/* padding: the dropped bits are zero, nothing after */
			if ((v[2] == 64 ? v[1] & 15 : v[2] & 3) ||
			    !b64_only_space(in, in_len))
				break;
			*z++ = (uint8_t)(v[0] << 2 | v[1] >> 4);
			if (v[2] != 64)
				*z++ = (uint8_t)(v[1] << 4 | v[2] >> 2);
			ret = 0;
			break;
		}
		*z++ = (uint8_t)(v[0] << 2 | v[1] >> 4);
		*z++ = (uint8_t)(v[1] << 4 | v[2] >> 2);
		*z++ = (uint8_t)(v[2] << 6 | v[3]);
	}
	if (ret) {
		free(buf);
		return ret;
	}
	*out = buf;
	*out_len = (size_t)(z - buf);
	return 0;
}

int luks2_unbase64(const char *s, uint8_t *out, size_t max, size_t *len)
{
	uint8_t *buf;
	int ret;

	if (!s)
		return -EINVAL;
	ret = luks2_b64_decode(s, strlen(s), &buf, len);
	if (ret)
		return ret;
	if (*len > max)
		ret = -EINVAL;
	else
		memcpy(out, buf, *len);
	OPENSSL_cleanse(buf, *len);
	free(buf);
	return ret;
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

/* Member k of o when o is an object that has it (*v may be NULL: a JSON
 * null). */
bool luks2_member(json_object *o, const char *k, json_object **v)
{
	*v = NULL;
	return json_object_is_type(o, json_type_object) &&
	       json_object_object_get_ex(o, k, v);
}

/* Digits only (libcryptsetup's "numbered"; "" counts as numbered). */
bool luks2_numbered(const char *s)
{
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* strtoull, base 10, the whole string, no overflow (json_str_to_uint64:
 * it also takes the sign and white space strtoull does). */
bool luks2_str_u64(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long t;

	errno = 0;
	t = strtoull(s, &end, 10);
	if (*end || errno) {
		*v = 0;
		return false;
	}
	*v = t;
	return true;
}

/* A string member's value as a number as libcryptsetup reads it
 * (crypt_jobj_get_uint64): 0 when it is not one. */
uint64_t luks2_u64_of(json_object *o)
{
	uint64_t v = 0;

	if (json_object_is_type(o, json_type_string) ||
	    json_object_is_type(o, json_type_int))
		(void)luks2_str_u64(json_object_get_string(o), &v);
	return v;
}

/* Does the array hold the string s (LUKS2_array_jobj)? */
bool luks2_array_has(json_object *a, const char *s)
{
	size_t n = json_object_is_type(a, json_type_array) ?
			   json_object_array_length(a) :
			   0;

	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(a, i);

		if (json_object_is_type(e, json_type_string) &&
		    !strcmp(json_object_get_string(e), s))
			return true;
	}
	return false;
}

/* A segment flag: the whole string (len 0) or a prefix of len bytes. */
bool luks2_segment_flag(json_object *seg, const char *flag, size_t len)
{
	json_object *a, *e;
	size_t n;

	if (!luks2_member(seg, "flags", &a) ||
	    !json_object_is_type(a, json_type_array))
		return false;
	n = json_object_array_length(a);
	for (size_t i = 0; i < n; i++) {
		e = json_object_array_get_idx(a, i);
		if (json_object_is_type(e, json_type_string) &&
		    !(len ? strncmp(json_object_get_string(e), flag, len) :
			    strcmp(json_object_get_string(e), flag)))
			return true;
	}
	return false;
}

/* ---- which digests list a keyslot or a segment ---- */

struct luks2_ref {
	int first;		/* the first digest listing it (atoi of its key) */
	unsigned int count;	/* digests listing it */
	size_t last;		/* the last digest (ordinal) that counted */
};

struct luks2_refs {
	struct lh_table *names;	/* name -> struct luks2_ref */
	struct luks2_ref *refs;
};

void luks2_refs_free(struct luks2_refs *t)
{
	if (!t)
		return;
	if (t->names)
		lh_table_free(t->names);
	free(t->refs);
	free(t);
}

static size_t refs_total(json_object *digests, const char *member)
{
	json_object *a;
	size_t n = 0;

	json_object_object_foreach(digests, dk, d)
	{
		(void)dk;
		if (luks2_member(d, member, &a) &&
		    json_object_is_type(a, json_type_array))
			n += json_object_array_length(a);
	}
	return n;
}

/*
 * One pass over member ("keyslots" or "segments") of every digest, in
 * the object's order: lookups in constant time where libcryptsetup scans
 * every digest for every keyslot and segment (quadratic on a hostile
 * header).  The names point into digests, which must outlive the table.
 */
struct luks2_refs *luks2_refs_new(json_object *digests, const char *member)
{
	struct luks2_refs *t = calloc(1, sizeof(*t));
	size_t used = 0, ord = 0, total = refs_total(digests, member);
	struct luks2_ref *ref;
	json_object *a;

	if (!t || !(t->names = lh_kchar_table_new(64, NULL)) ||
	    !(t->refs = calloc(total + 1, sizeof(*t->refs)))) {
		luks2_refs_free(t);
		return NULL;
	}
	json_object_object_foreach(digests, dk, d)
	{
		size_t n = luks2_member(d, member, &a) &&
					   json_object_is_type(a, json_type_array) ?
				   json_object_array_length(a) :
				   0;

		ord++;
		for (size_t i = 0; i < n; i++) {
			json_object *e = json_object_array_get_idx(a, i);
			const char *name;

			if (!json_object_is_type(e, json_type_string))
				continue;
			name = json_object_get_string(e);
			if (!lh_table_lookup_ex(t->names, name, (void **)&ref)) {
				ref = &t->refs[used++];
				*ref = (struct luks2_ref){ .first = atoi(dk) };
				if (lh_table_insert(t->names, name, ref)) {
					luks2_refs_free(t);
					return NULL;
				}
			}
			if (ref->last != ord) {
				ref->last = ord;
				ref->count++;
			}
		}
	}
	return t;
}

/* Digests listing name; *first the first of them (-ENOENT: none). */
unsigned int luks2_refs_get(const struct luks2_refs *t, const char *name,
			    int *first)
{
	struct luks2_ref *ref;

	if (!lh_table_lookup_ex(t->names, name, (void **)&ref)) {
		if (first)
			*first = -ENOENT;
		return 0;
	}
	if (first)
		*first = ref->first;
	return ref->count;
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
