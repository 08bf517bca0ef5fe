/* SPDX-License-Identifier: MIT */
/*
 * LUKS2 headers as cryptsetup 2.6.1 writes and reads them (formats.md,
 * LUKS2): two binary headers with sha256 checksums, JSON metadata
 * (keyslots, segments, digests, config), keyslot areas holding the
 * anti-forensic split of the volume key encrypted under a key derived
 * from the passphrase (PBKDF2 or Argon2i/Argon2id), and the pbkdf2 digest
 * that recognises the volume key.
 *
 * One handle, two ways in: dmt_luks2_create() (new metadata, a volume key
 * from getrandom or the caller) or dmt_luks2_load() (a header on a file or
 * device).  dmt_luks2_add_keyslot() / dmt_luks2_unlock() tie passphrases to
 * the volume key, dmt_luks2_write() puts the whole header area (both
 * headers and the keyslots area) at offset 0 of a file.  The volume key
 * lives in locked memory and is wiped by dmt_luks2_free().
 *
 * A loaded header has passed libcryptsetup 2.6.1's checks of the binary
 * headers and of the JSON metadata (what luksDump accepts and refuses,
 * formats.md, LUKS2), before anything in it is used.
 */
#ifndef DMT_LUKS2_H
#define DMT_LUKS2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dmt_file;
struct dmt_reason;

#define DMT_LUKS2_BIN_HDR_SIZE 4096
#define DMT_LUKS2_DEFAULT_METADATA (16u << 10)
#define DMT_LUKS2_DEFAULT_DATA_OFFSET (16u << 20)
#define DMT_LUKS2_MAX_METADATA (4u << 20)
#define DMT_LUKS2_KEYSLOTS_MAX 32
#define DMT_LUKS2_STRIPES 4000
#define DMT_LUKS2_SALT_SIZE 32
#define DMT_LUKS2_LABEL_MAX 47		/* 48 bytes on disk, NUL included */
#define DMT_LUKS2_UUID_SIZE 36
#define DMT_LUKS2_SIZE_DYNAMIC UINT64_MAX

/* LUKS2 failure reasons (dmt_reason.code). */
enum {
	DMT_REASON_LUKS2_FIRST = 0x500,
	/* neither header copy is usable: field names the primary's first
	 * problem: "magic", "version", "hdr_size", "hdr_offset", "size"
	 * (file too short), "checksum", "a LUKS1 header", "json: ..." (not
	 * one JSON object followed by NULs), or the rule of libcryptsetup
	 * 2.6.1's metadata checks it breaks, "<object> <name>: <problem>"
	 * ("keyslot 1: no digest", "segment 0: flags is not an array"; a
	 * per-thread buffer, valid until the next load in the thread) */
	DMT_REASON_LUKS2_NO_HEADER,
	/* metadata does not fit: field "json" value bytes, max bytes */
	DMT_REASON_LUKS2_JSON_SIZE,
	/* no keyslot accepted the passphrase */
	DMT_REASON_LUKS2_WRONG_PASSPHRASE,
	/* field "keyslot": value already used / not free / out of range */
	DMT_REASON_LUKS2_KEYSLOT,
	/* field "keyslots_size": no room for a keyslot of value bytes */
	DMT_REASON_LUKS2_NO_SPACE,
	/* name: the KDF failed (libargon2's message) */
	DMT_REASON_LUKS2_KDF,
	/* a valid header this library does not decrypt: field says why
	 * ("requirements": name, a reencryption in progress or one it does
	 * not know; "segments": value segments; "segment 0 type": name;
	 * "segment 0 sector_size": value; "segment 0 size": value) */
	DMT_REASON_LUKS2_LAYOUT,
	/* the metadata to write breaks field's rule (see NO_HEADER) */
	DMT_REASON_LUKS2_INVALID,
};

/* A key derivation: "pbkdf2" (hash, iterations), "argon2i"/"argon2id"
 * (time = iterations, memory_kb, parallel). */
struct dmt_luks2_pbkdf {
	const char *type;
	const char *hash;		/* pbkdf2 only; default "sha256" */
	uint32_t iterations;		/* pbkdf2 iterations / argon2 time */
	uint32_t memory_kb;		/* argon2 */
	uint32_t parallel;		/* argon2 threads ("cpus") */
	uint64_t reserved[8];		/* must be zero */
};

/* Zeroes *k: type NULL (a keyslot's default, argon2id 4/1GiB/4). */
void dmt_luks2_pbkdf_init(struct dmt_luks2_pbkdf *k);

struct dmt_luks2_params {
	const char *cipher;		/* data segment; "aes-xts-plain64" */
	size_t volume_key_size;		/* bytes; 0: the cipher's default */
	const uint8_t *volume_key;	/* NULL: from getrandom */
	unsigned int sector_size;	/* 0: 4096 (luksFormat on a file) */
	uint64_t metadata_size;		/* 0: 16 KiB; 16K..4M power of 2 */
	uint64_t keyslots_size;		/* 4 KiB multiple, <= 128 MiB; 0:
					 * data_offset - 2 * metadata (at most
					 * 128 MiB), or 16M - 2 * metadata
					 * without a data offset; shrunk to
					 * fit below the data offset */
	uint64_t data_offset;		/* bytes, a multiple of 4096 (as
					 * luksFormat); 0 with !detached: 16 MiB;
					 * write zeroes what lies between the
					 * keyslots area and it */
	bool detached;			/* header without data (--header):
					 * data_offset may be 0 */
	const char *uuid;		/* NULL: random */
	const char *label, *subsystem;	/* NULL: none */
	const char *digest_hash;	/* NULL: "sha256" (also AF hash) */
	uint32_t digest_iterations;	/* 0: as luksFormat benchmarks them
					 * (PBKDF2 of the volume key's length
					 * for 125 ms of CPU, at least 1000);
					 * 1000 is luksFormat's with
					 * --pbkdf-force-iterations */
	uint64_t reserved[8];		/* must be zero */
};

/* Zeroes *p: every field's default (above). */
void dmt_luks2_params_init(struct dmt_luks2_params *p);

struct dmt_luks2_keyslot_params {
	int keyslot;			/* -1: the first free */
	const char *cipher;		/* NULL: "aes-xts-plain64" */
	size_t key_size;		/* 0: 64 */
	struct dmt_luks2_pbkdf pbkdf;	/* type NULL: argon2id 4/1GiB/4 */
	uint64_t reserved[8];		/* must be zero */
};

/* Zeroes *kp, keyslot -1 (the first free). */
void dmt_luks2_keyslot_params_init(struct dmt_luks2_keyslot_params *kp);

/* The data segment ("segments"."0"). */
struct dmt_luks2_segment {
	uint64_t offset;		/* bytes on the data device */
	uint64_t size;			/* DMT_LUKS2_SIZE_DYNAMIC: to the end */
	uint64_t iv_tweak;		/* dm-crypt iv_offset (512-byte units) */
	const char *cipher;		/* "aes-xts-plain64" */
	unsigned int sector_size;
	uint64_t reserved[8];
};

struct dmt_luks2;

int dmt_luks2_create(const struct dmt_luks2_params *p, struct dmt_luks2 **out,
		     struct dmt_reason *r);
/*
 * Reads both header copies as libcryptsetup does (the secondary at the
 * primary's hdr_size, or, when the primary's binary header or checksum
 * is bad, at the first legal offset whose are good), parses and checks
 * each JSON area, takes the valid one with the higher seqid (the primary
 * on a tie).  Never writes.
 */
int dmt_luks2_load(struct dmt_file *f, struct dmt_luks2 **out,
		   struct dmt_reason *r);
void dmt_luks2_free(struct dmt_luks2 *h);

/* Derives, splits and encrypts the volume key into a keyslot (needs the
 * volume key: after create or unlock).  Returns the slot number. */
int dmt_luks2_add_keyslot(struct dmt_luks2 *h,
			  const struct dmt_luks2_keyslot_params *kp,
			  const void *pass, size_t pass_len,
			  struct dmt_reason *r);
/*
 * Passphrase -> volume key (slot -1: every keyslot in order).  Loaded
 * handles read the keyslot area from the file they were loaded from.
 * Returns the slot that opened, -EPERM with WRONG_PASSPHRASE otherwise.
 */
int dmt_luks2_unlock(struct dmt_luks2 *h, int slot, const void *pass,
		     size_t pass_len, struct dmt_reason *r);
/* The volume key once created or unlocked (NULL before). */
const uint8_t *dmt_luks2_volume_key(const struct dmt_luks2 *h, size_t *len);

/*
 * Writes the header area [0, 2 * metadata_size + keyslots_size): the
 * keyslots area random as luksFormat leaves it except the keyslots' own
 * material, then the secondary and the primary header (seqid + 1).  The
 * caller syncs.
 */
int dmt_luks2_write(struct dmt_luks2 *h, struct dmt_file *f,
		    struct dmt_reason *r);

/* ---- accessors ---- */
/*
 * The data segment offline decryption uses: no mandatory requirement, one
 * segment ("0", type crypt, sector_size 512..4096 and a power of two,
 * offset + size representable).  -ENOTSUP with DMT_REASON_LUKS2_LAYOUT
 * for another valid layout (several segments, a reencryption...).
 */
int dmt_luks2_data_segment(const struct dmt_luks2 *h,
			   struct dmt_luks2_segment *seg, struct dmt_reason *r);
/* The same without a reason. */
int dmt_luks2_get_segment(const struct dmt_luks2 *h,
			  struct dmt_luks2_segment *seg);
const char *dmt_luks2_uuid(const struct dmt_luks2 *h);
const char *dmt_luks2_label(const struct dmt_luks2 *h);	/* "" if none */
const char *dmt_luks2_subsystem(const struct dmt_luks2 *h);
uint64_t dmt_luks2_seqid(const struct dmt_luks2 *h);
uint64_t dmt_luks2_metadata_size(const struct dmt_luks2 *h);
uint64_t dmt_luks2_keyslots_size(const struct dmt_luks2 *h);
/* Bytes the header occupies: 2 * metadata_size + keyslots_size. */
uint64_t dmt_luks2_header_size(const struct dmt_luks2 *h);
/* Which copy a load used: 0 primary, 1 secondary (the other was bad). */
int dmt_luks2_loaded_copy(const struct dmt_luks2 *h);
/* Active keyslot numbers into slots[DMT_LUKS2_KEYSLOTS_MAX]; the count. */
int dmt_luks2_keyslots(const struct dmt_luks2 *h, int *slots);
/* One keyslot's fields (what luksDump shows); strings point into h. */
struct dmt_luks2_keyslot_info {
	const char *type;		/* "luks2" */
	size_t key_size;		/* volume key bytes */
	const char *cipher;		/* area.encryption */
	size_t cipher_key_size;		/* area.key_size */
	struct dmt_luks2_pbkdf pbkdf;
	uint8_t salt[DMT_LUKS2_SALT_SIZE];
	unsigned int af_stripes;
	const char *af_hash;
	uint64_t area_offset, area_size;
	int digest;			/* the digest that lists it, or -1 */
	uint64_t reserved[8];
};
/* -ENOENT for a slot that is not there, -EINVAL for one we cannot read. */
int dmt_luks2_keyslot_info(const struct dmt_luks2 *h, int slot,
			   struct dmt_luks2_keyslot_info *ki);

/* What `cryptsetup luksDump` 2.6.1 prints for the header, byte for byte
 * (malloc'ed text; -ENOMEM). */
int dmt_luks2_dump(const struct dmt_luks2 *h, char **text);

/* The JSON metadata as stored (cryptsetup's --dump-json-metadata prints
 * it pretty; this is the stored plain form).  Valid until the next call
 * that changes h. */
const char *dmt_luks2_json(struct dmt_luks2 *h);

/* ---- key derivation costs (the tool's benchmark) ---- */
/*
 * Costs that take about target_ms here (cryptsetup's --iter-time), as
 * cryptsetup 2.6.1 chooses them (lib/crypt/luks2_bench.c has the rules):
 * pbkdf2 (type NULL too): iterations for key_len output bytes from the
 * CPU time of a PBKDF2 run, at least 1000.  argon2i/argon2id: the
 * limits of dmt_luks2_pbkdf_limit, then memory_kb (the ceiling) and time
 * (iterations, at least 4) from wall-clock runs: memory raised first (from
 * 64 MiB or the ceiling if lower), time when the memory is at its ceiling;
 * a target under the cost of 64 MiB at time 4 gives those.  Run by root,
 * the measurements run at nice -18 (as libcryptsetup's); the calling
 * thread's priority is restored after.
 */
int dmt_luks2_pbkdf_benchmark(struct dmt_luks2_pbkdf *k, unsigned int target_ms,
			      size_t key_len, struct dmt_reason *r);
/* cryptsetup's limits of an argon2 keyslot, forced costs too: memory_kb
 * (0: 1 GiB) at most half the RAM, parallel (0: 4) at most 4 and at most
 * the online CPUs.  Nothing for pbkdf2. */
void dmt_luks2_pbkdf_limit(struct dmt_luks2_pbkdf *k);

#endif /* DMT_LUKS2_H */
