# SPDX-License-Identifier: MIT
# `make bench`: every benchmark (the bench-all prerequisites added by the
# other fragments), one after the other even under -j (they time the
# machine), then the summary of issue 15's ratios with the CPU model and
# the backends that ran (bench/bench_summary.sh), also written to
# $(O)/bench/summary.tsv.  A bench that fails or misses its own target
# does not stop the others; `make bench` exits 1 afterwards.
#   make bench-summary   print the table again from the last run's rows

BENCH_DIR = $(O)/bench

.PHONY: bench-all bench-summary

bench: $(O)/verity-tool $(O)/integrity-tool
	$(Q)mkdir -p $(BENCH_DIR) && rm -f $(BENCH_DIR)/summary*.tsv
	+$(Q)rc=0; $(MAKE) -j1 -k --no-print-directory bench-all || rc=1; \
		sh bench/bench_summary.sh $(BENCH_DIR) $(O)/verity-tool || rc=1; \
		exit $$rc

bench-summary: $(O)/verity-tool
	$(Q)sh bench/bench_summary.sh $(BENCH_DIR) $(O)/verity-tool
