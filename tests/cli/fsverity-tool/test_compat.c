// SPDX-License-Identifier: MIT
/*
 * fsverity-tool as a drop-in for fsverity-utils 1.5, against the real
 * `fsverity`: invoked as "fsverity" (a symlink) it must exit as fsverity
 * exits (2 usage, 1 any other error), print the same standard output and
 * write the same files for every command line below; under its own name
 * it keeps its exit codes (1, 4) and refuses what fsverity refuses (a
 * repeated option) and what it would otherwise ignore (--json with
 * --compact or --for-builtin-sig), and both digest a character device as
 * fsverity does (a private null node, never the system's).
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/helpers.h"
#include "tests/support/nodes.h"

static char *dir;

static void setup(void)
{
	char *tool = realpath(th_tool("fsverity-tool"), NULL), *link;

	dir = th_mkdtemp();
	cr_assert(tool, "fsverity-tool not built");
	link = th_path(dir, "bin");
	cr_assert_eq(mkdir(link, 0700), 0);
	free(link);
	link = th_path(dir, "bin/fsverity");
	cr_assert_eq(symlink(tool, link), 0);
	free(link);
	free(tool);
}

static void teardown(void)
{
	th_rmtree(dir);
	free(dir);
}

static int sh(char **out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int sh(char **out, const char *fmt, ...)
{
	char *cmd, *tool = realpath(th_tool("fsverity-tool"), NULL);
	va_list ap;
	int rc;

	va_start(ap, fmt);
	cr_assert(vasprintf(&cmd, fmt, ap) >= 0);
	va_end(ap);
	rc = th_sh(out, NULL, "cd '%s' && FVT='%s' && %s", dir, tool, cmd);
	free(cmd);
	free(tool);
	return rc;
}

static void fixtures(void)
{
	char *p;

	if (!th_have_cmd("fsverity"))
		cr_skip("fsverity (fsverity-utils 1.5) is not installed: "
			"apt-get install fsverity");
	p = th_path(dir, "f");
	th_write_random_file(p, 10000, 1);
	free(p);
	p = th_path(dir, "g");
	th_write_random_file(p, 300000, 2);
	free(p);
	p = th_path(dir, "null");
	th_mknull(p);
	free(p);
	cr_assert_eq(sh(NULL,
			"openssl req -newkey rsa:2048 -nodes -keyout "
			"key.pem -x509 -out cert.pem -subj /CN=compat -days 30 "
			"2>openssl.err"),
		     0);
}

/* One command line, '@' standing for the output prefix (A: fsverity, B:
 * ours); outputs lists the suffixes of the files both must write. */
struct compat_case {
	const char *args;
	int rc; /* what fsverity 1.5 exits with */
	const char *outputs[3];
};

static char *with_prefix(const char *args, char prefix)
{
	char *s = strdup(args);

	for (char *p = s; *p; p++)
		if (*p == '@')
			*p = prefix;
	return s;
}

static void same_as_fsverity(const struct compat_case *k)
{
	char *a = with_prefix(k->args, 'A'), *b = with_prefix(k->args, 'B');
	char *theirs = NULL, *ours = NULL;
	int rc1 = sh(&theirs, "fsverity %s 2>A.err", a);
	int rc2 = sh(&ours, "bin/fsverity %s 2>B.err", b);

	cr_expect_eq(rc1, k->rc, "fsverity %s: exit %d (the table says %d)",
		     k->args, rc1, k->rc);
	cr_expect_eq(rc2, rc1, "fsverity %s: exit %d, fsverity-tool %d",
		     k->args, rc1, rc2);
	cr_expect_str_eq(ours, theirs, "fsverity %s: stdout", k->args);
	for (size_t i = 0; i < 3 && k->outputs[i]; i++) {
		char *pa, *pb;

		cr_assert(asprintf(&pa, "%s/A%s", dir, k->outputs[i]) > 0);
		cr_assert(asprintf(&pb, "%s/B%s", dir, k->outputs[i]) > 0);
		cr_expect(access(pb, F_OK) == 0 && th_files_equal(pa, pb),
			  "fsverity %s: %s differs", k->args, k->outputs[i]);
		free(pa);
		free(pb);
	}
	free(theirs);
	free(ours);
	free(a);
	free(b);
}

Test(fsverity_compat, invoked_as_fsverity_exits_and_prints_as_fsverity,
     .init = setup, .fini = teardown)
{
	static const struct compat_case cases[] = {
		{"", 2, {NULL}},
		{"bogus f", 2, {NULL}},
		{"digest", 2, {NULL}},
		{"digest --bogus f", 2, {NULL}},
		{"digest missing", 1, {NULL}},
		{"digest f missing g", 1, {NULL}},
		{"digest .", 1, {NULL}},
		{"digest null f", 0, {NULL}},
		{"digest --hash-alg sha256 --hash-alg sha512 f", 2, {NULL}},
		{"digest --block-size 4096 --block-size 4096 f", 2, {NULL}},
		{"digest --salt 01 --salt 01 f", 2, {NULL}},
		{"digest --block-size 3 f", 2, {NULL}},
		{"digest --block-size 0 f", 2, {NULL}},
		{"digest --block-size 4096x f", 2, {NULL}},
		{"digest --block-size 2147483648 f", 2, {NULL}},
		{"digest --block-size 32 f", 1, {NULL}},
		{"digest --hash-alg md5 f", 2, {NULL}},
		{"digest --hash-alg 2 f g", 0, {NULL}},
		{"digest --salt xyz f", 2, {NULL}},
		{"digest --salt 0102 --block-size 1024 f g", 0, {NULL}},
		{"digest --salt 0102030405060708090a0b0c0d0e0f10111213141516"
		 "1718191a1b1c1d1e1f2021 f",
		 1,
		 {NULL}},
		{"digest --compact f g", 0, {NULL}},
		{"digest --for-builtin-sig f", 0, {NULL}},
		{"digest --compact --for-builtin-sig f g", 0, {NULL}},
		{"digest --hash sha512 --comp f", 0, {NULL}},
		{"digest --out-merkle-tree @.t --out-merkle-tree @.u f",
		 2,
		 {NULL}},
		{"digest --out-merkle-tree=@.t --out-descriptor @.d f g null",
		 0,
		 {".t", ".d"}},
		{"sign f", 2, {NULL}},
		{"sign f @.sig --key key.pem --cert cert.pem", 0, {".sig"}},
		{"sign --ke key.pem --ce cert.pem f @.sig", 0, {".sig"}},
		{"sign f @.sig --key key.pem --key key.pem --cert cert.pem",
		 2,
		 {NULL}},
		{"sign f @.sig --cert cert.pem", 1, {NULL}},
		{"sign missing @.sig --key key.pem --cert cert.pem", 1, {NULL}},
	};

	fixtures();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		same_as_fsverity(&cases[i]);
}

/* Under its own name: its exit codes, and what it refuses. */
Test(fsverity_compat, own_name_codes_and_refusals, .init = setup,
     .fini = teardown)
{
	char *ours = NULL, *theirs = NULL, *null = th_path(dir, "null");

	fixtures();
	cr_expect_eq(sh(NULL, "$FVT digest 2>e"), 1);
	cr_expect_eq(sh(NULL, "$FVT digest missing 2>e"), 4);
	cr_expect_eq(sh(NULL,
			"$FVT digest --hash-alg sha256 --hash-alg "
			"sha512 f 2>e && exit 9; grep -q 'hash-alg can only be "
			"given once' e"),
		     0, "a repeated --hash-alg taken");
	cr_expect_eq(sh(NULL, "$FVT digest --json --compact f 2>e && exit 9; "
			      "grep -q 'does not go with --compact' e"),
		     0, "--json --compact not refused");
	cr_expect_eq(
		sh(NULL,
		   "$FVT digest --json --for-builtin-sig f 2>e "
		   "&& exit 9; grep -q 'does not go with --for-builtin-sig' "
		   "e"),
		0, "--json --for-builtin-sig not refused");
	cr_expect_eq(sh(NULL, "$FVT digest --strict f 2>e"), 1,
		     "--strict without -r ignored");
	cr_expect_eq(sh(NULL, "$FVT sign f s --key key.pem --key key.pem "
			      "2>e"),
		     1);
	/* a character device: digested as fsverity digests it */
	cr_expect_eq(sh(&ours, "$FVT digest null f 2>e"), 0);
	cr_assert_eq(sh(&theirs, "fsverity digest null f"), 0);
	cr_expect_str_eq(ours, theirs);
	/* listed with stat (progress needs the sizes): the same */
	cr_expect_eq(sh(NULL,
			"$FVT digest --progress-frequency 60 "
			"--out-descriptor B.d null f 2>e && fsverity digest "
			"--out-descriptor A.d null f && cmp A.d B.d"),
		     0);
	cr_expect(th_is_null_node(null));
	free(null);
	free(ours);
	free(theirs);
}
