// SPDX-License-Identifier: MIT
/*
 * CPU feature detection, once per process.  x86-64: CPUID plus XGETBV so a
 * vector ISA counts only when the OS saves its registers.  aarch64 and s390x:
 * the kernel's HWCAP bits.  Test builds (-DDMT_TEST_HOOKS) only: tests
 * mask features off to exercise fallbacks (lib/common/testhooks.h), and
 * under valgrind the ISAs it cannot run are dropped.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/common/cpu.h"
#include "lib/common/testhooks.h"

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__) || defined(__s390x__)
#include <sys/auxv.h>
#endif

static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;
static uint32_t cpu_detected;
static unsigned int cpu_family;

#if defined(__x86_64__)
static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t)hi << 32 | lo;
}

static uint32_t detect(void)
{
	uint32_t a, b, c, d, max, f = 0;
	uint32_t b7 = 0, c7 = 0;
	uint64_t xcr0 = 0;
	char vendor[13];

	if (!__get_cpuid(0, &max, &b, &c, &d))
		return 0;
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	vendor[12] = '\0';
	if (!strcmp(vendor, "GenuineIntel"))
		f |= DMT_CPU_X86_INTEL;
	else if (!strcmp(vendor, "AuthenticAMD") ||
		 !strcmp(vendor, "HygonGenuine"))
		f |= DMT_CPU_X86_AMD;

	__cpuid(1, a, b, c, d);
	cpu_family = (a >> 8) & 0xf;
	if (cpu_family == 0xf)
		cpu_family += (a >> 20) & 0xff;
	if (c & (1u << 20))
		f |= DMT_CPU_X86_SSE42;
	if (c & (1u << 1))
		f |= DMT_CPU_X86_PCLMUL;
	if (c & (1u << 9))
		f |= DMT_CPU_X86_SSSE3;
	/* OSXSAVE: XGETBV is usable and tells which states the OS saves. */
	if (c & (1u << 27))
		xcr0 = xgetbv0();
	if (max >= 7)
		__cpuid_count(7, 0, a, b7, c7, d);

	/* SHA-NI code also uses SSE4.1 (pblendw, palignr). */
	if ((b7 & (1u << 29)) && (c & (1u << 19)))
		f |= DMT_CPU_X86_SHANI;
	/* AVX2 needs XMM and YMM state enabled (XCR0 bits 1, 2). */
	if ((c & (1u << 28)) && (b7 & (1u << 5)) && (xcr0 & 0x6) == 0x6)
		f |= DMT_CPU_X86_AVX2;
	/* AVX-512 F, BW, VL plus opmask/ZMM state (XCR0 bits 5-7). */
	if ((f & DMT_CPU_X86_AVX2) && (b7 & (1u << 16)) &&
	    (b7 & (1u << 30)) && (b7 & (1u << 31)) && (xcr0 & 0xe6) == 0xe6)
		f |= DMT_CPU_X86_AVX512;
	if (c7 & (1u << 8))
		f |= DMT_CPU_X86_GFNI;
	/* AES-NI (CPUID 1 ECX 25), VAES and VPCLMULQDQ (CPUID 7 ECX 9, 10) */
	if ((c & (1u << 25)) && (c7 & (1u << 9)) && (c7 & (1u << 10)))
		f |= DMT_CPU_X86_VAES;
	return f;
}
#elif defined(__aarch64__)
static uint32_t detect(void)
{
	unsigned long hw = getauxval(AT_HWCAP);
	uint32_t f = 0;

	/* HWCAP_SHA2 (1 << 6), HWCAP_CRC32 (1 << 7), HWCAP_SHA512 (1 << 21) */
	if (hw & (1ul << 6))
		f |= DMT_CPU_ARM64_SHA2;
	if (hw & (1ul << 7))
		f |= DMT_CPU_ARM64_CRC32;
	if (hw & (1ul << 21))
		f |= DMT_CPU_ARM64_SHA512;
	return f;
}
#elif defined(__s390x__)
static uint32_t detect(void)
{
	/* HWCAP_S390_MSA (1 << 3): message-security assist, i.e. CPACF. */
	return (getauxval(AT_HWCAP) & (1ul << 3)) ? DMT_CPU_S390_MSA : 0;
}
#else
static uint32_t detect(void)
{
	return 0;
}
#endif

#ifdef DMT_TEST_HOOKS
static uint32_t cpu_masked;	/* accessed with __atomic builtins */

/*
 * Valgrind preloads its vgpreload_*.so into the client; its CPU model
 * implements neither SHA-NI nor AVX-512, so a backend chosen from the real
 * CPUID would die with SIGILL.
 */
static int detect_valgrind(void)
{
	const char *pre = getenv("LD_PRELOAD");
	char line[512];
	FILE *f;
	int found = 0;

	if (pre && strstr(pre, "vgpreload"))
		return 1;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "vgpreload") != NULL;
	fclose(f);
	return found;
}

void dmt_cpu_mask_off(uint32_t bits)
{
	__atomic_fetch_or(&cpu_masked, bits, __ATOMIC_RELAXED);
}

static uint32_t cpu_hidden(void)
{
	return __atomic_load_n(&cpu_masked, __ATOMIC_RELAXED);
}
#else
static int detect_valgrind(void)
{
	return 0;
}

static uint32_t cpu_hidden(void)
{
	return 0;
}
#endif /* DMT_TEST_HOOKS */

static void cpu_init(void)
{
	cpu_detected = detect();
	if (detect_valgrind())
		cpu_detected &= ~(uint32_t)(DMT_CPU_X86_SHANI |
					    DMT_CPU_X86_AVX512 |
					    DMT_CPU_X86_GFNI);
}

uint32_t dmt_cpu_features(void)
{
	pthread_once(&cpu_once, cpu_init);
	return cpu_detected & ~cpu_hidden();
}

unsigned int dmt_cpu_x86_family(void)
{
	pthread_once(&cpu_once, cpu_init);
	return cpu_family;
}
