// SPDX-License-Identifier: MIT
/*
 * --json output: results on stdout, and on failure an error object.
 *
 * Every string goes through cli_json_add_str(), so every JSON output of
 * every tool is valid UTF-8 whatever the bytes of a path.  The rule (each
 * man page states it): a string that is valid UTF-8 is written as it is
 * (JSON escapes quotes, backslashes and control characters); one that is
 * not is written with each byte that is not part of a valid UTF-8
 * sequence replaced by U+FFFD, and a second member, the key with "_b64"
 * appended, holds the exact bytes in base64 (RFC 4648, padded).
 */
#include "tools/common/cli.h"
#include "tools/common/json.h"
#include "tools/common/progress.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlong forms,
 * no surrogates, at most U+10FFFF), 0 when there is none. */
static size_t utf8_seq(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 :
			  c >= 0xe0 && c <= 0xef	  ? 3 :
			  c >= 0xf0 && c <= 0xf4	  ? 4 :
							    0;
	unsigned char lo = 0x80, hi = 0xbf;

	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	for (size_t i = 1; i < n; i++) {
		if (s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xbf))
			return 0;
	}
	return n;
}

bool cli_utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = utf8_seq(p);

		if (!n)
			return false;
		p += n;
	}
	return true;
}

/* s with every byte outside a valid sequence as U+FFFD (malloc'ed). */
static char *utf8_lossy(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char *out = malloc(3 * strlen(s) + 1), *o = out;

	if (!out)
		return NULL;
	while (*p) {
		size_t n = utf8_seq(p);

		if (n) {
			memcpy(o, p, n);
			o += n;
			p += n;
		} else {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			p++;
		}
	}
	*o = '\0';
	return out;
}

static char *base64(const char *s)
{
	static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				     "abcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), i;
	char *out = malloc(4 * ((len + 2) / 3) + 1), *o = out;

	if (!out)
		return NULL;
	for (i = 0; i + 2 < len; i += 3) {
		*o++ = digits[p[i] >> 2];
		*o++ = digits[(p[i] & 3) << 4 | p[i + 1] >> 4];
		*o++ = digits[(p[i + 1] & 15) << 2 | p[i + 2] >> 6];
		*o++ = digits[p[i + 2] & 63];
	}
	if (i < len) {
		*o++ = digits[p[i] >> 2];
		*o++ = digits[(p[i] & 3) << 4 | (i + 1 < len ? p[i + 1] >> 4 : 0)];
		*o++ = i + 1 < len ? digits[(p[i + 1] & 15) << 2] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return out;
}

void cli_json_add_u64(struct json_object *j, const char *k, uint64_t v)
{
	json_object_object_add(j, k, json_object_new_uint64(v));
}

void cli_json_add_str(struct json_object *j, const char *k, const char *v)
{
	char *lossy, *b64, key[128];

	if (!v || cli_utf8_valid(v)) {
		json_object_object_add(j, k, v ? json_object_new_string(v)
					       : NULL);
		return;
	}
	lossy = utf8_lossy(v);
	b64 = base64(v);
	json_object_object_add(j, k, lossy ? json_object_new_string(lossy)
					   : NULL);
	snprintf(key, sizeof(key), "%s_b64", k);
	json_object_object_add(j, key, b64 ? json_object_new_string(b64)
					   : NULL);
	free(lossy);
	free(b64);
}

void cli_json_add_bool(struct json_object *j, const char *k, bool v)
{
	json_object_object_add(j, k, json_object_new_boolean(v));
}

void cli_json_print(struct cli *c, struct json_object *j)
{
	tool_progress_clear(STDOUT_FILENO);
	printf("%s\n", json_object_to_json_string_ext(
			       j, JSON_C_TO_STRING_PRETTY |
					  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(j);
	if (c)
		c->json_printed = true;
}

struct json_object *cli_json_error(const struct cli_tool *t,
				   const char *message, int exit_code,
				   const struct dmt_reason *r)
{
	struct json_object *j = json_object_new_object();
	struct json_object *e = json_object_new_object();

	cli_json_add_str(e, "message", message ? message : "failed");
	cli_json_add_u64(e, "exit_code", (uint64_t)exit_code);
	if (r && r->code) {
		const char *name = cli_reason_code_name(r->code);
		const char *opt = cli_field_option(t, r->field);

		if (name)
			cli_json_add_str(e, "reason", name);
		cli_json_add_u64(e, "reason_code", (uint64_t)r->code);
		if (r->field)
			cli_json_add_str(e, "field", r->field);
		if (opt)
			cli_json_add_str(e, "option", opt);
	}
	json_object_object_add(j, "error", e);
	return j;
}
