/* SPDX-License-Identifier: MIT */
/*
 * dm-crypt sectors offline: the cipher engine (many sectors per call, IVs
 * generated inside, every core), plain-mode key hashing as cryptsetup
 * 2.6.1 does it, and memory for secrets (locked, wiped when freed).
 *
 * Numbering (formats.md, dm-crypt): a *sector* here is one encryption unit
 * of sector_size bytes, counted from the start of the mapped device.  The
 * IV of sector s is computed like the kernel does:
 *	iv_sector = s * (sector_size / 512) + iv_offset
 *	iv_sector >>= log2(sector_size / 512)	only with iv_large_sectors
 * iv_offset is the table's <iv_offset> (512-byte units: plain mode's skip,
 * LUKS2's iv_tweak).  LUKS2 never sets iv_large_sectors.
 */
#ifndef DMT_CRYPT_H
#define DMT_CRYPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dmt/progress.h>
#include <dmt/reason.h>

struct dmt_file;
struct dmt_reason;

#define DMT_CRYPT_MIN_SECTOR 512
#define DMT_CRYPT_MAX_SECTOR 4096
#define DMT_CRYPT_MAX_KEY 64

/* dm-crypt failure reasons (dmt_reason.code). */
enum {
	/* name: cipher not supported; the supported list is
	 * dmt_crypt_supported_ciphers() */
	DMT_REASON_CRYPT_CIPHER = DMT_REASON_CRYPT_FIRST + 1,
	/* field "key_size": value bytes, the cipher takes min..max (a
	 * multiple of 16 for XTS: max is the other choice) */
	DMT_REASON_CRYPT_KEY_SIZE,
	/* field "iv_offset": value not a multiple of sector_size/512 with
	 * iv_large_sectors (the kernel refuses it) */
	DMT_REASON_CRYPT_IV_OFFSET,
	/* OpenSSL refused the key (XTS with two equal halves...) */
	DMT_REASON_CRYPT_BACKEND,
};

enum dmt_crypt_mode { DMT_CRYPT_XTS, DMT_CRYPT_CBC };
enum dmt_crypt_ivgen {
	DMT_CRYPT_IV_PLAIN,		/* le32(iv_sector), zero-padded */
	DMT_CRYPT_IV_PLAIN64,		/* le64(iv_sector), zero-padded */
	DMT_CRYPT_IV_ESSIV_SHA256,	/* AES-256_{sha256(key)}(le64...) */
};

/* A cipher spec in cryptsetup's spelling, decoded. */
struct dmt_crypt_cipher {
	const char *name;		/* "aes-xts-plain64" (static) */
	enum dmt_crypt_mode mode;
	enum dmt_crypt_ivgen ivgen;
	unsigned int default_key_size;	/* bytes (cryptsetup's default) */
};

/* "aes-xts-plain64, aes-xts-plain, aes-cbc-essiv:sha256, aes-cbc-plain64" */
const char *dmt_crypt_supported_ciphers(void);
/* -EINVAL with DMT_REASON_CRYPT_CIPHER (name = spec) for anything else. */
int dmt_crypt_cipher_lookup(const char *spec, struct dmt_crypt_cipher *out,
			    struct dmt_reason *r);
/* Is key_size (bytes) valid for the cipher?  0 or -EINVAL with reason. */
int dmt_crypt_check_key_size(const struct dmt_crypt_cipher *c,
			     size_t key_size, struct dmt_reason *r);

struct dmt_crypt_params {
	const char *cipher;		/* cryptsetup spelling */
	const uint8_t *key;		/* not kept: only the contexts' key
					 * schedules (cleansed at close) */
	size_t key_size;		/* bytes: 32/64 XTS, 16/24/32 CBC */
	unsigned int sector_size;	/* 512..4096, power of 2 */
	bool iv_large_sectors;
	uint64_t iv_offset;		/* 512-byte units */
	unsigned int threads;		/* 0: dmt_default_threads() */
	const char *engine;		/* engine spec (<dmt/hash.h>), NULL:
					 * default ("aes-xts=openssl" or
					 * "openssl" forces OpenSSL's AES) */
	uint64_t reserved[8];		/* must be zero */
};

/* Zeroes *p (no key, threads 0: dmt_default_threads()). */
void dmt_crypt_params_init(struct dmt_crypt_params *p);

/*
 * The engine: one prepared OpenSSL context per worker (and one ESSIV
 * context), re-keyed never, re-initialised per sector with the IV only.
 * XTS (and CBC with AES-128/256) runs on our own VAES code instead where
 * the CPU has VAES, VPCLMULQDQ and AVX-512 (twice OpenSSL 3.0's AES-NI
 * rate) unless the engine spec says otherwise (primitives aes-xts and
 * aes-cbc, see --list-engines); the bytes are the same either way.
 */
struct dmt_crypt;
int dmt_crypt_new(const struct dmt_crypt_params *p, struct dmt_crypt **out,
		  struct dmt_reason *r);
/* Wipes the key and contexts.  NULL is a no-op. */
void dmt_crypt_free(struct dmt_crypt *c);
unsigned int dmt_crypt_sector_size(const struct dmt_crypt *c);
/* "vaes" or "openssl": which code does the work. */
const char *dmt_crypt_engine_name(const struct dmt_crypt *c);

/*
 * n consecutive sectors first..first+n-1: in -> out (n * sector_size
 * bytes each; in == out is allowed, partial overlap is not).  Large calls
 * are spread over the engine's threads; the result never depends on the
 * thread count.
 */
int dmt_crypt_encrypt(struct dmt_crypt *c, uint64_t first, size_t n,
		      const void *in, void *out);
int dmt_crypt_decrypt(struct dmt_crypt *c, uint64_t first, size_t n,
		      const void *in, void *out);

/*
 * File to file through the engine: bytes from in at in_offset, sectors
 * first_sector.., to out at out_offset, with reading ahead and writing
 * behind on threads of their own (four 2 MiB chunks at most in memory).
 * A byte count that is not a multiple of the sector size is completed
 * with zeros to a whole last sector (that much more is written).  The
 * chunks are wiped before they are freed.  Errors: the first I/O or
 * engine error; -EINTR when the progress callback asks to stop.
 */
struct dmt_crypt_stream_params {
	struct dmt_file *in, *out;
	uint64_t in_offset, out_offset;	/* bytes */
	uint64_t bytes;
	uint64_t first_sector;
	bool encrypt;			/* false: decrypt */
	struct dmt_progress progress;
	uint64_t reserved[8]; /* must be zero */
};
void dmt_crypt_stream_params_init(struct dmt_crypt_stream_params *p);
int dmt_crypt_stream_run(struct dmt_crypt *c,
			 const struct dmt_crypt_stream_params *p,
			 struct dmt_reason *r);

/*
 * Plain mode's key from a passphrase, as `cryptsetup open --type plain
 * --hash SPEC` 2.6.1 makes it: SPEC "HASH" or "HASH:LEN" (only LEN bytes
 * hashed, the rest of the key zero; LEN at most key_size), "plain" (the
 * passphrase itself, cut to the key or zero-padded when shorter) or
 * "plain:LEN" (exactly its first LEN bytes, then zeros: a shorter
 * passphrase is TOO_SMALL).  LEN is read as sscanf's %zd.  Round i hashes
 * i times "A" then the passphrase; rounds are concatenated until key_size
 * bytes.  HASH: any name dmt_crypt_hash_usable() accepts.
 */
int dmt_crypt_plain_hash(const char *hash_spec, const void *pass,
			 size_t pass_len, uint8_t *key, size_t key_size,
			 struct dmt_reason *r);
/* Whether OpenSSL computes the digest NAME here ("sha256", "ripemd160":
 * names an OpenSSL provider can fetch, not just a known name). */
bool dmt_crypt_hash_usable(const char *name);
/* The hash names cryptsetup 2.6.1 knows that work here, ", "-separated
 * (for messages: "sha1, sha224, sha256, ..."). */
const char *dmt_crypt_supported_hashes(void);

/*
 * Memory for secrets: page-backed, mlock()ed where allowed (failure is not
 * an error), excluded from core dumps, zeroed.  dmt_secure_free() wipes
 * and unmaps; NULL is a no-op.
 */
void *dmt_secure_alloc(size_t len);
void dmt_secure_free(void *p);
/* Wipes len bytes (not optimised away). */
void dmt_secure_wipe(void *p, size_t len);

#endif /* DMT_CRYPT_H */
