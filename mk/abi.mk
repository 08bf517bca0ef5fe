# SPDX-License-Identifier: MIT
# The ABI of libdmt.so.0, held by a check (abi/abi.sh; abidw and abidiff
# from Debian's abigail-tools, a check-time package of scripts/deps.sh):
#   make check-abi       the built libdmt.so against abi/libdmt.so.0.abi:
#                        fails on a removed or changed exported function,
#                        variable or public type, and when the export
#                        lists (the version script made from the headers,
#                        the library, the baseline, debian/libdmt0.symbols)
#                        disagree
#   make abi-baseline    rewrite abi/libdmt.so.0.abi from the built library,
#                        and debian/libdmt0.symbols (make debian-symbols):
#                        commit both with the change that needs them (an
#                        incompatible change also needs a new soname)
#   make check-abi-test  check-abi fails on a removed export and on a member
#                        inserted into a public struct (libraries relinked
#                        in $(O)/abi-test/ from copies, removed when the
#                        test passes), passes unchanged
# `make check` runs check-abi and check-abi-test when abidw is installed.
# The baseline is x86-64's (sizes and offsets are the architecture's).

ABI_BASELINE := abi/libdmt.so.0.abi
ABI_SYMBOLS := debian/libdmt0.symbols
ABI_T = $(O)/abi-test
# the object that defines dmt_verity_params_init() is rebuilt against the
# copied headers (struct dmt_verity_params is its argument)
ABI_PROBE_SRC = $(firstword $(shell grep -lE '^[a-z].*[ *]dmt_verity_params_init\b' $(LIB_SRCS)))
ABI_PROBE_OBJ = $(patsubst %.c,$(O)/pic/%.o,$(ABI_PROBE_SRC))
ABI_LINK = $(CC) -shared $(ALL_LDFLAGS) -Wl,-soname,$(DMT_SONAME) -Wl,-z,defs
HAVE_ABIDW := $(shell command -v abidw >/dev/null 2>&1 && command -v abidiff >/dev/null 2>&1 && echo 1)

.PHONY: check-abi check-abi-test abi-baseline abi-deps check-abi-skipped
# abigail-tools installed as the other steps' packages are (as root,
# unless NO_DEPS=1); `make check` has it from its check step already
abi-deps:
	$(Q)PKG_CONFIG="$(PKG_CONFIG)" sh scripts/deps.sh abi abigail-tools

check-abi: $(SHLIB) $(O)/libdmt.map | abi-deps
	$(Q)sh abi/abi.sh check $(ABI_BASELINE) $(SHLIB) $(O)/libdmt.map \
		$(ABI_SYMBOLS) include/dmt

# one command for a meant change: the baseline and the symbols file
abi-baseline: $(SHLIB) debian-symbols | abi-deps
	$(Q)sh abi/abi.sh dump $(SHLIB) $(ABI_BASELINE).tmp include/dmt
	$(Q)mv $(ABI_BASELINE).tmp $(ABI_BASELINE)
	@echo "$(ABI_BASELINE): $$(grep -c '<elf-symbol' $(ABI_BASELINE)) symbols; commit it with $(ABI_SYMBOLS)"

check-abi-test: $(SHLIB) $(O)/libdmt.map | abi-deps
	$(Q)test -n "$(ABI_PROBE_SRC)" || { echo "check-abi-test: no source defines dmt_verity_params_init" >&2; exit 1; }
	$(Q)rm -rf $(ABI_T) && mkdir -p $(ABI_T)/removed
	$(Q)cp $(ABI_BASELINE) $(ABI_T)/baseline.abi
	$(Q)for v in same field; do \
		mkdir -p $(ABI_T)/$$v && cp -r include $(ABI_T)/$$v/ || exit 1; \
	done
	$(Q)sed -i '/^struct dmt_verity_params {$$/a\	uint32_t abi_test_inserted;' \
		$(ABI_T)/field/include/dmt/verity.h
	$(Q)grep -q abi_test_inserted $(ABI_T)/field/include/dmt/verity.h || \
		{ echo "check-abi-test: struct dmt_verity_params not found" >&2; exit 1; }
	$(Q)for v in same field; do \
		$(CC) -I$(ABI_T)/$$v/include $(ALL_CFLAGS) $(PIC_CFLAGS) \
			$(call isa_flags,$(ABI_PROBE_SRC)) -c \
			-o $(ABI_T)/$$v/probe.o $(ABI_PROBE_SRC) && \
		$(ABI_LINK) -Wl,--version-script=$(O)/libdmt.map \
			-o $(ABI_T)/$$v/libdmt.so.0 \
			$(filter-out $(ABI_PROBE_OBJ),$(LIB_PIC_OBJS)) \
			$(ABI_T)/$$v/probe.o $(LIB_DEP_LIBS) || exit 1; \
	done
	$(Q)sed -n 's/^	\(dmt_[A-Za-z0-9_]*\);$$/\1/p' $(O)/libdmt.map | head -n 1 \
		>$(ABI_T)/removed/symbol
	$(Q)grep -v "^	$$(cat $(ABI_T)/removed/symbol);$$" $(O)/libdmt.map \
		>$(ABI_T)/removed/libdmt.map
	$(Q)$(ABI_LINK) -Wl,--version-script=$(ABI_T)/removed/libdmt.map \
		-o $(ABI_T)/removed/libdmt.so.0 $(LIB_PIC_OBJS) $(LIB_DEP_LIBS)
	$(Q)sh abi/abi-test.sh $(ABI_T) $(SHLIB) $(O)/libdmt.map $(ABI_SYMBOLS)
	$(Q)rm -rf $(ABI_T)

# make check: both (HAVE_ABIDW is probed again once the check step has
# installed the packages: make restarts), or one line saying why not:
# not in a sanitizer build (check-clang's: its objects are instrumented, a
# shared library of them is no library anyone installs), not without
# debug information (abidw reads the types from it), not on another
# architecture than the baseline's.
ABI_SKIP :=
ifneq ($(HAVE_ABIDW),1)
ABI_SKIP := abidw/abidiff not installed (apt-get install abigail-tools)
endif
ifeq ($(findstring -g,$(CFLAGS)),)
ABI_SKIP := CFLAGS without -g (no debug information)
endif
ifneq ($(ARCH),x86_64)
ABI_SKIP := the baseline is x86-64's, this is $(ARCH)
endif
ifneq ($(SANITIZE),)
ABI_SKIP := SANITIZE=$(SANITIZE) build
endif
ifeq ($(ABI_SKIP),)
check: check-abi check-abi-test
else
check: check-abi-skipped
endif
check-abi-skipped:
	@echo "check-abi: SKIPPED: $(ABI_SKIP)"
