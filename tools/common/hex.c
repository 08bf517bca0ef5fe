// SPDX-License-Identifier: MIT
/* Hex in and out (hex.h). */
#include "tools/common/hex.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int tool_parse_hex(const char *s, uint8_t **out, size_t *len)
{
	size_t n = strlen(s), i;
	uint8_t *buf;

	*out = NULL;
	*len = 0;
	if (!strcmp(s, "-") || !n)
		return 0;
	if (n % 2)
		return -EINVAL;
	buf = malloc(n / 2);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < n / 2; i++) {
		int hi = hexval((unsigned char)s[2 * i]);
		int lo = hexval((unsigned char)s[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			free(buf);
			return -EINVAL;
		}
		buf[i] = (uint8_t)(hi << 4 | lo);
	}
	*out = buf;
	*len = n / 2;
	return 0;
}

void tool_hex(const uint8_t *p, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * len] = '\0';
}
