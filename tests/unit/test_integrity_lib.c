// SPDX-License-Identifier: MIT
/*
 * lib/integrity*: geometry, superblock, journal and tags against the facts
 * the kernel produced (testdata/integrity/) and independent references.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/common/testhooks.h"
#include "lib/integrity/integrity_priv.h"
#include "tests/support/helpers.h"
#include <dmt/hash.h>
#include <dmt/integrity.h>
#include <dmt/io.h>
#include "tests/support/integrity_oracle.h"
#include "tools/common/hex.h"

static const uint8_t salt16[16] = { 0, 1, 2, 3, 4, 5, 6, 7,
				    8, 9, 10, 11, 12, 13, 14, 15 };

static void layout_from_fact(const struct it_fact *f,
			     struct dmt_integrity_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->sector_size = (unsigned int)it_getu(f, "ss");
	l->tag_size = (unsigned int)it_getu(f, "tag");
	l->interleave_sectors = it_has(f, "interleave") ?
				(unsigned int)it_getu(f, "interleave") : 0;
	l->fix_padding = !it_has(f, "pad") ||
			 strcmp(it_get(f, "pad"), "legacy") != 0;
	l->fix_hmac = true;
	l->journal_mac = it_has(f, "jmac") && it_getu(f, "jmac");
	l->dev_sectors = it_getu(f, "dev");
	if (it_has(f, "meta") && it_getu(f, "meta")) {
		l->meta_dev = true;
		l->data_dev_sectors = it_getu(f, "meta");
	}
}

/* ---- geometry ---- */

Test(integrity_geom, kernel_tables)
{
	struct it_fact *facts;
	int n = it_facts_load("geometry.txt", &facts);

	for (int i = 0; i < n; i++) {
		struct it_fact *f = &facts[i];
		struct dmt_integrity_layout l;
		struct dmt_integrity_sb sb;
		struct dmt_integrity_geom g;

		layout_from_fact(f, &l);
		cr_assert_eq(dmt_integrity_geom_format(&l, &sb, &g, NULL), 0, "%s",
			     f->name);
		cr_expect_eq(g.provided, it_getu(f, "provided"),
			     "%s: provided %llu", f->name,
			     (unsigned long long)g.provided);
		cr_expect_eq(sb.provided_data_sectors, g.provided, "%s",
			     f->name);
		if (it_has(f, "sections"))
			cr_expect_eq(sb.journal_sections,
				     it_getu(f, "sections"),
				     "%s: sections %u", f->name,
				     sb.journal_sections);
		if (it_has(f, "initial"))
			cr_expect_eq(g.initial_sectors, it_getu(f, "initial"),
				     "%s: initial %llu", f->name,
				     (unsigned long long)g.initial_sectors);
		if (it_has(f, "run"))
			cr_expect_eq(g.metadata_run, it_getu(f, "run"),
				     "%s: run", f->name);
		if (it_has(f, "bpbb"))
			cr_expect_eq(sb.log2_blocks_per_bitmap_bit,
				     it_getu(f, "bpbb"), "%s: bpbb", f->name);
		if (l.meta_dev) {
			/* 2.8: fix_hmac only, never FIXED_PADDING */
			cr_expect_eq(sb.flags, 0x10, "%s: flags %#x", f->name,
				     sb.flags);
			cr_expect_eq(sb.log2_interleave_sectors, 0);
		}
	}
	free(facts);
}

Test(integrity_geom, journal_entry_tables)
{
	struct it_fact *facts;
	int n = it_facts_load("journal.txt", &facts), done = 0;

	for (int i = 0; i < n; i++) {
		struct it_fact *f = &facts[i];
		struct dmt_integrity_layout l = { 0 };
		struct dmt_integrity_sb sb;
		struct dmt_integrity_geom g;

		if (!it_has(f, "entry"))
			continue;
		l.sector_size = (unsigned int)it_getu(f, "ss");
		l.tag_size = (unsigned int)it_getu(f, "tag");
		l.journal_mac = it_getu(f, "jmac");
		l.fix_padding = l.fix_hmac = true;
		l.dev_sectors = 1 << 21;
		cr_assert_eq(dmt_integrity_geom_format(&l, &sb, &g, NULL), 0);
		cr_expect_eq(g.entry_size, it_getu(f, "entry"), "%s", f->name);
		cr_expect_eq(g.entries_per_sector, it_getu(f, "per_sector"),
			     "%s", f->name);
		cr_expect_eq(g.section_entries, it_getu(f, "entries"), "%s",
			     f->name);
		cr_expect_eq(g.section_sectors, it_getu(f, "sectors"), "%s",
			     f->name);
		done++;
	}
	cr_assert_eq(done, 3);
	free(facts);
}

Test(integrity_geom, mappings_and_layouts)
{
	struct it_fact *facts;
	int n = it_facts_load("layouts.txt", &facts);

	for (int i = 0; i < n; i++) {
		struct it_fact *f = &facts[i];
		struct dmt_integrity_layout l;
		struct dmt_integrity_sb sb;
		struct dmt_integrity_geom g;

		layout_from_fact(f, &l);
		cr_assert_eq(dmt_integrity_geom_format(&l, &sb, &g, NULL), 0);
		if (it_has(f, "journal_end")) {
			cr_expect_eq((g.initial_sectors) * 512,
				     it_getu(f, "journal_end"), "%s", f->name);
			cr_expect_eq(dmt_integrity_tag_offset(&g, 0),
				     it_getu(f, "tags"), "%s", f->name);
			cr_expect_eq(g.metadata_run * 512,
				     it_getu(f, "run_bytes"), "%s", f->name);
			cr_expect_eq(dmt_integrity_data_sector(&g, 0) * 512,
				     it_getu(f, "data"), "%s", f->name);
			cr_expect_eq(dmt_integrity_data_sector(&g,
					1ull << g.log2_interleave) * 512 -
				     dmt_integrity_data_sector(&g, 0) * 512,
				     it_getu(f, "stride"), "%s", f->name);
		}
		if (it_has(f, "logical")) {
			uint64_t s = it_getu(f, "logical");

			if (it_has(f, "tag_byte"))
				cr_expect_eq(dmt_integrity_tag_offset(&g, s),
					     it_getu(f, "tag_byte"), "%s",
					     f->name);
			if (it_has(f, "data_sector"))
				cr_expect_eq(dmt_integrity_data_sector(&g, s),
					     it_getu(f, "data_sector"), "%s",
					     f->name);
			if (it_has(f, "data_byte"))
				cr_expect_eq(dmt_integrity_data_sector(&g, s) *
					     512, it_getu(f, "data_byte"),
					     "%s", f->name);
		}
	}
	free(facts);
}

Test(integrity_geom, bad_parameters)
{
	struct dmt_integrity_layout l = { .sector_size = 512, .tag_size = 4,
					  .fix_padding = true,
					  .fix_hmac = true,
					  .dev_sectors = 32768 };
	struct dmt_integrity_sb sb;
	struct dmt_integrity_geom g;

	l.sector_size = 1000;
	cr_expect_eq(dmt_integrity_geom_format(&l, &sb, &g, NULL), -EINVAL);
	l.sector_size = 8192;
	cr_expect_eq(dmt_integrity_geom_format(&l, &sb, &g, NULL), -EINVAL);
	l.sector_size = 512;
	l.tag_size = 425;
	cr_expect_eq(dmt_integrity_geom_format(&l, &sb, &g, NULL), -EINVAL);
	l.tag_size = 0;
	cr_expect_eq(dmt_integrity_geom_format(&l, &sb, &g, NULL), -EINVAL);
	l.tag_size = 4;
	l.dev_sectors = 180;	/* journal alone does not fit */
	cr_expect_eq(dmt_integrity_geom_format(&l, &sb, &g, NULL), -ENODATA);
}

/* The smallest size is minimal: no 4 KiB step below it works. */
Test(integrity_geom, min_device_is_minimal)
{
	static const struct {
		unsigned int ss, tag, il;
		bool legacy;
		uint64_t payload;
	} cases[] = {
		{ 512, 4, 0, false, 5u << 20 },
		{ 512, 4, 0, false, 3u << 20 },
		{ 4096, 32, 0, false, 7u << 20 },
		{ 512, 32, 0, false, (11u << 20) + 512 },
		{ 512, 8, 128, false, 1u << 20 },
		{ 512, 4, 256, true, 2u << 20 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dmt_integrity_layout l = {
			.sector_size = cases[i].ss, .tag_size = cases[i].tag,
			.interleave_sectors = cases[i].il,
			.fix_padding = !cases[i].legacy, .fix_hmac = true,
		};
		struct dmt_integrity_sb sb;
		struct dmt_integrity_geom g;
		uint64_t need = cases[i].payload / 512, bytes, d;

		cr_assert_eq(dmt_integrity_min_device(&l, need, &bytes, NULL), 0);
		cr_assert_eq(bytes % 4096, 0);
		l.dev_sectors = bytes / 512;
		cr_assert_eq(dmt_integrity_geom_format(&l, &sb, &g, NULL), 0);
		cr_expect_geq(g.provided, need, "case %zu", i);
		for (d = 4096; d < bytes; d += 4096) {
			l.dev_sectors = d / 512;
			if (dmt_integrity_geom_format(&l, &sb, &g, NULL))
				continue;
			cr_assert_lt(g.provided, need,
				     "case %zu: %llu bytes already hold it "
				     "(answer %llu)", i,
				     (unsigned long long)d,
				     (unsigned long long)bytes);
		}
	}
}

/* Across a journal-growth boundary provided drops: the search copes. */
Test(integrity_geom, min_device_near_journal_step)
{
	struct dmt_integrity_layout l = { .sector_size = 512, .tag_size = 4,
					  .fix_padding = true,
					  .fix_hmac = true };
	struct dmt_integrity_sb sb;
	struct dmt_integrity_geom g;
	uint64_t step = 176 * 128, bytes;

	/* provided just below / at a boundary of the section count */
	for (uint64_t k = 2; k < 6; k++) {
		l.dev_sectors = k * step - 8;
		cr_assert_eq(dmt_integrity_geom_format(&l, &sb, &g, NULL), 0);
		cr_assert_eq(dmt_integrity_min_device(&l, g.provided, &bytes, NULL),
			     0);
		cr_expect_leq(bytes / 512, k * step - 8);
		l.dev_sectors = bytes / 512;
		cr_assert_eq(dmt_integrity_geom_format(&l, &sb, &g, NULL), 0);
		l.dev_sectors = k * step - 8;
		cr_assert_eq(dmt_integrity_geom_format(&l, &sb, &g, NULL), 0);
	}
}

Test(integrity_geom, meta_min_device)
{
	struct dmt_integrity_layout l = { .sector_size = 512, .tag_size = 4,
					  .fix_hmac = true, .meta_dev = true,
					  .data_dev_sectors = 2097152 };
	struct dmt_integrity_sb sb;
	struct dmt_integrity_geom g, full;
	uint64_t bytes;

	/* formats.md 2.8: 1 GiB of data needs 16376 + 16384 sectors */
	cr_assert_eq(dmt_integrity_min_device(&l, 2097152, &bytes, NULL), 0);
	cr_expect_eq(bytes / 512, 16376 + 16384);
	l.dev_sectors = bytes / 512;
	cr_assert_eq(dmt_integrity_geom_format(&l, &sb, &full, NULL), 0);
	cr_expect_eq(full.journal_sections, 93);
	/* one 4 KiB step less loses a journal section */
	l.dev_sectors -= 8;
	cr_assert_eq(dmt_integrity_geom_format(&l, &sb, &g, NULL), 0);
	cr_expect_lt(g.journal_sections, full.journal_sections);
}

/* ---- superblock ---- */

Test(integrity_sb, bytes_field_by_field)
{
	struct dmt_integrity_sb sb = {
		.version = 5, .log2_interleave_sectors = 15, .tag_size = 0x1234,
		.journal_sections = 0x01020304,
		.provided_data_sectors = 0x1122334455667788ull,
		.flags = 0x18, .log2_sectors_per_block = 3,
		.log2_blocks_per_bitmap_bit = 12,
		.recalc_sector = 0x0a0b0c0d0e0f1011ull,
	};
	static const uint8_t want[64] = {
		'i', 'n', 't', 'e', 'g', 'r', 't', 0,	/* magic */
		5, 15, 0x34, 0x12,			/* ver, il, tag */
		0x04, 0x03, 0x02, 0x01,			/* sections */
		0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
		0x18, 0, 0, 0,				/* flags */
		3, 12, 0, 0,				/* spb, bpbb, pad */
		0x11, 0x10, 0x0f, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a,
		0, 0, 0, 0, 0, 0, 0, 0,			/* pad2 */
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	};
	uint8_t s0[512], zero[448] = { 0 };
	struct dmt_integrity_sb back;
	struct dmt_reason why;

	memcpy(sb.salt, salt16, 16);
	dmt_integrity_sb_encode(&sb, s0);
	cr_assert_arr_eq(s0, want, 64);
	cr_assert_arr_eq(s0 + 64, zero, 448);
	cr_assert_eq(dmt_integrity_sb_decode(s0, &back, NULL), 0);
	cr_assert_eq(memcmp(&back, &sb, sizeof(sb)), 0);
	/* refusals say why: no magic, or which version */
	s0[0] ^= 1;
	cr_expect_eq(dmt_integrity_sb_decode(s0, &back, &why), -EMEDIUMTYPE);
	cr_expect_eq(why.code, DMT_REASON_BAD_MAGIC);
	s0[0] ^= 1;
	s0[8] = 0;
	cr_expect_eq(dmt_integrity_sb_decode(s0, &back, &why), -EMEDIUMTYPE);
	cr_expect_eq(why.code, DMT_REASON_SB_VERSION);
	cr_expect_eq(why.value, 0);
	s0[8] = 255;
	cr_expect_eq(dmt_integrity_sb_decode(s0, &back, &why), -EMEDIUMTYPE);
	cr_expect_eq(why.code, DMT_REASON_SB_VERSION);
	cr_expect_eq(why.value, 255);
	cr_expect_str_eq(why.field, "sb.version");
}

/* formats.md 2.2 example: 16 MiB, defaults -> the first 32 bytes. */
Test(integrity_sb, kernel_example_16m)
{
	struct dmt_integrity_layout l = { .sector_size = 512, .tag_size = 4,
					  .fix_padding = true, .fix_hmac = true,
					  .dev_sectors = 32768 };
	static const uint8_t want[30] = {
		'i', 'n', 't', 'e', 'g', 'r', 't', 0, 5, 0x0f, 4, 0,
		1, 0, 0, 0, 0x48, 0x7e, 0, 0, 0, 0, 0, 0, 0x18, 0, 0, 0, 0, 15,
	};
	struct dmt_integrity_sb sb;
	struct dmt_integrity_geom g;
	uint8_t s0[512];

	cr_assert_eq(dmt_integrity_geom_format(&l, &sb, &g, NULL), 0);
	dmt_integrity_sb_encode(&sb, s0);
	cr_assert_arr_eq(s0, want, sizeof(want));
}

Test(integrity_sb, version_rule)
{
	cr_expect_eq(dmt_integrity_sb_version(0x18, false, false), 5);
	cr_expect_eq(dmt_integrity_sb_version(0x10, true, false), 5);
	cr_expect_eq(dmt_integrity_sb_version(0x08, false, false), 4);
	cr_expect_eq(dmt_integrity_sb_version(0x04, false, false), 3);
	cr_expect_eq(dmt_integrity_sb_version(0x00, false, true), 3);
	cr_expect_eq(dmt_integrity_sb_version(0x02, false, false), 2);
	cr_expect_eq(dmt_integrity_sb_version(0x00, true, false), 2);
	cr_expect_eq(dmt_integrity_sb_version(0x00, false, false), 1);
	cr_expect_eq(dmt_integrity_sb_version(0x01, false, false), 1);
	cr_expect_eq(dmt_integrity_sb_version(0x20, false, false), 6);
}

/* 2.4: hmac(sha256) over bytes 0..479, stored at 480..511. */
Test(integrity_sb, superblock_mac)
{
	static const uint8_t key[7] = "sbkey!!";
	struct dmt_integrity_mac mac = { "hmac(sha256)", key, sizeof(key) };
	struct dmt_integrity_sb sb = { .version = 5, .tag_size = 4,
				       .journal_sections = 1, .flags = 0x19,
				       .log2_interleave_sectors = 15,
				       .provided_data_sectors = 1000 };
	uint8_t s0[512], want[32];

	memcpy(sb.salt, salt16, 16);
	dmt_integrity_sb_encode(&sb, s0);
	cr_assert_eq(dmt_integrity_sb_mac_write(&mac, s0), 0);
	it_hmac_sha256(key, sizeof(key), s0, 480, want);
	cr_assert_arr_eq(s0 + 480, want, 32);
	cr_assert_eq(dmt_integrity_sb_mac_verify(&mac, s0), 0);
	s0[100] ^= 1;
	cr_assert_eq(dmt_integrity_sb_mac_verify(&mac, s0), -EBADMSG);
}

/* ---- journal ---- */

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

Test(integrity_journal, commit_id_bytes)
{
	struct it_fact *facts;
	int n = it_facts_load("journal.txt", &facts), done = 0;

	for (int i = 0; i < n; i++) {
		struct it_fact *f = &facts[i];
		uint8_t *want;
		size_t len;
		uint64_t id;
		uint8_t got[8];

		if (!it_has(f, "bytes"))
			continue;
		cr_assert_eq(tool_parse_hex(it_get(f, "bytes"),
						      &want, &len), 0);
		id = dmt_integrity_commit_id((uint32_t)it_getu(f, "section"),
					     (uint32_t)it_getu(f, "sector"), 0);
		for (int k = 0; k < 8; k++)
			got[k] = (uint8_t)(id >> (8 * k));
		cr_expect_arr_eq(got, want, 8, "%s", f->name);
		free(want);
		done++;
	}
	cr_assert_eq(done, 2);
	free(facts);
	/* 2.5: C[seq] ^ ((i << 32) ^ j) */
	cr_expect_eq(dmt_integrity_commit_id(3, 7, 2),
		     0x3333333333333333ull ^ ((3ull << 32) ^ 7));
	cr_expect_eq(dmt_integrity_commit_id(0, 0, 3), 0x4444444444444444ull);
}

/* An empty section, byte by byte from 2.5, with the MAC of 2.5. */
static void check_empty_section(bool fixed_hmac)
{
	static const uint8_t key[5] = "jkey1";
	struct dmt_integrity_mac mac = { "hmac(sha256)", key, sizeof(key) };
	struct dmt_integrity_layout l = { .sector_size = 512, .tag_size = 32,
					  .journal_mac = true,
					  .fix_padding = true,
					  .fix_hmac = fixed_hmac,
					  .dev_sectors = 32768 };
	struct dmt_integrity_sb sb;
	struct dmt_integrity_geom g;
	struct dmt_integrity_journal_report rep;
	uint8_t *buf, msg[16 + 8 + 8 * 80], want[32];
	size_t ml = 0;
	const uint32_t section = 1;

	cr_assert_eq(dmt_integrity_geom_format(&l, &sb, &g, NULL), 0);
	memcpy(sb.salt, salt16, 16);
	cr_assert_eq(g.section_sectors, 88);
	buf = malloc(88 * 512);
	cr_assert(buf);
	cr_assert_eq(dmt_integrity_journal_section(&g, &sb, &mac, NULL, section, 0,
						   buf), 0);
	for (unsigned int j = 0; j < 88; j++) {
		const uint8_t *sec = buf + j * 512;

		cr_assert_eq(rd64(sec + 504), 0x1111111111111111ull ^
			     ((uint64_t)section << 32 ^ j), "sector %u", j);
		if (j >= 8) {
			for (int b = 0; b < 504; b++)
				cr_assert_eq(sec[b], 0, "data sector %u", j);
		}
	}
	/* entries 0..79: sector n % 8, offset (n / 8) * 48, FF at 4..7 */
	for (unsigned int j = 0; j < 8; j++) {
		const uint8_t *sec = buf + j * 512;

		for (unsigned int b = 0; b < 496; b++) {
			bool marker = b < 480 && b % 48 >= 4 && b % 48 < 8;

			cr_assert_eq(sec[b], marker ? 0xff : 0,
				     "sector %u byte %u", j, b);
		}
	}
	if (fixed_hmac) {
		memcpy(msg, salt16, 16);
		for (int k = 0; k < 8; k++)
			msg[16 + k] = (uint8_t)((uint64_t)section >> (8 * k));
		ml = 24;
	}
	for (int n = 0; n < 80; n++, ml += 8)
		memcpy(msg + ml, "\0\0\0\0\xff\xff\xff\xff", 8);
	it_hmac_sha256(key, sizeof(key), msg, ml, want);
	for (unsigned int j = 0; j < 8; j++) {
		const uint8_t *slice = buf + j * 512 + 496;
		uint8_t zero[8] = { 0 };

		/* 32-byte MAC: slices 0..3, then zeros */
		if (j < 4)
			cr_assert_arr_eq(slice, want + 8 * j, 8, "slice %u", j);
		else
			cr_assert_arr_eq(slice, zero, 8, "slice %u", j);
	}
	memset(&rep, 0, sizeof(rep));
	cr_assert_eq(dmt_integrity_journal_verify_section(&g, &sb, &mac, NULL,
							  section, buf, &rep),
		     0);
	cr_expect_eq(rep.bad_commit_ids + rep.used_entries + rep.bad_macs, 0);
	cr_expect_eq(rep.seq_mask, 1);

	/* each corruption is found */
	buf[3 * 512 + 505] ^= 0x40;
	memset(&rep, 0, sizeof(rep));
	dmt_integrity_journal_verify_section(&g, &sb, &mac, NULL, section, buf, &rep);
	cr_expect_eq(rep.bad_commit_ids, 1);
	cr_expect_eq(rep.first_bad_sector, 3);
	buf[3 * 512 + 505] ^= 0x40;
	buf[2 * 512 + 48 + 6] ^= 0x01;	/* entry 10's marker */
	memset(&rep, 0, sizeof(rep));
	dmt_integrity_journal_verify_section(&g, &sb, &mac, NULL, section, buf, &rep);
	cr_expect_eq(rep.used_entries, 1);
	cr_expect_eq(rep.first_used_entry, 10);
	cr_expect_eq(rep.bad_macs, 1);
	buf[2 * 512 + 48 + 6] ^= 0x01;
	buf[5 * 512 + 497] ^= 0x01;	/* MAC slice (zero part) */
	memset(&rep, 0, sizeof(rep));
	dmt_integrity_journal_verify_section(&g, &sb, &mac, NULL, section, buf, &rep);
	cr_expect_eq(rep.bad_macs, 1);
	cr_expect_eq(rep.used_entries, 0);
	free(buf);
}

Test(integrity_journal, empty_section_fixed_hmac)
{
	check_empty_section(true);
}

Test(integrity_journal, empty_section_legacy_mac)
{
	check_empty_section(false);
}

Test(integrity_journal, other_sequences_accepted)
{
	struct dmt_integrity_layout l = { .sector_size = 4096, .tag_size = 8,
					  .fix_padding = true, .fix_hmac = true,
					  .dev_sectors = 65536 };
	struct dmt_integrity_sb sb;
	struct dmt_integrity_geom g;
	struct dmt_integrity_journal_report rep = { 0 };
	uint8_t *buf;

	cr_assert_eq(dmt_integrity_geom_format(&l, &sb, &g, NULL), 0);
	buf = malloc((size_t)g.section_sectors * 512);
	cr_assert(buf);
	for (unsigned int seq = 0; seq < 4; seq++) {
		cr_assert_eq(dmt_integrity_journal_section(&g, &sb, NULL, NULL, seq,
							   seq, buf), 0);
		dmt_integrity_journal_verify_section(&g, &sb, NULL, NULL, seq, buf,
						     &rep);
	}
	cr_expect_eq(rep.seq_mask, 0xf);
	cr_expect_eq(rep.bad_commit_ids + rep.used_entries, 0);
	/* a section written for section 0 is wrong at section 1 */
	cr_assert_eq(dmt_integrity_journal_section(&g, &sb, NULL, NULL, 0, 0, buf),
		     0);
	dmt_integrity_journal_verify_section(&g, &sb, NULL, NULL, 1, buf, &rep);
	cr_expect_eq(rep.bad_commit_ids, g.section_sectors);
	free(buf);
}

/* ---- journal encryption ---- */

static void unhex(const char *hex, uint8_t *out, size_t *len)
{
	size_t n = strlen(hex) / 2;

	for (size_t i = 0; i < n; i++)
		cr_assert_eq(sscanf(hex + 2 * i, "%2hhx", &out[i]), 1);
	*len = n;
}

/* Index of the commit-id base that sector 0 of `section` carries, or -1. */
static int jc_seq(const uint64_t *bases, uint32_t section, const uint8_t *s0)
{
	uint64_t id = 0;

	for (int i = 7; i >= 0; i--)
		id = id << 8 | s0[504 + i];
	for (int k = 0; k < 4; k++)
		if (id == (bases[k] ^ ((uint64_t)section << 32)))
			return k;
	return -1;
}

/*
 * Journals the kernel encrypted (testdata/integrity/jcrypt.txt): sector 0
 * of three sections decrypts to a commit id of the section with the bases
 * derived from the key, and to unused entries; a key one bit off, or no
 * decryption, matches nothing.
 */
Test(integrity_jcrypt, kernel_journals)
{
	struct it_fact *v;
	int n = it_facts_load("jcrypt.txt", &v);

	for (int i = 0; i < n; i++) {
		const struct it_fact *f = &v[i];
		struct dmt_integrity_jcrypt *jc, *bad;
		struct dmt_integrity_sb sb;
		struct dmt_integrity_geom g;
		struct dmt_reason why = { 0 };
		uint64_t ds = it_getu(f, "device_sectors");
		uint32_t secs[3] = { 0, 1, (uint32_t)it_getu(f, "last") };
		uint8_t key[64], *img, *buf;
		size_t klen, len, sbytes;
		char name[96];

		char *path;

		snprintf(name, sizeof(name), "jcrypt/%s.bin", f->name);
		path = it_testdata_path(name);
		img = th_read_file(path, &len);
		free(path);
		cr_assert_eq(len, 4 * 512);
		unhex(it_get(f, "key"), key, &klen);
		cr_assert_eq(dmt_integrity_sb_decode(img, &sb, NULL), 0);
		cr_assert_eq(dmt_integrity_geom_from_sb(&sb, false, ds, ds, 0, &g,
							&why),
			     0, "%s: reason %d", f->name, why.code);
		cr_assert_eq(dmt_integrity_jcrypt_new(it_get(f, "cipher"), key,
						      klen, &g, &jc),
			     0, "%s", f->name);
		key[0] ^= 1;
		cr_assert_eq(dmt_integrity_jcrypt_new(it_get(f, "cipher"), key,
						      klen, &g, &bad),
			     0);
		sbytes = (size_t)g.section_sectors * 512;
		buf = calloc(1, sbytes);
		cr_assert(buf);
		for (int k = 0; k < 3; k++) {
			const uint8_t *raw = img + 512 * (k + 1);

			cr_expect_eq(jc_seq(dmt_integrity_jcrypt_bases(jc),
					    secs[k], raw), -1,
				     "%s: section %u in the clear", f->name,
				     secs[k]);
			memset(buf, 0, sbytes);
			memcpy(buf, raw, 512);
			cr_assert_eq(dmt_integrity_jcrypt_section(bad, false,
								  secs[k], buf),
				     0);
			cr_expect_eq(jc_seq(dmt_integrity_jcrypt_bases(bad),
					    secs[k], buf), -1,
				     "%s: section %u with a wrong key", f->name,
				     secs[k]);
			memset(buf, 0, sbytes);
			memcpy(buf, raw, 512);
			cr_assert_eq(dmt_integrity_jcrypt_section(jc, false,
								  secs[k], buf),
				     0);
			cr_expect_geq(jc_seq(dmt_integrity_jcrypt_bases(jc),
					     secs[k], buf), 0,
				      "%s: section %u: no commit id", f->name,
				      secs[k]);
			/* entries 0, 8, 16... live in sector 0: all unused */
			for (unsigned int e = 0; e < g.section_entries;
			     e += 8) {
				size_t off = (size_t)(e / 8) * g.entry_size;

				cr_expect(buf[off + 4] == 0xff &&
						  buf[off + 7] == 0xff,
					  "%s: section %u entry %u used",
					  f->name, secs[k], e);
			}
		}
		free(buf);
		free(img);
		dmt_integrity_jcrypt_free(jc);
		dmt_integrity_jcrypt_free(bad);
	}
	free(v);
}

/* What format writes, check reads back; round trip per cipher. */
Test(integrity_jcrypt, sections_round_trip_and_errors)
{
	static const char *const algs[] = { "ctr(aes)", "ctr-aes", "cbc(aes)",
					     "cbc-aes", "chacha20" };
	struct dmt_integrity_layout l = { .sector_size = 512, .tag_size = 4,
					  .fix_padding = true, .fix_hmac = true,
					  .journal_sectors = 2048,
					  .dev_sectors = 65536 };
	struct dmt_integrity_sb sb;
	struct dmt_integrity_geom g;
	struct dmt_integrity_jcrypt *jc;
	uint8_t key[32], *buf;

	memset(key, 0x5c, sizeof(key));
	cr_assert_eq(dmt_integrity_geom_format(&l, &sb, &g, NULL), 0);
	cr_assert_gt(g.journal_sections, 2);
	buf = malloc((size_t)g.section_sectors * 512);
	cr_assert(buf);
	for (size_t a = 0; a < sizeof(algs) / sizeof(algs[0]); a++) {
		struct dmt_integrity_journal_report rep = { 0 };

		cr_assert_eq(dmt_integrity_jcrypt_new(algs[a], key, 32, &g,
						      &jc),
			     0, "%s", algs[a]);
		for (uint32_t s = 0; s < g.journal_sections; s++) {
			cr_assert_eq(dmt_integrity_journal_section(
					     &g, &sb, NULL, jc, s, 0, buf),
				     0);
			/* encrypted: the plain commit ids are not there */
			cr_expect_eq(jc_seq(dmt_integrity_jcrypt_bases(jc), s,
					    buf), -1, "%s", algs[a]);
			cr_assert_eq(dmt_integrity_journal_verify_section(
					     &g, &sb, NULL, jc, s, buf, &rep),
				     0);
		}
		cr_expect_eq(rep.bad_commit_ids + rep.used_entries, 0, "%s",
			     algs[a]);
		dmt_integrity_jcrypt_free(jc);
	}
	cr_expect_eq(dmt_integrity_jcrypt_new("xts(aes)", key, 32, &g, &jc),
		     -ENOENT);
	cr_expect_eq(dmt_integrity_jcrypt_new("ctr(aes)", key, 20, &g, &jc),
		     -EINVAL);
	cr_expect_eq(dmt_integrity_jcrypt_new("chacha20", key, 16, &g, &jc),
		     -EINVAL);
	free(buf);
}

/* ---- tags ---- */

Test(integrity_tags, kernel_vectors)
{
	struct it_fact *facts;
	int n = it_facts_load("tags.txt", &facts);
	static uint8_t zero[4096];

	for (int i = 0; i < n; i++) {
		struct it_fact *f = &facts[i];
		struct dmt_integrity_tagger *t;
		uint8_t *want, got[64];
		size_t len;

		cr_assert_eq(tool_parse_hex(it_get(f, "tag"), &want,
						      &len), 0);
		cr_assert_eq(dmt_integrity_tagger_new(it_get(f, "alg"), NULL, 0,
				it_getu(f, "salted") ? salt16 : NULL,
				(unsigned int)it_getu(f, "ss"),
				(unsigned int)len, NULL, &t), 0, "%s", f->name);
		cr_assert_eq(dmt_integrity_tags(t, it_getu(f, "sector"), 1,
						zero, 0, got), 0);
		cr_expect_arr_eq(got, want, len, "%s", f->name);
		dmt_integrity_tagger_free(t);
		free(want);
	}
	free(facts);
}

/* One tagger over nblk blocks against the reference, block by block. */
static void match_one(const char *alg, const uint8_t *key, size_t klen,
		      const uint8_t *salt, unsigned int ss, unsigned int ts,
		      const uint8_t *data, size_t nblk)
{
	struct dmt_integrity_tagger *t;
	uint8_t got[64 * 37], want[64];
	const uint64_t s0 = 1000 * ss / 512;

	cr_assert_leq(nblk, 37);
	cr_assert_eq(dmt_integrity_tagger_new(alg, key, klen, salt, ss, ts,
					      NULL, &t), 0, "%s", alg);
	cr_assert_eq(dmt_integrity_tags(t, s0, nblk, data, ss, got), 0);
	for (size_t b = 0; b < nblk; b++) {
		it_ref_tag(alg, key, klen, salt, s0 + b * ss / 512,
			   data + b * ss, ss, ts, want);
		cr_assert_arr_eq(got + b * ts, want, ts,
				 "%s ss %u tag %u block %zu", alg, ss, ts, b);
	}
	dmt_integrity_tagger_free(t);
}

/* Every algorithm, truncated and padded tags, against the references. */
Test(integrity_tags, match_reference)
{
	static const struct {
		const char *alg;
		bool key;
	} algs[] = {
		{ "crc32c", false }, { "crc32", false }, { "sha1", false },
		{ "sha256", false }, { "hmac(sha256)", true },
		{ "xxhash64", false },
	};
	static const unsigned int sizes[] = { 512, 1024, 2048, 4096 };
	static const uint8_t key[20] = "integrity-test-key!";
	static const unsigned int tsz[] = { 1, 3, 4, 20, 33, 64 };
	const size_t nblk = 37;
	uint8_t *data = malloc(nblk * 4096);

	cr_assert(data);
	th_fill_random(data, nblk * 4096, 42);
	for (size_t a = 0; a < sizeof(algs) / sizeof(algs[0]); a++) {
		const uint8_t *k = algs[a].key ? key : NULL;
		size_t kl = algs[a].key ? sizeof(key) : 0;

		for (size_t s = 0; s < 4; s++)
			for (size_t t = 0; t < 6; t++)
				match_one(algs[a].alg, k, kl,
					  (t & 1) ? salt16 : NULL, sizes[s],
					  tsz[t], data, nblk);
	}
	free(data);
}

/* Every engine that can run an algorithm gives the same tags. */
Test(integrity_tags, engines_agree)
{
	struct dmt_engine_info info[32];
	size_t ne = dmt_engine_list(info, 32);
	static const char *const algs[] = { "sha256", "hmac(sha256)",
					    "crc32c" };
	static const uint8_t key[3] = "key";
	uint8_t *data = malloc(300 * 512), ref[300 * 32], got[300 * 32];

	cr_assert(data);
	th_fill_random(data, 300 * 512, 7);
	for (size_t a = 0; a < 3; a++) {
		bool keyed = a == 1;
		struct dmt_integrity_tagger *t;
		int used = 0;

		cr_assert_eq(dmt_integrity_tagger_new(algs[a],
			keyed ? key : NULL, keyed ? 3 : 0, salt16, 512, 32,
			NULL, &t), 0);
		cr_assert_eq(dmt_integrity_tags(t, 64, 300, data, 512, ref), 0);
		dmt_integrity_tagger_free(t);
		for (size_t e = 0; e < ne && e < 32; e++) {
			if (!info[e].available)
				continue;
			if (dmt_integrity_tagger_new(algs[a],
				keyed ? key : NULL, keyed ? 3 : 0, salt16, 512,
				32, info[e].name, &t))
				continue;	/* engine lacks this alg */
			cr_assert_eq(dmt_integrity_tags(t, 64, 300, data, 512,
							got), 0);
			cr_expect_arr_eq(got, ref, sizeof(ref), "%s on %s",
					 algs[a], info[e].name);
			dmt_integrity_tagger_free(t);
			used++;
		}
		cr_expect_geq(used, 1);
	}
	free(data);
}

Test(integrity_tags, default_sizes)
{
	unsigned int ts;

	cr_assert_eq(dmt_integrity_default_tag_size("crc32c", &ts), 0);
	cr_expect_eq(ts, 4);
	cr_assert_eq(dmt_integrity_default_tag_size("crc32", &ts), 0);
	cr_expect_eq(ts, 4);
	cr_assert_eq(dmt_integrity_default_tag_size("xxhash64", &ts), 0);
	cr_expect_eq(ts, 8);
	cr_assert_eq(dmt_integrity_default_tag_size("sha1", &ts), 0);
	cr_expect_eq(ts, 20);
	cr_assert_eq(dmt_integrity_default_tag_size("hmac-sha256", &ts), 0);
	cr_expect_eq(ts, 32);
	cr_expect_eq(dmt_integrity_default_tag_size("nosuch", &ts), -ENOENT);
}

/* ---- operations through the library ---- */

static char *dir;

static void ops_setup(void)
{
	dir = th_mkdtemp();
}

static void ops_teardown(void)
{
	th_rmtree(dir);
	free(dir);
}

/* Options on an image opened read-write (or created, when missing). */
static void opts_init(struct dmt_integrity_params *o, struct dmt_file **meta,
		      const char *dev)
{
	int err;

	memset(o, 0, sizeof(*o));
	err = dmt_file_open(dev, DMT_OPEN_RW, meta);
	if (err == -ENOENT) {
		cr_assert_eq(dmt_file_open(dev, DMT_OPEN_NEW_TMP, meta), 0);
		o->created = true;
	} else {
		cr_assert_eq(err, 0, "%s", dev);
	}
	o->meta = *meta;
	o->alg = "crc32c";
	o->layout.sector_size = 512;
	o->layout.fix_padding = true;
	o->layout.fix_hmac = true;
	o->have_salt = true;
	memcpy(o->salt, salt16, 16);
	o->threads = 2;
}

static int read_sb(const char *path, struct dmt_integrity_sb *sb)
{
	struct dmt_file *f = NULL;
	uint64_t size;
	int err;

	cr_assert_eq(dmt_file_open(path, DMT_OPEN_READ, &f), 0);
	err = dmt_integrity_read_sb(f, sb, &size, NULL);
	dmt_file_close(f);
	return err;
}

/*
 * A write error part-way through an in-place format leaves a superblock
 * marking where valid tags end; recalculate finishes the job.
 */
Test(integrity_ops, interrupted_format_resumes, .init = ops_setup,
     .fini = ops_teardown)
{
	char *img = th_path(dir, "img"), *pay = th_path(dir, "payload-file");
	struct dmt_integrity_params o;
	struct dmt_integrity_result r;
	struct dmt_reason why = {0};
	struct dmt_integrity_sb sb;
	struct dmt_file *meta = NULL, *payload = NULL;
	uint64_t first = 0;

	th_write_random_file(pay, 40u << 20, 3);
	th_write_random_file(img, 64u << 20, 9);	/* old contents */
	opts_init(&o, &meta, img);
	cr_assert_eq(dmt_file_open(pay, DMT_OPEN_READ, &payload), 0);
	o.payload = payload;
	o.threads = 1;
	/* a unit that is all payload is read in one transfer: the 3rd read
	 * is unit 2's first (8 MiB units: one thread has two workers, each
	 * with half the memory budget) */
	dmt_io_fault_set("payload-file", DMT_IO_READ, 3, EIO, false);
	cr_assert_eq(dmt_integrity_format(&o, &r, &why), -EIO);
	dmt_io_fault_clear();
	/* the failing read is named */
	cr_expect_eq(why.code, DMT_REASON_INTEGRITY_IO_READ);
	cr_expect_str_eq(why.path, pay);
	cr_expect_eq(why.value, EIO);
	dmt_file_close(payload);
	dmt_file_close(meta);
	cr_assert_eq(read_sb(img, &sb), 0);
	cr_expect(sb.flags & DMT_INTEGRITY_SB_RECALCULATING);
	cr_expect_eq(sb.version, 5);
	cr_expect_eq(sb.recalc_sector, 32768);
	/* tags before recalc_sector are valid: check passes up to there */
	opts_init(&o, &meta, img);
	cr_assert_eq(dmt_integrity_check(&o, &r, &why), 0, "reason %d",
		     why.code);
	cr_expect_eq(r.end_sector, sb.recalc_sector);
	cr_assert_eq(dmt_integrity_recalculate(&o, &r, &why), 0, "reason %d",
		     why.code);
	cr_expect_eq(r.start_sector, sb.recalc_sector);
	cr_assert_eq(read_sb(img, &sb), 0);
	/* done: the superblock is a plain formatted one again */
	cr_expect_eq(sb.flags, 0x18);
	cr_expect_eq(sb.recalc_sector, 0);
	cr_expect_eq(sb.version, 5);
	cr_assert_eq(dmt_integrity_check(&o, &r, &why), 0, "reason %d",
		     why.code);
	cr_expect_eq(r.end_sector, sb.provided_data_sectors);
	dmt_file_close(meta);
	cr_expect_eq(it_verify_image(img, NULL, "crc32c", NULL, 0, &first), 0,
		     "first bad sector %llu", (unsigned long long)first);
	free(img);
	free(pay);
}

/* A failed new-file format leaves nothing behind. */
Test(integrity_ops, failed_create_leaves_nothing, .init = ops_setup,
     .fini = ops_teardown)
{
	char *img = th_path(dir, "new.img"), *cmd;
	struct dmt_integrity_params o;
	struct dmt_integrity_result r;
	struct dmt_reason why = {0};
	struct dmt_file *meta = NULL;
	char *out = NULL;

	opts_init(&o, &meta, img);
	cr_assert(o.created);
	o.device_size = 16u << 20;
	dmt_io_fault_set("new.img", DMT_IO_WRITE, 4, ENOSPC, false);
	cr_assert_eq(dmt_integrity_format(&o, &r, &why), -ENOSPC);
	dmt_io_fault_clear();
	dmt_file_close(meta);
	cr_assert_eq(access(img, F_OK), -1);
	cr_assert(asprintf(&cmd, "ls -A '%s'", dir) > 0);
	cr_assert_eq(th_sh(&out, NULL, "%s", cmd), 0);
	cr_expect_str_empty(out, "left behind: %s", out);
	free(out);
	free(cmd);
	free(img);
}

/* Progress reports reach the total; an abort stops with -EINTR. */
static int count_progress(void *ctx, uint64_t done, uint64_t total)
{
	uint64_t *v = ctx;

	cr_assert_leq(done, total);
	v[0]++;
	v[1] = done;
	v[2] = total;
	return v[3] && v[0] >= v[3];
}

Test(integrity_ops, progress_and_abort, .init = ops_setup,
     .fini = ops_teardown)
{
	char *img = th_path(dir, "img");
	struct dmt_integrity_params o;
	struct dmt_integrity_result r;
	struct dmt_reason why = {0};
	struct dmt_integrity_sb sb;
	struct dmt_file *meta = NULL;
	uint64_t v[4] = { 0 };

	th_write_random_file(img, 64u << 20, 0);
	opts_init(&o, &meta, img);
	o.progress.fn = count_progress;
	o.progress.ctx = v;
	cr_assert_eq(dmt_integrity_format(&o, &r, &why), 0);
	cr_expect_gt(v[0], 1);
	cr_expect_eq(v[1], v[2]);
	cr_expect_eq(v[2], r.sb.provided_data_sectors * 512);
	memset(v, 0, sizeof(v));
	v[3] = 2;
	cr_assert_eq(dmt_integrity_recalculate(&o, &r, &why), -EINTR);
	dmt_file_close(meta);
	cr_assert_eq(read_sb(img, &sb), 0);
	cr_expect(sb.flags & DMT_INTEGRITY_SB_RECALCULATING);
	cr_expect_lt(sb.recalc_sector, sb.provided_data_sectors);
	free(img);
}

/*
 * Units that are all payload move in single large transfers, the others
 * (here: around a hole in the payload, same bytes) chunk by chunk: the
 * images must be the same, for units that hold a whole interleave area
 * (tags and data in one transfer) and for units of half an area (two),
 * and check must pass on both and find a flipped data byte.
 */
static void format_from(const char *img, const char *pay, unsigned int il,
			unsigned int ss, unsigned int threads)
{
	struct dmt_integrity_params o;
	struct dmt_integrity_result r;
	struct dmt_reason why = {0};
	struct dmt_file *meta = NULL, *payload = NULL;

	opts_init(&o, &meta, img);
	cr_assert(o.created);
	cr_assert_eq(dmt_file_open(pay, DMT_OPEN_READ, &payload), 0);
	o.payload = payload;
	o.device_size_auto = true;
	o.layout.interleave_sectors = il;
	o.layout.sector_size = ss;
	o.alg = "sha256";
	o.threads = threads;
	cr_assert_eq(dmt_integrity_format(&o, &r, &why), 0, "reason %d",
		     why.code);
	dmt_file_close(payload);
	dmt_file_close(meta);
}

static int check_image(const char *img, uint64_t *mismatches,
		       uint64_t *first_bad)
{
	struct dmt_integrity_params o;
	struct dmt_integrity_result r;
	struct dmt_reason why = {0};
	struct dmt_file *meta = NULL;
	int err;

	opts_init(&o, &meta, img);
	o.alg = "sha256";
	err = dmt_integrity_check(&o, &r, &why);
	*mismatches = r.mismatches;
	*first_bad = r.n_first_bad ? r.first_bad[0] : UINT64_MAX;
	dmt_file_close(meta);
	return err;
}

Test(integrity_ops, large_transfers_match_chunks, .init = ops_setup,
     .fini = ops_teardown)
{
	static const unsigned int il[] = { 32768, 65536, 32768 };
	static const unsigned int ss[] = { 512, 512, 4096 };
	char *pa = th_path(dir, "pa"), *pb = th_path(dir, "pb");
	uint64_t len = (40u << 20) + 3 * 4096, bad, first;
	uint8_t *buf = malloc(len);
	int fd;

	th_fill_random(buf, len, 11);
	memset(buf + (17u << 20), 0, 1u << 20);	/* zeros, in unit 1 */
	th_write_file(pa, buf, len);
	/* the same bytes with a hole where the zeros are */
	fd = open(pb, O_RDWR | O_CREAT | O_TRUNC, 0600);
	cr_assert_eq(ftruncate(fd, (off_t)len), 0);
	cr_assert_eq(pwrite(fd, buf, 17u << 20, 0), 17 << 20);
	cr_assert_eq(pwrite(fd, buf + (18u << 20), len - (18u << 20),
			    18u << 20), (ssize_t)(len - (18u << 20)));
	close(fd);
	for (int i = 0; i < 3; i++) {
		char *ia = th_path(dir, "ia"), *ib = th_path(dir, "ib");
		char ha[65], hb[65];

		format_from(ia, pa, il[i], ss[i], 1 + i % 2);
		format_from(ib, pb, il[i], ss[i], 2 - i % 2);
		th_sha256_file(ia, ha);
		th_sha256_file(ib, hb);
		cr_expect_str_eq(ha, hb, "case %d: the images differ", i);
		cr_expect_eq(check_image(ia, &bad, &first), 0);
		cr_expect_eq(check_image(ib, &bad, &first), 0);
		/* logical byte 5 MiB + 1: unit 0, sector 10240 */
		{
			struct dmt_integrity_sb sb;
			struct dmt_integrity_geom g;
			struct stat st;
			uint64_t phys;

			cr_assert_eq(read_sb(ia, &sb), 0);
			cr_assert_eq(stat(ia, &st), 0);
			cr_assert_eq(dmt_integrity_geom_from_sb(
					     &sb, false, (uint64_t)st.st_size >> 9,
					     0, 0, &g, NULL), 0);
			phys = dmt_integrity_data_sector(&g, 10240) * 512 + 1;
			th_flip_byte(ia, phys, 0x10);
		}
		cr_expect_eq(check_image(ia, &bad, &first), -EBADMSG);
		cr_expect_eq(bad, 1, "case %d", i);
		cr_expect_eq(first, 10240, "case %d", i);
		unlink(ia);
		unlink(ib);
		free(ia);
		free(ib);
	}
	free(buf);
	free(pa);
	free(pb);
}
