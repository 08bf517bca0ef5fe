/* SPDX-License-Identifier: MIT */
/*
 * The check every entry point makes on a params struct's reserved words
 * (<dmt/dmt.h>): all zero, or -EINVAL with DMT_REASON_BAD_VALUE field
 * "reserved" (value: the index of the first nonzero word).
 */
#ifndef DMT_LIB_COMMON_RESERVED_H
#define DMT_LIB_COMMON_RESERVED_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <dmt/reason.h>

static inline int dmt_check_reserved(const uint64_t *reserved, size_t n,
				     struct dmt_reason *r)
{
	for (size_t i = 0; i < n; i++) {
		if (reserved[i])
			return dmt_reason_set(r, -EINVAL, DMT_REASON_BAD_VALUE,
					      "reserved", i);
	}
	return 0;
}

#define DMT_CHECK_RESERVED(p, r) \
	dmt_check_reserved((p)->reserved, \
			   sizeof((p)->reserved) / sizeof((p)->reserved[0]), r)

#endif /* DMT_LIB_COMMON_RESERVED_H */
