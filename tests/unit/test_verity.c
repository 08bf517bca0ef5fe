// SPDX-License-Identifier: MIT
/*
 * dm-verity library tests (suite "verity"): golden vectors recorded from
 * veritysetup 2.6.1 (testdata/verity/vectors.txt, run through the CLI),
 * geometry and superblock, and the tree builder against a naive model
 * written here with OpenSSL EVP (an independent oracle): every thread
 * count and engine, sparse vs dense, and verification that
 * pinpoints flipped data, hash and padding bytes.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <openssl/evp.h>

#include <dmt/hash.h>
#include <dmt/io.h>
#include <dmt/verity.h>
#include "lib/common/testhooks.h"
#include "tests/support/helpers.h"

#define UUID "12345678-1234-1234-1234-123456789abc"

/* ---- data generators (the same bytes as testdata/verity/mkvectors.sh) */

/* AES-128-CTR keystream, zero key and IV, bytes [0, size). */
static void gen_aes(const char *path, uint64_t size)
{
	static const uint8_t zero16[16];
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	size_t chunk = 1 << 20;
	uint8_t *in = calloc(1, chunk), *out = malloc(chunk + 16);
	FILE *f = fopen(path, "wb");
	int n;

	cr_assert(c && in && out && f);
	cr_assert(EVP_EncryptInit_ex(c, EVP_aes_128_ctr(), NULL, zero16,
				     zero16));
	while (size) {
		size_t len = size < chunk ? (size_t)size : chunk;

		cr_assert(EVP_EncryptUpdate(c, out, &n, in, (int)len));
		cr_assert_eq(fwrite(out, 1, (size_t)n, f), (size_t)n);
		size -= len;
	}
	fclose(f);
	EVP_CIPHER_CTX_free(c);
	free(in);
	free(out);
}

/* formats.md 1.6 "TV2": every byte of 4096-byte block k is k. */
static void gen_tv2(const char *path, uint64_t size)
{
	uint8_t *buf = malloc(size);

	cr_assert_not_null(buf);
	for (uint64_t k = 0; k < size / 4096; k++)
		memset(buf + k * 4096, (int)(k & 0xff), 4096);
	th_write_file(path, buf, size);
	free(buf);
}

static void gen_zero(const char *path, uint64_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, (off_t)size), 0);
	close(fd);
}

/* Sparse: 4096 keystream bytes k * 4096.. at k * (64 MiB + 512). */
static void gen_holes(const char *path, uint64_t size)
{
	const uint64_t step = (64 << 20) + 512;
	char *ks = malloc(strlen(path) + 4);
	uint8_t *buf;
	size_t len;
	int fd;

	sprintf(ks, "%s.ks", path);
	gen_aes(ks, (size / step + 1) * 4096);
	buf = th_read_file(ks, &len);
	unlink(ks);
	gen_zero(path, size);
	fd = open(path, O_WRONLY);
	cr_assert_geq(fd, 0);
	for (uint64_t k = 0; k * step + 4096 <= size; k++)
		cr_assert_eq(pwrite(fd, buf + k * 4096, 4096,
				    (off_t)(k * step)), 4096);
	close(fd);
	free(buf);
	free(ks);
}

static char *src_path(const char *rel)
{
	const char *src = getenv("DMT_SRC");
	char *p;

	cr_assert_geq(asprintf(&p, "%s/%s", src && *src ? src : ".", rel), 0);
	return p;
}

/* "Root hash:      \t<hex>" from veritysetup-style output */
static bool root_from_output(const char *out, char *root, size_t size)
{
	const char *p = strstr(out, "Root hash:");

	if (!p)
		return false;
	p = strchr(p, '\t');
	if (!p || sscanf(p + 1, "%129s", root) != 1)
		return false;
	return strlen(root) < size;
}

/* ---- golden vectors, through the CLI ---- */

struct vector {
	char name[64], kind[8], layout[8];
	uint64_t size;
	char opts[1200], root[132], sum[68];
};

static int load_vectors(struct vector *v, int max)
{
	char *path = src_path("testdata/verity/vectors.txt");
	FILE *f = fopen(path, "r");
	char line[2048];
	int n = 0;

	cr_assert_not_null(f, "cannot open %s", path);
	while (fgets(line, sizeof(line), f) && n < max) {
		char *fld[7], *s = line;
		int i;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		line[strcspn(line, "\n")] = '\0';
		for (i = 0; i < 7; i++)
			fld[i] = strsep(&s, "|");
		cr_assert_not_null(fld[6], "bad vector line %s", line);
		snprintf(v[n].name, sizeof(v[n].name), "%s", fld[0]);
		snprintf(v[n].kind, sizeof(v[n].kind), "%s", fld[1]);
		v[n].size = strtoull(fld[2], NULL, 10);
		snprintf(v[n].layout, sizeof(v[n].layout), "%s", fld[3]);
		snprintf(v[n].opts, sizeof(v[n].opts), "%s", fld[4]);
		snprintf(v[n].root, sizeof(v[n].root), "%s", fld[5]);
		snprintf(v[n].sum, sizeof(v[n].sum), "%s", fld[6]);
		n++;
	}
	fclose(f);
	free(path);
	return n;
}

/* argv: tool action data hash [opts...] [extra...] */
static int run_tool(char **out, char **err, const char *action,
		    const char *data, const char *hash, const char *opts,
		    const char *const *extra)
{
	char *copy = strdup(opts), *s = copy, *tok;
	char *argv[64];
	int n = 0, rc;

	argv[n++] = (char *)th_tool("verity-tool");
	argv[n++] = (char *)action;
	argv[n++] = (char *)data;
	argv[n++] = (char *)hash;
	while ((tok = strsep(&s, " ")) && n < 56)
		if (*tok)
			argv[n++] = tok;
	for (; extra && *extra && n < 63; extra++)
		argv[n++] = (char *)*extra;
	argv[n] = NULL;
	rc = th_run(argv, out, err);
	free(copy);
	return rc;
}

Test(verity, golden_vectors_from_veritysetup, .timeout = 120)
{
	struct vector *v = calloc(64, sizeof(*v));
	char *dir = th_mkdtemp();
	int n = load_vectors(v, 64);

	cr_assert_geq(n, 10, "too few vectors");
	for (int i = 0; i < n; i++) {
		char *data = th_path(dir, "data"), *hash = th_path(dir, "hash");
		const char *hpath = !strcmp(v[i].layout, "same") ? data : hash;
		const char *threads[] = { "--threads", i % 2 ? "3" : "1",
					  "--uuid", UUID, NULL };
		const char *vextra[] = { v[i].root, NULL };
		char root[132] = "", sum[65], *out, *err;
		int rc;

		unlink(data);
		unlink(hash);
		if (!strcmp(v[i].kind, "aes"))
			gen_aes(data, v[i].size);
		else if (!strcmp(v[i].kind, "tv2"))
			gen_tv2(data, v[i].size);
		else if (!strcmp(v[i].kind, "holes"))
			gen_holes(data, v[i].size);
		else
			gen_zero(data, v[i].size);

		rc = run_tool(&out, &err, "format", data, hpath, v[i].opts,
			      threads);
		cr_assert_eq(rc, 0, "%s: exit %d: %s", v[i].name, rc, err);
		cr_assert(root_from_output(out, root, sizeof(root)),
			  "%s: no root hash in: %s", v[i].name, out);
		cr_expect_str_eq(root, v[i].root, "%s: root hash", v[i].name);
		th_sha256_file(hpath, sum);
		cr_expect_str_eq(sum, v[i].sum, "%s: hash image", v[i].name);
		free(out);
		free(err);

		rc = run_tool(NULL, &err, "verify", data, hpath, v[i].opts,
			      vextra);
		cr_expect_eq(rc, 0, "%s: verify exit %d: %s", v[i].name, rc,
			     err);
		free(err);
		free(data);
		free(hash);
	}
	th_rmtree(dir);
	free(dir);
	free(v);
}

/* ---- a naive model of the format (formats.md 1.1-1.4), EVP only ---- */

struct model {
	uint8_t root[EVP_MAX_MD_SIZE];
	size_t ds;
	uint8_t *image;		/* the whole hash file */
	size_t image_len;
};

static void model_hash(const EVP_MD *md, int type, const uint8_t *salt,
		       size_t salt_len, const uint8_t *blk, size_t len,
		       uint8_t *out)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	EVP_DigestInit_ex(c, md, NULL);
	if (type == 1)
		EVP_DigestUpdate(c, salt, salt_len);
	EVP_DigestUpdate(c, blk, len);
	if (type == 0)
		EVP_DigestUpdate(c, salt, salt_len);
	EVP_DigestFinal_ex(c, out, NULL);
	EVP_MD_CTX_free(c);
}

static void model_build(const struct dmt_verity_params *p,
			const uint8_t *data, struct model *m)
{
	const EVP_MD *md = EVP_get_digestbyname(p->hash_name);
	size_t ds = (size_t)EVP_MD_get_size(md), hbs = p->hash_block_size;
	size_t fan = 1, slot, nlev = 0, i, l;
	uint64_t n = p->data_blocks, start, total = 0;
	uint8_t *lev[64], *dig;
	uint64_t cnt[64];

	cr_assert_not_null(md);
	while (fan * 2 <= hbs / ds)
		fan *= 2;
	slot = p->hash_type ? hbs / fan : ds;
	m->ds = ds;
	dig = malloc(n * ds);
	for (i = 0; i < n; i++)
		model_hash(md, (int)p->hash_type, p->salt, p->salt_size,
			   data + i * p->data_block_size, p->data_block_size,
			   dig + i * ds);
	/* pack digests into blocks until one block is left */
	while (n > 1) {
		uint64_t nb = (n + fan - 1) / fan;

		lev[nlev] = calloc(nb, hbs);
		for (i = 0; i < n; i++)
			memcpy(lev[nlev] + i / fan * hbs + i % fan * slot,
			       dig + i * ds, ds);
		free(dig);
		dig = malloc(nb * ds);
		for (i = 0; i < nb; i++)
			model_hash(md, (int)p->hash_type, p->salt,
				   p->salt_size, lev[nlev] + i * hbs, hbs,
				   dig + i * ds);
		cnt[nlev++] = nb;
		n = nb;
	}
	memcpy(m->root, dig, ds);
	free(dig);

	start = p->no_superblock ? p->hash_offset / hbs
				 : (p->hash_offset + 512 + hbs - 1) / hbs;
	for (l = 0; l < nlev; l++)
		total += cnt[l];
	m->image_len = (start + total) * hbs;
	m->image = calloc(1, m->image_len + 512);
	for (l = nlev; l-- > 0;) {	/* highest level first */
		memcpy(m->image + start * hbs, lev[l], cnt[l] * hbs);
		start += cnt[l];
		free(lev[l]);
	}
	if (!p->no_superblock) {
		uint8_t *sb = m->image + p->hash_offset;

		memcpy(sb, "verity\0\0", 8);
		sb[8] = 1;
		sb[12] = (uint8_t)p->hash_type;
		memcpy(sb + 16, p->uuid, 16);
		strcpy((char *)sb + 32, p->hash_name);
		for (i = 0; i < 8; i++) {	/* little-endian fields */
			if (i < 4) {
				sb[64 + i] = (uint8_t)(p->data_block_size >>
						       (8 * i));
				sb[68 + i] = (uint8_t)(p->hash_block_size >>
						       (8 * i));
			}
			sb[72 + i] = (uint8_t)(p->data_blocks >> (8 * i));
		}
		sb[80] = (uint8_t)p->salt_size;
		sb[81] = (uint8_t)(p->salt_size >> 8);
		memcpy(sb + 88, p->salt, p->salt_size);
	}
}

/* ---- library helpers ---- */

static int lib_build(const char *data, const char *hash,
		     const struct dmt_verity_params *p,
		     struct dmt_verity_result *res)
{
	struct dmt_file *d = NULL, *h = NULL;
	int err;

	cr_assert_eq(dmt_file_open(data, DMT_OPEN_READ, &d), 0);
	cr_assert_eq(dmt_file_open(hash, DMT_OPEN_RW | DMT_OPEN_CREATE, &h),
		     0);
	err = dmt_verity_build(p, d, h, res, NULL);
	dmt_file_close(d);
	dmt_file_close(h);
	return err;
}

static int lib_verify(const char *data, const char *hash,
		      const struct dmt_verity_params *p, const uint8_t *root,
		      struct dmt_verity_report *rep)
{
	struct dmt_file *d = NULL, *h = NULL;
	int err;

	cr_assert_eq(dmt_file_open(data, DMT_OPEN_READ, &d), 0);
	cr_assert_eq(dmt_file_open(hash, DMT_OPEN_READ, &h), 0);
	err = dmt_verity_verify(p, d, h, root,
				dmt_verity_digest_size(p->hash_name), rep, NULL);
	dmt_file_close(d);
	dmt_file_close(h);
	return err;
}

static void params(struct dmt_verity_params *p, const char *hash, int type,
		   uint32_t dbs, uint32_t hbs, size_t salt_len)
{
	dmt_verity_params_init(p);
	strcpy(p->hash_name, hash);
	p->hash_type = (uint32_t)type;
	p->data_block_size = dbs;
	p->hash_block_size = hbs;
	p->salt_size = salt_len;
	th_fill_random(p->salt, salt_len, 77);
	th_fill_random(p->uuid, 16, 78);
}

/* A file with random blocks, explicit zero blocks and holes. */
static uint8_t *mixed_data(const char *path, uint64_t size, bool sparse)
{
	uint8_t *buf = calloc(1, size);
	int fd;

	cr_assert_not_null(buf);
	/* 1 MiB of random data every 3 MiB, a few odd random blocks */
	for (uint64_t off = 0; off < size; off += 3 << 20)
		th_fill_random(buf + off, size - off < (1 << 20) ?
				(size_t)(size - off) : 1 << 20, off + 1);
	for (uint64_t off = (2 << 20) + 4096 * 7; off + 512 < size;
	     off += (5 << 20) + 512)
		th_fill_random(buf + off, 512, off);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert_geq(fd, 0);
	if (!sparse) {
		cr_assert_eq(write(fd, buf, size), (ssize_t)size);
	} else {
		/* write only non-zero 64 KiB pieces: the rest are holes */
		for (uint64_t off = 0; off < size; off += 65536) {
			size_t len = size - off < 65536 ? (size_t)(size - off)
							: 65536;
			size_t k;

			for (k = 0; k < len && !buf[off + k]; k++)
				;
			if (k < len)
				cr_assert_eq(pwrite(fd, buf + off, len,
						    (off_t)off), (ssize_t)len);
		}
		cr_assert_eq(ftruncate(fd, (off_t)size), 0);
	}
	close(fd);
	return buf;
}

static void expect_image(const char *hash, const struct model *m,
			 const struct dmt_verity_result *res, const char *what)
{
	size_t len;
	uint8_t *img = th_read_file(hash, &len);

	cr_expect_eq(res->root_hash_size, m->ds, "%s: digest size", what);
	cr_expect(!memcmp(res->root_hash, m->root, m->ds), "%s: root", what);
	cr_expect_eq(len, m->image_len, "%s: image size %zu, want %zu", what,
		     len, m->image_len);
	cr_expect(len == m->image_len && !memcmp(img, m->image, len),
		  "%s: hash image differs", what);
	free(img);
}

/* ---- geometry, superblock, parameters ---- */

Test(verity, geometry_matches_formats_example)
{
	struct dmt_verity_params p;
	struct dmt_verity_geometry g;
	uint64_t parent;
	uint32_t off;

	/* formats.md 1.6: 1 GiB, sha256, 4096/4096, superblock at 0 */
	params(&p, "sha256", 1, 4096, 4096, 32);
	p.data_blocks = 262144;
	cr_assert_eq(dmt_verity_geometry(&p, &g, NULL), 0);
	cr_expect_eq(g.levels, 3);
	cr_expect_eq(g.level_blocks[0], 2048);
	cr_expect_eq(g.level_blocks[1], 16);
	cr_expect_eq(g.level_blocks[2], 1);
	cr_expect_eq(g.hash_blocks, 2065);
	cr_expect_eq(g.hash_start, 1);
	cr_expect_eq(g.level_start[2], 1);
	cr_expect_eq(g.level_start[1], 2);
	cr_expect_eq(g.level_start[0], 18);
	cr_expect_eq(g.hash_end, 8462336);
	/* digest of data block b: level-0 block 18 + (b >> 7), byte
	 * (b & 127) * 32; that block's: 2 + (b >> 14) */
	cr_assert_eq(dmt_verity_digest_location(&g, false, 200000, &parent,
						&off), 0);
	cr_expect_eq(parent, 18 + (200000 >> 7));
	cr_expect_eq(off, (200000 & 127) * 32);
	cr_assert_eq(dmt_verity_digest_location(&g, true, 18 + (200000 >> 7),
						&parent, &off), 0);
	cr_expect_eq(parent, 2 + (200000 >> 14));
	cr_expect_eq(off, ((200000 >> 7) & 127) * 32);
	cr_expect_eq(dmt_verity_digest_location(&g, true, 1, &parent, &off),
		     1, "the top block is checked against the root");
	cr_expect_eq(dmt_verity_digest_location(&g, true, 0, &parent, &off),
		     -EINVAL, "the superblock is not in the tree");
	cr_expect_eq(dmt_verity_digest_location(&g, false, 262144, &parent,
						&off), -EINVAL);

	/* the other examples of formats.md 1.2-1.3 */
	p.data_blocks = 256;
	cr_assert_eq(dmt_verity_geometry(&p, &g, NULL), 0);
	cr_expect_eq(g.levels, 2);
	cr_expect_eq(g.hash_blocks, 3);
	cr_expect_eq(g.hash_end, 16384);
	p.hash_offset = 8192;
	cr_assert_eq(dmt_verity_geometry(&p, &g, NULL), 0);
	cr_expect_eq(g.hash_start, 3);
	p.hash_offset = 4194304;
	p.data_blocks = 1024;
	cr_assert_eq(dmt_verity_geometry(&p, &g, NULL), 0);
	cr_expect_eq(g.hash_start, 1025);
	p.hash_offset = 0;
	p.data_blocks = 1;
	cr_assert_eq(dmt_verity_geometry(&p, &g, NULL), 0);
	cr_expect_eq(g.levels, 0);
	cr_expect_eq(dmt_verity_digest_location(&g, false, 0, &parent, &off),
		     1);
	/* sha1 in 4096: 128 per block, 32-byte slots (format 1) or 20 */
	params(&p, "sha1", 1, 4096, 4096, 0);
	p.data_blocks = 129;
	cr_assert_eq(dmt_verity_geometry(&p, &g, NULL), 0);
	cr_expect_eq(g.hash_per_block_bits, 7);
	cr_expect_eq(g.digest_slot, 32);
	p.hash_type = 0;
	cr_assert_eq(dmt_verity_geometry(&p, &g, NULL), 0);
	cr_expect_eq(g.digest_slot, 20);
	/* no superblock: hash_start rounds the offset down */
	p.no_superblock = true;
	p.hash_offset = 6144;
	cr_assert_eq(dmt_verity_geometry(&p, &g, NULL), 0);
	cr_expect_eq(g.hash_start, 1);
}

Test(verity, rejects_bad_parameters)
{
	struct dmt_verity_params p;
	struct dmt_reason why;

	params(&p, "sha256", 1, 4096, 4096, 32);
	cr_assert_eq(dmt_verity_check_params(&p, &why), 0);
	p.data_block_size = 1000;
	cr_expect_eq(dmt_verity_check_params(&p, &why), -EINVAL);
	cr_expect_eq(why.code, DMT_REASON_BAD_VALUE);
	cr_expect_str_eq(why.field, "data_block_size");
	cr_expect_eq(why.value, 1000);
	p.data_block_size = 256;
	cr_expect_eq(dmt_verity_check_params(&p, NULL), -EINVAL);
	p.data_block_size = 1 << 20;
	cr_expect_eq(dmt_verity_check_params(&p, NULL), -EINVAL);
	p.data_block_size = 512 << 10;	/* veritysetup accepts 512 KiB */
	cr_expect_eq(dmt_verity_check_params(&p, NULL), 0);
	p.data_block_size = 4096;
	p.hash_offset = 1000;
	cr_expect_eq(dmt_verity_check_params(&p, &why), -EINVAL);
	cr_expect_eq(why.code, DMT_REASON_NOT_ALIGNED);
	cr_expect_str_eq(why.field, "hash_offset");
	cr_expect_eq(why.max, 512);
	p.hash_offset = 0;
	p.hash_type = 2;
	cr_expect_eq(dmt_verity_check_params(&p, &why), -EINVAL);
	cr_expect_str_eq(why.field, "hash_type");
	p.hash_type = 1;
	p.salt_size = 257;
	cr_expect_eq(dmt_verity_check_params(&p, &why), -EINVAL);
	cr_expect_eq(why.code, DMT_REASON_TOO_LARGE);
	cr_expect_str_eq(why.field, "salt_size");
	p.salt_size = 256;
	cr_expect_eq(dmt_verity_check_params(&p, NULL), 0);
	p.data_blocks = UINT64_MAX / 2;
	cr_expect_eq(dmt_verity_check_params(&p, &why), -EINVAL);
	cr_expect_eq(why.code, DMT_REASON_TOO_LARGE);
	cr_expect_str_eq(why.field, "data_blocks");
	p.data_blocks = 0;
	cr_expect_not(dmt_verity_hash_supported("crc32c"));
	cr_expect_not(dmt_verity_hash_supported("hmac(sha256)"));
	cr_expect_not(dmt_verity_hash_supported("xxhash64"));
	cr_expect_not(dmt_verity_hash_supported("nosuchhash"));
	cr_expect(dmt_verity_hash_supported("SHA256"));
	cr_expect_eq(dmt_verity_digest_size("sha512"), 64);
	strcpy(p.hash_name, "crc32c");
	cr_expect_eq(dmt_verity_check_params(&p, &why), -EINVAL);
	cr_expect_eq(why.code, DMT_REASON_UNSUPPORTED);
	cr_expect_str_eq(why.name, "crc32c");
}

Test(verity, superblock_roundtrip_and_rejects)
{
	struct dmt_verity_params p, q;
	uint8_t sb[DMT_VERITY_SB_SIZE], bad[DMT_VERITY_SB_SIZE];
	struct dmt_reason why;

	params(&p, "SHA512", 0, 1024, 2048, 33);
	p.data_blocks = 123456789;
	cr_assert_eq(dmt_verity_sb_encode(&p, sb, NULL), 0);
	cr_expect(!memcmp(sb, "verity\0\0\1\0\0\0\0\0\0\0", 16));
	cr_expect_str_eq((char *)sb + 32, "sha512", "name is lower-cased");
	dmt_verity_params_init(&q);
	cr_assert_eq(dmt_verity_sb_decode(sb, &q, NULL), 0);
	cr_expect_str_eq(q.hash_name, "sha512");
	cr_expect_eq(q.hash_type, 0);
	cr_expect_eq(q.data_block_size, 1024);
	cr_expect_eq(q.hash_block_size, 2048);
	cr_expect_eq(q.data_blocks, 123456789);
	cr_expect_eq(q.salt_size, 33);
	cr_expect(!memcmp(q.salt, p.salt, 33));
	cr_expect(!memcmp(q.uuid, p.uuid, 16));
	for (int i = 88 + 33; i < 512; i++)
		cr_assert_eq(sb[i], 0, "byte %d not zero", i);

	memcpy(bad, sb, sizeof(sb));
	bad[0] = 'V';
	cr_expect_eq(dmt_verity_sb_decode(bad, &q, &why), -EMEDIUMTYPE);
	cr_expect_eq(why.code, DMT_REASON_BAD_MAGIC);
	memcpy(bad, sb, sizeof(sb));
	bad[8] = 2;		/* version */
	cr_expect_eq(dmt_verity_sb_decode(bad, &q, &why), -EMEDIUMTYPE);
	cr_expect_eq(why.code, DMT_REASON_SB_VERSION);
	cr_expect_str_eq(why.field, "sb.version");
	cr_expect_eq(why.value, 2);
	memcpy(bad, sb, sizeof(sb));
	bad[12] = 2;		/* hash type */
	cr_expect_eq(dmt_verity_sb_decode(bad, &q, &why), -EMEDIUMTYPE);
	cr_expect_eq(why.code, DMT_REASON_SB_FIELD);
	cr_expect_str_eq(why.field, "sb.hash_type");
	cr_expect_eq(why.value, 2);
	memcpy(bad, sb, sizeof(sb));
	bad[80] = 1;		/* salt size 257 */
	bad[81] = 1;
	cr_expect_eq(dmt_verity_sb_decode(bad, &q, &why), -EMEDIUMTYPE);
	cr_expect_eq(why.code, DMT_REASON_SB_FIELD);
	cr_expect_str_eq(why.field, "sb.salt_size");
	cr_expect_eq(why.value, 257);
	memcpy(bad, sb, sizeof(sb));
	bad[64] = 0xe8;		/* data block size 1000 */
	bad[65] = 0x03;
	cr_expect_eq(dmt_verity_sb_decode(bad, &q, &why), -EMEDIUMTYPE);
	cr_expect_eq(why.code, DMT_REASON_SB_FIELD);
	cr_expect_str_eq(why.field, "sb.data_block_size");
	cr_expect_eq(why.value, 1000);
	memcpy(bad, sb, sizeof(sb));
	strcpy((char *)bad + 32, "crc32c");
	cr_expect_eq(dmt_verity_sb_decode(bad, &q, &why), -EMEDIUMTYPE);
	cr_expect_eq(why.code, DMT_REASON_UNSUPPORTED);
	cr_expect_str_eq(why.field, "sb.algorithm");
	cr_expect_str_eq(why.name, "crc32c");
}

/* ---- the builder against the model ---- */

Test(verity, model_matrix_small, .timeout = 60)
{
	static const char *const hashes[] = { "sha256", "sha1", "sha512",
					      "sha224", "sha384" };
	static const uint32_t sizes[][2] = { { 4096, 4096 }, { 512, 4096 },
					     { 4096, 512 }, { 1024, 1024 },
					     { 65536, 1024 } };
	static const uint64_t counts[] = { 1, 2, 127, 128, 129, 300 };
	char *dir = th_mkdtemp(), *data = th_path(dir, "d");
	char *hash = th_path(dir, "h");
	int k = 0;

	for (size_t hi = 0; hi < 5; hi++)
	for (size_t si = 0; si < 5; si++)
	for (size_t ci = 0; ci < 6; ci++, k++) {
		struct dmt_verity_params p;
		struct dmt_verity_result res;
		struct model m;
		uint64_t size = counts[ci] * sizes[si][0];
		uint8_t *buf = malloc(size + 100);
		char what[96];

		params(&p, hashes[hi], k % 2, sizes[si][0], sizes[si][1],
		       (size_t[]){ 0, 1, 32, 33, 255, 256 }[k % 6]);
		p.no_superblock = k % 3 == 0;
		p.hash_offset = k % 4 == 1 ? 8192 : 0;
		p.threads = 1 + k % 3;
		th_fill_random(buf, size + 100, (uint64_t)k);
		th_write_file(data, buf, size + 100);	/* tail ignored */
		unlink(hash);
		p.data_blocks = k % 5 == 0 ? 0 : counts[ci];
		snprintf(what, sizeof(what), "%s %u/%u n=%lu type %u",
			 hashes[hi], sizes[si][0], sizes[si][1],
			 (unsigned long)counts[ci], p.hash_type);
		cr_assert_eq(lib_build(data, hash, &p, &res), 0, "%s", what);
		p.data_blocks = counts[ci];
		model_build(&p, buf, &m);
		expect_image(hash, &m, &res, what);
		free(m.image);
		free(buf);
	}
	th_rmtree(dir);
	free(dir);
	free(data);
	free(hash);
}

/* Output never depends on threads or engine. */
Test(verity, threads_and_engines_identical, .timeout = 90)
{
	static const char *const hashes[] = { "sha256", "sha512", "sha1" };
	struct dmt_engine_info eng[32];
	size_t ne = dmt_engine_list(eng, 32);
	char *dir = th_mkdtemp(), *data = th_path(dir, "d");
	char *hash = th_path(dir, "h");
	uint64_t size = (9 << 20) + 4096 * 3;
	uint8_t *buf = mixed_data(data, size, true);
	int engines_run = 0;

	if (ne > 32)
		ne = 32;
	for (size_t hi = 0; hi < 3; hi++) {
		struct dmt_verity_params p;
		struct dmt_verity_result res;
		struct model m;

		params(&p, hashes[hi], (int)(hi != 2), 4096, 4096, 32);
		p.data_blocks = size / 4096;
		model_build(&p, buf, &m);
		p.data_blocks = 0;
		for (unsigned int t = 1; t <= 8; t++) {
			char what[64];

			p.threads = t;
			unlink(hash);
			snprintf(what, sizeof(what), "%s t=%u", hashes[hi], t);
			cr_assert_eq(lib_build(data, hash, &p, &res), 0, "%s",
				     what);
			expect_image(hash, &m, &res, what);
		}
		p.threads = 3;
		for (size_t e = 0; e < ne; e++) {
			char what[64];
			int err;

			if (!eng[e].available ||
			    strcmp(eng[e].primitive,
				   hi == 2 ? "other" : hashes[hi]))
				continue;
			p.engine = eng[e].name;
			unlink(hash);
			err = lib_build(data, hash, &p, &res);
			if (err == -ENOTSUP || err == -ENOENT)
				continue;	/* engine lacks this hash */
			snprintf(what, sizeof(what), "%s engine %s",
				 hashes[hi], eng[e].name);
			cr_assert_eq(err, 0, "%s", what);
			cr_expect_str_eq(res.engine, eng[e].name);
			expect_image(hash, &m, &res, what);
			engines_run++;
		}
		free(m.image);
	}
	cr_expect_geq(engines_run, 3, "only %d engine runs", engines_run);
	free(buf);
	th_rmtree(dir);
	free(dir);
	free(data);
	free(hash);
}

Test(verity, sparse_and_dense_identical, .timeout = 60)
{
	char *dir = th_mkdtemp(), *sparse = th_path(dir, "s");
	char *dense = th_path(dir, "d"), *h1 = th_path(dir, "h1");
	char *h2 = th_path(dir, "h2");
	uint64_t size = (40 << 20) + 512 * 5;
	uint8_t *a = mixed_data(sparse, size, true);
	uint8_t *b = mixed_data(dense, size, false);
	struct dmt_verity_params p;
	struct dmt_verity_result r1, r2;
	struct model m;

	cr_assert(!memcmp(a, b, size));
	for (int dbs = 512; dbs <= 4096; dbs *= 8) {
		params(&p, "sha256", 1, (uint32_t)dbs, 4096, 32);
		p.threads = 2;
		unlink(h1);
		unlink(h2);
		cr_assert_eq(lib_build(sparse, h1, &p, &r1), 0);
		cr_assert_eq(lib_build(dense, h2, &p, &r2), 0);
		cr_expect(th_files_equal(h1, h2), "dbs %d: images differ", dbs);
		cr_expect(!memcmp(r1.root_hash, r2.root_hash, 32));
		/* about 2/3 of the file is zero; both paths detect it */
		cr_expect_gt(r1.zero_blocks, size / (unsigned)dbs / 2);
		cr_expect_eq(r1.zero_blocks, r2.zero_blocks);
		p.data_blocks = size / (unsigned)dbs;
		model_build(&p, a, &m);
		expect_image(h1, &m, &r1, "sparse");
		free(m.image);
	}
	free(a);
	free(b);
	th_rmtree(dir);
	free(dir);
	free(sparse);
	free(dense);
	free(h1);
	free(h2);
}

/* ---- verification ---- */

struct vfix {
	char *dir, *data, *hash;
	struct dmt_verity_params p;
	struct dmt_verity_result res;
};

static void vfix_make(struct vfix *f, const char *alg, uint64_t blocks)
{
	f->dir = th_mkdtemp();
	f->data = th_path(f->dir, "d");
	f->hash = th_path(f->dir, "h");
	th_write_random_file(f->data, blocks * 4096, 99);
	params(&f->p, alg, 1, 4096, 4096, 32);
	f->p.threads = 2;
	cr_assert_eq(lib_build(f->data, f->hash, &f->p, &f->res), 0);
	/* verify reads the superblock's parameters like the CLI */
	f->p.data_blocks = blocks;
}

static void vfix_free(struct vfix *f)
{
	th_rmtree(f->dir);
	free(f->dir);
	free(f->data);
	free(f->hash);
}

Test(verity, verify_intact_and_root)
{
	struct vfix f;
	struct dmt_verity_report rep;
	uint8_t root[64];

	vfix_make(&f, "sha256", 5000);
	cr_assert_eq(lib_verify(f.data, f.hash, &f.p, f.res.root_hash, &rep),
		     0);
	cr_expect(rep.root_ok);
	cr_expect_eq(rep.bad_data_blocks + rep.bad_hash_blocks +
			     rep.unverifiable_blocks, 0);
	cr_expect(!memcmp(rep.root_hash, f.res.root_hash, 32));

	memcpy(root, f.res.root_hash, 32);
	root[31] ^= 1;
	cr_assert_eq(lib_verify(f.data, f.hash, &f.p, root, &rep), -EBADMSG);
	cr_expect_not(rep.root_ok);
	cr_expect_eq(rep.bad_data_blocks + rep.bad_hash_blocks +
			     rep.unverifiable_blocks, 0,
		     "a wrong root is not blamed on blocks");
	vfix_free(&f);
}

Test(verity, verify_pinpoints_data_block)
{
	struct vfix f;
	struct dmt_verity_report rep;

	vfix_make(&f, "sha256", 5000);
	th_flip_byte(f.data, 4321 * 4096 + 17, 0x40);
	th_flip_byte(f.data, 1000 * 4096 + 4095, 0x01);
	th_flip_byte(f.data, 4999 * 4096, 0x80);
	cr_assert_eq(lib_verify(f.data, f.hash, &f.p, f.res.root_hash, &rep),
		     -EBADMSG);
	cr_expect(rep.root_ok);
	cr_expect_eq(rep.bad_data_blocks, 3);
	cr_expect_eq(rep.bad_hash_blocks, 0);
	cr_expect_eq(rep.unverifiable_blocks, 0);
	cr_expect_eq(rep.first_data.area, DMT_VERITY_AREA_DATA);
	cr_expect_eq(rep.first_data.index, 1000);
	cr_expect_eq(rep.first_data.offset, 1000 * 4096);
	vfix_free(&f);
}

Test(verity, verify_pinpoints_hash_block)
{
	struct vfix f;
	struct dmt_verity_report rep;
	struct dmt_verity_geometry *g;
	uint64_t b = 3210, parent;
	uint32_t off;

	vfix_make(&f, "sha256", 5000);
	g = &f.res.geo;
	cr_assert_eq(g->levels, 2);
	/* damage the stored digest of data block b (a level-0 block) */
	cr_assert_eq(dmt_verity_digest_location(g, false, b, &parent, &off),
		     0);
	th_flip_byte(f.hash, parent * 4096 + off + 5, 0x10);
	cr_assert_eq(lib_verify(f.data, f.hash, &f.p, f.res.root_hash, &rep),
		     -EBADMSG);
	cr_expect(rep.root_ok);
	cr_expect_eq(rep.bad_hash_blocks, 1);
	cr_expect_eq(rep.first_hash.area, DMT_VERITY_AREA_HASH);
	cr_expect_eq(rep.first_hash.level, 0);
	cr_expect_eq(rep.first_hash.index, b >> 7);
	cr_expect_eq(rep.first_hash.offset, parent * 4096);
	cr_expect_not(rep.first_hash.padding);
	cr_expect_eq(rep.bad_data_blocks, 0, "data is intact");
	cr_expect_eq(rep.unverifiable_blocks, 1, "block b can't be checked");
	vfix_free(&f);
}

Test(verity, verify_checks_padding)
{
	struct vfix f;
	struct dmt_verity_report rep;
	struct dmt_verity_geometry *g;
	uint64_t pos;

	/* 250 blocks: the last level-0 block holds 122 of 128 digests */
	vfix_make(&f, "sha256", 250);
	g = &f.res.geo;
	pos = (g->level_start[0] + 1) * 4096 + 122 * 32 + 100;
	th_flip_byte(f.hash, pos, 0x04);
	cr_assert_eq(lib_verify(f.data, f.hash, &f.p, f.res.root_hash, &rep),
		     -EBADMSG);
	cr_expect_eq(rep.bad_hash_blocks, 1);
	cr_expect(rep.first_hash.padding);
	cr_expect_eq(rep.first_hash.level, 0);
	cr_expect_eq(rep.first_hash.index, 1);
	cr_expect_eq(rep.first_hash.offset, pos);
	cr_expect_eq(rep.bad_data_blocks, 0);
	vfix_free(&f);

	/* sha1 format 1: the 12 bytes after each 20-byte digest */
	vfix_make(&f, "sha1", 300);
	g = &f.res.geo;
	pos = g->level_start[0] * 4096 + 7 * 32 + 25;
	th_flip_byte(f.hash, pos, 0x01);
	cr_assert_eq(lib_verify(f.data, f.hash, &f.p, f.res.root_hash, &rep),
		     -EBADMSG);
	cr_expect(rep.first_hash.padding);
	cr_expect_eq(rep.first_hash.offset, pos);
	cr_expect_eq(rep.bad_data_blocks, 0);
	vfix_free(&f);

	/* the top block's padding (its parent is the root hash) */
	vfix_make(&f, "sha256", 300);
	g = &f.res.geo;
	pos = g->level_start[1] * 4096 + 3 * 32;
	th_flip_byte(f.hash, pos, 0x01);
	cr_assert_eq(lib_verify(f.data, f.hash, &f.p, f.res.root_hash, &rep),
		     -EBADMSG);
	cr_expect_not(rep.root_ok);
	cr_expect(rep.first_hash.padding);
	cr_expect_eq(rep.first_hash.level, 1);
	cr_expect_eq(rep.first_hash.offset, pos);
	vfix_free(&f);
}

Test(verity, verify_short_files)
{
	struct vfix f;
	struct dmt_verity_report rep;

	vfix_make(&f, "sha256", 400);
	cr_assert_eq(truncate(f.hash, 4096 * 3), 0);
	cr_expect_eq(lib_verify(f.data, f.hash, &f.p, f.res.root_hash, &rep),
		     -ENODATA);
	cr_assert_eq(truncate(f.data, 4096 * 399), 0);
	cr_expect_eq(lib_verify(f.data, f.hash, &f.p, f.res.root_hash, &rep),
		     -ENODATA);
	vfix_free(&f);
}

/* ---- failure paths ---- */

static int abort_after;

static int abort_cb(void *ctx, uint64_t done, uint64_t total)
{
	uint64_t *last = ctx;

	cr_assert_leq(done, total);
	cr_assert_geq(done, *last, "progress went backwards");
	*last = done;
	return --abort_after <= 0;
}

Test(verity, progress_and_abort)
{
	char *dir = th_mkdtemp(), *data = th_path(dir, "d");
	char *hash = th_path(dir, "h");
	struct dmt_verity_params p;
	struct dmt_verity_result res;
	struct dmt_verity_report rep;
	uint64_t last = 0;

	th_write_random_file(data, 64 << 20, 5);
	params(&p, "sha256", 1, 4096, 4096, 32);
	p.threads = 2;
	p.progress.fn = abort_cb;
	p.progress.ctx = &last;
	abort_after = 1000000;
	cr_assert_eq(lib_build(data, hash, &p, &res), 0);
	cr_expect_eq(last, 64 << 20, "last report is the total");

	last = 0;
	abort_after = 2;
	cr_expect_eq(lib_build(data, hash, &p, &res), -EINTR);
	last = 0;
	abort_after = 2;
	p.data_blocks = (64 << 20) / 4096;
	cr_expect_eq(lib_verify(data, hash, &p, res.root_hash, &rep), -EINTR);
	th_rmtree(dir);
	free(dir);
	free(data);
	free(hash);
}

Test(verity, io_errors_are_returned)
{
	char *dir = th_mkdtemp(), *data = th_path(dir, "data");
	char *hash = th_path(dir, "hashfile");
	struct dmt_verity_params p;
	struct dmt_verity_result res;

	th_write_random_file(data, 12 << 20, 6);
	params(&p, "sha256", 1, 4096, 4096, 32);
	p.threads = 2;
	dmt_io_fault_set("hashfile", DMT_IO_WRITE, 2, EIO, false);
	cr_expect_eq(lib_build(data, hash, &p, &res), -EIO);
	/* write 1 is growing the file, write 2 the first level */
	dmt_io_fault_set("hashfile", DMT_IO_WRITE, 2, 0, true);
	cr_expect_eq(lib_build(data, hash, &p, &res), -ENOSPC);
	dmt_io_fault_set("data", DMT_IO_READ, 5, EIO, false);
	cr_expect_eq(lib_build(data, hash, &p, &res), -EIO);
	dmt_io_fault_clear();
	cr_expect_eq(lib_build(data, hash, &p, &res), 0);
	th_rmtree(dir);
	free(dir);
	free(data);
	free(hash);
}

Test(verity, one_file_overlap_and_small_data)
{
	char *dir = th_mkdtemp(), *data = th_path(dir, "d");
	struct dmt_verity_params p;
	struct dmt_verity_result res;
	struct dmt_file *f = NULL;

	th_write_random_file(data, 100 * 4096, 7);
	params(&p, "sha256", 1, 4096, 4096, 32);
	cr_assert_eq(dmt_file_open(data, DMT_OPEN_RW, &f), 0);
	p.hash_offset = 99 * 4096;	/* inside the data */
	cr_expect_eq(dmt_verity_build(&p, f, f, &res, NULL), -EINVAL);
	p.data_blocks = 99;
	cr_expect_eq(dmt_verity_build(&p, f, f, &res, NULL), 0);
	p.data_blocks = 1000;
	p.hash_offset = 2000 * 4096;
	cr_expect_eq(dmt_verity_build(&p, f, f, &res, NULL), -ENODATA);
	dmt_file_close(f);
	th_rmtree(dir);
	free(dir);
	free(data);
}

/* Memory stays bounded: a 16 GiB (sparse) image, 128 MiB of level 0. */
Test(verity, memory_bounded, .timeout = 60)
{
	char *dir, *data, *hash, *err = NULL, *argv[7];
	struct rusage ru;
	int rc;

	if (getenv("DMT_TEST_REDUCED"))
		cr_skip("emulated run: peak RSS would be the emulator's");
	dir = th_mkdtemp();
	data = th_path(dir, "d");
	hash = th_path(dir, "h");
	argv[0] = (char *)th_tool("verity-tool");
	argv[1] = "build";
	argv[2] = data;
	argv[3] = hash;
	argv[4] = "--salt";
	argv[5] = "-";
	argv[6] = NULL;

	gen_zero(data, 16ull << 30);
	th_write_random_file(hash, 0, 0);	/* in place: no fsync */
	rc = th_run(argv, NULL, &err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_eq(getrusage(RUSAGE_CHILDREN, &ru), 0);
	cr_expect_lt(ru.ru_maxrss, 64 * 1024, "peak RSS %ld KiB",
		     ru.ru_maxrss);
	free(err);
	th_rmtree(dir);
	free(dir);
	free(data);
	free(hash);
}

/* ---- format and check with FEC (dmt_verity_format, dmt_verity_check) ---- */

struct stage_log {
	char seq[64];		/* one letter per stage begun, upper-case when
				 * it ended with an error */
	size_t n;
};

static struct dmt_progress log_begin(void *ctx, enum dmt_verity_stage s)
{
	struct stage_log *l = ctx;
	struct dmt_progress none = { 0 };

	if (l->n + 1 < sizeof(l->seq))
		l->seq[l->n++] = "tfsvfyr"[s];
	return none;
}

static void log_end(void *ctx, enum dmt_verity_stage s, int err)
{
	struct stage_log *l = ctx;

	(void)s;
	if (err && l->n)
		l->seq[l->n - 1] = (char)(l->seq[l->n - 1] - 'a' + 'A');
}

Test(verity, format_and_check_with_fec)
{
	char *dir = th_mkdtemp(), *data = th_path(dir, "d");
	char *hash = th_path(dir, "h"), *fecp = th_path(dir, "f");
	struct dmt_file *d = NULL, *h = NULL, *f = NULL;
	struct dmt_verity_params p;
	struct dmt_verity_result res;
	struct dmt_verity_check_result cr;
	struct dmt_fec_layout fl;
	struct stage_log log = { 0 };
	struct dmt_verity_stages st = { log_begin, log_end, &log };
	struct dmt_verity_fec_params fec = { .roots = 4 };
	struct dmt_reason why;
	uint8_t root[DMT_DIGEST_MAX];

	th_write_random_file(data, 200 * 4096, 77);
	dmt_verity_params_init(&p);
	p.salt_size = 0;
	cr_assert_eq(dmt_file_open(data, DMT_OPEN_RW, &d), 0);
	cr_assert_eq(dmt_file_open(hash, DMT_OPEN_RW | DMT_OPEN_CREATE, &h), 0);
	cr_assert_eq(dmt_file_open(fecp, DMT_OPEN_RW | DMT_OPEN_CREATE, &f), 0);
	fec.file = f;
	cr_assert_eq(dmt_verity_format(&p, d, h, &fec, &st, &res, &fl, &why),
		     0);
	cr_expect_str_eq(log.seq, "tfs", "tree, FEC, superblock last");
	cr_expect_eq(fl.roots, 4);
	memcpy(root, res.root_hash, res.root_hash_size);

	/* the FEC area may not overlap the tree of a shared file */
	fec.file = h;
	fec.offset = 4096;
	cr_expect_eq(dmt_verity_format(&p, d, h, &fec, NULL, &res, NULL,
				       &why), -EINVAL);
	cr_expect_eq(why.code, DMT_REASON_VERITY_AREA_OVERLAP);
	cr_expect_str_eq(why.field, "hash");
	cr_expect_str_eq(why.field2, "fec");
	fec.file = f;
	fec.offset = 0;

	/* two damaged data blocks: verify fails, FEC corrects in memory,
	 * the tree checks out through the corrections, nothing written */
	th_flip_byte(data, 10 * 4096 + 1, 0x40);
	th_flip_byte(data, 150 * 4096 + 9, 0x02);
	log.n = 0;
	memset(log.seq, 0, sizeof(log.seq));
	cr_expect_eq(dmt_verity_check(&p, d, h, &fec, root, 32, 0, &st, &cr,
				      &why), 0);
	cr_expect_str_eq(log.seq, "Vfr");
	cr_expect(cr.fec_ran && cr.reverified);
	cr_expect_eq(cr.corrected.total, 2);
	cr_expect_eq(cr.corrected.v[0], 10);
	cr_expect_eq(cr.corrected.v[1], 150);
	cr_expect_eq(cr.fec.written_blocks, 0);
	cr_expect(cr.rep.root_ok);
	dmt_verity_check_result_free(&cr);
	/* without FEC the damage stays */
	cr_expect_eq(dmt_verity_check(&p, d, h, NULL, root, 32, 0, NULL, &cr,
				      &why), -EBADMSG);
	cr_expect_eq(cr.rep.bad_data_blocks, 2);
	dmt_verity_check_result_free(&cr);

	/* repair: written back, synced, verified from the files */
	log.n = 0;
	memset(log.seq, 0, sizeof(log.seq));
	cr_expect_eq(dmt_verity_check(&p, d, h, &fec, root, 32,
				      DMT_VERITY_CHECK_REPAIR, &st, &cr, &why),
		     0);
	cr_expect_str_eq(log.seq, "fyr");
	cr_expect_eq(cr.fec.written_blocks, 2);
	dmt_verity_check_result_free(&cr);
	cr_expect_eq(dmt_verity_check(&p, d, h, NULL, root, 32, 0, NULL, &cr,
				      &why), 0);
	dmt_verity_check_result_free(&cr);
	/* repair needs FEC */
	cr_expect_eq(dmt_verity_check(&p, d, h, NULL, root, 32,
				      DMT_VERITY_CHECK_REPAIR, NULL, &cr, &why),
		     -EINVAL);
	cr_expect_eq(why.code, DMT_REASON_MISSING);
	dmt_verity_check_result_free(&cr);

	dmt_file_close(d);
	dmt_file_close(h);
	dmt_file_close(f);
	th_rmtree(dir);
	free(dir);
	free(data);
	free(hash);
	free(fecp);
}

Test(verity, locate_names_every_area)
{
	struct dmt_verity_params p;
	struct dmt_verity_geometry g;
	struct dmt_fec_layout l;
	struct dmt_verity_where w;

	dmt_verity_params_init(&p);
	p.data_blocks = 1000;
	cr_assert_eq(dmt_verity_geometry(&p, &g, NULL), 0);
	cr_assert_eq(dmt_verity_fec_plan(&g, 2, 0, false, g.hash_end + 8192,
					 &l, NULL), 0);
	dmt_verity_locate(&g, &l, 999, &w);
	cr_expect(w.area == DMT_VERITY_AREA_DATA && w.index == 999 &&
		  w.offset == 999 * 4096ull && w.level == -1);
	dmt_verity_locate(&g, &l, 1000, &w);	/* first covered hash block */
	cr_expect(w.area == DMT_VERITY_AREA_HASH && w.level == 1 &&
		  w.index == 0 && w.offset == g.hash_start * 4096);
	dmt_verity_locate(&g, &l, 1000 + g.hash_blocks, &w);
	cr_expect(w.area == DMT_VERITY_AREA_METADATA && w.level == -1 &&
		  w.index == g.hash_start + g.hash_blocks);
}
