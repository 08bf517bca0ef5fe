/* SPDX-License-Identifier: MIT */
/* The one hex reader and writer of every tool (hex.c). */
#ifndef DMT_TOOLS_HEX_H
#define DMT_TOOLS_HEX_H

#include <stddef.h>
#include <stdint.h>

/* Hex string (either case, even length) into a new buffer; "-" or "" is
 * empty.  *out is malloc'ed (NULL when empty).  0, -EINVAL or -ENOMEM. */
int tool_parse_hex(const char *s, uint8_t **out, size_t *len);
/* Lower-case hex of p; out holds 2 * len + 1 bytes. */
void tool_hex(const uint8_t *p, size_t len, char *out);

#endif /* DMT_TOOLS_HEX_H */
