// SPDX-License-Identifier: MIT
/*
 * Confirmation before destroying data, as cryptsetup asks it: only on a
 * terminal; --batch-mode/-q never ask; a pipeline is never blocked (stdin
 * not a terminal: a warning, and the command goes on).  stderr must be a
 * terminal too: a question nobody sees (stderr captured, as in a test
 * harness run from a terminal) would only hang.
 */
#include "tools/common/cli.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

bool cli_confirm(const struct cli *c, const char *warning)
{
	char line[32];

	if (c->batch)
		return true;
	if (!isatty(STDIN_FILENO) || !isatty(STDERR_FILENO)) {
		tool_warn("%s (not asking: no terminal; going on; -q or "
			  "--batch-mode skip this warning)", warning);
		return true;
	}
	fprintf(stderr, "WARNING: %s\n\nAre you sure? (Type 'yes' in capital "
		"letters): ", warning);
	fflush(stderr);
	if (!fgets(line, sizeof(line), stdin))
		return false;
	line[strcspn(line, "\n")] = '\0';
	return !strcmp(line, "YES");
}
