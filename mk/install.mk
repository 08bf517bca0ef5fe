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
# tests/install/consumer.c against that copy through pkg-config.

LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig

DMT_SOVERSION := 0
DMT_SONAME := libdmt.so.$(DMT_SOVERSION)
SHLIB := $(O)/libdmt.so.$(VERSION)
PCFILE := $(O)/libdmt.pc
LIB_PIC_OBJS := $(patsubst %.c,$(O)/pic/%.o,$(LIB_SRCS))
PUBLIC_HEADERS := $(wildcard include/dmt/*.h)

# What the library itself links against (the tools add popt);
# the static link in check-install fails if this list misses one.
LIB_PKGS := libcrypto libxxhash json-c uuid $(if $(HAVE_ARGON2),libargon2)
LIB_DEP_LIBS = $(shell $(PKG_CONFIG) --libs $(LIB_PKGS) 2>/dev/null || echo -lcrypto -lxxhash)

# A library that is only ever called through its API: nobody interposes its
# internal calls, so let the compiler keep them direct (and inlinable).
PIC_CFLAGS := -fPIC -fno-semantic-interposition

.PHONY: shared install-lib check-install
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

install-lib: $(SHLIB) $(LIB) $(PCFILE)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/dmt \
		$(DESTDIR)$(PKGCONFIGDIR)
	install -m 0755 $(SHLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(SHLIB)) $(DESTDIR)$(LIBDIR)/$(DMT_SONAME)
	ln -sf $(DMT_SONAME) $(DESTDIR)$(LIBDIR)/libdmt.so
	install -m 0644 $(LIB) $(DESTDIR)$(LIBDIR)/
	install -m 0644 $(PUBLIC_HEADERS) $(DESTDIR)$(INCLUDEDIR)/dmt/
	install -m 0644 $(PCFILE) $(DESTDIR)$(PKGCONFIGDIR)/

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

-include $(LIB_PIC_OBJS:.o=.d)
