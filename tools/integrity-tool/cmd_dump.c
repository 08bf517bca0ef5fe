// SPDX-License-Identifier: MIT
/* integrity-tool dump: the superblock, as integritysetup dump prints it. */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>

#include "tools/integrity-tool/it.h"

static void print_text(const char *dev, const struct dmt_integrity_sb *sb)
{
	char flags[128];

	/* cryptsetup 2.6.1 INTEGRITY_dump(), line for line */
	it_flag_names(sb->flags & 0x1f, flags, sizeof(flags));
	printf("Info for integrity device %s.\n", dev);
	printf("superblock_version %d\n", sb->version);
	printf("log2_interleave_sectors %d\n", sb->log2_interleave_sectors);
	printf("integrity_tag_size %u\n", sb->tag_size);
	printf("journal_sections %u\n", sb->journal_sections);
	printf("provided_data_sectors %" PRIu64 "\n", sb->provided_data_sectors);
	printf("sector_size %u\n", 512u << sb->log2_sectors_per_block);
	if (sb->version >= 2 && (sb->flags & DMT_INTEGRITY_SB_RECALCULATING))
		printf("recalc_sector %" PRIu64 "\n", sb->recalc_sector);
	printf("log2_blocks_per_bitmap %u\n", sb->log2_blocks_per_bitmap_bit);
	printf("flags %s\n", flags);
}

int it_cmd_dump(struct cli *c)
{
	struct it *it = it_of(c);
	struct dmt_reason why = { 0 };
	struct dmt_integrity_sb sb;
	uint64_t size;
	int err;

	err = it_open_files(c);
	if (err)
		return err;
	err = dmt_integrity_read_sb(it->o.meta, &sb, &size, &why);
	if (!err && sb.log2_sectors_per_block > 3) {
		tool_err("%s: invalid sector size in the superblock (log2_sectors_per_block %u)",
			 it->device, sb.log2_sectors_per_block);
		return -EMEDIUMTYPE;
	}
	if (err && why.code >= DMT_REASON_INTEGRITY_FIRST)
		tool_err_errno(it->device, "cannot read", err);
	else if (err)
		cli_reason_err(c, &why);
	if (err)
		return err;
	if (c->json) {
		json_object *j = it_sb_json(&sb);

		cli_json_add_str(j, "device", it->device);
		cli_json_add_u64(j, "device_size", size);
		cli_json_print(c, j);
		return 0;
	}
	print_text(it->device, &sb);
	return 0;
}
