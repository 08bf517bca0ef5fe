// SPDX-License-Identifier: MIT
/*
 * dm-verity FEC: encoder, streaming parity check and round decoder.
 *
 * Parity is linear in the message, so instead of running Karn's LFSR one
 * codeword at a time (what veritysetup does), every message symbol j adds
 * coef[j][i] * symbol to parity byte i.  For a group of consecutive rounds
 * the symbols j of all their codewords are one contiguous run of the
 * covered area (row j of the block matrix), so the encoder reads whole
 * rows in large chunks and multiply-accumulates them into `roots`
 * byte-planes with table lookups or GFNI, one group per thread.
 */
#include <dmt/fec.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lib/common/cpu.h"
#include "lib/common/file.h"
#include "lib/common/overlay.h"
#include "lib/common/reserved.h"
#include "lib/common/walk.h"
#include "lib/common/dispatch.h"
#include "lib/fec/fec_gf256.h"
#include "lib/fec/fec_priv.h"
#include <dmt/threads.h>

/* Accumulator planes per worker (roots x group width), at most; with
 * the band, half of a worker's share of DMT_WALK_MEM_BUDGET each. */
#define ACC_BUDGET (8u << 20)
/* Widest group: rows are read in chunks of this size. */
#define WIDTH_MAX (1u << 20)
/* Narrowest group worth splitting off for another thread. */
#define WIDTH_MIN (256u << 10)
/* Rows of input held per worker at once. */
#define BAND_BUDGET (4u << 20)

struct fec_worker {
	uint8_t *band;		/* band_rows x in_stride */
	uint8_t *acc;		/* roots planes of width bytes */
	uint8_t *par;		/* width * roots, codeword order */
	uint8_t *stored;	/* scan: parity read back */
};

struct dmt_fec {
	const struct dmt_fec_params *p;
	struct dmt_fec_layout l;
	struct dmt_rs rs;
	const struct dmt_gf256_ops *gf;	/* the dispatcher's choice */
	uint8_t *prepped;	/* coefficients as gf->prep made them, or NULL */
	const uint8_t *coefs;	/* prepped, or rs.coef when gf->prep is NULL */

	/* streaming pass */
	unsigned int threads;
	uint64_t group_rounds;	/* rounds per group */
	uint64_t groups;
	size_t width;		/* widest group, bytes */
	size_t in_stride;
	size_t band_rows;
	bool contiguous;	/* one group holds every round */
	bool scan;		/* compare parity instead of writing it */
	uint64_t *bad;		/* scan: bitmap of rounds */
	struct fec_worker *workers;
	struct dmt_walk walk;	/* progress, cancellation, first error */

	/* correction */
	const struct dmt_fec_ops *ops;
	unsigned int flags;
	struct dmt_fec_stats st;
	/* blocks accepted (corrected and verified) in this run: contents
	 * when checking, numbers only when repairing (the files have them) */
	struct dmt_overlay *ov;
};

static bool is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

int dmt_fec_geometry(unsigned int roots, uint32_t block_size,
		     uint64_t data_blocks, uint64_t hash_start,
		     uint64_t hash_blocks, uint64_t fec_offset,
		     struct dmt_fec_layout *l)
{
	uint64_t bs = block_size;

	memset(l, 0, sizeof(*l));
	if (roots < DMT_FEC_ROOTS_MIN || roots > DMT_FEC_ROOTS_MAX ||
	    !is_pow2(bs) || bs < 512 || bs > (512u << 10) || !data_blocks ||
	    fec_offset % 512)
		return -EINVAL;
	if (hash_blocks > UINT64_MAX - data_blocks ||
	    hash_start > UINT64_MAX - hash_blocks ||
	    (hash_start + hash_blocks) > UINT64_MAX / bs ||
	    (data_blocks + hash_blocks) > UINT64_MAX / bs)
		return -ERANGE;
	l->roots = roots;
	l->rsn = DMT_FEC_RSM - roots;
	l->block_size = block_size;
	l->data_blocks = data_blocks;
	l->hash_start = hash_start;
	l->hash_blocks = hash_blocks;
	l->fec_blocks = data_blocks + hash_blocks;
	l->rounds = div_up(l->fec_blocks, l->rsn);
	l->parity_blocks = l->rounds * roots;
	if (l->parity_blocks > UINT64_MAX / bs)
		return -ERANGE;
	l->parity_bytes = l->parity_blocks * bs;
	if (fec_offset > UINT64_MAX - l->parity_bytes)
		return -ERANGE;
	l->fec_offset = fec_offset;
	l->fec_start = fec_offset / bs;
	l->fec_end = fec_offset + l->parity_bytes;
	return 0;
}

static bool overlaps(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	return a0 < b1 && b0 < a1;
}

void dmt_fec_params_init(struct dmt_fec_params *p)
{
	memset(p, 0, sizeof(*p));
	p->roots = DMT_FEC_ROOTS_DEFAULT;
}

/* The reason for an error of dmt_fec_geometry() on p's values. */
static int geometry_err(const struct dmt_fec_params *p, uint64_t hash_blocks,
			int err, struct dmt_reason *r)
{
	uint64_t bs = p->block_size;

	if (err == -ERANGE)
		return dmt_reason_set(r, err, DMT_REASON_TOO_LARGE,
				      "data_blocks", p->data_blocks);
	if (p->roots < DMT_FEC_ROOTS_MIN || p->roots > DMT_FEC_ROOTS_MAX) {
		dmt_reason_set(r, err, DMT_REASON_OUT_OF_RANGE, "roots",
			       p->roots);
		if (r) {
			r->min = DMT_FEC_ROOTS_MIN;
			r->max = DMT_FEC_ROOTS_MAX;
		}
		return err;
	}
	if (!is_pow2(bs) || bs < 512 || bs > (512u << 10))
		return dmt_reason_set(r, err, DMT_REASON_BAD_VALUE,
				      "block_size", bs);
	if (!p->data_blocks)
		return dmt_reason_set(r, err, DMT_REASON_MISSING,
				      "data_blocks", 0);
	if (p->fec_offset % 512) {
		dmt_reason_set(r, err, DMT_REASON_NOT_ALIGNED, "fec_offset",
			       p->fec_offset);
		if (r)
			r->max = 512;
		return err;
	}
	return dmt_reason_set(r, err, DMT_REASON_BAD_VALUE, "hash_blocks",
			      hash_blocks);
}

static int overlap_err(struct dmt_reason *r, const char *what)
{
	dmt_reason_set(r, -EINVAL, DMT_REASON_VERITY_AREA_OVERLAP, "fec", 0);
	if (r)
		r->field2 = what;
	return -EINVAL;
}

int dmt_fec_layout(const struct dmt_fec_params *p, struct dmt_fec_layout *l,
		   struct dmt_reason *r)
{
	uint64_t bs = p->block_size, hash_blocks = p->hash_blocks, end;
	bool shared;
	int err;

	memset(l, 0, sizeof(*l));
	err = DMT_CHECK_RESERVED(p, r);
	if (err)
		return err;
	if (!p->data || !p->hash || !p->fec)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_MISSING,
				      !p->data ? "data" :
				      !p->hash ? "hash" : "fec", 0);
	if (!bs)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_BAD_VALUE,
				      "block_size", 0);
	shared = dmt_file_same(p->fec, p->hash);
	if (!hash_blocks) {
		if (shared) {
			end = p->fec_offset / bs;
		} else {
			err = dmt_file_size(p->hash, &end);
			if (err < 0) {
				dmt_reason_set(r, err, DMT_REASON_IO, "hash",
					       (uint64_t)-err);
				if (r)
					r->path = dmt_file_path(p->hash);
				return err;
			}
			end /= bs;
		}
		if (end < p->hash_start) {
			if (shared)
				return overlap_err(r, "hash");
			dmt_reason_set(r, -ENODATA,
				       DMT_REASON_DEVICE_TOO_SMALL, "hash",
				       end * bs);
			if (r) {
				r->min = p->hash_start * bs;
				r->path = dmt_file_path(p->hash);
			}
			return -ENODATA;
		}
		hash_blocks = end - p->hash_start;
	}
	err = dmt_fec_geometry(p->roots, p->block_size, p->data_blocks,
			       p->hash_start, hash_blocks, p->fec_offset, l);
	if (err < 0)
		return geometry_err(p, hash_blocks, err, r);
	l->shared = shared;

	/* The parity must not overwrite what it protects. */
	if (dmt_file_same(p->fec, p->data) &&
	    overlaps(l->fec_offset, l->fec_end, 0, l->data_blocks * bs))
		return overlap_err(r, "data");
	if (shared && l->fec_offset < (l->hash_start + l->hash_blocks) * bs)
		return overlap_err(r, "hash");
	return 0;
}

/* ---- covered area I/O ---- */

/*
 * Reads len bytes at offset off of the covered area (data blocks, then the
 * covered hash blocks, then zeros).  Adds the bytes that came from files
 * to *covered when it is not NULL.
 */
static int read_covered(const struct dmt_fec *f, uint64_t off, size_t len,
			uint8_t *buf, uint64_t *covered)
{
	const struct dmt_fec_layout *l = &f->l;
	uint64_t data_end = l->data_blocks * l->block_size;
	uint64_t total = l->fec_blocks * l->block_size;
	size_t n;
	int r = 0;

	while (len) {
		if (off < data_end) {
			n = data_end - off < len ? data_end - off : len;
			r = dmt_pread_full(f->p->data, buf, n, off);
		} else if (off < total) {
			n = total - off < len ? total - off : len;
			r = dmt_pread_full(f->p->hash, buf, n,
					   l->hash_start * l->block_size +
					   (off - data_end));
		} else {
			memset(buf, 0, len);
			break;
		}
		if (r < 0)
			goto out;
		if (covered)
			*covered += n;
		buf += n;
		off += n;
		len -= n;
	}
out:
	return r;
}

static int write_block(struct dmt_fec *f, uint64_t block, const uint8_t *buf)
{
	uint64_t fb;
	bool hash = dmt_fec_block_is_hash(&f->l, block, &fb);

	return dmt_pwrite_full(hash ? f->p->hash : f->p->data, buf,
			       f->l.block_size, fb * f->l.block_size);
}

/* ---- streaming pass: encode or compare ---- */

static void *alloc64(size_t size)
{
	void *p = NULL;

	if (posix_memalign(&p, 64, size ? size : 64))
		return NULL;
	return p;
}

static int worker_buffers(struct dmt_fec *f, struct fec_worker *w)
{
	size_t planes = (size_t)f->l.roots * f->width;

	if (w->band)
		return 0;
	w->band = alloc64(f->band_rows * f->in_stride);
	w->acc = alloc64(planes);
	w->par = alloc64(planes);
	if (f->scan)
		w->stored = alloc64(planes);
	if (!w->band || !w->acc || !w->par || (f->scan && !w->stored))
		return -ENOMEM;
	return 0;
}

static void mac(const struct dmt_fec *f, uint8_t *acc, const uint8_t *in,
		size_t nrows, unsigned int row0, size_t len)
{
	unsigned int roots = f->l.roots;

	f->gf->mac(acc, f->width, roots, in, f->in_stride, nrows,
		   f->coefs + (size_t)row0 * roots * f->gf->coef_size, len);
}

/* Planes (stride apart) into codeword order: par[x * roots + i]. */
static void transpose(const uint8_t *acc, size_t stride, unsigned int roots,
		      uint8_t *par, size_t len)
{
	unsigned int i;
	size_t x;

	for (i = 0; i < roots; i++) {
		const uint8_t *a = acc + i * stride;

		for (x = 0; x < len; x++)
			par[x * roots + i] = a[x];
	}
}

static int do_group(struct dmt_fec *f, struct fec_worker *w, uint64_t g)
{
	const struct dmt_fec_layout *l = &f->l;
	uint64_t bs = l->block_size, rounds = l->rounds;
	uint64_t n0 = g * f->group_rounds, nr, rows, j0, k, covered;
	uint64_t parity_off;
	size_t len, plen, i;
	int r;

	nr = rounds - n0 < f->group_rounds ? rounds - n0 : f->group_rounds;
	len = nr * bs;
	plen = len * l->roots;
	parity_off = l->fec_offset + n0 * bs * l->roots;
	/* rows past the covered area are all zero: they add nothing */
	rows = div_up(l->fec_blocks - n0, rounds);
	if (rows > l->rsn)
		rows = l->rsn;

	for (i = 0; i < l->roots; i++)
		memset(w->acc + i * f->width, 0, len);
	for (j0 = 0; j0 < rows; j0 += f->band_rows) {
		k = rows - j0 < f->band_rows ? rows - j0 : f->band_rows;
		covered = 0;
		if (f->contiguous) {
			r = read_covered(f, j0 * rounds * bs, k * len, w->band,
					 &covered);
		} else {
			for (i = 0, r = 0; i < k && !r; i++)
				r = read_covered(f, ((j0 + i) * rounds + n0) *
						 bs, len,
						 w->band + i * f->in_stride,
						 &covered);
		}
		if (r < 0)
			goto out;
		mac(f, w->acc, w->band, k, (unsigned int)j0, len);
		r = dmt_walk_progress(&f->walk, covered);
		if (r < 0)
			goto out;
	}
	transpose(w->acc, f->width, l->roots, w->par, len);

	if (!f->scan) {
		r = dmt_pwrite_full(f->p->fec, w->par, plen, parity_off);
		goto out;
	}
	r = dmt_pread_full(f->p->fec, w->stored, plen, parity_off);
	if (r < 0)
		goto out;
	for (k = 0; k < nr; k++) {
		size_t o = k * bs * l->roots;
		uint64_t n = n0 + k;

		if (memcmp(w->par + o, w->stored + o, bs * l->roots))
			__atomic_fetch_or(&f->bad[n / 64], 1ull << (n % 64),
					  __ATOMIC_RELAXED);
	}
out:
	return r;
}

static int group_fn(void *ctx, unsigned int worker, uint64_t begin,
		    uint64_t end)
{
	struct dmt_fec *f = ctx;
	struct fec_worker *w = &f->workers[worker];
	uint64_t g;
	int r;

	r = worker_buffers(f, w);
	for (g = begin; g < end && !r; g++)
		r = dmt_walk_stopped(&f->walk) ? -EINTR : do_group(f, w, g);
	return r;
}

/* Splits the rounds into groups: wide enough for big reads, enough of
 * them to keep every thread busy, accumulators within budget. */
static void plan_groups(struct dmt_fec *f)
{
	const struct dmt_fec_layout *l = &f->l;
	uint64_t bs = l->block_size, rounds = l->rounds;
	uint64_t share = DMT_WALK_MEM_BUDGET / f->threads;
	uint64_t wmax = ACC_BUDGET / l->roots, gmax, gmin, groups;
	uint64_t band = BAND_BUDGET < share / 2 ? BAND_BUDGET : share / 2;

	/* accumulators, parity and (scan) parity read back */
	if (wmax > share / 2 / (3 * l->roots))
		wmax = share / 2 / (3 * l->roots);
	if (wmax > WIDTH_MAX)
		wmax = WIDTH_MAX;
	gmax = wmax / bs ? wmax / bs : 1;
	gmin = WIDTH_MIN / bs ? WIDTH_MIN / bs : 1;
	groups = div_up(rounds, gmax);
	if (groups < f->threads && rounds / gmin > groups)
		groups = rounds / gmin < f->threads ? rounds / gmin :
			f->threads;
	if (groups > 1 && groups % f->threads)
		groups += f->threads - groups % f->threads;
	f->group_rounds = div_up(rounds, groups);
	f->groups = div_up(rounds, f->group_rounds);
	f->width = f->group_rounds * bs;
	f->contiguous = f->groups == 1;
	/* pad rows of separately read bands off a 4 KiB multiple so they
	 * don't all land in the same L1 sets */
	f->in_stride = f->contiguous ? f->width : f->width + 64;
	f->band_rows = band / f->in_stride;
	if (f->band_rows < 1)
		f->band_rows = 1;
	if (f->band_rows > l->rsn)
		f->band_rows = l->rsn;
	if (f->threads > f->groups)
		f->threads = (unsigned int)f->groups;
}

static void fec_free(struct dmt_fec *f)
{
	unsigned int i;

	if (f->workers) {
		for (i = 0; i < f->threads; i++) {
			free(f->workers[i].band);
			free(f->workers[i].acc);
			free(f->workers[i].par);
			free(f->workers[i].stored);
		}
	}
	free(f->workers);
	free(f->prepped);
	free(f->bad);
	dmt_walk_destroy(&f->walk);
}

/*
 * The multiply-add the dispatcher picks (lib/common/dispatch.c: gfni > avx2
 * > ssse3 > portable unless the engine spec says otherwise), with every
 * coefficient prepared once in the form it reads (GFNI matrices, PSHUFB
 * nibble tables, or the coefficient bytes as they are).
 */
static int setup_simd(struct dmt_fec *f)
{
	size_t i, n = (size_t)f->l.rsn * f->l.roots;
	int r = dmt_gf256_choose(f->p->engine, &f->gf);

	if (r < 0)
		return r;
	f->coefs = f->rs.coef;
	if (!f->gf->prep)
		return 0;
	f->prepped = alloc64(n * f->gf->coef_size);
	if (!f->prepped)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		f->gf->prep(f->rs.coef[i], f->prepped + i * f->gf->coef_size);
	f->coefs = f->prepped;
	return 0;
}

static int fec_init(struct dmt_fec *f, const struct dmt_fec_params *p,
		    struct dmt_reason *why)
{
	int r;

	memset(f, 0, sizeof(*f));
	dmt_walk_init(&f->walk, 1, &p->progress, 0);
	f->p = p;
	r = dmt_fec_layout(p, &f->l, why);
	if (r < 0)
		goto out;
	r = dmt_rs_init(&f->rs, p->roots);
	if (r < 0)
		goto out;
	f->threads = p->threads ? p->threads : dmt_default_threads();
	if (!f->threads)
		f->threads = 1;
	plan_groups(f);
	f->walk.threads = f->threads;
	f->walk.total = f->l.fec_blocks * f->l.block_size;
	r = -ENOMEM;
	f->workers = calloc(f->threads, sizeof(*f->workers));
	if (!f->workers)
		goto out;
	r = setup_simd(f);
out:
	return r;
}

static int stream_pass(struct dmt_fec *f)
{
	struct dmt_walk_pass pass = { .items = f->groups, .fn = group_fn,
				      .ctx = f };

	return dmt_walk_run(&f->walk, &pass);
}

int dmt_fec_encode(const struct dmt_fec_params *p,
		   struct dmt_fec_layout *layout, struct dmt_reason *why)
{
	struct dmt_fec f;
	int r;

	r = fec_init(&f, p, why);
	if (r < 0)
		goto out;
	if (layout)
		*layout = f.l;
	/* grow the file first so a full disk shows up before the work */
	r = dmt_file_extend(p->fec, f.l.fec_end);
	if (r < 0)
		goto out;
	r = stream_pass(&f);
out:
	fec_free(&f);
	return r;
}

/* ---- blocks accepted in this run ---- */

static bool accepted(const struct dmt_fec *f, uint64_t block)
{
	return dmt_overlay_has(f->ov, block);
}

int dmt_fec_read_block(struct dmt_fec *f, uint64_t block, uint8_t *buf)
{
	uint64_t bs = f->l.block_size;
	int r = dmt_overlay_get(f->ov, block, buf);

	if (r)
		return r < 0 ? r : 0;
	if (block >= f->l.fec_blocks) {
		memset(buf, 0, bs);
		return 0;
	}
	return read_covered(f, block * bs, bs, buf, NULL);
}

const struct dmt_fec_layout *dmt_fec_get_layout(const struct dmt_fec *f)
{
	return &f->l;
}

/* ---- round decoder ---- */

enum row_kind {
	ROW_RAW,	/* as read from the file */
	ROW_PAD,	/* past the covered area: zero */
	ROW_KNOWN,	/* accepted earlier in this run: trusted */
	ROW_IOERR,	/* unreadable: zeros, an erasure */
};

struct round {
	uint64_t n;
	uint8_t *buf;		/* rsn blocks */
	uint8_t *par;		/* bs * roots, codeword order */
	uint8_t kind[DMT_FEC_RSM];
	uint32_t changed[DMT_FEC_RSM];	/* symbols fixed per row */
	bool parity_changed;
};

static uint64_t row_block(const struct dmt_fec *f, const struct round *rd,
			  unsigned int j)
{
	return (uint64_t)j * f->l.rounds + rd->n;
}

static int load_round(struct dmt_fec *f, struct round *rd)
{
	const struct dmt_fec_layout *l = &f->l;
	size_t bs = l->block_size;
	unsigned int j;
	int r;

	for (j = 0; j < l->rsn; j++) {
		uint64_t b = row_block(f, rd, j);
		uint8_t *dst = rd->buf + j * bs;

		rd->changed[j] = 0;
		if (b >= l->fec_blocks) {
			memset(dst, 0, bs);
			rd->kind[j] = ROW_PAD;
			continue;
		}
		r = dmt_overlay_get(f->ov, b, dst);
		if (r < 0)
			return r;
		if (r) {
			rd->kind[j] = ROW_KNOWN;
			continue;
		}
		r = read_covered(f, b * bs, bs, dst, NULL);
		if (r == -ENOMEM || r == -EINTR)
			return r;
		rd->kind[j] = ROW_RAW;
		if (r < 0) {
			memset(dst, 0, bs);
			rd->kind[j] = ROW_IOERR;
		} else if (accepted(f, b) && (f->flags & DMT_FEC_REPAIR)) {
			/* accepted and already written back */
			rd->kind[j] = ROW_KNOWN;
		}
	}
	rd->parity_changed = false;
	return dmt_pread_full(f->p->fec, rd->par, bs * l->roots,
			      l->fec_offset + rd->n * bs * l->roots);
}

/*
 * Decodes every codeword of the round in place; false when one can't be
 * decoded (the buffer is then half-corrected: reload before retrying).
 */
static bool decode_round(struct dmt_fec *f, struct round *rd, const int *eras,
			 int neras)
{
	const struct dmt_fec_layout *l = &f->l;
	size_t bs = l->block_size, b;
	unsigned int j, i, rsn = l->rsn, roots = l->roots;
	uint8_t cw[DMT_FEC_RSM];
	int v;

	for (b = 0; b < bs; b++) {
		for (j = 0; j < rsn; j++)
			cw[j] = rd->buf[j * bs + b];
		memcpy(cw + rsn, rd->par + b * roots, roots);
		v = dmt_rs_decode(&f->rs, cw, eras, neras);
		if (v < 0)
			return false;
		if (!v)
			continue;
		for (j = 0; j < rsn; j++) {
			if (cw[j] == rd->buf[j * bs + b])
				continue;
			/* a zero pad or a verified block "corrected":
			 * the decoder was fooled */
			if (rd->kind[j] == ROW_PAD || rd->kind[j] == ROW_KNOWN)
				return false;
			rd->buf[j * bs + b] = cw[j];
			rd->changed[j]++;
		}
		for (i = 0; i < roots; i++) {
			if (rd->par[b * roots + i] != cw[rsn + i]) {
				rd->par[b * roots + i] = cw[rsn + i];
				rd->parity_changed = true;
			}
		}
	}
	return true;
}

static int check_row(struct dmt_fec *f, struct round *rd, unsigned int j)
{
	uint64_t b = row_block(f, rd, j);
	int v = f->ops->check(f->ops->ctx, f, b,
			      rd->buf + (size_t)j * f->l.block_size);

	if (v < 0)
		return v;
	if (v != DMT_FEC_BLOCK_OK && v != DMT_FEC_BLOCK_BAD &&
	    v != DMT_FEC_BLOCK_UNKNOWN)
		return -EINVAL;
	return v;
}

static int report(struct dmt_fec *f, uint64_t block, enum dmt_fec_outcome o,
		  const uint8_t *data)
{
	if (!f->ops->report)
		return 0;
	int r = f->ops->report(f->ops->ctx, block, o, data);

	return r < 0 ? r : 0;
}

/*
 * Accepts a verified corrected row: remember, report, write back.  Returns
 * 1 when the block is new, 0 when it was accepted before.
 */
static int accept_row(struct dmt_fec *f, struct round *rd, unsigned int j)
{
	uint64_t b = row_block(f, rd, j);
	const uint8_t *data = rd->buf + (size_t)j * f->l.block_size;
	int r;

	rd->kind[j] = ROW_KNOWN;
	/* accepted in an earlier pass (repair: written back): nothing new */
	if (accepted(f, b))
		return 0;
	r = dmt_overlay_put(f->ov, b, f->flags & DMT_FEC_REPAIR ? NULL : data);
	if (r < 0)
		return r;
	f->st.corrected_blocks++;
	f->st.corrected_bytes += rd->changed[j];
	r = report(f, b, DMT_FEC_CORRECTED, data);
	if (r < 0)
		return r;
	if (f->flags & DMT_FEC_REPAIR) {
		r = write_block(f, b, data);
		if (r < 0)
			return r;
		f->st.written_blocks++;
	}
	return 1;
}

/*
 * Order in which rows are checked: hash-area rows first, ascending (on
 * disk the tree's top level comes first, so parents go before children),
 * then data rows.
 */
static unsigned int row_order(const struct dmt_fec *f, const struct round *rd,
			      unsigned int idx)
{
	const struct dmt_fec_layout *l = &f->l;
	unsigned int first_hash;

	/* rows j with j * rounds + n >= data_blocks */
	if (rd->n >= l->data_blocks)
		first_hash = 0;
	else
		first_hash = (unsigned int)div_up(l->data_blocks - rd->n,
						  l->rounds);
	if (first_hash > l->rsn)
		first_hash = l->rsn;
	if (idx < l->rsn - first_hash)
		return first_hash + idx;
	return idx - (l->rsn - first_hash);
}

/*
 * Checks every row the decoder changed (and unreadable ones).  Returns 1
 * when they all verified (or have no digest), 0 when one is BAD, < 0 on
 * error.  Verified rows are accepted at once.
 */
static int verify_changes(struct dmt_fec *f, struct round *rd, bool *progress)
{
	unsigned int idx, j, rsn = f->l.rsn;
	int v, ok = 1;

	for (idx = 0; idx < rsn; idx++) {
		j = row_order(f, rd, idx);
		if (rd->kind[j] == ROW_PAD || rd->kind[j] == ROW_KNOWN)
			continue;
		if (!rd->changed[j] && rd->kind[j] != ROW_IOERR)
			continue;
		v = check_row(f, rd, j);
		if (v < 0)
			return v;
		if (v == DMT_FEC_BLOCK_OK) {
			v = accept_row(f, rd, j);
			if (v < 0)
				return v;
			if (v > 0)
				*progress = true;
		} else if (v == DMT_FEC_BLOCK_BAD) {
			ok = 0;
		}
	}
	return ok;
}

/* Round fully decoded and verified: report the rest, fix the parity. */
static int finish_round(struct dmt_fec *f, struct round *rd)
{
	const struct dmt_fec_layout *l = &f->l;
	size_t bs = l->block_size;
	unsigned int j;
	bool any = false;
	int r;

	for (j = 0; j < l->rsn; j++) {
		if (!rd->changed[j] || rd->kind[j] == ROW_KNOWN)
			continue;
		any = true;
		f->st.unverified_blocks++;
		r = report(f, row_block(f, rd, j),
			   DMT_FEC_CORRECTED_UNVERIFIED, rd->buf + j * bs);
		if (r < 0)
			return r;
	}
	if (!rd->parity_changed)
		return 0;
	if (!any)
		f->st.parity_rounds_bad++;
	if ((f->flags & DMT_FEC_REPAIR) && f->p->fec->writable) {
		r = dmt_pwrite_full(f->p->fec, rd->par, bs * l->roots,
				    l->fec_offset + rd->n * bs * l->roots);
		if (r < 0)
			return r;
		f->st.parity_rounds_fixed++;
	}
	return 0;
}

/* Parity of a round from its (verified) blocks, written back. */
static int rewrite_parity(struct dmt_fec *f, struct round *rd)
{
	const struct dmt_fec_layout *l = &f->l;
	size_t bs = l->block_size;
	uint8_t *acc = calloc(l->roots, bs);
	int r;

	if (!acc)
		return -ENOMEM;
	dmt_gf256_mac_portable(acc, bs, l->roots, rd->buf, bs, l->rsn,
			       f->rs.coef, bs);
	transpose(acc, bs, l->roots, rd->par, bs);
	free(acc);
	r = dmt_pwrite_full(f->p->fec, rd->par, bs * l->roots,
			    l->fec_offset + rd->n * bs * l->roots);
	if (r == 0)
		f->st.parity_rounds_fixed++;
	return r;
}

/*
 * Reports the rows still bad after the last attempt on a round.  When
 * every block checks out, it is the parity that is beyond decoding.
 */
static int give_up_round(struct dmt_fec *f, struct round *rd)
{
	unsigned int idx, j;
	bool all_ok = true, any_bad = false;
	int r, v;

	r = load_round(f, rd);
	if (r < 0)
		return r;
	for (idx = 0; idx < f->l.rsn; idx++) {
		j = row_order(f, rd, idx);
		if (rd->kind[j] == ROW_PAD || rd->kind[j] == ROW_KNOWN ||
		    accepted(f, row_block(f, rd, j)))
			continue;
		if (rd->kind[j] != ROW_IOERR) {
			v = check_row(f, rd, j);
			if (v < 0)
				return v;
			all_ok &= v == DMT_FEC_BLOCK_OK;
			if (v != DMT_FEC_BLOCK_BAD)
				continue;
		}
		any_bad = true;
		f->st.unrepairable_blocks++;
		r = report(f, row_block(f, rd, j), DMT_FEC_UNREPAIRABLE,
			   NULL);
		if (r < 0)
			return r;
	}
	if (any_bad)
		return 0;
	f->st.parity_rounds_bad++;
	if (!all_ok || !(f->flags & DMT_FEC_REPAIR) || !f->p->fec->writable)
		return 0;
	return rewrite_parity(f, rd);
}

/*
 * One attempt at a round, kernel style: decode without erasures (except
 * unreadable blocks); if that fails or a correction does not verify,
 * decode again with every block that fails its check as an erasure.
 * Returns 1 when the round is resolved, 0 when it is not (yet), < 0 on
 * error.
 */
static int do_round(struct dmt_fec *f, struct round *rd, bool *progress)
{
	int eras[DMT_FEC_RSM], neras = 0, r, v;
	unsigned int idx, j, rsn = f->l.rsn;

	r = load_round(f, rd);
	if (r < 0)
		return r;
	for (j = 0; j < rsn; j++)
		if (rd->kind[j] == ROW_IOERR)
			eras[neras++] = (int)j;
	if (neras <= (int)f->l.roots && decode_round(f, rd, eras, neras)) {
		r = verify_changes(f, rd, progress);
		if (r < 0)
			return r;
		if (r > 0) {
			r = finish_round(f, rd);
			return r < 0 ? r : 1;
		}
	}

	/* second try: erasures from the digests */
	r = load_round(f, rd);
	if (r < 0)
		return r;
	neras = 0;
	for (idx = 0; idx < rsn; idx++) {
		j = row_order(f, rd, idx);
		if (rd->kind[j] == ROW_PAD || rd->kind[j] == ROW_KNOWN)
			continue;
		if (rd->kind[j] != ROW_IOERR) {
			v = check_row(f, rd, j);
			if (v < 0)
				return v;
			if (v != DMT_FEC_BLOCK_BAD)
				continue;
		}
		if (neras == (int)f->l.roots)
			return 0;	/* more than the code can take */
		eras[neras++] = (int)j;
	}
	if (!neras || !decode_round(f, rd, eras, neras))
		return 0;
	r = verify_changes(f, rd, progress);
	if (r <= 0)
		return r;
	r = finish_round(f, rd);
	return r < 0 ? r : 1;
}

static int correct_rounds(struct dmt_fec *f)
{
	const struct dmt_fec_layout *l = &f->l;
	struct round rd;
	uint64_t *pending = NULL, npending = 0, n, k, keep;
	bool progress;
	int r = -ENOMEM;

	memset(&rd, 0, sizeof(rd));
	rd.buf = malloc((size_t)l->rsn * l->block_size);
	rd.par = malloc((size_t)l->roots * l->block_size);
	pending = malloc(f->st.bad_rounds * sizeof(*pending));
	if (!rd.buf || !rd.par || !pending)
		goto out;
	for (n = 0; n < l->rounds; n++)
		if (f->bad[n / 64] & (1ull << (n % 64)))
			pending[npending++] = n;

	/* Revisit unresolved rounds while anything new gets accepted: a
	 * block may only verify once its hash block has been corrected. */
	do {
		progress = false;
		for (k = 0, keep = 0; k < npending; k++) {
			rd.n = pending[k];
			r = do_round(f, &rd, &progress);
			if (r < 0)
				goto out;
			if (!r)
				pending[keep++] = rd.n;
		}
		npending = keep;
	} while (progress && npending);

	r = 0;
	for (k = 0; k < npending && !r; k++) {
		rd.n = pending[k];
		r = give_up_round(f, &rd);
	}
out:
	free(rd.buf);
	free(rd.par);
	free(pending);
	return r;
}

int dmt_fec_correct(const struct dmt_fec_params *p,
		    const struct dmt_fec_ops *ops, unsigned int flags,
		    struct dmt_overlay *ov, struct dmt_fec_stats *stats,
		    struct dmt_reason *why)
{
	struct dmt_fec f;
	uint64_t n;
	int r;

	if (stats)
		memset(stats, 0, sizeof(*stats));
	if (!ops || !ops->check || !ov)
		return dmt_reason_set(why, -EINVAL, DMT_REASON_MISSING,
				      "ops", 0);
	r = fec_init(&f, p, why);
	if (r < 0)
		goto out;
	f.ops = ops;
	f.flags = flags;
	f.scan = true;
	f.ov = ov;
	r = -ENOMEM;
	f.bad = calloc(div_up(f.l.rounds, 64), sizeof(*f.bad));
	if (!f.bad)
		goto out;
	r = stream_pass(&f);
	if (r < 0)
		goto out;
	for (n = 0; n < div_up(f.l.rounds, 64); n++)
		f.st.bad_rounds += (uint64_t)__builtin_popcountll(f.bad[n]);
	if (f.st.bad_rounds) {
		r = correct_rounds(&f);
		if (r < 0)
			goto out;
	}
	r = f.st.unrepairable_blocks ? -EBADMSG : 0;
out:
	if (stats)
		*stats = f.st;
	fec_free(&f);
	return r;
}

int dmt_fec_verify_and_correct(const struct dmt_fec_params *p,
			       const struct dmt_fec_ops *ops,
			       unsigned int flags,
			       struct dmt_fec_stats *stats,
			       struct dmt_reason *why)
{
	struct dmt_overlay *ov;
	int r;

	if (stats)
		memset(stats, 0, sizeof(*stats));
	if (!p->block_size)
		return dmt_reason_set(why, -EINVAL, DMT_REASON_BAD_VALUE,
				      "block_size", 0);
	r = dmt_overlay_new(p->block_size, DMT_OVERLAY_MEM_BUDGET, &ov);
	if (r < 0)
		return r;
	r = dmt_fec_correct(p, ops, flags, ov, stats, why);
	dmt_overlay_free(ov);
	return r;
}
