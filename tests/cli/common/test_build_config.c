// SPDX-License-Identifier: MIT
/*
 * What a build has, as the tools say it: `--version` prints the version
 * and the build's features (+argon2 or -argon2, one +NAME per ISA
 * backend built in), and what it says about Argon2 is what crypt-tool
 * does (WITHOUT_ARGON2=1 is the only way to build without it).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/helpers.h"

static const char *const tools[] = { "verity-tool", "integrity-tool",
				     "fsverity-tool", "crypt-tool" };

/* A feature word: '+' or '-', then lower-case letters and digits. */
static bool feature_word(const char *w, size_t n)
{
	if (n < 2 || (w[0] != '+' && w[0] != '-'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!((w[i] >= 'a' && w[i] <= 'z') || (w[i] >= '0' && w[i] <= '9')))
			return false;
	return true;
}

/* "<tool> <version> <feature>...\n" checked; returns the malloc'ed line. */
static char *version_line(const char *name)
{
	char *argv[] = { (char *)th_tool(name), "--version", NULL };
	char *out = NULL, *err = NULL, *p;
	size_t n, argon2 = 0;

	cr_assert_eq(th_run(argv, &out, &err), 0, "%s --version: %s", name, err);
	cr_expect_str_empty(err, "%s --version wrote to stderr: %s", name, err);
	free(err);
	n = strlen(out);
	cr_assert(n && out[n - 1] == '\n' && !memchr(out, '\n', n - 1),
		  "%s --version: not one line: '%s'", name, out);
	n = strlen(name);
	cr_assert(!strncmp(out, name, n) && out[n] == ' ' &&
		  !strncmp(out + n + 1, DMT_VERSION " ", strlen(DMT_VERSION) + 1),
		  "%s --version: '%s'", name, out);
	for (p = out + n + 1 + strlen(DMT_VERSION); *p == ' ';) {
		size_t len = strcspn(++p, " \n");

		cr_expect(feature_word(p, len), "%s --version: bad word '%.*s'",
			  name, (int)len, p);
		argon2 += len == 7 && !strncmp(p + 1, "argon2", 6);
		p += len;
	}
	cr_expect_eq(argon2, 1, "%s --version names argon2 %zu times: '%s'",
		     name, argon2, out);
	return out;
}

Test(build_config, version_names_the_build_features)
{
	char *first = NULL;

	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		char *line = version_line(tools[i]);
		const char *feat = line + strlen(tools[i]);

		/* one build: every tool says the same */
		if (!first)
			first = strdup(feat);
		else
			cr_expect_str_eq(feat, first, "%s", tools[i]);
		free(line);
	}
	free(first);
}

/* +argon2: an argon2id keyslot is made; -argon2: refused, saying why. */
Test(build_config, argon2_is_what_version_says, .timeout = 60)
{
	char *line = version_line("crypt-tool");
	bool has = strstr(line, " +argon2") != NULL;
	char *dir = th_mkdtemp(), *out = NULL, *err = NULL;
	char *ct = realpath(th_tool("crypt-tool"), NULL);
	int rc;

	cr_assert(ct, "crypt-tool not built");
	rc = th_sh(&out, &err, "cd '%s' && printf pass > pw && head -c 65536 "
		   "/dev/urandom > pay && '%s' format --pbkdf argon2id "
		   "--pbkdf-force-iterations 4 --pbkdf-memory 32 "
		   "--pbkdf-parallel 1 --key-file pw --data-from pay img "
		   "</dev/null && '%s' dump img", dir, ct, ct);
	if (has) {
		cr_expect_eq(rc, 0, "%s", err);
		cr_expect(strstr(out, "argon2id"), "%s", out);
	} else {
		cr_expect_neq(rc, 0, "built without Argon2, yet: %s", out);
		cr_expect(strstr(err, "built without libargon2"), "%s", err);
	}
	free(out);
	free(err);
	free(line);
	free(ct);
	th_rmtree(dir);
	free(dir);
}
