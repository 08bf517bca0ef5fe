// SPDX-License-Identifier: MIT
/*
 * recalculate: check's walk over the image, writing the tags it finds
 * wrong (cmd_check.c has the walk and its messages).
 */
#include "tools/integrity-tool/it.h"

int it_cmd_recalculate(struct cli *c)
{
	return it_check_run(c, true);
}
