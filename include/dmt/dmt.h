/* SPDX-License-Identifier: MIT */
/*
 * The whole public API of libdmt: one header per subsystem, all of them
 * here for programs that want everything (pkg-config --cflags libdmt).
 * What is not declared under include/dmt/ is not part of the API and not
 * exported by libdmt.so.
 *
 * Conventions every header follows:
 *
 * Errors.  A function that can fail returns int: 0 (or a count) on
 * success, a negative errno on failure.  A function that can fail for a
 * reason beyond the errno takes a trailing `struct dmt_reason *r` (may be
 * NULL; always the last argument, always named r) and fills it on failure
 * with a code of the one registry in <dmt/reason.h>, the params field, the
 * value and the limits it broke; dmt_reason_format() makes a sentence of
 * it.  Pure I/O primitives (<dmt/io.h>) report only the errno.  The
 * library never prints and never exits.
 *
 * Argument order.  Inputs first, then outputs, then r:
 *	int dmt_X_new(const struct dmt_X_params *params, ...,
 *		      struct dmt_X **out, struct dmt_reason *r);
 *	void dmt_X_free(struct dmt_X *x);	(NULL does nothing)
 * Handles (struct dmt_X) are opaque: only their functions look inside.
 *
 * Parameters.  Option structs are called params (struct dmt_X_params).
 * Every one has void dmt_X_params_init(struct dmt_X_params *p), which
 * zeroes it and sets the defaults: call it before setting fields, so a
 * program built against these headers keeps working when a later version
 * adds fields.  Every params struct ends with `uint64_t reserved[8]`,
 * room for those fields without an ABI break: they must stay zero, the
 * library rejects a nonzero reserved word with -EINVAL and reason
 * DMT_REASON_BAD_VALUE, field "reserved".  Result structs the library
 * fills end with reserved words too, zeroed by the library.
 *
 * Versions.  <dmt/version.h>: DMT_VERSION_* for the headers,
 * dmt_version() for the running library.  The soname libdmt.so.0 changes
 * only with an incompatible ABI change (held by make check-abi).
 */
#ifndef DMT_DMT_H
#define DMT_DMT_H

#include <dmt/version.h>
#include <dmt/reason.h>
#include <dmt/progress.h>
#include <dmt/io.h>
#include <dmt/threads.h>
#include <dmt/hash.h>
#include <dmt/verity.h>
#include <dmt/fec.h>
#include <dmt/sign.h>
#include <dmt/integrity.h>
#include <dmt/fsverity.h>
#include <dmt/crypt.h>
#include <dmt/crypt_auth.h>
#include <dmt/luks2.h>

#endif /* DMT_DMT_H */
