// SPDX-License-Identifier: MIT
/*
 * verity-tool command-line tests (suite "verity_cli"): pairwise coverage
 * of the compatibility matrix of issue 3 against veritysetup (same stdout,
 * same root hash, every byte of the hash image), one image of a few
 * hundred MiB, inputs veritysetup rejects, verify's exit codes and
 * reports, dump, size, --seed, --json, --root-hash-file and locking.
 * Tests that need veritysetup are skipped when it is not installed.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "tests/support/helpers.h"

#define UUID "12345678-1234-1234-1234-123456789abc"
#define SALT32 "000102030405060708090a0b0c0d0e0f" \
	       "101112131415161718191a1b1c1d1e1f"
#define VS "PATH=$PATH:/usr/sbin:/sbin veritysetup"

static void need_veritysetup(void)
{
	if (!th_have_cmd("veritysetup"))
		cr_skip("veritysetup (cryptsetup-bin) is not installed");
}

static const char *vt(void)
{
	return th_tool("verity-tool");
}

/* Random file; big ones are mostly holes (1 MiB of data every 8 MiB). */
static void make_data(const char *path, uint64_t size, uint64_t seed)
{
	size_t chunk = 1 << 20;
	uint8_t *buf = malloc(chunk);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	bool sparse = size > (32u << 20);

	cr_assert(buf && fd >= 0);
	for (uint64_t off = 0; off < size; off += chunk) {
		size_t len = size - off < chunk ? (size_t)(size - off) : chunk;

		if (sparse && (off / chunk) % 8)
			continue;
		th_fill_random(buf, len, seed + off);
		cr_assert_eq(pwrite(fd, buf, len, (off_t)off), (ssize_t)len);
	}
	cr_assert_eq(ftruncate(fd, (off_t)size), 0);
	close(fd);
	free(buf);
}

static void salt_hex(char *out, size_t len, uint64_t seed)
{
	uint8_t b[256];

	if (!len) {
		strcpy(out, "-");
		return;
	}
	th_fill_random(b, len, seed);
	for (size_t i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static bool line_value(const char *out, const char *key, char *val,
		       size_t size)
{
	const char *p = strstr(out, key);
	size_t n;

	if (!p || !(p = strchr(p, '\t')))
		return false;
	p++;
	n = strcspn(p, "\n");
	if (n >= size)
		return false;
	memcpy(val, p, n);
	val[n] = '\0';
	return true;
}

/* ---- pairwise coverage against veritysetup ---- */

enum {
	F_HASH, F_DBS, F_HBS, F_FORMAT, F_SB, F_SALT, F_LAYOUT, F_DBOPT,
	F_COUNT, NF
};
enum { L_SEP, L_SEP_OFFSET, L_SAME };

static const char *const hashes[] = { "sha1", "sha256", "sha512", "sha224",
				      "sha384", "md5", "sha3-256", "sm3" };
static const uint32_t bsizes[] = { 512, 1024, 4096, 65536 };
static const size_t salts[] = { 0, 1, 32, 33, 255, 256 };
static const uint64_t counts[] = { 1, 2, 127, 128, 129, 16383 };
/* values of each factor, cheapest first (ties pick the cheapest) */
static const int nvals[NF] = { 8, 4, 4, 2, 2, 6, 3, 2, 6 };

/* The tree on the data file needs --data-blocks (veritysetup counts the
 * whole file otherwise, which always overlaps). */
static bool row_ok(const int *row)
{
	return !(row[F_LAYOUT] == L_SAME && row[F_DBOPT] == 0);
}

struct cover {
	bool c[NF][8][NF][8];
};

static bool pair_valid(int f, int v, int g, int w)
{
	int row[NF];

	for (int i = 0; i < NF; i++)
		row[i] = 1;	/* neutral values */
	row[f] = v;
	row[g] = w;
	return row_ok(row);
}

/*
 * Greedy (AETG-like) covering array: start each row from an uncovered
 * pair, fill the other factors with the value that covers most uncovered
 * pairs, then mark the row's pairs.
 */
static int pairwise(int rows[][NF], int max)
{
	static struct cover cv;
	int n = 0;

	memset(&cv, 0, sizeof(cv));
	for (;;) {
		int f0 = -1, v0 = 0, g0 = 0, w0 = 0, row[NF];

		for (int f = 0; f < NF && f0 < 0; f++)
		for (int g = f + 1; g < NF && f0 < 0; g++)
		for (int v = 0; v < nvals[f] && f0 < 0; v++)
		for (int w = 0; w < nvals[g] && f0 < 0; w++)
			if (!cv.c[f][v][g][w] && pair_valid(f, v, g, w)) {
				f0 = f;
				v0 = v;
				g0 = g;
				w0 = w;
			}
		if (f0 < 0 || n == max)
			break;
		for (int f = 0; f < NF; f++)
			row[f] = -1;
		row[f0] = v0;
		row[g0] = w0;
		for (int f = 0; f < NF; f++) {
			int best = -1, best_gain = -1;

			if (row[f] >= 0)
				continue;
			for (int v = 0; v < nvals[f]; v++) {
				int gain = 0;

				row[f] = v;
				if (row[F_LAYOUT] >= 0 && row[F_DBOPT] >= 0 &&
				    !row_ok(row))
					continue;
				for (int g = 0; g < NF; g++) {
					if (g == f || row[g] < 0)
						continue;
					gain += g < f ? !cv.c[g][row[g]][f][v]
						      : !cv.c[f][v][g][row[g]];
				}
				if (gain > best_gain) {
					best_gain = gain;
					best = v;
				}
			}
			row[f] = best;
		}
		for (int f = 0; f < NF; f++)
			for (int g = f + 1; g < NF; g++)
				cv.c[f][row[f]][g][row[g]] = true;
		memcpy(rows[n++], row, sizeof(row));
	}
	return n;
}

Test(verity_cli, pairwise_matrix_vs_veritysetup, .timeout = 240)
{
	static int rows[200][NF];
	char *dir = th_mkdtemp(), *a = th_path(dir, "a");
	char *b = th_path(dir, "b");
	int n = pairwise(rows, 200);

	need_veritysetup();
	cr_assert_lt(n, 200);
	cr_log_info("pairwise: %d rows", n);
	cr_assert_eq(mkdir(a, 0755), 0);
	cr_assert_eq(mkdir(b, 0755), 0);
	for (int r = 0; r < n; r++) {
		const int *row = rows[r];
		uint32_t dbs = bsizes[row[F_DBS]], hbs = bsizes[row[F_HBS]];
		uint64_t count = counts[row[F_COUNT]];
		uint64_t fblocks = count + (row[F_DBOPT] ? 3 : 0);
		uint64_t fsize = fblocks * dbs + 100, off = 0;
		bool same = row[F_LAYOUT] == L_SAME, sb = !row[F_SB];
		char salt[2 * 256 + 1], opts[1024], *oa, *ob, *ea, *eb;
		char *da = th_path(a, "d"), *db = th_path(b, "d");
		char root[132];
		const char *h = same ? "d" : "h";
		size_t len;
		int ra, rb;

		salt_hex(salt, salts[row[F_SALT]], (uint64_t)r);
		if (same)
			off = (fsize + hbs - 1) / hbs * hbs;
		else if (row[F_LAYOUT] == L_SEP_OFFSET)
			off = 8192;
		snprintf(opts, sizeof(opts),
			 "--hash %s --data-block-size %u --hash-block-size %u "
			 "--format %d --salt %s%s",
			 hashes[row[F_HASH]], dbs, hbs, row[F_FORMAT], salt,
			 sb ? " --uuid " UUID : " --no-superblock");
		len = strlen(opts);
		if (off)
			len += (size_t)snprintf(opts + len, sizeof(opts) - len,
						" --hash-offset %llu",
						(unsigned long long)off);
		if (row[F_DBOPT])
			snprintf(opts + len, sizeof(opts) - len,
				 " --data-blocks %llu",
				 (unsigned long long)count);
		make_data(da, fsize, (uint64_t)r * 1000003);
		make_data(db, fsize, (uint64_t)r * 1000003);
		th_sh(NULL, NULL, "rm -f '%s/h' '%s/h'", a, b);

		ra = th_sh(&oa, &ea, "cd '%s' && " VS " format d %s %s", a, h,
			   opts);
		rb = th_sh(&ob, &eb,
			   "cd '%s' && '%s' format d %s %s --threads %d", b,
			   vt(), h, opts, 1 + r % 3);
		cr_assert_eq(ra, 0, "row %d: veritysetup %s: %s", r, opts, ea);
		cr_assert_eq(rb, 0, "row %d: verity-tool %s: %s", r, opts, eb);
		cr_expect_str_eq(ob, oa, "row %d (%s): output differs", r,
				 opts);
		cr_expect(th_sh(NULL, NULL, "cmp -s '%s/%s' '%s/%s'", a, h, b,
				h) == 0, "row %d (%s): hash image differs", r,
			  opts);
		cr_assert(line_value(ob, "Root hash:", root, sizeof(root)));
		free(oa);
		free(ea);
		free(ob);
		free(eb);
		rb = th_sh(NULL, &eb, "cd '%s' && '%s' verify d %s %s %s", b,
			   vt(), h, root, opts);
		cr_expect_eq(rb, 0, "row %d: verify: %s", r, eb);
		free(eb);
		free(da);
		free(db);
	}
	th_rmtree(dir);
	free(dir);
	free(a);
	free(b);
}

/* The generator really covers every valid pair (checked independently). */
Test(verity_cli, pairwise_generator_covers_all_pairs)
{
	static int rows[200][NF];
	int n = pairwise(rows, 200);

	for (int f = 0; f < NF; f++)
	for (int g = f + 1; g < NF; g++)
	for (int v = 0; v < nvals[f]; v++)
	for (int w = 0; w < nvals[g]; w++) {
		bool found = false;

		for (int r = 0; r < n && !found; r++)
			found = rows[r][f] == v && rows[r][g] == w;
		cr_expect(found || !pair_valid(f, v, g, w),
			  "pair %d=%d %d=%d not covered", f, v, g, w);
	}
	for (int r = 0; r < n; r++)
		cr_expect(row_ok(rows[r]), "row %d breaks a constraint", r);
	cr_expect_leq(n, 80, "%d rows", n);
}

Test(verity_cli, large_image_vs_veritysetup, .timeout = 120)
{
	char *dir = th_mkdtemp(), *data = th_path(dir, "d");
	char *ha = th_path(dir, "ha"), *hb = th_path(dir, "hb");
	char *oa, *ob, ra[80], rb[80];
	/* emulated runs (DMT_TEST_REDUCED) hash 10x slower: 48 MiB there */
	uint64_t mib = getenv("DMT_TEST_REDUCED") ? 48 : 300;

	need_veritysetup();
	th_write_random_file(data, (mib << 20) + 4096 * 7, 42);
	cr_assert_eq(th_sh(&oa, NULL, VS " format '%s' '%s' --salt " SALT32
			   " --uuid " UUID, data, ha), 0);
	cr_assert_eq(th_sh(&ob, NULL, "'%s' format '%s' '%s' --salt " SALT32
			   " --uuid " UUID, vt(), data, hb), 0);
	cr_assert(line_value(oa, "Root hash:", ra, sizeof(ra)));
	cr_assert(line_value(ob, "Root hash:", rb, sizeof(rb)));
	cr_expect_str_eq(rb, ra);
	cr_expect(th_files_equal(ha, hb), "hash images differ");
	free(oa);
	free(ob);
	th_rmtree(dir);
	free(dir);
	free(data);
	free(ha);
	free(hb);
}

/* ---- rejected inputs ---- */

struct reject {
	const char *args;	/* after "format data hash" */
	int code;
	const char *msg;
	bool vs_rejects;	/* veritysetup rejects it too (exit != 0) */
};

Test(verity_cli, rejects_what_veritysetup_rejects)
{
	static const struct reject cases[] = {
		{ "--data-block-size 1000", 1, "Unsupported VERITY block size",
		  true },
		{ "--hash-block-size 256", 1, "Unsupported VERITY block size",
		  true },
		{ "--data-block-size 1048576", 1, "block size", true },
		{ "--hash-offset 1000", 1, "Unsupported VERITY hash offset",
		  true },
		{ "--format 2", 1, "Unsupported VERITY hash type", true },
		{ "--uuid foo", 1, "Wrong VERITY UUID format", true },
		{ "--uuid 12345678123412341234123456789abc", 1, "UUID", true },
		{ "--salt abc", 1, "Invalid salt string", true },
		{ "--salt zz", 1, "Invalid salt string", true },
		{ "--hash crc32c", 1, "not supported", true },
		{ "--hash 'hmac(sha256)'", 1, "not supported", true },
		{ "--hash nosuch", 1, "not supported", true },
		{ "--data-blocks 12x", 1, "--data-blocks", true },
		{ "--data-blocks -5", 1, "--data-blocks", true },
		{ "--data-blocks 18446744073709551615", 1, "overflow", true },
		{ "--data-blocks 257", 4, "too small", true },
		{ "--nosuchoption", 1, "unknown option", true },
		{ "--seed x --salt 00", 1, "--seed", false },
		{ "--threads many", 1, "--threads", false },
	};
	char *dir = th_mkdtemp(), *data = th_path(dir, "d");
	char *hash = th_path(dir, "h"), salt257[2 * 257 + 1];
	bool vs = th_have_cmd("veritysetup");

	th_write_random_file(data, 256 * 4096, 3);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *err;
		int rc;

		unlink(hash);
		rc = th_sh(NULL, &err, "'%s' format '%s' '%s' %s", vt(), data,
			   hash, cases[i].args);
		cr_expect_eq(rc, cases[i].code, "%s: exit %d: %s",
			     cases[i].args, rc, err);
		cr_expect(strstr(err, cases[i].msg), "%s: message '%s'",
			  cases[i].args, err);
		cr_expect(access(hash, F_OK) != 0, "%s: left a hash file",
			  cases[i].args);
		free(err);
		if (vs && cases[i].vs_rejects) {
			unlink(hash);
			rc = th_sh(NULL, NULL, VS " format '%s' '%s' %s",
				   data, hash, cases[i].args);
			cr_expect_neq(rc, 0, "veritysetup accepts %s",
				      cases[i].args);
		}
	}
	/* 257 bytes of salt */
	memset(salt257, 'a', 2 * 257);
	salt257[2 * 257] = '\0';
	cr_expect_eq(th_sh(NULL, NULL, "'%s' format '%s' '%s' --salt %s", vt(),
			   data, hash, salt257), 1);
	if (vs)
		cr_expect_neq(th_sh(NULL, NULL,
				    VS " format '%s' '%s' --salt %s", data,
				    hash, salt257), 0);
	/* an empty data file, and the tree inside the data on one file */
	cr_expect_eq(th_sh(NULL, NULL, "'%s' format /dev/null '%s'", vt(),
			   hash), 4);
	cr_expect_eq(th_sh(NULL, NULL, "'%s' format '%s' '%s' --hash-offset "
			   "4096", vt(), data, data), 1);
	if (vs)
		cr_expect_neq(th_sh(NULL, NULL, VS " format '%s' '%s' "
				    "--hash-offset 4096", data, data), 0);
	/* options of other actions, missing arguments */
	cr_expect_eq(th_sh(NULL, NULL, "'%s' verify '%s' '%s' 00 --seed x",
			   vt(), data, hash), 1);
	cr_expect_eq(th_sh(NULL, NULL, "'%s' format '%s'", vt(), data), 1);
	cr_expect_eq(th_sh(NULL, NULL, "'%s' frobnicate", vt()), 1);
	cr_expect_eq(th_sh(NULL, NULL, "'%s'", vt()), 1);
	th_rmtree(dir);
	free(dir);
	free(data);
	free(hash);
}

/* ---- verify from the command line ---- */

struct img {
	char *dir, *data, *hash, root[80];
};

static void img_make(struct img *m, uint64_t blocks)
{
	char *out;

	m->dir = th_mkdtemp();
	m->data = th_path(m->dir, "d");
	m->hash = th_path(m->dir, "h");
	th_write_random_file(m->data, blocks * 4096, 11);
	cr_assert_eq(th_sh(&out, NULL, "'%s' format '%s' '%s' --salt " SALT32,
			   vt(), m->data, m->hash), 0);
	cr_assert(line_value(out, "Root hash:", m->root, sizeof(m->root)));
	free(out);
}

static void img_free(struct img *m)
{
	th_rmtree(m->dir);
	free(m->dir);
	free(m->data);
	free(m->hash);
}

/* Runs our verify (and veritysetup's when installed) on an image. */
static int verify_both(const struct img *m, char **err, int *vs_rc)
{
	*vs_rc = -1;
	if (th_have_cmd("veritysetup"))
		*vs_rc = th_sh(NULL, NULL, VS " verify '%s' '%s' %s", m->data,
			       m->hash, m->root);
	return th_sh(NULL, err, "'%s' verify '%s' '%s' %s", vt(), m->data,
		     m->hash, m->root);
}

Test(verity_cli, verify_reports_corruption)
{
	struct img m;
	char *err;
	int rc, vs;

	img_make(&m, 250);
	rc = verify_both(&m, &err, &vs);
	cr_expect_eq(rc, 0, "%s", err);
	cr_expect(vs == 0 || vs == -1);
	free(err);

	/* a data byte of block 5 */
	th_flip_byte(m.data, 5 * 4096 + 77, 0x20);
	rc = verify_both(&m, &err, &vs);
	cr_expect_eq(rc, 2);
	cr_expect(strstr(err, "data block 5 (position 20480)"), "%s", err);
	cr_expect(strstr(err, "1 corrupted data blocks"), "%s", err);
	cr_expect(vs == 2 || vs == -1, "veritysetup: %d", vs);
	free(err);
	th_flip_byte(m.data, 5 * 4096 + 77, 0x20);

	/* a digest byte in level-0 block 1 (hash block 3 of the file) */
	th_flip_byte(m.hash, 3 * 4096 + 40 * 32 + 1, 0x01);
	rc = verify_both(&m, &err, &vs);
	cr_expect_eq(rc, 2);
	cr_expect(strstr(err, "hash block 1 of level 0 (position 12288)"),
		  "%s", err);
	cr_expect(vs == 2 || vs == -1, "veritysetup: %d", vs);
	free(err);
	th_flip_byte(m.hash, 3 * 4096 + 40 * 32 + 1, 0x01);

	/* padding after the 122 digests of the last level-0 block */
	th_flip_byte(m.hash, 3 * 4096 + 4000, 0x01);
	rc = verify_both(&m, &err, &vs);
	cr_expect_eq(rc, 2);
	cr_expect(strstr(err, "spare area is not zeroed at position 16288"),
		  "%s", err);
	cr_expect(vs == 2 || vs == -1, "veritysetup: %d", vs);
	free(err);
	th_flip_byte(m.hash, 3 * 4096 + 4000, 0x01);

	/* a wrong root hash: 2 (veritysetup says 1, documented) */
	m.root[0] = m.root[0] == '0' ? '1' : '0';
	rc = verify_both(&m, &err, &vs);
	cr_expect_eq(rc, 2);
	cr_expect(strstr(err, "Verification of root hash failed"), "%s", err);
	cr_expect(vs == 1 || vs == -1, "veritysetup: %d", vs);
	free(err);

	/* malformed root hashes */
	cr_expect_eq(th_sh(NULL, &err, "'%s' verify '%s' '%s' 00", vt(),
			   m.data, m.hash), 1);
	cr_expect(strstr(err, "Invalid root hash string"), "%s", err);
	free(err);
	cr_expect_eq(th_sh(NULL, NULL, "'%s' verify '%s' '%s'", vt(), m.data,
			   m.hash), 1);
	img_free(&m);
}

Test(verity_cli, verify_json_report)
{
	struct img m;
	struct json_object *o, *v, *b;
	char *out;

	img_make(&m, 300);
	th_flip_byte(m.data, 299 * 4096, 0x01);
	cr_expect_eq(th_sh(&out, NULL, "'%s' verify --json '%s' '%s' %s",
			   vt(), m.data, m.hash, m.root), 2);
	o = json_tokener_parse(out);
	cr_assert_not_null(o, "not JSON: %s", out);
	cr_assert(json_object_object_get_ex(o, "verified", &v));
	cr_expect_not(json_object_get_boolean(v));
	cr_assert(json_object_object_get_ex(o, "bad_data_blocks", &v));
	cr_expect_eq(json_object_get_int64(v), 1);
	cr_assert(json_object_object_get_ex(o, "first_bad_data_block", &b));
	cr_assert(json_object_object_get_ex(b, "index", &v));
	cr_expect_eq(json_object_get_int64(v), 299);
	cr_assert(json_object_object_get_ex(o, "root_hash_ok", &v));
	cr_expect(json_object_get_boolean(v));
	json_object_put(o);
	free(out);
	img_free(&m);
}

/* ---- build outputs: --seed, --json, --root-hash-file ---- */

static void hmac_hex(const char *key, const char *msg, size_t len, char *hex,
		     uint8_t *raw)
{
	uint8_t md[32];
	unsigned int mdlen = 0;

	HMAC(EVP_sha256(), key, (int)strlen(key), (const uint8_t *)msg,
	     strlen(msg), md, &mdlen);
	cr_assert_eq(mdlen, 32);
	memcpy(raw, md, len);
	for (size_t i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
}

static const char *jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	cr_assert(json_object_object_get_ex(o, key, &v), "no key %s", key);
	return json_object_get_string(v);
}

static int64_t jint(struct json_object *o, const char *key)
{
	struct json_object *v;

	cr_assert(json_object_object_get_ex(o, key, &v), "no key %s", key);
	return json_object_get_int64(v);
}

Test(verity_cli, seed_json_and_root_hash_file)
{
	char *dir = th_mkdtemp(), *data = th_path(dir, "d");
	char *h1 = th_path(dir, "h1"), *h2 = th_path(dir, "h2");
	char *rf = th_path(dir, "root"), *o1, *o2, salt[65], uuidh[33];
	char uuid[37], table[1024];
	uint8_t raw[32], u[16];
	struct json_object *o, *o2json;
	struct stat st;
	size_t rlen;
	uint8_t *rtext;

	th_write_random_file(data, 1000 * 4096, 21);
	cr_assert_eq(th_sh(&o1, NULL, "'%s' build --seed 'my build' --json "
			   "--root-hash-file '%s' '%s' '%s'", vt(), rf, data,
			   h1), 0);
	cr_assert_eq(th_sh(&o2, NULL, "'%s' build --seed 'my build' --json "
			   "--threads 1 '%s' '%s'", vt(), data, h2), 0);
	cr_expect(th_files_equal(h1, h2), "--seed builds are reproducible");

	/* salt and uuid as issue 3 defines them */
	hmac_hex("my build", "verity-salt", 32, salt, raw);
	hmac_hex("my build", "verity-uuid", 16, uuidh, u);
	u[6] = (uint8_t)((u[6] & 0x0f) | 0x40);
	u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);
	snprintf(uuid, sizeof(uuid),
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4],
		 u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
		 u[14], u[15]);

	o = json_tokener_parse(o1);
	cr_assert_not_null(o, "not JSON: %s", o1);
	cr_expect_str_eq(jstr(o, "salt"), salt);
	cr_expect_str_eq(jstr(o, "uuid"), uuid);
	cr_expect_str_eq(jstr(o, "hash_algorithm"), "sha256");
	cr_expect_eq(jint(o, "format"), 1);
	cr_expect_eq(jint(o, "data_block_size"), 4096);
	cr_expect_eq(jint(o, "hash_block_size"), 4096);
	cr_expect_eq(jint(o, "data_blocks"), 1000);
	cr_expect_eq(jint(o, "hash_offset"), 0);
	stat(h1, &st);
	cr_expect_eq(jint(o, "hash_area_bytes"), st.st_size);
	snprintf(table, sizeof(table),
		 "0 8000 verity 1 %s %s 4096 4096 1000 1 sha256 %s %s", data,
		 h1, jstr(o, "root_hash"), salt);
	cr_expect_str_eq(jstr(o, "table"), table);
	cr_expect(strstr(jstr(o, "dm_mod_create"), table));
	snprintf(table, sizeof(table), "veritysetup open %s vroot %s %s", data,
		 h1, jstr(o, "root_hash"));
	cr_expect_str_eq(jstr(o, "veritysetup_open"), table);
	o2json = json_tokener_parse(o2);
	cr_assert_not_null(o2json);
	cr_expect_str_eq(jstr(o2json, "root_hash"), jstr(o, "root_hash"));
	cr_expect_str_eq(jstr(o2json, "uuid"), uuid);
	json_object_put(o2json);

	/* root hash file: hex, no newline, mode 0600 */
	rtext = th_read_file(rf, &rlen);
	cr_expect_eq(rlen, 64);
	cr_expect(!strncmp((char *)rtext, jstr(o, "root_hash"), 64));
	stat(rf, &st);
	cr_expect_eq(st.st_mode & 0777, 0600);
	stat(h1, &st);
	cr_expect_eq(st.st_mode & 0777, 0600, "new hash file like veritysetup");
	cr_expect_eq(th_sh(NULL, NULL, "'%s' verify --root-hash-file '%s' "
			   "'%s' '%s'", vt(), rf, data, h1), 0);
	/* an existing root hash file is replaced (a temporary renamed over
	 * it, the rule of every output: tools/common/outfile.h), its mode
	 * kept */
	{
		struct stat before, after;
		char stale[100];
		uint8_t *t2;
		size_t l2;

		cr_assert_eq(chmod(rf, 0644), 0);
		memset(stale, 'x', sizeof(stale));	/* longer than 64 */
		th_write_file(rf, stale, sizeof(stale));
		cr_assert_eq(stat(rf, &before), 0);
		cr_assert_eq(th_sh(NULL, NULL, "'%s' build --seed 'my build' "
				   "--root-hash-file '%s' '%s' '%s'", vt(), rf,
				   data, h2), 0);
		cr_assert_eq(stat(rf, &after), 0);
		cr_expect_neq(after.st_ino, before.st_ino, "replaced");
		cr_expect_eq(after.st_mode & 0777, 0644, "mode kept");
		t2 = th_read_file(rf, &l2);
		cr_expect_eq(l2, 64);
		cr_expect(!strncmp((char *)t2, jstr(o, "root_hash"), 64));
		free(t2);
	}
	/* veritysetup opens what the JSON describes */
	if (th_have_cmd("veritysetup"))
		cr_expect_eq(th_sh(NULL, NULL, VS " verify '%s' '%s' "
				   "--root-hash-file '%s'", data, h1, rf), 0);
	json_object_put(o);
	free(rtext);
	free(o1);
	free(o2);
	th_rmtree(dir);
	free(dir);
	free(data);
	free(h1);
	free(h2);
	free(rf);
}

/* ---- dump and size ---- */

Test(verity_cli, dump_like_veritysetup)
{
	char *dir = th_mkdtemp(), *data = th_path(dir, "d"), *oa, *ob;
	static const char *const opts[] = {
		"--salt " SALT32, "--hash-offset 8192 --hash sha1 --format 0 "
		"--salt -", "--data-block-size 512 --hash-block-size 1024 "
		"--hash sha512 --salt 00",
	};

	th_write_random_file(data, 128 * 4096, 8);
	for (size_t i = 0; i < 3; i++) {
		const char *off = i == 1 ? "--hash-offset 8192" : "";

		th_sh(NULL, NULL, "rm -f '%s/h'", dir);
		cr_assert_eq(th_sh(NULL, NULL, "cd '%s' && '%s' format d h %s "
				   "--uuid " UUID, dir, vt(), opts[i]), 0);
		cr_assert_eq(th_sh(&ob, NULL, "cd '%s' && '%s' dump h %s", dir,
				   vt(), off), 0);
		cr_expect(strstr(ob, "VERITY header information for h\n"
				 "UUID:            \t" UUID "\n"), "%s", ob);
		if (th_have_cmd("veritysetup")) {
			cr_assert_eq(th_sh(&oa, NULL, "cd '%s' && " VS
					   " dump h %s", dir, off), 0);
			cr_expect_str_eq(ob, oa);
			free(oa);
		}
		free(ob);
	}
	cr_expect_eq(th_sh(NULL, &ob, "'%s' dump '%s'", vt(), data), 4);
	cr_expect(strstr(ob, "is not a valid VERITY device"), "%s", ob);
	free(ob);
	th_rmtree(dir);
	free(dir);
	free(data);
}

Test(verity_cli, size_matches_build)
{
	static const char *const opts[] = {
		"", "--hash sha512 --data-block-size 512",
		"--hash-block-size 1024 --no-superblock",
		"--hash sha1 --format 0 --hash-block-size 512",
		"--data-blocks 1",
	};
	static const uint64_t sizes[] = { 4096, 1 << 20, (5 << 20) + 123 };
	char *dir = th_mkdtemp(), *data = th_path(dir, "d");
	char *hash = th_path(dir, "h");

	for (size_t s = 0; s < 3; s++) {
		th_write_random_file(data, sizes[s], s + 1);
		for (size_t i = 0; i < 5; i++) {
			char *out, *out2, val[64];
			struct json_object *o;
			struct stat st;

			unlink(hash);
			cr_assert_eq(th_sh(NULL, NULL,
					   "'%s' format '%s' '%s' %s", vt(),
					   data, hash, opts[i]), 0);
			stat(hash, &st);
			cr_assert_eq(th_sh(&out, NULL, "'%s' size --json "
					   "--data-size %llu %s", vt(),
					   (unsigned long long)sizes[s],
					   opts[i]), 0);
			o = json_tokener_parse(out);
			cr_assert_not_null(o, "%s", out);
			cr_expect_eq(jint(o, "hash_device_bytes"), st.st_size,
				     "%s on %llu bytes", opts[i],
				     (unsigned long long)sizes[s]);
			json_object_put(o);
			cr_assert_eq(th_sh(&out2, NULL, "'%s' size '%s' %s",
					   vt(), data, opts[i]), 0);
			cr_assert(line_value(out2, "Hash device size:", val,
					     sizeof(val)));
			cr_expect_eq(strtoull(val, NULL, 10),
				     (unsigned long long)st.st_size);
			free(out);
			free(out2);
		}
	}
	cr_expect_eq(th_sh(NULL, NULL,
			   "'%s' size --data-size 1G | grep -q '^Hash blocks:"
			   "[[:space:]]*2065$'", vt()), 0,
		     "1 GiB: 2065 hash blocks (formats.md 1.6)");
	cr_expect_eq(th_sh(NULL, NULL, "'%s' size", vt()), 1);
	th_rmtree(dir);
	free(dir);
	free(data);
	free(hash);
}

/* ---- files: locks, in place, no leftovers ---- */

Test(verity_cli, locked_image_and_cleanup)
{
	char *dir = th_mkdtemp(), *data = th_path(dir, "d");
	char *hash = th_path(dir, "h"), *err, *out;
	uint8_t *img;
	size_t len;
	int fd;

	th_write_random_file(data, 300 * 4096, 12);
	cr_assert_eq(th_sh(NULL, NULL, "'%s' format '%s' '%s' --salt -", vt(),
			   data, hash), 0);
	fd = open(hash, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(flock(fd, LOCK_EX), 0);
	cr_expect_eq(th_sh(NULL, &err, "'%s' format '%s' '%s' --salt -", vt(),
			   data, hash), 5);
	cr_expect(strstr(err, "in use"), "%s", err);
	free(err);
	cr_expect_eq(th_sh(NULL, NULL, "'%s' dump '%s'", vt(), hash), 5);
	close(fd);

	/* an existing, larger hash file is written in place, not cut */
	cr_assert_eq(truncate(hash, 1 << 20), 0);
	cr_assert_eq(th_sh(&out, NULL, "'%s' format '%s' '%s' --salt -", vt(),
			   data, hash), 0);
	img = th_read_file(hash, &len);
	cr_expect_eq(len, 1 << 20);
	free(img);
	free(out);

	/* a failed build leaves neither the file nor a temporary */
	unlink(hash);
	cr_expect_eq(th_sh(NULL, NULL, "'%s' format '%s' '%s' --data-blocks "
			   "301", vt(), data, hash), 4);
	cr_expect_eq(th_sh(NULL, NULL, "ls '%s' | grep -q '^h'", dir), 1,
		     "left-over files");
	th_rmtree(dir);
	free(dir);
	free(data);
	free(hash);
}

/* ---- issue 11: what a new user tripped over ---- */

/* The target line as the kernel reads it (dm_split_args): words apart at
 * white space, a backslash quotes the next character. */
static int kernel_words(const char *line, char words[][256], int max)
{
	int n = 0;

	while (*line && n < max) {
		size_t k = 0;

		while (*line == ' ' || *line == '\t')
			line++;
		if (!*line)
			break;
		while (*line && *line != ' ' && *line != '\t') {
			if (*line == '\\' && line[1])
				line++;
			if (k < 255)
				words[n][k++] = *line;
			line++;
		}
		words[n++][k] = '\0';
	}
	return n;
}

Test(verity_cli, json_table_quotes_paths)
{
	char *dir = th_mkdtemp(), *out = NULL, words[24][256];
	struct json_object *j;
	const char *table, *dm;
	int n;

	make_data(th_path(dir, "my data.img"), 8 * 4096, 5);
	cr_assert_eq(th_sh(&out, NULL, "cd '%s' && '%s' build --json --salt "
			   SALT32 " 'my data.img' 'my  hash' --fec-device "
			   "'a\\b.fec'", dir, vt()), 0);
	j = json_tokener_parse(out);
	cr_assert(j, "%s", out);
	table = jstr(j, "table");
	dm = jstr(j, "dm_mod_create");
	cr_assert(table && dm, "%s", out);
	n = kernel_words(table, words, 24);
	cr_assert_eq(n, 22, "table splits into %d words: %s", n, table);
	cr_expect_str_eq(words[4], "my data.img", "%s", table);
	cr_expect_str_eq(words[5], "my  hash", "%s", table);
	cr_expect_str_eq(words[14], "use_fec_from_device");
	cr_expect_str_eq(words[15], "a\\b.fec", "%s", table);
	cr_expect(strstr(dm, table), "dm-mod.create carries the table: %s",
		  dm);
	json_object_put(j);
	free(out);

	/* dm-mod.create cannot carry a ',': refused with a note */
	make_data(th_path(dir, "a,b.img"), 8 * 4096, 5);
	cr_assert_eq(th_sh(&out, NULL, "cd '%s' && '%s' build --json --salt "
			   SALT32 " a,b.img h2", dir, vt()), 0);
	j = json_tokener_parse(out);
	cr_assert(j, "%s", out);
	cr_expect(jstr(j, "table") && strstr(jstr(j, "table"), " a,b.img "),
		  "%s", out);
	cr_expect_null(jstr(j, "dm_mod_create"), "%s", out);
	cr_expect(jstr(j, "dm_mod_create_note"), "%s", out);
	json_object_put(j);
	free(out);
	th_rmtree(dir);
	free(dir);
}

/* --json failures: the framework's error object on stdout. */
Test(verity_cli, json_failure_prints_error_object)
{
	char *out = NULL;
	struct json_object *j, *e = NULL;

	cr_assert_eq(th_sh(&out, NULL, "'%s' verify --json /nonexistent/d "
			   "/nonexistent/h 00", vt()), 4);
	j = json_tokener_parse(out);
	cr_assert(j && json_object_object_get_ex(j, "error", &e), "%s", out);
	cr_expect(strstr(jstr(e, "message"), "/nonexistent/d"), "%s", out);
	cr_expect_eq(jint(e, "exit_code"), 4);
	json_object_put(j);
	free(out);
}

/* Progress names what is done: build hashes, verify verifies. */
Test(verity_cli, progress_verbs_and_thread_count)
{
	struct img m;
	char *err = NULL;

	img_make(&m, 16);
	cr_assert_eq(th_sh(NULL, &err, "'%s' build -v --threads 1 "
			   "--progress-frequency 1 --salt - '%s' '%s.2'", vt(),
			   m.data, m.hash), 0);
	cr_expect(strstr(err, "Progress:") && strstr(err, " hashed, "),
		  "%s", err);
	cr_expect_null(strstr(err, "written"), "build reads the data: %s",
		       err);
	cr_expect(strstr(err, " engine on 1 thread.\n"), "%s", err);
	free(err);
	cr_assert_eq(th_sh(NULL, &err, "'%s' verify --progress-frequency 1 "
			   "'%s' '%s' %s", vt(), m.data, m.hash, m.root), 0);
	cr_expect(strstr(err, " verified, "), "%s", err);
	cr_expect_null(strstr(err, "written"), "%s", err);
	free(err);
	cr_assert_eq(th_sh(NULL, &err, "'%s' build -v --threads 2 --salt - "
			   "'%s' '%s.2'", vt(), m.data, m.hash), 0);
	cr_expect(strstr(err, " engine on 2 threads.\n"), "%s", err);
	free(err);
	img_free(&m);
}

/* veritysetup's mapping commands: one line saying what to use. */
Test(verity_cli, mapping_commands_point_to_veritysetup)
{
	static const char *const cmds[] = { "open d vroot h 00", "close vroot",
					    "status vroot" };
	char *out = NULL, *err = NULL;

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		cr_expect_eq(th_sh(&out, &err, "'%s' %s", vt(), cmds[i]), 1);
		cr_expect_str_empty(out);
		cr_expect(strstr(err, "does not map devices") &&
			  strstr(err, "veritysetup open") &&
			  strstr(err, "veritysetup_open"), "[%s] %s", cmds[i],
			  err);
		cr_expect_eq(strchr(err, '\n') - err + 1, (long)strlen(err),
			     "[%s] one line: %s", cmds[i], err);
		free(out);
		free(err);
	}
}

/* -q hides information, never warnings, errors or results. */
Test(verity_cli, quiet_keeps_warnings)
{
	char *dir = th_mkdtemp(), *data = th_path(dir, "odd.img");
	char *out = NULL, *err = NULL;

	th_write_random_file(data, 3 * 4096 + 100, 9);
	cr_assert_eq(th_sh(&out, &err, "cd '%s' && '%s' build -q --salt - "
			   "odd.img odd.hash", dir, vt()), 0);
	cr_expect(strstr(out, "Root hash:"), "%s", out);
	cr_expect(strstr(err, "warning: odd.img: the last 100 bytes"), "%s",
		  err);
	free(out);
	free(err);
	th_rmtree(dir);
	free(dir);
	free(data);
}

/* docs/verity-tool.8 says what the tool does (issue 11). */
Test(verity_cli, man_page_matches_the_tool)
{
	const char *src = getenv("DMT_SRC");
	char *path = th_path(src ? src : ".", "docs/verity-tool.8");
	char *man = (char *)th_read_file(path, NULL), *out = NULL, *line;
	const char *size_sec, *end;
	int open_nf = 0, stray = 0;

	cr_assert(man, "%s", path);
	cr_expect(!strncmp(strstr(man, ".TH "), ".TH VERITY-TOOL 8 \"December "
			   "2026\" \"verity-tool 0.1.0\" \"System "
			   "Administration\"\n", 70), "header");
	/* encrypted keys work (--key-passphrase-file) */
	cr_expect_null(strstr(man, "keys are not supported"));
	cr_expect(strstr(man, "key\\-passphrase\\-file"));
	/* no .fi without its .nf (the size section had a stray one) */
	for (line = man; line && *line; line = strchr(line, '\n'),
	     line = line ? line + 1 : NULL) {
		if (!strncmp(line, ".nf\n", 4))
			open_nf++;
		else if (!strncmp(line, ".fi\n", 4) && open_nf-- <= 0)
			stray++;
	}
	cr_expect_eq(stray, 0, "%d stray .fi", stray);
	cr_expect_eq(open_nf, 0, ".nf left open");

	/* every line size prints is documented in the size section, and
	 * "FEC device size" only where the page says */
	size_sec = strstr(man, ".BR size ");
	cr_assert(size_sec);
	end = strstr(size_sec, "\n.TP\n");
	cr_assert_eq(th_sh(&out, NULL, "'%s' size --data-size 1M --fec-device "
			   "x.fec", vt()), 0);
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		char key[40];

		snprintf(key, sizeof(key), "%.*s", (int)strcspn(line, ":"),
			 line);
		const char *at = strstr(size_sec, key);

		cr_expect(at && at < end, "size prints '%s', undocumented",
			  key);
	}
	free(out);
	cr_expect(strstr(size_sec, "FEC device size: <tab><parity bytes> "
			 "[bytes]   (without \\-\\-fec\\-offset)"));
	cr_assert_eq(th_sh(&out, NULL, "'%s' size --data-size 1M --fec-device "
			   "x.fec", vt()), 0);
	cr_expect(strstr(out, "FEC device size: \t"), "%s", out);
	free(out);
	cr_assert_eq(th_sh(&out, NULL, "'%s' size --data-size 1M --fec-offset "
			   "1048576", vt()), 0);
	cr_expect_null(strstr(out, "FEC device size"), "%s", out);
	free(out);
	/* -q: one meaning, documented */
	cr_expect(strstr(man, "warnings (\"verity-tool: warning: ...\") and "
			 "errors are\nalways printed"));
	free(man);
	free(path);
}
