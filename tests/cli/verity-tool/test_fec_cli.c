// SPDX-License-Identifier: MIT
/*
 * verity-tool FEC and signature tests (suite "verity_fec_cli"): `build
 * --fec-device` byte for byte against veritysetup (stdout, hash and FEC
 * files; separate, existing, shared and one-file layouts; roots 2..24;
 * several block and data sizes), `verify --fec-device` within and beyond
 * the code's limit (and its error count against veritysetup's), `repair`
 * (bytes equal the originals afterwards, nothing written that does not
 * verify up to the root hash), `dump`/`size`/--json FEC figures, and root
 * hash signatures with a throwaway key checked by `openssl smime`.
 * Expected sizes come from docs/formats.md 1.9, not from our code.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dmt/fec.h>
#include "tests/support/helpers.h"
#include <dmt/io.h>

#define UUID "12345678-1234-1234-1234-123456789abc"
#define SALT "000102030405060708090a0b0c0d0e0f" \
	     "101112131415161718191a1b1c1d1e1f"
#define VS "PATH=$PATH:/usr/sbin:/sbin veritysetup"

static void need_veritysetup(void)
{
	if (!th_have_cmd("veritysetup"))
		cr_skip("veritysetup (cryptsetup-bin) is not installed");
}

static void need_openssl(void)
{
	if (!th_have_cmd("openssl"))
		cr_skip("the openssl command line tool is not installed");
}

static const char *vt(void)
{
	return th_tool("verity-tool");
}

/*
 * fmt() strings are used inline (paths, expected text), so they are kept
 * here and freed together when the test ends (the suite's .fini).
 */
static char **fmt_strs;
static size_t fmt_count;

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	char **strs;
	va_list ap;
	char *s;

	va_start(ap, f);
	cr_assert_geq(vasprintf(&s, f, ap), 0);
	va_end(ap);
	strs = realloc(fmt_strs, (fmt_count + 1) * sizeof(*strs));
	cr_assert(strs);
	fmt_strs = strs;
	fmt_strs[fmt_count++] = s;
	return s;
}

static void fmt_free_all(void)
{
	while (fmt_count)
		free(fmt_strs[--fmt_count]);
	free(fmt_strs);
	fmt_strs = NULL;
}

TestSuite(verity_fec_cli, .fini = fmt_free_all);

/* Runs a shell command in dir; out/err may be NULL. */
static int run_in(const char *dir, char **out, char **err, const char *f,
		  ...) __attribute__((format(printf, 4, 5)));
static int run_in(const char *dir, char **out, char **err, const char *f,
		  ...)
{
	va_list ap;
	char *cmd;
	int rc;

	va_start(ap, f);
	cr_assert_geq(vasprintf(&cmd, f, ap), 0);
	va_end(ap);
	rc = th_sh(out, err, "cd '%s' && %s", dir, cmd);
	free(cmd);
	return rc;
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	cr_assert_eq(stat(path, &st), 0, "%s missing", path);
	return (uint64_t)st.st_size;
}

static bool same(const char *dir, const char *a, const char *b)
{
	return run_in(dir, NULL, NULL, "cmp -s '%s' '%s'", a, b) == 0;
}

/* Overwrites block blk (bs bytes) of path with pseudo-random bytes. */
static void destroy(const char *path, uint32_t bs, uint64_t blk,
		    uint64_t seed)
{
	uint8_t *buf = malloc(bs);
	int fd = open(path, O_WRONLY);

	cr_assert(buf && fd >= 0);
	th_fill_random(buf, bs, seed);
	cr_assert_eq(pwrite(fd, buf, bs, (off_t)(blk * bs)), (ssize_t)bs);
	close(fd);
	free(buf);
}

/* Rounds of the code (formats.md 1.9) for n covered blocks. */
static uint64_t rounds_for(uint64_t n, unsigned int roots)
{
	return (n + 254 - roots) / (255 - roots);
}

/* The line of text holding `key` (without it), or "" (static buffer). */
static const char *field(const char *text, const char *key)
{
	static char v[256];
	const char *p = text ? strstr(text, key) : NULL;
	size_t n;

	v[0] = '\0';
	if (!p)
		return v;
	p += strlen(key);
	n = strcspn(p, "\n");
	if (n >= sizeof(v))
		n = sizeof(v) - 1;
	memcpy(v, p, n);
	v[n] = '\0';
	return v;
}

/* ---- build against veritysetup ---- */

struct bcase {
	const char *name;
	unsigned int roots;
	uint32_t bs;
	uint64_t blocks;	/* data blocks (file size) */
	const char *hash;
	enum { L_SEP, L_SEP_EXISTING, L_SHARED, L_SHARED_GAP, L_ONE } layout;
	const char *extra;	/* more options for both tools */
};

/*
 * Both tools in their own directory with the same relative names (the
 * header names the hash file), same salt and uuid: same exit status,
 * same stdout, same bytes in every file.
 */
static void compare_build(const struct bcase *bc, const char *dir)
{
	char *a = th_path(dir, "a"), *b = th_path(dir, "b");
	char *oa = NULL, *ob = NULL, *ea = NULL, *eb = NULL, *args;
	const char *hashf = "h.img", *fecf = "f.img";
	uint64_t dsize = bc->blocks * bc->bs, tree_end = 0;
	const char *dirs[2] = { a, b };
	int ra, rb;

	cr_assert_eq(th_sh(NULL, NULL, "mkdir -p '%s' '%s'", a, b), 0);
	for (int i = 0; i < 2; i++) {
		char *d = th_path(dirs[i], "d.img");

		/* one file: room up to the parity, which veritysetup covers
		 * as metadata and must be able to read */
		th_write_random_file(d, dsize + (bc->layout == L_ONE ?
						 64 * bc->bs : 0),
				     bc->blocks * 31 + bc->roots);
		free(d);
	}
	/* the tree's end, from veritysetup alone (for the shared layouts) */
	if (bc->layout == L_SHARED || bc->layout == L_SHARED_GAP) {
		char *o = NULL;

		cr_assert_eq(run_in(a, &o, NULL, VS " format d.img t.img "
				    "--salt " SALT " --uuid " UUID
				    " --hash %s --data-block-size %u "
				    "--hash-block-size %u %s", bc->hash, bc->bs,
				    bc->bs, bc->extra), 0);
		tree_end = file_size(fmt("%s/t.img", a));
		free(o);
		cr_assert_eq(run_in(a, NULL, NULL, "rm -f t.img"), 0);
	}
	switch (bc->layout) {
	case L_SEP:
		args = fmt("--fec-device f.img");
		break;
	case L_SEP_EXISTING:
		/* written in place, trailing bytes kept */
		for (int i = 0; i < 2; i++) {
			char *f = th_path(dirs[i], "f.img");

			th_write_random_file(f, 3 * dsize / 2 + 4096, 77);
			free(f);
		}
		args = fmt("--fec-device f.img --fec-offset 8192");
		break;
	case L_SHARED:
		fecf = hashf;
		args = fmt("--fec-device h.img --fec-offset %" PRIu64,
			   tree_end);
		break;
	case L_SHARED_GAP:
		/* foreign metadata between the tree and the parity: an
		 * existing hash file with random contents */
		fecf = hashf;
		for (int i = 0; i < 2; i++) {
			char *h = th_path(dirs[i], "h.img");

			th_write_random_file(h, tree_end + 3 * bc->bs, 5);
			free(h);
		}
		args = fmt("--fec-device h.img --fec-offset %" PRIu64,
			   tree_end + 2 * bc->bs);
		break;
	default:	/* L_ONE: data, tree and parity in one file */
		hashf = fecf = "d.img";
		args = fmt("--hash-offset %" PRIu64 " --data-blocks %" PRIu64
			   " --fec-device d.img --fec-offset %" PRIu64, dsize,
			   bc->blocks, dsize + 64 * bc->bs);
		break;
	}
	ra = run_in(a, &oa, &ea, VS " format d.img %s --salt " SALT
		    " --uuid " UUID " --hash %s --data-block-size %u "
		    "--hash-block-size %u --fec-roots %u %s %s", hashf,
		    bc->hash, bc->bs, bc->bs, bc->roots, args, bc->extra);
	rb = run_in(b, &ob, &eb, "'%s' build d.img %s --salt " SALT
		    " --uuid " UUID " --hash %s --data-block-size %u "
		    "--hash-block-size %u --fec-roots %u %s %s", vt(), hashf,
		    bc->hash, bc->bs, bc->bs, bc->roots, args, bc->extra);
	cr_assert_eq(ra, 0, "%s: veritysetup failed: %s", bc->name, ea);
	cr_assert_eq(rb, 0, "%s: verity-tool failed: %s", bc->name, eb);
	cr_expect_str_eq(ob, oa, "%s: stdout differs", bc->name);
	cr_expect(th_sh(NULL, NULL, "cmp -s '%s/%s' '%s/%s'", a, hashf, b,
			hashf) == 0, "%s: %s differs", bc->name, hashf);
	cr_expect(th_sh(NULL, NULL, "cmp -s '%s/%s' '%s/%s'", a, fecf, b,
			fecf) == 0, "%s: %s differs", bc->name, fecf);
	if (bc->layout == L_SEP) {
		struct stat st;
		char *f = th_path(b, "f.img");

		cr_assert_eq(stat(f, &st), 0);
		cr_expect_eq(st.st_mode & 0777, 0600, "%s: new FEC file mode "
			     "%o", bc->name, st.st_mode & 0777);
		free(f);
	}
	free(oa);
	free(ob);
	free(ea);
	free(eb);
	free(a);
	free(b);
}

static const struct bcase bcases[] = {
	{ "roots2-4k-sep", 2, 4096, 1000, "sha256", L_SEP, "" },
	{ "roots8-4k-shared", 8, 4096, 515, "sha256", L_SHARED, "" },
	{ "roots24-4k-shared-gap", 24, 4096, 300, "sha256", L_SHARED_GAP,
	  "" },
	{ "roots24-512-existing", 24, 512, 2049, "sha1", L_SEP_EXISTING,
	  "" },
	{ "roots8-1k-nosb", 8, 1024, 777, "sha512", L_SEP,
	  "--no-superblock" },
	{ "roots2-4k-hashoffset", 2, 4096, 129, "sha256", L_SEP,
	  "--hash-offset 8192" },
	{ "roots5-4k-onefile", 5, 4096, 256, "sha256", L_ONE, "" },
	{ "roots24-4k-sep-1block", 24, 4096, 1, "sha256", L_SEP, "" },
	{ "roots2-512-shared-format0", 2, 512, 4000, "sha256", L_SHARED,
	  "--format 0" },
};

Test(verity_fec_cli, build_identical_to_veritysetup, .timeout = 120)
{
	char *dir;

	need_veritysetup();
	dir = th_mkdtemp();
	for (size_t i = 0; i < sizeof(bcases) / sizeof(bcases[0]); i++) {
		char *sub = th_path(dir, bcases[i].name);

		compare_build(&bcases[i], sub);
		free(sub);
	}
	th_rmtree(dir);
	free(dir);
}

/* Expected FEC sizes from formats.md 1.9: the veritysetup vector there. */
Test(verity_fec_cli, sizes_follow_formats_md)
{
	char *dir = th_mkdtemp(), *out = NULL;
	uint64_t n = 1024, covered = n + 9, rounds = rounds_for(covered, 2);

	/* 4 MiB: 1024 data blocks, 9 tree blocks after the superblock */
	th_write_random_file(fmt("%s/d.img", dir), n * 4096, 3);
	cr_assert_eq(run_in(dir, &out, NULL, "'%s' build d.img h.img "
			    "--fec-device f.img --json --salt " SALT, vt()), 0);
	cr_expect_eq(file_size(fmt("%s/f.img", dir)), rounds * 2 * 4096);
	cr_expect(strstr(out, fmt("\"fec_area_bytes\":%" PRIu64,
				  rounds * 2 * 4096)), "%s", out);
	cr_expect(strstr(out, "\"fec_roots\":2"), "%s", out);
	cr_expect(strstr(out, "\"fec_offset\":0"), "%s", out);
	/* the table gains cryptsetup's FEC arguments, counted as 8 */
	cr_expect(strstr(out, fmt(" " SALT " 8 use_fec_from_device f.img "
				  "fec_start 0 fec_blocks %" PRIu64
				  " fec_roots 2\"", covered)), "%s", out);
	cr_expect(strstr(out, "--fec-device=f.img --fec-roots=2\""), "%s",
		  out);
	free(out);

	/* size predicts both files */
	cr_assert_eq(run_in(dir, &out, NULL, "'%s' size d.img --fec-roots 2",
			    vt()), 0);
	cr_expect_str_eq(field(out, "FEC blocks:      \t"),
			 fmt("%" PRIu64, rounds * 2));
	cr_expect_str_eq(field(out, "FEC device size: \t"),
			 fmt("%" PRIu64 " [bytes]", file_size(fmt("%s/f.img",
								 dir))));
	free(out);
	/* shared at the tree's end: the hash file grows by the parity */
	cr_assert_eq(run_in(dir, &out, NULL, "'%s' size d.img --fec-roots 2 "
			    "--fec-offset 40960", vt()), 0);
	cr_expect_str_eq(field(out, "Hash device size: \t"),
			 fmt("%" PRIu64 " [bytes]", 40960 + rounds * 2 * 4096));
	free(out);
	th_rmtree(dir);
	free(dir);
}

Test(verity_fec_cli, dump_identical_to_veritysetup)
{
	char *dir, *oa = NULL, *ob = NULL;

	need_veritysetup();
	dir = th_mkdtemp();
	th_write_random_file(fmt("%s/d.img", dir), 300 * 4096, 4);
	cr_assert_eq(run_in(dir, NULL, NULL, VS " format d.img h.img "
			    "--fec-device f.img --fec-roots 7"), 0);
	cr_assert_eq(run_in(dir, &oa, NULL, VS " dump h.img --fec-device "
			    "f.img --fec-roots 7"), 0);
	cr_assert_eq(run_in(dir, &ob, NULL, "'%s' dump h.img --fec-device "
			    "f.img --fec-roots 7", vt()), 0);
	cr_expect_str_eq(ob, oa);
	free(oa);
	free(ob);
	th_rmtree(dir);
	free(dir);
}

Test(verity_fec_cli, threads_do_not_change_parity)
{
	char *dir = th_mkdtemp();

	th_write_random_file(fmt("%s/d.img", dir), 3000 * 4096, 6);
	cr_assert_eq(run_in(dir, NULL, NULL, "'%s' build d.img h1 --seed s "
			    "--fec-device f1 --fec-roots 11 --threads 1 && "
			    "'%s' build d.img h2 --seed s --fec-device f2 "
			    "--fec-roots 11 --threads 3", vt(), vt()), 0);
	cr_expect(same(dir, "f1", "f2"));
	cr_expect(same(dir, "h1", "h2"));
	th_rmtree(dir);
	free(dir);
}

Test(verity_fec_cli, rejects_what_veritysetup_rejects)
{
	static const char *const bad[] = {
		"--fec-roots 1", "--fec-roots 25", "--fec-offset 100",
		"--data-block-size 512",	/* != hash block size */
	};
	char *dir, *err = NULL;

	need_veritysetup();
	dir = th_mkdtemp();
	th_write_random_file(fmt("%s/d.img", dir), 64 * 4096, 7);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *fec = strstr(bad[i], "--fec-device") ? "" :
			"--fec-device f.img";

		cr_expect_neq(run_in(dir, NULL, NULL, VS " format d.img h.img "
				     "%s %s", fec, bad[i]), 0, "%s", bad[i]);
		run_in(dir, NULL, NULL, "rm -f h.img f.img");
		cr_expect_eq(run_in(dir, NULL, &err, "'%s' build d.img h.img "
				    "%s %s", vt(), fec, bad[i]), 1, "%s: %s",
			     bad[i], err);
		free(err);
		err = NULL;
	}
	/* parity over the tree: veritysetup 2.6.1 writes a broken image
	 * (its overlap check misses a hash file it has just created) */
	cr_expect_eq(run_in(dir, NULL, NULL, "rm -f h.img && '%s' build d.img "
			    "h.img --fec-device h.img", vt()), 1);
	cr_expect_eq(run_in(dir, NULL, NULL, "'%s' build d.img h.img "
			    "--fec-device h.img --fec-offset 4096", vt()), 1);
	cr_expect_eq(run_in(dir, NULL, NULL, "'%s' build d.img h.img "
			    "--fec-device d.img --fec-offset 4096", vt()), 1);
	cr_expect_eq(run_in(dir, NULL, NULL, "'%s' build d.img h.img && "
			    "'%s' repair d.img h.img 00", vt(), vt()), 1,
		     "repair without --fec-device");
	th_rmtree(dir);
	free(dir);
}

/* ---- verify and repair ---- */

struct image {
	char *dir;
	char root[129];
	uint64_t n;		/* data blocks */
	uint64_t rounds;
	unsigned int roots;
};

/*
 * 4 MiB (1024 blocks) image built by veritysetup: h.img (tree), f.img
 * (parity); pristine copies d.orig, h.orig, f.orig.
 */
static void image_make(struct image *im, unsigned int roots)
{
	char *out = NULL;

	need_veritysetup();
	memset(im, 0, sizeof(*im));
	im->dir = th_mkdtemp();
	im->n = 1024;
	im->roots = roots;
	th_write_random_file(fmt("%s/d.img", im->dir), im->n * 4096,
			     roots + 100);
	cr_assert_eq(run_in(im->dir, &out, NULL, VS " format d.img h.img "
			    "--fec-device f.img --fec-roots %u --salt " SALT
			    " --root-hash-file root && cp d.img d.orig && "
			    "cp h.img h.orig && cp f.img f.orig && cat root",
			    roots), 0);
	snprintf(im->root, sizeof(im->root), "%s", field(out, "Root hash:"
							 "      \t"));
	cr_assert_eq(strlen(im->root), 64);
	/* covered: data + the hash file after the superblock block */
	im->rounds = rounds_for(im->n + file_size(fmt("%s/h.img", im->dir)) /
				4096 - 1, roots);
	free(out);
}

static void image_free(struct image *im)
{
	th_rmtree(im->dir);
	free(im->dir);
}

static int tool(const struct image *im, char **err, const char *f, ...)
	__attribute__((format(printf, 3, 4)));
static int tool(const struct image *im, char **err, const char *f, ...)
{
	va_list ap;
	char *args;
	int rc;

	va_start(ap, f);
	cr_assert_geq(vasprintf(&args, f, ap), 0);
	va_end(ap);
	rc = run_in(im->dir, NULL, err, "'%s' %s", vt(), args);
	free(args);
	return rc;
}

/* "Found N repairable errors with FEC device." -> N, or -1. */
static long found(const char *err)
{
	const char *p = err ? strstr(err, "Found ") : NULL;

	return p && strstr(p, "repairable errors with FEC device") ?
		strtol(p + 6, NULL, 10) : -1;
}

Test(verity_fec_cli, verify_corrects_within_the_limit, .timeout = 60)
{
	struct image im;
	char *err = NULL, *vs_err = NULL, *sums = NULL, *sums2 = NULL;

	image_make(&im, 8);
	/* 4 whole data blocks in one round (r, r + rounds, ...), 4 of
	 * another, one in a third: <= roots/2 per codeword, so veritysetup
	 * (no erasures) corrects them too and counts the same bytes */
	for (int k = 0; k < 4; k++) {
		destroy(fmt("%s/d.img", im.dir), 4096, 1 + k * im.rounds, k);
		destroy(fmt("%s/d.img", im.dir), 4096, 2 + k * im.rounds,
			k + 10);
	}
	th_flip_byte(fmt("%s/d.img", im.dir), 5 * 4096 + 100, 0x10);
	cr_assert_eq(tool(&im, NULL, "verify d.img h.img %s", im.root), 2);
	run_in(im.dir, &sums, NULL, "sha256sum d.img h.img f.img");
	cr_assert_eq(tool(&im, &err, "verify --fec-device f.img --fec-roots 8 "
			  "d.img h.img %s", im.root), 0, "%s", err);
	for (int k = 0; k < 4; k++) {
		cr_expect(strstr(err, fmt("data block %" PRIu64 " (position "
					  "%" PRIu64 ") corrected with FEC",
					  1 + k * im.rounds,
					  (1 + k * im.rounds) * 4096)), "%s",
			  err);
		cr_expect(strstr(err, fmt("data block %" PRIu64 " (",
					  2 + k * im.rounds)), "%s", err);
	}
	cr_expect(strstr(err, "data block 5 (position 20480) corrected"),
		  "%s", err);
	cr_assert_eq(run_in(im.dir, NULL, &vs_err, VS " verify --fec-device "
			    "f.img --fec-roots 8 d.img h.img %s", im.root), 0,
		     "%s", vs_err);
	cr_expect_eq(found(err), found(vs_err), "ours: %s\nveritysetup: %s",
		     err, vs_err);
	cr_expect_gt(found(err), 8 * 4000);
	/* verify writes nothing */
	run_in(im.dir, &sums2, NULL, "sha256sum d.img h.img f.img");
	cr_expect_str_eq(sums2, sums);
	free(err);
	err = NULL;

	/* with the corrected blocks known bad (erasures) up to roots of them
	 * per round: beyond veritysetup's decoder, not beyond ours */
	for (int k = 4; k < 8; k++)
		destroy(fmt("%s/d.img", im.dir), 4096, 1 + k * im.rounds, k);
	cr_expect_eq(tool(&im, &err, "verify --fec-device f.img --fec-roots 8 "
			  "d.img h.img %s", im.root), 0, "%s", err);
	free(err);
	free(sums);
	free(sums2);
	free(vs_err);
	image_free(&im);
}

Test(verity_fec_cli, verify_fails_beyond_the_limit, .timeout = 60)
{
	struct image im;
	char *err = NULL, *json = NULL;

	image_make(&im, 2);
	/* 3 whole blocks of one round: more erasures than roots */
	for (int k = 0; k < 3; k++)
		destroy(fmt("%s/d.img", im.dir), 4096, 7 + k * im.rounds, k);
	cr_expect_eq(tool(&im, &err, "verify --fec-device f.img d.img h.img "
			  "%s", im.root), 2);
	for (int k = 0; k < 3; k++)
		cr_expect(strstr(err, fmt("data block %" PRIu64 " (position "
					  "%" PRIu64 ") cannot be repaired",
					  7 + k * im.rounds,
					  (7 + k * im.rounds) * 4096)), "%s",
			  err);
	cr_expect(strstr(err, "Errors cannot be repaired with FEC device."),
		  "%s", err);
	cr_expect_neq(run_in(im.dir, NULL, NULL, VS " verify --fec-device "
			     "f.img d.img h.img %s", im.root), 0);
	cr_assert_eq(run_in(im.dir, &json, NULL, "'%s' verify --json "
			    "--fec-device f.img d.img h.img %s", vt(),
			    im.root), 2);
	cr_expect(strstr(json, "\"verified\":false"), "%s", json);
	cr_expect(strstr(json, "\"unrepairable_blocks\":3"), "%s", json);
	/* repair leaves what it cannot prove alone */
	cr_expect_eq(tool(&im, NULL, "repair --fec-device f.img d.img h.img "
			  "%s", im.root), 2);
	cr_expect(same(im.dir, "h.img", "h.orig"));
	cr_expect(same(im.dir, "f.img", "f.orig"));
	free(err);
	free(json);
	image_free(&im);
}

Test(verity_fec_cli, wrong_root_hash_is_not_repaired)
{
	struct image im;
	char *err = NULL, *wrong;

	image_make(&im, 4);
	destroy(fmt("%s/d.img", im.dir), 4096, 10, 1);
	cr_assert_eq(run_in(im.dir, NULL, NULL, "cp d.img d.bad"), 0);
	wrong = strdup(im.root);
	wrong[0] = wrong[0] == '0' ? '1' : '0';
	/* the corrected block matches its parent, but the tree does not
	 * lead to this root hash: nothing is trusted, nothing written */
	cr_expect_eq(tool(&im, &err, "verify --fec-device f.img --fec-roots 4 "
			  "d.img h.img %s", wrong), 2, "%s", err);
	free(err);
	cr_expect_eq(tool(&im, &err, "repair --fec-device f.img --fec-roots 4 "
			  "d.img h.img %s", wrong), 2, "%s", err);
	cr_expect(same(im.dir, "d.img", "d.bad"));
	cr_expect(same(im.dir, "h.img", "h.orig"));
	free(err);
	free(wrong);
	image_free(&im);
}

Test(verity_fec_cli, repair_restores_every_byte, .timeout = 60)
{
	struct image im;
	char *err = NULL, *json = NULL;

	image_make(&im, 4);
	/* data, a level-0 block, the top block and some parity */
	destroy(fmt("%s/d.img", im.dir), 4096, 3, 1);
	destroy(fmt("%s/d.img", im.dir), 4096, 600, 2);
	destroy(fmt("%s/h.img", im.dir), 4096, 1, 3);	/* top */
	destroy(fmt("%s/h.img", im.dir), 4096, 5, 4);	/* level 0 */
	th_flip_byte(fmt("%s/f.img", im.dir), 4096 * 3 + 17, 0xff);
	cr_assert_eq(run_in(im.dir, &json, &err, "'%s' repair --json "
			    "--fec-device f.img --fec-roots 4 d.img h.img %s",
			    vt(), im.root), 0, "%s", err);
	cr_expect(same(im.dir, "d.img", "d.orig"));
	cr_expect(same(im.dir, "h.img", "h.orig"));
	cr_expect(same(im.dir, "f.img", "f.orig"), "parity not rewritten");
	cr_expect(strstr(json, "\"written_blocks\":4"), "%s", json);
	cr_expect(strstr(err, "data block 600 (position 2457600) repaired"),
		  "%s", err);
	cr_expect(strstr(err, "hash block 0 of level 1 (position 4096) "
			 "repaired"), "%s", err);
	cr_expect_eq(run_in(im.dir, NULL, NULL, VS " verify d.img h.img %s",
			    im.root), 0);
	/* intact: nothing to do */
	cr_expect_eq(tool(&im, NULL, "repair --fec-device f.img --fec-roots 4 "
			  "d.img h.img %s", im.root), 0);
	cr_expect(same(im.dir, "d.img", "d.orig"));
	free(err);
	free(json);
	image_free(&im);
}

/*
 * Parity made for another version of the image (data block X differs):
 * the decoder "corrects" X (and the tree blocks above it) towards that
 * version, which does not verify; only the really damaged block Y may be
 * written, and the stale parity is rewritten from the verified blocks.
 */
Test(verity_fec_cli, repair_never_writes_what_does_not_verify, .timeout = 60)
{
	struct image im;
	char *err = NULL, *json = NULL;
	uint64_t x = 40, y = 41;

	image_make(&im, 8);
	cr_assert_eq(run_in(im.dir, NULL, NULL, "cp d.img d2.img"), 0);
	destroy(fmt("%s/d2.img", im.dir), 4096, x, 9);
	cr_assert_eq(run_in(im.dir, NULL, NULL, VS " format d2.img h2.img "
			    "--fec-device f.img --fec-roots 8 --salt " SALT),
		     0);
	cr_assert(!same(im.dir, "f.img", "f.orig"));
	destroy(fmt("%s/d.img", im.dir), 4096, y, 10);
	cr_assert_eq(run_in(im.dir, &json, &err, "'%s' repair --json "
			    "--fec-device f.img --fec-roots 8 d.img h.img %s",
			    vt(), im.root), 0, "%s", err);
	cr_expect(same(im.dir, "d.img", "d.orig"));
	cr_expect(same(im.dir, "h.img", "h.orig"));
	cr_expect(same(im.dir, "f.img", "f.orig"), "stale parity kept");
	cr_expect(strstr(json, "\"written_blocks\":1,"), "%s", json);
	cr_expect(strstr(err, fmt("data block %" PRIu64 " (", y)), "%s", err);
	cr_expect(!strstr(err, fmt("data block %" PRIu64 " (", x)), "%s",
		  err);
	free(err);
	free(json);
	image_free(&im);
}

/*
 * A data block changed with its parity made to agree (FEC over the
 * changed data and the old tree, made with lib/fec.c) is invisible to the
 * FEC pass; another, really damaged block gets corrected.  verify must
 * not call the image good on the strength of that correction: the tree
 * is checked again with the corrections laid over the files.
 */
Test(verity_fec_cli, verify_rechecks_the_tree_after_correction)
{
	struct dmt_file *d = NULL, *h = NULL, *f = NULL;
	struct dmt_fec_params p;
	struct image im;
	char *err = NULL;

	image_make(&im, 4);
	destroy(fmt("%s/d.img", im.dir), 4096, 77, 1);		/* tampered */
	cr_assert_eq(dmt_file_open(fmt("%s/d.img", im.dir), DMT_OPEN_READ, &d),
		     0);
	cr_assert_eq(dmt_file_open(fmt("%s/h.img", im.dir), DMT_OPEN_READ, &h),
		     0);
	cr_assert_eq(dmt_file_open(fmt("%s/f.img", im.dir), DMT_OPEN_RW, &f),
		     0);
	memset(&p, 0, sizeof(p));
	p.roots = 4;
	p.block_size = 4096;
	p.data_blocks = im.n;
	p.hash_start = 1;
	p.data = d;
	p.hash = h;
	p.fec = f;
	cr_assert_eq(dmt_fec_encode(&p, NULL, NULL), 0);
	dmt_file_close(d);
	dmt_file_close(h);
	dmt_file_close(f);
	destroy(fmt("%s/d.img", im.dir), 4096, 300, 2);		/* damaged */
	cr_expect_eq(tool(&im, &err, "verify --fec-device f.img --fec-roots 4 "
			  "d.img h.img %s", im.root), 2, "%s", err);
	cr_expect(strstr(err, "data block 300 (position 1228800) corrected"),
		  "%s", err);
	cr_expect(strstr(err, "data block 77 (position 315392) is "
			 "corrupted"), "%s", err);
	free(err);
	cr_expect_eq(tool(&im, &err, "repair --fec-device f.img --fec-roots 4 "
			  "d.img h.img %s", im.root), 2, "%s", err);
	free(err);
	image_free(&im);
}

Test(verity_fec_cli, shared_hash_file_verify_and_repair, .timeout = 60)
{
	char *dir = th_mkdtemp(), *out = NULL, *err = NULL, root[65];
	uint64_t end;

	th_write_random_file(fmt("%s/d.img", dir), 2000 * 4096, 12);
	/* 2000 blocks: 16 level-0 blocks + 1 top after the superblock */
	end = (1 + 16 + 1) * 4096;
	cr_assert_eq(run_in(dir, &out, NULL, "'%s' build d.img h.img "
			    "--fec-device h.img --fec-offset %" PRIu64
			    " --fec-roots 6 && cp d.img d.orig && cp h.img "
			    "h.orig", vt(), end), 0);
	snprintf(root, sizeof(root), "%s", field(out, "Root hash:      \t"));
	destroy(fmt("%s/d.img", dir), 4096, 1999, 1);
	destroy(fmt("%s/h.img", dir), 4096, 4, 2);
	cr_expect_eq(run_in(dir, NULL, &err, "'%s' verify --fec-device h.img "
			    "--fec-offset %" PRIu64 " --fec-roots 6 d.img "
			    "h.img %s", vt(), end, root), 0, "%s", err);
	free(err);
	cr_expect_eq(run_in(dir, NULL, &err, "'%s' repair --fec-device h.img "
			    "--fec-offset %" PRIu64 " --fec-roots 6 d.img "
			    "h.img %s", vt(), end, root), 0, "%s", err);
	cr_expect(same(dir, "d.img", "d.orig"));
	cr_expect(same(dir, "h.img", "h.orig"));
	free(err);
	free(out);
	th_rmtree(dir);
	free(dir);
}

/* ---- signatures ---- */

struct keys {
	char *dir;
};

/* A throwaway RSA key + self-signed certificate, and a second pair. */
static void keys_make(struct keys *k)
{
	char *err = NULL;

	need_openssl();
	k->dir = th_mkdtemp();
	cr_assert_eq(run_in(k->dir, NULL, &err, "for n in 1 2; do openssl "
			    "req -x509 -newkey rsa:2048 -nodes -keyout k$n.pem "
			    "-out c$n.pem -days 2 -subj /CN=verity-test$n "
			    "2>&1 >/dev/null || exit 1; done"), 0, "%s", err);
	free(err);
}

/* openssl smime -verify of sig over the string `content`. */
static int smime_verify(const char *dir, const char *sig, const char *cert,
			const char *content)
{
	return run_in(dir, NULL, NULL, "printf %%s '%s' > content && openssl "
		      "smime -verify -binary -inform der -in '%s' -content "
		      "content -certfile '%s' -nointern -noverify >/dev/null "
		      "2>&1", content, sig, cert);
}

Test(verity_fec_cli, sign_and_verify_round_trip, .timeout = 60)
{
	struct keys k;
	char *out = NULL, *err = NULL, root[65], other[65];

	keys_make(&k);
	th_write_random_file(fmt("%s/d.img", k.dir), 256 * 4096, 13);
	cr_assert_eq(run_in(k.dir, &out, NULL, "'%s' build d.img h.img "
			    "--root-hash-file root", vt()), 0);
	snprintf(root, sizeof(root), "%s", field(out, "Root hash:      \t"));
	cr_assert_eq(strlen(root), 64);
	memcpy(other, root, sizeof(other));
	other[63] = other[63] == 'a' ? 'b' : 'a';

	cr_assert_eq(run_in(k.dir, NULL, &err, "'%s' sign --key k1.pem "
			    "--cert c1.pem %s s.p7s", vt(), root), 0, "%s",
		     err);
	cr_expect_eq(smime_verify(k.dir, "s.p7s", "c1.pem", root), 0);
	cr_expect_neq(smime_verify(k.dir, "s.p7s", "c1.pem", other), 0);
	cr_expect_neq(smime_verify(k.dir, "s.p7s", "c2.pem", root), 0);
	/* what the kernel and systemd expect: openssl smime -sign -nocerts
	 * -noattr -binary (RSA PKCS#1 v1.5 is deterministic) */
	cr_expect_eq(run_in(k.dir, NULL, NULL, "printf %%s %s > r.txt && "
			    "openssl smime -sign -nocerts -noattr -binary -md "
			    "sha256 -in r.txt -signer c1.pem -inkey k1.pem "
			    "-outform der -out ref.p7s && cmp -s ref.p7s s.p7s",
			    root), 0);
	/* --root-hash-file (upper case too) signs the same string */
	cr_assert_eq(run_in(k.dir, NULL, NULL, "tr a-f A-F < root > ROOT && "
			    "'%s' sign --key k1.pem --cert c1.pem "
			    "--root-hash-file ROOT s2.p7s && cmp -s s.p7s "
			    "s2.p7s", vt()), 0);

	cr_expect_eq(run_in(k.dir, NULL, NULL, "'%s' verify d.img h.img %s "
			    "--root-hash-signature s.p7s --cert c1.pem", vt(),
			    root), 0);
	/* wrong certificate, wrong root hash, garbage: exit 2 */
	cr_expect_eq(run_in(k.dir, NULL, NULL, "'%s' verify d.img h.img %s "
			    "--root-hash-signature s.p7s --cert c2.pem", vt(),
			    root), 2);
	cr_assert_eq(run_in(k.dir, NULL, NULL, "'%s' sign --key k1.pem "
			    "--cert c1.pem %s so.p7s", vt(), other), 0);
	cr_expect_eq(run_in(k.dir, NULL, NULL, "'%s' verify d.img h.img %s "
			    "--root-hash-signature so.p7s --cert c1.pem", vt(),
			    root), 2);
	cr_expect_eq(run_in(k.dir, NULL, NULL, "'%s' verify d.img h.img "
			    "--root-hash-file root --root-hash-signature root "
			    "--cert c1.pem", vt()), 2);
	/* a key that is not the certificate's is refused */
	cr_expect_eq(run_in(k.dir, NULL, NULL, "'%s' sign --key k2.pem "
			    "--cert c1.pem %s s3.p7s", vt(), root), 1);
	cr_expect_eq(access(fmt("%s/s3.p7s", k.dir), F_OK), -1);
	free(out);
	free(err);
	th_rmtree(k.dir);
	free(k.dir);
}

Test(verity_fec_cli, build_signs_and_writes_sidecars, .timeout = 60)
{
	struct keys k;
	char *out = NULL, *err = NULL, root[65], *text;
	size_t len;

	keys_make(&k);
	th_write_random_file(fmt("%s/img.raw", k.dir), 300 * 4096, 14);
	cr_assert_eq(run_in(k.dir, &out, &err, "'%s' build img.raw img.verity "
			    "--sidecar --sign-key k1.pem --sign-cert c1.pem "
			    "--fec-device img.fec", vt()), 0, "%s", err);
	snprintf(root, sizeof(root), "%s", field(out, "Root hash:      \t"));
	/* systemd's names: .raw dropped */
	text = (char *)th_read_file(fmt("%s/img.roothash", k.dir), &len);
	cr_expect_eq(len, 64);
	cr_expect(!memcmp(text, root, 64));
	free(text);
	cr_expect_eq(smime_verify(k.dir, "img.roothash.p7s", "c1.pem", root),
		     0);
	cr_expect_eq(access(fmt("%s/img.raw.roothash", k.dir), F_OK), -1);
	cr_expect_eq(run_in(k.dir, NULL, NULL, "'%s' verify img.raw "
			    "img.verity --root-hash-file img.roothash "
			    "--root-hash-signature img.roothash.p7s --cert "
			    "c1.pem", vt()), 0);
	free(out);
	free(err);
	out = err = NULL;

	/* no .raw: the name as is; --root-hash-signature FILE; JSON */
	th_write_random_file(fmt("%s/disk", k.dir), 100 * 4096, 15);
	cr_assert_eq(run_in(k.dir, &out, &err, "'%s' build disk disk.verity "
			    "--sidecar --sign-key k1.pem --sign-cert c1.pem "
			    "--root-hash-signature sig --json", vt()), 0, "%s",
		     err);
	cr_expect_eq(access(fmt("%s/disk.roothash", k.dir), F_OK), 0);
	cr_expect(same(k.dir, "sig", "disk.roothash.p7s"));
	cr_expect(strstr(out, "--root-hash-signature=sig"), "%s", out);
	free(out);
	free(err);
	/* signing needs somewhere to put the signature, and a matching
	 * certificate, checked before anything is built */
	cr_expect_eq(run_in(k.dir, NULL, NULL, "'%s' build disk x.verity "
			    "--sign-key k1.pem --sign-cert c1.pem", vt()), 1);
	cr_expect_eq(run_in(k.dir, NULL, NULL, "'%s' build disk y.verity "
			    "--sign-key k2.pem --sign-cert c1.pem "
			    "--root-hash-signature s", vt()), 1);
	cr_expect_eq(access(fmt("%s/y.verity", k.dir), F_OK), -1);
	th_rmtree(k.dir);
	free(k.dir);
}

/*
 * verify with FEC says what it found and then the outcome, never
 * "Verification failed" for an image that verifies after correction;
 * -q keeps only results and errors.
 */
Test(verity_fec_cli, verify_says_trying_fec_then_outcome)
{
	char *dir = th_mkdtemp(), *err = NULL, *out = NULL, root[80];

	th_write_random_file(fmt("%s/d.img", dir), 64 * 4096, 21);
	cr_assert_eq(run_in(dir, NULL, NULL, "'%s' build --salt - "
			    "--fec-device f.img --root-hash-file root d.img "
			    "h.img", vt()), 0);
	th_flip_byte(fmt("%s/d.img", dir), 3 * 4096 + 7, 0x01);
	th_flip_byte(fmt("%s/d.img", dir), 9 * 4096 + 7, 0x01);
	cr_assert_eq(run_in(dir, &out, NULL, "cat root"), 0);
	snprintf(root, sizeof(root), "%s", out);
	free(out);
	cr_assert_eq(run_in(dir, NULL, &err, "'%s' verify --fec-device f.img "
			    "d.img h.img %s", vt(), root), 0, "%s", err);
	cr_expect(strstr(err, "verity-tool: 2 blocks corrupted, trying FEC.\n"),
		  "%s", err);
	cr_expect_null(strstr(err, "Verification failed"), "%s", err);
	cr_expect_lt(strstr(err, "trying FEC"), strstr(err, "corrected with "
						       "FEC"), "%s", err);
	cr_expect(strstr(err, "Found 2 repairable errors with FEC device."),
		  "%s", err);
	free(err);

	/* -q: nothing on stderr for an image FEC corrects */
	cr_assert_eq(run_in(dir, NULL, &err, "'%s' verify -q --fec-device "
			    "f.img d.img h.img %s", vt(), root), 0, "%s", err);
	cr_expect_str_empty(err);
	free(err);
	th_rmtree(dir);
	free(dir);
}
