/* SPDX-License-Identifier: MIT */
/*
 * What verity-tool and integrity-tool share: exit codes (mapped from the
 * library's negative errno in one place), messages, progress output in
 * cryptsetup's format, signal handling, number/hex/size parsing, --seed
 * derivation and engine selection.
 *
 * Library errno convention (lib/ returns these, tool_exit_code maps them):
 *   -EINVAL, -ENOTSUP, -ERANGE, -E2BIG   wrong parameters / usage   -> 1
 *   -EBADMSG                             verification failed        -> 2
 *   -ENOMEM                              out of memory              -> 3
 *   -EMEDIUMTYPE  bad/unsupported superblock; -ENODATA too small;
 *   -ENOENT, -EACCES, -EIO, -ENOSPC, ... any file or device problem -> 4
 *   -EBUSY, -EAGAIN                      image in use (locked)      -> 5
 *   -EINTR                               interrupted by a signal    -> 130
 */
#ifndef DMT_TOOL_COMMON_H
#define DMT_TOOL_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dmt/progress.h>

enum {
	TOOL_EXIT_OK = 0,
	TOOL_EXIT_USAGE = 1,
	TOOL_EXIT_VERIFY = 2,
	TOOL_EXIT_NOMEM = 3,
	TOOL_EXIT_DEVICE = 4,
	TOOL_EXIT_BUSY = 5,
	TOOL_EXIT_SIGNAL = 130,
};

/* Text for --help / man pages. */
#define TOOL_EXIT_CODES_HELP                                                  \
	"Exit codes: 0 success; 1 wrong parameters or usage; 2 verification "  \
	"failed;\n  3 out of memory; 4 file or device problem (missing, "      \
	"unreadable, too small,\n  bad or unsupported superblock, I/O error); " \
	"5 image in use (locked).\n"

extern const char *tool_name;	/* "verity-tool", set by main() */
extern int tool_verbosity;	/* -1 quiet, 0 normal, 1 -v, 2 --debug */

int tool_exit_code(int err);
/* "tool: message\n" on stderr (always; errors are never quietened). */
void tool_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Informational text on stderr, suppressed by -q. */
void tool_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Only with -v / --debug. */
void tool_verbose(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tool_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "tool: PATH: what: strerror\n" for a failed library call. */
void tool_err_errno(const char *path, const char *what, int err);

/* Parsing; all return 0 or -EINVAL. */
int tool_parse_u64(const char *s, uint64_t *out);	/* plain integer */
/* N[S|K|M|G|T|KiB..|KB..]: S = 512-byte sectors, K.. powers of 1024,
 * KB.. powers of 1000 (integritysetup's rules). */
int tool_parse_size(const char *s, uint64_t *out);
/* Hex string (either case, even length) into a new buffer; "-" or "" is
 * empty.  *out is malloc'ed (NULL when empty). */
int tool_parse_hex(const char *s, uint8_t **out, size_t *len);
void tool_hex(const uint8_t *p, size_t len, char *out /* 2*len+1 */);
/* Reads a whole key file (at most max bytes; exactly want bytes when
 * want != 0). */
int tool_read_key_file(const char *path, size_t want, size_t max,
		       uint8_t **out, size_t *len);
/* HMAC-SHA256(key=seed, label) truncated/extended-by-counter is NOT
 * needed: out_len <= 32. */
int tool_seed_derive(const char *seed, const char *label, uint8_t *out,
		     size_t out_len);
/* --seed uuid: first 16 bytes of HMAC-SHA256(seed, label), RFC 4122
 * version 4 / variant bits set. */
int tool_seed_uuid(const char *seed, const char *label, uint8_t uuid[16]);

/* Engine: --engine wins over $DMT_ENGINE; the spec is NAME or
 * PRIMITIVE=NAME[,...] (<dmt/hash.h>).  Checks it, prints the error itself
 * and returns an exit code (0 ok).  --list-engines output to stdout. */
int tool_engine_setup(const char *engine_opt);
/* What tool_engine_setup() accepted (NULL: none): every library params
 * struct's `engine` gets this. */
const char *tool_engine_spec(void);
void tool_list_engines(void);

/* Threads: 0 means default (affinity mask and cgroup quota). */
unsigned int tool_threads(long opt);

/*
 * Progress.  cryptsetup's line on stderr when it is a terminal (redrawn
 * every 0.5 s), a new line every `frequency` seconds when frequency > 0,
 * or one JSON object per line (--progress-json) on stderr.  Also checks
 * the interrupt flag so SIGINT/SIGTERM abort cleanly (-EINTR).
 */
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

#endif /* DMT_TOOL_COMMON_H */
