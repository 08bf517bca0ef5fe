// SPDX-License-Identifier: MIT
/* The one progress printer (cryptsetup's line, --progress-frequency
 * lines, --progress-json objects) and the signals that interrupt it. */
#include "tools/common/cli.h"
#include "tools/common/json.h"
#include "tools/common/progress.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- signals ---- */

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

void tool_install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

bool tool_interrupted(void)
{
	return interrupted != 0;
}

/* ---- progress (cryptsetup's shapes, on stderr) ---- */

/* A line redrawn with '\r' is on the terminal, without its newline. */
static bool line_shown;

void tool_progress_clear(int fd)
{
	if (!line_shown || (fd != STDERR_FILENO && !isatty(fd)))
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	line_shown = false;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void fmt_bytes(uint64_t bytes, double *val, const char **unit)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int i = 0;

	while (v >= 1024.0 && i < 4) {
		v /= 1024.0;
		i++;
	}
	*val = v;
	*unit = units[i];
}

/* mm"m"ss"s", HHhMMmSSs above 90 minutes, "N days" above 36 hours */
static void fmt_time(double secs, char *buf, size_t size)
{
	unsigned long long s = (unsigned long long)(secs + 0.5);

	if (s > 36ull * 3600)
		snprintf(buf, size, "%llu days", s / 86400);
	else if (s > 90ull * 60)
		snprintf(buf, size, "%02lluh%02llum%02llus", s / 3600,
			 s / 60 % 60, s % 60);
	else
		snprintf(buf, size, "%02llum%02llus", s / 60, s % 60);
}

void tool_progress_init(struct tool_progress *p, const char *device,
			const char *verb, int frequency, bool json)
{
	memset(p, 0, sizeof(*p));
	p->device = device;
	p->verb = verb ? verb : "processed";
	p->frequency = frequency;
	p->json = json;
	p->enabled = json || frequency > 0 ||
		     (tool_verbosity >= 0 && isatty(STDERR_FILENO));
	p->start_ns = now_ns();
}

/* cryptsetup's --progress-json line (numbers as strings, as it writes
 * them); the device name by the JSON rule of every tool (json.c). */
static void progress_json(const char *device, uint64_t done, uint64_t total,
			  double speed, double eta, double secs)
{
	struct json_object *j = json_object_new_object();
	char num[5][32];

	snprintf(num[0], sizeof(num[0]), "%" PRIu64, done);
	snprintf(num[1], sizeof(num[1]), "%" PRIu64, total);
	snprintf(num[2], sizeof(num[2]), "%.0f", speed);
	snprintf(num[3], sizeof(num[3]), "%.0f", eta * 1000);
	snprintf(num[4], sizeof(num[4]), "%.0f", secs * 1000);
	cli_json_add_str(j, "device", device ? device : "");
	cli_json_add_str(j, "device_bytes", num[0]);
	cli_json_add_str(j, "device_size", num[1]);
	cli_json_add_str(j, "speed", num[2]);
	cli_json_add_str(j, "eta_ms", num[3]);
	cli_json_add_str(j, "time_ms", num[4]);
	fprintf(stderr, "%s\n",
		json_object_to_json_string_ext(
			j, JSON_C_TO_STRING_PLAIN |
				   JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(j);
}

static void progress_print(struct tool_progress *p, uint64_t done,
			   uint64_t total, uint64_t t)
{
	double secs = (double)(t - p->start_ns) / 1e9;
	double speed = secs > 0 ? (double)done / secs : 0;
	double eta = speed > 0 ? (double)(total - done) / speed : 0;
	double dv, sv;
	const char *du, *su;
	char etabuf[32];

	if (p->json) {
		progress_json(p->device, done, total, speed, eta, secs);
		return;
	}
	fmt_bytes(done, &dv, &du);
	fmt_bytes((uint64_t)speed, &sv, &su);
	fmt_time(eta, etabuf, sizeof(etabuf));
	fprintf(stderr,
		"%sProgress: %5.1f%%, ETA %s, %4.0f %s %s, speed %5.1f %s/s%s",
		p->frequency ? "" : "\r\033[2K",
		total ? 100.0 * (double)done / (double)total : 100.0, etabuf,
		dv, du, p->verb, sv, su, p->frequency ? "\n" : "");
	p->printed = true;
	line_shown = !p->frequency;
}

int tool_progress_cb(void *ctx, uint64_t done, uint64_t total)
{
	struct tool_progress *p = ctx;
	uint64_t t, every;

	if (interrupted)
		return -EINTR;
	if (!p || !p->enabled)
		return 0;
	p->total = total;
	p->last_done = done;
	t = now_ns();
	every = p->frequency > 0 ? (uint64_t)p->frequency * 1000000000ull
				 : 500000000ull;
	if (t - p->last_ns < every && done < total)
		return 0;
	p->last_ns = t;
	progress_print(p, done, total, t);
	return 0;
}

void tool_progress_finish(struct tool_progress *p, bool ok)
{
	double secs, speed, dv, sv;
	const char *du, *su;
	char tbuf[32];

	if (!p->enabled || p->json)
		return;
	if (!p->printed && p->frequency == 0)
		return;	/* finished before the first redraw: stay quiet */
	if (!p->frequency)
		tool_progress_clear(STDERR_FILENO);
	if (!ok) {
		fputs(interrupted ? "Interrupted.\n" : "", stderr);
		return;
	}
	secs = (double)(now_ns() - p->start_ns) / 1e9;
	speed = secs > 0 ? (double)p->last_done / secs : 0;
	fmt_bytes(p->last_done, &dv, &du);
	fmt_bytes((uint64_t)speed, &sv, &su);
	fmt_time(secs, tbuf, sizeof(tbuf));
	fprintf(stderr, "Finished, time %s, %.0f %s %s, speed %5.1f %s/s\n",
		tbuf, dv, du, p->verb, sv, su);
}

struct dmt_progress tool_progress_hook(struct tool_progress *p)
{
	struct dmt_progress h = { .fn = tool_progress_cb, .ctx = p };

	return h;
}
