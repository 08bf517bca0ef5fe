// SPDX-License-Identifier: MIT
/*
 * struct dmt_reason -> one line.  The library speaks of its own fields
 * ("tag_size", "sb.version"); the option table says which option fills
 * which field, so the line names what the user typed ("--tag-size").
 */
#include "tools/common/cli.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <dmt/io.h>

static const char *const code_names[] = {
	[DMT_REASON_NONE] = "none",
	[DMT_REASON_BAD_VALUE] = "bad_value",
	[DMT_REASON_OUT_OF_RANGE] = "out_of_range",
	[DMT_REASON_NOT_POWER_OF_2] = "not_power_of_2",
	[DMT_REASON_NOT_ALIGNED] = "not_aligned",
	[DMT_REASON_TOO_LARGE] = "too_large",
	[DMT_REASON_TOO_SMALL] = "too_small",
	[DMT_REASON_MISSING] = "missing",
	[DMT_REASON_CONFLICT] = "conflict",
	[DMT_REASON_UNKNOWN_ALG] = "unknown_alg",
	[DMT_REASON_UNSUPPORTED] = "unsupported",
	[DMT_REASON_NEEDS_KEY] = "needs_key",
	[DMT_REASON_KEY_SIZE] = "key_size",
	[DMT_REASON_DEVICE_TOO_SMALL] = "device_too_small",
	[DMT_REASON_SAME_FILE] = "same_file",
	[DMT_REASON_IO] = "io",
	[DMT_REASON_BAD_MAGIC] = "bad_magic",
	[DMT_REASON_SB_VERSION] = "sb_version",
	[DMT_REASON_SB_FIELD] = "sb_field",
	[DMT_REASON_SB_CHECKSUM] = "sb_checksum",
};

const char *cli_reason_code_name(int code)
{
	if (code < 0 ||
	    (size_t)code >= sizeof(code_names) / sizeof(code_names[0]))
		return NULL;
	return code_names[code];
}

const char *cli_field_option(const struct cli_tool *t, const char *field)
{
	static char name[80];

	if (!field)
		return NULL;
	for (size_t i = 0; i < t->n_options; i++) {
		if (t->options[i].field &&
		    !strcmp(t->options[i].field, field)) {
			snprintf(name, sizeof(name), "--%s", t->options[i].name);
			return name;
		}
	}
	return NULL;
}

/* What to call a field in a message: its option, "superblock field x",
 * or the field itself. */
static void field_words(const struct cli_tool *t, const char *field,
			char *buf, size_t size)
{
	const char *opt = cli_field_option(t, field);

	if (opt)
		snprintf(buf, size, "%s", opt);
	else if (field && !strncmp(field, "sb.", 3))
		snprintf(buf, size, "superblock field %s", field + 3);
	else
		snprintf(buf, size, "%s", field ? field : "value");
}

static void value_words(const struct dmt_reason *r, char *buf, size_t size)
{
	if (r->name)
		snprintf(buf, size, "'%s'", r->name);
	else
		snprintf(buf, size, "%" PRIu64, r->value);
}

static void generic_text(const struct cli_tool *t, const struct dmt_reason *r,
			 char *buf, size_t size)
{
	char f[96], f2[96], v[128];

	field_words(t, r->field, f, sizeof(f));
	field_words(t, r->field2, f2, sizeof(f2));
	value_words(r, v, sizeof(v));
	switch (r->code) {
	case DMT_REASON_OUT_OF_RANGE:
		snprintf(buf, size, "%s: %s is outside %" PRIu64 "..%" PRIu64,
			 f, v, r->min, r->max);
		break;
	case DMT_REASON_NOT_POWER_OF_2:
		snprintf(buf, size, "%s: %s is not a power of two", f, v);
		break;
	case DMT_REASON_NOT_ALIGNED:
		snprintf(buf, size, "%s: %s is not a multiple of %" PRIu64, f,
			 v, r->max);
		break;
	case DMT_REASON_TOO_LARGE:
		snprintf(buf, size, "%s: %s is larger than %" PRIu64, f, v,
			 r->max);
		break;
	case DMT_REASON_TOO_SMALL:
		snprintf(buf, size, "%s: %s is smaller than %" PRIu64, f, v,
			 r->min);
		break;
	case DMT_REASON_MISSING:
		snprintf(buf, size, "%s is required", f);
		break;
	case DMT_REASON_CONFLICT:
		snprintf(buf, size, "%s does not go with %s", f, f2);
		break;
	case DMT_REASON_UNKNOWN_ALG:
		snprintf(buf, size, "%s: unknown algorithm %s (see --list-engines)",
			 f, v);
		break;
	case DMT_REASON_UNSUPPORTED:
		snprintf(buf, size, "%s: %s is not supported", f, v);
		break;
	case DMT_REASON_NEEDS_KEY:
		snprintf(buf, size, "%s: %s needs a key", f, v);
		break;
	case DMT_REASON_KEY_SIZE:
		snprintf(buf, size, "%s: a key of %" PRIu64 " bytes, needs %"
			 PRIu64 "..%" PRIu64, f, r->value, r->min, r->max);
		break;
	case DMT_REASON_DEVICE_TOO_SMALL:
		snprintf(buf, size, "%" PRIu64 " bytes, needs at least %" PRIu64,
			 r->value, r->min);
		break;
	case DMT_REASON_SAME_FILE:
		snprintf(buf, size, "%s and %s are the same file",
			 r->path ? r->path : "?", r->path2 ? r->path2 : "?");
		break;
	case DMT_REASON_IO:
		snprintf(buf, size, "%s", dmt_strerror(-(int)r->value));
		break;
	case DMT_REASON_BAD_MAGIC:
		snprintf(buf, size, "no superblock (bad magic)");
		break;
	case DMT_REASON_SB_VERSION:
		snprintf(buf, size, "unsupported superblock version %" PRIu64,
			 r->value);
		break;
	case DMT_REASON_SB_FIELD:
		snprintf(buf, size, "invalid %s %s", f, v);
		break;
	case DMT_REASON_SB_CHECKSUM:
		snprintf(buf, size, "superblock checksum or MAC mismatch");
		break;
	default:
		snprintf(buf, size, "%s: invalid value %s", f, v);
	}
}

void cli_reason_text(const struct cli *c, const struct dmt_reason *r,
		     char *buf, size_t size)
{
	const struct cli_tool *t = c->tool;

	if (t->reason_text && t->reason_text(c, r, buf, size))
		return;
	generic_text(t, r, buf, size);
}

static struct dmt_reason last_reason;
static bool have_last_reason;

const struct dmt_reason *cli_last_reason(void)
{
	return have_last_reason ? &last_reason : NULL;
}

void cli_reason_err(const struct cli *c, const struct dmt_reason *r)
{
	cli_reason_err_errno(c, r, 0);
}

void cli_reason_err_errno(const struct cli *c, const struct dmt_reason *r,
			  int err)
{
	char text[512];

	cli_reason_text(c, r, text, sizeof(text));
	if (err)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 ": %s", dmt_strerror(err));
	if (r->path)
		tool_err("%s: %s", r->path, text);
	else
		tool_err("%s", text);
	if (!have_last_reason) {
		last_reason = *r;
		last_reason.path = last_reason.path2 = NULL;
		last_reason.name = NULL; /* may point into freed params */
		have_last_reason = true;
	}
}

void cli_reason_reset(void)
{
	have_last_reason = false;
}
