// SPDX-License-Identifier: MIT
/*
 * fsverity-tool: fs-verity file digests, Merkle trees, descriptors and
 * built-in signatures for single files and whole trees, byte-identical to
 * fsverity-utils.  The tool is its table (tool.c) run by the CLI framework.
 */
#include "tools/fsverity-tool/fvt.h"

int main(int argc, const char **argv)
{
	return cli_main(&fsverity_tool, argc, argv);
}
