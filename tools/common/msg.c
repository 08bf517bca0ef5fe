// SPDX-License-Identifier: MIT
/*
 * Messages on stderr, one style for every tool: "tool: text" for errors
 * and warnings (never quietened), bare lines for information (-q hides
 * them), -v and --debug detail.  The first error of a run is kept for the
 * --json error object.
 */
#include "tools/common/cli.h"
#include "tools/common/progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <dmt/io.h>

const char *tool_name = "dmt";
int tool_verbosity;

static char first_error[512];

const char *tool_first_error(void)
{
	return first_error[0] ? first_error : NULL;
}

void tool_reset_messages(void)
{
	first_error[0] = '\0';
}

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	char line[sizeof(first_error)];

	vsnprintf(line, sizeof(line), fmt, ap);
	if (!prefix && !first_error[0])
		memcpy(first_error, line, sizeof(line));
	tool_progress_clear(STDERR_FILENO);
	fprintf(stderr, "%s: %s%s\n", tool_name, prefix ? prefix : "", line);
}

void tool_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(NULL, fmt, ap);
	va_end(ap);
}

void tool_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void tool_info(const char *fmt, ...)
{
	va_list ap;

	if (tool_verbosity < 0)
		return;
	tool_progress_clear(STDERR_FILENO);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void tool_verbose(const char *fmt, ...)
{
	va_list ap;

	if (tool_verbosity < 1)
		return;
	tool_progress_clear(STDERR_FILENO);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void tool_debug(const char *fmt, ...)
{
	va_list ap;

	if (tool_verbosity < 2)
		return;
	tool_progress_clear(STDERR_FILENO);
	va_start(ap, fmt);
	fputs("# ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void tool_err_errno(const char *path, const char *what, int err)
{
	if (path)
		tool_err("%s: %s: %s", path, what, dmt_strerror(err));
	else
		tool_err("%s: %s", what, dmt_strerror(err));
}

/* ---- the framework's own messages ---- */

void cli_msg_not_allowed(const char *opt, const char *cmd)
{
	tool_err("option --%s is not allowed with the %s command", opt, cmd);
}

static void command_list(const struct cli_tool *t, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < t->n_commands && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "",
				      t->commands[i].name);
}

void cli_msg_unknown_command(const struct cli_tool *t, const char *cmd)
{
	char list[256];

	command_list(t, list, sizeof(list));
	tool_err("unknown command '%s' (%s; see --help)", cmd, list);
}

void cli_msg_no_command(const struct cli_tool *t)
{
	char list[256];

	command_list(t, list, sizeof(list));
	tool_err("no command given (%s; see --help)", list);
}

void cli_msg_arg_count(const struct cli_tool *t,
		       const struct cli_command *cmd, int nargs)
{
	static const char *const count[] = { "no", "one", "two", "three" };
	char what[64];

	if (!cmd->max_args)
		snprintf(what, sizeof(what), "takes no argument");
	else if (cmd->min_args == cmd->max_args && cmd->max_args < 4)
		snprintf(what, sizeof(what), "needs exactly %s argument%s",
			 count[cmd->max_args], cmd->max_args == 1 ? "" : "s");
	else
		snprintf(what, sizeof(what), "%s",
			 nargs < cmd->min_args ? "missing argument" :
						 "too many arguments");
	tool_err("%s: %s (usage: %s %s%s%s)", cmd->name, what, t->name,
		 cmd->name, cmd->args[0] ? " " : "", cmd->args);
}

void cli_msg_maps_devices(const struct cli_tool *t, const char *cmd)
{
	tool_err("%s: this tool does not map devices; %s", cmd,
		 t->map_hint ? t->map_hint : "use the kernel's setup tool");
}

const char *cli_plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}
