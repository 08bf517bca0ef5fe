// SPDX-License-Identifier: MIT
/*
 * integrity-tool output shared by the commands: superblock as JSON, flag
 * names as integritysetup prints them, the dm table line.
 */
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include <dmt/hash.h>
#include <dmt/io.h>

#include "tools/integrity-tool/it.h"

static const char *const flag_name[] = { "have_journal_mac", "recalculating",
	"dirty_bitmap", "fix_padding", "fix_hmac", "inline" };

void it_flag_names(uint32_t flags, char *buf, size_t size)
{
	buf[0] = '\0';
	for (unsigned int i = 0; i < 6; i++) {
		if (!(flags & (1u << i)))
			continue;
		strncat(buf, flag_name[i], size - strlen(buf) - 1);
		strncat(buf, " ", size - strlen(buf) - 1);
	}
}

struct json_object *it_sb_json(const struct dmt_integrity_sb *sb)
{
	json_object *j = json_object_new_object(), *fl;
	char salt[2 * DMT_INTEGRITY_SALT_SIZE + 1];

	cli_json_add_u64(j, "version", sb->version);
	cli_json_add_u64(j, "log2_interleave_sectors",
			 sb->log2_interleave_sectors);
	cli_json_add_u64(j, "integrity_tag_size", sb->tag_size);
	cli_json_add_u64(j, "journal_sections", sb->journal_sections);
	cli_json_add_u64(j, "provided_data_sectors", sb->provided_data_sectors);
	cli_json_add_u64(j, "sector_size", 512u << sb->log2_sectors_per_block);
	cli_json_add_u64(j, "log2_blocks_per_bitmap_bit",
			 sb->log2_blocks_per_bitmap_bit);
	cli_json_add_u64(j, "flags_value", sb->flags);
	fl = json_object_new_array();
	for (unsigned int i = 0; i < 6; i++)
		if (sb->flags & (1u << i))
			json_object_array_add(
				fl, json_object_new_string(flag_name[i]));
	json_object_object_add(j, "flags", fl);
	if (sb->flags & DMT_INTEGRITY_SB_RECALCULATING)
		cli_json_add_u64(j, "recalc_sector", sb->recalc_sector);
	tool_hex(sb->salt, sizeof(sb->salt), salt);
	cli_json_add_str(j, "salt", (sb->flags & DMT_INTEGRITY_SB_FIXED_HMAC) ?
					    salt : NULL);
	return j;
}

const char *it_canonical_alg(const char *name)
{
	const struct dmt_hash_alg *alg;

	return dmt_hash_alg_lookup(name, &alg) ? name : dmt_hash_alg_name(alg);
}

void it_geom_json(struct json_object *j, const struct dmt_integrity_geom *g)
{
	cli_json_add_u64(j, "initial_sectors", g->initial_sectors);
	cli_json_add_u64(j, "journal_section_sectors", g->section_sectors);
	if (!g->meta_dev) {
		cli_json_add_u64(j, "interleave_sectors",
				 1ull << g->log2_interleave);
		cli_json_add_u64(j, "metadata_run_sectors", g->metadata_run);
	}
}

void it_debug_geometry(const struct dmt_integrity_result *r)
{
	const struct dmt_integrity_sb *sb = &r->sb;
	const struct dmt_integrity_geom *g = &r->geom;

	if (tool_verbosity < 2)
		return;
	/* the superblock may be one the geometry refused */
	tool_debug("superblock: version %u, flags %#x, tag size %u, log2_sectors_per_block %u, provided_data_sectors %" PRIu64
		   ", journal_sections %u, log2_interleave_sectors %u, log2_blocks_per_bitmap_bit %u",
		   sb->version, sb->flags, sb->tag_size,
		   sb->log2_sectors_per_block,
		   sb->provided_data_sectors, sb->journal_sections,
		   sb->log2_interleave_sectors, sb->log2_blocks_per_bitmap_bit);
	tool_debug("geometry: initial_sectors %" PRIu64 ", journal section %u sectors (%u entries of %u bytes), metadata_run %" PRIu64
		   " sectors, buffer 2^%u sectors, metadata device %" PRIu64 " sectors, data %" PRIu64 " sectors",
		   g->initial_sectors, g->section_sectors, g->section_entries,
		   g->entry_size, g->metadata_run, g->log2_buffer_sectors,
		   g->meta_sectors, g->data_sectors);
}

/* ---- the dm table ---- */

/*
 * A path as one table argument: the kernel's dm_split_args() takes a
 * backslash as "the next character is literal", so blanks and
 * backslashes are escaped.  A line break or another control character
 * cannot be written in a table line: false.
 */
static bool table_path(const char *path, char *out, size_t size)
{
	size_t n = 0;

	for (const char *s = path; *s; s++) {
		if ((unsigned char)*s < 0x20 && *s != '\t')
			return false;
		if (n + 3 > size)
			return false;
		if (*s == ' ' || *s == '\t' || *s == '\\')
			out[n++] = '\\';
		out[n++] = *s;
	}
	out[n] = '\0';
	return true;
}

struct opts_buf {
	char text[1536];
	int n;
};

static void add_arg(struct opts_buf *b, const char *fmt, const char *s1,
		    const char *s2)
{
	size_t len = strlen(b->text);

	snprintf(b->text + len, sizeof(b->text) - len, fmt, s1, s2);
	b->n++;
}

static bool table_opts(const struct it *it, const struct dmt_integrity_sb *sb,
		       struct opts_buf *b)
{
	const struct dmt_integrity_params *o = &it->o;
	char path[1024], bs[16];

	if (it->data_path) {
		if (!table_path(it->device, path, sizeof(path)))
			return false;
		add_arg(b, " meta_device:%s%s", path, "");
	}
	if (sb->log2_sectors_per_block) {
		snprintf(bs, sizeof(bs), "%u", 512u << sb->log2_sectors_per_block);
		add_arg(b, " block_size:%s%s", bs, "");
	}
	add_arg(b, " internal_hash:%s%s", it_canonical_alg(o->alg),
		o->key_size ? ":<integrity key in hex>" : "");
	if (o->journal_mac.alg)
		add_arg(b, " journal_mac:%s%s",
			it_canonical_alg(o->journal_mac.alg),
			o->journal_mac.key_size ?
				":<journal integrity key in hex>" : "");
	if (sb->flags & DMT_INTEGRITY_SB_FIXED_PADDING)
		add_arg(b, " fix_padding%s%s", "", "");
	if (sb->flags & DMT_INTEGRITY_SB_FIXED_HMAC)
		add_arg(b, " fix_hmac%s%s", "", "");
	/* tags not (all) written yet: the kernel must recalculate them, or
	 * every read of a sector without a valid tag fails */
	if (o->no_wipe || (sb->flags & DMT_INTEGRITY_SB_RECALCULATING))
		add_arg(b, " recalculate%s%s", "", "");
	return true;
}

bool it_table_line(const struct it *it, const struct dmt_integrity_sb *sb,
		   char *buf, size_t size, const char **why)
{
	const char *data = it->data_path ? it->data_path : it->device;
	struct opts_buf b = { .text = "" };
	char path[1024];

	*why = "a device path holds a line break or another control "
	       "character, which a dm table line cannot carry";
	if (!table_path(data, path, sizeof(path)) || !table_opts(it, sb, &b))
		return false;
	*why = NULL;
	snprintf(buf, size, "0 %" PRIu64 " integrity %s 0 %u J %d%s",
		 sb->provided_data_sectors, path, sb->tag_size, b.n, b.text);
	return true;
}
