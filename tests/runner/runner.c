// SPDX-License-Identifier: MIT
/*
 * In-tree test runner for the Criterion subset in criterion/criterion.h.
 * Each test runs in a forked child (default; -j N in parallel) whose output
 * is captured and shown when it fails or is skipped, or in-process with
 * --no-fork.  It never re-executes itself, so it works under qemu-user.
 * The last line is "N passed, N failed, N skipped"; exit status 0 when
 * nothing failed.
 */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "criterion/criterion.h"

enum { R_NONE, R_PASS, R_FAIL, R_SKIP };

/* Written by the test (child) process, read by the parent. */
struct result {
	int status;
	int failures;
};

static struct cri_test *tests;
static struct cri_suite *suites;
static struct result *cur;		/* result slot of the running test */
static sigjmp_buf cri_jmp;
static bool jmp_armed;
static bool forked = true;
static pthread_t main_thread;

void cri_register_test(struct cri_test *t)
{
	t->next = tests;
	tests = t;
}

void cri_register_suite(struct cri_suite *s)
{
	s->next = suites;
	suites = s;
}

static const struct criterion_test_extra_data *suite_data(const char *name)
{
	for (struct cri_suite *s = suites; s; s = s->next)
		if (!strcmp(s->name, name))
			return s->data;
	return NULL;
}

/* Leaves the test: longjmp back to the harness in its own thread. */
static void __attribute__((noreturn)) leave_test(void)
{
	fflush(NULL);
	if (jmp_armed && pthread_equal(pthread_self(), main_thread))
		siglongjmp(cri_jmp, 1);
	/* From another thread the process is the test: end it. */
	if (forked)
		_exit(cur->status == R_SKIP ? 0 : 1);
	fprintf(stderr, "runner: assertion left a helper thread; aborting\n");
	abort();
}

static void vmessage(const char *fmt, va_list ap)
{
	/* fmt starts with the padding space of the macros. */
	if (fmt && fmt[0] == ' ')
		fmt++;
	if (fmt && *fmt) {
		fputs("  ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
}

void cri_fail(int abort_test, const char *file, unsigned int line,
	      const char *what, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%u: Assertion failed: %s\n", file, line, what);
	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	if (cur) {
		cur->failures++;
		cur->status = R_FAIL;
	}
	if (abort_test)
		leave_test();
}

void cri_fail_cmp(int abort_test, const char *file, unsigned int line,
		  const char *what, const char *va, const char *vb,
		  const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr,
		"%s:%u: Assertion failed: %s\n  left:  %s\n  right: %s\n",
		file, line, what, va, vb);
	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	if (cur) {
		cur->failures++;
		cur->status = R_FAIL;
	}
	if (abort_test)
		leave_test();
}

void cri_skip(const char *fmt, ...)
{
	va_list ap;

	fputs("skipped:\n", stderr);
	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	/* A failure before the skip still counts. */
	if (cur && cur->status != R_FAIL)
		cur->status = R_SKIP;
	leave_test();
}

void cr_log(enum criterion_severity severity, const char *msg, ...)
{
	static const char *const tag[] = { "INFO", "WARN", "ERR " };
	va_list ap;

	fprintf(stderr, "[%s] ", tag[severity <= CR_LOG_ERROR ? severity : 2]);
	va_start(ap, msg);
	vfprintf(stderr, msg, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cri_format_value(char *buf, size_t size, char kind, const void *v,
		      size_t n)
{
	intmax_t s = 0;
	uintmax_t u = 0;
	long double d = 0;

	switch (kind) {
	case 'c':
		kind = (char)-1 < 0 ? 'i' : 'u';
		break;
	case 'f':
		if (n == sizeof(float))
			d = *(const float *)v;
		else if (n == sizeof(double))
			d = *(const double *)v;
		else
			d = *(const long double *)v;
		snprintf(buf, size, "%Lg", d);
		return;
	case 'p':
		snprintf(buf, size, "%p", *(void *const *)v);
		return;
	default:
		break;
	}
	if (kind == 'i' || kind == 'u') {
		switch (n) {
		case 1:
			s = *(const int8_t *)v;
			u = *(const uint8_t *)v;
			break;
		case 2:
			s = *(const int16_t *)v;
			u = *(const uint16_t *)v;
			break;
		case 4:
			s = *(const int32_t *)v;
			u = *(const uint32_t *)v;
			break;
		default:
			s = *(const int64_t *)v;
			u = *(const uint64_t *)v;
			break;
		}
		if (kind == 'i')
			snprintf(buf, size, "%jd (0x%jx)", s, u);
		else
			snprintf(buf, size, "%ju (0x%jx)", u, u);
		return;
	}
	/* Anything else: its bytes. */
	buf[0] = '\0';
	for (size_t i = 0; i < n && 2 * i + 3 < size; i++)
		snprintf(buf + 2 * i, size - 2 * i, "%02x",
			 ((const uint8_t *)v)[i]);
}

int cri_strcmp(const char *a, const char *b)
{
	if (!a || !b)
		return a == b ? 0 : (a ? 1 : -1);
	return strcmp(a, b);
}

void cri_arr(int abort_test, int want_equal, const char *file,
	     unsigned int line, const char *what, const void *a, const void *b,
	     size_t size, const char *fmt, ...)
{
	const uint8_t *pa = a, *pb = b;
	size_t i = 0;
	va_list ap;

	if (size && (!a || !b)) {
		i = size;	/* a NULL array never equals */
	} else {
		while (i < size && pa[i] == pb[i])
			i++;
		if ((i == size) == !!want_equal)
			return;
	}
	fprintf(stderr, "%s:%u: Assertion failed: %s (%zu bytes)\n", file,
		line, what, size);
	if (want_equal && a && b) {
		size_t end = i + 16 < size ? i + 16 : size;

		fprintf(stderr, "  first difference at byte %zu:\n  left: ", i);
		for (size_t k = i; k < end; k++)
			fprintf(stderr, " %02x", pa[k]);
		fprintf(stderr, "\n  right:");
		for (size_t k = i; k < end; k++)
			fprintf(stderr, " %02x", pb[k]);
		fputc('\n', stderr);
	}
	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	if (cur) {
		cur->failures++;
		cur->status = R_FAIL;
	}
	if (abort_test)
		leave_test();
}

/* ---- running ---- */

#define MAX_FILTERS 64

struct opts {
	const char *filter[MAX_FILTERS];	/* any may match */
	unsigned int nfilter;
	unsigned int jobs;
	double timeout_scale;
	double timeout_cap;	/* --timeout: default and upper bound */
	bool verbose, list;
};

/* The test's (or its suite's) timeout, scaled, bounded by --timeout. */
static double test_timeout(const struct cri_test *t,
			   const struct criterion_test_extra_data *sd,
			   const struct opts *o)
{
	double to = 0;

	if (t->data->timeout > 0)
		to = t->data->timeout;
	else if (sd && sd->timeout > 0)
		to = sd->timeout;
	to *= o->timeout_scale;
	if (o->timeout_cap > 0 && (to <= 0 || to > o->timeout_cap))
		to = o->timeout_cap;
	return to;
}

/* Runs init, the test and fini in this process; returns via the slot. */
static void run_here(const struct cri_test *t,
		     const struct criterion_test_extra_data *sd)
{
	/* volatile: read after siglongjmp. */
	volatile int stage = 0;

	cur->status = R_NONE;
	jmp_armed = true;
	if (!sigsetjmp(cri_jmp, 1)) {
		if (sd && sd->init)
			sd->init();
		stage = 1;
		if (t->data->init)
			t->data->init();
		stage = 2;
		t->fn();
	}
	/* fini of what was set up runs even after a failed assertion. */
	if (stage >= 2 && t->data->fini && !sigsetjmp(cri_jmp, 1))
		t->data->fini();
	if (stage >= 1 && sd && sd->fini && !sigsetjmp(cri_jmp, 1))
		sd->fini();
	jmp_armed = false;
	if (cur->status == R_NONE)
		cur->status = R_PASS;
	fflush(NULL);
}

struct slot {
	const struct cri_test *t;
	struct result *r;
	pid_t pid;
	FILE *out;
	struct timespec start;
};

static void print_captured(FILE *f)
{
	char buf[4096];
	size_t n;

	if (!f)
		return;
	fflush(f);
	rewind(f);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, stderr);
}

static double elapsed(const struct timespec *s)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - s->tv_sec) +
	       (double)(now.tv_nsec - s->tv_nsec) / 1e9;
}

/* Turns a child's end into pass/fail/skip, printing what it said. */
static int judge(const struct slot *s, int wstatus, struct result *r,
		 const struct opts *o)
{
	const struct criterion_test_extra_data *d = s->t->data;
	int res = r->status;
	char why[128] = "";

	if (WIFSIGNALED(wstatus)) {
		int sig = WTERMSIG(wstatus);

		if (d->signal && sig == d->signal && res != R_FAIL) {
			res = R_PASS;
		} else {
			res = R_FAIL;
			snprintf(why, sizeof(why), "%s (signal %d)",
				 sig == SIGALRM ? "timed out" : strsignal(sig),
				 sig);
		}
	} else {
		int code = WEXITSTATUS(wstatus);

		if (d->signal) {
			res = R_FAIL;
			snprintf(why, sizeof(why),
				 "exited (%d) instead of signal %d", code,
				 d->signal);
		} else if (res == R_SKIP && code == 0) {
			/* skipped */
		} else if (code != d->exit_code) {
			res = R_FAIL;
			snprintf(why, sizeof(why),
				 "exit status %d, expected %d", code,
				 d->exit_code);
		} else if (res == R_NONE && d->exit_code) {
			res = R_PASS;	/* the test itself exited as wanted */
		} else if (res != R_PASS && res != R_SKIP) {
			res = R_FAIL;
		}
	}
	if (res == R_FAIL || res == R_SKIP || o->verbose) {
		static const char *const tag[] = { "FAIL", "PASS", "FAIL",
						   "SKIP" };

		fprintf(stderr, "[%s] %s::%s (%.2fs)%s%s\n", tag[res],
			s->t->suite, s->t->name, elapsed(&s->start),
			why[0] ? ": " : "", why);
		print_captured(s->out);
	}
	return res;
}

static void start_child(struct slot *s, const struct opts *o)
{
	const struct criterion_test_extra_data *sd = suite_data(s->t->suite);
	double to = test_timeout(s->t, sd, o);

	s->out = tmpfile();
	clock_gettime(CLOCK_MONOTONIC, &s->start);
	fflush(NULL);
	s->pid = fork();
	if (s->pid < 0) {
		perror("runner: fork");
		exit(2);
	}
	if (s->pid)
		return;
	if (s->out) {
		dup2(fileno(s->out), 1);
		dup2(fileno(s->out), 2);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (to > 0)
		alarm((unsigned int)(to + 0.999));
	main_thread = pthread_self();
	cur = s->r;
	run_here(s->t, sd);
	_exit(0);
}

static int cmp_tests(const void *a, const void *b)
{
	const struct cri_test *x = *(const struct cri_test *const *)a;
	const struct cri_test *y = *(const struct cri_test *const *)b;
	int c = strcmp(x->suite, y->suite);

	return c ? c : strcmp(x->name, y->name);
}

static void usage(FILE *f)
{
	fputs("usage: unit-tests [--filter=SUITE/TEST-GLOB]... [-j N]\n"
	      "         [--no-fork] [--timeout-scale=F] [--timeout=S]\n"
	      "         [--verbose] [--list]\n"
	      "Test timeouts are multiplied by F (default\n"
	      "$DMT_TEST_TIMEOUT_SCALE or 1); --timeout=S gives every test\n"
	      "at most S seconds (a timeout counts as a failure).\n", f);
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	const char *env = getenv("DMT_TEST_TIMEOUT_SCALE");

	o->jobs = 1;
	o->timeout_scale = env ? strtod(env, NULL) : 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;

		if (!strncmp(a, "--filter=", 9) ||
		    (!strcmp(a, "--filter") && i + 1 < argc)) {
			if (o->nfilter == MAX_FILTERS) {
				fprintf(stderr, "runner: too many --filter\n");
				return -1;
			}
			o->filter[o->nfilter++] = a[8] ? a + 9 : argv[++i];
		} else if (!strncmp(a, "-j", 2) || !strncmp(a, "--jobs=", 7)) {
			v = a[1] == 'j' ? a + 2 : a + 7;
			if (!*v && i + 1 < argc)
				v = argv[++i];
			o->jobs = (unsigned int)strtoul(v, NULL, 10);
			if (!o->jobs)
				o->jobs = 1;
		} else if (!strcmp(a, "--no-fork")) {
			forked = false;
		} else if (!strncmp(a, "--timeout-scale=", 16)) {
			o->timeout_scale = strtod(a + 16, NULL);
		} else if (!strncmp(a, "--timeout=", 10)) {
			o->timeout_cap = strtod(a + 10, NULL);
		} else if (!strcmp(a, "--verbose") ||
			   !strncmp(a, "--verbose=", 10)) {
			o->verbose = true;
		} else if (!strcmp(a, "--list")) {
			o->list = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		} else {
			fprintf(stderr, "runner: unknown option %s\n", a);
			usage(stderr);
			return -1;
		}
	}
	if (!(o->timeout_scale > 0))
		o->timeout_scale = 1;
	return 0;
}

static void count(int res, const struct cri_test *t, unsigned int *passed,
		  unsigned int *skipped, const struct cri_test **failed,
		  unsigned int *nfailed)
{
	if (res == R_PASS)
		(*passed)++;
	else if (res == R_SKIP)
		(*skipped)++;
	else
		failed[(*nfailed)++] = t;
}

/* In-process run of one test (--no-fork). */
static int run_inline(const struct cri_test *t, struct result *r,
		      const struct opts *o)
{
	const struct criterion_test_extra_data *sd = suite_data(t->suite);
	struct slot s = { .t = t, .r = r };

	if (t->data->signal || t->data->exit_code) {
		fprintf(stderr, "[SKIP] %s::%s: needs --fork (expects a signal"
			" or an exit status)\n", t->suite, t->name);
		return R_SKIP;
	}
	clock_gettime(CLOCK_MONOTONIC, &s.start);
	cur = r;
	run_here(t, sd);
	cur = NULL;
	return judge(&s, 0, r, o);
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct cri_test **list;
	const struct cri_test **failed;
	struct result *res;
	struct slot *slots;
	size_t n = 0, nsel = 0, next = 0, running = 0;
	unsigned int passed = 0, nfailed = 0, skipped = 0;

	if (parse_args(argc, argv, &o))
		return 2;
	for (struct cri_test *t = tests; t; t = t->next)
		n++;
	list = calloc(n + 1, sizeof(*list));
	failed = calloc(n + 1, sizeof(*failed));
	slots = calloc(o.jobs, sizeof(*slots));
	/* Shared with the children: each writes its own result. */
	res = mmap(NULL, (n + 1) * sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!list || !failed || !slots || res == MAP_FAILED) {
		perror("runner");
		return 2;
	}
	for (struct cri_test *t = tests; t; t = t->next) {
		char full[512];

		bool match = !o.nfilter;

		snprintf(full, sizeof(full), "%s/%s", t->suite, t->name);
		for (unsigned int k = 0; k < o.nfilter && !match; k++)
			match = !fnmatch(o.filter[k], full, 0);
		if (match)
			list[nsel++] = t;
	}
	qsort(list, nsel, sizeof(*list), cmp_tests);
	if (o.list) {
		for (size_t i = 0; i < nsel; i++)
			printf("%s/%s\n", list[i]->suite, list[i]->name);
		return 0;
	}
	main_thread = pthread_self();
	setvbuf(stderr, NULL, _IOLBF, 0);

	while (next < nsel || running) {
		/* Start as many as allowed, then reap one. */
		while (next < nsel && running < o.jobs) {
			const struct cri_test *t = list[next];
			const struct criterion_test_extra_data *sd =
				suite_data(t->suite);
			struct result *r = &res[next++];

			if (t->data->disabled || (sd && sd->disabled)) {
				fprintf(stderr, "[SKIP] %s::%s: disabled\n",
					t->suite, t->name);
				skipped++;
				continue;
			}
			if (!forked) {
				count(run_inline(t, r, &o), t, &passed,
				      &skipped, failed, &nfailed);
				continue;
			}
			for (unsigned int k = 0; k < o.jobs; k++) {
				if (slots[k].t)
					continue;
				slots[k].t = t;
				slots[k].r = r;
				start_child(&slots[k], &o);
				running++;
				break;
			}
		}
		if (!running)
			continue;

		int ws;
		pid_t pid = waitpid(-1, &ws, 0);

		if (pid < 0) {
			if (errno == EINTR)
				continue;
			perror("runner: waitpid");
			return 2;
		}
		for (unsigned int k = 0; k < o.jobs; k++) {
			struct slot *s = &slots[k];

			if (!s->t || s->pid != pid)
				continue;
			count(judge(s, ws, s->r, &o), s->t, &passed, &skipped,
			      failed, &nfailed);
			if (s->out)
				fclose(s->out);
			memset(s, 0, sizeof(*s));
			running--;
		}
	}
	for (unsigned int i = 0; i < nfailed; i++)
		fprintf(stderr, "FAILED: %s::%s (%s:%u)\n", failed[i]->suite,
			failed[i]->name, failed[i]->file, failed[i]->line);
	fflush(stderr);
	printf("%u passed, %u failed, %u skipped\n", passed, nfailed, skipped);
	fflush(stdout);
	return nfailed ? 1 : 0;
}
