/* SPDX-License-Identifier: MIT */
/*
 * Test-only references for the dm-integrity tests, written from
 * formats.md without using lib/integrity*.c or the hash engine: the facts
 * files of testdata/integrity/, tag computation through OpenSSL / bitwise
 * CRCs / libxxhash, and the section 2.5/2.6/2.8 layout formulas.
 */
#ifndef DMT_TEST_INTEGRITY_ORACLE_H
#define DMT_TEST_INTEGRITY_ORACLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IT_MAX_KEYS 24

struct it_fact {
	char name[64];
	int n;
	char key[IT_MAX_KEYS][32];
	char val[IT_MAX_KEYS][160];
};

/* malloc'ed path of testdata/integrity/<file> (via $DMT_SRC). */
char *it_testdata_path(const char *file);
/* Loads testdata/integrity/<file> (via $DMT_SRC); returns the count. */
int it_facts_load(const char *file, struct it_fact **out);
const char *it_get(const struct it_fact *f, const char *key);
/* Numeric field; aborts the test when missing. */
uint64_t it_getu(const struct it_fact *f, const char *key);
bool it_has(const struct it_fact *f, const char *key);

/*
 * Reference tag: first tag_size bytes of ALG([salt] || le64(sector) ||
 * block), zero-padded.  alg: crc32c, crc32, sha1, sha256, xxhash64,
 * hmac(sha256), hmac(sha1).
 */
void it_ref_tag(const char *alg, const uint8_t *key, size_t key_len,
		const uint8_t *salt, uint64_t sector, const uint8_t *block,
		size_t bs, unsigned int tag_size, uint8_t *out);
/* Plain HMAC / digest through OpenSSL (for journal and superblock MACs). */
void it_hmac_sha256(const uint8_t *key, size_t key_len, const uint8_t *msg,
		    size_t len, uint8_t out[32]);

/* Layout decoded straight from a superblock sector (formats.md 2.2-2.8). */
struct it_geo {
	unsigned int spb, log2_spb, tag, li;
	uint32_t flags, sections;
	bool meta;
	uint64_t provided, initial, run, section_sectors, section_entries;
	uint64_t entry_size, salt_off;
	uint8_t salt[16];
};
void it_geo_from_sb(const uint8_t *sector0, bool meta, struct it_geo *g);
uint64_t it_data_byte(const struct it_geo *g, uint64_t s);
uint64_t it_tag_byte(const struct it_geo *g, uint64_t s);

/*
 * Verifies every tag of an image with the reference tags; data from
 * `data_path` (the image itself when interleaved).  Returns the number of
 * mismatching blocks (first one in *first).
 */
uint64_t it_verify_image(const char *meta_path, const char *data_path,
			 const char *alg, const uint8_t *key, size_t key_len,
			 uint64_t *first);
/* Reads logical bytes [off, off+len) of an image through the layout. */
void it_read_logical(const char *meta_path, const char *data_path,
		     uint64_t off, uint8_t *buf, size_t len);

/* Runs build/integrity-tool with a printf-style argument string. */
int it_tool(char **out, char **err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* DMT_TEST_INTEGRITY_ORACLE_H */
