// SPDX-License-Identifier: MIT
/* Engine selection (--engine, $DMT_ENGINE, --list-engines) and the
 * default thread count. */
#include "tools/common/tool-common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <dmt/hash.h>
#include <dmt/io.h>
#include <dmt/threads.h>

/* ---- engines, threads ---- */

static const char *engine_spec;

/* The validated --engine / $DMT_ENGINE choice, for the library's params
 * (NULL: default dispatch). */
const char *tool_engine_spec(void)
{
	return engine_spec;
}

int tool_engine_setup(const char *engine_opt)
{
	const char *name = engine_opt;
	const char *src = "--engine";
	int err;

	if (!name) {
		name = getenv(DMT_ENGINE_ENV);
		src = DMT_ENGINE_ENV;
	}
	if (!name || !*name)
		return 0;
	err = dmt_engine_force(name);
	if (err == -ENOENT) {
		tool_err("%s: unknown engine '%s' (see --list-engines)", src,
			 name);
		return TOOL_EXIT_USAGE;
	}
	if (err == -ENOTSUP) {
		tool_err("%s: engine '%s' cannot run on this CPU (see --list-engines)",
			 src, name);
		return TOOL_EXIT_USAGE;
	}
	if (err) {
		tool_err("%s: %s", src, dmt_strerror(err));
		return tool_exit_code(err);
	}
	engine_spec = name;
	tool_debug("engine forced: %s", name);
	return 0;
}

void tool_list_engines(void)
{
	struct dmt_engine_info info[32];
	size_t n = dmt_engine_list(info, 32), i;

	if (n > 32)
		n = 32;
	printf("%-12s %-5s %-10s %s\n", "ENGINE", "LANES", "STATUS",
	       "ALGORITHMS");
	for (i = 0; i < n; i++) {
		if (!info[i].available)
			continue;
		printf("%-12s %-5u %-10s %s\n", info[i].name, info[i].lanes,
		       info[i].is_default ? "default" : "available",
		       info[i].algs);
	}
}

unsigned int tool_threads(long opt)
{
	if (opt > 0)
		return (unsigned int)opt;
	return dmt_default_threads();
}

