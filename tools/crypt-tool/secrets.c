// SPDX-License-Identifier: MIT
/*
 * Passphrases and keys, read as cryptsetup 2.6.1 reads them (the rules
 * are tools/common/secret.h's), straight into locked memory that is wiped
 * when freed.  They never come from the command line and never reach a
 * message.  Empty passphrases are refused from every source (cryptsetup
 * takes one from an empty file, an offset at the end or a bare newline).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "tools/crypt-tool/ct.h"

/* cryptsetup's longest passphrase from the terminal */
#define TTY_PASS_MAX 512

bool ct_key_file_regular(const struct cli *c)
{
	const char *kf = cli_str(c, O_KEY_FILE);

	return kf && strcmp(kf, "-");
}

/* One line from the terminal, echo off (at most TTY_PASS_MAX bytes). */
static int ask(const char *prompt, struct tool_secret *s)
{
	struct termios old, quiet;
	int err = 0;

	tool_secret_free(s);
	s->p = dmt_secure_alloc(TTY_PASS_MAX + 1);
	if (!s->p)
		return -ENOMEM;
	if (tcgetattr(STDIN_FILENO, &old))
		return -errno;
	quiet = old;
	quiet.c_lflag &= ~(tcflag_t)ECHO;
	fprintf(stderr, "%s", prompt);
	fflush(stderr);
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
	while (s->len < TTY_PASS_MAX) {
		ssize_t n = read(STDIN_FILENO, s->p + s->len, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = -errno;
		if (n <= 0 || s->p[s->len] == '\n')
			break;
		s->len++;
	}
	s->p[s->len] = 0;
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
	fprintf(stderr, "\n");
	if (err)
		tool_err_errno("terminal", "cannot read the passphrase", err);
	return err;
}

static int from_terminal(const char *prompt_for, bool verify,
			 struct tool_secret *out)
{
	struct tool_secret again = { 0 };
	char prompt[1200];
	int err;

	snprintf(prompt, sizeof(prompt), "Enter passphrase for %s: ",
		 prompt_for);
	err = ask(prompt, out);
	if (!err && !out->len) {
		tool_err("terminal: empty passphrases are refused");
		err = -EINVAL;
	}
	if (!err && verify)
		err = ask("Verify passphrase: ", &again);
	if (!err && verify &&
	    (again.len != out->len || memcmp(again.p, out->p, out->len))) {
		/* cryptsetup: -EPERM, exit 2 */
		tool_err("Passphrases do not match.");
		err = -EBADMSG;
	}
	tool_secret_free(&again);
	return err;
}

/* --key-file - and no --key-file read stdin: the terminal when it is one. */
static bool from_tty(const struct cli *c)
{
	return !ct_key_file_regular(c) && isatty(STDIN_FILENO);
}

int ct_read_passphrase(struct cli *c, const char *prompt_for, bool verify,
		       struct tool_secret *out)
{
	struct tool_secret_src src = {
		.path = cli_str(c, O_KEY_FILE),
		.offset = cli_num(c, O_KEYFILE_OFFSET, 0),
		.size = (size_t)cli_num(c, O_KEYFILE_SIZE, 0),
		/* without --key-file: a line (cryptsetup's STOP_EOL) */
		.line = !cli_given(c, O_KEY_FILE),
		.offset_opt = "--keyfile-offset",
		.size_opt = "--keyfile-size",
	};

	if (from_tty(c) && cli_given(c, O_KEYFILE_OFFSET)) {
		tool_err("--keyfile-offset: cannot be used with a passphrase from the terminal");
		return -EINVAL;
	}
	if (from_tty(c))
		return from_terminal(prompt_for, verify, out);
	return tool_read_secret(&src, out);
}

int ct_read_key_bytes(const char *path, uint64_t offset, size_t len,
		      const char *key, struct tool_secret *out)
{
	char name[64];
	struct tool_secret_src src = {
		.path = path, .offset = offset, .size = len,
		.offset_opt = "--keyfile-offset", .size_opt = name,
	};

	snprintf(name, sizeof(name), "the %zu-bit %s", len * 8, key);
	return tool_read_secret(&src, out);
}

static bool all_zero(const uint8_t *p, size_t len)
{
	uint8_t acc = 0;

	for (size_t i = 0; i < len; i++)
		acc |= p[i];
	return !acc;
}

/*
 * The passphrase of a hashed plain key.  --hash plain with --key-file -
 * reads exactly the key's bytes from stdin (cryptsetup 2.6.1 sets no hash
 * then and reads key-size bytes; --keyfile-size does not apply).
 */
static int plain_passphrase(struct cli *c, const char *hash, size_t key_size,
			    bool verify)
{
	struct ct *ct = ct_of(c);
	const char *kf = cli_str(c, O_KEY_FILE);

	if (kf && !strcmp(hash, "plain") && !isatty(STDIN_FILENO)) {
		if (cli_given(c, O_KEYFILE_SIZE))
			tool_warn("--keyfile-size is ignored with --hash plain and --key-file - (as cryptsetup 2.6.1): the key is the first %zu bytes of stdin",
				  key_size);
		return ct_read_key_bytes(kf, cli_num(c, O_KEYFILE_OFFSET, 0),
					 key_size, "key", &ct->pass);
	}
	return ct_read_passphrase(c, ct->image, verify, &ct->pass);
}

/* What is wrong with --hash for this key and passphrase. */
static void plain_hash_error(struct cli *c, const char *hash, size_t key_size,
			     const struct dmt_reason *why)
{
	if (why->code == DMT_REASON_TOO_SMALL)
		tool_err("--hash %s: takes %" PRIu64 " bytes of the passphrase, it has %" PRIu64,
			 hash, why->min, why->value);
	else if (why->code == DMT_REASON_TOO_LARGE)
		tool_err("--hash %s: %" PRIu64 " bytes is more than the %zu-byte key",
			 hash, why->value, key_size);
	else if (why->code == DMT_REASON_BAD_VALUE)
		tool_err("--hash '%s': not HASH or HASH:LEN (LEN a number of bytes)",
			 hash);
	else
		cli_reason_err(c, why);
}

/*
 * cryptsetup 2.6.1 plain open: a regular key file is the key itself
 * (exactly key-size bytes after --keyfile-offset; --hash and
 * --keyfile-size ignored); "-", a line of stdin and the terminal are a
 * passphrase turned into the key by --hash (dmt_crypt_plain_hash).  On
 * format (verify), a key of zeros (--hash ...:0) is refused.
 */
int ct_plain_key(struct cli *c, const char *hash, size_t key_size,
		 bool verify, struct tool_secret *key, bool *hashed)
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
					 "key", key);
	}
	err = plain_passphrase(c, hash, key_size, verify);
	if (!err) {
		tool_secret_free(key);
		key->p = dmt_secure_alloc(key_size);
		err = key->p ? 0 : -ENOMEM;
	}
	if (!err) {
		key->len = key_size;
		err = dmt_crypt_plain_hash(hash, ct->pass.p, ct->pass.len,
					   key->p, key_size, &why);
		if (err)
			plain_hash_error(c, hash, key_size, &why);
	}
	if (!err && verify && all_zero(key->p, key_size)) {
		tool_err("--hash %s: the key would be all zeros (no passphrase byte used)",
			 hash);
		err = -EINVAL;
	}
	tool_secret_free(&ct->pass);
	return err;
}
