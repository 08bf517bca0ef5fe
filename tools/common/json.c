// SPDX-License-Identifier: MIT
/* --json output: results on stdout, and on failure an error object. */
#include "tools/common/cli.h"

#include <json-c/json.h>
#include <stdio.h>

void cli_json_add_u64(struct json_object *j, const char *k, uint64_t v)
{
	json_object_object_add(j, k, json_object_new_uint64(v));
}

void cli_json_add_str(struct json_object *j, const char *k, const char *v)
{
	json_object_object_add(j, k, v ? json_object_new_string(v) : NULL);
}

void cli_json_add_bool(struct json_object *j, const char *k, bool v)
{
	json_object_object_add(j, k, json_object_new_boolean(v));
}

void cli_json_print(struct cli *c, struct json_object *j)
{
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
