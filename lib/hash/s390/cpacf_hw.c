// SPDX-License-Identifier: MIT
/*
 * The real CPACF instructions (s390x): one execution per call through
 * inline asm (the cc-3 loop is the shared C one in cpacf.c, so the model
 * tests cover it), detection once per process, and the engine hook
 * dmt_s390_probe() that turns what the machine offers into engine "cpacf".
 * Elsewhere dmt_cpacf_hw() is NULL.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lib/common/cpu.h"
#include "lib/hash/s390/cpacf.h"

#if defined(__s390x__)
#include <sys/auxv.h>

#define HWCAP_MSA	(1ul << 3)	/* HWCAP_S390_MSA */
#define HWCAP_STFLE	(1ul << 2)	/* HWCAP_S390_STFLE */
#define FACILITY_MSA	17

/*
 * RRE form with R1 = 0 and R2 = 2 (the even/odd pair r2/r3: source address
 * and length); r0 = function code and flags, r1 = parameter block.  The
 * plain RRE encoding (M3 = 0) runs on every MSA machine; the RRF form with
 * M3 = 8 that Linux uses since MSA 12 only matters for SHA-3.
 */
#define CPACF_EXEC(opcode)						\
	__asm__ volatile(".insn rre," opcode ",0,2\n\t"			\
			 "ipm %[cc]\n\t"				\
			 "srl %[cc],28"					\
			 : [cc] "=&d"(cc), "+d"(r0), "+d"(r2), "+d"(r3)	\
			 : "d"(r1)					\
			 : "cc", "memory")

static int hw_exec(struct dmt_cpacf *c, enum dmt_cpacf_insn insn,
		   uint64_t *gr0, uint8_t *param, const uint8_t **src,
		   size_t *len)
{
	register unsigned long r0 __asm__("0") = *gr0;
	register unsigned long r1 __asm__("1") = (unsigned long)param;
	register unsigned long r2 __asm__("2") = (unsigned long)*src;
	register unsigned long r3 __asm__("3") = *len;
	int cc;

	switch (insn) {
	case DMT_CPACF_KIMD:
		CPACF_EXEC("0xb93e0000");
		break;
	case DMT_CPACF_KLMD:
		CPACF_EXEC("0xb93f0000");
		break;
	case DMT_CPACF_KMAC:
		CPACF_EXEC("0xb91e0000");
		break;
	default:
		return DMT_CPACF_EXCEPTION;
	}
	*gr0 = r0;
	*src = (const uint8_t *)r2;
	*len = r3;
	return cc;
}

/* STFLE facility bit (only called when HWCAP says STFLE exists). */
static bool stfle_bit(unsigned int bit)
{
	uint64_t fac[4] = { 0 };
	register unsigned long r0 __asm__("0") = 3;	/* doublewords - 1 */

	__asm__ volatile(".insn s,0xb2b00000,%[fac]"
			 : [fac] "=Q"(fac), "+d"(r0)
			 :
			 : "cc", "memory");
	return bit < 256 && (fac[bit / 64] >> (63 - bit % 64)) & 1;
}

static struct dmt_cpacf hw_instance = { .name = "hw", .exec = hw_exec };
static struct dmt_cpacf *hw_ptr;
static pthread_once_t hw_once = PTHREAD_ONCE_INIT;

static void hw_detect(void)
{
	unsigned long hwcap = getauxval(AT_HWCAP);

	/* Without MSA the instructions raise an operation exception. */
	if (!(hwcap & HWCAP_MSA))
		return;
	if ((hwcap & HWCAP_STFLE) && !stfle_bit(FACILITY_MSA))
		return;
	/* Test builds only (-DDMT_TEST_HOOKS): a malformed $DMT_S390CAP
	 * leaves the masks as queried. */
#ifdef DMT_TEST_HOOKS
	(void)dmt_cpacf_setup(&hw_instance, getenv(DMT_S390CAP_ENV));
#else
	(void)dmt_cpacf_setup(&hw_instance, NULL);
#endif
	hw_ptr = &hw_instance;
}

struct dmt_cpacf *dmt_cpacf_hw(void)
{
	pthread_once(&hw_once, hw_detect);
	return hw_ptr;
}

/* ---- engine hook ---- */

static void cpacf_sha256(uint32_t *state, const uint8_t *const *data,
			 size_t nblocks)
{
	dmt_cpacf_sha256_blocks(dmt_cpacf_hw(), state, data[0], nblocks);
}

static void cpacf_sha512(uint64_t *state, const uint8_t *const *data,
			 size_t nblocks)
{
	dmt_cpacf_sha512_blocks(dmt_cpacf_hw(), state, data[0], nblocks);
}

const struct dmt_sha256_backend dmt_sha256_cpacf = {
	.name = "cpacf", .lanes = 1, .cpu_needs = DMT_CPU_S390_MSA,
	.blocks = cpacf_sha256,
};

const struct dmt_sha512_backend dmt_sha512_cpacf = {
	.name = "cpacf", .lanes = 1, .cpu_needs = DMT_CPU_S390_MSA,
	.blocks = cpacf_sha512,
};

static int cpacf_hmac_batch(const struct dmt_hmac_job *job, size_t n,
			    const uint8_t *const *msgs, const uint8_t *headers,
			    uint8_t *out)
{
	/* Masking MSA off (tests) disables this path like the backends. */
	if (!(dmt_cpu_features() & DMT_CPU_S390_MSA))
		return -ENOTSUP;
	return dmt_cpacf_batch(dmt_cpacf_hw(), job, true, n, msgs, headers,
			       out);
}

void dmt_s390_probe(struct dmt_platform_hooks *hooks)
{
	static const char *const hashes[] = { "sha256", "sha512" };
	struct dmt_cpacf *c = dmt_cpacf_hw();

	if (!c)
		return;
	if (dmt_cpacf_has(c, DMT_CPACF_KIMD, DMT_CPACF_SHA_256))
		hooks->sha256 = &dmt_sha256_cpacf;
	if (dmt_cpacf_has(c, DMT_CPACF_KIMD, DMT_CPACF_SHA_512))
		hooks->sha512 = &dmt_sha512_cpacf;
	for (size_t i = 0; i < 2; i++) {
		struct dmt_hmac_job job = { .hash = hashes[i] };

		if (dmt_cpacf_batch_path(c, &job, true) != DMT_CPACF_PATH_NONE)
			hooks->hmac_batch = cpacf_hmac_batch;
	}
}

#else /* !__s390x__ */

struct dmt_cpacf *dmt_cpacf_hw(void)
{
	return NULL;
}

#endif
