// SPDX-License-Identifier: MIT
/*
 * CRC32C with the ARMv8 CRC32 instructions (crc32cx and friends), 8 bytes
 * per instruction.  Raw reflected register in and out: no pre/post
 * inversion here.  Built with -march=armv8-a+crc; the dispatcher checks
 * HWCAP_CRC32.  (A 3-way split joined with PMULL would need the crypto
 * extension as well; dm-integrity's per-sector buffers are short enough
 * that the plain loop is close to memory speed on real cores.)
 */
#if defined(__aarch64__)

#include <string.h>
#include <arm_acle.h>

#include "lib/common/backends.h"

uint32_t dmt_crc32c_arm64(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t v;
	uint32_t w;

	for (; len >= 32; p += 32, len -= 32) {
		memcpy(&v, p, 8);
		crc = __crc32cd(crc, v);
		memcpy(&v, p + 8, 8);
		crc = __crc32cd(crc, v);
		memcpy(&v, p + 16, 8);
		crc = __crc32cd(crc, v);
		memcpy(&v, p + 24, 8);
		crc = __crc32cd(crc, v);
	}
	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&v, p, 8);
		crc = __crc32cd(crc, v);
	}
	if (len >= 4) {
		memcpy(&w, p, 4);
		crc = __crc32cw(crc, w);
		p += 4;
		len -= 4;
	}
	while (len--)
		crc = __crc32cb(crc, *p++);
	return crc;
}

#endif /* __aarch64__ */
