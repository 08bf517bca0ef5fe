# SPDX-License-Identifier: MIT
# Standalone self-test and benchmark of the per-ISA block functions
# (lib/hash/arch/).  It links only the backend objects, so the same driver runs
# natively and, for arm64, under qemu-user.
#
#   make check-arch-selftest        native (x86-64: every backend vs OpenSSL
#                                   and a C reference)
#   make bench-arch                 the same, then throughput (CPU time)
#   make check-arch-selftest-arm64  cross-built, run under qemu-aarch64

.PHONY: check-arch-selftest bench-arch check-arch-selftest-arm64

ARCH_ST_BIN := $(O)/tests/arch/backend_selftest
ifeq ($(ARCH),x86_64)
ARCH_ST_SRCS := lib/hash/arch/x86_sha256_shani.c lib/hash/arch/x86_sha256_avx2.c \
	lib/hash/arch/x86_sha256_avx512.c lib/hash/arch/x86_sha512_avx512.c \
	lib/hash/arch/x86_sha512_avx2.c \
	lib/hash/arch/x86_crc32c_sse42.c
# FEC multiply-add kernels; fec_rs.c for the portable one in the bench.
ARCH_ST_SRCS += lib/fec/arch/x86_gf256_gfni.c lib/fec/arch/x86_gf256_avx2.c \
	lib/fec/arch/x86_gf256_ssse3.c lib/fec/fec_rs.c
endif
ifeq ($(ARCH),aarch64)
ARCH_ST_SRCS := lib/hash/arch/arm64_sha256_ce.c lib/hash/arch/arm64_crc32c.c
endif
ARCH_ST_OBJS := $(O)/tests/arch/backend_selftest.o \
	$(patsubst %.c,$(O)/%.o,$(ARCH_ST_SRCS))

$(ARCH_ST_BIN): $(ARCH_ST_OBJS)
	$(qecho) LD $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(DEP_LIBS)

check-arch-selftest: $(ARCH_ST_BIN)
	$(ARCH_ST_BIN)

bench-arch: $(ARCH_ST_BIN)
	$(ARCH_ST_BIN) --bench

# arm64: no OpenSSL needed (the driver's C reference is the oracle).
ARM64_CC ?= aarch64-linux-gnu-gcc
ARM64_QEMU ?= qemu-aarch64
ARM64_QEMU_CPU ?= max
ARM64_ST_DIR := $(O)/arch-arm64
ARM64_ST_SRCS := lib/hash/arch/arm64_sha256_ce.c lib/hash/arch/arm64_crc32c.c \
	tests/arch/backend_selftest.c
ARM64_ST_OBJS := $(patsubst %.c,$(ARM64_ST_DIR)/%.o,$(ARM64_ST_SRCS))
ARM64_ST_BIN := $(ARM64_ST_DIR)/backend_selftest

$(ARM64_ST_DIR)/%.o: %.c lib/common/backends.h lib/common/cpu.h
	$(qecho) CC-A64 $<
	$(Q)mkdir -p $(dir $@)
	$(Q)$(ARM64_CC) $(BASE_CFLAGS) $(CFLAGS) $(call isa_flags,$<) \
		-c -o $@ $<

$(ARM64_ST_BIN): $(ARM64_ST_OBJS)
	$(qecho) LD-A64 $@
	$(Q)$(ARM64_CC) -static -o $@ $^

check-arch-selftest-arm64: $(ARM64_ST_BIN)
	timeout -s KILL 600 $(ARM64_QEMU) -cpu $(ARM64_QEMU_CPU) \
		-L /usr/aarch64-linux-gnu $(ARM64_ST_BIN)

# The backend selftest is part of `make check` (it runs in well under 1 s).
check: check-arch-selftest
