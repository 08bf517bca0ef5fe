// SPDX-License-Identifier: MIT
/* Worker threads: a dynamic parallel-for, and the default thread count. */
#include <dmt/threads.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

/* The start of a small file into buf (NUL-terminated; "" when it
 * cannot be read): one open, read and close, no stdio buffer. */
static void read_line(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
}

/* A decimal number at *s (after blanks), or -1; *s moves past it. */
static long long parse_num(const char **s)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(*s, &end, 10);
	if (end == *s || errno)
		return -1;
	*s = end;
	return v;
}

/* cgroup v2 "cpu.max" ("max 100000" or "150000 100000"), or v1 quota. */
static unsigned int cgroup_cpu_limit(void)
{
	long long quota = -1, period = 0;
	const char *s;
	char buf[128];

	read_line("/sys/fs/cgroup/cpu.max", buf, sizeof(buf));
	if (*buf) {
		s = buf;
		if (strncmp(buf, "max", 3)) {
			quota = parse_num(&s);
			period = parse_num(&s);
		}
	} else {
		read_line("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", buf,
			  sizeof(buf));
		s = buf;
		quota = parse_num(&s);
		read_line("/sys/fs/cgroup/cpu/cpu.cfs_period_us", buf,
			  sizeof(buf));
		s = buf;
		period = parse_num(&s);
	}
	if (quota <= 0 || period <= 0)
		return 0;
	/* a quota of 1.5 CPUs still keeps two threads busy part-time */
	return (unsigned int)((quota + period - 1) / period);
}

unsigned int dmt_default_threads(void)
{
	cpu_set_t set;
	unsigned int n = 1, limit;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = (unsigned int)CPU_COUNT(&set);
	limit = cgroup_cpu_limit();
	if (limit && limit < n)
		n = limit;
	return n ? n : 1;
}

struct pfor {
	pthread_mutex_t lock;
	uint64_t next, n, chunk;
	int ret;
	dmt_range_fn fn;
	void *ctx;
};

/* Runs chunks of pf as worker id until none is left or one failed. */
static void pfor_run(struct pfor *pf, unsigned int id)
{
	for (;;) {
		uint64_t begin, end;
		int ret;

		pthread_mutex_lock(&pf->lock);
		if (pf->ret || pf->next >= pf->n) {
			pthread_mutex_unlock(&pf->lock);
			break;
		}
		begin = pf->next;
		end = pf->n - begin > pf->chunk ? begin + pf->chunk : pf->n;
		pf->next = end;
		pthread_mutex_unlock(&pf->lock);

		ret = pf->fn(pf->ctx, id, begin, end);
		if (ret) {
			pthread_mutex_lock(&pf->lock);
			if (!pf->ret)
				pf->ret = ret;
			pthread_mutex_unlock(&pf->lock);
			break;
		}
	}
}

/*
 * The process's worker threads, started on first need and kept: a bulk
 * pass calls dmt_parallel_for once per window or group (thousands of
 * times for many small files), and starting threads each time cost more
 * than small jobs themselves.  One caller at a time owns the pool; a
 * nested or concurrent call starts threads of its own, as before.  After
 * fork() the child starts with an empty pool (its threads are not
 * copied).
 */
#define POOL_MAX 256

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t work; /* a new job (gen changed) or quit */
	pthread_cond_t idle; /* running dropped to 0 */
	pthread_t tids[POOL_MAX];
	uint64_t born[POOL_MAX]; /* gen when worker id was started */
	unsigned int started; /* workers 1..started exist */
	unsigned int want;    /* workers 1..want take part in the job */
	unsigned int running; /* of those, still in the job */
	uint64_t gen;
	struct pfor *job;
	bool busy, quit;
};

static struct pool pool = { .lock = PTHREAD_MUTEX_INITIALIZER,
			    .work = PTHREAD_COND_INITIALIZER,
			    .idle = PTHREAD_COND_INITIALIZER };
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void pool_after_fork(void)
{
	pthread_mutex_init(&pool.lock, NULL);
	pthread_cond_init(&pool.work, NULL);
	pthread_cond_init(&pool.idle, NULL);
	pool.started = pool.want = pool.running = 0;
	pool.job = NULL;
	pool.busy = pool.quit = false;
}

static void pool_register(void)
{
	pthread_atfork(NULL, NULL, pool_after_fork);
}

static void *pool_worker(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg;
	uint64_t seen;
	sigset_t set;

	/* signals go to the tool's own threads, not to library workers */
	sigfillset(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_mutex_lock(&pool.lock);
	/* the job that started this worker is the one after gen then */
	seen = pool.born[id - 1];
	for (;;) {
		struct pfor *job;

		while (pool.gen == seen && !pool.quit)
			pthread_cond_wait(&pool.work, &pool.lock);
		if (pool.quit)
			break;
		seen = pool.gen;
		if (id > pool.want)
			continue;
		job = pool.job;
		pthread_mutex_unlock(&pool.lock);
		pfor_run(job, id);
		/* a job's OpenSSL thread state (error queue, DRBG) is freed
		 * as when per-call threads exited: OpenSSL's exit cleanup
		 * skips threads still alive, and leak checkers see it */
		OPENSSL_thread_stop();
		pthread_mutex_lock(&pool.lock);
		if (--pool.running == 0)
			pthread_cond_signal(&pool.idle);
	}
	pthread_mutex_unlock(&pool.lock);
	return NULL;
}

/* At exit, an idle pool's threads are stopped and joined (tidy for leak
 * checkers); a pool still in use is left alone. */
__attribute__((destructor)) static void pool_stop(void)
{
	unsigned int n;

	pthread_mutex_lock(&pool.lock);
	if (pool.busy || !pool.started) {
		pthread_mutex_unlock(&pool.lock);
		return;
	}
	pool.quit = true;
	n = pool.started;
	pool.started = 0;
	pthread_cond_broadcast(&pool.work);
	pthread_mutex_unlock(&pool.lock);
	for (unsigned int i = 1; i <= n; i++)
		pthread_join(pool.tids[i - 1], NULL);
	pthread_mutex_lock(&pool.lock);
	pool.quit = false;
	pthread_mutex_unlock(&pool.lock);
}

/* Under the lock: at least `helpers` workers (fewer if threads cannot be
 * started); returns how many there are. */
static unsigned int pool_grow(unsigned int helpers)
{
	if (helpers > POOL_MAX)
		helpers = POOL_MAX;
	while (pool.started < helpers) {
		unsigned int id = pool.started + 1;

		pool.born[id - 1] = pool.gen;
		if (pthread_create(&pool.tids[id - 1], NULL, pool_worker,
				   (void *)(uintptr_t)id))
			break;
		pool.started = id;
	}
	return pool.started < helpers ? pool.started : helpers;
}

/* The pool runs pf with `helpers` workers besides the caller; false if
 * another call owns it. */
static bool pool_run(struct pfor *pf, unsigned int helpers)
{
	pthread_once(&pool_once, pool_register);
	pthread_mutex_lock(&pool.lock);
	if (pool.busy || pool.quit) {
		pthread_mutex_unlock(&pool.lock);
		return false;
	}
	pool.busy = true;
	helpers = pool_grow(helpers);
	pool.job = pf;
	pool.want = helpers;
	pool.running = helpers;
	pool.gen++;
	pthread_cond_broadcast(&pool.work);
	pthread_mutex_unlock(&pool.lock);

	pfor_run(pf, 0); /* worker 0 is the calling thread */

	pthread_mutex_lock(&pool.lock);
	while (pool.running)
		pthread_cond_wait(&pool.idle, &pool.lock);
	pool.job = NULL;
	pool.busy = false;
	pthread_mutex_unlock(&pool.lock);
	return true;
}

struct own_worker {
	struct pfor *pf;
	unsigned int id;
};

static void *own_run(void *arg)
{
	struct own_worker *w = arg;

	pfor_run(w->pf, w->id);
	return NULL;
}

/* A call while the pool is taken: threads of its own, joined at the end. */
static int own_threads_run(struct pfor *pf, unsigned int threads)
{
	struct own_worker *workers = calloc(threads, sizeof(*workers));
	pthread_t *tids = calloc(threads, sizeof(*tids));
	unsigned int i, started = 0;
	int ret = 0;

	if (!workers || !tids) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 1; i < threads; i++) {
		workers[i].pf = pf;
		workers[i].id = i;
		if (pthread_create(&tids[i], NULL, own_run, &workers[i]))
			break;
		started++;
	}
	pfor_run(pf, 0);
	for (i = 1; i <= started; i++)
		pthread_join(tids[i], NULL);
out:
	free(workers);
	free(tids);
	return ret;
}

int dmt_parallel_for(unsigned int threads, uint64_t n, uint64_t chunk,
		     dmt_range_fn fn, void *ctx)
{
	struct pfor pf = { .n = n, .chunk = chunk ? chunk : 1, .fn = fn,
			   .ctx = ctx };
	int ret = 0;

	if (!n)
		return 0;
	if (threads > (n + pf.chunk - 1) / pf.chunk)
		threads = (unsigned int)((n + pf.chunk - 1) / pf.chunk);
	if (threads <= 1) {
		/* inline, still in chunks so callers see the same ranges */
		for (uint64_t b = 0; b < n; b += pf.chunk) {
			ret = fn(ctx, 0, b, n - b > pf.chunk ? b + pf.chunk : n);
			if (ret)
				return ret;
		}
		return 0;
	}

	pthread_mutex_init(&pf.lock, NULL);
	if (!pool_run(&pf, threads - 1))
		ret = own_threads_run(&pf, threads);
	if (!ret)
		ret = pf.ret;
	pthread_mutex_destroy(&pf.lock);
	return ret;
}
