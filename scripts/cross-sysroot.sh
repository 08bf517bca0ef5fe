#!/bin/sh
# SPDX-License-Identifier: MIT
# Project-local sysroot of Debian's -dev packages for a foreign architecture
# (OpenSSL, popt, uuid, json-c, xxhash: headers, static and shared
# libraries).  `apt-get download` + `dpkg-deb -x` with a private apt state:
# no `dpkg --add-architecture`, nothing installed, the host's dpkg database
# untouched.  (Multiarch -dev packages do not install on this Debian:
# bookworm's security archive no longer carries s390x, so the versions of
# libssl3:s390x and libssl3:amd64 differ.)
# Usage: cross-sysroot.sh s390x|arm64 DIR
set -eu
arch=${1:?usage: cross-sysroot.sh s390x|arm64 DIR}
dir=${2:?usage: cross-sysroot.sh s390x|arm64 DIR}
pkgs="libssl-dev libssl3 libpopt-dev libpopt0 uuid-dev libuuid1
libjson-c-dev libjson-c5 libxxhash-dev libxxhash0 libargon2-dev libargon2-1"
stamp="$dir/.sysroot-ok"
want=$(echo $pkgs)

[ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && exit 0
for c in apt-get dpkg-deb dpkg; do
	command -v $c >/dev/null 2>&1 || {
		echo "cross-sysroot: $c not found (Debian tools needed)" >&2
		exit 1
	}
done

apt_dir="$dir.apt"
rm -rf "$dir" "$apt_dir"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" \
	"$apt_dir/debs"
apt_dir=$(cd "$apt_dir" && pwd)
# The host's sources, our own lists with the foreign architecture added.
set -- -q -o "Dir::State::Lists=$apt_dir/lists" \
	-o "Dir::Cache=$apt_dir/cache" \
	-o "APT::Architecture=$(dpkg --print-architecture)" \
	-o "APT::Architectures::=$arch" \
	-o "DPkg::Lock::Timeout=600"
echo "cross-sysroot: fetching package lists for $arch" >&2
apt-get "$@" update >"$apt_dir/update.log" 2>&1 ||
	apt-get "$@" update >"$apt_dir/update.log" 2>&1 || {
	cat "$apt_dir/update.log" >&2
	exit 1
}
list=""
for p in $pkgs; do
	list="$list $p:$arch"
done
echo "cross-sysroot: downloading$list" >&2
# apt drops privileges to _apt for downloads; let it write there.
chmod 0777 "$apt_dir/debs" 2>/dev/null || true
(cd "$apt_dir/debs" && apt-get "$@" download $list) \
	>"$apt_dir/download.log" 2>&1 || {
	cat "$apt_dir/download.log" >&2
	exit 1
}
mkdir -p "$dir.tmp"
for f in "$apt_dir"/debs/*.deb; do
	dpkg-deb -x "$f" "$dir.tmp"
done
rm -rf "$dir"
mv "$dir.tmp" "$dir"
# Keep the .debs' versions for the record; drop apt's lists (~30 MB).
ls "$apt_dir/debs" >"$dir/PACKAGES"
rm -rf "$apt_dir"
echo "$want" >"$stamp"
echo "cross-sysroot: $dir ready" >&2
