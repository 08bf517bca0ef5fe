// SPDX-License-Identifier: MIT
/* Test-only references for the dm-integrity tests (see the header). */
#include "tests/support/integrity_oracle.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "tests/support/helpers.h"

/* ---- facts files ---- */

char *it_testdata_path(const char *file)
{
	const char *src = getenv("DMT_SRC");
	char *path;

	cr_assert(asprintf(&path, "%s/testdata/integrity/%s",
			   src && *src ? src : ".", file) > 0);
	return path;
}

int it_facts_load(const char *file, struct it_fact **out)
{
	char *path = it_testdata_path(file), line[2048];
	struct it_fact *v = NULL;
	int n = 0;
	FILE *fp;

	fp = fopen(path, "r");
	cr_assert(fp, "cannot open %s", path);
	while (fgets(line, sizeof(line), fp)) {
		char *save = NULL, *tok;
		struct it_fact *f;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		v = realloc(v, (size_t)(n + 1) * sizeof(*v));
		cr_assert(v);
		f = &v[n++];
		memset(f, 0, sizeof(*f));
		tok = strtok_r(line, " \t\n", &save);
		snprintf(f->name, sizeof(f->name), "%s", tok);
		while ((tok = strtok_r(NULL, " \t\n", &save))) {
			char *eq = strchr(tok, '=');

			cr_assert(eq && f->n < IT_MAX_KEYS, "bad field %s", tok);
			*eq = '\0';
			snprintf(f->key[f->n], sizeof(f->key[0]), "%s", tok);
			snprintf(f->val[f->n], sizeof(f->val[0]), "%s", eq + 1);
			f->n++;
		}
	}
	fclose(fp);
	cr_assert(n > 0, "%s has no cases", path);
	free(path);
	*out = v;
	return n;
}

const char *it_get(const struct it_fact *f, const char *key)
{
	for (int i = 0; i < f->n; i++)
		if (!strcmp(f->key[i], key))
			return f->val[i];
	return NULL;
}

bool it_has(const struct it_fact *f, const char *key)
{
	return it_get(f, key) != NULL;
}

uint64_t it_getu(const struct it_fact *f, const char *key)
{
	const char *v = it_get(f, key);

	cr_assert(v, "%s: no field %s", f->name, key);
	return strtoull(v, NULL, 0);
}

/* ---- reference tags ---- */

static uint32_t crc_reflected(uint32_t crc, uint32_t poly, const uint8_t *p,
			      size_t len)
{
	static uint32_t table[2][256];
	static uint32_t polys[2];
	int t = poly == 0x82F63B78u ? 0 : 1;

	if (polys[t] != poly) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;

			for (int k = 0; k < 8; k++)
				c = (c >> 1) ^ ((c & 1) ? poly : 0);
			table[t][i] = c;
		}
		polys[t] = poly;
	}
	while (len--)
		crc = table[t][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

static void evp(const char *name, const uint8_t *const *parts,
		const size_t *lens, int n, uint8_t *out, unsigned int *olen)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	cr_assert(c);
	cr_assert(EVP_DigestInit_ex(c, EVP_get_digestbyname(name), NULL));
	for (int i = 0; i < n; i++)
		EVP_DigestUpdate(c, parts[i], lens[i]);
	EVP_DigestFinal_ex(c, out, olen);
	EVP_MD_CTX_free(c);
}

/* HMAC written out (RFC 2104) on top of a plain digest. */
static void hmac(const char *name, size_t block, const uint8_t *key,
		 size_t klen, const uint8_t *const *parts, const size_t *lens,
		 int n, uint8_t *out, unsigned int *olen)
{
	uint8_t k[128] = { 0 }, ipad[128], opad[128], inner[64];
	const uint8_t *p2[8];
	size_t l2[8];
	unsigned int il;

	cr_assert(n < 7 && block <= sizeof(k));
	if (klen > block) {
		const uint8_t *kp[1] = { key };
		size_t kl[1] = { klen };
		unsigned int dl;

		evp(name, kp, kl, 1, k, &dl);
	} else {
		memcpy(k, key, klen);
	}
	for (size_t i = 0; i < block; i++) {
		ipad[i] = k[i] ^ 0x36;
		opad[i] = k[i] ^ 0x5c;
	}
	p2[0] = ipad;
	l2[0] = block;
	for (int i = 0; i < n; i++) {
		p2[i + 1] = parts[i];
		l2[i + 1] = lens[i];
	}
	evp(name, p2, l2, n + 1, inner, &il);
	p2[0] = opad;
	p2[1] = inner;
	l2[1] = il;
	evp(name, p2, l2, 2, out, olen);
}

void it_hmac_sha256(const uint8_t *key, size_t key_len, const uint8_t *msg,
		    size_t len, uint8_t out[32])
{
	unsigned int olen;

	hmac("sha256", 64, key, key_len, &msg, &len, 1, out, &olen);
}

void it_ref_tag(const char *alg, const uint8_t *key, size_t key_len,
		const uint8_t *salt, uint64_t sector, const uint8_t *block,
		size_t bs, unsigned int tag_size, uint8_t *out)
{
	uint8_t le[8], d[64];
	const uint8_t *parts[3];
	size_t lens[3];
	unsigned int dl = 0;
	int n = 0;

	for (int i = 0; i < 8; i++)
		le[i] = (uint8_t)(sector >> (8 * i));
	if (salt) {
		parts[n] = salt;
		lens[n++] = 16;
	}
	parts[n] = le;
	lens[n++] = 8;
	parts[n] = block;
	lens[n++] = bs;

	if (!strcmp(alg, "crc32c") || !strcmp(alg, "crc32")) {
		bool c = alg[5] == 'c';
		/* crc32c: standard; crc32: kernel raw CRC, init 0, no xor */
		uint32_t crc = c ? 0xffffffffu : 0;

		for (int i = 0; i < n; i++)
			crc = crc_reflected(crc, c ? 0x82F63B78u : 0xEDB88320u,
					    parts[i], lens[i]);
		if (c)
			crc = ~crc;
		for (int i = 0; i < 4; i++)
			d[i] = (uint8_t)(crc >> (8 * i));
		dl = 4;
	} else if (!strcmp(alg, "xxhash64")) {
		XXH64_state_t st;
		uint64_t v;

		XXH64_reset(&st, 0);
		for (int i = 0; i < n; i++)
			XXH64_update(&st, parts[i], lens[i]);
		v = XXH64_digest(&st);
		for (int i = 0; i < 8; i++)
			d[i] = (uint8_t)(v >> (8 * i));
		dl = 8;
	} else if (!strncmp(alg, "hmac(", 5)) {
		char name[16];

		snprintf(name, sizeof(name), "%.*s", (int)strlen(alg) - 6,
			 alg + 5);
		hmac(name, 64, key, key_len, parts, lens, n, d, &dl);
	} else {
		evp(alg, parts, lens, n, d, &dl);
	}
	memset(out, 0, tag_size);
	memcpy(out, d, dl < tag_size ? dl : tag_size);
}

/* ---- layout ---- */

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

void it_geo_from_sb(const uint8_t *sb, bool meta, struct it_geo *g)
{
	uint64_t space, pad, per;

	memset(g, 0, sizeof(*g));
	cr_assert(!memcmp(sb, "integrt", 8), "no superblock magic");
	g->li = sb[9];
	g->tag = (unsigned int)le(sb + 10, 2);
	g->sections = (uint32_t)le(sb + 12, 4);
	g->provided = le(sb + 16, 8);
	g->flags = (uint32_t)le(sb + 24, 4);
	g->log2_spb = sb[28];
	g->spb = 1u << g->log2_spb;
	memcpy(g->salt, sb + 48, 16);
	g->meta = meta;
	/* 2.5: entry = roundup8(8 + 8 spb + T); 504 or 496 bytes per sector */
	g->entry_size = (8 + 8 * g->spb + g->tag + 7) / 8 * 8;
	space = (g->flags & 1) ? 496 : 504;
	per = space / g->entry_size;
	g->section_entries = per * 8;
	g->section_sectors = g->section_entries * g->spb + 8;
	g->initial = 8 + g->section_sectors * g->sections;
	/* 2.6: metadata_run = roundup(T * 2^(li - lspb), PAD) / 512 */
	if (!meta) {
		pad = (g->flags & 8) ? 4096 : 131072;
		g->run = ((uint64_t)g->tag << (g->li - g->log2_spb));
		g->run = (g->run + pad - 1) / pad * pad / 512;
	}
}

uint64_t it_data_byte(const struct it_geo *g, uint64_t s)
{
	uint64_t area, off;

	if (g->meta)
		return s * 512;
	area = s >> g->li;
	off = s % (1ull << g->li);
	return (g->initial + area * (1ull << g->li) + (area + 1) * g->run +
		off) * 512;
}

uint64_t it_tag_byte(const struct it_geo *g, uint64_t s)
{
	uint64_t area, off;

	if (g->meta)
		return g->initial * 512 + (s / g->spb) * g->tag;
	area = s >> g->li;
	off = s % (1ull << g->li);
	return (g->initial + area * ((1ull << g->li) + g->run)) * 512 +
	       (off / g->spb) * g->tag;
}

uint64_t it_verify_image(const char *meta_path, const char *data_path,
			 const char *alg, const uint8_t *key, size_t key_len,
			 uint64_t *first)
{
	int mfd = open(meta_path, O_RDONLY);
	int dfd = data_path ? open(data_path, O_RDONLY) : mfd;
	uint8_t sb[512], blk[4096], tag[512], want[512];
	struct it_geo g;
	uint64_t bad = 0;

	cr_assert(mfd >= 0 && dfd >= 0);
	cr_assert_eq(pread(mfd, sb, 512, 0), 512);
	it_geo_from_sb(sb, data_path != NULL, &g);
	for (uint64_t s = 0; s < g.provided; s += g.spb) {
		size_t bs = 512u * g.spb;

		cr_assert_eq(pread(dfd, blk, bs, (off_t)it_data_byte(&g, s)),
			     (ssize_t)bs);
		cr_assert_eq(pread(mfd, tag, g.tag, (off_t)it_tag_byte(&g, s)),
			     (ssize_t)g.tag);
		it_ref_tag(alg, key, key_len, (g.flags & 0x10) ? g.salt : NULL,
			   s, blk, bs, g.tag, want);
		if (memcmp(tag, want, g.tag)) {
			if (!bad && first)
				*first = s;
			bad++;
		}
	}
	close(mfd);
	if (data_path)
		close(dfd);
	return bad;
}

void it_read_logical(const char *meta_path, const char *data_path,
		     uint64_t off, uint8_t *buf, size_t len)
{
	int mfd = open(meta_path, O_RDONLY);
	int dfd = data_path ? open(data_path, O_RDONLY) : mfd;
	uint8_t sb[512];
	struct it_geo g;

	cr_assert(mfd >= 0 && dfd >= 0);
	cr_assert_eq(pread(mfd, sb, 512, 0), 512);
	it_geo_from_sb(sb, data_path != NULL, &g);
	/* sector by sector: simple and independent of any chunking */
	while (len) {
		uint64_t s = off / 512, in = off % 512;
		size_t n = 512 - in < len ? 512 - in : len;

		cr_assert(s < g.provided, "read past the provided sectors");
		off_t at = (off_t)(it_data_byte(&g, s) + in);

		cr_assert_eq(pread(dfd, buf, n, at), (ssize_t)n);
		buf += n;
		off += n;
		len -= n;
	}
	close(mfd);
	if (data_path)
		close(dfd);
}

int it_tool(char **out, char **err, const char *fmt, ...)
{
	char *args, *tool = strdup(th_tool("integrity-tool"));
	va_list ap;
	int rc;

	va_start(ap, fmt);
	cr_assert(vasprintf(&args, fmt, ap) >= 0);
	va_end(ap);
	/* stdin is never a terminal: format does not stop to ask */
	rc = th_sh(out, err, "'%s' %s </dev/null", tool, args);
	free(args);
	free(tool);
	return rc;
}
