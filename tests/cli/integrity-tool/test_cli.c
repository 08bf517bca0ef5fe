// SPDX-License-Identifier: MIT
/*
 * integrity-tool as a new user meets it (issue 11): why a superblock is
 * refused, -V, key files of the wrong size, a check with the wrong
 * algorithm or key, --json with odd paths and on failure, -v / --debug /
 * -q, progress wording, the question before overwriting data, and the
 * cryptsetup commands this tool does not have.
 */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/helpers.h"
#include "tests/support/integrity_oracle.h"

#define SALT "000102030405060708090a0b0c0d0e0f"

static char *dir;

static void setup(void)
{
	dir = th_mkdtemp();
}

static void teardown(void)
{
	th_rmtree(dir);
	free(dir);
}

static char *p(const char *name)
{
	return th_path(dir, name);
}

struct res {
	int rc;
	char *out, *err;
};

static struct res run(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static struct res run(const char *fmt, ...)
{
	struct res r = { 0 };
	char *args;
	va_list ap;

	va_start(ap, fmt);
	cr_assert(vasprintf(&args, fmt, ap) >= 0);
	va_end(ap);
	r.rc = it_tool(&r.out, &r.err, "%s", args);
	free(args);
	return r;
}

static void done(struct res *r)
{
	free(r->out);
	free(r->err);
}

static void format_ok(const char *opts, const char *img)
{
	struct res r = run("format -q --salt " SALT " %s '%s'", opts, img);

	cr_assert_eq(r.rc, 0, "format %s: %s", opts, r.err);
	done(&r);
}

static void poke(const char *path, long off, uint8_t v)
{
	FILE *f = fopen(path, "r+b");

	cr_assert(f);
	cr_assert_eq(fseek(f, off, SEEK_SET), 0);
	cr_assert_eq(fputc(v, f), v);
	cr_assert_eq(fclose(f), 0);
}

/* ---- superblocks: why they are refused ---- */

Test(integrity_cli, superblock_refusal_says_why, .init = setup,
     .fini = teardown)
{
	static const struct {
		long off;
		uint8_t v;
		const char *why;
	} cases[] = {
		{ 8, 255, "unsupported superblock version 255" },
		{ 8, 6, "unsupported superblock version 6" },
		{ 8, 0, "unsupported superblock version 0" },
		{ 10, 0, "invalid tag size in the superblock (integrity_tag_size 0)" },
		{ 28, 9, "invalid sector size in the superblock (log2_sectors_per_block 9)" },
	};
	char *img = p("img");

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct res r;

		format_ok("--device-size 4M", img);
		poke(img, cases[i].off, cases[i].v);
		r = run("check '%s'", img);
		cr_expect_eq(r.rc, 4, "%s: %s", cases[i].why, r.err);
		cr_expect(strstr(r.err, cases[i].why), "check: want '%s': %s",
			  cases[i].why, r.err);
		done(&r);
		if (cases[i].off != 8 || cases[i].v == 6)
			continue;	/* dump shows what it can decode */
		r = run("dump '%s'", img);
		cr_expect_eq(r.rc, 4);
		cr_expect(strstr(r.err, "not a valid INTEGRITY device: ") &&
			  strstr(r.err, cases[i].why), "dump: %s", r.err);
		done(&r);
	}
	free(img);
}

/* ---- -V, unknown algorithms, mapping commands ---- */

Test(integrity_cli, version_and_algorithms, .init = setup, .fini = teardown)
{
	char *img = p("o.img");
	struct res r = run("-V");

	cr_expect_eq(r.rc, 0, "%s", r.err);
	cr_expect(!strncmp(r.out, "integrity-tool ", 15), "%s", r.out);
	done(&r);
	r = run("--version");
	cr_expect_eq(r.rc, 0);
	done(&r);
	th_write_file(img, "", 0);
	r = run("format -I nosuch '%s'", img);
	cr_expect_eq(r.rc, 1);
	cr_expect(strstr(r.err, "'nosuch'") && strstr(r.err, "--list-engines"),
		  "%s", r.err);
	cr_expect(!strstr(r.err, "o.img"), "not the file's fault: %s", r.err);
	done(&r);
	free(img);
}

Test(integrity_cli, mapping_commands_point_elsewhere)
{
	const char *cmds[] = { "open", "close", "status", "resize" };

	for (size_t i = 0; i < 4; i++) {
		struct res r = run("%s x y", cmds[i]);

		cr_expect_eq(r.rc, 1);
		cr_expect(strstr(r.err, "this tool does not map devices") &&
			  strstr(r.err, "integritysetup open") &&
			  strstr(r.err, "--json"), "%s: %s", cmds[i], r.err);
		done(&r);
	}
}

/* ---- key files ---- */

Test(integrity_cli, key_file_sizes, .init = setup, .fini = teardown)
{
	char *img = p("img"), *empty = p("empty"), *big = p("big"),
	     *k20 = p("k20"), *missing = p("missing");
	struct res r;

	th_write_random_file(img, 4u << 20, 1);
	th_write_file(empty, "", 0);
	th_write_random_file(big, 4097, 2);
	th_write_random_file(k20, 20, 3);
	r = run("format -I hmac-sha256 --integrity-key-file '%s' '%s'", empty,
		img);
	cr_expect_eq(r.rc, 1);
	cr_expect(strstr(r.err, "key file is empty"), "%s", r.err);
	done(&r);
	r = run("format -I hmac-sha256 --integrity-key-file '%s' '%s'", big,
		img);
	cr_expect_eq(r.rc, 1);
	cr_expect(strstr(r.err, "key file is larger than 4096 bytes"), "%s",
		  r.err);
	done(&r);
	r = run("format -I hmac-sha256 --integrity-key-file '%s' "
		"--integrity-key-size 32 '%s'", k20, img);
	cr_expect_eq(r.rc, 1);
	cr_expect(strstr(r.err, "key file holds 20 bytes, "
			 "--integrity-key-size needs 32"), "%s", r.err);
	done(&r);
	/* missing or unreadable: a file problem */
	r = run("format -I hmac-sha256 --integrity-key-file '%s' '%s'",
		missing, img);
	cr_expect_eq(r.rc, 4, "%s", r.err);
	done(&r);
	r = run("check -I hmac-sha256 --integrity-key-file '%s' '%s'", dir,
		img);
	cr_expect_eq(r.rc, 4, "a directory: %s", r.err);
	done(&r);
	free(img);
	free(empty);
	free(big);
	free(k20);
	free(missing);
}

/* ---- check with the wrong options ---- */

Test(integrity_cli, wrong_algorithm_or_key_hint, .init = setup,
     .fini = teardown)
{
	char *img = p("img"), *k1 = p("k1"), *k2 = p("k2"), *opts;
	struct res r;

	format_ok("--device-size 4M", img);
	r = run("check -I sha256 '%s'", img);
	cr_expect_eq(r.rc, 2);
	cr_expect(strstr(r.err, "formatted with another --integrity or key?") &&
		  strstr(r.err, "4-byte tags, sha256 makes 32"), "%s", r.err);
	done(&r);
	/* one bad block is damage, not a wrong option */
	format_ok("--device-size 4M", img);
	th_flip_byte(img, 1u << 20, 1);
	r = run("check '%s'", img);
	cr_expect_eq(r.rc, 2);
	cr_expect(!strstr(r.err, "another --integrity"), "%s", r.err);
	done(&r);
	/* keyed: the wrong key */
	th_write_random_file(k1, 32, 1);
	th_write_random_file(k2, 32, 2);
	cr_assert(asprintf(&opts, "-I hmac-sha256 --integrity-key-file '%s' "
			   "--device-size 4M", k1) > 0);
	format_ok(opts, img);
	r = run("check --json -I hmac-sha256 --integrity-key-file '%s' '%s'",
		k2, img);
	cr_expect_eq(r.rc, 2);
	cr_expect(strstr(r.err, "formatted with another --integrity or key?"),
		  "%s", r.err);
	cr_expect(strstr(r.out, "\"hint\""), "the JSON says it too: %s",
		  r.out);
	done(&r);
	free(opts);
	free(img);
	free(k1);
	free(k2);
}

/* ---- --json ---- */

static json_object *parse(const char *out)
{
	json_object *j = json_tokener_parse(out);

	cr_assert(j, "not JSON: %s", out);
	return j;
}

Test(integrity_cli, json_table_quotes_paths, .init = setup, .fini = teardown)
{
	char *img = p("my img\\x");
	struct res r = run("format -q --json --salt " SALT
			   " --device-size 4M '%s'", img);
	json_object *j, *v;
	const char *t;

	cr_assert_eq(r.rc, 0, "%s", r.err);
	j = parse(r.out);
	cr_assert(json_object_object_get_ex(j, "table", &v));
	t = json_object_get_string(v);
	/* dm_split_args: a backslash makes the next character literal */
	cr_expect(t && strstr(t, "/my\\ img\\\\x 0 4 J "), "%s", t);
	json_object_put(j);
	done(&r);
	free(img);
}

Test(integrity_cli, json_failure_is_an_error_object, .init = setup,
     .fini = teardown)
{
	char *missing = p("missing"), *img = p("img");
	json_object *j, *e, *v;
	struct res r = run("check --json '%s'", missing);

	cr_expect_eq(r.rc, 4);
	j = parse(r.out);
	cr_assert(json_object_object_get_ex(j, "error", &e), "%s", r.out);
	cr_assert(json_object_object_get_ex(e, "exit_code", &v));
	cr_expect_eq(json_object_get_int(v), 4);
	cr_assert(json_object_object_get_ex(e, "message", &v));
	cr_expect(strstr(json_object_get_string(v), "missing"), "%s", r.out);
	json_object_put(j);
	done(&r);
	/* with the reason's code and field */
	format_ok("--device-size 4M", img);
	poke(img, 8, 255);
	r = run("check --json '%s'", img);
	cr_expect_eq(r.rc, 4);
	j = parse(r.out);
	cr_assert(json_object_object_get_ex(j, "error", &e), "%s", r.out);
	cr_assert(json_object_object_get_ex(e, "reason", &v));
	cr_expect_str_eq(json_object_get_string(v), "sb_version");
	cr_assert(json_object_object_get_ex(e, "field", &v));
	cr_expect_str_eq(json_object_get_string(v), "sb.version");
	json_object_put(j);
	done(&r);
	/* usage errors too */
	r = run("format --json --tag-size 0 '%s'", img);
	cr_expect_eq(r.rc, 1);
	j = parse(r.out);
	cr_expect(json_object_object_get_ex(j, "error", &e), "%s", r.out);
	json_object_put(j);
	done(&r);
	free(missing);
	free(img);
}

/* ---- -v, --debug, -q, progress ---- */

Test(integrity_cli, verbosity_levels, .init = setup, .fini = teardown)
{
	char *img = p("img");
	struct res r;

	format_ok("--device-size 4M", img);
	r = run("check -v --threads 1 '%s'", img);
	cr_expect_eq(r.rc, 0);
	cr_expect(strstr(r.err, " on 1 thread\n"), "%s", r.err);
	cr_expect(!strstr(r.err, "1 threads"), "%s", r.err);
	cr_expect(!strstr(r.err, "# "), "-v has no debug lines: %s", r.err);
	done(&r);
	r = run("check --debug --threads 2 '%s'", img);
	cr_expect(strstr(r.err, " on 2 threads\n"), "%s", r.err);
	cr_expect(strstr(r.err, "# superblock: version 5") &&
		  strstr(r.err, "# geometry: initial_sectors"), "%s", r.err);
	done(&r);
	/* -q hides no result */
	r = run("check -q '%s'", img);
	cr_expect_eq(r.rc, 0);
	cr_expect(strstr(r.out, "all tags match"), "%s", r.out);
	cr_expect_str_empty(r.err);
	done(&r);
	free(img);
}

Test(integrity_cli, progress_words_and_order, .init = setup,
     .fini = teardown)
{
	char *img = p("img");
	struct res r;
	char *sum, *prog;

	r = run("format --salt " SALT " --device-size 4M "
		"--progress-frequency 100 '%s' 2>&1", img);
	cr_expect_eq(r.rc, 0, "%s", r.out);
	sum = strstr(r.out, "Formatted with tag size 4");
	prog = strstr(r.out, "Progress:");
	cr_expect(sum && prog && sum < prog,
		  "the summary comes before the progress: %s", r.out);
	cr_expect(strstr(r.out, " written, "), "%s", r.out);
	done(&r);
	r = run("check --progress-frequency 100 '%s'", img);
	cr_expect_eq(r.rc, 0);
	cr_expect(strstr(r.err, " verified, ") && !strstr(r.err, "written"),
		  "check reads: %s", r.err);
	done(&r);
	free(img);
}

/* ---- overwriting data ---- */

Test(integrity_cli, format_over_data_warns, .init = setup, .fini = teardown)
{
	char *img = p("img"), *zero = p("zero");
	struct res r;

	th_write_random_file(img, 4u << 20, 1);
	r = run("format --salt " SALT " '%s'", img);
	cr_expect_eq(r.rc, 0, "stdin not a terminal: go on: %s", r.err);
	cr_expect(strstr(r.err, "warning: Device ") &&
		  strstr(r.err, "already contains data"), "%s", r.err);
	done(&r);
	/* formatted now: still data */
	r = run("format --batch-mode --salt " SALT " '%s'", img);
	cr_expect_eq(r.rc, 0);
	cr_expect_str_empty(r.err, "--batch-mode asks nothing");
	done(&r);
	r = run("format -q --salt " SALT " '%s'", img);
	cr_expect_str_empty(r.err, "-q asks nothing");
	done(&r);
	/* nothing but zeros (a sparse file): nothing to lose */
	th_write_file(zero, "", 0);
	cr_assert_eq(truncate(zero, 4u << 20), 0);
	r = run("format --salt " SALT " '%s'", zero);
	cr_expect_eq(r.rc, 0);
	cr_expect(!strstr(r.err, "already contains data"), "%s", r.err);
	done(&r);
	free(img);
	free(zero);
}

/* On a terminal (script(1) gives one) format asks and takes only YES. */
Test(integrity_cli, format_asks_on_a_terminal, .init = setup,
     .fini = teardown)
{
	char *img = p("img"), *before = p("before"), *out = NULL;
	const char *tool = th_tool("integrity-tool");
	int rc;

	if (!th_have_cmd("script"))
		cr_skip_test("script(1) not installed");
	th_write_random_file(img, 4u << 20, 1);
	th_write_random_file(before, 4u << 20, 1);
	rc = th_sh(&out, NULL, "printf 'no\\n' | script -qec \"'%s' format "
		   "--salt " SALT " '%s'\" /dev/null", tool, img);
	cr_expect_eq(rc, 1, "%s", out);
	cr_expect(strstr(out, "Are you sure? (Type 'yes' in capital letters)"),
		  "%s", out);
	cr_expect(strstr(out, "format cancelled"), "%s", out);
	cr_expect(th_files_equal(img, before), "declined: nothing written");
	free(out);
	out = NULL;
	rc = th_sh(&out, NULL, "printf 'YES\\n' | script -qec \"'%s' format "
		   "--salt " SALT " '%s'\" /dev/null", tool, img);
	cr_expect_eq(rc, 0, "%s", out);
	cr_expect(strstr(out, "Formatted with tag size 4"), "%s", out);
	cr_expect(!th_files_equal(img, before));
	free(out);
	free(img);
	free(before);
}

/* ---- the man page ---- */

/* The header every tool's page shares, and every option of --help. */
Test(integrity_cli, man_page_matches_the_tool)
{
	const char *src = getenv("DMT_SRC") ? getenv("DMT_SRC") : ".";
	char *path, *man, *s;
	struct res r = run("--help");
	size_t len;

	cr_assert(asprintf(&path, "%s/docs/integrity-tool.8", src) > 0);
	man = (char *)th_read_file(path, &len);
	cr_assert(man, "%s", path);
	cr_expect(strstr(man, "\n.TH INTEGRITY-TOOL 8 \"December 2026\" "
			 "\"integrity-tool 0.1.0\" \"System Administration\"\n"),
		  "the .TH line");
	cr_expect(strstr(man, "never hidden"), "what -q hides is documented");
	for (s = r.out; (s = strstr(s, " --")); s += 3) {
		char opt[64], esc[160];
		size_t n = strspn(s + 3, "abcdefghijklmnopqrstuvwxyz-");
		size_t k = 0;

		if (!n || n >= sizeof(opt))
			continue;
		memcpy(opt, s + 3, n);
		opt[n] = '\0';
		for (size_t i = 0; i < n && k + 3 < sizeof(esc); i++) {
			if (opt[i] == '-')
				esc[k++] = '\\';
			esc[k++] = opt[i];
		}
		esc[k] = '\0';
		cr_expect(strstr(man, esc), "--%s is not in the man page", opt);
	}
	done(&r);
	free(man);
	free(path);
}
