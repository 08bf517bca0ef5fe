// SPDX-License-Identifier: MIT
/*
 * Passphrases and keys, read as cryptsetup 2.6.1 reads them, straight
 * into locked memory (dmt_secure_alloc) that is wiped when freed.  They
 * never come from the command line and never reach a message.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "tools/crypt-tool/ct.h"

void ct_secret_free(struct ct_secret *s)
{
	dmt_secure_free(s->p);
	s->p = NULL;
	s->len = 0;
}

static int secret_alloc(struct ct_secret *s, size_t len)
{
	ct_secret_free(s);
	s->p = dmt_secure_alloc(len ? len : 1);
	s->len = 0;
	return s->p ? 0 : -ENOMEM;
}

bool ct_key_file_regular(const struct cli *c)
{
	const char *kf = cli_str(c, O_KEY_FILE);

	return kf && strcmp(kf, "-");
}

/* Skips offset bytes of a descriptor (seek, or read for a pipe). */
static int skip_bytes(int fd, uint64_t offset)
{
	uint8_t junk[4096];

	if (!offset || lseek(fd, (off_t)offset, SEEK_SET) >= 0)
		return 0;
	while (offset) {
		ssize_t n = read(fd, junk, offset < sizeof(junk) ?
						   (size_t)offset : sizeof(junk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ENODATA;
		offset -= (uint64_t)n;
	}
	explicit_bzero(junk, sizeof(junk));
	return 0;
}

/* Up to max bytes from fd (until EOF, or a newline when stop_eol). */
static int read_fd(int fd, size_t max, bool stop_eol, struct ct_secret *s,
		   bool *too_long)
{
	int err = secret_alloc(s, max + 1);

	*too_long = false;
	while (!err && s->len <= max) {
		ssize_t n = read(fd, s->p + s->len, stop_eol ? 1 : max + 1 - s->len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = -errno;
		if (n <= 0)
			break;
		if (stop_eol && s->p[s->len] == '\n') {
			s->p[s->len] = 0;
			break;
		}
		s->len += (size_t)n;
	}
	if (!err && s->len > max) {
		*too_long = true;
		s->len = max;
	}
	return err;
}

/* A key file (or "-": stdin) as luksFormat --key-file reads it. */
static int read_key_file(struct cli *c, struct ct_secret *s)
{
	const char *path = cli_str(c, O_KEY_FILE);
	uint64_t off = cli_num(c, O_KEYFILE_OFFSET, 0);
	size_t want = (size_t)cli_num(c, O_KEYFILE_SIZE, 0);
	bool is_stdin = !strcmp(path, "-"), too_long;
	int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	int err;

	if (fd < 0) {
		err = -errno;
		tool_err_errno(path, "cannot read the key file", err);
		return err;
	}
	err = skip_bytes(fd, off);
	if (!err)
		err = read_fd(fd, want ? want : CT_KEYFILE_MAX, false, s,
			      &too_long);
	if (!is_stdin)
		close(fd);
	if (err) {
		tool_err_errno(path, "cannot read the key file", err == -ENODATA ?
			       -ENODATA : err);
		return err == -ENODATA ? -EINVAL : err;
	}
	if (want && s->len < want) {
		tool_err("%s: key file too short: %zu of the %zu bytes --keyfile-size asks for after offset %" PRIu64,
			 path, s->len, want, off);
		return -EINVAL;
	}
	if (!want && too_long) {
		tool_err("%s: key file larger than the %u-byte maximum (--keyfile-size)",
			 path, CT_KEYFILE_MAX);
		return -EINVAL;
	}
	return 0;
}

/* One line from the terminal, echo off. */
static int ask(const char *prompt, struct ct_secret *s)
{
	struct termios old, quiet;
	bool too_long;
	int err;

	if (tcgetattr(STDIN_FILENO, &old))
		return -errno;
	quiet = old;
	quiet.c_lflag &= ~(tcflag_t)ECHO;
	fprintf(stderr, "%s", prompt);
	fflush(stderr);
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
	err = read_fd(STDIN_FILENO, 512, true, s, &too_long);
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
	fprintf(stderr, "\n");
	return err;
}

static int from_terminal(const char *prompt_for, bool verify,
			 struct ct_secret *out)
{
	struct ct_secret again = { 0 };
	char prompt[1200];
	int err;

	snprintf(prompt, sizeof(prompt), "Enter passphrase for %s: ",
		 prompt_for);
	err = ask(prompt, out);
	if (!err && verify)
		err = ask("Verify passphrase: ", &again);
	if (!err && verify &&
	    (again.len != out->len || memcmp(again.p, out->p, out->len))) {
		tool_err("Passphrases do not match.");
		err = -EINVAL;
	}
	ct_secret_free(&again);
	return err;
}

int ct_read_passphrase(struct cli *c, const char *prompt_for, bool verify,
		       struct ct_secret *out)
{
	bool too_long;
	int err;

	if (cli_given(c, O_KEY_FILE))
		return read_key_file(c, out);
	if (isatty(STDIN_FILENO))
		return from_terminal(prompt_for, verify, out);
	/* a line of stdin, as cryptsetup without --key-file */
	err = read_fd(STDIN_FILENO, CT_KEYFILE_MAX, true, out, &too_long);
	if (err)
		tool_err_errno("stdin", "cannot read the passphrase", err);
	return err;
}

int ct_read_key_bytes(const char *path, uint64_t offset, size_t len,
		      const char *what, struct ct_secret *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	bool too_long;

	if (fd < 0) {
		err = -errno;
		tool_err_errno(path, what, err);
		return err;
	}
	err = skip_bytes(fd, offset);
	if (!err)
		err = read_fd(fd, len, false, out, &too_long);
	close(fd);
	if (err && err != -ENODATA) {
		tool_err_errno(path, what, err);
		return err;
	}
	if (err || out->len < len) {
		tool_err("%s: key file too short: needs %zu bytes after offset %" PRIu64 ", has %zu",
			 path, len, offset, err ? (size_t)0 : out->len);
		return -EINVAL;
	}
	return 0;
}

/*
 * cryptsetup 2.6.1 plain open: a regular key file is the key itself
 * (exactly key-size bytes after --keyfile-offset; --hash and
 * --keyfile-size ignored); "-" and the terminal are a passphrase hashed
 * with --hash.
 */
int ct_plain_key(struct cli *c, const char *hash, size_t key_size,
		 bool verify, struct ct_secret *key, bool *hashed)
{
	struct ct *ct = ct_of(c);
	struct dmt_reason why = { 0 };
	int err;

	*hashed = !ct_key_file_regular(c);
	if (!*hashed) {
		if (cli_given(c, O_HASH) || cli_given(c, O_KEYFILE_SIZE))
			tool_warn("--hash and --keyfile-size are ignored with a plain-mode key file (as cryptsetup 2.6.1): the key is its first %zu bytes",
				  key_size);
		return ct_read_key_bytes(cli_str(c, O_KEY_FILE),
					 cli_num(c, O_KEYFILE_OFFSET, 0), key_size,
					 "cannot read the key file", key);
	}
	err = ct_read_passphrase(c, ct->image, verify, &ct->pass);
	if (!err)
		err = secret_alloc(key, key_size);
	if (err)
		return err;
	err = dmt_crypt_plain_hash(hash, ct->pass.p, ct->pass.len, key->p,
				   key_size, &why);
	key->len = key_size;
	if (err)
		cli_reason_err(c, &why);
	ct_secret_free(&ct->pass);
	return err;
}
