// SPDX-License-Identifier: MIT
/*
 * LUKS2 headers: a new header's metadata and volume key, loading (the
 * newer valid copy of two), keyslots (add and unlock), writing the header
 * area, accessors.  formats.md, LUKS2, says what every field means.
 */
#include <dmt/luks2.h>

#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include <dmt/crypt.h>
#include "lib/common/reserved.h"
#include "lib/crypt/crypt_priv.h"
#include <dmt/io.h>
#include <dmt/reason.h>

#include "lib/crypt/luks2_priv.h"

/* Writes of the random keyslots area, in pieces of this size. */
#define FILL_CHUNK (4u << 20)
#define DEFAULT_DETACHED_AREA (16u << 20)

static bool legal_metadata_size(uint64_t s)
{
	return s >= DMT_LUKS2_DEFAULT_METADATA && s <= DMT_LUKS2_MAX_METADATA &&
	       !(s & (s - 1));
}

void dmt_luks2_free(struct dmt_luks2 *h)
{
	if (!h)
		return;
	json_object_put(h->jobj);
	dmt_secure_free(h->vk);
	for (int i = 0; i < DMT_LUKS2_KEYSLOTS_MAX; i++)
		free(h->material[i]);
	OPENSSL_cleanse(h, sizeof(*h));
	free(h);
}

/* ---- create ---- */

#define MAX_KEYSLOTS_SIZE (128u << 20)

/* keyslots_size as luksFormat 2.6.1 settles it (formats.md, LUKS2). */
static int keyslots_geometry(struct dmt_luks2_params *p, struct dmt_reason *r)
{
	uint64_t min = 2 * p->metadata_size, ks = p->keyslots_size;

	if (ks % LUKS2_AREA_ALIGN || ks > MAX_KEYSLOTS_SIZE) {
		dmt_reason_set(r, -EINVAL, DMT_REASON_BAD_VALUE,
			       "keyslots_size", ks);
		if (r)
			r->max = MAX_KEYSLOTS_SIZE;
		return -EINVAL;
	}
	if (p->data_offset && p->data_offset < min) {
		dmt_reason_set(r, -EINVAL, DMT_REASON_TOO_SMALL, "data_offset",
			       p->data_offset);
		if (r)
			r->min = min;
		return -EINVAL;
	}
	if (!ks && p->data_offset)
		ks = (p->data_offset - min) / LUKS2_AREA_ALIGN *
		     LUKS2_AREA_ALIGN;
	if (ks > MAX_KEYSLOTS_SIZE)
		ks = MAX_KEYSLOTS_SIZE;
	if (!ks)
		ks = DEFAULT_DETACHED_AREA - min;
	/* a data offset below the requested area shrinks the area */
	if (p->data_offset && ks + min > p->data_offset)
		ks = (p->data_offset - min) / LUKS2_AREA_ALIGN *
		     LUKS2_AREA_ALIGN;
	if (!ks)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_TOO_SMALL,
				      "keyslots_size", 0);
	p->keyslots_size = ks;
	return 0;
}

/* Fills in the defaults luksFormat uses on a file; checks the rest. */
static int create_geometry(struct dmt_luks2_params *p, struct dmt_reason *r)
{
	if (!p->sector_size)
		p->sector_size = 4096;
	if (p->sector_size < 512 || p->sector_size > 4096 ||
	    (p->sector_size & (p->sector_size - 1)))
		return dmt_reason_set(r, -EINVAL, DMT_REASON_BAD_VALUE,
				      "sector_size", p->sector_size);
	if (!p->metadata_size)
		p->metadata_size = DMT_LUKS2_DEFAULT_METADATA;
	if (!legal_metadata_size(p->metadata_size))
		return dmt_reason_set(r, -EINVAL, DMT_REASON_BAD_VALUE,
				      "metadata_size", p->metadata_size);
	if (!p->data_offset && !p->detached)
		p->data_offset = DMT_LUKS2_DEFAULT_DATA_OFFSET;
	/* crypt_set_data_offset's rule, whatever the sector size */
	if (p->data_offset % LUKS2_AREA_ALIGN) {
		dmt_reason_set(r, -EINVAL, DMT_REASON_NOT_ALIGNED,
			       "data_offset", p->data_offset);
		if (r)
			r->max = LUKS2_AREA_ALIGN;
		return -EINVAL;
	}
	return keyslots_geometry(p, r);
}

static int create_names(struct dmt_luks2 *h, const struct dmt_luks2_params *p,
			struct dmt_reason *r)
{
	uuid_t u;

	if (p->uuid) {
		if (strlen(p->uuid) != DMT_LUKS2_UUID_SIZE ||
		    uuid_parse(p->uuid, u))
			return dmt_reason_set(r, -EINVAL, DMT_REASON_BAD_VALUE,
					      "uuid", 0);
		/* stored lower-case, as libuuid prints it */
		uuid_unparse_lower(u, h->bin.uuid);
	} else {
		uuid_generate_random(u);
		uuid_unparse_lower(u, h->bin.uuid);
	}
	if ((p->label && strlen(p->label) > DMT_LUKS2_LABEL_MAX))
		return dmt_reason_set(r, -EINVAL, DMT_REASON_TOO_LARGE, "label",
				      strlen(p->label));
	if ((p->subsystem && strlen(p->subsystem) > DMT_LUKS2_LABEL_MAX))
		return dmt_reason_set(r, -EINVAL, DMT_REASON_TOO_LARGE,
				      "subsystem", strlen(p->subsystem));
	strcpy(h->bin.label, p->label ? p->label : "");
	strcpy(h->bin.subsystem, p->subsystem ? p->subsystem : "");
	strcpy(h->bin.csum_alg, "sha256");
	return 0;
}

/* Volume key (given or random) and its digest. */
static int create_key(struct dmt_luks2 *h, struct dmt_luks2_params *p,
		      const struct dmt_crypt_cipher *ci, struct dmt_reason *r)
{
	uint8_t dsalt[DMT_LUKS2_SALT_SIZE], digest[EVP_MAX_MD_SIZE];
	const EVP_MD *md;
	int ret;

	h->vk_len = p->volume_key_size ? p->volume_key_size :
					 ci->default_key_size;
	ret = dmt_crypt_check_key_size(ci, h->vk_len, r);
	if (ret)
		return ret;
	h->vk = dmt_secure_alloc(h->vk_len);
	if (!h->vk)
		return -ENOMEM;
	if (p->volume_key)
		memcpy(h->vk, p->volume_key, h->vk_len);
	else if ((ret = dmt_random_bytes(h->vk, h->vk_len)))
		return ret;
	if (!p->digest_hash)
		p->digest_hash = "sha256";
	md = dmt_crypt_hash_usable(p->digest_hash) ?
		     EVP_get_digestbyname(p->digest_hash) : NULL;
	if (!md) {
		dmt_reason_set(r, -EINVAL, DMT_REASON_UNKNOWN_ALG,
			       "digest_hash", 0);
		if (r)
			r->name = p->digest_hash;
		return -EINVAL;
	}
	/* luksFormat benchmarks it (125 ms) unless told not to */
	ret = p->digest_iterations ? 0 :
	      luks2_digest_iterations(p->digest_hash, h->vk_len,
				      &p->digest_iterations);
	if (ret)
		return dmt_reason_set(r, ret, DMT_REASON_LUKS2_KDF, "pbkdf", 0);
	ret = dmt_random_bytes(dsalt, sizeof(dsalt));
	if (!ret)
		ret = luks2_digest_compute(p->digest_hash, p->digest_iterations,
					   h->vk, h->vk_len, dsalt, digest,
					   (size_t)EVP_MD_get_size(md));
	if (!ret)
		h->jobj = luks2_json_new(p, ci->name, h->vk_len, p->data_offset,
					 p->metadata_size, p->keyslots_size,
					 dsalt, digest,
					 (size_t)EVP_MD_get_size(md));
	return ret ? ret : h->jobj ? 0 : -ENOMEM;
}

void dmt_luks2_params_init(struct dmt_luks2_params *p)
{
	*p = (struct dmt_luks2_params){0};
}

int dmt_luks2_create(const struct dmt_luks2_params *in, struct dmt_luks2 **out,
		     struct dmt_reason *r)
{
	struct dmt_luks2_params p = *in;
	struct dmt_crypt_cipher ci;
	struct dmt_luks2 *h;
	int ret;

	*out = NULL;
	ret = DMT_CHECK_RESERVED(in, r);
	if (ret)
		return ret;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	if (!p.cipher)
		p.cipher = "aes-xts-plain64";
	ret = dmt_crypt_cipher_lookup(p.cipher, &ci, r);
	if (!ret)
		ret = create_geometry(&p, r);
	if (!ret)
		ret = create_names(h, &p, r);
	if (!ret)
		ret = create_key(h, &p, &ci, r);
	if (!ret)
		ret = dmt_random_bytes(h->bin.salt, LUKS2_SALT_LEN);
	if (!ret)
		ret = dmt_random_bytes(h->salt2, LUKS2_SALT_LEN);
	if (ret) {
		dmt_luks2_free(h);
		return ret;
	}
	h->bin.hdr_size = p.metadata_size;
	h->keyslots_size = p.keyslots_size;
	h->data_offset = p.data_offset;
	h->loaded_copy = -1;
	*out = h;
	return 0;
}

/* ---- load ---- */

static bool nul_only(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * The JSON area -> the metadata (parse_and_validate_json): one object
 * from the first byte, only NULs after it, libcryptsetup's checks; on a
 * refusal its repair and the checks once more.
 */
static json_object *parse_area(const char *area, size_t len,
			       const char **why)
{
	struct json_tokener *tok = json_tokener_new();
	json_object *j;
	size_t end;

	if (!tok)
		return NULL;
	j = json_tokener_parse_ex(tok, area, (int)len);
	end = j ? json_tokener_get_parse_end(tok) : 0;
	json_tokener_free(tok);
	if (!j) {
		*why = "json: not valid JSON";
		return NULL;
	}
	if (area[0] != '{')
		*why = "json: the text does not start with '{'";
	else if (end >= len)
		*why = "json: no NUL after the text";
	else if (!nul_only(area + end, len - end))
		*why = "json: bytes other than NUL after the text";
	else if (!json_object_is_type(j, json_type_object))
		*why = "json: not a JSON object";
	else if (!luks2_hdr_validate(j, len, why))
		return j;
	else {
		luks2_hdr_repair(j);
		if (!luks2_hdr_validate(j, len, why))
			return j;
	}
	json_object_put(j);
	return NULL;
}

/* A copy's state, as libcryptsetup names them. */
enum copy_state { COPY_OK, COPY_OBSOLETE, COPY_FAIL, COPY_FAIL_IO };

struct copy {
	enum copy_state state;
	struct luks2_bin bin;
	json_object *j;
	const char *why;	/* static text, or NULL: see text */
	char text[192];		/* this copy's JSON rule (the next copy's
				 * checks reuse the validation's buffer) */
	int err;
};


/* Binary header and checksum; the JSON only when forced to (probing
 * stops at the first copy whose checksum holds). */
static void read_copy(struct dmt_file *f, uint64_t off, bool secondary,
		      struct copy *c, char **json)
{
	c->why = NULL;
	c->err = luks2_read_copy(f, off, secondary, &c->bin, json, &c->why);
	c->state = !c->err ? COPY_OK :
		   c->err == -ENODATA || c->err == -EIO ? COPY_FAIL_IO :
							  COPY_FAIL;
}

static void parse_copy(struct copy *c, char *json)
{
	if (c->state == COPY_OK) {
		c->j = parse_area(json, c->bin.hdr_size - DMT_LUKS2_BIN_HDR_SIZE,
				  &c->why);
		if (!c->j) {
			c->state = COPY_OBSOLETE;
			c->err = -EINVAL;
			snprintf(c->text, sizeof(c->text), "%s",
				 c->why ?: "out of memory");
			c->why = NULL;
		}
	}
	free(json);
}

/*
 * The secondary: at the primary's hdr_size when the primary's binary
 * header and checksum hold, otherwise the first legal offset whose do.
 * A failed probe reports the first copy that had the magic.
 */
static void load_secondary(struct dmt_file *f, const struct copy *c1,
			   struct copy *c2)
{
	bool seen = false;
	char *json = NULL;

	if (c1->state == COPY_OK || c1->state == COPY_OBSOLETE) {
		read_copy(f, c1->bin.hdr_size, true, c2, &json);
		parse_copy(c2, json);
		return;
	}
	*c2 = (struct copy){ .state = COPY_FAIL_IO, .err = -ENODATA,
			     .why = "size" };
	for (uint64_t off = DMT_LUKS2_DEFAULT_METADATA;
	     off <= DMT_LUKS2_MAX_METADATA; off *= 2) {
		struct copy c = { 0 };

		read_copy(f, off, true, &c, &json);
		if (c.state == COPY_OK ||
		    (!seen && c.err != -EMEDIUMTYPE && c.err != -ENODATA)) {
			*c2 = c;
			seen = true;
		} else if (!seen && c.err == -EMEDIUMTYPE) {
			*c2 = c;
		}
		if (c.state == COPY_OK)
			break;
	}
	parse_copy(c2, json);
}

/* Neither copy usable: the primary's problem, or the secondary's JSON
 * problem when the primary has no magic. */
static int load_refuse(struct copy *c1, struct copy *c2, struct dmt_file *f,
		       struct dmt_reason *r)
{
	const struct copy *c = c1->err == -EMEDIUMTYPE &&
				       c2->state == COPY_OBSOLETE ?
				       c2 :
				       c1;

	dmt_reason_set(r, c->err, DMT_REASON_LUKS2_NO_HEADER,
		       c->why ?: luks2_why_keep(c->text), 0);
	if (r)
		r->path = dmt_file_path(f);
	if (c1->err == -EMEDIUMTYPE && c2->err == -EMEDIUMTYPE)
		return -EMEDIUMTYPE; /* no magic anywhere: not LUKS2 at all */
	return c1->state == COPY_FAIL_IO && c2->state == COPY_FAIL_IO ?
		       -ENODATA :
		       -EINVAL;
}

static int load_pick(struct dmt_luks2 *h, struct copy *c1, struct copy *c2,
		     struct dmt_file *f, struct dmt_reason *r)
{
	struct copy *use = c1->state == COPY_OK ? c1 : c2;
	struct copy *other = use == c1 ? c2 : c1;
	uint64_t size, need;

	if (c1->state == COPY_OK && c2->state == COPY_OK &&
	    c2->bin.seqid > c1->bin.seqid) {
		use = c2;
		other = c1;
	}
	if (use->state != COPY_OK)
		return load_refuse(c1, c2, f, r);
	h->keyslots_size = luks2_u64_of(luks2_json_get(use->j,
						       "config.keyslots_size"));
	need = 2 * use->bin.hdr_size + h->keyslots_size;
	if (dmt_file_size(f, &size) || size < need) {
		dmt_reason_set(r, -ENODATA, DMT_REASON_DEVICE_TOO_SMALL, NULL,
			       size);
		if (r) {
			r->min = need;
			r->path = dmt_file_path(f);
		}
		return -ENODATA;
	}
	h->bin = use->bin;
	/* a damaged copy gets a fresh salt when rewritten, as in repair */
	if (other->state != COPY_OK)
		(void)dmt_random_bytes(h->salt2, LUKS2_SALT_LEN);
	else
		memcpy(h->salt2, other->bin.salt, LUKS2_SALT_LEN);
	h->jobj = use->j;
	use->j = NULL;
	h->loaded_copy = use == c1 ? 0 : 1;
	return 0;
}

/* libcryptsetup reads a LUKS1 header when the primary says version 1 and
 * refuses any other version but 2 (0: a damaged primary, LUKS2). */
static int check_version(struct dmt_file *f, struct dmt_reason *r)
{
	int v = luks2_primary_version(f);

	if (v == 0 || v == 2)
		return 0;
	dmt_reason_set(r, v == 1 ? -EMEDIUMTYPE : -EINVAL,
		       DMT_REASON_LUKS2_NO_HEADER,
		       v == 1 ? "a LUKS1 header" : "version", (uint64_t)v);
	if (r)
		r->path = dmt_file_path(f);
	return v == 1 ? -EMEDIUMTYPE : -EINVAL;
}

int dmt_luks2_load(struct dmt_file *f, struct dmt_luks2 **out,
		   struct dmt_reason *r)
{
	struct copy c1 = { 0 }, c2 = { 0 };
	struct dmt_luks2 *h;
	char *json = NULL;
	int ret;

	*out = NULL;
	ret = check_version(f, r);
	if (ret)
		return ret;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	read_copy(f, 0, false, &c1, &json);
	parse_copy(&c1, json);
	load_secondary(f, &c1, &c2);
	if (c1.state == COPY_OK && c2.state == COPY_OK &&
	    c1.bin.seqid > c2.bin.seqid)
		c2.state = COPY_OBSOLETE;
	ret = c1.err == -ENOMEM || c2.err == -ENOMEM ?
		      -ENOMEM :
		      load_pick(h, &c1, &c2, f, r);
	json_object_put(c1.j);
	json_object_put(c2.j);
	if (ret) {
		dmt_luks2_free(h);
		return ret;
	}
	h->src = f;
	*out = h;
	return 0;
}

/* ---- write ---- */

/*
 * Filler for the unused keyslots area: it hides which parts hold key
 * material and protects nothing itself, so it comes from OpenSSL's DRBG
 * (AES-256 CTR-DRBG seeded from getrandom) at memory speed, not 16 MiB of
 * getrandom (~50 ms here).  Keys, salts and IVs keep dmt_random_bytes.
 */
static int fill_random(uint8_t *buf, size_t n)
{
	return RAND_bytes(buf, (int)n) == 1 ? 0 : -EIO;
}

/* A new header's keyslots area: random, as luksFormat leaves it. */
static int write_area(struct dmt_luks2 *h, struct dmt_file *f)
{
	uint64_t start = 2 * h->bin.hdr_size, end = start + h->keyslots_size;
	uint8_t *buf = NULL;
	int ret = 0;

	if (!h->src) {
		buf = malloc(FILL_CHUNK);
		if (!buf)
			return -ENOMEM;
	}
	for (uint64_t off = start; !h->src && !ret && off < end;
	     off += FILL_CHUNK) {
		size_t n = end - off < FILL_CHUNK ? end - off : FILL_CHUNK;

		ret = fill_random(buf, n);
		if (!ret)
			ret = dmt_pwrite_full(f, buf, n, off);
	}
	/* between the keyslots area and the data: zeros, as luksFormat */
	if (!h->src && !ret && h->data_offset > end) {
		memset(buf, 0, FILL_CHUNK);
		for (uint64_t off = end; !ret && off < h->data_offset;
		     off += FILL_CHUNK) {
			uint64_t n = h->data_offset - off < FILL_CHUNK ?
					     h->data_offset - off :
					     FILL_CHUNK;

			ret = dmt_pwrite_full(f, buf, n, off);
		}
	}
	free(buf);
	for (int i = 0; !ret && i < DMT_LUKS2_KEYSLOTS_MAX; i++)
		if (h->material[i])
			ret = dmt_pwrite_full(f, h->material[i],
					      h->material_len[i],
					      h->material_off[i]);
	return ret;
}

int dmt_luks2_write(struct dmt_luks2 *h, struct dmt_file *f,
		    struct dmt_reason *r)
{
	size_t json_size = h->bin.hdr_size - DMT_LUKS2_BIN_HDR_SIZE;
	const char *text = dmt_luks2_json(h), *why;
	uint8_t *buf = NULL;
	char *area = NULL;
	struct luks2_bin b2;
	int ret;

	if (!text || strlen(text) >= json_size) {
		dmt_reason_set(r, -ENOSPC, DMT_REASON_LUKS2_JSON_SIZE, "json",
			       text ? strlen(text) : 0);
		if (r)
			r->max = json_size - 1;
		return -ENOSPC;
	}
	/* what a reader would refuse is never written (libcryptsetup
	 * validates before every write too) */
	if (luks2_hdr_validate(h->jobj, json_size, &why))
		return dmt_reason_set(r, -EINVAL, DMT_REASON_LUKS2_INVALID, why,
				      0);
	area = calloc(1, json_size);
	buf = malloc(h->bin.hdr_size);
	ret = area && buf ? 0 : -ENOMEM;
	if (ret)
		goto out;
	memcpy(area, text, strlen(text));
	ret = write_area(h, f);
	h->bin.seqid++;
	b2 = h->bin;
	memcpy(b2.salt, h->salt2, LUKS2_SALT_LEN);
	if (!ret)
		ret = luks2_bin_encode(&h->bin, false, area, buf);
	if (!ret)
		ret = dmt_pwrite_full(f, buf, h->bin.hdr_size, 0);
	if (!ret)
		ret = luks2_bin_encode(&b2, true, area, buf);
	if (!ret)
		ret = dmt_pwrite_full(f, buf, h->bin.hdr_size, h->bin.hdr_size);
	if (ret && ret != -ENOMEM)
		dmt_reason_set(r, ret, DMT_REASON_IO, NULL, (uint64_t)-ret);
	if (ret && r && ret != -ENOMEM)
		r->path = dmt_file_path(f);
out:
	free(area);
	free(buf);
	return ret;
}

/* ---- accessors ---- */

static int layout(struct dmt_reason *r, const char *what, const char *name,
		  uint64_t value)
{
	dmt_reason_set(r, -ENOTSUP, DMT_REASON_LUKS2_LAYOUT, what, value);
	if (r)
		r->name = name;
	return -ENOTSUP;
}

int dmt_luks2_data_segment(const struct dmt_luks2 *h,
			   struct dmt_luks2_segment *seg, struct dmt_reason *r)
{
	json_object *req = luks2_json_get(h->jobj,
					  "config.requirements.mandatory");
	json_object *s = luks2_json_get(h->jobj, "segments.0");
	const char *type = luks2_json_str(s, "type"), *size;
	int n = json_object_object_length(luks2_json_get(h->jobj, "segments"));
	uint64_t ss;

	if (json_object_is_type(req, json_type_array) &&
	    json_object_array_length(req))
		return layout(r, "requirements",
			      json_object_get_string(
				      json_object_array_get_idx(req, 0)),
			      0);
	if (n != 1 || !s)
		return layout(r, "segments", NULL, (uint64_t)n);
	if (!type || strcmp(type, "crypt"))
		return layout(r, "segment 0 type", type, 0);
	memset(seg, 0, sizeof(*seg));
	size = luks2_json_str(s, "size");
	seg->size = DMT_LUKS2_SIZE_DYNAMIC;
	if (!size || (strcmp(size, "dynamic") &&
		      luks2_json_u64(s, "size", &seg->size)) ||
	    luks2_json_u64(s, "offset", &seg->offset) ||
	    luks2_json_u64(s, "iv_tweak", &seg->iv_tweak) ||
	    luks2_json_u64(s, "sector_size", &ss))
		return -EINVAL; /* the validation let none of these pass */
	if (ss < 512 || ss > 4096 || (ss & (ss - 1)))
		return layout(r, "segment 0 sector_size", NULL, ss);
	if (seg->size != DMT_LUKS2_SIZE_DYNAMIC &&
	    seg->offset > UINT64_MAX - seg->size)
		return layout(r, "segment 0 size", NULL, seg->size);
	seg->sector_size = (unsigned int)ss;
	seg->cipher = luks2_json_str(s, "encryption");
	return 0;
}

int dmt_luks2_get_segment(const struct dmt_luks2 *h,
			  struct dmt_luks2_segment *seg)
{
	return dmt_luks2_data_segment(h, seg, NULL);
}

const char *dmt_luks2_uuid(const struct dmt_luks2 *h)
{
	return h->bin.uuid;
}

const char *dmt_luks2_label(const struct dmt_luks2 *h)
{
	return h->bin.label;
}

const char *dmt_luks2_subsystem(const struct dmt_luks2 *h)
{
	return h->bin.subsystem;
}

uint64_t dmt_luks2_seqid(const struct dmt_luks2 *h)
{
	return h->bin.seqid;
}

uint64_t dmt_luks2_metadata_size(const struct dmt_luks2 *h)
{
	return h->bin.hdr_size;
}

uint64_t dmt_luks2_keyslots_size(const struct dmt_luks2 *h)
{
	return h->keyslots_size;
}

uint64_t dmt_luks2_header_size(const struct dmt_luks2 *h)
{
	return 2 * h->bin.hdr_size + h->keyslots_size;
}

int dmt_luks2_loaded_copy(const struct dmt_luks2 *h)
{
	return h->loaded_copy;
}

const uint8_t *dmt_luks2_volume_key(const struct dmt_luks2 *h, size_t *len)
{
	if (len)
		*len = h->vk ? h->vk_len : 0;
	return h->vk;
}

const char *dmt_luks2_json(struct dmt_luks2 *h)
{
	return json_object_to_json_string_ext(
		h->jobj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}
