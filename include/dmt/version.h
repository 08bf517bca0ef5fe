/* SPDX-License-Identifier: MIT */
/*
 * The version of libdmt these headers come with (the Makefile's VERSION:
 * a unit test holds the two together), and the version of the library a
 * program runs with.  The soname (libdmt.so.0) changes only with an
 * incompatible ABI change; minor and patch releases only add.
 */
#ifndef DMT_VERSION_H
#define DMT_VERSION_H

#define DMT_VERSION_MAJOR 0
#define DMT_VERSION_MINOR 1
#define DMT_VERSION_PATCH 0
#define DMT_VERSION_STRING "0.1.0"

/* One number to compare: DMT_VERSION_NUMBER >= DMT_VERSION_AT(0, 2, 0). */
#define DMT_VERSION_AT(major, minor, patch) \
	(((major) << 16) | ((minor) << 8) | (patch))
#define DMT_VERSION_NUMBER \
	DMT_VERSION_AT(DMT_VERSION_MAJOR, DMT_VERSION_MINOR, DMT_VERSION_PATCH)

/* The running library's version, "MAJOR.MINOR.PATCH" (static). */
const char *dmt_version(void);

#endif /* DMT_VERSION_H */
