// SPDX-License-Identifier: MIT
/*
 * PBKDF costs for a target time, chosen by cryptsetup 2.6.1's rules
 * (formats.md, LUKS2 keyslots; lib/crypto_backend/pbkdf_check.c,
 * lib/utils_benchmark.c, lib/utils_pbkdf.c and luks2_digest_pbkdf2.c
 * there), so that one machine gives luksFormat's costs:
 *
 * PBKDF2: the CPU time of this thread (user time; system time when the
 * user time reads zero) of 2^15 iterations, then 16, 8, 4 or 2 times more
 * until a run takes over 500 ms, gives iterations per second for the
 * output length; a keyslot gets that times --iter-time, the volume-key
 * digest that times 125 ms, both at least 1000.
 *
 * Argon2: wall-clock time (the lanes run in parallel), time cost from 4,
 * memory from 64 MiB (the maximum if lower) to the maximum (1 GiB, at
 * most half the RAM), lanes at most 4 and at most the online CPUs.  First
 * small costs are scaled (memory first, then time) until a run takes at
 * least 250 ms (best of 3 runs, fewer when one is faster); then the costs
 * are estimated for the target, memory first when raising and time first
 * when lowering, and measured again until a run lands in 95..110 % of the
 * target or the costs stop changing (minimum 4 and the 64 MiB floor).
 * Run by root, the measurements run at nice -18, as cryptsetup's.
 */
#include <errno.h>
#include <limits.h>
#include <openssl/evp.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <dmt/crypt.h>
#include "lib/crypt/crypt_priv.h"
#include <dmt/reason.h>

#include "lib/crypt/luks2_priv.h"

#define PBKDF2_MIN_ITERATIONS 1000
#define DIGEST_MS 125
#define ARGON2_MIN_TIME 4
#define ARGON2_MIN_BENCH_MEMORY (64u * 1024)
#define ARGON2_MAX_MEMORY (4u * 1024 * 1024)
#define ARGON2_DEFAULT_MEMORY (1024u * 1024)
#define ARGON2_MAX_PARALLEL 4
#define BENCH_MIN_MS 250
#define BENCH_MIN_MS_FAST 10
#define BENCH_PERCENT_ATLEAST 95
#define BENCH_PERCENT_ATMOST 110
#define BENCH_SAMPLES_FAST 3
#define BENCH_SAMPLES_SLOW 1
/* estimates that keep missing the window: cryptsetup has no limit */
#define BENCH_MAX_ROUNDS 64

/*
 * As libcryptsetup (crypt_process_priority), a benchmark run by root runs
 * at nice -18, so that a loaded machine disturbs the timings less; the
 * thread's own priority is restored after.
 */
static int bench_priority_raise(void)
{
	int old;

	errno = 0;
	old = getpriority(PRIO_PROCESS, 0);
	if (old < 0 || errno)
		old = 0;
	if (!getuid() && !geteuid())
		(void)setpriority(PRIO_PROCESS, 0, -18);
	return old;
}

static void bench_priority_restore(int old)
{
	if (!getuid() && !geteuid())
		(void)setpriority(PRIO_PROCESS, 0, old);
}

static long cpu_ms(const struct rusage *a, const struct rusage *b)
{
	long ms = (b->ru_utime.tv_sec - a->ru_utime.tv_sec) * 1000 +
		  (b->ru_utime.tv_usec - a->ru_utime.tv_usec) / 1000;

	/* no user time at all: some hypervisors report only system time */
	if (!a->ru_utime.tv_sec && !a->ru_utime.tv_usec &&
	    !b->ru_utime.tv_sec && !b->ru_utime.tv_usec)
		ms += (b->ru_stime.tv_sec - a->ru_stime.tv_sec) * 1000 +
		      (b->ru_stime.tv_usec - a->ru_stime.tv_usec) / 1000;
	return ms;
}

/* PBKDF2 iterations per second of CPU for key_len output bytes. */
static int pbkdf2_rate(const char *hash, size_t key_len, double *per_second)
{
	const EVP_MD *md = EVP_get_digestbyname(hash ? hash : "sha256");
	uint8_t *key = dmt_secure_alloc(key_len);
	uint32_t iterations = 1u << 15;
	struct rusage a, b;
	int ret = md && key ? 0 : md ? -ENOMEM : -EINVAL;

	for (int step = 0; !ret; step++) {
		long ms;

		if (getrusage(RUSAGE_THREAD, &a) ||
		    !PKCS5_PBKDF2_HMAC("foobarfo", 8,
				       (const uint8_t *)"01234567890abcdef", 16,
				       (int)iterations, md, (int)key_len, key) ||
		    getrusage(RUSAGE_THREAD, &b)) {
			ret = -EINVAL;
			break;
		}
		ms = cpu_ms(&a, &b);
		if (ms)
			*per_second = (double)iterations * 1000. / (double)ms;
		if (ms > 500)
			break;
		iterations <<= ms <= 62 ? 4 : ms <= 125 ? 3 : ms <= 250 ? 2 : 1;
		if (step >= 10 || !iterations)
			ret = -EINVAL;
	}
	dmt_secure_free(key);
	return ret;
}

int luks2_pbkdf2_iterations(const char *hash, size_t key_len,
			    uint32_t target_ms, uint32_t *iterations)
{
	double rate = 0, n;
	int prio = bench_priority_raise();
	int ret = pbkdf2_rate(hash, key_len, &rate);

	bench_priority_restore(prio);
	if (ret)
		return ret;
	n = rate * target_ms / 1000.;
	if (n > (double)UINT32_MAX)
		return -EINVAL;
	*iterations = n < PBKDF2_MIN_ITERATIONS ? PBKDF2_MIN_ITERATIONS :
						  (uint32_t)n;
	return 0;
}

int luks2_digest_iterations(const char *hash, size_t vk_len,
			    uint32_t *iterations)
{
	return luks2_pbkdf2_iterations(hash, vk_len, DIGEST_MS, iterations);
}

/* ---- Argon2 ---- */

/* Best of up to samples runs; the first one under atleast ends it. */
static int measure(const struct luks2_argon2_timer *tm, uint32_t t,
		   uint32_t m, int samples, long atleast, long *out)
{
	long best = LONG_MAX;

	for (int i = 0; i < samples; i++) {
		long ms;
		int ret = tm->run(tm->ctx, t, m, &ms);

		if (ret)
			return ret;
		if (ms < 0)
			return -EINVAL;
		if (ms < best)
			best = ms;
		if (ms < atleast)
			break;
	}
	*out = best;
	return 0;
}

static uint32_t clamp32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* The costs for target_ms from a run of ms; true when they are final. */
static bool next_costs(uint32_t *t, uint32_t *m, uint32_t min_m,
		       uint32_t max_m, long ms, uint32_t target_ms)
{
	uint32_t old_t = *t, old_m = *m;
	uint64_t nt, nm;

	if ((uint64_t)ms > target_ms) {
		/* lower the time first, then the memory */
		nt = (uint64_t)*t * target_ms / (uint64_t)ms;
		if (nt >= ARGON2_MIN_TIME) {
			*t = (uint32_t)nt;
		} else {
			nm = (uint64_t)*t * *m * target_ms /
			     ((uint64_t)ARGON2_MIN_TIME * (uint64_t)ms);
			*t = ARGON2_MIN_TIME;
			*m = clamp32(nm);
			if (nm < min_m) {
				*m = min_m;
				return true;
			}
		}
	} else {
		/* raise the memory first, then the time */
		nm = (uint64_t)*m * target_ms / (uint64_t)(ms ? ms : 1);
		if (nm > max_m) {
			nt = (uint64_t)*t * *m * target_ms /
			     ((uint64_t)max_m * (uint64_t)(ms ? ms : 1));
			*t = clamp32(nt);
			*m = max_m;
			if (nt <= ARGON2_MIN_TIME) {
				*t = ARGON2_MIN_TIME;
				return true;
			}
		} else if (nm < min_m) {
			*m = min_m;
			return true;
		} else {
			*m = (uint32_t)nm;
		}
	}
	return old_t == *t && old_m == *m;
}

/* Step 1: small costs raised until a run takes BENCH_MIN_MS. */
static int first_costs(const struct luks2_argon2_timer *tm, uint32_t max_m,
		       uint32_t *t, uint32_t *m, long *ms)
{
	for (int round = 0; round < BENCH_MAX_ROUNDS; round++) {
		uint32_t *cost = *m == max_m ? t : m;
		uint64_t next;
		int ret = measure(tm, *t, *m, BENCH_SAMPLES_FAST, BENCH_MIN_MS,
				  ms);

		if (ret || *ms >= BENCH_MIN_MS)
			return ret;
		next = *ms < BENCH_MIN_MS_FAST ?
			       (uint64_t)*cost * 16 :
			       (uint64_t)*cost * BENCH_MIN_MS / (uint64_t)*ms;
		if (*ms >= BENCH_MIN_MS_FAST && next == *cost)
			return 0;
		*cost = clamp32(next);
		if (*m > max_m)
			*m = max_m;
	}
	return 0;
}

int luks2_argon2_search(const struct luks2_argon2_timer *tm, uint32_t max_m,
			uint32_t parallel, uint32_t target_ms, uint32_t *t_out,
			uint32_t *m_out)
{
	uint32_t min_m = max_m < ARGON2_MIN_BENCH_MEMORY ?
				 max_m : ARGON2_MIN_BENCH_MEMORY;
	long atleast = (long)target_ms * BENCH_PERCENT_ATLEAST / 100;
	long atmost = (long)target_ms * BENCH_PERCENT_ATMOST / 100;
	uint32_t t = ARGON2_MIN_TIME, m;
	long ms = 0;
	int ret;

	if (!target_ms || !parallel)
		return -EINVAL;
	if (min_m < parallel * 8)
		min_m = parallel * 8;
	if (max_m < min_m)
		return -EINVAL;
	m = min_m;
	ret = first_costs(tm, max_m, &t, &m, &ms);
	for (int round = 0; !ret && round < BENCH_MAX_ROUNDS; round++) {
		if (next_costs(&t, &m, min_m, max_m, ms, target_ms))
			break;
		ret = measure(tm, t, m, BENCH_SAMPLES_SLOW, atleast, &ms);
		if (!ret && ms >= atleast && ms <= atmost)
			break;
	}
	*t_out = t;
	*m_out = m;
	return ret;
}

struct argon2_run {
	const struct dmt_luks2_pbkdf *k;
	size_t key_len;
	struct dmt_reason *r;
};

static long wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int argon2_time(void *ctx, uint32_t t, uint32_t m, long *ms)
{
	const struct argon2_run *run = ctx;
	struct dmt_luks2_pbkdf k = *run->k;
	uint8_t *key = dmt_secure_alloc(run->key_len);
	long t0 = wall_ms();
	int ret;

	if (!key)
		return -ENOMEM;
	k.iterations = t;
	k.memory_kb = m;
	ret = dmt_luks2_kdf(&k, "foobarfo", 8,
			    (const uint8_t *)"0123456789abcdef0123456789abcdef",
			    32, key, run->key_len, run->r);
	*ms = wall_ms() - t0;
	dmt_secure_free(key);
	return ret;
}

/* cryptsetup's memory ceiling: half the RAM (1 GiB if RAM looks bogus). */
static uint32_t memory_ceiling(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	uint64_t kb = pages > 0 && psize > 0 ?
			      (uint64_t)pages * (uint64_t)psize / 1024 : 0;

	if (kb < 128 * 1024 || kb > UINT32_MAX)
		return ARGON2_DEFAULT_MEMORY;
	return (uint32_t)(kb / 2);
}

void dmt_luks2_pbkdf_limit(struct dmt_luks2_pbkdf *k)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t ceiling = memory_ceiling();

	if (!k->type || !strcmp(k->type, "pbkdf2"))
		return;
	if (!k->memory_kb)
		k->memory_kb = ARGON2_DEFAULT_MEMORY;
	if (k->memory_kb > ceiling)
		k->memory_kb = ceiling;
	if (!k->parallel)
		k->parallel = ARGON2_MAX_PARALLEL;
	if (k->parallel > ARGON2_MAX_PARALLEL)
		k->parallel = ARGON2_MAX_PARALLEL;
	if (cpus > 0 && k->parallel > (uint32_t)cpus)
		k->parallel = (uint32_t)cpus;
}

int dmt_luks2_pbkdf_benchmark(struct dmt_luks2_pbkdf *k, unsigned int target_ms,
			      size_t key_len, struct dmt_reason *r)
{
	struct argon2_run run = { .k = k, .key_len = key_len, .r = r };
	struct luks2_argon2_timer tm = { .run = argon2_time, .ctx = &run };
	int ret, prio;

	if (!target_ms || !key_len)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_OUT_OF_RANGE,
				      "iter_time", target_ms);
	if (!k->type || !strcmp(k->type, "pbkdf2")) {
		k->type = "pbkdf2";
		ret = luks2_pbkdf2_iterations(k->hash, key_len, target_ms,
					      &k->iterations);
		if (ret)
			dmt_reason_set(r, ret, DMT_REASON_LUKS2_KDF, "pbkdf", 0);
		return ret;
	}
	if (k->memory_kb > ARGON2_MAX_MEMORY)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_TOO_LARGE,
				      "pbkdf.memory_kb", k->memory_kb);
	dmt_luks2_pbkdf_limit(k);
	prio = bench_priority_raise();
	ret = luks2_argon2_search(&tm, k->memory_kb, k->parallel, target_ms,
				  &k->iterations, &k->memory_kb);
	bench_priority_restore(prio);
	return ret;
}
