// SPDX-License-Identifier: MIT
/* Worker threads: a dynamic parallel-for, and the default thread count. */
#include <dmt/threads.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cgroup v2 "cpu.max" ("max 100000" or "150000 100000"), or v1 quota. */
static unsigned int cgroup_cpu_limit(void)
{
	long long quota = -1, period = 0;
	char buf[128];
	FILE *fp;

	fp = fopen("/sys/fs/cgroup/cpu.max", "r");
	if (fp) {
		if (fgets(buf, sizeof(buf), fp) && strncmp(buf, "max", 3) &&
		    sscanf(buf, "%lld %lld", &quota, &period) != 2)
			quota = -1;
		fclose(fp);
	} else {
		fp = fopen("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "r");
		if (fp) {
			if (fscanf(fp, "%lld", &quota) != 1)
				quota = -1;
			fclose(fp);
		}
		fp = fopen("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "r");
		if (fp) {
			if (fscanf(fp, "%lld", &period) != 1)
				period = 0;
			fclose(fp);
		}
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

struct pfor_worker {
	struct pfor *pf;
	unsigned int id;
};

static void *pfor_run(void *arg)
{
	struct pfor_worker *w = arg;
	struct pfor *pf = w->pf;

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

		ret = pf->fn(pf->ctx, w->id, begin, end);
		if (ret) {
			pthread_mutex_lock(&pf->lock);
			if (!pf->ret)
				pf->ret = ret;
			pthread_mutex_unlock(&pf->lock);
			break;
		}
	}
	return NULL;
}

int dmt_parallel_for(unsigned int threads, uint64_t n, uint64_t chunk,
		     dmt_range_fn fn, void *ctx)
{
	struct pfor pf = { .n = n, .chunk = chunk ? chunk : 1, .fn = fn,
			   .ctx = ctx };
	struct pfor_worker *workers = NULL;
	pthread_t *tids = NULL;
	unsigned int i, started = 0;
	int ret;

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
	workers = calloc(threads, sizeof(*workers));
	tids = calloc(threads, sizeof(*tids));
	if (!workers || !tids) {
		ret = -ENOMEM;
		goto out;
	}
	/* worker 0 runs on the calling thread */
	for (i = 1; i < threads; i++) {
		workers[i].pf = &pf;
		workers[i].id = i;
		if (pthread_create(&tids[i], NULL, pfor_run, &workers[i]))
			break;
		started++;
	}
	workers[0].pf = &pf;
	workers[0].id = 0;
	pfor_run(&workers[0]);
	for (i = 1; i <= started; i++)
		pthread_join(tids[i], NULL);
	ret = pf.ret;
out:
	pthread_mutex_destroy(&pf.lock);
	free(workers);
	free(tids);
	return ret;
}
