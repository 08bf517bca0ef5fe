# SPDX-License-Identifier: MIT
# FEC encoding benchmark against veritysetup: `make bench-fec` (part of
# `make bench`).  BENCH_FEC_SIZE=256M for a quicker run.

BENCH_FEC := $(O)/bench/bench_fec

.PHONY: bench-fec
bench: bench-fec

$(BENCH_FEC): $(O)/bench/bench_fec.o $(LIB)
	$(qecho) LD $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(DEP_LIBS)

bench-fec: $(BENCH_FEC)
	$(Q)PKG_CONFIG="$(PKG_CONFIG)" sh scripts/deps.sh bench
	BENCH_FEC=$(abspath $(BENCH_FEC)) sh bench/bench_fec.sh
-include $(O)/bench/bench_fec.d
