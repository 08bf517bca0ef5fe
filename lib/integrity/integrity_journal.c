// SPDX-License-Identifier: MIT
/*
 * dm-integrity journal (formats.md 2.5) and superblock MAC (2.4).  An
 * offline formatter must write a valid empty journal: the kernel fails
 * every I/O on a device whose journal commit ids it cannot match.
 */
#include <dmt/integrity.h>

#include "lib/integrity/integrity_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/common/byteorder.h"
#include <dmt/hash.h>

#define JOURNAL_BLOCK_SECTORS 8
#define COMMIT_ID_OFF 504
#define MAC_SLICE_OFF 496
#define MAC_SLICE 8
#define N_COMMIT_IDS 4

uint64_t dmt_integrity_commit_id(uint32_t section, uint32_t sector,
				 unsigned int seq)
{
	/* 0x1111..., 0x2222..., 0x3333..., 0x4444...: never colliding */
	uint64_t base = 0x1111111111111111ull *
			(uint64_t)(seq % N_COMMIT_IDS + 1);

	return base ^ (((uint64_t)section << 32) ^ sector);
}

/* With journal encryption the kernel derives other bases from the key. */
static uint64_t commit_id(const struct dmt_integrity_jcrypt *jc,
			  uint32_t section, uint32_t sector, unsigned int seq)
{
	if (!jc)
		return dmt_integrity_commit_id(section, sector, seq);
	return dmt_integrity_jcrypt_bases(jc)[seq % N_COMMIT_IDS] ^
	       (((uint64_t)section << 32) ^ sector);
}

static int mac_digest(const struct dmt_integrity_mac *mac, const void *msg,
		      size_t len, uint8_t *out, size_t *size)
{
	if (!mac || !mac->alg)
		return -EINVAL;
	return dmt_hash_oneshot(mac->alg, mac->key, mac->key_size, msg, len,
				out, size);
}

static int sb_mac_size(const struct dmt_integrity_mac *mac, size_t *size)
{
	const struct dmt_hash_alg *a;
	int err;

	if (!mac || !mac->alg)
		return -EINVAL;
	err = dmt_hash_alg_lookup(mac->alg, &a);
	if (err)
		return err;
	*size = dmt_hash_alg_digest_size(a);
	/* the kernel's limit: superblock fields + MAC within sector 0 */
	if (*size > DMT_DIGEST_MAX || *size + 64 > 512)
		return -EINVAL;
	return 0;
}

int dmt_integrity_sb_mac_write(const struct dmt_integrity_mac *mac,
			       uint8_t sector0[512])
{
	uint8_t d[DMT_DIGEST_MAX];
	size_t size, got;
	int err;

	err = sb_mac_size(mac, &size);
	if (err)
		return err;
	err = mac_digest(mac, sector0, 512 - size, d, &got);
	if (err)
		return err;
	memcpy(sector0 + 512 - size, d, size);
	return 0;
}

int dmt_integrity_sb_mac_verify(const struct dmt_integrity_mac *mac,
				const uint8_t sector0[512])
{
	uint8_t d[DMT_DIGEST_MAX];
	size_t size, got;
	int err;

	err = sb_mac_size(mac, &size);
	if (err)
		return err;
	err = mac_digest(mac, sector0, 512 - size, d, &got);
	if (err)
		return err;
	return memcmp(sector0 + 512 - size, d, size) ? -EBADMSG : 0;
}

/* Entry n lives in metadata sector n % 8, striped (formats.md 2.5). */
static size_t entry_off(const struct dmt_integrity_geom *g, unsigned int n)
{
	return (size_t)(n % JOURNAL_BLOCK_SECTORS) * 512 +
	       (size_t)(n / JOURNAL_BLOCK_SECTORS) * g->entry_size;
}

int dmt_integrity_section_mac(const struct dmt_integrity_geom *g,
			      const struct dmt_integrity_sb *sb,
			      const struct dmt_integrity_mac *mac,
			      uint32_t section, const uint8_t *section_buf,
			      uint8_t out[DMT_INTEGRITY_JOURNAL_MAC_SIZE])
{
	uint8_t d[DMT_DIGEST_MAX];
	size_t len = 0, size;
	uint8_t *msg;
	unsigned int n;
	int err;

	msg = malloc(DMT_INTEGRITY_SALT_SIZE + 8 + 8 * g->section_entries);
	if (!msg)
		return -ENOMEM;
	if (sb->flags & DMT_INTEGRITY_SB_FIXED_HMAC) {
		memcpy(msg, sb->salt, DMT_INTEGRITY_SALT_SIZE);
		put_le64(msg + DMT_INTEGRITY_SALT_SIZE, section);
		len = DMT_INTEGRITY_SALT_SIZE + 8;
	}
	for (n = 0; n < g->section_entries; n++) {
		memcpy(msg + len, section_buf + entry_off(g, n), 8);
		len += 8;
	}
	err = mac_digest(mac, msg, len, d, &size);
	free(msg);
	if (err)
		return err;
	memset(out, 0, DMT_INTEGRITY_JOURNAL_MAC_SIZE);
	memcpy(out, d, size < DMT_INTEGRITY_JOURNAL_MAC_SIZE ?
		       size : DMT_INTEGRITY_JOURNAL_MAC_SIZE);
	return 0;
}

int dmt_integrity_journal_section(const struct dmt_integrity_geom *g,
				  const struct dmt_integrity_sb *sb,
				  const struct dmt_integrity_mac *mac,
				  struct dmt_integrity_jcrypt *jc,
				  uint32_t section, unsigned int seq,
				  uint8_t *buf)
{
	uint8_t m[DMT_INTEGRITY_JOURNAL_MAC_SIZE];
	unsigned int j, n;
	int err;

	memset(buf, 0, (size_t)g->section_sectors * 512);
	for (j = 0; j < g->section_sectors; j++)
		put_le64(buf + (size_t)j * 512 + COMMIT_ID_OFF,
			 commit_id(jc, section, j, seq));
	/* unused entry: upper half of the sector field all ones */
	for (n = 0; n < g->section_entries; n++)
		memset(buf + entry_off(g, n) + 4, 0xff, 4);
	if (sb->flags & DMT_INTEGRITY_SB_HAVE_JOURNAL_MAC) {
		err = dmt_integrity_section_mac(g, sb, mac, section, buf, m);
		if (err)
			return err;
		for (j = 0; j < JOURNAL_BLOCK_SECTORS; j++)
			memcpy(buf + (size_t)j * 512 + MAC_SLICE_OFF,
			       m + j * MAC_SLICE, MAC_SLICE);
	}
	/* the MAC covers the plaintext; the disk holds the ciphertext */
	return jc ? dmt_integrity_jcrypt_section(jc, true, section, buf) : 0;
}

int dmt_integrity_journal_verify_section(
	const struct dmt_integrity_geom *g, const struct dmt_integrity_sb *sb,
	const struct dmt_integrity_mac *mac, struct dmt_integrity_jcrypt *jc,
	uint32_t section, uint8_t *section_buf,
	struct dmt_integrity_journal_report *rep)
{
	uint8_t m[DMT_INTEGRITY_JOURNAL_MAC_SIZE];
	unsigned int j, n, k;
	int err;

	if (jc) {
		err = dmt_integrity_jcrypt_section(jc, false, section,
						   section_buf);
		if (err)
			return err;
	}
	for (j = 0; j < g->section_sectors; j++) {
		uint64_t id = get_le64(section_buf + (size_t)j * 512 +
				       COMMIT_ID_OFF);

		for (k = 0; k < N_COMMIT_IDS; k++)
			if (id == commit_id(jc, section, j, k))
				break;
		if (k < N_COMMIT_IDS) {
			rep->seq_mask |= 1u << k;
			continue;
		}
		if (!rep->bad_commit_ids++) {
			rep->first_bad_section = section;
			rep->first_bad_sector = j;
		}
	}
	for (n = 0; n < g->section_entries; n++) {
		const uint8_t *e = section_buf + entry_off(g, n);

		if (e[4] == 0xff && e[5] == 0xff && e[6] == 0xff &&
		    e[7] == 0xff)
			continue;
		if (!rep->used_entries++) {
			rep->first_used_section = section;
			rep->first_used_entry = n;
			rep->first_used_logical = get_le64(e);
		}
	}
	if (!(sb->flags & DMT_INTEGRITY_SB_HAVE_JOURNAL_MAC) || !mac ||
	    !mac->alg)
		return 0;
	err = dmt_integrity_section_mac(g, sb, mac, section, section_buf, m);
	if (err)
		return err;
	for (j = 0; j < JOURNAL_BLOCK_SECTORS; j++) {
		if (memcmp(section_buf + (size_t)j * 512 + MAC_SLICE_OFF,
			   m + j * MAC_SLICE, MAC_SLICE)) {
			if (!rep->bad_macs++)
				rep->first_bad_mac_section = section;
			break;
		}
	}
	return 0;
}
