// SPDX-License-Identifier: MIT
/*
 * Why a file got no digest, as one message and an exit code: the
 * library's per-file reasons (it changed, it is not a regular file) and
 * the walk's; the options' reasons go to the framework, which names the
 * field's option through the option table (main.c).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "tools/fsverity-tool/fvt.h"

static bool is_dir_error(const struct fvt_entry *e)
{
	return e->err == -EISDIR && e->why;
}

int fvt_entry_exit(const struct fvt_entry *e)
{
	if (is_dir_error(e))
		return TOOL_EXIT_USAGE;
	/* not a regular file, changed while read: a file problem */
	if (e->why || e->reason.code == DMT_REASON_FSVERITY_NOT_REGULAR ||
	    e->reason.code == DMT_REASON_FSVERITY_SIZE_CHANGED ||
	    e->reason.code == DMT_REASON_FSVERITY_CHANGED)
		return TOOL_EXIT_DEVICE;
	return tool_exit_code(e->err);
}

static void error_text(const struct fvt_entry *e, char *buf, size_t size)
{
	if (is_dir_error(e))
		snprintf(buf, size, "%s", e->why);
	else if (e->why)
		snprintf(buf, size, "not a regular file (%s)", e->why);
	else if (e->reason.code == DMT_REASON_FSVERITY_SIZE_CHANGED)
		snprintf(buf, size,
			 "the file changed size while it was read "
			 "(%llu bytes when opened); no digest",
			 (unsigned long long)e->reason.value);
	else if (e->reason.code == DMT_REASON_FSVERITY_CHANGED)
		snprintf(buf, size,
			 "the file changed while it was read; no digest");
	else if (e->reason.code == DMT_REASON_FSVERITY_NOT_REGULAR)
		snprintf(buf, size, "not a regular file");
	else
		snprintf(buf, size, "cannot read: %s", dmt_strerror(e->err));
}

void fvt_entry_error(struct cli *c, const struct fvt_entry *e)
{
	const struct fvt_entry *o = fvt_origin(fvt_of(c), e);
	const struct fvt_entry *src = o->err ? o : e;
	char msg[512];

	error_text(src, msg, sizeof(msg));
	tool_err("%s: %s", e->path, msg);
	if (c->json) {
		struct json_object *j = json_object_new_object();
		struct json_object *err = json_object_new_object();

		cli_json_add_str(j, "path", e->path);
		cli_json_add_str(err, "message", msg);
		cli_json_add_u64(err, "exit_code",
				 (uint64_t)fvt_entry_exit(src));
		json_object_object_add(j, "error", err);
		fvt_json_line(c, j);
	}
}
