// SPDX-License-Identifier: MIT
/*
 * The dm-integrity journal under an authenticated dm-crypt device, before
 * check or decrypt reads the data area: the kernel replays committed
 * journal entries on activation, so a device that was not closed cleanly
 * has newer sectors (and tags) in the journal than in the data area.
 * Reading the data area alone would then pass stale sectors as valid;
 * such a journal is refused (-EUCLEAN) with where its first used entry
 * is, as integrity-tool check does.  Commit ids that match no sequence
 * (a damaged journal, which the kernel cannot use either) are refused
 * too.  Our own images and cleanly closed ones have an empty journal.
 */
#include <dmt/crypt_auth.h>

#include <errno.h>
#include <stdlib.h>

#include <dmt/integrity.h>
#include <dmt/io.h>
#include <dmt/reason.h>

#include "lib/crypt/crypt_auth_priv.h"
#include "lib/integrity/integrity_priv.h"

/* Sections read per pread. */
#define JOURNAL_BATCH_BYTES (4u << 20)

int dmt_auth_journal_check(struct dmt_file *data, struct dmt_auth_result *r,
			   struct dmt_reason *rs)
{
	const struct dmt_integrity_geom *g = &r->geom;
	struct dmt_integrity_journal_report rep = { 0 };
	size_t sec_bytes = (size_t)g->section_sectors << 9;
	uint32_t per, i, k;
	uint8_t *buf = NULL;
	int err = 0;

	if (!g->journal_sections || !sec_bytes)
		return 0;
	per = (uint32_t)(JOURNAL_BATCH_BYTES / sec_bytes);
	if (!per)
		per = 1;
	buf = malloc((size_t)per * sec_bytes);
	if (!buf)
		return -ENOMEM;
	for (i = 0; !err && i < g->journal_sections; i += k) {
		uint64_t off = r->data_offset +
			       ((DMT_INTEGRITY_SB_SECTORS +
				 (uint64_t)i * g->section_sectors) << 9);

		k = g->journal_sections - i < per ? g->journal_sections - i :
						    per;
		err = dmt_pread_full(data, buf, (size_t)k * sec_bytes, off);
		if (err) {
			dmt_reason_set(rs, err, DMT_REASON_IO, "journal",
				       (uint64_t)-err);
			break;
		}
		for (uint32_t j = 0; !err && j < k; j++)
			err = dmt_integrity_journal_verify_section(
				g, &r->sb, NULL, NULL, i + j,
				buf + (size_t)j * sec_bytes, &rep);
	}
	if (!err && rep.bad_commit_ids) {
		err = -EUCLEAN;
		dmt_reason_set(rs, err, DMT_REASON_INTEGRITY_JOURNAL_COMMIT_IDS,
			       "journal", rep.first_bad_section);
		rs->min = rep.first_bad_sector;
	} else if (!err && rep.used_entries) {
		err = -EUCLEAN;
		dmt_reason_set(rs, err, DMT_REASON_INTEGRITY_JOURNAL_NOT_EMPTY,
			       "journal", rep.first_used_section);
		rs->min = rep.first_used_entry;
	}
	free(buf);
	return err;
}
