// SPDX-License-Identifier: MIT
/*
 * dm-integrity tags through the batched engine (formats.md 2.9):
 *	tag(s) = ALG([salt16] || le64(s) || block)[0..tag_size), zero-padded
 * One hasher per tagger with the salt as its fixed prefix and the sector
 * number as the per-message header, so a whole run of blocks is one call.
 */
#include <dmt/integrity.h>

#include "lib/integrity/integrity_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <dmt/hash.h>

/* Blocks per engine call: headers and digests stay in L1/L2. */
#define TAG_BATCH 1024

struct dmt_integrity_tagger {
	struct dmt_hasher *h;
	size_t digest;
	unsigned int tag_size;
	unsigned int spb;
	uint8_t *headers;	/* TAG_BATCH le64 sector numbers */
	uint8_t *scratch;	/* TAG_BATCH digests, when digest != tag */
};

static int tagger_bufs(struct dmt_integrity_tagger *t)
{
	t->headers = malloc(TAG_BATCH * 8);
	if (!t->headers)
		return -ENOMEM;
	if (t->digest != t->tag_size) {
		t->scratch = malloc(TAG_BATCH * t->digest);
		if (!t->scratch)
			return -ENOMEM;
	}
	return 0;
}

int dmt_integrity_tagger_new(const char *alg, const void *key,
			     size_t key_size, const uint8_t *salt,
			     unsigned int sector_size, unsigned int tag_size,
			     const char *engine,
			     struct dmt_integrity_tagger **out)
{
	struct dmt_hasher_params p = {
		.alg = alg,
		.key = key,
		.key_size = key_size,
		.prefix = salt,
		.prefix_size = salt ? DMT_INTEGRITY_SALT_SIZE : 0,
		.header_size = 8,
		.msg_size = sector_size,
		.engine = engine,
	};
	struct dmt_integrity_tagger *t;
	int err;

	*out = NULL;
	if (!tag_size || tag_size > DMT_INTEGRITY_MAX_TAG ||
	    sector_size < 512 || sector_size > 4096 ||
	    (sector_size & (sector_size - 1)))
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->tag_size = tag_size;
	t->spb = sector_size / 512;
	err = dmt_hasher_new(&p, &t->h, NULL);
	if (err)
		goto fail;
	t->digest = dmt_hasher_digest_size(t->h);
	err = tagger_bufs(t);
	if (err)
		goto fail;
	*out = t;
	return 0;
fail:
	dmt_integrity_tagger_free(t);
	return err;
}

int dmt_integrity_tagger_clone(const struct dmt_integrity_tagger *src,
			       struct dmt_integrity_tagger **out)
{
	struct dmt_integrity_tagger *t;
	int err;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->tag_size = src->tag_size;
	t->spb = src->spb;
	t->digest = src->digest;
	err = dmt_hasher_clone(src->h, &t->h);
	if (err)
		goto fail;
	err = tagger_bufs(t);
	if (err)
		goto fail;
	*out = t;
	return 0;
fail:
	dmt_integrity_tagger_free(t);
	return err;
}

void dmt_integrity_tagger_free(struct dmt_integrity_tagger *t)
{
	if (!t)
		return;
	dmt_hasher_free(t->h);
	free(t->headers);
	free(t->scratch);
	free(t);
}

const char *dmt_integrity_tagger_engine(const struct dmt_integrity_tagger *t)
{
	return dmt_hasher_engine(t->h);
}

int dmt_integrity_tags(struct dmt_integrity_tagger *t, uint64_t sector,
		       size_t n, const uint8_t *data, size_t stride,
		       uint8_t *tags)
{
	while (n) {
		size_t m = n < TAG_BATCH ? n : TAG_BATCH, i;
		uint8_t *hp = t->headers;
		int err;

		for (i = 0; i < m; i++, hp += 8) {
			uint64_t s = sector + (uint64_t)i * t->spb;

			for (int k = 0; k < 8; k++)
				hp[k] = (uint8_t)(s >> (8 * k));
		}
		if (!t->scratch) {
			err = dmt_hasher_digest_strided(t->h, m, data, stride,
							t->headers, tags);
			if (err)
				return err;
		} else {
			size_t keep = t->digest < t->tag_size ? t->digest :
								t->tag_size;

			err = dmt_hasher_digest_strided(t->h, m, data, stride,
							t->headers, t->scratch);
			if (err)
				return err;
			for (i = 0; i < m; i++) {
				uint8_t *o = tags + i * t->tag_size;

				memcpy(o, t->scratch + i * t->digest, keep);
				if (keep < t->tag_size)
					memset(o + keep, 0, t->tag_size - keep);
			}
		}
		tags += m * t->tag_size;
		data += m * stride;
		sector += (uint64_t)m * t->spb;
		n -= m;
	}
	return 0;
}

int dmt_integrity_default_tag_size(const char *alg, unsigned int *tag_size)
{
	const struct dmt_hash_alg *a;
	const char *name;
	int err;

	err = dmt_hash_alg_lookup(alg, &a);
	if (err)
		return err;
	name = dmt_hash_alg_name(a);
	if (!strcmp(name, "crc32") || !strcmp(name, "crc32c"))
		*tag_size = 4;
	else if (!strcmp(name, "xxhash64"))
		*tag_size = 8;
	else
		*tag_size = (unsigned int)dmt_hash_alg_digest_size(a);
	return 0;
}
