// SPDX-License-Identifier: MIT
/*
 * crypt-tool: dm-crypt images (plain and LUKS2) encrypted and read back
 * offline.  The tool is its table (tool.c) run by the CLI framework.
 */
#include "tools/crypt-tool/ct.h"

int main(int argc, const char **argv)
{
	return cli_main(&crypt_tool, argc, argv);
}
