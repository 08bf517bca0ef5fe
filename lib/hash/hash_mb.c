// SPDX-License-Identifier: MIT
/*
 * SHA-2 multi-lane framing.  All messages of a hasher have the same length,
 * so every lane has the same block structure: one blocks() call per segment
 * (staged head, in-place middle, staged tail) covers all lanes, and the
 * middle of each message is read straight from the caller's buffer.
 */
#include <string.h>

#include "lib/hash/hash_backend.h"

static inline size_t blk(const struct dmt_mb_pass *p)
{
	return p->wide ? 128 : 64;
}

size_t dmt_mb_pass_plan(struct dmt_mb_pass *p, bool wide, size_t prefix_size,
			size_t header_size, size_t msg_size,
			size_t suffix_size)
{
	size_t bs = wide ? 128 : 64, lenb = wide ? 16 : 8;
	size_t head0, k0, used;

	memset(p, 0, sizeof(*p));
	p->wide = wide;
	p->lp = prefix_size % bs;
	p->hs = header_size;
	p->ms = msg_size;
	head0 = p->lp + header_size;
	k0 = (bs - head0 % bs) % bs;
	if (msg_size >= k0 + bs) {
		p->k = k0;
		p->direct = (msg_size - k0) / bs * bs;
		p->head_len = head0 + k0;
		p->tail_msg = msg_size - k0 - p->direct;
		used = p->tail_msg + suffix_size;
	} else {
		/* Too short for an in-place block: stage everything. */
		p->tail_msg = msg_size;
		used = head0 + msg_size + suffix_size;
	}
	p->tail_len = (used + 1 + lenb + bs - 1) / bs * bs;
	p->stride = p->head_len + p->tail_len;
	return p->stride;
}

static void put_be64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 7; i >= 0; i--) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
}

void dmt_mb_pass_prepare(struct dmt_mb_pass *p, const void *iv,
			 const uint8_t *prefix, size_t prefix_size,
			 const uint8_t *suffix, size_t suffix_size,
			 uint8_t *stage, unsigned int lanes)
{
	size_t bs = blk(p), whole = prefix_size / bs;
	const uint8_t *ptail = prefix + whole * bs;
	uint64_t bits;
	unsigned int l;
	size_t used;

	if (p->wide) {
		memcpy(p->st0.w64, iv, sizeof(p->st0.w64));
		if (whole)
			dmt_sha512_portable.blocks(p->st0.w64, &prefix, whole);
	} else {
		memcpy(p->st0.w32, iv, sizeof(p->st0.w32));
		if (whole)
			dmt_sha256_portable.blocks(p->st0.w32, &prefix, whole);
	}
	bits = (uint64_t)(prefix_size + p->hs + p->ms + suffix_size) * 8;

	for (l = 0; l < lanes; l++) {
		uint8_t *h = stage + l * p->stride, *t = h + p->head_len;

		memset(h, 0, p->stride);
		if (p->direct) {
			memcpy(h, ptail, p->lp);
			used = p->tail_msg;
		} else {
			memcpy(t, ptail, p->lp);
			used = p->lp + p->hs + p->ms;
		}
		if (suffix_size)
			memcpy(t + used, suffix, suffix_size);
		used += suffix_size;
		t[used] = 0x80;
		put_be64(t + p->tail_len - 8, bits);
	}
}

/* Copies the per-message bytes of one lane into its staging area. */
static void fill_lane(const struct dmt_mb_pass *p, uint8_t *h,
		      const uint8_t *msg, const uint8_t *hdr)
{
	uint8_t *t = h + p->head_len;

	if (p->direct) {
		if (p->hs)
			memcpy(h + p->lp, hdr, p->hs);
		if (p->k)
			memcpy(h + p->lp + p->hs, msg, p->k);
		if (p->tail_msg)
			memcpy(t, msg + p->k + p->direct, p->tail_msg);
	} else {
		if (p->hs)
			memcpy(t + p->lp, hdr, p->hs);
		if (p->ms)
			memcpy(t + p->lp + p->hs, msg, p->ms);
	}
}

union mb_state {
	uint32_t w32[DMT_MB_MAX_LANES * 8];
	uint64_t w64[DMT_MB_MAX_LANES * 8];
};

static void run_blocks(const struct dmt_mb_fn *fn, union mb_state *st,
		       const uint8_t *const *ptr, size_t nblocks)
{
	if (!nblocks)
		return;
	if (fn->f256)
		fn->f256(st->w32, ptr, nblocks);
	else
		fn->f512(st->w64, ptr, nblocks);
}

static void load_state(union mb_state *st, const struct dmt_mb_pass *p,
		       unsigned int lanes)
{
	unsigned int l;

	for (l = 0; l < lanes; l++) {
		if (p->wide)
			memcpy(st->w64 + l * 8, p->st0.w64, sizeof(p->st0.w64));
		else
			memcpy(st->w32 + l * 8, p->st0.w32, sizeof(p->st0.w32));
	}
}

static void store_digest(const union mb_state *st, bool wide, unsigned int l,
			 uint8_t *out, size_t ds)
{
	size_t i;

	if (wide) {
		for (i = 0; i < ds / 8; i++)
			put_be64(out + 8 * i, st->w64[l * 8 + i]);
		return;
	}
	for (i = 0; i < ds / 4; i++) {
		uint32_t w = st->w32[l * 8 + i];

		out[4 * i] = (uint8_t)(w >> 24);
		out[4 * i + 1] = (uint8_t)(w >> 16);
		out[4 * i + 2] = (uint8_t)(w >> 8);
		out[4 * i + 3] = (uint8_t)w;
	}
}

void dmt_mb_run(const struct dmt_mb_fn *fn, const struct dmt_mb_pass *inner,
		uint8_t *in_stage, const struct dmt_mb_pass *outer,
		uint8_t *out_stage, size_t m, const uint8_t *const *msgs,
		const uint8_t *headers, size_t digest_size, uint8_t *out)
{
	union mb_state st;
	const uint8_t *ptr[DMT_MB_MAX_LANES];
	unsigned int lanes = fn->lanes, l;
	size_t bs = blk(inner);

	for (l = 0; l < m; l++)
		fill_lane(inner, in_stage + l * inner->stride, msgs[l],
			  headers ? headers + l * inner->hs : NULL);
	/* Lanes beyond m recompute lane 0: same structure, valid memory. */
	load_state(&st, inner, lanes);
	for (l = 0; l < lanes; l++)
		ptr[l] = in_stage + (l < m ? l : 0) * inner->stride;
	run_blocks(fn, &st, ptr, inner->head_len / bs);
	for (l = 0; l < lanes; l++)
		ptr[l] = msgs[l < m ? l : 0] + inner->k;
	run_blocks(fn, &st, ptr, inner->direct / bs);
	for (l = 0; l < lanes; l++)
		ptr[l] = in_stage + (l < m ? l : 0) * inner->stride +
			 inner->head_len;
	run_blocks(fn, &st, ptr, inner->tail_len / bs);

	if (outer) {
		/* The outer message is the inner digest, staged in place. */
		for (l = 0; l < m; l++)
			store_digest(&st, inner->wide, l,
				     out_stage + l * outer->stride +
				     outer->head_len + outer->lp + outer->hs,
				     digest_size);
		load_state(&st, outer, lanes);
		for (l = 0; l < lanes; l++)
			ptr[l] = out_stage + (l < m ? l : 0) * outer->stride +
				 outer->head_len;
		run_blocks(fn, &st, ptr, outer->tail_len / bs);
	}
	for (l = 0; l < m; l++)
		store_digest(&st, inner->wide, l, out + l * digest_size,
			     digest_size);
}
