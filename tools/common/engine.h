/* SPDX-License-Identifier: MIT */
/* Engine selection and thread count of every tool (engine.c). */
#ifndef DMT_TOOLS_ENGINE_H
#define DMT_TOOLS_ENGINE_H

/* --engine wins over $DMT_ENGINE; the spec is NAME or
 * PRIMITIVE=NAME[,...] (<dmt/hash.h>).  Checks it, prints the error itself
 * and returns an exit code (0 ok).  --list-engines output to stdout. */
int tool_engine_setup(const char *engine_opt);
/* What tool_engine_setup() accepted (NULL: none): every library params
 * struct's `engine` gets this. */
const char *tool_engine_spec(void);
void tool_list_engines(void);

/* Threads: 0 means default (affinity mask and cgroup quota). */
unsigned int tool_threads(long opt);

#endif /* DMT_TOOLS_ENGINE_H */
