/* SPDX-License-Identifier: MIT */
/* The JSON output of every tool (json.c, json-c objects). */
#ifndef DMT_TOOLS_JSON_H
#define DMT_TOOLS_JSON_H

#include <stdbool.h>
#include <stdint.h>

struct cli;
struct cli_tool;
struct dmt_reason;
struct json_object;

/* Prints a JSON object on stdout (and frees it); marks the result done. */
void cli_json_print(struct cli *c, struct json_object *j);
void cli_json_add_u64(struct json_object *j, const char *k, uint64_t v);
/* Every string of every JSON output: v as it is when it is valid UTF-8,
 * else with U+FFFD for each invalid byte plus "<k>_b64", the exact bytes
 * in base64 (v NULL: null). */
void cli_json_add_str(struct json_object *j, const char *k, const char *v);
bool cli_utf8_valid(const char *s);
void cli_json_add_bool(struct json_object *j, const char *k, bool v);
/* {"error": {"message": ..., "exit_code": N[, "reason": ..., "field":
 * ...]}} for a failure (the first error message of the run). */
struct json_object *cli_json_error(const struct cli_tool *t,
				   const char *message, int exit_code,
				   const struct dmt_reason *r);

#endif /* DMT_TOOLS_JSON_H */
