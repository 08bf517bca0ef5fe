// SPDX-License-Identifier: MIT
/*
 * Test hooks (lib/common/testhooks.h): I/O fault injection, set by unit
 * tests directly or, for the real tools, by the DMT_IO_FAULT debug
 * variable.  Unarmed, a check costs one relaxed load.  Built only with
 * -DDMT_TEST_HOOKS (the test binaries and $(O)/test-tools/).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/common/testhooks.h"

#ifdef DMT_TEST_HOOKS

static struct {
	pthread_mutex_t lock;
	bool armed;
	char path[PATH_MAX];
	enum dmt_io_op op;
	unsigned long nth, seen;
	int err;
	bool short_write;
} fault = { .lock = PTHREAD_MUTEX_INITIALIZER };

void dmt_io_fault_set(const char *path_substr, enum dmt_io_op op,
		      unsigned long nth, int err, bool short_write)
{
	pthread_mutex_lock(&fault.lock);
	snprintf(fault.path, sizeof(fault.path), "%s", path_substr);
	fault.op = op;
	fault.nth = nth ? nth : 1;
	fault.seen = 0;
	fault.err = err > 0 ? -err : err;
	fault.short_write = short_write;
	fault.armed = true;
	pthread_mutex_unlock(&fault.lock);
}

void dmt_io_fault_clear(void)
{
	pthread_mutex_lock(&fault.lock);
	fault.armed = false;
	pthread_mutex_unlock(&fault.lock);
}

/*
 * DMT_IO_FAULT="substr:op:nth:err" arms the hook in a whole process, so
 * tests can make the real tools fail.  op is read, write, sync or open;
 * err an errno name (ENOSPC, EIO, ...), a number, or "short" for a write
 * cut short.  The last three fields are split off from the right, so the
 * path part may hold ':'.  Malformed values are ignored.
 */
static const struct {
	const char *name;
	int err;
} fault_errnos[] = {
	{ "ENOSPC", ENOSPC }, { "EIO", EIO }, { "EACCES", EACCES },
	{ "EPERM", EPERM }, { "EROFS", EROFS }, { "ENOMEM", ENOMEM },
	{ "EBUSY", EBUSY }, { "EFBIG", EFBIG }, { "EDQUOT", EDQUOT },
	{ "ENOENT", ENOENT }, { "EINTR", EINTR }, { "ENODATA", ENODATA },
};

static bool fault_env_num(const char *s, unsigned long *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*out = strtoul(s, &end, 10);
	return !errno && !*end;
}

static void fault_env_parse(void)
{
	static const char *const ops[] = { "read", "write", "sync", "open" };
	const char *env = getenv("DMT_IO_FAULT");
	char buf[PATH_MAX + 64], *f[3], *p;
	unsigned long nth, num;
	bool short_write = false;
	int op = -1, err = 0;
	size_t i;

	if (!env || !*env || strlen(env) >= sizeof(buf))
		return;
	strcpy(buf, env);
	for (i = 0; i < 3; i++) {
		p = strrchr(buf, ':');
		if (!p)
			return;
		*p = '\0';
		f[2 - i] = p + 1;
	}
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(f[0], ops[i]))
			op = (int)i;
	if (op < 0 || !fault_env_num(f[1], &nth) || !nth)
		return;
	if (!strcmp(f[2], "short")) {
		short_write = true;
	} else if (fault_env_num(f[2], &num) && num && num < 4096) {
		err = (int)num;
	} else {
		for (i = 0; i < sizeof(fault_errnos) / sizeof(fault_errnos[0]);
		     i++)
			if (!strcmp(f[2], fault_errnos[i].name))
				err = fault_errnos[i].err;
	}
	if (!err && !short_write)
		return;
	if (short_write && op != DMT_IO_WRITE)
		return;
	dmt_io_fault_set(buf, (enum dmt_io_op)op, nth, err, short_write);
}

static pthread_once_t fault_env_once = PTHREAD_ONCE_INIT;

int dmt_io_fault_check(const char *path, enum dmt_io_op op)
{
	int ret = 0;

	pthread_once(&fault_env_once, fault_env_parse);
	if (!__atomic_load_n(&fault.armed, __ATOMIC_RELAXED))
		return 0;
	pthread_mutex_lock(&fault.lock);
	if (fault.armed && fault.op == op && path && strstr(path, fault.path) &&
	    ++fault.seen == fault.nth) {
		ret = fault.short_write ? 1 : fault.err;
		fault.armed = false;
	}
	pthread_mutex_unlock(&fault.lock);
	return ret;
}
#endif /* DMT_TEST_HOOKS */
