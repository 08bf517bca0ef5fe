// SPDX-License-Identifier: MIT
/*
 * fsverity-tool end to end, with Debian's `fsverity` 1.5 (fsverity-utils)
 * as the oracle: stdout, --out-merkle-tree and --out-descriptor bytes and
 * signatures must be identical for the same arguments.  Tests that need
 * the oracle skip (and say so) when it is not installed; signatures are
 * also checked with `openssl smime -verify`.
 */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/helpers.h"

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

static void need_fsverity(void)
{
	if (!th_have_cmd("fsverity"))
		cr_skip("fsverity (fsverity-utils 1.5) is not installed: "
			"apt-get install fsverity");
}

/* Runs a shell command line in the test directory. */
static int sh(char **out, char **err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int sh(char **out, char **err, const char *fmt, ...)
{
	char *cmd;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	cr_assert(vasprintf(&cmd, fmt, ap) >= 0);
	va_end(ap);
	rc = th_sh(out, err, "cd '%s' && FVT='%s' && %s", dir,
		   th_tool("fsverity-tool"), cmd);
	free(cmd);
	return rc;
}

static void file(const char *name, uint64_t len, uint64_t seed)
{
	char *path = th_path(dir, name);

	th_write_random_file(path, len, seed);
	free(path);
}

static bool same(const char *a, const char *b)
{
	char *pa = th_path(dir, a), *pb = th_path(dir, b);
	bool eq = th_files_equal(pa, pb);

	free(pa);
	free(pb);
	return eq;
}

static bool exists(const char *name)
{
	char *path = th_path(dir, name);
	bool e = access(path, F_OK) == 0;

	free(path);
	return e;
}

/* Our stdout and exit code == fsverity's for `digest ARGS`. */
static void digest_like_oracle(const char *args)
{
	char *mine = NULL, *theirs = NULL, *err = NULL;
	int rc1 = sh(&mine, &err, "$FVT digest %s", args);
	int rc2 = sh(&theirs, NULL, "fsverity digest %s", args);

	cr_assert_eq(rc1, 0, "digest %s: rc %d: %s", args, rc1, err);
	cr_assert_eq(rc2, 0, "fsverity digest %s: rc %d", args, rc2);
	cr_assert_str_eq(mine, theirs, "digest %s", args);
	free(mine);
	free(theirs);
	free(err);
}

/* Sizes around one block, the fan-out (128 sha256 / 64 sha512 digests per
 * 4 KiB block) and a second tree level, sparse. */
static void make_sizes(void)
{
	static const uint64_t sizes[] = { 0, 1, 4095, 4096, 4097,
					  128 * 4096, 128 * 4096 + 1,
					  64 * 4096 + 1, 128 * 128 * 4096 + 1 };
	char name[32];

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		snprintf(name, sizeof(name), "s%zu", i);
		file(name, sizes[i], i + 1);
	}
	cr_assert_eq(sh(NULL, NULL, "truncate -s 3M sparse && "
			"printf x | dd of=sparse bs=1 seek=1000000 "
			"conv=notrunc 2>/dev/null"), 0);
}

#define SIZES "s0 s1 s2 s3 s4 s5 s6 s7 s8 sparse"

TestSuite(fsverity_tool, .init = setup, .fini = teardown, .timeout = 120);

/* 300 s: the 2^30-byte block case alone takes a minute on a busy machine */
Test(fsverity_tool, digest_matches_fsverity_sizes_and_options, .timeout = 300)
{
	static const char *const opts[] = {
		"", "--hash-alg sha512", "--compact", "--for-builtin-sig",
		"--compact --for-builtin-sig", "--block-size 1024",
		"--block-size 65536", "--block-size 64", "--salt ''",
		"--hash-alg sha512 --block-size 128", "--salt 00",
		"--salt 0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20",
		"--hash-alg sha512 --salt abcdef --block-size 2048",
		"--block-size 1073741824",
	};
	char args[512];

	need_fsverity();
	make_sizes();
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		/* 2^30-byte blocks: fsverity 1.5 allocates per level and
		 * both hash a whole padded block per file; keep that one to
		 * small files (reduced: the empty one and one block) */
		snprintf(args, sizeof(args), "%s %s", opts[i],
			 !strstr(opts[i], "1073741824") ? SIZES
			 : th_reduced()			  ? "s0 s1"
							  : "s0 s1 s4");
		digest_like_oracle(args);
	}
}

Test(fsverity_tool, out_files_match_fsverity_for_many_files)
{
	static const char *const opts[] = { "", "--hash-alg sha512 --salt 99",
					    "--block-size 1024" };
	char *err = NULL;

	need_fsverity();
	make_sizes();
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		/* big tree first, small after: 1.5 overwrites from offset 0 */
		cr_assert_eq(sh(NULL, &err, "$FVT digest %s --out-merkle-tree t1 "
				"--out-descriptor d1 s8 s4 s6 s0 sparse s2",
				opts[i]), 0, "%s", err);
		cr_assert_eq(sh(NULL, NULL, "fsverity digest %s "
				"--out-merkle-tree t2 --out-descriptor d2 "
				"s8 s4 s6 s0 sparse s2", opts[i]), 0);
		cr_expect(same("t1", "t2"), "tree %s", opts[i]);
		cr_expect(same("d1", "d2"), "descriptor %s", opts[i]);
		free(err);
		err = NULL;
	}
	/* one file without a tree: an empty tree file, as 1.5 */
	cr_assert_eq(sh(NULL, NULL, "$FVT digest --out-merkle-tree t3 s1 && "
			"fsverity digest --out-merkle-tree t4 s1"), 0);
	cr_expect(same("t3", "t4"));
}

Test(fsverity_tool, out_dir_per_file_matches_single_file_outputs)
{
	need_fsverity();
	make_sizes();
	cr_assert_eq(sh(NULL, NULL, "mkdir -p in/x && cp s4 s8 in/ && cp s6 in/x/ "
			"&& $FVT digest -r in --out-dir o >/dev/null"), 0);
	cr_assert_eq(sh(NULL, NULL, "fsverity digest --out-merkle-tree t "
			"--out-descriptor d in/x/s6 >/dev/null"), 0);
	cr_expect(same("o/x/s6.merkle_tree", "t"));
	cr_expect(same("o/x/s6.descriptor", "d"));
	cr_assert_eq(sh(NULL, NULL, "fsverity digest --out-merkle-tree t "
			"--out-descriptor d in/s8 >/dev/null"), 0);
	cr_expect(same("o/s8.merkle_tree", "t"));
	cr_expect(same("o/s8.descriptor", "d"));
}

/* The line `evmctl sign_hash --veritysig` reads: "<alg>:<hex> <path>"
 * (alg up to ':', hex up to the first space, the path is the rest). */
Test(fsverity_tool, default_line_format_pinned)
{
	char *out = NULL, alg[16], hex[200], path[64];

	file("with space", 5000, 3);
	cr_assert_eq(sh(&out, NULL, "$FVT digest 'with space' && "
			"$FVT digest --hash-alg sha512 'with space'"), 0);
	cr_assert_eq(sscanf(out, "%15[^:]:%199[0-9a-f] %63[^\n]", alg, hex,
			    path), 3, "%s", out);
	cr_expect_str_eq(alg, "sha256");
	cr_expect_eq(strlen(hex), 64);
	cr_expect_str_eq(path, "with space");
	cr_assert(strchr(out, '\n'));
	cr_assert_eq(sscanf(strchr(out, '\n') + 1, "%15[^:]:%199[0-9a-f] %63[^\n]",
			    alg, hex, path), 3);
	cr_expect_str_eq(alg, "sha512");
	cr_expect_eq(strlen(hex), 128);
	free(out);
}

Test(fsverity_tool, recursive_sorted_and_same_for_any_threads)
{
	char *t1 = NULL, *t2 = NULL, *ref = NULL, *err = NULL;

	need_fsverity();
	cr_assert_eq(sh(NULL, NULL, "mkdir -p tree/B tree/a/deep tree/_ && "
			"for i in 0 1 2 3 4 5 6 7 8 9; do "
			"head -c $((i * 3001)) /dev/urandom > tree/a/f$i; "
			"head -c $((i * 40000)) /dev/urandom > tree/B/g$i; done; "
			"head -c 3000000 /dev/urandom > tree/a/deep/big; "
			": > tree/_/empty; cp tree/a/f1 tree/Z"), 0);
	cr_assert_eq(sh(&t1, &err, "$FVT digest -r --threads 1 tree"), 0, "%s",
		     err);
	cr_assert_eq(sh(&t2, NULL, "$FVT digest -r --threads 2 tree"), 0);
	cr_assert_eq(sh(&ref, NULL, "find tree -type f | LC_ALL=C sort | "
			"xargs fsverity digest"), 0);
	cr_expect_str_eq(t1, t2);
	cr_expect_str_eq(t1, ref);
	free(t1);
	free(t2);
	free(ref);
	free(err);
}

Test(fsverity_tool, files_from_newline_nul_and_stdin)
{
	char *a = NULL, *b = NULL, *c = NULL, *ref = NULL;

	need_fsverity();
	make_sizes();
	cr_assert_eq(sh(&a, NULL, "printf 's1\\ns4\\n\\ns8\\n' > list && "
			"$FVT digest s0 --files-from list"), 0);
	cr_assert_eq(sh(&b, NULL, "printf 's1\\0s4\\0s8\\0' | "
			"$FVT digest s0 -0 --files-from -"), 0);
	cr_assert_eq(sh(&c, NULL, "printf 's1\\ns4\\ns8' | "
			"$FVT digest s0 --files-from -"), 0);
	cr_assert_eq(sh(&ref, NULL, "fsverity digest s0 s1 s4 s8"), 0);
	cr_expect_str_eq(a, ref);
	cr_expect_str_eq(b, ref);
	cr_expect_str_eq(c, ref);
	free(a);
	free(b);
	free(c);
	free(ref);
}

Test(fsverity_tool, hard_links_once_every_path_symlinks_skipped)
{
	char *out = NULL, *err = NULL, *ref = NULL;
	int rc;

	need_fsverity();
	cr_assert_eq(sh(NULL, NULL, "mkdir -p d/s && head -c 9000 /dev/urandom "
			"> d/a && ln d/a d/s/b && ln -s a d/link && "
			"mkfifo d/fifo && head -c 5 /dev/urandom > d/z"), 0);
	cr_assert_eq(sh(&out, &err, "$FVT digest -r d"), 0, "%s", err);
	cr_assert_eq(sh(&ref, NULL, "fsverity digest d/a d/s/b d/z"), 0);
	cr_expect_str_eq(out, ref);
	cr_expect(strstr(err, "d/link") && strstr(err, "symlink"), "%s", err);
	cr_expect(strstr(err, "d/fifo") && strstr(err, "FIFO"), "%s", err);
	free(out);
	free(err);
	/* --strict: the same, and exit 4 */
	rc = sh(&out, &err, "$FVT digest -r --strict d");
	cr_expect_eq(rc, 4, "%d %s", rc, err);
	cr_expect_str_eq(out, ref);
	free(out);
	free(err);
	/* a symlink named as an argument is followed */
	cr_assert_eq(sh(&out, NULL, "$FVT digest d/link"), 0);
	cr_expect(strstr(out, strchr(ref, ':')) == NULL);	/* path differs */
	cr_expect(!strncmp(out, ref, 71), "%s", out);
	free(out);
	free(ref);
}

Test(fsverity_tool, json_lines)
{
	char *out = NULL, *ref = NULL, *line;
	struct json_object *j, *v;
	int n = 0;

	need_fsverity();
	make_sizes();
	cr_assert_eq(sh(&out, NULL, "$FVT digest --json --salt 0a0b s1 s4"), 0);
	cr_assert_eq(sh(&ref, NULL, "fsverity digest --compact --salt 0a0b s1 s4 && "
			"fsverity digest --compact --for-builtin-sig --salt 0a0b s1"),
		     0);
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n"), n++) {
		j = json_tokener_parse(line);
		cr_assert(j, "%s", line);
		cr_assert(json_object_object_get_ex(j, "digest", &v));
		cr_expect(strstr(ref, json_object_get_string(v)));
		cr_assert(json_object_object_get_ex(j, "salt", &v));
		cr_expect_str_eq(json_object_get_string(v), "0a0b");
		cr_assert(json_object_object_get_ex(j, "algorithm", &v));
		cr_expect_str_eq(json_object_get_string(v), "sha256");
		cr_assert(json_object_object_get_ex(j, "block_size", &v));
		cr_expect_eq(json_object_get_int(v), 4096);
		cr_assert(json_object_object_get_ex(j, "size", &v));
		cr_expect_eq(json_object_get_int64(v), n ? 4097 : 1);
		cr_assert(json_object_object_get_ex(j, "formatted_digest", &v));
		if (!n)
			cr_expect(strstr(ref, json_object_get_string(v)));
		json_object_put(j);
	}
	cr_expect_eq(n, 2);
	free(out);
	free(ref);
}

/* ---- bad input ---- */

Test(fsverity_tool, unreadable_files_reported_others_digested)
{
	char *out = NULL, *err = NULL, *ref = NULL;
	int rc;

	need_fsverity();
	make_sizes();
	rc = sh(&out, &err, "$FVT digest s1 missing s4 . s8 --out-merkle-tree t "
		"--out-descriptor d");
	cr_expect_eq(rc, 4, "%d", rc);	/* the first failure: missing */
	cr_assert_eq(sh(&ref, NULL, "fsverity digest s1 s4 s8"), 0);
	cr_expect_str_eq(out, ref);
	cr_expect(strstr(err, "missing"), "%s", err);
	cr_expect(strstr(err, ".: is a directory"), "%s", err);
	cr_expect(!exists("t") && !exists("d"), "outputs written on failure");
	free(out);
	free(err);
	free(ref);
	/* --stop-on-error: fsverity 1.5's behaviour, nothing after */
	rc = sh(&out, &err, "$FVT digest --stop-on-error s1 missing s4");
	cr_expect_eq(rc, 4);
	cr_assert_eq(sh(&ref, NULL, "fsverity digest s1"), 0);
	cr_expect_str_eq(out, ref);
	free(out);
	free(err);
	free(ref);
	/* a directory alone: usage (1); fsverity says 1 too */
	cr_expect_eq(sh(NULL, NULL, "$FVT digest ."), 1);
}

/* A FIFO is refused without blocking; a character device is digested as
 * fsverity digests it (a private null node, never the system's). */
Test(fsverity_tool, fifo_refused_without_blocking_chardev_digested)
{
	char *err = NULL, *out = NULL, *ref = NULL;
	int rc;

	cr_assert_eq(sh(NULL, NULL, "mkfifo p"), 0);
	rc = sh(NULL, &err, "$FVT digest p");
	cr_expect_eq(rc, 4, "%d", rc);
	cr_expect(strstr(err, "FIFO"), "%s", err);
	free(err);
	need_fsverity();
	cr_assert_eq(sh(NULL, NULL, "mknod null c 1 3 && : > empty"), 0);
	rc = sh(&out, &err, "$FVT digest null empty");
	cr_expect_eq(rc, 0, "%d: %s", rc, err);
	cr_assert_eq(sh(&ref, NULL, "fsverity digest null empty"), 0);
	cr_expect_str_eq(out, ref);
	free(out);
	free(err);
	free(ref);
}

Test(fsverity_tool, absurd_options_exit_1_nothing_written)
{
	static const char *const bad[] = {
		"--block-size 3", "--block-size 0", "--block-size 32",
		"--block-size 2147483648", "--block-size 99999999999",
		"--hash-alg sha1", "--salt zz", "--salt 123", "--salt -",
		"--salt 0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2021",
		"--hash-alg sha512 --block-size 64", "--compact --key k",
		"-0 s1", "--out-dir o --out-merkle-tree t",
	};
	char *err = NULL;

	file("s1", 100, 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = sh(NULL, &err, "$FVT digest %s --out-merkle-tree t "
			    "--out-descriptor d s1", bad[i]);

		cr_expect_eq(rc, 1, "%s: rc %d", bad[i], rc);
		cr_expect(err && *err, "%s: no message", bad[i]);
		cr_expect(!exists("t") && !exists("d"), "%s wrote", bad[i]);
		free(err);
		err = NULL;
	}
	cr_expect_eq(sh(NULL, NULL, "$FVT digest"), 1);
}

/* ---- signatures ---- */

static void make_key(void)
{
	cr_assert_eq(sh(NULL, NULL, "openssl req -newkey rsa:2048 -nodes "
			"-keyout key.pem -x509 -out cert.pem -subj /CN=fvt "
			"-days 30 2>/dev/null && cat key.pem cert.pem > "
			"both.pem"), 0);
}

Test(fsverity_tool, sign_byte_identical_to_fsverity_sign)
{
	static const char *const opts[] = { "", "--hash-alg sha512 --salt 01",
					    "--block-size 1024" };
	char *mine = NULL, *theirs = NULL, *err = NULL;

	need_fsverity();
	make_key();
	make_sizes();
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		cr_assert_eq(sh(&mine, &err, "$FVT sign s6 a.sig --key key.pem "
				"--cert cert.pem %s", opts[i]), 0, "%s", err);
		cr_assert_eq(sh(&theirs, NULL, "fsverity sign s6 b.sig --key "
				"key.pem --cert cert.pem %s", opts[i]), 0);
		cr_expect_str_eq(mine, theirs);
		cr_expect(same("a.sig", "b.sig"), "signature %s", opts[i]);
		free(mine);
		free(theirs);
		free(err);
	}
	/* sign's --out-merkle-tree / --out-descriptor, as fsverity sign's */
	cr_assert_eq(sh(NULL, NULL, "$FVT sign s8 e.sig --key key.pem --cert "
			"cert.pem --out-merkle-tree t1 --out-descriptor d1 "
			">/dev/null && fsverity sign s8 f.sig --key key.pem "
			"--cert cert.pem --out-merkle-tree t2 --out-descriptor "
			"d2 >/dev/null"), 0);
	cr_expect(same("t1", "t2") && same("d1", "d2") && same("e.sig", "f.sig"));
	/* --cert defaults to the key file */
	cr_assert_eq(sh(NULL, NULL, "$FVT sign s6 c.sig --key both.pem && "
			"fsverity sign s6 d.sig --key both.pem"), 0);
	cr_expect(same("c.sig", "d.sig"));
}

/* hex on stdin to bytes: perl is essential on Debian (minbase has no xxd) */
#define UNHEX "perl -ne 'chomp; print pack(\"H*\", $_)'"

Test(fsverity_tool, signature_verifies_with_openssl)
{
	char *err = NULL;

	make_key();
	file("f", 70000, 9);
	cr_assert_eq(sh(NULL, &err, "$FVT sign f f.sig --key key.pem --cert "
			"cert.pem >/dev/null && $FVT digest --compact "
			"--for-builtin-sig f | " UNHEX " > fmt && "
			"openssl smime -verify -binary -inform der -in f.sig "
			"-content fmt -certfile cert.pem -nointern -noverify "
			">/dev/null"), 0, "%s", err);
	free(err);
	/* a signature over another file's digest does not verify */
	file("g", 70001, 9);
	cr_assert_eq(sh(NULL, NULL, "$FVT digest --compact --for-builtin-sig g "
			"| " UNHEX " > fmt2"), 0);
	cr_expect_neq(sh(NULL, NULL, "openssl smime -verify -binary -inform der "
			 "-in f.sig -content fmt2 -certfile cert.pem -nointern "
			 "-noverify"), 0);
}

Test(fsverity_tool, sign_bulk_out_dir_and_manifest)
{
	char *out = NULL, *err = NULL, *b64 = NULL;

	need_fsverity();
	make_key();
	cr_assert_eq(sh(NULL, NULL, "mkdir -p t/x && head -c 5000 /dev/urandom > "
			"t/a && head -c 90000 /dev/urandom > t/x/b && ln t/a "
			"t/x/c"), 0);
	cr_assert_eq(sh(&out, &err, "$FVT sign -r t --out-dir sigs --manifest "
			"m.json --key key.pem --cert cert.pem"), 0, "%s", err);
	cr_expect(strstr(out, "Signed file 't/x/c'"), "%s", out);
	cr_assert_eq(sh(NULL, NULL, "for f in a x/b x/c; do fsverity sign t/$f "
			"ref.sig --key key.pem --cert cert.pem >/dev/null && "
			"cmp ref.sig sigs/$f.sig || exit 1; done"), 0);
	cr_assert_eq(sh(&b64, NULL, "sed -n 2p m.json"), 0);
	cr_expect(strstr(b64, "\"path\":\"t/x/b\""), "%s", b64);
	cr_assert_eq(sh(NULL, NULL, "fsverity sign t/x/b ref.sig --key key.pem "
			"--cert cert.pem >/dev/null && sed -n 2p m.json | "
			"sed 's/.*\"signature\":\"\\([^\"]*\\)\".*/\\1/' | "
			"base64 -d | cmp - ref.sig"), 0);
	free(out);
	free(err);
	free(b64);
}

Test(fsverity_tool, sign_refusals)
{
	char *err = NULL;
	int rc;

	make_key();
	file("f", 100, 1);
	rc = sh(NULL, &err, "$FVT sign f x.sig --key key.pem --pkcs11-engine "
		"/usr/lib/engine.so");
	cr_expect_eq(rc, 1);
	cr_expect(strstr(err, "pkcs11:"), "%s", err);
	free(err);
	cr_expect_eq(sh(NULL, NULL, "$FVT sign f x.sig"), 1);	/* no key */
	rc = sh(NULL, &err, "$FVT sign f x.sig --key key.pem");	/* no cert */
	cr_expect_eq(rc, 4, "%d", rc);
	cr_expect(strstr(err, "--cert"), "%s", err);
	free(err);
	cr_expect_eq(sh(NULL, NULL, "$FVT sign f --key key.pem"), 1);
	cr_expect_eq(sh(NULL, NULL, "$FVT sign missing x.sig --key key.pem "
			"--cert cert.pem"), 4);
	cr_expect(!exists("x.sig"), "x.sig written");
}

Test(fsverity_tool, sign_with_passphrase_file)
{
	char *err = NULL;

	need_fsverity();
	make_key();
	file("f", 12345, 4);
	cr_assert_eq(sh(NULL, NULL, "openssl pkey -in key.pem -aes256 -passout "
			"pass:secret -out enc.pem && echo secret > pass"), 0);
	cr_expect_eq(sh(NULL, NULL, "$FVT sign f x.sig --key enc.pem --cert "
			"cert.pem"), 4);
	cr_assert_eq(sh(NULL, &err, "$FVT sign f x.sig --key enc.pem --cert "
			"cert.pem --key-passphrase-file pass && fsverity sign f "
			"y.sig --key key.pem --cert cert.pem"), 0, "%s", err);
	cr_expect(same("x.sig", "y.sig"));
	free(err);
}

/*
 * Files whose size is not what fstat says: /proc files report 0 bytes and
 * read more (grown while read), sysfs attributes report 4096 and read
 * fewer (shrunk).  fsverity 1.5 prints the empty file's digest for the
 * first; we must report both and print no digest for them.
 */
Test(fsverity_tool, size_change_while_read_reported_no_digest)
{
	const char *shrink = "/sys/kernel/mm/transparent_hugepage/enabled";
	char *out = NULL, *err = NULL;
	struct stat st;
	int rc;

	file("ok", 5000, 2);
	rc = sh(&out, &err, "$FVT digest ok /proc/self/status ok");
	cr_expect_eq(rc, 4, "rc %d", rc);
	cr_expect(strstr(err, "/proc/self/status: the file changed size"),
		  "%s", err);
	cr_expect(!strstr(out, "/proc"), "a digest for a changing file: %s",
		  out);
	cr_expect_eq(strlen(out), 2 * (7 + 64 + 4), "%s", out);	/* 2 x ok */
	free(out);
	free(err);
	if (stat(shrink, &st) < 0 || st.st_size != 4096)
		cr_skip("%s is not a 4096-byte sysfs file here: the shrinking "
			"half is not tested", shrink);
	rc = sh(&out, &err, "$FVT digest %s", shrink);
	cr_expect_eq(rc, 4, "rc %d", rc);
	cr_expect(strstr(err, "changed size"), "%s", err);
	cr_expect_str_eq(out, "");
	free(out);
	free(err);
}

/* The header every tool's page shares, and every option of --help. */
Test(fsverity_tool, man_page_matches_the_tool)
{
	const char *src = getenv("DMT_SRC") ? getenv("DMT_SRC") : ".";
	char *path, *man, *help = NULL, *s;
	size_t len;

	cr_assert(asprintf(&path, "%s/docs/fsverity-tool.8", src) > 0);
	man = (char *)th_read_file(path, &len);
	cr_assert(man, "%s", path);
	cr_expect(strstr(man, "\n.TH FSVERITY-TOOL 8 \"December 2026\" "
			 "\"fsverity-tool 0.1.0\" \"System Administration\"\n"),
		  "the .TH line");
	cr_assert_eq(sh(&help, NULL, "$FVT --help"), 0);
	for (s = help; (s = strstr(s, " --")); s += 3) {
		char opt[64], esc[160];
		size_t n = strspn(s + 3, "abcdefghijklmnopqrstuvwxyz0123456789-");
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
	free(help);
	free(man);
	free(path);
}

/* --progress-json: JSON lines on stderr, results alone on stdout; a hard
 * link counts (and is hashed) once. */
Test(fsverity_tool, progress_json_and_hard_links_hashed_once)
{
	char *out = NULL, *err = NULL, *last;
	struct json_object *j, *v;

	cr_assert_eq(sh(NULL, NULL, "mkdir d && head -c 9000 /dev/urandom > "
			"d/a && ln d/a d/b && head -c 1000 /dev/urandom > d/c"),
		     0);
	cr_assert_eq(sh(&out, &err, "$FVT digest --progress-json -r d"), 0);
	cr_expect(!strstr(out, "device_bytes"), "progress on stdout: %s", out);
	last = strrchr(err, '{');
	cr_assert(last, "no progress line: %s", err);
	j = json_tokener_parse(last);
	cr_assert(j, "%s", last);
	cr_assert(json_object_object_get_ex(j, "device_size", &v));
	cr_expect_str_eq(json_object_get_string(v), "10000",
			 "a hard link counted twice? %s", last);
	cr_assert(json_object_object_get_ex(j, "device_bytes", &v));
	cr_expect_str_eq(json_object_get_string(v), "10000");
	json_object_put(j);
	cr_expect(strstr(out, " d/a\n") && strstr(out, " d/b\n") &&
		  strstr(out, " d/c\n"), "%s", out);
	free(out);
	free(err);
}

/* --out-dir: two files with one output name are refused before anything is
 * written; a file that fails leaves no outputs, the others do. */
Test(fsverity_tool, out_dir_collisions_and_failed_files)
{
	char *err = NULL;
	int rc;

	cr_assert_eq(sh(NULL, NULL, "mkdir -p x && head -c 100 /dev/urandom > a "
			"&& cp a x/a && head -c 100 /dev/urandom > b"), 0);
	rc = sh(NULL, &err, "$FVT digest a x/a --out-dir o");
	cr_expect_eq(rc, 1, "%d", rc);
	cr_expect(strstr(err, "would both be written as 'a'"), "%s", err);
	cr_expect(!exists("o/a.merkle_tree") && !exists("o/a.descriptor"));
	free(err);
	rc = sh(NULL, NULL, "$FVT digest b /proc/self/status --out-dir o2");
	cr_expect_eq(rc, 4, "%d", rc);
	cr_expect(exists("o2/b.merkle_tree") && exists("o2/b.descriptor"));
	cr_expect(!exists("o2/status.merkle_tree") &&
		  !exists("o2/status.descriptor"));
	cr_expect_eq(sh(NULL, NULL, "test -z \"$(ls -A o2 | grep "
			"fsverity-tool)\""), 0, "a temporary file was left");
}

/* Outputs that are not regular files are written in place (renaming over
 * a device node or FIFO would replace it); a symlink keeps pointing at the
 * file it names, which gets the bytes. */
Test(fsverity_tool, outputs_to_devices_and_symlinks)
{
	char *out = NULL, *fifo;
	struct stat st;

	file("a", 70000, 5);
	cr_assert_eq(sh(&out, NULL, "$FVT digest --compact --out-descriptor "
			"/dev/stdout a | wc -c"), 0);
	cr_expect_eq(atoi(out), 256 + 65, "%s", out);
	free(out);
	/* a FIFO stands for a device (a test must not risk /dev/null) */
	cr_assert_eq(sh(NULL, NULL, "mkfifo fifo && { cat fifo > got & } && "
			"$FVT digest --out-descriptor fifo a >/dev/null && "
			"wait && test $(wc -c < got) = 256"), 0);
	fifo = th_path(dir, "fifo");
	cr_assert_eq(stat(fifo, &st), 0);
	cr_expect(S_ISFIFO(st.st_mode), "the FIFO was replaced by a file");
	free(fifo);
	cr_assert_eq(sh(NULL, NULL, "echo old > target && ln -s target link && "
			"$FVT digest --out-descriptor link a >/dev/null && "
			"test -L link && test $(wc -c < target) = 256"), 0);
}

/* Bulk signing: the same manifest whatever --threads; a missing file is
 * reported, the others signed, and the manifest is not written. */
Test(fsverity_tool, sign_bulk_threads_and_failures)
{
	char *out = NULL, *err = NULL;
	int rc;

	make_key();
	cr_assert_eq(sh(NULL, NULL, "mkdir t && for i in $(seq 1 40); do "
			"head -c $((i * 997)) /dev/urandom > t/f$i; done"), 0);
	cr_assert_eq(sh(NULL, NULL, "$FVT sign -r t --threads 1 --manifest m1 "
			"--key key.pem --cert cert.pem >/dev/null && "
			"$FVT sign -r t --threads 2 --manifest m2 --key key.pem "
			"--cert cert.pem >/dev/null && cmp m1 m2 && "
			"test $(wc -l < m1) = 40"), 0);
	rc = sh(&out, &err, "$FVT sign t/f1 missing t/f2 --out-dir o --manifest m3 "
		"--key key.pem --cert cert.pem");
	cr_expect_eq(rc, 4, "%d", rc);
	cr_expect(strstr(err, "missing"), "%s", err);
	cr_expect(strstr(out, "'t/f1'") && strstr(out, "'t/f2'"), "%s", out);
	cr_expect(exists("o/f1.sig") && exists("o/f2.sig"));
	cr_expect(!exists("m3"), "manifest written despite a failure");
	free(out);
	free(err);
	rc = sh(&out, NULL, "$FVT sign --stop-on-error t/f1 missing t/f2 "
		"--out-dir o2 --key key.pem --cert cert.pem");
	cr_expect_eq(rc, 4);
	cr_expect(strstr(out, "'t/f1'") && !strstr(out, "'t/f2'"), "%s", out);
	cr_expect(!exists("o2/f2.sig"));
	free(out);
}

/* stderr without the --progress-json lines. */
static void drop_progress_lines(char *err)
{
	char *in = err, *out = err;

	while (*in) {
		char *nl = strchr(in, '\n');
		size_t len = nl ? (size_t)(nl - in) + 1 : strlen(in);

		if (!memmem(in, len, "\"device_bytes\"", 14)) {
			memmove(out, in, len);
			out += len;
		}
		in += len;
	}
	*out = 0;
}

/* A unix socket bound at dir/name (closed at exit; the file stays). */
static void make_socket(const char *name)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char *path = th_path(dir, name);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	cr_assert_geq(fd, 0);
	cr_assert_lt(strlen(path), sizeof(sa.sun_path));
	strcpy(sa.sun_path, path);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0, "%s",
		     path);
	close(fd);
	free(path);
}

/* Without progress the listing stats nothing (the library's open and
 * fstat find types, sizes and hard links; -r takes readdir's types);
 * with --progress-json it stats every path for the total.  Both print the
 * same results and errors, and exit alike. */
Test(fsverity_tool, listing_without_stat_same_as_with)
{
	static const char *const runs[] = {
		"d/a d/b d/s/c d/fifo d/sock d/link d/missing d/s d/a",
		"--json d/a d/b d/s/c d/fifo d/sock d/link d/missing d/s",
		"-r d",
		"-r --strict d",
		"-r --json d d/b",
		"--files-from list",
	};

	cr_assert_eq(sh(NULL, NULL, "mkdir -p d/s && head -c 9000 /dev/urandom "
			"> d/a && ln d/a d/b && head -c 100 /dev/urandom > "
			"d/s/c && ln d/s/c d/s/c2 && mkfifo d/fifo && "
			"ln -s a d/link && printf 'd/b\\nd/sock\\nd/a\\n"
			"d/none\\nd/s/c2\\nd/s/c\\n' > list"),
		     0);
	make_socket("d/sock");
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		char *out1 = NULL, *err1 = NULL, *out2 = NULL, *err2 = NULL;
		int rc1 = sh(&out1, &err1, "$FVT digest %s", runs[i]);
		int rc2 = sh(&out2, &err2, "$FVT digest --progress-json %s",
			     runs[i]);

		drop_progress_lines(err2);
		cr_expect_eq(rc1, rc2, "%s: exit %d vs %d", runs[i], rc1, rc2);
		cr_expect_str_eq(out1, out2, "%s", runs[i]);
		cr_expect_str_eq(err1, err2, "%s", runs[i]);
		if (i == 0) {
			cr_expect_eq(rc1, 4, "%d", rc1);
			cr_expect(strstr(err1, "d/sock: not a regular file "
					       "(socket)"),
				  "%s", err1);
			cr_expect(strstr(err1, "d/fifo: not a regular file "
					       "(FIFO)"),
				  "%s", err1);
			cr_expect(strstr(err1, "d/s: is a directory"), "%s",
				  err1);
			cr_expect(strstr(err1, "d/missing: cannot read"), "%s",
				  err1);
		}
		if (i == 2)
			cr_expect(strstr(err1, "d/sock: skipped (socket"),
				  "%s", err1);
		free(out1);
		free(err1);
		free(out2);
		free(err2);
	}
}

/* Peak RSS in KiB of `$FVT digest --files-from LIST` in the test
 * directory (stdout to /dev/null); ASan's quarantine off, so that memory
 * freed is memory reused there too. */
static long digest_maxrss(const char *list)
{
	char *cmd = NULL;
	struct rusage ru;
	int status;
	pid_t pid;

	cr_assert(asprintf(&cmd,
			   "cd '%s' && ASAN_OPTIONS=\"$ASAN_OPTIONS:"
			   "quarantine_size_mb=0\" exec '%s' digest "
			   "--files-from %s >/dev/null",
			   dir, th_tool("fsverity-tool"), list) >= 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(wait4(pid, &status, 0, &ru), pid);
	cr_assert(WIFEXITED(status) && !WEXITSTATUS(status), "%s", cmd);
	free(cmd);
	return ru.ru_maxrss;
}

/* A list is hashed and printed while it is read, in blocks, and the
 * printed entries are freed: ten times the entries, about the same
 * memory (the whole list held took ~0.3 KiB per entry). */
Test(fsverity_tool, streamed_list_memory_bounded)
{
	long small, big;

	if (th_reduced())
		cr_skip("peak memory under emulation says nothing of ours");
	cr_assert_eq(sh(NULL, NULL, ": > e && yes e | head -n 12000 > l12k && "
			"yes e | head -n 120000 > l120k"), 0);
	small = digest_maxrss("l12k");
	big = digest_maxrss("l120k");
	cr_expect_lt(big - small, 12 * 1024,
		     "peak RSS %ld KiB for 12,000 entries, %ld for 120,000",
		     small, big);
}

/* Streamed: a hard link whose first path was printed and freed blocks
 * earlier still gets its digest (a kept copy), in its place; the same
 * as the listing that stats everything (--progress-json) and as
 * fsverity. */
Test(fsverity_tool, streamed_links_across_blocks)
{
	char *out1 = NULL, *out2 = NULL, *ref = NULL, *json = NULL;

	cr_assert_eq(sh(NULL, NULL, ": > e && head -c 5000 /dev/urandom > a && "
			"ln a b && { echo b; yes e | head -n 9500; echo a; "
			"yes e | head -n 9000; echo b; echo missing; } > list"),
		     0);
	cr_assert_eq(sh(&out1, NULL, "$FVT digest --files-from list"), 4);
	cr_assert_eq(sh(&out2, NULL, "$FVT digest --progress-json --files-from "
			"list 2>/dev/null"), 4);
	/* (strcmp: criterion's diff of two 1.4 MB strings takes minutes) */
	cr_expect(!strcmp(out1, out2), "streamed and stat'ed outputs differ");
	/* 18,503 lines "sha256:<64 hex> <one-letter path>" */
	cr_expect_eq(strlen(out1), 18503u * 74, "%zu", strlen(out1));
	if (th_have_cmd("fsverity")) {
		cr_assert_eq(sh(&ref, NULL, "grep -v missing list | "
				"xargs -n 1000 fsverity digest"), 0);
		cr_expect(!strcmp(out1, ref), "fsverity-tool and fsverity "
					       "differ");
	}
	cr_assert_eq(sh(&json, NULL, "$FVT digest --json --files-from list | "
			"grep -c '\"path\":\"[ab]\",\"size\":5000,'"), 0);
	cr_expect_str_eq(json, "3\n");
	free(out1);
	free(out2);
	/* the same as arguments under -r: stat'ed by the listing, whose own
	 * link table finds the alias of a printed, freed entry */
	cr_assert_eq(sh(&out1, NULL, "$FVT digest -r $(cat list)"), 4);
	cr_assert_eq(sh(&out2, NULL, "$FVT digest -r --progress-json $(cat "
			"list) 2>/dev/null"), 4);
	cr_expect(!strcmp(out1, out2), "-r: streamed and stat'ed outputs "
				       "differ");
	cr_expect_eq(strlen(out1), 18503u * 74, "%zu", strlen(out1));
	free(out1);
	free(out2);
	free(ref);
	free(json);
}

/* A hard link is read once, streamed (the library's links_once) and with
 * the stat'ing listing (--progress-json) alike: one pread of the file's
 * size + 1 whatever the number of its paths. */
Test(fsverity_tool, hard_link_read_once)
{
	static const char *const modes[] = {"", "--progress-json"};
	char *out = NULL;

	if (!th_have_cmd("strace"))
		cr_skip("strace is not installed (apt-get install strace)");
	if (th_reduced())
		cr_skip("strace of an emulated tool traces the emulator");
	cr_assert_eq(sh(NULL, NULL, "head -c 5000 /dev/urandom > a && ln a b && "
			"ln a c"), 0);
	for (int i = 0; i < 2; i++) {
		/* LeakSanitizer cannot ptrace a process strace traces */
		cr_assert_eq(sh(NULL, NULL, "ASAN_OPTIONS=\"$ASAN_OPTIONS:"
				"detect_leaks=0\" strace -f -qq -e "
				"trace=pread64 -o trace $FVT digest %s a b c b "
				"a > /dev/null 2>&1", modes[i]), 0);
		cr_assert_eq(sh(&out, NULL, "grep -c ', 5001, 0) = 5000' trace"),
			     0);
		cr_expect_str_eq(out, "1\n", "%s: preads of the file: %s",
				 modes[i], out);
		free(out);
	}
}
