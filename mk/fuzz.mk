# SPDX-License-Identifier: MIT
# libFuzzer targets (clang): `make fuzz` runs each for FUZZ_SECONDS (60),
# `make fuzz-smoke` for FUZZ_SMOKE_SECONDS (20) each, for CI.  The library
# and the tools are built with ASan+UBSan and coverage into FUZZ_O; seed
# corpora and dictionaries are made by fuzz/seeds.sh with those tools.
# Findings: $(FUZZ_O)/artifacts/<target>-crash-*; reproduce with
#   $(FUZZ_O)/fuzz/fuzz_<target> <file>
# `make -j2 fuzz-smoke` runs two targets at a time.
# `make fuzz-luks2` runs the structure-aware LUKS2 JSON target for
# FUZZ_LUKS2_SECONDS (default 150; .ci/run passes 120); `make
# fuzz-luks2-coverage` replays its corpus through a clang coverage build
# and reports lib/crypt/luks2*.c.

FUZZ_O ?= build-fuzz
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 20
FUZZ_FLAGS ?=
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
FUZZ_TARGETS := verity_sb integrity_sb verity_verify integrity_check \
	verity_cli integrity_cli luks2_header luks2_json
FUZZ_BINS := $(patsubst %,$(FUZZ_O)/fuzz/fuzz_%,$(FUZZ_TARGETS))
FUZZ_LIBS := $(patsubst %.c,$(FUZZ_O)/%.o,$(TOOL_COMMON_SRCS)) \
	$(FUZZ_O)/libdmt.a
# integrity_cli links the tool's objects, all but its main()
FUZZ_IT_OBJS := $(filter-out %/main.o,$(patsubst %.c,$(FUZZ_O)/%.o,\
	$(wildcard tools/integrity-tool/*.c)))
FUZZ_SEEDS := $(FUZZ_O)/seeds/.stamp
# inputs are small images, except the CLI ones (argument lists)
FUZZ_MAXLEN_verity_sb := 1024
FUZZ_MAXLEN_integrity_sb := 1024
FUZZ_MAXLEN_verity_verify := 65536
FUZZ_MAXLEN_integrity_check := 300000
FUZZ_MAXLEN_verity_cli := 1024
FUZZ_MAXLEN_integrity_cli := 1024
FUZZ_MAXLEN_luks2_header := 140000
FUZZ_MAXLEN_luks2_json := 65536
FUZZ_LUKS2_SECONDS ?= 150
FUZZ_ABS = $(abspath $(FUZZ_O))
FUZZ_DICT_verity_cli = -dict=$(FUZZ_ABS)/seeds/verity_cli.dict
FUZZ_DICT_integrity_cli = -dict=$(FUZZ_ABS)/seeds/integrity_cli.dict
FUZZ_DICT_luks2_json = -dict=$(CURDIR)/fuzz/luks2_json.dict
# CLI targets: files past RLIMIT_FSIZE fail with EFBIG (no SIGXFSZ)
FUZZ_RUNFLAGS_verity_cli := -handle_xfsz=0
FUZZ_RUNFLAGS_integrity_cli := -handle_xfsz=0

.PHONY: fuzz fuzz-smoke fuzz-build fuzz-build-bins fuzz-deps fuzz-lib \
	fuzz-luks2 fuzz-luks2-coverage \
	$(addprefix fuzz-run-,$(FUZZ_TARGETS))

fuzz-deps:
	$(Q)PKG_CONFIG="$(PKG_CONFIG)" sh scripts/deps.sh fuzz clang libclang-rt-dev perl

# The library and the tools, instrumented, through the main Makefile.
fuzz-lib: fuzz-deps
	$(Q)$(MAKE) --no-print-directory O=$(FUZZ_O) CC=$(FUZZ_CC) SANITIZE= \
		CFLAGS="-O1 -g -fsanitize=fuzzer-no-link $(FUZZ_SAN)" \
		LDFLAGS="$(FUZZ_SAN)" $(FUZZ_LIBS) $(FUZZ_O)/verity-tool \
		$(FUZZ_O)/integrity-tool $(FUZZ_O)/crypt-tool

FUZZ_CFLAGS = $(BASE_CFLAGS) $(DEP_CFLAGS) -O1 -g -fsanitize=fuzzer $(FUZZ_SAN)

# The CLI targets compile the tools' sources in.
$(FUZZ_O)/fuzz/fuzz_verity_cli: $(wildcard tools/verity-tool/*.[ch])
$(FUZZ_O)/fuzz/fuzz_integrity_cli: FUZZ_EXTRA = $(FUZZ_IT_OBJS)
$(FUZZ_O)/fuzz/fuzz_integrity_cli: $(FUZZ_IT_OBJS)
$(FUZZ_O)/fuzz/fuzz_%: fuzz/fuzz_%.c fuzz/cli_harness.h $(FUZZ_LIBS)
	$(qecho) FUZZ $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_EXTRA) $(FUZZ_LIBS) $(DEP_LIBS)

$(FUZZ_SEEDS): fuzz/seeds.sh $(wildcard fuzz/luks2_json/*.json) \
	$(FUZZ_O)/verity-tool $(FUZZ_O)/integrity-tool $(FUZZ_O)/crypt-tool
	$(Q)ASAN_OPTIONS=detect_leaks=0 sh fuzz/seeds.sh $(FUZZ_O) \
		$(FUZZ_O)/seeds
	$(Q)touch $@

# Two steps: the library first (its own make), then what links with it.
fuzz-build: fuzz-lib
	$(Q)$(MAKE) --no-print-directory fuzz-build-bins
fuzz-build-bins: $(FUZZ_BINS) $(FUZZ_SEEDS)

# fuzz-run-<target>: one target for FUZZ_SECONDS; new inputs are kept in
# $(FUZZ_O)/corpus/<target>, the seeds are read only.
$(addprefix fuzz-run-,$(FUZZ_TARGETS)): fuzz-run-%: fuzz-build
	$(Q)mkdir -p $(FUZZ_O)/corpus/$* $(FUZZ_O)/artifacts
	@echo "  FUZZ    $* for $(FUZZ_SECONDS) s"
	$(Q)cd $(FUZZ_ABS) && $(FUZZ_ENV_$*) ./fuzz/fuzz_$* \
		-max_total_time=$(FUZZ_SECONDS) -max_len=$(FUZZ_MAXLEN_$*) \
		-timeout=25 -rss_limit_mb=2048 \
		-close_fd_mask=3 -print_final_stats=1 \
		-artifact_prefix=$(FUZZ_ABS)/artifacts/$*- $(FUZZ_DICT_$*) \
		$(FUZZ_RUNFLAGS_$*) $(FUZZ_FLAGS) $(FUZZ_ABS)/corpus/$* \
		$(FUZZ_ABS)/seeds/$* > fuzz-$*.log 2>&1 || \
		{ tail -n 60 fuzz-$*.log; exit 1; }
	@grep -h -e "^stat::number_of_executed_units" \
		-e "^stat::average_exec_per_sec" -e "^stat::new_units_added" \
		$(FUZZ_O)/fuzz-$*.log | sed 's/^/  $* /'

fuzz: $(addprefix fuzz-run-,$(FUZZ_TARGETS))

fuzz-smoke:
	$(Q)$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS)

fuzz-luks2:
	$(Q)$(MAKE) --no-print-directory fuzz-run-luks2_json \
		FUZZ_SECONDS=$(FUZZ_LUKS2_SECONDS)

# Coverage of the LUKS2 code by the luks2_json corpus (seeds and what the
# runs kept): the library and the target built with clang's source-based
# coverage (no sanitizer), every input run once.
FUZZCOV_O ?= build-fuzzcov
FUZZCOV_FLAGS := -fprofile-instr-generate -fcoverage-mapping
FUZZCOV_BIN := $(FUZZCOV_O)/fuzz/fuzz_luks2_json
fuzz-luks2-coverage: fuzz-build
	$(Q)$(MAKE) --no-print-directory O=$(FUZZCOV_O) CC=$(FUZZ_CC) SANITIZE= \
		CFLAGS="-O1 -g -fsanitize=fuzzer-no-link $(FUZZCOV_FLAGS)" \
		LDFLAGS="$(FUZZCOV_FLAGS)" $(FUZZCOV_O)/libdmt.a
	$(Q)mkdir -p $(FUZZCOV_O)/fuzz $(FUZZ_O)/corpus/luks2_json
	$(Q)$(FUZZ_CC) $(BASE_CFLAGS) $(DEP_CFLAGS) -O1 -g -fsanitize=fuzzer \
		$(FUZZCOV_FLAGS) -o $(FUZZCOV_BIN) fuzz/fuzz_luks2_json.c \
		$(FUZZCOV_O)/libdmt.a $(DEP_LIBS)
	$(Q)rm -f $(FUZZCOV_O)/luks2-*.profraw
	$(Q)LLVM_PROFILE_FILE=$(abspath $(FUZZCOV_O))/luks2-%p.profraw \
		$(FUZZCOV_BIN) -runs=0 -max_len=$(FUZZ_MAXLEN_luks2_json) \
		$(FUZZ_O)/corpus/luks2_json $(FUZZ_O)/seeds/luks2_json \
		> $(FUZZCOV_O)/replay.log 2>&1 || { tail -n 20 $(FUZZCOV_O)/replay.log; exit 1; }
	$(Q)llvm-profdata merge -sparse $(FUZZCOV_O)/luks2-*.profraw \
		-o $(FUZZCOV_O)/luks2.profdata
	$(Q)llvm-cov report $(FUZZCOV_BIN) \
		-instr-profile=$(FUZZCOV_O)/luks2.profdata \
		$(wildcard lib/crypt/luks2*.c)
