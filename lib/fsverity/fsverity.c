// SPDX-License-Identifier: MIT
/*
 * fs-verity parameters, geometry, descriptor and formatted digest, the
 * hashing engine shared by the one-file and batch paths, and
 * dmt_fsverity_compute_digest().  Format facts: docs/formats.md.
 */
#include "lib/common/reserved.h"
#include "lib/fsverity/fsverity_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <dmt/threads.h>
#include "lib/common/byteorder.h"
#include "lib/common/walk.h"

/* Descriptor field offsets (struct fsverity_descriptor in fs/verity/). */
#define DESC_VERSION	   0
#define DESC_HASH_ALG	   1
#define DESC_LOG_BLOCKSIZE 2
#define DESC_SALT_SIZE	   3
#define DESC_SIG_SIZE	   4  /* le32, 0 in the hashed descriptor */
#define DESC_DATA_SIZE	   8  /* le64 */
#define DESC_ROOT_HASH	   16 /* 64 bytes, zero-padded */
#define DESC_SALT	   80 /* 32 bytes, zero-padded */

static const struct {
	const char *name;
	size_t digest_size;
	size_t hash_block; /* the salt is padded to this */
} algs[] = {
	[DMT_FSVERITY_HASH_SHA256] = {"sha256", 32, 64},
	[DMT_FSVERITY_HASH_SHA512] = {"sha512", 64, 128},
};

uint32_t dmt_fsverity_hash_alg_by_name(const char *name)
{
	for (uint32_t i = 1; name && i < sizeof(algs) / sizeof(algs[0]); i++) {
		if (!strcmp(name, algs[i].name))
			return i;
	}
	return 0;
}

const char *dmt_fsverity_hash_alg_name(uint32_t alg)
{
	return alg && alg < sizeof(algs) / sizeof(algs[0]) ? algs[alg].name
							   : NULL;
}

size_t dmt_fsverity_digest_size(uint32_t alg)
{
	return dmt_fsverity_hash_alg_name(alg) ? algs[alg].digest_size : 0;
}

static uint32_t resolved_alg(const struct dmt_fsverity_params *p)
{
	return p->hash_algorithm ? p->hash_algorithm : DMT_FSVERITY_HASH_SHA256;
}

static uint32_t resolved_bs(const struct dmt_fsverity_params *p)
{
	return p->block_size ? p->block_size : DMT_FSVERITY_DEFAULT_BLOCK_SIZE;
}

void dmt_fsverity_params_init(struct dmt_fsverity_params *p)
{
	*p = (struct dmt_fsverity_params){ .version = 1 };
}

int dmt_fsverity_check_params(const struct dmt_fsverity_params *p,
			      struct dmt_reason *r)
{
	uint32_t alg = resolved_alg(p), bs = resolved_bs(p);
	size_t ds = dmt_fsverity_digest_size(alg);
	int rerr = DMT_CHECK_RESERVED(p, r);

	if (rerr)
		return rerr;
	int err;

	if (p->version != 1)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_BAD_VALUE,
				      "version", p->version);
	if (!ds)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_UNKNOWN_ALG,
				      "hash_algorithm", alg);
	if (bs & (bs - 1))
		return dmt_reason_set(r, -EINVAL, DMT_REASON_NOT_POWER_OF_2,
				      "block_size", bs);
	if (bs < 2 * ds || bs > DMT_FSVERITY_MAX_BLOCK_SIZE) {
		err = dmt_reason_set(r, -EINVAL, DMT_REASON_OUT_OF_RANGE,
				     "block_size", bs);
		if (r) {
			r->min = 2 * ds;
			r->max = DMT_FSVERITY_MAX_BLOCK_SIZE;
		}
		return err;
	}
	if (p->salt_size > DMT_FSVERITY_MAX_SALT) {
		err = dmt_reason_set(r, -EINVAL, DMT_REASON_TOO_LARGE,
				     "salt_size", p->salt_size);
		if (r)
			r->max = DMT_FSVERITY_MAX_SALT;
		return err;
	}
	if (p->salt_size && !p->salt)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_MISSING, "salt",
				      0);
	return 0;
}

static unsigned int ilog2_u32(uint32_t v)
{
	unsigned int n = 0;

	while (v >>= 1)
		n++;
	return n;
}

void fv_geometry(const struct fv_engine *e, uint64_t size, struct fv_geo *g)
{
	uint64_t blocks, start = 0;
	unsigned int hpb_bits = e->hpb_bits;
	int i;

	memset(g, 0, sizeof(*g));
	g->size = size;
	/* no overflow: size / bs + 1 */
	blocks = size / e->bs + (size % e->bs != 0);
	g->data_blocks = blocks;
	while (blocks > 1) {
		blocks = (blocks >> hpb_bits) +
			 ((blocks & ((1ull << hpb_bits) - 1)) != 0);
		g->level_blocks[g->levels++] = blocks;
	}
	/* the top level is stored first, level 0 last */
	for (i = (int)g->levels - 1; i >= 0; i--) {
		g->level_start[i] = start;
		start += g->level_blocks[i];
	}
	g->tree_blocks = start;
}

int dmt_fsverity_tree_size(const struct dmt_fsverity_params *p, uint64_t size,
			   uint64_t *tree_size)
{
	struct fv_engine e = {0};
	struct fv_geo g;
	int err = dmt_fsverity_check_params(p, NULL);

	if (err)
		return err;
	e.bs = resolved_bs(p);
	e.hpb_bits =
		ilog2_u32(e.bs) -
		ilog2_u32((uint32_t)dmt_fsverity_digest_size(resolved_alg(p)));
	fv_geometry(&e, size, &g);
	*tree_size = g.tree_blocks * e.bs;
	return 0;
}

void fv_descriptor(const struct fv_engine *e, uint64_t size,
		   const uint8_t *root,
		   uint8_t desc[DMT_FSVERITY_DESCRIPTOR_SIZE])
{
	memset(desc, 0, DMT_FSVERITY_DESCRIPTOR_SIZE);
	desc[DESC_VERSION] = 1;
	desc[DESC_HASH_ALG] = (uint8_t)e->alg;
	desc[DESC_LOG_BLOCKSIZE] = (uint8_t)ilog2_u32(e->bs);
	desc[DESC_SALT_SIZE] = (uint8_t)e->salt_size;
	put_le32(desc + DESC_SIG_SIZE, 0);
	put_le64(desc + DESC_DATA_SIZE, size);
	memcpy(desc + DESC_ROOT_HASH, root, e->ds);
	memcpy(desc + DESC_SALT, e->salt, e->salt_size);
}

void fv_digest_init(const struct fv_engine *e, struct dmt_fsverity_digest *d)
{
	memset(d, 0, sizeof(*d));
	d->digest_algorithm = (uint16_t)e->alg;
	d->digest_size = (uint16_t)e->ds;
}

size_t dmt_fsverity_format_digest(const struct dmt_fsverity_digest *d,
				  uint8_t out[DMT_FSVERITY_FORMATTED_MAX])
{
	size_t ds = dmt_fsverity_digest_size(d->digest_algorithm);

	if (!ds || ds != d->digest_size)
		return 0;
	memcpy(out, "FSVerity", 8);
	put_le16(out + 8, d->digest_algorithm);
	put_le16(out + 10, d->digest_size);
	memcpy(out + 12, d->digest, ds);
	return 12 + ds;
}

/* salt || block, the salt zero-padded to the hash's block size; no
 * prefix at all without a salt. */
static int new_block_hasher(struct fv_engine *e, const char *engine,
			    struct dmt_hasher **h)
{
	uint8_t padded[128] = {0};
	struct dmt_hasher_params hp = {
		.alg = algs[e->alg].name,
		.prefix = e->salt_size ? padded : NULL,
		.prefix_size = e->salt_size ? algs[e->alg].hash_block : 0,
		.msg_size = e->bs,
		.engine = engine,
	};

	memcpy(padded, e->salt, e->salt_size);
	return dmt_hasher_new(&hp, h, NULL);
}

static int alloc_workers(struct fv_engine *e, const char *engine)
{
	unsigned int i;
	int err;

	e->w = calloc(e->threads, sizeof(*e->w));
	if (!e->w)
		return -ENOMEM;
	for (i = 0; i < e->threads; i++) {
		struct fv_worker *w = &e->w[i];

		err = i ? dmt_hasher_clone(e->w[0].h, &w->h)
			: new_block_hasher(e, engine, &w->h);
		if (err)
			return err;
		w->io = aligned_alloc(4096, e->item_blocks * e->bs);
		w->dig = malloc(e->item_blocks * e->ds);
		w->msgs = malloc(e->item_blocks * sizeof(*w->msgs));
		w->dig2 = malloc(e->item_blocks * e->ds);
		if (!w->io || !w->dig || !w->msgs || !w->dig2)
			return -ENOMEM;
	}
	return 0;
}

int fv_engine_init(struct fv_engine *e, const struct dmt_fsverity_params *p,
		   struct dmt_reason *r)
{
	struct dmt_hasher_params dp = {.msg_size = DMT_FSVERITY_DESCRIPTOR_SIZE,
				       .engine = p->engine};
	int err;

	memset(e, 0, sizeof(*e));
	err = dmt_fsverity_check_params(p, r);
	if (err)
		return err;
	e->alg = resolved_alg(p);
	e->bs = resolved_bs(p);
	e->ds = (uint32_t)algs[e->alg].digest_size;
	e->hpb_bits = ilog2_u32(e->bs) - ilog2_u32(e->ds);
	e->salt_size = p->salt_size;
	memcpy(e->salt, p->salt ? p->salt : e->salt, p->salt_size);
	e->threads = p->threads ? p->threads : dmt_default_threads();
	if (e->threads > FV_MAX_THREADS)
		e->threads = FV_MAX_THREADS;
	/* the workers' buffers share the budget (at least a block each) */
	e->item_blocks = dmt_walk_share(DMT_WALK_MEM_BUDGET, e->threads, e->bs,
					e->bs, FV_ITEM_BYTES) /
			 e->bs;

	dp.alg = algs[e->alg].name;
	err = dmt_hasher_new(&dp, &e->hdesc, NULL);
	if (!err)
		err = alloc_workers(e, p->engine);
	if (err) {
		if (err == -ENOENT || err == -ENOTSUP)
			dmt_reason_set(r, err, DMT_REASON_UNSUPPORTED, "engine",
				       0);
		if (r && (err == -ENOENT || err == -ENOTSUP))
			r->name = p->engine;
		fv_engine_free(e);
	}
	return err;
}

void fv_engine_free(struct fv_engine *e)
{
	for (unsigned int i = 0; e->w && i < e->threads; i++) {
		dmt_hasher_free(e->w[i].h);
		free(e->w[i].io);
		free(e->w[i].dig);
		free(e->w[i].msgs);
		free(e->w[i].dig2);
	}
	free(e->w);
	dmt_hasher_free(e->hdesc);
	free(e->window);
	memset(e, 0, sizeof(*e));
}

int fv_size_changed(const struct fv_source *src, uint64_t size,
		    struct dmt_reason *r)
{
	dmt_reason_set(r, -ENODATA, DMT_REASON_FSVERITY_SIZE_CHANGED, NULL,
		       size);
	if (r)
		r->path = src->path;
	return -ENODATA;
}

int dmt_fsverity_compute_digest(void *fd, dmt_fsverity_read_fn read_fn,
				const struct dmt_fsverity_params *p,
				struct dmt_fsverity_digest *out,
				struct dmt_reason *r)
{
	const struct dmt_fsverity_metadata_callbacks *cb =
		p->metadata_callbacks;
	struct fv_source src = {.fd = -1, .read_fn = read_fn, .read_ctx = fd};
	uint8_t root[DMT_FSVERITY_MAX_DIGEST] = {0};
	uint8_t desc[DMT_FSVERITY_DESCRIPTOR_SIZE];
	const uint8_t *msg = desc;
	struct fv_engine e;
	int err;

	memset(out, 0, sizeof(*out));
	if (!read_fn)
		return dmt_reason_set(r, -EINVAL, DMT_REASON_MISSING, "read_fn",
				      0);
	err = fv_engine_init(&e, p, r);
	if (err)
		return err;
	err = fv_stream_root(&e, &src, p->file_size, cb, root, r);
	if (err)
		goto out;
	fv_descriptor(&e, p->file_size, root, desc);
	if (cb && cb->descriptor) {
		err = cb->descriptor(cb->ctx, desc, sizeof(desc));
		if (err)
			goto out;
	}
	fv_digest_init(&e, out);
	err = dmt_hasher_digest(e.hdesc, 1, &msg, NULL, out->digest);
out:
	fv_engine_free(&e);
	return err;
}
