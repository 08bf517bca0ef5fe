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
 *  - plain mode's keys (issue 27) for every source and --hash plain,
 *    plain:N, HASH, HASH:N: known answers from cryptsetup's rules
 *    (libcryptsetup's reader for the bytes, its crypt_plain_hash for
 *    hashes, the CLI's "plain" = the passphrase cut or zero-padded),
 *    proved by decrypting our image with the key as a raw key file;
 *  - integrity-tool key files and the signing passphrase files of
 *    verity-tool and fsverity-tool: FIFOs work, empty ones are refused.
 */
#if !defined(DMT_NO_LIBCRYPTSETUP) && __has_include(<libcryptsetup.h>)
#include <criterion/criterion.h>
#include <libcryptsetup.h>
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
#define sh(out, err, ...) th_sh_tools(out, err, dir, "empty", __VA_ARGS__)

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

/* ---- plain mode's keys (issue 27) ---- */

struct plain_kat {
	const char *feed;	/* what stdin holds */
	const char *opts;	/* format options */
	const char *map;	/* the mapping's options for decrypt */
	/* libcryptsetup's reader of it: offset, size, line mode */
	uint64_t offset;
	size_t size;
	bool line;
	const char *hash;	/* cryptsetup's --hash */
	size_t key_size;
};

#define ESSIV "--cipher aes-cbc-essiv:sha256 --key-size 256"
#define CBC128 "--cipher aes-cbc-plain64 --key-size 128"
#define XTS512 "--cipher aes-xts-plain64 --key-size 512"

static const struct plain_kat kats[] = {
	/* issue 27: a passphrase shorter than the key, zero-padded */
	{ "xxxxxxxx", "--hash plain", ESSIV, 0, 0, true, "plain", 32 },
	{ "xxxxxxxx\n", "--hash plain", ESSIV, 0, 0, true, "plain", 32 },
	{ "xxxxxxxx\nyyyy", "--hash plain", ESSIV, 0, 0, true, "plain", 32 },
	/* longer than the key: cut */
	{ "0123456789abcdefghij\n", "--hash plain", CBC128, 0, 0, true, "plain", 16 },
	/* plain:N: exactly N bytes, then zeros */
	{ "xxxxxxxx", "--hash plain:4", ESSIV, 0, 0, true, "plain:4", 32 },
	{ "xxxxxxxx", "--hash plain:8", ESSIV, 0, 0, true, "plain:8", 32 },
	/* line mode with --keyfile-offset and --keyfile-size */
	{ "abcdefgh\n", "--hash plain --keyfile-offset 2 --keyfile-size 4",
	  ESSIV, 2, 4, true, "plain", 32 },
	{ "pass phrase\n", "--hash sha256", ESSIV, 0, 0, true, "sha256", 32 },
	{ "pass phrase", "--hash sha512", XTS512, 0, 0, true, "sha512", 64 },
	/* --key-file -: all of stdin, the newline too */
	{ "xxxxxxxx\n", "--hash sha256 --key-file -", ESSIV, 0, 0, false,
	  "sha256", 32 },
	{ "xxxxxxxxyyyy", "--hash sha1 --key-file - --keyfile-size 5", ESSIV,
	  0, 5, false, "sha1", 32 },
	{ "xxxxxxxxyyyy", "--hash sha256:20 --key-file - --keyfile-offset 3",
	  XTS512, 3, 0, false, "sha256:20", 64 },
	{ "abcdefgh", "--hash ripemd160 --key-file - --keyfile-offset 1 "
	  "--keyfile-size 6", ESSIV, 1, 6, false, "ripemd160", 32 },
	/* --hash plain with --key-file -: exactly the key's bytes */
	{ "0123456789abcdefghijklmnopqrstuvwxyzABCD", "--hash plain --key-file -",
	  ESSIV, 0, 32, false, "plain", 32 },
	{ "0123456789abcdefghijklmnopqrstuvwxyzABCD",
	  "--hash plain --key-file - --keyfile-offset 8", ESSIV, 8, 32, false,
	  "plain", 32 },
	{ "0123456789abcdefghijklmnopqrstuvwxyzABCD",
	  "--hash plain:10 --key-file -", ESSIV, 0, 0, false, "plain:10", 32 },
};

/* The key cryptsetup 2.6.1 derives from the passphrase bytes. */
static void kat_key(const struct plain_kat *k, const char *pass, size_t len,
		    uint8_t *key)
{
	struct crypt_params_plain pp = { .hash = k->hash };
	struct crypt_device *cd = NULL;
	size_t key_len = k->key_size;
	char *dev = p("dev");

	memset(key, 0, k->key_size);
	if (!strcmp(k->hash, "plain")) {
		/* the CLI drops the hash: process_key copies, cut or padded */
		memcpy(key, pass, len < k->key_size ? len : k->key_size);
		free(dev);
		return;
	}
	th_write_random_file(dev, 1 << 20, 3);
	cr_assert_eq(crypt_init(&cd, dev), 0);
	cr_assert_eq(crypt_format(cd, CRYPT_PLAIN, "aes", "cbc-essiv:sha256",
				  NULL, NULL, k->key_size, &pp), 0);
	cr_assert_eq(crypt_volume_key_get(cd, CRYPT_ANY_SLOT, (char *)key,
					  &key_len, pass, len), 0, "%s", k->hash);
	crypt_free(cd);
	free(dev);
}

Test(secrets, plain_keys_known_answer, .init = setup, .fini = teardown,
     .timeout = 120)
{
	for (size_t i = 0; i < sizeof(kats) / sizeof(kats[0]); i++) {
		const struct plain_kat *k = &kats[i];
		char *in = p("in"), *keyf = p("key"), *img = p("img");
		char *err = NULL, *pass;
		uint8_t key[64];
		size_t len, n = strlen(k->feed);

		pass = cs_read(k->feed, n, k->offset, k->size, k->line, &len);
		kat_key(k, pass, len, key);
		th_write_file(keyf, key, k->key_size);
		th_write_file(in, k->feed, n);
		unlink(img);
		cr_assert_eq(sh(NULL, &err, "cat in | \"$CT\" format --type "
				"plain %s %s --data-from pay img", k->map,
				k->opts), 0, "%s %s: %s", k->feed, k->opts, err);
		free(err);
		err = NULL;
		cr_assert_eq(sh(NULL, &err, "\"$CT\" decrypt --type plain %s "
				"--key-file key img out && cmp -n 70000 pay out",
				k->map), 0, "%s %s: another key than "
			     "cryptsetup's (%s)", k->feed, k->opts, err);
		free(err);
		crypt_safe_free(pass);
		free(in);
		free(keyf);
		free(img);
	}
}

/* What cryptsetup refuses in plain mode, we refuse (exit 1). */
Test(secrets, plain_refusals, .init = setup, .fini = teardown)
{
	static const char *const cases[][2] = {
		/* plain:N past the passphrase (crypt_plain_hash) */
		{ "printf xxxxxxxx |", "--hash plain:9" },
		/* N past the key */
		{ "printf xxxxxxxx |", "--hash plain:33" },
		{ "printf xxxxxxxx |", "--hash sha256:33" },
		{ "printf xxxxxxxx |", "--hash sha256:" },
		{ "printf xxxxxxxx |", "--hash sha256:x" },
		/* --key-file - with --hash plain: key-size bytes or nothing */
		{ "printf xxxxxxxx |", "--hash plain --key-file -" },
		/* all zeros: no passphrase byte used */
		{ "printf xxxxxxxx |", "--hash plain:0" },
		{ "printf xxxxxxxx |", "--hash whirlpool-or-not" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *err = NULL;
		int rc = sh(NULL, &err, "%s \"$CT\" format --type plain " ESSIV
			    " %s --data-from pay img", cases[i][0], cases[i][1]);

		cr_expect_eq(rc, 1, "%s: exit %d: %s", cases[i][1], rc, err);
		cr_expect(!exists("img"), "%s: image left", cases[i][1]);
		free(err);
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
