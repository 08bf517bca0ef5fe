/* SPDX-License-Identifier: MIT */
/*
 * LUKS2 header generators for the tests: a valid base image (ours or
 * luksFormat's) modified member by member through json-c, in both copies
 * or one, binary fields too, checksums recomputed so that only the change
 * is at fault.
 *
 * A mutation is one line:
 *   set PATH JSON        member or array element PATH (a.b.0.c) := JSON
 *   del PATH             remove it
 *   add PATH JSON        append JSON to the array PATH
 *   copy DST SRC         DST := a deep copy of SRC
 *   mv PATH NAME         rename the member (it moves to the end)
 *   sub FROM => TO       replace the first FROM in the JSON text
 *   fn NAME [ARG]        a named C generator (see luks2_gen.c)
 *   only primary|secondary  later JSON and text changes for one copy only
 *   seqid P|S N          binary header fields of the primary/secondary:
 *   u64 P|S OFF N          a big-endian 64-bit field at OFF
 *   bytes P|S OFF HEX      raw bytes at OFF
 *   field P|S NAME STR     label, subsystem, uuid or csum_alg (NUL-padded)
 *   tail P|S HEX           bytes right after the JSON text's NUL
 *   nocsum P|S             leave that copy's checksum as it is
 *   trunc N              cut the file to N bytes
 */
#ifndef DMT_TESTS_LUKS2_GEN_H
#define DMT_TESTS_LUKS2_GEN_H

#include <stddef.h>
#include <stdint.h>

struct lg_base {
	const char *name;	/* "ours", "luksFormat", ... */
	char *path;
	uint8_t *img;		/* the header area (and what follows, up to
				 * len): the rest of the file is a hole */
	size_t len;
	uint64_t size;		/* the file's size */
	uint64_t hdr_size;
};

/* Our format: 2 keyslots (pbkdf2, argon2id), a luks2-keyring token,
 * label and subsystem, data at 1 MiB. */
void lg_base_ours(struct lg_base *b, const char *dir);
/* cryptsetup luksFormat + luksAddKey (argon2i) + token add + config
 * --priority/--label, data at 1 MiB. */
void lg_base_luksformat(struct lg_base *b, const char *dir);
/* Any LUKS2 image already on disk (e.g. an interrupted reencryption). */
void lg_base_file(struct lg_base *b, const char *name, const char *path);
void lg_base_free(struct lg_base *b);

/* Writes the base with the mutations applied (NULL-terminated) to path;
 * aborts the test on a malformed mutation. */
void lg_make(const struct lg_base *b, const char *const *ops,
	     const char *path);
/* A copy of a file lg_make wrote from b (its first b->len bytes, then a
 * hole up to its size). */
void lg_copy(const struct lg_base *b, const char *from, const char *to);

#endif /* DMT_TESTS_LUKS2_GEN_H */
