# SPDX-License-Identifier: MIT
# verity-tool vs veritysetup benchmark: `make bench-verity` (part of
# `make bench`).  The 2 GiB test files are kept in BENCH_VERITY_DIR and
# reused; BENCH_VERITY_FLAGS=-q makes fewer runs.

BENCH_VERITY_DIR ?= $(O)/bench/verity
BENCH_VERITY_FLAGS ?=

.PHONY: bench-verity
bench: bench-verity

bench-verity: $(O)/verity-tool
	$(Q)PKG_CONFIG="$(PKG_CONFIG)" sh scripts/deps.sh bench
	$(Q)sh bench/bench_verity.sh $(O) $(BENCH_VERITY_DIR) \
		$(BENCH_VERITY_FLAGS)
