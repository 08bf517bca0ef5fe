// SPDX-License-Identifier: MIT
/*
 * The library's test hooks (lib/common/testhooks.h) stay out of what is
 * shipped (suite "test_hooks"): the tools and libdmt.a of the build
 * directory hold neither the DMT_IO_FAULT parser, nor dmt_io_fault_set()
 * or dmt_cpu_mask_off(), nor the valgrind probe; the test builds of the
 * tools ($DMT_BUILD/test-tools/) hold all of them, which shows the search
 * finds them where they are.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/helpers.h"

static const char *const tools[] = {
	"verity-tool", "integrity-tool", "fsverity-tool", "crypt-tool",
};

/* What only a hooked build contains: the variable's name, the hook's
 * symbols (the tools keep their symbol table) and the probe's needle. */
static const char *const marks[] = {
	"DMT_IO_FAULT", "dmt_io_fault_set", "dmt_cpu_mask_off", "vgpreload",
};

static bool holds(const uint8_t *buf, size_t len, const char *s)
{
	return memmem(buf, len, s, strlen(s)) != NULL;
}

static void expect_marks(const char *path, bool want)
{
	size_t len;
	uint8_t *buf = th_read_file(path, &len);
	char real[4096];

	cr_assert(buf, "cannot read %s", path);
	/*
	 * The cross runs' tools are wrappers, `exec qemu-ARCH -0 "$0"
	 * "/the/binary" "$@"` (scripts/cross-check.sh): read the binary.
	 */
	if (len > 2 && buf[0] == '#' && buf[1] == '!') {
		const char *at = memmem(buf, len, "\"$0\" \"", 6);
		const char *end = at ? memchr(at + 6, '"',
					      len - (size_t)(at + 6 - (char *)buf))
				     : NULL;

		cr_assert(end && end - (at + 6) < (long)sizeof(real),
			  "%s: a script that is not a cross-run wrapper", path);
		memcpy(real, at + 6, (size_t)(end - (at + 6)));
		real[end - (at + 6)] = 0;
		free(buf);
		buf = th_read_file(real, &len);
		cr_assert(buf, "cannot read %s (wrapped by %s)", real, path);
		path = real;
	}
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		cr_expect_eq(holds(buf, len, marks[i]), want, "%s %s %s", path,
			     want ? "lacks" : "holds", marks[i]);
	free(buf);
}

static const char *in_build(const char *name)
{
	static char buf[4096];
	const char *dir = getenv("DMT_BUILD");

	snprintf(buf, sizeof(buf), "%s/%s", dir && *dir ? dir : "build", name);
	return buf;
}

Test(test_hooks, only_in_the_test_builds)
{
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		expect_marks(in_build(tools[i]), false);
		expect_marks(th_test_tool(tools[i]), true);
	}
	expect_marks(in_build("libdmt.a"), false);
	expect_marks(in_build("libdmt-hooks.a"), true);
}
