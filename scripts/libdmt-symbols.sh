#!/bin/sh
# SPDX-License-Identifier: MIT
# Prints debian/libdmt0.symbols (dpkg-gensymbols' format) from a built
# libdmt.so: exactly what it exports, which is what the version script
# made from include/dmt/*.h (scripts/libdmt-map.sh) lets out, each with
# the upstream version that first had it.  Symbols already in OLD keep
# their version; new ones get VERSION.  `make debian-symbols` runs it.
# Usage: libdmt-symbols.sh SHLIB VERSION [OLD]
set -eu
so=${1:?usage: libdmt-symbols.sh SHLIB VERSION [OLD]}
version=${2:?usage: libdmt-symbols.sh SHLIB VERSION [OLD]}
old=${3:-/dev/null}
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ -n "$soname" ] || { echo "libdmt-symbols: $so has no SONAME" >&2; exit 1; }
pkg=$(echo "$soname" | sed 's/\.so\.\([0-9]*\)$/\1/')
echo "$soname $pkg #MINVER#"
echo "* Build-Depends-Package: libdmt-dev"
# nm -D prints the version node (LIBDMT_0) as an absolute symbol; dpkg
# names it LIBDMT_0@LIBDMT_0
${NM:-nm} -D --defined-only --with-symbol-versions "$so" |
	awk '{ n = $3; sub(/@@/, "@", n); if (n !~ /@/) n = n "@" n; print n }' |
	LC_ALL=C sort -u |
	while read -r sym; do
		v=$(awk -v s="$sym" '$1 == s { print $2; exit }' "$old")
		echo " $sym ${v:-$version}"
	done
