/* SPDX-License-Identifier: MIT */
/*
 * s390 CPACF: KIMD, KLMD and KMAC for SHA-2 and HMAC-SHA-2.
 *
 * One instruction interface (struct dmt_cpacf), two implementations: the
 * real instructions (s390x only, inline asm) and a portable software model
 * with the same big-endian parameter blocks, the same register semantics
 * and test knobs (installed functions, forced partial completion).  All
 * drivers above the interface (condition-code 3 loops, SHA block backends,
 * the batched HMAC) are the same code on both, so they run and are tested
 * on any host.
 *
 * Function availability comes from the query function, masked by the
 * environment variable DMT_S390CAP (see dmt_cpacf_apply_cap()).
 */
#ifndef DMT_S390_CPACF_H
#define DMT_S390_CPACF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/hash/hash_backend.h"

enum dmt_cpacf_insn {
	DMT_CPACF_KIMD,
	DMT_CPACF_KLMD,
	DMT_CPACF_KMAC,
	DMT_CPACF_NINSN
};

/* Function codes (GR0 bits 57-63). */
#define DMT_CPACF_QUERY		0x00
#define DMT_CPACF_SHA_256	0x02	/* KIMD/KLMD, also SHA-224 */
#define DMT_CPACF_SHA_512	0x03	/* KIMD/KLMD, also SHA-384 */
#define DMT_CPACF_HMAC_SHA_224	0x70	/* KMAC, MSA 11 (z17) */
#define DMT_CPACF_HMAC_SHA_256	0x71
#define DMT_CPACF_HMAC_SHA_384	0x72
#define DMT_CPACF_HMAC_SHA_512	0x73
#define DMT_CPACF_FC_MASK	0x7f

/* KMAC GR0 flags: intermediate key processed, intermediate message part. */
#define DMT_CPACF_KMAC_IKP	0x8000
#define DMT_CPACF_KMAC_IIMP	0x4000

#define DMT_CPACF_MASK_SIZE	16	/* query result: 128 bits */
#define DMT_CPACF_PARAM_MAX	208	/* KMAC HMAC-SHA-512 clear key */

/* What the model returns instead of a condition code where the hardware
 * would raise a program exception (SIGILL): unknown or uninstalled
 * function, bad flags, or a length that is not a multiple of the block. */
#define DMT_CPACF_EXCEPTION	(-1)

struct dmt_cpacf;

/*
 * Executes one instruction once, as the CPU does: returns the condition
 * code (0 done, 3 partial completion: registers and parameter block are
 * updated, execute again) or DMT_CPACF_EXCEPTION.  *gr0 is written back
 * (KMAC sets IKP), *src and *len advance.  Query (fc 0) stores the 16-byte
 * mask at param.
 */
typedef int (*dmt_cpacf_exec_fn)(struct dmt_cpacf *c, enum dmt_cpacf_insn insn,
				 uint64_t *gr0, uint8_t *param,
				 const uint8_t **src, size_t *len);

struct dmt_cpacf {
	const char *name;		/* "hw" or "model" */
	dmt_cpacf_exec_fn exec;
	/* Effective query masks: installed & DMT_S390CAP & self-test. */
	uint8_t mask[DMT_CPACF_NINSN][DMT_CPACF_MASK_SIZE];
	/* KMAC fcs (0x70..0x73, bit fc & 3) whose chaining value can be
	 * preloaded with IKP = 1; the others re-derive the key per message. */
	unsigned int kmac_preload;
	void *priv;
};

static inline bool dmt_cpacf_mask_test(const uint8_t *mask, unsigned int fc)
{
	return fc < 128 && (mask[fc >> 3] & (0x80 >> (fc & 7)));
}

static inline void dmt_cpacf_mask_set(uint8_t *mask, unsigned int fc)
{
	mask[fc >> 3] |= (uint8_t)(0x80 >> (fc & 7));
}

static inline bool dmt_cpacf_has(const struct dmt_cpacf *c,
				 enum dmt_cpacf_insn insn, unsigned int fc)
{
	return c && dmt_cpacf_mask_test(c->mask[insn], fc);
}

/* Big-endian field access: the model and the drivers use nothing else to
 * touch parameter blocks, so the same code is right on both byte orders. */
static inline uint32_t dmt_cpacf_load32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t dmt_cpacf_load64(const uint8_t *p)
{
	return (uint64_t)dmt_cpacf_load32(p) << 32 | dmt_cpacf_load32(p + 4);
}

static inline void dmt_cpacf_store32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void dmt_cpacf_store64(uint8_t *p, uint64_t v)
{
	dmt_cpacf_store32(p, (uint32_t)(v >> 32));
	dmt_cpacf_store32(p + 4, (uint32_t)v);
}

/*
 * Runs one instruction to completion: re-executes on condition code 3.
 * Returns 0, or -EIO if the instruction failed (exception, cc 1/2, or
 * input left over).
 */
int dmt_cpacf_run(struct dmt_cpacf *c, enum dmt_cpacf_insn insn,
		  uint64_t *gr0, uint8_t *param, const uint8_t *src,
		  size_t len);

/*
 * Fills c->mask from the query function of each instruction, ANDs the
 * DMT_S390CAP-style string cap (NULL: none) and runs the KMAC self-test
 * (dmt_cpacf_kmac_selftest).  Returns 0 or -EINVAL for a malformed cap (the
 * masks are then the unmasked query results).
 */
int dmt_cpacf_setup(struct dmt_cpacf *c, const char *cap);

/*
 * Parses a capability mask string in OpenSSL's OPENSSL_s390xcap style and
 * ANDs it into masks: `;`-separated items "kimd:W0:W1", "klmd:W0:W1",
 * "kmac:W0:W1" where W0/W1 are 64-bit numbers (hex with 0x, or decimal),
 * optionally prefixed with `~` (complement), for the two big-endian
 * doublewords of the query mask (function code 0 is bit 0x8000000000000000
 * of W0); or "none" (everything off).  Returns 0 or -EINVAL (masks
 * unchanged).
 */
int dmt_cpacf_apply_cap(uint8_t masks[DMT_CPACF_NINSN][DMT_CPACF_MASK_SIZE],
			const char *cap);
#define DMT_S390CAP_ENV "DMT_S390CAP"

/*
 * Known-answer test of every usable KMAC HMAC function against OpenSSL,
 * once with the chaining value preloaded (IKP = 1) and once with the key
 * processed by the CPU (IKP = 0).  Functions failing the latter are removed
 * from c->mask; c->kmac_preload gets the ones passing the former.
 */
void dmt_cpacf_kmac_selftest(struct dmt_cpacf *c);

/*
 * The real instructions: the process-wide instance, detected once (HWCAP
 * MSA, STFLE facility 17, queries, $DMT_S390CAP, self-test).  NULL when
 * this is not s390x or the machine has no CPACF.
 */
struct dmt_cpacf *dmt_cpacf_hw(void);

/* ---- the software model ---- */

struct dmt_cpacf_model_cfg {
	/* Functions the model offers (emulable: KIMD/KLMD fc 0, 2, 3;
	 * KMAC fc 0, 0x70-0x73); see dmt_cpacf_model_preset(). */
	uint8_t installed[DMT_CPACF_NINSN][DMT_CPACF_MASK_SIZE];
	/* Partial completion: stop with cc 3 after this many blocks of one
	 * execution (0 = never); with stop_random, after 1..stop_every
	 * blocks chosen by a generator seeded with seed. */
	unsigned int stop_every;
	bool stop_random;
	uint64_t seed;
	/* Emulates a CPU whose KMAC intermediate chaining value is not the
	 * plain SHA state (stored scrambled), so a software-computed CV
	 * preloaded with IKP = 1 gives wrong MACs while the CPU's own
	 * partial-completion resumes stay right. */
	bool opaque_kmac_cv;
};

/* Model counters, per instruction and function code. */
struct dmt_cpacf_model_stats {
	unsigned long execs[DMT_CPACF_NINSN][128];	/* executions */
	unsigned long partial[DMT_CPACF_NINSN][128];	/* of which cc 3 */
	unsigned long blocks[DMT_CPACF_NINSN][128];	/* data blocks */
	unsigned long exceptions;
};

enum dmt_cpacf_preset {
	DMT_CPACF_PRESET_NONE,		/* queries only */
	DMT_CPACF_PRESET_QEMU72,	/* KIMD/KLMD SHA-512 only */
	DMT_CPACF_PRESET_Z15,		/* KIMD/KLMD SHA-256/512, no HMAC */
	DMT_CPACF_PRESET_Z17,		/* plus KMAC HMAC-SHA-224..512 */
};

void dmt_cpacf_model_preset(struct dmt_cpacf_model_cfg *cfg,
			    enum dmt_cpacf_preset preset);
/*
 * Creates a model instance and runs dmt_cpacf_setup() on it with cap.
 * Returns 0, -EINVAL (a function the model cannot emulate, bad cap) or
 * -ENOMEM.
 */
int dmt_cpacf_model_new(const struct dmt_cpacf_model_cfg *cfg,
			const char *cap, struct dmt_cpacf **out);
void dmt_cpacf_model_free(struct dmt_cpacf *c);
void dmt_cpacf_model_get_stats(const struct dmt_cpacf *c,
			       struct dmt_cpacf_model_stats *st);
void dmt_cpacf_model_reset_stats(struct dmt_cpacf *c);

/* ---- drivers ---- */

/*
 * SHA block functions over KIMD (one lane): state words host-endian, as in
 * lib/common/backends.h.  They use c, which must offer the function.
 */
void dmt_cpacf_sha256_blocks(struct dmt_cpacf *c, uint32_t *state,
			     const uint8_t *data, size_t nblocks);
void dmt_cpacf_sha512_blocks(struct dmt_cpacf *c, uint64_t *state,
			     const uint8_t *data, size_t nblocks);

enum dmt_cpacf_path {
	DMT_CPACF_PATH_NONE,
	DMT_CPACF_PATH_KMAC,		/* KMAC, CV preloaded per message */
	DMT_CPACF_PATH_KMAC_KEY,	/* KMAC, CPU derives ipad per message */
	DMT_CPACF_PATH_KIMD,		/* KIMD/KLMD, ipad/opad CVs preset */
};

/* Which path dmt_cpacf_batch() takes for this job on c. */
enum dmt_cpacf_path dmt_cpacf_batch_path(const struct dmt_cpacf *c,
					 const struct dmt_hmac_job *job,
					 bool hmac);
const char *dmt_cpacf_path_name(enum dmt_cpacf_path path);

/*
 * Hashes n messages framed as in struct dmt_hmac_job:
 *	out[i] = H(prefix || headers[i] || msgs[i] || suffix)	(hmac false)
 *	out[i] = HMAC(key, same)				(hmac true)
 * job->hash is "sha224", "sha256", "sha384" or "sha512"; job->digest_size
 * bytes per message are written.  The key goes into the parameter block once
 * per call; per message only the chaining value, the bit length and GR0 are
 * set.  Returns 0, -ENOTSUP (no usable CPACF function on c for this job),
 * -EINVAL, -ENOMEM or -EIO.
 */
int dmt_cpacf_batch(struct dmt_cpacf *c, const struct dmt_hmac_job *job,
		    bool hmac, size_t n, const uint8_t *const *msgs,
		    const uint8_t *headers, uint8_t *out);

#if defined(__s390x__)
/* Engine "cpacf" block backends on the real instructions. */
extern const struct dmt_sha256_backend dmt_sha256_cpacf;
extern const struct dmt_sha512_backend dmt_sha512_cpacf;
#endif

#endif /* DMT_S390_CPACF_H */
