// SPDX-License-Identifier: MIT
/*
 * dm-integrity format / check / recalculate on files and block devices.
 *
 * The logical device is cut into units of up to 16 MiB that never cross an
 * interleave area, so a unit's tags are one contiguous byte range: each
 * worker reads a unit's data in large chunks, hashes whole chunks through
 * the engine, and writes (or compares) the unit's tags with one transfer.
 * Holes (in the payload, the image or the data device) are never read:
 * their tags come from a shared zero block, which is what the kernel's
 * wipe produces.  Memory per worker is bounded by the chunk and unit sizes.
 */
#include <dmt/integrity.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <dmt/hash.h>
#include <dmt/io.h>
#include <dmt/threads.h>

#define UNIT_SECTORS_MAX 32768		/* 16 MiB of data per unit */
#define UNIT_TAG_BYTES_MAX (4u << 20)
#define ZERO_BYTES (1u << 20)
#define PROGRESS_STEP (8ull << 20)
#define JOURNAL_BATCH_BYTES (4u << 20)

enum op_kind { OP_FORMAT, OP_CHECK, OP_RECALC };

struct worker {
	struct dmt_integrity_tagger *t;
	uint8_t *buf;		/* one data chunk */
	uint8_t *tags;		/* the unit's computed tags */
	uint8_t *stored;	/* check: the unit's tags on disk */
};

struct op {
	enum op_kind kind;
	const struct dmt_integrity_opts *o;
	struct dmt_integrity_result *r;
	struct dmt_integrity_geom *g;
	struct dmt_file *meta;		/* superblock, journal, tags */
	struct dmt_file *src;		/* where block data is read */
	struct dmt_file *dst;		/* format writes data here */
	bool src_is_payload;		/* src offsets = logical offsets */
	uint64_t src_limit;		/* payload bytes (else no limit) */
	bool fresh;			/* dst data area is known all-zero */
	unsigned int bs;		/* block size in bytes */
	uint64_t first_block, end_block;
	uint64_t unit_blocks, chunk_blocks, ubase, n_units;
	const uint8_t *zero;
	struct dmt_integrity_tagger *tagger;
	struct worker *w;
	unsigned int nw;
	uint8_t *unit_done;
	pthread_mutex_t lock;
	uint64_t done_bytes, total_bytes, reported;
	bool aborted;
	const char *fail_what;		/* first I/O failure: what, where */
	const char *fail_path;
};

/* Remembers the first failing transfer of a walk, for the message. */
static int io_fail(struct op *op, int err, const struct dmt_file *f,
		   const char *what)
{
	if (!err || err == -EINTR)
		return err;
	pthread_mutex_lock(&op->lock);
	if (!op->fail_what) {
		/* names from the options: they outlive the open files */
		op->fail_what = what;
		op->fail_path = f == op->meta ? op->o->device :
				op->src_is_payload ? op->o->data_from :
				op->o->data_device;
	}
	pthread_mutex_unlock(&op->lock);
	return err;
}

/* ---- small helpers ---- */

static int read_sector0(struct dmt_file *f, uint8_t sector0[512])
{
	return dmt_pread_full(f, sector0, 512, 0);
}

/* Writes the 4096-byte superblock area (MAC'ed when needed). */
static int write_sb(struct dmt_file *f, struct dmt_integrity_sb *sb,
		    const struct dmt_integrity_mac *mac, bool meta_dev)
{
	uint8_t area[DMT_INTEGRITY_SB_BYTES];
	int err;

	sb->version = dmt_integrity_sb_version(sb->flags, meta_dev, false);
	memset(area, 0, sizeof(area));
	dmt_integrity_sb_encode(sb, area);
	if ((sb->flags & DMT_INTEGRITY_SB_FIXED_HMAC) &&
	    (sb->flags & DMT_INTEGRITY_SB_HAVE_JOURNAL_MAC)) {
		err = dmt_integrity_sb_mac_write(mac, area);
		if (err)
			return err;
	}
	return dmt_pwrite_full(f, area, sizeof(area), 0);
}

/* Zeroes [off, off+len) of a file, leaving holes alone. */
static int zero_range(struct dmt_file *f, uint64_t off, uint64_t len,
		      const uint8_t *zero)
{
	uint64_t end = off + len, ds, de;
	int err;

	while (off < end) {
		err = dmt_file_next_data(f, off, end, &ds, &de);
		if (err)
			return err;
		if (ds >= end)
			break;
		int mode = FALLOC_FL_KEEP_SIZE |
			   (f->is_blockdev ? FALLOC_FL_ZERO_RANGE :
					     FALLOC_FL_PUNCH_HOLE);

		if (!fallocate(f->fd, mode, (off_t)ds, (off_t)(de - ds))) {
			off = de;
			continue;
		}
		/* no hole punching here: write the zeros */
		for (off = ds; off < de;) {
			size_t n = de - off < ZERO_BYTES ? (size_t)(de - off) :
							   ZERO_BYTES;

			err = dmt_pwrite_full(f, zero, n, off);
			if (err)
				return err;
			off += n;
		}
	}
	return 0;
}

static void record_sector(uint64_t *list, size_t *n, uint64_t s)
{
	size_t i, k = *n;

	/* keep the DMT_INTEGRITY_REPORT_MAX smallest, sorted */
	if (k == DMT_INTEGRITY_REPORT_MAX && s >= list[k - 1])
		return;
	if (k < DMT_INTEGRITY_REPORT_MAX)
		k++;
	for (i = k - 1; i > 0 && list[i - 1] > s; i--)
		list[i] = list[i - 1];
	list[i] = s;
	*n = k;
}

static bool all_filler(const uint8_t *tag, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (tag[i] != DMT_INTEGRITY_DISCARD_FILLER)
			return false;
	return true;
}

/* ---- the per-unit walk ---- */

static int worker_init(struct op *op, struct worker *w)
{
	size_t tag_bytes = (size_t)op->unit_blocks * op->g->tag_size;
	int err;

	err = dmt_integrity_tagger_clone(op->tagger, &w->t);
	if (err)
		return err;
	/* page-aligned for O_DIRECT */
	if (posix_memalign((void **)&w->buf, 4096,
			   (size_t)op->chunk_blocks * op->bs))
		w->buf = NULL;
	w->tags = malloc(tag_bytes);
	if (op->kind == OP_CHECK)
		w->stored = malloc(tag_bytes);
	if (!w->buf || !w->tags || (op->kind == OP_CHECK && !w->stored))
		return -ENOMEM;
	return 0;
}

static void worker_free(struct worker *w)
{
	dmt_integrity_tagger_free(w->t);
	free(w->buf);
	free(w->tags);
	free(w->stored);
	memset(w, 0, sizeof(*w));
}

/* Source byte offset of logical block b. */
static uint64_t src_offset(const struct op *op, uint64_t b)
{
	uint64_t s = b << op->g->log2_spb;

	if (op->src_is_payload)
		return s << 9;
	return dmt_integrity_data_sector(op->g, s) << 9;
}

/* Blocks [a, b) hold zeros: tags from the zero block, zero the target. */
static int zero_blocks(struct op *op, struct worker *w, uint64_t ub0,
		       uint64_t a, uint64_t b)
{
	const struct dmt_integrity_geom *g = op->g;
	int err;

	err = dmt_integrity_tags(w->t, a << g->log2_spb, b - a, op->zero, 0,
				 w->tags + (a - ub0) * g->tag_size);
	if (err || !op->dst || op->fresh)
		return err;
	err = zero_range(op->dst,
			 dmt_integrity_data_sector(g, a << g->log2_spb) << 9,
			 (b - a) * op->bs, op->zero);
	return io_fail(op, err, op->dst, "write error");
}

/* Blocks [a, b) (within one chunk) may hold data: read, hash, copy. */
static int data_blocks(struct op *op, struct worker *w, uint64_t ub0,
		       uint64_t a, uint64_t b)
{
	const struct dmt_integrity_geom *g = op->g;
	uint64_t off = src_offset(op, a), len = (b - a) * op->bs, have = len;
	int err;

	if (op->src_is_payload && off + have > op->src_limit)
		have = op->src_limit - off;
	err = dmt_pread_full(op->src, w->buf, (size_t)have, off);
	if (err)
		return io_fail(op, err, op->src, "read error");
	if (have < len)
		memset(w->buf + have, 0, (size_t)(len - have));
	err = dmt_integrity_tags(w->t, a << g->log2_spb, b - a, w->buf,
				 op->bs, w->tags + (a - ub0) * g->tag_size);
	if (err || !op->dst)
		return err;
	off = dmt_integrity_data_sector(g, a << g->log2_spb) << 9;
	err = dmt_pwrite_full(op->dst, w->buf, (size_t)len, off);
	return io_fail(op, err, op->dst, "write error");
}

/* One chunk [a, b): split into hole and data extents of the source. */
static int do_chunk(struct op *op, struct worker *w, uint64_t ub0,
		    uint64_t a, uint64_t b)
{
	uint64_t bs = op->bs;
	int err;

	while (a < b) {
		uint64_t base = src_offset(op, a), end = base + (b - a) * bs;
		uint64_t limit = end, ds, de, da, db;

		if (!op->src)
			return zero_blocks(op, w, ub0, a, b);
		if (op->src_is_payload) {
			if (base >= op->src_limit)
				return zero_blocks(op, w, ub0, a, b);
			if (limit > op->src_limit)
				limit = op->src_limit;
		}
		err = dmt_file_next_data(op->src, base, limit, &ds, &de);
		if (err)
			return io_fail(op, err, op->src, "read error");
		if (ds >= limit)
			return zero_blocks(op, w, ub0, a, b);
		/* whole blocks of hole first, then the blocks with data */
		da = a + (ds - base) / bs;
		db = a + (de - base + bs - 1) / bs;
		if (db > b)
			db = b;
		if (da > a) {
			err = zero_blocks(op, w, ub0, a, da);
			if (err)
				return err;
		}
		err = data_blocks(op, w, ub0, da, db);
		if (err)
			return err;
		a = db;
	}
	return 0;
}

static int compare_tags(struct op *op, struct worker *w, uint64_t ub0,
			uint64_t ub1)
{
	struct dmt_integrity_result *r = op->r;
	unsigned int t = op->g->tag_size;
	uint64_t b, bad = 0, disc = 0;

	for (b = ub0; b < ub1; b++) {
		const uint8_t *have = w->stored + (b - ub0) * t;
		uint64_t s = b << op->g->log2_spb;
		bool filler;

		if (!memcmp(have, w->tags + (b - ub0) * t, t))
			continue;
		filler = all_filler(have, t);
		if (filler)
			disc++;
		if (filler && op->o->allow_discards) {
			pthread_mutex_lock(&op->lock);
			record_sector(r->first_discarded, &r->n_first_discarded,
				      s);
			pthread_mutex_unlock(&op->lock);
			continue;
		}
		bad++;
		pthread_mutex_lock(&op->lock);
		record_sector(r->first_bad, &r->n_first_bad, s);
		if (filler)
			record_sector(r->first_discarded,
				      &r->n_first_discarded, s);
		pthread_mutex_unlock(&op->lock);
	}
	if (bad || disc) {
		pthread_mutex_lock(&op->lock);
		r->mismatches += bad;
		r->discarded += disc;
		pthread_mutex_unlock(&op->lock);
	}
	return 0;
}

static int progress(struct op *op, uint64_t bytes)
{
	const struct dmt_progress *p = &op->o->progress;
	int ret = 0;

	pthread_mutex_lock(&op->lock);
	op->done_bytes += bytes;
	if (p->fn && (op->done_bytes - op->reported >= PROGRESS_STEP ||
		      op->done_bytes == op->total_bytes)) {
		op->reported = op->done_bytes;
		if (p->fn(p->ctx, op->done_bytes, op->total_bytes))
			ret = -EINTR;
	}
	if (ret)
		op->aborted = true;
	pthread_mutex_unlock(&op->lock);
	return ret;
}

/*
 * Format in place: the bytes the kernel never addresses (after the last tag
 * of a run, after the last data sector) are zeroed too, so that the image
 * does not depend on what the device held before.
 */
static int zero_unused(struct op *op, uint64_t ub1, uint64_t tags_end)
{
	const struct dmt_integrity_geom *g = op->g;
	uint64_t dev_end = g->meta_sectors << 9, s1 = ub1 << g->log2_spb;
	bool last = ub1 == op->end_block;
	int err = 0;

	if (g->meta_dev)
		return last ? zero_range(op->meta, tags_end,
					 dev_end - tags_end, op->zero) : 0;
	if (last || !(s1 & ((1ull << g->log2_interleave) - 1))) {
		uint64_t area_start = ((s1 - 1) >> g->log2_interleave)
				      << g->log2_interleave;
		uint64_t run_end = dmt_integrity_tag_offset(g, area_start) +
				   (g->metadata_run << 9);

		err = zero_range(op->meta, tags_end, run_end - tags_end,
				 op->zero);
	}
	if (!err && last) {
		uint64_t data_end =
			(dmt_integrity_data_sector(g, s1 - 1) + 1) << 9;

		if (data_end < dev_end)
			err = zero_range(op->meta, data_end, dev_end - data_end,
					 op->zero);
	}
	return err;
}

static int do_unit(struct op *op, struct worker *w, uint64_t u)
{
	const struct dmt_integrity_geom *g = op->g;
	uint64_t ub0 = (op->ubase + u) * op->unit_blocks;
	uint64_t ub1 = ub0 + op->unit_blocks, a, tag_off;
	size_t tag_len;
	int err;

	if (ub0 < op->first_block)
		ub0 = op->first_block;
	if (ub1 > op->end_block)
		ub1 = op->end_block;
	tag_off = dmt_integrity_tag_offset(g, ub0 << g->log2_spb);
	tag_len = (size_t)(ub1 - ub0) * g->tag_size;

	if (op->kind == OP_CHECK) {
		err = dmt_pread_full(op->meta, w->stored, tag_len, tag_off);
		if (err)
			return io_fail(op, err, op->meta, "read error");
	}
	for (a = ub0; a < ub1; a += op->chunk_blocks) {
		uint64_t b = a + op->chunk_blocks < ub1 ? a + op->chunk_blocks :
							  ub1;

		err = do_chunk(op, w, ub0, a, b);
		if (err)
			return err;
	}
	if (op->kind == OP_CHECK)
		err = compare_tags(op, w, ub0, ub1);
	else
		err = dmt_pwrite_full(op->meta, w->tags, tag_len, tag_off);
	if (!err && op->kind == OP_FORMAT && !op->fresh)
		err = zero_unused(op, ub1, tag_off + tag_len);
	if (err)
		return io_fail(op, err, op->meta, op->kind == OP_CHECK ?
			       "read error" : "write error");
	__atomic_store_n(&op->unit_done[u], 1, __ATOMIC_RELEASE);
	return progress(op, (ub1 - ub0) * op->bs);
}

static int unit_fn(void *ctx, unsigned int worker, uint64_t begin,
		   uint64_t end)
{
	struct op *op = ctx;
	struct worker *w = &op->w[worker < op->nw ? worker : 0];
	int err;

	if (!w->t) {
		err = worker_init(op, w);
		if (err)
			return err;
	}
	for (uint64_t u = begin; u < end; u++) {
		if (__atomic_load_n(&op->aborted, __ATOMIC_RELAXED))
			return -EINTR;
		err = do_unit(op, w, u);
		if (err) {
			__atomic_store_n(&op->aborted, true, __ATOMIC_RELAXED);
			return err;
		}
	}
	return 0;
}

/* Runs the walk over blocks [first, end) of the logical device. */
static int walk(struct op *op, uint64_t first, uint64_t end)
{
	const struct dmt_integrity_geom *g = op->g;
	unsigned int threads = op->o->threads ? op->o->threads : 1;
	uint64_t ub, tb;
	uint8_t *zero = NULL;
	int err;

	op->bs = 512u << g->log2_spb;
	op->first_block = first;
	op->end_block = end;
	ub = UNIT_SECTORS_MAX >> g->log2_spb;
	if (!g->meta_dev && ub > (1ull << (g->log2_interleave - g->log2_spb)))
		ub = 1ull << (g->log2_interleave - g->log2_spb);
	tb = UNIT_TAG_BYTES_MAX / g->tag_size;
	while (ub > tb)
		ub >>= 1;
	op->unit_blocks = ub;
	op->chunk_blocks = DMT_IO_CHUNK / op->bs;
	op->ubase = first / ub;
	op->n_units = end > first ? (end + ub - 1) / ub - op->ubase : 0;
	op->total_bytes = (end - first) * op->bs;
	op->nw = threads;

	zero = calloc(1, ZERO_BYTES);
	op->w = calloc(threads, sizeof(*op->w));
	op->unit_done = calloc(op->n_units ? op->n_units : 1, 1);
	if (!zero || !op->w || !op->unit_done) {
		err = -ENOMEM;
		goto out;
	}
	op->zero = zero;
	pthread_mutex_init(&op->lock, NULL);
	err = dmt_parallel_for(threads, op->n_units, 1, unit_fn, op);
	pthread_mutex_destroy(&op->lock);
	for (unsigned int i = 0; i < threads; i++)
		worker_free(&op->w[i]);
out:
	free(op->w);
	op->w = NULL;
	free(zero);
	op->zero = NULL;
	return err;
}

/* First logical sector whose tag may be missing after a failed walk. */
static uint64_t walk_resume_sector(const struct op *op)
{
	uint64_t u, b;

	for (u = 0; u < op->n_units; u++)
		if (!op->unit_done[u])
			break;
	b = (op->ubase + u) * op->unit_blocks;
	if (b < op->first_block)
		b = op->first_block;
	if (b > op->end_block)
		b = op->end_block;
	return b << op->g->log2_spb;
}

/* ---- journal ---- */

static int write_journal(struct dmt_file *f, const struct dmt_integrity_geom *g,
			 const struct dmt_integrity_sb *sb,
			 const struct dmt_integrity_mac *mac,
			 struct dmt_integrity_jcrypt *jc)
{
	size_t sec_bytes = (size_t)g->section_sectors * 512;
	uint32_t per = (uint32_t)(JOURNAL_BATCH_BYTES / sec_bytes), i, k;
	uint8_t *buf;
	int err = 0;

	if (!per)
		per = 1;
	buf = malloc(per * sec_bytes);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < g->journal_sections; i += k) {
		for (k = 0; k < per && i + k < g->journal_sections; k++) {
			err = dmt_integrity_journal_section(
				g, sb, mac, jc, i + k, 0, buf + k * sec_bytes);
			if (err)
				goto out;
		}
		err = dmt_pwrite_full(f, buf, k * sec_bytes,
				      (DMT_INTEGRITY_SB_SECTORS +
				       (uint64_t)i * g->section_sectors) << 9);
		if (err)
			goto out;
	}
out:
	free(buf);
	return err;
}

static int verify_journal(struct dmt_file *f,
			  const struct dmt_integrity_geom *g,
			  const struct dmt_integrity_sb *sb,
			  const struct dmt_integrity_mac *mac,
			  struct dmt_integrity_jcrypt *jc,
			  struct dmt_integrity_journal_report *rep)
{
	size_t sec_bytes = (size_t)g->section_sectors * 512;
	uint32_t per = (uint32_t)(JOURNAL_BATCH_BYTES / sec_bytes), i, k;
	uint8_t *buf;
	int err = 0;

	memset(rep, 0, sizeof(*rep));
	if (!per)
		per = 1;
	buf = malloc(per * sec_bytes);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < g->journal_sections; i += k) {
		k = g->journal_sections - i < per ? g->journal_sections - i :
						    per;
		err = dmt_pread_full(f, buf, k * sec_bytes,
				     (DMT_INTEGRITY_SB_SECTORS +
				      (uint64_t)i * g->section_sectors) << 9);
		if (err)
			goto out;
		for (uint32_t j = 0; j < k; j++) {
			err = dmt_integrity_journal_verify_section(
				g, sb, mac, jc, i + j, buf + j * sec_bytes,
				rep);
			if (err)
				goto out;
		}
	}
out:
	free(buf);
	return err;
}

/* ---- opening ---- */

static void set_why(struct dmt_integrity_result *r, const char *why,
		    const char *path)
{
	if (!r->why) {
		r->why = why;
		r->why_path = path;
	}
}

/* The journal cipher of the options, if any (NULL in *out otherwise). */
static int open_jcrypt(const struct dmt_integrity_opts *o,
		       const struct dmt_integrity_geom *g,
		       struct dmt_integrity_jcrypt **out,
		       struct dmt_integrity_result *r)
{
	const struct dmt_integrity_cipher *c = &o->journal_crypt;
	int err;

	*out = NULL;
	if (!c->alg)
		return 0;
	err = dmt_integrity_jcrypt_new(c->alg, c->key, c->key_size, g, out);
	if (err == -ENOENT) {
		set_why(r, "--journal-crypt: unsupported cipher (supported: ctr(aes), cbc(aes), chacha20)",
			NULL);
		return -EINVAL;
	}
	if (err == -EINVAL)
		set_why(r, "--journal-crypt: wrong key size for this cipher (aes: 16, 24 or 32 bytes; chacha20: 32)",
			NULL);
	return err;
}

static int open_data_device(const struct dmt_integrity_opts *o,
			    struct dmt_file *f, uint64_t *bytes,
			    struct dmt_integrity_result *r)
{
	int err;

	if (dmt_same_file(o->device, o->data_device)) {
		set_why(r, "the data device must differ from the metadata device",
			o->data_device);
		return -EINVAL;
	}
	err = dmt_file_open(f, o->data_device, DMT_OPEN_READ | DMT_OPEN_LOCK);
	if (err) {
		set_why(r, "cannot open the data device", o->data_device);
		return err;
	}
	err = dmt_file_size(f, bytes);
	if (err)
		set_why(r, "cannot get the size", o->data_device);
	return err;
}

static int check_alg(const struct dmt_integrity_opts *o,
		     struct dmt_integrity_result *r)
{
	const struct dmt_hash_alg *a;

	if (!o->alg || dmt_hash_alg_lookup(o->alg, &a)) {
		set_why(r, "unknown integrity algorithm", NULL);
		return -EINVAL;
	}
	if (dmt_hash_alg_needs_key(a) && !o->key_size) {
		set_why(r, "the integrity algorithm needs a key (--integrity-key-file)",
			NULL);
		return -EINVAL;
	}
	if (o->key_size && !dmt_hash_alg_takes_key(a)) {
		set_why(r, "the integrity algorithm takes no key", NULL);
		return -EINVAL;
	}
	if (o->journal_mac.alg && dmt_hash_alg_lookup(o->journal_mac.alg, &a)) {
		set_why(r, "unknown journal integrity algorithm", NULL);
		return -EINVAL;
	}
	if (o->journal_mac.alg && dmt_hash_alg_needs_key(a) &&
	    !o->journal_mac.key_size) {
		set_why(r, "the journal integrity algorithm needs a key (--journal-integrity-key-file)",
			NULL);
		return -EINVAL;
	}
	return 0;
}

/* ---- format ---- */

static int make_tagger(const struct dmt_integrity_opts *o,
		       const struct dmt_integrity_sb *sb,
		       struct dmt_integrity_tagger **t,
		       struct dmt_integrity_result *r)
{
	bool salted = sb->flags & DMT_INTEGRITY_SB_FIXED_HMAC;
	int err;

	err = dmt_integrity_tagger_new(o->alg, o->key, o->key_size,
				       salted ? sb->salt : NULL,
				       512u << sb->log2_sectors_per_block,
				       sb->tag_size, o->engine, t);
	if (err) {
		set_why(r, "cannot set up the integrity algorithm", NULL);
		return err;
	}
	r->engine = dmt_integrity_tagger_engine(*t);
	return 0;
}

static int format_target_size(const struct dmt_integrity_opts *o,
			      struct dmt_integrity_layout *l,
			      uint64_t need_sectors, uint64_t *target,
			      struct dmt_integrity_result *r)
{
	int err;

	*target = o->device_size;
	if (!o->device_size_auto)
		return 0;
	if (!o->data_from && !l->meta_dev) {
		set_why(r, "--device-size auto needs --data-from", NULL);
		return -EINVAL;
	}
	err = dmt_integrity_min_device(l, need_sectors, target);
	if (err)
		set_why(r, "no device size can hold the payload", NULL);
	return err;
}

int dmt_integrity_format(const struct dmt_integrity_opts *o,
			 struct dmt_integrity_result *r)
{
	struct dmt_file meta = { .fd = -1 }, data = { .fd = -1 },
			payload = { .fd = -1 };
	struct dmt_integrity_layout l = o->layout;
	struct dmt_integrity_tagger *tagger = NULL;
	struct dmt_integrity_jcrypt *jc = NULL;
	struct dmt_integrity_sb sb;
	struct dmt_integrity_geom g;
	uint64_t size = 0, target, need = 0, data_bytes = 0;
	struct op op;
	bool in_place = false, sb_written = false;
	int err;

	memset(r, 0, sizeof(*r));
	memset(&op, 0, sizeof(op));
	err = check_alg(o, r);
	if (err)
		return err;
	if (!l.tag_size) {
		unsigned int ts;

		err = dmt_integrity_default_tag_size(o->alg, &ts);
		if (err)
			return err;
		l.tag_size = ts;
	}
	l.meta_dev = o->data_device != NULL;
	if (l.journal_mac && !o->journal_mac.alg) {
		set_why(r, "journal MAC requested without an algorithm", NULL);
		return -EINVAL;
	}
	l.journal_mac = o->journal_mac.alg != NULL;
	if (l.meta_dev && o->data_from) {
		set_why(r, "--data-from does not apply with --data-device: the data device itself holds the data",
			NULL);
		return -EINVAL;
	}

	if (o->data_from) {
		if (dmt_same_file(o->device, o->data_from)) {
			set_why(r, "the payload must differ from the device",
				o->data_from);
			err = -EINVAL;
			goto out;
		}
		err = dmt_file_open(&payload, o->data_from, DMT_OPEN_READ);
		if (!err)
			err = dmt_file_size(&payload, &r->payload_bytes);
		if (err) {
			set_why(r, "cannot read the payload", o->data_from);
			goto out;
		}
		need = (r->payload_bytes + l.sector_size - 1) / l.sector_size *
		       (l.sector_size / 512);
	}
	if (l.meta_dev) {
		err = open_data_device(o, &data, &data_bytes, r);
		if (err)
			goto out;
		r->data_device_bytes = data_bytes;
		l.data_dev_sectors = data_bytes >> 9;
		need = l.data_dev_sectors &
		       ~(uint64_t)(l.sector_size / 512 - 1);
	}

	/* the device: in place if it exists, else a new file */
	err = dmt_file_open(&meta, o->device,
			    DMT_OPEN_RW | DMT_OPEN_LOCK);
	if (err == -ENOENT && (o->device_size || o->device_size_auto)) {
		err = format_target_size(o, &l, need, &target, r);
		if (err)
			goto out;
		err = dmt_file_open(&meta, o->device, DMT_OPEN_NEW_TMP);
		if (!err)
			err = dmt_file_extend(&meta, target);
		if (err) {
			set_why(r, "cannot create the device file", o->device);
			goto out;
		}
		r->created = true;
	} else if (err) {
		set_why(r, err == -ENOENT ?
			"no such file (--device-size creates it)" :
			"cannot open the device", o->device);
		goto out;
	} else {
		in_place = true;
		err = format_target_size(o, &l, need, &target, r);
		if (err)
			goto out;
		err = dmt_file_size(&meta, &size);
		if (err) {
			set_why(r, "cannot get the size", o->device);
			goto out;
		}
		if (target && size > target) {
			set_why(r, "the device is larger than the requested size (refusing to shrink it)",
				o->device);
			err = -EINVAL;
			goto out;
		}
		if (target && size < target) {
			err = dmt_file_extend(&meta, target);
			if (err) {
				set_why(r, "cannot grow the device to the requested size",
					o->device);
				goto out;
			}
		}
	}
	err = dmt_file_size(&meta, &size);
	if (err) {
		set_why(r, "cannot get the size", o->device);
		goto out;
	}
	r->device_bytes = size;
	l.dev_sectors = size >> 9;
	if (!l.meta_dev)
		l.data_dev_sectors = 0;

	err = dmt_integrity_geom_format(&l, &sb, &g);
	if (err == -ENODATA || (!err && need > g.provided)) {
		err = -ENODATA;
		if (!dmt_integrity_min_device(&l, need ? need : 8,
					      &r->need_bytes))
			set_why(r, o->data_from ?
				"the device is too small for the payload" :
				"the device is too small", o->device);
		else
			set_why(r, "the device is too small", o->device);
		goto out;
	}
	if (err) {
		set_why(r, "invalid format parameters", NULL);
		goto out;
	}
	if (!g.meta_dev && !(sb.flags & DMT_INTEGRITY_SB_FIXED_PADDING)) {
		/* 2.6 caveat: below the kernel's buffer size (128 sectors by
		 * default) legacy padding makes it misplace tags */
		unsigned int buf = l.buffer_sectors > 128 ? l.buffer_sectors :
							    128;
		unsigned int lb = 31 - (unsigned int)__builtin_clz(buf);

		if ((unsigned int)__builtin_ctzll(g.metadata_run) < lb)
			lb = (unsigned int)__builtin_ctzll(g.metadata_run);
		if (g.log2_interleave < lb) {
			set_why(r, "legacy padding needs --interleave-sectors of at least the kernel's buffer size (128, or --buffer-sectors): the kernel misplaces tags below it",
				NULL);
			err = -EINVAL;
			goto out;
		}
	}
	if (sb.flags & DMT_INTEGRITY_SB_FIXED_HMAC) {
		if (o->have_salt) {
			memcpy(sb.salt, o->salt, sizeof(sb.salt));
		} else if (getrandom(sb.salt, sizeof(sb.salt), 0) !=
			   (ssize_t)sizeof(sb.salt)) {
			err = -errno;
			goto out;
		}
	}
	r->sb = sb;
	r->geom = g;

	err = make_tagger(o, &sb, &tagger, r);
	if (!err)
		err = open_jcrypt(o, &g, &jc, r);
	if (err)
		goto out;

	/*
	 * Order for an interrupted in-place format: the old superblock goes
	 * first, then the journal, then a superblock that says tags from
	 * recalc_sector on are not valid yet, and the final one last.
	 */
	if (in_place) {
		uint8_t zero[DMT_INTEGRITY_SB_BYTES] = { 0 };

		err = dmt_pwrite_full(&meta, zero, sizeof(zero), 0);
		if (err) {
			set_why(r, "write error", o->device);
			goto out;
		}
	}
	err = write_journal(&meta, &g, &sb, &o->journal_mac, jc);
	if (err) {
		set_why(r, "cannot write the journal", o->device);
		goto out;
	}
	if (!o->no_wipe) {
		struct dmt_integrity_sb tmp = sb;

		tmp.flags |= DMT_INTEGRITY_SB_RECALCULATING;
		tmp.recalc_sector = 0;
		err = write_sb(&meta, &tmp, &o->journal_mac, g.meta_dev);
		if (err) {
			set_why(r, "cannot write the superblock", o->device);
			goto out;
		}
		sb_written = true;

		op.kind = OP_FORMAT;
		op.o = o;
		op.r = r;
		op.g = &g;
		op.meta = &meta;
		op.tagger = tagger;
		if (g.meta_dev) {
			op.src = &data;
		} else {
			op.dst = &meta;
			op.fresh = r->created;
			if (o->data_from) {
				op.src = &payload;
				op.src_is_payload = true;
				op.src_limit = r->payload_bytes;
			}
		}
		if (op.dst)
			dmt_file_enable_direct(&meta);
		err = walk(&op, 0, g.provided >> g.log2_spb);
		if (err && op.fail_what)
			set_why(r, op.fail_what, op.fail_path);
		if (err)
			goto out;
	}
	err = write_sb(&meta, &sb, &o->journal_mac, g.meta_dev);
	if (err) {
		set_why(r, "cannot write the superblock", o->device);
		goto out;
	}
	r->sb = sb;
	err = dmt_file_sync(&meta);
	if (!err)
		err = dmt_file_commit(&meta);
	if (err)
		set_why(r, "cannot write the device to disk", o->device);
out:
	if (err && in_place && sb_written && op.unit_done) {
		/* leave a superblock that says where valid tags end */
		struct dmt_integrity_sb tmp = sb;

		tmp.flags |= DMT_INTEGRITY_SB_RECALCULATING;
		tmp.recalc_sector = walk_resume_sector(&op);
		if (!write_sb(&meta, &tmp, &o->journal_mac, g.meta_dev))
			dmt_file_sync(&meta);
		r->sb = tmp;
	}
	free(op.unit_done);
	dmt_integrity_tagger_free(tagger);
	dmt_integrity_jcrypt_free(jc);
	dmt_file_close(&payload);
	dmt_file_close(&data);
	dmt_file_close(&meta);
	return err;
}

/* ---- check / recalculate ---- */

/*
 * A superblock with a MAC (fix_hmac, journal MAC key): -EBADMSG with the
 * reason when it does not match, 0 when it does or there is none; sets
 * r->sb_mac_checked when it was compared.
 */
static int check_sb_mac(const struct dmt_integrity_opts *o,
			struct dmt_file *meta,
			const struct dmt_integrity_sb *sb,
			struct dmt_integrity_result *r)
{
	uint8_t sector0[512];
	int err;

	if (!(sb->flags & DMT_INTEGRITY_SB_FIXED_HMAC) ||
	    !(sb->flags & DMT_INTEGRITY_SB_HAVE_JOURNAL_MAC))
		return 0;
	err = read_sector0(meta, sector0);
	if (err) {
		set_why(r, "cannot read the superblock", o->device);
		return err;
	}
	err = dmt_integrity_sb_mac_verify(&o->journal_mac, sector0);
	if (err == -EBADMSG)
		set_why(r, "superblock MAC mismatch (corrupted superblock or wrong journal key)",
			o->device);
	r->sb_mac_checked = !err || err == -EBADMSG;
	return err;
}

static int open_existing(const struct dmt_integrity_opts *o, bool rw,
			 struct dmt_file *meta, struct dmt_file *data,
			 struct dmt_integrity_sb *sb,
			 struct dmt_integrity_geom *g,
			 struct dmt_integrity_result *r)
{
	uint8_t sector0[512];
	uint64_t size, data_bytes = 0;
	const char *why = NULL;
	int err;

	err = dmt_file_open(meta, o->device,
			    (rw ? DMT_OPEN_RW : DMT_OPEN_READ) | DMT_OPEN_LOCK);
	if (err) {
		set_why(r, "cannot open the device", o->device);
		return err;
	}
	err = dmt_file_size(meta, &size);
	if (err) {
		set_why(r, "cannot get the size", o->device);
		return err;
	}
	r->device_bytes = size;
	err = read_sector0(meta, sector0);
	if (err && err != -ENODATA) {
		set_why(r, "cannot read the superblock", o->device);
		return err;
	}
	if (err == -ENODATA)
		err = -EMEDIUMTYPE;
	if (!err)
		err = dmt_integrity_sb_decode(sector0, sb);
	if (err) {
		set_why(r, "not a dm-integrity device (no valid superblock)",
			o->device);
		return err;
	}
	r->sb = *sb;
	if (o->data_device) {
		err = open_data_device(o, data, &data_bytes, r);
		if (err)
			return err;
		r->data_device_bytes = data_bytes;
	}
	err = dmt_integrity_geom_from_sb(sb, o->data_device != NULL, size >> 9,
					 data_bytes >> 9, o->buffer_sectors, g,
					 &why);
	if (err) {
		set_why(r, why, o->device);
		return err;
	}
	r->geom = *g;
	if (!!(sb->flags & DMT_INTEGRITY_SB_HAVE_JOURNAL_MAC) !=
	    !!o->journal_mac.alg) {
		set_why(r, o->journal_mac.alg ?
			"the superblock has no journal MAC: drop --journal-integrity" :
			"the superblock has a journal MAC (have_journal_mac): give --journal-integrity and its key",
			o->device);
		return -EINVAL;
	}
	return 0;
}

int dmt_integrity_check(const struct dmt_integrity_opts *o,
			struct dmt_integrity_result *r)
{
	struct dmt_file meta = { .fd = -1 }, data = { .fd = -1 };
	struct dmt_integrity_tagger *tagger = NULL;
	struct dmt_integrity_jcrypt *jc = NULL;
	struct dmt_integrity_sb sb;
	struct dmt_integrity_geom g;
	uint64_t end;
	struct op op;
	int err, verdict = 0;

	memset(r, 0, sizeof(*r));
	memset(&op, 0, sizeof(op));
	err = check_alg(o, r);
	if (err)
		return err;
	err = open_existing(o, false, &meta, &data, &sb, &g, r);
	if (err)
		goto out;

	err = check_sb_mac(o, &meta, &sb, r);
	if (err == -EBADMSG)
		verdict = -EBADMSG;
	else if (err)
		goto out;
	if (sb.flags & DMT_INTEGRITY_SB_DIRTY_BITMAP) {
		set_why(r, "dirty bitmap: the device was not closed cleanly in bitmap mode; open and close it once with integritysetup to settle it",
			o->device);
		err = -EUCLEAN;
		goto out;
	}
	err = open_jcrypt(o, &g, &jc, r);
	if (err)
		goto out;
	err = verify_journal(&meta, &g, &sb, &o->journal_mac, jc, &r->journal);
	if (err) {
		set_why(r, "cannot read the journal", o->device);
		goto out;
	}
	if (r->journal.bad_commit_ids) {
		set_why(r, o->journal_crypt.alg ?
				   "journal commit ids do not match: a wrong --journal-crypt cipher or key, or a corrupted journal (the kernel would fail every I/O)" :
				   "journal commit ids do not match: the kernel would fail every I/O on this device (or the journal is encrypted: give --journal-crypt and its key)",
			o->device);
		verdict = -EBADMSG;
	} else if (r->journal.used_entries) {
		set_why(r, "the journal is not empty: the device was not closed cleanly (or a journal entry is corrupted); open and close it once with integritysetup to replay it",
			o->device);
		err = -EUCLEAN;
		goto out;
	}
	if (r->journal.bad_macs) {
		set_why(r, "journal section MAC mismatch", o->device);
		verdict = -EBADMSG;
	}

	end = sb.provided_data_sectors;
	if ((sb.flags & DMT_INTEGRITY_SB_RECALCULATING) &&
	    sb.recalc_sector < end)
		end = sb.recalc_sector;
	end >>= g.log2_spb;
	r->start_sector = 0;
	r->end_sector = end << g.log2_spb;

	err = make_tagger(o, &sb, &tagger, r);
	if (err)
		goto out;
	op.kind = OP_CHECK;
	op.o = o;
	op.r = r;
	op.g = &g;
	op.meta = &meta;
	op.src = g.meta_dev ? &data : &meta;
	op.tagger = tagger;
	err = walk(&op, 0, end);
	if (err && op.fail_what)
		set_why(r, op.fail_what, op.fail_path);
	if (err)
		goto out;
	r->blocks = end;
	if (r->mismatches) {
		set_why(r, "tag mismatch", o->device);
		verdict = -EBADMSG;
	}
	err = verdict;
out:
	free(op.unit_done);
	dmt_integrity_tagger_free(tagger);
	dmt_integrity_jcrypt_free(jc);
	dmt_file_close(&data);
	dmt_file_close(&meta);
	return err;
}

int dmt_integrity_recalculate(const struct dmt_integrity_opts *o,
			      struct dmt_integrity_result *r)
{
	struct dmt_file meta = { .fd = -1 }, data = { .fd = -1 };
	struct dmt_integrity_tagger *tagger = NULL;
	struct dmt_integrity_sb sb, tmp;
	struct dmt_integrity_geom g;
	uint64_t start = 0;
	struct op op;
	bool started = false;
	int err;

	memset(r, 0, sizeof(*r));
	memset(&op, 0, sizeof(op));
	err = check_alg(o, r);
	if (err)
		return err;
	err = open_existing(o, true, &meta, &data, &sb, &g, r);
	if (err)
		goto out;
	/* the superblock is rewritten: its MAC must be right */
	err = check_sb_mac(o, &meta, &sb, r);
	if (err)
		goto out;
	if ((sb.flags & DMT_INTEGRITY_SB_RECALCULATING) && !o->recalc_reset) {
		start = sb.recalc_sector;
		if (start > sb.provided_data_sectors)
			start = sb.provided_data_sectors;
	}
	start &= ~(uint64_t)(g.spb - 1);
	r->start_sector = start;
	r->end_sector = sb.provided_data_sectors;

	err = make_tagger(o, &sb, &tagger, r);
	if (err)
		goto out;
	tmp = sb;
	tmp.flags |= DMT_INTEGRITY_SB_RECALCULATING;
	tmp.recalc_sector = start;
	err = write_sb(&meta, &tmp, &o->journal_mac, g.meta_dev);
	if (err) {
		set_why(r, "cannot write the superblock", o->device);
		goto out;
	}
	started = true;

	op.kind = OP_RECALC;
	op.o = o;
	op.r = r;
	op.g = &g;
	op.meta = &meta;
	op.src = g.meta_dev ? &data : &meta;
	op.tagger = tagger;
	err = walk(&op, start >> g.log2_spb,
		   sb.provided_data_sectors >> g.log2_spb);
	if (err && op.fail_what)
		set_why(r, op.fail_what, op.fail_path);
	if (err)
		goto out;
	r->blocks = (sb.provided_data_sectors - start) >> g.log2_spb;
	/*
	 * Every tag is valid: clear the flag.  (The kernel itself leaves it
	 * set with recalc_sector = provided_data_sectors, but kernel 6.1 then
	 * refuses to open keyed devices without legacy_recalculate, because
	 * integritysetup adds `recalculate` whenever the flag is set.)
	 */
	tmp.flags &= ~(uint32_t)DMT_INTEGRITY_SB_RECALCULATING;
	tmp.recalc_sector = 0;
	err = write_sb(&meta, &tmp, &o->journal_mac, g.meta_dev);
	if (!err)
		err = dmt_file_sync(&meta);
	if (err)
		set_why(r, "cannot write the superblock", o->device);
	r->sb = tmp;
out:
	if (err && started && op.unit_done) {
		tmp.recalc_sector = walk_resume_sector(&op);
		if (!write_sb(&meta, &tmp, &o->journal_mac, g.meta_dev))
			dmt_file_sync(&meta);
		r->sb = tmp;
	}
	free(op.unit_done);
	dmt_integrity_tagger_free(tagger);
	dmt_file_close(&data);
	dmt_file_close(&meta);
	return err;
}

int dmt_integrity_read_sb(const char *path, struct dmt_integrity_sb *sb,
			  uint64_t *device_bytes)
{
	struct dmt_file f;
	uint8_t sector0[512];
	int err;

	err = dmt_file_open(&f, path, DMT_OPEN_READ);
	if (err)
		return err;
	err = dmt_file_size(&f, device_bytes);
	if (!err)
		err = read_sector0(&f, sector0);
	if (err == -ENODATA)
		err = -EMEDIUMTYPE;
	if (!err)
		err = dmt_integrity_sb_decode(sector0, sb);
	dmt_file_close(&f);
	return err;
}
