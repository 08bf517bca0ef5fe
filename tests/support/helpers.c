// SPDX-License-Identifier: MIT
#include "tests/support/helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "test helper: %s: %s\n", what, strerror(errno));
	abort();
}

char *th_mkdtemp(void)
{
	const char *base = getenv("TMPDIR");
	char *p;

	if (!base || !*base)
		base = "/var/tmp";
	if (asprintf(&p, "%s/dmt-test-XXXXXX", base) < 0)
		die("asprintf");
	if (!mkdtemp(p))
		die("mkdtemp");
	return p;
}

void th_rmtree(const char *dir)
{
	char *cmd;

	if (!dir || !*dir || !strcmp(dir, "/"))
		return;
	if (asprintf(&cmd, "rm -rf '%s'", dir) < 0)
		die("asprintf");
	if (system(cmd) != 0)
		fprintf(stderr, "test helper: could not remove %s\n", dir);
	free(cmd);
}

char *th_path(const char *dir, const char *name)
{
	char *p;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		die("asprintf");
	return p;
}

void th_fill_random(void *buf, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		for (size_t k = 0; k < 8 && i + k < len; k++)
			p[i + k] = (uint8_t)(x >> (8 * k));
	}
}

void th_write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	const uint8_t *p = buf;

	if (fd < 0)
		die(path);
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n <= 0)
			die(path);
		p += n;
		len -= (size_t)n;
	}
	close(fd);
}

void th_write_random_file(const char *path, uint64_t len, uint64_t seed)
{
	size_t chunk = 1 << 20;
	uint8_t *buf = malloc(chunk);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	uint64_t off = 0;

	if (!buf || fd < 0)
		die(path);
	while (off < len) {
		size_t n = len - off < chunk ? (size_t)(len - off) : chunk;

		if (seed)
			th_fill_random(buf, n, seed + off);
		else
			memset(buf, 0, n);
		if (write(fd, buf, n) != (ssize_t)n)
			die(path);
		off += n;
	}
	close(fd);
	free(buf);
}

uint8_t *th_read_file(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);
	size_t got = 0;

	if (fd < 0 || fstat(fd, &st) < 0)
		die(path);
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		die("malloc");
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n <= 0)
			die(path);
		got += (size_t)n;
	}
	close(fd);
	buf[got] = 0;
	if (len)
		*len = got;
	return buf;
}

void th_sha256_file(const char *path, char hex[65])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	uint8_t buf[1 << 16], md[32];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0 || !ctx)
		die(path);
	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		EVP_DigestUpdate(ctx, buf, (size_t)n);
	EVP_DigestFinal_ex(ctx, md, NULL);
	EVP_MD_CTX_free(ctx);
	close(fd);
	for (int i = 0; i < 32; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
}

bool th_files_equal(const char *a, const char *b)
{
	size_t la, lb;
	uint8_t *pa = th_read_file(a, &la), *pb = th_read_file(b, &lb);
	bool eq = la == lb && !memcmp(pa, pb, la);

	free(pa);
	free(pb);
	return eq;
}

void th_flip_byte(const char *path, uint64_t off, uint8_t mask)
{
	int fd = open(path, O_RDWR);
	uint8_t c = 0;

	if (fd < 0 || pread(fd, &c, 1, (off_t)off) != 1)
		die(path);
	c ^= mask ? mask : 0x01;
	if (pwrite(fd, &c, 1, (off_t)off) != 1)
		die(path);
	close(fd);
}

bool th_reduced(void)
{
	/* 0 not read yet, 1 full, 2 reduced; racing first calls agree */
	static int state;
	int s = __atomic_load_n(&state, __ATOMIC_RELAXED);

	if (!s) {
		const char *e = getenv("DMT_TEST_REDUCED");

		s = e && *e && strcmp(e, "0") ? 2 : 1;
		__atomic_store_n(&state, s, __ATOMIC_RELAXED);
	}
	return s == 2;
}

const char *th_tool(const char *name)
{
	static __thread char buf[4096];
	const char *dir = getenv("DMT_TOOL_DIR");

	if (!dir || !*dir)
		dir = getenv("DMT_BUILD");
	snprintf(buf, sizeof(buf), "%s/%s", dir && *dir ? dir : "build", name);
	return buf;
}

const char *th_test_tool(const char *name)
{
	static __thread char buf[4096];
	const char *dir = getenv("DMT_BUILD");

	snprintf(buf, sizeof(buf), "%s/test-tools/%s",
		 dir && *dir ? dir : "build", name);
	return buf;
}

bool th_have_cmd(const char *cmd)
{
	char *line;
	int rc;

	if (asprintf(&line,
		     "PATH=$PATH:/usr/sbin:/sbin command -v '%s' >/dev/null 2>&1",
		     cmd) < 0)
		die("asprintf");
	rc = system(line);
	free(line);
	return rc == 0;
}

/* Drain both pipes together so a chatty child can't deadlock us. */
static void drain(int ofd, int efd, char **out, char **err)
{
	char *bufs[2] = { NULL, NULL };
	size_t lens[2] = { 0, 0 };
	struct pollfd pfd[2] = { { ofd, POLLIN, 0 }, { efd, POLLIN, 0 } };
	int open_fds = 2;

	while (open_fds) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		for (int i = 0; i < 2; i++) {
			char tmp[65536];
			ssize_t n;

			if (pfd[i].fd < 0 || !pfd[i].revents)
				continue;
			n = read(pfd[i].fd, tmp, sizeof(tmp));
			if (n <= 0) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
				open_fds--;
				continue;
			}
			bufs[i] = realloc(bufs[i], lens[i] + (size_t)n + 1);
			if (!bufs[i])
				die("realloc");
			memcpy(bufs[i] + lens[i], tmp, (size_t)n);
			lens[i] += (size_t)n;
			bufs[i][lens[i]] = 0;
		}
	}
	for (int i = 0; i < 2; i++) {
		char **dst = i ? err : out;

		if (!bufs[i])
			bufs[i] = strdup("");
		if (dst)
			*dst = bufs[i];
		else
			free(bufs[i]);
	}
}

int th_run(char *const argv[], char **out, char **err)
{
	int op[2], ep[2], status;
	pid_t pid;

	if (pipe(op) < 0 || pipe(ep) < 0)
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		dup2(op[1], 1);
		dup2(ep[1], 2);
		close(op[0]);
		close(ep[0]);
		close(op[1]);
		close(ep[1]);
		execvp(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(op[1]);
	close(ep[1]);
	drain(op[0], ep[0], out, err);
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid");
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int th_sh(char **out, char **err, const char *fmt, ...)
{
	char *cmd, *argv[4];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	if (vasprintf(&cmd, fmt, ap) < 0)
		die("vasprintf");
	va_end(ap);
	argv[0] = "/bin/sh";
	argv[1] = "-c";
	argv[2] = cmd;
	argv[3] = NULL;
	rc = th_run(argv, out, err);
	free(cmd);
	return rc;
}

int th_sh_tools(char **out, char **err, const char *dir, const char *in,
		const char *fmt, ...)
{
	char *cmd, *build = realpath(th_tool(""), NULL);
	va_list ap;
	int rc;

	if (!build)
		die("the build directory");
	va_start(ap, fmt);
	if (vasprintf(&cmd, fmt, ap) < 0)
		die("vasprintf");
	va_end(ap);
	rc = th_sh(out, err, "cd '%s' && T='%s' CT='%s/crypt-tool' && { %s\n}%s%s",
		   dir, build, build, cmd, in ? " < " : "", in ? in : "");
	free(cmd);
	free(build);
	return rc;
}

uint8_t *th_guard_alloc(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t span = (n + page - 1) / page * page + page;
	uint8_t *base = mmap(NULL, span, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (base == MAP_FAILED)
		die("mmap");
	if (mprotect(base + span - page, page, PROT_NONE) < 0)
		die("mprotect");
	return base + span - page - n;
}

void th_guard_free(uint8_t *p, size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t span = (n + page - 1) / page * page + page;
	uint8_t *base = p + n + page - span;

	munmap(base, span);
}
