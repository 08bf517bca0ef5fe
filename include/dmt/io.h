/* SPDX-License-Identifier: MIT */
/*
 * File and device I/O for the formats: large positioned reads and writes,
 * sizes of files and block devices, hole detection, exclusive locks and
 * new outputs under a temporary name.  (Fault injection for the tests:
 * lib/common/testhooks.h, not part of the API.)  Every function returns
 * 0 (or a count) or a negative errno.
 */
#ifndef DMT_IO_H
#define DMT_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Chunk size for streaming reads: never one syscall per block. */
#define DMT_IO_CHUNK (4u << 20)

/* An open file or device (opaque: lib/common/file.h holds its members). */
struct dmt_file;

enum {
	DMT_OPEN_READ = 0,
	DMT_OPEN_RW = 1 << 0,		/* existing file or device, in place */
	DMT_OPEN_CREATE = 1 << 1,	/* with RW: create (0600) if missing */
	DMT_OPEN_NEW_TMP = 1 << 2,	/* write to "<path>.tmpXXXXXX",
					 * dmt_file_commit() renames it */
	DMT_OPEN_LOCK = 1 << 3,		/* flock: shared for READ, exclusive
					 * for RW and for a NEW_TMP file (taken
					 * as it is created); -EBUSY if held
					 * elsewhere */
	DMT_OPEN_WRITE = 1 << 4,	/* existing file, write only (a FIFO:
					 * its reader's end is never ours) */
	DMT_OPEN_PUBLIC = 1 << 5,	/* with NEW_TMP: mode 0666 & ~umask
					 * instead of 0600 */
};

/*
 * Streams: a FIFO, a socket or a character device that cannot seek (a
 * terminal) is a stream.  dmt_pwrite_full() writes it in order only: each
 * write must start where the previous one ended (else -ESPIPE), from one
 * thread at a time; reads fail (-ESPIPE).  dmt_file_truncate() and
 * dmt_file_extend() leave streams and character devices as they are.
 */
bool dmt_file_is_stream(const struct dmt_file *f);

/* Opens path (DMT_OPEN_* flags) into a new handle *out (NULL on failure);
 * dmt_file_close() closes and frees it. */
int dmt_file_open(const char *path, int flags, struct dmt_file **out);
/* The path as given to dmt_file_open(), for messages. */
const char *dmt_file_path(const struct dmt_file *f);
/* The descriptor (owned by the handle: never close it). */
int dmt_file_fd(const struct dmt_file *f);
bool dmt_file_is_blockdev(const struct dmt_file *f);
/* Permission bits of the open file (a replacement keeps the old ones). */
int dmt_file_chmod(struct dmt_file *f, mode_t mode);
/* Cuts a regular file to size (outputs rewritten from the start). */
int dmt_file_truncate(struct dmt_file *f, uint64_t size);
/* Renames a DMT_OPEN_NEW_TMP file into place (fsync first). */
int dmt_file_commit(struct dmt_file *f);
/* Renames many DMT_OPEN_NEW_TMP files into place after one sync of each
 * file system they are on (syncfs: one cache flush for all of them, where
 * an fsync each flushes once per file).  0, or the first error with
 * *failed its index (the files from there on keep their temporary). */
int dmt_file_commit_many(struct dmt_file *const *files, size_t n,
			 size_t *failed);
/* Closes and frees f (NULL: does nothing); an uncommitted temporary file
 * is unlinked. */
void dmt_file_close(struct dmt_file *f);
/* Size in bytes of a regular file or block device. */
int dmt_file_size(struct dmt_file *f, uint64_t *size);
/* Grow (never shrink) a regular file to size; sparse. */
int dmt_file_extend(struct dmt_file *f, uint64_t size);

/*
 * Let dmt_pwrite_full() and dmt_pread_full() send sector-aligned bulk
 * transfers around the page cache (O_DIRECT twin descriptor): no copy
 * through the cache, no writeback left for the final fsync, no cache
 * filled by data read once.  Unaligned transfers, and devices or
 * filesystems that refuse O_DIRECT, still go through the cache.  Returns
 * 0 either way.
 */
int dmt_file_enable_direct(struct dmt_file *f);

/* Full reads/writes: short transfers are retried; EOF inside a read is
 * -ENODATA (the file is too small). */
int dmt_pread_full(struct dmt_file *f, void *buf, size_t len, uint64_t off);
int dmt_pwrite_full(struct dmt_file *f, const void *buf, size_t len,
		    uint64_t off);
int dmt_file_sync(struct dmt_file *f);
/* Starts writeback of a written range now (a hint, never fails), so the
 * final dmt_file_sync() has less left to wait for. */
void dmt_file_start_writeback(struct dmt_file *f, uint64_t off, uint64_t len);

/*
 * Next data/hole boundaries (SEEK_DATA / SEEK_HOLE).  Sets *data_start to
 * the first byte >= off that may hold data (end when none), *data_end to the
 * end of that data extent.  Where the filesystem can't tell, the whole
 * range is reported as data.
 */
int dmt_file_next_data(struct dmt_file *f, uint64_t off, uint64_t end,
		       uint64_t *data_start, uint64_t *data_end);

/* Same path or same inode (for "output equals input" checks); the same
 * rule for two open handles. */
bool dmt_same_file(const char *a, const char *b);
bool dmt_file_same(const struct dmt_file *a, const struct dmt_file *b);

/* Helpers for messages: static text of a negative errno. */
const char *dmt_strerror(int err);

#endif /* DMT_IO_H */
