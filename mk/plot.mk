# SPDX-License-Identifier: MIT
# Benchmark chart (scripts/plot-bench.py, python3 standard library only).
#   make bench-plot                  run `make bench`, keep its output in
#                                    $(O)/bench.txt, draw docs/performance.svg
#   make bench-plot BENCH_TXT=FILE   only draw the chart from an earlier output
#   make check-plot-bench            the plotter's self-test (part of check)

BENCH_TXT ?=
BENCH_SVG ?= docs/performance.svg
PYTHON ?= python3
BENCH_TITLE = make bench, $(shell uname -m), $(shell nproc) CPUs, \
	$(shell date +%Y-%m-%d)

.PHONY: bench-plot check-plot-bench

ifeq ($(BENCH_TXT),)
# Every bench runs (-k) and the chart is drawn even when one misses its
# target (exit 1); the status of `make bench` is returned afterwards.
bench-plot:
	$(Q)PKG_CONFIG="$(PKG_CONFIG)" sh scripts/deps.sh bench python3
	$(Q)mkdir -p $(O)
	+$(Q){ $(MAKE) -k --no-print-directory bench; echo $$? >$(O)/bench.rc; } \
		| tee $(O)/bench.txt
	$(PYTHON) scripts/plot-bench.py --title "$(BENCH_TITLE)" \
		-o $(BENCH_SVG) $(O)/bench.txt
	$(Q)rc=$$(cat $(O)/bench.rc); [ "$$rc" = 0 ] || { \
		echo "bench-plot: make bench exited $$rc (chart drawn from what it printed)" >&2; \
		exit $$rc; }
else
bench-plot:
	$(PYTHON) scripts/plot-bench.py -o $(BENCH_SVG) $(BENCH_TXT)
endif

check-plot-bench:
	$(Q)if command -v $(PYTHON) >/dev/null 2>&1; then \
		$(PYTHON) scripts/plot-bench.py --self-test; \
	else \
		echo "check-plot-bench: SKIPPED ($(PYTHON) not found)"; \
	fi

check: check-plot-bench
