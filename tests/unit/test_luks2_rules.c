// SPDX-License-Identifier: MIT
/*
 * Every rule of libcryptsetup 2.6.1's LUKS2 header validation, one
 * generated header per rule (tests/support/luks2_gen.h: a valid base
 * modified member by member, checksums recomputed), judged three ways:
 * `cryptsetup luksDump` on a copy (it repairs a header with one bad copy:
 * it never sees the file under test), our loader, and `crypt-tool dump`.
 * Each case states luksDump's verdict, so a case that does not test what
 * it says fails too.  Our verdict must be luksDump's, our exit code 4 on
 * a refusal with a reason naming the object and member, the dump text
 * (and --json for the dump cases) identical where both accept, and the
 * file under test unchanged.  Refused JSON changes are also made in one
 * copy only (every third): then both readers accept (the other copy
 * serves).  Keyslots and areas run on luksFormat's header too.
 *
 * DMT_RULES_TABLE=file appends one line per case: group, base, case,
 * luksDump's verdict, ours, agreement.  DMT_RULES_OURS=path judges another
 * crypt-tool binary instead (through its CLI only).
 */
#if !defined(DMT_NO_LIBCRYPTSETUP) && __has_include(<libcryptsetup.h>) && __has_include(<argon2.h>)
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/helpers.h"
#include "tests/support/luks2_gen.h"
#include <dmt/io.h>
#include <dmt/luks2.h>
#include <dmt/reason.h>

#define MAX_OPS 24

struct rcase {
	const char *name;
	char expect;		/* luksDump 2.6.1: 'A' accepts, 'R' refuses */
	const char *why;	/* 'R': words of our reason */
	const char *ops[MAX_OPS];
};

#define A(n, ...) { n, 'A', NULL, { __VA_ARGS__ } }
#define R(n, w, ...) { n, 'R', w, { __VA_ARGS__ } }

struct run {
	const char *group;
	const struct lg_base *base;
	const char *const *prefix;	/* applied before every case */
	bool json;			/* also compare --json */
	bool variants;			/* also one copy only */
	char *dir, *file, *copy;
	int cases, agree;
};

static void run_init(struct run *x, const char *group, const char *dir,
		     const struct lg_base *b)
{
	memset(x, 0, sizeof(*x));
	x->group = group;
	x->base = b;
	x->dir = strdup(dir);
	x->file = th_path(dir, "case.img");
	x->copy = th_path(dir, "copy.img");
}

static void run_done(struct run *x)
{
	cr_log_info("%s on %s: %d cases, %d agree with luksDump", x->group,
		    x->base->name, x->cases, x->agree);
	cr_expect_eq(x->agree, x->cases);
	free(x->dir);
	free(x->file);
	free(x->copy);
}

/* luksDump (or --dump-json-metadata) of a fresh copy of the file. */
static int theirs(struct run *x, bool json, char **out)
{
	char *argv[] = { "cryptsetup", "luksDump",
			 json ? "--dump-json-metadata" : x->copy,
			 json ? x->copy : NULL, NULL };

	lg_copy(x->base, x->file, x->copy);
	return th_run(argv, out, NULL);
}

/* DMT_RULES_OURS: another crypt-tool to judge (the one from before this
 * validation, to show what it got wrong): the CLI alone then. */
static const char *other_tool(void)
{
	const char *t = getenv("DMT_RULES_OURS");

	return t && *t ? t : NULL;
}

static int ours_cli(struct run *x, bool json, char **out, char **err)
{
	char *argv[] = { (char *)(other_tool() ?: th_tool("crypt-tool")), "dump",
			 json ? "--json" : x->file, json ? x->file : NULL, NULL };

	return th_run(argv, out, err);
}

/* Our loader's verdict and reason, and the dump text when it accepts. */
static int ours_lib(struct run *x, char *why, size_t size, char **text)
{
	struct dmt_luks2 *h = NULL;
	struct dmt_reason r = { 0 };
	struct dmt_file *f = NULL;
	int ret;

	*text = NULL;
	cr_assert_eq(dmt_file_open(x->file, DMT_OPEN_READ, &f), 0);
	ret = dmt_luks2_load(f, &h, &r);
	snprintf(why, size, "%s", r.field ? r.field : "");
	if (!ret)
		cr_assert_eq(dmt_luks2_dump(h, text), 0);
	dmt_luks2_free(h);
	dmt_file_close(f);
	return ret;
}

static void table_line(struct run *x, const char *name, char expect,
		       int cs, int lib, bool same)
{
	const char *path = getenv("DMT_RULES_TABLE");
	FILE *fp = path ? fopen(path, "a") : NULL;

	if (!fp)
		return;
	fprintf(fp, "%s\t%s\t%s\texpect %c\tluksDump %s\tours %s\t%s\n",
		x->group, x->base->name, name, expect,
		cs ? "refuses" : "accepts", lib ? "refuses" : "accepts",
		same ? "agree" : "DISAGREE");
	fclose(fp);
}

/* Output of both where both accept: the text and, for dump cases, the
 * JSON. */
static bool same_output(struct run *x, const char *name, const char *mine)
{
	char *cs = NULL, *js_mine = NULL, *js_cs = NULL;
	bool same;

	cr_assert_eq(theirs(x, false, &cs), 0);
	same = !strcmp(cs, mine);
	cr_expect(same, "%s: dump differs\n--- luksDump\n%s--- ours\n%s", name,
		  cs, mine);
	if (x->json) {
		cr_assert_eq(ours_cli(x, true, &js_mine, NULL), 0);
		cr_assert_eq(theirs(x, true, &js_cs), 0);
		cr_expect_str_eq(js_mine, js_cs, "%s: --json differs", name);
		same = same && !strcmp(js_mine, js_cs);
	}
	free(cs);
	free(js_mine);
	free(js_cs);
	return same;
}

/*
 * Our verdict and text: the loader and dmt_luks2_dump() in-process; the
 * CLI (exit code, message, the same text) on every refusal and every 8th
 * acceptance.
 */
static bool ours(struct run *x, const char *name, const char *why,
		 char **text, int *lib)
{
	char reason[256], *out = NULL, *err = NULL;
	bool cli_ok = true;
	int cli;

	if (other_tool()) {
		cli = ours_cli(x, false, text, &err);
		*lib = cli ? -EINVAL : 0;
		cr_expect(cli == 0 || cli == 4, "%s: exit %d (%s)", name, cli, err);
		snprintf(reason, sizeof(reason), "%s", err);
		free(err);
		return cli == 0 || cli == 4;
	}
	*lib = ours_lib(x, reason, sizeof(reason), text);
	if (*lib || x->json || !(x->cases % 8)) {
		cli = ours_cli(x, false, &out, &err);
		cli_ok = cli == (*lib ? 4 : 0) && (*lib || !strcmp(out, *text));
		cr_expect(cli_ok, "%s: exit %d (%s), or its text differs", name,
			  cli, err);
	}
	if (*lib && why) {
		cr_expect(strstr(reason, why), "%s: reason '%s' lacks '%s'",
			  name, reason, why);
		cr_expect(err && strstr(err, why), "%s: message '%s' lacks '%s'",
			  name, err, why);
	}
	free(out);
	free(err);
	return cli_ok;
}

static void run_one(struct run *x, const char *name, char expect,
		    const char *why, const char *const *ops)
{
	char before[65], after[65], *text = NULL;
	int lib, cs;
	bool same;

	lg_make(x->base, ops, x->file);
	th_sha256_file(x->file, before);
	same = ours(x, name, why, &text, &lib);
	th_sha256_file(x->file, after);
	cr_expect_str_eq(after, before, "%s: our reader changed the file", name);
	cs = theirs(x, false, NULL);
	cr_expect_eq(!cs, expect == 'A',
		     "%s: luksDump %s it: the case is wrong", name,
		     cs ? "refuses" : "accepts");
	cr_expect_eq(!lib, !cs, "%s: luksDump %s, we %s", name,
		     cs ? "refuses" : "accepts", lib ? "refuse" : "accept");
	same = same && !lib == !cs;
	if (same && !lib)
		same = same_output(x, name, text);
	table_line(x, name, expect, cs, lib, same);
	x->cases++;
	x->agree += same;
	free(text);
}

/* prefix, [only primary|secondary], the case's mutations */
static void run_case(struct run *x, const struct rcase *k, int variant)
{
	const char *ops[2 * MAX_OPS + 2];
	size_t n = 0;
	char name[160];

	for (size_t i = 0; x->prefix && x->prefix[i]; i++)
		ops[n++] = x->prefix[i];
	if (variant)
		ops[n++] = variant == 1 ? "only primary" : "only secondary";
	for (size_t i = 0; i < MAX_OPS && k->ops[i]; i++)
		ops[n++] = k->ops[i];
	ops[n] = NULL;
	snprintf(name, sizeof(name), "%s%s", k->name,
		 variant == 1 ? " [primary only]" :
		 variant == 2 ? " [secondary only]" : "");
	run_one(x, name, variant ? 'A' : k->expect, variant ? NULL : k->why,
		ops);
}

/* A change of the JSON alone (no binary field) in one copy is survived. */
static bool json_only(const struct rcase *k)
{
	static const char *const verbs[] = { "set ", "del ", "add ", "copy ",
					     "mv ",  "fn ",  "sub ", NULL };

	for (size_t i = 0; i < MAX_OPS && k->ops[i]; i++) {
		size_t v = 0;

		while (verbs[v] && strncmp(k->ops[i], verbs[v], strlen(verbs[v])))
			v++;
		if (!verbs[v])
			return false;
	}
	return true;
}

/* Every refusal; every third refused JSON change also in one copy only,
 * the primary and the secondary in turn (the rule is the same for all;
 * each luksDump costs ~50 ms). */
static void run_cases(struct run *x, const struct rcase *k, size_t n)
{
	unsigned int refused = 0;

	for (size_t i = 0; i < n; i++) {
		run_case(x, &k[i], 0);
		if (x->variants && k[i].expect == 'R' && k[i].ops[0] &&
		    json_only(&k[i]) && !(refused++ % 3))
			run_case(x, &k[i], 1 + (int)(refused / 3 % 2));
	}
}

static void run_group(const char *group, const struct rcase *k, size_t n,
		      bool both_bases, bool json)
{
	char *dir = th_mkdtemp();
	struct lg_base b;
	struct run x;

	lg_base_ours(&b, dir);
	run_init(&x, group, dir, &b);
	x.json = json;
	x.variants = true;
	run_cases(&x, k, n);
	run_done(&x);
	lg_base_free(&b);
	if (both_bases) {
		lg_base_luksformat(&b, dir);
		run_init(&x, group, dir, &b);
		x.json = json;
		run_cases(&x, k, n);
		run_done(&x);
		lg_base_free(&b);
	}
	th_rmtree(dir);
	free(dir);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the binary headers and the JSON area ---- */

static const struct rcase binary[] = {
	A("the base, unchanged", NULL),
	A("primary checksum wrong", "bytes P 448 0000", "nocsum P"),
	A("secondary checksum wrong", "bytes S 448 0000", "nocsum S"),
	R("both checksums wrong", "checksum", "bytes P 448 0000", "nocsum P",
	  "bytes S 448 0000", "nocsum S"),
	A("primary magic gone: the secondary is probed", "bytes P 0 00"),
	R("primary magic gone, secondary checksum wrong", "magic",
	  "bytes P 0 00", "bytes S 448 0000", "nocsum S"),
	R("primary version 1 (a LUKS1 header)", "LUKS1", "bytes P 6 0001"),
	R("primary version 3", "version", "bytes P 6 0003"),
	A("primary version 0: damaged, the secondary serves", "bytes P 6 0000"),
	A("secondary version 3", "bytes S 6 0003"),
	A("primary hdr_offset wrong", "u64 P 256 512"),
	A("secondary hdr_offset wrong", "u64 S 256 0"),
	R("primary hdr_size 20480 with a good checksum: no secondary there",
	  "NUL", "u64 P 8 20480"),
	A("primary hdr_size 8192 (below 16K): the secondary is probed",
	  "u64 P 8 8192"),
	R("primary hdr_size 32768 with a good checksum", NULL, "u64 P 8 32768"),
	A("secondary hdr_size 32768 at 16384", "u64 S 8 32768"),
	A("secondary newer, another label", "seqid S 9", "field S label newer"),
	A("primary newer", "seqid P 9", "field S label older"),
	A("same seqid, other JSON in the secondary: the primary wins",
	  "only secondary", "set config.flags [\"allow-discards\"]"),
	A("secondary newer with other JSON", "seqid S 7", "only secondary",
	  "set config.flags [\"allow-discards\"]"),
	R("both copies refused, for different rules: the primary's is named",
	  "keyslot 1: no digest", "only primary",
	  "set digests.0.keyslots [\"0\"]", "only secondary",
	  "set config.flags 5"),
	A("checksum sha512", "field P csum_alg sha512", "field S csum_alg sha512"),
	A("checksum sha1", "field P csum_alg sha1", "field S csum_alg sha1"),
	A("checksum blake2b-512 (libcryptsetup's name)",
	  "field P csum_alg blake2b-512", "field S csum_alg blake2b-512"),
	A("checksum SHA256 in upper case", "field P csum_alg SHA256",
	  "field S csum_alg SHA256"),
	R("checksum algorithm unknown in both", "checksum",
	  "field P csum_alg nohash", "field S csum_alg nohash"),
	A("checksum algorithm unknown in the primary", "field P csum_alg nohash"),
	R("a byte after the JSON text's NUL", "NUL", "tail P 41", "tail S 41"),
	A("a byte after the JSON text's NUL, primary only", "tail P 41"),
	R("JSON text starting with a blank", "start",
	  "sub {\"keyslots\" =>  {\"keyslots\""),
	A("blanks after the JSON text",
	  "sub \"keyslots_size\":\"1015808\"}} => \"keyslots_size\":\"1015808\"}} \n "),
	R("JSON text not terminated", "valid JSON",
	  "sub \"keyslots_size\":\"1015808\"}} => \"keyslots_size\":\"1015808\"}"),
	R("two JSON objects", "NUL",
	  "sub \"keyslots_size\":\"1015808\"}} => \"keyslots_size\":\"1015808\"}}{}"),
	R("the metadata an array", "start", "sub {\"keyslots\" => [{\"keyslots\"",
	  "sub \"keyslots_size\":\"1015808\"}} => \"keyslots_size\":\"1015808\"}}]"),
	A("a member twice: the last one counts",
	  "sub \"tokens\":{ => \"tokens\":5,\"tokens\":{"),
	R("nested deeper than json-c's 32 levels", "valid JSON",
	  "sub \"tokens\":{ => \"x\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],\"tokens\":{"),
	R("the file shorter than its keyslots area", NULL, "trunc 600000"),
	R("the file 20000 bytes long", NULL, "trunc 20000"),
	A("a label of 48 characters and a UUID of junk",
	  "field P label 0123456789abcdef0123456789abcdef0123456789abcdefXYZ",
	  "field S label 0123456789abcdef0123456789abcdef0123456789abcdefXYZ",
	  "field P uuid not a uuid", "field S uuid not a uuid"),
	A("no UUID, no label", "field P uuid ", "field S uuid ",
	  "field P label ", "field S label "),
	A("a UTF-8 label and subsystem", "field P label \xc3\xa9t\xc3\xa9",
	  "field S label \xc3\xa9t\xc3\xa9", "field P subsystem \xe2\x82\xac",
	  "field S subsystem \xe2\x82\xac"),
};

Test(luks2_rules, binary_headers, .timeout = 300)
{
	run_group("binary", binary, N(binary), false, false);
}

/* ---- config and requirements ---- */

static const struct rcase config[] = {
	R("config missing", "config is missing", "del config"),
	R("config not an object", "config is not an object", "set config 5"),
	R("requirements not an object", "requirements is not an object",
	  "set config.requirements []"),
	R("mandatory not an array", "mandatory is not an array",
	  "set config.requirements {\"mandatory\":\"x\"}"),
	R("a mandatory requirement not a string", "mandatory[0] is not a string",
	  "set config.requirements {\"mandatory\":[1]}"),
	A("an unknown mandatory requirement",
	  "set config.requirements {\"mandatory\":[\"future-feature\",\"x\"]}"),
	A("requirements without mandatory",
	  "set config.requirements {\"optional\":[5]}"),
	A("mandatory empty", "set config.requirements {\"mandatory\":[]}"),
	R("two online-reencrypt requirements", "more than one online-reencrypt",
	  "set config.requirements {\"mandatory\":[\"online-reencrypt-v2\",\"online-reencrypt-v7\"]}"),
	R("online-reencrypt-v2 without a reencryption", "backup",
	  "set config.requirements {\"mandatory\":[\"online-reencrypt-v2\"]}"),
	A("online-reencrypt-v9 (unknown to 2.6.1)",
	  "set config.requirements {\"mandatory\":[\"online-reencrypt-v9\"]}"),
	A("online-reencrypt-vx (no version number)",
	  "set config.requirements {\"mandatory\":[\"online-reencrypt-vx\"]}"),
	A("offline-reencrypt", "set config.requirements {\"mandatory\":[\"offline-reencrypt\"]}"),
	R("json_size missing", "json_size is missing", "del config.json_size"),
	R("json_size a number", "json_size is not a string",
	  "set config.json_size 12288"),
	R("json_size empty", "json_size is empty", "set config.json_size \"\""),
	R("json_size not a number", "json_size is not a number",
	  "set config.json_size \"12k\""),
	A("json_size with a plus sign (strtoull takes it)",
	  "set config.json_size \"+12288\""),
	A("json_size after blanks", "set config.json_size \" 12288\""),
	A("json_size negative, wrapping to 12288",
	  "set config.json_size \"-18446744073709539328\""),
	R("json_size past uint64", "json_size is not a number",
	  "set config.json_size \"18446744073709551616\""),
	R("json_size of a 32 KiB header in a 16 KiB one", "does not fit below",
	  "set config.json_size \"28672\""),
	R("json_size of a 32 KiB header in a 16 KiB one, detached",
	  "inside the metadata", "set segments.0.offset \"0\"",
	  "set config.json_size \"28672\""),
	R("json_size of no legal header", "legal header size",
	  "set config.json_size \"12289\""),
	R("keyslots_size missing", "keyslots_size is missing",
	  "del config.keyslots_size"),
	R("keyslots_size a number", "keyslots_size is not a string",
	  "set config.keyslots_size 1015808"),
	R("keyslots_size not a number", "keyslots_size is not a number",
	  "set config.keyslots_size \"1M\""),
	R("keyslots_size not a multiple of 4096", "multiple of 4096",
	  "set config.keyslots_size \"1015807\""),
	R("keyslots_size above 128 MiB", "up to 128 MiB",
	  "set config.keyslots_size \"134221824\""),
	R("keyslots_size reaching the data offset", "does not fit below",
	  "set config.keyslots_size \"1019904\""),
	A("keyslots_size just holding the keyslots",
	  "set config.keyslots_size \"516096\""),
	R("keyslots_size one page short of the keyslots", "ends past",
	  "set config.keyslots_size \"512000\""),
	R("keyslots_size 0", "ends past", "set config.keyslots_size \"0\""),
	A("data offset 0 (a detached header)", "set segments.0.offset \"0\""),
	R("config flags not an array", "flags is not an array",
	  "set config.flags \"allow-discards\""),
	R("a config flag not a string", "flags[1] is not a string",
	  "set config.flags [\"allow-discards\",{}]"),
	A("config flags",
	  "set config.flags [\"allow-discards\",\"no-journal\",\"unknown\"]"),
	A("config flags empty", "set config.flags []"),
	A("an unknown config member", "set config.future {\"a\":1}"),
	A("an unknown top-level member", "set vendor [1,\"x\"]"),
};

Test(luks2_rules, config_and_requirements, .timeout = 300)
{
	run_group("config", config, N(config), false, false);
}

/* ---- tokens and digests ---- */

static const struct rcase tokens[] = {
	R("tokens missing", "tokens is missing", "del tokens"),
	R("tokens not an object", "tokens is not an object", "set tokens []"),
	R("a token name not a number", "token x: the name is not a number",
	  "mv tokens.0 x"),
	A("a token named \"\" (libcryptsetup counts it numbered)", "mv tokens.0 "),
	R("a token not an object", "token 1: not an object", "set tokens.1 5"),
	R("token type missing", "token 0: type is missing", "del tokens.0.type"),
	R("token type empty", "token 0: type is empty", "set tokens.0.type \"\""),
	R("token type a number", "token 0: type is not a string",
	  "set tokens.0.type 1"),
	R("token keyslots missing", "token 0: keyslots is missing",
	  "del tokens.0.keyslots"),
	R("token keyslots not an array", "token 0: keyslots is not an array",
	  "set tokens.0.keyslots \"1\""),
	R("a token keyslot not a string", "token 0: keyslots[0] is not a string",
	  "set tokens.0.keyslots [1]"),
	R("a token keyslot that does not exist", "token 0: keyslot 5 does not exist",
	  "add tokens.0.keyslots \"5\""),
	A("a token without keyslots", "set tokens.0.keyslots []"),
	A("a token of an unknown type",
	  "set tokens.1 {\"type\":\"vendor-x\",\"keyslots\":[\"0\",\"1\"],\"blob\":{\"a\":[1,2]}}"),
	A("a token of an unknown luks2- type",
	  "set tokens.2 {\"type\":\"luks2-future\",\"keyslots\":[]}"),
	A("a keyring token without key_description",
	  "del tokens.0.key_description"),
	A("a keyring token with a numeric key_description",
	  "set tokens.0.key_description 42"),
	A("a keyring token with a null key_description",
	  "set tokens.0.key_description null"),
	A("a keyring token with another member", "set tokens.0.extra 1"),
	A("tokens 31 and 32 (luksDump shows 0..31)", "copy tokens.31 tokens.0",
	  "copy tokens.32 tokens.0"),
	A("tokens out of order", "copy tokens.5 tokens.0", "mv tokens.0 7"),
};

static const struct rcase digests[] = {
	R("digests missing", "digests is missing", "del digests"),
	R("digests not an object", "digests is not an object", "set digests 1"),
	R("a digest name not a number", "digest d0: the name is not a number",
	  "copy digests.d0 digests.0", "set digests.d0.keyslots []"),
	R("a digest not an object", "digest 1: not an object", "set digests.1 []"),
	R("digest type missing", "digest 0: type is missing", "del digests.0.type"),
	R("digest type empty", "digest 0: type is empty", "set digests.0.type \"\""),
	R("digest keyslots missing", "digest 0: keyslots is missing",
	  "del digests.0.keyslots"),
	R("digest keyslots not an array", "digest 0: keyslots is not an array",
	  "set digests.0.keyslots {}"),
	R("a digest keyslot not a string", "digest 0: keyslots[0] is not a string",
	  "set digests.0.keyslots [0,1]"),
	R("a digest keyslot that does not exist", "digest 0: keyslot 7 does not exist",
	  "add digests.0.keyslots \"7\""),
	R("digest segments missing", "digest 0: segments is missing",
	  "del digests.0.segments"),
	R("digest segments not an array", "digest 0: segments is not an array",
	  "set digests.0.segments \"0\""),
	R("a digest segment not a string", "digest 0: segments[0] is not a string",
	  "set digests.0.segments [0]"),
	R("a digest segment that does not exist", "digest 0: segment 1 does not exist",
	  "add digests.0.segments \"1\""),
	R("a keyslot no digest lists", "keyslot 1: no digest",
	  "set digests.0.keyslots [\"0\"]"),
	R("a keyslot two digests list", "keyslot 0: in 2 digests",
	  "copy digests.1 digests.0", "set digests.1.segments []"),
	R("the crypt segment no digest lists", "segment 0: no digest",
	  "set digests.0.segments []"),
	A("a keyslot listed twice by one digest", "add digests.0.keyslots \"0\""),
	A("keyslot 0 listed 40 times more", "fn repeat_keyslot 40"),
	A("a second digest for the segment only", "copy digests.1 digests.0",
	  "set digests.1.keyslots []"),
	A("digest 0 renamed 9 (luksDump shows 0..7)", "mv digests.0 9"),
	A("a digest of an unknown type", "set digests.0.type \"future\""),
	A("a pbkdf2 digest without hash, iterations, salt and digest",
	  "del digests.0.hash", "del digests.0.iterations", "del digests.0.salt",
	  "del digests.0.digest"),
	A("a digest salt that is not base64", "set digests.0.salt \"not base64!\""),
	A("base64 with blanks, and without padding",
	  "set digests.0.salt \"QU JD\\nRA==\"", "set digests.0.digest \"QUI\""),
	A("digest members of other JSON types", "set digests.0.hash 256",
	  "set digests.0.iterations \"77\"", "set digests.0.salt 5",
	  "set digests.0.digest null"),
	A("digest iterations negative", "set digests.0.iterations -1"),
	A("a keyslot of an unknown type in two digests",
	  "copy keyslots.2 keyslots.0", "set keyslots.2.type \"vendor\"",
	  "set keyslots.2.area.offset \"548864\"", "add digests.0.keyslots \"2\"",
	  "copy digests.1 digests.0", "set digests.1.keyslots [\"2\"]",
	  "set digests.1.segments []"),
	A("an unbound keyslot (its digest has no segment)",
	  "set digests.0.keyslots [\"0\"]", "copy digests.1 digests.0",
	  "set digests.1.keyslots [\"1\"]", "set digests.1.segments []"),
};

Test(luks2_rules, tokens_and_digests, .timeout = 300)
{
	run_group("tokens", tokens, N(tokens), false, false);
	run_group("digests", digests, N(digests), false, false);
}

/* ---- segments ---- */

#define SEG1(json) "set segments.0.size \"4096\"", "set segments.1 " json
#define LINEAR(off, size)                                                      \
	"{\"type\":\"linear\",\"offset\":\"" off "\",\"size\":\"" size "\"}"
#define BACKUP(off, size, flag)                                                \
	"{\"type\":\"linear\",\"offset\":\"" off "\",\"size\":\"" size         \
	"\",\"flags\":[\"" flag "\"]}"

static const struct rcase segments[] = {
	R("segments missing", "segments is missing", "del segments",
	  "set digests.0.segments []"),
	R("segments not an object", "segments is not an object",
	  "set segments []", "set digests.0.segments []"),
	R("no segment", "segments: there is none", "set segments {}",
	  "set digests.0.segments []"),
	R("a segment name not a number", "segment x: the name is not a number",
	  "copy segments.x segments.0"),
	R("a segment not an object", "segment 1: not an object",
	  "set segments.1 5"),
	R("segment type missing", "segment 0: type is missing",
	  "del segments.0.type"),
	R("segment type empty", "segment 0: type is empty",
	  "set segments.0.type \"\""),
	R("segment type a number", "segment 0: type is not a string",
	  "set segments.0.type 0"),
	R("offset missing", "segment 0: offset is missing", "del segments.0.offset"),
	R("offset a number", "segment 0: offset is not a string",
	  "set segments.0.offset 1048576"),
	R("offset empty", "segment 0: offset is empty", "set segments.0.offset \"\""),
	R("offset with a sign", "segment 0: offset is not a number",
	  "set segments.0.offset \"+1048576\""),
	R("offset after a blank", "segment 0: offset is not a number",
	  "set segments.0.offset \" 1048576\""),
	R("offset past uint64", "segment 0: offset is not a number",
	  "set segments.0.offset \"18446744073709551616\""),
	R("offset not a multiple of 512", "segment 0: offset is not a multiple of 512",
	  "set segments.0.offset \"1048577\""),
	A("offset 0", "set segments.0.offset \"0\""),
	A("offset far past the file's end", "set segments.0.offset \"1099511627776\""),
	R("size missing", "segment 0: size is missing", "del segments.0.size"),
	R("size a number", "segment 0: size is not a string",
	  "set segments.0.size 4096"),
	R("size empty", "segment 0: size is empty", "set segments.0.size \"\""),
	R("size 0", "segment 0: size is neither", "set segments.0.size \"0\""),
	R("size not a number", "segment 0: size is neither",
	  "set segments.0.size \"4k\""),
	R("size negative", "segment 0: size is neither",
	  "set segments.0.size \"-4096\""),
	R("size not a multiple of 512", "segment 0: size is not a multiple of 512",
	  "set segments.0.size \"4097\""),
	R("size not a multiple of the sector size",
	  "segment 0: size is not a multiple of sector_size",
	  "set segments.0.sector_size 4096", "set segments.0.size \"512\""),
	A("size fixed", "set segments.0.size \"8192\""),
	A("offset + size past 2^64 (one segment: not checked)",
	  "set segments.0.size \"18446744073709547520\""),
	R("flags a string", "segment 0: flags is not an array",
	  "set segments.0.flags \"backup-final\""),
	R("flags an object", "segment 0: flags is not an array",
	  "set segments.0.flags {}"),
	R("flags a number", "segment 0: flags is not an array",
	  "set segments.0.flags 1"),
	R("flags null", "segment 0: flags is not an array",
	  "set segments.0.flags null"),
	R("a flag not a string", "segment 0: flags[1] is not a string",
	  "set segments.0.flags [\"a\",2]"),
	R("a flag null", "segment 0: flags[0] is not a string",
	  "set segments.0.flags [null]"),
	A("flags empty", "set segments.0.flags []"),
	A("two flags", "set segments.0.flags [\"in-reencryption\",\"vendor\"]"),
	R("iv_tweak missing", "segment 0: iv_tweak is missing",
	  "del segments.0.iv_tweak"),
	R("iv_tweak a number", "segment 0: iv_tweak is not a string",
	  "set segments.0.iv_tweak 0"),
	R("iv_tweak empty", "segment 0: iv_tweak is empty",
	  "set segments.0.iv_tweak \"\""),
	R("iv_tweak hexadecimal", "segment 0: iv_tweak is not a number",
	  "set segments.0.iv_tweak \"0x10\""),
	R("iv_tweak with a sign", "segment 0: iv_tweak is not a number",
	  "set segments.0.iv_tweak \"+1\""),
	R("iv_tweak past uint64", "segment 0: iv_tweak is not a number",
	  "set segments.0.iv_tweak \"18446744073709551616\""),
	A("iv_tweak the largest", "set segments.0.iv_tweak \"18446744073709551615\""),
	R("encryption missing", "segment 0: encryption is missing",
	  "del segments.0.encryption"),
	R("encryption empty", "segment 0: encryption is empty",
	  "set segments.0.encryption \"\""),
	R("encryption a number", "segment 0: encryption is not a string",
	  "set segments.0.encryption 1"),
	A("encryption an unknown cipher", "set segments.0.encryption \"serpent-foo-bar\""),
	R("sector_size missing", "segment 0: sector_size is missing",
	  "del segments.0.sector_size"),
	R("sector_size a string", "segment 0: sector_size is not an integer",
	  "set segments.0.sector_size \"4096\""),
	R("sector_size a double", "segment 0: sector_size is not an integer",
	  "set segments.0.sector_size 4096.0"),
	R("sector_size negative", "segment 0: sector_size is out of range",
	  "set segments.0.sector_size -4096"),
	R("sector_size 0", "segment 0: sector_size 0", "set segments.0.sector_size 0"),
	R("sector_size 4095", "segment 0: sector_size 4095",
	  "set segments.0.sector_size 4095"),
	R("sector_size past uint32", "segment 0: sector_size is out of range",
	  "set segments.0.sector_size 4294967808"),
	A("sector_size 1536", "set segments.0.sector_size 1536"),
	A("sector_size 8192", "set segments.0.sector_size 8192"),
	A("sector_size 4294966784", "set segments.0.sector_size 4294966784"),
	R("integrity not an object", "segment 0: integrity is not an object",
	  "set segments.0.integrity \"hmac\""),
	R("integrity without type", "segment 0: integrity.type is missing",
	  "set segments.0.integrity {\"journal_encryption\":\"none\",\"journal_integrity\":\"none\"}"),
	R("integrity without journal_encryption",
	  "segment 0: integrity.journal_encryption is missing",
	  "set segments.0.integrity {\"type\":\"hmac(sha256)\",\"journal_integrity\":\"none\"}"),
	R("integrity without journal_integrity",
	  "segment 0: integrity.journal_integrity is missing",
	  "set segments.0.integrity {\"type\":\"hmac(sha256)\",\"journal_encryption\":\"none\"}"),
	R("integrity type empty", "segment 0: integrity.type is empty",
	  "set segments.0.integrity {\"type\":\"\",\"journal_encryption\":\"none\",\"journal_integrity\":\"none\"}"),
	A("integrity",
	  "set segments.0.integrity {\"type\":\"hmac(sha256)\",\"journal_encryption\":\"none\",\"journal_integrity\":\"none\"}"),
	A("an unknown segment type with the mandatory members only",
	  SEG1("{\"type\":\"vendor\",\"offset\":\"1052672\",\"size\":\"dynamic\"}")),
	A("an unknown segment type with members of other types",
	  SEG1("{\"type\":\"vendor\",\"offset\":\"1052672\",\"size\":\"4096\","
	       "\"encryption\":5,\"sector_size\":\"77\",\"integrity\":{\"type\":[1]},"
	       "\"flags\":[\"f\",\"g\"]}")),
	A("two crypt segments",
	  SEG1("{\"type\":\"crypt\",\"offset\":\"1052672\",\"size\":\"dynamic\","
	       "\"iv_tweak\":\"8\",\"encryption\":\"aes-cbc-essiv:sha256\",\"sector_size\":512}"),
	  "add digests.0.segments \"1\""),
	R("a second crypt segment no digest lists", "segment 1: no digest",
	  SEG1("{\"type\":\"crypt\",\"offset\":\"1052672\",\"size\":\"dynamic\","
	       "\"iv_tweak\":\"8\",\"encryption\":\"aes-cbc-essiv:sha256\",\"sector_size\":512}")),
	R("a dynamic segment before another", "only the last regular segment",
	  "set segments.1 " LINEAR("2097152", "4096")),
	R("segments overlapping in part", "segment 1: overlaps segment 0",
	  "set segments.0.size \"8192\"", "set segments.1 " LINEAR("1052672", "8192")),
	R("two segments at one offset", "overlaps segment",
	  SEG1(LINEAR("1048576", "4096"))),
	R("a segment inside another", "segment 1: overlaps segment 0",
	  "set segments.0.size \"16384\"", "set segments.1 " LINEAR("1052672", "4096")),
	A("segments touching", SEG1(LINEAR("1052672", "4096"))),
	R("a segment inside the dynamic last one", "segment 0: overlaps segment 1",
	  "set segments.0.size \"4096\"", "set segments.0.offset \"2097152\"",
	  "set segments.1 {\"type\":\"linear\",\"offset\":\"1048576\",\"size\":\"dynamic\"}"),
	R("two segments, offset + size past 2^64", "offset + size overflows",
	  "set segments.0.size \"18446744073709547520\"",
	  "set segments.1 " LINEAR("0", "4096")),
	R("a gap in the segment numbers", "segments: segment 1 is missing",
	  "set segments.0.size \"4096\"", "set segments.2 " LINEAR("1052672", "4096")),
	R("segment 1 without segment 0", "segments: segment 0 is missing",
	  "mv segments.0 1", "set digests.0.segments [\"1\"]"),
	A("a backup segment after the regular one",
	  SEG1(BACKUP("1052672", "4096", "backup-vendor"))),
	R("a backup segment only", "segment 0: a backup segment",
	  "set segments.0.flags [\"backup-previous\"]"),
	R("a regular segment after a backup segment",
	  "segment 2: a regular segment after backup segment 1",
	  SEG1(BACKUP("1052672", "4096", "backup-x")),
	  "set segments.2 " LINEAR("1056768", "4096")),
	A("a regular segment after a backup segment, listed before it",
	  "set segments.0.size \"4096\"", "set segments.2 " LINEAR("1056768", "4096"),
	  "set segments.1 " BACKUP("1052672", "4096", "backup-x")),
	R("a gap before the backup segment", "a gap before backup segment 2",
	  "set segments.0.size \"4096\"",
	  "set segments.2 " BACKUP("1052672", "4096", "backup-x")),
	A("a backup segment overlapping the regular one",
	  SEG1(BACKUP("1048576", "4096", "backup-x"))),
	R("a second segment inside the keyslots area", "does not fit below",
	  SEG1(LINEAR("65536", "4096"))),
	A("33 segments (luksDump shows 0..31)", "fn segments 33"),
	A("a segment with an unknown member", "set segments.0.vendor {\"x\":1}"),
};

Test(luks2_rules, segments, .timeout = 300)
{
	run_group("segments", segments, N(segments), false, false);
}

/* ---- keyslots and their areas ---- */

#define KS2(json) "set keyslots.2 " json
#define AREA2 "\"area\":{\"type\":\"raw\",\"offset\":\"548864\",\"size\":\"4096\"}"

static const struct rcase keyslots[] = {
	R("keyslots missing", "keyslots is missing", "del keyslots",
	  "set digests.0.keyslots []", "set tokens.0.keyslots []"),
	R("keyslots not an object", "keyslots is not an object",
	  "set keyslots []", "set digests.0.keyslots []", "set tokens.0.keyslots []"),
	R("a keyslot name not a number", "keyslot k: the name is not a number",
	  "copy keyslots.k keyslots.1", "set keyslots.k.area.offset \"548864\""),
	R("a keyslot not an object", "keyslot 5: not an object",
	  "set keyslots.5 true"),
	R("keyslot type missing", "keyslot 1: type is missing",
	  "del keyslots.1.type"),
	R("keyslot type empty", "keyslot 1: type is empty",
	  "set keyslots.1.type \"\""),
	R("keyslot type a number", "keyslot 1: type is not a string",
	  "set keyslots.1.type 2"),
	R("key_size missing", "keyslot 1: key_size is missing",
	  "del keyslots.1.key_size"),
	R("key_size a string", "keyslot 1: key_size is not an integer",
	  "set keyslots.1.key_size \"64\""),
	R("key_size a double", "keyslot 1: key_size is not an integer",
	  "set keyslots.1.key_size 64.0"),
	R("key_size negative", "keyslot 1: key_size is out of range",
	  "set keyslots.1.key_size -1"),
	R("key_size past uint32", "keyslot 1: key_size is out of range",
	  "set keyslots.1.key_size 4294967296"),
	A("key_size 0", "set keyslots.1.key_size 0"),
	A("key_size the largest uint32", "set keyslots.1.key_size 4294967295"),
	A("a keyslot of an unknown type", "copy keyslots.2 keyslots.0",
	  "set keyslots.2.type \"vendor\"", "set keyslots.2.area.offset \"548864\""),
	R("a keyslot of an unknown type without area", "keyslot 2: area is missing",
	  KS2("{\"type\":\"vendor\",\"key_size\":32}")),
	A("a keyslot of an unknown type with a bare area",
	  KS2("{\"type\":\"vendor\",\"key_size\":32," AREA2 "}")),
	R("kdf missing", "keyslot 0: kdf is missing", "del keyslots.0.kdf"),
	R("kdf not an object", "keyslot 0: kdf is not an object",
	  "set keyslots.0.kdf []"),
	R("af missing", "keyslot 0: af is missing", "del keyslots.0.af"),
	R("af not an object", "keyslot 0: af is not an object",
	  "set keyslots.0.af \"luks1\""),
	R("kdf type missing", "keyslot 0: kdf.type is missing",
	  "del keyslots.0.kdf.type"),
	R("kdf type empty", "keyslot 0: kdf.type is empty",
	  "set keyslots.0.kdf.type \"\""),
	R("kdf type a number", "keyslot 0: kdf.type is not a string",
	  "set keyslots.0.kdf.type 2"),
	R("pbkdf2 without hash", "keyslot 0: kdf has 3 members",
	  "del keyslots.0.kdf.hash"),
	R("pbkdf2 hash empty", "keyslot 0: kdf.hash is empty",
	  "set keyslots.0.kdf.hash \"\""),
	R("pbkdf2 iterations a string", "keyslot 0: kdf.iterations is not an integer",
	  "set keyslots.0.kdf.iterations \"1000\""),
	R("pbkdf2 salt a number", "keyslot 0: kdf.salt is not a string",
	  "set keyslots.0.kdf.salt 5"),
	A("pbkdf2 with argon2 leftovers (repaired)", "set keyslots.0.kdf.time 4",
	  "set keyslots.0.kdf.memory 1024", "set keyslots.0.kdf.cpus 1"),
	R("pbkdf2 with a leftover in place of hash", "keyslot 0: kdf has 3 members",
	  "del keyslots.0.kdf.hash", "set keyslots.0.kdf.time 4"),
	R("argon2id without memory", "keyslot 1: kdf has 4 members",
	  "del keyslots.1.kdf.memory"),
	R("argon2id cpus a string", "keyslot 1: kdf.cpus is not an integer",
	  "set keyslots.1.kdf.cpus \"1\""),
	A("argon2 with a pbkdf2 leftover (repaired)",
	  "set keyslots.1.kdf.hash \"sha256\"", "set keyslots.1.kdf.iterations 5"),
	A("argon2i", "set keyslots.1.kdf.type \"argon2i\""),
	A("a KDF libcryptsetup does not know",
	  "set keyslots.0.kdf {\"type\":\"scrypt\",\"n\":5}"),
	R("af type luks2", "keyslot 0: af.type is not \"luks1\"",
	  "set keyslots.0.af.type \"luks2\""),
	R("af type missing", "keyslot 0: af.type is missing",
	  "del keyslots.0.af.type"),
	R("af hash missing", "keyslot 0: af.hash is missing",
	  "del keyslots.0.af.hash"),
	R("af stripes a string", "keyslot 0: af.stripes is not an integer",
	  "set keyslots.0.af.stripes \"4000\""),
	A("af stripes 1", "set keyslots.0.af.stripes 1"),
	A("af stripes negative", "set keyslots.0.af.stripes -4000"),
	R("area type not raw", "keyslot 0: area.type is not \"raw\"",
	  "set keyslots.0.area.type \"journal\""),
	R("area encryption missing", "keyslot 0: area.encryption is missing",
	  "del keyslots.0.area.encryption"),
	R("area encryption empty", "keyslot 0: area.encryption is empty",
	  "set keyslots.0.area.encryption \"\""),
	R("area key_size a string", "keyslot 0: area.key_size is not an integer",
	  "set keyslots.0.area.key_size \"64\""),
	A("area key_size negative", "set keyslots.0.area.key_size -1"),
	A("area key_size past uint32", "set keyslots.0.area.key_size 9999999999"),
	A("priority 0", "set keyslots.0.priority 0"),
	A("priority 2", "set keyslots.0.priority 2"),
	A("priority 3", "set keyslots.0.priority 3"),
	A("priority -1", "set keyslots.0.priority -1"),
	A("priority \"2\"", "set keyslots.0.priority \"2\""),
	A("priority null", "set keyslots.0.priority null"),
	A("priority 2.9", "set keyslots.0.priority 2.9"),
	A("priority true", "set keyslots.0.priority true"),
	A("priority past int32", "set keyslots.0.priority 4294967298"),
	A("keyslot 40 (luksDump shows 0..31)", "copy keyslots.40 keyslots.0",
	  "set keyslots.40.area.offset \"548864\"", "add digests.0.keyslots \"40\""),
	R("keyslot 007 (digests count it as 7)", "keyslot 007: no digest",
	  "copy keyslots.007 keyslots.0", "set keyslots.007.area.offset \"548864\"",
	  "add digests.0.keyslots \"007\""),
	A("a keyslot named \"\" of an unknown type",
	  "sub \"keyslots\":{ => \"keyslots\":{\"\":{\"type\":\"vendor\",\"key_size\":1," AREA2 "},"),
	A("a luks2 keyslot with an unknown member", "set keyslots.0.vendor 1"),
};

static const struct rcase areas[] = {
	R("area missing", "keyslot 1: area is missing", "del keyslots.1.area"),
	R("area not an object", "keyslot 1: area is not an object",
	  "set keyslots.1.area 5"),
	R("area type missing", "keyslot 1: area.type is missing",
	  "del keyslots.1.area.type"),
	R("area type empty", "keyslot 1: area.type is empty",
	  "set keyslots.1.area.type \"\""),
	R("area offset missing", "keyslot 1: area.offset is missing",
	  "del keyslots.1.area.offset"),
	R("area offset a number", "keyslot 1: area.offset is not a string",
	  "set keyslots.1.area.offset 290816"),
	R("area offset empty", "keyslot 1: area.offset is empty",
	  "set keyslots.1.area.offset \"\""),
	R("area offset hexadecimal", "keyslot 1: area.offset is not a number",
	  "set keyslots.1.area.offset \"0x47000\""),
	R("area offset with a sign", "keyslot 1: area.offset is not a number",
	  "set keyslots.1.area.offset \"+290816\""),
	R("area offset past uint64", "keyslot 1: area.offset is not a number",
	  "set keyslots.1.area.offset \"18446744073709551616\""),
	R("area size missing", "keyslot 1: area.size is missing",
	  "del keyslots.1.area.size"),
	R("area size a number", "keyslot 1: area.size is not a string",
	  "set keyslots.1.area.size 258048"),
	R("area size 0", "keyslot 1: area.size is 0", "set keyslots.1.area.size \"0\""),
	R("area size past uint64", "keyslot 1: area.size is not a number",
	  "set keyslots.1.area.size \"99999999999999999999\""),
	R("area inside the metadata", "keyslot 1: area.offset 16384 is inside the metadata",
	  "set keyslots.1.area.offset \"16384\""),
	R("area at 0", "keyslot 1: area.offset 0 is inside the metadata",
	  "set keyslots.1.area.offset \"0\""),
	R("area offset + size past 2^64", "keyslot 1: area ends past the keyslots area",
	  "set keyslots.1.area.offset \"18446744073709547520\""),
	R("area past the keyslots area", "keyslot 1: area ends past the keyslots area",
	  "set keyslots.1.area.offset \"794624\""),
	A("area ending where the keyslots area does",
	  "set keyslots.1.area.offset \"790528\""),
	R("two keyslots with one area", "area overlaps keyslot",
	  "set keyslots.1.area.offset \"32768\""),
	R("areas overlapping in part", "keyslot 1: area overlaps keyslot 0",
	  "set keyslots.1.area.offset \"286720\""),
	R("an area inside another", "keyslot 0: area overlaps keyslot 1",
	  "set keyslots.0.area.offset \"294912\"", "set keyslots.0.area.size \"4096\""),
	R("an area around another", "keyslot 0: area overlaps keyslot 1",
	  "set keyslots.0.area.offset \"294912\"", "set keyslots.0.area.size \"4096\"",
	  "set keyslots.1.area.offset \"32768\"", "set keyslots.1.area.size \"516096\""),
	A("areas not aligned to 512", "set keyslots.1.area.offset \"548865\"",
	  "set keyslots.1.area.size \"100\""),
	R("an unknown keyslot's area overlapping a luks2 one",
	  "keyslot 2: area overlaps keyslot 1",
	  KS2("{\"type\":\"vendor\",\"key_size\":32,\"area\":{\"type\":\"raw\","
	      "\"offset\":\"544768\",\"size\":\"8192\"}}")),
	A("keyslots out of order", "mv keyslots.0 0"),
};

Test(luks2_rules, keyslots, .timeout = 300)
{
	run_group("keyslots", keyslots, N(keyslots), true, false);
}

Test(luks2_rules, keyslot_areas, .timeout = 300)
{
	run_group("areas", areas, N(areas), true, false);
}

/* ---- a reencryption in progress (generated) ---- */

/* Our base turned into what an interrupted `cryptsetup reencrypt
 * --encrypt --reduce-device-size` leaves: an in-reencryption crypt
 * segment, the rest linear, backup-previous/final/moved segments, a
 * reencrypt keyslot with its own digest, the online-reencrypt-v2
 * requirement. */
static const char *const reencrypting[] = {
	"set segments.0.size \"8192\"",
	"set segments.0.flags [\"in-reencryption\"]",
	"set segments.1 {\"type\":\"linear\",\"offset\":\"1056768\",\"size\":\"dynamic\"}",
	"set segments.2 {\"type\":\"linear\",\"offset\":\"0\",\"size\":\"dynamic\","
	"\"flags\":[\"backup-previous\"]}",
	"copy segments.3 segments.0",
	"set segments.3.size \"dynamic\"",
	"set segments.3.flags [\"backup-final\"]",
	"set segments.4 {\"type\":\"linear\",\"offset\":\"1048576\",\"size\":\"8192\","
	"\"flags\":[\"backup-moved-segment\"]}",
	"add digests.0.segments \"3\"",
	"set keyslots.2 {\"type\":\"reencrypt\",\"key_size\":1,\"mode\":\"encrypt\","
	"\"direction\":\"backward\",\"priority\":0,\"area\":{\"type\":\"datashift\","
	"\"offset\":\"548864\",\"size\":\"4096\",\"shift_size\":\"1048576\"}}",
	"copy digests.1 digests.0",
	"set digests.1.keyslots [\"2\"]",
	"set digests.1.segments []",
	"set config.requirements {\"mandatory\":[\"online-reencrypt-v2\"]}",
	NULL
};

#define AREA_RE(json) "set keyslots.2.area {\"offset\":\"548864\",\"size\":\"4096\"," json "}"

static const struct rcase reencrypt[] = {
	A("a reencryption in progress", NULL),
	A("online-reencrypt-v3",
	  "set config.requirements {\"mandatory\":[\"online-reencrypt-v3\"]}"),
	A("online-reencrypt (version 1)",
	  "set config.requirements {\"mandatory\":[\"online-reencrypt\"]}"),
	A("online-reencrypt-v9 (unknown: no segment checks)",
	  "set config.requirements {\"mandatory\":[\"online-reencrypt-v9\"]}",
	  "set segments.3.flags [\"backup-x\"]"),
	R("the requirement missing", "without an online-reencrypt requirement",
	  "del config.requirements"),
	R("the reencrypt keyslot missing", "without a reencrypt keyslot",
	  "del keyslots.2", "set digests.1.keyslots []"),
	R("two reencrypt keyslots", "a second reencrypt keyslot",
	  "copy keyslots.3 keyslots.2", "set keyslots.3.area.offset \"552960\""),
	R("reencrypt key_size 2", "key_size of a reencrypt keyslot is not 1",
	  "set keyslots.2.key_size 2"),
	R("reencrypt mode missing", "keyslot 2: mode is missing",
	  "del keyslots.2.mode"),
	R("reencrypt mode unknown", "mode is not",
	  "set keyslots.2.mode \"rekey\""),
	R("reencrypt direction missing", "keyslot 2: direction is missing",
	  "del keyslots.2.direction"),
	R("reencrypt direction unknown", "direction is not",
	  "set keyslots.2.direction \"sideways\""),
	A("mode decrypt, direction forward", "set keyslots.2.mode \"decrypt\"",
	  "set keyslots.2.direction \"forward\""),
	A("mode reencrypt", "set keyslots.2.mode \"reencrypt\""),
	R("checksum resilience without hash", "keyslot 2: area.hash is missing",
	  AREA_RE("\"type\":\"checksum\",\"sector_size\":4096")),
	R("checksum resilience, sector_size 1000", "area.sector_size is not a power",
	  AREA_RE("\"type\":\"checksum\",\"hash\":\"sha256\",\"sector_size\":1000")),
	R("checksum resilience, sector_size 256", "area.sector_size is not a power",
	  AREA_RE("\"type\":\"checksum\",\"hash\":\"sha256\",\"sector_size\":256")),
	R("checksum resilience, sector_size a string",
	  "area.sector_size is not an integer",
	  AREA_RE("\"type\":\"checksum\",\"hash\":\"sha256\",\"sector_size\":\"4096\"")),
	A("checksum resilience",
	  AREA_RE("\"type\":\"checksum\",\"hash\":\"sha256\",\"sector_size\":4096")),
	A("datashift-checksum without shift_size (not checked)",
	  AREA_RE("\"type\":\"datashift-checksum\",\"hash\":\"sha256\",\"sector_size\":512")),
	R("datashift-checksum without hash", "keyslot 2: area.hash is missing",
	  AREA_RE("\"type\":\"datashift-checksum\",\"sector_size\":512,\"shift_size\":\"512\"")),
	R("datashift without shift_size", "keyslot 2: area.shift_size is missing",
	  AREA_RE("\"type\":\"datashift\"")),
	R("datashift shift_size 0", "area.shift_size is not a multiple",
	  AREA_RE("\"type\":\"datashift\",\"shift_size\":\"0\"")),
	R("datashift shift_size 1000", "area.shift_size is not a multiple",
	  AREA_RE("\"type\":\"datashift\",\"shift_size\":\"1000\"")),
	R("datashift shift_size a number", "area.shift_size is not a string",
	  AREA_RE("\"type\":\"datashift\",\"shift_size\":512")),
	A("datashift shift_size with a sign",
	  AREA_RE("\"type\":\"datashift\",\"shift_size\":\"+512\"")),
	R("datashift-journal without shift_size", "area.shift_size is missing",
	  AREA_RE("\"type\":\"datashift-journal\"")),
	A("datashift-journal", AREA_RE("\"type\":\"datashift-journal\",\"shift_size\":\"4096\"")),
	A("journal resilience", AREA_RE("\"type\":\"journal\"")),
	A("no resilience", AREA_RE("\"type\":\"none\"")),
	A("an unknown resilience", AREA_RE("\"type\":\"future\"")),
	R("no backup-final segment", "without backup-final and backup-previous",
	  "set segments.3.flags [\"backup-x\"]"),
	R("no backup-previous segment", "without backup-final and backup-previous",
	  "set segments.2.flags [\"backup-y\"]"),
	R("the segment in reencryption unlike backup-final",
	  "segment 0: matches no backup segment",
	  "set segments.0.sector_size 512", "set segments.0.size \"8192\""),
	R("a regular segment like neither backup",
	  "segment 1: matches no backup segment", "set segments.1.type \"vendor\""),
	A("the reencrypt keyslot in two digests", "add digests.0.keyslots \"2\""),
	A("the reencrypt keyslot in no digest", "set digests.1.keyslots []"),
};

Test(luks2_rules, reencryption_generated, .timeout = 300)
{
	char *dir = th_mkdtemp();
	struct lg_base b;
	struct run x;

	lg_base_ours(&b, dir);
	run_init(&x, "reencrypt", dir, &b);
	x.prefix = reencrypting;
	x.json = true;
	x.variants = true;
	run_cases(&x, reencrypt, N(reencrypt));
	run_done(&x);
	lg_base_free(&b);
	th_rmtree(dir);
	free(dir);
}

/* ---- headers with every feature: text and --json ---- */

static const struct rcase features[] = {
	A("the base", NULL),
	A("flags, requirements, tokens, two segments, an unknown keyslot",
	  "set config.flags [\"allow-discards\",\"same-cpu-crypt\"]",
	  "set config.requirements {\"mandatory\":[\"vendor-feature\"]}",
	  "set tokens.3 {\"type\":\"systemd-vendor\",\"keyslots\":[\"0\",\"1\"]}",
	  SEG1("{\"type\":\"crypt\",\"offset\":\"1052672\",\"size\":\"dynamic\","
	       "\"iv_tweak\":\"8\",\"encryption\":\"aes-cbc-essiv:sha256\","
	       "\"sector_size\":512,\"flags\":[\"x\",\"y\",\"z\"]}"),
	  "add digests.0.segments \"1\"",
	  KS2("{\"type\":\"vendor\",\"key_size\":7,\"priority\":2," AREA2 "}")),
	A("an integrity segment",
	  "set segments.0.encryption \"aes-gcm-random\"",
	  "set segments.0.integrity {\"type\":\"aead\",\"journal_encryption\":\"none\",\"journal_integrity\":\"none\"}"),
	A("unicode and slashes in strings",
	  "set tokens.0.key_description \"k\\u00e9y/\\u0001\"",
	  "set vendor {\"a/b\":[1.5e3,-0,true,null]}"),
};

Test(luks2_rules, dump_features, .timeout = 300)
{
	run_group("features", features, N(features), true, true);
}

/* ---- the other readers: decrypt and check ---- */

static const struct {
	const char *name, *words;
	const char *ops[8];
} unusable[] = {
	{ "segment flags not an array (aborted in json-c before)",
	  "segment 0: flags is not an array",
	  { "set segments.0.flags \"backup-final\"" } },
	{ "a keyslot no digest lists", "keyslot 1: no digest",
	  { "set digests.0.keyslots [\"0\"]" } },
	{ "a valid reencryption in progress",
	  "mandatory requirement 'online-reencrypt-v2'", { NULL } },
	{ "two crypt segments", "2 data segments",
	  { SEG1("{\"type\":\"crypt\",\"offset\":\"1052672\",\"size\":\"dynamic\","
		 "\"iv_tweak\":\"8\",\"encryption\":\"aes-xts-plain64\",\"sector_size\":512}"),
	    "add digests.0.segments \"1\"" } },
	{ "a linear data segment", "of type 'linear'",
	  { "set segments.0 {\"type\":\"linear\",\"offset\":\"1048576\",\"size\":\"dynamic\"}",
	    "set digests.0.segments []" } },
	{ "sector size 1536", "sector size 1536",
	  { "set segments.0.sector_size 1536" } },
	{ "offset + size past 2^64", "past the largest offset",
	  { "set segments.0.size \"18446744073709547520\"" } },
};

/* decrypt and check refuse what they cannot use with exit 4 and the
 * reason, before the key file is read and without an output file;
 * decrypt reads the valid base. */
Test(luks2_rules, decrypt_and_check_refuse, .timeout = 120)
{
	char *dir = th_mkdtemp(), *img = th_path(dir, "case.img");
	char *out = th_path(dir, "out.bin"), *err = NULL;
	struct lg_base b;

	lg_base_ours(&b, dir);
	for (size_t i = 0; i < N(unusable); i++) {
		const char *ops[32];
		size_t n = 0;

		if (strstr(unusable[i].name, "reencryption"))
			for (size_t k = 0; reencrypting[k]; k++)
				ops[n++] = reencrypting[k];
		for (size_t k = 0; unusable[i].ops[k]; k++)
			ops[n++] = unusable[i].ops[k];
		ops[n] = NULL;
		lg_make(&b, ops, img);
		for (int cmd = 0; cmd < 2; cmd++) {
			int rc = th_sh(NULL, &err,
				       "'%s' %s --key-file '%s/no-such-key' '%s' %s",
				       th_tool("crypt-tool"), cmd ? "check" : "decrypt",
				       dir, img, cmd ? "" : out);

			cr_expect_eq(rc, 4, "%s: %s: exit %d: %s", unusable[i].name,
				     cmd ? "check" : "decrypt", rc, err);
			cr_expect(strstr(err, unusable[i].words), "%s: '%s' lacks '%s'",
				  unusable[i].name, err, unusable[i].words);
			cr_expect(access(out, F_OK), "%s: an output was left",
				  unusable[i].name);
			free(err);
			err = NULL;
		}
	}
	/* valid and usable: the base, and af.stripes 1, which
	 * libcryptsetup ignores (it merges 4000 stripes) */
	for (int i = 0; i < 2; i++) {
		const char *ops[] = { i ? "set keyslots.0.af.stripes 1" : NULL,
				      i ? "set keyslots.1.af.stripes 1" : NULL,
				      NULL };

		lg_make(&b, ops, img);
		cr_expect_eq(th_sh(NULL, &err,
				   "cd '%s' && printf 'test passphrase' > pw && "
				   "rm -f out.bin && cp case.img copy.img && "
				   "cryptsetup open --test-passphrase --key-file pw copy.img && "
				   "'%s' decrypt --key-file pw case.img out.bin && "
				   "test $(stat -c %%s out.bin) = 8192",
				   dir, th_tool("crypt-tool")), 0, "%d: %s", i, err);
		free(err);
		err = NULL;
	}
	lg_base_free(&b);
	free(img);
	free(out);
	th_rmtree(dir);
	free(dir);
}

/* ---- interrupted cryptsetup reencryptions ---- */

/* Does the primary JSON say a reencryption is under way? */
static bool reencrypting_now(const char *path)
{
	char buf[12288 + 1] = { 0 };
	int fd = open(path, O_RDONLY);
	bool yes = false;

	if (fd >= 0 && pread(fd, buf, sizeof(buf) - 1, 4096) > 0)
		yes = strstr(buf, "\"type\":\"reencrypt\"") &&
		      strstr(buf, "\"in-reencryption\"");
	if (fd >= 0)
		close(fd);
	return yes;
}

/*
 * Runs cmd (a cryptsetup reencrypt on path) and stops it soon after its
 * first chunk is recorded: the header then says "in reencryption".  The
 * run is frozen (SIGSTOP) before the header is looked at again, so a run
 * cannot finish between that look and the SIGKILL.  A run that ends
 * first (a loaded machine may not schedule the poller in time) is retried
 * on a larger file.  Returns whether it worked; what each attempt saw goes
 * to why (for the failure message).
 * (--disable-locks in cmd: a killed run would leave its lock file in
 * /run/cryptsetup.)
 */
static bool interrupt(const char *dir, const char *path, const char *setup,
		      const char *cmd, char *why, size_t why_size)
{
	size_t used = 0;

	why[0] = 0;
	for (int attempt = 0; attempt < 6; attempt++) {
		char *err = NULL, *log = NULL;
		pid_t pid;
		int status = 0, seen = 0, still = 0;

		cr_assert_eq(th_sh(NULL, &err, "cd '%s' && %s %d", dir, setup,
				   128 << attempt), 0, "%s", err);
		free(err);
		pid = fork();
		cr_assert_geq(pid, 0);
		if (!pid) {
			int fd;

			setpgid(0, 0);
			if (chdir(dir))
				_exit(126);
			fd = open("err.log", O_WRONLY | O_CREAT | O_TRUNC, 0600);
			if (fd < 0)
				_exit(126);
			dup2(fd, 1);
			dup2(fd, 2);
			execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
			_exit(127);
		}
		/* up to about 30 s for the first chunk, whatever the load */
		for (int i = 0; i < 15000 && !seen; i++) {
			if (waitpid(pid, &status, WNOHANG) == pid) {
				pid = 0;
				break;
			}
			seen = reencrypting_now(path);
			if (!seen)
				nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
		}
		if (pid) {
			nanosleep(&(struct timespec){ 0, 30000000 }, NULL);
			kill(-pid, SIGSTOP);
			still = seen && reencrypting_now(path);
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
		}
		if (still)
			return true;
		th_sh(&log, NULL, "tail -c 300 '%s/err.log' 2>&1", dir);
		used += (size_t)snprintf(why + used, why_size - used,
					 "\n  %d MiB: %s (exit status %d): %s",
					 128 << attempt,
					 pid ? (seen ? "finished within 30 ms of being seen"
						     : "never seen in reencryption")
					     : "ended before being seen",
					 status, log ? log : "");
		free(log);
		if (used >= why_size)
			break;
	}
	return false;
}

Test(luks2_rules, reencryption_interrupted, .timeout = 300)
{
	static const struct {
		const char *name, *setup, *cmd;
	} runs[] = {
		{ "encrypt, datashift (--reduce-device-size)",
		  "rm -f r.img && printf pw > pw && truncate -s \"$1\"M r.img && :",
		  "cryptsetup reencrypt -q --disable-locks --encrypt --type luks2 --reduce-device-size 8M "
		  "--force-offline-reencrypt --hotzone-size 1M --pbkdf pbkdf2 "
		  "--pbkdf-force-iterations 1000 --key-file pw r.img" },
		{ "reencrypt, checksum resilience",
		  "rm -f r.img && printf pw > pw && truncate -s \"$1\"M r.img && "
		  "cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 "
		  "--pbkdf-force-iterations 1000 --key-file pw r.img && :",
		  "cryptsetup reencrypt -q --disable-locks --force-offline-reencrypt --resilience checksum "
		  "--hotzone-size 1M --pbkdf pbkdf2 --pbkdf-force-iterations 1000 "
		  "--key-file pw r.img" },
		{ "reencrypt, journal resilience",
		  "rm -f r.img && printf pw > pw && truncate -s \"$1\"M r.img && "
		  "cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 "
		  "--pbkdf-force-iterations 1000 --key-file pw r.img && :",
		  "cryptsetup reencrypt -q --disable-locks --force-offline-reencrypt --resilience journal "
		  "--hotzone-size 1M --pbkdf pbkdf2 --pbkdf-force-iterations 1000 "
		  "--key-file pw r.img" },
	};
	char *dir = th_mkdtemp(), *path = th_path(dir, "r.img");

	for (size_t i = 0; i < N(runs); i++) {
		struct lg_base b;
		struct run x;
		char setup[512], why[4096];
		static const struct rcase as_is[] = { A("as interrupted", NULL) };

		/* $1 of the set-up line: the file size in MiB */
		snprintf(setup, sizeof(setup), "set -- ; f() { %s ; } ; f",
			 runs[i].setup);
		cr_assert(interrupt(dir, path, setup, runs[i].cmd, why,
				    sizeof(why)),
			  "%s: could not catch cryptsetup in a reencryption:%s",
			  runs[i].name, why);
		lg_base_file(&b, runs[i].name, path);
		run_init(&x, "interrupted", dir, &b);
		x.json = true;
		run_cases(&x, as_is, 1);
		run_done(&x);
		lg_base_free(&b);
	}
	free(path);
	th_rmtree(dir);
	free(dir);
}
#endif
