// SPDX-License-Identifier: MIT
/*
 * One run over the library's batch interface: every listed file is queued
 * (the library fills the engine's lanes across files and reports them in
 * submission order), and each entry is printed, signed or written as soon
 * as it and everything before it is known, so the output order is the
 * list's whatever --threads.  Hard links wait for their first path's
 * digest; files that failed while listing are reported in their place.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <dmt/io.h>

#include "tools/fsverity-tool/fvt.h"

/* done() asks the batch to stop (--stop-on-error). */
#define STOPPED (-ECANCELED)

const char fvt_char_device[] = "character device";

/* A character device's bytes: none (its stat size is 0). */
static int read_nothing(void *ctx, void *buf, size_t count)
{
	(void)ctx;
	(void)buf;
	return count ? -EIO : 0;
}

/* The metadata callbacks of an entry (fvt_run_push), or NULL. */
static const struct dmt_fsverity_metadata_callbacks *
entry_callbacks(struct fvt *f, struct fvt_entry *e)
{
	if (f->out_dir_meta)
		return &e->cb;
	if (fvt_out_is_open(&f->tree_out) || fvt_out_is_open(&f->desc_out))
		return &f->joint_cb;
	return NULL;
}

/*
 * An unstated character device the batch refused (not regular), in its
 * done(): digested here as an empty file, its metadata written through
 * its callbacks.  The batch calls every file's callbacks and done() in
 * submission order, so the outputs keep fsverity's order.
 */
static int empty_digest(struct fvt *f, struct fvt_entry *e)
{
	struct dmt_fsverity_params p = f->p;
	struct dmt_reason r = {0};

	p.file_size = 0;
	p.metadata_callbacks = entry_callbacks(f, e);
	return dmt_fsverity_compute_digest(NULL, read_nothing, &p, &e->digest,
					   &r);
}

struct fvt_entry *fvt_entry_at(struct fvt *f, size_t i)
{
	return &f->list.e[i - f->list.base];
}

const struct fvt_entry *fvt_origin(const struct fvt *f,
				   const struct fvt_entry *e)
{
	const struct fvt_list *l = &f->list;
	size_t at, lo = 0, hi = l->nkept;

	if (e->alias < 0)
		return e;
	at = (size_t)e->alias;
	if (at >= l->base)
		return &l->e[at - l->base];
	/* printed and freed: its kept copy */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->kept[mid].at < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < l->nkept && l->kept[lo].at == at ? &l->kept[lo].e : e;
}

static int failed(struct fvt *f, int code)
{
	if (!f->first_err)
		f->first_err = code;
	if (f->stop_on_error)
		f->stop = true;
	return f->stop ? STOPPED : 0;
}

/* Every entry from next_print on whose result is known, in order. */
static int flush_ready(struct cli *c)
{
	struct fvt *f = fvt_of(c);
	int err = 0;

	while (!err && !f->stop && f->next_print < f->list.base + f->list.n) {
		struct fvt_entry *e = fvt_entry_at(f, f->next_print);
		const struct fvt_entry *o = fvt_origin(f, e);
		int rc;

		if (!o->done)
			break;
		f->next_print++;
		if (o->err || e->err) {
			fvt_entry_error(c, e);
			err = failed(f, fvt_entry_exit(o->err ? o : e));
			continue;
		}
		rc = f->emit(c, e);
		if (rc == -EINTR)
			return rc;
		if (rc)
			err = failed(f, rc < 0 ? tool_exit_code(rc) : rc);
	}
	return err;
}

int fvt_emit_nothing(struct cli *c, struct fvt_entry *e)
{
	(void)c;
	(void)e;
	return 0;
}

/* The entry index of a batch user pointer (see fvt_run_push). */
static size_t user_index(const void *user)
{
	return (size_t)(uintptr_t)user - 1;
}

static int on_done(void *ctx, const struct dmt_fsverity_result *res,
		   const struct dmt_reason *r)
{
	struct cli *c = ctx;
	struct fvt *f = fvt_of(c);
	struct fvt_entry *e = fvt_entry_at(f, user_index(res->user));
	bool unstated = e->size == FVT_SIZE_UNKNOWN;
	int err;

	e->done = true;
	e->nlink = res->nlink;
	e->err = res->err;
	e->why = NULL; /* a character device's mark (fvt_run_push) */
	if (res->err && unstated &&
	    r->code == DMT_REASON_FSVERITY_NOT_REGULAR &&
	    S_ISCHR((mode_t)r->value) && !empty_digest(f, e)) {
		e->err = 0;
		e->size = 0;
	} else if (res->err && unstated &&
		   r->code == DMT_REASON_FSVERITY_NOT_REGULAR) {
		/* what the listing would have said with a stat */
		fvt_not_regular(e, (mode_t)r->value);
	} else if (res->err) {
		e->reason = *r;
		e->reason.path = e->path; /* res->path dies after the call */
	} else {
		e->digest = res->digest;
		e->size = res->size;
		/* a hard link of an earlier or later entry: its digest */
		if (res->link_of)
			e->alias = (long)user_index(res->link_of);
	}
	if (e->size == FVT_SIZE_UNKNOWN)
		e->size = 0;
	if (f->out_dir_meta) {
		err = fvt_out_dir_finish(c, e, !e->err);
		if (err && !e->err)
			e->err = err;
	}
	f->bytes_done += e->size;
	err = tool_progress_cb(&f->progress, f->bytes_done,
			       f->list.total_bytes);
	return err ? err : flush_ready(c);
}

/* Streaming: the printed entries freed, those with several links kept
 * (a later link_of may name them).  Only when half of the list is
 * printed, so that each entry moves a bounded number of times. */
static int compact(struct fvt *f)
{
	struct fvt_list *l = &f->list;
	size_t drop = f->next_print - l->base;

	if (!f->streaming || !drop || drop < l->n / 2)
		return 0;
	for (size_t i = 0; i < drop; i++) {
		struct fvt_entry *e = &l->e[i];

		if (e->nlink > 1 && e->alias < 0) {
			struct fvt_kept *k;

			if (l->nkept == l->kept_cap) {
				size_t cap = l->kept_cap ? 2 * l->kept_cap : 64;

				k = realloc(l->kept, cap * sizeof(*k));
				if (!k)
					return -ENOMEM;
				l->kept = k;
				l->kept_cap = cap;
			}
			k = &l->kept[l->nkept++];
			k->at = l->base + i;
			k->e = *e;
			k->e.path = k->e.rel = NULL;
			k->e.reason.path = NULL;
		}
		free(e->path);
		free(e->rel);
	}
	memmove(l->e, l->e + drop, (l->n - drop) * sizeof(*l->e));
	l->n -= drop;
	l->base += drop;
	return 0;
}

int fvt_run_push(struct cli *c)
{
	struct fvt *f = fvt_of(c);
	size_t end = f->list.base + f->list.n;
	int err = 0;

	for (; !err && !f->stop && f->queued < end; f->queued++) {
		struct fvt_entry *e = fvt_entry_at(f, f->queued);
		struct dmt_fsverity_file file = {
			.fd = -1,
			.path = e->path,
			/* the size stat saw (the library checks it as it
			 * reads, without an fstat of its own), or unknown */
			.size = e->size,
			/* index + 1: the batch takes NULL for "no user" */
			.user = (void *)(uintptr_t)(f->queued + 1),
		};

		if (e->done || e->alias >= 0)
			continue;
		if (e->why == fvt_char_device) { /* as fsverity: 0 bytes */
			file.path = NULL;
			file.read_fn = read_nothing;
			file.size = 0;
		}
		if (f->out_dir_meta) {
			fvt_out_dir_callbacks(c, e);
			file.metadata_callbacks = &e->cb;
		} else if (fvt_out_is_open(&f->tree_out) ||
			   fvt_out_is_open(&f->desc_out)) {
			file.metadata_callbacks = &f->joint_cb;
		}
		err = dmt_fsverity_batch_add(f->batch, &file, NULL);
	}
	if (!err)
		err = flush_ready(c); /* errors found while listing */
	if (!err)
		err = compact(f);
	if (!err && f->stop)
		err = STOPPED;
	return err;
}

int fvt_run_drain(struct cli *c)
{
	struct fvt *f = fvt_of(c);
	int err = f->stop ? 0 : dmt_fsverity_batch_finish(f->batch);

	if (!err)
		err = flush_ready(c);
	if (!err)
		err = compact(f);
	if (!err && f->stop)
		err = STOPPED;
	return err;
}

int fvt_run_begin(struct cli *c)
{
	struct fvt *f = fvt_of(c);
	struct dmt_fsverity_batch_params bp = {
		.tree = f->p,
		.done = on_done,
		.done_ctx = c,
		/* the listing found the links of files it stat'ed */
		.links_once = f->dedup && f->defer_stat,
	};
	struct dmt_reason r = {0};
	int err;

	/* fsverity stops at the first file that fails */
	f->stop_on_error = cli_given(c, O_STOP_ON_ERROR) || fvt_fsverity_mode;
	f->queued = 0;
	err = dmt_fsverity_batch_new(&bp, &f->batch, &r);
	if (err)
		cli_reason_err(c, &r);
	return err;
}

int fvt_run_end(struct cli *c, int err)
{
	struct fvt *f = fvt_of(c);
	int ferr;

	if (!err)
		err = fvt_run_push(c);
	if (!err && !f->stop)
		err = dmt_fsverity_batch_finish(f->batch);
	if (!err)
		err = flush_ready(c); /* hard links and errors at the end */
	dmt_fsverity_batch_free(f->batch);
	f->batch = NULL;
	fvt_out_dir_finish(c, NULL, false); /* a file cut short */
	/* the finished files' outputs stay, whatever happened after them */
	ferr = fvt_out_flush();
	if (ferr && !f->first_err)
		f->first_err = tool_exit_code(ferr);
	tool_progress_finish(&f->progress, !err && !f->first_err);
	if (err == STOPPED)
		err = 0;
	if (err == -ENOMEM)
		tool_err("out of memory");
	if (err)
		return err;
	if (f->first_err)
		return f->first_err;
	err = fvt_out_commit(&f->tree_out);
	if (!err)
		err = fvt_out_commit(&f->desc_out);
	return err;
}

int fvt_run(struct cli *c)
{
	int err = fvt_run_begin(c);

	return err ? err : fvt_run_end(c, 0);
}
