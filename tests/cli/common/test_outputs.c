// SPDX-License-Identifier: MIT
/*
 * The one output-file rule of every tool (tools/common/outfile.h), for
 * every output argument: private device nodes (mknod c 1 3), FIFOs with a
 * reader that counts and hashes the bytes, symlinks to /proc/self/fd/1
 * and to regular files, all inside the test's own directory (never the
 * system's /dev/null, /dev/stdout or /tmp).  Then the stale temporaries a
 * killed run leaves: removed by the next run when they are ours and
 * stale, everything else kept.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/helpers.h"
#include "tests/support/nodes.h"

#define CHEAP "--pbkdf pbkdf2 --pbkdf-force-iterations 1000"
/* payload: whole 4096-byte sectors, so decrypt gives it back exactly */
#define PAYLOAD_BYTES (3u << 20)

static char *dir;
static char *paths[64];
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

/* "dir/name", freed at teardown */
static const char *p(const char *name)
{
	cr_assert_lt(n_paths, sizeof(paths) / sizeof(paths[0]));
	paths[n_paths] = th_path(dir, name);
	return paths[n_paths++];
}

/* A command line in the test directory, with $CT $VT $IT $FVT naming the
 * tools; stdin is an empty file of the test (never the system's). */
static int sh(char **out, char **err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int sh(char **out, char **err, const char *fmt, ...)
{
	char *cmd, *tools[4];
	static const char *const names[4] = {"crypt-tool", "verity-tool",
					     "integrity-tool", "fsverity-tool"};
	va_list ap;
	int rc;

	for (int i = 0; i < 4; i++) {
		tools[i] = realpath(th_tool(names[i]), NULL);
		cr_assert(tools[i], "%s not built", names[i]);
	}
	va_start(ap, fmt);
	cr_assert(vasprintf(&cmd, fmt, ap) >= 0);
	va_end(ap);
	rc = th_sh(out, err,
		   "cd '%s' && : > empty.in && CT='%s' VT='%s' IT='%s' "
		   "FVT='%s' && exec < empty.in && %s",
		   dir, tools[0], tools[1], tools[2], tools[3], cmd);
	free(cmd);
	for (int i = 0; i < 4; i++)
		free(tools[i]);
	return rc;
}

static void must(int rc, const char *err, const char *what)
{
	cr_assert_eq(rc, 0, "%s: exit %d: %s", what, rc, err ? err : "");
}

static bool is_fifo(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISFIFO(st.st_mode);
}

static bool is_link_to(const char *path, const char *target)
{
	char buf[4096];
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);

	if (n < 0)
		return false;
	buf[n] = '\0';
	return !strcmp(buf, target);
}

static void sha_of(const char *name, char hex[65])
{
	th_sha256_file(p(name), hex);
}

/* A LUKS2 image of a random payload, key file "pass". */
static void make_luks(void)
{
	char *err = NULL;
	int rc;

	th_write_file(p("pass"), "outputs passphrase", 18);
	th_write_random_file(p("payload"), PAYLOAD_BYTES, 21);
	rc = sh(NULL, &err,
		"$CT format --batch-mode " CHEAP " --data-from "
		"payload --key-file pass img.luks");
	must(rc, err, "crypt-tool format");
	free(err);
}

/* cmd with the FIFO "fifo" read by a child: its exit code, the bytes the
 * reader got and their sha256.  limit > 0: the reader goes away after
 * limit bytes. */
static int into_fifo(const char *cmd, uint64_t limit, uint64_t *count,
		     char hex[65], char **err)
{
	struct th_reader r;
	int rc;

	if (!is_fifo(p("fifo")))
		th_mkfifo(p("fifo"));
	th_reader_start(&r, p("fifo"), limit);
	/* timeout: a tool that waits on its own end of the FIFO fails */
	rc = sh(NULL, err, "timeout 60 %s", cmd);
	th_reader_finish(&r, count, hex);
	cr_expect(is_fifo(p("fifo")), "%s: the FIFO was replaced", cmd);
	return rc;
}

/* ---- crypt-tool ---- */

Test(outputs, crypt_decrypt_to_null_fifo_and_pipe, .init = setup,
     .fini = teardown)
{
	char want[65], hex[65], *err = NULL, *out = NULL;
	uint64_t count;
	int rc;

	make_luks();
	sha_of("payload", want);
	th_mknull(p("null"));
	rc = sh(NULL, &err, "$CT decrypt --key-file pass img.luks null");
	must(rc, err, "decrypt to a null device");
	cr_expect(th_is_null_node(p("null")), "the device node was replaced");
	free(err);

	rc = into_fifo("$CT decrypt --key-file pass img.luks fifo", 0, &count,
		       hex, &err);
	cr_expect_eq(rc, 0, "decrypt to a FIFO: exit %d: %s", rc, err);
	cr_expect_eq(count, PAYLOAD_BYTES, "the reader got %llu bytes",
		     (unsigned long long)count);
	cr_expect_str_eq(hex, want);
	free(err);

	/* a symlink to /proc/self/fd/1: the tool's own stdout, a pipe */
	cr_assert_eq(symlink("/proc/self/fd/1", p("stdout")), 0);
	rc = sh(&out, &err,
		"{ $CT decrypt --key-file pass img.luks stdout; "
		"echo $? > rc; } | sha256sum");
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect(!strncmp(out, want, 64), "stdout: %s", out);
	free(out);
	cr_assert_eq(sh(&out, NULL, "cat rc"), 0);
	cr_expect_eq(atoi(out), 0, "decrypt to /proc/self/fd/1: exit %s", out);
	cr_expect(is_link_to(p("stdout"), "/proc/self/fd/1"));
	free(out);
	free(err);
}

Test(outputs, crypt_decrypt_broken_pipe_fails, .init = setup, .fini = teardown)
{
	char hex[65], *err = NULL;
	uint64_t count;
	int rc;

	make_luks();
	rc = into_fifo("$CT decrypt --key-file pass img.luks fifo", 4096,
		       &count, hex, &err);
	cr_expect_eq(rc, 4, "a reader that went away: exit %d: %s", rc, err);
	cr_expect(strstr(err, "fifo") && strstr(err, "Broken pipe"), "%s", err);
	free(err);
}

Test(outputs, crypt_decrypt_symlink_to_file, .init = setup, .fini = teardown)
{
	char *err = NULL;
	struct stat st;
	int rc;

	make_luks();
	th_write_file(p("target"), "old", 3);
	cr_assert_eq(chmod(p("target"), 0640), 0);
	cr_assert_eq(symlink("target", p("link")), 0);
	rc = sh(NULL, &err, "$CT decrypt --key-file pass img.luks link");
	must(rc, err, "decrypt to a symlink");
	cr_expect(is_link_to(p("link"), "target"), "the link was replaced");
	cr_expect(th_files_equal(p("target"), p("payload")));
	cr_assert_eq(stat(p("target"), &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0640, "the mode of the replaced file");
	free(err);
}

Test(outputs, crypt_format_image_and_header_need_seeking, .init = setup,
     .fini = teardown)
{
	char *err = NULL;
	int rc;

	th_write_file(p("pass"), "outputs passphrase", 18);
	th_write_random_file(p("payload"), 1 << 20, 3);
	th_mkfifo(p("fifo"));
	rc = sh(NULL, &err,
		"timeout 60 $CT format --batch-mode " CHEAP
		" --data-from payload --key-file pass fifo");
	cr_expect_eq(rc, 4, "format onto a FIFO: exit %d: %s", rc, err);
	cr_expect(strstr(err, "fifo: not seekable (fifo)"), "%s", err);
	cr_expect(is_fifo(p("fifo")));
	free(err);
	rc = sh(NULL, &err,
		"timeout 60 $CT format --batch-mode " CHEAP
		" --data-from payload --key-file pass --header fifo img");
	cr_expect_eq(rc, 4, "a detached header to a FIFO: exit %d: %s", rc,
		     err);
	cr_expect(strstr(err, "not seekable"), "%s", err);
	cr_expect(is_fifo(p("fifo")));
	free(err);
	/* a null device is written in place (too small: refused), kept */
	th_mknull(p("null"));
	rc = sh(NULL, &err,
		"$CT format --batch-mode " CHEAP
		" --data-from payload --key-file pass null");
	cr_expect_neq(rc, 0, "%s", err);
	cr_expect(th_is_null_node(p("null")));
	free(err);
}

Test(outputs, crypt_auth_decrypt_to_fifo, .init = setup, .fini = teardown)
{
	char want[65], hex[65], *err = NULL;
	uint64_t count;
	int rc;

	th_write_file(p("pass"), "outputs passphrase", 18);
	th_write_random_file(p("payload"), 1 << 20, 5);
	sha_of("payload", want);
	rc = sh(NULL, &err,
		"$CT format --batch-mode " CHEAP " --integrity "
		"hmac-sha256 --cipher aes-xts-random --data-from payload "
		"--key-file pass auth.img");
	must(rc, err, "format --integrity");
	free(err);
	rc = into_fifo("$CT decrypt --key-file pass auth.img fifo", 0, &count,
		       hex, &err);
	cr_expect_eq(rc, 0, "exit %d: %s", rc, err);
	cr_expect_eq(count, 1u << 20);
	cr_expect_str_eq(hex, want);
	free(err);
	th_mknull(p("null"));
	rc = sh(NULL, &err, "$CT decrypt --key-file pass auth.img null");
	must(rc, err, "authenticated decrypt to a null device");
	cr_expect(th_is_null_node(p("null")));
	free(err);
}

/* ---- verity-tool ---- */

static void make_key(void)
{
	cr_assert_eq(sh(NULL, NULL,
			"openssl req -newkey rsa:2048 -nodes "
			"-keyout key.pem -x509 -out cert.pem -subj /CN=out "
			"-days 30 2>openssl.err"),
		     0);
}

Test(outputs, verity_hash_and_fec_files_need_seeking, .init = setup,
     .fini = teardown)
{
	char *err = NULL;
	int rc;

	th_write_random_file(p("data"), 4 << 20, 7);
	th_mkfifo(p("fifo"));
	rc = sh(NULL, &err, "timeout 60 $VT build data fifo");
	cr_expect_eq(rc, 4, "hash file on a FIFO: exit %d: %s", rc, err);
	cr_expect(strstr(err, "fifo: not seekable (fifo)"), "%s", err);
	free(err);
	rc = sh(NULL, &err, "timeout 60 $VT build --fec-device fifo data h");
	cr_expect_eq(rc, 4, "FEC on a FIFO: exit %d: %s", rc, err);
	cr_expect(strstr(err, "fifo: not seekable (fifo)"), "%s", err);
	cr_expect(access(p("h"), F_OK) != 0, "no hash file after a failure");
	cr_expect(is_fifo(p("fifo")));
	free(err);
	/* a null device takes the tree in place and stays a device */
	th_mknull(p("null"));
	rc = sh(NULL, &err, "$VT build data null");
	must(rc, err, "build onto a null device");
	cr_expect(th_is_null_node(p("null")));
	free(err);
}

Test(outputs, verity_root_hash_and_signature_streams, .init = setup,
     .fini = teardown)
{
	char root[65], hex[65], want[65], *err = NULL, *out = NULL;
	uint64_t count;
	size_t len;
	uint8_t *text;
	int rc;

	th_write_random_file(p("data"), 4 << 20, 8);
	rc = sh(NULL, &err,
		"$VT build --seed s --root-hash-file ref.hex data "
		"ref.v");
	must(rc, err, "build");
	free(err);
	text = th_read_file(p("ref.hex"), &len);
	cr_assert_eq(len, 64);
	memcpy(root, text, 64);
	root[64] = '\0';
	free(text);
	th_sha256_buf(root, 64, want);

	rc = into_fifo("$VT build --seed s --root-hash-file fifo data h1", 0,
		       &count, hex, &err);
	cr_expect_eq(rc, 0, "root hash file on a FIFO: exit %d: %s", rc, err);
	cr_expect_eq(count, 64);
	cr_expect_str_eq(hex, want);
	free(err);
	th_mknull(p("null"));
	rc = sh(NULL, &err, "$VT build --root-hash-file null data h2");
	must(rc, err, "root hash file on a null device");
	cr_expect(th_is_null_node(p("null")));
	free(err);
	/* the tool's stdout through /proc/self/fd/1 */
	cr_assert_eq(symlink("/proc/self/fd/1", p("stdout")), 0);
	rc = sh(&out, &err,
		"$VT build --seed s --root-hash-file stdout data "
		"ref.v");
	must(rc, err, "root hash file through /proc/self/fd/1");
	cr_expect(!strncmp(out, root, 64), "stdout: %s", out);
	cr_expect(is_link_to(p("stdout"), "/proc/self/fd/1"));
	free(out);
	free(err);
	/* a symlink to a regular file: the target replaced, the link kept */
	th_write_file(p("target"), "old", 3);
	cr_assert_eq(symlink("target", p("link")), 0);
	rc = sh(NULL, &err,
		"$VT build --seed s --root-hash-file link data "
		"ref.v");
	must(rc, err, "root hash file through a symlink");
	cr_expect(is_link_to(p("link"), "target"));
	text = th_read_file(p("target"), &len);
	cr_expect(len == 64 && !memcmp(text, root, 64));
	free(text);
	free(err);

	/* sign: the signature to a FIFO is what it writes to a file */
	make_key();
	rc = sh(NULL, &err, "$VT sign --key key.pem --cert cert.pem %s sig.ref",
		root);
	must(rc, err, "sign");
	free(err);
	rc = into_fifo(
		"$VT sign --key key.pem --cert cert.pem --root-hash-file "
		"ref.hex fifo",
		0, &count, hex, &err);
	cr_expect_eq(rc, 0, "signature on a FIFO: exit %d: %s", rc, err);
	text = th_read_file(p("sig.ref"), &len);
	cr_expect_eq(count, len, "the reader got %llu bytes, the file has %zu",
		     (unsigned long long)count, len);
	free(text);
	free(err);
	rc = sh(NULL, &err, "$VT sign --key key.pem --cert cert.pem %s null",
		root);
	must(rc, err, "signature on a null device");
	cr_expect(th_is_null_node(p("null")));
	free(err);
	/* build's own signature output, and FEC onto a null device */
	rc = into_fifo("$VT build --seed s --sign-key key.pem --sign-cert "
		       "cert.pem --root-hash-signature fifo data h3",
		       0, &count, hex, &err);
	cr_expect_eq(rc, 0, "build's signature on a FIFO: exit %d: %s", rc,
		     err);
	cr_expect_eq(count, len);
	free(err);
	rc = sh(NULL, &err, "$VT build --fec-device null data h4");
	must(rc, err, "FEC onto a null device");
	cr_expect(th_is_null_node(p("null")));
	free(err);
}

/* ---- integrity-tool ---- */

Test(outputs, integrity_format_outputs, .init = setup, .fini = teardown)
{
	char *err = NULL;
	struct stat st;
	int rc;

	th_mkfifo(p("fifo"));
	rc = sh(NULL, &err, "timeout 60 $IT format --batch-mode fifo");
	cr_expect_eq(rc, 4, "format onto a FIFO: exit %d: %s", rc, err);
	cr_expect(strstr(err, "fifo: not seekable (fifo)"), "%s", err);
	cr_expect(is_fifo(p("fifo")));
	free(err);
	th_mknull(p("null"));
	rc = sh(NULL, &err, "$IT format --batch-mode null");
	cr_expect_eq(rc, 4, "a null device is too small: exit %d: %s", rc, err);
	cr_expect(th_is_null_node(p("null")));
	free(err);
	/* a dangling symlink: the target is created, the link kept */
	cr_assert_eq(symlink("new.img", p("dangling")), 0);
	rc = sh(NULL, &err,
		"$IT format --batch-mode --device-size 8M "
		"dangling");
	must(rc, err, "format through a dangling symlink");
	cr_expect(is_link_to(p("dangling"), "new.img"), "the link replaced");
	cr_assert_eq(stat(p("new.img"), &st), 0);
	cr_expect_eq(st.st_size, 8 << 20);
	free(err);
	/* a symlink to an existing image: formatted in place */
	cr_assert_eq(symlink("new.img", p("link")), 0);
	rc = sh(NULL, &err, "$IT format --batch-mode --integrity sha256 link");
	must(rc, err, "format through a symlink");
	cr_expect(is_link_to(p("link"), "new.img"));
	free(err);
}

/* ---- fsverity-tool ---- */

Test(outputs, fsverity_outputs, .init = setup, .fini = teardown)
{
	char want[65], hex[65], *err = NULL, *out = NULL;
	uint64_t count;
	size_t len;
	uint8_t *text;
	int rc;

	th_write_random_file(p("file"), 300000, 9);
	rc = sh(NULL, &err,
		"$FVT digest file --out-descriptor ref.desc "
		"--out-merkle-tree ref.tree");
	must(rc, err, "digest");
	free(err);
	sha_of("ref.desc", want);

	th_mkfifo(p("fifo"));
	rc = sh(NULL, &err,
		"timeout 60 $FVT digest file --out-merkle-tree "
		"fifo");
	cr_expect_eq(rc, 4, "a tree on a FIFO: exit %d: %s", rc, err);
	cr_expect(strstr(err, "fifo: not seekable (fifo)"), "%s", err);
	free(err);
	rc = into_fifo("$FVT digest file --out-descriptor fifo", 0, &count, hex,
		       &err);
	cr_expect_eq(rc, 0, "descriptor on a FIFO: exit %d: %s", rc, err);
	cr_expect_eq(count, 256);
	cr_expect_str_eq(hex, want);
	free(err);
	th_mknull(p("null"));
	rc = sh(NULL, &err,
		"$FVT digest file --out-descriptor null "
		"--out-merkle-tree null");
	must(rc, err, "descriptor and tree on a null device");
	cr_expect(th_is_null_node(p("null")));
	free(err);
	cr_assert_eq(symlink("/proc/self/fd/1", p("stdout")), 0);
	rc = sh(&out, &err,
		"$FVT digest file --out-descriptor stdout | "
		"head -c 256 | sha256sum");
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect(!strncmp(out, want, 64), "%s", out);
	cr_expect(is_link_to(p("stdout"), "/proc/self/fd/1"));
	free(out);
	free(err);

	/* --out-dir: each file's outputs by the same rule */
	cr_assert_eq(mkdir(p("od"), 0700), 0);
	th_mknull(p("od/file.merkle_tree"));
	th_mkfifo(p("od/file.descriptor"));
	{
		struct th_reader r;

		th_reader_start(&r, p("od/file.descriptor"), 0);
		rc = sh(NULL, &err, "timeout 60 $FVT digest --out-dir od file");
		th_reader_finish(&r, &count, hex);
	}
	cr_expect_eq(rc, 0, "--out-dir onto a node and a FIFO: %s", err);
	cr_expect_eq(count, 256);
	cr_expect_str_eq(hex, want);
	cr_expect(th_is_null_node(p("od/file.merkle_tree")));
	cr_expect(is_fifo(p("od/file.descriptor")));
	free(err);

	/* sign: SIGFILE and --manifest as streams, a link's target */
	make_key();
	rc = sh(NULL, &err,
		"$FVT sign file ref.sig --key key.pem --cert "
		"cert.pem");
	must(rc, err, "sign");
	free(err);
	text = th_read_file(p("ref.sig"), &len);
	th_sha256_buf(text, len, want);
	free(text);
	rc = into_fifo("$FVT sign file fifo --key key.pem --cert cert.pem", 0,
		       &count, hex, &err);
	cr_expect_eq(rc, 0, "SIGFILE on a FIFO: exit %d: %s", rc, err);
	cr_expect_eq(count, len);
	cr_expect_str_eq(hex, want);
	free(err);
	rc = into_fifo("$FVT sign --manifest fifo file --key key.pem --cert "
		       "cert.pem",
		       0, &count, hex, &err);
	cr_expect_eq(rc, 0, "--manifest on a FIFO: exit %d: %s", rc, err);
	cr_expect_gt(count, 100);
	free(err);
	th_write_file(p("target"), "old", 3);
	cr_assert_eq(symlink("target", p("link")), 0);
	rc = sh(NULL, &err,
		"$FVT sign file link --key key.pem --cert "
		"cert.pem && $FVT sign file null --key key.pem --cert "
		"cert.pem");
	must(rc, err, "sign through a symlink and to a null device");
	cr_expect(is_link_to(p("link"), "target"));
	cr_expect(th_files_equal(p("target"), p("ref.sig")));
	cr_expect(th_is_null_node(p("null")));
	free(err);
}

/* ---- stale temporaries (a run killed by SIGKILL) ---- */

/* Names of the output's temporary pattern, each a case to keep or not. */
static const char *const not_pattern[] = {
	"%s.tmpAB12c",	 "%s.tmpAB12cd7", "%s.tmpAB-2cd", "%sX.tmpAB12cd",
	"x%s.tmpAB12cd", "%s.tmp",	  "%s.bakAB12cd",
};

static const char *name_of(const char *fmt, const char *base)
{
	char name[256];

	snprintf(name, sizeof(name), fmt, base);
	return p(name);
}

static void aged_file(const char *path)
{
	th_write_file(path, "left", 4);
	th_age(path);
}

/* Every kind of file named like base's temporaries; the lock holder
 * keeps "live" locked until stale_check. */
static void stale_setup(const char *base, struct th_lock *live)
{
	for (size_t i = 0; i < sizeof(not_pattern) / sizeof(*not_pattern); i++)
		aged_file(name_of(not_pattern[i], base));
	aged_file(name_of("%s.tmpSt4le0", base));
	aged_file(name_of("%s.tmpL1veAa", base));
	th_lock_hold(live, name_of("%s.tmpL1veAa", base));
	th_write_file(name_of("%s.tmpRecent", base), "new", 3);
	aged_file(name_of("%s.tmpOther1", base));
	cr_assert_eq(chown(name_of("%s.tmpOther1", base), 65534, 65534), 0);
	cr_assert_eq(mkdir(name_of("%s.tmpDir123", base), 0700), 0);
	th_age(name_of("%s.tmpDir123", base));
	aged_file(p("elsewhere"));
	cr_assert_eq(symlink("elsewhere", name_of("%s.tmpLink12", base)), 0);
	th_age(name_of("%s.tmpLink12", base));
	aged_file(name_of("%s.tmpHard12", base));
	cr_assert_eq(link(name_of("%s.tmpHard12", base), p("hard.link")), 0);
	th_age(name_of("%s.tmpHard12", base));
	th_mkfifo(name_of("%s.tmpFifo12", base));
	th_age(name_of("%s.tmpFifo12", base));
}

static void stale_check(const char *base, struct th_lock *live)
{
	static const char *const kept[] = {
		"%s.tmpL1veAa", "%s.tmpRecent", "%s.tmpOther1", "%s.tmpDir123",
		"%s.tmpLink12", "%s.tmpHard12", "%s.tmpFifo12",
	};
	struct stat st;

	th_lock_release(live);
	cr_expect(access(name_of("%s.tmpSt4le0", base), F_OK) != 0,
		  "the stale temporary of %s is still there", base);
	for (size_t i = 0; i < sizeof(kept) / sizeof(*kept); i++)
		cr_expect(lstat(name_of(kept[i], base), &st) == 0,
			  "%s was removed", name_of(kept[i], base));
	for (size_t i = 0; i < sizeof(not_pattern) / sizeof(*not_pattern); i++)
		cr_expect(access(name_of(not_pattern[i], base), F_OK) == 0,
			  "%s was removed", name_of(not_pattern[i], base));
	cr_expect(access(p("elsewhere"), F_OK) == 0);
	cr_expect(access(p(base), F_OK) == 0, "no output %s", base);
}

static void stale_run(const char *base, const char *cmd)
{
	struct th_lock live;
	char *err = NULL;
	int rc;

	stale_setup(base, &live);
	rc = sh(NULL, &err, "%s", cmd);
	cr_expect_eq(rc, 0, "%s: exit %d: %s", cmd, rc, err);
	stale_check(base, &live);
	free(err);
}

Test(outputs, stale_temporaries_crypt_tool, .init = setup, .fini = teardown)
{
	make_luks();
	stale_run("dec.out", "$CT decrypt --key-file pass img.luks dec.out");
}

Test(outputs, stale_temporaries_verity_tool, .init = setup, .fini = teardown)
{
	th_write_random_file(p("data"), 1 << 20, 4);
	stale_run("h.verity", "$VT build data h.verity");
}

Test(outputs, stale_temporaries_integrity_tool, .init = setup, .fini = teardown)
{
	stale_run("new.img", "$IT format --batch-mode --device-size 8M "
			     "new.img");
}

Test(outputs, stale_temporaries_fsverity_tool, .init = setup, .fini = teardown)
{
	th_write_random_file(p("file"), 100000, 4);
	stale_run("d.desc", "$FVT digest --out-descriptor d.desc file");
}

/* The whole story: a live run's temporary (locked) survives a second
 * run; killed by SIGKILL, it is removed by the next one. */
Test(outputs, killed_run_temporary_removed_by_next_run, .init = setup,
     .fini = teardown)
{
	char *out = NULL, *err = NULL, tmp[512] = "";
	pid_t pid;
	int rc, status;

	th_write_random_file(p("file"), 100000, 4);
	th_mkfifo(p("list"));
	/* blocked reading --files-from after opening its output */
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char *argv[] = {(char *)th_tool("fsverity-tool"),
				"digest",
				"--out-descriptor",
				(char *)p("d.desc"),
				"--files-from",
				(char *)p("list"),
				NULL};

		execv(argv[0], argv);
		_exit(127);
	}
	for (int i = 0; i < 600 && !tmp[0]; i++) {
		free(out);
		out = NULL;
		sh(&out, NULL,
		   "ls | grep -x 'd\\.desc\\.tmp[A-Za-z0-9]\\{6\\}' "
		   "|| true");
		if (out && *out)
			snprintf(tmp, sizeof(tmp), "%.*s",
				 (int)strcspn(out, "\n"), out);
		else
			usleep(50000);
	}
	free(out);
	if (!tmp[0])
		kill(pid, SIGKILL);
	cr_assert(tmp[0], "no d.desc.tmpXXXXXX while the run is alive");
	th_age(p(tmp));
	rc = sh(NULL, &err, "$FVT digest --out-descriptor d.desc file");
	cr_expect_eq(rc, 0, "%s", err);
	cr_expect(access(p(tmp), F_OK) == 0, "a live run's temporary removed");
	free(err);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	cr_assert(access(p(tmp), F_OK) == 0, "SIGKILL leaves the temporary");
	th_age(p(tmp));
	rc = sh(NULL, &err, "$FVT digest --out-descriptor d.desc file");
	cr_expect_eq(rc, 0, "%s", err);
	cr_expect(access(p(tmp), F_OK) != 0, "the stale temporary is left");
	free(err);
}
