/* SPDX-License-Identifier: MIT */
/*
 * dm-integrity images offline: superblock, geometry (the kernel's
 * provided_data_sectors and journal sizing), an empty valid journal with
 * its MACs, per-block tags through the batched hash engine, and the three
 * bulk operations format / check / recalculate.
 *
 * Sectors are 512-byte units; "blocks" are sector_size units
 * (2^log2_sectors_per_block sectors).  Logical sector s is sector s of the
 * mapped (dm-integrity) device.
 */
#ifndef DMT_INTEGRITY_H
#define DMT_INTEGRITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dmt/io.h>
#include <dmt/progress.h>
#include <dmt/reason.h>

#define DMT_INTEGRITY_SB_SECTORS 8
#define DMT_INTEGRITY_SB_BYTES 4096
#define DMT_INTEGRITY_SALT_SIZE 16
#define DMT_INTEGRITY_MAX_TAG 424
#define DMT_INTEGRITY_JOURNAL_MAC_SIZE 64
#define DMT_INTEGRITY_DISCARD_FILLER 0xf6
/* Versions this code understands (kernel 6.1 knows up to 5). */
#define DMT_INTEGRITY_MAX_VERSION 5

enum {
	DMT_INTEGRITY_SB_HAVE_JOURNAL_MAC = 0x01,
	DMT_INTEGRITY_SB_RECALCULATING = 0x02,
	DMT_INTEGRITY_SB_DIRTY_BITMAP = 0x04,
	DMT_INTEGRITY_SB_FIXED_PADDING = 0x08,
	DMT_INTEGRITY_SB_FIXED_HMAC = 0x10,
	DMT_INTEGRITY_SB_INLINE = 0x20,
};

/* Decoded superblock (host byte order). */
struct dmt_integrity_sb {
	uint8_t version;
	uint8_t log2_interleave_sectors;
	uint16_t tag_size;
	uint32_t journal_sections;
	uint64_t provided_data_sectors;
	uint32_t flags;
	uint8_t log2_sectors_per_block;
	uint8_t log2_blocks_per_bitmap_bit;
	uint64_t recalc_sector;
	uint8_t salt[DMT_INTEGRITY_SALT_SIZE];
};

/* -EMEDIUMTYPE without the magic (DMT_REASON_BAD_MAGIC) or with an
 * unknown version (DMT_REASON_SB_VERSION); r may be NULL. */
int dmt_integrity_sb_decode(const uint8_t sector0[512],
			    struct dmt_integrity_sb *sb, struct dmt_reason *r);

/* A keyed (or plain) algorithm for the journal MAC / superblock MAC. */
struct dmt_integrity_mac {
	const char *alg;	/* NULL: none */
	const uint8_t *key;
	size_t key_size;
};

/* The journal cipher (journal_crypt) and its key. */
struct dmt_integrity_cipher {
	const char *alg;	/* NULL: none */
	const uint8_t *key;
	size_t key_size;
};

/* ---- geometry ---- */

struct dmt_integrity_geom {
	/* what the superblock says */
	unsigned int log2_spb;		/* log2 sectors per block */
	unsigned int spb;
	unsigned int tag_size;
	uint32_t flags;
	bool meta_dev;			/* tags in a separate device */
	unsigned int log2_interleave;	/* 0 with meta_dev */
	uint32_t journal_sections;
	uint64_t provided;		/* provided_data_sectors */
	/* what the kernel derives */
	unsigned int log2_buffer_sectors;
	unsigned int entry_size;
	unsigned int entries_per_sector;
	unsigned int section_entries;
	unsigned int section_sectors;
	uint64_t initial_sectors;	/* superblock + journal */
	uint64_t metadata_run;		/* tag sectors per area */
	uint64_t meta_sectors;		/* sb, journal and tags device */
	uint64_t data_sectors;		/* data device (or meta) */
};

/* Format-time choices (integritysetup format options / table arguments). */
struct dmt_integrity_layout {
	unsigned int sector_size;	/* 512..4096, power of two */
	unsigned int tag_size;		/* 1..424 */
	uint64_t journal_sectors;	/* 0: kernel default (1/128, 64 MiB) */
	unsigned int interleave_sectors; /* 0: 32768 */
	unsigned int buffer_sectors;	/* 0: 128 */
	uint64_t sectors_per_bit;	/* 0: 32768 (bitmap granularity) */
	bool journal_mac;		/* SB_FLAG_HAVE_JOURNAL_MAC */
	bool fix_padding;		/* SB_FLAG_FIXED_PADDING (not meta) */
	bool fix_hmac;			/* SB_FLAG_FIXED_HMAC */
	bool meta_dev;
	uint64_t dev_sectors;		/* the (metadata) device */
	uint64_t data_dev_sectors;	/* with meta_dev: the data device */
	uint64_t reserved[8];		/* must be zero */
};

/* Zeroes *l: every field's default (above). */
void dmt_integrity_layout_init(struct dmt_integrity_layout *l);

/*
 * What the kernel's constructor writes into an all-zero superblock area
 * for these arguments (initialize_superblock + log2_blocks_per_bitmap_bit),
 * salt left zero.  -EINVAL for bad arguments, -ENODATA when the device is
 * too small to hold anything; *r (may be NULL) says which field.
 */
int dmt_integrity_geom_format(const struct dmt_integrity_layout *l,
			      struct dmt_integrity_sb *sb,
			      struct dmt_integrity_geom *g, struct dmt_reason *r);

/*
 * Geometry of an existing superblock on devices of these sizes, checked
 * the way the kernel's constructor checks it.  buffer_sectors 0 = 128.
 * -EMEDIUMTYPE for superblocks the kernel would refuse, -EINVAL when the
 * superblock wants (or refuses) a separate data device, -ENODATA when
 * the devices are smaller than the superblock says; *r (may be NULL)
 * says which field.
 */
int dmt_integrity_geom_from_sb(const struct dmt_integrity_sb *sb, bool meta_dev,
			       uint64_t meta_sectors, uint64_t data_sectors,
			       unsigned int buffer_sectors,
			       struct dmt_integrity_geom *g,
			       struct dmt_reason *r);

/* Mapping (formats.md 2.6, 2.8); s is a logical sector < provided. */
uint64_t dmt_integrity_data_sector(const struct dmt_integrity_geom *g,
				   uint64_t s);
uint64_t dmt_integrity_tag_offset(const struct dmt_integrity_geom *g,
				  uint64_t s);

/*
 * Smallest (metadata) device size, in bytes and a multiple of 4096, for
 * which the kernel provides at least need_sectors with layout l
 * (l->dev_sectors ignored).  With l->meta_dev, l->data_dev_sectors must be
 * set and the size keeps the full requested journal.  -E2BIG (or -ENODATA:
 * the data device is too small) with DMT_REASON_INTEGRITY_NO_DEVICE_SIZE
 * if none, -EINVAL for a bad layout (*r, may be NULL).
 */
int dmt_integrity_min_device(const struct dmt_integrity_layout *l,
			     uint64_t need_sectors, uint64_t *dev_bytes,
			     struct dmt_reason *r);

/* What a check found in the journal. */
struct dmt_integrity_journal_report {
	uint64_t bad_commit_ids;	/* sectors matching no sequence */
	uint32_t first_bad_section, first_bad_sector;
	uint64_t used_entries;		/* entries not marked unused */
	uint32_t first_used_section, first_used_entry;
	uint64_t first_used_logical;	/* its sector field */
	uint64_t bad_macs;		/* sections whose MAC differs */
	uint32_t first_bad_mac_section;
	unsigned int seq_mask;		/* sequences seen, bit per seq */
};
/* ---- operations on devices ---- */

/*
 * The caller opens the files (dmt_file_open) and keeps them open until it
 * is done with the result (reasons point at their paths):
 *   meta     the image, or the metadata device: DMT_OPEN_RW for format
 *            and recalculate (DMT_OPEN_NEW_TMP for a new image: format
 *            commits it only on success), DMT_OPEN_READ for check;
 *   data     a separate data device (DMT_OPEN_READ), or NULL;
 *   payload  format: what goes at logical sector 0 (DMT_OPEN_READ).
 * Callers that care lock them (DMT_OPEN_LOCK) and refuse one file given
 * twice (dmt_same_file) before opening.
 */
struct dmt_integrity_params {
	struct dmt_file *meta;
	struct dmt_file *data;
	struct dmt_file *payload;
	/* format */
	bool created;		/* meta is a new, empty (temporary) file */
	uint64_t device_size;	/* grow meta to (bytes), 0: as is */
	bool device_size_auto;	/* smallest size holding the payload */
	struct dmt_integrity_layout layout; /* dev sizes filled in by format */
	bool no_wipe;		/* superblock and journal only */
	bool have_salt;		/* else a random salt */
	uint8_t salt[DMT_INTEGRITY_SALT_SIZE];
	/* all */
	const char *alg;	/* internal hash, kernel or cryptsetup name */
	const uint8_t *key;
	size_t key_size;
	struct dmt_integrity_mac journal_mac;
	struct dmt_integrity_cipher journal_crypt;
	unsigned int buffer_sectors; /* check: kernel buffer (0 = 128) */
	/* check */
	bool allow_discards;	/* all-0xF6 tags count as valid */
	/* recalculate */
	bool recalc_reset;	/* from sector 0 even when recalculating */
	unsigned int threads;	/* 0/1: inline */
	const char *engine;	/* NULL: default dispatch */
	struct dmt_progress progress;
	uint64_t reserved[8]; /* must be zero (layout's too) */
};

/* Zeroes *p: no files, every field's default. */
void dmt_integrity_params_init(struct dmt_integrity_params *p);

#define DMT_INTEGRITY_REPORT_MAX 10

struct dmt_integrity_result {
	struct dmt_integrity_sb sb;	/* as written / as read */
	struct dmt_integrity_geom geom;
	uint64_t device_bytes;		/* (metadata) device size */
	uint64_t data_device_bytes;
	uint64_t payload_bytes;		/* format: bytes of the payload */
	uint64_t need_bytes;		/* -ENODATA: device size needed */
	bool created;			/* format: params.created */
	const char *engine;		/* backend that hashed the tags */
	/* check / recalculate */
	uint64_t start_sector;		/* first sector checked/redone */
	uint64_t end_sector;		/* end of that range */
	uint64_t blocks;		/* blocks verified/recomputed */
	uint64_t mismatches;		/* blocks whose tag is wrong */
	uint64_t discarded;		/* of those: all-0xF6 tags */
	uint64_t first_bad[DMT_INTEGRITY_REPORT_MAX]; /* logical sectors */
	size_t n_first_bad;
	uint64_t first_discarded[DMT_INTEGRITY_REPORT_MAX];
	size_t n_first_discarded;
	struct dmt_integrity_journal_report journal;
	bool sb_mac_checked;
	uint64_t reserved[8];
};

/*
 * Algorithms, keys and reserved words of the params, before any file is
 * touched (-EINVAL with the reason).  Every operation checks them again.
 * Every operation below fills *res and, on failure, *r (may be NULL; code
 * DMT_REASON_NONE: only the errno is known).
 */
int dmt_integrity_params_check(const struct dmt_integrity_params *p,
			       struct dmt_reason *r);

/*
 * format, in two steps so a front end can show what it is about to do
 * (and ask) before anything is written:
 * plan: checks the params against the files and fills res->sb (with its
 * salt), res->geom and the sizes; writes nothing.
 * write: grows meta to res->device_bytes and writes superblock, empty
 * journal, data (payload / zeros) and every tag, then commits a new
 * file.  An interrupted in-place format leaves a superblock with
 * SB_FLAG_RECALCULATING and recalc_sector at the first block whose tag
 * may be missing.
 * dmt_integrity_format: plan, then write.
 */
int dmt_integrity_format_plan(const struct dmt_integrity_params *p,
			      struct dmt_integrity_result *res,
			      struct dmt_reason *r);
int dmt_integrity_format_write(const struct dmt_integrity_params *p,
			       struct dmt_integrity_result *res,
			       struct dmt_reason *r);
int dmt_integrity_format(const struct dmt_integrity_params *p,
			 struct dmt_integrity_result *res,
			 struct dmt_reason *r);
/*
 * check: verifies the superblock (MAC when a journal key is given), the
 * journal and every tag.  -EBADMSG on any mismatch, -EUCLEAN for a dirty
 * journal or a dirty bitmap (the device was not closed cleanly).
 */
int dmt_integrity_check(const struct dmt_integrity_params *p,
			struct dmt_integrity_result *res, struct dmt_reason *r);
/*
 * recalculate: recomputes tags from recalc_sector (or all) in place, then
 * clears SB_FLAG_RECALCULATING (recalc_sector 0) and rewrites the
 * superblock MAC.  Interrupted, it leaves the flag with recalc_sector where
 * valid tags end.
 */
int dmt_integrity_recalculate(const struct dmt_integrity_params *p,
			      struct dmt_integrity_result *res,
			      struct dmt_reason *r);
/* Reads and decodes the superblock of an open device (for dump). */
int dmt_integrity_read_sb(struct dmt_file *f, struct dmt_integrity_sb *sb,
			  uint64_t *device_bytes, struct dmt_reason *r);

/* Default tag size for an algorithm (4 crc32/crc32c, 8 xxhash64, digest). */
int dmt_integrity_default_tag_size(const char *alg, unsigned int *tag_size);

#endif /* DMT_INTEGRITY_H */
