// SPDX-License-Identifier: MIT
/*
 * On a terminal the progress line is erased before any result line or
 * message is written: every tool runs on a pseudo-terminal (stdout and
 * stderr both the terminal, as for a user) and what the terminal shows is
 * checked line by line: a progress line holds progress only, a result or
 * a message never shares its line.
 */
#include <criterion/criterion.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/helpers.h"
#include "tests/support/pty.h"

#define CHEAP "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"

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

static void file(const char *name, uint64_t len, uint64_t seed)
{
	char *p = th_path(dir, name);

	th_write_random_file(p, len, seed);
	free(p);
}

static bool matches(const char *re, const char *s)
{
	regex_t r;
	bool ok;

	cr_assert_eq(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0, "%s", re);
	ok = regexec(&r, s, 0, NULL, 0) == 0;
	regfree(&r);
	return ok;
}

/*
 * Runs argv on a terminal; every line shown that holds "Progress:" must
 * be a progress line alone, every line holding `marker` must match
 * `result`.  Returns the number of result lines; *progress says whether
 * a progress line was drawn at all.
 */
static size_t tty_check(char *const argv[], int want_rc, const char *marker,
			const char *result, bool *progress)
{
	char *out, **lines;
	size_t len, n, results = 0;
	int rc = th_pty_run(argv, dir, &out, &len);

	cr_expect_eq(rc, want_rc, "%s %s: exit %d: %s", argv[0], argv[1], rc,
		     out);
	*progress = memmem(out, len, "Progress:", 9) != NULL;
	n = th_screen_lines(out, len, &lines);
	for (size_t i = 0; i < n; i++) {
		if (strstr(lines[i], "Progress:"))
			cr_expect(matches("^Progress: .*, speed +[0-9.]+ "
					  "[KMGT]?i?B/s$",
					  lines[i]),
				  "%s: a line shared with progress: '%s'",
				  argv[1], lines[i]);
		if (marker && strstr(lines[i], marker)) {
			cr_expect(matches(result, lines[i]),
				  "%s: result line '%s'", argv[1], lines[i]);
			results++;
		}
	}
	th_free_lines(lines, n);
	free(out);
	return results;
}

Test(progress_tty, fsverity_digest_and_sign, .init = setup, .fini = teardown)
{
	char *digest[] = {(char *)th_tool("fsverity-tool"),
			  "digest",
			  "f1",
			  "missing",
			  "f2",
			  "f3",
			  NULL};
	char *sign[] = {(char *)th_tool("fsverity-tool"),
			"sign",
			"f1",
			"f1.sig",
			"--key",
			"key.pem",
			"--cert",
			"cert.pem",
			NULL};
	bool drawn;

	file("f1", 24 << 20, 1);
	file("f2", 24 << 20, 2);
	file("f3", 24 << 20, 3);
	cr_expect_eq(tty_check(digest, 4, "sha256:",
			       "^sha256:[0-9a-f]{64} f[123]$", &drawn),
		     3);
	cr_assert(drawn, "no progress line was drawn");
	/* the message of the missing file alone on its line too */
	cr_expect_eq(tty_check(digest, 4, "missing",
			       "^fsverity-tool: missing: ", &drawn),
		     1);
	cr_assert_eq(th_sh(NULL, NULL,
			   "cd '%s' && openssl req -newkey "
			   "rsa:2048 -nodes -keyout key.pem -x509 -out "
			   "cert.pem -subj /CN=tty -days 30 2>openssl.err",
			   dir),
		     0);
	cr_expect_eq(tty_check(sign, 0, "Signed file",
			       "^Signed file 'f1' \\(sha256:[0-9a-f]{64}\\)$",
			       &drawn),
		     1);
	cr_assert(drawn, "no progress line was drawn");
}

Test(progress_tty, verity_tool, .init = setup, .fini = teardown)
{
	char *build[] = {(char *)th_tool("verity-tool"),
			 "build",
			 "--root-hash-file",
			 "root",
			 "data",
			 "hash",
			 NULL};
	char *verify[] = {(char *)th_tool("verity-tool"),
			  "verify",
			  "--root-hash-file",
			  "root",
			  "data",
			  "hash",
			  NULL};
	bool drawn;

	file("data", 64 << 20, 4);
	cr_expect_eq(tty_check(build, 0, "Root hash:",
			       "^Root hash: +\t[0-9a-f]{64}$", &drawn),
		     1);
	cr_assert(drawn, "no progress line was drawn");
	cr_assert_eq(th_sh(NULL, NULL,
			   "cd '%s' && printf x | dd of=data "
			   "bs=1 seek=60000000 conv=notrunc 2>dd.err",
			   dir),
		     0);
	cr_expect_geq(tty_check(verify, 2, "erification failed",
				"^verity-tool: ", &drawn),
		      1);
}

Test(progress_tty, integrity_tool, .init = setup, .fini = teardown)
{
	char *format[] = {(char *)th_tool("integrity-tool"),
			  "format",
			  "--batch-mode",
			  "--data-from",
			  "pay",
			  "--device-size",
			  "auto",
			  "img",
			  NULL};
	char *check[] = {(char *)th_tool("integrity-tool"), "check", "img",
			 NULL};
	bool drawn;

	file("pay", 48 << 20, 5);
	cr_expect_eq(tty_check(format, 0, "Formatted",
			       "^Formatted with tag size", &drawn),
		     1);
	cr_assert(drawn, "no progress line was drawn");
	cr_expect_eq(tty_check(check, 0, NULL, NULL, &drawn), 0);
}

Test(progress_tty, crypt_tool, .init = setup, .fini = teardown)
{
	char *format[] = {(char *)th_tool("crypt-tool"),
			  "format",
			  "--batch-mode",
			  CHEAP,
			  "--key-file",
			  "pass",
			  "--data-from",
			  "pay",
			  "img",
			  NULL};
	char *decrypt[] = {(char *)th_tool("crypt-tool"),
			   "decrypt",
			   "-v",
			   "--key-file",
			   "pass",
			   "img",
			   "out",
			   NULL};
	/* -v names the engine of each pass: the wipe's while the payload's
	 * progress line is up */
	char *wipe[] = {(char *)th_tool("crypt-tool"),
			"format",
			"-v",
			"--batch-mode",
			CHEAP,
			"--key-file",
			"pass",
			"--data-from",
			"pay",
			"--wipe",
			"--device-size",
			"96M",
			"wimg",
			NULL};
	bool drawn;

	file("pay", 32 << 20, 6);
	cr_assert_eq(th_sh(NULL, NULL, "cd '%s' && printf pass > pass", dir),
		     0);
	tty_check(format, 0, NULL, NULL, &drawn);
	cr_assert(drawn, "no progress line was drawn");
	cr_expect_eq(tty_check(wipe, 0, " threads",
			       "^wimg: [^ ]+ on [0-9]+ threads?$", &drawn),
		     2);
	cr_expect_eq(tty_check(decrypt, 0, "Command successful",
			       "^Command successful\\.$", &drawn),
		     1);
}
