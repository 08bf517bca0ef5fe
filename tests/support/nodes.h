/* SPDX-License-Identifier: MIT */
/*
 * Private special files for the output tests: a null device node, FIFOs
 * with a reader that counts and hashes what it gets, a process holding a
 * lock, old modification times.  Always inside a test's own directory,
 * never the system's /dev/null, /dev/stdout or /tmp.
 */
#ifndef DMT_TESTS_NODES_H
#define DMT_TESTS_NODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* mknod PATH c 1 3 (aborts when it cannot: the tests run as root). */
void th_mknull(const char *path);
/* Still the character device 1:3 (not replaced by a file)? */
bool th_is_null_node(const char *path);
void th_mkfifo(const char *path);

/*
 * A child that opens the FIFO for reading, reads it to the end (or only
 * `limit` bytes when limit > 0, then closes it: a reader that goes away)
 * and reports the count and the sha256 of the bytes.
 */
struct th_reader {
	pid_t pid;
	int result_fd;
};
void th_reader_start(struct th_reader *r, const char *fifo, uint64_t limit);
/* Waits for it (after the command: 10 s at most, then it is killed and
 * the count is UINT64_MAX): bytes read and their sha256 (hex). */
void th_reader_finish(struct th_reader *r, uint64_t *count, char hex[65]);

/* sha256 of a buffer, lower-case hex. */
void th_sha256_buf(const void *p, size_t len, char hex[65]);

/* A child holding flock(LOCK_EX) on path until th_lock_release. */
struct th_lock {
	pid_t pid;
	int release_fd;
};
void th_lock_hold(struct th_lock *l, const char *path);
void th_lock_release(struct th_lock *l);

/* mtime (and atime) an hour ago; lstat-level for a symlink. */
void th_age(const char *path);

#endif /* DMT_TESTS_NODES_H */
