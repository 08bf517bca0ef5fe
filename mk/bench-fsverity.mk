# SPDX-License-Identifier: MIT
# fsverity-tool vs `fsverity digest` (fsverity-utils 1.5) benchmark, part of
# `make bench`: one big file, a /usr-like tree and a tree of small files,
# see bench/bench_fsverity.sh.
#   make bench-fsverity BENCH_FSVERITY_BIG=256M BENCH_FSVERITY_FILES=5000

.PHONY: bench-fsverity
bench: bench-fsverity

bench-fsverity: $(O)/fsverity-tool
	$(Q)PKG_CONFIG="$(PKG_CONFIG)" sh scripts/deps.sh bench fsverity bc
	FSVERITY_TOOL=$(abspath $(O)/fsverity-tool) sh bench/bench_fsverity.sh
