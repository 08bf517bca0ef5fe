// SPDX-License-Identifier: MIT
/*
 * The floor under fsverity-tool's small-file run, for bench-fsverity:
 * the least a program must do to digest a list of small files with this
 * machine's kernel and our hash engine, and nothing else (no options, no
 * error reports, no ordering of results across threads).
 *
 *   fsverity_floor [-t THREADS] [-s] [-p] LIST
 *
 * The threads take chunks of 32 consecutive paths of LIST (one path per
 * line, files of at most 128 blocks of 4 KiB: one tree level) from a
 * shared counter, as the library's workers do, and per file: openat()
 * through a descriptor of the file's directory, fstat(), one pread(),
 * close() - the four system calls fsverity-tool makes.  Without -s the
 * data blocks of 32 files are hashed in one engine call, their tree
 * blocks in another and their descriptors in a third, as the library
 * does (sha256, no salt).  -p prints "sha256:HEX PATH" lines in LIST's
 * order, so that the bench can check that this program computes the
 * real digests.  Exit 1 on any error.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dmt/hash.h>

#define BS	    4096u
#define MAX_BLOCKS  128u /* one tree level: 128 digests fill a block */
#define CHUNK	    32u
#define DESC_SIZE   256u
#define DIGEST_SIZE 32u

struct job {
	char **paths;
	size_t n;
	size_t *next; /* atomic: first path of the next chunk */
	bool syscalls_only;
	uint8_t *digests; /* n * DIGEST_SIZE, for -p */
	int err;
};

/* The engine calls of one chunk: data blocks, tree blocks, descriptors. */
struct chunk_bufs {
	struct dmt_hasher *h_block, *h_desc;
	uint8_t *io, *tree, *dig, *desc;
	const uint8_t **msgs;
};

static int hash_chunk(struct chunk_bufs *c, const uint64_t *sizes, size_t n,
		      uint8_t *out)
{
	size_t nmsg = 0, ntree = 0, off = 0, k;
	uint8_t root[CHUNK][DIGEST_SIZE];
	unsigned int nb[CHUNK];
	int err;

	for (k = 0; k < n; k++) {
		nb[k] = (unsigned int)((sizes[k] + BS - 1) / BS);
		for (unsigned int j = 0; j < nb[k]; j++)
			c->msgs[nmsg++] = c->io + off + (size_t)j * BS;
		off += (sizes[k] / BS + 1) * BS;
	}
	err = dmt_hasher_digest(c->h_block, nmsg, c->msgs, NULL, c->dig);
	if (err)
		return err;
	memset(c->tree, 0, n * BS);
	for (k = 0, off = 0; k < n; off += nb[k], k++) {
		if (nb[k] > 1) {
			memcpy(c->tree + k * BS, c->dig + off * DIGEST_SIZE,
			       nb[k] * DIGEST_SIZE);
			c->msgs[ntree++] = c->tree + k * BS;
		} else if (nb[k] == 1) {
			memcpy(root[k], c->dig + off * DIGEST_SIZE,
			       DIGEST_SIZE);
		} else {
			memset(root[k], 0, DIGEST_SIZE);
		}
	}
	err = dmt_hasher_digest(c->h_block, ntree, c->msgs, NULL, c->dig);
	if (err)
		return err;
	memset(c->desc, 0, n * DESC_SIZE);
	for (k = 0, ntree = 0; k < n; k++) {
		uint8_t *d = c->desc + k * DESC_SIZE;
		uint64_t le = sizes[k]; /* x86 and arm64: little-endian */

		if (nb[k] > 1)
			memcpy(root[k], c->dig + ntree++ * DIGEST_SIZE,
			       DIGEST_SIZE);
		d[0] = 1;  /* version */
		d[1] = 1;  /* FS_VERITY_HASH_ALG_SHA256 */
		d[2] = 12; /* log2 of the block size */
		memcpy(d + 8, &le, 8);
		memcpy(d + 16, root[k], DIGEST_SIZE);
	}
	return dmt_hasher_digest_strided(c->h_desc, n, c->desc, DESC_SIZE,
					 NULL, out);
}

static int bufs_init(struct chunk_bufs *c)
{
	struct dmt_hasher_params hp = {.alg = "sha256", .msg_size = BS};
	int err = dmt_hasher_new(&hp, &c->h_block, NULL);

	hp.msg_size = DESC_SIZE;
	if (!err)
		err = dmt_hasher_new(&hp, &c->h_desc, NULL);
	c->io = aligned_alloc(BS, CHUNK * (MAX_BLOCKS + 1) * BS);
	c->tree = aligned_alloc(BS, CHUNK * BS);
	c->dig = malloc(CHUNK * MAX_BLOCKS * DIGEST_SIZE);
	c->desc = malloc(CHUNK * DESC_SIZE);
	c->msgs = malloc(CHUNK * MAX_BLOCKS * sizeof(*c->msgs));
	if (!err && (!c->io || !c->tree || !c->dig || !c->desc || !c->msgs))
		err = -ENOMEM;
	return err;
}

static void bufs_free(struct chunk_bufs *c)
{
	dmt_hasher_free(c->h_block);
	dmt_hasher_free(c->h_desc);
	free(c->io);
	free(c->tree);
	free(c->dig);
	free(c->desc);
	free(c->msgs);
}

/* openat through the directory's descriptor (kept while paths share it),
 * fstat, one pread of the size and the byte after, close. */
static int read_file(const char *path, char *dir, int *dir_fd, uint8_t *slot,
		     uint64_t *size)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 0;
	const char *name = slash ? slash + 1 : path;
	struct stat st;
	ssize_t got;
	int fd, err = 0;

	if (strncmp(dir, path, len) || dir[len] || *dir_fd < 0) {
		if (*dir_fd >= 0)
			close(*dir_fd);
		memcpy(dir, path, len);
		dir[len] = 0;
		*dir_fd = open(len ? dir : ".", O_PATH | O_DIRECTORY);
		if (*dir_fd < 0)
			return -errno;
	}
	fd = openat(*dir_fd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > MAX_BLOCKS * BS) {
		err = -EINVAL;
		goto out;
	}
	got = pread(fd, slot, (size_t)st.st_size + 1, 0);
	if (got != st.st_size) {
		err = got < 0 ? -errno : -EIO;
		goto out;
	}
	memset(slot + got, 0, BS - (size_t)got % BS);
	*size = (uint64_t)got;
out:
	close(fd);
	return err;
}

static void *run(void *arg)
{
	struct job *j = arg;
	struct chunk_bufs c = {0};
	uint64_t sizes[CHUNK];
	char *dir = malloc(4096);
	int dir_fd = -1, err = dir ? 0 : -ENOMEM;

	if (!err && !j->syscalls_only)
		err = bufs_init(&c);
	if (!err && j->syscalls_only)
		err = (c.io = aligned_alloc(BS, (MAX_BLOCKS + 1) * BS)) ? 0
								: -ENOMEM;
	if (dir)
		dir[0] = 0;
	for (;;) {
		size_t i = __atomic_fetch_add(j->next, CHUNK, __ATOMIC_RELAXED);
		size_t n = i < j->n ? j->n - i : 0, off = 0;

		if (err || !n)
			break;
		if (n > CHUNK)
			n = CHUNK;
		for (size_t k = 0; !err && k < n; k++) {
			if (strlen(j->paths[i + k]) >= 4096) {
				err = -ENAMETOOLONG;
				break;
			}
			err = read_file(j->paths[i + k], dir, &dir_fd,
					c.io + off, &sizes[k]);
			if (!j->syscalls_only)
				off += (sizes[k] / BS + 1) * BS;
		}
		if (!err && !j->syscalls_only)
			err = hash_chunk(&c, sizes, n,
					 j->digests + i * DIGEST_SIZE);
		if (err)
			fprintf(stderr, "fsverity_floor: near %s: %s\n",
				j->paths[i], strerror(-err));
	}
	if (dir_fd >= 0)
		close(dir_fd);
	free(dir);
	if (j->syscalls_only)
		free(c.io);
	else
		bufs_free(&c);
	j->err = err;
	return NULL;
}

static char **read_list(const char *name, size_t *n)
{
	FILE *in = fopen(name, "re");
	char **v = NULL, *line = NULL;
	size_t cap = 0, lcap = 0;
	ssize_t len;

	*n = 0;
	if (!in)
		return NULL;
	while ((len = getline(&line, &lcap, in)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = 0;
		if (!len)
			continue;
		if (*n == cap) {
			char **nv = realloc(v, (cap = cap ? 2 * cap : 1024) *
						       sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		v[*n] = strdup(line);
		if (!v[*n])
			break;
		(*n)++;
	}
	free(line);
	fclose(in);
	return v;
}

int main(int argc, char **argv)
{
	unsigned int threads = 2, t;
	bool syscalls_only = false, print = false;
	struct job jobs[64];
	pthread_t tid[64];
	uint8_t *digests;
	char **paths;
	size_t n, next = 0;
	int opt, rc = 0;

	while ((opt = getopt(argc, argv, "t:sp")) != -1) {
		if (opt == 't')
			threads = (unsigned int)strtoul(optarg, NULL, 10);
		else if (opt == 's')
			syscalls_only = true;
		else if (opt == 'p')
			print = true;
		else
			return 1;
	}
	if (optind + 1 != argc || !threads || threads > 64) {
		fprintf(stderr,
			"usage: fsverity_floor [-t THREADS] [-s] [-p] LIST\n");
		return 1;
	}
	paths = read_list(argv[optind], &n);
	digests = calloc(n + 1, DIGEST_SIZE);
	if (!paths || !digests) {
		fprintf(stderr, "fsverity_floor: cannot read %s\n",
			argv[optind]);
		return 1;
	}
	for (t = 0; t < threads; t++) {
		jobs[t] = (struct job){.paths = paths,
				       .n = n,
				       .next = &next,
				       .syscalls_only = syscalls_only,
				       .digests = digests};
		if (pthread_create(&tid[t], NULL, run, &jobs[t]))
			return 1;
	}
	for (t = 0; t < threads; t++) {
		pthread_join(tid[t], NULL);
		if (jobs[t].err)
			rc = 1;
	}
	for (size_t i = 0; print && !rc && i < n; i++) {
		fputs("sha256:", stdout);
		for (unsigned int k = 0; k < DIGEST_SIZE; k++)
			printf("%02x", digests[i * DIGEST_SIZE + k]);
		printf(" %s\n", paths[i]);
	}
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	free(digests);
	return rc;
}
