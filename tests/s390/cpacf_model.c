// SPDX-License-Identifier: MIT
/*
 * Portable software model of CPACF KIMD, KLMD and KMAC (SHA-2 and
 * HMAC-SHA-2 function codes), so the s390 drivers run and are tested on any
 * host.  It keeps its own SHA-2 compression (independent of the engine's),
 * reads and writes parameter blocks only as big-endian bytes, enforces the
 * architected rules (installed functions, zero modifier bit, whole blocks for
 * KIMD and intermediate KMAC calls) and can stop with condition code 3 after
 * any number of blocks, leaving registers and parameter block exactly where
 * a re-execution continues.  Not thread-safe: one model per test.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash/s390/cpacf.h"
#include "lib/hash/arch/sha2_constants.h"

struct model {
	struct dmt_cpacf c;
	struct dmt_cpacf_model_cfg cfg;
	uint64_t rng;
	struct dmt_cpacf_model_stats st;
};

struct malg {
	unsigned int bs;	/* block size */
	unsigned int cvlen;	/* chaining value field */
	unsigned int lenlen;	/* (I)MBL field */
	unsigned int ds;	/* digest size (HMAC output) */
	bool wide;		/* 64-bit words */
	const void *iv;
};

static const struct malg m_sha224 = { 64, 32, 8, 28, false, dmt_sha224_iv };
static const struct malg m_sha256 = { 64, 32, 8, 32, false, dmt_sha256_iv };
static const struct malg m_sha384 = { 128, 64, 16, 48, true, dmt_sha384_iv };
static const struct malg m_sha512 = { 128, 64, 16, 64, true, dmt_sha512_iv };

static uint32_t rotr32(uint32_t x, unsigned int n)
{
	return x >> n | x << (32 - n);
}

static uint64_t rotr64(uint64_t x, unsigned int n)
{
	return x >> n | x << (64 - n);
}

static void compress256(uint32_t h[8], const uint8_t *p)
{
	uint32_t w[64], s[8], t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = dmt_cpacf_load32(p + 4 * i);
	for (; i < 64; i++)
		w[i] = w[i - 16] + w[i - 7] +
		       (rotr32(w[i - 15], 7) ^ rotr32(w[i - 15], 18) ^
			w[i - 15] >> 3) +
		       (rotr32(w[i - 2], 17) ^ rotr32(w[i - 2], 19) ^
			w[i - 2] >> 10);
	memcpy(s, h, sizeof(s));
	for (i = 0; i < 64; i++) {
		t1 = s[7] + (rotr32(s[4], 6) ^ rotr32(s[4], 11) ^
			     rotr32(s[4], 25)) +
		     ((s[4] & s[5]) ^ (~s[4] & s[6])) + dmt_sha256_k[i] + w[i];
		t2 = (rotr32(s[0], 2) ^ rotr32(s[0], 13) ^ rotr32(s[0], 22)) +
		     ((s[0] & s[1]) ^ (s[0] & s[2]) ^ (s[1] & s[2]));
		memmove(s + 1, s, 7 * sizeof(s[0]));
		s[4] += t1;
		s[0] = t1 + t2;
	}
	for (i = 0; i < 8; i++)
		h[i] += s[i];
}

static void compress512(uint64_t h[8], const uint8_t *p)
{
	uint64_t w[80], s[8], t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = dmt_cpacf_load64(p + 8 * i);
	for (; i < 80; i++)
		w[i] = w[i - 16] + w[i - 7] +
		       (rotr64(w[i - 15], 1) ^ rotr64(w[i - 15], 8) ^
			w[i - 15] >> 7) +
		       (rotr64(w[i - 2], 19) ^ rotr64(w[i - 2], 61) ^
			w[i - 2] >> 6);
	memcpy(s, h, sizeof(s));
	for (i = 0; i < 80; i++) {
		t1 = s[7] + (rotr64(s[4], 14) ^ rotr64(s[4], 18) ^
			     rotr64(s[4], 41)) +
		     ((s[4] & s[5]) ^ (~s[4] & s[6])) + dmt_sha512_k[i] + w[i];
		t2 = (rotr64(s[0], 28) ^ rotr64(s[0], 34) ^ rotr64(s[0], 39)) +
		     ((s[0] & s[1]) ^ (s[0] & s[2]) ^ (s[1] & s[2]));
		memmove(s + 1, s, 7 * sizeof(s[0]));
		s[4] += t1;
		s[0] = t1 + t2;
	}
	for (i = 0; i < 8; i++)
		h[i] += s[i];
}

/* The hash state of one execution, read from and written to CV fields. */
union mstate {
	uint32_t w32[8];
	uint64_t w64[8];
};

static void st_iv(const struct malg *a, union mstate *s)
{
	memcpy(s, a->iv, a->wide ? 64 : 32);
}

static void st_load(const struct malg *a, union mstate *s, const uint8_t *cv)
{
	for (int i = 0; i < 8; i++) {
		if (a->wide)
			s->w64[i] = dmt_cpacf_load64(cv + 8 * i);
		else
			s->w32[i] = dmt_cpacf_load32(cv + 4 * i);
	}
}

static void st_store(const struct malg *a, const union mstate *s, uint8_t *cv)
{
	for (int i = 0; i < 8; i++) {
		if (a->wide)
			dmt_cpacf_store64(cv + 8 * i, s->w64[i]);
		else
			dmt_cpacf_store32(cv + 4 * i, s->w32[i]);
	}
}

static void st_block(const struct malg *a, union mstate *s, const uint8_t *p)
{
	if (a->wide)
		compress512(s->w64, p);
	else
		compress256(s->w32, p);
}

/*
 * Final padding: tail (< bs bytes), 0x80, zeros, then the bit length in
 * the (I)MBL format (8 or 16 bytes) given as a big-endian field.
 */
static void st_final(const struct malg *a, union mstate *s,
		     const uint8_t *tail, size_t n, const uint8_t *bitlen)
{
	uint8_t buf[256];
	size_t total = n + 1 + a->lenlen <= a->bs ? a->bs : 2 * a->bs;

	memset(buf, 0, total);
	memcpy(buf, tail, n);
	buf[n] = 0x80;
	memcpy(buf + total - a->lenlen, bitlen, a->lenlen);
	st_block(a, s, buf);
	if (total > a->bs)
		st_block(a, s, buf + a->bs);
}

/* Field of `lenlen` bytes holding bytes * 8 + add_bits. */
static void bitlen_field(const struct malg *a, uint8_t *f, uint64_t hi,
			 uint64_t lo)
{
	if (a->lenlen == 16) {
		dmt_cpacf_store64(f, hi);
		dmt_cpacf_store64(f + 8, lo);
	} else {
		dmt_cpacf_store64(f, lo);
	}
}

static const struct malg *kimd_alg(unsigned int fc)
{
	switch (fc) {
	case DMT_CPACF_SHA_256:
		return &m_sha256;
	case DMT_CPACF_SHA_512:
		return &m_sha512;
	default:
		return NULL;
	}
}

static const struct malg *kmac_alg(unsigned int fc)
{
	switch (fc) {
	case DMT_CPACF_HMAC_SHA_224:
		return &m_sha224;
	case DMT_CPACF_HMAC_SHA_256:
		return &m_sha256;
	case DMT_CPACF_HMAC_SHA_384:
		return &m_sha384;
	case DMT_CPACF_HMAC_SHA_512:
		return &m_sha512;
	default:
		return NULL;
	}
}

static bool emulable(enum dmt_cpacf_insn insn, unsigned int fc)
{
	if (fc == DMT_CPACF_QUERY)
		return true;
	return insn == DMT_CPACF_KMAC ? kmac_alg(fc) != NULL
				      : kimd_alg(fc) != NULL;
}

/* Blocks this execution may process before it stops with cc 3 (0: all). */
static unsigned long stop_limit(struct model *m)
{
	uint64_t x;

	if (!m->cfg.stop_every)
		return 0;
	if (!m->cfg.stop_random)
		return m->cfg.stop_every;
	x = m->rng;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	m->rng = x;
	return 1 + (unsigned long)(x % m->cfg.stop_every);
}

/* Intermediate KMAC chaining values in "opaque" form (a model knob). */
static void kmac_cv_scramble(struct model *m, uint8_t *cv, size_t len)
{
	if (!m->cfg.opaque_kmac_cv)
		return;
	for (size_t i = 0; i < len; i++)
		cv[i] ^= (uint8_t)(0xa5 + i);
}

struct xrun {
	struct model *m;
	enum dmt_cpacf_insn insn;
	unsigned int fc;
	unsigned long limit, done;
};

/* Processes whole blocks while at least `keep` bytes stay; false = stop. */
static bool run_blocks(struct xrun *x, const struct malg *a, union mstate *s,
		       const uint8_t **src, size_t *len, size_t keep)
{
	while (*len >= a->bs && *len - a->bs >= keep) {
		if (x->limit && x->done == x->limit)
			return false;
		st_block(a, s, *src);
		*src += a->bs;
		*len -= a->bs;
		x->done++;
		x->m->st.blocks[x->insn][x->fc]++;
	}
	return !(x->limit && x->done == x->limit);
}

static int partial(struct xrun *x)
{
	x->m->st.partial[x->insn][x->fc]++;
	return 3;
}

static int do_kimd(struct xrun *x, uint8_t *param, const uint8_t **src,
		   size_t *len)
{
	const struct malg *a = kimd_alg(x->fc);
	union mstate s;
	bool more;

	if (*len % a->bs)
		return DMT_CPACF_EXCEPTION;
	st_load(a, &s, param);
	more = run_blocks(x, a, &s, src, len, 0);
	st_store(a, &s, param);
	return !more && *len ? partial(x) : 0;
}

static int do_klmd(struct xrun *x, uint8_t *param, const uint8_t **src,
		   size_t *len)
{
	const struct malg *a = kimd_alg(x->fc);
	union mstate s;

	st_load(a, &s, param);
	/* Any point with work left, even only the padding, may stop. */
	if (!run_blocks(x, a, &s, src, len, 0)) {
		st_store(a, &s, param);
		return partial(x);
	}
	st_final(a, &s, *src, *len, param + a->cvlen);
	*src += *len;
	*len = 0;
	st_store(a, &s, param);
	return 0;
}

static void key_block(const struct malg *a, const uint8_t *key, uint8_t pad,
		      uint8_t *out)
{
	for (unsigned int i = 0; i < a->bs; i++)
		out[i] = key[i] ^ pad;
}

static int do_kmac(struct xrun *x, uint64_t *gr0, uint8_t *param,
		   const uint8_t **src, size_t *len)
{
	const struct malg *a = kmac_alg(x->fc);
	uint8_t *imbl = param + a->cvlen, *key = imbl + a->lenlen;
	uint8_t blk[128], cv[64], bits[16];
	bool iimp = *gr0 & DMT_CPACF_KMAC_IIMP;
	union mstate s, o;
	uint64_t hi, lo;

	if (iimp && *len % a->bs)
		return DMT_CPACF_EXCEPTION;
	if (*gr0 & DMT_CPACF_KMAC_IKP) {
		memcpy(cv, param, a->cvlen);
		kmac_cv_scramble(x->m, cv, a->cvlen);
		st_load(a, &s, cv);
	} else {
		st_iv(a, &s);
		key_block(a, key, 0x36, blk);
		st_block(a, &s, blk);
		*gr0 |= DMT_CPACF_KMAC_IKP;
	}
	if (!run_blocks(x, a, &s, src, len, 0) || iimp) {
		st_store(a, &s, param);
		kmac_cv_scramble(x->m, param, a->cvlen);
		return *len || !iimp ? partial(x) : 0;
	}
	/* Inner padding counts the ipad block, which IMBL does not. */
	if (a->lenlen == 16) {
		hi = dmt_cpacf_load64(imbl);
		lo = dmt_cpacf_load64(imbl + 8);
	} else {
		hi = 0;
		lo = dmt_cpacf_load64(imbl);
	}
	hi += lo + a->bs * 8u < lo;
	lo += a->bs * 8u;
	bitlen_field(a, bits, hi, lo);
	st_final(a, &s, *src, *len, bits);
	*src += *len;
	*len = 0;
	st_store(a, &s, cv);

	st_iv(a, &o);
	key_block(a, key, 0x5c, blk);
	st_block(a, &o, blk);
	bitlen_field(a, bits, 0, (uint64_t)(a->bs + a->ds) * 8);
	st_final(a, &o, cv, a->ds, bits);
	st_store(a, &o, param);
	return 0;
}

static int model_exec(struct dmt_cpacf *c, enum dmt_cpacf_insn insn,
		      uint64_t *gr0, uint8_t *param, const uint8_t **src,
		      size_t *len)
{
	struct model *m = (struct model *)c;
	unsigned int fc = *gr0 & DMT_CPACF_FC_MASK;
	uint64_t flags = *gr0 & ~(uint64_t)DMT_CPACF_FC_MASK;
	struct xrun x = { m, insn, fc, 0, 0 };
	int cc;

	if ((unsigned int)insn >= DMT_CPACF_NINSN ||
	    !dmt_cpacf_mask_test(m->cfg.installed[insn], fc))
		goto exception;
	/* The modifier bit (0x80) must be zero; KMAC knows IKP and IIMP. */
	if (insn == DMT_CPACF_KMAC && fc != DMT_CPACF_QUERY)
		flags &= ~(uint64_t)(DMT_CPACF_KMAC_IKP | DMT_CPACF_KMAC_IIMP);
	if (flags)
		goto exception;
	m->st.execs[insn][fc]++;
	if (fc == DMT_CPACF_QUERY) {
		memcpy(param, m->cfg.installed[insn], DMT_CPACF_MASK_SIZE);
		return 0;
	}
	x.limit = stop_limit(m);
	switch (insn) {
	case DMT_CPACF_KIMD:
		cc = do_kimd(&x, param, src, len);
		break;
	case DMT_CPACF_KLMD:
		cc = do_klmd(&x, param, src, len);
		break;
	default:
		cc = do_kmac(&x, gr0, param, src, len);
		break;
	}
	if (cc == DMT_CPACF_EXCEPTION)
		goto exception;
	return cc;
exception:
	m->st.exceptions++;
	return DMT_CPACF_EXCEPTION;
}

void dmt_cpacf_model_preset(struct dmt_cpacf_model_cfg *cfg,
			    enum dmt_cpacf_preset preset)
{
	memset(cfg, 0, sizeof(*cfg));
	for (int i = 0; i < DMT_CPACF_NINSN; i++)
		dmt_cpacf_mask_set(cfg->installed[i], DMT_CPACF_QUERY);
	if (preset == DMT_CPACF_PRESET_NONE)
		return;
	for (int i = DMT_CPACF_KIMD; i <= DMT_CPACF_KLMD; i++) {
		dmt_cpacf_mask_set(cfg->installed[i], DMT_CPACF_SHA_512);
		if (preset != DMT_CPACF_PRESET_QEMU72)
			dmt_cpacf_mask_set(cfg->installed[i],
					   DMT_CPACF_SHA_256);
	}
	if (preset != DMT_CPACF_PRESET_Z17)
		return;
	for (unsigned int fc = DMT_CPACF_HMAC_SHA_224;
	     fc <= DMT_CPACF_HMAC_SHA_512; fc++)
		dmt_cpacf_mask_set(cfg->installed[DMT_CPACF_KMAC], fc);
}

int dmt_cpacf_model_new(const struct dmt_cpacf_model_cfg *cfg,
			const char *cap, struct dmt_cpacf **out)
{
	struct model *m = NULL;
	int rc = -EINVAL;

	*out = NULL;
	for (int i = 0; i < DMT_CPACF_NINSN; i++)
		for (unsigned int fc = 0; fc < 128; fc++)
			if (dmt_cpacf_mask_test(cfg->installed[i], fc) &&
			    !emulable((enum dmt_cpacf_insn)i, fc))
				goto out;
	rc = -ENOMEM;
	m = calloc(1, sizeof(*m));
	if (!m)
		goto out;
	m->cfg = *cfg;
	m->rng = cfg->seed * 0x9e3779b97f4a7c15ull + 1;
	m->c.name = "model";
	m->c.exec = model_exec;
	rc = dmt_cpacf_setup(&m->c, cap);
	if (rc)
		goto out;
	*out = &m->c;
	m = NULL;
out:
	free(m);
	return rc;
}

void dmt_cpacf_model_free(struct dmt_cpacf *c)
{
	free(c);
}

void dmt_cpacf_model_get_stats(const struct dmt_cpacf *c,
			       struct dmt_cpacf_model_stats *st)
{
	*st = ((const struct model *)c)->st;
}

void dmt_cpacf_model_reset_stats(struct dmt_cpacf *c)
{
	struct model *m = (struct model *)c;

	memset(&m->st, 0, sizeof(m->st));
}
