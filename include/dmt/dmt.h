/* SPDX-License-Identifier: MIT */
/*
 * The whole public API of libdmt: one header per subsystem, all of them
 * here for programs that want everything (pkg-config --cflags libdmt).
 */
#ifndef DMT_DMT_H
#define DMT_DMT_H

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
#include <dmt/luks2.h>

#endif /* DMT_DMT_H */
