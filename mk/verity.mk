# SPDX-License-Identifier: MIT
# verity-tool vs veritysetup benchmark: `make bench-verity` (part of
# `make bench`).  The 2 GiB test files are kept in BENCH_VERITY_DIR and
# reused; BENCH_VERITY_FLAGS=-q makes fewer runs, BENCH_VERITY_SIZE=512M
# smaller files.  Also measures the engine alone (bench_hash -t) for
# issue 15's tool vs engine ratios ($(O)/bench/summary-verity.tsv).

BENCH_VERITY_DIR ?= $(O)/bench/verity
BENCH_VERITY_FLAGS ?=

.PHONY: bench-verity
bench-all: bench-verity

bench-verity: $(O)/verity-tool $(O)/bench/bench_hash
	$(Q)PKG_CONFIG="$(PKG_CONFIG)" sh scripts/deps.sh bench time
	$(Q)mkdir -p $(O)/bench && rm -f $(O)/bench/summary-verity.tsv
	$(Q)BENCH_SUMMARY_DIR=$(abspath $(O)/bench) \
		sh bench/bench_verity.sh $(O) $(BENCH_VERITY_DIR) \
		$(BENCH_VERITY_FLAGS)
