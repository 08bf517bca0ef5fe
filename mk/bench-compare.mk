# SPDX-License-Identifier: MIT
# Old tools against the new ones, interleaved runs, medians, new/old per
# command (bench/bench_compare.sh; not part of `make bench`):
#   make bench-compare OLD=/work/before
#   make bench-compare OLD=DIR BENCH_COMPARE_SIZE=512M BENCH_COMPARE_RUNS=7
# OLD is a directory holding the old verity-tool and integrity-tool.
# The results are also written to $(O)/bench/compare.tsv.

OLD ?=

.PHONY: bench-compare

bench-compare: $(O)/verity-tool $(O)/integrity-tool
	$(Q)[ -n "$(OLD)" ] || { echo "bench-compare: give OLD=<dir with the old verity-tool and integrity-tool>, e.g. make bench-compare OLD=/work/before" >&2; exit 1; }
	$(Q)PKG_CONFIG="$(PKG_CONFIG)" sh scripts/deps.sh bench-compare time
	$(Q)mkdir -p $(O)/bench
	BENCH_COMPARE_TSV=$(abspath $(O)/bench/compare.tsv) \
		sh bench/bench_compare.sh $(OLD) $(O)
