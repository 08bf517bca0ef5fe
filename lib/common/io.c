// SPDX-License-Identifier: MIT
/*
 * File and device I/O.  All transfers are large and positioned; every
 * open, read, write and sync passes the fault hook (lib/common/testhooks.h)
 * so tests can inject ENOSPC/EIO/short writes without root tricks.
 */
#include <dmt/io.h>
#include "lib/common/file.h"
#include "lib/common/testhooks.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- open / commit / close ---- */

/* The mode open(O_CREAT, 0666) would give: 0666 less the umask. */
static mode_t public_mode(void)
{
	mode_t mask = umask(0);

	umask(mask);
	return 0666 & ~mask;
}

/*
 * "<path>.tmpXXXXXX", locked (lock) as it is created: a later run that
 * clears stale temporaries of its output never takes a live one.
 */
static int make_tmp(struct dmt_file *f, const char *path, int flags)
{
	size_t len = strlen(path) + sizeof(".tmpXXXXXX");
	/* veritysetup creates its outputs 0600 */
	mode_t mode = (flags & DMT_OPEN_PUBLIC) ? public_mode() : 0600;
	int fd, err;

	f->tmp_path = malloc(len);
	if (!f->tmp_path)
		return -ENOMEM;
	snprintf(f->tmp_path, len, "%s.tmpXXXXXX", path);
	fd = mkostemp(f->tmp_path, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(f->tmp_path);
		f->tmp_path = NULL;
		return err;
	}
	if (((flags & DMT_OPEN_LOCK) && flock(fd, LOCK_EX | LOCK_NB) < 0) ||
	    fchmod(fd, mode) < 0) {
		err = -errno;
		close(fd);
		unlink(f->tmp_path);
		free(f->tmp_path);
		f->tmp_path = NULL;
		return err;
	}
	return fd;
}

/* FIFOs, sockets and character devices that cannot seek (terminals). */
static bool is_stream(int fd, const struct stat *st)
{
	if (S_ISFIFO(st->st_mode) || S_ISSOCK(st->st_mode))
		return true;
	return S_ISCHR(st->st_mode) && lseek(fd, 0, SEEK_CUR) < 0 &&
	       errno == ESPIPE;
}

int dmt_file_open_in(struct dmt_file *f, const char *path, int flags)
{
	struct stat st;
	int fd = -1, oflags, err;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->path = strdup(path);
	if (!f->path)
		return -ENOMEM;

	err = dmt_io_fault_check(path, DMT_IO_OPEN);
	if (err)
		goto fail;

	if (flags & DMT_OPEN_NEW_TMP) {
		fd = make_tmp(f, path, flags);
		if (fd < 0) {
			err = fd;
			goto fail;
		}
		f->writable = true;
	} else {
		/* no controlling terminal from a terminal named as output */
		oflags = O_CLOEXEC | O_NOCTTY;
		oflags |= (flags & DMT_OPEN_WRITE) ? O_WRONLY :
			  (flags & DMT_OPEN_RW)	   ? O_RDWR :
						     O_RDONLY;
		if ((flags & DMT_OPEN_RW) && (flags & DMT_OPEN_CREATE))
			oflags |= O_CREAT;
		fd = open(path, oflags, 0600);
		if (fd < 0) {
			err = -errno;
			goto fail;
		}
		f->writable = flags & (DMT_OPEN_RW | DMT_OPEN_WRITE);
	}
	f->fd = fd;

	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		goto fail;
	}
	f->is_blockdev = S_ISBLK(st.st_mode);
	f->is_stream = is_stream(fd, &st);

	if ((flags & DMT_OPEN_LOCK) && !(flags & DMT_OPEN_NEW_TMP)) {
		int op = (flags & (DMT_OPEN_RW | DMT_OPEN_WRITE)) ? LOCK_EX
								  : LOCK_SH;

		if (flock(fd, op | LOCK_NB) < 0) {
			err = (errno == EWOULDBLOCK) ? -EBUSY : -errno;
			goto fail;
		}
	}
	return 0;
fail:
	dmt_file_release(f);
	return err;
}

int dmt_file_open(const char *path, int flags, struct dmt_file **out)
{
	struct dmt_file *f = malloc(sizeof(*f));
	int err;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	err = dmt_file_open_in(f, path, flags);
	if (err) {
		free(f);
		return err;
	}
	*out = f;
	return 0;
}

int dmt_file_commit(struct dmt_file *f)
{
	int err;

	if (!f->tmp_path)
		return 0;
	err = dmt_file_sync(f);
	if (err)
		return err;
	if (rename(f->tmp_path, f->path) < 0)
		return -errno;
	free(f->tmp_path);
	f->tmp_path = NULL;
	return 0;
}

/* syncfs of the file system of files[i], unless an earlier one shares it. */
static int sync_fs_once(struct dmt_file *const *files, size_t i)
{
	struct stat st, other;
	int err;

	if (fstat(files[i]->fd, &st) < 0)
		return -errno;
	for (size_t k = 0; k < i; k++)
		if (files[k]->tmp_path && fstat(files[k]->fd, &other) == 0 &&
		    other.st_dev == st.st_dev)
			return 0;
	err = dmt_io_fault_check(files[i]->path, DMT_IO_SYNC);
	if (err < 0)
		return err;
	return syncfs(files[i]->fd) < 0 ? -errno : 0;
}

int dmt_file_commit_many(struct dmt_file *const *files, size_t n,
			 size_t *failed)
{
	int err = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (files[i]->tmp_path && (err = sync_fs_once(files, i)))
			goto out;
	for (i = 0; i < n; i++) {
		if (!files[i]->tmp_path)
			continue;
		if (rename(files[i]->tmp_path, files[i]->path) < 0) {
			err = -errno;
			goto out;
		}
		free(files[i]->tmp_path);
		files[i]->tmp_path = NULL;
	}
out:
	*failed = err ? i : n;
	return err;
}

/* O_DIRECT needs offsets, lengths and buffers aligned to the device's
 * logical block: 512 almost everywhere; where the device wants more, the
 * kernel refuses (EINVAL) and the page cache takes the transfer. */
#define DIRECT_ALIGN 511u

int dmt_file_enable_direct(struct dmt_file *f)
{
	char path[64];
	int fd;

	if (f->has_direct || f->fd < 0 || f->is_stream)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", f->fd);
	fd = open(path, (f->writable ? O_RDWR : O_RDONLY) | O_DIRECT |
			O_CLOEXEC);
	if (fd >= 0) {
		f->direct_fd = fd;
		f->has_direct = true;
	}
	return 0;
}

static bool direct_ok(const struct dmt_file *f, const void *p, size_t len,
		      uint64_t off)
{
	return f->has_direct && !(off & DIRECT_ALIGN) &&
	       !(len & DIRECT_ALIGN) && !((uintptr_t)p & DIRECT_ALIGN);
}

/*
 * Aligned transfers through the O_DIRECT twin; returns the bytes moved.
 * Stops at EINVAL (O_DIRECT refused here), at the end of the file and at
 * a short transfer: the caller finishes through the page cache.
 */
static size_t xfer_direct(struct dmt_file *f, uint8_t *rp, const uint8_t *wp,
			  size_t len, uint64_t off, int *err)
{
	size_t done = 0;

	*err = 0;
	if (!direct_ok(f, rp ? (const void *)rp : wp, len, off))
		return 0;
	while (done < len) {
		ssize_t n = rp ? pread(f->direct_fd, rp + done, len - done,
				       (off_t)(off + done)) :
				 pwrite(f->direct_fd, wp + done, len - done,
					(off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EINVAL) {
			*err = -errno;
			break;
		}
		if (n <= 0 || (n & DIRECT_ALIGN))
			break;
		done += (size_t)n;
	}
	return done;
}

void dmt_file_close(struct dmt_file *f)
{
	if (!f)
		return;
	dmt_file_release(f);
	free(f);
}

void dmt_file_release(struct dmt_file *f)
{
	if (f->has_direct)
		close(f->direct_fd);
	if (f->fd >= 0)
		close(f->fd);
	if (f->tmp_path)
		unlink(f->tmp_path);
	free(f->tmp_path);
	free(f->path);
	memset(f, 0, sizeof(*f));
	f->fd = -1;
}

int dmt_file_size(struct dmt_file *f, uint64_t *size)
{
	struct stat st;

	if (f->is_blockdev) {
		uint64_t bytes;

		if (ioctl(f->fd, BLKGETSIZE64, &bytes) < 0)
			return -errno;
		*size = bytes;
		return 0;
	}
	if (fstat(f->fd, &st) < 0)
		return -errno;
	*size = (uint64_t)st.st_size;
	return 0;
}

/* Neither a regular file nor a block device: a stream or a character
 * device, which takes writes where they go and has no size to grow. */
static bool is_special(const struct dmt_file *f)
{
	struct stat st;

	return !f->is_blockdev && fstat(f->fd, &st) == 0 &&
	       !S_ISREG(st.st_mode);
}

int dmt_file_extend(struct dmt_file *f, uint64_t size)
{
	uint64_t cur;
	int err = dmt_file_size(f, &cur);

	if (err)
		return err;
	if (is_special(f))
		return 0;
	if (cur >= size)
		return 0;
	if (f->is_blockdev)
		return -ENOSPC;
	/* a file that cannot grow: a short write here is a full disk */
	err = dmt_io_fault_check(f->path, DMT_IO_WRITE);
	if (err)
		return err < 0 ? err : -ENOSPC;
	if (size > (uint64_t)INT64_MAX)
		return -EFBIG;
	if (ftruncate(f->fd, (off_t)size) < 0)
		return -errno;
	return 0;
}

/* ---- transfers ---- */

int dmt_pread_full(struct dmt_file *f, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;
	int err = dmt_io_fault_check(f->path, DMT_IO_READ);

	if (err < 0)
		return err;
	if (f->has_direct) {
		size_t done = xfer_direct(f, p, NULL, len, off, &err);

		if (err)
			return err;
		p += done;
		len -= done;
		off += done;
	}
	while (len) {
		ssize_t n = pread(f->fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ENODATA;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* A stream takes its bytes in order, by write(); anything else by
 * pwrite() at off. */
static ssize_t put(struct dmt_file *f, const void *p, size_t len,
		   uint64_t off)
{
	return f->is_stream ? write(f->fd, p, len)
			    : pwrite(f->fd, p, len, (off_t)off);
}

int dmt_pwrite_full(struct dmt_file *f, const void *buf, size_t len,
		    uint64_t off)
{
	const uint8_t *p = buf;
	int err = dmt_io_fault_check(f->path, DMT_IO_WRITE);

	if (err < 0)
		return err;
	if (f->is_stream && off != f->stream_pos)
		return -ESPIPE;
	if (err == 1) {
		/* A short write that makes no progress after the first
		 * chunk: what a full disk looks like to pwrite(). */
		ssize_t n = len > 1 ? put(f, p, len / 2, off) : 0;

		if (n < 0)
			return -errno;
		f->stream_pos += f->is_stream ? (uint64_t)n : 0;
		return -ENOSPC;
	}
	if (f->has_direct) {
		size_t done = xfer_direct(f, NULL, p, len, off, &err);

		if (err)
			return err;
		p += done;
		len -= done;
		off += done;
	}
	while (len) {
		ssize_t n = put(f, p, len, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ENOSPC;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
		f->stream_pos += f->is_stream ? (uint64_t)n : 0;
	}
	return 0;
}

int dmt_file_sync(struct dmt_file *f)
{
	int err = dmt_io_fault_check(f->path, DMT_IO_SYNC);

	if (err < 0)
		return err;
	if (fsync(f->fd) < 0 && errno != EINVAL && errno != EROFS)
		return -errno;
	return 0;
}

void dmt_file_start_writeback(struct dmt_file *f, uint64_t off, uint64_t len)
{
	if (!f->is_blockdev && !f->is_stream && len)
		sync_file_range(f->fd, (off_t)off, (off_t)len,
				SYNC_FILE_RANGE_WRITE);
}

int dmt_file_next_data(struct dmt_file *f, uint64_t off, uint64_t end,
		       uint64_t *data_start, uint64_t *data_end)
{
	off_t d, h;

	*data_start = off;
	*data_end = end;
	if (off >= end) {
		*data_start = *data_end = end;
		return 0;
	}
	if (f->is_blockdev)
		return 0;
	d = lseek(f->fd, (off_t)off, SEEK_DATA);
	if (d < 0) {
		if (errno == ENXIO) {	/* only a hole up to EOF */
			*data_start = *data_end = end;
			return 0;
		}
		return 0;	/* no SEEK_DATA support: all data */
	}
	if ((uint64_t)d >= end) {
		*data_start = *data_end = end;
		return 0;
	}
	h = lseek(f->fd, d, SEEK_HOLE);
	*data_start = (uint64_t)d;
	if (h >= 0 && (uint64_t)h < end)
		*data_end = (uint64_t)h;
	return 0;
}

/* The one same-file rule: one block device, or one inode. */
static bool same_stat(const struct stat *a, const struct stat *b)
{
	if (S_ISBLK(a->st_mode) && S_ISBLK(b->st_mode))
		return a->st_rdev == b->st_rdev;
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

bool dmt_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (!strcmp(a, b))
		return true;
	if (stat(a, &sa) < 0 || stat(b, &sb) < 0)
		return false;
	return same_stat(&sa, &sb);
}

bool dmt_file_same(const struct dmt_file *a, const struct dmt_file *b)
{
	struct stat sa, sb;

	if (a == b)
		return true;
	if (fstat(a->fd, &sa) < 0 || fstat(b->fd, &sb) < 0)
		return false;
	return same_stat(&sa, &sb);
}

const char *dmt_strerror(int err)
{
	switch (err) {
	case -EMEDIUMTYPE:
		return "not a valid or supported superblock";
	case -ENODATA:
		return "file or device too small";
	case -EBADMSG:
		return "verification failed";
	case -EBUSY:
		return "in use by another process";
	default:
		return strerror(err < 0 ? -err : err);
	}
}

const char *dmt_file_path(const struct dmt_file *f)
{
	return f->path;
}

bool dmt_file_is_blockdev(const struct dmt_file *f)
{
	return f->is_blockdev;
}

int dmt_file_fd(const struct dmt_file *f)
{
	return f->fd;
}

bool dmt_file_is_stream(const struct dmt_file *f)
{
	return f->is_stream;
}

int dmt_file_chmod(struct dmt_file *f, mode_t mode)
{
	return fchmod(f->fd, mode) < 0 ? -errno : 0;
}

int dmt_file_truncate(struct dmt_file *f, uint64_t size)
{
	if (f->is_blockdev || is_special(f))
		return 0;
	if (ftruncate(f->fd, (off_t)size) < 0)
		return -errno;
	return 0;
}
