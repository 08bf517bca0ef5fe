# SPDX-License-Identifier: MIT
# `make check-clang`: the whole build and test suite compiled with clang
# (same warnings, -Werror) in its own build directory.

CLANG ?= clang
CLANG_O ?= build-clang

.PHONY: check-clang
check-clang:
	$(Q)PKG_CONFIG="$(PKG_CONFIG)" sh scripts/deps.sh clang clang
	$(Q)$(MAKE) --no-print-directory check CC=$(CLANG) O=$(CLANG_O) \
		SANITIZE=
