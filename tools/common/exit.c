// SPDX-License-Identifier: MIT
/* One mapping from the library's negative errno to the exit codes of
 * every tool (the table is in exit.h). */
#include "tools/common/exit.h"

#include <errno.h>

int tool_exit_code(int err)
{
	switch (err) {
	case 0:
		return TOOL_EXIT_OK;
	case -EINVAL:
	case -ENOTSUP:
	case -ERANGE:
	case -E2BIG:
		return TOOL_EXIT_USAGE;
	case -EBADMSG:
		return TOOL_EXIT_VERIFY;
	case -ENOMEM:
		return TOOL_EXIT_NOMEM;
	case -EBUSY:
	case -EAGAIN:
		return TOOL_EXIT_BUSY;
	case -EINTR:
		return TOOL_EXIT_SIGNAL;
	default:
		/* missing, unreadable, too small, bad superblock, I/O */
		return TOOL_EXIT_DEVICE;
	}
}

