/* SPDX-License-Identifier: MIT */
/*
 * The one command-line framework of every tool.  A tool is a static
 * table: its name, its commands and its options.  Each option is
 * registered once (long/short name, type, argument name, help text, the
 * commands that accept it and the library field it fills); the popt
 * table, --help, the "not allowed with" check and the reason messages
 * all come from that entry.  A tool's main() is one line:
 *
 *	int main(int argc, const char **argv)
 *	{
 *		return cli_main(&my_tool, argc, argv);
 *	}
 *
 * Options every tool has (the framework adds them; the tool does not list
 * them): -q/--quiet, --batch-mode, -v/--verbose, --debug, -V/--version,
 * -?/--help, --usage, --list-engines.  Options many tools have, with one
 * spelling and meaning, come as CLI_OPT_* entries the tool puts in its
 * table with its own command mask: --json, --progress-json,
 * --progress-frequency, --threads, --engine.
 *
 * Meaning of the verbosity options (the same in every tool):
 *   -q, --quiet   no informational output on stderr (progress, notes);
 *                 results (stdout), warnings and errors are never hidden;
 *                 implies --batch-mode.
 *   --batch-mode  never ask for confirmation.
 *   -v            more detail on stderr; --debug: -v plus debug lines.
 */
#ifndef DMT_TOOLS_CLI_H
#define DMT_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dmt/reason.h>

#include <dmt/hash.h>	/* DMT_ENGINE_ENV */

#include "tools/common/exit.h"
#include "tools/common/msg.h"

struct cli;

enum cli_type {
	CLI_NONE,	/* a flag */
	CLI_STRING,	/* any text */
	CLI_NUMBER,	/* decimal integer, at most .max */
	CLI_SIZE,	/* N[S|K|M|G|T|KiB..|KB..] (tool_parse_size) */
};

/* Commands are bits in an option's mask: CLI_CMD(index in commands[]). */
#define CLI_CMD(i) (1u << (i))
#define CLI_ALL_COMMANDS (~0u)

enum {
	CLI_HIDDEN = 1 << 0,	/* accepted, not listed in --help */
	CLI_ONCE = 1 << 1,	/* given twice: refused (not "the last wins") */
};

struct cli_option {
	const char *name;	/* long name, without "--" */
	char short_name;	/* 0: none */
	enum cli_type type;
	const char *arg;	/* argument name for --help ("BYTES") */
	const char *help;
	unsigned int commands;	/* CLI_CMD() bits of the accepting commands */
	const char *field;	/* library field it fills (reasons), or NULL */
	uint64_t max;		/* CLI_NUMBER: largest value (0: UINT64_MAX) */
	unsigned int flags;	/* CLI_HIDDEN */
};

/* Options shared by tools (same name, type, help); `cmds` is the tool's
 * command mask. */
#define CLI_OPT_JSON(cmds)                                                   \
	{ "json", 0, CLI_NONE, NULL, "Print the result as JSON (on failure: " \
	  "an {\"error\": ...} object)", (cmds), NULL, 0, 0 }
#define CLI_OPT_PROGRESS_JSON(cmds)                                          \
	{ "progress-json", 0, CLI_NONE, NULL,                                 \
	  "Progress as JSON lines on stderr", (cmds), NULL, 0, 0 }
#define CLI_OPT_PROGRESS_FREQUENCY(cmds)                                     \
	{ "progress-frequency", 0, CLI_NUMBER, "SECS",                        \
	  "Progress line every SECS seconds", (cmds), NULL, UINT32_MAX, 0 }
#define CLI_OPT_THREADS(cmds)                                                \
	{ "threads", 0, CLI_NUMBER, "N",                                      \
	  "Worker threads (default: available CPUs)", (cmds), "threads",      \
	  1024, 0 }
#define CLI_OPT_ENGINE(cmds)                                                 \
	{ "engine", 0, CLI_STRING, "NAME",                                    \
	  "Force backends: NAME or PRIMITIVE=NAME[,...] (see --list-engines; " \
	  "also $" DMT_ENGINE_ENV                                             \
	  ")", (cmds), "engine", 0, 0 }

struct cli_command {
	const char *name;
	/* 0 or a negative errno (mapped by tool_exit_code), or a positive
	 * exit code */
	int (*run)(struct cli *c);
	const char *help;	/* one line */
	const char *args;	/* positional arguments' names ("<device>") */
	int min_args, max_args;
};

struct cli_tool {
	const char *name;		/* "integrity-tool" */
	const char *summary;		/* one line for --help */
	const struct cli_command *commands;
	size_t n_commands;
	const struct cli_option *options;
	size_t n_options;
	/* after the cryptsetup-only command line "this tool does not map
	 * devices; " (e.g. "use `integritysetup open` with ...") */
	const char *map_hint;
	const char *help_tail;		/* printed at the end of --help */
	/* called after parsing, before the command (common setup); 0 or
	 * -errno.  May be NULL. */
	int (*prepare)(struct cli *c);
	/* tool-specific reason codes: writes the message, returns true when
	 * it knew the code.  May be NULL. */
	bool (*reason_text)(const struct cli *c, const struct dmt_reason *r,
			    char *buf, size_t size);
	size_t priv_size;		/* bytes of c->priv (zeroed) */
	void (*cleanup)(struct cli *c);	/* frees what priv holds */
	/* the exit code of the run, mapped (a compatibility mode: another
	 * program's codes); also the --json error's.  May be NULL. */
	int (*exit_status)(const struct cli *c, int code);
};

/* Parses, checks, runs the command; returns the process exit code. */
int cli_main(const struct cli_tool *t, int argc, const char **argv);

/* ---- inside a command ---- */

struct cli {
	const struct cli_tool *tool;
	int cmd;			/* index in tool->commands */
	const char *cmd_name;
	const char **args;		/* positional arguments after it */
	int nargs;
	bool json;			/* --json given and accepted */
	/* the failure is one of the command line itself (what the framework
	 * refuses; a tool sets it for its own such checks) */
	bool usage_error;
	bool json_printed;		/* a result object reached stdout */
	bool batch;			/* --batch-mode or -q */
	int progress_frequency;
	bool progress_json;
	unsigned int threads;		/* --threads or the default */
	void *priv;			/* tool's state, tool->priv_size */
	/* internal */
	char **val;
	uint64_t *num;
	bool *given;
};

bool cli_given(const struct cli *c, int opt);
/* The option's text (NULL when not given). */
const char *cli_str(const struct cli *c, int opt);
/* A CLI_NUMBER / CLI_SIZE option's value, or def when not given. */
uint64_t cli_num(const struct cli *c, int opt, uint64_t def);
/* The index of an option by long name (-1: none). */
int cli_option_index(const struct cli_tool *t, const char *name);
/* The option that fills a library field, as "--name" (NULL: none). */
const char *cli_field_option(const struct cli_tool *t, const char *field);

/* ---- reasons: library fields named as the tool's options ---- */

/*
 * A reason as one line (no tool name, no newline), library field names
 * turned into the tool's option names.  cli_reason_err prints it with
 * the path (when r->path is set) and remembers it for --json.
 */
void cli_reason_text(const struct cli *c, const struct dmt_reason *r,
		     char *buf, size_t size);
void cli_reason_err(const struct cli *c, const struct dmt_reason *r);
/* The same with ": strerror(err)" after the reason (err 0: none). */
void cli_reason_err_errno(const struct cli *c, const struct dmt_reason *r,
			  int err);
/* The reason of the last cli_reason_err (for --json), or NULL. */
const struct dmt_reason *cli_last_reason(void);
void cli_reason_reset(void);
/* Name of a generic reason code ("out_of_range"), NULL if unknown. */
const char *cli_reason_code_name(int code);

/*
 * Ask before destroying data: on a terminal (stdin and stderr) prints the
 * warning and "Are you sure? (Type 'yes' in capital letters): "; true only
 * for "YES".  With --batch-mode/-q: true without asking.  Otherwise
 * prints the warning and goes on (true): never blocks a pipeline.
 */
bool cli_confirm(const struct cli *c, const char *warning);

#endif /* DMT_TOOLS_CLI_H */
