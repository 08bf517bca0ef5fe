#!/bin/sh
# SPDX-License-Identifier: MIT
# The Debian packages (debian/): dmt-tools, libdmt0, libdmt-dev.
#   check-debs.sh build OUT
#	builds them with `dpkg-buildpackage -us -uc -b` from a clean clone of
#	the checkout's HEAD in OUT/src (the checkout itself is left alone),
#	the .debs in OUT, then runs lintian on them: an error fails, warnings
#	are shown.  As root without NO_DEPS=1 the Build-Depends and lintian
#	are installed first (apt-get build-dep).  DEB_BUILD_OPTIONS defaults
#	to "nocheck parallel=<cores>"; set it to run the suite in the build.
#   check-debs.sh install OUT [BUILD]
#	`apt-get install ./*.deb` of OUT's packages (root), then each
#	installed tool's --version and real work: verity-tool's root hash of
#	a file equal to BUILD's verity-tool's (BUILD: an in-tree build, e.g.
#	build), and a program built against the installed libdmt-dev through
#	pkg-config (shared and static) computing the same root hash.
#   check-debs.sh all OUT [BUILD]   both (what `make check-fresh` runs)
# `make deb` is `check-debs.sh build $(O)/deb`.
set -eu
mode=${1:?usage: check-debs.sh build|install|all OUT [BUILD]}
out=${2:?usage: check-debs.sh build|install|all OUT [BUILD]}
intree=${3:-}
src=$(cd "$(dirname "$0")/.." && pwd)
say() { printf 'check-debs: %s\n' "$*"; }
die() { say "FAILED: $*" >&2; exit 1; }
as_root() { [ "$(id -u)" = 0 ] && [ "${NO_DEPS:-}" != 1 ]; }
apt() {
	DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=600 \
		-y --no-install-recommends "$@" >"$out/apt.log" 2>&1 || {
		tail -n 20 "$out/apt.log" >&2
		die "apt-get $*"
	}
}
mkdir -p "$out"
out=$(cd "$out" && pwd)
version=$(sed -n 's/^VERSION := //p' "$src/Makefile")

build() {
	if as_root; then
		say "installing the Build-Depends and lintian"
		sh "$src/scripts/deps.sh" deb dpkg-dev
		# the lists may be empty on a fresh machine
		apt-get -q -o DPkg::Lock::Timeout=600 update >"$out/apt.log" 2>&1 ||
			die "apt-get update"
		profiles=$(echo "${DEB_BUILD_OPTIONS-nocheck}" | grep -qw nocheck && echo nocheck || true)
		apt ${profiles:+-P "$profiles"} build-dep "$src"
		apt install lintian
	fi
	deb_version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
	[ "${deb_version%%-*}" = "$version" ] ||
		die "debian/changelog says $deb_version, the Makefile $version"
	rm -rf "$out/src" "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
	mkdir -p "$out/src"
	git clone -q "$src" "$out/src/dmt-$version"
	git -C "$out/src/dmt-$version" checkout -q "$(git -C "$src" rev-parse HEAD)"
	say "dpkg-buildpackage -us -uc -b in $out/src/dmt-$version"
	opts=${DEB_BUILD_OPTIONS-"nocheck parallel=$(nproc)"}
	# nocheck: also the build profile, so the <!nocheck> Build-Depends
	# are not asked for
	(cd "$out/src/dmt-$version" &&
		DEB_BUILD_OPTIONS=$opts dpkg-buildpackage -us -uc -b \
		$(echo "$opts" | grep -qw nocheck && echo -Pnocheck)) \
		>"$out/build.log" 2>&1 || {
		tail -n 40 "$out/build.log" >&2
		die "dpkg-buildpackage (log: $out/build.log)"
	}
	mv "$out"/src/*.deb "$out"/src/*.changes "$out"/src/*.buildinfo "$out/"
	for p in dmt-tools libdmt0 libdmt-dev; do
		ls "$out/${p}_$deb_version"_*.deb >/dev/null 2>&1 ||
			die "no $p package built"
	done
	say "built: $(cd "$out" && echo *.deb)"
	# symbols: what dpkg-gensymbols found against debian/libdmt0.symbols
	grep -A40 '^dpkg-gensymbols: warning' "$out/build.log" | head -n 40 || true
	command -v lintian >/dev/null 2>&1 || die "lintian is not installed"
	lintian --fail-on error --display-info "$out"/*.changes >"$out/lintian.log" 2>&1 || {
		cat "$out/lintian.log" >&2
		die "lintian found errors"
	}
	say "lintian: no errors; $(grep -c '^W:' "$out/lintian.log" || true) warnings, $(grep -c '^I:' "$out/lintian.log" || true) notes:"
	sed 's/^/    /' "$out/lintian.log"
}

install_and_use() {
	as_root || die "installing the packages needs root (and not NO_DEPS=1)"
	say "apt-get install ./*.deb"
	(cd "$out" && apt install ./*.deb)
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
	for t in verity-tool integrity-tool fsverity-tool crypt-tool; do
		[ -x "/usr/sbin/$t" ] || die "/usr/sbin/$t not installed"
		v=$("/usr/sbin/$t" --version) || die "$t --version"
		say "$v"
		case "$v" in
		"$t $version "*) ;;
		*) die "$t --version: '$v'" ;;
		esac
		if [ -n "$intree" ]; then
			[ "$v" = "$("$intree/$t" --version)" ] ||
				die "installed $t --version differs from $intree/$t's"
		fi
		man -w "$t" >/dev/null 2>&1 || [ -f "/usr/share/man/man8/$t.8.gz" ] ||
			die "no man page for $t"
	done
	# real work: a verity tree, its root hash equal to the in-tree tool's
	salt=5a17c0ffee0123456789abcdef5a17c0ffee0123456789abcdef00112233aabb
	uuid=00000000-1111-2222-3333-444444444444
	seq 1 400000 | head -c 2048000 >"$dir/data"	# 500 blocks
	/usr/sbin/verity-tool build --salt "$salt" --uuid "$uuid" \
		--root-hash-file "$dir/root.pkg" "$dir/data" "$dir/hash.pkg" >/dev/null ||
		die "installed verity-tool build"
	/usr/sbin/verity-tool verify --root-hash-file "$dir/root.pkg" \
		"$dir/data" "$dir/hash.pkg" || die "installed verity-tool verify"
	got=$(cat "$dir/root.pkg")
	if [ -n "$intree" ]; then
		"$intree/verity-tool" build --salt "$salt" --uuid "$uuid" \
			--root-hash-file "$dir/root.tree" "$dir/data" \
			"$dir/hash.tree" >/dev/null || die "$intree/verity-tool build"
		[ "$got" = "$(cat "$dir/root.tree")" ] && cmp -s "$dir/hash.pkg" "$dir/hash.tree" ||
			die "root hash $got of the installed verity-tool differs from $intree's"
		say "verity-tool build: root hash $got, hash tree identical to $intree/verity-tool's"
	fi
	# libdmt-dev: a program built with pkg-config only, shared and static
	cc=${CC:-cc}
	for kind in shared static; do
		flags=$(pkg-config --cflags --libs $([ $kind = static ] && echo --static) libdmt) ||
			die "pkg-config libdmt ($kind)"
		[ $kind = static ] && flags=$(echo "$flags" | sed 's/-ldmt\b/-l:libdmt.a/')
		$cc -std=c11 -Wall -Wextra -Werror -o "$dir/consumer-$kind" \
			"$src/tests/install/consumer.c" $flags || die "consumer ($kind link)"
		"$dir/consumer-$kind" kat >/dev/null || die "consumer-$kind kat"
		r=$("$dir/consumer-$kind" verity-root "$dir/c.data" "$salt" 300) ||
			die "consumer-$kind verity-root"
		/usr/sbin/verity-tool build --salt "$salt" --uuid "$uuid" -q \
			--root-hash-file "$dir/c.root" "$dir/c.data" "$dir/c.hash" >/dev/null
		[ "$r" = "$(cat "$dir/c.root")" ] ||
			die "consumer-$kind root hash $r, verity-tool's $(cat "$dir/c.root")"
	done
	# the installed copy (/lib is /usr/lib on Debian 12)
	so=$(ldd "$dir/consumer-shared" | awk '$1 == "libdmt.so.0" { print $3 }')
	[ "$(readlink -f "$so")" = "$(readlink -f "/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/libdmt.so.0")" ] ||
		die "the shared consumer loads libdmt.so.0 from '$so', not the package's"
	say "libdmt-dev: a pkg-config program (shared and static) computes verity-tool's root hash"
}

case "$mode" in
build) build ;;
install) install_and_use ;;
all) build && install_and_use ;;
*) die "unknown mode '$mode' (build, install, all)" ;;
esac
say "passed"
