// SPDX-License-Identifier: MIT
/*
 * crypt-tool end to end, against cryptsetup 2.6.1 as the oracle: libcryptsetup
 * loads our LUKS2 headers, takes the passphrase (activation without a name:
 * no kernel) and gives the volume key, with which OpenSSL alone decrypts
 * the image to the payload; for plain images libcryptsetup's own key-file
 * reader and crypt_format(CRYPT_PLAIN) with the options of the printed
 * `cryptsetup open` line give the key.  The cryptsetup CLI dumps, adds and
 * changes keys, repairs and decrypts (detached header) our images; its
 * images decrypt with ours.  PBKDF costs are forced cheap; images are small.
 */
#if !defined(DMT_NO_LIBCRYPTSETUP) && __has_include(<libcryptsetup.h>)
#include <criterion/criterion.h>
#include <fcntl.h>
#include <libcryptsetup.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/helpers.h"

#define PASS "crypt tool passphrase"
#define CHEAP "--pbkdf pbkdf2 --pbkdf-force-iterations 1000"
#define CHEAP_ARGON "--pbkdf argon2id --pbkdf-force-iterations 4 " \
		    "--pbkdf-memory 32 --pbkdf-parallel 1"

static char *dir;
/* paths handed out by p(), freed by teardown */
static char *paths[256];
static size_t n_paths;

static void setup(void)
{
	dir = th_mkdtemp();
}

static void teardown(void)
{
	th_rmtree(dir);
	free(dir);
	while (n_paths)
		free(paths[--n_paths]);
}

/* "dir/name"; owned by the test (freed at teardown) */
static char *p(const char *name)
{
	char *path = th_path(dir, name);

	cr_assert_lt(n_paths, sizeof(paths) / sizeof(paths[0]));
	paths[n_paths++] = path;
	return path;
}

static int ct(char **out, char **err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* crypt-tool in the test directory; stdin is never a terminal. */
static int ct(char **out, char **err, const char *fmt, ...)
{
	char *args, *tool = realpath(th_tool("crypt-tool"), NULL);
	va_list ap;
	int rc;

	cr_assert(tool, "crypt-tool not built");
	va_start(ap, fmt);
	cr_assert(vasprintf(&args, fmt, ap) >= 0);
	va_end(ap);
	rc = th_sh(out, err, "cd '%s' && %s'%s' %s", dir,
		   strstr(args, "<") || strstr(args, "|") ? "" : "</dev/null ",
		   tool, args);
	free(args);
	free(tool);
	return rc;
}

static void must(int rc, char *err, const char *what)
{
	cr_assert_eq(rc, 0, "%s: exit %d: %s", what, rc, err ? err : "");
}

static uint64_t fsize(const char *path)
{
	struct stat st;

	cr_assert_eq(stat(path, &st), 0, "%s", path);
	return (uint64_t)st.st_size;
}

static bool exists(const char *name)
{
	char *path = p(name);

	return access(path, F_OK) == 0;
}

/* No temporary file left beside an output that failed. */
static bool no_leftovers(void)
{
	char *out = NULL;
	bool none;

	th_sh(&out, NULL, "ls -a '%s' | grep -c tmp || true", dir);
	none = out && atoi(out) == 0;
	return none;
}

/* ---- an independent decryption: OpenSSL per sector, IVs by hand ---- */

static void iv_for(const char *cipher, const uint8_t *key, size_t key_len,
		   uint64_t ivs, uint8_t iv[16])
{
	memset(iv, 0, 16);
	for (int i = 0; i < (strstr(cipher, "plain64") ? 8 : 4); i++)
		iv[i] = (uint8_t)(ivs >> (8 * i));
	if (strstr(cipher, "essiv")) {
		uint8_t salt[32];
		EVP_CIPHER_CTX *e = EVP_CIPHER_CTX_new();
		int l;

		EVP_Digest(key, key_len, salt, NULL, EVP_sha256(), NULL);
		EVP_EncryptInit_ex(e, EVP_aes_256_ecb(), NULL, salt, NULL);
		EVP_CIPHER_CTX_set_padding(e, 0);
		EVP_EncryptUpdate(e, iv, &l, iv, 16);
		EVP_CIPHER_CTX_free(e);
	}
}

/*
 * n bytes of the mapped device from an image: data at offset, sector s
 * with IV sector s * (ss/512) + skip (>> log2(ss/512) with large IVs).
 */
static uint8_t *openssl_decrypt(const char *path, const char *cipher,
				const uint8_t *key, size_t key_len,
				unsigned int ss, uint64_t offset, uint64_t skip,
				bool large, size_t n)
{
	size_t len;
	uint8_t *file = th_read_file(path, &len), *out = malloc(n);
	bool xts = strstr(cipher, "xts") != NULL;
	const EVP_CIPHER *evp =
		xts ? (key_len == 32 ? EVP_aes_128_xts() : EVP_aes_256_xts()) :
		      (key_len == 16 ? EVP_aes_128_cbc() :
		       key_len == 24 ? EVP_aes_192_cbc() : EVP_aes_256_cbc());

	cr_assert_geq(len, offset + n);
	cr_assert_eq(n % ss, 0);
	for (size_t s = 0; s < n / ss; s++) {
		uint64_t ivs = s * (ss / 512) + skip;
		EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
		uint8_t iv[16];
		int l;

		if (large)
			ivs /= ss / 512;
		iv_for(cipher, key, key_len, ivs, iv);
		cr_assert(EVP_DecryptInit_ex(ctx, evp, NULL, key, iv));
		EVP_CIPHER_CTX_set_padding(ctx, 0);
		cr_assert(EVP_DecryptUpdate(ctx, out + s * ss, &l,
					    file + offset + s * ss, (int)ss));
		EVP_CIPHER_CTX_free(ctx);
	}
	free(file);
	return out;
}

static void expect_prefix(const uint8_t *got, const char *payload, size_t n,
			  const char *what)
{
	size_t len;
	uint8_t *want = th_read_file(payload, &len);

	cr_assert_geq(len, n);
	cr_expect_eq(memcmp(got, want, n), 0, "%s: payload differs", what);
	free(want);
}

/* ---- LUKS2 ---- */

/* libcryptsetup's view: passphrase accepted, the volume key, geometry. */
static size_t luks2_key(const char *hdr, const char *data, uint8_t vk[64],
			uint64_t *offset, unsigned int *ss, const char **cipher)
{
	static char spec[64];
	struct crypt_device *cd = NULL;
	size_t vk_len = 64;

	if (data)
		cr_assert_eq(crypt_init_data_device(&cd, hdr, data), 0);
	else
		cr_assert_eq(crypt_init(&cd, hdr), 0);
	cr_assert_eq(crypt_load(cd, CRYPT_LUKS2, NULL), 0, "crypt_load %s", hdr);
	cr_expect_geq(crypt_activate_by_passphrase(cd, NULL, CRYPT_ANY_SLOT,
						   PASS, strlen(PASS), 0), 0);
	cr_expect_lt(crypt_activate_by_passphrase(cd, NULL, CRYPT_ANY_SLOT,
						  "wrong", 5, 0), 0);
	cr_assert_geq(crypt_volume_key_get(cd, CRYPT_ANY_SLOT, (char *)vk,
					   &vk_len, PASS, strlen(PASS)), 0);
	*offset = crypt_get_data_offset(cd) * 512;
	*ss = (unsigned int)crypt_get_sector_size(cd);
	snprintf(spec, sizeof(spec), "%s-%s", crypt_get_cipher(cd),
		 crypt_get_cipher_mode(cd));
	*cipher = spec;
	crypt_free(cd);
	return vk_len;
}

struct luks_case {
	const char *cipher;	/* NULL: the default */
	unsigned int ss;	/* 0: the default (4096) */
	unsigned int bits;	/* 0: the default */
	bool argon;
};

static void luks2_round_trip(const struct luks_case *k)
{
	char *pay = p("pay"), *img = p("img"), *out = p("out"), *err = NULL;
	char opts[256];
	const size_t plen = (256u << 10) + 123;
	unsigned int ss, want_ss = k->ss ? k->ss : 4096;
	uint64_t off;
	const char *cipher;
	uint8_t vk[64], *got;
	size_t vk_len, n;

	th_write_random_file(pay, plen, 5);
	th_write_file(p("pw"), PASS, strlen(PASS));
	snprintf(opts, sizeof(opts), "%s%s %s%.0u %s%.0u", k->cipher ? "--cipher " : "",
		 k->cipher ? k->cipher : "", k->ss ? "--sector-size " : "", k->ss,
		 k->bits ? "--key-size " : "", k->bits);
	unlink(img);
	must(ct(NULL, &err, "format %s %s --key-file pw --data-from pay img",
		k->argon ? CHEAP_ARGON : CHEAP, opts), err, "format");
	free(err);
	{
		struct stat st;

		cr_assert_eq(stat(img, &st), 0);
		cr_expect_eq(st.st_mode & 0777, 0600, "a new image is 0600");
	}
	vk_len = luks2_key(img, NULL, vk, &off, &ss, &cipher);
	cr_expect_eq(ss, want_ss);
	cr_expect_eq(off, 16u << 20, "luksFormat's data offset");
	cr_expect_str_eq(cipher, k->cipher ? k->cipher : "aes-xts-plain64");
	cr_expect_eq(vk_len, k->bits ? k->bits / 8 :
		     k->cipher && strstr(k->cipher, "cbc") ? 32 : 64);
	n = (plen + ss - 1) / ss * ss;
	cr_expect_eq(fsize(img), off + n, "--device-size auto by default");
	got = openssl_decrypt(img, cipher, vk, vk_len, ss, off, 0, false, n);
	expect_prefix(got, pay, plen, cipher);
	free(got);
	err = NULL;
	must(ct(NULL, &err, "decrypt --key-file pw img out"), err, "decrypt");
	free(err);
	got = th_read_file(out, &n);
	cr_expect_eq(n, (plen + ss - 1) / ss * ss);
	expect_prefix(got, pay, plen, "crypt-tool decrypt");
	free(got);
}

Test(crypt_tool, luks2_every_cipher_libcryptsetup, .init = setup,
     .fini = teardown, .timeout = 120)
{
	static const struct luks_case cases[] = {
		{ NULL, 0, 0, false },
		{ "aes-xts-plain64", 512, 256, false },
		{ "aes-xts-plain", 4096, 0, false },
		{ "aes-cbc-essiv:sha256", 512, 0, false },
		{ "aes-cbc-plain64", 4096, 128, false },
		{ "aes-xts-plain64", 4096, 0, true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		luks2_round_trip(&cases[i]);
}

/* Our dump prints what luksDump prints, on our header and on luksFormat's. */
Test(crypt_tool, dump_matches_luksdump, .init = setup, .fini = teardown,
     .timeout = 60)
{
	char *ours = NULL, *theirs = NULL, *err = NULL;

	th_write_random_file(p("pay"), 10000, 1);
	th_write_file(p("pw"), PASS, strlen(PASS));
	must(ct(NULL, &err, "format " CHEAP_ARGON " --key-file pw --label L1 "
		"--subsystem S1 --uuid 01234567-89ab-cdef-0123-456789abcdef "
		"--data-from pay a.img"), err, "format");
	free(err);
	must(th_sh(NULL, &err, "cd '%s' && truncate -s 20M b.img && cryptsetup "
		   "luksFormat -q --type luks2 " CHEAP " --key-file pw b.img", dir),
	     err, "luksFormat");
	free(err);
	for (int i = 0; i < 2; i++) {
		const char *img = i ? "b.img" : "a.img";

		for (int json = 0; json < 2; json++) {
			must(ct(&ours, NULL, "dump %s %s", json ? "--json" : "", img),
			     NULL, "dump");
			must(th_sh(&theirs, NULL, "cd '%s' && cryptsetup luksDump %s %s",
				   dir, json ? "--dump-json-metadata" : "", img),
			     NULL, "luksDump");
			cr_expect_str_eq(ours, theirs, "%s json %d", img, json);
			free(ours);
			free(theirs);
		}
	}
	must(ct(&ours, NULL, "dump a.img"), NULL, "dump");
	cr_expect(strstr(ours, "Label:         \tL1\n"));
	cr_expect(strstr(ours, "01234567-89ab-cdef-0123-456789abcdef"));
	free(ours);
}

/* --volume-key-file, --key-slot, the sizes and names: what libcryptsetup
 * reads back; progress as JSON lines on stderr. */
Test(crypt_tool, luks2_options_libcryptsetup, .init = setup, .fini = teardown,
     .timeout = 60)
{
	struct crypt_device *cd = NULL;
	char *err = NULL, vk[64];
	size_t vk_len = sizeof(vk), len;
	uint8_t *want;

	th_write_random_file(p("pay"), 200000, 80);
	th_write_random_file(p("vk"), 64, 81);
	th_write_file(p("pw"), PASS, strlen(PASS));
	must(ct(NULL, &err, "format " CHEAP " --key-file pw --volume-key-file vk "
		"--key-slot 5 --luks2-metadata-size 32k --luks2-keyslots-size 1m "
		"--offset 4096 --progress-json --data-from pay img"), err, "format");
	cr_expect(strstr(err, "{") && strstr(err, "}"), "no progress JSON: %s", err);
	free(err);
	cr_assert_eq(crypt_init(&cd, p("img")), 0);
	cr_assert_eq(crypt_load(cd, CRYPT_LUKS2, NULL), 0);
	cr_expect_eq(crypt_activate_by_passphrase(cd, NULL, CRYPT_ANY_SLOT, PASS,
						  strlen(PASS), 0), 5);
	cr_assert_eq(crypt_volume_key_get(cd, CRYPT_ANY_SLOT, vk, &vk_len, PASS,
					  strlen(PASS)), 5);
	want = th_read_file(p("vk"), &len);
	cr_expect_eq(memcmp(vk, want, 64), 0, "not the --volume-key-file key");
	free(want);
	cr_expect_eq(crypt_get_data_offset(cd), 4096);
	{
		uint64_t md = 0, ks = 0;

		cr_assert_eq(crypt_get_metadata_size(cd, &md, &ks), 0);
		cr_expect_eq(md, 32768);
		cr_expect_eq(ks, 1u << 20);
	}
	crypt_free(cd);
	cr_expect_eq(fsize(p("img")), 4096 * 512 + 200704);
}

/* cryptsetup changes our header; the tool reads what it made of it. */
Test(crypt_tool, cryptsetup_addkey_changekey_repair, .init = setup,
     .fini = teardown, .timeout = 120)
{
	char *err = NULL;

	th_write_random_file(p("pay"), 100000, 2);
	th_write_file(p("pw"), PASS, strlen(PASS));
	th_write_file(p("pw2"), "second", 6);
	th_write_file(p("pw3"), "third", 5);
	must(ct(NULL, &err, "format " CHEAP " --key-file pw --data-from pay img"),
	     err, "format");
	free(err);
	must(th_sh(NULL, &err, "cd '%s' && cp img c && cryptsetup luksAddKey -q "
		   CHEAP " --key-file pw c pw2 && cryptsetup luksChangeKey -q "
		   CHEAP " --key-file pw c pw3 && cryptsetup repair -q c", dir),
	     err, "cryptsetup");
	free(err);
	for (int i = 0; i < 3; i++) {
		const char *kf[] = { "pw2", "pw3", "pw" };

		err = NULL;
		if (i < 2) {
			must(ct(NULL, &err, "decrypt --key-file %s c out%d", kf[i], i),
			     err, kf[i]);
			cr_expect(th_sh(NULL, NULL, "cd '%s' && cmp -n 100000 out%d pay",
					dir, i) == 0);
		} else {
			cr_expect_eq(ct(NULL, &err, "decrypt --key-file pw c out2"), 2,
				     "the changed passphrase still opens");
		}
		free(err);
	}
}

/* A detached header: cryptsetup's offline decryption gives the payload. */
Test(crypt_tool, detached_header_reencrypt_decrypt, .init = setup,
     .fini = teardown, .timeout = 120)
{
	char *err = NULL;
	uint8_t vk[64], *got;
	uint64_t off;
	unsigned int ss;
	const char *cipher;
	size_t vk_len;

	th_write_random_file(p("pay"), 1u << 20, 3);
	th_write_file(p("pw"), PASS, strlen(PASS));
	must(ct(NULL, &err, "format " CHEAP " --key-file pw --header hdr "
		"--data-from pay data"), err, "format");
	free(err);
	cr_expect_eq(fsize(p("data")), 1u << 20, "no header in the data");
	vk_len = luks2_key(p("hdr"), p("data"), vk, &off, &ss, &cipher);
	cr_expect_eq(off, 0);
	got = openssl_decrypt(p("data"), cipher, vk, vk_len, ss, 0, 0, false,
			      1u << 20);
	expect_prefix(got, p("pay"), 1u << 20, "detached");
	free(got);
	err = NULL;
	must(th_sh(NULL, &err, "cd '%s' && cryptsetup reencrypt -q --decrypt "
		   "--header hdr --force-offline-reencrypt --key-file pw data",
		   dir), err, "reencrypt --decrypt");
	free(err);
	cr_expect(th_files_equal(p("data"), p("pay")));
}

/* cryptsetup's userspace encryption of a file decrypts with ours. */
Test(crypt_tool, decrypts_cryptsetup_reencrypt, .init = setup,
     .fini = teardown, .timeout = 120)
{
	const uint64_t size = 36u << 20, keep = size - (32u << 20);
	char *err = NULL;

	th_write_random_file(p("orig"), size, 4);
	th_write_file(p("pw"), PASS, strlen(PASS));
	must(th_sh(NULL, &err, "cd '%s' && cp orig img && cryptsetup reencrypt "
		   "-q --encrypt --type luks2 --sector-size 4096 "
		   "--reduce-device-size 32M " CHEAP " --key-file pw img", dir),
	     err, "reencrypt --encrypt");
	free(err);
	err = NULL;
	must(ct(NULL, &err, "decrypt --key-file pw img out"), err, "decrypt");
	free(err);
	cr_expect_eq(th_sh(NULL, NULL, "cd '%s' && cmp -n %llu out orig", dir,
			   (unsigned long long)keep), 0);
}

/* ---- plain ---- */

/* The open line's options, as cryptsetup would take them. */
struct open_line {
	char cipher[64], hash[32];
	unsigned int bits, ss;
	uint64_t offset, skip, kf_offset, kf_size;
	bool large, has_hash;
};

static void parse_open_line(const char *text, struct open_line *o)
{
	const char *s = strstr(text, "cryptsetup open --type plain ");
	char *line, *tok, *save;

	memset(o, 0, sizeof(*o));
	cr_assert(s, "no open line in: %s", text);
	line = strndup(s, strcspn(s, "\n"));
	for (tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *v = NULL;

		if (!strcmp(tok, "--iv-large-sectors")) {
			o->large = true;
			continue;
		}
		if (strncmp(tok, "--", 2) || !(v = strtok_r(NULL, " ", &save)))
			continue;
		if (!strcmp(tok, "--cipher"))
			snprintf(o->cipher, sizeof(o->cipher), "%s", v);
		else if (!strcmp(tok, "--hash"))
			o->has_hash = snprintf(o->hash, sizeof(o->hash), "%s", v) > 0;
		else if (!strcmp(tok, "--key-size"))
			o->bits = (unsigned int)atoi(v);
		else if (!strcmp(tok, "--sector-size"))
			o->ss = (unsigned int)atoi(v);
		else if (!strcmp(tok, "--offset"))
			o->offset = strtoull(v, NULL, 10);
		else if (!strcmp(tok, "--skip"))
			o->skip = strtoull(v, NULL, 10);
		else if (!strcmp(tok, "--keyfile-offset"))
			o->kf_offset = strtoull(v, NULL, 10);
		else if (!strcmp(tok, "--keyfile-size"))
			o->kf_size = strtoull(v, NULL, 10);
	}
	free(line);
	cr_assert(o->cipher[0] && o->bits && o->ss, "incomplete: %s", s);
}

/*
 * The key cryptsetup 2.6.1 `open --type plain` makes of the line: its key
 * file read by libcryptsetup as action_open_plain reads it (a regular file:
 * no hash, exactly key-size bytes; stdin: --keyfile-size, hashed), then
 * crypt_format(CRYPT_PLAIN) + crypt_volume_key_get.
 */
static size_t plain_key(const struct open_line *o, const char *key_path,
			bool regular, uint8_t vk[64])
{
	struct crypt_device *cd = NULL;
	struct crypt_params_plain pp = {
		/* a regular key file is the key itself; libcryptsetup gives
		 * the key of an unhashed plain device only as "plain" */
		.hash = regular ? "plain" : o->hash, .offset = o->offset,
		.skip = o->skip, .sector_size = o->ss,
	};
	char *key = NULL, mode[64];
	size_t key_len = 0, vk_len = o->bits / 8;
	const char *dash = strchr(o->cipher, '-');

	cr_assert(regular || o->has_hash, "a hashed key without --hash");
	cr_assert_eq(crypt_init(&cd, NULL), 0);
	cr_assert_eq(crypt_keyfile_device_read(cd, key_path, &key, &key_len,
					       o->kf_offset,
					       regular ? vk_len : o->kf_size, 0),
		     0);
	snprintf(mode, sizeof(mode), "%s", dash + 1);
	cr_assert_eq(crypt_format(cd, CRYPT_PLAIN, "aes", mode, NULL, NULL,
				  vk_len, &pp), 0);
	cr_assert_eq(crypt_volume_key_get(cd, CRYPT_ANY_SLOT, (char *)vk,
					  &vk_len, key, key_len), 0);
	crypt_safe_free(key);
	crypt_free(cd);
	return vk_len;
}

struct plain_case {
	const char *opts;	/* crypt-tool options */
	const char *key;	/* "regular": --key-file kf; else stdin */
};

static void plain_round_trip(const struct plain_case *k, int idx)
{
	char *err = NULL, *kf = p("kf"), *img = p("img");
	const size_t plen = 70000;
	struct open_line o;
	uint8_t vk[64], *got;
	size_t vk_len, n;
	bool regular = !strcmp(k->key, "regular");

	th_write_random_file(p("pay"), plen, 10 + (uint64_t)idx);
	th_write_random_file(kf, 300, 20 + (uint64_t)idx);
	unlink(img);
	if (regular)
		must(ct(NULL, &err, "format --type plain %s --key-file kf "
			"--data-from pay img", k->opts), err, k->opts);
	else
		must(ct(NULL, &err, "format --type plain %s %s --data-from pay "
			"img < kf", k->opts, k->key), err, k->opts);
	parse_open_line(err, &o);
	free(err);
	vk_len = plain_key(&o, kf, regular, vk);
	n = (plen + o.ss - 1) / o.ss * o.ss;
	cr_expect_eq(fsize(img), o.offset * 512 + n);
	got = openssl_decrypt(img, o.cipher, vk, vk_len, o.ss, o.offset * 512,
			      o.skip, o.large, n);
	expect_prefix(got, p("pay"), plen, k->opts);
	free(got);
	err = NULL;
	if (regular)
		must(ct(NULL, &err, "decrypt --type plain %s --key-file kf img out",
			k->opts), err, "decrypt");
	else
		must(ct(NULL, &err, "decrypt --type plain %s %s img out < kf",
			k->opts, k->key), err, "decrypt");
	free(err);
	got = th_read_file(p("out"), &n);
	expect_prefix(got, p("pay"), plen, "plain decrypt");
	free(got);
}

Test(crypt_tool, plain_matches_libcryptsetup, .init = setup, .fini = teardown,
     .timeout = 60)
{
	static const struct plain_case cases[] = {
		{ "", "regular" },
		/* --hash and --keyfile-size are ignored with a key file */
		{ "--hash sha512 --keyfile-size 7 --keyfile-offset 13 --key-size 512",
		  "regular" },
		{ "--cipher aes-xts-plain --sector-size 4096 --offset 16 --skip 24",
		  "regular" },
		{ "--cipher aes-cbc-essiv:sha256 --key-size 256 --offset 3 --skip 5",
		  "regular" },
		{ "--cipher aes-cbc-plain64 --key-size 128 --sector-size 2048 "
		  "--iv-large-sectors --skip 8", "regular" },
		/* stdin and the terminal are hashed */
		{ "--hash sha256 --keyfile-size 100 --keyfile-offset 7",
		  "--key-file -" },
		{ "--hash ripemd160 --cipher aes-cbc-essiv:sha256 --key-size 256 "
		  "--keyfile-size 64", "--key-file -" },
		{ "--hash plain --keyfile-size 64 --key-size 512", "--key-file -" },
		{ "--hash sha512 --sector-size 4096 --iv-large-sectors --offset 8",
		  "--key-file -" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		plain_round_trip(&cases[i], (int)i);
}

/* A line of stdin (no --key-file) is the passphrase, newline excluded. */
Test(crypt_tool, plain_stdin_line, .init = setup, .fini = teardown)
{
	char *err = NULL;
	struct open_line o;
	uint8_t vk[64], *got;
	size_t vk_len = 32;
	struct crypt_device *cd = NULL;
	struct crypt_params_plain pp = { .hash = "sha256" };

	th_write_random_file(p("pay"), 4096, 30);
	must(ct(NULL, &err, "format --type plain --data-from pay img <<'EOF'\n"
		PASS "\nnot this\nEOF"), err, "format");
	parse_open_line(err, &o);
	free(err);
	cr_expect_str_eq(o.hash, "sha256");
	cr_assert_eq(crypt_init(&cd, NULL), 0);
	cr_assert_eq(crypt_format(cd, CRYPT_PLAIN, "aes", "xts-plain64", NULL,
				  NULL, 32, &pp), 0);
	cr_assert_eq(crypt_volume_key_get(cd, CRYPT_ANY_SLOT, (char *)vk,
					  &vk_len, PASS, strlen(PASS)), 0);
	crypt_free(cd);
	got = openssl_decrypt(p("img"), "aes-xts-plain64", vk, vk_len, 512, 0,
			      0, false, 4096);
	expect_prefix(got, p("pay"), 4096, "stdin line");
	free(got);
}

/* The bytes never depend on --threads. */
Test(crypt_tool, threads_same_bytes, .init = setup, .fini = teardown)
{
	char *err = NULL;

	th_write_random_file(p("pay"), 3u << 20, 40);
	th_write_random_file(p("kf"), 64, 41);
	for (int t = 1; t <= 2; t++) {
		must(ct(NULL, &err, "format --type plain --key-file kf --threads %d "
			"--data-from pay img%d", t, t), err, "format");
		free(err);
		err = NULL;
	}
	cr_expect(th_files_equal(p("img1"), p("img2")));
}

/* --wipe: the mapping past the payload decrypts to zeros; without it the
 * area is left alone (an existing image keeps its bytes there). */
Test(crypt_tool, wipe_and_in_place, .init = setup, .fini = teardown)
{
	char *err = NULL;
	uint8_t *got, *old;
	size_t n;

	th_write_random_file(p("pay"), 5000, 50);
	th_write_random_file(p("kf"), 32, 51);
	th_write_random_file(p("img"), 1u << 20, 52);
	old = th_read_file(p("img"), &n);
	must(ct(NULL, &err, "format --type plain --key-file kf --key-size 128 "
		"--cipher aes-cbc-plain64 --batch-mode --data-from pay img"), err,
	     "in place");
	free(err);
	cr_expect_eq(fsize(p("img")), 1u << 20, "an existing file keeps its size");
	got = th_read_file(p("img"), &n);
	cr_expect_eq(memcmp(got + 5120, old + 5120, n - 5120), 0,
		     "past the payload: untouched");
	free(got);
	free(old);
	err = NULL;
	must(ct(NULL, &err, "format --type plain --key-file kf --wipe "
		"--device-size 64K --data-from pay w"), err, "wipe");
	free(err);
	err = NULL;
	must(ct(NULL, &err, "decrypt --type plain --key-file kf w out"), err,
	     "decrypt");
	free(err);
	got = th_read_file(p("out"), &n);
	cr_assert_eq(n, 65536);
	expect_prefix(got, p("pay"), 5000, "wipe");
	for (size_t i = 5000; i < n; i++)
		cr_assert_eq(got[i], 0, "byte %zu after the payload", i);
	free(got);
}

/* In place over a LUKS2 image with larger header copies: no old secondary
 * header survives (its offset lies past our header, in data we do not
 * write without --wipe). */
Test(crypt_tool, in_place_clears_old_secondary, .init = setup,
     .fini = teardown, .timeout = 60)
{
	char *err = NULL;
	uint8_t magic[6];
	int fd;

	th_write_random_file(p("pay"), 100000, 90);
	th_write_file(p("pw"), PASS, strlen(PASS));
	must(th_sh(NULL, &err, "cd '%s' && truncate -s 20M img && cryptsetup "
		   "luksFormat -q --type luks2 " CHEAP " --key-file pw "
		   "--luks2-metadata-size 4m --luks2-keyslots-size 1m img", dir),
	     err, "luksFormat");
	free(err);
	err = NULL;
	must(ct(NULL, &err, "format --batch-mode " CHEAP " --key-file pw "
		"--offset 4096 --data-from pay img"), err, "format");
	free(err);
	fd = open(p("img"), O_RDONLY);
	cr_assert(fd >= 0);
	cr_assert_eq(pread(fd, magic, sizeof(magic), 4u << 20), 6);
	close(fd);
	cr_expect_neq(memcmp(magic, "SKUL", 4), 0, "the old secondary header is still there");
	cr_expect_eq(th_sh(NULL, NULL, "cd '%s' && cryptsetup luksDump img | "
			   "grep -q 'Metadata area: .16384'", dir), 0);
}

/* size prints what --device-size auto makes. */
Test(crypt_tool, size_is_auto, .init = setup, .fini = teardown)
{
	char *out = NULL, *err = NULL;

	th_write_random_file(p("pay"), 12345, 60);
	th_write_file(p("pw"), PASS, strlen(PASS));
	must(ct(&out, NULL, "size --payload-size 12345 --sector-size 512 "
		"--luks2-metadata-size 64k"), NULL, "size");
	must(ct(NULL, &err, "format " CHEAP " --key-file pw --sector-size 512 "
		"--luks2-metadata-size 64k --data-from pay img"), err, "format");
	cr_expect_eq(strtoull(out, NULL, 10), fsize(p("img")));
	free(err);
	must(ct(&out, NULL, "size --type plain --payload-size 12345 --offset 8 "
		"--sector-size 4096"), NULL, "size");
	cr_expect_str_eq(out, "20480\n");
}

/* ---- bad input ---- */

static void expect_fail(int want, const char *out_name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Exit code want, a message, no output file, no temporary left. */
static void expect_fail(int want, const char *out_name, const char *fmt, ...)
{
	char *args, *err = NULL, *out = NULL;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	cr_assert(vasprintf(&args, fmt, ap) >= 0);
	va_end(ap);
	rc = ct(&out, &err, "%s", args);
	cr_expect_eq(rc, want, "%s: exit %d, wanted %d: %s", args, rc, want, err);
	cr_expect(err && strstr(err, "crypt-tool: "), "%s: no message", args);
	cr_expect(!strstr(err, PASS) && !strstr(out, PASS), "secret printed");
	cr_expect(!out_name || !exists(out_name), "%s: %s left", args, out_name);
	cr_expect(no_leftovers(), "%s: temporary file left", args);
	free(args);
	free(err);
}

Test(crypt_tool, bad_input, .init = setup, .fini = teardown, .timeout = 60)
{
	char before[65], after[65], hb[65], ha[65];
	char *err = NULL;

	th_write_random_file(p("pay"), 100000, 70);
	th_write_file(p("pw"), PASS, strlen(PASS));
	th_write_file(p("bad"), "wrong", 5);
	th_write_file(p("short"), "0123456789", 10);
	th_write_random_file(p("kf"), 64, 71);
	must(ct(NULL, &err, "format " CHEAP " --key-file pw --data-from pay img"),
	     err, "format");
	free(err);
	th_sha256_file(p("img"), before);
	th_sha256_file(p("pay"), hb);
	/* wrong passphrase: 2 */
	expect_fail(2, "out", "decrypt --key-file bad img out");
	expect_fail(2, "out", "--json decrypt --key-file bad img out");
	/* key file too short, unsupported cipher, same file: 1 */
	expect_fail(1, "p.img", "format --type plain --key-file short "
		    "--data-from pay p.img");
	expect_fail(1, "p.img", "format --cipher serpent-xts-plain64 "
		    "--key-file pw --data-from pay p.img");
	expect_fail(1, NULL, "format --key-file pw --data-from pay pay");
	expect_fail(1, "out", "decrypt --key-file pw img img");
	/* payload too large for the size asked: 4 */
	expect_fail(4, "p.img", "format --type plain --key-file kf "
		    "--device-size 64K --data-from pay p.img");
	expect_fail(4, "p.img", "format " CHEAP " --key-file pw --device-size 1M "
		    "--data-from pay p.img");
	/* a file that is no image, truncated, both copies damaged: 4 */
	expect_fail(4, "out", "decrypt --key-file pw pay out");
	th_sh(NULL, NULL, "cd '%s' && head -c 20000 img > trunc && cp img dmg && "
	      "printf XXXX | dd of=dmg bs=1 seek=200 conv=notrunc && "
	      "printf XXXX | dd of=dmg bs=1 seek=16584 conv=notrunc && "
	      "cp img one && printf XXXX | dd of=one bs=1 seek=200 conv=notrunc && "
	      "cp img slot && dd if=/dev/zero of=slot bs=4096 seek=8 count=60 "
	      "conv=notrunc", dir);
	expect_fail(4, "out", "decrypt --key-file pw trunc out");
	expect_fail(4, "out", "decrypt --key-file pw dmg out");
	expect_fail(4, NULL, "dump trunc");
	expect_fail(4, NULL, "dump dmg");
	/* a damaged keyslot: the key no longer unlocks (2) */
	expect_fail(2, "out", "decrypt --key-file pw slot out");
	/* one damaged copy: the other opens */
	err = NULL;
	must(ct(NULL, &err, "decrypt --key-file pw one out"), err, "one copy");
	cr_expect(strstr(err, "secondary"), "%s", err);
	free(err);
	th_sha256_file(p("img"), after);
	th_sha256_file(p("pay"), ha);
	cr_expect_str_eq(before, after, "the image changed");
	cr_expect_str_eq(hb, ha, "the payload changed");
}
#endif
