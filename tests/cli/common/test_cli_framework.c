// SPDX-License-Identifier: MIT
/*
 * The CLI framework of tools/common on a small made-up tool: option and
 * command acceptance, the shared messages, the exit-code mapping, the
 * --json error object, reasons named by option, confirmation outside a
 * terminal.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/helpers.h"
#include "tools/common/cli.h"

enum { C_MAKE, C_LOOK };
enum { O_SIZE, O_COUNT, O_NAME, O_JSON, O_THREADS, O_N };

static int made_rc;
static uint64_t seen_size;
static unsigned int seen_threads;

static int cmd_make(struct cli *c)
{
	seen_size = cli_num(c, O_SIZE, 7);
	seen_threads = c->threads;
	if (cli_given(c, O_NAME) && !strcmp(cli_str(c, O_NAME), "fail")) {
		tool_err("%s: boom", c->args[0]);
		return -ENOENT;
	}
	if (cli_given(c, O_NAME) && !strcmp(cli_str(c, O_NAME), "reason")) {
		struct dmt_reason r = { .code = DMT_REASON_OUT_OF_RANGE,
					.field = "block_size", .value = 3,
					.min = 512, .max = 4096 };

		cli_reason_err(c, &r);
		return -EINVAL;
	}
	return made_rc;
}

static int cmd_look(struct cli *c)
{
	printf("look %s\n", c->nargs ? c->args[0] : "-");
	return 0;
}

static const struct cli_command commands[] = {
	[C_MAKE] = { "make", cmd_make, "make a thing", "<file>", 1, 1 },
	[C_LOOK] = { "look", cmd_look, "look at a thing", "[<file>]", 0, 1 },
};

static const struct cli_option options[O_N] = {
	[O_SIZE] = { "size", 's', CLI_SIZE, "BYTES", "The size",
		     CLI_CMD(C_MAKE), "block_size", 0, 0 },
	[O_COUNT] = { "count", 0, CLI_NUMBER, "N", "How many",
		      CLI_CMD(C_MAKE) | CLI_CMD(C_LOOK), "count", 1000, 0 },
	[O_NAME] = { "name", 'n', CLI_STRING, "TEXT", "A name",
		     CLI_CMD(C_MAKE), NULL, 0, 0 },
	[O_JSON] = CLI_OPT_JSON(CLI_CMD(C_MAKE) | CLI_CMD(C_LOOK)),
	[O_THREADS] = CLI_OPT_THREADS(CLI_CMD(C_MAKE)),
};

static const struct cli_tool demo = {
	.name = "demo-tool",
	.summary = "demo-tool: a test of the framework",
	.commands = commands,
	.n_commands = 2,
	.options = options,
	.n_options = O_N,
	.map_hint = "use `demosetup open`",
};

struct run {
	int rc;
	char *out, *err;
};

static char *slurp(int fd)
{
	off_t n = lseek(fd, 0, SEEK_END);
	char *buf = calloc(1, (size_t)n + 1);

	cr_assert(buf);
	cr_assert_eq(pread(fd, buf, (size_t)n, 0), n);
	close(fd);
	return buf;
}

/* cli_main with stdout and stderr captured. */
static struct run run(const char *first, ...)
{
	const char *argv[16] = { "demo-tool" };
	char o_name[] = "/tmp/cliout.XXXXXX", e_name[] = "/tmp/clierr.XXXXXX";
	int argc = 1, o = mkstemp(o_name), e = mkstemp(e_name);
	int so = dup(1), se = dup(2);
	struct run r;
	va_list ap;

	cr_assert(o >= 0 && e >= 0 && so >= 0 && se >= 0);
	unlink(o_name);
	unlink(e_name);
	va_start(ap, first);
	for (const char *a = first; a && argc < 15;
	     a = va_arg(ap, const char *))
		argv[argc++] = a;
	va_end(ap);
	fflush(stdout);
	fflush(stderr);
	dup2(o, 1);
	dup2(e, 2);
	r.rc = cli_main(&demo, argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	r.out = slurp(o);
	r.err = slurp(e);
	return r;
}

static void done(struct run *r)
{
	free(r->out);
	free(r->err);
}

Test(cli_framework, runs_command_with_values)
{
	struct run r = run("make", "--size", "4K", "--threads", "3", "f", NULL);

	cr_expect_eq(r.rc, 0, "%s", r.err);
	cr_expect_eq(seen_size, 4096);
	cr_expect_eq(seen_threads, 3);
	cr_expect_str_empty(r.err);
	done(&r);
	r = run("look", NULL);
	cr_expect_eq(r.rc, 0);
	cr_expect_str_eq(r.out, "look -\n");
	done(&r);
}

Test(cli_framework, option_not_allowed)
{
	struct run r = run("look", "--size", "4K", NULL);

	cr_expect_eq(r.rc, 1);
	cr_expect(strstr(r.err, "demo-tool: option --size is not allowed "
			 "with the look command"), "%s", r.err);
	cr_expect_str_empty(r.out);
	done(&r);
}

Test(cli_framework, commands_and_arguments)
{
	struct run r = run(NULL);

	cr_expect_eq(r.rc, 1);
	cr_expect(strstr(r.err, "no command given (make, look"), "%s", r.err);
	done(&r);
	r = run("frob", NULL);
	cr_expect_eq(r.rc, 1);
	cr_expect(strstr(r.err, "unknown command 'frob' (make, look; see --help)"), "%s",
		  r.err);
	done(&r);
	r = run("make", NULL);
	cr_expect_eq(r.rc, 1);
	cr_expect(strstr(r.err, "make: needs exactly one argument (usage: "
			 "demo-tool make <file>)"), "%s", r.err);
	done(&r);
	r = run("look", "a", "b", NULL);
	cr_expect_eq(r.rc, 1);
	cr_expect(strstr(r.err, "look: too many arguments"), "%s", r.err);
	done(&r);
}

Test(cli_framework, mapping_commands)
{
	struct run r = run("open", "x", "y", NULL);

	cr_expect_eq(r.rc, 1);
	cr_expect(strstr(r.err, "demo-tool: open: this tool does not map "
			 "devices; use `demosetup open`"), "%s", r.err);
	done(&r);
	r = run("close", NULL);
	cr_expect(strstr(r.err, "does not map devices"), "%s", r.err);
	done(&r);
}

Test(cli_framework, value_syntax)
{
	struct run r = run("make", "--count", "x", "f", NULL);

	cr_expect_eq(r.rc, 1);
	cr_expect(strstr(r.err, "--count: invalid number 'x'"), "%s", r.err);
	done(&r);
	r = run("make", "--count", "1001", "f", NULL);
	cr_expect_eq(r.rc, 1);
	cr_expect(strstr(r.err, "--count: at most 1000"), "%s", r.err);
	done(&r);
	r = run("make", "-s", "12Q", "f", NULL);
	cr_expect_eq(r.rc, 1);
	cr_expect(strstr(r.err, "--size: invalid size '12Q'"), "%s", r.err);
	done(&r);
	r = run("make", "--no-such", "f", NULL);
	cr_expect_eq(r.rc, 1);
	cr_expect(strstr(r.err, "--no-such: unknown option"), "%s", r.err);
	done(&r);
}

Test(cli_framework, exit_codes)
{
	static const struct {
		int err, code;
	} map[] = {
		{ 0, 0 }, { -EINVAL, 1 }, { -ENOTSUP, 1 }, { -ERANGE, 1 },
		{ -E2BIG, 1 }, { -EBADMSG, 2 }, { -ENOMEM, 3 }, { -ENOENT, 4 },
		{ -EIO, 4 }, { -EMEDIUMTYPE, 4 }, { -ENODATA, 4 },
		{ -EBUSY, 5 }, { -EAGAIN, 5 }, { -EINTR, 130 },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		cr_expect_eq(tool_exit_code(map[i].err), map[i].code, "%d",
			     map[i].err);
	made_rc = -EBADMSG;
	struct run r = run("make", "f", NULL);
	cr_expect_eq(r.rc, 2);
	done(&r);
	made_rc = 5;	/* a positive return is an exit code */
	r = run("make", "f", NULL);
	cr_expect_eq(r.rc, 5);
	done(&r);
	made_rc = 0;
}

static json_object *error_obj(const char *out)
{
	json_object *j = json_tokener_parse(out), *e = NULL;

	cr_assert(j, "not JSON: %s", out);
	cr_assert(json_object_object_get_ex(j, "error", &e), "%s", out);
	json_object_get(e);
	json_object_put(j);
	return e;
}

Test(cli_framework, json_error_object)
{
	struct run r = run("make", "--json", "-n", "fail", "f", NULL);
	json_object *e, *v;

	cr_expect_eq(r.rc, 4);
	e = error_obj(r.out);
	cr_assert(json_object_object_get_ex(e, "message", &v));
	cr_expect_str_eq(json_object_get_string(v), "f: boom");
	cr_assert(json_object_object_get_ex(e, "exit_code", &v));
	cr_expect_eq(json_object_get_int(v), 4);
	json_object_put(e);
	done(&r);

	/* a usage error under --json, and the reason fields */
	r = run("make", "--json", "-n", "reason", "f", NULL);
	cr_expect_eq(r.rc, 1);
	e = error_obj(r.out);
	cr_assert(json_object_object_get_ex(e, "reason", &v));
	cr_expect_str_eq(json_object_get_string(v), "out_of_range");
	cr_assert(json_object_object_get_ex(e, "option", &v));
	cr_expect_str_eq(json_object_get_string(v), "--size");
	json_object_put(e);
	done(&r);

	r = run("look", "--json", "a", "b", NULL);
	cr_expect_eq(r.rc, 1);
	e = error_obj(r.out);
	json_object_put(e);
	done(&r);

	/* success: no error object */
	r = run("look", "--json", NULL);
	cr_expect_eq(r.rc, 0);
	cr_expect(!strstr(r.out, "error"), "%s", r.out);
	done(&r);
}

Test(cli_framework, reason_names_the_option)
{
	struct run r = run("make", "-n", "reason", "f", NULL);

	cr_expect_eq(r.rc, 1);
	cr_expect(strstr(r.err, "demo-tool: --size: 3 is outside 512..4096"),
		  "%s", r.err);
	done(&r);
}

Test(cli_framework, version_help_quiet)
{
	struct run r = run("-V", NULL);

	cr_expect_eq(r.rc, 0);
	cr_expect_str_eq(r.out,
			 "demo-tool " DMT_VERSION " " DMT_BUILD_FEATURES "\n");
	done(&r);
	r = run("--version", NULL);
	cr_expect_str_eq(r.out,
			 "demo-tool " DMT_VERSION " " DMT_BUILD_FEATURES "\n");
	done(&r);
	r = run("--help", NULL);
	cr_expect_eq(r.rc, 0);
	cr_expect(strstr(r.out, "--size=BYTES"), "%s", r.out);
	cr_expect(strstr(r.out, "make <file> - make a thing"), "%s", r.out);
	cr_expect(strstr(r.out, "-q/--quiet"), "%s", r.out);
	done(&r);
	/* per command: only the options it accepts */
	r = run("look", "--help", NULL);
	cr_expect_eq(r.rc, 0);
	cr_expect(strstr(r.out, "--count=N"), "%s", r.out);
	cr_expect(!strstr(r.out, "--size"), "%s", r.out);
	done(&r);
	/* -v says how the command ended, -q does not */
	r = run("-v", "look", NULL);
	cr_expect(strstr(r.err, "Command successful."), "%s", r.err);
	done(&r);
	r = run("-q", "look", NULL);
	cr_expect_str_empty(r.err);
	cr_expect_str_eq(r.out, "look -\n", "-q never hides results");
	done(&r);
}

static struct cli fake = { .tool = &demo };

Test(cli_framework, confirm_without_terminal)
{
	int null = open("/dev/null", O_RDONLY), saved = dup(0);
	char e_name[] = "/tmp/clierr.XXXXXX";
	int e = mkstemp(e_name), se = dup(2);
	char *err;

	cr_assert(null >= 0 && e >= 0);
	unlink(e_name);
	dup2(null, 0);
	dup2(e, 2);
	fake.batch = true;
	cr_expect(cli_confirm(&fake, "Device x already contains data."));
	fake.batch = false;
	cr_expect(cli_confirm(&fake, "Device y already contains data."));
	fflush(stderr);
	dup2(se, 2);
	dup2(saved, 0);
	err = slurp(e);
	cr_expect(!strstr(err, "Device x"), "batch mode asks nothing: %s", err);
	cr_expect(strstr(err, "warning: Device y already contains data."),
		  "%s", err);
	cr_expect(!strstr(err, "Are you sure"), "%s", err);
	free(err);
	close(null);
}
