/* SPDX-License-Identifier: MIT */
/*
 * The members of struct dmt_file (opaque in <dmt/io.h>).  Library code
 * only: lib code may embed a handle (dmt_file_open_in(), then
 * dmt_file_release()) or read its members; programs outside lib/ go
 * through the functions of <dmt/io.h>.
 */
#ifndef DMT_LIB_COMMON_FILE_H
#define DMT_LIB_COMMON_FILE_H

#include <dmt/io.h>

struct dmt_file {
	int fd;
	char *path;		/* as given by the user, for messages */
	char *tmp_path;		/* non-NULL while a new file is being written */
	bool is_blockdev;
	bool writable;
	bool has_direct;	/* direct_fd is an O_DIRECT twin of fd */
	int direct_fd;
	bool is_stream;		/* a FIFO, socket or terminal: no seeking */
	uint64_t stream_pos;	/* bytes written to a stream so far */
};

/* dmt_file_open() into a handle the caller holds (not allocated); on
 * failure *f is left closed (fd -1). */
int dmt_file_open_in(struct dmt_file *f, const char *path, int flags);
/* dmt_file_close() without the free: f is left closed (fd -1). */
void dmt_file_release(struct dmt_file *f);

#endif /* DMT_LIB_COMMON_FILE_H */
