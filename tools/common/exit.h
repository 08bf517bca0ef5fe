/* SPDX-License-Identifier: MIT */
/*
 * Exit codes of every tool, mapped from the library's negative errno in
 * one place (exit.c):
 *   -EINVAL, -ENOTSUP, -ERANGE, -E2BIG   wrong parameters / usage   -> 1
 *   -EBADMSG                             verification failed        -> 2
 *   -ENOMEM                              out of memory              -> 3
 *   -EMEDIUMTYPE  bad/unsupported superblock; -ENODATA too small;
 *   -ENOENT, -EACCES, -EIO, -ENOSPC, ... any file or device problem -> 4
 *   -EBUSY, -EAGAIN                      image in use (locked)      -> 5
 *   -EINTR                               interrupted by a signal    -> 130
 */
#ifndef DMT_TOOLS_EXIT_H
#define DMT_TOOLS_EXIT_H

enum {
	TOOL_EXIT_OK = 0,
	TOOL_EXIT_USAGE = 1,
	TOOL_EXIT_VERIFY = 2,
	TOOL_EXIT_NOMEM = 3,
	TOOL_EXIT_DEVICE = 4,
	TOOL_EXIT_BUSY = 5,
	TOOL_EXIT_SIGNAL = 130,
};

/* Text for --help / man pages. */
#define TOOL_EXIT_CODES_HELP                                                  \
	"Exit codes: 0 success; 1 wrong parameters or usage; 2 verification "  \
	"failed;\n  3 out of memory; 4 file or device problem (missing, "      \
	"unreadable, too small,\n  bad or unsupported superblock, I/O error); " \
	"5 image in use (locked).\n"

int tool_exit_code(int err);

#endif /* DMT_TOOLS_EXIT_H */
