/* SPDX-License-Identifier: MIT */
/*
 * Authenticated dm-crypt offline (formats.md, authenticated dm-crypt):
 * LUKS2 with an integrity segment, dm-crypt in AEAD mode over a
 * dm-integrity device that only stores the tags (no internal hash).
 *
 * Per sector (one encryption unit of sector_size bytes), as the kernel's
 * dm-crypt does it (crypt_convert_block_aead):
 *	AAD    = le64(s512) || IV		s512: the sector's number in
 *						512-byte units of the mapped
 *						device (minus iv_offset, 0)
 *	IV     = iv_size random bytes (-random)
 *	C, T   = AEAD(key, IV, AAD, plaintext)	T auth_tag_size bytes
 *	tag    = T || IV (tag_size = auth_tag_size + iv_size) in the
 *	         dm-integrity tag of that block
 * The volume key is cipher key || MAC key (MAC key only for hmac-*).
 */
#ifndef DMT_CRYPT_AUTH_H
#define DMT_CRYPT_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dmt/integrity.h>
#include <dmt/progress.h>
#include <dmt/reason.h>

struct dmt_file;
struct dmt_luks2;
struct dmt_luks2_params;

/* Failure reasons (dmt_reason.code). */
enum {
	DMT_REASON_AUTH_FIRST = 0x600,
	/* name: the cipher/integrity pair is not one of the supported six
	 * (dmt_auth_supported()) */
	DMT_REASON_AUTH_COMBINATION,
	/* field "key_size": value bytes (the cipher part), min/max */
	DMT_REASON_AUTH_KEY_SIZE,
	/* field "device_size": the payload does not fit; value = payload
	 * bytes, min = device bytes needed */
	DMT_REASON_AUTH_TOO_SMALL,
	/* the header has no integrity segment / one we do not know */
	DMT_REASON_AUTH_NO_INTEGRITY,
	/* field "sb": the dm-integrity superblock does not match the
	 * header (tag size, sector size) or is missing */
	DMT_REASON_AUTH_SB,
};

enum dmt_auth_kind {
	DMT_AUTH_HMAC_XTS,	/* authenc(hmac(H),xts(aes)) */
	DMT_AUTH_GCM,		/* gcm(aes) */
	DMT_AUTH_CHACHAPOLY,	/* rfc7539(chacha20,poly1305) */
	DMT_AUTH_AEGIS128,	/* aegis128 */
};

/* One of the six combinations, decoded. */
struct dmt_auth_spec {
	const char *cipher;		/* LUKS2 "encryption": aes-xts-random */
	const char *integrity;		/* cryptsetup --integrity: hmac-sha256 */
	const char *luks2_type;		/* "integrity"."type": hmac(sha256) */
	const char *kernel_cipher;	/* dm-crypt table cipher (capi:...) */
	enum dmt_auth_kind kind;
	const char *mac_alg;		/* "hmac(sha256)"; NULL for AEADs */
	unsigned int iv_size;		/* random IV bytes */
	unsigned int auth_tag_size;	/* MAC/AEAD tag bytes */
	unsigned int tag_size;		/* dm-integrity tag: auth + IV */
	size_t cipher_key_size;		/* bytes */
	size_t mac_key_size;		/* bytes, 0 for AEADs */
};

/* "aes-xts-random+hmac-sha256, ..., aegis128-random+aead" */
const char *dmt_auth_supported(void);
/*
 * cipher ("aes-xts-random") + integrity ("hmac-sha256", "hmac(sha256)",
 * "aead", "poly1305"); cipher_key_size in bytes, 0: cryptsetup's default
 * (64 for XTS, 32 for GCM and ChaCha20, 16 for AEGIS-128: what the kernel
 * cases use).
 */
int dmt_auth_lookup(const char *cipher, const char *integrity,
		    size_t cipher_key_size, struct dmt_auth_spec *s,
		    struct dmt_reason *r);

/* ---- the sector engine ---- */

struct dmt_auth_params {
	const struct dmt_auth_spec *spec;
	const uint8_t *key;		/* volume key: cipher || MAC key */
	size_t key_size;		/* cipher_key_size + mac_key_size */
	unsigned int sector_size;	/* 512..4096 */
	unsigned int threads;		/* 0: dmt_default_threads() */
	const char *engine;		/* hash engine spec (HMAC), NULL */
	uint64_t reserved[8];		/* must be zero */
};

void dmt_auth_params_init(struct dmt_auth_params *p);

struct dmt_auth;
int dmt_auth_new(const struct dmt_auth_params *p, struct dmt_auth **out,
		 struct dmt_reason *r);
/* NULL is a no-op. */
void dmt_auth_free(struct dmt_auth *a);

/*
 * n sectors (sector_size units) first..first+n-1 of the mapped device:
 * in -> out (in == out allowed); tags receives n * tag_size bytes.  The
 * IVs come from getrandom in one call per batch.
 */
int dmt_auth_encrypt(struct dmt_auth *a, uint64_t first, size_t n,
		     const void *in, void *out, uint8_t *tags);
/*
 * Verifies n sectors against their tags; out (may be NULL: verify only)
 * gets the plaintext of every sector (also of failing ones: what the
 * cipher gives).  bad[i] (may be NULL) is set to 1 for a failing sector,
 * 0 otherwise.  Returns the number of failing sectors (>= 0) or -errno.
 */
int dmt_auth_decrypt(struct dmt_auth *a, uint64_t first, size_t n,
		     const void *in, void *out, const uint8_t *tags,
		     uint8_t *bad);

/* ---- LUKS2 header with an integrity segment ---- */

/*
 * As dmt_luks2_create(), with the segment "encryption" = s->cipher and
 * "integrity": {"type": s->luks2_type, "journal_encryption": "none",
 * "journal_integrity": "none"}; the volume key is cipher_key_size +
 * mac_key_size bytes (p->volume_key, or from getrandom); p->cipher and
 * p->volume_key_size are ignored.
 */
int dmt_luks2_create_auth(const struct dmt_luks2_params *p,
			  const struct dmt_auth_spec *s, struct dmt_luks2 **out,
			  struct dmt_reason *r);
/* The integrity spec of a header (created or loaded). */
int dmt_luks2_auth_spec(const struct dmt_luks2 *h, struct dmt_auth_spec *s,
			struct dmt_reason *r);

/* ---- images ---- */

/*
 * data: the device holding the dm-integrity device at data_offset (the
 * image itself, or the data device of a detached header).
 * format: the header h (created, keyslots added) is written to header
 * (NULL: data, at 0), then the dm-integrity superblock (tag_size, no
 * internal hash, fixed padding, the kernel's default journal and
 * interleave), an empty journal, the payload sectors encrypted with
 * their tags, with wipe the rest of the device as encrypted zeros.
 */
struct dmt_auth_image_params {
	struct dmt_luks2 *h;		/* header handle with the volume key */
	struct dmt_file *header;	/* detached header file, or NULL */
	struct dmt_file *data;
	struct dmt_file *payload;	/* format */
	struct dmt_file *output;	/* decrypt: plaintext goes here */
	uint64_t device_size;		/* format: bytes of data, 0: as is */
	bool device_size_auto;		/* smallest size holding the payload */
	bool wipe;			/* format: the rest as encrypted zeros */
	bool allow_bad;			/* decrypt: emit failing sectors */
	uint64_t journal_sectors;	/* 0: the kernel default */
	unsigned int threads;
	const char *engine;
	struct dmt_progress progress;
	uint64_t reserved[8]; /* must be zero */
};

void dmt_auth_image_params_init(struct dmt_auth_image_params *p);

#define DMT_AUTH_REPORT_MAX 10

struct dmt_auth_result {
	struct dmt_auth_spec spec;
	struct dmt_integrity_sb sb;
	struct dmt_integrity_geom geom;
	uint64_t data_offset;		/* bytes: the dm-integrity device */
	uint64_t device_bytes;		/* data device size */
	uint64_t mapped_bytes;		/* provided_data_sectors * 512 */
	uint64_t payload_bytes;
	uint64_t need_bytes;		/* TOO_SMALL: data bytes needed */
	uint64_t sectors;		/* sectors processed */
	uint64_t bad;			/* sectors whose tag failed */
	uint64_t first_bad[DMT_AUTH_REPORT_MAX]; /* 512-byte units */
	size_t n_first_bad;
	uint64_t reserved[8];
};

/* Each fills *res (zeroed first) and, on failure, *r (may be NULL). */
int dmt_auth_format(const struct dmt_auth_image_params *p,
		    struct dmt_auth_result *res, struct dmt_reason *r);
/*
 * Smallest data device (bytes, data_offset included) whose dm-integrity
 * layer (tag size of s, sector_size, journal_sectors 0: default) provides
 * payload_bytes rounded up to whole sectors: what device_size_auto uses.
 */
int dmt_auth_min_device(const struct dmt_auth_spec *s,
			unsigned int sector_size, uint64_t data_offset,
			uint64_t journal_sectors, uint64_t payload_bytes,
			uint64_t *bytes, struct dmt_reason *r);
/* Every sector of the mapped device: -EBADMSG when any fails. */
int dmt_auth_check(const struct dmt_auth_image_params *p,
		   struct dmt_auth_result *res, struct dmt_reason *r);
/* Plaintext of the mapped device to output; a failing sector stops it
 * with -EBADMSG unless allow_bad (then it is written as the cipher gives
 * it, counted, and the result is still -EBADMSG). */
int dmt_auth_decrypt_image(const struct dmt_auth_image_params *p,
			   struct dmt_auth_result *res, struct dmt_reason *r);

#endif /* DMT_CRYPT_AUTH_H */
