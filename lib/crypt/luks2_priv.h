/* SPDX-License-Identifier: MIT */
/* Internals of lib/crypt's LUKS2 code, shared by its files only. */
#ifndef DMT_LIB_CRYPT_LUKS2_PRIV_H
#define DMT_LIB_CRYPT_LUKS2_PRIV_H

#include <json-c/json.h>
#include <stdint.h>

#include <dmt/luks2.h>

#include "lib/crypt/crypt_priv.h"

#define LUKS2_MAGIC_1ST "LUKS\xba\xbe"
#define LUKS2_MAGIC_2ND "SKUL\xba\xbe"
#define LUKS2_MAGIC_LEN 6
#define LUKS2_SALT_LEN 64
#define LUKS2_CSUM_LEN 64
#define LUKS2_CSUM_ALG_LEN 32
#define LUKS2_LABEL_LEN 48
#define LUKS2_UUID_LEN 40
#define LUKS2_AREA_ALIGN 4096

/* The binary header's fields (host order), without the checksum. */
struct luks2_bin {
	uint64_t hdr_size, seqid, hdr_offset;
	char label[LUKS2_LABEL_LEN], subsystem[LUKS2_LABEL_LEN];
	char csum_alg[LUKS2_CSUM_ALG_LEN], uuid[LUKS2_UUID_LEN];
	uint8_t salt[LUKS2_SALT_LEN];
};

struct dmt_luks2 {
	json_object *jobj;		/* the whole metadata */
	struct luks2_bin bin;		/* the primary's fields */
	uint8_t salt2[LUKS2_SALT_LEN];	/* the secondary's salt */
	uint64_t keyslots_size;
	uint64_t data_offset;		/* created handles: what write pads to */
	int loaded_copy;
	struct dmt_file *src;		/* loaded from (not owned) */
	uint8_t *vk;			/* secure memory, or NULL */
	size_t vk_len;
	/* encrypted AF material of keyslots added here, for write */
	uint8_t *material[DMT_LUKS2_KEYSLOTS_MAX];
	size_t material_len[DMT_LUKS2_KEYSLOTS_MAX];
	uint64_t material_off[DMT_LUKS2_KEYSLOTS_MAX];
};

/* luks2_disk.c: encode with checksum; decode after its checks */
int luks2_bin_encode(const struct luks2_bin *b, bool secondary,
		     const char *json_area, uint8_t *out);
int luks2_read_copy(struct dmt_file *f, uint64_t off, bool secondary,
		    struct luks2_bin *b, char **json_area, const char **why);
int luks2_primary_version(struct dmt_file *f);

/* luks2_json.c */
json_object *luks2_json_new(const struct dmt_luks2_params *p,
			    const char *cipher, size_t vk_len,
			    uint64_t data_offset, uint64_t metadata_size,
			    uint64_t keyslots_size, const uint8_t *dsalt,
			    const uint8_t *digest, size_t digest_len);
json_object *luks2_json_get(json_object *j, const char *path);
int luks2_json_u64(json_object *j, const char *path, uint64_t *v);
const char *luks2_json_str(json_object *j, const char *path);
json_object *luks2_u64_obj(uint64_t v);
char *luks2_base64(const uint8_t *b, size_t len);
int luks2_unbase64(const char *s, uint8_t *out, size_t max, size_t *len);
int luks2_b64_decode(const char *in, size_t in_len, uint8_t **out,
		     size_t *out_len);
bool luks2_member(json_object *o, const char *k, json_object **v);
bool luks2_numbered(const char *s);
bool luks2_str_u64(const char *s, uint64_t *v);
uint64_t luks2_u64_of(json_object *o);
bool luks2_array_has(json_object *a, const char *s);
bool luks2_segment_flag(json_object *seg, const char *flag, size_t len);
struct luks2_refs;
struct luks2_refs *luks2_refs_new(json_object *digests, const char *member);
unsigned int luks2_refs_get(const struct luks2_refs *t, const char *name,
			    int *first);
void luks2_refs_free(struct luks2_refs *t);

/* luks2_validate.c: libcryptsetup 2.6.1's checks of the metadata (0, or
 * -EINVAL with *why "<object> <name>: <problem>", a per-thread buffer
 * valid until the next call), and its repair of old KDF leftovers */
int luks2_hdr_validate(json_object *j, uint64_t json_area_size,
		       const char **why);
void luks2_hdr_repair(json_object *j);
const char *luks2_why_keep(const char *text);

/* luks2_kdf.c */
int luks2_digest_compute(const char *hash, uint32_t iterations,
			 const uint8_t *vk, size_t vk_len, const uint8_t *salt,
			 uint8_t *digest, size_t digest_len);
int luks2_area_crypt(const char *cipher, const uint8_t *key, size_t key_len,
		     bool enc, uint8_t *buf, size_t len, struct dmt_reason *r);

/* luks2_bench.c: cryptsetup 2.6.1's cost rules */
/* PBKDF2 iterations of key_len output bytes for target_ms of CPU here
 * (at least 1000); the volume-key digest's: target 125 ms. */
int luks2_pbkdf2_iterations(const char *hash, size_t key_len,
			    uint32_t target_ms, uint32_t *iterations);
int luks2_digest_iterations(const char *hash, size_t vk_len,
			    uint32_t *iterations);
/* One Argon2 run at time cost t and memory m (KiB): its wall time. */
struct luks2_argon2_timer {
	int (*run)(void *ctx, uint32_t t, uint32_t m, long *ms);
	void *ctx;
};
/* The time cost and memory crypt_argon2_check would choose for
 * target_ms under memory ceiling max_m, measuring with tm. */
int luks2_argon2_search(const struct luks2_argon2_timer *tm, uint32_t max_m,
			uint32_t parallel, uint32_t target_ms, uint32_t *t_out,
			uint32_t *m_out);

/* ---- primitives (the keyslots, the unit tests) ---- */
int dmt_luks2_kdf(const struct dmt_luks2_pbkdf *kdf, const void *pass,
		  size_t pass_len, const uint8_t *salt, size_t salt_len,
		  uint8_t *key, size_t key_len, struct dmt_reason *r);
/* AF split (random stripes from getrandom) and merge, hash diffuser. */
int dmt_luks2_af_split(const uint8_t *key, size_t key_len, unsigned int stripes,
		       const char *hash, uint8_t *out);
int dmt_luks2_af_merge(const uint8_t *in, size_t key_len, unsigned int stripes,
		       const char *hash, uint8_t *key);
/* AF material size rounded up to 512-byte sectors (what gets encrypted). */
size_t dmt_luks2_af_sectors_size(size_t key_len, unsigned int stripes);

#endif /* DMT_LIB_CRYPT_LUKS2_PRIV_H */
