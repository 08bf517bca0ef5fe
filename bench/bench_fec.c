// SPDX-License-Identifier: MIT
/*
 * FEC benchmark driver: encodes (or checks) the parity of a data file and
 * a hash file made by veritysetup, straight through the library, and
 * prints the time.  Used by bench/bench_fec.sh.
 *
 *   bench_fec encode|check DATA HASH FEC ROOTS BLOCK_SIZE [THREADS]
 *
 * stdout: the seconds, then the GF(2^8) backend (DMT_ENGINE may force one,
 * e.g. gf256=portable), e.g. "1.234 gfni".
 *
 * The hash tree must start at block 1 (superblock at offset 0, the
 * veritysetup default); data blocks = size of DATA / BLOCK_SIZE.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dmt/fec.h>
#include <dmt/hash.h>
#include <dmt/io.h>
#include <dmt/threads.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int never_ok(void *ctx, struct dmt_fec *fec, uint64_t block,
		    const uint8_t *data)
{
	(void)ctx;
	(void)fec;
	(void)block;
	(void)data;
	/* a clean image never gets here; if it does, say so */
	return DMT_FEC_BLOCK_BAD;
}

int main(int argc, char **argv)
{
	struct dmt_file *data = NULL, *hash = NULL;
	struct dmt_file *fec = NULL;
	struct dmt_fec_params p;
	struct dmt_fec_layout l;
	struct dmt_fec_stats st;
	struct dmt_fec_ops ops = { never_ok, NULL, NULL };
	uint64_t size;
	bool encode;
	double t0, t;
	int r;

	if (argc < 7 || (strcmp(argv[1], "encode") &&
			 strcmp(argv[1], "check"))) {
		fprintf(stderr, "usage: %s encode|check DATA HASH FEC ROOTS "
			"BLOCK_SIZE [THREADS]\n", argv[0]);
		return 1;
	}
	encode = !strcmp(argv[1], "encode");
	memset(&p, 0, sizeof(p));
	p.roots = (unsigned int)strtoul(argv[5], NULL, 0);
	p.block_size = (uint32_t)strtoul(argv[6], NULL, 0);
	p.threads = argc > 7 ? (unsigned int)strtoul(argv[7], NULL, 0) : 0;
	p.hash_start = 1;
	p.engine = getenv(DMT_ENGINE_ENV);
	r = dmt_file_open(argv[2], DMT_OPEN_READ, &data);
	if (!r)
		r = dmt_file_open(argv[3], DMT_OPEN_READ, &hash);
	if (!r)
		r = dmt_file_open(argv[4],
				  encode ? DMT_OPEN_RW | DMT_OPEN_CREATE
					 : DMT_OPEN_READ,
				  &fec);
	if (!r)
		r = dmt_file_size(data, &size);
	if (r < 0 || !p.block_size) {
		fprintf(stderr, "bench_fec: %s\n", dmt_strerror(r));
		goto out;
	}
	p.data_blocks = size / p.block_size;
	p.data = data;
	p.hash = hash;
	p.fec = fec;

	t0 = now();
	if (encode)
		r = dmt_fec_encode(&p, &l, NULL);
	else
		r = dmt_fec_verify_and_correct(&p, &ops, 0, &st, NULL);
	t = now() - t0;
	if (r < 0) {
		fprintf(stderr, "bench_fec: %s: %s\n", argv[1],
			dmt_strerror(r));
		goto out;
	}
	if (!encode)
		dmt_fec_layout(&p, &l, NULL);
	/* stdout: seconds and backend, then details */
	printf("%.3f %s\n", t, dmt_engine_resolve(p.engine, "gf256") ?: "?");
	fprintf(stderr, "bench_fec %s: roots %u, %llu covered blocks, %llu "
		"rounds, %llu parity bytes, %u threads: %.3f s, %.0f MiB/s\n",
		argv[1], p.roots, (unsigned long long)l.fec_blocks,
		(unsigned long long)l.rounds,
		(unsigned long long)l.parity_bytes,
		p.threads ? p.threads : dmt_default_threads(), t,
		(double)l.fec_blocks * p.block_size / 1048576.0 / t);
	if (!encode && st.bad_rounds) {
		fprintf(stderr, "bench_fec: %llu rounds don't match\n",
			(unsigned long long)st.bad_rounds);
		r = -EBADMSG;
	}
out:
	dmt_file_close(data);
	dmt_file_close(hash);
	dmt_file_close(fec);
	return r < 0 ? 1 : 0;
}
