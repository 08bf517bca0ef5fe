# SPDX-License-Identifier: MIT
# `make check-clang`: the whole build and test suite compiled with clang
# (same warnings, -Werror) in its own build directory.  CLANG_SANITIZE
# (e.g. address,undefined) builds it with clang's sanitizers too, in
# build-clang-<sanitizers>/: .ci/run's one sanitizer run.

CLANG ?= clang
CLANG_SANITIZE ?=
CLANG_O ?= build-clang$(if $(CLANG_SANITIZE),-$(subst $(comma),-,$(CLANG_SANITIZE)))

.PHONY: check-clang
check-clang:
	$(Q)PKG_CONFIG="$(PKG_CONFIG)" sh scripts/deps.sh clang clang
	$(Q)$(MAKE) --no-print-directory check CC=$(CLANG) O=$(CLANG_O) \
		SANITIZE=$(CLANG_SANITIZE)
