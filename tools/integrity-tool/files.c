// SPDX-License-Identifier: MIT
/*
 * integrity-tool opens the files the library works on: one file named
 * twice is refused first (a second lock on it would only say "in use"),
 * the image is locked, and a new image is written under a temporary name
 * that the library renames only on success (the rule of every tool's
 * outputs: tools/common/outfile.h).
 */
#include <errno.h>
#include <sys/stat.h>

#include <dmt/io.h>

#include "tools/common/outfile.h"
#include "tools/integrity-tool/it.h"

static int open_one(const char *path, int flags, struct dmt_file **slot,
		    const char *what)
{
	int err = dmt_file_open(path, flags, slot);

	if (err)
		tool_err_errno(path, what, err);
	return err;
}

/* One file given as two: refused before anything is opened. */
static int distinct(const char *device, const char *other, const char *what)
{
	if (!other || !dmt_same_file(device, other))
		return 0;
	tool_err("%s: %s", other, what);
	return -EINVAL;
}

/* The image or metadata device; format creates a missing one when it
 * has a size to give it. */
static int open_device(struct cli *c, int flags)
{
	struct it *it = it_of(c);
	struct dmt_integrity_params *o = &it->o;
	bool can_create = o->device_size || o->device_size_auto;
	struct stat st;
	int err;

	/* format's output: an existing file or device in place, a new one
	 * under a temporary name, never a stream (written out of order) */
	if (c->cmd == CMD_FORMAT && (can_create || !stat(it->device, &st))) {
		return tool_out_open(&o->meta, it->device,
				     TOOL_OUT_IN_PLACE | TOOL_OUT_SEEK |
					     TOOL_OUT_LOCK,
				     "cannot open the device", &o->created);
	}
	err = dmt_file_open(it->device, flags, &o->meta);
	if (!err)
		return 0;
	tool_err_errno(it->device, err == -ENOENT && c->cmd == CMD_FORMAT ?
		       "no such file (--device-size creates it)" :
		       c->cmd == CMD_DUMP ? "cannot read" :
		       "cannot open the device", err);
	return err;
}

int it_open_files(struct cli *c)
{
	struct it *it = it_of(c);
	struct dmt_integrity_params *o = &it->o;
	const char *data = cli_str(c, O_DATA_DEVICE);
	const char *payload = cli_str(c, O_DATA_FROM);
	bool rw = c->cmd == CMD_FORMAT || c->cmd == CMD_RECALC;
	int err;

	err = distinct(it->device, payload,
		       "the payload must differ from the device");
	if (!err)
		err = distinct(it->device, data,
			       "the data device must differ from the metadata device");
	if (!err && payload)
		err = open_one(payload, DMT_OPEN_READ, &o->payload,
			       "cannot read the payload");
	if (!err && data && c->cmd != CMD_FORMAT)
		err = open_device(c, (rw ? DMT_OPEN_RW : DMT_OPEN_READ) |
				     DMT_OPEN_LOCK);
	if (!err && data)
		err = open_one(data, DMT_OPEN_READ | DMT_OPEN_LOCK, &o->data,
			       "cannot open the data device");
	/* dump reads one sector: no lock, it works on a device in use */
	if (!err && !o->meta)
		err = open_device(c, c->cmd == CMD_DUMP ? DMT_OPEN_READ :
				     (rw ? DMT_OPEN_RW : DMT_OPEN_READ) |
				     DMT_OPEN_LOCK);
	return err;
}

void it_close_files(struct it *it)
{
	struct dmt_file **files[] = { &it->o.meta, &it->o.data,
				      &it->o.payload };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		dmt_file_close(*files[i]);
		*files[i] = NULL;
	}
}

bool it_device_has_data(struct dmt_file *f)
{
	static uint8_t buf[1u << 20];
	uint64_t size, off = 0, ds, de, looked = 0;

	if (dmt_file_size(f, &size))
		return false;
	while (off < size && looked < (4u << 20)) {
		size_t n;

		if (dmt_file_next_data(f, off, size, &ds, &de) || ds >= size)
			return false;
		n = de - ds < sizeof(buf) ? (size_t)(de - ds) : sizeof(buf);
		if (dmt_pread_full(f, buf, n, ds))
			return true;	/* cannot tell: assume there is */
		for (size_t i = 0; i < n; i++)
			if (buf[i])
				return true;
		looked += n;
		off = ds + n;
	}
	return false;
}
