/* SPDX-License-Identifier: MIT */
/* CPU feature detection, done once (tests mask features off through
 * lib/common/testhooks.h). */
#ifndef DMT_CPU_H
#define DMT_CPU_H

#include <stdint.h>

enum {
	DMT_CPU_X86_SSE42 = 1u << 0,	/* crc32 instruction */
	DMT_CPU_X86_SHANI = 1u << 1,	/* SHA-NI (sha256rnds2 ...) + SSE4.1 */
	DMT_CPU_X86_AVX2 = 1u << 2,	/* AVX2 with OS-enabled YMM state */
	DMT_CPU_X86_AVX512 = 1u << 3,	/* AVX-512 F+BW+VL with OS ZMM state */
	DMT_CPU_X86_INTEL = 1u << 4,	/* vendor GenuineIntel */
	DMT_CPU_X86_AMD = 1u << 5,	/* vendor AuthenticAMD/HygonGenuine */
	DMT_CPU_X86_PCLMUL = 1u << 6,
	DMT_CPU_X86_GFNI = 1u << 7,
	DMT_CPU_X86_SSSE3 = 1u << 8,	/* pshufb */
	DMT_CPU_X86_VAES = 1u << 9,	/* AES-NI + VAES + VPCLMULQDQ */
	DMT_CPU_ARM64_SHA2 = 1u << 12,
	DMT_CPU_ARM64_SHA512 = 1u << 13,
	DMT_CPU_ARM64_CRC32 = 1u << 14,
	DMT_CPU_S390_MSA = 1u << 20,	/* CPACF present; details by query */
};

/* Detected features, less those a test masked off (dmt_cpu_mask_off). */
uint32_t dmt_cpu_features(void);
/*
 * x86 display family (CPUID 1: base + extended family), 0 elsewhere:
 * tells AMD Zen 5 (1Ah, full-width AVX-512) from earlier Zen.
 */
unsigned int dmt_cpu_x86_family(void);

#endif /* DMT_CPU_H */
