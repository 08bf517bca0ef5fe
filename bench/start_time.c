// SPDX-License-Identifier: MIT
/*
 * Whole runs of two commands, interleaved, for bench-start: how long a
 * process takes from fork() to its exit as a shell script sees it.
 *
 *   start_time RUNS CMD_A... -- CMD_B...
 *
 * Runs A then B, RUNS times, after one untimed run of each (the page
 * cache and the loader's caches warm).  Their standard output and error
 * go to the file START_TIME_OUT names (truncated each run; default: left
 * as they are).  Prints "A_WALL B_WALL A_CPU B_CPU": the medians of the
 * wall times (clock_gettime(CLOCK_MONOTONIC) around fork() and wait4())
 * and of the CPU times (the child's user + system time from wait4()), in
 * milliseconds.
 * Exit 1 when a run fails or cannot start.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_RUNS 1000

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double tv_ms(struct timeval tv)
{
	return tv.tv_sec * 1e3 + tv.tv_usec / 1e3;
}

/* One whole run of argv: its wall time in ms (-1 when it failed) and its
 * CPU time in *cpu. */
static double run(char **argv, const char *out, double *cpu)
{
	double t0 = now_ms();
	struct rusage ru;
	int st, fd;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		if (out) {
			fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			if (fd < 0)
				_exit(127);
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	*cpu = tv_ms(ru.ru_utime) + tv_ms(ru.ru_stime);
	return now_ms() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	static double ta[MAX_RUNS], tb[MAX_RUNS], ca[MAX_RUNS], cb[MAX_RUNS];
	const char *out = getenv("START_TIME_OUT");
	char **a = argv + 2, **b = NULL;
	int runs = argc > 1 ? atoi(argv[1]) : 0;

	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			argv[i] = NULL;
			b = argv + i + 1;
			break;
		}
	}
	if (runs < 1 || runs > MAX_RUNS || !b || !a[0] || !b[0]) {
		fprintf(stderr,
			"usage: start_time RUNS CMD_A... -- CMD_B...\n");
		return 1;
	}
	if (run(a, out, ca) < 0 || run(b, out, cb) < 0)
		goto failed;
	for (int i = 0; i < runs; i++) {
		ta[i] = run(a, out, &ca[i]);
		tb[i] = run(b, out, &cb[i]);
		if (ta[i] < 0 || tb[i] < 0)
			goto failed;
	}
	printf("%.3f %.3f %.3f %.3f\n", median(ta, runs), median(tb, runs),
	       median(ca, runs), median(cb, runs));
	return 0;
failed:
	fprintf(stderr, "start_time: a run of %s or %s failed\n", a[0], b[0]);
	return 1;
}
