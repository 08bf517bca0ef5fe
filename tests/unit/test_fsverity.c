// SPDX-License-Identifier: MIT
/*
 * fs-verity library tests (suite "fsverity"): digests, Merkle tree bytes
 * and descriptor bytes against libfsverity 1.5 (fsverity-utils, the
 * oracle, where it is installed: the oracle tests skip visibly otherwise),
 * golden vectors recorded with `fsverity digest` (testdata/fsverity, run
 * without libfsverity too), parameter edges and reasons, and the batch
 * interface against one-by-one digests.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <openssl/evp.h>

#include <dmt/fsverity.h>
#include <dmt/hash.h>
#include "lib/fsverity/fsverity_priv.h"
#include "tests/support/helpers.h"

#ifdef DMT_HAVE_LIBFSVERITY
#include <libfsverity.h>
#define NEED_ORACLE() ((void)0)
#else
#define NEED_ORACLE()                                                          \
	cr_skip("libfsverity (libfsverity-dev) is not installed: oracle "      \
		"comparison not run")
#endif

/* ---- data (the same bytes as testdata/fsverity/mkvectors.sh) ---- */

/* AES-128-CTR keystream, zero key and IV: bytes [0, size). */
static void keystream(uint8_t *out, size_t size)
{
	static const uint8_t zero16[16];
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int n;

	cr_assert(c);
	memset(out, 0, size);
	cr_assert(
		EVP_EncryptInit_ex(c, EVP_aes_128_ctr(), NULL, zero16, zero16));
	for (size_t off = 0; off < size;) {
		int len = size - off > (1 << 20) ? 1 << 20 : (int)(size - off);

		cr_assert(EVP_EncryptUpdate(c, out + off, &n, out + off, len));
		off += (size_t)n;
	}
	EVP_CIPHER_CTX_free(c);
}

/*
 * kind "aes": the keystream; "zero": all zero; "sparse": zero but the
 * first 4096 keystream bytes at size / 2 (cut at size).
 */
static uint8_t *gen(const char *kind, uint64_t size)
{
	uint8_t *buf = calloc(1, size + 1);

	cr_assert_not_null(buf);
	if (!strcmp(kind, "aes")) {
		keystream(buf, (size_t)size);
	} else if (!strcmp(kind, "sparse")) {
		uint8_t ks[4096];
		size_t at = (size_t)(size / 2);
		size_t n = size - at < 4096 ? (size_t)(size - at) : 4096;

		keystream(ks, sizeof(ks));
		memcpy(buf + at, ks, n);
	} else {
		cr_assert_str_eq(kind, "zero");
	}
	return buf;
}

struct reader {
	const uint8_t *buf;
	uint64_t size, pos;
	unsigned int calls;
};

static int mem_read(void *fd, void *buf, size_t count)
{
	struct reader *r = fd;

	if (count > r->size - r->pos)
		return -EIO; /* never asked for more than the file */
	memcpy(buf, r->buf + r->pos, count);
	r->pos += count;
	r->calls++;
	return 0;
}

/* What the metadata callbacks saw. */
struct meta {
	uint64_t tree_size;
	unsigned int size_calls, desc_calls;
	uint8_t *tree;
	uint8_t *seen; /* per tree block: handed out how often */
	uint32_t bs;
	uint8_t desc[DMT_FSVERITY_DESCRIPTOR_SIZE];
	int fail_at; /* block call that fails (-ENOSPC), 0 none */
	unsigned int block_calls;
};

static int meta_size(void *ctx, uint64_t size)
{
	struct meta *m = ctx;

	m->size_calls++;
	m->tree_size = size;
	free(m->tree);
	free(m->seen);
	m->tree = calloc(1, size + 1);
	m->seen = calloc(1, size / m->bs + 1);
	return m->tree && m->seen ? 0 : -ENOMEM;
}

static int meta_block(void *ctx, const void *block, size_t size,
		      uint64_t offset)
{
	struct meta *m = ctx;

	if (m->fail_at && ++m->block_calls == (unsigned int)m->fail_at)
		return -ENOSPC;
	if (size != m->bs || offset % m->bs || offset + size > m->tree_size)
		return -ERANGE;
	memcpy(m->tree + offset, block, size);
	m->seen[offset / m->bs]++;
	return 0;
}

static int meta_desc(void *ctx, const void *desc, size_t size)
{
	struct meta *m = ctx;

	if (size != sizeof(m->desc))
		return -ERANGE;
	memcpy(m->desc, desc, size);
	m->desc_calls++;
	return 0;
}

static void meta_free(struct meta *m)
{
	free(m->tree);
	free(m->seen);
}

/* Every tree block handed out exactly once, tree size asked once. */
static void meta_check_complete(const struct meta *m)
{
	cr_assert_eq(m->size_calls, 1);
	cr_assert_eq(m->desc_calls, 1);
	for (uint64_t i = 0; i < m->tree_size / m->bs; i++)
		cr_assert_eq(m->seen[i], 1, "tree block %llu seen %u times",
			     (unsigned long long)i, m->seen[i]);
}

struct spec {
	uint32_t alg, bs, salt_size;
	const uint8_t *salt;
	unsigned int threads;
};

static uint32_t ds_of(uint32_t alg)
{
	return (uint32_t)dmt_fsverity_digest_size(alg);
}

static void ours(const struct spec *s, const uint8_t *buf, uint64_t size,
		 struct dmt_fsverity_digest *d, struct meta *m)
{
	struct dmt_fsverity_metadata_callbacks cb = {m, meta_size, meta_block,
						     meta_desc};
	struct dmt_fsverity_params p = {
		.version = 1,
		.hash_algorithm = s->alg,
		.file_size = size,
		.block_size = s->bs,
		.salt_size = s->salt_size,
		.salt = s->salt,
		.metadata_callbacks = &cb,
		.threads = s->threads,
	};
	struct reader r = {buf, size, 0, 0};
	struct dmt_reason why = {0};
	int err;

	memset(m, 0, sizeof(*m));
	m->bs = s->bs;
	err = dmt_fsverity_compute_digest(&r, mem_read, &p, d, &why);
	cr_assert_eq(err, 0, "compute_digest: %d (reason %d %s)", err, why.code,
		     why.field ? why.field : "");
	cr_assert_eq(r.pos, size, "read %llu of %llu bytes",
		     (unsigned long long)r.pos, (unsigned long long)size);
	meta_check_complete(m);
	cr_assert_eq(d->digest_algorithm, s->alg);
	cr_assert_eq(d->digest_size, ds_of(s->alg));
}

#ifdef DMT_HAVE_LIBFSVERITY
static int oracle_size(void *ctx, uint64_t size)
{
	return meta_size(ctx, size);
}

static void oracle(const struct spec *s, const uint8_t *buf, uint64_t size,
		   uint8_t *digest, struct meta *m)
{
	struct libfsverity_metadata_callbacks cb = {m, oracle_size, meta_block,
						    meta_desc};
	struct libfsverity_merkle_tree_params p = {
		.version = 1,
		.hash_algorithm = s->alg,
		.file_size = size,
		.block_size = s->bs,
		.salt_size = s->salt_size,
		.salt = s->salt,
		.metadata_callbacks = &cb,
	};
	struct reader r = {buf, size, 0, 0};
	struct libfsverity_digest *d = NULL;

	memset(m, 0, sizeof(*m));
	m->bs = s->bs;
	cr_assert_eq(libfsverity_compute_digest(&r, mem_read, &p, &d), 0);
	cr_assert_eq(d->digest_size, ds_of(s->alg));
	memcpy(digest, d->digest, d->digest_size);
	free(d);
	meta_check_complete(m);
}

/* Our digest, tree and descriptor equal libfsverity's. */
static void same_as_oracle(const struct spec *s, const uint8_t *buf,
			   uint64_t size)
{
	struct dmt_fsverity_digest d;
	uint8_t want[DMT_FSVERITY_MAX_DIGEST];
	struct meta mo, mw;

	oracle(s, buf, size, want, &mw);
	ours(s, buf, size, &d, &mo);
	cr_assert_eq(memcmp(d.digest, want, d.digest_size), 0,
		     "digest: alg %u bs %u salt %u size %llu threads %u",
		     s->alg, s->bs, s->salt_size, (unsigned long long)size,
		     s->threads);
	cr_assert_eq(mo.tree_size, mw.tree_size, "tree size, size %llu",
		     (unsigned long long)size);
	cr_assert_eq(memcmp(mo.tree, mw.tree, mw.tree_size), 0,
		     "tree bytes: alg %u bs %u size %llu", s->alg, s->bs,
		     (unsigned long long)size);
	cr_assert_eq(memcmp(mo.desc, mw.desc, sizeof(mw.desc)), 0,
		     "descriptor: alg %u bs %u size %llu", s->alg, s->bs,
		     (unsigned long long)size);
	meta_free(&mo);
	meta_free(&mw);
}
#endif

#ifdef DMT_HAVE_LIBFSVERITY
/* Sizes around b blocks: b * bs - 1, b * bs, b * bs + 1. */
static size_t edge_sizes(uint64_t bs, uint64_t fan, uint64_t max, uint64_t *out)
{
	size_t n = 0;
	uint64_t blocks[] = {1,
			     2,
			     fan,
			     fan + 1,
			     fan * fan,
			     fan * fan + 1,
			     fan * fan * fan,
			     fan * fan * fan + 1};

	out[n++] = 0;
	out[n++] = 1;
	for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++) {
		uint64_t b = blocks[i] * bs;

		if (b + 1 > max)
			break;
		out[n++] = b - 1;
		out[n++] = b;
		out[n++] = b + 1;
	}
	return n;
}
#endif

/* Sizes 0, 1, block +-1 and the fan-out edges (blocks = fanout, fanout + 1,
 * fanout^2, ...), every block size class, both hashes, threads 1 and 2,
 * with and without salt; at most 24 MiB per file. */
Test(fsverity, oracle_sizes_and_fanout, .timeout = 300)
{
	NEED_ORACLE();
#ifdef DMT_HAVE_LIBFSVERITY
	static const uint8_t salt[32] = "0123456789abcdef0123456789abcdef";
	const uint64_t max = th_reduced() ? (2u << 20) : (24u << 20);
	uint8_t *buf = gen("aes", max);
	uint32_t algs[] = {DMT_FSVERITY_HASH_SHA256, DMT_FSVERITY_HASH_SHA512};

	for (size_t a = 0; a < 2; a++) {
		uint32_t ds = ds_of(algs[a]);
		uint32_t bss[] = {2 * ds, 4 * ds, 1024, 4096, 65536};

		for (size_t k = 0; k < sizeof(bss) / sizeof(bss[0]); k++) {
			uint64_t sizes[32];
			size_t n = edge_sizes(bss[k], bss[k] / ds, max, sizes);

			for (size_t i = 0; i < n; i++) {
				struct spec s = {algs[a], bss[k], 0, NULL,
						 1 + (unsigned int)(i & 1)};

				same_as_oracle(&s, buf, sizes[i]);
				s.salt = salt;
				s.salt_size = 1 + (uint32_t)(i % 32);
				same_as_oracle(&s, buf, sizes[i]);
			}
		}
	}
	free(buf);
#endif
}

/* Salts of every length 0..32 (the padding to the hash block). */
Test(fsverity, oracle_salts)
{
	NEED_ORACLE();
#ifdef DMT_HAVE_LIBFSVERITY
	uint8_t salt[32];
	uint8_t *buf = gen("aes", 3 * 4096 + 5);

	for (int i = 0; i < 32; i++)
		salt[i] = (uint8_t)(0xa0 + i);
	for (uint32_t len = 0; len <= 32; len++) {
		struct spec s = {DMT_FSVERITY_HASH_SHA256, 1024, len,
				 len ? salt : NULL, 1};

		same_as_oracle(&s, buf, 3 * 4096 + 5);
		s.alg = DMT_FSVERITY_HASH_SHA512;
		s.bs = 4096;
		same_as_oracle(&s, buf, 3 * 4096 + 5);
	}
	free(buf);
#endif
}

/* Zero data and mostly-zero data. */
Test(fsverity, oracle_sparse)
{
	NEED_ORACLE();
#ifdef DMT_HAVE_LIBFSVERITY
	const char *kinds[] = {"zero", "sparse"};
	uint64_t sizes[] = {1, 4096, 4097, 129 * 4096, (3u << 20) + 17};

	for (size_t k = 0; k < 2; k++) {
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			uint8_t *buf = gen(kinds[k], sizes[i]);
			struct spec s = {DMT_FSVERITY_HASH_SHA256, 4096, 0,
					 NULL, 2};

			same_as_oracle(&s, buf, sizes[i]);
			free(buf);
		}
	}
#endif
}

/* A big block size: one and several 1 MiB blocks, a two-level tree. */
Test(fsverity, oracle_big_blocks)
{
	NEED_ORACLE();
#ifdef DMT_HAVE_LIBFSVERITY
	uint64_t sizes[] = {5, (1u << 20) + 1, 3u << 20};
	uint8_t *buf = gen("aes", 3u << 20);

	for (size_t i = 0; i < 3; i++) {
		struct spec s = {DMT_FSVERITY_HASH_SHA512, 1u << 20, 0, NULL,
				 2};

		same_as_oracle(&s, buf, sizes[i]);
	}
	free(buf);
#endif
}

/* Two digests per block: every level is bigger than its buffer
 * (FV_LEVEL_BYTES), so levels go out in several pieces. */
Test(fsverity, oracle_deep_tree, .timeout = 120)
{
	NEED_ORACLE();
#ifdef DMT_HAVE_LIBFSVERITY
	uint64_t size = th_reduced() ? (9u << 20) + 100 : (20u << 20) + 100;
	uint8_t *buf = gen("aes", size);
	struct spec s = {DMT_FSVERITY_HASH_SHA256, 64, 7,
			 (const uint8_t *)"saltier", 2};

	same_as_oracle(&s, buf, size);
	s.alg = DMT_FSVERITY_HASH_SHA512;
	s.bs = 128;
	s.threads = 1;
	same_as_oracle(&s, buf, size);
	free(buf);
#endif
}

/* Every engine that can run here gives the same digests and trees. */
Test(fsverity, engines)
{
	struct dmt_engine_info info[32];
	size_t n = dmt_engine_list(info, 32);
	uint64_t size = 129 * 4096 + 5;
	uint8_t *buf = gen("aes", size);
	unsigned int tried = 0;

	cr_assert_leq(n, 32);
	for (uint32_t alg = 1; alg <= 2; alg++) {
		struct spec s = {alg, 4096, 5, (const uint8_t *)"salty", 2};
		struct dmt_fsverity_digest want;
		struct meta mw;

		ours(&s, buf, size, &want, &mw);
		for (size_t i = 0; i < n; i++) {
			struct dmt_fsverity_metadata_callbacks cb;
			struct dmt_fsverity_params p = {
				.version = 1,
				.hash_algorithm = alg,
				.file_size = size,
				.salt_size = 5,
				.salt = s.salt,
				.threads = 2,
				.engine = info[i].name,
				.metadata_callbacks = &cb,
			};
			struct reader r = {buf, size, 0, 0};
			struct dmt_fsverity_digest d;
			struct meta m = {.bs = 4096};

			if (!info[i].available ||
			    !strstr(info[i].algs,
				    dmt_fsverity_hash_alg_name(alg)))
				continue;
			cb = (struct dmt_fsverity_metadata_callbacks){
				&m, meta_size, meta_block, meta_desc};
			cr_assert_eq(dmt_fsverity_compute_digest(&r, mem_read,
								 &p, &d, NULL),
				     0, "engine %s", info[i].name);
			cr_assert_eq(memcmp(&d, &want, sizeof(d)), 0,
				     "engine %s, alg %u", info[i].name, alg);
			cr_assert_eq(memcmp(m.tree, mw.tree, mw.tree_size), 0);
			meta_free(&m);
			tried++;
		}
		meta_free(&mw);
	}
	cr_assert_geq(tried, 2, "no engine for sha256 and sha512");
	struct dmt_fsverity_params p = {.version = 1, .engine = "no-such"};
	struct dmt_reason why;
	struct dmt_fsverity_digest d;
	struct reader r = {buf, 0, 0, 0};

	cr_assert_eq(dmt_fsverity_compute_digest(&r, mem_read, &p, &d, &why),
		     -ENOENT);
	cr_assert_eq(why.code, DMT_REASON_UNSUPPORTED);
	cr_assert_str_eq(why.field, "engine");
	free(buf);
}

/* ---- parameters ---- */

static int check(uint32_t version, uint32_t alg, uint32_t bs, uint32_t salt,
		 struct dmt_reason *r)
{
	static const uint8_t s[33];
	struct dmt_fsverity_params p = {.version = version,
					.hash_algorithm = alg,
					.block_size = bs,
					.salt_size = salt,
					.salt = s};

	memset(r, 0, sizeof(*r));
	return dmt_fsverity_check_params(&p, r);
}

Test(fsverity, params_edges)
{
	struct dmt_reason r;

	cr_assert_eq(check(1, 0, 0, 0, &r), 0); /* sha256, 4096 */
	cr_assert_eq(check(1, 1, 64, 0, &r), 0);
	cr_assert_eq(check(1, 2, 128, 32, &r), 0);
	cr_assert_eq(check(1, 1, 1u << 30, 0, &r), 0);
	cr_assert_eq(check(1, 2, 1u << 30, 0, &r), 0);

	cr_assert_eq(check(2, 1, 4096, 0, &r), -EINVAL);
	cr_assert_eq(r.code, DMT_REASON_BAD_VALUE);
	cr_assert_str_eq(r.field, "version");
	cr_assert_eq(check(1, 3, 4096, 0, &r), -EINVAL);
	cr_assert_eq(r.code, DMT_REASON_UNKNOWN_ALG);
	cr_assert_str_eq(r.field, "hash_algorithm");
	cr_assert_eq(check(1, 1, 32, 0, &r), -EINVAL);
	cr_assert_eq(r.code, DMT_REASON_OUT_OF_RANGE);
	cr_assert_str_eq(r.field, "block_size");
	cr_assert_eq(r.min, 64);
	cr_assert_eq(r.max, 1u << 30);
	cr_assert_eq(check(1, 2, 64, 0, &r), -EINVAL);
	cr_assert_eq(r.min, 128);
	cr_assert_eq(check(1, 1, 1u << 31, 0, &r), -EINVAL);
	cr_assert_eq(r.code, DMT_REASON_OUT_OF_RANGE);
	cr_assert_eq(check(1, 1, 4095, 0, &r), -EINVAL);
	cr_assert_eq(r.code, DMT_REASON_NOT_POWER_OF_2);
	cr_assert_eq(check(1, 1, 4096, 33, &r), -EINVAL);
	cr_assert_eq(r.code, DMT_REASON_TOO_LARGE);
	cr_assert_str_eq(r.field, "salt_size");
	cr_assert_eq(r.max, 32);

	struct dmt_fsverity_params p = {.version = 1, .salt_size = 4};

	cr_assert_eq(dmt_fsverity_check_params(&p, &r), -EINVAL);
	cr_assert_eq(r.code, DMT_REASON_MISSING);
	cr_assert_str_eq(r.field, "salt");

	cr_assert_eq(dmt_fsverity_hash_alg_by_name("sha512"), 2);
	cr_assert_eq(dmt_fsverity_hash_alg_by_name("sha1"), 0);
	cr_assert_str_eq(dmt_fsverity_hash_alg_name(1), "sha256");
	cr_assert_null(dmt_fsverity_hash_alg_name(0));
}

Test(fsverity, tree_size)
{
	struct dmt_fsverity_params p = {.version = 1};
	uint64_t t;

	cr_assert_eq(dmt_fsverity_tree_size(&p, 0, &t), 0);
	cr_assert_eq(t, 0);
	cr_assert_eq(dmt_fsverity_tree_size(&p, 4096, &t), 0);
	cr_assert_eq(t, 0);
	cr_assert_eq(dmt_fsverity_tree_size(&p, 4097, &t), 0);
	cr_assert_eq(t, 4096);
	/* 129 blocks: two level-0 blocks and a root block */
	cr_assert_eq(dmt_fsverity_tree_size(&p, 129 * 4096, &t), 0);
	cr_assert_eq(t, 3 * 4096);
	p.block_size = 3;
	cr_assert_eq(dmt_fsverity_tree_size(&p, 1, &t), -EINVAL);
}

/* The formatted digest, byte by byte. */
Test(fsverity, formatted_digest)
{
	struct dmt_fsverity_digest d = {.digest_algorithm = 2,
					.digest_size = 64};
	uint8_t out[DMT_FSVERITY_FORMATTED_MAX];

	for (int i = 0; i < 64; i++)
		d.digest[i] = (uint8_t)i;
	cr_assert_eq(dmt_fsverity_format_digest(&d, out), 76);
	cr_assert_eq(memcmp(out, "FSVerity\x02\x00\x40\x00", 12), 0);
	cr_assert_eq(memcmp(out + 12, d.digest, 64), 0);
	d.digest_size = 32;
	cr_assert_eq(dmt_fsverity_format_digest(&d, out), 0);
}

/* Errors of the read callback and of the metadata callbacks come back. */
static int failing_read(void *fd, void *buf, size_t count)
{
	unsigned int *calls = fd;

	memset(buf, 0, count);
	return ++*calls == 3 ? -EIO : 0;
}

Test(fsverity, callback_errors)
{
	struct meta m = {.bs = 1024, .fail_at = 2};
	struct dmt_fsverity_metadata_callbacks cb = {&m, meta_size, meta_block,
						     meta_desc};
	struct dmt_fsverity_params p = {.version = 1,
					.block_size = 1024,
					.file_size = 64u << 20,
					.threads = 2,
					.metadata_callbacks = &cb};
	struct dmt_fsverity_digest d;
	unsigned int calls = 0;

	cr_assert_eq(
		dmt_fsverity_compute_digest(&calls, failing_read, &p, &d, NULL),
		-EIO);
	calls = 100;
	cr_assert_eq(
		dmt_fsverity_compute_digest(&calls, failing_read, &p, &d, NULL),
		-ENOSPC);
	meta_free(&m);
	cr_assert_eq(dmt_fsverity_compute_digest(&calls, NULL, &p, &d, NULL),
		     -EINVAL);
}

/* ---- the batch interface ---- */

struct batch_log {
	unsigned int n; /* results seen */
	int stop_at;	/* done returns -ECANCELED here (1-based) */
	struct dmt_fsverity_result res[600];
	struct dmt_reason reason[600];
};

static int log_done(void *ctx, const struct dmt_fsverity_result *res,
		    const struct dmt_reason *r)
{
	struct batch_log *l = ctx;

	cr_assert_lt(l->n, 600);
	cr_assert_not_null(r);
	if (!res->err) /* a reason only for a failure */
		cr_assert_eq(r->code, DMT_REASON_NONE);
	l->res[l->n] = *res;
	l->reason[l->n] = *r;
	l->res[l->n].path = NULL; /* only valid during the call */
	if (l->stop_at && (int)++l->n == l->stop_at)
		return -ECANCELED;
	if (!l->stop_at)
		l->n++;
	return 0;
}

/* Sizes of the mixed set: the edges, many small files, some that fill a
 * group's data buffer after a few (the rest waits for the next group), a
 * few big ones (streamed alone, between the groups). */
static uint64_t mixed_size(unsigned int i, uint32_t bs)
{
	static const uint64_t fixed[] = {0, 1, 4095, 4096, 4097, 8192};

	if (i < 6)
		return fixed[i];
	if (i % 97 == 0)
		return (1u << 20) + 1 + i; /* > one group slot */
	if (i % 61 == 0)
		return 129 * (uint64_t)bs + i; /* two-level tree */
	if (i % 13 == 0)
		return (600u << 10) + i;    /* a few fill a group */
	return (i * 2654435761u) % (16385); /* 0..16 KiB */
}

struct mixed {
	char *dir;
	unsigned int n;
	char *paths[600];
	uint8_t *bufs[600];
	uint64_t sizes[600];
};

static void mixed_make(struct mixed *m, unsigned int n, uint32_t bs)
{
	m->dir = th_mkdtemp();
	m->n = n;
	for (unsigned int i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "f%04u", i);
		m->paths[i] = th_path(m->dir, name);
		m->sizes[i] = mixed_size(i, bs);
		m->bufs[i] = malloc(m->sizes[i] + 1);
		cr_assert_not_null(m->bufs[i]);
		th_fill_random(m->bufs[i], (size_t)m->sizes[i], 1000 + i);
		/* some zero blocks */
		if (i % 5 == 0 && m->sizes[i] > 8192)
			memset(m->bufs[i] + 4096, 0, 4096);
		th_write_file(m->paths[i], m->bufs[i], (size_t)m->sizes[i]);
	}
}

static void mixed_free(struct mixed *m)
{
	for (unsigned int i = 0; i < m->n; i++) {
		free(m->paths[i]);
		free(m->bufs[i]);
	}
	th_rmtree(m->dir);
	free(m->dir);
}

/* Batch (files by path, fd and read callback in turn) == one by one,
 * digests, trees and descriptors, for threads 1 and 2. */
static void batch_vs_single(const struct spec *s, unsigned int nfiles)
{
	struct mixed *m = calloc(1, sizeof(*m));
	struct batch_log *log = calloc(1, sizeof(*log));
	struct meta *mb = calloc(nfiles, sizeof(*mb));
	struct dmt_fsverity_metadata_callbacks *cbs =
		calloc(nfiles, sizeof(*cbs));
	struct reader *rd = calloc(nfiles, sizeof(*rd));
	int *fds = calloc(nfiles, sizeof(*fds));
	struct dmt_fsverity_batch_params bp = {
		.tree = {.version = 1,
			 .hash_algorithm = s->alg,
			 .block_size = s->bs,
			 .salt_size = s->salt_size,
			 .salt = s->salt,
			 .threads = s->threads},
		.done = log_done,
		.done_ctx = log,
	};
	struct dmt_fsverity_batch *b;

	cr_assert(m && log && mb && cbs && rd && fds);
	mixed_make(m, nfiles, s->bs);
	cr_assert_eq(dmt_fsverity_batch_new(&bp, &b, NULL), 0);
	for (unsigned int i = 0; i < nfiles; i++) {
		struct dmt_fsverity_file f = {
			.fd = -1, .size = UINT64_MAX, .user = &fds[i]};

		mb[i].bs = s->bs;
		cbs[i] = (struct dmt_fsverity_metadata_callbacks){
			&mb[i], meta_size, meta_block, meta_desc};
		f.metadata_callbacks = &cbs[i];
		fds[i] = -1;
		if (i % 3 == 0) {
			f.path = m->paths[i];
		} else if (i % 3 == 1) {
			fds[i] = open(m->paths[i], O_RDONLY);
			cr_assert_geq(fds[i], 0);
			f.fd = fds[i];
			if (i % 2)
				f.size = m->sizes[i];
		} else {
			rd[i] = (struct reader){m->bufs[i], m->sizes[i], 0, 0};
			f.read_fn = mem_read;
			f.read_ctx = &rd[i];
			f.size = m->sizes[i];
		}
		cr_assert_eq(dmt_fsverity_batch_add(b, &f, NULL), 0);
	}
	cr_assert_eq(dmt_fsverity_batch_finish(b), 0);
	dmt_fsverity_batch_free(b);
	cr_assert_eq(log->n, nfiles);

	for (unsigned int i = 0; i < nfiles; i++) {
		const struct dmt_fsverity_result *res = &log->res[i];
		struct dmt_fsverity_digest d;
		struct meta one;

		cr_assert_eq(res->user, &fds[i], "result %u out of order", i);
		cr_assert_eq(res->err, 0, "file %u: %d", i, res->err);
		cr_assert_eq(res->size, m->sizes[i]);
		ours(s, m->bufs[i], m->sizes[i], &d, &one);
		cr_assert_eq(memcmp(&res->digest, &d, sizeof(d)), 0,
			     "file %u (%llu bytes): batch digest differs", i,
			     (unsigned long long)m->sizes[i]);
		meta_check_complete(&mb[i]);
		cr_assert_eq(mb[i].tree_size, one.tree_size);
		cr_assert_eq(memcmp(mb[i].tree, one.tree, one.tree_size), 0,
			     "file %u: tree differs", i);
		cr_assert_eq(memcmp(mb[i].desc, one.desc, sizeof(one.desc)), 0);
		meta_free(&one);
		meta_free(&mb[i]);
		if (fds[i] >= 0)
			close(fds[i]);
	}
	mixed_free(m);
	free(m);
	free(log);
	free(mb);
	free(cbs);
	free(rd);
	free(fds);
}

Test(fsverity, batch_equals_single, .timeout = 300)
{
	unsigned int n = th_reduced() ? 120 : 400;
	struct spec s = {DMT_FSVERITY_HASH_SHA256, 4096, 0, NULL, 1};

	batch_vs_single(&s, n);
	s.threads = 2;
	batch_vs_single(&s, n);
}

Test(fsverity, batch_equals_single_salted, .timeout = 300)
{
	struct spec s = {DMT_FSVERITY_HASH_SHA512, 1024, 32,
			 (const uint8_t *)"a salt of thirty-two bytes, ok!", 2};

	batch_vs_single(&s, th_reduced() ? 60 : 200);
	s.alg = DMT_FSVERITY_HASH_SHA256;
	s.bs = 65536;
	s.salt_size = 3;
	s.threads = 1;
	batch_vs_single(&s, 60);
}

/* Unreadable files, directories, files that changed size: reported in
 * order with their reasons, the others still digested. */
Test(fsverity, batch_errors)
{
	char *dir = th_mkdtemp();
	char *a = th_path(dir, "a"), *gone = th_path(dir, "gone");
	char *big = th_path(dir, "big");
	struct batch_log *log = calloc(1, sizeof(*log));
	struct dmt_fsverity_batch_params bp = {
		.tree = {.version = 1, .threads = 2},
		.done = log_done,
		.done_ctx = log,
	};
	struct dmt_fsverity_batch *b;
	int fd, fd2;

	th_write_random_file(a, 10000, 7);
	th_write_random_file(big, (2u << 20) + 10, 8);
	fd = open(a, O_RDONLY);
	fd2 = open(big, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_geq(fd2, 0);
	cr_assert_eq(dmt_fsverity_batch_new(&bp, &b, NULL), 0);
	struct dmt_fsverity_file files[] = {
		{.fd = -1, .path = a, .size = UINT64_MAX},
		{.fd = -1, .path = gone, .size = UINT64_MAX},
		{.fd = -1, .path = dir, .size = UINT64_MAX},
		{.fd = fd, .path = "shrunk", .size = 10001},
		{.fd = fd, .path = "grown", .size = 9999},
		{.fd = fd, .path = "streamed, shrunk", .size = (2u << 20)},
		{.fd = fd2, .path = "streamed, grown", .size = (2u << 20)},
		{.fd = fd, .path = "exact", .size = 10000},
		{.fd = fd2, .path = "streamed", .size = (2u << 20) + 10},
	};
	for (unsigned int i = 0; i < 9; i++)
		cr_assert_eq(dmt_fsverity_batch_add(b, &files[i], NULL), 0);
	cr_assert_eq(dmt_fsverity_batch_finish(b), 0);
	dmt_fsverity_batch_free(b);
	close(fd);
	close(fd2);

	cr_assert_eq(log->n, 9);
	cr_assert_eq(log->res[0].err, 0);
	cr_assert_eq(log->res[1].err, -ENOENT);
	cr_assert_eq(log->reason[1].code, DMT_REASON_IO);
	cr_assert_eq(log->res[2].err, -EISDIR);
	cr_assert_eq(log->reason[2].code, DMT_REASON_FSVERITY_NOT_REGULAR);
	for (int i = 3; i < 7; i++) {
		cr_assert_eq(log->res[i].err, -ENODATA, "case %d", i);
		cr_assert_eq(log->reason[i].code,
			     DMT_REASON_FSVERITY_SIZE_CHANGED, "case %d", i);
	}
	cr_assert_eq(log->res[7].err, 0);
	cr_assert_eq(memcmp(&log->res[7].digest, &log->res[0].digest,
			    sizeof(log->res[0].digest)),
		     0);
	cr_assert_eq(log->res[8].err, 0);
	free(log);
	free(a);
	free(big);
	free(gone);
	th_rmtree(dir);
	free(dir);
}

/* links_once: of the paths of one inode that the batch fstat's, exactly
 * one is read and the others name it in link_of (with the size); a path
 * with a given size, and every path without links_once, is read.  A
 * socket (open fails) is reported as no regular file. */
static void links_run(bool once, const char *dir, struct batch_log *log)
{
	static const char *const names[] = {"a", "a2", "c", "big", "big2",
					    "a3", "sock", "a2"};
	struct dmt_fsverity_batch_params bp = {
		.tree = {.version = 1, .threads = 2},
		.done = log_done,
		.done_ctx = log,
		.links_once = once,
	};
	struct dmt_fsverity_batch *b;

	memset(log, 0, sizeof(*log));
	cr_assert_eq(dmt_fsverity_batch_new(&bp, &b, NULL), 0);
	for (unsigned int i = 0; i < 8; i++) {
		char *path = th_path(dir, names[i]);
		struct dmt_fsverity_file f = {
			.fd = -1,
			.path = path,
			.size = i == 7 ? 10000 : UINT64_MAX,
			.user = (void *)(uintptr_t)(i + 1),
		};

		cr_assert_eq(dmt_fsverity_batch_add(b, &f, NULL), 0);
		free(path);
	}
	cr_assert_eq(dmt_fsverity_batch_finish(b), 0);
	dmt_fsverity_batch_free(b);
	cr_assert_eq(log->n, 8);
}

/* Of the results idx[0..n), one read and the others its links. */
static void expect_one_read(const struct batch_log *log, const int *idx,
			    int n, uint64_t size)
{
	int read = -1;

	for (int k = 0; k < n; k++) {
		const struct dmt_fsverity_result *r = &log->res[idx[k]];

		cr_assert_eq(r->err, 0, "result %d", idx[k]);
		cr_expect_eq(r->size, size, "result %d", idx[k]);
		if (!r->link_of) {
			cr_assert_eq(read, -1, "results %d and %d both read",
				     read, idx[k]);
			read = idx[k];
		}
	}
	cr_assert_neq(read, -1, "no path of the inode was read");
	for (int k = 0; k < n; k++)
		if (idx[k] != read)
			cr_expect_eq(log->res[idx[k]].link_of,
				     (void *)(uintptr_t)(read + 1));
}

Test(fsverity, batch_links_once)
{
	char *dir = th_mkdtemp();
	struct batch_log *log = calloc(1, sizeof(*log));
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const int as[] = {0, 1, 5}, bigs[] = {3, 4};
	char *sock = th_path(dir, "sock");
	int sfd = socket(AF_UNIX, SOCK_STREAM, 0);

	cr_assert_eq(th_sh(NULL, NULL,
			   "cd '%s' && head -c 10000 /dev/urandom > a && "
			   "ln a a2 && ln a a3 && "
			   "head -c 3000 /dev/urandom > c && "
			   "head -c 3000000 /dev/urandom > big && ln big big2",
			   dir),
		     0);
	cr_assert_geq(sfd, 0);
	cr_assert_lt(strlen(sock), sizeof(sa.sun_path));
	strcpy(sa.sun_path, sock);
	cr_assert_eq(bind(sfd, (struct sockaddr *)&sa, sizeof(sa)), 0);

	links_run(true, dir, log);
	expect_one_read(log, as, 3, 10000);
	expect_one_read(log, bigs, 2, 3000000);
	cr_expect_null(log->res[2].link_of);
	cr_expect_null(log->res[7].link_of, "a given size is always read");
	cr_expect_eq(log->res[7].err, 0);
	cr_expect_eq(log->res[6].err, -EINVAL);
	cr_expect_eq(log->reason[6].code, DMT_REASON_FSVERITY_NOT_REGULAR);
	cr_expect(S_ISSOCK((mode_t)log->reason[6].value));

	links_run(false, dir, log);
	for (int i = 0; i < 8; i++)
		cr_expect_null(log->res[i].link_of, "result %d", i);
	cr_expect_eq(memcmp(&log->res[0].digest, &log->res[1].digest,
			    sizeof(log->res[0].digest)),
		     0);
	cr_expect_eq(memcmp(&log->res[0].digest, &log->res[5].digest,
			    sizeof(log->res[0].digest)),
		     0);
	cr_expect_eq(memcmp(&log->res[3].digest, &log->res[4].digest,
			    sizeof(log->res[0].digest)),
		     0);
	close(sfd);
	free(sock);
	free(log);
	th_rmtree(dir);
	free(dir);
}

/* ---- sizes given with paths, worker chunks, the calling thread ---- */

#define GIVEN_FILES 240

struct thread_log {
	pthread_t caller;
	unsigned int n, other_thread;
	struct dmt_fsverity_result res[GIVEN_FILES];
	struct dmt_reason reason[GIVEN_FILES];
};

static int thread_done(void *ctx, const struct dmt_fsverity_result *res,
		       const struct dmt_reason *r)
{
	struct thread_log *l = ctx;

	if (!pthread_equal(pthread_self(), l->caller))
		l->other_thread++;
	cr_assert_lt(l->n, GIVEN_FILES);
	l->reason[l->n] = *r;
	l->res[l->n] = *res;
	l->res[l->n++].path = NULL;
	return 0;
}

/* Small files; a dozen over a worker's 1 MiB buffer, each streamed by one
 * worker (the window holds enough bytes); one of 3 MiB streamed by all. */
static uint64_t given_real_size(unsigned int i)
{
	if (i == 100)
		return 3u << 20;
	if (i % 20 == 7)
		return (1u << 20) + 1000 * i;
	return (i * 2654435761u) % 16385;
}

/* What the caller says: some files are a byte shorter or longer than
 * that (a file that changed between the caller's stat and the read). */
static uint64_t given_size(unsigned int i)
{
	uint64_t real = given_real_size(i);

	if (i % 17 == 3)
		return real + 1;
	if (i % 17 == 5 && real)
		return real - 1;
	return real;
}

static void given_sizes_run(const char *dir, char **paths, uint8_t **bufs,
			    unsigned int threads)
{
	struct thread_log *log = calloc(1, sizeof(*log));
	struct dmt_fsverity_batch_params bp = {
		.tree = {.version = 1, .threads = threads},
		.done = thread_done,
		.done_ctx = log,
	};
	struct spec s = {DMT_FSVERITY_HASH_SHA256, 4096, 0, NULL, 1};
	struct dmt_fsverity_batch *b;

	cr_assert(log);
	log->caller = pthread_self();
	cr_assert_eq(dmt_fsverity_batch_new(&bp, &b, NULL), 0);
	for (unsigned int i = 0; i < GIVEN_FILES; i++) {
		struct dmt_fsverity_file f = {
			.fd = -1,
			.path = i == 2 ? dir : paths[i],
			.size = i == 2 ? 4096 : given_size(i),
			.user = &paths[i]};
		char missing[64];

		/* a file in a directory that is not there: as open() says */
		if (i == 9) {
			snprintf(missing, sizeof(missing), "%s/no-dir/f", dir);
			f.path = missing;
		}

		cr_assert_eq(dmt_fsverity_batch_add(b, &f, NULL), 0);
	}
	cr_assert_eq(dmt_fsverity_batch_finish(b), 0);
	dmt_fsverity_batch_free(b);
	cr_assert_eq(log->n, GIVEN_FILES);
	cr_expect_eq(log->other_thread, 0, "done ran on another thread");
	for (unsigned int i = 0; i < GIVEN_FILES; i++) {
		const struct dmt_fsverity_result *res = &log->res[i];
		const struct dmt_reason *why = &log->reason[i];
		uint64_t real = given_real_size(i);
		struct dmt_fsverity_digest d;
		struct meta m;

		cr_assert_eq(res->user, &paths[i], "result %u out of order", i);
		if (i == 9) {
			cr_expect_eq(res->err, -ENOENT);
			cr_expect_eq(why->code, DMT_REASON_IO);
			continue;
		}
		if (i == 2) {
			cr_expect_eq(res->err, -EISDIR);
			cr_expect_eq(why->code,
				     DMT_REASON_FSVERITY_NOT_REGULAR);
			continue;
		}
		if (given_size(i) != real) {
			cr_expect_eq(res->err, -ENODATA, "file %u", i);
			cr_expect_eq(why->code,
				     DMT_REASON_FSVERITY_SIZE_CHANGED,
				     "file %u (%llu bytes, said %llu)", i,
				     (unsigned long long)real,
				     (unsigned long long)given_size(i));
			continue;
		}
		cr_assert_eq(res->err, 0, "file %u: %d", i, res->err);
		cr_expect_eq(res->size, real);
		ours(&s, bufs[i], real, &d, &m);
		cr_expect_eq(memcmp(&res->digest, &d, sizeof(d)), 0,
			     "file %u (%llu bytes, %u threads): digest differs",
			     i, (unsigned long long)real, threads);
		meta_free(&m);
	}
	free(log);
}

Test(fsverity, batch_given_sizes_checked_as_read, .timeout = 120)
{
	char *dir = th_mkdtemp();
	char *paths[GIVEN_FILES];
	uint8_t *bufs[GIVEN_FILES];

	for (unsigned int i = 0; i < GIVEN_FILES; i++) {
		char name[32];
		uint64_t size = given_real_size(i);

		snprintf(name, sizeof(name), "f%03u", i);
		paths[i] = th_path(dir, name);
		bufs[i] = malloc(size + 1);
		cr_assert_not_null(bufs[i]);
		th_fill_random(bufs[i], (size_t)size, 500 + i);
		th_write_file(paths[i], bufs[i], (size_t)size);
	}
	given_sizes_run(dir, paths, bufs, 2);
	given_sizes_run(dir, paths, bufs, 1);
	for (unsigned int i = 0; i < GIVEN_FILES; i++) {
		free(paths[i]);
		free(bufs[i]);
	}
	th_rmtree(dir);
	free(dir);
}

/* done's non-zero return stops the batch and comes back. */
Test(fsverity, batch_stop)
{
	struct batch_log *log = calloc(1, sizeof(*log));
	struct dmt_fsverity_batch_params bp = {
		.tree = {.version = 1, .threads = 1},
		.done = log_done,
		.done_ctx = log,
	};
	struct dmt_fsverity_batch *b;
	struct reader r = {(const uint8_t *)"", 0, 0, 0};
	struct dmt_fsverity_file f = {
		.fd = -1, .read_fn = mem_read, .read_ctx = &r};
	int err = 0;

	log->stop_at = 300;
	cr_assert_eq(dmt_fsverity_batch_new(&bp, &b, NULL), 0);
	for (unsigned int i = 0; i < 500 && !err; i++)
		err = dmt_fsverity_batch_add(b, &f, NULL);
	if (!err)
		err = dmt_fsverity_batch_finish(b);
	cr_assert_eq(err, -ECANCELED);
	cr_assert_eq(log->n, 300);
	cr_assert_eq(dmt_fsverity_batch_add(b, &f, NULL), -ECANCELED);
	dmt_fsverity_batch_free(b);
	f.read_fn = NULL;
	bp.tree.block_size = 100;
	struct dmt_reason why;

	cr_assert_eq(dmt_fsverity_batch_new(&bp, &b, &why), -EINVAL);
	cr_assert_eq(why.code, DMT_REASON_NOT_POWER_OF_2);
	free(log);
}

/* ---- golden vectors (testdata/fsverity/vectors.txt) ---- */

static void hex(const uint8_t *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * n] = 0;
}

static void sha256_hex(const uint8_t *p, size_t n, char out[65])
{
	uint8_t md[32];

	cr_assert(EVP_Digest(p, n, md, NULL, EVP_sha256(), NULL));
	hex(md, 32, out);
}

struct golden {
	char alg[8], salt[68], kind[8];
	uint32_t bs;
	uint64_t size;
	char digest[132], formatted[160], tree[68], desc[68];
};

static bool golden_parse(const char *line, struct golden *v)
{
	return sscanf(line,
		      "%7[^|]|%u|%67[^|]|%7[^|]|%lu|%131[^|]|%159[^|]|%67[^|]|"
		      "%67s",
		      v->alg, &v->bs, v->salt, v->kind, &v->size, v->digest,
		      v->formatted, v->tree, v->desc) == 9;
}

static int golden_done(void *ctx, const struct dmt_fsverity_result *res,
		       const struct dmt_reason *r)
{
	*(struct dmt_fsverity_result *)ctx = *res;
	return 0;
}

/* The same digest through the batch, from a file by path. */
static void golden_batch(const struct spec *s, const struct golden *v,
			 const uint8_t *buf, const char *dir)
{
	struct dmt_fsverity_result res = {.err = 1};
	struct dmt_fsverity_batch_params bp = {
		.tree = {.version = 1,
			 .hash_algorithm = s->alg,
			 .block_size = s->bs,
			 .salt_size = s->salt_size,
			 .salt = s->salt,
			 .threads = 2},
		.done = golden_done,
		.done_ctx = &res,
	};
	char *path = th_path(dir, "data"), got[132];
	struct dmt_fsverity_file f = {
		.fd = -1, .path = path, .size = UINT64_MAX};
	struct dmt_fsverity_batch *b;

	th_write_file(path, buf, (size_t)v->size);
	cr_assert_eq(dmt_fsverity_batch_new(&bp, &b, NULL), 0);
	cr_assert_eq(dmt_fsverity_batch_add(b, &f, NULL), 0);
	cr_assert_eq(dmt_fsverity_batch_finish(b), 0);
	dmt_fsverity_batch_free(b);
	cr_assert_eq(res.err, 0);
	hex(res.digest.digest, res.digest.digest_size, got);
	cr_assert_str_eq(got, v->digest, "batch: %s|%u|%s|%s|%lu", v->alg,
			 v->bs, v->salt, v->kind, v->size);
	free(path);
}

static void golden_check(const struct golden *v, const char *dir)
{
	uint8_t salt[32], *buf = gen(v->kind, v->size);
	uint8_t fmt[DMT_FSVERITY_FORMATTED_MAX];
	struct spec s = {dmt_fsverity_hash_alg_by_name(v->alg), v->bs, 0, NULL,
			 2};
	struct dmt_fsverity_digest d;
	char got[200], sum[65];
	struct meta m;

	cr_assert_neq(s.alg, 0, "unknown algorithm %s", v->alg);
	if (strcmp(v->salt, "-")) {
		s.salt_size = (uint32_t)strlen(v->salt) / 2;
		for (uint32_t i = 0; i < s.salt_size; i++)
			cr_assert_eq(sscanf(v->salt + 2 * i, "%2hhx", &salt[i]),
				     1);
		s.salt = salt;
	}
	ours(&s, buf, v->size, &d, &m);
	hex(d.digest, d.digest_size, got);
	cr_assert_str_eq(got, v->digest, "%s|%u|%s|%s|%lu", v->alg, v->bs,
			 v->salt, v->kind, v->size);
	hex(fmt, dmt_fsverity_format_digest(&d, fmt), got);
	cr_assert_str_eq(got, v->formatted);
	sha256_hex(m.tree, (size_t)m.tree_size, sum);
	cr_assert_str_eq(sum, v->tree, "tree of %s|%u|%lu", v->alg, v->bs,
			 v->size);
	sha256_hex(m.desc, sizeof(m.desc), sum);
	cr_assert_str_eq(sum, v->desc);
	meta_free(&m);
	golden_batch(&s, v, buf, dir);
	free(buf);
}

Test(fsverity, golden_vectors, .timeout = 120)
{
	const char *src = getenv("DMT_SRC");
	char *path, line[1024], *dir = th_mkdtemp();
	unsigned int n = 0;
	FILE *fp;

	cr_assert_geq(asprintf(&path, "%s/testdata/fsverity/vectors.txt",
			       src && *src ? src : "."),
		      0);
	fp = fopen(path, "r");
	cr_assert_not_null(fp, "%s", path);
	while (fgets(line, sizeof(line), fp)) {
		struct golden v;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		cr_assert(golden_parse(line, &v), "bad vector line: %s", line);
		golden_check(&v, dir);
		n++;
	}
	fclose(fp);
	cr_assert_geq(n, 40, "only %u vectors", n);
	free(path);
	th_rmtree(dir);
	free(dir);
}
