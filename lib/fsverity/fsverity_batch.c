// SPDX-License-Identifier: MIT
/*
 * Digests of many files (dmt_fsverity_batch_*).
 *
 * Files are queued (QUEUE_FILES); a full queue, or finish, is a window.
 * A window is cut into segments at its "turn" files, hashed at their turn
 * by the calling thread with every worker (fv_stream_root): read
 * callbacks, files too big for one worker (see SOLO_SHARE), files with
 * metadata callbacks that do not fit a worker's buffer.  A segment is
 * planned into chunks of consecutive files (at most CHUNK_FILES,
 * CHUNK_BYTES of data; a bigger file is a chunk alone) that the workers
 * take one at a time and finish alone with their own buffers: open, one
 * pread per file, the data blocks
 * of all the chunk's files in one dmt_hash call and each tree level of
 * them in one more (the engine's lanes are filled across files: a 3 KiB
 * file's block shares a call with its neighbours'), then the descriptors
 * and their digests in one call.  A file bigger than the worker's buffer
 * is streamed by that worker alone.  No stage waits for the others, the
 * only barriers are the ends of segments; the biggest chunks are handed
 * out first so that none of them is left for the end.
 *
 * Results leave in submission order on the calling thread: when it runs
 * chunks itself (as dmt_parallel_for's worker 0 does) it reports every
 * completed chunk in order between its own; what is left, when the
 * segment is done.  Trees of files with metadata callbacks are kept until
 * they are reported (at most TREE_KEEP bytes; a file that does not fit
 * waits for its turn).
 */
#include "lib/common/reserved.h"
#include "lib/fsverity/fsverity_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dmt/threads.h>

#include "lib/common/walk.h"

/* Files per window (an item is a few hundred bytes). */
#define QUEUE_FILES 8192
/* A chunk: this many files or this much data (its files' slots). */
#define CHUNK_FILES 32
#define CHUNK_BYTES (256u << 10)
/* A worker hashes its pending files once they hold this much data (and
 * a file more would not fit): the part of its buffer that small files
 * touch stays small (a first touch of a page costs more than hashing it
 * on some VMs), and the engine's lanes are still filled. */
#define PEND_BYTES (128u << 10)
/* Files over a worker's buffer are streamed by one worker alone when
 * they are at most a SOLO_SHARE-th of the window's bytes per worker and
 * SOLO_CAP (the biggest go first, so no worker is left with one at the
 * end), with all workers at their turn otherwise. */
#define SOLO_SHARE 4
#define SOLO_CAP   (64ull << 20)
/* The same for a file whose size was only found when it was opened (the
 * plan could not put it first): an end left to one worker is shorter. */
#define SOLO_LATE  (SOLO_CAP / 4)
/* Bigger blocks: every file is a turn file. */
#define CHUNK_MAX_BS (1u << 20)
/* Tree bytes kept for metadata callbacks until they are reported: half
 * the memory budget of the bulk buffers (the workers' take the rest). */
#define TREE_KEEP    (DMT_WALK_MEM_BUDGET / 2)
#define SIZE_UNKNOWN UINT64_MAX

struct item {
	struct dmt_fsverity_file f;
	char *path;	/* copy of f.path */
	bool own_fd;	/* opened here */
	bool turn;	/* hashed by the calling thread at its turn */
	uint64_t nlink;	/* from the batch's fstat (f.size was unknown) */
	uint64_t size;	/* SIZE_UNKNOWN until fstat */
	uint32_t chunk; /* in the running segment */
	int err;
	struct dmt_reason reason;
	uint8_t *tree; /* kept for the metadata callbacks */
	uint64_t tree_bytes;
	void *link_of; /* links_once: the user of this inode's first path */
	uint8_t root[DMT_FSVERITY_MAX_DIGEST];
	uint8_t digest[DMT_FSVERITY_MAX_DIGEST];
};

/* links_once: (dev, ino) -> user pointer of the first path opened. */
struct link_slot {
	dev_t dev;
	ino_t ino;
	void *user;
	bool used;
};

struct link_map {
	pthread_mutex_t lock;
	struct link_slot *slot;
	size_t cap, used;
};

struct chunk {
	uint32_t first, n;
	uint64_t bytes; /* planned data bytes */
	int done;	/* atomic: its files' results are final */
};

struct order {
	uint64_t bytes;
	uint32_t chunk;
};

/* A worker's own buffers and the files it has read, not hashed yet. */
struct bworker {
	struct dmt_hasher *hdesc;
	int dir_fd; /* O_PATH of dir: the directory of its last file */
	char *dir;
	size_t dir_len, dir_cap;
	const uint8_t **msgs; /* item_blocks: one round */
	uint8_t **outs;
	uint8_t *tree; /* trees of files without callbacks */
	uint64_t tree_cap;
	uint8_t *desc; /* CHUNK_FILES descriptors */
	uint8_t *desc_digest;
	unsigned int npend;
	uint64_t used; /* bytes of the fv_worker's io */
	struct item *pend[CHUNK_FILES];
	uint8_t *pend_tree[CHUNK_FILES];
	uint64_t pend_off[CHUNK_FILES]; /* data in io */
	/* CHUNK_FILES geometries (33 KiB), each written before it is read:
	 * malloc'ed, not zeroed, so that only the ones used are touched */
	struct fv_geo *g;
};

struct dmt_fsverity_batch {
	struct fv_engine e;
	dmt_fsverity_done_fn done;
	void *done_ctx;
	struct bworker *bw; /* e.threads */
	struct item *items; /* QUEUE_FILES */
	unsigned int nitems;
	struct chunk *chunks; /* of the running segment */
	struct order *order;  /* chunks as handed out */
	unsigned int next;    /* first item not reported */
	unsigned int seg_end; /* the running segment's items end here */
	uint64_t io_cap;      /* bytes of a worker's io */
	uint64_t solo_max;    /* bigger files: turn files */
	uint64_t tree_kept;   /* atomic */
	pthread_t caller;
	int stopped; /* done's non-zero return */
	bool links_once;
	struct link_map links;
};

static uint64_t round_up(uint64_t v, uint64_t bs)
{
	return (v + bs - 1) / bs * bs;
}

/* Room a file takes in a worker's io: its blocks and the byte after. */
static uint64_t slot_bytes(const struct dmt_fsverity_batch *b, uint64_t size)
{
	return round_up(size + 1, b->e.bs);
}

static int alloc_bworkers(struct dmt_fsverity_batch *b)
{
	b->bw = calloc(b->e.threads, sizeof(*b->bw));
	if (!b->bw)
		return -ENOMEM;
	for (unsigned int i = 0; i < b->e.threads; i++)
		b->bw[i].dir_fd = -1;
	return 0;
}

void dmt_fsverity_batch_params_init(struct dmt_fsverity_batch_params *p)
{
	*p = (struct dmt_fsverity_batch_params){ 0 };
	dmt_fsverity_params_init(&p->tree);
}

void dmt_fsverity_file_init(struct dmt_fsverity_file *f)
{
	*f = (struct dmt_fsverity_file){ .fd = -1, .size = UINT64_MAX };
}

/* A worker's hasher and buffers, on its first chunk (a small batch runs
 * on fewer workers than it may have). */
static int bworker_ready(struct dmt_fsverity_batch *b, unsigned int wid)
{
	const struct fv_engine *e = &b->e;
	struct bworker *bw = &b->bw[wid];
	int err;

	if (bw->hdesc)
		return 0;
	err = dmt_hasher_clone(e->hdesc, &bw->hdesc);
	if (err)
		return err;
	bw->msgs = malloc(e->item_blocks * sizeof(*bw->msgs));
	bw->outs = malloc(e->item_blocks * sizeof(*bw->outs));
	bw->desc = malloc(CHUNK_FILES * DMT_FSVERITY_DESCRIPTOR_SIZE);
	bw->desc_digest = malloc(CHUNK_FILES * DMT_FSVERITY_MAX_DIGEST);
	bw->g = malloc(CHUNK_FILES * sizeof(*bw->g));
	if (bw->msgs && bw->outs && bw->desc && bw->desc_digest && bw->g)
		return 0;
	/* all or nothing: a later call tries again */
	dmt_hasher_free(bw->hdesc);
	free(bw->msgs);
	free(bw->outs);
	free(bw->desc);
	free(bw->desc_digest);
	free(bw->g);
	bw->hdesc = NULL;
	bw->msgs = NULL;
	bw->outs = NULL;
	bw->desc = bw->desc_digest = NULL;
	bw->g = NULL;
	return -ENOMEM;
}

int dmt_fsverity_batch_new(const struct dmt_fsverity_batch_params *p,
			   struct dmt_fsverity_batch **out,
			   struct dmt_reason *r)
{
	struct dmt_fsverity_batch *b;
	int err;

	*out = NULL;
	err = DMT_CHECK_RESERVED(p, r);
	if (err)
		return err;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	err = fv_engine_init(&b->e, &p->tree, r);
	if (err) {
		free(b);
		return err;
	}
	b->done = p->done;
	b->done_ctx = p->done_ctx;
	b->links_once = p->links_once;
	pthread_mutex_init(&b->links.lock, NULL);
	b->io_cap = b->e.item_blocks * b->e.bs;
	b->items = calloc(QUEUE_FILES, sizeof(*b->items));
	b->chunks = calloc(QUEUE_FILES, sizeof(*b->chunks));
	b->order = calloc(QUEUE_FILES, sizeof(*b->order));
	err = b->items && b->chunks && b->order ? alloc_bworkers(b) : -ENOMEM;
	if (err) {
		dmt_fsverity_batch_free(b);
		return err;
	}
	*out = b;
	return 0;
}

static void close_own(struct item *it)
{
	if (it->own_fd && it->f.fd >= 0)
		close(it->f.fd);
	if (it->own_fd)
		it->f.fd = -1;
	it->own_fd = false;
}

static void drop_tree(struct dmt_fsverity_batch *b, struct item *it)
{
	free(it->tree);
	it->tree = NULL;
	__atomic_sub_fetch(&b->tree_kept, it->tree_bytes, __ATOMIC_RELAXED);
	it->tree_bytes = 0;
}

static void item_release(struct dmt_fsverity_batch *b, struct item *it)
{
	close_own(it);
	drop_tree(b, it);
	free(it->path);
	it->path = NULL;
}

void dmt_fsverity_batch_free(struct dmt_fsverity_batch *b)
{
	if (!b)
		return;
	for (unsigned int i = b->next; b->items && i < b->nitems; i++)
		item_release(b, &b->items[i]);
	for (unsigned int i = 0; b->bw && i < b->e.threads; i++) {
		struct bworker *bw = &b->bw[i];

		dmt_hasher_free(bw->hdesc);
		if (bw->dir_fd >= 0)
			close(bw->dir_fd);
		free(bw->dir);
		free(bw->msgs);
		free(bw->outs);
		free(bw->tree);
		free(bw->desc);
		free(bw->desc_digest);
		free(bw->g);
	}
	free(b->bw);
	free(b->links.slot);
	pthread_mutex_destroy(&b->links.lock);
	fv_engine_free(&b->e);
	free(b->items);
	free(b->chunks);
	free(b->order);
	free(b);
}

/* ---- opening and reading (on the workers) ---- */

static void io_error(struct item *it, int err)
{
	it->err = dmt_reason_set(&it->reason, err, DMT_REASON_IO, NULL,
				 (uint64_t)-err);
	it->reason.path = it->path;
}

static void not_regular(struct item *it, mode_t mode)
{
	it->err = dmt_reason_set(&it->reason, S_ISDIR(mode) ? -EISDIR : -EINVAL,
				 DMT_REASON_FSVERITY_NOT_REGULAR, NULL, mode);
	it->reason.path = it->path;
}

/* A file that could not be read as a regular file of its size: not a
 * regular file (any more: its size may have come from an earlier stat),
 * or err, or a size change.  Costs an fstat only on this path. */
static void read_failed(struct item *it, int err)
{
	struct fv_source src = {.path = it->path};
	struct stat st;

	if (it->f.fd >= 0 && fstat(it->f.fd, &st) == 0 && !S_ISREG(st.st_mode))
		not_regular(it, st.st_mode);
	else if (err && err != -ENODATA)
		io_error(it, err);
	else
		it->err = fv_size_changed(&src, it->size, &it->reason);
}

/* The worker's descriptor of the directory path[0, len). */
static bool dir_cache_set(struct bworker *bw, const char *path, size_t len)
{
	if (bw->dir_fd >= 0)
		close(bw->dir_fd);
	bw->dir_fd = -1;
	if (len + 1 > bw->dir_cap) {
		char *d = realloc(bw->dir, len + 1);

		if (!d)
			return false;
		bw->dir = d;
		bw->dir_cap = len + 1;
	}
	memcpy(bw->dir, path, len);
	bw->dir[len] = 0;
	bw->dir_len = len;
	bw->dir_fd = open(bw->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return bw->dir_fd >= 0;
}

/* open() of a path, on a worker (bw) through its descriptor of the
 * file's directory: consecutive files of one directory skip the walk
 * down to it (a good part of an open).  Anything unusual, or a directory
 * that cannot be opened, takes the plain open() and its error. */
static int open_path(struct bworker *bw, const char *path)
{
	/* no blocking on a FIFO, no controlling terminal from a tty */
	const int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 0;

	if (!bw || !len || !slash[1])
		return open(path, flags);
	if ((bw->dir_fd < 0 || bw->dir_len != len ||
	     memcmp(bw->dir, path, len)) &&
	    !dir_cache_set(bw, path, len))
		return open(path, flags);
	return openat(bw->dir_fd, slash + 1, flags);
}

/* At the end of a window: no directory held open, nothing pending (a
 * chunk cut short by an error). */
static void workers_reset(struct dmt_fsverity_batch *b)
{
	for (unsigned int i = 0; i < b->e.threads; i++) {
		if (b->bw[i].dir_fd >= 0)
			close(b->bw[i].dir_fd);
		b->bw[i].dir_fd = -1;
		b->bw[i].npend = 0;
		b->bw[i].used = 0;
	}
}

static size_t link_hash(dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)dev;

	return (size_t)(h ^ h >> 29);
}

static struct link_slot *link_probe(struct link_slot *slot, size_t cap,
				    dev_t dev, ino_t ino)
{
	size_t h = link_hash(dev, ino) & (cap - 1);

	while (slot[h].used && (slot[h].dev != dev || slot[h].ino != ino))
		h = (h + 1) & (cap - 1);
	return &slot[h];
}

/* The first path of st's inode: NULL after making it this item, or the
 * user pointer of an earlier one (then this item is not read). */
static int link_claim(struct link_map *m, const struct stat *st, void *user,
		      void **first)
{
	struct link_slot *s;
	int err = 0;

	*first = NULL;
	pthread_mutex_lock(&m->lock);
	if ((m->used + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 256;
		struct link_slot *n = calloc(cap, sizeof(*n));

		if (!n) {
			err = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < m->cap; i++)
			if (m->slot[i].used)
				*link_probe(n, cap, m->slot[i].dev,
					    m->slot[i].ino) = m->slot[i];
		free(m->slot);
		m->slot = n;
		m->cap = cap;
	}
	s = link_probe(m->slot, m->cap, st->st_dev, st->st_ino);
	if (s->used) {
		*first = s->user;
	} else {
		*s = (struct link_slot){.dev = st->st_dev, .ino = st->st_ino,
					.user = user, .used = true};
		m->used++;
	}
out:
	pthread_mutex_unlock(&m->lock);
	return err;
}

/* A path that could not be opened: not a regular file when stat says so
 * (a socket, a device that refuses), else the open's error. */
static void open_failed(struct item *it, int err)
{
	struct stat st;

	if (stat(it->path, &st) == 0 && !S_ISREG(st.st_mode))
		not_regular(it, st.st_mode);
	else
		io_error(it, err);
}

/* Opens a path (on worker bw, or NULL) and finds a size not given (and,
 * with links_once, whether its inode was opened before); errors stay in
 * the item (reported in order). */
static void open_item(struct dmt_fsverity_batch *b, struct bworker *bw,
		      struct item *it)
{
	struct stat st;
	int err;

	if (it->f.fd < 0 && it->path) {
		it->f.fd = open_path(bw, it->path);
		if (it->f.fd < 0) {
			open_failed(it, -errno);
			return;
		}
		it->own_fd = true;
	}
	if (it->f.fd < 0 || it->size != SIZE_UNKNOWN)
		return;
	if (fstat(it->f.fd, &st) < 0) {
		io_error(it, -errno);
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		not_regular(it, st.st_mode);
		return;
	}
	it->size = (uint64_t)st.st_size;
	it->nlink = (uint64_t)st.st_nlink;
	/* link_of names the first path by its user pointer: none, no dedup */
	if (!b->links_once || st.st_nlink < 2 || it->f.metadata_callbacks ||
	    !it->f.user)
		return;
	err = link_claim(&b->links, &st, it->f.user, &it->link_of);
	if (err)
		io_error(it, err);
}

/*
 * The file into slot (its slot_bytes), normally with one pread of its
 * size and the byte after: a short read that reached the size is the
 * end of the file, the byte after means that it grew.
 */
static void read_item(struct item *it, uint8_t *slot, uint64_t slot_len)
{
	size_t want = (size_t)it->size + 1, got = 0;
	int err = 0;

	while (got < want) {
		size_t ask = want - got;
		ssize_t n = pread(it->f.fd, slot + got, ask, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : 0;
			break;
		}
		got += (size_t)n;
		if (got >= it->size && (size_t)n < ask)
			break;
	}
	if (err || got != it->size)
		read_failed(it, err);
	else
		memset(slot + got, 0, slot_len - got);
}

/* ---- hashing a worker's pending files ---- */

/* Tree buffers of the pending files: the kept ones allocated (their
 * bytes were reserved), the others in the worker's scratch. */
static int layout_trees(struct dmt_fsverity_batch *b, struct bworker *bw)
{
	uint64_t scratch = 0, off[CHUNK_FILES];
	unsigned int i;

	for (i = 0; i < bw->npend; i++) {
		struct item *it = bw->pend[i];

		off[i] = scratch;
		if (it->tree_bytes) {
			it->tree = calloc(1, it->tree_bytes);
			if (!it->tree)
				return -ENOMEM;
		} else {
			scratch += bw->g[i].tree_blocks * b->e.bs;
		}
	}
	if (scratch > bw->tree_cap) {
		uint8_t *t = realloc(bw->tree, scratch);

		if (!t)
			return -ENOMEM;
		bw->tree = t;
		bw->tree_cap = scratch;
	}
	if (scratch)
		memset(bw->tree, 0, scratch);
	/* no scratch at all (every pending file is one block): no tree,
	 * and no offset from a NULL buffer */
	for (i = 0; i < bw->npend; i++)
		bw->pend_tree[i] = bw->pend[i]->tree ? bw->pend[i]->tree
				   : bw->tree	     ? bw->tree + off[i]
						     : NULL;
	return 0;
}

/* Round r: the data blocks (r == 0) or the blocks of level r - 1 of every
 * pending file that has them, hashed in one call into level r or the
 * root. */
static int hash_round(struct dmt_fsverity_batch *b, struct bworker *bw,
		      struct fv_worker *w, unsigned int r, bool *any)
{
	size_t bs = b->e.bs, ds = b->e.ds, n = 0;
	int err;

	*any = false;
	for (unsigned int i = 0; i < bw->npend; i++) {
		const struct fv_geo *g = &bw->g[i];
		uint8_t *tree = bw->pend_tree[i];
		const uint8_t *src;
		uint64_t cnt;

		if (!g->data_blocks || r > g->levels)
			continue;
		if (r == 0) {
			src = w->io + bw->pend_off[i];
			cnt = g->data_blocks;
		} else {
			src = tree + g->level_start[r - 1] * bs;
			cnt = g->level_blocks[r - 1];
		}
		for (uint64_t k = 0; k < cnt; k++, n++) {
			bw->msgs[n] = src + k * bs;
			bw->outs[n] =
				r < g->levels
					? tree + g->level_start[r] * bs + k * ds
					: bw->pend[i]->root;
		}
		*any = true;
	}
	if (!n)
		return 0;
	err = dmt_hasher_digest(w->h, n, bw->msgs, NULL, w->dig);
	for (size_t k = 0; !err && k < n; k++)
		memcpy(bw->outs[k], w->dig + k * ds, ds);
	return err;
}

/* Trees, roots, descriptors and digests of the pending files. */
static int hash_pending(struct dmt_fsverity_batch *b, unsigned int wid)
{
	const size_t dsz = DMT_FSVERITY_DESCRIPTOR_SIZE;
	struct bworker *bw = &b->bw[wid];
	bool any = true;
	unsigned int i;
	int err;

	if (!bw->npend)
		return 0;
	err = layout_trees(b, bw);
	for (i = 0; !err && i < bw->npend; i++)
		memset(bw->pend[i]->root, 0, b->e.ds); /* empty files */
	for (unsigned int r = 0; !err && any; r++)
		err = hash_round(b, bw, &b->e.w[wid], r, &any);
	for (i = 0; !err && i < bw->npend; i++)
		fv_descriptor(&b->e, bw->pend[i]->size, bw->pend[i]->root,
			      bw->desc + i * dsz);
	if (!err)
		err = dmt_hasher_digest_strided(bw->hdesc, bw->npend, bw->desc,
						dsz, NULL, bw->desc_digest);
	for (i = 0; !err && i < bw->npend; i++)
		memcpy(bw->pend[i]->digest, bw->desc_digest + i * b->e.ds,
		       b->e.ds);
	bw->npend = 0;
	bw->used = 0;
	return err;
}

/* A file bigger than the worker's buffer, streamed by this worker alone
 * (no metadata callbacks: those run on the calling thread). */
static int solo_item(struct dmt_fsverity_batch *b, unsigned int wid,
		     struct item *it)
{
	struct fv_engine solo = b->e;
	struct fv_source src = {.fd = it->f.fd, .path = it->path};
	uint8_t desc[DMT_FSVERITY_DESCRIPTOR_SIZE];
	const uint8_t *msg = desc;

	solo.threads = 1;
	solo.w = &b->e.w[wid];
	solo.window = NULL;
	it->err = fv_stream_root(&solo, &src, it->size, NULL, it->root,
				 &it->reason);
	if (it->err == -ENOMEM)
		return -ENOMEM;
	if (it->err && it->reason.code == DMT_REASON_IO)
		read_failed(it, it->err);
	if (it->err)
		return 0;
	fv_descriptor(&b->e, it->size, it->root, desc);
	return dmt_hasher_digest(b->bw[wid].hdesc, 1, &msg, NULL, it->digest);
}

/* Files hashed by the calling thread at their turn; known before they
 * are opened (plan) or when their size is found (worker). */
static bool needs_turn(const struct dmt_fsverity_batch *b,
		       const struct item *it)
{
	if (b->e.bs > CHUNK_MAX_BS || (it->f.fd < 0 && !it->path))
		return true;
	if (it->size == SIZE_UNKNOWN || slot_bytes(b, it->size) <= b->io_cap)
		return false;
	/* f.size unknown: the size was found when the file was opened */
	return it->size > (it->f.size == SIZE_UNKNOWN ? SOLO_LATE
						      : b->solo_max) ||
	       it->f.metadata_callbacks;
}

/* Reserves the kept tree of a file with metadata callbacks; false when
 * the window's budget is spent. */
static bool reserve_tree(struct dmt_fsverity_batch *b, struct item *it,
			 const struct fv_geo *g)
{
	uint64_t bytes = g->tree_blocks * b->e.bs;

	if (!it->f.metadata_callbacks || !bytes)
		return true;
	if (__atomic_add_fetch(&b->tree_kept, bytes, __ATOMIC_RELAXED) >
	    TREE_KEEP) {
		__atomic_sub_fetch(&b->tree_kept, bytes, __ATOMIC_RELAXED);
		return false;
	}
	it->tree_bytes = bytes;
	return true;
}

/* One file of a chunk: read into the worker's io (pending), streamed
 * alone, or left for its turn. */
static int chunk_file(struct dmt_fsverity_batch *b, unsigned int wid,
		      struct item *it)
{
	struct bworker *bw = &b->bw[wid];
	uint64_t slot;
	int err = 0;

	open_item(b, bw, it);
	if (it->err || it->link_of) {
		close_own(it);
		return 0;
	}
	if (needs_turn(b, it)) {
		it->turn = true;
		close_own(it); /* opened again at its turn */
		return 0;
	}
	slot = slot_bytes(b, it->size);
	if (slot > b->io_cap) {
		err = hash_pending(b, wid);
		if (!err)
			err = solo_item(b, wid, it);
		close_own(it);
		return err;
	}
	if (bw->used + slot > b->io_cap || bw->npend == CHUNK_FILES ||
	    (bw->npend && bw->used + slot > PEND_BYTES))
		err = hash_pending(b, wid);
	if (err)
		return err;
	fv_geometry(&b->e, it->size, &bw->g[bw->npend]);
	if (!reserve_tree(b, it, &bw->g[bw->npend])) {
		it->turn = true;
		close_own(it);
		return 0;
	}
	read_item(it, b->e.w[wid].io + bw->used, slot);
	close_own(it);
	if (it->err) {
		drop_tree(b, it);
		return 0;
	}
	bw->pend[bw->npend] = it;
	bw->pend_off[bw->npend++] = bw->used;
	bw->used += slot;
	return 0;
}

static int emit_ready(struct dmt_fsverity_batch *b, bool in_job);

static int chunk_job(void *ctx, unsigned int wid, uint64_t begin, uint64_t end)
{
	struct dmt_fsverity_batch *b = ctx;
	int err = bworker_ready(b, wid);

	for (uint64_t k = begin; !err && k < end; k++) {
		struct chunk *c = &b->chunks[b->order[k].chunk];

		for (uint32_t i = c->first; !err && i < c->first + c->n; i++)
			err = chunk_file(b, wid, &b->items[i]);
		if (!err)
			err = hash_pending(b, wid);
		if (!err)
			__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	}
	if (!err && pthread_equal(pthread_self(), b->caller))
		err = emit_ready(b, true);
	return err;
}

/* ---- results (on the calling thread) ---- */

/* done's r for a file with a digest */
static const struct dmt_reason no_reason;

static int report(struct dmt_fsverity_batch *b, struct item *it)
{
	const struct dmt_fsverity_metadata_callbacks *cb =
		it->f.metadata_callbacks;
	struct dmt_fsverity_result res = {.user = it->f.user,
					  .path = it->path,
					  .size = it->size,
					  .link_of = it->link_of,
					  .nlink = it->nlink};
	uint8_t desc[DMT_FSVERITY_DESCRIPTOR_SIZE];

	if (it->link_of && !it->err)
		goto out;
	if (!it->err && cb && cb->descriptor) {
		fv_descriptor(&b->e, it->size, it->root, desc);
		it->err = cb->descriptor(cb->ctx, desc, sizeof(desc));
	}
	res.err = it->err;
	if (!it->err) {
		fv_digest_init(&b->e, &res.digest);
		memcpy(res.digest.digest, it->digest, b->e.ds);
	}
out:
	b->stopped = b->done ? b->done(b->done_ctx, &res,
				       it->err ? &it->reason : &no_reason) :
			       0;
	return b->stopped;
}

/* The kept tree of a chunk's file, then its result. */
static int report_chunk_file(struct dmt_fsverity_batch *b, struct item *it)
{
	const struct dmt_fsverity_metadata_callbacks *cb =
		it->f.metadata_callbacks;
	uint64_t bs = b->e.bs, blocks = it->tree_bytes / bs;
	int err = 0;

	if (!it->err && cb && cb->merkle_tree_size)
		err = cb->merkle_tree_size(cb->ctx, it->tree_bytes);
	for (uint64_t k = 0;
	     !it->err && !err && cb && cb->merkle_tree_block && k < blocks; k++)
		err = cb->merkle_tree_block(cb->ctx, it->tree + k * bs, bs,
					    k * bs);
	if (err)
		it->err = err;
	return report(b, it);
}

/* A turn file: streamed with every worker. */
static int run_turn(struct dmt_fsverity_batch *b, struct item *it)
{
	struct fv_source src;
	uint8_t desc[DMT_FSVERITY_DESCRIPTOR_SIZE];
	const uint8_t *msg = desc;
	int err = 0;

	open_item(b, NULL, it);
	if (it->link_of)
		return report(b, it);
	if (!it->err) {
		src = (struct fv_source){.fd = it->f.fd,
					 .read_fn = it->f.read_fn,
					 .read_ctx = it->f.read_ctx,
					 .path = it->path};
		it->err = fv_stream_root(&b->e, &src, it->size,
					 it->f.metadata_callbacks, it->root,
					 &it->reason);
		if (it->err && it->f.fd >= 0 &&
		    it->reason.code == DMT_REASON_IO)
			read_failed(it, it->err);
	}
	if (!it->err) {
		fv_descriptor(&b->e, it->size, it->root, desc);
		err = dmt_hasher_digest(b->e.hdesc, 1, &msg, NULL, it->digest);
	}
	return err ? err : report(b, it);
}

/* Reports the files of the segment in order as far as they are done; in
 * a job (worker 0), turn files wait for the segment's end. */
static int emit_ready(struct dmt_fsverity_batch *b, bool in_job)
{
	int err = 0;

	while (!err && b->next < b->seg_end) {
		struct item *it = &b->items[b->next];

		if (!__atomic_load_n(&b->chunks[it->chunk].done,
				     __ATOMIC_ACQUIRE) ||
		    (it->turn && in_job))
			break;
		err = it->turn ? run_turn(b, it) : report_chunk_file(b, it);
		item_release(b, it);
		b->next++;
	}
	return err;
}

/* ---- windows ---- */

static int cmp_order(const void *x, const void *y)
{
	const struct order *a = x, *c = y;

	return a->bytes < c->bytes ? 1 : a->bytes > c->bytes ? -1 : 0;
}

/* Chunks of the items from `from` up to the next planned turn file (or
 * the end): returned count, *end the index of that file.  Big chunks
 * first in the order, biggest first; then the others in file order. */
static unsigned int plan_segment(struct dmt_fsverity_batch *b,
				 unsigned int from, unsigned int *end)
{
	unsigned int i, n = 0, nbig = 0, k;
	struct chunk *c = NULL;

	for (i = from; i < b->nitems; i++) {
		struct item *it = &b->items[i];
		uint64_t bytes = it->size == SIZE_UNKNOWN
					 ? b->e.bs
					 : slot_bytes(b, it->size);

		if (needs_turn(b, it)) {
			it->turn = true;
			break;
		}
		if (!c || c->n == CHUNK_FILES ||
		    c->bytes + bytes > CHUNK_BYTES) {
			c = &b->chunks[n++];
			*c = (struct chunk){.first = i};
		}
		c->n++;
		c->bytes += bytes;
		it->chunk = n - 1;
	}
	*end = i;
	for (k = 0; k < n; k++) {
		if (b->chunks[k].bytes > CHUNK_BYTES)
			b->order[nbig++] =
				(struct order){b->chunks[k].bytes, k};
	}
	qsort(b->order, nbig, sizeof(*b->order), cmp_order);
	for (k = 0; k < n; k++) {
		if (b->chunks[k].bytes <= CHUNK_BYTES)
			b->order[nbig++] =
				(struct order){b->chunks[k].bytes, k};
	}
	return n;
}

/* The biggest file a worker streams alone in this window. */
static uint64_t solo_limit(const struct dmt_fsverity_batch *b)
{
	uint64_t known = 0, lim;

	for (unsigned int i = 0; i < b->nitems; i++) {
		if (b->items[i].size != SIZE_UNKNOWN)
			known += b->items[i].size;
	}
	lim = known / (SOLO_SHARE * b->e.threads);
	return lim < SOLO_CAP ? lim : SOLO_CAP;
}

/* Hashes and reports every queued file. */
static int run_window(struct dmt_fsverity_batch *b)
{
	unsigned int from = 0, end, n;
	int err = 0;

	b->caller = pthread_self();
	b->next = 0;
	b->solo_max = solo_limit(b);
	while (!err && from < b->nitems) {
		n = plan_segment(b, from, &end);
		b->seg_end = end;
		if (n)
			err = dmt_parallel_for(b->e.threads, n, 1, chunk_job,
					       b);
		if (!err)
			err = emit_ready(b, false);
		if (!err && end < b->nitems) {
			err = run_turn(b, &b->items[end]);
			item_release(b, &b->items[end]);
			b->next = end + 1;
		}
		from = end + 1;
	}
	for (unsigned int i = b->next; i < b->nitems; i++)
		item_release(b, &b->items[i]);
	b->nitems = b->next = 0;
	workers_reset(b);
	return err;
}

int dmt_fsverity_batch_add(struct dmt_fsverity_batch *b,
			   const struct dmt_fsverity_file *f,
			   struct dmt_reason *r)
{
	struct item *it;
	int err;

	if (b->stopped)
		return b->stopped;
	err = DMT_CHECK_RESERVED(f, r);
	if (err)
		return err;
	if (f->fd < 0 && !f->path && !f->read_fn)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_MISSING, "fd", 0);
	if (b->nitems == QUEUE_FILES) {
		err = run_window(b);
		if (err)
			return err;
	}
	it = &b->items[b->nitems];
	memset(it, 0, sizeof(*it));
	it->f = *f;
	it->size = f->size;
	if (f->path) {
		it->path = strdup(f->path);
		if (!it->path)
			return -ENOMEM;
	}
	b->nitems++;
	return 0;
}

int dmt_fsverity_batch_finish(struct dmt_fsverity_batch *b)
{
	int err = 0;

	if (!b->stopped && b->nitems)
		err = run_window(b);
	return b->stopped ? b->stopped : err;
}
