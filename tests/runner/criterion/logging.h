/* SPDX-License-Identifier: MIT */
/* Criterion's logging header: everything is in criterion.h here. */
#ifndef DMT_RUNNER_CRITERION_LOGGING_H
#define DMT_RUNNER_CRITERION_LOGGING_H
#include "criterion.h"
#endif
