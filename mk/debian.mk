# SPDX-License-Identifier: MIT
# Debian packages (debian/: debhelper 13, dh): dmt-tools, libdmt0,
# libdmt-dev.
#   make deb              dpkg-buildpackage -us -uc -b from a clean clone
#                         of HEAD, the .debs in $(O)/deb/, lintian on them
#                         (scripts/check-debs.sh; as root it installs the
#                         Build-Depends and lintian first)
#   make debian-symbols   rewrite debian/libdmt0.symbols from the built
#                         libdmt.so (what it exports: the version script's
#                         API), keeping each old symbol's version
# `make check-fresh` builds, installs and uses the packages on a fresh root.

.PHONY: deb debian-symbols
deb:
	$(Q)sh scripts/check-debs.sh build $(O)/deb

debian-symbols: shared
	$(Q)sh scripts/libdmt-symbols.sh $(SHLIB) $(VERSION) \
		debian/libdmt0.symbols >debian/libdmt0.symbols.tmp
	$(Q)mv debian/libdmt0.symbols.tmp debian/libdmt0.symbols
	@echo "debian/libdmt0.symbols: $$(grep -c '^ ' debian/libdmt0.symbols) symbols"
