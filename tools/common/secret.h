/* SPDX-License-Identifier: MIT */
/*
 * Key files and passphrases of every tool (crypt-tool's --key-file and
 * --volume-key-file, integrity-tool's three key files, the signing-key
 * passphrase files of verity-tool and fsverity-tool), read with one rule
 * set: cryptsetup 2.6.1's (lib/utils.c, crypt_keyfile_device_read) plus
 * one refusal of our own, an empty secret.  The bytes go straight into
 * locked memory (dmt_secure_alloc) and are wiped when freed; they never
 * reach a message.
 *
 * Refused with a message naming the file, -EINVAL (exit 1), as cryptsetup
 * refuses them with exit 1:
 *   - an offset past the end ("Cannot seek to requested keyfile offset.");
 *   - fewer bytes than an exact size asks for ("Cannot read requested
 *     amount of data.");
 *   - more than the maximum without a size ("Maximum keyfile size
 *     exceeded.");
 *   - nothing at all from a pipe ("Nothing to read on input.");
 *   - a terminal given as a key file ("Cannot read keyfile from a
 *     terminal.");
 * and, where cryptsetup goes on with an empty passphrase, an offset at the
 * very end, an empty file or an empty line.  A file that cannot be opened
 * or read is the errno (exit 4).
 */
#ifndef DMT_TOOLS_SECRET_H
#define DMT_TOOLS_SECRET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* cryptsetup's default upper limit of a key file (8 MiB) */
#define TOOL_SECRET_MAX (8u << 20)

/* Bytes in locked memory; tool_secret_free wipes them. */
struct tool_secret {
	uint8_t *p;
	size_t len;
};

struct tool_secret_src {
	const char *path;	/* NULL or "-": stdin */
	uint64_t offset;	/* bytes skipped first (--keyfile-offset) */
	size_t size;		/* exactly this many; 0: all, at most max */
	size_t max;		/* 0: TOOL_SECRET_MAX */
	bool line;		/* stop at the first newline (not kept) */
	const char *what;	/* "key file" (default), "passphrase file" */
	/* names in messages: "--keyfile-offset" / "--keyfile-size" (NULL:
	 * "the offset" / "the key") */
	const char *offset_opt, *size_opt;
};

/* out->p[out->len] is 0: a secret without NUL bytes is a C string. */
int tool_read_secret(const struct tool_secret_src *src,
		     struct tool_secret *out);
void tool_secret_free(struct tool_secret *s);

/* The signing tools' --key-passphrase-file: its first line (as openssl's
 * -passin file: reads it; a "\r" ends it too), at most 1 KiB. */
#define TOOL_PASSPHRASE_LINE_MAX 1024
int tool_read_passphrase_line(const char *path, struct tool_secret *out);

/* A small input that is not secret (a signature, a root hash file): at
 * most max bytes, exactly want bytes when want != 0 (-ENODATA when the
 * file is shorter, -EINVAL when empty or too long).  *out is malloc'ed. */
int tool_read_small_file(const char *path, size_t want, size_t max,
			 uint8_t **out, size_t *len);

#endif /* DMT_TOOLS_SECRET_H */
