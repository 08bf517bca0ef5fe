# SPDX-License-Identifier: MIT
# Hash engine benchmark: `make bench-hash` (part of `make bench`).

BENCH_HASH := $(O)/bench/bench_hash
BENCH_HASH_FLAGS ?=

.PHONY: bench-hash
bench-all: bench-hash

$(BENCH_HASH): $(O)/bench/bench_hash.o $(LIB)
	$(qecho) LD $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(DEP_LIBS)

bench-hash: $(BENCH_HASH)
	$(Q)mkdir -p $(O)/bench && rm -f $(O)/bench/summary-hash.tsv
	$(BENCH_HASH) $(BENCH_HASH_FLAGS) -s $(O)/bench/summary-hash.tsv
-include $(O)/bench/bench_hash.d
