# SPDX-License-Identifier: MIT
# fsverity-tool vs `fsverity digest` (fsverity-utils 1.5) benchmark, part of
# `make bench`: one big file, a /usr-like tree and a tree of small files,
# see bench/bench_fsverity.sh.
#   make bench-fsverity BENCH_FSVERITY_BIG=256M BENCH_FSVERITY_FILES=5000

.PHONY: bench-fsverity
bench: bench-fsverity

# The least a program does for the small-file run (bench/fsverity_floor.c).
FSVERITY_FLOOR := $(O)/bench/fsverity_floor

$(FSVERITY_FLOOR): $(O)/bench/fsverity_floor.o $(LIB)
	$(qecho) LD $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(DEP_LIBS)

bench-fsverity: $(O)/fsverity-tool $(FSVERITY_FLOOR)
	$(Q)PKG_CONFIG="$(PKG_CONFIG)" sh scripts/deps.sh bench fsverity bc time
	$(Q)mkdir -p $(O)/bench
	FSVERITY_TOOL=$(abspath $(O)/fsverity-tool) \
		FSVERITY_FLOOR=$(abspath $(FSVERITY_FLOOR)) \
		BENCH_SUMMARY_DIR=$(abspath $(O)/bench) \
		sh bench/bench_fsverity.sh
-include $(O)/bench/fsverity_floor.d
