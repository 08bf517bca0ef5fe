# SPDX-License-Identifier: MIT
# FEC encoding benchmark against veritysetup: `make bench-fec` (part of
# `make bench`).  BENCH_FEC_SIZE=256M for a quicker run.

BENCH_FEC := $(O)/bench/bench_fec

.PHONY: bench-fec
bench-all: bench-fec

$(BENCH_FEC): $(O)/bench/bench_fec.o $(LIB)
	$(qecho) LD $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(DEP_LIBS)

bench-fec: $(BENCH_FEC)
	$(Q)PKG_CONFIG="$(PKG_CONFIG)" sh scripts/deps.sh bench time
	$(Q)mkdir -p $(O)/bench && rm -f $(O)/bench/summary-fec.tsv
	BENCH_FEC=$(abspath $(BENCH_FEC)) BENCH_SUMMARY_DIR=$(abspath $(O)/bench) \
		sh bench/bench_fec.sh
-include $(O)/bench/bench_fec.d
