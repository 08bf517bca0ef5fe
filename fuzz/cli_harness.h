/* SPDX-License-Identifier: MIT */
/*
 * Shared by the option-parser fuzz targets, which compile a whole CLI
 * (its main() renamed) into the fuzzer and call it in-process.  The input
 * is the argument list, one argument per line.  Everything happens in a
 * private directory holding a few small fixture files, restored before
 * every run; arguments naming other directories ('/') are skipped, files
 * larger than FUZZ_FSIZE cannot be written (RLIMIT_FSIZE) so huge sizes
 * fail fast, and --threads is kept small.
 */
#ifndef DMT_FUZZ_CLI_HARNESS_H
#define DMT_FUZZ_CLI_HARNESS_H

#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define FUZZ_MAX_ARGS 24
#define FUZZ_MAX_ARG 300
#define FUZZ_FSIZE (4u << 20)

struct fuzz_fixture {
	const char *name;
	uint8_t *buf;
	size_t len;
};

static char fuzz_dir[64];

static __attribute__((noreturn)) void fuzz_die(const char *what)
{
	perror(what);
	abort();
}

static void fuzz_write(const char *name, const uint8_t *buf, size_t len)
{
	FILE *f = fopen(name, "wb");

	if (!f || (len && fwrite(buf, 1, len, f) != len) || fclose(f))
		fuzz_die(name);
}

static uint8_t *fuzz_read(const char *name, size_t *len)
{
	FILE *f = fopen(name, "rb");
	uint8_t *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET))
		fuzz_die(name);
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		fuzz_die(name);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* Removes the private directory when the fuzzer exits normally. */
static void fuzz_leave_dir(void)
{
	DIR *d = opendir(".");
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlink(e->d_name);
	if (d)
		closedir(d);
	if (!chdir("/"))
		rmdir(fuzz_dir);
}

/* Private directory; stays the working directory of the fuzzer. */
static void fuzz_enter_dir(void)
{
	struct rlimit rl = { FUZZ_FSIZE, FUZZ_FSIZE };

	snprintf(fuzz_dir, sizeof(fuzz_dir), "/tmp/dmt-fuzz-cli-XXXXXX");
	if (!mkdtemp(fuzz_dir) || chdir(fuzz_dir))
		fuzz_die("fuzz dir");
	atexit(fuzz_leave_dir);
	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &rl))
		fuzz_die("setrlimit");
}

static bool fuzz_is_fixture(const char *name, const struct fuzz_fixture *fx,
			    size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, fx[i].name))
			return true;
	return false;
}

/* Removes what the last run created, rewrites what it changed. */
static void fuzz_reset_dir(const struct fuzz_fixture *fx, size_t n)
{
	DIR *d = opendir(".");
	struct dirent *e;

	if (!d)
		fuzz_die("opendir");
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!fuzz_is_fixture(e->d_name, fx, n))
			unlink(e->d_name);
	}
	closedir(d);
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		uint8_t *cur = NULL;
		size_t len = 0;
		bool same = false;

		if (!stat(fx[i].name, &st) && S_ISREG(st.st_mode) &&
		    (size_t)st.st_size == fx[i].len) {
			cur = fuzz_read(fx[i].name, &len);
			same = !memcmp(cur, fx[i].buf, len);
			free(cur);
		}
		if (!same) {
			unlink(fx[i].name);
			fuzz_write(fx[i].name, fx[i].buf, fx[i].len);
		}
	}
}

/* The argument at i (or what follows '=' in it) as a number, or -1. */
static long fuzz_arg_num(char **argv, int argc, int i)
{
	const char *eq = strchr(argv[i], '=');
	const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[i + 1] : "");
	char *end;
	long n = strtol(v, &end, 10);

	return *v && !*end ? n : -1;
}

/*
 * Splits the input into argv (argv[0] = prog).  Returns argc, or 0 when
 * the input is skipped.
 */
static int fuzz_split(const uint8_t *data, size_t size, const char *prog,
		      char **argv, char *store)
{
	int argc = 1;
	size_t k = 0, start = 0;

	argv[0] = (char *)prog;
	for (size_t i = 0; i <= size; i++) {
		if (i < size && data[i] != '\n')
			continue;
		if (i - start > FUZZ_MAX_ARG || argc == FUZZ_MAX_ARGS ||
		    memchr(data + start, '\0', i - start) ||
		    memchr(data + start, '/', i - start))
			return 0;
		argv[argc++] = store + k;
		memcpy(store + k, data + start, i - start);
		k += i - start;
		store[k++] = '\0';
		start = i + 1;
	}
	argv[argc] = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--threads", 9)) {
			long t = fuzz_arg_num(argv, argc, i);

			if (t < 0 || t > 4)
				return 0;
		}
	}
	return argc;
}

#endif /* DMT_FUZZ_CLI_HARNESS_H */
