// SPDX-License-Identifier: MIT
/*
 * LUKS2 headers with an integrity segment (cryptsetup 2.6.1 luksFormat
 * --integrity): the data segment's "encryption" is the -random cipher,
 * "integrity" names the MAC ("hmac(sha256)") or "aead"/"poly1305", and
 * the volume key (which the keyslots and the digest cover) is the
 * cipher key followed by the MAC key.  Built on dmt_luks2_create(): the
 * header is made for a plain cipher, then its volume key, digest and
 * segment are replaced here.
 */
#include <dmt/crypt_auth.h>

#include <errno.h>
#include <string.h>

#include <dmt/crypt.h>
#include "lib/crypt/crypt_auth_priv.h"
#include "lib/crypt/crypt_priv.h"
#include <dmt/luks2.h>

#include "lib/crypt/luks2_priv.h"

static int redo_digest(struct dmt_luks2 *h)
{
	json_object *d = luks2_json_get(h->jobj, "digests.0");
	const char *hash = d ? luks2_json_str(d, "hash") : NULL;
	uint8_t salt[DMT_LUKS2_SALT_SIZE], dig[64];
	uint64_t iter;
	size_t dlen;
	char *s64, *d64;
	int ret;

	if (!hash || luks2_json_u64(d, "iterations", &iter))
		return -EINVAL;
	dlen = !strcmp(hash, "sha512") ? 64 : !strcmp(hash, "sha1") ? 20 : 32;
	ret = dmt_random_bytes(salt, sizeof(salt));
	if (!ret)
		ret = luks2_digest_compute(hash, (uint32_t)iter, h->vk,
					   h->vk_len, salt, dig, dlen);
	if (ret)
		return ret;
	s64 = luks2_base64(salt, sizeof(salt));
	d64 = luks2_base64(dig, dlen);
	if (!s64 || !d64)
		ret = -ENOMEM;
	else {
		json_object_object_add(d, "salt", json_object_new_string(s64));
		json_object_object_add(d, "digest",
				       json_object_new_string(d64));
	}
	free(s64);
	free(d64);
	return ret;
}

static void set_segment(struct dmt_luks2 *h, const struct dmt_auth_spec *s)
{
	json_object *seg = luks2_json_get(h->jobj, "segments.0");
	json_object *in = json_object_new_object();

	json_object_object_add(seg, "encryption",
			       json_object_new_string(s->cipher));
	json_object_object_add(in, "type",
			       json_object_new_string(s->luks2_type));
	json_object_object_add(in, "journal_encryption",
			       json_object_new_string("none"));
	json_object_object_add(in, "journal_integrity",
			       json_object_new_string("none"));
	json_object_object_add(seg, "integrity", in);
}

int dmt_luks2_create_auth(const struct dmt_luks2_params *p,
			  const struct dmt_auth_spec *s, struct dmt_luks2 **out,
			  struct dmt_reason *r)
{
	struct dmt_luks2_params q = *p;
	size_t vk_len = s->cipher_key_size + s->mac_key_size;
	struct dmt_luks2 *h;
	int ret;

	q.cipher = "aes-xts-plain64";
	q.volume_key_size = 64;
	q.volume_key = NULL;
	ret = dmt_luks2_create(&q, &h, r);
	if (ret)
		return ret;
	dmt_secure_free(h->vk);
	h->vk_len = vk_len;
	h->vk = dmt_secure_alloc(vk_len);
	if (!h->vk)
		ret = -ENOMEM;
	else if (p->volume_key)
		memcpy(h->vk, p->volume_key, vk_len);
	else
		ret = dmt_random_bytes(h->vk, vk_len);
	if (!ret)
		ret = redo_digest(h);
	if (ret) {
		dmt_luks2_free(h);
		return ret;
	}
	set_segment(h, s);
	*out = h;
	return 0;
}

int dmt_luks2_auth_spec(const struct dmt_luks2 *h, struct dmt_auth_spec *s,
			struct dmt_reason *r)
{
	json_object *seg = luks2_json_get(h->jobj, "segments.0");
	const char *cipher = seg ? luks2_json_str(seg, "encryption") : NULL;
	const char *type = seg ? luks2_json_str(seg, "integrity.type") : NULL;
	json_object *ks;
	uint64_t vk_len = h->vk_len;

	if (!cipher || !type)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_AUTH_NO_INTEGRITY,
				      "segments.integrity", 0);
	if (!h->vk) {
		/* the key size the keyslots record */
		json_object_object_foreach(luks2_json_get(h->jobj, "keyslots"),
					   k, v)
		{
			(void)k;
			ks = v;
			if (!luks2_json_u64(ks, "key_size", &vk_len))
				break;
		}
	}
	return dmt_auth_lookup_luks2(cipher, type, (size_t)vk_len, s, r);
}
