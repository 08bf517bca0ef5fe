// SPDX-License-Identifier: MIT
/*
 * The tools under I/O faults and signals (suite "faults").  Faults are
 * injected into the real binaries through DMT_IO_FAULT (lib/io.h): a full
 * disk, I/O errors, a short write, a failing fsync or open.  Every failure
 * must exit 4 with one stderr line naming the file that failed, leave the
 * inputs untouched and no new output (nor temporary file) behind; an
 * interrupted in-place command must leave a state the tool can finish.
 * SIGINT/SIGTERM during build/format must exit 130 and leave no output
 * under its final name.
 */
#include <criterion/criterion.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>

#include "tests/support/badinput.h"

#define VT "verity-tool"
#define IT "integrity-tool"
#define UUID "01234567-89ab-4cde-8f01-23456789abcd"

/* DMT_IO_FAULT exists only in the test builds of the tools. */
static const char *vt(void)
{
	return th_test_tool("verity-tool");
}

static const char *it(void)
{
	return th_test_tool("integrity-tool");
}

/* A file of non-zero, non-random bytes (all of it hashed, fast to make). */
static void write_pattern_file(const char *path, uint64_t size)
{
	size_t chunk = 1 << 20;
	uint8_t *buf = malloc(chunk);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	cr_assert(buf && fd >= 0);
	for (uint64_t off = 0; off < size; off += chunk) {
		memset(buf, (int)(0x41 + off / chunk % 26), chunk);
		cr_assert_eq(write(fd, buf, chunk), (ssize_t)chunk);
	}
	close(fd);
	free(buf);
}

/* Runs cmd with DMT_IO_FAULT=fault. */
static void run_fault(struct bi_res *r, const char *dir, const char *fault,
		      const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void run_fault(struct bi_res *r, const char *dir, const char *fault,
		      const char *fmt, ...)
{
	struct bi_opts o;
	char *env;
	va_list ap;

	memset(&o, 0, sizeof(o));
	cr_assert(asprintf(&env, "DMT_IO_FAULT=%s", fault) >= 0);
	o.env[0] = env;
	va_start(ap, fmt);
	bi_vrun(r, dir, &o, fmt, ap);
	va_end(ap);
	free(env);
}

/* ---- the hook itself ---- */

/* Without the variable, or with a malformed one, nothing fails; with a
 * matching one the Nth operation does (this is what the tests rely on). */
Test(faults, hook_reaches_the_tools)
{
	static const char *const inert[] = {
		"", "garbage", "data.img:write", "no_such_file:write:1:ENOSPC",
		"data.img:read:0:EIO", "data.img:read:1:NOSUCHERR",
		"data.img:fly:1:EIO", "data.img:read:1:short",
	};
	char *dir = th_mkdtemp(), *data = th_path(dir, "data.img");
	struct bi_res r;

	th_write_random_file(data, 64 << 10, 1);
	for (size_t i = 0; i < sizeof(inert) / sizeof(inert[0]); i++) {
		run_fault(&r, dir, inert[i], "%s build %s %s/h%zu.hash", vt(),
			  data, dir, i);
		cr_expect_eq(r.status, 0, "DMT_IO_FAULT='%s' broke: %s",
			     inert[i], r.err);
		bi_free(&r);
	}
	run_fault(&r, dir, "data.img:read:1:EIO", "%s build %s %s/x.hash",
		  vt(), data, dir);
	bi_expect_fail(&r, VT, 4, NULL, 0);
	cr_expect(strstr(r.err, "Input/output error"), "%s", r.err);
	bi_free(&r);
	run_fault(&r, dir, "data.img:read:1:5", "%s build %s %s/y.hash",
		  vt(), data, dir);
	cr_expect(strstr(r.err, "Input/output error"), "%s", r.err);
	bi_free(&r);
	th_rmtree(dir);
	free(data);
	free(dir);
}

/* ---- verity-tool ---- */

struct vfix {
	char *dir, *data, *hash;
	char root[160];
};

static void vfix_init(struct vfix *f)
{
	struct bi_res r;

	f->dir = th_mkdtemp();
	f->data = th_path(f->dir, "data.img");
	f->hash = th_path(f->dir, "hash.img");
	/* 8 MiB: more than one I/O chunk, a 3-level tree at 512 bytes */
	th_write_random_file(f->data, 8 << 20, 77);
	bi_run(&r, f->dir, NULL, "%s build --salt - --uuid %s %s %s", vt(),
	       UUID, f->data, f->hash);
	bi_expect_ok(&r);
	bi_root_hash(r.out, f->root, sizeof(f->root));
	bi_free(&r);
}

static void vfix_fini(struct vfix *f)
{
	th_rmtree(f->dir);
	free(f->dir);
	free(f->data);
	free(f->hash);
}

/*
 * Every write (with each way of failing) up to the first one that does not
 * happen, then a failing fsync and open.  The command is run through
 * "%s" with the fault; `fail` checks each failure, `done` is called
 * after a run that succeeded (the fault came too late).
 */
static const char *const write_errs[] = { "ENOSPC", "EIO", "short",
					  "EDQUOT" };
#define MAX_NTH 12

struct sweep {
	const char *dir;
	const char *file;	/* the fault's path substring */
	const char *cmd;
	void (*fail)(struct sweep *s, struct bi_res *r, const char *fault);
	void (*done)(struct sweep *s);
	void *ctx;
	unsigned int failures;
};

static void sweep_one(struct sweep *s, const char *fault, bool *failed)
{
	struct bi_res r;

	cr_log_info("DMT_IO_FAULT=%s", fault);
	run_fault(&r, s->dir, fault, "%s", s->cmd);
	cr_assert_eq(r.sig, 0, "[%s] with %s: signal %d", s->cmd, fault,
		     r.sig);
	*failed = r.rc != 0;
	if (*failed) {
		s->fail(s, &r, fault);
		s->failures++;
	} else if (s->done) {
		s->done(s);
	}
	bi_free(&r);
}

static void sweep_run(struct sweep *s)
{
	char fault[256];
	bool failed;

	for (size_t e = 0; e < sizeof(write_errs) / sizeof(write_errs[0]);
	     e++) {
		unsigned int n;

		for (n = 1; n <= MAX_NTH; n++) {
			snprintf(fault, sizeof(fault), "%s:write:%u:%s",
				 s->file, n, write_errs[e]);
			sweep_one(s, fault, &failed);
			if (!failed)
				break;
		}
		cr_expect(n > 1, "[%s] the first write to %s never failed",
			  s->cmd, s->file);
	}
	snprintf(fault, sizeof(fault), "%s:sync:1:EIO", s->file);
	sweep_one(s, fault, &failed);
	cr_expect(failed, "[%s] a failing fsync went unnoticed", s->cmd);
	snprintf(fault, sizeof(fault), "%s:open:1:EIO", s->file);
	sweep_one(s, fault, &failed);
	cr_expect(failed, "[%s] a failing open went unnoticed", s->cmd);
}

/* A new output: nothing under the final name, no temporary file, the
 * inputs as they were. */
struct new_ctx {
	const char *tool, *name;
	char *state;
};

static void new_fail(struct sweep *s, struct bi_res *r, const char *fault)
{
	struct new_ctx *c = s->ctx;

	bi_expect_fail(r, c->tool, 4, c->name, 0);
	bi_expect_absent(s->dir, c->name);
	bi_expect_state(s->dir, NULL, strdup(c->state), r);
}

static void new_done(struct sweep *s)
{
	struct new_ctx *c = s->ctx;
	char *p = th_path(s->dir, c->name);

	cr_assert_eq(unlink(p), 0);
	free(p);
}

Test(faults, verity_build_new_hash)
{
	struct new_ctx c = { VT, "new.hash", NULL };
	struct sweep s = { 0 };
	struct vfix f;
	char *cmd;

	vfix_init(&f);
	cr_assert(asprintf(&cmd, "%s build %s %s/new.hash", vt(), f.data,
			   f.dir) >= 0);
	c.state = bi_dir_state(f.dir, NULL);
	s = (struct sweep){ f.dir, "new.hash", cmd, new_fail, new_done, &c,
			    0 };
	sweep_run(&s);
	free(c.state);
	free(cmd);
	vfix_fini(&f);
}

/* A tree rebuilt in place: the data is untouched and a plain rebuild
 * repairs whatever the failure left. */
static void in_place_fail(struct sweep *s, struct bi_res *r,
			  const char *fault)
{
	struct vfix *f = s->ctx;
	struct bi_res v;

	bi_expect_fail(r, VT, 4, f->hash, 0);
	bi_run(&v, f->dir, NULL, "%s build --salt - --uuid %s %s %s", vt(),
	       UUID, f->data, f->hash);
	bi_expect_ok(&v);
	bi_free(&v);
	bi_run(&v, f->dir, NULL, "%s verify %s %s %s", vt(), f->data, f->hash,
	       f->root);
	bi_expect_ok(&v);
	bi_free(&v);
}

Test(faults, verity_build_in_place)
{
	struct sweep s = { 0 };
	struct vfix f;
	char *cmd, *before;

	vfix_init(&f);
	cr_assert(asprintf(&cmd, "%s build --salt - --uuid %s %s %s", vt(),
			   UUID, f.data, f.hash) >= 0);
	before = bi_dir_state(f.dir, NULL);
	s = (struct sweep){ f.dir, "hash.img", cmd, in_place_fail, NULL, &f,
			    0 };
	sweep_run(&s);
	bi_expect_state(f.dir, NULL, before, NULL);
	free(cmd);
	vfix_fini(&f);
}

/* A read error is reported on the file that failed. */
Test(faults, verity_read_errors)
{
	struct vfix f;
	struct bi_res r;
	char *before;

	vfix_init(&f);
	before = bi_dir_state(f.dir, NULL);
	run_fault(&r, f.dir, "data.img:read:1:EIO", "%s build %s %s/new.hash",
		  vt(), f.data, f.dir);
	bi_expect_fail(&r, VT, 4, f.data, 0);
	bi_expect_absent(f.dir, "new.hash");
	bi_free(&r);
	run_fault(&r, f.dir, "data.img:read:2:EIO", "%s verify %s %s %s",
		  vt(), f.data, f.hash, f.root);
	bi_expect_fail(&r, VT, 4, f.data, 0);
	bi_free(&r);
	run_fault(&r, f.dir, "hash.img:read:2:EIO", "%s verify %s %s %s",
		  vt(), f.data, f.hash, f.root);
	bi_expect_fail(&r, VT, 4, f.hash, 0);
	bi_free(&r);
	run_fault(&r, f.dir, "hash.img:read:1:EIO", "%s dump %s", vt(),
		  f.hash);
	bi_expect_fail(&r, VT, 4, f.hash, 0);
	bi_free(&r);
	run_fault(&r, f.dir, "hash.img:open:1:EACCES", "%s verify %s %s %s",
		  vt(), f.data, f.hash, f.root);
	bi_expect_fail(&r, VT, 4, f.hash, 0);
	bi_expect_state(f.dir, NULL, before, &r);
	bi_free(&r);
	vfix_fini(&f);
}

/* The root hash file cannot be written (a full disk): the command fails
 * naming it, and the new tree does not appear either. */
Test(faults, verity_root_hash_file_full)
{
	struct vfix f;
	struct bi_res r;
	char *before;

	vfix_init(&f);
	before = bi_dir_state(f.dir, NULL);
	bi_run(&r, f.dir, NULL, "%s build --root-hash-file /dev/full %s "
	       "%s/new.hash", vt(), f.data, f.dir);
	bi_expect_fail(&r, VT, 4, "/dev/full", 0);
	bi_expect_absent(f.dir, "new.hash");
	bi_expect_state(f.dir, NULL, before, &r);
	bi_free(&r);
	vfix_fini(&f);
}

/* ---- integrity-tool ---- */

struct ifix {
	char *dir, *img, *payload;
};

static void ifix_init(struct ifix *f)
{
	struct bi_res r;

	f->dir = th_mkdtemp();
	f->img = th_path(f->dir, "image.img");
	f->payload = th_path(f->dir, "payload.bin");
	th_write_random_file(f->payload, 6 << 20, 5);
	bi_run(&r, f->dir, NULL, "%s format --device-size 8M --data-from %s "
	       "%s", it(), f->payload, f->img);
	bi_expect_ok(&r);
	bi_free(&r);
}

static void ifix_fini(struct ifix *f)
{
	th_rmtree(f->dir);
	free(f->dir);
	free(f->img);
	free(f->payload);
}

static void expect_check_ok(struct ifix *f, const char *img)
{
	struct bi_res r;

	bi_run(&r, f->dir, NULL, "%s check %s", it(), img);
	bi_expect_ok(&r);
	bi_free(&r);
}

Test(faults, integrity_format_new_image)
{
	struct new_ctx c = { IT, "new.img", NULL };
	struct sweep s = { 0 };
	struct ifix f;
	char *cmd;

	ifix_init(&f);
	cr_assert(asprintf(&cmd, "%s format --device-size 8M --data-from %s "
			   "%s/new.img", it(), f.payload, f.dir) >= 0);
	c.state = bi_dir_state(f.dir, NULL);
	s = (struct sweep){ f.dir, "new.img", cmd, new_fail, new_done, &c,
			    0 };
	sweep_run(&s);
	free(c.state);
	free(cmd);
	ifix_fini(&f);
}

/* A failed in-place format leaves an image that recalculate (or, when
 * it failed before the journal was written, format again) finishes. */
static void format_in_place_fail(struct sweep *s, struct bi_res *r,
				 const char *fault)
{
	struct ifix *f = s->ctx;
	struct bi_res v;

	bi_expect_fail(r, IT, 4, f->img, 0);
	bi_run(&v, f->dir, NULL, "%s recalculate %s", it(), f->img);
	if (v.status) {
		cr_log_info("%s: recalculate refused (%s), formatting again",
			    fault, bi_first_line(v.err));
		bi_free(&v);
		bi_run(&v, f->dir, NULL, "%s format --batch-mode --data-from %s %s",
		       it(), f->payload, f->img);
		bi_expect_ok(&v);
	}
	bi_free(&v);
	expect_check_ok(f, f->img);
}

Test(faults, integrity_format_in_place)
{
	struct sweep s = { 0 };
	struct ifix f;
	char *cmd, *before;

	ifix_init(&f);
	/* --batch-mode: no "already contains data" warning before the
	 * one line a failure prints */
	cr_assert(asprintf(&cmd, "%s format --batch-mode --data-from %s %s",
			   it(), f.payload, f.img) >= 0);
	before = bi_dir_state(f.dir, "image.img");
	s = (struct sweep){ f.dir, "image.img", cmd, format_in_place_fail,
			    NULL, &f, 0 };
	sweep_run(&s);
	bi_expect_state(f.dir, "image.img", before, NULL);
	free(cmd);
	ifix_fini(&f);
}

Test(faults, integrity_read_errors)
{
	struct ifix f;
	struct bi_res r;
	char *before;

	ifix_init(&f);
	before = bi_dir_state(f.dir, NULL);
	for (int n = 1; n <= 4; n++) {
		char fault[64];

		snprintf(fault, sizeof(fault), "image.img:read:%d:EIO", n);
		run_fault(&r, f.dir, fault, "%s check %s", it(), f.img);
		bi_expect_fail(&r, IT, 4, f.img, 0);
		bi_free(&r);
	}
	run_fault(&r, f.dir, "image.img:read:1:EIO", "%s dump %s", it(),
		  f.img);
	bi_expect_fail(&r, IT, 4, f.img, 0);
	bi_free(&r);
	/* the payload fails, not the image */
	run_fault(&r, f.dir, "payload.bin:read:1:EIO", "%s format "
		  "--device-size 8M --data-from %s %s/new.img", it(),
		  f.payload, f.dir);
	bi_expect_fail(&r, IT, 4, f.payload, 0);
	bi_expect_absent(f.dir, "new.img");
	bi_free(&r);
	bi_expect_state(f.dir, NULL, before, NULL);
	ifix_fini(&f);
}

/* recalculate failing anywhere is finished by running it again. */
static void recalc_fail(struct sweep *s, struct bi_res *r, const char *fault)
{
	struct ifix *f = s->ctx;
	struct bi_res v;

	bi_expect_fail(r, IT, 4, f->img, 0);
	bi_run(&v, f->dir, NULL, "%s recalculate %s", it(), f->img);
	bi_expect_ok(&v);
	bi_free(&v);
	expect_check_ok(f, f->img);
}

Test(faults, integrity_recalculate)
{
	struct sweep s = { 0 };
	struct ifix f;
	char *cmd;

	ifix_init(&f);
	cr_assert(asprintf(&cmd, "%s recalculate %s", it(), f.img) >= 0);
	s = (struct sweep){ f.dir, "image.img", cmd, recalc_fail, NULL, &f,
			    0 };
	sweep_run(&s);
	free(cmd);
	ifix_fini(&f);
}

Test(faults, integrity_key_file_read_error)
{
	struct ifix f;
	struct bi_res r;
	char *key, *before;

	ifix_init(&f);
	key = th_path(f.dir, "key.bin");
	th_write_random_file(key, 32, 9);
	before = bi_dir_state(f.dir, NULL);
	run_fault(&r, f.dir, "key.bin:read:1:EIO", "%s format -I hmac-sha256 "
		  "--integrity-key-file %s %s", it(), key, f.img);
	bi_expect_fail(&r, IT, 4, key, 0);
	bi_expect_state(f.dir, NULL, before, &r);
	bi_free(&r);
	free(key);
	ifix_fini(&f);
}

/* ---- signals ---- */

/*
 * Starts argv with stderr on a pipe, waits for the first progress line,
 * sends sig and returns the wait status (the child must not be killed by
 * it: the tools catch SIGINT/SIGTERM and clean up).
 */
static int run_and_signal(char *const argv[], int sig, bool *saw_progress)
{
	int ep[2], status;
	char buf[4096];
	size_t len = 0;
	bool sent = false;
	pid_t pid;

	cr_assert_eq(pipe(ep), 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(ep[1], 2);
		close(ep[0]);
		close(ep[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(ep[1]);
	*saw_progress = false;
	for (;;) {
		struct pollfd p = { ep[0], POLLIN, 0 };
		ssize_t n;

		if (poll(&p, 1, 30000) <= 0)
			break;
		n = read(ep[0], buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
		if (!sent && strstr(buf, "Progress:") && strchr(buf, '\n')) {
			*saw_progress = true;
			kill(pid, sig);
			sent = true;
		}
		if (len > sizeof(buf) / 2) {
			memmove(buf, buf + len / 2, len - len / 2);
			len -= len / 2;
		}
	}
	close(ep[0]);
	if (!sent)
		kill(pid, SIGKILL);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return status;
}

static void expect_interrupted(int status, bool saw_progress)
{
	cr_assert(saw_progress, "no progress line before the end");
	cr_assert(!WIFSIGNALED(status), "killed by signal %d",
		  WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	cr_assert_eq(WEXITSTATUS(status), 130,
		     "exit %d after a signal (want 130: interrupted)",
		     WEXITSTATUS(status));
}

static void verity_signal(int sig)
{
	char *dir = th_mkdtemp(), *data = th_path(dir, "big.img");
	char *hash = th_path(dir, "big.hash"), *before;
	char *argv[] = { (char *)vt(), "build", "--threads", "1", "--engine",
			 "portable", "--progress-frequency", "1", data, hash,
			 NULL };
	bool progress;
	int status;

	/* about half a second of hashing with the portable engine */
	write_pattern_file(data, 64 << 20);
	before = bi_dir_state(dir, NULL);
	status = run_and_signal(argv, sig, &progress);
	expect_interrupted(status, progress);
	bi_expect_absent(dir, "big.hash");
	bi_expect_state(dir, NULL, before, NULL);
	th_rmtree(dir);
	free(data);
	free(hash);
	free(dir);
}

Test(faults, verity_build_sigint)
{
	verity_signal(SIGINT);
}

Test(faults, verity_build_sigterm)
{
	verity_signal(SIGTERM);
}

Test(faults, integrity_format_new_sigint)
{
	char *dir = th_mkdtemp(), *img = th_path(dir, "new.img"), *before;
	char *argv[] = { (char *)it(), "format", "--device-size", "256M",
			 "-I", "sha256", "--engine", "portable", "--threads",
			 "1", "--progress-frequency", "1", img, NULL };
	bool progress;
	int status;

	before = bi_dir_state(dir, NULL);
	status = run_and_signal(argv, SIGINT, &progress);
	expect_interrupted(status, progress);
	bi_expect_absent(dir, "new.img");
	bi_expect_state(dir, NULL, before, NULL);
	th_rmtree(dir);
	free(img);
	free(dir);
}

/* In place: the interrupted format is finished by recalculate. */
Test(faults, integrity_format_in_place_sigint)
{
	char *dir = th_mkdtemp(), *img = th_path(dir, "old.img");
	char *argv[] = { (char *)it(), "format", "-I", "sha256", "--engine",
			 "portable", "--threads", "1", "--progress-frequency",
			 "1", img, NULL };
	struct bi_res r;
	bool progress;
	int status;

	th_write_file(img, "", 0);
	cr_assert_eq(truncate(img, 256 << 20), 0);
	status = run_and_signal(argv, SIGINT, &progress);
	expect_interrupted(status, progress);
	bi_run(&r, dir, NULL, "%s check -I sha256 %s", it(), img);
	cr_expect_eq(r.sig, 0);
	bi_free(&r);
	bi_run(&r, dir, NULL, "%s recalculate -I sha256 %s", it(), img);
	bi_expect_ok(&r);
	bi_free(&r);
	bi_run(&r, dir, NULL, "%s check -I sha256 %s", it(), img);
	bi_expect_ok(&r);
	cr_expect(!strstr(r.out, "recalculating"), "%s", r.out);
	bi_free(&r);
	th_rmtree(dir);
	free(img);
	free(dir);
}

Test(faults, integrity_recalculate_sigint)
{
	char *dir = th_mkdtemp(), *img = th_path(dir, "r.img");
	char *argv[] = { (char *)it(), "recalculate", "-I", "sha256",
			 "--engine", "portable", "--threads", "1",
			 "--progress-frequency", "1", img, NULL };
	struct bi_res r;
	bool progress;
	int status;

	bi_run(&r, dir, NULL, "%s format -I sha256 --device-size 256M %s",
	       it(), img);
	bi_expect_ok(&r);
	bi_free(&r);
	status = run_and_signal(argv, SIGINT, &progress);
	expect_interrupted(status, progress);
	bi_run(&r, dir, NULL, "%s recalculate -I sha256 %s", it(), img);
	bi_expect_ok(&r);
	bi_free(&r);
	bi_run(&r, dir, NULL, "%s check -I sha256 %s", it(), img);
	bi_expect_ok(&r);
	cr_expect(!strstr(r.out, "recalculating"), "%s", r.out);
	bi_free(&r);
	th_rmtree(dir);
	free(img);
	free(dir);
}
