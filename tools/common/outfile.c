// SPDX-License-Identifier: MIT
/*
 * The output-file rule of every tool (tools/common/outfile.h): what a name
 * resolves to decides between a temporary renamed into place, writing in
 * place and a stream; stale temporaries of killed runs are cleared.
 */
#include "tools/common/outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tools/common/cli.h"

/* A temporary changed this recently may be one a live run has created
 * and not locked yet: never taken as stale. */
#define STALE_AFTER_NS 2000000000ll

/* ---- stale temporaries ---- */

/* The six characters mkstemp fills in. */
static bool mkstemp_chars(const char *x)
{
	if (strlen(x) != 6)
		return false;
	for (; *x; x++)
		if (!((*x >= 'a' && *x <= 'z') || (*x >= 'A' && *x <= 'Z') ||
		      (*x >= '0' && *x <= '9')))
			return false;
	return true;
}

/* "<base>.tmpXXXXXX" exactly. */
static bool tmp_name_of(const char *name, const char *base)
{
	size_t n = strlen(base);

	return !strncmp(name, base, n) && !strncmp(name + n, ".tmp", 4) &&
	       mkstemp_chars(name + n + 4);
}

/* Any "<something>.tmpXXXXXX". */
static bool tmp_shaped(const char *name)
{
	size_t n = strlen(name);

	return n > 10 && !strncmp(name + n - 10, ".tmp", 4) &&
	       mkstemp_chars(name + n - 6);
}

static bool same_inode(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

static bool changed_lately(const struct stat *st)
{
	struct timespec now;
	long long age;

	clock_gettime(CLOCK_REALTIME, &now);
	age = (long long)(now.tv_sec - st->st_mtim.tv_sec) * 1000000000ll +
	      (now.tv_nsec - st->st_mtim.tv_nsec);
	return age < STALE_AFTER_NS;
}

/* Ours and stale: regular, our uid, one link, unlocked, old enough; it
 * is removed while we hold its lock, if the name still names it. */
static void clear_one(int dfd, const char *dir, const char *name)
{
	struct stat st, fst, again;
	int fd;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1)
		return;
	fd = openat(dfd, name,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &fst) == 0 && same_inode(&st, &fst) &&
	    flock(fd, LOCK_EX | LOCK_NB) == 0 && !changed_lately(&fst) &&
	    fstatat(dfd, name, &again, AT_SYMLINK_NOFOLLOW) == 0 &&
	    same_inode(&fst, &again) && unlinkat(dfd, name, 0) == 0)
		tool_info("%s/%s: removed, the temporary file of an earlier "
			  "run that did not finish",
			  dir, name);
	close(fd);
}

/*
 * The temporary-shaped names of the last directory read: a run writing
 * many outputs into one directory (--out-dir) reads it once, not once per
 * output.  A temporary made after that read is no earlier run's leftover.
 */
static struct {
	char *dir;
	char **names;
	size_t n;
} seen;

static void read_dir(const char *dir)
{
	DIR *d = opendir(*dir ? dir : "/");
	struct dirent *de;

	while (seen.n)
		free(seen.names[--seen.n]);
	free(seen.dir);
	seen.dir = strdup(dir);
	while (d && seen.dir && (de = readdir(d))) {
		char **v;

		if (!tmp_shaped(de->d_name))
			continue;
		v = realloc(seen.names, (seen.n + 1) * sizeof(*v));
		if (!v)
			break;
		seen.names = v;
		seen.names[seen.n] = strdup(de->d_name);
		seen.n += seen.names[seen.n] != NULL;
	}
	if (d)
		closedir(d);
}

void tool_out_clear_stale(const char *target)
{
	const char *slash = strrchr(target, '/');
	char *dir =
		slash ? strndup(target, (size_t)(slash - target)) : strdup(".");
	const char *base = slash ? slash + 1 : target;
	int dfd = -1;

	if (!dir || !*base)
		goto out;
	if (!seen.dir || strcmp(seen.dir, dir))
		read_dir(dir);
	for (size_t i = 0; i < seen.n; i++) {
		if (!tmp_name_of(seen.names[i], base))
			continue;
		if (dfd < 0)
			dfd = open(*dir ? dir : "/",
				   O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0)
			clear_one(dfd, dir, seen.names[i]);
		/* looked at once */
		free(seen.names[i]);
		seen.names[i--] = seen.names[--seen.n];
	}
	if (dfd >= 0)
		close(dfd);
out:
	free(dir);
}

/* ---- what a name resolves to ---- */

/* The name a chain of symbolic links ends at (it may not exist): a
 * relative link counts from the directory of the link. */
static int resolve_links(const char *path, char **out)
{
	char *cur = strdup(path), buf[PATH_MAX];

	for (int hops = 0; cur && hops < 40; hops++) {
		const char *slash = strrchr(cur, '/');
		struct stat st;
		ssize_t n;
		char *next;

		if (lstat(cur, &st) < 0 || !S_ISLNK(st.st_mode)) {
			*out = cur;
			return 0;
		}
		n = readlink(cur, buf, sizeof(buf) - 1);
		if (n < 0) {
			free(cur);
			return -errno;
		}
		buf[n] = '\0';
		if (buf[0] == '/' || !slash)
			next = strdup(buf);
		else if (asprintf(&next, "%.*s/%s", (int)(slash - cur), cur,
				  buf) < 0)
			next = NULL;
		free(cur);
		cur = next;
	}
	if (!cur)
		return -ENOMEM;
	free(cur);
	return -ELOOP;
}

static const char *kind_name(const struct stat *st)
{
	return S_ISFIFO(st->st_mode)   ? "fifo"
	       : S_ISSOCK(st->st_mode) ? "socket"
				       : "character device";
}

/* A refusal of the rule itself: printed here (*said), exit 4. */
static int refuse(const char *path, const struct stat *st, bool *said)
{
	*said = true;
	if (S_ISSOCK(st->st_mode)) {
		tool_err("%s: a socket cannot be opened by its name; give a "
			 "FIFO, a file or a device",
			 path);
		return -ENXIO;
	}
	tool_err("%s: not seekable (%s); this output is written out of "
		 "order and needs a regular file or a device",
		 path, kind_name(st));
	return -ESPIPE;
}

/* A character device or FIFO: in place, a stream when it cannot seek
 * (never replaced). */
static int open_special(struct dmt_file **f, const char *path,
			const struct stat *st, unsigned int flags, bool *said)
{
	bool seek = flags & TOOL_OUT_SEEK;
	int err;

	/* a FIFO is refused before its open would wait for a reader */
	if (S_ISSOCK(st->st_mode) || (seek && S_ISFIFO(st->st_mode)))
		return refuse(path, st, said);
	err = dmt_file_open(path, seek ? DMT_OPEN_RW : DMT_OPEN_WRITE, f);
	if (err)
		return err;
	if (seek && dmt_file_is_stream(*f)) {
		dmt_file_close(*f);
		*f = NULL;
		return refuse(path, st, said);
	}
	/* a reader that goes away is an error (EPIPE), not a silent kill */
	if (dmt_file_is_stream(*f))
		signal(SIGPIPE, SIG_IGN);
	return 0;
}

/* A missing or replaced (old) file: a new temporary beside the target;
 * a replacement keeps the permission bits of the file it replaces. */
static int open_new(struct dmt_file **f, const char *path, unsigned int flags,
		    const struct stat *old)
{
	char *target = NULL;
	int err = resolve_links(path, &target);

	if (err)
		return err;
	tool_out_clear_stale(target);
	err = dmt_file_open(
		target,
		DMT_OPEN_NEW_TMP | DMT_OPEN_LOCK |
			(flags & TOOL_OUT_PUBLIC ? DMT_OPEN_PUBLIC : 0),
		f);
	if (!err && old)
		err = dmt_file_chmod(*f, old->st_mode & 0777);
	if (err) {
		dmt_file_close(*f);
		*f = NULL;
	}
	free(target);
	return err;
}

static int open_by_rule(struct dmt_file **f, const char *path,
			unsigned int flags, bool *created, bool *said)
{
	int lock = flags & TOOL_OUT_LOCK ? DMT_OPEN_LOCK : 0;
	struct stat st;

	*created = false;
	*f = NULL;
	if (stat(path, &st) < 0) {
		if (errno != ENOENT)
			return -errno;
		*created = true; /* missing, or a dangling link */
		return open_new(f, path, flags, NULL);
	}
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (S_ISREG(st.st_mode) && !(flags & TOOL_OUT_IN_PLACE)) {
		*created = true;
		return open_new(f, path, flags, &st);
	}
	if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))
		return dmt_file_open(path, DMT_OPEN_RW | lock, f);
	return open_special(f, path, &st, flags, said);
}

int tool_out_open(struct dmt_file **f, const char *path, unsigned int flags,
		  const char *what, bool *created)
{
	bool said = false;
	int err = open_by_rule(f, path, flags, created, &said);

	if (err && !said)
		tool_err_errno(path, what, err);
	return err;
}

int tool_out_commit(struct dmt_file *f)
{
	int err = dmt_file_sync(f);

	return err ? err : dmt_file_commit(f);
}
