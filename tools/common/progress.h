/* SPDX-License-Identifier: MIT */
/*
 * Progress and interruption (progress.c).  cryptsetup's line on stderr
 * when it is a terminal (redrawn every 0.5 s), a new line every
 * `frequency` seconds when frequency > 0, or one JSON object per line
 * (--progress-json) on stderr.  Also checks the interrupt flag so
 * SIGINT/SIGTERM abort cleanly (-EINTR).
 */
#ifndef DMT_TOOLS_PROGRESS_H
#define DMT_TOOLS_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include <dmt/progress.h>

struct tool_progress {
	const char *device;	/* for --progress-json */
	const char *verb;	/* "written" (format) or "verified" (check) */
	int frequency;		/* --progress-frequency, 0 = default */
	bool json;		/* --progress-json */
	bool enabled;		/* set by tool_progress_init */
	/* internal */
	uint64_t start_ns, last_ns, last_done, total;
	bool printed;
};
void tool_progress_init(struct tool_progress *p, const char *device,
			const char *verb, int frequency, bool json);
/* Glue for struct dmt_progress. */
int tool_progress_cb(void *ctx, uint64_t done, uint64_t total);
void tool_progress_finish(struct tool_progress *p, bool ok);
/*
 * Before anything is written to fd (STDOUT_FILENO, STDERR_FILENO): a
 * progress line drawn on the terminal is erased ("\r\033[K"), so no
 * result or message shares its line.  For stdout only when stdout is a
 * terminal too (else the progress line stays).  The message functions
 * and cli_json_print do it; a tool printing results with printf while
 * progress runs calls it first.
 */
void tool_progress_clear(int fd);
struct dmt_progress tool_progress_hook(struct tool_progress *p);

/* SIGINT/SIGTERM/SIGHUP set a flag that tool_progress_cb turns into an
 * abort; call once at start. */
void tool_install_signals(void);
bool tool_interrupted(void);

#endif /* DMT_TOOLS_PROGRESS_H */
