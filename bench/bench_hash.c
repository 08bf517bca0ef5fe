// SPDX-License-Identifier: MIT
/*
 * Hash engine benchmark (not a test): single-core throughput of every
 * backend on this machine, as thread CPU time (median of RUNS runs), next
 * to OpenSSL EVP hashing the same messages one at a time (algorithm fetched
 * once, context reused) measured in the same run, alternating with it.
 *
 * Usage: bench_hash [-q] [-s FILE]
 *	-q: fewer, shorter runs; -s: append issue 15's hash ratios to FILE
 *	(tab-separated: key, value, backend, detail; see bench_summary.sh)
 *        bench_hash -t THREADS [-e SPEC] [-a ALG] [-m MSG] [-p PREFIX]
 *                   [-H HEADER]
 *	wall-clock rate of THREADS threads, each hashing batches of MSG-byte
 *	messages (default 4096, sha256, 32-byte prefix: a verity data block
 *	with its salt) with its own clone of one hasher: the engine's own
 *	N-core rate that the tools are compared with.  -H: HEADER bytes of
 *	per-message header before each message, as authenticated dm-crypt
 *	MACs a sector (-a 'hmac(sha256)' -p 0 -H 24: "le64 sector || IV"
 *	then the 4 KiB ciphertext, lib/crypt/crypt_auth.c).  Prints
 *	"GB/s backend" on stdout, details on stderr.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <dmt/hash.h>
#include <dmt/threads.h>

#define MAXMSGS 256
#define MAXRUNS 15

static unsigned int runs = 7;
static double min_seconds = 0.04;
static uint8_t *buf;		/* messages live here, contiguous */
static uint8_t hdrs[MAXMSGS * 64];	/* -H: per-message headers */
static size_t hdr_size;

struct job {
	size_t msg, n;		/* message size, messages per call */
	size_t total;		/* messages per pass over the buffer */
	struct dmt_hasher *h;	/* engine under test, or NULL: OpenSSL */
	EVP_MD *md;
	EVP_MD_CTX *ctx;
	EVP_MAC_CTX *mac;
	uint8_t out[MAXMSGS * 64];
};

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int pass(struct job *j)
{
	size_t i, k;
	unsigned int len;

	for (i = 0; i < j->total; i += j->n) {
		const uint8_t *p = buf + i * j->msg;

		if (j->h) {
			if (dmt_hasher_digest_strided(j->h, j->n, p, j->msg,
						      hdr_size ? hdrs : NULL,
						      j->out))
				return -1;
			continue;
		}
		for (k = 0; k < j->n; k++, p += j->msg) {
			size_t ml = 64;

			if (j->mac) {
				if (!EVP_MAC_init(j->mac, NULL, 0, NULL) ||
				    !EVP_MAC_update(j->mac, p, j->msg) ||
				    !EVP_MAC_final(j->mac, j->out, &ml, ml))
					return -1;
			} else if (!EVP_DigestInit_ex2(j->ctx, j->md, NULL) ||
				   !EVP_DigestUpdate(j->ctx, p, j->msg) ||
				   !EVP_DigestFinal_ex(j->ctx, j->out, &len)) {
				return -1;
			}
		}
	}
	return 0;
}

/* Bytes per CPU second of one timed run. */
static double timed(struct job *j)
{
	double t0 = cpu_now(), t;
	size_t bytes = 0;

	do {
		if (pass(j))
			return 0;
		bytes += j->total * j->msg;
		t = cpu_now() - t0;
	} while (t < min_seconds);
	return bytes / t;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Medians of a and b, runs alternating so drift hits both alike. */
static void measure(struct job *a, struct job *b, double *ra, double *rb)
{
	double va[MAXRUNS], vb[MAXRUNS];
	unsigned int r;

	timed(a);
	if (b)
		timed(b);
	for (r = 0; r < runs; r++) {
		va[r] = timed(a);
		if (b)
			vb[r] = timed(b);
	}
	qsort(va, runs, sizeof(double), cmp_d);
	*ra = va[runs / 2];
	if (b) {
		qsort(vb, runs, sizeof(double), cmp_d);
		*rb = vb[runs / 2];
	}
}

static const uint8_t key[32] = "bench-key-bench-key-bench-key-32";

static int ossl_job(struct job *j, const char *alg)
{
	const char *ossl = !strcmp(alg, "sha1") ? "SHA1" :
			   !strcmp(alg, "sha224") ? "SHA224" :
			   !strcmp(alg, "sha256") ? "SHA256" :
			   !strcmp(alg, "sha384") ? "SHA384" :
			   !strcmp(alg, "sha512") ? "SHA512" : NULL;
	bool hmac = !strncmp(alg, "hmac(", 5);
	OSSL_PARAM prm[2];
	char dig[16];
	EVP_MAC *mac;

	memset(j, 0, sizeof(*j));
	if (hmac) {
		snprintf(dig, sizeof(dig), "%.*s", (int)strlen(alg) - 6,
			 alg + 5);
		mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
		j->mac = mac ? EVP_MAC_CTX_new(mac) : NULL;
		EVP_MAC_free(mac);
		prm[0] = OSSL_PARAM_construct_utf8_string(
				OSSL_MAC_PARAM_DIGEST, dig, 0);
		prm[1] = OSSL_PARAM_construct_end();
		if (!j->mac || !EVP_MAC_init(j->mac, key, sizeof(key), prm))
			return -1;
		return 0;
	}
	if (!ossl)
		return -1;
	j->md = EVP_MD_fetch(NULL, ossl, NULL);
	j->ctx = EVP_MD_CTX_new();
	return j->md && j->ctx ? 0 : -1;
}

static void ossl_free(struct job *j)
{
	EVP_MD_free(j->md);
	EVP_MD_CTX_free(j->ctx);
	EVP_MAC_CTX_free(j->mac);
}

static int eng_job(struct job *j, const char *alg, const char *engine,
		   size_t msg)
{
	struct dmt_hasher_params p = {
		.alg = alg, .msg_size = msg, .engine = engine,
	};

	memset(j, 0, sizeof(*j));
	if (!strncmp(alg, "hmac(", 5)) {
		p.key = key;
		p.key_size = sizeof(key);
	}
	return dmt_hasher_new(&p, &j->h, NULL);
}

static void sizes(struct job *j, size_t msg, size_t n)
{
	j->msg = msg;
	j->n = n;
	/* ~512 KiB per pass: stays in L2 on the machines of interest */
	j->total = (512 * 1024 / msg + n - 1) / n * n;
	if (j->total > MAXMSGS * 4)
		j->total = MAXMSGS * 4;
}

static void row(const char *alg, const char *engine, size_t msg, size_t n,
		const char *note, double v, double base)
{
	char ratio[32] = "-";

	if (base > 0)
		snprintf(ratio, sizeof(ratio), "%.2fx", v / base);
	printf("%-13s %-9s %5zu %4zu  %6.2f GB/s  %6s  %s\n", alg, engine, msg,
	       n, v / 1e9, ratio, note);
	fflush(stdout);
}

struct result {
	double v, base;		/* bytes per CPU second: engine, OpenSSL */
	char engine[24];	/* the backend that ran */
};

/* One engine (NULL = default dispatch) against OpenSSL. */
static struct result bench_one(const char *alg, const char *engine,
			       size_t msg, size_t n)
{
	struct result res = { 0 };
	struct job e, o;
	double ve = 0, vo = 0;
	bool base;

	if (eng_job(&e, alg, engine, msg))
		return res;
	base = !ossl_job(&o, alg);
	sizes(&e, msg, n);
	sizes(&o, msg, n);
	measure(&e, base ? &o : NULL, &ve, &vo);
	row(alg, dmt_hasher_engine(e.h), msg, n,
	    engine ? "forced" : "default", ve, base ? vo : 0);
	res.v = ve;
	res.base = base ? vo : 0;
	snprintf(res.engine, sizeof(res.engine), "%s", dmt_hasher_engine(e.h));
	dmt_hasher_free(e.h);
	ossl_free(&o);
	return res;
}

/*
 * The engine-list primitive that hashes alg: sha224 goes with sha256,
 * sha384 with sha512, hmac(x) with x; what has no primitive of its own
 * is OpenSSL's ("other").
 */
static const char *primitive_of(const char *alg,
				const struct dmt_engine_info *eng, size_t ne)
{
	static char base[16];
	size_t i;

	if (!strncmp(alg, "hmac(", 5))
		snprintf(base, sizeof(base), "%.*s", (int)strlen(alg) - 6,
			 alg + 5);
	else
		snprintf(base, sizeof(base), "%s", alg);
	if (!strcmp(base, "sha224"))
		return "sha256";
	if (!strcmp(base, "sha384"))
		return "sha512";
	for (i = 0; i < ne; i++)
		if (!strcmp(eng[i].primitive, base))
			return base;
	return "other";
}

static double ratio_of(struct result r)
{
	return r.base > 0 ? r.v / r.base : 0;
}

/*
 * Every available backend of alg's primitive, each once, forced; returns
 * the fastest, and in *one_way the fastest of our own 1-lane backends.
 */
static struct result bench_backends(const char *alg, size_t msg,
				    const struct dmt_engine_info *eng,
				    size_t ne, struct result *one_way)
{
	const char *prim = primitive_of(alg, eng, ne);
	struct result r, best = { 0 };
	char spec[64];
	size_t i;

	for (i = 0; i < ne; i++) {
		if (!eng[i].available || strcmp(eng[i].primitive, prim))
			continue;
		snprintf(spec, sizeof(spec), "%s=%s", prim, eng[i].name);
		r = bench_one(alg, spec, msg, MAXMSGS);
		if (r.v > best.v)
			best = r;
		if (eng[i].lanes == 1 && strcmp(eng[i].name, "openssl") &&
		    r.v > one_way->v)
			*one_way = r;
	}
	return best;
}

/* ---- -t: wall-clock rate of N threads ---- */

struct worker {
	pthread_t tid;
	pthread_barrier_t *start;
	struct job j;
	double seconds, t0, t1;
	size_t bytes;
	int err;
};

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;

	pthread_barrier_wait(w->start);
	w->t0 = wall_now();
	w->bytes = 0;
	do {
		if (pass(&w->j)) {
			w->err = -1;
			break;
		}
		w->bytes += w->j.total * w->j.msg;
		w->t1 = wall_now();
	} while (w->t1 - w->t0 < w->seconds);
	return NULL;
}

/* One timed run of every worker at once: total bytes per wall second. */
static double threads_once(struct worker *w, unsigned int nt)
{
	pthread_barrier_t start;
	double t0 = 0, t1 = 0;
	size_t bytes = 0;
	unsigned int i;

	pthread_barrier_init(&start, NULL, nt);
	for (i = 0; i < nt; i++) {
		w[i].start = &start;
		if (pthread_create(&w[i].tid, NULL, worker_run, &w[i]))
			return 0;
	}
	for (i = 0; i < nt; i++) {
		pthread_join(w[i].tid, NULL);
		if (w[i].err)
			return 0;
		bytes += w[i].bytes;
		t0 = i && t0 < w[i].t0 ? t0 : w[i].t0;
		t1 = t1 > w[i].t1 ? t1 : w[i].t1;
	}
	pthread_barrier_destroy(&start);
	return t1 > t0 ? bytes / (t1 - t0) : 0;
}

static int threads_main(unsigned int nt, const char *spec, const char *alg,
			size_t msg, size_t prefix)
{
	static const uint8_t salt[64] = "bench-salt-bench-salt-bench-salt"
					"bench-salt-bench-salt-bench-salt";
	struct dmt_hasher_params p = {
		.alg = alg, .msg_size = msg, .engine = spec,
		.prefix = salt, .prefix_size = prefix,
		.header_size = hdr_size,
	};
	double v[MAXRUNS];
	struct dmt_hasher *h;
	struct worker *w;
	unsigned int i, r;
	int err;

	if (!nt)
		nt = dmt_default_threads();
	if (!strncmp(alg, "hmac(", 5)) {
		p.key = key;
		p.key_size = sizeof(key);
	}
	err = dmt_hasher_new(&p, &h, NULL);
	w = calloc(nt, sizeof(*w));
	if (err || !w) {
		fprintf(stderr, "bench_hash: %s engine %s: %s\n", alg,
			spec ? spec : "default", strerror(err ? -err : ENOMEM));
		free(w);
		return 1;
	}
	for (i = 0; i < nt && !err; i++) {
		err = dmt_hasher_clone(h, &w[i].j.h);
		sizes(&w[i].j, msg, MAXMSGS);
		w[i].seconds = min_seconds * 10;
	}
	if (!err)
		threads_once(w, nt);	/* warm-up */
	for (r = 0; r < runs && !err; r++)
		v[r] = threads_once(w, nt);
	qsort(v, runs, sizeof(double), cmp_d);
	if (!err && v[runs / 2] > 0) {
		printf("%.4f %s\n", v[runs / 2] / 1e9, dmt_hasher_engine(h));
		fprintf(stderr, "bench_hash: %u threads, %s by %s, %zu-byte "
			"messages, %zu-byte prefix, %zu-byte headers: %.2f "
			"GB/s wall (median of %u)\n", nt, alg,
			dmt_hasher_engine(h), msg, prefix, hdr_size,
			v[runs / 2] / 1e9, runs);
	} else {
		fprintf(stderr, "bench_hash: threaded run failed\n");
		err = -1;
	}
	for (i = 0; i < nt; i++)
		dmt_hasher_free(w[i].j.h);
	free(w);
	dmt_hasher_free(h);
	return err ? 1 : 0;
}

/* Issue 15's hash ratios as key, value, backend, detail (tab-separated). */
static void summary_rows(FILE *f, struct result one, struct result single,
			 struct result multi, struct result s512,
			 const char *best512, double best)
{
	fprintf(f, "sha256-1way\t%.2f\t%s\t%.2f vs %.2f GB/s, 4 KiB (fastest 1-lane backend); default dispatch, 1 message per call: %.2fx\n",
		ratio_of(one), one.engine, one.v / 1e9, one.base / 1e9,
		ratio_of(single));
	fprintf(f, "sha256-multi\t%.2f\t%s\t%.2f vs %.2f GB/s, 4 KiB, %d messages per call\n",
		ratio_of(multi), multi.engine, multi.v / 1e9,
		multi.base / 1e9, MAXMSGS);
	fprintf(f, "sha512-best\t%.2f\t%s\t%.2f vs %.2f GB/s, 4 KiB; fastest forced: %s %.2fx\n",
		ratio_of(s512), s512.engine, s512.v / 1e9, s512.base / 1e9,
		best512, best);
}

int main(int argc, char **argv)
{
	static const char *const algs[] = {
		"sha256", "sha224", "sha512", "sha384", "sha1",
		"hmac(sha256)", "hmac(sha512)", "crc32c", "crc32", "xxhash64",
	};
	static const size_t batches[] = { 1, 2, 3, 8, 11, 16, 64 };
	struct dmt_engine_info eng[64];
	struct result one = { 0 }, single = { 0 }, multi = { 0 };
	struct result s512 = { 0 }, r, r1;
	const char *spec = NULL, *talg = "sha256", *summary = NULL;
	char best512[24] = "-", espec[64];
	struct rusage ru;
	size_t ne, a, i, s, bsize = MAXMSGS * 4 * 4104;
	size_t tmsg = 4096, tprefix = 32;
	double vh, vp, best = 0;
	struct job hm, pl;
	long nthreads = -1;
	int c;
	FILE *f;

	while ((c = getopt(argc, argv, "qs:t:e:a:m:p:H:")) != -1) {
		switch (c) {
		case 'q':
			runs = 5;
			min_seconds = 0.02;
			break;
		case 's':
			summary = optarg;
			break;
		case 't':
			nthreads = strtol(optarg, NULL, 0);
			break;
		case 'e':
			spec = optarg;
			break;
		case 'a':
			talg = optarg;
			break;
		case 'm':
			tmsg = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			tprefix = strtoul(optarg, NULL, 0);
			break;
		case 'H':
			hdr_size = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: bench_hash [-q] [-s FILE] | "
				"-t THREADS [-e SPEC] [-a ALG] [-m MSG] "
				"[-p PREFIX] [-H HEADER]\n");
			return 1;
		}
	}
	if (tmsg < 1 || tmsg > 4104 || tprefix > 64 || hdr_size > 64) {
		fprintf(stderr, "bench_hash: -m 1..4104, -p 0..64, -H 0..64\n");
		return 1;
	}
	buf = malloc(bsize);
	if (!buf)
		return 1;
	for (i = 0; i < bsize; i++)
		buf[i] = (uint8_t)(i * 2654435761u >> 13);
	for (i = 0; i < sizeof(hdrs); i++)
		hdrs[i] = (uint8_t)(i * 40503u >> 7);
	if (nthreads >= 0) {
		c = threads_main((unsigned int)nthreads, spec, talg, tmsg,
				 tprefix);
		free(buf);
		return c;
	}
	ne = dmt_engine_list(eng, 64);
	if (ne > 64)
		ne = 64;

	printf("# single core, thread CPU time, median of %u runs; ratio vs "
	       "OpenSSL EVP one message at a time\n", runs);
	printf("# %-11s %-9s %5s %4s  %11s  %6s\n", "algorithm", "engine",
	       "msg", "batch", "throughput", "ratio");
	for (a = 0; a < sizeof(algs) / sizeof(algs[0]); a++) {
		for (s = 512; s <= 4096; s *= 8) {
			r = bench_one(algs[a], NULL, s, MAXMSGS);
			if (s == 4096 && !strcmp(algs[a], "sha256"))
				multi = r;
			if (s == 4096 && !strcmp(algs[a], "sha512"))
				s512 = r;
			r1 = (struct result){ 0 };
			r = bench_backends(algs[a], s, eng, ne, &r1);
			if (s == 4096 && !strcmp(algs[a], "sha256"))
				one = r1;
			if (s == 4096 && !strcmp(algs[a], "sha512")) {
				best = ratio_of(r);
				snprintf(best512, sizeof(best512), "%s",
					 r.engine);
			}
		}
	}

	printf("\n# default dispatch by batch size (messages per call)\n");
	for (s = 512; s <= 4096; s *= 8)
		for (i = 0; i < sizeof(batches) / sizeof(batches[0]); i++) {
			r = bench_one("sha256", NULL, s, batches[i]);
			if (s == 4096 && batches[i] == 1)
				single = r;
		}
	for (i = 0; i < sizeof(batches) / sizeof(batches[0]); i++)
		bench_one("sha512", NULL, 4096, batches[i]);

	printf("\n# hmac(sha256) vs plain sha256, same engine, 4104-byte "
	       "messages (ratio = hmac / plain)\n");
	for (i = 0; i <= ne; i++) {
		const char *en = NULL;

		if (i < ne) {
			if (!eng[i].available ||
			    strcmp(eng[i].primitive, "sha256"))
				continue;
			snprintf(espec, sizeof(espec), "sha256=%s",
				 eng[i].name);
			en = espec;
		}
		if (eng_job(&hm, "hmac(sha256)", en, 4104))
			continue;
		if (eng_job(&pl, "sha256", en, 4104)) {
			dmt_hasher_free(hm.h);
			continue;
		}
		sizes(&hm, 4104, MAXMSGS);
		sizes(&pl, 4104, MAXMSGS);
		measure(&hm, &pl, &vh, &vp);
		row("hmac(sha256)", dmt_hasher_engine(hm.h), 4104, MAXMSGS,
		    en ? "forced, vs plain" : "default, vs plain", vh, vp);
		dmt_hasher_free(hm.h);
		dmt_hasher_free(pl.h);
	}
	free(buf);
	/* every row above ran in this process: its peak RSS is theirs */
	if (!getrusage(RUSAGE_SELF, &ru))
		printf("\n# maxrss of every row (one process): %ld KiB\n",
		       ru.ru_maxrss);
	if (summary) {
		f = fopen(summary, "a");
		if (!f) {
			perror(summary);
			return 1;
		}
		summary_rows(f, one, single, multi, s512, best512, best);
		if (fclose(f))
			return 1;
	}
	return 0;
}
