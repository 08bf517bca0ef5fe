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
	const char *dev = it_of(c)->device;
	struct dmt_integrity_sb sb;
	uint64_t size;
	int err;

	err = dmt_integrity_read_sb(dev, &sb, &size);
	if (!err && sb.log2_sectors_per_block > 3) {
		tool_err("%s: invalid sector size in the superblock (log2_sectors_per_block %u)",
			 dev, sb.log2_sectors_per_block);
		return -EMEDIUMTYPE;
	}
	if (err) {
		if (err == -EMEDIUMTYPE)
			tool_err("%s: not a valid INTEGRITY device (no dm-integrity superblock)",
				 dev);
		else
			tool_err_errno(dev, "cannot read", err);
		return err;
	}
	if (c->json) {
		json_object *j = it_sb_json(&sb);

		cli_json_add_str(j, "device", dev);
		cli_json_add_u64(j, "device_size", size);
		cli_json_print(c, j);
		return 0;
	}
	print_text(dev, &sb);
	return 0;
}
