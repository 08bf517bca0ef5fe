#!/bin/sh
# SPDX-License-Identifier: MIT
# `make check-install`: checks a `make install DESTDIR=...` tree and builds
# tests/install/consumer.c against it with nothing but pkg-config (the
# examples/ programs follow: tests/install/examples.sh, from mk/install.mk).
# Usage: check-install.sh TESTDIR PREFIX LIBDIR BUILD_DIR VERSION SOVERSION
# (the installed tree is TESTDIR/root; the tools of BUILD_DIR are the oracle)
set -eu
dir=$1 prefix=$2 libdir=$3 build=$4 version=$5 soversion=$6
root=$dir/root
lib=$root$libdir
CC=${CC:-cc}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
src=$(cd "$(dirname "$0")" && pwd)
failed=0
fail() { echo "check-install: FAIL: $*" >&2; failed=1; }
ok() { echo "check-install: ok: $*"; }

# ---- the installed files ----
for f in verity-tool integrity-tool fsverity-tool crypt-tool; do
	f=$root$prefix/sbin/$f
	[ -x "$f" ] || fail "$f not installed"
done
for f in verity-tool.8 integrity-tool.8 fsverity-tool.8 crypt-tool.8; do
	[ -f "$root$prefix/share/man/man8/$f" ] || fail "man page $f not installed"
done
for h in "$src"/../../include/dmt/*.h; do
	cmp -s "$h" "$root$prefix/include/dmt/$(basename "$h")" ||
		fail "header dmt/$(basename "$h") not installed"
done
real=libdmt.so.$version
soname=libdmt.so.$soversion
[ -f "$lib/$real" ] && [ ! -L "$lib/$real" ] || fail "$lib/$real missing"
[ "$(readlink "$lib/$soname" || true)" = "$real" ] || fail "$soname is not a link to $real"
[ "$(readlink "$lib/libdmt.so" || true)" = "$soname" ] || fail "libdmt.so is not a link to $soname"
[ -f "$lib/libdmt.a" ] || fail "libdmt.a not installed"
got=$(readelf -d "$lib/$real" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$got" = "$soname" ] || fail "SONAME is '$got', want $soname"
[ "$failed" = 0 ] && ok "files, links, SONAME $soname"

# ---- exported symbols: exactly the API the installed headers name ----
# (nm -D lists the version node LIBDMT_0 as an absolute symbol: not code)
nm -D --defined-only "$lib/$real" | awk '$2 != "A" { print $3 }' |
	sed 's/@.*//' | sort -u >"$dir/exported.txt"
cat "$root$prefix"/include/dmt/*.h | grep -o '\bdmt_[A-Za-z0-9_]*' | sort -u \
	>"$dir/named.txt"
nm -g --defined-only "$lib/libdmt.a" | awk 'NF == 3 && $3 ~ /^dmt_/ { print $3 }' |
	sort -u >"$dir/archive-dmt.txt"
comm -12 "$dir/named.txt" "$dir/archive-dmt.txt" >"$dir/api.txt"
leaks=$(comm -23 "$dir/exported.txt" "$dir/api.txt")
[ -z "$leaks" ] || fail "exported but not in the installed headers: $(echo $leaks)"
missing=$(comm -13 "$dir/exported.txt" "$dir/api.txt")
[ -z "$missing" ] || fail "in the headers but not exported: $(echo $missing)"
for s in dmt_io_fault_set dmt_cpu_mask_off dmt_sha256_shani dmt_overlay_new; do
	grep -qx "$s" "$dir/exported.txt" && fail "internal symbol $s exported"
done
hidden=$(comm -23 "$dir/archive-dmt.txt" "$dir/api.txt" | wc -l)
[ "$failed" = 0 ] && ok "$(wc -l <"$dir/exported.txt") symbols exported, the headers' API; $hidden internal dmt_ symbols kept local"
# every DT_NEEDED library must resolve (the .so was linked with -z defs)
ldd "$lib/$real" | grep -q 'not found' && fail "unresolved DT_NEEDED: $(ldd "$lib/$real" | grep 'not found')"

# ---- a consumer built with pkg-config only ----
export PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$root"
cflags=$($PKG_CONFIG --cflags libdmt) || { fail "pkg-config --cflags libdmt"; exit 1; }
libs=$($PKG_CONFIG --libs libdmt) || { fail "pkg-config --libs libdmt"; exit 1; }
modver=$($PKG_CONFIG --modversion libdmt)
[ "$modver" = "$version" ] || fail "pkg-config --modversion says $modver, want $version"
grep -q "^#define DMT_VERSION_STRING \"$version\"$" \
	"$root$prefix/include/dmt/version.h" ||
	fail "dmt/version.h's DMT_VERSION_STRING is not $version"
static_libs=$($PKG_CONFIG --static --libs libdmt) || { fail "pkg-config --static --libs libdmt"; exit 1; }
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
echo "check-install: cflags: $cflags; libs: $libs"

# every installed header compiles on its own, as the first include
for h in "$root$prefix"/include/dmt/*.h; do
	printf '#include <dmt/%s>\nint dmt_check_install_unit;\n' "$(basename "$h")" \
		>"$dir/header.c"
	$CC -std=c11 -Wall -Wextra -Werror $cflags -c -o "$dir/header.o" \
		"$dir/header.c" || fail "<dmt/$(basename "$h")> does not compile on its own"
done
[ "$failed" = 0 ] && ok "every <dmt/*.h> compiles on its own (-std=c11)"

$CC -std=c11 -Wall -Wextra -Werror -o "$dir/consumer" "$src/consumer.c" \
	$cflags $libs -Wl,-rpath,"$lib"
# the consumer must run from the installed copy, not from the build tree
so=$(ldd "$dir/consumer" | awk '/libdmt\.so/ { print $3 }')
[ "$so" = "$lib/$soname" ] || fail "consumer loads libdmt from '$so', want $lib/$soname"
# and the static archive with Requires.private/Libs.private (one -ldmt
# swapped for the archive: the linker would otherwise pick the .so)
$CC -std=c11 -Wall -Wextra -Werror -o "$dir/consumer-static" "$src/consumer.c" \
	$cflags $(echo "$static_libs" | sed 's/-ldmt\b/-l:libdmt.a/') ||
	fail "static link with pkg-config --static --libs libdmt"

for c in consumer consumer-static; do
	[ -x "$dir/$c" ] || continue
	"$dir/$c" kat || fail "$c kat"
	# 300 blocks: three level-0 hash blocks and a level-1 block
	salt=5a17c0ffee0123456789abcdef5a17c0ffee0123456789abcdef00112233aabb
	want_file=$dir/$c.data
	got=$("$dir/$c" verity-root "$want_file" "$salt" 300) || fail "$c verity-root"
	"$build/verity-tool" build "$want_file" "$dir/$c.hash" --salt="$salt" \
		--uuid=00000000-1111-2222-3333-444444444444 \
		--root-hash-file="$dir/$c.root" -q >/dev/null ||
		fail "verity-tool build"
	want=$(cat "$dir/$c.root" 2>/dev/null || true)
	if [ -n "$got" ] && [ "$got" = "$want" ]; then
		ok "$c: root hash $got = verity-tool's"
	else
		fail "$c: root hash '$got', verity-tool says '$want'"
	fi
done

[ "$failed" = 0 ] || { echo "check-install: FAILED" >&2; exit 1; }
echo "check-install: passed"
