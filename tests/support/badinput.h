/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the bad-input and fault suites (badinput_verity,
 * badinput_integrity, faults): run a tool with an environment or without
 * root, assert the shape of a failure (exit code, no signal, one stderr
 * line naming what is wrong, no results on stdout) and check that a
 * failed command left a directory exactly as it was (inputs untouched, no
 * new file under the final name, no temporary file).
 */
#ifndef DMT_TESTS_BADINPUT_H
#define DMT_TESTS_BADINPUT_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/helpers.h"

/* The unprivileged user of the .nobody runs (uid and gid 65534 on Debian). */
#define BI_NOBODY_NAME "nobody"

struct bi_res {
	int status;		/* raw waitpid status */
	int rc;			/* exit code, or -1 when killed */
	int sig;		/* the signal that killed it, or 0 */
	char *out, *err;
	char *cmd;
};

struct bi_opts {
	const char *env[4];	/* "NAME=value", NULL-terminated */
	bool nobody;		/* drop root before exec */
};

static inline void bi_free(struct bi_res *r)
{
	free(r->out);
	free(r->err);
	free(r->cmd);
	memset(r, 0, sizeof(*r));
}

static inline char *bi_slurp(const char *path)
{
	size_t len;

	return (char *)th_read_file(path, &len);
}

/* Becomes BI_NOBODY_NAME (in a child): 0, or -1 (no such user, or refused). */
static inline int bi_drop_root(void)
{
	const struct passwd *pw = getpwnam(BI_NOBODY_NAME);

	if (!pw || setgroups(0, NULL) < 0 || setgid(pw->pw_gid) < 0 ||
	    setuid(pw->pw_uid) < 0)
		return -1;
	return 0;
}

/*
 * Runs "exec <cmd>" through /bin/sh (so the status is the tool's own, a
 * crash shows as a signal) with stdout/stderr in files of `dir`.
 */
static inline void bi_vrun(struct bi_res *r, const char *dir,
			   const struct bi_opts *o, const char *fmt,
			   va_list ap)
{
	char *cmd, *opath = th_path(dir, ".bi-out"), *epath;
	pid_t pid;

	epath = th_path(dir, ".bi-err");
	memset(r, 0, sizeof(*r));
	cr_assert(vasprintf(&cmd, fmt, ap) >= 0);
	r->cmd = cmd;
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		int ofd = open(opath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int efd = open(epath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		char *line;

		if (ofd < 0 || efd < 0 || dup2(ofd, 1) < 0 ||
		    dup2(efd, 2) < 0)
			_exit(126);
		for (int i = 0; o && i < 4 && o->env[i]; i++)
			putenv((char *)o->env[i]);
		if (o && o->nobody && bi_drop_root() < 0)
			_exit(126);
		if (asprintf(&line, "exec %s", cmd) < 0)
			_exit(126);
		execl("/bin/sh", "sh", "-c", line, (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &r->status, 0), pid);
	r->rc = WIFEXITED(r->status) ? WEXITSTATUS(r->status) : -1;
	r->sig = WIFSIGNALED(r->status) ? WTERMSIG(r->status) : 0;
	r->out = bi_slurp(opath);
	r->err = bi_slurp(epath);
	unlink(opath);
	unlink(epath);
	free(opath);
	free(epath);
}

static inline __attribute__((format(printf, 4, 5))) void
bi_run(struct bi_res *r, const char *dir, const struct bi_opts *o,
       const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bi_vrun(r, dir, o, fmt, ap);
	va_end(ap);
}

static inline int bi_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The first line of stderr (static buffer, for messages). */
static inline const char *bi_first_line(const char *s)
{
	static __thread char buf[512];
	size_t n = strcspn(s, "\n");

	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return buf;
}

enum {
	BI_MULTI = 1 << 0,	/* more stderr lines are allowed (hints) */
	BI_STDOUT = 1 << 1,	/* stdout may hold results */
};

/*
 * A clean failure: exit code `want`, not killed, "<tool>: ..." as the first
 * stderr line with `needle` (the file, or the option at fault) in it,
 * exactly one line unless BI_MULTI, nothing on stdout unless BI_STDOUT.
 */
static inline void bi_expect_fail(const struct bi_res *r, const char *tool,
				  int want, const char *needle, int flags)
{
	const char *first = bi_first_line(r->err);
	char prefix[64];

	cr_assert_eq(r->sig, 0, "[%s] killed by signal %d; stderr: %s",
		     r->cmd, r->sig, r->err);
	cr_expect_eq(r->rc, want, "[%s] exit code %d, want %d; stderr: %s",
		     r->cmd, r->rc, want, r->err);
	snprintf(prefix, sizeof(prefix), "%s: ", tool);
	cr_expect(!strncmp(first, prefix, strlen(prefix)),
		  "[%s] first stderr line not from %s: '%s'", r->cmd, tool,
		  first);
	if (needle)
		cr_expect(strstr(first, needle) != NULL,
			  "[%s] first stderr line does not name '%s': '%s'",
			  r->cmd, needle, first);
	if (!(flags & BI_MULTI))
		cr_expect_eq(bi_lines(r->err), 1,
			     "[%s] want exactly one stderr line, got: %s",
			     r->cmd, r->err);
	if (!(flags & BI_STDOUT))
		cr_expect_str_empty(r->out, "[%s] stdout on failure: %s",
				    r->cmd, r->out);
}

static inline void bi_expect_ok(const struct bi_res *r)
{
	cr_assert_eq(r->status, 0, "[%s] failed (status %#x): %s", r->cmd,
		     r->status, r->err);
}

static inline int bi_cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * "name size sha256\n" for every entry of dir (sorted; directories and
 * names starting with ".bi-" only by name), skipping `except`.
 */
static inline char *bi_dir_state(const char *dir, const char *except)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL, *s = NULL;
	size_t n = 0, len = 0;

	cr_assert(d, "opendir %s: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    !strncmp(e->d_name, ".bi-", 4) ||
		    (except && !strcmp(e->d_name, except)))
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		cr_assert(names);
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), bi_cmp_names);
	s = strdup("");
	for (size_t i = 0; i < n; i++) {
		char *p = th_path(dir, names[i]), hex[65] = "-", *line;
		struct stat st;

		cr_assert_eq(lstat(p, &st), 0);
		if (S_ISREG(st.st_mode) && (st.st_mode & 0444) &&
		    access(p, R_OK) == 0)
			th_sha256_file(p, hex);
		cr_assert(asprintf(&line, "%s %lld %o %s\n", names[i],
				   (long long)st.st_size, st.st_mode & 07777,
				   hex) >= 0);
		s = realloc(s, len + strlen(line) + 1);
		cr_assert(s);
		strcpy(s + len, line);
		len += strlen(line);
		free(line);
		free(p);
		free(names[i]);
	}
	free(names);
	return s;
}

/* The directory is exactly as `before` (then frees it). */
static inline void bi_expect_state(const char *dir, const char *except,
				   char *before, const struct bi_res *r)
{
	char *after = bi_dir_state(dir, except);

	cr_expect_str_eq(after, before,
			 "[%s] files changed by a failed command:\n"
			 "before:\n%s\nafter:\n%s", r ? r->cmd : "",
			 before, after);
	free(after);
	free(before);
}

/* No "<name>" and no "<name>.tmp*" in dir. */
static inline void bi_expect_absent(const char *dir, const char *name)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = strlen(name);

	cr_assert(d);
	while ((e = readdir(d))) {
		cr_expect(strcmp(e->d_name, name) != 0,
			  "%s exists after a failed command", name);
		cr_expect(strncmp(e->d_name, name, n) ||
			  strncmp(e->d_name + n, ".tmp", 4),
			  "temporary file %s left behind", e->d_name);
	}
	closedir(d);
}

/* Tests that run the tools as nobody need root to get there. */
static inline void bi_need_root(void)
{
	if (geteuid() != 0)
		cr_skip("needs root to run the tools as another user");
}

/* A directory that nobody may enter and read (mkdtemp makes it 0700). */
static inline void bi_open_dir(const char *dir)
{
	cr_assert_eq(chmod(dir, 0755), 0);
}

/* A writable-by-anyone subdirectory (for nobody's outputs). */
static inline char *bi_world_dir(const char *dir, const char *name)
{
	char *p = th_path(dir, name);

	cr_assert_eq(mkdir(p, 0777), 0);
	cr_assert_eq(chmod(p, 01777), 0);
	return p;
}

/* Parses "Root hash:      \t<hex>" from verity-tool's build output. */
static inline void bi_root_hash(const char *out, char *hex, size_t size)
{
	const char *p = strstr(out, "Root hash:");
	size_t n;

	cr_assert(p, "no root hash in: %s", out);
	p += strlen("Root hash:");
	p += strspn(p, " \t");
	n = strcspn(p, "\n");
	cr_assert(n < size);
	memcpy(hex, p, n);
	hex[n] = '\0';
}

/* Overwrites len bytes at off. */
static inline void bi_patch(const char *path, uint64_t off, const void *buf,
			    size_t len)
{
	int fd = open(path, O_WRONLY);

	cr_assert(fd >= 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(pwrite(fd, buf, len, (off_t)off), (ssize_t)len);
	close(fd);
}

static inline void bi_copy(const char *from, const char *to)
{
	size_t len;
	uint8_t *b = th_read_file(from, &len);

	th_write_file(to, b, len);
	free(b);
}

/*
 * The tool `path` as the unprivileged user can run it: a copy in
 * dir/.bi-bin/ (bi_dir_state ignores ".bi-" names; dir goes with the
 * fixture), since the build directory may be where that user cannot go (a
 * checkout under /root, mode 0700).  dir must be open (bi_open_dir).
 * Skips the test, saying why, when there is no such user or it cannot
 * reach dir (TMPDIR under a private directory).  Returns a static buffer.
 */
static inline const char *bi_nobody_tool(const char *dir, const char *path)
{
	static __thread char copy[4096];
	const char *name = strrchr(path, '/');
	char *bin = th_path(dir, ".bi-bin");
	int status;
	pid_t pid;

	if (!getpwnam(BI_NOBODY_NAME))
		cr_skip("no user '" BI_NOBODY_NAME "' to run the tools without root");
	snprintf(copy, sizeof(copy), "%s/%s", bin, name ? name + 1 : path);
	if (mkdir(bin, 0755) < 0)
		cr_assert_eq(errno, EEXIST, "mkdir %s: %s", bin, strerror(errno));
	cr_assert_eq(chmod(bin, 0755), 0);
	bi_copy(path, copy);
	cr_assert_eq(chmod(copy, 0755), 0, "chmod %s: %s", copy, strerror(errno));
	free(bin);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0)
		_exit(bi_drop_root() < 0 ? 2 : access(copy, X_OK) < 0 ? 1 : 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) != 2,
		  "cannot become user '" BI_NOBODY_NAME "'");
	if (WEXITSTATUS(status) != 0)
		cr_skip("user '" BI_NOBODY_NAME "' cannot reach %s (is TMPDIR "
			"under a private directory?)", copy);
	return copy;
}

#endif /* DMT_TESTS_BADINPUT_H */
