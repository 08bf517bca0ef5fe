// SPDX-License-Identifier: MIT
/*
 * cli_main: the popt table generated from the tool's option table, the
 * options every tool has, command lookup, the checks every command gets
 * (argument count, options it accepts, number and size syntax), --help
 * per tool and per command, and the end of a run (stdout flushed, the
 * --json error object, -v's last line).
 */
#include "tools/common/cli.h"
#include "tools/common/engine.h"
#include "tools/common/json.h"
#include "tools/common/parse.h"
#include "tools/common/progress.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <popt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dmt/io.h>

/* The options of every tool, after the tool's own in c->val[]. */
enum { B_QUIET, B_BATCH, B_VERBOSE, B_DEBUG, B_VERSION, B_HELP, B_USAGE,
       B_LIST_ENGINES, B_COUNT };

static const struct cli_option builtin[B_COUNT] = {
	[B_QUIET] = { "quiet", 'q', CLI_NONE, NULL,
		      "No informational messages or progress on stderr "
		      "(results, warnings and errors stay); implies "
		      "--batch-mode", CLI_ALL_COMMANDS, NULL, 0, 0 },
	[B_BATCH] = { "batch-mode", 0, CLI_NONE, NULL,
		      "Never ask for confirmation", CLI_ALL_COMMANDS, NULL, 0,
		      0 },
	[B_VERBOSE] = { "verbose", 'v', CLI_NONE, NULL, "Shows more detail",
			CLI_ALL_COMMANDS, NULL, 0, 0 },
	[B_DEBUG] = { "debug", 0, CLI_NONE, NULL,
		      "Shows debug messages too (more than --verbose)",
		      CLI_ALL_COMMANDS, NULL, 0, 0 },
	[B_VERSION] = { "version", 'V', CLI_NONE, NULL,
			"Print the program version", CLI_ALL_COMMANDS, NULL, 0,
			0 },
	[B_HELP] = { "help", '?', CLI_NONE, NULL,
		     "Show this help (after a command: its options)",
		     CLI_ALL_COMMANDS, NULL, 0, 0 },
	[B_USAGE] = { "usage", 0, CLI_NONE, NULL, "Display brief usage",
		      CLI_ALL_COMMANDS, NULL, 0, 0 },
	[B_LIST_ENGINES] = { "list-engines", 0, CLI_NONE, NULL,
			     "List the engines (hash, FEC, AES backends) this CPU can run",
			     CLI_ALL_COMMANDS, NULL, 0, 0 },
};

/* cryptsetup commands that map devices: answered, never run. */
static const char *const mapping_commands[] = {
	"open", "close", "create", "remove", "status", "resize", "refresh",
	"luksOpen", "luksClose",
};

static size_t n_all(const struct cli_tool *t)
{
	return t->n_options + B_COUNT;
}

static const struct cli_option *opt_at(const struct cli_tool *t, size_t i)
{
	return i < t->n_options ? &t->options[i] : &builtin[i - t->n_options];
}

int cli_option_index(const struct cli_tool *t, const char *name)
{
	for (size_t i = 0; i < n_all(t); i++)
		if (!strcmp(opt_at(t, i)->name, name))
			return (int)i;
	return -1;
}

bool cli_given(const struct cli *c, int opt)
{
	return opt >= 0 && c->given && c->given[opt];
}

const char *cli_str(const struct cli *c, int opt)
{
	return opt >= 0 && c->given[opt] ? c->val[opt] : NULL;
}

uint64_t cli_num(const struct cli *c, int opt, uint64_t def)
{
	return opt >= 0 && c->given[opt] ? c->num[opt] : def;
}

static bool builtin_given(const struct cli *c, int b)
{
	return c->given[c->tool->n_options + (size_t)b];
}

/* The popt table for the options that `cmd_mask` accepts (every option
 * for ~0u); val is index + 1. */
static struct poptOption *popt_table(const struct cli_tool *t,
				     unsigned int cmd_mask)
{
	struct poptOption *p = calloc(n_all(t) + 1, sizeof(*p));
	size_t n = 0;

	if (!p)
		return NULL;
	for (size_t i = 0; i < n_all(t); i++) {
		const struct cli_option *o = opt_at(t, i);

		if (!(o->commands & cmd_mask))
			continue;
		p[n] = (struct poptOption){
			.longName = o->name,
			.shortName = o->short_name,
			.argInfo = (o->type == CLI_NONE ? POPT_ARG_NONE :
							  POPT_ARG_STRING) |
				   (o->flags & CLI_HIDDEN ?
					    POPT_ARGFLAG_DOC_HIDDEN : 0),
			.val = (int)i + 1,
			.descrip = o->help,
			.argDescrip = o->arg,
		};
		n++;
	}
	return p;	/* calloc'ed: ends with a zero entry */
}

/* ---- help ---- */

static void common_help(void)
{
	printf("\n-q/--quiet hides informational messages and progress on "
	       "stderr; results on\nstdout, warnings and errors are always "
	       "shown.  -v adds detail, --debug more.\n");
	printf("%s", TOOL_EXIT_CODES_HELP);
}

static void tool_help(const struct cli_tool *t, poptContext ctx)
{
	if (t->summary)
		printf("%s\n\n", t->summary);
	poptPrintHelp(ctx, stdout, 0);
	printf("\n<command> is one of:\n");
	for (size_t i = 0; i < t->n_commands; i++)
		printf("\t%s %s - %s\n", t->commands[i].name,
		       t->commands[i].args, t->commands[i].help);
	printf("\n'%s <command> --help' lists the options of a command.\n",
	       t->name);
	if (t->help_tail)
		printf("%s", t->help_tail);
	common_help();
}

static void command_help(const struct cli_tool *t, int cmd)
{
	const struct cli_command *k = &t->commands[cmd];
	struct poptOption *p = popt_table(t, CLI_CMD(cmd));
	char other[256];
	poptContext ctx;
	const char *argv[] = { t->name, NULL };

	if (!p)
		return;
	snprintf(other, sizeof(other), "[OPTION...] %s %s", k->name, k->args);
	ctx = poptGetContext(t->name, 1, argv, p, 0);
	poptSetOtherOptionHelp(ctx, other);
	printf("%s %s: %s\n\n", t->name, k->name, k->help);
	poptPrintHelp(ctx, stdout, 0);
	common_help();
	poptFreeContext(ctx);
	free(p);
}

/* ---- parsing ---- */

static int find_command(const struct cli_tool *t, const char *name)
{
	for (size_t i = 0; i < t->n_commands; i++)
		if (!strcmp(t->commands[i].name, name))
			return (int)i;
	return -1;
}

static bool is_mapping_command(const char *name)
{
	for (size_t i = 0; i < sizeof(mapping_commands) /
				       sizeof(mapping_commands[0]); i++)
		if (!strcmp(mapping_commands[i], name))
			return true;
	return false;
}

/* Reads every option into c->val / c->given; 0 or an exit code. */
static int read_options(struct cli *c, poptContext ctx)
{
	int r;

	while ((r = poptGetNextOpt(ctx)) > 0) {
		size_t i = (size_t)r - 1;

		if (c->given[i] && (opt_at(c->tool, i)->flags & CLI_ONCE)) {
			tool_err("--%s can only be given once",
				 opt_at(c->tool, i)->name);
			return TOOL_EXIT_USAGE;
		}
		c->given[i] = true;
		if (opt_at(c->tool, i)->type != CLI_NONE) {
			/* a repeated option: the last one wins */
			free(c->val[i]);
			c->val[i] = poptGetOptArg(ctx);
		}
	}
	if (r < -1) {
		tool_err("%s: %s (see --help)",
			 poptBadOption(ctx, POPT_BADOPTION_NOALIAS),
			 poptStrerror(r));
		return TOOL_EXIT_USAGE;
	}
	return 0;
}

/* Number and size syntax of the options given. */
static int check_values(struct cli *c)
{
	for (size_t i = 0; i < n_all(c->tool); i++) {
		const struct cli_option *o = opt_at(c->tool, i);
		uint64_t max = o->max ? o->max : UINT64_MAX;

		if (!c->given[i] || o->type == CLI_NONE ||
		    o->type == CLI_STRING)
			continue;
		if (o->type == CLI_SIZE &&
		    tool_parse_size(c->val[i], &c->num[i])) {
			tool_err("--%s: invalid size '%s'", o->name, c->val[i]);
			return -EINVAL;
		}
		if (o->type == CLI_NUMBER &&
		    tool_parse_u64(c->val[i], &c->num[i])) {
			tool_err("--%s: invalid number '%s'", o->name,
				 c->val[i]);
			return -EINVAL;
		}
		if (c->num[i] > max) {
			tool_err("--%s: at most %" PRIu64, o->name, max);
			return -EINVAL;
		}
	}
	return 0;
}

static int check_command(struct cli *c)
{
	const struct cli_tool *t = c->tool;
	const struct cli_command *k;

	if (!c->nargs) {
		cli_msg_no_command(t);
		return -EINVAL;
	}
	c->cmd_name = c->args[0];
	c->cmd = find_command(t, c->cmd_name);
	if (c->cmd < 0 && is_mapping_command(c->cmd_name)) {
		cli_msg_maps_devices(t, c->cmd_name);
		return -EINVAL;
	}
	if (c->cmd < 0) {
		cli_msg_unknown_command(t, c->cmd_name);
		return -EINVAL;
	}
	k = &t->commands[c->cmd];
	c->args++;
	c->nargs--;
	if (c->nargs < k->min_args || c->nargs > k->max_args) {
		cli_msg_arg_count(t, k, c->nargs);
		return -EINVAL;
	}
	for (size_t i = 0; i < n_all(t); i++) {
		if (c->given[i] &&
		    !(opt_at(t, i)->commands & CLI_CMD(c->cmd))) {
			cli_msg_not_allowed(opt_at(t, i)->name, c->cmd_name);
			return -EINVAL;
		}
	}
	return check_values(c);
}

/* --engine / $DMT_ENGINE, where the tool has --engine. */
static int engine_setup(struct cli *c, bool listing)
{
	int e = cli_option_index(c->tool, "engine");

	if (e < 0)
		return 0;
	if (!listing && !(opt_at(c->tool, (size_t)e)->commands &
			  CLI_CMD(c->cmd)))
		return 0;
	return tool_engine_setup(cli_str(c, e));
}

static void common_values(struct cli *c)
{
	const struct cli_tool *t = c->tool;

	c->json = cli_given(c, cli_option_index(t, "json"));
	c->progress_json = cli_given(c, cli_option_index(t, "progress-json"));
	c->progress_frequency =
		(int)cli_num(c, cli_option_index(t, "progress-frequency"), 0);
	c->threads = tool_threads(
		(long)cli_num(c, cli_option_index(t, "threads"), 0));
	c->batch = builtin_given(c, B_BATCH) || builtin_given(c, B_QUIET);
}

/* --help, --usage, --version, --list-engines: 1 when one was done. */
static int informational(struct cli *c, poptContext ctx, int *rc)
{
	const struct cli_tool *t = c->tool;
	int cmd = c->nargs ? find_command(t, c->args[0]) : -1;

	*rc = 0;
	if (builtin_given(c, B_HELP)) {
		if (cmd >= 0)
			command_help(t, cmd);
		else
			tool_help(t, ctx);
	} else if (builtin_given(c, B_USAGE)) {
		poptPrintUsage(ctx, stdout, 0);
	} else if (builtin_given(c, B_VERSION)) {
		/* what this build has: +argon2/-argon2, the ISA backends */
		printf("%s %s %s\n", t->name, DMT_VERSION, DMT_BUILD_FEATURES);
	} else if (builtin_given(c, B_LIST_ENGINES)) {
		*rc = engine_setup(c, true);
		if (!*rc)
			tool_list_engines();
	} else {
		return 0;
	}
	return 1;
}

static void set_verbosity(const struct cli *c)
{
	tool_verbosity = 0;
	if (builtin_given(c, B_DEBUG))
		tool_verbosity = 2;
	else if (builtin_given(c, B_VERBOSE))
		tool_verbosity = 1;
	else if (builtin_given(c, B_QUIET))
		tool_verbosity = -1;
}

/* ---- running ---- */

static int exit_of(int rc)
{
	return rc < 0 ? tool_exit_code(rc) : rc;
}

static int run_command(struct cli *c)
{
	const struct cli_tool *t = c->tool;
	int rc;

	common_values(c);
	rc = engine_setup(c, false);
	if (rc)
		return rc;
	if (t->priv_size) {
		c->priv = calloc(1, t->priv_size);
		if (!c->priv)
			return -ENOMEM;
	}
	tool_install_signals();
	rc = t->prepare ? t->prepare(c) : 0;
	if (!rc)
		rc = t->commands[c->cmd].run(c);
	return rc;
}

/* Results that did not reach stdout are a failure (exit 4). */
static int flush_stdout(int rc)
{
	errno = 0;
	if (fflush(stdout) || ferror(stdout)) {
		int werr = errno ? -errno : -EIO;

		tool_err_errno("stdout", "write error", werr);
		if (!rc)
			rc = werr;
	}
	return rc;
}

static int exit_status(const struct cli *c, int rc)
{
	int code = exit_of(rc);

	return c->tool->exit_status ? c->tool->exit_status(c, code) : code;
}

static void finish(struct cli *c, bool json_wanted, int rc)
{
	int code = exit_status(c, rc);

	if (code && json_wanted && !c->json_printed)
		cli_json_print(c, cli_json_error(c->tool, tool_first_error(),
						 code, cli_last_reason()));
	if (tool_verbosity > 0)
		tool_progress_clear(STDERR_FILENO);
	if (tool_verbosity > 0 && c->cmd >= 0 && rc < 0)
		fprintf(stderr, "Command failed with code %d (%s).\n", rc,
			dmt_strerror(rc));
	else if (tool_verbosity > 0 && c->cmd >= 0 && rc > 0)
		fprintf(stderr, "Command failed with exit code %d.\n", rc);
	else if (tool_verbosity > 0 && c->cmd >= 0)
		fprintf(stderr, "Command successful.\n");
}

static void free_cli(struct cli *c, size_t n)
{
	if (c->priv && c->tool->cleanup)
		c->tool->cleanup(c);
	free(c->priv);
	for (size_t i = 0; c->val && i < n; i++)
		free(c->val[i]);
	free(c->val);
	free(c->num);
	free(c->given);
}

int cli_main(const struct cli_tool *t, int argc, const char **argv)
{
	struct cli c = { .tool = t, .cmd = -1 };
	struct poptOption *table = popt_table(t, CLI_ALL_COMMANDS);
	size_t n = n_all(t);
	poptContext ctx = NULL;
	int rc;

	tool_name = t->name;
	tool_verbosity = 0;
	tool_reset_messages();
	cli_reason_reset();
	c.val = calloc(n, sizeof(*c.val));
	c.num = calloc(n, sizeof(*c.num));
	c.given = calloc(n, sizeof(*c.given));
	if (!table || !c.val || !c.num || !c.given) {
		tool_err("out of memory");
		rc = -ENOMEM;
		goto out;
	}
	ctx = poptGetContext(t->name, argc, argv, table, 0);
	poptSetOtherOptionHelp(ctx, "[OPTION...] <command> <arguments>");
	rc = read_options(&c, ctx);
	c.usage_error = rc != 0;
	set_verbosity(&c);
	c.args = poptGetArgs(ctx);
	while (c.args && c.args[c.nargs])
		c.nargs++;
	if (rc || informational(&c, ctx, &rc))
		goto out;
	rc = check_command(&c);
	c.usage_error = rc != 0;
	if (!rc)
		rc = run_command(&c);
	rc = flush_stdout(rc);
out:
	finish(&c, cli_given(&c, cli_option_index(t, "json")), rc);
	rc = exit_status(&c, rc);
	free_cli(&c, n);
	if (ctx)
		poptFreeContext(ctx);
	free(table);
	return rc;
}
