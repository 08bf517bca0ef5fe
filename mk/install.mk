# SPDX-License-Identifier: MIT
# The shared library and `make install` of the library (the main Makefile's
# install rule installs the tools and man pages):
#   $(LIBDIR)/libdmt.so.$(VERSION), libdmt.so.0 (soname) and libdmt.so links,
#   $(LIBDIR)/libdmt.a, $(INCLUDEDIR)/dmt/*.h, $(PKGCONFIGDIR)/libdmt.pc.
# The .so is linked from its own -fPIC object set in $(O)/pic/, so the tools
# and tests keep linking exactly the objects `make all` builds (position-
# dependent code, no interposable calls); the PIC set is built only when the
# shared library is asked for.  Only the API is exported: the dmt_ symbols
# the public headers name ($(O)/libdmt.map, made by scripts/libdmt-map.sh);
# the backends, the walk, the overlay and the test hooks stay local.
# `make check-install` installs into a DESTDIR under $(O) and builds and runs
# tests/install/consumer.c and the four programs of examples/ against that
# copy through pkg-config (tests/install/examples.sh: each result checked
# by veritysetup, fsverity, integritysetup or cryptsetup); `make check`
# runs the examples too (check-examples).

LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig

# DMT_SONAME, SHLIB, PCFILE, LIB_PIC_OBJS: in the Makefile (other fragments
# name them in prerequisites, which make expands as it reads them).
PUBLIC_HEADERS := $(wildcard include/dmt/*.h)

# What the library itself links against (the tools add popt);
# the static link in check-install fails if this list misses one.
LIB_PKGS := libcrypto libxxhash json-c uuid $(if $(HAVE_ARGON2),libargon2)
LIB_DEP_LIBS = $(shell $(PKG_CONFIG) --libs $(LIB_PKGS) 2>/dev/null || echo -lcrypto -lxxhash)

# A library that is only ever called through its API: nobody interposes its
# internal calls, so let the compiler keep them direct (and inlinable).
PIC_CFLAGS := -fPIC -fno-semantic-interposition

.PHONY: shared install-lib check-install check-examples
shared: $(SHLIB) $(PCFILE)
install: install-lib

$(O)/pic/%.o: %.c $(CONFIG_LIB)
	$(qecho) CC-PIC $<
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) $(PIC_CFLAGS) $(call isa_flags,$<) -MMD -MP \
		-c -o $@ $<

$(O)/libdmt.map: scripts/libdmt-map.sh $(PUBLIC_HEADERS) $(LIB_PIC_OBJS)
	$(Q)sh scripts/libdmt-map.sh LIBDMT_$(DMT_SOVERSION) $(PUBLIC_HEADERS) \
		-- $(LIB_PIC_OBJS) >$@.tmp && mv $@.tmp $@

# -z defs: every symbol the library uses must come from a library it names.
$(SHLIB): $(LIB_PIC_OBJS) $(O)/libdmt.map
	$(qecho) LD $@
	$(Q)$(CC) -shared $(ALL_LDFLAGS) -Wl,-soname,$(DMT_SONAME) \
		-Wl,--version-script=$(O)/libdmt.map -Wl,-z,defs \
		-o $@ $(LIB_PIC_OBJS) $(LIB_DEP_LIBS)

$(PCFILE): lib/libdmt.pc.in FORCE
	$(Q)mkdir -p $(dir $@)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		-e 's|@REQUIRES_PRIVATE@|$(LIB_PKGS)|' $< > $@.tmp
	$(Q)if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

# The library's files under the destination $(1) (DESTDIR); $(2) is
# the commands' prefix ($(Q) to keep them quiet).
define install_lib
	$(2)install -d $(1)$(LIBDIR) $(1)$(INCLUDEDIR)/dmt $(1)$(PKGCONFIGDIR)
	$(2)install -m 0755 $(SHLIB) $(1)$(LIBDIR)/
	$(2)ln -sf $(notdir $(SHLIB)) $(1)$(LIBDIR)/$(DMT_SONAME)
	$(2)ln -sf $(DMT_SONAME) $(1)$(LIBDIR)/libdmt.so
	$(2)install -m 0644 $(LIB) $(1)$(LIBDIR)/
	$(2)install -m 0644 $(PUBLIC_HEADERS) $(1)$(INCLUDEDIR)/dmt/
	$(2)install -m 0644 $(PCFILE) $(1)$(PKGCONFIGDIR)/
endef

install-lib: $(SHLIB) $(LIB) $(PCFILE)
	$(call install_lib,$(DESTDIR))

# The install test uses its own prefix and libdir to show both are honoured.
CHECK_INSTALL_DIR = $(abspath $(O))/install-test
CHECK_INSTALL_PREFIX := /opt/dmt
CHECK_INSTALL_LIBDIR := /opt/dmt/lib64

check-install: tools
	$(Q)rm -rf $(CHECK_INSTALL_DIR)
	$(Q)$(MAKE) --no-print-directory install O=$(O) \
		DESTDIR=$(CHECK_INSTALL_DIR)/root \
		PREFIX=$(CHECK_INSTALL_PREFIX) LIBDIR=$(CHECK_INSTALL_LIBDIR) \
		>$(CHECK_INSTALL_DIR).log 2>&1 || \
		{ cat $(CHECK_INSTALL_DIR).log; exit 1; }
	$(Q)CC="$(CC)" PKG_CONFIG="$(PKG_CONFIG)" sh tests/install/check-install.sh \
		$(CHECK_INSTALL_DIR) $(CHECK_INSTALL_PREFIX) \
		$(CHECK_INSTALL_LIBDIR) $(abspath $(O)) $(VERSION) $(DMT_SOVERSION)
	$(Q)CC="$(CC)" PKG_CONFIG="$(PKG_CONFIG)" sh tests/install/examples.sh \
		$(CHECK_INSTALL_DIR)/examples $(CHECK_INSTALL_DIR)/root \
		$(CHECK_INSTALL_LIBDIR)

# make check: the examples against a copy of the library installed in
# $(O)/examples-test (this build's PREFIX and LIBDIR under a DESTDIR: no
# second configuration, nothing in the build tree rebuilt), removed when
# they pass
EXAMPLES_DIR = $(abspath $(O))/examples-test
check-examples: $(SHLIB) $(LIB) $(PCFILE)
	$(Q)rm -rf $(EXAMPLES_DIR)
	$(call install_lib,$(EXAMPLES_DIR)/root,$(Q))
	$(Q)CC="$(CC)" PKG_CONFIG="$(PKG_CONFIG)" sh tests/install/examples.sh \
		$(EXAMPLES_DIR)/run $(EXAMPLES_DIR)/root $(LIBDIR)
	$(Q)rm -rf $(EXAMPLES_DIR)
# (not in a sanitizer build: an instrumented libdmt.so needs its runtime
# loaded first, which no consumer does)
ifeq ($(SANITIZE),)
check: check-examples
else
check: check-examples-skipped
endif
.PHONY: check-examples-skipped
check-examples-skipped:
	@echo "check-examples: SKIPPED: SANITIZE=$(SANITIZE) build"

-include $(LIB_PIC_OBJS:.o=.d)
