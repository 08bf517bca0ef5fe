// SPDX-License-Identifier: MIT
/*
 * Peak memory of the tools (suite "rss"): every heavy command, with 2 and
 * 8 threads, on a 1 GiB sparse file with 128 MiB of data in four places
 * (enough for every worker of every pass to have data to buffer; crypt,
 * which writes every byte, on 256 MiB), must
 * stay under 64 MiB of peak RSS (the child's ru_maxrss from wait4): the
 * bulk buffers come from one budget (DMT_WALK_MEM_BUDGET), shared among
 * threads and slots.  Fails with the sizing before it (integrity format
 * and check 72-160 MB, crypt format and decrypt 72 MB, verity build with
 * FEC 107 MB at 16 threads).  Skipped where the child's peak RSS is not
 * the tool's: a sanitizer build (shadow memory, quarantine) and the cross
 * runs (DMT_TEST_EMULATED: the child is qemu-user).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/helpers.h"

#define LIMIT_KB (64 * 1024)
#define MiB	 (1ull << 20)
#define CHEAP	 "--pbkdf pbkdf2 --pbkdf-force-iterations 1000"

static char *dir;

/* The sparse file: size bytes, 32 MiB of data at each of four places. */
static void make_data(uint64_t size)
{
	const uint64_t at[] = {0, size / 4, size / 2, size - 32 * MiB};
	char *data = th_path(dir, "data"), *pw = th_path(dir, "pw"),
	     *key = th_path(dir, "key");
	uint8_t *buf = malloc(32 * MiB);
	int fd;

	cr_assert_not_null(buf);
	fd = open(data, O_RDWR | O_CREAT | O_TRUNC, 0600);
	cr_assert_eq(ftruncate(fd, (off_t)size), 0);
	for (int i = 0; i < 4; i++) {
		th_fill_random(buf, 32 * MiB, 40 + i);
		cr_assert_eq(pwrite(fd, buf, 32 * MiB, (off_t)at[i]),
			     (ssize_t)(32 * MiB));
	}
	close(fd);
	th_write_file(pw, "rss passphrase", 14);
	th_write_random_file(key, 64, 7);
	free(buf);
	free(data);
	free(pw);
	free(key);
}

#if defined(__SANITIZE_ADDRESS__)
#define RSS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RSS_SANITIZED 1
#endif
#endif
#ifndef RSS_SANITIZED
#define RSS_SANITIZED 0
#endif

/* The data file, once the peak RSS is known to be the tool's own. */
static void prepare(uint64_t size)
{
	if (RSS_SANITIZED)
		cr_skip("AddressSanitizer build: the peak RSS is its shadow "
			"memory and quarantine, not the tools' buffers");
	if (getenv("DMT_TEST_EMULATED"))
		cr_skip("emulated run: the peak RSS is qemu-user's, not the "
			"tool's");
	make_data(size);
}

static void setup(void)
{
	dir = th_mkdtemp();
}

static void teardown(void)
{
	th_rmtree(dir);
	free(dir);
}

/*
 * Runs TOOL with the words of args (D stands for the test directory, N for
 * the thread count), output to files in the directory; asserts success
 * and returns the child's peak RSS in KiB.
 */
static long peak_kb(const char *tool, const char *args, unsigned int threads)
{
	char *line, *words[64], *save = NULL, *out = th_path(dir, "stdout"),
			       *err = th_path(dir, "stderr");
	struct rusage ru;
	size_t n = 0;
	int status;
	pid_t pid;

	cr_assert_geq(asprintf(&line, "%s --threads=%u %s", th_tool(tool),
			       threads, args),
		      0);
	for (char *w = strtok_r(line, " ", &save); w;
	     w = strtok_r(NULL, " ", &save)) {
		char *sub = strdup(w), *d;

		/* D/name -> dir/name */
		if ((d = strstr(sub, "D/")) && (d == sub || d[-1] == '=')) {
			char *full;

			*d = 0;
			cr_assert_geq(asprintf(&full, "%s%s/%s", sub, dir,
					       d + 2),
				      0);
			free(sub);
			sub = full;
		}
		cr_assert_lt(n, 63);
		words[n++] = sub;
	}
	words[n] = NULL;
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(o, 1);
		dup2(e, 2);
		execv(words[0], words);
		_exit(127);
	}
	cr_assert_eq(wait4(pid, &status, 0, &ru), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		size_t len;
		uint8_t *msg = th_read_file(err, &len);

		cr_assert_fail("%s %s (threads %u) failed: %.*s", tool, args,
			       threads, (int)len, (char *)msg);
	}
	for (size_t i = 0; i < n; i++)
		free(words[i]);
	free(line);
	free(out);
	free(err);
	return ru.ru_maxrss;
}

/* Each command with 2 and 8 threads (and more where asked), under 64 MiB. */
static void each_under_limit(const char *tool, const char *const *cmds,
			     const char *between, unsigned int more)
{
	const unsigned int threads[] = {2, 8, more};

	for (size_t t = 0; t < 3 && threads[t]; t++) {
		for (size_t i = 0; cmds[i]; i++) {
			long kb = peak_kb(tool, cmds[i], threads[t]);

			cr_log_info("%s %s, %u threads: %ld KiB", tool,
				    cmds[i], threads[t], kb);
			cr_expect_leq(kb, LIMIT_KB,
				      "%s %s with %u threads: peak RSS %ld KiB "
				      "over 64 MiB",
				      tool, cmds[i], threads[t], kb);
		}
		if (between)
			cr_assert_eq(th_sh(NULL, NULL, "cd '%s' && %s", dir,
					   between),
				     0);
	}
}

Test(rss, verity_build_verify_fec, .init = setup, .fini = teardown,
     .timeout = 600)
{
	static const char *const cmds[] = {
		"build --salt=- D/data D/hash --root-hash-file=D/root",
		"verify D/data D/hash --root-hash-file=D/root",
		"build --salt=- D/data D/hash2 --fec-device=D/fec",
		NULL};

	prepare(1024 * MiB);
	each_under_limit("verity-tool", cmds, "rm -f hash hash2 fec root",
			 16);
}

Test(rss, integrity_format_check, .init = setup, .fini = teardown,
     .timeout = 600)
{
	static const char *const cmds[] = {
		"format -q --device-size auto --data-from D/data D/crc.img",
		"check -q D/crc.img",
		"format -q -I sha256 -s 4096 --device-size auto "
		"--data-from D/data D/sha.img",
		"check -q -I sha256 D/sha.img",
		"recalculate -q -I sha256 D/sha.img",
		NULL};

	prepare(1024 * MiB);
	each_under_limit("integrity-tool", cmds, "rm -f crc.img sha.img", 0);
}

Test(rss, fsverity_digest_sparse, .init = setup, .fini = teardown,
     .timeout = 600)
{
	static const char *const cmds[] = {
		"digest D/data",
		"digest D/data --out-merkle-tree=D/tree --out-descriptor=D/desc",
		NULL};

	prepare(1024 * MiB);
	each_under_limit("fsverity-tool", cmds, "rm -f tree desc", 0);
}

Test(rss, crypt_format_decrypt, .init = setup, .fini = teardown,
     .timeout = 600)
{
	static const char *const cmds[] = {
		"format -q D/luks.img --data-from D/data --key-file D/pw " CHEAP,
		"decrypt -q D/luks.img D/plain --key-file D/pw",
		"format -q -M plain D/plain.img --data-from D/data "
		"--key-file D/key",
		"decrypt -q -M plain D/plain.img D/plain2 --key-file D/key",
		NULL};

	/* crypt writes every byte: a smaller file, still over the old ring */
	prepare(256 * MiB);
	each_under_limit("crypt-tool", cmds,
			 "cmp data plain && cmp data plain2 && rm -f luks.img "
			 "plain plain.img plain2",
			 0);
}
