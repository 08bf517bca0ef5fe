// SPDX-License-Identifier: MIT
/* Numbers and sizes of option values, and --seed derivation (parse.h). */
#include "tools/common/parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <dmt/hash.h>

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

