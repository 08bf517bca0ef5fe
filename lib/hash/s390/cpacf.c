// SPDX-License-Identifier: MIT
/*
 * CPACF drivers, the same on the real instructions and on the model:
 * condition-code 3 loops, query masks and their DMT_S390CAP override, SHA
 * block functions over KIMD, and the batched (HMAC-)SHA-2 that loads the
 * key into the parameter block once per batch.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "lib/hash/s390/cpacf.h"

int dmt_cpacf_run(struct dmt_cpacf *c, enum dmt_cpacf_insn insn,
		  uint64_t *gr0, uint8_t *param, const uint8_t *src,
		  size_t len)
{
	int cc;

	/* cc 3: the CPU stopped on its own; registers say where to go on. */
	do {
		cc = c->exec(c, insn, gr0, param, &src, &len);
	} while (cc == 3);
	return cc == 0 && len == 0 ? 0 : -EIO;
}

/* ---- capability masks ---- */

static const char *const insn_names[DMT_CPACF_NINSN] = {
	"kimd", "klmd", "kmac"
};

static int parse_word(const char *s, size_t n, uint64_t *out)
{
	char buf[32], *end;
	bool neg = false;
	int base = 10;

	if (n && *s == '~') {
		neg = true;
		s++;
		n--;
	}
	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		n -= 2;
	}
	if (!n || n >= sizeof(buf) || *s == '-' || *s == '+')
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	*out = strtoull(buf, &end, base);
	if (errno || *end)
		return -EINVAL;
	if (neg)
		*out = ~*out;
	return 0;
}

/* One "insn:W0:W1" or "none" item of n characters. */
static int parse_item(uint8_t m[DMT_CPACF_NINSN][DMT_CPACF_MASK_SIZE],
		      const char *s, size_t n)
{
	const char *c1, *c2, *end = s + n;
	uint64_t w[2];
	int insn;

	if (n == 4 && !memcmp(s, "none", 4)) {
		memset(m, 0, DMT_CPACF_NINSN * DMT_CPACF_MASK_SIZE);
		return 0;
	}
	c1 = memchr(s, ':', n);
	if (!c1)
		return -EINVAL;
	c2 = memchr(c1 + 1, ':', (size_t)(end - c1 - 1));
	if (!c2)
		return -EINVAL;
	for (insn = 0; insn < DMT_CPACF_NINSN; insn++)
		if ((size_t)(c1 - s) == strlen(insn_names[insn]) &&
		    !memcmp(s, insn_names[insn], (size_t)(c1 - s)))
			break;
	if (insn == DMT_CPACF_NINSN ||
	    parse_word(c1 + 1, (size_t)(c2 - c1 - 1), &w[0]) ||
	    parse_word(c2 + 1, (size_t)(end - c2 - 1), &w[1]))
		return -EINVAL;
	for (int i = 0; i < DMT_CPACF_MASK_SIZE; i++)
		m[insn][i] &= (uint8_t)(w[i / 8] >> (56 - 8 * (i % 8)));
	return 0;
}

int dmt_cpacf_apply_cap(uint8_t masks[DMT_CPACF_NINSN][DMT_CPACF_MASK_SIZE],
			const char *cap)
{
	uint8_t m[DMT_CPACF_NINSN][DMT_CPACF_MASK_SIZE];
	const char *p = cap;
	int rc = 0;

	memcpy(m, masks, sizeof(m));
	while (*p) {
		size_t n;

		p += strspn(p, "; \t\n");
		n = strcspn(p, "; \t\n");
		if (!n)
			continue;
		rc = parse_item(m, p, n);
		if (rc)
			goto out;
		p += n;
	}
	memcpy(masks, m, sizeof(m));
out:
	return rc;
}

int dmt_cpacf_setup(struct dmt_cpacf *c, const char *cap)
{
	int rc = 0;

	memset(c->mask, 0, sizeof(c->mask));
	for (int i = 0; i < DMT_CPACF_NINSN; i++) {
		uint64_t gr0 = DMT_CPACF_QUERY;
		uint8_t q[DMT_CPACF_MASK_SIZE] = { 0 };

		/* a failed query leaves the function set empty */
		if (!dmt_cpacf_run(c, (enum dmt_cpacf_insn)i, &gr0, q, NULL, 0))
			memcpy(c->mask[i], q, sizeof(q));
	}
	if (cap)
		rc = dmt_cpacf_apply_cap(c->mask, cap);
	dmt_cpacf_kmac_selftest(c);
	return rc;
}

/* ---- algorithms ---- */

struct cpacf_alg {
	const char *name;
	unsigned int bs, cvlen, lenlen, ds;
	unsigned int kimd_fc, kmac_fc;
	bool wide;
	const void *iv;
	const EVP_MD *(*md)(void);
};

static const struct cpacf_alg cpacf_algs[] = {
	{ "sha224", 64, 32, 8, 28, DMT_CPACF_SHA_256, DMT_CPACF_HMAC_SHA_224,
	  false, dmt_sha224_iv, EVP_sha224 },
	{ "sha256", 64, 32, 8, 32, DMT_CPACF_SHA_256, DMT_CPACF_HMAC_SHA_256,
	  false, dmt_sha256_iv, EVP_sha256 },
	{ "sha384", 128, 64, 16, 48, DMT_CPACF_SHA_512, DMT_CPACF_HMAC_SHA_384,
	  true, dmt_sha384_iv, EVP_sha384 },
	{ "sha512", 128, 64, 16, 64, DMT_CPACF_SHA_512, DMT_CPACF_HMAC_SHA_512,
	  true, dmt_sha512_iv, EVP_sha512 },
};

static const struct cpacf_alg *alg_find(const char *name)
{
	for (size_t i = 0; i < sizeof(cpacf_algs) / sizeof(cpacf_algs[0]); i++)
		if (name && !strcmp(name, cpacf_algs[i].name))
			return &cpacf_algs[i];
	return NULL;
}

/* ---- SHA block functions over KIMD ---- */

void dmt_cpacf_sha256_blocks(struct dmt_cpacf *c, uint32_t *state,
			     const uint8_t *data, size_t nblocks)
{
	uint8_t cv[32];
	uint64_t gr0 = DMT_CPACF_SHA_256;

	for (int i = 0; i < 8; i++)
		dmt_cpacf_store32(cv + 4 * i, state[i]);
	/* Cannot fail for an installed function with whole blocks. */
	(void)dmt_cpacf_run(c, DMT_CPACF_KIMD, &gr0, cv, data, nblocks * 64);
	for (int i = 0; i < 8; i++)
		state[i] = dmt_cpacf_load32(cv + 4 * i);
}

void dmt_cpacf_sha512_blocks(struct dmt_cpacf *c, uint64_t *state,
			     const uint8_t *data, size_t nblocks)
{
	uint8_t cv[64];
	uint64_t gr0 = DMT_CPACF_SHA_512;

	for (int i = 0; i < 8; i++)
		dmt_cpacf_store64(cv + 8 * i, state[i]);
	(void)dmt_cpacf_run(c, DMT_CPACF_KIMD, &gr0, cv, data, nblocks * 128);
	for (int i = 0; i < 8; i++)
		state[i] = dmt_cpacf_load64(cv + 8 * i);
}

/* ---- batched (HMAC-)SHA-2 ---- */

static enum dmt_cpacf_path path_for(const struct dmt_cpacf *c,
				    const struct cpacf_alg *a, bool hmac)
{
	if (!c || !a)
		return DMT_CPACF_PATH_NONE;
	if (hmac && dmt_cpacf_has(c, DMT_CPACF_KMAC, a->kmac_fc))
		return c->kmac_preload & (1u << (a->kmac_fc & 3))
			       ? DMT_CPACF_PATH_KMAC
			       : DMT_CPACF_PATH_KMAC_KEY;
	if (dmt_cpacf_has(c, DMT_CPACF_KIMD, a->kimd_fc) &&
	    dmt_cpacf_has(c, DMT_CPACF_KLMD, a->kimd_fc))
		return DMT_CPACF_PATH_KIMD;
	return DMT_CPACF_PATH_NONE;
}

enum dmt_cpacf_path dmt_cpacf_batch_path(const struct dmt_cpacf *c,
					 const struct dmt_hmac_job *job,
					 bool hmac)
{
	return path_for(c, alg_find(job->hash), hmac);
}

const char *dmt_cpacf_path_name(enum dmt_cpacf_path path)
{
	switch (path) {
	case DMT_CPACF_PATH_KMAC:
		return "kmac";
	case DMT_CPACF_PATH_KMAC_KEY:
		return "kmac-key";
	case DMT_CPACF_PATH_KIMD:
		return "kimd";
	default:
		return "none";
	}
}

/* Everything fixed for one batch; per message only CV, length and GR0. */
struct plan {
	struct dmt_cpacf *c;
	const struct cpacf_alg *a;
	enum dmt_cpacf_path path;
	bool hmac;
	size_t lp, hs, ms, ss;		/* staged prefix rest, header, ... */
	const uint8_t *prest, *suffix;
	uint64_t bits_hi, bits_lo;	/* inner (I)MBL */
	uint8_t cv0[64];		/* IV [+ ipad] [+ prefix blocks] */
	uint8_t opad_cv[64];		/* KIMD path: IV + opad block */
	uint8_t param[DMT_CPACF_PARAM_MAX];
	uint8_t *stage;
};

/* Software SHA-2 of whole blocks from a host-endian state. */
static void sw_blocks(const struct cpacf_alg *a, void *state,
		      const uint8_t *p, size_t nblocks)
{
	const uint8_t *lane[1] = { p };

	if (!nblocks)
		return;
	if (a->wide)
		dmt_sha512_portable.blocks(state, lane, nblocks);
	else
		dmt_sha256_portable.blocks(state, lane, nblocks);
}

static void state_to_cv(const struct cpacf_alg *a, const void *state,
			uint8_t *cv)
{
	for (int i = 0; i < 8; i++) {
		if (a->wide)
			dmt_cpacf_store64(cv + 8 * i,
					  ((const uint64_t *)state)[i]);
		else
			dmt_cpacf_store32(cv + 4 * i,
					  ((const uint32_t *)state)[i]);
	}
}

static void set_bitlen(const struct cpacf_alg *a, uint8_t *f, uint64_t hi,
		       uint64_t lo)
{
	if (a->lenlen == 16) {
		dmt_cpacf_store64(f, hi);
		dmt_cpacf_store64(f + 8, lo);
	} else {
		dmt_cpacf_store64(f, lo);
	}
}

/*
 * The per-batch work: the HMAC key block (pre-hashed when longer than a
 * block), the inner and outer start states and the prefix's whole blocks,
 * in software (a few blocks per batch), then the key into the parameter
 * block.  Returns 0 or -ENOMEM / -EIO.
 */
static int plan_init(struct plan *p, const struct dmt_hmac_job *job,
		     uint8_t *kbuf)
{
	const struct cpacf_alg *a = p->a;
	union {
		uint32_t w32[8];
		uint64_t w64[8];
	} st;
	size_t whole = 0, ibytes;
	unsigned int klen = 0;
	int rc = -EIO;

	memset(kbuf, 0, a->bs);
	if (p->hmac) {
		if (job->key_size > a->bs) {
			if (!EVP_Digest(job->key, job->key_size, kbuf, &klen,
					a->md(), NULL))
				goto out;
		} else if (job->key_size) {
			memcpy(kbuf, job->key, job->key_size);
		}
	}
	memcpy(&st, a->iv, a->wide ? 64 : 32);
	if (p->hmac && p->path != DMT_CPACF_PATH_KMAC_KEY) {
		uint8_t blk[128];

		for (unsigned int i = 0; i < a->bs; i++)
			blk[i] = kbuf[i] ^ 0x36;
		sw_blocks(a, &st, blk, 1);
	}
	/* KMAC without a preloadable CV can't skip ahead over the prefix. */
	if (p->path != DMT_CPACF_PATH_KMAC_KEY)
		whole = job->prefix_size / a->bs * a->bs;
	sw_blocks(a, &st, job->prefix, whole / a->bs);
	state_to_cv(a, &st, p->cv0);
	p->prest = job->prefix ? job->prefix + whole : NULL;
	p->lp = job->prefix_size - whole;

	if (p->hmac && p->path == DMT_CPACF_PATH_KIMD) {
		uint8_t blk[128];

		for (unsigned int i = 0; i < a->bs; i++)
			blk[i] = kbuf[i] ^ 0x5c;
		memcpy(&st, a->iv, a->wide ? 64 : 32);
		sw_blocks(a, &st, blk, 1);
		state_to_cv(a, &st, p->opad_cv);
	}

	ibytes = job->prefix_size + job->header_size + job->msg_size +
		 job->suffix_size;
	if (p->hmac && p->path == DMT_CPACF_PATH_KIMD)
		ibytes += a->bs;	/* KLMD's length counts the ipad */
	p->bits_hi = (uint64_t)ibytes >> 61;
	p->bits_lo = (uint64_t)ibytes << 3;

	memset(p->param, 0, sizeof(p->param));
	if (p->path == DMT_CPACF_PATH_KMAC ||
	    p->path == DMT_CPACF_PATH_KMAC_KEY)
		memcpy(p->param + a->cvlen + a->lenlen, kbuf, a->bs);
	rc = 0;
out:
	return rc;
}

static int one_message(struct plan *p, const uint8_t *hdr, const uint8_t *msg,
		       uint8_t *out)
{
	const struct cpacf_alg *a = p->a;
	size_t bs = a->bs, head = p->lp + p->hs;
	size_t fill = (bs - head % bs) % bs;
	size_t t = p->ms < fill ? p->ms : fill;
	enum dmt_cpacf_insn mid = DMT_CPACF_KIMD, fin = DMT_CPACF_KLMD;
	uint64_t gr0 = a->kimd_fc, gr0_mid = a->kimd_fc;
	uint8_t *s = p->stage;
	int rc = 0;

	if (p->path != DMT_CPACF_PATH_KIMD) {
		mid = fin = DMT_CPACF_KMAC;
		gr0 = a->kmac_fc;
		if (p->path == DMT_CPACF_PATH_KMAC)
			gr0 |= DMT_CPACF_KMAC_IKP;
	}
	/* Per message: chaining value and bit length, nothing else. */
	memcpy(p->param, p->cv0, a->cvlen);
	set_bitlen(a, p->param + a->cvlen, p->bits_hi, p->bits_lo);

	if (p->lp)
		memcpy(s, p->prest, p->lp);
	if (p->hs)
		memcpy(s + p->lp, hdr, p->hs);
	memcpy(s + head, msg, t);
	if (t == p->ms) {
		/* Short message: prefix rest, header, message, suffix. */
		if (p->ss)
			memcpy(s + head + t, p->suffix, p->ss);
		rc = dmt_cpacf_run(p->c, fin, &gr0, p->param, s,
				   head + t + p->ss);
	} else {
		const uint8_t *rest = msg + t;
		size_t r = p->ms - t, whole = r / bs * bs;

		/* KMAC: the intermediate call sets IKP in GR0 for the final. */
		if (mid == DMT_CPACF_KMAC)
			gr0_mid = gr0 | DMT_CPACF_KMAC_IIMP;
		if (head + t)
			rc = dmt_cpacf_run(p->c, mid, &gr0_mid, p->param, s,
					   head + t);
		if (mid == DMT_CPACF_KMAC)
			gr0 = gr0_mid & ~(uint64_t)DMT_CPACF_KMAC_IIMP;
		if (!rc && !p->ss) {
			/* Final call straight from the caller's buffer. */
			rc = dmt_cpacf_run(p->c, fin, &gr0, p->param, rest, r);
		} else if (!rc) {
			if (whole)
				rc = dmt_cpacf_run(p->c, mid, &gr0_mid,
						   p->param, rest, whole);
			if (mid == DMT_CPACF_KMAC)
				gr0 = gr0_mid & ~(uint64_t)DMT_CPACF_KMAC_IIMP;
			memcpy(s, rest + whole, r - whole);
			memcpy(s + r - whole, p->suffix, p->ss);
			if (!rc)
				rc = dmt_cpacf_run(p->c, fin, &gr0, p->param,
						   s, r - whole + p->ss);
		}
	}
	if (rc)
		goto out;
	if (p->hmac && p->path == DMT_CPACF_PATH_KIMD) {
		uint8_t inner[64];

		memcpy(inner, p->param, a->ds);
		memcpy(p->param, p->opad_cv, a->cvlen);
		set_bitlen(a, p->param + a->cvlen, 0,
			   (uint64_t)(bs + a->ds) * 8);
		gr0 = a->kimd_fc;
		rc = dmt_cpacf_run(p->c, DMT_CPACF_KLMD, &gr0, p->param, inner,
				   a->ds);
		if (rc)
			goto out;
	}
	memcpy(out, p->param, a->ds);
out:
	return rc;
}

static int batch_on_path(struct dmt_cpacf *c, const struct dmt_hmac_job *job,
			 bool hmac, enum dmt_cpacf_path path, size_t n,
			 const uint8_t *const *msgs, const uint8_t *headers,
			 uint8_t *out)
{
	uint8_t stage_buf[768], kbuf[128];
	struct plan p;
	size_t need;
	int rc = -EINVAL;

	memset(&p, 0, sizeof(p));
	p.c = c;
	p.a = alg_find(job->hash);
	p.path = path;
	p.hmac = hmac;
	p.hs = job->header_size;
	p.ms = job->msg_size;
	p.ss = job->suffix_size;
	p.suffix = job->suffix;
	if (!p.a || job->digest_size != p.a->ds || (hmac && !job->key &&
						    job->key_size) ||
	    (job->prefix_size && !job->prefix) ||
	    (job->suffix_size && !job->suffix))
		goto out;
	rc = plan_init(&p, job, kbuf);
	if (rc)
		goto out;
	need = p.lp + p.hs + p.a->bs + p.ss;
	p.stage = stage_buf;
	if (need > sizeof(stage_buf)) {
		rc = -ENOMEM;
		p.stage = malloc(need);
		if (!p.stage)
			goto out;
	}
	rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		rc = one_message(&p, headers ? headers + i * p.hs : NULL,
				 msgs[i], out + i * p.a->ds);
	if (p.stage != stage_buf)
		free(p.stage);
out:
	memset(kbuf, 0, sizeof(kbuf));
	memset(p.param, 0, sizeof(p.param));
	return rc;
}

int dmt_cpacf_batch(struct dmt_cpacf *c, const struct dmt_hmac_job *job,
		    bool hmac, size_t n, const uint8_t *const *msgs,
		    const uint8_t *headers, uint8_t *out)
{
	enum dmt_cpacf_path path = dmt_cpacf_batch_path(c, job, hmac);

	if (path == DMT_CPACF_PATH_NONE)
		return alg_find(job->hash) ? -ENOTSUP : -EINVAL;
	return batch_on_path(c, job, hmac, path, n, msgs, headers, out);
}

/* ---- KMAC self-test ---- */

/*
 * The architecture keeps all KMAC state in GR0 and the parameter block, so
 * resuming after cc 3 (IKP = 1, CV = inner state) must work; that a CV we
 * compute in software has the CPU's format is Linux's export/import
 * assumption, and it is checked here against OpenSSL before it is used,
 * through the very code the batches run.
 */
static bool kmac_known_answer(struct dmt_cpacf *c, const struct cpacf_alg *a,
			      enum dmt_cpacf_path path)
{
	static const char key[] = "CPACF KMAC self-test key";
	uint8_t data[16 + 3 * (8 + 150)], prefix[16], hdr[3 * 8];
	uint8_t got[3 * 64], want[64];
	const uint8_t *msgs[3];
	struct dmt_hmac_job job = {
		.hash = a->name, .key = (const uint8_t *)key,
		.key_size = sizeof(key) - 1, .prefix = prefix,
		.prefix_size = sizeof(prefix), .header_size = 8,
		.msg_size = 150, .digest_size = a->ds,
	};
	unsigned int wlen = 0;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 1);
	memcpy(prefix, data, sizeof(prefix));
	for (int i = 0; i < 3; i++) {
		memset(hdr + 8 * i, 0, 8);
		hdr[8 * i] = (uint8_t)i;
		msgs[i] = data + 16 + i * 8 + i * 150 + 8;
	}
	if (batch_on_path(c, &job, true, path, 3, msgs, hdr, got))
		return false;
	for (int i = 0; i < 3; i++) {
		uint8_t buf[16 + 8 + 150];

		memcpy(buf, prefix, 16);
		memcpy(buf + 16, hdr + 8 * i, 8);
		memcpy(buf + 24, msgs[i], 150);
		if (!HMAC(a->md(), key, (int)job.key_size, buf, sizeof(buf),
			  want, &wlen) || wlen != a->ds ||
		    memcmp(got + i * a->ds, want, a->ds))
			return false;
	}
	return true;
}

void dmt_cpacf_kmac_selftest(struct dmt_cpacf *c)
{
	c->kmac_preload = 0;
	for (size_t i = 0; i < sizeof(cpacf_algs) / sizeof(cpacf_algs[0]);
	     i++) {
		const struct cpacf_alg *a = &cpacf_algs[i];
		unsigned int fc = a->kmac_fc;

		if (!dmt_cpacf_has(c, DMT_CPACF_KMAC, fc))
			continue;
		if (!kmac_known_answer(c, a, DMT_CPACF_PATH_KMAC_KEY)) {
			c->mask[DMT_CPACF_KMAC][fc >> 3] &=
				(uint8_t)~(0x80 >> (fc & 7));
			continue;
		}
		if (kmac_known_answer(c, a, DMT_CPACF_PATH_KMAC))
			c->kmac_preload |= 1u << (fc & 3);
	}
}
