// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: integrity-tool's option parsing and commands,
 * in-process: the tool's table (tools/integrity-tool/main.c compiled in,
 * main() renamed; the other objects linked without main.o) run by
 * cli_main(), which keeps no state between runs.
 * Fixtures: i (a 128 KiB formatted image), p (4 KiB payload), k (32-byte
 * key), e (empty).
 * Input: arguments, one per line.
 */
#include <stdint.h>
#include <stddef.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int integrity_tool_real_main(int argc, const char **argv);

#include "tools/integrity-tool/it.h"
#define main integrity_tool_real_main
#include "tools/integrity-tool/main.c"
#undef main

#include "cli_harness.h"

static struct fuzz_fixture fixtures[] = {
	{ "i", NULL, 0 }, { "p", NULL, 0 }, { "k", NULL, 0 },
	{ "e", NULL, 0 },
};
#define NFIX (sizeof(fixtures) / sizeof(fixtures[0]))

/* The framework keeps no state between runs: a run is one cli_main(). */
static int integrity_tool_main(int argc, const char **argv)
{
	return cli_main(&integrity_tool, argc, argv);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const format[] = {
		"integrity-tool", "format", "-q", "--device-size", "128K",
		"--journal-size", "8K", "--interleave-sectors", "64",
		"--salt", "000102030405060708090a0b0c0d0e0f", "--data-from",
		"p", "i", NULL
	};
	uint8_t buf[4096];

	fuzz_enter_dir();
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 2654435761u >> 11);
	fuzz_write("p", buf, sizeof(buf));
	fuzz_write("k", buf, 32);
	fuzz_write("e", NULL, 0);
	if (integrity_tool_main(14, (const char **)format))
		fuzz_die("formatting the fixture image");
	for (size_t i = 0; i < NFIX; i++)
		fixtures[i].buf = fuzz_read(fixtures[i].name, &fixtures[i].len);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char store[FUZZ_MAX_ARGS * (FUZZ_MAX_ARG + 1)];
	char *argv[FUZZ_MAX_ARGS + 1];
	int argc = fuzz_split(data, size, "integrity-tool", argv, store);

	if (!argc)
		return 0;
	fuzz_reset_dir(fixtures, NFIX);
	signal(SIGXFSZ, SIG_IGN);	/* too large: EFBIG, not a signal */
	integrity_tool_main(argc, (const char **)argv);
	fflush(NULL);
	return 0;
}
