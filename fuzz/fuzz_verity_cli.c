// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: verity-tool's option parsing and actions, in-process
 * (the tools/verity-tool sources are compiled in, main() renamed).  Fixtures: d
 * (16 KiB of data), h (its tree, 512-byte blocks), e (empty), r (the
 * root hash as hex).  Input: arguments, one per line.
 */
#include <stdint.h>
#include <stddef.h>

int verity_tool_main(int argc, const char **argv);
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#include "tools/verity-tool/cmd_build.c"
#include "tools/verity-tool/cmd_check.c"
#include "tools/verity-tool/cmd_dump.c"
#include "tools/verity-tool/cmd_sign.c"
#include "tools/verity-tool/cmd_size.c"
#include "tools/verity-tool/files.c"
#include "tools/verity-tool/options.c"
#include "tools/verity-tool/output.c"
#include "tools/verity-tool/reasons.c"
#define main verity_tool_main
#include "tools/verity-tool/main.c"
#undef main

#include "cli_harness.h"

static struct fuzz_fixture fixtures[] = {
	{ "d", NULL, 0 }, { "h", NULL, 0 }, { "e", NULL, 0 },
	{ "r", NULL, 0 },
};
#define NFIX (sizeof(fixtures) / sizeof(fixtures[0]))

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const build[] = {
		"verity-tool", "build", "-q", "--data-block-size", "512",
		"--hash-block-size", "512", "--salt", "0011223344",
		"--uuid", "12345678-1234-4234-8234-123456789abc",
		"--root-hash-file", "r", "d", "h", NULL
	};
	uint8_t *d = malloc(16384);

	fuzz_enter_dir();
	for (size_t i = 0; i < 16384; i++)
		d[i] = (uint8_t)(i * 2654435761u >> 13);
	fuzz_write("d", d, 16384);
	free(d);
	fuzz_write("e", NULL, 0);
	if (verity_tool_main(15, (const char **)build))
		fuzz_die("building the fixture tree");
	for (size_t i = 0; i < NFIX; i++)
		fixtures[i].buf = fuzz_read(fixtures[i].name, &fixtures[i].len);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char store[FUZZ_MAX_ARGS * (FUZZ_MAX_ARG + 1)];
	char *argv[FUZZ_MAX_ARGS + 1];
	int argc = fuzz_split(data, size, "verity-tool", argv, store);

	if (!argc)
		return 0;
	fuzz_reset_dir(fixtures, NFIX);
	signal(SIGXFSZ, SIG_IGN);	/* too large: EFBIG, not a signal */
	tool_verbosity = 0;
	verity_tool_main(argc, (const char **)argv);
	fflush(NULL);
	return 0;
}
