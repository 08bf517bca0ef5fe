/* SPDX-License-Identifier: MIT */
/*
 * Running a command on a pseudo-terminal (stdin, stdout and stderr all
 * the terminal, as for a user), and what a terminal would show of its
 * output: '\r' back to the first column, ESC [ K / ESC [ 2 K erasing, the
 * other escape sequences ignored.
 */
#ifndef DMT_TESTS_PTY_H
#define DMT_TESTS_PTY_H

#include <stddef.h>

/* Runs argv in cwd on a new terminal; *out (malloc'ed, NUL-terminated,
 * may hold NULs: *len) is everything written to it.  Returns the exit
 * status (128 + signal when killed). */
int th_pty_run(char *const argv[], const char *cwd, char **out, size_t *len);

/* The lines a terminal shows for those bytes (each malloc'ed; the last
 * one may be a line without its newline).  Returns the count. */
size_t th_screen_lines(const char *bytes, size_t len, char ***lines);
void th_free_lines(char **lines, size_t n);

#endif /* DMT_TESTS_PTY_H */
