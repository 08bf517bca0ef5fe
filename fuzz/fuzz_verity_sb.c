// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the dm-verity superblock parser and the geometry
 * derived from whatever it accepts.  Checks, beyond "no crash": a decoded
 * superblock passes the parameter check, encodes and decodes back to the
 * same parameters, and its tree lies inside 64-bit offsets with every
 * digest location inside the tree.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <dmt/verity.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_location(const struct dmt_verity_geometry *g, bool is_hash,
			   uint64_t block)
{
	uint64_t parent = 0;
	uint32_t off = 0;
	int r = dmt_verity_digest_location(g, is_hash, block, &parent, &off);

	if (r < 0 || r == 1)
		return;
	if (parent < g->hash_start || parent >= g->hash_start + g->hash_blocks)
		abort();
	if ((uint64_t)off + g->digest_size > g->hash_block_size)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t sb[DMT_VERITY_SB_SIZE] = { 0 }, sb2[DMT_VERITY_SB_SIZE];
	struct dmt_verity_params p, q;
	struct dmt_verity_geometry g;

	memcpy(sb, data, size < sizeof(sb) ? size : sizeof(sb));
	dmt_verity_params_init(&p);
	/* bytes past the superblock pick the hash offset */
	if (size >= sizeof(sb) + 4)
		p.hash_offset = (uint64_t)(data[512] | data[513] << 8 |
					   data[514] << 16) * 512;
	if (dmt_verity_sb_decode(sb, &p, NULL))
		return 0;
	if (dmt_verity_check_params(&p, NULL))
		abort();

	if (dmt_verity_sb_encode(&p, sb2, NULL))
		abort();
	dmt_verity_params_init(&q);
	q.hash_offset = p.hash_offset;
	if (dmt_verity_sb_decode(sb2, &q, NULL))
		abort();
	if (strcasecmp(p.hash_name, q.hash_name) ||
	    p.hash_type != q.hash_type ||
	    p.data_block_size != q.data_block_size ||
	    p.hash_block_size != q.hash_block_size ||
	    p.data_blocks != q.data_blocks || p.salt_size != q.salt_size ||
	    memcmp(p.salt, q.salt, p.salt_size) ||
	    memcmp(p.uuid, q.uuid, sizeof(p.uuid)))
		abort();

	if (dmt_verity_geometry(&p, &g, NULL))
		return 0;
	if (g.levels > DMT_VERITY_MAX_LEVELS ||
	    g.hash_end / g.hash_block_size != g.hash_start + g.hash_blocks ||
	    g.hash_end > (uint64_t)INT64_MAX)
		abort();
	for (uint32_t l = 0; l < g.levels; l++) {
		if (!g.level_blocks[l] || g.level_start[l] < g.hash_start ||
		    g.level_start[l] + g.level_blocks[l] >
			    g.hash_start + g.hash_blocks)
			abort();
		if (l && g.level_blocks[l] > g.level_blocks[l - 1])
			abort();
	}
	if (g.levels && g.level_blocks[g.levels - 1] != 1)
		abort();
	check_location(&g, false, 0);
	check_location(&g, false, g.data_blocks - 1);
	check_location(&g, false, g.data_blocks / 2);
	for (uint32_t l = 0; l < g.levels; l++) {
		check_location(&g, true, g.level_start[l]);
		check_location(&g, true,
			       g.level_start[l] + g.level_blocks[l] - 1);
	}
	return 0;
}
