// SPDX-License-Identifier: MIT
/*
 * dm-integrity superblock and geometry: the same arithmetic as the kernel's
 * calculate_journal_section_size / calculate_device_limits /
 * get_provided_data_sectors / initialize_superblock (formats.md 2.2-2.8).
 */
#include <dmt/integrity.h>

#include "lib/integrity/integrity_priv.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "lib/common/byteorder.h"

#define SB_MAGIC "integrt"
#define JOURNAL_SECTOR_DATA 504		/* 512 - commit id */
#define JOURNAL_MAC_PER_SECTOR 8
#define JOURNAL_BLOCK_SECTORS 8		/* metadata sectors / section */
#define METADATA_PADDING_SECTORS 8
#define DEFAULT_INTERLEAVE_SECTORS 32768
#define DEFAULT_BUFFER_SECTORS 128
#define DEFAULT_MAX_JOURNAL_SECTORS 131072
#define DEFAULT_JOURNAL_SIZE_FACTOR 7
#define DEFAULT_LOG2_SECTORS_PER_BIT 15

static unsigned int fls64(uint64_t x)
{
	return x ? 64 - (unsigned int)__builtin_clzll(x) : 0;
}

uint8_t dmt_integrity_sb_version(uint32_t flags, bool meta_dev,
				 bool bitmap_mode)
{
	if (flags & DMT_INTEGRITY_SB_INLINE)
		return 6;
	if (flags & DMT_INTEGRITY_SB_FIXED_HMAC)
		return 5;
	if (flags & DMT_INTEGRITY_SB_FIXED_PADDING)
		return 4;
	if (bitmap_mode || (flags & DMT_INTEGRITY_SB_DIRTY_BITMAP))
		return 3;
	if (meta_dev || (flags & DMT_INTEGRITY_SB_RECALCULATING))
		return 2;
	return 1;
}

void dmt_integrity_sb_encode(const struct dmt_integrity_sb *sb,
			     uint8_t sector0[512])
{
	memset(sector0, 0, 512);
	memcpy(sector0, SB_MAGIC, 8);	/* includes the NUL */
	sector0[8] = sb->version;
	sector0[9] = sb->log2_interleave_sectors;
	put_le16(sector0 + 10, sb->tag_size);
	put_le32(sector0 + 12, sb->journal_sections);
	put_le64(sector0 + 16, sb->provided_data_sectors);
	put_le32(sector0 + 24, sb->flags);
	sector0[28] = sb->log2_sectors_per_block;
	sector0[29] = sb->log2_blocks_per_bitmap_bit;
	put_le64(sector0 + 32, sb->recalc_sector);
	memcpy(sector0 + 48, sb->salt, DMT_INTEGRITY_SALT_SIZE);
}

int dmt_integrity_sb_decode(const uint8_t sector0[512],
			    struct dmt_integrity_sb *sb,
			    struct dmt_reason *why)
{
	memset(sb, 0, sizeof(*sb));
	if (memcmp(sector0, SB_MAGIC, 8))
		return dmt_reason_set(why, -EMEDIUMTYPE, DMT_REASON_BAD_MAGIC,
				      NULL, 0);
	sb->version = sector0[8];
	sb->log2_interleave_sectors = sector0[9];
	sb->tag_size = get_le16(sector0 + 10);
	sb->journal_sections = get_le32(sector0 + 12);
	sb->provided_data_sectors = get_le64(sector0 + 16);
	sb->flags = get_le32(sector0 + 24);
	sb->log2_sectors_per_block = sector0[28];
	sb->log2_blocks_per_bitmap_bit = sector0[29];
	sb->recalc_sector = get_le64(sector0 + 32);
	memcpy(sb->salt, sector0 + 48, DMT_INTEGRITY_SALT_SIZE);
	if (!sb->version || sb->version > 6)
		return dmt_reason_set(why, -EMEDIUMTYPE, DMT_REASON_SB_VERSION,
				      "sb.version", sb->version);
	return 0;
}

/* ---- geometry ---- */

static void journal_section_size(struct dmt_integrity_geom *g)
{
	unsigned int space = JOURNAL_SECTOR_DATA;

	g->entry_size = (8 + 8 * g->spb + g->tag_size + 7) & ~7u;
	if (g->flags & DMT_INTEGRITY_SB_HAVE_JOURNAL_MAC)
		space -= JOURNAL_MAC_PER_SECTOR;
	g->entries_per_sector = space / g->entry_size;
	g->section_entries = g->entries_per_sector * JOURNAL_BLOCK_SECTORS;
	g->section_sectors = (g->section_entries << g->log2_spb) +
			     JOURNAL_BLOCK_SECTORS;
}

/* calculate_device_limits(): 0 if g->provided fits the devices. */
static int device_limits(struct dmt_integrity_geom *g)
{
	uint64_t initial;

	journal_section_size(g);
	initial = DMT_INTEGRITY_SB_SECTORS +
		  (uint64_t)g->section_sectors * g->journal_sections;
	if (initial + METADATA_PADDING_SECTORS >= g->meta_sectors ||
	    initial > UINT_MAX)
		return -ENODATA;
	g->initial_sectors = initial;

	if (!g->meta_dev) {
		/* legacy volumes keep their 128 KiB padding */
		uint64_t pad = (g->flags & DMT_INTEGRITY_SB_FIXED_PADDING) ?
			       4096 : 131072;
		uint64_t run = (uint64_t)g->tag_size
			       << (g->log2_interleave - g->log2_spb);

		g->metadata_run = ((run + pad - 1) / pad * pad) >> 9;
		if (!g->provided)
			return -ENODATA;
		if (dmt_integrity_data_sector(g, g->provided - 1) >=
		    g->meta_sectors)
			return -ENODATA;
	} else {
		unsigned int shift = g->log2_buffer_sectors + 9;
		uint64_t meta = (g->provided >> g->log2_spb) * g->tag_size;

		meta = ((meta + (1ull << shift) - 1) >> shift)
		       << g->log2_buffer_sectors;
		if (initial + meta < initial ||
		    initial + meta > g->meta_sectors)
			return -ENODATA;
		g->metadata_run = 1;
	}
	return 0;
}

/* get_provided_data_sectors() */
static void provided_sectors(struct dmt_integrity_geom *g)
{
	if (!g->meta_dev) {
		int bit;

		g->provided = 0;
		for (bit = (int)fls64(g->meta_sectors) - 1; bit >= 3; bit--) {
			uint64_t prev = g->provided;

			g->provided |= 1ull << bit;
			if (device_limits(g))
				g->provided = prev;
		}
	} else {
		g->provided = g->data_sectors & ~(uint64_t)(g->spb - 1);
	}
}

static unsigned int log2_floor32(uint32_t x)
{
	return 31 - (unsigned int)__builtin_clz(x);
}

static unsigned int log2_buffer(unsigned int buffer_sectors)
{
	unsigned int l;

	if (!buffer_sectors)
		buffer_sectors = 1;
	l = log2_floor32(buffer_sectors);
	return l < 31 - 9 ? l : 31 - 9;
}

/* With a metadata device: the largest section count <= requested that
 * fits, shrinking the buffer as the kernel does. */
static int meta_journal_sections(struct dmt_integrity_geom *g,
				 uint32_t sections)
{
	for (;;) {
		g->journal_sections = 0;
		for (int bit = (int)log2_floor32(sections); bit >= 0; bit--) {
			uint32_t prev = g->journal_sections;
			uint32_t test = prev | 1u << bit;

			if (test > sections)
				continue;
			g->journal_sections = test;
			if (device_limits(g))
				g->journal_sections = prev;
		}
		if (g->journal_sections)
			return 0;
		if (g->log2_buffer_sectors <= 3)
			return -ENODATA;
		g->log2_buffer_sectors--;
	}
}

/* log2 sectors per bitmap bit, as the constructor computes it. */
static unsigned int log2_sectors_per_bit(const struct dmt_integrity_layout *l,
					 const struct dmt_integrity_geom *g)
{
	unsigned int lspbit = DEFAULT_LOG2_SECTORS_PER_BIT;
	uint64_t bits;

	if (l->sectors_per_bit)
		lspbit = fls64(l->sectors_per_bit) - 1;
	if (lspbit < g->log2_spb)
		lspbit = g->log2_spb;
	bits = ((uint64_t)g->section_sectors * g->journal_sections) << 12;
	if (bits > UINT_MAX)
		bits = UINT_MAX;
	while (bits && bits < ((g->provided + (1ull << lspbit) - 1) >> lspbit))
		lspbit++;
	return lspbit;
}

/* -ENODATA: the device holds nothing (DEVICE_TOO_SMALL, dev_sectors). */
static int too_small(struct dmt_reason *r,
		     const struct dmt_integrity_layout *l)
{
	return dmt_reason_set(r, -ENODATA, DMT_REASON_DEVICE_TOO_SMALL,
			      "dev_sectors", l->dev_sectors);
}

/* The layout's reserved words, sector and tag size: 0 or -EINVAL. */
static int check_layout(const struct dmt_integrity_layout *l,
			struct dmt_reason *r)
{
	unsigned int ss = l->sector_size;

	for (size_t i = 0; i < sizeof(l->reserved) / sizeof(l->reserved[0]);
	     i++) {
		if (l->reserved[i])
			return dmt_reason_set(r, -EINVAL, DMT_REASON_BAD_VALUE,
					      "reserved", i);
	}
	if (ss < 512 || ss > 4096 || (ss & (ss - 1)))
		return dmt_reason_set(r, -EINVAL, DMT_REASON_BAD_VALUE,
				      "sector_size", ss);
	if (!l->tag_size || l->tag_size > DMT_INTEGRITY_MAX_TAG) {
		dmt_reason_set(r, -EINVAL, DMT_REASON_OUT_OF_RANGE, "tag_size",
			       l->tag_size);
		if (r) {
			r->min = 1;
			r->max = DMT_INTEGRITY_MAX_TAG;
		}
		return -EINVAL;
	}
	return 0;
}

int dmt_integrity_geom_format(const struct dmt_integrity_layout *l,
			      struct dmt_integrity_sb *sb,
			      struct dmt_integrity_geom *g, struct dmt_reason *r)
{
	unsigned int ss = l->sector_size, interleave, lspbit;
	uint64_t journal_sectors;
	uint32_t sections;
	int err;

	memset(sb, 0, sizeof(*sb));
	memset(g, 0, sizeof(*g));
	err = check_layout(l, r);
	if (err)
		return err;
	if (l->meta_dev && !l->data_dev_sectors)
		return dmt_reason_set(r, -ENODATA, DMT_REASON_MISSING,
				      "data_dev_sectors", 0);

	g->log2_spb = log2_floor32(ss) - 9;
	g->spb = 1u << g->log2_spb;
	g->tag_size = l->tag_size;
	g->meta_dev = l->meta_dev;
	g->meta_sectors = l->dev_sectors;
	g->data_sectors = l->meta_dev ? l->data_dev_sectors : l->dev_sectors;
	g->log2_buffer_sectors = log2_buffer(l->buffer_sectors ?
					     l->buffer_sectors :
					     DEFAULT_BUFFER_SECTORS);
	if (l->journal_mac)
		g->flags |= DMT_INTEGRITY_SB_HAVE_JOURNAL_MAC;
	/* the internal hash is always present here */
	if (l->fix_hmac)
		g->flags |= DMT_INTEGRITY_SB_FIXED_HMAC;

	journal_sectors = l->journal_sectors;
	if (!journal_sectors) {
		journal_sectors = g->data_sectors >>
				  DEFAULT_JOURNAL_SIZE_FACTOR;
		if (journal_sectors > DEFAULT_MAX_JOURNAL_SECTORS)
			journal_sectors = DEFAULT_MAX_JOURNAL_SECTORS;
	}
	if (journal_sectors > UINT_MAX)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_TOO_LARGE,
				      "journal_sectors", journal_sectors);

	journal_section_size(g);
	sections = (uint32_t)(journal_sectors / g->section_sectors);
	if (!sections)
		sections = 1;

	if (!l->meta_dev) {
		if (l->fix_padding)
			g->flags |= DMT_INTEGRITY_SB_FIXED_PADDING;
		g->journal_sections = sections;
		interleave = l->interleave_sectors ? l->interleave_sectors :
			     DEFAULT_INTERLEAVE_SECTORS;
		g->log2_interleave = log2_floor32(interleave);
		if (g->log2_interleave < 3)
			g->log2_interleave = 3;
		provided_sectors(g);
		if (!g->provided)
			return too_small(r, l);
	} else {
		g->log2_interleave = 0;
		provided_sectors(g);
		if (!g->provided || meta_journal_sections(g, sections))
			return too_small(r, l);
	}
	if (device_limits(g))
		return too_small(r, l);
	if (!g->meta_dev && g->log2_buffer_sectors >
	    (unsigned int)__builtin_ctzll(g->metadata_run))
		g->log2_buffer_sectors =
			(unsigned int)__builtin_ctzll(g->metadata_run);

	lspbit = log2_sectors_per_bit(l, g);
	sb->log2_interleave_sectors = (uint8_t)g->log2_interleave;
	sb->tag_size = (uint16_t)g->tag_size;
	sb->journal_sections = g->journal_sections;
	sb->provided_data_sectors = g->provided;
	sb->flags = g->flags;
	sb->log2_sectors_per_block = (uint8_t)g->log2_spb;
	sb->log2_blocks_per_bitmap_bit = (uint8_t)(lspbit - g->log2_spb);
	sb->version = dmt_integrity_sb_version(sb->flags, g->meta_dev, false);
	return 0;
}

/* The superblock's own fields, before any geometry. */
static int sb_fields_ok(const struct dmt_integrity_sb *sb, bool meta_dev,
			struct dmt_reason *why)
{
	const int bad = -EMEDIUMTYPE;

	if (sb->version < 1 || sb->version > DMT_INTEGRITY_MAX_VERSION)
		return dmt_reason_set(why, bad, DMT_REASON_SB_VERSION,
				      "sb.version", sb->version);
	if (sb->flags & DMT_INTEGRITY_SB_INLINE)
		return dmt_reason_set(why, bad, DMT_REASON_INTEGRITY_SB_INLINE,
				      "sb.flags", sb->flags);
	if (!sb->tag_size || sb->tag_size > DMT_INTEGRITY_MAX_TAG)
		return dmt_reason_set(why, bad, DMT_REASON_SB_FIELD,
				      "sb.integrity_tag_size", sb->tag_size);
	if (sb->log2_sectors_per_block > 3)
		return dmt_reason_set(why, bad, DMT_REASON_SB_FIELD,
				      "sb.log2_sectors_per_block",
				      sb->log2_sectors_per_block);
	if (!sb->journal_sections)
		return dmt_reason_set(why, bad, DMT_REASON_SB_FIELD,
				      "sb.journal_sections", 0);
	if (!meta_dev && !sb->log2_interleave_sectors)
		return dmt_reason_set(why, -EINVAL,
				      DMT_REASON_INTEGRITY_NEEDS_DATA_DEVICE,
				      "data_device", 0);
	if (!meta_dev && (sb->log2_interleave_sectors < 3 ||
			  sb->log2_interleave_sectors > 31))
		return dmt_reason_set(why, bad, DMT_REASON_SB_FIELD,
				      "sb.log2_interleave_sectors",
				      sb->log2_interleave_sectors);
	if (meta_dev && sb->log2_interleave_sectors)
		return dmt_reason_set(why, -EINVAL,
				      DMT_REASON_INTEGRITY_INTERLEAVED,
				      "data_device", 0);
	return 0;
}

/* What the kernel derives from the device sizes (provided, limits). */
static int sb_device_fits(const struct dmt_integrity_sb *sb,
			  struct dmt_integrity_geom *g, struct dmt_reason *why)
{
	/* the kernel recomputes provided from the device size ... */
	provided_sectors(g);
	if (!g->provided)
		return dmt_reason_set(why, -ENODATA,
				      DMT_REASON_DEVICE_TOO_SMALL, "sb",
				      g->meta_sectors << 9);
	while (device_limits(g)) {
		if (!g->meta_dev || g->log2_buffer_sectors <= 3)
			return dmt_reason_set(why, -ENODATA,
					      DMT_REASON_DEVICE_TOO_SMALL,
					      "sb", g->meta_sectors << 9);
		g->log2_buffer_sectors--;
	}
	/* ... and maps no more than the stored size (the table length) */
	if (sb->provided_data_sectors > g->provided)
		return dmt_reason_set(why, -ENODATA,
				      DMT_REASON_INTEGRITY_SB_PROVIDED,
				      "sb.provided_data_sectors",
				      sb->provided_data_sectors);
	if (sb->provided_data_sectors & (g->spb - 1))
		return dmt_reason_set(why, -EMEDIUMTYPE, DMT_REASON_SB_FIELD,
				      "sb.provided_data_sectors",
				      sb->provided_data_sectors);
	if (!g->meta_dev) {
		unsigned int lb =
			(unsigned int)__builtin_ctzll(g->metadata_run);

		if (g->log2_buffer_sectors > lb)
			g->log2_buffer_sectors = lb;
		/* the kernel addresses tags in buffer units (2.6 caveat) */
		if (g->log2_interleave < g->log2_buffer_sectors)
			return dmt_reason_set(
				why, -EMEDIUMTYPE,
				DMT_REASON_INTEGRITY_LEGACY_INTERLEAVE,
				"sb.log2_interleave_sectors",
				g->log2_interleave);
	}
	return 0;
}

int dmt_integrity_geom_from_sb(const struct dmt_integrity_sb *sb,
			       bool meta_dev, uint64_t meta_sectors,
			       uint64_t data_sectors,
			       unsigned int buffer_sectors,
			       struct dmt_integrity_geom *g,
			       struct dmt_reason *why)
{
	int err;

	memset(g, 0, sizeof(*g));
	err = sb_fields_ok(sb, meta_dev, why);
	if (err)
		return err;
	g->log2_spb = sb->log2_sectors_per_block;
	g->spb = 1u << g->log2_spb;
	g->tag_size = sb->tag_size;
	g->flags = sb->flags;
	g->meta_dev = meta_dev;
	g->log2_interleave = sb->log2_interleave_sectors;
	g->journal_sections = sb->journal_sections;
	g->meta_sectors = meta_sectors;
	g->data_sectors = meta_dev ? data_sectors : meta_sectors;
	g->log2_buffer_sectors = log2_buffer(buffer_sectors ? buffer_sectors :
					     DEFAULT_BUFFER_SECTORS);
	err = sb_device_fits(sb, g, why);
	if (err) {
		memset(g, 0, sizeof(*g));
		return err;
	}
	g->provided = sb->provided_data_sectors;
	return 0;
}

uint64_t dmt_integrity_data_sector(const struct dmt_integrity_geom *g,
				   uint64_t s)
{
	uint64_t area, off;

	if (g->meta_dev)
		return s;
	area = s >> g->log2_interleave;
	off = s & ((1ull << g->log2_interleave) - 1);
	return (area << g->log2_interleave) + (area + 1) * g->metadata_run +
	       g->initial_sectors + off;
}

uint64_t dmt_integrity_tag_offset(const struct dmt_integrity_geom *g,
				  uint64_t s)
{
	uint64_t area, off;

	if (g->meta_dev)
		return (g->initial_sectors << 9) + (s >> g->log2_spb) *
		       g->tag_size;
	area = s >> g->log2_interleave;
	off = s & ((1ull << g->log2_interleave) - 1);
	return ((g->initial_sectors +
		 area * ((1ull << g->log2_interleave) + g->metadata_run))
		<< 9) + (off >> g->log2_spb) * g->tag_size;
}

/* ---- smallest device for a payload ---- */

static int layout_provided(const struct dmt_integrity_layout *l,
			   uint64_t dev_sectors, uint64_t *provided)
{
	struct dmt_integrity_layout t = *l;
	struct dmt_integrity_sb sb;
	struct dmt_integrity_geom g;
	int err;

	t.dev_sectors = dev_sectors;
	err = dmt_integrity_geom_format(&t, &sb, &g, NULL);
	if (err == -ENODATA) {
		*provided = 0;
		return 0;
	}
	if (err)
		return err;
	*provided = g.provided;
	return 0;
}

/*
 * Smallest d in [lo, hi] (units of 8 sectors) with provided >= need, where
 * provided is monotone on the range; hi must satisfy it.
 */
static int search_range(const struct dmt_integrity_layout *l, uint64_t lo,
			uint64_t hi, uint64_t need, uint64_t *found)
{
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2, p;
		int err = layout_provided(l, mid * 8, &p);

		if (err)
			return err;
		if (p >= need)
			hi = mid;
		else
			lo = mid + 1;
	}
	*found = lo;
	return 0;
}

static int min_device(const struct dmt_integrity_layout *l,
		      uint64_t need_sectors, uint64_t *dev_bytes)
{
	const uint64_t max_units = (UINT64_MAX >> 9) / 8 / 4;
	struct dmt_integrity_sb sb;
	struct dmt_integrity_geom g;
	uint64_t lo, hi, p, step, found;
	int err;

	if (!need_sectors)
		need_sectors = 1;

	if (l->meta_dev) {
		struct dmt_integrity_layout t = *l;
		uint64_t meta, need;

		uint64_t spb_mask = l->sector_size / 512 - 1;

		if ((l->data_dev_sectors & ~spb_mask) < need_sectors)
			return -ENODATA;
		/* a metadata device so large that the full journal fits */
		t.dev_sectors = 1ull << 60;
		err = dmt_integrity_geom_format(&t, &sb, &g, NULL);
		if (err)
			return err;
		meta = (g.provided >> g.log2_spb) * g.tag_size;
		meta = ((meta + (512ull << g.log2_buffer_sectors) - 1) >>
			(9 + g.log2_buffer_sectors)) << g.log2_buffer_sectors;
		need = g.initial_sectors + meta;
		if (need < g.initial_sectors + METADATA_PADDING_SECTORS + 1)
			need = g.initial_sectors + METADATA_PADDING_SECTORS + 1;
		*dev_bytes = ((need + 7) / 8) * 4096;
		return 0;
	}

	/* provided < device size: start above the payload */
	lo = (need_sectors + 7) / 8 + 1;
	hi = lo;
	for (;;) {
		err = layout_provided(l, hi * 8, &p);
		if (err)
			return err;
		if (p >= need_sectors)
			break;
		if (hi > max_units / 2)
			return -E2BIG;
		hi *= 2;
	}
	/*
	 * With the default journal size the section count grows every
	 * section_sectors * 128 device sectors and provided drops a little
	 * there; within each such interval provided is monotone.
	 */
	if (l->journal_sectors) {
		err = search_range(l, lo, hi, need_sectors, &found);
		if (err)
			return err;
		*dev_bytes = found * 4096;
		return 0;
	}
	{
		struct dmt_integrity_layout t = *l;

		t.dev_sectors = 1ull << 30;
		err = dmt_integrity_geom_format(&t, &sb, &g, NULL);
		if (err)
			return err;
		step = (uint64_t)g.section_sectors * 128 / 8;
	}
	while (lo <= hi) {
		uint64_t end = (lo / step + 1) * step - 1;

		/* past 2^24 sectors the journal no longer grows */
		if (lo * 8 >= (uint64_t)DEFAULT_MAX_JOURNAL_SECTORS
				      << DEFAULT_JOURNAL_SIZE_FACTOR ||
		    end > hi)
			end = hi;
		err = layout_provided(l, end * 8, &p);
		if (err)
			return err;
		if (p >= need_sectors) {
			err = search_range(l, lo, end, need_sectors, &found);
			if (err)
				return err;
			*dev_bytes = found * 4096;
			return 0;
		}
		lo = end + 1;
	}
	return -E2BIG;
}

int dmt_integrity_min_device(const struct dmt_integrity_layout *l,
			     uint64_t need_sectors, uint64_t *dev_bytes,
			     struct dmt_reason *r)
{
	int err = check_layout(l, r);

	if (!err)
		err = min_device(l, need_sectors, dev_bytes);
	if (err == -ENODATA || err == -E2BIG)
		dmt_reason_set(r, err, DMT_REASON_INTEGRITY_NO_DEVICE_SIZE,
			       "dev_sectors", need_sectors);
	return err;
}
