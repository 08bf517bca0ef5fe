# SPDX-License-Identifier: MIT
# Cross builds for s390x (big-endian, CPACF) and arm64, tests under
# qemu-user with the in-tree runner: see scripts/cross-check.sh.
# Build trees: build-s390x/, build-arm64/ (sysroots inside).
.PHONY: check-cross check-cross-s390x check-cross-arm64

check-cross:
	+$(Q)MAKE="$(MAKE)" sh scripts/cross-check.sh s390x arm64
check-cross-s390x:
	+$(Q)MAKE="$(MAKE)" sh scripts/cross-check.sh s390x
check-cross-arm64:
	+$(Q)MAKE="$(MAKE)" sh scripts/cross-check.sh arm64
