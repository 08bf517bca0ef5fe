// SPDX-License-Identifier: MIT
/*
 * fs-verity digests of sparse files (suite "fsverity_sparse"): the
 * one-file path skips holes (lib/fsverity/fsverity_stream.c, zero
 * subtrees at every level), so every hole layout must give the bytes of
 * reading every zero: holes at the start, at the end, off the block grid,
 * thousands of small ones, files that are one hole, holes that cover
 * whole subtrees several levels up, for 1024..65536-byte blocks, both
 * hashes, with and without salt, 1 to 8 threads.  Digests, Merkle trees
 * and descriptors are compared with libfsverity 1.5 (the oracle: these
 * tests skip visibly without libfsverity-dev) and, through the tools,
 * with `fsverity digest --out-merkle-tree --out-descriptor`.  A file that
 * gets holes punched while it is hashed must be reported as changed or
 * have the digest of one state it was in.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <dmt/fsverity.h>
#include <dmt/reason.h>
#include "tests/support/helpers.h"

/* helpers of the oracle tests (libfsverity): unused in builds without it */
#define ORACLE_ONLY __attribute__((unused))

#ifdef DMT_HAVE_LIBFSVERITY
#include <libfsverity.h>
#endif

#define MiB (1ull << 20)

/* A layout: the file's size and the ranges that hold (random) data. */
struct extent {
	uint64_t off, len;
};

struct layout {
	const char *name;
	uint64_t size;
	unsigned int n;
	struct extent ext[8];
	uint64_t every; /* > 0: data in the first half of every `every` */
};

static const struct layout layouts[] = {
	{.name = "hole_at_start",
	 .size = 9 * MiB + 3000,
	 .n = 1,
	 .ext = {{8 * MiB + 512, MiB + 2488}}},
	{.name = "hole_at_end",
	 .size = 40 * MiB + 5,
	 .n = 1,
	 .ext = {{0, 3 * MiB + 100}}},
	{.name = "unaligned_holes",
	 .size = 20 * MiB + 777,
	 .n = 4,
	 .ext = {{5000, 65000},
		 {MiB + 3, 65539},
		 {7 * MiB + 12345, 5 * MiB - 12344},
		 {19 * MiB + 1, MiB + 776}}},
	{.name = "many_small_holes", .size = 16 * MiB + 1, .every = 8192},
	{.name = "all_hole", .size = 33 * MiB + 1},
	{.name = "whole_subtrees",
	 .size = 300 * MiB,
	 .n = 3,
	 .ext = {{0, 100}, {150 * MiB, 4096}, {300 * MiB - 10, 10}}},
};

#define N_LAYOUTS (sizeof(layouts) / sizeof(layouts[0]))

static char *dir;

static void setup(void)
{
	dir = th_mkdtemp();
}

static void teardown(void)
{
	th_rmtree(dir);
	free(dir);
}

static void put_random(int fd, uint64_t off, uint64_t len, uint64_t seed)
{
	uint8_t *buf = malloc(len);

	cr_assert_not_null(buf);
	th_fill_random(buf, (size_t)len, seed);
	cr_assert_eq(pwrite(fd, buf, (size_t)len, (off_t)off), (ssize_t)len);
	free(buf);
}

/* The file of layout l (a new one at path). */
static void make_layout(const struct layout *l, const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, (off_t)l->size), 0);
	for (unsigned int i = 0; i < l->n; i++)
		put_random(fd, l->ext[i].off, l->ext[i].len, 7 + i);
	for (uint64_t off = 0; l->every && off < l->size; off += l->every) {
		uint64_t len = l->every / 2;

		if (len > l->size - off)
			len = l->size - off;
		put_random(fd, off, len, off);
	}
	cr_assert_eq(fsync(fd), 0);
	close(fd);
}

/* Digest, tree and descriptor, from whichever side. */
struct out {
	uint8_t digest[DMT_FSVERITY_MAX_DIGEST];
	uint8_t *tree;
	uint64_t tree_size;
	uint8_t desc[DMT_FSVERITY_DESCRIPTOR_SIZE];
	unsigned int blocks;
	int err;
	struct dmt_reason reason;
};

static int out_size(void *ctx, uint64_t size)
{
	struct out *o = ctx;

	free(o->tree);
	o->tree_size = size;
	/* never touched where no block comes: the all-hole trees stay
	 * cheap in memory where they repeat */
	o->tree = calloc(1, size + 1);
	return o->tree ? 0 : -ENOMEM;
}

static int out_block(void *ctx, const void *block, size_t size,
		     uint64_t offset)
{
	struct out *o = ctx;

	if (offset % size || offset + size > o->tree_size)
		return -ERANGE;
	memcpy(o->tree + offset, block, size);
	o->blocks++;
	return 0;
}

static int out_desc(void *ctx, const void *desc, size_t size)
{
	struct out *o = ctx;

	memcpy(o->desc, desc, size);
	return 0;
}

struct spec {
	uint32_t alg, bs, salt_size;
	const uint8_t *salt;
	unsigned int threads;
	bool meta; /* with metadata callbacks */
};

static int one_done(void *ctx, const struct dmt_fsverity_result *res,
		    const struct dmt_reason *r)
{
	struct out *o = ctx;

	o->err = res->err;
	o->reason = *r;
	if (!res->err)
		memcpy(o->digest, res->digest.digest, res->digest.digest_size);
	return 0;
}

/* Ours: the batch with the file's fd (over a worker's buffer: the
 * streamed one-file path, alone or with every worker). */
static ORACLE_ONLY void ours(const struct spec *s, const char *path,
			     struct out *o)
{
	struct dmt_fsverity_metadata_callbacks cb = {o, out_size, out_block,
						     out_desc};
	struct dmt_fsverity_batch_params bp = {
		.tree = {.version = 1, .hash_algorithm = s->alg,
			 .block_size = s->bs, .salt_size = s->salt_size,
			 .salt = s->salt, .threads = s->threads},
		.done = one_done, .done_ctx = o};
	struct dmt_fsverity_file f = {.size = UINT64_MAX, .user = o};
	struct dmt_fsverity_batch *b;

	memset(o, 0, sizeof(*o));
	f.fd = open(path, O_RDONLY);
	cr_assert_geq(f.fd, 0);
	if (s->meta)
		f.metadata_callbacks = &cb;
	cr_assert_eq(dmt_fsverity_batch_new(&bp, &b, NULL), 0);
	cr_assert_eq(dmt_fsverity_batch_add(b, &f, NULL), 0);
	cr_assert_eq(dmt_fsverity_batch_finish(b), 0);
	dmt_fsverity_batch_free(b);
	close(f.fd);
}

static ORACLE_ONLY void out_free(struct out *o)
{
	free(o->tree);
	o->tree = NULL;
}

#ifdef DMT_HAVE_LIBFSVERITY
static int fd_read(void *fd, void *buf, size_t count)
{
	uint8_t *p = buf;

	while (count) {
		ssize_t n = read(*(int *)fd, p, count);

		if (n <= 0)
			return n ? -errno : -EIO;
		p += n;
		count -= (size_t)n;
	}
	return 0;
}

/* The oracle: libfsverity reading every byte (holes as zeros). */
static void oracle(const struct spec *s, const char *path, uint64_t size,
		   struct out *o)
{
	struct libfsverity_metadata_callbacks cb = {o, out_size, out_block,
						    out_desc};
	struct libfsverity_merkle_tree_params p = {
		.version = 1, .hash_algorithm = s->alg, .file_size = size,
		.block_size = s->bs, .salt_size = s->salt_size,
		.salt = s->salt, .metadata_callbacks = &cb};
	struct libfsverity_digest *d = NULL;
	int fd = open(path, O_RDONLY);

	memset(o, 0, sizeof(*o));
	cr_assert_geq(fd, 0);
	cr_assert_eq(libfsverity_compute_digest(&fd, fd_read, &p, &d), 0);
	memcpy(o->digest, d->digest, d->digest_size);
	free(d);
	close(fd);
}
#endif

#define NEED_ORACLE_OR_SKIP()                                                  \
	do {                                                                   \
		if (!have_oracle())                                            \
			cr_skip("libfsverity (libfsverity-dev) is not "        \
				"installed: sparse digests not compared");     \
	} while (0)

static bool have_oracle(void)
{
#ifdef DMT_HAVE_LIBFSVERITY
	return true;
#else
	return false;
#endif
}

static const uint8_t salt32[32] ORACLE_ONLY = {1, 2,  3,  4,  5,  6,  7,  8,
				   9, 10, 11, 12, 13, 14, 15, 16};

/* Layout l against the oracle for every block size and hash, with and
 * without salt and metadata callbacks, 1, 2 and 8 threads. */
static void layout_vs_oracle(const struct layout *l)
{
#ifdef DMT_HAVE_LIBFSVERITY
	static const uint32_t sizes[] = {1024, 4096, 65536};
	static const struct {
		uint32_t alg, salt_size;
	} hashes[] = {{1, 0}, {2, 32}, {1, 7}};
	static const unsigned int threads[] = {1, 2, 8};
	char *path = th_path(dir, l->name);
	struct out want, got;
	unsigned int k = 0;

	make_layout(l, path);
	for (size_t b = 0; b < 3; b++) {
		for (size_t h = 0; h < 3; h++, k++) {
			struct spec s = {.alg = hashes[h].alg,
					 .bs = sizes[b],
					 .salt_size = hashes[h].salt_size,
					 .salt = salt32,
					 .threads = threads[k % 3],
					 .meta = true};
			size_t ds = dmt_fsverity_digest_size(s.alg);

			oracle(&s, path, l->size, &want);
			for (int meta = 1; meta >= 0; meta--) {
				s.meta = meta;
				ours(&s, path, &got);
				cr_assert_eq(got.err, 0, "%s: err %d", l->name,
					     got.err);
				cr_assert_eq(memcmp(got.digest, want.digest, ds),
					     0,
					     "%s: digest, bs %u alg %u salt %u "
					     "threads %u meta %d",
					     l->name, s.bs, s.alg, s.salt_size,
					     s.threads, meta);
				if (!meta)
					continue;
				cr_assert_eq(got.tree_size, want.tree_size);
				cr_assert_eq(memcmp(got.tree, want.tree,
						    want.tree_size),
					     0, "%s: tree, bs %u alg %u",
					     l->name, s.bs, s.alg);
				cr_assert_eq(got.blocks, want.blocks,
					     "%s: every tree block once",
					     l->name);
				cr_assert_eq(memcmp(got.desc, want.desc,
						    sizeof(want.desc)),
					     0, "%s: descriptor", l->name);
				out_free(&got);
			}
			out_free(&want);
		}
	}
	unlink(path);
	free(path);
#endif
}

Test(fsverity_sparse, hole_at_start, .init = setup, .fini = teardown)
{
	NEED_ORACLE_OR_SKIP();
	layout_vs_oracle(&layouts[0]);
}

Test(fsverity_sparse, hole_at_end, .init = setup, .fini = teardown)
{
	NEED_ORACLE_OR_SKIP();
	layout_vs_oracle(&layouts[1]);
}

Test(fsverity_sparse, holes_off_the_block_grid, .init = setup,
     .fini = teardown)
{
	NEED_ORACLE_OR_SKIP();
	layout_vs_oracle(&layouts[2]);
}

Test(fsverity_sparse, many_small_holes, .init = setup, .fini = teardown,
     .timeout = 120)
{
	NEED_ORACLE_OR_SKIP();
	layout_vs_oracle(&layouts[3]);
}

Test(fsverity_sparse, all_hole, .init = setup, .fini = teardown)
{
	NEED_ORACLE_OR_SKIP();
	layout_vs_oracle(&layouts[4]);
}

Test(fsverity_sparse, holes_over_whole_subtrees, .init = setup,
     .fini = teardown, .timeout = 300)
{
	NEED_ORACLE_OR_SKIP();
	layout_vs_oracle(&layouts[5]);
}

/* All-hole files whose sizes sit on the fan-out edges: the zero subtree
 * of a whole block, and a last block that is short (zero-padded, so not
 * a zero subtree). */
Test(fsverity_sparse, all_hole_fanout_edges, .init = setup,
     .fini = teardown, .timeout = 120)
{
	NEED_ORACLE_OR_SKIP();
#ifdef DMT_HAVE_LIBFSVERITY
	static const struct {
		uint32_t alg, bs;
	} geo[] = {{2, 1024}, {1, 1024}, {1, 4096}};
	char *path = th_path(dir, "edge");
	struct out want, got;

	for (size_t g = 0; g < 3; g++) {
		uint64_t fan = geo[g].bs / dmt_fsverity_digest_size(geo[g].alg);
		uint64_t blocks[] = {1, fan, fan + 1, fan * fan, fan * fan + 1,
				     fan * fan * fan, fan * fan * fan - 1};

		for (size_t i = 0; i < 7; i++) {
			for (int d = -1; d <= 1; d++) {
				uint64_t size = blocks[i] * geo[g].bs + d;
				struct spec s = {.alg = geo[g].alg,
						 .bs = geo[g].bs,
						 .threads = 1 + i % 2,
						 .meta = true};
				int fd = open(path, O_RDWR | O_CREAT | O_TRUNC,
					      0600);

				if (size > 300 * MiB)
					continue;
				cr_assert_eq(ftruncate(fd, (off_t)size), 0);
				close(fd);
				oracle(&s, path, size, &want);
				ours(&s, path, &got);
				cr_assert_eq(got.err, 0);
				cr_assert_eq(memcmp(got.digest, want.digest,
						    dmt_fsverity_digest_size(
							    s.alg)),
					     0, "all-hole %llu bytes, bs %u",
					     (unsigned long long)size, s.bs);
				cr_assert_eq(got.tree_size, want.tree_size);
				cr_assert_eq(memcmp(got.tree, want.tree,
						    want.tree_size),
					     0);
				out_free(&got);
				out_free(&want);
			}
		}
	}
	unlink(path);
	free(path);
#endif
}

/* ---- through the tools: fsverity-tool digest == fsverity digest ---- */

static void tools_agree(const char *path, const char *opts,
			const char *threads)
{
	char *out1 = NULL, *out2 = NULL, *err = NULL;
	int rc;

	rc = th_sh(&out1, &err,
		   "cd '%s' && fsverity digest %s --out-merkle-tree=t1 "
		   "--out-descriptor=d1 '%s'",
		   dir, opts, path);
	cr_assert_eq(rc, 0, "fsverity digest: %s", err);
	free(err);
	rc = th_sh(&out2, &err,
		   "cd '%s' && '%s' digest %s %s --out-merkle-tree=t2 "
		   "--out-descriptor=d2 '%s'",
		   dir, th_tool("fsverity-tool"), opts, threads, path);
	cr_assert_eq(rc, 0, "fsverity-tool digest: %s", err);
	free(err);
	cr_assert_str_eq(out2, out1, "%s %s", path, opts);
	rc = th_sh(NULL, NULL, "cd '%s' && cmp t1 t2 && cmp d1 d2", dir);
	cr_assert_eq(rc, 0, "tree or descriptor differ: %s %s", path, opts);
	free(out1);
	free(out2);
}

Test(fsverity_sparse, tools_agree_with_fsverity_digest, .init = setup,
     .fini = teardown, .timeout = 300)
{
	static const char *const opts[] = {
		"", "--block-size=1024 --hash-alg=sha512 --salt=00ff",
		"--block-size=65536 --salt=0102030405060708090a0b0c0d0e0f10"};

	if (!th_have_cmd("fsverity"))
		cr_skip("fsverity (fsverity-utils) is not installed");
	for (size_t i = 0; i < N_LAYOUTS; i++) {
		char *path = th_path(dir, layouts[i].name);

		make_layout(&layouts[i], path);
		tools_agree(path, opts[i % 3], "--threads=1");
		tools_agree(path, "", "--threads=2");
		unlink(path);
		free(path);
	}
}

/* ---- holes punched while the file is hashed ---- */

#define PUNCH_FILE  (48 * MiB)
#define PUNCH_HOLE  (64u << 10)
#define PUNCH_MAX   64
#define PUNCH_TRIES 24

struct puncher {
	const char *path;
	uint8_t *image;		/* the file's bytes as punched so far */
	pthread_mutex_t lock;
	unsigned int done;	/* punches completed */
	uint64_t at[PUNCH_MAX]; /* where, in order */
	bool stop;
	unsigned int seed;
};

static ORACLE_ONLY void *punch_thread(void *arg)
{
	struct puncher *p = arg;
	int fd = open(p->path, O_RDWR);

	cr_assert_geq(fd, 0);
	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE) &&
	       p->done < PUNCH_MAX) {
		/* filesystem blocks: the extents change, not only bytes */
		uint64_t at = (uint64_t)(rand_r(&p->seed) %
					 (PUNCH_FILE / PUNCH_HOLE)) *
			      PUNCH_HOLE;
		struct timespec nap = {0, (rand_r(&p->seed) % 8000) * 1000};

		nanosleep(&nap, NULL);
		cr_assert_eq(fallocate(fd, FALLOC_FL_PUNCH_HOLE |
						   FALLOC_FL_KEEP_SIZE,
				       (off_t)at, PUNCH_HOLE),
			     0);
		pthread_mutex_lock(&p->lock);
		p->at[p->done] = at;
		__atomic_store_n(&p->done, p->done + 1, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&p->lock);
	}
	close(fd);
	return NULL;
}

#ifdef DMT_HAVE_LIBFSVERITY
struct mem {
	const uint8_t *p;
	uint64_t pos;
};

static int mem_read(void *fd, void *buf, size_t count)
{
	struct mem *m = fd;

	memcpy(buf, m->p + m->pos, count);
	m->pos += count;
	return 0;
}

/* The digest of the file after its first k punches. */
static void state_digest(const uint8_t *orig, const struct puncher *p,
			 unsigned int k, uint8_t *scratch, uint8_t *digest)
{
	struct libfsverity_merkle_tree_params prm = {
		.version = 1, .hash_algorithm = 1, .file_size = PUNCH_FILE,
		.block_size = 4096};
	struct libfsverity_digest *d = NULL;
	struct mem m = {scratch, 0};

	memcpy(scratch, orig, PUNCH_FILE);
	for (unsigned int i = 0; i < k; i++)
		memset(scratch + p->at[i], 0, PUNCH_HOLE);
	cr_assert_eq(libfsverity_compute_digest(&m, mem_read, &prm, &d), 0);
	memcpy(digest, d->digest, 32);
	free(d);
}
#endif

/*
 * A digest taken while holes are punched: "changed" (CHANGED or
 * SIZE_CHANGED), or the digest of one of the states the file was in
 * between the start and the end of the digest; never another.
 */
Test(fsverity_sparse, holes_punched_while_hashed, .init = setup,
     .fini = teardown, .timeout = 300)
{
	NEED_ORACLE_OR_SKIP();
#ifdef DMT_HAVE_LIBFSVERITY
	struct spec s = {.alg = 1, .bs = 4096, .threads = 1};
	char *path = th_path(dir, "punched");
	uint8_t *orig = malloc(PUNCH_FILE), *scratch = malloc(PUNCH_FILE);
	unsigned int changed = 0, raced = 0, fine = 0;

	cr_assert(orig && scratch);
	th_fill_random(orig, PUNCH_FILE, 99);
	for (unsigned int t = 0; t < PUNCH_TRIES; t++) {
		struct puncher p = {.path = path, .seed = t};
		unsigned int before, after, k;
		uint8_t want[32];
		struct out got;
		pthread_t th;
		bool match = false;

		th_write_file(path, orig, PUNCH_FILE);
		pthread_mutex_init(&p.lock, NULL);
		cr_assert_eq(pthread_create(&th, NULL, punch_thread, &p), 0);
		before = __atomic_load_n(&p.done, __ATOMIC_ACQUIRE);
		ours(&s, path, &got);
		after = __atomic_load_n(&p.done, __ATOMIC_ACQUIRE);
		__atomic_store_n(&p.stop, true, __ATOMIC_RELEASE);
		pthread_join(th, NULL);
		/* a punch under way as the digest began or ended counts */
		if (before)
			before--;
		if (after < p.done)
			after++;
		pthread_mutex_destroy(&p.lock);
		if (after > before)
			raced++;
		if (got.err) {
			cr_assert(got.reason.code ==
					  DMT_REASON_FSVERITY_CHANGED ||
				  got.reason.code ==
					  DMT_REASON_FSVERITY_SIZE_CHANGED,
				  "err %d reason %d", got.err,
				  got.reason.code);
			changed++;
			continue;
		}
		for (k = after + 1; k-- > before && !match;) {
			state_digest(orig, &p, k, scratch, want);
			match = !memcmp(want, got.digest, 32);
		}
		cr_assert(match,
			  "try %u: a digest of no state the file was in "
			  "(punches %u..%u)",
			  t, before, after);
		fine++;
	}
	cr_log_info("punched while hashed: %u changed, %u digests of a "
		    "state, %u tries overlapped punches",
		    changed, fine, raced);
	cr_expect_gt(raced, 0, "no punch fell inside a digest");
	free(orig);
	free(scratch);
	free(path);
#endif
}

/* A file that is not the size it was said to be when its stream starts:
 * SIZE_CHANGED. */
Test(fsverity_sparse, given_size_differs, .init = setup,
     .fini = teardown)
{
	char *path = th_path(dir, "grow");
	struct dmt_fsverity_batch_params bp = {
		.tree = {.version = 1, .threads = 2}};
	struct dmt_fsverity_file f = {.size = 8 * MiB};
	struct dmt_fsverity_batch *b;
	struct out o;
	int fd;

	bp.done = one_done;
	bp.done_ctx = &o;
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	cr_assert_eq(ftruncate(fd, 8 * MiB + 1), 0);
	/* the caller's size is not the file's: found at the start */
	f.fd = fd;
	f.user = &o;
	memset(&o, 0, sizeof(o));
	cr_assert_eq(dmt_fsverity_batch_new(&bp, &b, NULL), 0);
	cr_assert_eq(dmt_fsverity_batch_add(b, &f, NULL), 0);
	cr_assert_eq(dmt_fsverity_batch_finish(b), 0);
	dmt_fsverity_batch_free(b);
	cr_expect_eq(o.reason.code, DMT_REASON_FSVERITY_SIZE_CHANGED);
	close(fd);
	free(path);
}
