// SPDX-License-Identifier: MIT
/*
 * LUKS2 keyslots (formats.md, LUKS2 keyslots): a passphrase's derived key
 * encrypts the anti-forensic split of the volume key in the keyslot's
 * area; the digest (pbkdf2 of the volume key) tells a right key from a
 * wrong one.  Adding writes JSON and the area material (kept until
 * dmt_luks2_write); unlocking reads the area from the loaded file.
 */
#include <dmt/luks2.h>

#include <errno.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dmt/crypt.h>
#include "lib/common/reserved.h"
#include "lib/crypt/crypt_priv.h"
#include <dmt/io.h>
#include <dmt/reason.h>

#include "lib/crypt/luks2_priv.h"

static json_object *keyslot_obj(const struct dmt_luks2 *h, int slot)
{
	json_object *ks = luks2_json_get(h->jobj, "keyslots");
	char key[12];

	snprintf(key, sizeof(key), "%d", slot);
	return json_object_object_get_ex(ks, key, &ks) ? ks : NULL;
}

int dmt_luks2_keyslots(const struct dmt_luks2 *h, int *slots)
{
	int n = 0;

	for (int i = 0; i < DMT_LUKS2_KEYSLOTS_MAX; i++)
		if (keyslot_obj(h, i))
			slots[n++] = i;
	return n;
}

/* First offset >= 2 * hdr_size where size bytes overlap no area. */
static int find_gap(const struct dmt_luks2 *h, uint64_t size, uint64_t *off)
{
	uint64_t lo = 2 * h->bin.hdr_size, hi = lo + h->keyslots_size;
	uint64_t cand = lo;
	bool moved = true;

	while (moved) {
		moved = false;
		json_object_object_foreach(luks2_json_get(h->jobj, "keyslots"),
					   k, ks)
		{
			uint64_t o, s;

			(void)k;
			if (luks2_json_u64(ks, "area.offset", &o) ||
			    luks2_json_u64(ks, "area.size", &s))
				continue;
			if (cand < o + s && o < cand + size) {
				cand = (o + s + LUKS2_AREA_ALIGN - 1) /
				       LUKS2_AREA_ALIGN * LUKS2_AREA_ALIGN;
				moved = true;
			}
		}
	}
	if (cand + size > hi)
		return -ENOSPC;
	*off = cand;
	return 0;
}

static json_object *kdf_obj(const struct dmt_luks2_pbkdf *k,
			    const uint8_t *salt)
{
	json_object *o = json_object_new_object();
	char *salt64 = luks2_base64(salt, DMT_LUKS2_SALT_SIZE);

	json_object_object_add(o, "type", json_object_new_string(k->type));
	if (!strcmp(k->type, "pbkdf2")) {
		json_object_object_add(o, "hash",
				       json_object_new_string(k->hash));
		json_object_object_add(o, "iterations",
				       json_object_new_int((int)k->iterations));
	} else {
		json_object_object_add(o, "time",
				       json_object_new_int((int)k->iterations));
		json_object_object_add(o, "memory",
				       json_object_new_int((int)k->memory_kb));
		json_object_object_add(o, "cpus",
				       json_object_new_int((int)k->parallel));
	}
	json_object_object_add(o, "salt", json_object_new_string(salt64));
	free(salt64);
	return o;
}

static json_object *keyslot_new(const struct dmt_luks2 *h,
				const struct dmt_luks2_keyslot_params *kp,
				uint64_t off, uint64_t size,
				const uint8_t *salt)
{
	json_object *ks = json_object_new_object(), *o;
	const char *af_hash = luks2_json_str(h->jobj, "digests.0.hash");

	json_object_object_add(ks, "type", json_object_new_string("luks2"));
	json_object_object_add(ks, "key_size",
			       json_object_new_int((int)h->vk_len));
	o = json_object_new_object();
	json_object_object_add(o, "type", json_object_new_string("luks1"));
	json_object_object_add(o, "stripes",
			       json_object_new_int(DMT_LUKS2_STRIPES));
	json_object_object_add(o, "hash",
			       json_object_new_string(af_hash ?: "sha256"));
	json_object_object_add(ks, "af", o);
	o = json_object_new_object();
	json_object_object_add(o, "type", json_object_new_string("raw"));
	json_object_object_add(o, "offset", luks2_u64_obj(off));
	json_object_object_add(o, "size", luks2_u64_obj(size));
	json_object_object_add(o, "encryption",
			       json_object_new_string(kp->cipher));
	json_object_object_add(o, "key_size",
			       json_object_new_int((int)kp->key_size));
	json_object_object_add(ks, "area", o);
	json_object_object_add(ks, "kdf", kdf_obj(&kp->pbkdf, salt));
	return ks;
}

static int keyslot_defaults(struct dmt_luks2 *h,
			    struct dmt_luks2_keyslot_params *kp,
			    struct dmt_reason *r)
{
	struct dmt_crypt_cipher ci;
	int ret;

	if (!kp->cipher)
		kp->cipher = "aes-xts-plain64";
	if (!kp->key_size)
		kp->key_size = 64;
	ret = dmt_crypt_cipher_lookup(kp->cipher, &ci, r);
	if (!ret)
		ret = dmt_crypt_check_key_size(&ci, kp->key_size, r);
	if (ret)
		return ret;
	if (!kp->pbkdf.type) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		kp->pbkdf.type = "argon2id";
		kp->pbkdf.iterations = 4;
		kp->pbkdf.memory_kb = 1u << 20;
		kp->pbkdf.parallel = cpus > 4 ? 4 : cpus < 1 ? 1 : (uint32_t)cpus;
	}
	if (!kp->pbkdf.hash)
		kp->pbkdf.hash = "sha256";
	if (kp->keyslot < -1 || kp->keyslot >= DMT_LUKS2_KEYSLOTS_MAX ||
	    (kp->keyslot >= 0 && keyslot_obj(h, kp->keyslot)))
		return dmt_reason_set(r, -EINVAL, DMT_REASON_LUKS2_KEYSLOT,
				      "keyslot", (uint64_t)kp->keyslot);
	for (int i = 0; kp->keyslot < 0 && i < DMT_LUKS2_KEYSLOTS_MAX; i++)
		if (!keyslot_obj(h, i))
			kp->keyslot = i;
	if (kp->keyslot < 0)
		return dmt_reason_set(r, -ENOSPC, DMT_REASON_LUKS2_KEYSLOT,
				      "keyslot", DMT_LUKS2_KEYSLOTS_MAX);
	return 0;
}

/* Derived key -> encrypted AF material (a fresh malloc'ed buffer). */
static int keyslot_material(struct dmt_luks2 *h,
			    const struct dmt_luks2_keyslot_params *kp,
			    const void *pass, size_t pass_len,
			    const uint8_t *salt, uint8_t **out, size_t len,
			    struct dmt_reason *r)
{
	const char *af_hash = luks2_json_str(h->jobj, "digests.0.hash");
	uint8_t *dkey = dmt_secure_alloc(kp->key_size);
	uint8_t *af = dmt_secure_alloc(len);
	int ret = dkey && af ? 0 : -ENOMEM;

	if (!ret)
		ret = dmt_luks2_kdf(&kp->pbkdf, pass, pass_len, salt,
				    DMT_LUKS2_SALT_SIZE, dkey, kp->key_size, r);
	if (!ret)
		ret = dmt_luks2_af_split(h->vk, h->vk_len, DMT_LUKS2_STRIPES,
					 af_hash ?: "sha256", af);
	if (!ret)
		ret = luks2_area_crypt(kp->cipher, dkey, kp->key_size, true, af,
				       len, r);
	if (!ret) {
		/* encrypted now: no longer secret material */
		*out = malloc(len);
		if (*out)
			memcpy(*out, af, len);
		else
			ret = -ENOMEM;
	}
	dmt_secure_free(dkey);
	dmt_secure_free(af);
	return ret;
}

static void digest_link(struct dmt_luks2 *h, int slot)
{
	json_object *a = luks2_json_get(h->jobj, "digests.0.keyslots");
	char key[12];

	snprintf(key, sizeof(key), "%d", slot);
	if (a && json_object_is_type(a, json_type_array))
		json_object_array_add(a, json_object_new_string(key));
}

void dmt_luks2_pbkdf_init(struct dmt_luks2_pbkdf *k)
{
	*k = (struct dmt_luks2_pbkdf){0};
}

void dmt_luks2_keyslot_params_init(struct dmt_luks2_keyslot_params *kp)
{
	*kp = (struct dmt_luks2_keyslot_params){.keyslot = -1};
}

int dmt_luks2_add_keyslot(struct dmt_luks2 *h,
			  const struct dmt_luks2_keyslot_params *in,
			  const void *pass, size_t pass_len,
			  struct dmt_reason *r)
{
	struct dmt_luks2_keyslot_params kp = *in;
	uint8_t salt[DMT_LUKS2_SALT_SIZE];
	size_t len = dmt_luks2_af_sectors_size(h->vk_len, DMT_LUKS2_STRIPES);
	uint64_t area = (len + LUKS2_AREA_ALIGN - 1) / LUKS2_AREA_ALIGN *
			LUKS2_AREA_ALIGN;
	uint64_t off;
	char key[12];
	int ret;

	ret = DMT_CHECK_RESERVED(in, r);
	if (!ret)
		ret = DMT_CHECK_RESERVED(&in->pbkdf, r);
	if (ret)
		return ret;
	if (!h->vk)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_MISSING,
				      "volume_key", 0);
	ret = keyslot_defaults(h, &kp, r);
	if (ret)
		return ret;
	if (find_gap(h, area, &off))
		return dmt_reason_set(r, -ENOSPC, DMT_REASON_LUKS2_NO_SPACE,
				      "keyslots_size", area);
	ret = dmt_random_bytes(salt, sizeof(salt));
	if (!ret)
		ret = keyslot_material(h, &kp, pass, pass_len, salt,
				       &h->material[kp.keyslot], len, r);
	if (ret)
		return ret;
	h->material_len[kp.keyslot] = len;
	h->material_off[kp.keyslot] = off;
	snprintf(key, sizeof(key), "%d", kp.keyslot);
	json_object_object_add(luks2_json_get(h->jobj, "keyslots"), key,
			       keyslot_new(h, &kp, off, area, salt));
	digest_link(h, kp.keyslot);
	return kp.keyslot;
}

/* ---- unlock ---- */

static int kdf_from_json(json_object *ks, struct dmt_luks2_pbkdf *k,
			 uint8_t *salt)
{
	uint64_t a = 0, b = 0, c = 0;
	size_t len;
	const char *s = luks2_json_str(ks, "kdf.salt");

	memset(k, 0, sizeof(*k));
	k->type = luks2_json_str(ks, "kdf.type");
	if (!k->type || !s ||
	    luks2_unbase64(s, salt, DMT_LUKS2_SALT_SIZE, &len) ||
	    len != DMT_LUKS2_SALT_SIZE)
		return -EINVAL;
	if (!strcmp(k->type, "pbkdf2")) {
		k->hash = luks2_json_str(ks, "kdf.hash");
		if (luks2_json_u64(ks, "kdf.iterations", &a))
			return -EINVAL;
	} else if (luks2_json_u64(ks, "kdf.time", &a) ||
		   luks2_json_u64(ks, "kdf.memory", &b) ||
		   luks2_json_u64(ks, "kdf.cpus", &c)) {
		return -EINVAL;
	}
	/* a hostile header must not make us allocate without bound: the
	 * 4 GiB / 1..16 threads limits cryptsetup 2.6.1 formats with */
	if (a > UINT32_MAX || b > (4u << 20) || c > 16 ||
	    (strcmp(k->type, "pbkdf2") && (!a || !c)))
		return -EINVAL;
	k->iterations = (uint32_t)a;
	k->memory_kb = (uint32_t)b;
	k->parallel = (uint32_t)c;
	return 0;
}

/* Does vk match the digest that lists slot? */
static int digest_check(const struct dmt_luks2 *h, int slot, const uint8_t *vk,
			size_t vk_len)
{
	uint8_t salt[DMT_LUKS2_SALT_SIZE], want[128], got[128];
	char key[12];
	int ret = -EPERM;

	snprintf(key, sizeof(key), "%d", slot);
	json_object_object_foreach(luks2_json_get(h->jobj, "digests"), dk, d)
	{
		json_object *a = luks2_json_get(d, "keyslots");
		const char *hash = luks2_json_str(d, "hash");
		uint64_t iter;
		size_t slen, dlen;
		bool listed = false;

		(void)dk;
		for (size_t i = 0; i < json_object_array_length(a); i++)
			listed |= !strcmp(json_object_get_string(
						  json_object_array_get_idx(a, i)),
					  key);
		if (!listed || !hash ||
		    strcmp(luks2_json_str(d, "type"), "pbkdf2") ||
		    luks2_json_u64(d, "iterations", &iter) ||
		    iter > UINT32_MAX ||
		    luks2_unbase64(luks2_json_str(d, "salt"), salt,
				   sizeof(salt), &slen) ||
		    slen != sizeof(salt) ||
		    luks2_unbase64(luks2_json_str(d, "digest"), want,
				   sizeof(want), &dlen))
			continue;
		if (!luks2_digest_compute(hash, (uint32_t)iter, vk, vk_len,
					  salt, got, dlen) &&
		    !CRYPTO_memcmp(got, want, dlen))
			ret = 0;
		break;
	}
	OPENSSL_cleanse(got, sizeof(got));
	return ret;
}

/* The encrypted AF material of a slot: added here, or from the file. */
static int read_material(const struct dmt_luks2 *h, int slot, json_object *ks,
			 uint8_t *buf, size_t len)
{
	uint64_t off;

	if (h->material[slot]) {
		memcpy(buf, h->material[slot], len);
		return 0;
	}
	if (!h->src || luks2_json_u64(ks, "area.offset", &off))
		return -EINVAL;
	return dmt_pread_full(h->src, buf, len, off);
}

/* One slot: candidate volume key into vk (vk_len bytes, secure). */
static int try_slot(const struct dmt_luks2 *h, int slot, const void *pass,
		    size_t pass_len, uint8_t *vk, size_t vk_len,
		    struct dmt_reason *r)
{
	json_object *ks = keyslot_obj(h, slot);
	struct dmt_luks2_pbkdf k;
	uint8_t salt[DMT_LUKS2_SALT_SIZE], *dkey = NULL, *af = NULL;
	/* libcryptsetup 2.6.1 merges 4000 stripes whatever af.stripes says */
	uint64_t stripes = DMT_LUKS2_STRIPES, dks;
	size_t len = 0;
	int ret = -EINVAL;

	if (!ks || strcmp(luks2_json_str(ks, "type"), "luks2") ||
	    luks2_json_u64(ks, "area.key_size", &dks) ||
	    dks > DMT_CRYPT_MAX_KEY || kdf_from_json(ks, &k, salt))
		return -EINVAL;
	len = dmt_luks2_af_sectors_size(vk_len, (unsigned int)stripes);
	dkey = dmt_secure_alloc(dks);
	af = dmt_secure_alloc(len);
	if (!dkey || !af) {
		ret = -ENOMEM;
		goto out;
	}
	ret = read_material(h, slot, ks, af, len);
	if (!ret)
		ret = dmt_luks2_kdf(&k, pass, pass_len, salt, sizeof(salt),
				    dkey, dks, r);
	if (!ret)
		ret = luks2_area_crypt(luks2_json_str(ks, "area.encryption"),
				       dkey, dks, false, af, len, r);
	if (!ret)
		ret = dmt_luks2_af_merge(af, vk_len, (unsigned int)stripes,
					 luks2_json_str(ks, "af.hash"), vk);
	if (!ret)
		ret = digest_check(h, slot, vk, vk_len);
out:
	dmt_secure_free(dkey);
	dmt_secure_free(af);
	return ret;
}

int dmt_luks2_unlock(struct dmt_luks2 *h, int slot, const void *pass,
		     size_t pass_len, struct dmt_reason *r)
{
	uint64_t vk_len;
	uint8_t *vk = NULL;
	int ret = -EPERM, opened = -1;

	if (slot < -1 || slot >= DMT_LUKS2_KEYSLOTS_MAX ||
	    (slot >= 0 && !keyslot_obj(h, slot)))
		return dmt_reason_set(r, -ENOENT, DMT_REASON_LUKS2_KEYSLOT,
				      "keyslot", (uint64_t)slot);
	for (int i = slot < 0 ? 0 : slot;
	     opened < 0 && i < (slot < 0 ? DMT_LUKS2_KEYSLOTS_MAX : slot + 1);
	     i++) {
		json_object *ks = keyslot_obj(h, i);

		if (!ks || luks2_json_u64(ks, "key_size", &vk_len) ||
		    !vk_len || vk_len > 512)
			continue;
		dmt_secure_free(vk);
		vk = dmt_secure_alloc(vk_len);
		if (!vk) {
			ret = -ENOMEM;
			break;
		}
		ret = try_slot(h, i, pass, pass_len, vk, vk_len, r);
		if (!ret)
			opened = i;
		else if (ret == -ENOMEM || ret == -EIO)
			break;
	}
	if (opened < 0) {
		dmt_secure_free(vk);
		if (ret == -ENOMEM || ret == -EIO)
			return ret;
		return dmt_reason_set(r, -EPERM,
				      DMT_REASON_LUKS2_WRONG_PASSPHRASE, NULL,
				      0);
	}
	dmt_secure_free(h->vk);
	h->vk = vk;
	h->vk_len = vk_len;
	return opened;
}

/* ---- keyslot fields ---- */

static int digest_of(const struct dmt_luks2 *h, int slot)
{
	char key[12];

	snprintf(key, sizeof(key), "%d", slot);
	json_object_object_foreach(luks2_json_get(h->jobj, "digests"), dk, d)
	{
		json_object *a = luks2_json_get(d, "keyslots");

		for (size_t i = 0; i < json_object_array_length(a); i++)
			if (!strcmp(json_object_get_string(
					    json_object_array_get_idx(a, i)),
				    key))
				return atoi(dk);
	}
	return -1;
}

int dmt_luks2_keyslot_info(const struct dmt_luks2 *h, int slot,
			   struct dmt_luks2_keyslot_info *ki)
{
	json_object *ks = slot >= 0 && slot < DMT_LUKS2_KEYSLOTS_MAX ?
				  keyslot_obj(h, slot) :
				  NULL;
	uint64_t v;

	if (!ks)
		return -ENOENT;
	memset(ki, 0, sizeof(*ki));
	ki->type = luks2_json_str(ks, "type");
	if (!ki->type || strcmp(ki->type, "luks2"))
		return -EINVAL;
	ki->cipher = luks2_json_str(ks, "area.encryption");
	ki->af_hash = luks2_json_str(ks, "af.hash");
	if (luks2_json_u64(ks, "key_size", &v))
		return -EINVAL;
	ki->key_size = v;
	if (luks2_json_u64(ks, "area.key_size", &v))
		return -EINVAL;
	ki->cipher_key_size = v;
	if (luks2_json_u64(ks, "af.stripes", &v))
		return -EINVAL;
	ki->af_stripes = (unsigned int)v;
	if (luks2_json_u64(ks, "area.offset", &ki->area_offset) ||
	    luks2_json_u64(ks, "area.size", &ki->area_size) ||
	    kdf_from_json(ks, &ki->pbkdf, ki->salt))
		return -EINVAL;
	ki->digest = digest_of(h, slot);
	return 0;
}
