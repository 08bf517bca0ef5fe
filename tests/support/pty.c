// SPDX-License-Identifier: MIT
#include "tests/support/pty.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "test pty: %s: %s\n", what, strerror(errno));
	abort();
}

static void child(int master, char *const argv[], const char *cwd)
{
	const char *name = ptsname(master);
	int slave;

	if (setsid() < 0 || !name)
		_exit(126);
	slave = open(name, O_RDWR);
	if (slave < 0 || ioctl(slave, TIOCSCTTY, 0) < 0)
		_exit(126);
	dup2(slave, 0);
	dup2(slave, 1);
	dup2(slave, 2);
	if (slave > 2)
		close(slave);
	close(master);
	if (chdir(cwd) < 0)
		_exit(126);
	execvp(argv[0], argv);
	_exit(127);
}

int th_pty_run(char *const argv[], const char *cwd, char **out, size_t *len)
{
	struct winsize ws = {.ws_row = 24, .ws_col = 200};
	int master = posix_openpt(O_RDWR | O_NOCTTY), status;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	pid_t pid;

	if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 || !buf)
		die("posix_openpt");
	ioctl(master, TIOCSWINSZ, &ws);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0)
		child(master, argv, cwd);
	for (;;) {
		ssize_t k;

		if (n == cap && !(buf = realloc(buf, (cap *= 2) + 1)))
			die("realloc");
		k = read(master, buf + n, cap - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) /* EIO: every slave descriptor closed */
			break;
		n += (size_t)k;
	}
	close(master);
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid");
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status)
				   : WEXITSTATUS(status);
}

struct screen {
	char *line;
	size_t col, end, cap;
};

static void put(struct screen *s, char ch)
{
	if (s->col + 1 >= s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->line = realloc(s->line, s->cap);
		if (!s->line)
			die("realloc");
	}
	while (s->end < s->col)
		s->line[s->end++] = ' ';
	s->line[s->col++] = ch;
	if (s->col > s->end)
		s->end = s->col;
}

/* ESC [ params final at b[i]: erases for K, skips the rest; returns the
 * index after it. */
static size_t escape(struct screen *s, const char *b, size_t len, size_t i)
{
	size_t j = i + 2;
	int param = 0;

	if (i + 1 >= len || b[i + 1] != '[')
		return i + 1;
	while (j < len && b[j] >= '0' && b[j] <= '9')
		param = param * 10 + (b[j++] - '0');
	while (j < len &&
	       (b[j] == ';' || b[j] == '?' || (b[j] >= '0' && b[j] <= '9')))
		j++;
	if (j < len && b[j] == 'K') {
		if (param == 2)
			s->end = 0;
		else if (param == 0 && s->end > s->col)
			s->end = s->col;
	}
	return j + 1;
}

static void emit(struct screen *s, char ***lines, size_t *n)
{
	*lines = realloc(*lines, (*n + 1) * sizeof(**lines));
	if (!*lines)
		die("realloc");
	(*lines)[*n] = strndup(s->line ? s->line : "", s->end);
	(*n)++;
	s->col = s->end = 0;
}

size_t th_screen_lines(const char *b, size_t len, char ***lines)
{
	struct screen s = {0};
	size_t n = 0;

	*lines = NULL;
	for (size_t i = 0; i < len;) {
		if (b[i] == '\033') {
			i = escape(&s, b, len, i);
			continue;
		}
		if (b[i] == '\r')
			s.col = 0;
		else if (b[i] == '\n')
			emit(&s, lines, &n);
		else
			put(&s, b[i]);
		i++;
	}
	if (s.end)
		emit(&s, lines, &n);
	free(s.line);
	return n;
}

void th_free_lines(char **lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}
