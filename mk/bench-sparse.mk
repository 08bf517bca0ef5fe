# SPDX-License-Identifier: MIT
# Every tool on a sparse file beside veritysetup and fsverity (part of
# `make bench`): time and peak RSS of each command, see
# bench/bench_sparse.sh.
#   make bench-sparse BENCH_SPARSE_SIZE=4G BENCH_SPARSE_CRYPT=1G BENCH_SPARSE_RUNS=1

.PHONY: bench-sparse
bench-all: bench-sparse

bench-sparse: tools
	$(Q)PKG_CONFIG="$(PKG_CONFIG)" sh scripts/deps.sh bench fsverity time
	DMT_BUILD=$(abspath $(O)) sh bench/bench_sparse.sh
