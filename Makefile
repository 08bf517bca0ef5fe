# SPDX-License-Identifier: MIT
# verity-tool / integrity-tool.  GNU Make.  `make help` lists the targets.

O ?= build
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
DESTDIR ?=
VERSION := 0.1.0

CC ?= cc
PKG_CONFIG ?= pkg-config
ARCH := $(shell $(CC) -dumpmachine 2>/dev/null | sed -e 's/-.*//')

WARN := -Wall -Wextra -Werror -Wno-unused-parameter -Wmissing-prototypes \
	-Wstrict-prototypes -Wshadow -Wvla
CFLAGS ?= -O2 -g
BASE_CFLAGS := -std=gnu11 $(WARN) -fno-strict-aliasing -D_GNU_SOURCE \
	-DDMT_VERSION='"$(VERSION)"' -I. -Iinclude -pthread
comma := ,
SANITIZE ?=
ifneq ($(SANITIZE),)
O := build-$(subst $(comma),-,$(SANITIZE))
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif

# Dependencies: scripts/configure.sh writes DEP_CFLAGS, DEP_LIBS, TEST_LIBS
# and the optional libraries' HAVE_* into $(O)/config.mk (see below).
ALL_CFLAGS = $(BASE_CFLAGS) $(DEP_CFLAGS) $(CPPFLAGS) $(CFLAGS) $(SAN_FLAGS)
ALL_LDFLAGS = -pthread $(LDFLAGS) $(SAN_FLAGS)

ifeq ($(V),1)
Q :=
qecho = @:
else
Q := @
qecho = @printf '  %-7s %s\n'
endif

# ---- sources ----
# The library by subsystem (see README, Layout); include/dmt/ is its public
# API.  Every header has one spelling: <dmt/x.h> for the public API, the
# path from the top of the tree ("lib/common/cpu.h") for the rest.
LIB_SRCS := $(wildcard lib/common/*.c lib/hash/*.c lib/hash/s390/*.c \
	lib/verity/*.c lib/fec/*.c lib/integrity/*.c lib/sign/*.c \
	lib/fsverity/*.c lib/crypt/*.c)
ifeq ($(ARCH),x86_64)
LIB_SRCS += $(wildcard lib/hash/arch/x86_*.c lib/fec/arch/x86_*.c \
	lib/crypt/arch/x86_*.c)
endif
ifeq ($(ARCH),aarch64)
LIB_SRCS += $(wildcard lib/hash/arch/arm64_*.c)
endif
LIB_OBJS := $(patsubst %.c,$(O)/%.o,$(LIB_SRCS))
LIB := $(O)/libdmt.a
# Test hooks (lib/common/testhooks.h: DMT_IO_FAULT, dmt_io_fault_set,
# dmt_cpu_mask_off, the valgrind probe, DMT_S390CAP) exist only in objects
# built with -DDMT_TEST_HOOKS: the sources that name the flag or include
# that header, rebuilt into $(O)/hooks/.  $(LIB_HOOKS), the library with
# those objects swapped in, is linked into the test binary and the test
# builds of the tools ($(O)/test-tools/); the shipped library and tools
# (all, install, shared, the .debs) never see the flag.
HOOK_SRCS := $(shell grep -lE 'DMT_TEST_HOOKS|lib/common/testhooks\.h' \
	$(LIB_SRCS))
HOOK_OBJS := $(patsubst %.c,$(O)/hooks/%.o,$(HOOK_SRCS))
LIB_HOOKS := $(O)/libdmt-hooks.a

TOOL_COMMON_SRCS := $(wildcard tools/common/*.c)
TOOL_COMMON_OBJS := $(patsubst %.c,$(O)/%.o,$(TOOL_COMMON_SRCS))
TOOL_NAMES := verity-tool integrity-tool fsverity-tool crypt-tool
TOOLS := $(addprefix $(O)/,$(TOOL_NAMES))
TEST_TOOLS := $(addprefix $(O)/test-tools/,$(TOOL_NAMES))
tool_objs = $(patsubst %.c,$(O)/%.o,$(wildcard tools/$(1)/*.c))
TOOL_OBJS := $(foreach t,$(TOOL_NAMES),$(call tool_objs,$(t)))
TEST_SRCS := $(wildcard tests/unit/*.c tests/cli/*/*.c tests/s390/*.c \
	tests/support/*.c)
TEST_OBJS := $(patsubst %.c,$(O)/%.o,$(TEST_SRCS))
TEST_BIN := $(O)/tests/unit-tests

# Per-ISA flags: each file in lib/arch/ is compiled only with its own ISA.
# SHA-NI code stays SSE-only: no host-tuning -march and no AVX flags.
ISA_FLAGS_x86_sha256_shani := -msse4.1 -msha
ISA_FLAGS_x86_sha256_avx2 := -mavx2
ISA_FLAGS_x86_sha256_avx512 := -mavx512f -mavx512vl -mavx512bw
ISA_FLAGS_x86_sha512_avx512 := -mavx512f -mavx512vl -mavx512bw
ISA_FLAGS_x86_sha512_avx2 := -mavx2
ISA_FLAGS_x86_crc32c_sse42 := -msse4.2 -mpclmul
ISA_FLAGS_x86_gf256_gfni := -mavx512f -mavx512bw -mgfni
# our own AES-XTS and AES-CBC (lib/crypt): VAES on 512-bit vectors
ISA_FLAGS_x86_aes_vaes := -maes -msse4.1 -mavx512f -mavx512bw -mavx512vl \
	-mvaes -mvpclmulqdq
ISA_FLAGS_x86_gf256_avx2 := -mavx2
ISA_FLAGS_x86_gf256_ssse3 := -mssse3
ISA_FLAGS_arm64_sha256_ce := -march=armv8-a+crypto
ISA_FLAGS_arm64_crc32c := -march=armv8-a+crc
isa_flags = $(ISA_FLAGS_$(basename $(notdir $(1))))

.PHONY: all tools check test-build bench demo install clean help deps FORCE
all: tools
tools: $(TOOLS)

# ---- configuration: dependencies first, then the probes ----
# $(O)/config.mk is an included makefile with a rule, so make remakes it
# before anything else and restarts with what it found: the rule installs
# the missing Debian packages of the step (scripts/deps.sh, as root;
# NO_DEPS=1 only names them), then probes (scripts/configure.sh).  The
# files are rewritten only when an answer changes, and the objects depend
# on $(CONFIG_LIB) (the test objects also on $(CONFIG_TEST)), so a library
# installed or removed later rebuilds what it affects.  The goals that
# build the test binary take the check step: its libraries and oracles are
# installed before anything is compiled.
CONFIG_LIB := $(O)/config/lib.cfg
CONFIG_TEST := $(O)/config/test.cfg
NOCONFIG_GOALS := clean help check-fresh deb
CHECK_GOALS := check test-build check-valgrind $(TEST_BIN)
DEPS_STEP := $(if $(filter $(CHECK_GOALS),$(MAKECMDGOALS)),check,build)
CONFIG_ENV = PKG_CONFIG="$(PKG_CONFIG)" CC="$(CC)" CFLAGS="$(CFLAGS)" \
	CPPFLAGS="$(CPPFLAGS)" WITHOUT_ARGON2="$(WITHOUT_ARGON2)" \
	VERSION="$(VERSION)" ISA_FEATURES="$(ISA_FEATURES)"
ifneq ($(filter-out $(NOCONFIG_GOALS),$(or $(MAKECMDGOALS),all)),)
ifeq ($(findstring q,$(firstword -$(MAKEFLAGS))),)
include $(O)/config.mk
$(O)/config.mk: FORCE
	$(Q)mkdir -p $(O)
	$(Q)$(CONFIG_ENV) sh scripts/deps.sh $(DEPS_STEP)
	$(Q)$(CONFIG_ENV) sh scripts/configure.sh $(O) $(DEPS_STEP)
else
# make -q (scripts/cross-check.sh asks it per object) answers from the
# configuration as it stands
-include $(O)/config.mk
endif
endif
deps:

# What --version prints: the optional library and the ISA backends built in.
ISA_FEATURES := $(sort $(foreach f,$(LIB_SRCS),$(if $(findstring /arch/,$(f)),\
	$(lastword $(subst _, ,$(basename $(notdir $(f)))))))) \
	$(if $(filter s390x,$(ARCH)),cpacf)
BUILD_FEATURES = $(if $(HAVE_ARGON2),+argon2,-argon2) \
	$(addprefix +,$(ISA_FEATURES))
BASE_CFLAGS += -DDMT_BUILD_FEATURES='"$(strip $(BUILD_FEATURES))"'

$(O)/%.o: %.c $(CONFIG_LIB)
	$(qecho) CC $<
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(call isa_flags,$<) -MMD -MP -c -o $@ $<
$(TEST_OBJS): $(CONFIG_TEST)

$(LIB): $(LIB_OBJS)
	$(qecho) AR $@
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(O)/hooks/%.o: %.c $(CONFIG_LIB)
	$(qecho) CC-HOOK $<
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -DDMT_TEST_HOOKS $(call isa_flags,$<) -MMD -MP \
		-c -o $@ $<

$(LIB_HOOKS): $(filter-out $(patsubst %.c,$(O)/%.o,$(HOOK_SRCS)),\
		$(LIB_OBJS)) $(HOOK_OBJS)
	$(qecho) AR $@
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# One link rule for every tool: its folder's objects, the CLI framework,
# the library.
.SECONDEXPANSION:
$(TOOLS): $(O)/%: $$(call tool_objs,%) $(TOOL_COMMON_OBJS) $(LIB)
	$(qecho) LD $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(DEP_LIBS)
# The same objects on the hooked library: what tests that inject faults
# into the tools (DMT_IO_FAULT) and check-valgrind run.
$(TEST_TOOLS): $(O)/test-tools/%: $$(call tool_objs,%) $(TOOL_COMMON_OBJS) \
		$(LIB_HOOKS)
	$(qecho) LD $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(DEP_LIBS)

# ---- tests ----
$(TEST_BIN): $(TEST_OBJS) $(TOOL_COMMON_OBJS) $(LIB_HOOKS)
	$(qecho) LD $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(TEST_LIBS) $(DEP_LIBS)
test-build: $(TEST_BIN) $(TOOLS) $(TEST_TOOLS)

# CRITERION_FLAGS: e.g. --filter='hash/*' ; tests find the tools via DMT_BUILD.
check: test-build
	DMT_BUILD=$(abspath $(O)) DMT_SRC=$(CURDIR) \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
		$(TEST_BIN) -j$(shell nproc) $(CRITERION_FLAGS)

demo: tools
	$(Q)sh scripts/demo.sh $(O)

install: tools
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8
	install -m 0755 $(TOOLS) $(DESTDIR)$(BINDIR)/
	install -m 0644 $(patsubst %,docs/%.8,$(TOOL_NAMES)) $(DESTDIR)$(MANDIR)/man8/

clean:
	rm -rf build build-*

help:
	@echo 'Targets:'
	@echo '  all (default)  build the tools ($(TOOL_NAMES)) into $$(O) (default build/)'
	@echo '  demo           build, then run the tools on a generated sample image'
	@echo '  check          build and run every unit/compatibility test (Criterion)'
	@echo '  check-clang    the same tests built with clang (O=build-clang)'
	@echo '  check-valgrind a reduced test suite under valgrind'
	@echo '  check-kernel   run the kernel conformance suite in a QEMU VM'
	@echo '  check-cross    build for s390x/arm64 and run the tests under qemu-user'
	@echo '  bench          benchmarks against OpenSSL, veritysetup, cryptsetup, fsverity'
	@echo '                 (not a test), then a per-CPU summary of every ratio'
	@echo '  bench-compare  OLD=<dir>: these binaries against older ones, interleaved'
	@echo '  fuzz           run the libFuzzer targets for a bounded time (clang)'
	@echo '  fuzz-smoke     every fuzz target briefly (CI)'
	@echo '  install        install the tools, man pages, libdmt.so/.a, <dmt/*.h>'
	@echo '                 and libdmt.pc (PREFIX, BINDIR, LIBDIR, INCLUDEDIR, DESTDIR)'
	@echo '  shared         build libdmt.so (own -fPIC objects) and libdmt.pc'
	@echo '  check-install  install into a DESTDIR and build a program against it'
	@echo '  check-fresh    the README quick start on a new Debian 12 root (mmdebstrap),'
	@echo '                 then the Debian packages built, installed and used there'
	@echo '  deb            Debian packages (dmt-tools, libdmt0, libdmt-dev) in $$(O)/deb'
	@echo '  clean          remove build directories'
	@echo 'Variables: CC, CFLAGS, CPPFLAGS, LDFLAGS, PKG_CONFIG, O=builddir, V=1,'
	@echo '  SANITIZE=address,undefined, NO_DEPS=1 (never install packages),'
	@echo '  WITHOUT_ARGON2=1 (build without libargon2: LUKS2 takes pbkdf2 only)'

# The shared library's names, defined before the fragments: mk/install.mk
# builds it, and mk/abi.mk and mk/debian.mk name it in prerequisites
# (expanded as each fragment is read, so a later definition would be empty).
DMT_SOVERSION := 0
DMT_SONAME := libdmt.so.$(DMT_SOVERSION)
SHLIB := $(O)/libdmt.so.$(VERSION)
PCFILE := $(O)/libdmt.pc
LIB_PIC_OBJS := $(patsubst %.c,$(O)/pic/%.o,$(LIB_SRCS))

# Module fragments (kernel suite, cross builds, bench, fuzz...).
-include mk/*.mk
-include $(LIB_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(TOOL_OBJS:.o=.d) \
	$(TOOL_COMMON_OBJS:.o=.d) $(HOOK_OBJS:.o=.d)
