// SPDX-License-Identifier: MIT
/*
 * Hash engine benchmark (not a test): single-core throughput of every
 * backend on this machine, as thread CPU time (median of RUNS runs), next
 * to OpenSSL EVP hashing the same messages one at a time (algorithm fetched
 * once, context reused) measured in the same run, alternating with it.
 *
 * Usage: bench_hash [-q]   (-q: fewer, shorter runs)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <dmt/hash.h>

#define MAXMSGS 256
#define MAXRUNS 15

static unsigned int runs = 7;
static double min_seconds = 0.04;
static uint8_t *buf;		/* messages live here, contiguous */

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
						      NULL, j->out))
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
	return dmt_hasher_new(&p, &j->h);
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

/* One engine (NULL = default dispatch) against OpenSSL. */
static void bench_one(const char *alg, const char *engine, size_t msg,
		      size_t n)
{
	struct job e, o;
	double ve = 0, vo = 0;
	bool base;

	if (eng_job(&e, alg, engine, msg))
		return;
	base = !ossl_job(&o, alg);
	sizes(&e, msg, n);
	sizes(&o, msg, n);
	measure(&e, base ? &o : NULL, &ve, &vo);
	row(alg, dmt_hasher_engine(e.h), msg, n,
	    engine ? "forced" : "default", ve, base ? vo : 0);
	dmt_hasher_free(e.h);
	ossl_free(&o);
}

int main(int argc, char **argv)
{
	static const char *const algs[] = {
		"sha256", "sha224", "sha512", "sha384", "sha1",
		"hmac(sha256)", "hmac(sha512)", "crc32c", "crc32", "xxhash64",
	};
	static const size_t batches[] = { 1, 2, 3, 8, 11, 16, 64 };
	struct dmt_engine_info eng[32];
	struct job hm, pl;
	size_t ne, a, i, s, bsize = MAXMSGS * 4 * 4104;
	double vh, vp;

	if (argc > 1 && !strcmp(argv[1], "-q")) {
		runs = 5;
		min_seconds = 0.02;
	}
	buf = malloc(bsize);
	if (!buf)
		return 1;
	for (i = 0; i < bsize; i++)
		buf[i] = (uint8_t)(i * 2654435761u >> 13);
	ne = dmt_engine_list(eng, 32);
	if (ne > 32)
		ne = 32;

	printf("# single core, thread CPU time, median of %u runs; ratio vs "
	       "OpenSSL EVP one message at a time\n", runs);
	printf("# %-11s %-9s %5s %4s  %11s  %6s\n", "algorithm", "engine",
	       "msg", "batch", "throughput", "ratio");
	for (a = 0; a < sizeof(algs) / sizeof(algs[0]); a++) {
		for (s = 512; s <= 4096; s *= 8) {
			bench_one(algs[a], NULL, s, MAXMSGS);
			for (i = 0; i < ne; i++)
				if (eng[i].available)
					bench_one(algs[a], eng[i].name, s,
						  MAXMSGS);
		}
	}

	printf("\n# default dispatch by batch size (messages per call)\n");
	for (s = 512; s <= 4096; s *= 8)
		for (i = 0; i < sizeof(batches) / sizeof(batches[0]); i++)
			bench_one("sha256", NULL, s, batches[i]);
	for (i = 0; i < sizeof(batches) / sizeof(batches[0]); i++)
		bench_one("sha512", NULL, 4096, batches[i]);

	printf("\n# hmac(sha256) vs plain sha256, same engine, 4104-byte "
	       "messages (ratio = hmac / plain)\n");
	for (i = 0; i <= ne; i++) {
		const char *en = i < ne ? eng[i].name : NULL;

		if (i < ne && !eng[i].available)
			continue;
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
	return 0;
}
