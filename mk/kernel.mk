# SPDX-License-Identifier: MIT
# Kernel conformance suite (tests/kernel/): images made by the tools are
# opened by the real dm-verity / dm-integrity of the installed Debian kernel,
# booted under QEMU. See tests/kernel/README.md.
#
#   make check-kernel            the suite (needs root for apt; NO_DEPS=1: never
#                                install packages, fail naming the missing ones)
#   make check-kernel-selftest   the harness alone (cases ref-* verity-*):
#                                verity trees from userspace veritysetup,
#                                integrity images from the guest's
#                                integritysetup; no project tool involved
# Variables passed through: KT_CASES='glob ...' (subset), KT_ACCEL=kvm|tcg,
# KT_BOOT_TIMEOUT, KT_CASE_TIMEOUT, KT_LIST=1 (list the cases).

KERNEL_SUITE := tests/kernel/run.sh

.PHONY: check-kernel check-kernel-selftest
check-kernel: tools
	$(Q)O="$(abspath $(O))" NO_DEPS="$(NO_DEPS)" \
	VERITY_TOOL="$(abspath $(O))/verity-tool" \
	INTEGRITY_TOOL="$(abspath $(O))/integrity-tool" \
	FSVERITY_TOOL="$(abspath $(O))/fsverity-tool" \
	bash $(KERNEL_SUITE)

check-kernel-selftest:
	$(Q)O="$(abspath $(O))" NO_DEPS="$(NO_DEPS)" \
	VERITY_TOOL="$(CURDIR)/tests/kernel/shim/verity-tool" \
	INTEGRITY_TOOL=none FSVERITY_TOOL=none KT_CASES="$${KT_CASES:-ref-* verity-*}" \
	bash $(KERNEL_SUITE)
