# SPDX-License-Identifier: MIT
# Process start against the peers, part of `make bench`: the median of 30
# whole runs of fsverity-tool digest (empty file) vs fsverity digest and
# verity-tool build (4 KiB file) vs veritysetup format, see
# bench/bench_start.sh.
#   make bench-start BENCH_START_RUNS=100

.PHONY: bench-start
bench-all: bench-start

# Whole runs of two commands, interleaved (bench/start_time.c).
START_TIME := $(O)/bench/start_time

$(START_TIME): $(O)/bench/start_time.o
	$(qecho) LD $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^

bench-start: $(O)/fsverity-tool $(O)/verity-tool $(START_TIME)
	$(Q)PKG_CONFIG="$(PKG_CONFIG)" sh scripts/deps.sh bench fsverity
	$(Q)mkdir -p $(O)/bench
	FSVERITY_TOOL=$(abspath $(O)/fsverity-tool) \
		VERITY_TOOL=$(abspath $(O)/verity-tool) \
		START_TIME=$(abspath $(START_TIME)) \
		BENCH_SUMMARY_DIR=$(abspath $(O)/bench) sh bench/bench_start.sh
-include $(O)/bench/start_time.d
