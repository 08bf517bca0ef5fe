// SPDX-License-Identifier: MIT
/* Parsing of numbers, sizes and hex, key files and --seed derivation;
 * see tool-common.h (messages: msg.c, exit codes: exit.c, progress:
 * progress.c, engines: engine.c, the framework: cli.c). */
#include "tools/common/tool-common.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <dmt/hash.h>
#include <dmt/io.h>

/* ---- parsing ---- */

int tool_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int tool_parse_size(const char *s, uint64_t *out)
{
	static const struct {
		const char *suffix;
		uint64_t mul;
	} units[] = {
		{ "", 1 },	      { "S", 512 },	   { "s", 512 },
		{ "K", 1ull << 10 },  { "KiB", 1ull << 10 }, { "k", 1ull << 10 },
		{ "M", 1ull << 20 },  { "MiB", 1ull << 20 }, { "m", 1ull << 20 },
		{ "G", 1ull << 30 },  { "GiB", 1ull << 30 }, { "g", 1ull << 30 },
		{ "T", 1ull << 40 },  { "TiB", 1ull << 40 }, { "t", 1ull << 40 },
		{ "KB", 1000ull },    { "MB", 1000000ull },
		{ "GB", 1000000000ull }, { "TB", 1000000000000ull },
	};
	char *end;
	unsigned long long v;
	size_t i;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		if (v > UINT64_MAX / units[i].mul)
			return -EINVAL;
		*out = v * units[i].mul;
		return 0;
	}
	return -EINVAL;
}

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

int tool_read_key_file(const char *path, size_t want, size_t max,
		       uint8_t **out, size_t *len)
{
	struct dmt_file f;
	uint64_t size;
	uint8_t *buf = NULL;
	size_t n;
	int err;

	*out = NULL;
	*len = 0;
	err = dmt_file_open(&f, path, DMT_OPEN_READ);
	if (err)
		return err;
	err = dmt_file_size(&f, &size);
	if (err)
		goto out;
	n = want ? want : (size_t)size;
	if (size < n) {
		err = -ENODATA;
		goto out;
	}
	if (!n || n > max) {
		err = -EINVAL;
		goto out;
	}
	buf = malloc(n);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	err = dmt_pread_full(&f, buf, n, 0);
	if (err)
		goto out;
	*out = buf;
	*len = n;
	buf = NULL;
out:
	free(buf);
	dmt_file_close(&f);
	return err;
}

int tool_seed_derive(const char *seed, const char *label, uint8_t *out,
		     size_t out_len)
{
	uint8_t mac[DMT_DIGEST_MAX];
	size_t ds;
	int err;

	err = dmt_hash_oneshot("hmac(sha256)", seed, strlen(seed), label,
			       strlen(label), mac, &ds);
	if (err)
		return err;
	if (out_len > ds)
		return -EINVAL;
	memcpy(out, mac, out_len);
	return 0;
}

int tool_seed_uuid(const char *seed, const char *label, uint8_t uuid[16])
{
	int err = tool_seed_derive(seed, label, uuid, 16);

	if (err)
		return err;
	uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x40);	/* version 4 */
	uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80);	/* RFC 4122 variant */
	return 0;
}

