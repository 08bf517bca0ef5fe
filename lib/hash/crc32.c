// SPDX-License-Identifier: MIT
/*
 * Table-driven reflected CRCs, slicing by 8: CRC-32C (Castagnoli, poly
 * 0x82F63B78) and the kernel's "crc32" (poly 0xEDB88320).  Both work on the
 * raw register: callers apply the initial value and any final inversion.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "lib/common/backends.h"

static uint32_t tab_c[8][256];
static uint32_t tab_le[8][256];
static pthread_once_t tab_once = PTHREAD_ONCE_INIT;

static void fill(uint32_t t[8][256], uint32_t poly)
{
	uint32_t i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = (c >> 1) ^ ((c & 1) ? poly : 0);
		t[0][i] = c;
	}
	for (i = 0; i < 256; i++)
		for (j = 1; j < 8; j++)
			t[j][i] = (t[j - 1][i] >> 8) ^ t[0][t[j - 1][i] & 0xff];
}

static void tables_init(void)
{
	fill(tab_c, 0x82F63B78u);
	fill(tab_le, 0xEDB88320u);
}

static uint32_t crc_slice8(uint32_t t[8][256], uint32_t crc, const uint8_t *p,
			   size_t len)
{
	while (len && ((uintptr_t)p & 7)) {
		crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xff];
		len--;
	}
	while (len >= 8) {
		uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 |
				     (uint32_t)p[2] << 16 |
				     (uint32_t)p[3] << 24);

		crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^
		      t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
		      t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xff];
	return crc;
}

uint32_t dmt_crc32c_table(uint32_t crc, const uint8_t *p, size_t len)
{
	pthread_once(&tab_once, tables_init);
	return crc_slice8(tab_c, crc, p, len);
}

uint32_t dmt_crc32_le_table(uint32_t crc, const uint8_t *p, size_t len)
{
	pthread_once(&tab_once, tables_init);
	return crc_slice8(tab_le, crc, p, len);
}
