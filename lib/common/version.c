// SPDX-License-Identifier: MIT
/*
 * dmt_version(): the version the library was built as (the Makefile's
 * VERSION; tests/unit/test_version.c checks <dmt/version.h> agrees).
 */
#include <dmt/version.h>

#ifndef DMT_VERSION
#define DMT_VERSION DMT_VERSION_STRING
#endif

const char *dmt_version(void)
{
	return DMT_VERSION;
}
