// SPDX-License-Identifier: MIT
/* Engine selection (--engine, $DMT_ENGINE, --list-engines) and the
 * default thread count. */
#include "tools/common/engine.h"

#include "tools/common/exit.h"
#include "tools/common/msg.h"

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
	const char *spec = engine_opt;
	const char *src = "--engine";
	char bad[96];
	int err;

	if (!spec) {
		spec = getenv(DMT_ENGINE_ENV);
		src = DMT_ENGINE_ENV;
	}
	if (!spec || !*spec)
		return 0;
	err = dmt_engine_spec_check(spec, bad, sizeof(bad));
	if (err == -ENOENT) {
		tool_err("%s: unknown engine '%s' (see --list-engines)", src,
			 bad);
		return TOOL_EXIT_USAGE;
	}
	if (err == -ENOTSUP) {
		tool_err("%s: engine '%s' cannot run on this CPU (see --list-engines)",
			 src, bad);
		return TOOL_EXIT_USAGE;
	}
	if (err == -EINVAL) {
		tool_err("%s: '%s' is not NAME or PRIMITIVE=NAME with a known "
			 "primitive (see --list-engines)", src, bad);
		return TOOL_EXIT_USAGE;
	}
	if (err) {
		tool_err("%s: %s", src, dmt_strerror(err));
		return tool_exit_code(err);
	}
	engine_spec = spec;
	tool_debug("engine forced: %s", spec);
	return 0;
}

/* One line per (primitive, candidate backend): --engine takes ENGINE
 * (column 1) or PRIMITIVE=ENGINE (columns 4 and 1). */
void tool_list_engines(void)
{
	struct dmt_engine_info info[64];
	size_t n = dmt_engine_list(info, 64), i;

	if (n > 64)
		n = 64;
	printf("%-12s %-5s %-11s %-9s %s\n", "ENGINE", "LANES", "STATUS",
	       "PRIMITIVE", "ALGORITHMS");
	for (i = 0; i < n; i++)
		printf("%-12s %-5u %-11s %-9s %s\n", info[i].name,
		       info[i].lanes,
		       info[i].is_default ? "default" :
		       info[i].available ? "available" : "unavailable",
		       info[i].primitive, info[i].algs);
}

unsigned int tool_threads(long opt)
{
	if (opt > 0)
		return (unsigned int)opt;
	return dmt_default_threads();
}

