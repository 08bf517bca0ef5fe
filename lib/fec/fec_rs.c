// SPDX-License-Identifier: MIT
/*
 * GF(2^8) tables and the scalar Reed-Solomon code of dm-verity FEC:
 * RS(255, 255 - roots), field polynomial 0x11d, fcr 0, prim 1, codeword
 * byte 0 = coefficient of x^254.  Encoder and decoder follow Phil Karn's
 * libfec (encode_rs_char / decode_rs_char), which veritysetup and the
 * kernel both use, so parity and corrections agree bit for bit.
 */
#include "lib/fec/fec_gf256.h"
#include "lib/common/dispatch.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#define NN 255
#define A0 NN		/* log of zero in index form */

static struct dmt_gf256_tables gf;
static pthread_once_t gf_once = PTHREAD_ONCE_INIT;

static void gf_build(void)
{
	unsigned int i, x = 1, a, b;

	for (i = 0; i < NN; i++) {
		gf.exp[i] = (uint8_t)x;
		gf.exp[i + NN] = (uint8_t)x;
		gf.log[x] = (uint8_t)i;
		x <<= 1;
		if (x & 0x100)
			x ^= DMT_GF256_POLY;
	}
	gf.exp[510] = gf.exp[0];
	gf.exp[511] = gf.exp[1];
	gf.log[0] = A0;
	for (a = 0; a < 256; a++)
		for (b = 0; b < 256; b++)
			gf.mul[a][b] = (a && b) ?
				gf.exp[gf.log[a] + gf.log[b]] : 0;
}

const struct dmt_gf256_tables *dmt_gf256_init(void)
{
	pthread_once(&gf_once, gf_build);
	return &gf;
}

uint64_t dmt_gf256_affine_matrix(uint8_t c)
{
	const struct dmt_gf256_tables *t = dmt_gf256_init();
	uint64_t m = 0;
	unsigned int i, k;

	/*
	 * GF2P8AFFINEQB: result bit i = parity(x & byte[7 - i] of the
	 * matrix).  c * x = sum over set bits k of x of c * alpha^k, so row
	 * i has bit k set when bit i of c * 2^k is set.
	 */
	for (i = 0; i < 8; i++) {
		uint8_t row = 0;

		for (k = 0; k < 8; k++)
			if (t->mul[c][1u << k] & (1u << i))
				row |= (uint8_t)(1u << k);
		m |= (uint64_t)row << (8 * (7 - i));
	}
	return m;
}

void dmt_gf256_nibble_tables(uint8_t c, uint8_t t[32])
{
	const struct dmt_gf256_tables *g = dmt_gf256_init();
	unsigned int j;

	for (j = 0; j < 16; j++) {
		t[j] = g->mul[c][j];
		t[16 + j] = g->mul[c][j << 4];
	}
}

/* acc tile (roots x TILE bytes) stays in L1/L2 while all rows go by. */
#define MAC_TILE 4096

void dmt_gf256_mac_portable(uint8_t *acc, size_t acc_stride,
			    unsigned int roots, const uint8_t *in,
			    size_t in_stride, size_t nrows,
			    const uint8_t *coef, size_t len)
{
	const struct dmt_gf256_tables *t = dmt_gf256_init();
	size_t x0, x, n, r;
	unsigned int i;

	for (x0 = 0; x0 < len; x0 += MAC_TILE) {
		n = len - x0 < MAC_TILE ? len - x0 : MAC_TILE;
		for (r = 0; r < nrows; r++) {
			const uint8_t *src = in + r * in_stride + x0;

			for (i = 0; i < roots; i++) {
				const uint8_t *m = t->mul[coef[r * roots + i]];
				uint8_t *d = acc + i * acc_stride + x0;

				for (x = 0; x < n; x++)
					d[x] ^= m[src[x]];
			}
		}
	}
}

static inline unsigned int modnn(unsigned int x)
{
	while (x >= NN) {
		x -= NN;
		x = (x >> 8) + (x & NN);
	}
	return x;
}

void dmt_rs_encode(const struct dmt_rs *rs, const uint8_t *msg, uint8_t *par)
{
	const struct dmt_gf256_tables *t = dmt_gf256_init();
	unsigned int i, j, roots = rs->roots;
	uint8_t fb;

	memset(par, 0, roots);
	for (i = 0; i < rs->rsn; i++) {
		fb = msg[i] ^ par[0];
		for (j = 1; j < roots; j++)
			par[j] ^= t->mul[fb][rs->gen[roots - j]];
		memmove(par, par + 1, roots - 1);
		par[roots - 1] = t->mul[fb][rs->gen[0]];
	}
}

int dmt_rs_init(struct dmt_rs *rs, unsigned int roots)
{
	const struct dmt_gf256_tables *t = dmt_gf256_init();
	uint8_t msg[DMT_FEC_RSM] = { 0 };
	unsigned int i, j;

	if (roots < DMT_FEC_ROOTS_MIN || roots > DMT_FEC_ROOTS_MAX)
		return -EINVAL;
	memset(rs, 0, sizeof(*rs));
	rs->roots = roots;
	rs->rsn = DMT_FEC_RSM - roots;

	/* g(x) = prod_{i < roots} (x - alpha^i), coefficients low first */
	rs->gen[0] = 1;
	for (i = 0; i < roots; i++) {
		rs->gen[i + 1] = 1;
		for (j = i; j > 0; j--)
			rs->gen[j] = rs->gen[j - 1] ^
				     t->mul[rs->gen[j]][t->exp[i]];
		rs->gen[0] = t->mul[rs->gen[0]][t->exp[i]];
	}

	/* The code is linear: parity = sum of msg[j] * parity(e_j). */
	for (j = 0; j < rs->rsn; j++) {
		msg[j] = 1;
		dmt_rs_encode(rs, msg, &rs->coef[j * roots]);
		msg[j] = 0;
	}
	return 0;
}

static int syndromes(const struct dmt_rs *rs, const uint8_t *cw, int *s)
{
	const struct dmt_gf256_tables *t = dmt_gf256_init();
	unsigned int i, j;
	int any = 0;

	/* s_i = cw(alpha^i), Horner from the x^254 coefficient down */
	for (i = 0; i < rs->roots; i++) {
		unsigned int v = cw[0];

		for (j = 1; j < NN; j++)
			v = cw[j] ^ (v ? t->exp[t->log[v] + i] : 0);
		any |= (int)v;
		s[i] = t->log[v];
	}
	return any;
}

/* Decoder state shared by the steps below (log domain, A0 = zero). */
struct rs_dec {
	int nroots;
	int lambda[DMT_FEC_ROOTS_MAX + 1];	/* error + erasure locator */
	int omega[DMT_FEC_ROOTS_MAX + 1];	/* error evaluator */
	int s[DMT_FEC_ROOTS_MAX];		/* syndromes */
	int root[DMT_FEC_ROOTS_MAX], loc[DMT_FEC_ROOTS_MAX];
	int deg_lambda, deg_omega, count;
};

/* Erasure locator: prod (1 - X_k x), X_k = alpha^(254 - pos); b gets its
 * log.  -1 on a bad position. */
static int rs_erasures(struct rs_dec *d, const int *eras, int neras, int *b)
{
	const struct dmt_gf256_tables *t = dmt_gf256_init();
	unsigned int u, tmp;
	int i, j;

	memset(d->lambda, 0, sizeof(d->lambda));
	d->lambda[0] = 1;
	for (i = 0; i < neras; i++) {
		if (eras[i] < 0 || eras[i] >= NN)
			return -1;
		u = modnn((unsigned int)(NN - 1 - eras[i]));
		for (j = i + 1; j > 0; j--) {
			tmp = t->log[d->lambda[j - 1]];
			if (tmp != A0)
				d->lambda[j] ^= t->exp[modnn(u + tmp)];
		}
	}
	for (i = 0; i <= d->nroots; i++)
		b[i] = t->log[d->lambda[i]];
	return 0;
}

/* Berlekamp-Massey, starting after the erasures; lambda ends in the log
 * domain.  -1 when there is no locator (uncorrectable). */
static int rs_berlekamp(struct rs_dec *d, int neras, int *b)
{
	const struct dmt_gf256_tables *t = dmt_gf256_init();
	const uint8_t *EXP = t->exp, *LOG = t->log;
	const int nroots = d->nroots, *s = d->s;
	int *lambda = d->lambda, tt[DMT_FEC_ROOTS_MAX + 1];
	int r = neras, el = neras, i, discr_r;

	while (++r <= nroots) {
		discr_r = 0;
		for (i = 0; i < r; i++)
			if (lambda[i] != 0 && s[r - i - 1] != A0)
				discr_r ^= EXP[modnn(LOG[lambda[i]] +
					(unsigned int)s[r - i - 1])];
		discr_r = LOG[discr_r];
		if (discr_r == A0) {
			memmove(&b[1], b, nroots * sizeof(b[0]));
			b[0] = A0;
			continue;
		}
		tt[0] = lambda[0];
		for (i = 0; i < nroots; i++)
			tt[i + 1] = b[i] != A0 ?
				lambda[i + 1] ^
				EXP[modnn((unsigned int)(discr_r + b[i]))] :
				lambda[i + 1];
		if (2 * el <= r + neras - 1) {
			el = r + neras - el;
			for (i = 0; i <= nroots; i++)
				b[i] = lambda[i] == 0 ? A0 :
					(int)modnn(LOG[lambda[i]] - discr_r +
						   NN);
		} else {
			memmove(&b[1], b, nroots * sizeof(b[0]));
			b[0] = A0;
		}
		memcpy(lambda, tt, (nroots + 1) * sizeof(lambda[0]));
	}
	d->deg_lambda = 0;
	for (i = 0; i <= nroots; i++) {
		lambda[i] = LOG[lambda[i]];
		if (lambda[i] != A0)
			d->deg_lambda = i;
	}
	return d->deg_lambda ? 0 : -1;
}

/* Chien search (the roots of lambda are the inverses of the locators),
 * then omega = s * lambda mod x^roots.  -1 when roots are missing. */
static int rs_chien(struct rs_dec *d)
{
	const struct dmt_gf256_tables *t = dmt_gf256_init();
	const uint8_t *EXP = t->exp, *LOG = t->log;
	int reg[DMT_FEC_ROOTS_MAX + 1], i, j, k;
	unsigned int tmp;

	memcpy(&reg[1], &d->lambda[1], d->nroots * sizeof(reg[0]));
	d->count = 0;
	for (i = 1, k = 0; i <= NN; i++, k = (int)modnn((unsigned int)k + 1)) {
		unsigned int q = 1;

		for (j = d->deg_lambda; j > 0; j--) {
			if (reg[j] != A0) {
				reg[j] = (int)modnn((unsigned int)(reg[j] + j));
				q ^= EXP[reg[j]];
			}
		}
		if (q != 0)
			continue;
		d->root[d->count] = i;
		d->loc[d->count] = k;
		if (++d->count == d->deg_lambda)
			break;
	}
	if (d->count != d->deg_lambda)
		return -1;
	d->deg_omega = d->deg_lambda - 1;
	for (i = 0; i <= d->deg_omega; i++) {
		tmp = 0;
		for (j = i; j >= 0; j--)
			if (d->s[i - j] != A0 && d->lambda[j] != A0)
				tmp ^= EXP[modnn((unsigned int)(d->s[i - j] +
								d->lambda[j]))];
		d->omega[i] = LOG[tmp];
	}
	return 0;
}

/* Forney (fcr 0): e = X^(1-fcr) omega(X^-1) / lambda'(X^-1), applied to
 * cw.  -1 (cw half-changed) on a zero denominator. */
static int rs_forney(const struct rs_dec *d, uint8_t *cw)
{
	const struct dmt_gf256_tables *t = dmt_gf256_init();
	const uint8_t *EXP = t->exp, *LOG = t->log;
	const int *lambda = d->lambda, *omega = d->omega, *root = d->root;
	unsigned int num1, num2, den;
	int i, j;

	for (j = d->count - 1; j >= 0; j--) {
		num1 = 0;
		for (i = d->deg_omega; i >= 0; i--)
			if (omega[i] != A0)
				num1 ^= EXP[modnn((unsigned int)(omega[i] +
								 i * root[j]))];
		num2 = EXP[modnn((unsigned int)(NN - root[j]))];
		den = 0;
		for (i = (d->deg_lambda < d->nroots - 1 ? d->deg_lambda
							: d->nroots - 1) &
			 ~1; i >= 0; i -= 2)
			if (lambda[i + 1] != A0)
				den ^= EXP[modnn((unsigned int)(lambda[i + 1] +
								i * root[j]))];
		if (den == 0)
			return -1;
		if (num1 != 0)
			cw[d->loc[j]] ^= EXP[modnn(LOG[num1] + LOG[num2] + NN -
						   LOG[den])];
	}
	return 0;
}

int dmt_rs_decode(const struct dmt_rs *rs, uint8_t *cw, const int *eras,
		  int neras)
{
	struct rs_dec d = { .nroots = (int)rs->roots };
	int b[DMT_FEC_ROOTS_MAX + 1];
	uint8_t save[DMT_FEC_RSM];

	if (neras < 0 || neras > d.nroots)
		return -1;
	if (!syndromes(rs, cw, d.s))
		return 0;
	if (rs_erasures(&d, eras, neras, b) || rs_berlekamp(&d, neras, b) ||
	    rs_chien(&d))
		return -1;
	memcpy(save, cw, sizeof(save));
	/* never hand back something that is not a codeword */
	if (rs_forney(&d, cw) || syndromes(rs, cw, d.s)) {
		memcpy(cw, save, sizeof(save));
		return -1;
	}
	return d.count;
}

/* The dispatcher's portable entry: no prep, mac reads the coefficients. */
static void portable_mac(uint8_t *acc, size_t acc_stride, unsigned int roots,
			 const uint8_t *in, size_t in_stride, size_t nrows,
			 const void *coefs, size_t len)
{
	dmt_gf256_mac_portable(acc, acc_stride, roots, in, in_stride, nrows,
			       coefs, len);
}

const struct dmt_gf256_ops dmt_gf256_ops_portable = {
	.mac = portable_mac, .coef_size = 1,
};
