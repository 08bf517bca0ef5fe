// SPDX-License-Identifier: MIT
#include "tests/support/nodes.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "test nodes: %s: %s\n", what, strerror(errno));
	abort();
}

void th_mknull(const char *path)
{
	if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) < 0)
		die(path);
}

bool th_is_null_node(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISCHR(st.st_mode) &&
	       st.st_rdev == makedev(1, 3);
}

void th_mkfifo(const char *path)
{
	if (mkfifo(path, 0600) < 0)
		die(path);
}

static void hex_of(const uint8_t *md, char hex[65])
{
	for (int i = 0; i < 32; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
}

void th_sha256_buf(const void *p, size_t len, char hex[65])
{
	uint8_t md[32];

	EVP_Digest(p, len, md, NULL, EVP_sha256(), NULL);
	hex_of(md, hex);
}

static void reader_child(const char *fifo, uint64_t limit, int out)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	uint8_t buf[1 << 16], md[32];
	uint64_t count = 0;
	char line[128], hex[65];
	int fd = open(fifo, O_RDONLY);

	if (fd < 0 || !ctx)
		_exit(3);
	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	for (;;) {
		size_t want = sizeof(buf);
		ssize_t n;

		if (limit && limit - count < want)
			want = (size_t)(limit - count);
		if (limit && !want)
			break;
		n = read(fd, buf, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		EVP_DigestUpdate(ctx, buf, (size_t)n);
		count += (uint64_t)n;
	}
	close(fd);
	EVP_DigestFinal_ex(ctx, md, NULL);
	hex_of(md, hex);
	snprintf(line, sizeof(line), "%llu %s\n", (unsigned long long)count,
		 hex);
	if (write(out, line, strlen(line)) < 0)
		_exit(4);
	_exit(0);
}

void th_reader_start(struct th_reader *r, const char *fifo, uint64_t limit)
{
	int p[2];

	if (pipe(p) < 0)
		die("pipe");
	r->pid = fork();
	if (r->pid < 0)
		die("fork");
	if (r->pid == 0) {
		close(p[0]);
		reader_child(fifo, limit, p[1]);
	}
	close(p[1]);
	r->result_fd = p[0];
}

void th_reader_finish(struct th_reader *r, uint64_t *count, char hex[65])
{
	char line[128] = "";
	unsigned long long n = 0;
	struct pollfd pfd = {.fd = r->result_fd, .events = POLLIN};
	ssize_t got = 0, k;
	int status;

	/* the command is over: a reader still waiting for a writer (the
	 * FIFO was replaced) never gets one */
	if (poll(&pfd, 1, 10000) <= 0)
		kill(r->pid, SIGKILL);
	while ((k = read(r->result_fd, line + got,
			 sizeof(line) - 1 - (size_t)got)) > 0)
		got += k;
	line[got > 0 ? got : 0] = '\0';
	close(r->result_fd);
	if (waitpid(r->pid, &status, 0) < 0)
		die("waitpid");
	hex[0] = '\0';
	if (sscanf(line, "%llu %64s", &n, hex) != 2)
		n = UINT64_MAX; /* the reader failed */
	*count = n;
}

void th_lock_hold(struct th_lock *l, const char *path)
{
	int ready[2], release[2];
	char c;

	if (pipe(ready) < 0 || pipe(release) < 0)
		die("pipe");
	l->pid = fork();
	if (l->pid < 0)
		die("fork");
	if (l->pid == 0) {
		int fd = open(path, O_RDONLY);

		close(ready[0]);
		close(release[1]);
		if (fd < 0 || flock(fd, LOCK_EX) < 0)
			_exit(3);
		if (write(ready[1], "x", 1) != 1)
			_exit(4);
		while (read(release[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(ready[1]);
	close(release[0]);
	if (read(ready[0], &c, 1) != 1)
		die("lock holder");
	close(ready[0]);
	l->release_fd = release[1];
}

void th_lock_release(struct th_lock *l)
{
	int status;

	close(l->release_fd);
	waitpid(l->pid, &status, 0);
}

void th_age(const char *path)
{
	struct timespec ts[2];

	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= 3600;
	ts[1] = ts[0];
	if (utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW) < 0)
		die(path);
}
