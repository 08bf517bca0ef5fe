/* SPDX-License-Identifier: MIT */
/*
 * Messages, one style for all tools (msg.c): "tool: message" on stderr,
 * errors and warnings always, information unless -q, detail with -v and
 * --debug; and the framework's usage messages.
 */
#ifndef DMT_TOOLS_MSG_H
#define DMT_TOOLS_MSG_H

#include <stdint.h>

struct cli_tool;
struct cli_command;

extern const char *tool_name;	/* "verity-tool", set by main() */
extern int tool_verbosity;	/* -1 quiet, 0 normal, 1 -v, 2 --debug */

/* "tool: message\n" on stderr (always; errors are never quietened). */
void tool_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Warnings: always shown, "tool: warning: ..." on stderr. */
void tool_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Informational text on stderr, suppressed by -q. */
void tool_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Only with -v / --debug. */
void tool_verbose(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tool_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "tool: PATH: what: strerror\n" for a failed library call. */
void tool_err_errno(const char *path, const char *what, int err);

/* First error message of this run (for the --json error object). */
const char *tool_first_error(void);
void tool_reset_messages(void);

/* "option --%s is not allowed with the %s command" and friends. */
void cli_msg_not_allowed(const char *opt, const char *cmd);
void cli_msg_unknown_command(const struct cli_tool *t, const char *cmd);
void cli_msg_no_command(const struct cli_tool *t);
void cli_msg_arg_count(const struct cli_tool *t,
		       const struct cli_command *cmd, int nargs);
/* "<cmd>: this tool does not map devices; <map_hint>" */
void cli_msg_maps_devices(const struct cli_tool *t, const char *cmd);

/* "thread" for 1, "threads" otherwise (the word after a count). */
const char *cli_plural(uint64_t n, const char *one, const char *many);

#endif /* DMT_TOOLS_MSG_H */
