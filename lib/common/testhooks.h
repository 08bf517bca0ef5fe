/* SPDX-License-Identifier: MIT */
/*
 * Test-only knobs of the library.  Not part of the API (nothing in
 * include/dmt/ declares them, and no tool calls them): unit tests include
 * this header to make the library fail or fall back on purpose.  They
 * exist only in the objects built with -DDMT_TEST_HOOKS (the Makefile's
 * $(O)/hooks/: the test binaries and $(O)/test-tools/); the shipped
 * library and tools are built without them, so there the fault check below
 * is an inline 0, and neither DMT_IO_FAULT, nor the valgrind probe of
 * lib/common/cpu.c, nor DMT_S390CAP is compiled in.
 *
 * The one hook that reaches the tools (their test builds) is the
 * environment variable DMT_IO_FAULT (read once, at the first I/O): DMT_IO_FAULT="<path-substring>:<op>:<nth>:<err>" makes the
 * nth (1-based) <op> on a file whose path contains <path-substring> fail,
 * exactly as dmt_io_fault_set() below does.  op is one of read, write,
 * sync, open; err an errno name (ENOSPC, EIO, EACCES, EPERM, EROFS, ENOMEM,
 * EBUSY, EFBIG, EDQUOT, ENOENT, EINTR, ENODATA), a number, or "short"
 * (write only: half the buffer is written, then -ENOSPC).  Writes include
 * growing a file; opens include new temporary files.  The last three
 * fields are split off from the right, so the path part may hold ':'.
 * Malformed values are ignored.
 */
#ifndef DMT_TESTHOOKS_H
#define DMT_TESTHOOKS_H

#include <stdbool.h>
#include <stdint.h>

enum dmt_io_op { DMT_IO_READ, DMT_IO_WRITE, DMT_IO_SYNC, DMT_IO_OPEN };

/*
 * The Nth (1-based) matching operation on a file whose path contains
 * path_substr fails with err (or is cut short when err == 0 and
 * short_write is set).  One fault at a time; cleared after it fired or by
 * dmt_io_fault_clear().
 */
void dmt_io_fault_set(const char *path_substr, enum dmt_io_op op,
		      unsigned long nth, int err, bool short_write);
void dmt_io_fault_clear(void);

/* Clears these DMT_CPU_* bits from what dmt_cpu_features() returns (for
 * the rest of the process): exercises the fallbacks. */
void dmt_cpu_mask_off(uint32_t bits);

/*
 * For lib/common/io.c: 0 (no fault), a negative errno, or 1 for "cut this
 * write short".
 */
#ifdef DMT_TEST_HOOKS
int dmt_io_fault_check(const char *path, enum dmt_io_op op);
#else
static inline int dmt_io_fault_check(const char *path, enum dmt_io_op op)
{
	(void)path;
	(void)op;
	return 0;
}
#endif

#endif /* DMT_TESTHOOKS_H */
