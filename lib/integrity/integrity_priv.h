/* SPDX-License-Identifier: MIT */
/*
 * Building blocks of lib/integrity that only the library (lib/integrity,
 * lib/crypt's authenticated images) and the unit tests use: superblock
 * encoding and MAC, journal sections, journal encryption and the tagger.
 */
#ifndef DMT_LIB_INTEGRITY_PRIV_H
#define DMT_LIB_INTEGRITY_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dmt/integrity.h>

/* The version the kernel writes for these flags (formats.md 2.3). */
uint8_t dmt_integrity_sb_version(uint32_t flags, bool meta_dev,
				 bool bitmap_mode);
/* Fills the 512-byte sector 0 (zero-padded, no MAC). */
void dmt_integrity_sb_encode(const struct dmt_integrity_sb *sb,
			     uint8_t sector0[512]);

/* Stores the MAC over sector0[0 .. 512 - mac_size) in its last bytes. */
int dmt_integrity_sb_mac_write(const struct dmt_integrity_mac *mac,
			       uint8_t sector0[512]);
/* 0, or -EBADMSG when the stored MAC differs. */
int dmt_integrity_sb_mac_verify(const struct dmt_integrity_mac *mac,
				const uint8_t sector0[512]);

/* ---- journal ---- */

/* Commit id of sector j of section i in sequence seq (0..3), host order. */
uint64_t dmt_integrity_commit_id(uint32_t section, uint32_t sector,
				 unsigned int seq);
/*
 * Section MAC (64 bytes, truncated or zero-padded) over the 8-byte sector
 * fields of the section's entries; `section_buf` holds the whole section.
 */
int dmt_integrity_section_mac(const struct dmt_integrity_geom *g,
			      const struct dmt_integrity_sb *sb,
			      const struct dmt_integrity_mac *mac,
			      uint32_t section, const uint8_t *section_buf,
			      uint8_t out[DMT_INTEGRITY_JOURNAL_MAC_SIZE]);
/*
 * Journal encryption (journal_crypt): "ctr(aes)", "cbc(aes)" (also
 * cryptsetup's "ctr-aes", "cbc-aes") or "chacha20", with its key, set up
 * as the kernel does for this journal geometry.  -ENOENT for another
 * cipher, -EINVAL for a key of the wrong size.
 */
struct dmt_integrity_jcrypt;
int dmt_integrity_jcrypt_new(const char *alg, const uint8_t *key,
			     size_t key_size,
			     const struct dmt_integrity_geom *g,
			     struct dmt_integrity_jcrypt **out);
void dmt_integrity_jcrypt_free(struct dmt_integrity_jcrypt *jc);
/* The four commit-id bases (host order) the kernel derives. */
const uint64_t *dmt_integrity_jcrypt_bases(
	const struct dmt_integrity_jcrypt *jc);
/* Encrypts or decrypts one whole journal section in place. */
int dmt_integrity_jcrypt_section(struct dmt_integrity_jcrypt *jc,
				 bool encrypt, uint32_t section, uint8_t *buf);

/* Writes section i of an empty journal in sequence seq (with MACs),
 * encrypted with jc unless it is NULL. */
int dmt_integrity_journal_section(const struct dmt_integrity_geom *g,
				  const struct dmt_integrity_sb *sb,
				  const struct dmt_integrity_mac *mac,
				  struct dmt_integrity_jcrypt *jc,
				  uint32_t section, unsigned int seq,
				  uint8_t *buf);

/* Accumulates the findings for one section into rep (with jc, the
 * section is decrypted in place first). */
int dmt_integrity_journal_verify_section(
	const struct dmt_integrity_geom *g, const struct dmt_integrity_sb *sb,
	const struct dmt_integrity_mac *mac, struct dmt_integrity_jcrypt *jc,
	uint32_t section, uint8_t *section_buf,
	struct dmt_integrity_journal_report *rep);

/* ---- tags ---- */

struct dmt_integrity_tagger;

/*
 * tag = first tag_size bytes of ALG([salt] || le64(sector) || block),
 * zero-padded.  salt is NULL without SB_FLAG_FIXED_HMAC.
 */
int dmt_integrity_tagger_new(const char *alg, const void *key,
			     size_t key_size, const uint8_t *salt,
			     unsigned int sector_size, unsigned int tag_size,
			     const char *engine,
			     struct dmt_integrity_tagger **out);
int dmt_integrity_tagger_clone(const struct dmt_integrity_tagger *t,
			       struct dmt_integrity_tagger **out);
void dmt_integrity_tagger_free(struct dmt_integrity_tagger *t);
const char *dmt_integrity_tagger_engine(const struct dmt_integrity_tagger *t);
/*
 * Tags of n consecutive blocks starting at logical sector `sector`; block
 * i is at data + i * stride (stride 0: the same block every time, e.g. a
 * zero block).  Writes n * tag_size bytes.
 */
int dmt_integrity_tags(struct dmt_integrity_tagger *t, uint64_t sector,
		       size_t n, const uint8_t *data, size_t stride,
		       uint8_t *tags);

#endif /* DMT_LIB_INTEGRITY_PRIV_H */
