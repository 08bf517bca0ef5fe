// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the dm-integrity superblock parser and the kernel
 * geometry checks (dmt_integrity_geom_from_sb) on devices of any size.
 * Input: sector 0, then optionally le64 metadata device sectors, le64
 * data device sectors, one byte (bit 0: separate data device) and le16
 * buffer sectors.  Checks, beyond "no crash": every sector the superblock
 * provides maps to a data sector inside the data device and a tag inside
 * the metadata device, and tags never overlap the data they protect.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <dmt/integrity.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t get_le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

static void check_sector(const struct dmt_integrity_geom *g, uint64_t s)
{
	uint64_t d = dmt_integrity_data_sector(g, s);
	uint64_t t = dmt_integrity_tag_offset(g, s);
	uint64_t start, first, last;

	if (d >= g->data_sectors)
		abort();
	if (t + g->tag_size > g->meta_sectors << 9)
		abort();
	if (g->meta_dev) {
		if (t >> 9 < g->initial_sectors)
			abort();
		return;
	}
	/* interleaved: the tags of an area sit in the metadata_run sectors
	 * just before its data */
	start = d - (s & ((1ull << g->log2_interleave) - 1));
	first = t >> 9;
	last = (t + g->tag_size - 1) >> 9;
	if (first < g->initial_sectors || start < g->metadata_run ||
	    first < start - g->metadata_run || last >= start)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t sector0[512] = { 0 };
	struct dmt_integrity_sb sb;
	struct dmt_integrity_geom g;
	uint64_t meta = 8192, dsec = 8192;
	unsigned int buffer = 0;
	bool meta_dev = false;
	struct dmt_reason why = { 0 };

	memcpy(sector0, data, size < 512 ? size : 512);
	if (size >= 512 + 19) {
		/* bounded so that huge but valid layouts stay fast */
		meta = get_le(data + 512, 8) & ((1ull << 48) - 1);
		dsec = get_le(data + 520, 8) & ((1ull << 48) - 1);
		meta_dev = data[528] & 1;
		buffer = (unsigned int)get_le(data + 529, 2);
	}
	if (dmt_integrity_sb_decode(sector0, &sb, &why)) {
		if (!why.code)
			abort();	/* refusals always say why */
		return 0;
	}
	if (dmt_integrity_geom_from_sb(&sb, meta_dev, meta, dsec, buffer, &g,
				       &why)) {
		if (!why.code)
			abort();	/* refusals always say why */
		return 0;
	}
	if (g.provided != sb.provided_data_sectors || !g.spb ||
	    g.provided & (g.spb - 1))
		abort();
	if (!g.provided)
		return 0;
	check_sector(&g, 0);
	check_sector(&g, g.provided - 1);
	check_sector(&g, g.provided / 2);
	if (!g.meta_dev && g.provided > (1ull << g.log2_interleave))
		check_sector(&g, (1ull << g.log2_interleave) - 1);
	return 0;
}
