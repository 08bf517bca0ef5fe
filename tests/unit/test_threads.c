// SPDX-License-Identifier: MIT
/*
 * dmt_parallel_for (suite "threads", lib/common/threads.c): every index
 * exactly once, the worker ids, the first error, and the persistent pool:
 * thousands of calls in a row, a call nested in a job, two callers at
 * once, and a child of fork() (which has none of the parent's threads).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dmt/threads.h>

#define N 10000

struct count {
	unsigned int threads;
	unsigned char seen[N];
	unsigned int bad_worker;
	int fail_at; /* index whose call fails, or -1 */
};

static int count_fn(void *ctx, unsigned int worker, uint64_t begin,
		    uint64_t end)
{
	struct count *c = ctx;

	if (worker >= c->threads)
		__atomic_add_fetch(&c->bad_worker, 1, __ATOMIC_RELAXED);
	for (uint64_t i = begin; i < end; i++) {
		if (c->fail_at >= 0 && i == (uint64_t)c->fail_at)
			return -EIO;
		__atomic_add_fetch(&c->seen[i], 1, __ATOMIC_RELAXED);
	}
	return 0;
}

/* Runs one call and checks every index was seen exactly once. */
static void run_and_check(unsigned int threads, uint64_t n, uint64_t chunk)
{
	struct count *c = calloc(1, sizeof(*c));

	cr_assert(c);
	c->threads = threads;
	c->fail_at = -1;
	cr_assert_eq(dmt_parallel_for(threads, n, chunk, count_fn, c), 0);
	cr_assert_eq(c->bad_worker, 0, "a worker id >= threads");
	for (uint64_t i = 0; i < n; i++)
		cr_assert_eq(c->seen[i], 1, "index %llu seen %u times",
			     (unsigned long long)i, c->seen[i]);
	free(c);
}

Test(threads, every_index_once_whatever_the_threads)
{
	unsigned int threads[] = { 1, 2, 3, 8, 64 };
	uint64_t chunks[] = { 1, 7, 100, N };

	for (size_t t = 0; t < sizeof(threads) / sizeof(*threads); t++)
		for (size_t k = 0; k < sizeof(chunks) / sizeof(*chunks); k++)
			run_and_check(threads[t], N, chunks[k]);
	cr_assert_eq(dmt_parallel_for(4, 0, 1, count_fn, NULL), 0);
}

Test(threads, thousands_of_calls_reuse_the_pool)
{
	for (int i = 0; i < 3000; i++)
		run_and_check(i % 2 ? 2 : 5, 64 + i % 37, 3);
}

Test(threads, first_error_stops_and_is_returned)
{
	struct count *c = calloc(1, sizeof(*c));

	cr_assert(c);
	c->threads = 4;
	c->fail_at = 500;
	cr_assert_eq(dmt_parallel_for(4, N, 10, count_fn, c), -EIO);
	free(c);
	/* the pool is usable again after a failed call */
	run_and_check(4, N, 10);
}

static int nested_fn(void *ctx, unsigned int worker, uint64_t begin,
		     uint64_t end)
{
	(void)ctx;
	(void)worker;
	for (uint64_t i = begin; i < end; i++)
		run_and_check(2, 100, 1); /* the pool is taken: own threads */
	return 0;
}

Test(threads, nested_call_in_a_job)
{
	cr_assert_eq(dmt_parallel_for(2, 8, 1, nested_fn, NULL), 0);
}

static void *other_caller(void *arg)
{
	(void)arg;
	for (int i = 0; i < 200; i++)
		run_and_check(2, 500, 5);
	return NULL;
}

Test(threads, two_callers_at_once)
{
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, other_caller, NULL), 0);
	for (int i = 0; i < 200; i++)
		run_and_check(3, 500, 5);
	pthread_join(t, NULL);
}

Test(threads, child_of_fork_has_a_working_pool)
{
	int status;
	pid_t pid;

	/* qemu-user itself aborts when a multi-threaded guest forks */
	if (getenv("DMT_TEST_REDUCED"))
		cr_skip("emulated run: qemu-user cannot fork a threaded guest");
	run_and_check(2, N, 10); /* the parent's pool has threads now */
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		/* a child waiting on the parent's (absent) workers hangs */
		alarm(20);
		run_and_check(2, N, 10);
		run_and_check(4, N, 10);
		_exit(0);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "child status %#x", status);
}
