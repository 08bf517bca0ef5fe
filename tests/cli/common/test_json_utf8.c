// SPDX-License-Identifier: MIT
/*
 * Every --json (and --progress-json) of every tool is valid UTF-8 JSON
 * whatever the bytes of a file name: names with invalid UTF-8 (a stray
 * byte, an overlong form, a surrogate, a cut sequence), control
 * characters, quotes and backslashes.  The output is parsed with json-c
 * in strict mode with its UTF-8 check, the raw bytes checked again here,
 * and each name's exact bytes must come back: from the string itself when
 * the name is valid UTF-8, else from its "<key>_b64" twin.
 */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/helpers.h"

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

/* The names: invalid, control characters, quoting, valid non-ASCII. */
static const char *const names[] = {
	"a\xff"
	"b",
	"ctl\x01\x1f\x7f"
	"z",
	"q\"uo\\te'",
	"ok-\xc3\xa9-\xe2\x82\xac",
	"over\xc0\xaf",
	"sur\xed\xa0\x80r",
	"lone\x80",
	"cut\xe2\x82",
	"nl\nx\ty",
};
#define N_NAMES (sizeof(names) / sizeof(names[0]))

static char *in_dir(const char *name, const char *suffix)
{
	char *p;

	cr_assert(asprintf(&p, "%s/%s%s", dir, name, suffix) >= 0);
	return p;
}

/* An independent strict check (RFC 3629) of the raw output bytes. */
static bool valid_utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned int c = s[i], cp, len;

		if (c < 0x80) {
			i++;
			continue;
		}
		len = (c & 0xe0) == 0xc0   ? 2
		      : (c & 0xf0) == 0xe0 ? 3
		      : (c & 0xf8) == 0xf0 ? 4
					   : 0;
		if (!len || i + len > n)
			return false;
		cp = c & (0xff >> (len + 1));
		for (unsigned int k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
		    (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

/* One JSON text, strictly. */
static json_object *parse_strict(const char *text, size_t len)
{
	json_tokener *tok = json_tokener_new();
	json_object *o;

	json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
					    JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, text, (int)len);
	cr_assert(o && json_tokener_get_error(tok) == json_tokener_success,
		  "not strict UTF-8 JSON (%s): %.*s",
		  json_tokener_error_desc(json_tokener_get_error(tok)),
		  (int)len, text);
	json_tokener_free(tok);
	return o;
}

/* Every non-empty line of text as a JSON object, into objs. */
static size_t parse_lines(const char *text, json_object **objs, size_t max)
{
	size_t n = 0;

	cr_assert(valid_utf8((const unsigned char *)text, strlen(text)),
		  "output is not UTF-8: %s", text);
	for (const char *l = text; *l;) {
		size_t len = strcspn(l, "\n");

		if (len) {
			cr_assert_lt(n, max);
			objs[n++] = parse_strict(l, len);
		}
		l += len + (l[len] == '\n');
	}
	return n;
}

static json_object *parse_all(const char *text)
{
	cr_assert(valid_utf8((const unsigned char *)text, strlen(text)),
		  "output is not UTF-8: %s", text);
	return parse_strict(text, strlen(text));
}

/* The exact bytes of member key: the _b64 twin when there is one (its
 * plain value then holds U+FFFD), else the string.  malloc'ed. */
static char *exact(json_object *o, const char *key)
{
	json_object *v, *b;
	char twin[128];
	const char *s;
	unsigned char *out;
	int n;

	cr_assert(json_object_object_get_ex(o, key, &v), "no \"%s\" in %s", key,
		  json_object_to_json_string(o));
	snprintf(twin, sizeof(twin), "%s_b64", key);
	if (!json_object_object_get_ex(o, twin, &b))
		return strdup(json_object_get_string(v));
	cr_expect(strstr(json_object_get_string(v), "\xef\xbf\xbd"),
		  "\"%s\" has no U+FFFD: %s", key, json_object_get_string(v));
	s = json_object_get_string(b);
	out = calloc(1, strlen(s) + 1);
	n = EVP_DecodeBlock(out, (const unsigned char *)s, (int)strlen(s));
	cr_assert_geq(n, 0, "bad base64 in %s", twin);
	/* EVP_DecodeBlock counts the padding as bytes */
	n -= (int)(strlen(s) >= 1 && s[strlen(s) - 1] == '=');
	n -= (int)(strlen(s) >= 2 && s[strlen(s) - 2] == '=');
	out[n] = '\0';
	cr_expect_eq(strlen((char *)out), (size_t)n, "NUL inside %s", twin);
	return (char *)out;
}

static void expect_exact(json_object *o, const char *key, const char *want)
{
	char *got = exact(o, key);

	cr_expect_str_eq(got, want, "\"%s\" does not give back the name", key);
	free(got);
}

static int run(char **out, char **err, char *const argv[])
{
	return th_run(argv, out, err);
}

/* The one JSON object argv prints (exit want_rc); its stderr in *err. */
static json_object *json_of(char *const argv[], int want_rc, char **err)
{
	char *out;
	json_object *o;
	int rc = run(&out, err, argv);

	cr_assert_eq(rc, want_rc, "%s %s: exit %d: %s", argv[0], argv[1], rc,
		     *err);
	o = parse_all(out);
	free(out);
	return o;
}

static void make_key(void)
{
	cr_assert_eq(th_sh(NULL, NULL,
			   "cd '%s' && openssl req -newkey "
			   "rsa:2048 -nodes -keyout key.pem -x509 -out "
			   "cert.pem -subj /CN=json -days 30 2>openssl.err",
			   dir),
		     0);
}

Test(json_utf8, fsverity_digest_sign_manifest_errors, .init = setup,
     .fini = teardown)
{
	char *argv[N_NAMES + 8], *paths[N_NAMES + 1], *out, *err;
	char *key = in_dir("key.pem", ""), *cert = in_dir("cert.pem", "");
	char *man = in_dir("man\xfe", ".jsonl");
	json_object *objs[N_NAMES + 2];
	size_t n, k = 0, i;
	int rc;

	argv[k++] = (char *)th_tool("fsverity-tool");
	argv[k++] = "digest";
	argv[k++] = "--json";
	for (i = 0; i < N_NAMES; i++) {
		paths[i] = in_dir(names[i], "");
		th_write_random_file(paths[i], 1000 + i, i + 1);
		argv[k++] = paths[i];
	}
	paths[N_NAMES] = in_dir("missing\xff\"", "");
	argv[k++] = paths[N_NAMES];
	argv[k] = NULL;
	rc = run(&out, &err, argv);
	cr_expect_eq(rc, 4, "a missing file: %s", err);
	n = parse_lines(out, objs, N_NAMES + 2);
	cr_assert_eq(n, N_NAMES + 1, "%zu JSON lines: %s", n, out);
	for (i = 0; i <= N_NAMES; i++) {
		expect_exact(objs[i], "path", paths[i]);
		json_object_put(objs[i]);
	}
	free(out);
	free(err);

	/* sign --json and the --manifest file */
	make_key();
	argv[1] = "sign";
	argv[3] = "--key";
	argv[4] = key;
	argv[5] = "--cert";
	argv[6] = cert;
	argv[7] = "--manifest";
	argv[8] = man;
	argv[9] = "--json";
	for (i = 0; i < 3; i++)
		argv[10 + i] = paths[i];
	argv[2] = "--threads=1";
	argv[13] = NULL;
	rc = run(&out, &err, argv);
	cr_assert_eq(rc, 0, "sign: %s", err);
	n = parse_lines(out, objs, N_NAMES + 2);
	cr_assert_eq(n, 3, "%s", out);
	for (i = 0; i < n; i++) {
		expect_exact(objs[i], "path", paths[i]);
		json_object_put(objs[i]);
	}
	free(out);
	free(err);
	out = (char *)th_read_file(man, NULL);
	n = parse_lines(out, objs, N_NAMES + 2);
	cr_assert_eq(n, 3, "%s", out);
	for (i = 0; i < n; i++) {
		expect_exact(objs[i], "path", paths[i]);
		json_object_put(objs[i]);
	}
	free(out);
	for (i = 0; i <= N_NAMES; i++)
		free(paths[i]);
	free(key);
	free(cert);
	free(man);
}

Test(json_utf8, fsverity_progress_json, .init = setup, .fini = teardown)
{
	char *path = in_dir("pro\xffg\"", ""), *out, *err;
	char *argv[] = {(char *)th_tool("fsverity-tool"), "digest",
			"--progress-json", path, NULL};
	json_object *objs[64];
	size_t n;

	th_write_random_file(path, 1 << 20, 3);
	cr_assert_eq(run(&out, &err, argv), 0, "%s", err);
	n = parse_lines(err, objs, 64);
	cr_assert_gt(n, 0, "no progress line");
	for (size_t i = 0; i < n; i++) {
		expect_exact(objs[i], "device", path);
		json_object_put(objs[i]);
	}
	free(out);
	free(err);
	free(path);
}

Test(json_utf8, verity_build_and_errors, .init = setup, .fini = teardown)
{
	char *data = in_dir("da\xfft\x01"
			    "a",
			    ""),
	     *hash = in_dir("h\"\\\xfe", "");
	char *sig = in_dir("s\xff", ".p7s"), *out, *err, *cmd;
	char *argv[] = {(char *)th_tool("verity-tool"),
			"build",
			"--json",
			data,
			hash,
			NULL};
	char *bad[] = {(char *)th_tool("verity-tool"),
		       "verify",
		       "--json",
		       data,
		       sig,
		       "00",
		       NULL};
	json_object *o, *e;

	(void)sig;
	th_write_random_file(data, 1 << 20, 9);
	cr_assert_eq(run(&out, &err, argv), 0, "%s", err);
	o = parse_all(out);
	/* a control character: no table line, the open command kept */
	cr_expect(json_object_object_get_ex(o, "table_note", NULL));
	cmd = exact(o, "veritysetup_open");
	cr_expect(strstr(cmd, data) && strstr(cmd, "h\"\\\xfe"), "%s", cmd);
	free(cmd);
	json_object_put(o);
	free(out);
	free(err);

	/* the error object names the file: message_b64 gives it back */
	cr_assert_eq(run(&out, &err, bad), 4, "%s", err);
	o = parse_all(out);
	cr_assert(json_object_object_get_ex(o, "error", &e));
	cmd = exact(e, "message");
	cr_expect(strstr(cmd, sig), "%s", cmd);
	free(cmd);
	json_object_put(o);
	free(out);
	free(err);
	free(data);
	free(hash);
	free(sig);
}

Test(json_utf8, integrity_format_check, .init = setup, .fini = teardown)
{
	char *dev = in_dir("i\xff\x02.img", ""), *err;
	char *fmt[] = {(char *)th_tool("integrity-tool"),
		       "format",
		       "--json",
		       "--batch-mode",
		       "--device-size",
		       "8M",
		       dev,
		       NULL};
	char *chk[] = {(char *)th_tool("integrity-tool"), "check", "--json",
		       dev, NULL};
	json_object *o;

	o = json_of(fmt, 0, &err);
	expect_exact(o, "device", dev);
	json_object_put(o);
	free(err);
	o = json_of(chk, 0, &err);
	expect_exact(o, "device", dev);
	json_object_put(o);
	free(err);
	free(dev);
}

Test(json_utf8, crypt_format_decrypt_progress, .init = setup, .fini = teardown)
{
	char *img = in_dir("c\xff\"img", ""), *dec = in_dir("o\xc0\x80ut", "");
	char *pass = in_dir("pass", ""), *pay = in_dir("pay", ""), *err;
	char *fmt[] = {(char *)th_tool("crypt-tool"),
		       "format",
		       "--json",
		       "--batch-mode",
		       CHEAP,
		       "--key-file",
		       pass,
		       "--data-from",
		       pay,
		       img,
		       NULL};
	char *decrypt[] = {(char *)th_tool("crypt-tool"),
			   "decrypt",
			   "--json",
			   "--progress-json",
			   "--key-file",
			   pass,
			   img,
			   dec,
			   NULL};
	json_object *o, *objs[64];
	size_t n;

	th_write_file(pass, "json passphrase", 15);
	th_write_random_file(pay, 1 << 20, 2);
	o = json_of(fmt, 0, &err);
	expect_exact(o, "image", img);
	json_object_put(o);
	free(err);
	o = json_of(decrypt, 0, &err);
	expect_exact(o, "image", img);
	expect_exact(o, "output", dec);
	json_object_put(o);
	n = parse_lines(err, objs, 64);
	cr_expect_gt(n, 0, "no progress line");
	for (size_t i = 0; i < n; i++) {
		json_object *v;

		/* which file the progress names is not this test's point */
		cr_expect(json_object_object_get_ex(objs[i], "device", &v));
		json_object_put(objs[i]);
	}
	free(err);
	free(img);
	free(dec);
	free(pass);
	free(pay);
}
