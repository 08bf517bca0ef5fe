/* SPDX-License-Identifier: MIT */
/*
 * The one output-file rule of every tool, for every output argument (each
 * man page states it in its OUTPUT FILES section):
 *
 *  - a missing output, or an existing regular file the command replaces,
 *    is written under a temporary name in the same directory
 *    (NAME.tmpXXXXXX, locked while it is written), fsync'ed, then renamed
 *    over NAME; a symbolic link (to a regular file, or dangling) is
 *    resolved and its target written that way: the link stays.  A
 *    replaced file keeps its permission bits, a new one gets 0600
 *    (TOOL_OUT_PUBLIC: 0666 less the umask);
 *  - a block device is written in place;
 *  - a character device, FIFO or socket, or a symbolic link to one, is
 *    written through, in place and never replaced: one that can seek
 *    (/dev/null) like a device, one that cannot (a FIFO, a pipe, a
 *    terminal) as a stream where the format is written in order, and
 *    refused with one line ("OUTPUT: not seekable (fifo); ...", exit 4)
 *    where it needs seeking;
 *  - an output the command writes in place by design (TOOL_OUT_IN_PLACE:
 *    an existing verity hash or FEC file, integrity or crypt image) keeps
 *    an existing regular file where it is.
 *
 * A run killed by SIGKILL (or a crash) leaves NAME.tmpXXXXXX.  The next
 * run that writes NAME through a temporary removes such a file when it is
 * stale: exactly that name (six letters or digits after ".tmp"), a
 * regular file of our uid with one link, not locked by a live run, not
 * modified for 2 seconds.  Nothing else is ever removed.
 */
#ifndef DMT_TOOLS_OUTFILE_H
#define DMT_TOOLS_OUTFILE_H

#include <stdbool.h>

#include <dmt/io.h>

enum {
	/* written out of order: a stream is refused */
	TOOL_OUT_SEEK = 1 << 0,
	/* an existing regular file is written in place, not replaced */
	TOOL_OUT_IN_PLACE = 1 << 1,
	/* in place (file or block device): exclusive lock, -EBUSY if held */
	TOOL_OUT_LOCK = 1 << 2,
	/* a new file gets 0666 less the umask (default 0600) */
	TOOL_OUT_PUBLIC = 1 << 3,
};

/*
 * Opens path for writing by the rule above into *f (NULL on failure).
 * *created says it goes through a temporary name (tool_out_commit or
 * dmt_file_commit renames it; dmt_file_close removes it).  A failure is
 * printed as "PATH: what: error" (a refused stream: "PATH: not seekable ..."); the
 * return is 0 or a negative errno (-ESPIPE for a refused stream).
 */
int tool_out_open(struct dmt_file **f, const char *path, unsigned int flags,
		  const char *what, bool *created);

/* Synced; a temporary renamed into place. */
int tool_out_commit(struct dmt_file *f);

/* Removes the stale temporaries of target (see above); tool_out_open
 * does it before it makes its own. */
void tool_out_clear_stale(const char *target);

#endif /* DMT_TOOLS_OUTFILE_H */
