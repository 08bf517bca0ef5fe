// SPDX-License-Identifier: MIT
/*
 * The copy floor under crypt-tool format in place, for bench-crypt: the
 * least a program must do to move a file's bytes into another file that
 * already exists, without the cipher, the ring or the threads' handing
 * off (and without truncating the destination: its pages are
 * overwritten, as crypt-tool's and cryptsetup reencrypt's are).
 *
 *   copy_floor [-t 1|2] [-b MIB] [-o OFFSET] [-s] SRC DST
 *
 * Copies all of SRC into DST at byte OFFSET (default 0) with pread() and
 * pwrite() of MIB MiB blocks (default 2: crypt-tool's chunk); with -t 2
 * two threads each copy one half (split on a block boundary), with the
 * 2 CPUs of a small VM the best a two-thread tool could do.  -s ends with
 * fdatasync() of DST (the durable floor).  Exit 1 on any error.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct half {
	int in, out;
	uint64_t begin, end; /* bytes of SRC */
	uint64_t dst_off;    /* where SRC's byte 0 goes */
	size_t block;
	int err;
};

static void *copy_half(void *arg)
{
	struct half *h = arg;
	uint8_t *buf = aligned_alloc(4096, h->block);
	uint64_t pos = h->begin;

	if (!buf) {
		h->err = ENOMEM;
		return NULL;
	}
	while (pos < h->end) {
		size_t want = h->end - pos < h->block ? (size_t)(h->end - pos)
						      : h->block;
		ssize_t r = pread(h->in, buf, want, (off_t)pos), w = 0;

		if (r <= 0) {
			h->err = r < 0 ? errno : EIO;
			break;
		}
		while (w < r) {
			ssize_t n = pwrite(h->out, buf + w, (size_t)(r - w),
					   (off_t)(h->dst_off + pos + w));

			if (n <= 0) {
				h->err = n < 0 ? errno : EIO;
				goto out;
			}
			w += n;
		}
		pos += (uint64_t)r;
	}
out:
	free(buf);
	return NULL;
}

static int usage(void)
{
	fprintf(stderr, "usage: copy_floor [-t 1|2] [-b MIB] [-o OFFSET] [-s] "
			"SRC DST\n");
	return 1;
}

int main(int argc, char **argv)
{
	struct half h[2] = {{0}};
	pthread_t tid;
	unsigned long threads = 1, mib = 2;
	unsigned long long off = 0;
	bool sync_out = false;
	struct stat sb;
	uint64_t mid;
	int opt, in, out, ret = 0;

	while ((opt = getopt(argc, argv, "t:b:o:s")) != -1) {
		if (opt == 't')
			threads = strtoul(optarg, NULL, 10);
		else if (opt == 'b')
			mib = strtoul(optarg, NULL, 10);
		else if (opt == 'o')
			off = strtoull(optarg, NULL, 0);
		else if (opt == 's')
			sync_out = true;
		else
			return usage();
	}
	if (argc - optind != 2 || threads < 1 || threads > 2 || mib < 1 ||
	    mib > 1024)
		return usage();
	in = open(argv[optind], O_RDONLY);
	out = open(argv[optind + 1], O_WRONLY);
	if (in < 0 || out < 0 || fstat(in, &sb) < 0) {
		perror("copy_floor");
		return 1;
	}
	for (int i = 0; i < 2; i++)
		h[i] = (struct half){.in = in,
				     .out = out,
				     .dst_off = off,
				     .block = mib << 20};
	/* the halves split on a block boundary */
	mid = threads == 2 ? (uint64_t)sb.st_size / 2 / h[0].block * h[0].block
			   : (uint64_t)sb.st_size;
	h[0].end = mid;
	h[1].begin = mid;
	h[1].end = (uint64_t)sb.st_size;
	if (threads == 2 && pthread_create(&tid, NULL, copy_half, &h[1])) {
		fprintf(stderr, "copy_floor: cannot start a thread\n");
		return 1;
	}
	copy_half(&h[0]);
	if (threads == 2)
		pthread_join(tid, NULL);
	else
		copy_half(&h[1]); /* empty: mid is the size */
	for (int i = 0; i < 2; i++) {
		if (h[i].err) {
			fprintf(stderr, "copy_floor: %s\n", strerror(h[i].err));
			ret = 1;
		}
	}
	if (!ret && sync_out && fdatasync(out) < 0) {
		perror("copy_floor: fdatasync");
		ret = 1;
	}
	close(in);
	close(out);
	return ret;
}
