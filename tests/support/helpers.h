/* SPDX-License-Identifier: MIT */
/* Shared test helpers: temp dirs, files, running the tools, guard pages. */
#ifndef DMT_TESTS_HELPERS_H
#define DMT_TESTS_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A fresh directory under $TMPDIR (or /var/tmp), removed by th_rmdir(). */
char *th_mkdtemp(void);
void th_rmtree(const char *dir);
/* malloc'ed "dir/name" */
char *th_path(const char *dir, const char *name);

/* Deterministic pseudo-random bytes (xorshift), seeded. */
void th_fill_random(void *buf, size_t len, uint64_t seed);
/* Write a file of `len` bytes from the generator (0 = all zero). */
void th_write_file(const char *path, const void *buf, size_t len);
void th_write_random_file(const char *path, uint64_t len, uint64_t seed);
/* Whole file into a malloc'ed buffer. */
uint8_t *th_read_file(const char *path, size_t *len);
/* sha256 of a whole file as lower-case hex (65 bytes incl. NUL). */
void th_sha256_file(const char *path, char hex[65]);
bool th_files_equal(const char *a, const char *b);
/* Flip bits of one byte in place. */
void th_flip_byte(const char *path, uint64_t off, uint8_t mask);

/*
 * DMT_TEST_REDUCED set (and not "0"): emulated runs (make check-cross)
 * shrink their vectors: strided length sweeps, fewer batch sizes, smaller
 * images, fewer rounds.  Read once.
 */
bool th_reduced(void);

/* Tool paths: in DMT_TOOL_DIR if set (check-valgrind: the test builds),
 * else in the build directory (DMT_BUILD, default "build"). */
const char *th_tool(const char *name);
/* The test build of a tool (with the library's test hooks, DMT_IO_FAULT):
 * $DMT_BUILD/test-tools/<name>. */
const char *th_test_tool(const char *name);
/* Is a command on PATH (or /usr/sbin, /sbin)? */
bool th_have_cmd(const char *cmd);

/*
 * Run an argv (argv[0] a path or a name on PATH), capture stdout and stderr
 * (malloc'ed, NUL-terminated; pass NULL to discard) and return the exit
 * status (0..255), or 128+signal when killed.
 */
int th_run(char *const argv[], char **out, char **err);
/* Same through /bin/sh -c (printf-style command line). */
int th_sh(char **out, char **err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* th_sh in dir with $T the build directory and $CT its crypt-tool;
 * stdin from the file in (in dir) unless NULL. */
int th_sh_tools(char **out, char **err, const char *dir, const char *in,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * n bytes whose end touches a PROT_NONE page (reads past the end fault).
 * Free with th_guard_free().
 */
uint8_t *th_guard_alloc(size_t n);
void th_guard_free(uint8_t *p, size_t n);

#endif /* DMT_TESTS_HELPERS_H */
