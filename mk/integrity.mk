# SPDX-License-Identifier: MIT
# integrity-tool benchmark (part of `make bench`): format and check of a
# random payload against veritysetup and cp, see bench/bench_integrity.sh.
#   make bench-integrity BENCH_INTEGRITY_SIZE=512M BENCH_INTEGRITY_RUNS=3

.PHONY: bench-integrity
bench-all: bench-integrity

bench-integrity: $(O)/integrity-tool
	$(Q)PKG_CONFIG="$(PKG_CONFIG)" sh scripts/deps.sh bench time util-linux
	$(Q)mkdir -p $(O)/bench && rm -f $(O)/bench/summary-integrity.tsv
	INTEGRITY_TOOL=$(abspath $(O)/integrity-tool) \
		BENCH_SUMMARY_DIR=$(abspath $(O)/bench) sh bench/bench_integrity.sh
