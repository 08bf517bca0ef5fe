/* SPDX-License-Identifier: MIT */
/*
 * Parsing of option values (parse.c) and the --seed derivation of the
 * tools that make random values reproducible.
 */
#ifndef DMT_TOOLS_PARSE_H
#define DMT_TOOLS_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* All return 0 or -EINVAL. */
int tool_parse_u64(const char *s, uint64_t *out);	/* plain integer */
/* N[S|K|M|G|T|KiB..|KB..]: S = 512-byte sectors, K.. powers of 1024,
 * KB.. powers of 1000 (integritysetup's rules). */
int tool_parse_size(const char *s, uint64_t *out);

/* HMAC-SHA256(key=seed, label), the first out_len bytes: out_len <= 32. */
int tool_seed_derive(const char *seed, const char *label, uint8_t *out,
		     size_t out_len);
/* --seed uuid: first 16 bytes of HMAC-SHA256(seed, label), RFC 4122
 * version 4 / variant bits set. */
int tool_seed_uuid(const char *seed, const char *label, uint8_t uuid[16]);

#endif /* DMT_TOOLS_PARSE_H */
