// SPDX-License-Identifier: MIT
/*
 * integrity-tool: format, check, recalculate and dump dm-integrity images
 * offline.  The tool is its table (tool.c) run by the CLI framework.
 */
#include "tools/integrity-tool/it.h"

int main(int argc, const char **argv)
{
	return cli_main(&integrity_tool, argc, argv);
}
