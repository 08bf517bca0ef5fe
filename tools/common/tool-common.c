// SPDX-License-Identifier: MIT
/* What both CLIs share; see tool-common.h. */
#include "tools/common/tool-common.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <dmt/hash.h>
#include <dmt/io.h>
#include <dmt/threads.h>

const char *tool_name = "dmt";
int tool_verbosity;

int tool_exit_code(int err)
{
	switch (err) {
	case 0:
		return TOOL_EXIT_OK;
	case -EINVAL:
	case -ENOTSUP:
	case -ERANGE:
	case -E2BIG:
		return TOOL_EXIT_USAGE;
	case -EBADMSG:
		return TOOL_EXIT_VERIFY;
	case -ENOMEM:
		return TOOL_EXIT_NOMEM;
	case -EBUSY:
	case -EAGAIN:
		return TOOL_EXIT_BUSY;
	case -EINTR:
		return TOOL_EXIT_SIGNAL;
	default:
		/* missing, unreadable, too small, bad superblock, I/O */
		return TOOL_EXIT_DEVICE;
	}
}

static void vmsg(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", tool_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void tool_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

void tool_info(const char *fmt, ...)
{
	va_list ap;

	if (tool_verbosity < 0)
		return;
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

/* ---- parsing ---- */

int tool_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int tool_parse_size(const char *s, uint64_t *out)
{
	static const struct {
		const char *suffix;
		uint64_t mul;
	} units[] = {
		{ "", 1 },	      { "S", 512 },	   { "s", 512 },
		{ "K", 1ull << 10 },  { "KiB", 1ull << 10 }, { "k", 1ull << 10 },
		{ "M", 1ull << 20 },  { "MiB", 1ull << 20 }, { "m", 1ull << 20 },
		{ "G", 1ull << 30 },  { "GiB", 1ull << 30 }, { "g", 1ull << 30 },
		{ "T", 1ull << 40 },  { "TiB", 1ull << 40 }, { "t", 1ull << 40 },
		{ "KB", 1000ull },    { "MB", 1000000ull },
		{ "GB", 1000000000ull }, { "TB", 1000000000000ull },
	};
	char *end;
	unsigned long long v;
	size_t i;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		if (v > UINT64_MAX / units[i].mul)
			return -EINVAL;
		*out = v * units[i].mul;
		return 0;
	}
	return -EINVAL;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int tool_parse_hex(const char *s, uint8_t **out, size_t *len)
{
	size_t n = strlen(s), i;
	uint8_t *buf;

	*out = NULL;
	*len = 0;
	if (!strcmp(s, "-") || !n)
		return 0;
	if (n % 2)
		return -EINVAL;
	buf = malloc(n / 2);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < n / 2; i++) {
		int hi = hexval((unsigned char)s[2 * i]);
		int lo = hexval((unsigned char)s[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			free(buf);
			return -EINVAL;
		}
		buf[i] = (uint8_t)(hi << 4 | lo);
	}
	*out = buf;
	*len = n / 2;
	return 0;
}

void tool_hex(const uint8_t *p, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * len] = '\0';
}

int tool_read_key_file(const char *path, size_t want, size_t max,
		       uint8_t **out, size_t *len)
{
	struct dmt_file f;
	uint64_t size;
	uint8_t *buf = NULL;
	size_t n;
	int err;

	*out = NULL;
	*len = 0;
	err = dmt_file_open(&f, path, DMT_OPEN_READ);
	if (err)
		return err;
	err = dmt_file_size(&f, &size);
	if (err)
		goto out;
	n = want ? want : (size_t)size;
	if (size < n) {
		err = -ENODATA;
		goto out;
	}
	if (!n || n > max) {
		err = -EINVAL;
		goto out;
	}
	buf = malloc(n);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	err = dmt_pread_full(&f, buf, n, 0);
	if (err)
		goto out;
	*out = buf;
	*len = n;
	buf = NULL;
out:
	free(buf);
	dmt_file_close(&f);
	return err;
}

int tool_seed_derive(const char *seed, const char *label, uint8_t *out,
		     size_t out_len)
{
	uint8_t mac[DMT_DIGEST_MAX];
	size_t ds;
	int err;

	err = dmt_hash_oneshot("hmac(sha256)", seed, strlen(seed), label,
			       strlen(label), mac, &ds);
	if (err)
		return err;
	if (out_len > ds)
		return -EINVAL;
	memcpy(out, mac, out_len);
	return 0;
}

int tool_seed_uuid(const char *seed, const char *label, uint8_t uuid[16])
{
	int err = tool_seed_derive(seed, label, uuid, 16);

	if (err)
		return err;
	uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x40);	/* version 4 */
	uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80);	/* RFC 4122 variant */
	return 0;
}

/* ---- engines, threads ---- */

static const char *engine_spec;

/* The validated --engine / $DMT_ENGINE choice, for the library's params
 * (NULL: default dispatch). */
const char *tool_engine_spec(void)
{
	return engine_spec;
}

int tool_engine_setup(const char *engine_opt)
{
	const char *spec = engine_opt;
	const char *src = "--engine";
	char bad[96];
	int err;

	if (!spec) {
		spec = getenv(DMT_ENGINE_ENV);
		src = DMT_ENGINE_ENV;
	}
	if (!spec || !*spec)
		return 0;
	err = dmt_engine_spec_check(spec, bad, sizeof(bad));
	if (err == -ENOENT) {
		tool_err("%s: unknown engine '%s' (see --list-engines)", src,
			 bad);
		return TOOL_EXIT_USAGE;
	}
	if (err == -ENOTSUP) {
		tool_err("%s: engine '%s' cannot run on this CPU (see --list-engines)",
			 src, bad);
		return TOOL_EXIT_USAGE;
	}
	if (err == -EINVAL) {
		tool_err("%s: '%s' is not NAME or PRIMITIVE=NAME with a known "
			 "primitive (see --list-engines)", src, bad);
		return TOOL_EXIT_USAGE;
	}
	if (err) {
		tool_err("%s: %s", src, dmt_strerror(err));
		return tool_exit_code(err);
	}
	engine_spec = spec;
	tool_debug("engine forced: %s", spec);
	return 0;
}

/* One line per (primitive, candidate backend): --engine takes ENGINE
 * (column 1) or PRIMITIVE=ENGINE (columns 4 and 1). */
void tool_list_engines(void)
{
	struct dmt_engine_info info[64];
	size_t n = dmt_engine_list(info, 64), i;

	if (n > 64)
		n = 64;
	printf("%-12s %-5s %-11s %-9s %s\n", "ENGINE", "LANES", "STATUS",
	       "PRIMITIVE", "ALGORITHMS");
	for (i = 0; i < n; i++)
		printf("%-12s %-5u %-11s %-9s %s\n", info[i].name,
		       info[i].lanes,
		       info[i].is_default ? "default" :
		       info[i].available ? "available" : "unavailable",
		       info[i].primitive, info[i].algs);
}

unsigned int tool_threads(long opt)
{
	if (opt > 0)
		return (unsigned int)opt;
	return dmt_default_threads();
}

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
	p->verb = verb ? verb : "written";
	p->frequency = frequency;
	p->json = json;
	p->enabled = json || frequency > 0 ||
		     (tool_verbosity >= 0 && isatty(STDERR_FILENO));
	p->start_ns = now_ns();
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
		fprintf(stderr,
			"{\"device\":\"%s\",\"device_bytes\":\"%" PRIu64
			"\",\"device_size\":\"%" PRIu64
			"\",\"speed\":\"%.0f\",\"eta_ms\":\"%.0f\",\"time_ms\":\"%.0f\"}\n",
			p->device ? p->device : "", done, total, speed,
			eta * 1000, secs * 1000);
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
		fputs("\r\033[2K", stderr);
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
