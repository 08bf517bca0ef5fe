// SPDX-License-Identifier: MIT
/*
 * Key files and passphrases, read as cryptsetup 2.6.1 reads them
 * (secret.h has the rules).  A regular file's size is known before the
 * first byte is read, so its refusals come first and exact; a pipe is
 * read to the point the rule is decided.  Line mode reads a stream a byte
 * at a time, so nothing after the newline is consumed (as cryptsetup).
 * Named files go through the library's I/O (its fault hook reaches them).
 */
#include "tools/common/secret.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dmt/crypt.h>
#include <dmt/io.h>

#include "tools/common/msg.h"

struct reader {
	const struct tool_secret_src *src;
	const char *name;	/* the path, or "stdin" */
	const char *what;	/* "key file", "input" */
	struct dmt_file *file;	/* a named file (the I/O fault hook sees it) */
	int fd;
	bool regular;
	bool positioned;	/* a named regular file: read at pos */
	uint64_t pos, left;	/* regular: position, bytes after it */
	size_t max;
};

void tool_secret_free(struct tool_secret *s)
{
	dmt_secure_free(s->p);
	s->p = NULL;
	s->len = 0;
}

static const char *opt_name(const char *opt, const char *fallback)
{
	return opt ? opt : fallback;
}

/* Locked memory of cap bytes keeping the first s->len. */
static int secret_resize(struct tool_secret *s, size_t cap)
{
	/* one more byte stays 0: the secret is also a C string */
	uint8_t *p = dmt_secure_alloc(cap + 1);

	if (!p)
		return -ENOMEM;
	if (s->len)
		memcpy(p, s->p, s->len);
	dmt_secure_free(s->p);
	s->p = p;
	return 0;
}

/* The offset, decided up front for a regular file, read away otherwise. */
static int skip_offset(struct reader *r)
{
	const char *opt = opt_name(r->src->offset_opt, "the offset");
	uint64_t off = r->src->offset, done = 0;
	uint8_t junk[4096];

	if (r->regular && off > r->left) {
		tool_err("%s: cannot seek to %s %" PRIu64 ": the %s has %" PRIu64 " bytes",
			 r->name, opt, off, r->what, r->left);
		return -EINVAL;
	}
	if (r->regular && off == r->left && off) {
		tool_err("%s: nothing left after %s %" PRIu64 " (the %s has %" PRIu64 " bytes): empty passphrases and keys are refused",
			 r->name, opt, off, r->what, r->left);
		return -EINVAL;
	}
	if (r->regular) {
		r->left -= off;
		r->pos += off;
		if (r->positioned || !off)
			return 0;
		return lseek(r->fd, (off_t)off, SEEK_CUR) < 0 ? -errno : 0;
	}
	while (done < off) {
		size_t n = off - done < sizeof(junk) ? (size_t)(off - done) :
						       sizeof(junk);
		ssize_t got = read(r->fd, junk, n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			explicit_bzero(junk, sizeof(junk));
			if (got < 0)
				return -errno;
			tool_err("%s: cannot seek to %s %" PRIu64 ": the %s ends after %" PRIu64 " bytes",
				 r->name, opt, off, r->what, done);
			return -EINVAL;
		}
		done += (uint64_t)got;
	}
	explicit_bzero(junk, sizeof(junk));
	return 0;
}

/* A named regular file: what is there up to want, in one read; a line
 * ends at its newline. */
static int read_positioned(struct reader *r, size_t want,
			   struct tool_secret *s, bool *newline)
{
	size_t n = r->left < want ? (size_t)r->left : want;
	uint8_t *eol;
	int err = secret_resize(s, n);

	if (!err)
		err = dmt_pread_full(r->file, s->p, n, r->pos);
	if (err)
		return err;
	s->len = n;
	eol = r->src->line ? memchr(s->p, '\n', n) : NULL;
	if (eol) {
		*newline = true;
		s->len = (size_t)(eol - s->p);
		dmt_secure_wipe(eol, n - s->len);
	}
	return 0;
}

/* Up to want bytes (a line's bytes in line mode: *newline tells). */
static int read_bytes(struct reader *r, size_t want, struct tool_secret *s,
		      bool *newline)
{
	size_t cap = 0;
	int err = 0;

	*newline = false;
	if (r->positioned)
		return read_positioned(r, want, s, newline);
	while (!err && s->len < want) {
		ssize_t got;

		if (s->len == cap) {
			cap = cap ? 2 * cap : 4096;
			if (r->regular && r->left < cap)
				cap = r->left ? (size_t)r->left + 1 : 1;
			cap = cap < want ? cap : want;
			err = secret_resize(s, cap);
			if (err)
				break;
		}
		got = read(r->fd, s->p + s->len, r->src->line ? 1 : cap - s->len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			err = -errno;
		if (got <= 0)
			break;
		if (r->src->line && s->p[s->len] == '\n') {
			s->p[s->len] = 0;
			*newline = true;
			break;
		}
		s->len += (size_t)got;
	}
	return err;
}

/* The refusals once the bytes are in. */
static int check_bytes(struct reader *r, const struct tool_secret *s,
		       bool newline)
{
	const char *size_opt = opt_name(r->src->size_opt, "the key");
	const char *off_opt = opt_name(r->src->offset_opt, "offset");
	size_t want = r->src->size;

	if (!s->len) {
		if (newline)
			tool_err("%s: the first line is empty: empty passphrases are refused",
				 r->name);
		else if (r->regular)
			tool_err("%s: the %s is empty", r->name, r->what);
		else
			tool_err("%s: nothing to read on input (empty passphrases and keys are refused)",
				 r->name);
		return -EINVAL;
	}
	if (want && s->len < want) {
		char after[80] = "";

		if (r->src->offset)
			snprintf(after, sizeof(after), " after %s %" PRIu64,
				 off_opt, r->src->offset);
		tool_err("%s: the %s holds %zu bytes%s%s, %s needs %zu", r->name,
			 r->what, s->len, after, newline ? " before the newline" : "",
			 size_opt, want);
		return -EINVAL;
	}
	if (!want && s->len > r->max) {
		tool_err("%s: the %s is larger than %zu bytes%s%s%s", r->name,
			 r->what, r->max, r->src->size_opt ? " (" : "",
			 r->src->size_opt ? r->src->size_opt : "",
			 r->src->size_opt ? " reads less)" : "");
		return -EINVAL;
	}
	return 0;
}

static int open_source(struct reader *r)
{
	const char *path = r->src->path;
	bool named = path && strcmp(path, "-");
	struct stat st;
	off_t pos;
	int err;

	r->fd = STDIN_FILENO;
	if (named) {
		err = dmt_file_open(path, DMT_OPEN_READ, &r->file);
		if (err)
			return err;
		r->fd = dmt_file_fd(r->file);
	}
	if (isatty(r->fd)) {
		tool_err("%s: cannot read a %s from a terminal", r->name, r->what);
		return -EINVAL;
	}
	if (fstat(r->fd, &st))
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	r->regular = S_ISREG(st.st_mode);
	r->positioned = r->regular && named;
	if (r->regular) {
		/* stdin may be a file already partly read */
		pos = lseek(r->fd, 0, SEEK_CUR);
		r->left = pos >= 0 && pos < st.st_size ?
				  (uint64_t)(st.st_size - pos) : 0;
	}
	return 0;
}

int tool_read_secret(const struct tool_secret_src *src,
		     struct tool_secret *out)
{
	bool is_stdin = !src->path || !strcmp(src->path, "-"), newline;
	struct reader r = {
		.src = src, .name = is_stdin ? "stdin" : src->path,
		.what = is_stdin ? "input" : src->what ? src->what : "key file",
		.fd = -1, .max = src->max ? src->max : TOOL_SECRET_MAX,
	};
	int err;

	tool_secret_free(out);
	err = open_source(&r);
	if (!err)
		err = skip_offset(&r);
	if (!err)
		err = read_bytes(&r, src->size ? src->size : r.max + 1, out,
				 &newline);
	if (err && err != -EINVAL && err != -ENOMEM) {
		char what[64];

		snprintf(what, sizeof(what), "cannot read the %s", r.what);
		tool_err_errno(r.name, what, err);
	}
	if (!err)
		err = check_bytes(&r, out, newline);
	dmt_file_close(r.file);
	if (err)
		tool_secret_free(out);
	return err;
}

int tool_read_passphrase_line(const char *path, struct tool_secret *out)
{
	struct tool_secret_src src = {
		.path = path, .max = TOOL_PASSPHRASE_LINE_MAX, .line = true,
		.what = "passphrase file",
	};
	int err = tool_read_secret(&src, out);
	uint8_t *cr = err ? NULL : memchr(out->p, '\r', out->len);

	if (cr) {
		/* a file written on Windows: the line ends at "\r\n" */
		dmt_secure_wipe(cr, out->len - (size_t)(cr - out->p));
		out->len = (size_t)(cr - out->p);
	}
	if (!err && !out->len) {
		tool_err("%s: the first line is empty: empty passphrases are refused",
			 path);
		tool_secret_free(out);
		err = -EINVAL;
	}
	return err;
}

/* Not a secret: plain memory, the library's I/O. */
int tool_read_small_file(const char *path, size_t want, size_t max,
			 uint8_t **out, size_t *len)
{
	struct dmt_file *f;
	uint64_t size;
	uint8_t *buf = NULL;
	size_t n;
	int err;

	*out = NULL;
	*len = 0;
	err = dmt_file_open(path, DMT_OPEN_READ, &f);
	if (err)
		return err;
	err = dmt_file_size(f, &size);
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
	err = dmt_pread_full(f, buf, n, 0);
	if (err)
		goto out;
	*out = buf;
	*len = n;
	buf = NULL;
out:
	free(buf);
	dmt_file_close(f);
	return err;
}
