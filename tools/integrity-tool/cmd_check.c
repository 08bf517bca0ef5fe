// SPDX-License-Identifier: MIT
/*
 * integrity-tool check (journal and every tag) and recalculate (tags
 * recomputed in place).
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>

#include "tools/integrity-tool/it.h"

static void print_sectors(const char *what, const uint64_t *list, size_t n,
			  uint64_t total)
{
	printf("%s:", what);
	for (size_t i = 0; i < n; i++)
		printf(" %" PRIu64, list[i]);
	if (total > n)
		printf(" ...");
	printf("\n");
}

static void check_json_details(json_object *j,
			       const struct dmt_integrity_result *r)
{
	json_object *arr = json_object_new_array();

	cli_json_add_u64(j, "mismatches", r->mismatches);
	cli_json_add_u64(j, "discarded", r->discarded);
	for (size_t i = 0; i < r->n_first_bad; i++)
		json_object_array_add(arr,
				      json_object_new_uint64(r->first_bad[i]));
	json_object_object_add(j, "first_mismatch_sectors", arr);
	cli_json_add_u64(j, "journal_bad_commit_ids", r->journal.bad_commit_ids);
	cli_json_add_u64(j, "journal_used_entries", r->journal.used_entries);
	cli_json_add_u64(j, "journal_bad_macs", r->journal.bad_macs);
	cli_json_add_bool(j, "superblock_mac_checked", r->sb_mac_checked);
}

static void print_json(struct cli *c, const struct dmt_integrity_result *r,
		       bool recalc, int err, const char *hint)
{
	const struct it *it = it_of(c);
	json_object *j = json_object_new_object();

	cli_json_add_str(j, "device", it->device);
	if (it->data_path)
		cli_json_add_str(j, "data_device", it->data_path);
	cli_json_add_str(j, "result", !err ? "ok" :
			 err == -EBADMSG ? "mismatch" : "not clean");
	if (it->why.code && err) {
		char why[512];

		cli_reason_text(c, &it->why, why, sizeof(why));
		cli_json_add_str(j, "reason", why);
	}
	if (hint[0])
		cli_json_add_str(j, "hint", hint);
	cli_json_add_u64(j, "start_sector", r->start_sector);
	cli_json_add_u64(j, "end_sector", r->end_sector);
	cli_json_add_u64(j, "provided_data_sectors", r->sb.provided_data_sectors);
	cli_json_add_u64(j, "blocks", r->blocks);
	if (!recalc)
		check_json_details(j, r);
	cli_json_add_str(j, "engine", r->engine);
	json_object_object_add(j, "superblock", it_sb_json(&r->sb));
	cli_json_print(c, j);
}

static void print_journal(const char *dev, const struct dmt_integrity_result *r)
{
	const struct dmt_integrity_journal_report *jr = &r->journal;

	if (jr->bad_commit_ids)
		printf("%s: %" PRIu64 " journal sectors with a bad commit id, first: section %u sector %u\n",
		       dev, jr->bad_commit_ids, jr->first_bad_section,
		       jr->first_bad_sector);
	if (jr->bad_macs)
		printf("%s: %" PRIu64 " journal sections with a bad MAC, first: section %u\n",
		       dev, jr->bad_macs, jr->first_bad_mac_section);
}

static void print_recalculating(const char *dev,
				const struct dmt_integrity_result *r)
{
	if (!(r->sb.flags & DMT_INTEGRITY_SB_RECALCULATING))
		return;
	if (r->end_sector < r->sb.provided_data_sectors)
		printf("%s: recalculating: only sectors 0..%" PRIu64
		       " of %" PRIu64 " have valid tags and were checked (the kernel does not verify the rest either)\n",
		       dev, r->end_sector, r->sb.provided_data_sectors);
	else
		printf("%s: recalculating flag set, recalc_sector %" PRIu64
		       " is past the end: every sector was checked\n",
		       dev, r->sb.recalc_sector);
}

static void print_check(const struct it *it,
			const struct dmt_integrity_result *r, int err)
{
	const char *dev = it->device;

	print_journal(dev, r);
	if (r->mismatches) {
		printf("%s: %" PRIu64 " of %" PRIu64 " blocks have wrong tags\n",
		       dev, r->mismatches, r->blocks);
		print_sectors("First mismatching sectors", r->first_bad,
			      r->n_first_bad, r->mismatches);
	}
	if (r->discarded) {
		printf("%s: %" PRIu64 " blocks discarded (tags all 0xf6)%s\n",
		       dev, r->discarded, it->o.allow_discards ?
		       ", accepted (--allow-discards)" :
		       ", counted as mismatches without --allow-discards");
		print_sectors("First discarded sectors", r->first_discarded,
			      r->n_first_discarded, r->discarded);
	}
	print_recalculating(dev, r);
	if (!err)
		printf("%s: %" PRIu64 " blocks (%" PRIu64
		       " bytes) verified, all tags match\n",
		       dev, r->blocks, r->end_sector * 512);
}

/*
 * Every block wrong: rather the options than the data.  The tag size of
 * the superblock against the algorithm's says which.
 */
static void wrong_options_hint(const struct it *it,
			       const struct dmt_integrity_result *r,
			       char *hint, size_t size)
{
	unsigned int ts;

	hint[0] = '\0';
	if (!r->mismatches || r->mismatches != r->blocks || r->blocks < 2 ||
	    r->discarded)
		return;
	if (!dmt_integrity_default_tag_size(it->o.alg, &ts) &&
	    ts != r->sb.tag_size)
		snprintf(hint, size, "every block has a wrong tag: formatted with another --integrity or key? (the superblock has %u-byte tags, %s makes %u)",
			 r->sb.tag_size, it_canonical_alg(it->o.alg), ts);
	else
		snprintf(hint, size, "every block has a wrong tag: formatted with another --integrity or key?");
}

/* Opens the files and runs the library; *said: the failure is told. */
static int run_library(struct cli *c, bool recalc,
		       struct dmt_integrity_result *r, bool *said)
{
	struct it *it = it_of(c);
	int err;

	it->o.allow_discards = cli_given(c, O_ALLOW_DISCARDS);
	it->o.recalc_reset = cli_given(c, O_RECALC_RESET);
	err = it_open_files(c);
	*said = err != 0;
	if (err)
		return err;
	tool_progress_init(&it->progress, it->device,
			   recalc ? "recalculated" : "verified",
			   c->progress_frequency, c->progress_json);
	it->o.progress = tool_progress_hook(&it->progress);
	err = recalc ? dmt_integrity_recalculate(&it->o, r, &it->why)
		     : dmt_integrity_check(&it->o, r, &it->why);
	tool_progress_finish(&it->progress, !err || err == -EBADMSG);
	if (r->sb.version)
		it_debug_geometry(r);
	if (r->engine)
		tool_verbose("%s: tags by %s on %u %s", it->device, r->engine,
			     it->o.threads,
			     cli_plural(it->o.threads, "thread", "threads"));
	return err;
}

int it_check_run(struct cli *c, bool recalc)
{
	struct it *it = it_of(c);
	struct dmt_integrity_result r;
	char hint[256];
	bool said;
	int err;

	err = run_library(c, recalc, &r, &said);
	if (said)
		return err;
	wrong_options_hint(it, &r, hint, sizeof(hint));
	if (c->json && (!err || err == -EBADMSG || err == -EUCLEAN))
		print_json(c, &r, recalc, err, hint);
	if (err == -EUCLEAN && r.journal.used_entries)
		tool_err("%s: %" PRIu64 " used journal entries, first in section %u entry %u (sector field %" PRIu64 ")",
			 it->device, r.journal.used_entries,
			 r.journal.first_used_section,
			 r.journal.first_used_entry,
			 r.journal.first_used_logical);
	if (err && err != -EBADMSG) {
		it_print_why(c, &r, err);
		if (recalc && err == -EINTR)
			tool_err("%s: interrupted; the superblock records where to continue: run recalculate again",
				 it->device);
		return err;
	}
	if (!c->json && !recalc)
		print_check(it, &r, err);
	else if (!c->json)
		printf("%s: recalculated %" PRIu64 " blocks (sectors %" PRIu64 "..%" PRIu64 ")\n",
		       it->device, r.blocks, r.start_sector, r.end_sector);
	if (err)
		it_print_why(c, &r, err);
	if (hint[0])
		tool_err("%s: %s", it->device, hint);
	return err;
}

int it_cmd_check(struct cli *c)
{
	return it_check_run(c, false);
}
