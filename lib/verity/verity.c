// SPDX-License-Identifier: MIT
/*
 * dm-verity parameters, tree geometry and the cryptsetup superblock
 * (docs/formats.md 1.1-1.3).  Building and verifying are in
 * verity_build.c and verity_verify.c.
 */
#include <dmt/verity.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/common/byteorder.h"
#include "lib/common/reserved.h"
#include "lib/verity/verity_priv.h"

static const uint8_t sb_signature[8] = { 'v', 'e', 'r', 'i', 't', 'y', 0, 0 };

void dmt_verity_params_init(struct dmt_verity_params *p)
{
	memset(p, 0, sizeof(*p));
	strcpy(p->hash_name, "sha256");
	p->hash_type = 1;
	p->data_block_size = 4096;
	p->hash_block_size = 4096;
}

static unsigned int floor_log2_u64(uint64_t x)
{
	return 63u - (unsigned int)__builtin_clzll(x);
}

static bool block_size_ok(uint32_t bs)
{
	return bs >= DMT_VERITY_BLOCK_MIN && bs <= DMT_VERITY_BLOCK_MAX &&
	       !(bs & (bs - 1));
}

/* Keyed algorithms (hmac, crc and xxhash seeds) are not hashes
 * veritysetup knows. */
size_t dmt_verity_digest_size(const char *name)
{
	const struct dmt_hash_alg *alg;

	if (!name || !*name || strlen(name) >= DMT_VERITY_HASH_NAME_MAX)
		return 0;
	if (dmt_hash_alg_lookup(name, &alg))
		return 0;
	if (dmt_hash_alg_takes_key(alg))
		return 0;
	return dmt_hash_alg_digest_size(alg);
}

bool dmt_verity_hash_supported(const char *name)
{
	return dmt_verity_digest_size(name) != 0;
}

int dmt_verity_check_params(const struct dmt_verity_params *p,
			    struct dmt_reason *why)
{
	size_t ds = dmt_verity_digest_size(p->hash_name);
	int err = DMT_CHECK_RESERVED(p, why);

	if (err)
		return err;
	if (!ds) {
		dmt_reason_set(why, 0, DMT_REASON_UNSUPPORTED, "hash_name", 0);
		if (why)
			why->name = p->hash_name;
		return -EINVAL;
	}
	if (p->hash_type > 1)
		return dmt_reason_set(why, -EINVAL, DMT_REASON_BAD_VALUE,
				      "hash_type", p->hash_type);
	if (!block_size_ok(p->data_block_size))
		return dmt_reason_set(why, -EINVAL, DMT_REASON_BAD_VALUE,
				      "data_block_size", p->data_block_size);
	if (!block_size_ok(p->hash_block_size))
		return dmt_reason_set(why, -EINVAL, DMT_REASON_BAD_VALUE,
				      "hash_block_size", p->hash_block_size);
	if (p->hash_offset % 512) {
		dmt_reason_set(why, 0, DMT_REASON_NOT_ALIGNED, "hash_offset",
			       p->hash_offset);
		if (why)
			why->max = 512;
		return -EINVAL;
	}
	if (p->salt_size > DMT_VERITY_SALT_MAX) {
		dmt_reason_set(why, 0, DMT_REASON_TOO_LARGE, "salt_size",
			       p->salt_size);
		if (why)
			why->max = DMT_VERITY_SALT_MAX;
		return -EINVAL;
	}
	if (p->hash_block_size < 2 * ds) {
		dmt_reason_set(why, 0, DMT_REASON_VERITY_DIGEST_TOO_BIG,
			       "hash_block_size", p->hash_block_size);
		if (why)
			why->min = 2 * ds;
		return -EINVAL;
	}
	if (p->data_blocks > (uint64_t)INT64_MAX / p->data_block_size)
		return dmt_reason_set(why, -EINVAL, DMT_REASON_TOO_LARGE,
				      "data_blocks", p->data_blocks);
	return 0;
}

uint64_t dmt_verity_blocks_for_size(const struct dmt_verity_params *p,
				    uint64_t bytes)
{
	return p->data_block_size ? bytes / p->data_block_size : 0;
}

int dmt_verity_geometry(const struct dmt_verity_params *p,
			struct dmt_verity_geometry *g, struct dmt_reason *why)
{
	uint64_t n = p->data_blocks, hbs = p->hash_block_size, start, total;
	unsigned int bits, l, levels = 0;
	size_t ds;
	int err;

	memset(g, 0, sizeof(*g));
	err = dmt_verity_check_params(p, why);
	if (err)
		return err;
	if (!n)
		return dmt_reason_set(why, -EINVAL, DMT_REASON_MISSING,
				      "data_blocks", 0);
	ds = dmt_verity_digest_size(p->hash_name);

	g->data_blocks = n;
	g->data_block_size = p->data_block_size;
	g->hash_block_size = p->hash_block_size;
	g->digest_size = (uint32_t)ds;
	bits = floor_log2_u64(hbs / ds);
	g->hash_per_block_bits = bits;
	/* format 1 pads each digest to a power of two; format 0 packs */
	g->digest_slot = p->hash_type ? (uint32_t)(hbs >> bits) : (uint32_t)ds;

	while (bits * levels < 64 && ((n - 1) >> (bits * levels)))
		levels++;
	if (levels > DMT_VERITY_MAX_LEVELS)
		return -EINVAL;
	g->levels = levels;

	for (l = 0; l < levels; l++) {
		unsigned int sh = bits * (l + 1);

		g->level_blocks[l] = sh >= 64 ? 1 :
			(n >> sh) + !!(n & ((1ull << sh) - 1));
	}

	g->hash_offset = p->hash_offset;
	if (p->no_superblock)
		start = p->hash_offset / hbs;
	else
		start = (p->hash_offset + DMT_VERITY_SB_SIZE + hbs - 1) / hbs;
	g->hash_start = start;

	total = 0;
	for (l = levels; l-- > 0;) {
		g->level_start[l] = start + total;
		total += g->level_blocks[l];
	}
	g->hash_blocks = total;
	if (start + total < start ||
	    start + total > (uint64_t)INT64_MAX / hbs)
		return -ERANGE;
	g->hash_end = (start + total) * hbs;
	return 0;
}

/* ---- superblock (docs/formats.md 1.1) ---- */

int dmt_verity_sb_encode(const struct dmt_verity_params *p,
			 uint8_t sb[DMT_VERITY_SB_SIZE], struct dmt_reason *why)
{
	size_t i, len = strlen(p->hash_name);
	int err = dmt_verity_check_params(p, why);

	if (err)
		return err;
	memset(sb, 0, DMT_VERITY_SB_SIZE);
	memcpy(sb, sb_signature, sizeof(sb_signature));
	put_le32(sb + 8, 1);
	put_le32(sb + 12, p->hash_type);
	memcpy(sb + 16, p->uuid, 16);
	for (i = 0; i < len; i++)
		sb[32 + i] = (uint8_t)tolower((unsigned char)p->hash_name[i]);
	put_le32(sb + 64, p->data_block_size);
	put_le32(sb + 68, p->hash_block_size);
	put_le64(sb + 72, p->data_blocks);
	put_le16(sb + 80, (uint16_t)p->salt_size);
	memcpy(sb + 88, p->salt, p->salt_size);
	return 0;
}

/* The superblock's name for a params field, for reasons. */
static void sb_reason(struct dmt_reason *why, const struct dmt_reason *r)
{
	static const char *const names[][2] = {
		{ "hash_name", "sb.algorithm" },
		{ "hash_type", "sb.hash_type" },
		{ "data_block_size", "sb.data_block_size" },
		{ "hash_block_size", "sb.hash_block_size" },
		{ "salt_size", "sb.salt_size" },
		{ "data_blocks", "sb.data_blocks" },
	};

	if (!why)
		return;
	*why = *r;
	if (why->code != DMT_REASON_VERITY_DIGEST_TOO_BIG &&
	    why->code != DMT_REASON_UNSUPPORTED)
		why->code = DMT_REASON_SB_FIELD;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (r->field && !strcmp(r->field, names[i][0]))
			why->field = names[i][1];
}

int dmt_verity_sb_decode(const uint8_t sb[DMT_VERITY_SB_SIZE],
			 struct dmt_verity_params *p, struct dmt_reason *why)
{
	struct dmt_verity_params q = *p;
	struct dmt_reason r;
	size_t name_len;

	if (memcmp(sb, sb_signature, sizeof(sb_signature)))
		return dmt_reason_set(why, -EMEDIUMTYPE, DMT_REASON_BAD_MAGIC,
				      NULL, 0);
	if (get_le32(sb + 8) != 1)
		return dmt_reason_set(why, -EMEDIUMTYPE, DMT_REASON_SB_VERSION,
				      "sb.version", get_le32(sb + 8));
	if (get_le32(sb + 12) > 1)
		return dmt_reason_set(why, -EMEDIUMTYPE, DMT_REASON_SB_FIELD,
				      "sb.hash_type", get_le32(sb + 12));
	name_len = strnlen((const char *)sb + 32, 32);
	if (!name_len || name_len >= DMT_VERITY_HASH_NAME_MAX) {
		/* no NUL inside the field: no name to show */
		dmt_reason_set(why, 0, DMT_REASON_UNSUPPORTED, "sb.algorithm",
			       0);
		if (why && name_len < 32)
			why->name = (const char *)sb + 32;
		return -EMEDIUMTYPE;
	}
	memcpy(q.hash_name, sb + 32, name_len);
	q.hash_name[name_len] = '\0';
	q.hash_type = get_le32(sb + 12);
	memcpy(q.uuid, sb + 16, 16);
	q.data_block_size = get_le32(sb + 64);
	q.hash_block_size = get_le32(sb + 68);
	q.data_blocks = get_le64(sb + 72);
	q.salt_size = get_le16(sb + 80);
	if (q.salt_size > DMT_VERITY_SALT_MAX)
		return dmt_reason_set(why, -EMEDIUMTYPE, DMT_REASON_SB_FIELD,
				      "sb.salt_size", q.salt_size);
	if (!q.data_blocks)
		return dmt_reason_set(why, -EMEDIUMTYPE, DMT_REASON_SB_FIELD,
				      "sb.data_blocks", 0);
	memset(q.salt, 0, sizeof(q.salt));
	memcpy(q.salt, sb + 88, q.salt_size);
	q.no_superblock = false;
	if (dmt_verity_check_params(&q, &r)) {
		sb_reason(why, &r);
		if (why && r.code == DMT_REASON_UNSUPPORTED)
			why->name = (const char *)sb + 32;
		return -EMEDIUMTYPE;
	}
	*p = q;
	return 0;
}

int dmt_verity_sb_read(struct dmt_file *hash, struct dmt_verity_params *p,
		       struct dmt_reason *why)
{
	uint8_t sb[DMT_VERITY_SB_SIZE];
	struct dmt_reason r = { 0 };
	int err;

	if (p->hash_offset % 512)
		return dmt_reason_set(why, -EINVAL, DMT_REASON_NOT_ALIGNED,
				      "hash_offset", p->hash_offset);
	err = dmt_pread_full(hash, sb, sizeof(sb), p->hash_offset);
	if (err == -ENODATA)
		return dmt_reason_set(why, -EMEDIUMTYPE, DMT_REASON_BAD_MAGIC,
				      NULL, 0);
	if (err) {
		dmt_reason_set(why, 0, DMT_REASON_IO, NULL, (uint64_t)-err);
		if (why)
			why->path = dmt_file_path(hash);
		return err;
	}
	err = dmt_verity_sb_decode(sb, p, &r);
	/* the name lives in sb, which ends here: keep it in p */
	if (err && r.name) {
		snprintf(p->hash_name, sizeof(p->hash_name), "%s", r.name);
		r.name = p->hash_name;
	}
	if (why) {
		*why = r;
		if (err)
			why->path = dmt_file_path(hash);
	}
	return err;
}

int dmt_verity_sb_write(struct dmt_file *hash,
			const struct dmt_verity_params *p)
{
	uint8_t sb[DMT_VERITY_SB_SIZE];
	int err;

	if (p->no_superblock || p->hash_offset % 512)
		return -EINVAL;
	err = dmt_verity_sb_encode(p, sb, NULL);
	if (err)
		return err;
	return dmt_pwrite_full(hash, sb, sizeof(sb), p->hash_offset);
}

/* ---- single blocks ---- */

int dmt_verity_hasher_new(const struct dmt_verity_params *p, bool hash_block,
			  struct dmt_hasher **out)
{
	struct dmt_hasher_params hp = {
		.alg = p->hash_name,
		.msg_size = hash_block ? p->hash_block_size
				       : p->data_block_size,
		.engine = p->engine,
	};
	int err = dmt_verity_check_params(p, NULL);

	if (err)
		return err;
	/* format 1: H(salt || block); format 0 (Chrome OS): H(block || salt) */
	if (p->salt_size && p->hash_type == 1) {
		hp.prefix = p->salt;
		hp.prefix_size = p->salt_size;
	} else if (p->salt_size) {
		hp.suffix = p->salt;
		hp.suffix_size = p->salt_size;
	}
	return dmt_hasher_new(&hp, out, NULL);
}

int dmt_verity_digest_location(const struct dmt_verity_geometry *g,
			       bool is_hash, uint64_t block, uint64_t *parent,
			       uint32_t *offset)
{
	uint32_t bits = g->hash_per_block_bits, level = 0;
	uint64_t idx = block;

	if (is_hash) {
		/* find the tree level of hash-file block `block` */
		for (level = 0; level < g->levels; level++) {
			if (block >= g->level_start[level] &&
			    block < g->level_start[level] +
					    g->level_blocks[level])
				break;
		}
		if (level >= g->levels)
			return -EINVAL;
		idx = block - g->level_start[level];
		if (level + 1 == g->levels)
			return 1;
		level++;
	} else {
		if (block >= g->data_blocks)
			return -EINVAL;
		if (!g->levels)
			return 1;
	}
	*parent = g->level_start[level] + (idx >> bits);
	*offset = (uint32_t)((idx & ((1ull << bits) - 1)) * g->digest_slot);
	return 0;
}
