// SPDX-License-Identifier: MIT
/*
 * Key files and passphrases of the four tools (tools/common/secret.h):
 *  - every refusal of cryptsetup 2.6.1's key-file reader, with its exit
 *    code, run on crypt-tool format (LUKS2 and hashed plain), decrypt and
 *    cryptsetup luksFormat side by side, and the empty passphrases
 *    cryptsetup takes and we refuse;
 *  - passphrases that both accept are the same bytes: our LUKS2 image
 *    opens in `cryptsetup open --test-passphrase` with a key file holding
 *    exactly the bytes libcryptsetup's reader takes from that source;
 *  - integrity-tool key files and the signing passphrase files of
 *    verity-tool and fsverity-tool: FIFOs work, empty ones are refused.
 */
#if !defined(DMT_NO_LIBCRYPTSETUP) && __has_include(<libcryptsetup.h>)
#include <criterion/criterion.h>
#include <libcryptsetup.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/helpers.h"

#define CHEAP "--pbkdf pbkdf2 --pbkdf-force-iterations 1000 --batch-mode"
/* 28 bytes, as in issue 21 */
#define PASS28 "abcdefghijklmnopqrstuvwxyz01"

static char *dir;

static void setup(void)
{
	char *pw, *empty, *pay;

	dir = th_mkdtemp();
	pw = th_path(dir, "pass");
	empty = th_path(dir, "empty");
	pay = th_path(dir, "pay");
	th_write_file(pw, PASS28, 28);
	th_write_file(empty, "", 0);
	th_write_random_file(pay, 70000, 7);
	free(pw);
	free(empty);
	free(pay);
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

/* sh in the test directory: "$CT" is crypt-tool, "$T" the build dir. */
static int sh(char **out, char **err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int sh(char **out, char **err, const char *fmt, ...)
{
	char *cmd, *ct = realpath(th_tool("crypt-tool"), NULL);
	va_list ap;
	int rc;

	cr_assert(ct, "crypt-tool not built");
	va_start(ap, fmt);
	cr_assert(vasprintf(&cmd, fmt, ap) >= 0);
	va_end(ap);
	rc = th_sh(out, err, "cd '%s' && CT='%s' T='%s' && %s", dir, ct,
		   th_tool(""), cmd);
	free(cmd);
	free(ct);
	return rc;
}

static bool exists(const char *name)
{
	char *path = p(name);
	bool e = access(path, F_OK) == 0;

	free(path);
	return e;
}

/* ---- refusals, beside cryptsetup ---- */

struct refusal {
	const char *feed;	/* shell before the tool: "cat pass |" */
	const char *opts;	/* key options */
	int cryptsetup_rc;	/* what luksFormat 2.6.1 exits with */
	const char *cryptsetup_msg;
	const char *ours;	/* our message (a part) */
};

static const struct refusal refusals[] = {
	{ "", "--key-file pass --keyfile-offset 29", 1,
	  "Cannot seek to requested keyfile offset.", "cannot seek to --keyfile-offset 29" },
	{ "", "--key-file pass --keyfile-offset 100", 1,
	  "Cannot seek to requested keyfile offset.", "the key file has 28 bytes" },
	{ "", "--key-file pass --keyfile-size 29", 1,
	  "Cannot read requested amount of data.", "--keyfile-size needs 29" },
	{ "", "--key-file pass --keyfile-offset 20 --keyfile-size 9", 1,
	  "Cannot read requested amount of data.", "holds 8 bytes after --keyfile-offset 20" },
	{ "printf '' |", "", 1, "Nothing to read on input.", "nothing to read" },
	{ "printf '' |", "--key-file -", 1, "Nothing to read on input.",
	  "nothing to read" },
	{ "cat pass |", "--key-file - --keyfile-offset 28", 1,
	  "Nothing to read on input.", "nothing to read" },
	{ "cat pass |", "--key-file - --keyfile-offset 29", 1,
	  "Cannot seek to requested keyfile offset.", "input ends after 28 bytes" },
	{ "cat pass |", "--keyfile-offset 29", 1,
	  "Cannot seek to requested keyfile offset.", "cannot seek" },
	{ "cat pass |", "--key-file - --keyfile-size 29", 1,
	  "Cannot read requested amount of data.", "needs 29" },
	{ "printf 'pass\\n' |", "--keyfile-size 10", 1,
	  "Cannot read requested amount of data.", "before the newline" },
	/* cryptsetup takes an empty passphrase here; we refuse it */
	{ "", "--key-file pass --keyfile-offset 28", 0, NULL, "nothing left after" },
	{ "", "--key-file empty", 0, NULL, "is empty" },
	{ "printf '\\n' |", "", 0, NULL, "first line is empty" },
	{ "printf '\\nsecond' |", "", 0, NULL, "first line is empty" },
};

/* msg false: plain mode with a regular key file, which is the key itself
 * (refused by the key's own rule: key-size bytes). */
static void expect_refused(const struct refusal *k, const char *cmd,
			   const char *out, bool msg)
{
	char *err = NULL;
	int rc = sh(NULL, &err, "%s \"$CT\" %s %s", k->feed, cmd, k->opts);

	cr_expect_eq(rc, 1, "%s %s: exit %d: %s", cmd, k->opts, rc, err);
	cr_expect(err && (!msg || strstr(err, k->ours)), "%s %s: %s", cmd,
		  k->opts, err);
	cr_expect(!strstr(err, PASS28), "secret printed");
	cr_expect(!exists(out), "%s %s: %s left", cmd, k->opts, out);
	free(err);
}

Test(secrets, keyfile_refusals_as_cryptsetup, .init = setup,
     .fini = teardown, .timeout = 120)
{
	char *err = NULL;

	cr_assert_eq(sh(NULL, &err, "printf '%s' | \"$CT\" format " CHEAP
			" --data-from pay luks.img", PASS28), 0, "%s", err);
	free(err);
	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		const struct refusal *k = &refusals[i];
		int rc;

		err = NULL;
		rc = sh(NULL, &err, "truncate -s 20M cs.img && %s cryptsetup "
			"luksFormat -q --pbkdf pbkdf2 --pbkdf-force-iterations "
			"1000 %s cs.img", k->feed, k->opts);
		cr_expect_eq(rc, k->cryptsetup_rc, "cryptsetup %s: exit %d: %s",
			     k->opts, rc, err);
		cr_expect(!k->cryptsetup_msg || strstr(err, k->cryptsetup_msg),
			  "cryptsetup %s: %s", k->opts, err);
		free(err);
		expect_refused(k, "format " CHEAP " --data-from pay out.img",
			       "out.img", true);
		expect_refused(k, "format --type plain --hash sha256 "
			       "--batch-mode --data-from pay out.img", "out.img",
			       !strstr(k->opts, "--key-file ") ||
				       strstr(k->opts, "--key-file -"));
		expect_refused(k, "decrypt luks.img out", "out", true);
	}
}

/* The bytes a source gives, as libcryptsetup's reader takes them from a
 * copy of what the source holds (line: no --key-file, stop at '\n'). */
static char *cs_read(const char *content, size_t n, uint64_t offset,
		     size_t size, bool line, size_t *len)
{
	struct crypt_device *cd = NULL;
	char *src = p("src"), *key = NULL;

	th_write_file(src, content, n);
	cr_assert_eq(crypt_init(&cd, NULL), 0);
	cr_assert_eq(crypt_keyfile_device_read(cd, src, &key, len, offset, size,
					       line ? CRYPT_KEYFILE_STOP_EOL : 0),
		     0, "libcryptsetup refuses the source");
	crypt_free(cd);
	free(src);
	return key;
}

struct accepted {
	const char *content;	/* what the source holds */
	bool line;		/* on stdin without --key-file (else a file) */
	uint64_t offset;
	size_t size;
};

/* Both accept it: our image opens with exactly libcryptsetup's bytes. */
Test(secrets, accepted_passphrases_are_cryptsetups, .init = setup,
     .fini = teardown, .timeout = 120)
{
	static const struct accepted cases[] = {
		{ PASS28, false, 27, 0 },	/* one byte left: "1" */
		{ "abcdefgh\n", true, 2, 4 },	/* "cdef" */
		{ "abc\ndef", true, 0, 0 },	/* "abc" */
		{ "abc\n", false, 0, 0 },	/* --key-file: "abc\n" */
		{ "0123456789", false, 3, 5 },	/* "34567" */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct accepted *k = &cases[i];
		size_t len, n = strlen(k->content);
		char *want = cs_read(k->content, n, k->offset, k->size, k->line,
				     &len);
		char *exact = p("exact"), *img = p("img"), *err = NULL;
		char opts[128];

		th_write_file(exact, want, len);
		snprintf(opts, sizeof(opts), "--keyfile-offset %llu --keyfile-size %zu",
			 (unsigned long long)k->offset, k->size);
		unlink(img);
		cr_assert_eq(sh(NULL, &err, "%s \"$CT\" format " CHEAP " %s %s "
				"--data-from pay img", k->line ? "cat src |" : "",
				k->line ? "" : "--key-file src", opts), 0,
			     "%zu: %s", i, err);
		free(err);
		err = NULL;
		cr_expect_eq(sh(NULL, &err, "cryptsetup open --test-passphrase "
				"--key-file exact img"), 0,
			     "case %zu: cryptsetup refuses our passphrase: %s",
			     i, err);
		free(err);
		crypt_safe_free(want);
		free(exact);
		free(img);
	}
}

/* ---- the other tools' readers ---- */

Test(secrets, integrity_key_files, .init = setup, .fini = teardown)
{
	char *err = NULL;
	const char *fmt = "\"$T\"/integrity-tool format --batch-mode -I "
			  "hmac-sha256 --salt 000102030405060708090a0b0c0d0e0f"
			  " --integrity-key-size 32";

	th_write_random_file(p("k32"), 32, 9);
	th_write_random_file(p("a.img"), 2u << 20, 1);
	th_write_random_file(p("b.img"), 2u << 20, 1);
	cr_assert_eq(sh(NULL, &err, "%s --integrity-key-file k32 a.img", fmt), 0,
		     "%s", err);
	free(err);
	err = NULL;
	/* a FIFO (process substitution, a key from a vault) */
	cr_assert_eq(sh(NULL, &err, "mkfifo kf && (cat k32 > kf &) && %s "
			"--integrity-key-file kf b.img", fmt), 0, "%s", err);
	free(err);
	cr_expect(th_files_equal(p("a.img"), p("b.img")), "another key");
	err = NULL;
	cr_expect_eq(sh(NULL, &err, "rm -f kf && mkfifo kf && (: > kf &) && %s "
			"--integrity-key-file kf b.img", fmt), 1, "%s", err);
	cr_expect(strstr(err, "nothing to read"), "%s", err);
	free(err);
	err = NULL;
	cr_expect_eq(sh(NULL, &err, "rm -f kf && mkfifo kf && (head -c 20 k32 "
			"> kf &) && %s --integrity-key-file kf b.img", fmt), 1,
		     "%s", err);
	cr_expect(strstr(err, "holds 20 bytes, --integrity-key-size needs 32"),
		  "%s", err);
	free(err);
}

/* A signing passphrase: the first line; empty is refused (exit 1). */
Test(secrets, signing_passphrase_files, .init = setup, .fini = teardown,
     .timeout = 60)
{
	char *err = NULL;
	static const char *const vt = "\"$T\"/verity-tool sign --key enc.key "
				      "--cert enc.crt 00112233445566778899aabb"
				      "ccddeeff00112233445566778899aabbccddeeff "
				      "sig";
	static const char *const fv = "\"$T\"/fsverity-tool sign --key enc.key "
				      "--cert enc.crt pay fsig";

	cr_assert_eq(sh(NULL, &err, "openssl req -x509 -newkey rsa:2048 "
			"-passout pass:s3cret -keyout enc.key -out enc.crt "
			"-subj /CN=dmt -days 2 2>&1"), 0, "%s", err);
	free(err);
	for (int t = 0; t < 2; t++) {
		const char *cmd = t ? fv : vt;

		err = NULL;
		cr_expect_eq(sh(NULL, &err, "%s --key-passphrase-file empty", cmd),
			     1, "%s", err);
		cr_expect(strstr(err, "is empty"), "%s", err);
		free(err);
		err = NULL;
		cr_expect_eq(sh(NULL, &err, "printf '\\ns3cret\\n' > nl && %s "
				"--key-passphrase-file nl", cmd), 1, "%s", err);
		cr_expect(strstr(err, "first line is empty"), "%s", err);
		free(err);
		err = NULL;
		cr_expect_eq(sh(NULL, &err, "printf '\\r\\n' > cr && %s "
				"--key-passphrase-file cr", cmd), 1, "%s", err);
		free(err);
		err = NULL;
		cr_expect_eq(sh(NULL, &err, "rm -f pf && mkfifo pf && (printf "
				"'s3cret\\nnot this\\n' > pf &) && %s "
				"--key-passphrase-file pf", cmd), 0, "%s", err);
		free(err);
	}
	cr_expect(exists("sig") && exists("fsig"));
}
#endif
