#!/bin/sh
# SPDX-License-Identifier: MIT
# Checks the Debian packages a step needs and installs the missing ones
# through apt when run as root (NO_DEPS=1: never install, just report).
# Usage: deps.sh build|check|bench|STEP [extra-package...]
#   build  the library and the tools (the Makefile's configuration runs it
#          before any probe: see scripts/configure.sh)
#   check  build, plus the test binary's libraries and every command the
#          tests run (oracles included), before anything is compiled
#   other  only the extra packages named (demo, fresh, kernel, cross, ...)
# WITHOUT_ARGON2=1 leaves libargon2-dev out (an explicit choice).
# A missing package that cannot be installed stops with one line naming it.
set -eu
step=${1:-build}
shift || true
PKG_CONFIG=${PKG_CONFIG:-pkg-config}

need=""
add() { need="$need $*"; }
has_pc() { $PKG_CONFIG --exists "$1" 2>/dev/null; }
# commands: also where root's PATH has them (a user's PATH may lack sbin)
has_cmd() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/sbin/$1" ]; }
has_hdr() { [ -e "/usr/include/$1" ] || [ -e "/usr/include/x86_64-linux-gnu/$1" ] || [ -e "/usr/include/$(${CC:-cc} -dumpmachine 2>/dev/null)/$1" ]; }

case "$step" in
build|check)
	has_cmd "${PKG_CONFIG%% *}" || add pkg-config
	has_pc libcrypto || add libssl-dev
	has_pc popt || has_hdr popt.h || add libpopt-dev
	has_pc uuid || add uuid-dev
	has_pc json-c || add libjson-c-dev
	has_pc libxxhash || has_hdr xxhash.h || add libxxhash-dev
	# lib/crypt: Argon2, LUKS2's default PBKDF (the library cryptsetup uses)
	[ "${WITHOUT_ARGON2:-}" = 1 ] || has_pc libargon2 || add libargon2-dev
	;;
esac
if [ "$step" = check ]; then
	# the test binary: Criterion, and libcryptsetup / libfsverity as the
	# oracles of the crypt and fs-verity tests (linked in, so needed before
	# it is compiled)
	has_pc criterion || add libcriterion-dev
	has_pc libcryptsetup || add libcryptsetup-dev
	has_pc libfsverity || add libfsverity-dev
	# commands the tests run: veritysetup, integritysetup and cryptsetup
	# (cryptsetup-bin), `fsverity digest/sign`, the openssl command line
	# (keys, certificates, signatures), strace (the read pattern of
	# fsverity-tool), losetup (block-device tests), python3 (the bench
	# plotter's self-test), abidw and abidiff (make check-abi); the rest
	# are in Debian's essential set
	for c in veritysetup integritysetup cryptsetup; do
		has_cmd $c || add cryptsetup-bin
	done
	has_cmd fsverity || add fsverity
	has_cmd openssl || add openssl
	has_cmd strace || add strace
	has_cmd losetup || add mount
	has_cmd python3 || add python3
	# abidw/abidiff: the ABI check against abi/libdmt.so.0.abi (mk/abi.mk)
	has_cmd abidiff || add abigail-tools
fi
case "$step" in
bench)
	has_cmd veritysetup || add cryptsetup-bin
	has_cmd hyperfine || add hyperfine
	;;
esac
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || add "$p"
done

# one name once, in order
need=$(echo $need | tr ' ' '\n' | awk 'NF && !seen[$0]++' | tr '\n' ' ')
need=${need% }
[ -z "$need" ] && exit 0
if [ "${NO_DEPS:-}" = 1 ] || [ "$(id -u)" != 0 ] || ! has_cmd apt-get; then
	echo "error: missing Debian packages for '$step': $need (apt-get install $need, or run make as root without NO_DEPS=1)" >&2
	exit 1
fi
echo "deps: installing $need" >&2
lock_opt="-o DPkg::Lock::Timeout=600"
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# A fresh machine has empty package lists: update once, then install.
# shellcheck disable=SC2086
if ! apt-get -q $lock_opt install -y --no-install-recommends $need >"$log" 2>&1; then
	if ! apt-get -q $lock_opt update >"$log" 2>&1 ||
	   ! apt-get -q $lock_opt install -y --no-install-recommends $need >"$log" 2>&1; then
		echo "error: could not install the Debian packages for '$step': $need ($(grep -E '^(E|W):' "$log" | tail -n 1))" >&2
		exit 1
	fi
fi
