// SPDX-License-Identifier: MIT
/*
 * The list of files a run digests, in its output order: the arguments as
 * given, then the --files-from paths; a directory under -r expands to its
 * regular files, entries sorted bytewise at every level.  Symlinks named
 * as arguments are followed; found under -r they are skipped (as devices,
 * FIFOs and sockets) with a note, or are errors with --strict.  Files that
 * are hard links of an earlier entry are marked as its aliases (hashed
 * once).  Paths are stat'ed on the worker threads in blocks (a list of
 * 50,000 files spends much of its listing time in stat), the list is
 * built from the results in order.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dmt/threads.h>

#include "tools/fsverity-tool/fvt.h"

/* (dev, ino) -> first entry, for files with more than one link (the
 * keys are held here: a streamed run frees printed entries). */
struct link_slot {
	dev_t dev;
	ino_t ino;
	long idx; /* entry index + 1; 0 = free */
};

struct link_map {
	struct link_slot *slot;
	size_t cap, used;
};

/* A worker's descriptor of the directory of the paths it stats. */
struct dir_fd {
	int fd;
	char *dir;
	size_t len, cap;
};

struct walk {
	struct cli *c;
	struct fvt *f;
	struct link_map links;
	bool recursive, strict;
	bool rels; /* --out-dir: the entries' output names */
	unsigned int threads;
	struct dir_fd *dirs; /* threads */
};

/* Paths stat'ed together, and per work item of that. */
#define STAT_BLOCK 4096
#define STAT_CHUNK 64

static size_t link_hash(dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)dev;

	return (size_t)(h ^ h >> 29);
}

static struct link_slot *link_probe(struct link_slot *slot, size_t cap,
				    dev_t dev, ino_t ino)
{
	size_t h = link_hash(dev, ino) & (cap - 1);

	while (slot[h].idx && (slot[h].dev != dev || slot[h].ino != ino))
		h = (h + 1) & (cap - 1);
	return &slot[h];
}

static int link_grow(struct link_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024;
	struct link_slot *slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slot[i].idx)
			*link_probe(slot, cap, m->slot[i].dev,
				    m->slot[i].ino) = m->slot[i];
	free(m->slot);
	m->slot = slot;
	m->cap = cap;
	return 0;
}

/* The first entry of this inode, or -1 after remembering idx as it. */
static long link_find_or_add(struct walk *w, long idx, dev_t dev, ino_t ino,
			     int *err)
{
	struct link_map *m = &w->links;
	struct link_slot *s;

	*err = 0;
	if ((m->used + 1) * 2 > m->cap) {
		*err = link_grow(m);
		if (*err)
			return -1;
	}
	s = link_probe(m->slot, m->cap, dev, ino);
	if (s->idx)
		return s->idx - 1;
	*s = (struct link_slot){.dev = dev, .ino = ino, .idx = idx + 1};
	m->used++;
	return -1;
}

static char *join(const char *dir, const char *name)
{
	size_t dl = strlen(dir);
	char *s = malloc(dl + strlen(name) + 2);

	if (s)
		sprintf(s, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/",
			name);
	return s;
}

/* Entries per block of a streamed run (the batch's window). */
#define STREAM_BLOCK 512

/* Streaming: a full block of new entries to the batch, hashed and
 * printed then, so that the next block reuses the list's memory and the
 * batch's. */
static int stream_block(struct walk *w)
{
	struct fvt *f = w->f;
	int err;

	if (!f->streaming || f->list.base + f->list.n - f->queued < STREAM_BLOCK)
		return 0;
	err = fvt_run_push(w->c);
	return err ? err : fvt_run_drain(w->c);
}

/* Room for n more entries (at most a streamed block's). */
static int reserve_entries(struct fvt_list *l, size_t n)
{
	struct fvt_entry *e;

	if (n > STREAM_BLOCK)
		n = STREAM_BLOCK;
	if (l->n + n <= l->cap)
		return 0;
	e = realloc(l->e, (l->n + n) * sizeof(*e));
	if (!e)
		return -ENOMEM;
	l->e = e;
	l->cap = l->n + n;
	return 0;
}

/* A new entry for path, taken over (freed on failure, as rel).  With
 * defer_stat the listing's stat (if any) only chose the type: size and
 * links are the library's open and fstat's to find, hard links its
 * links_once's. */
static int add_entry_own(struct walk *w, char *path, char *rel,
			 const struct stat *st, int err, const char *why)
{
	struct fvt_list *l = &w->f->list;
	struct fvt_entry *e;
	size_t idx;
	int lerr = 0;

	if (w->f->defer_stat)
		st = NULL;

	if (!path) {
		free(rel);
		return -ENOMEM;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct fvt_entry *n = realloc(l->e, cap * sizeof(*n));

		if (!n) {
			free(path);
			free(rel);
			return -ENOMEM;
		}
		l->e = n;
		l->cap = cap;
	}
	e = &l->e[l->n];
	idx = l->base + l->n;
	memset(e, 0, sizeof(*e));
	e->alias = -1;
	e->path = path;
	e->rel = rel;
	l->n++;
	e->err = err;
	e->why = why;
	e->done = err != 0; /* nothing to wait for */
	if (!err && !st)
		e->size = FVT_SIZE_UNKNOWN;
	if (err || !st)
		return stream_block(w);
	e->size = (uint64_t)st->st_size;
	if (w->f->dedup && st->st_nlink > 1)
		e->alias = link_find_or_add(w, (long)idx, st->st_dev,
					    st->st_ino, &lerr);
	if (e->alias < 0)
		l->total_bytes += e->size;
	return lerr ? lerr : stream_block(w);
}

/* The same for a path that stays the caller's (copied). */
static int add_entry(struct walk *w, const char *path, char *rel,
		     const struct stat *st, int err, const char *why)
{
	return add_entry_own(w, strdup(path), rel, st, err, why);
}

static const char *kind_of(mode_t m)
{
	return S_ISLNK(m)    ? "symlink"
	       : S_ISFIFO(m) ? "FIFO"
	       : S_ISSOCK(m) ? "socket"
	       : S_ISCHR(m)  ? "character device"
	       : S_ISBLK(m)  ? "block device"
			     : "special file";
}

#define DIR_TEXT "is a directory (-r digests the files in it)"

void fvt_not_regular(struct fvt_entry *e, mode_t mode)
{
	e->err = S_ISDIR(mode) ? -EISDIR : -EINVAL;
	e->why = S_ISDIR(mode) ? DIR_TEXT : kind_of(mode);
}

/* A directory entry: its name and readdir's type (DT_UNKNOWN when the
 * filesystem does not say). */
struct dir_name {
	char *name;
	unsigned char type;
};

static int cmp_names(const void *a, const void *b)
{
	return strcmp(((const struct dir_name *)a)->name,
		      ((const struct dir_name *)b)->name);
}

/* The entries of a directory, sorted bytewise by name (malloc'ed). */
static int read_names(const char *path, struct dir_name **out, size_t *n)
{
	DIR *d = opendir(path);
	struct dirent *de;
	struct dir_name *v = NULL;
	size_t cap = 0;
	int err = 0;

	*n = 0;
	if (!d)
		return -errno;
	while (!err && (errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (*n == cap) {
			struct dir_name *nv = realloc(
				v, (cap = cap ? 2 * cap : 64) * sizeof(*v));

			if (!nv) {
				err = -ENOMEM;
				break;
			}
			v = nv;
		}
		v[*n].name = strdup(de->d_name);
		v[*n].type = de->d_type;
		if (!v[*n].name)
			err = -ENOMEM;
		else
			(*n)++;
	}
	if (!err && errno)
		err = -errno;
	closedir(d);
	if (!err)
		qsort(v, *n, sizeof(*v), cmp_names);
	*out = v;
	return err;
}

static int walk_dir(struct walk *w, const char *dir, const char *rel);

/* One entry found under -r, lstat'ed (st, or err). */
static int walk_child(struct walk *w, const char *path, const char *rel,
		      const struct stat *st, int serr)
{
	char *r = strdup(rel);

	if (!r)
		return -ENOMEM;
	if (serr)
		return add_entry(w, path, r, NULL, serr, NULL);
	if (S_ISDIR(st->st_mode)) {
		int err = walk_dir(w, path, r);

		free(r);
		return err;
	}
	if (S_ISREG(st->st_mode))
		return add_entry(w, path, r, st, 0, NULL);
	if (w->strict)
		return add_entry(w, path, r, NULL, -EINVAL,
				 kind_of(st->st_mode));
	tool_info("%s: note: %s: skipped (%s; --strict makes it an error)",
		  tool_name, path, kind_of(st->st_mode));
	free(r);
	return 0;
}

/*
 * stat (follow) or lstat of paths[0, n) on the workers, then
 * visit(i, st, err) on this thread in order: the system calls of a big
 * list run in parallel, the list keeps its order.
 */
struct stat_job {
	char **paths;
	struct stat *st;
	int *err;
	bool follow;
	struct dir_fd *dirs;
};

static bool dir_fd_set(struct dir_fd *d, const char *path, size_t len)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	if (len + 1 > d->cap) {
		char *n = realloc(d->dir, len + 1);

		if (!n)
			return false;
		d->dir = n;
		d->cap = len + 1;
	}
	memcpy(d->dir, path, len);
	d->dir[len] = 0;
	d->len = len;
	d->fd = open(d->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return d->fd >= 0;
}

/* stat or lstat of path through d, the descriptor of its directory
 * (paths of one directory come together: the walk down to it is done
 * once); anything unusual takes the plain call and its error. */
static int stat_at(struct dir_fd *d, const char *path, struct stat *st,
		   bool follow)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 0;

	if (!len || !slash[1] ||
	    ((d->fd < 0 || d->len != len || memcmp(d->dir, path, len)) &&
	     !dir_fd_set(d, path, len)))
		return follow ? stat(path, st) : lstat(path, st);
	return fstatat(d->fd, slash + 1, st, follow ? 0 : AT_SYMLINK_NOFOLLOW);
}

static int stat_range(void *ctx, unsigned int wid, uint64_t begin, uint64_t end)
{
	struct stat_job *j = ctx;

	for (uint64_t i = begin; i < end; i++) {
		int rc = stat_at(&j->dirs[wid], j->paths[i], &j->st[i],
				 j->follow);

		j->err[i] = rc < 0 ? -errno : 0;
	}
	return 0;
}

/* The workers' directory descriptors, on the first stat (a run that
 * stats nothing needs no thread count). */
static int stat_threads(struct walk *w)
{
	if (w->dirs)
		return 0;
	w->threads = w->f->p.threads ? w->f->p.threads : dmt_default_threads();
	w->dirs = calloc(w->threads, sizeof(*w->dirs));
	if (!w->dirs)
		return -ENOMEM;
	for (unsigned int i = 0; i < w->threads; i++)
		w->dirs[i].fd = -1;
	return 0;
}

typedef int (*visit_fn)(struct walk *w, void *ctx, size_t i,
			const struct stat *st, int err);

static int stat_visit(struct walk *w, char **paths, size_t n, bool follow,
		      visit_fn visit, void *ctx)
{
	struct stat_job j = {.paths = paths, .follow = follow};
	int err = stat_threads(w);

	if (err)
		return err;
	j.dirs = w->dirs;
	j.st = malloc(n * sizeof(*j.st) + 1);
	j.err = malloc(n * sizeof(*j.err) + 1);
	err = j.st && j.err ? 0 : -ENOMEM;
	if (!err)
		err = dmt_parallel_for(w->threads, n, STAT_CHUNK, stat_range,
				       &j);
	for (size_t i = 0; !err && i < n; i++)
		err = visit(w, ctx, i, &j.st[i], j.err[i]);
	free(j.st);
	free(j.err);
	return err;
}

struct dir_block {
	const char *dir, *rel;
	char **paths;
	struct dir_name *names;
};

static int visit_child(struct walk *w, void *ctx, size_t i,
		       const struct stat *st, int serr)
{
	struct dir_block *d = ctx;
	const char *name = d->names[i].name;
	char *r = *d->rel ? join(d->rel, name) : strdup(name);
	int err = r ? walk_child(w, d->paths[i], r, st, serr) : -ENOMEM;

	free(r);
	return err;
}

/* Without stat (defer_stat): when readdir gave the type, a mode of that
 * type in st (the library's fstat finds the rest of a regular file). */
static bool type_of_entry(const struct walk *w, unsigned char type,
			  struct stat *st)
{
	if (!w->f->defer_stat || type == DT_UNKNOWN)
		return false;
	memset(st, 0, sizeof(*st));
	st->st_mode = DTTOIF(type);
	return true;
}

/* The entries of a block whose type readdir gave, visited in order
 * without a stat; the others stat'ed on the workers in between. */
static int visit_block(struct walk *w, struct dir_block *d, size_t n)
{
	size_t i = 0, k;
	int err = 0;

	while (!err && i < n) {
		struct stat st;

		if (type_of_entry(w, d->names[i].type, &st)) {
			err = visit_child(w, d, i++, &st, 0);
			continue;
		}
		for (k = i; k < n && !type_of_entry(w, d->names[k].type, &st);
		     k++)
			;
		{
			struct dir_block part = *d;

			part.paths += i;
			part.names += i;
			err = stat_visit(w, part.paths, k - i, false,
					 visit_child, &part);
		}
		i = k;
	}
	return err;
}

static void free_names(struct dir_name *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].name);
	free(v);
}

static void free_strings(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
}

static int walk_dir(struct walk *w, const char *dir, const char *rel)
{
	struct dir_block d = {.dir = dir, .rel = rel};
	struct dir_name *names = NULL;
	size_t n = 0, i, k = 0, cnt = 0;
	int err = read_names(dir, &names, &n);

	if (err == -ENOMEM)
		goto out;
	if (err) {
		char *r = strdup(*rel ? rel : ".");

		err = r ? add_entry(w, dir, r, NULL, err, NULL) : -ENOMEM;
		goto out;
	}
	d.paths =
		malloc((n < STAT_BLOCK ? n : STAT_BLOCK) * sizeof(char *) + 1);
	err = d.paths ? 0 : -ENOMEM;
	for (k = 0; !err && k < n; k += cnt) {
		cnt = n - k < STAT_BLOCK ? n - k : STAT_BLOCK;
		d.names = names + k;
		for (i = 0; i < cnt; i++)
			d.paths[i] = join(dir, d.names[i].name);
		for (i = 0; !err && i < cnt; i++)
			err = d.paths[i] ? 0 : -ENOMEM;
		if (!err)
			err = visit_block(w, &d, cnt);
		free_strings(d.paths, cnt);
	}
	free(d.paths);
out:
	free_names(names, n);
	return err;
}

/* The --out-dir name of a FILE argument: its last component. */
static char *arg_rel(const char *path)
{
	const char *base = strrchr(path, '/');

	return strdup(base && base[1] ? base + 1 : path);
}

/* A FILE argument's entry (its output name only with --out-dir); own:
 * path itself is taken over. */
static int add_file_arg(struct walk *w, const char *path, bool own,
			const struct stat *st, const char *why)
{
	char *rel = w->rels ? arg_rel(path) : NULL;
	char *p = own ? (char *)path : strdup(path);

	if (w->rels && !rel) {
		free(p);
		return -ENOMEM;
	}
	return add_entry_own(w, p, rel, st, 0, why);
}

/* A FILE argument or --files-from path, stat'ed (st, or serr). */
static int add_arg(struct walk *w, const char *path, const struct stat *st,
		   int serr)
{
	if (serr)
		return add_entry(w, path, NULL, NULL, serr, NULL);
	if (S_ISDIR(st->st_mode) && w->recursive)
		return walk_dir(w, path, "");
	if (S_ISCHR(st->st_mode))
		return add_file_arg(w, path, false, NULL, fvt_char_device);
	if (!S_ISREG(st->st_mode)) {
		struct fvt_entry probe;

		fvt_not_regular(&probe, st->st_mode);
		return add_entry(w, path, NULL, NULL, probe.err, probe.why);
	}
	return add_file_arg(w, path, false, st, NULL);
}

/* A path taken without stat (defer_stat, no -r): the library's open and
 * fstat say what it is. */
static int add_unstated(struct walk *w, char *path)
{
	return add_file_arg(w, path, true, NULL, NULL);
}

static int visit_arg(struct walk *w, void *ctx, size_t i, const struct stat *st,
		     int serr)
{
	return add_arg(w, ((char **)ctx)[i], st, serr);
}

/* Paths in blocks of STAT_BLOCK (taken over, freed). */
struct path_block {
	char **v;
	size_t n;
};

static int flush_paths(struct walk *w, struct path_block *pb)
{
	int err = stat_visit(w, pb->v, pb->n, true, visit_arg, pb->v);

	free_strings(pb->v, pb->n);
	pb->n = 0;
	return err;
}

static int push_path(struct walk *w, struct path_block *pb, char *path)
{
	if (!path)
		return -ENOMEM;
	if (w->f->defer_stat && !w->recursive)
		return add_unstated(w, path); /* taken over */
	pb->v[pb->n++] = path;
	return pb->n == STAT_BLOCK ? flush_paths(w, pb) : 0;
}

static int files_from(struct walk *w, struct path_block *pb, const char *name,
		      bool nul)
{
	FILE *in = strcmp(name, "-") ? fopen(name, "re") : stdin;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int err = 0;

	if (!in) {
		err = -errno;
		tool_err_errno(name, "cannot read --files-from", err);
		return err;
	}
	while (!err &&
	       (len = getdelim(&line, &cap, nul ? '\0' : '\n', in)) > 0) {
		if (line[len - 1] == (nul ? '\0' : '\n'))
			line[--len] = 0;
		if (len)
			err = push_path(w, pb, strdup(line));
	}
	if (!err && ferror(in)) {
		err = -EIO;
		tool_err_errno(name, "cannot read --files-from", err);
	}
	free(line);
	if (in != stdin)
		fclose(in);
	return err;
}

static int cmp_rel(const void *a, const void *b)
{
	const struct fvt_entry *x = *(const struct fvt_entry *const *)a;
	const struct fvt_entry *y = *(const struct fvt_entry *const *)b;

	return strcmp(x->rel ? x->rel : "", y->rel ? y->rel : "");
}

/* --out-dir: two files may not share an output name. */
static int unique_rels(struct fvt_list *l)
{
	struct fvt_entry **v = malloc((l->n + 1) * sizeof(*v));
	size_t n = 0;
	int err = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++)
		if (l->e[i].rel && !l->e[i].err)
			v[n++] = &l->e[i];
	qsort(v, n, sizeof(*v), cmp_rel);
	for (size_t i = 1; i < n && !err; i++) {
		if (!strcmp(v[i - 1]->rel, v[i]->rel)) {
			tool_err("--out-dir: '%s' and '%s' would both be "
				 "written as '%s'",
				 v[i - 1]->path, v[i]->path, v[i]->rel);
			err = -EINVAL;
		}
	}
	free(v);
	return err;
}

void fvt_plan(struct cli *c)
{
	struct fvt *f = fvt_of(c);

	if (f->planned)
		return;
	f->planned = true;
	/* progress from the listing on; its total needs every size */
	tool_progress_init(&f->progress, c->nargs ? c->args[0] : "-", "hashed",
			   c->progress_frequency, c->progress_json);
	f->defer_stat = !f->progress.enabled;
}

int fvt_collect(struct cli *c, const char *const *args, int nargs)
{
	struct walk w = {.c = c,
			 .f = fvt_of(c),
			 .recursive = cli_given(c, O_RECURSIVE),
			 .strict = cli_given(c, O_STRICT),
			 .rels = cli_given(c, O_OUT_DIR)};
	struct path_block pb = {.v = malloc(STAT_BLOCK * sizeof(char *))};
	int err = pb.v ? 0 : -ENOMEM;

	fvt_plan(c);
	if (cli_given(c, O_NULL) && !cli_given(c, O_FILES_FROM)) {
		tool_err("-0/--null needs --files-from");
		err = -EINVAL;
	}
	/* the FILE arguments' entries in one allocation, not grown by
	 * copies (a first touch of a page is dear) */
	if (!err && !w.recursive)
		err = reserve_entries(&w.f->list, (size_t)nargs);
	for (int i = 0; !err && i < nargs; i++)
		err = push_path(&w, &pb, strdup(args[i]));
	if (!err && cli_given(c, O_FILES_FROM))
		err = files_from(&w, &pb, cli_str(c, O_FILES_FROM),
				 cli_given(c, O_NULL));
	if (!err && pb.n)
		err = flush_paths(&w, &pb);
	free_strings(pb.v, pb.n);
	free(pb.v);
	free(w.links.slot);
	for (unsigned int i = 0; w.dirs && i < w.threads; i++) {
		if (w.dirs[i].fd >= 0)
			close(w.dirs[i].fd);
		free(w.dirs[i].dir);
	}
	free(w.dirs);
	if (!err && !w.f->list.base && !w.f->list.n && !nargs &&
	    !cli_given(c, O_FILES_FROM)) {
		tool_err("%s: no FILE given (see --help)", c->cmd_name);
		c->usage_error = true;
		return -EINVAL;
	}
	if (!err && cli_given(c, O_OUT_DIR))
		err = unique_rels(&w.f->list);
	if (err == -ENOMEM)
		tool_err("out of memory");
	return err;
}

void fvt_list_free(struct fvt_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->e[i].path);
		free(l->e[i].rel);
	}
	free(l->e);
	free(l->kept);
	memset(l, 0, sizeof(*l));
}
