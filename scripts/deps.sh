#!/bin/sh
# SPDX-License-Identifier: MIT
# Checks the Debian packages a step needs and installs the missing ones
# through apt when run as root (NO_DEPS=1: never install, just report).
# Usage: deps.sh build|check|bench|kernel|cross [extra-package...]
set -eu
step=${1:-build}
shift || true
PKG_CONFIG=${PKG_CONFIG:-pkg-config}

need=""
add() { need="$need $*"; }
has_pc() { $PKG_CONFIG --exists "$1" 2>/dev/null; }
has_cmd() { command -v "$1" >/dev/null 2>&1; }
has_hdr() { [ -e "/usr/include/$1" ] || [ -e "/usr/include/x86_64-linux-gnu/$1" ] || [ -e "/usr/include/$(${CC:-cc} -dumpmachine 2>/dev/null)/$1" ]; }

case "$step" in
build|check)
	has_cmd "${PKG_CONFIG%% *}" || add pkg-config
	has_pc libcrypto || add libssl-dev
	has_pc popt || has_hdr popt.h || add libpopt-dev
	has_pc uuid || add uuid-dev
	has_pc json-c || add libjson-c-dev
	has_pc libxxhash || has_hdr xxhash.h || add libxxhash-dev
	has_pc criterion || has_hdr criterion/criterion.h || add libcriterion-dev
	# veritysetup is the oracle of the compatibility tests
	[ "$step" = check ] && { has_cmd veritysetup || [ -x /usr/sbin/veritysetup ] || add cryptsetup-bin; }
	# libfsverity and `fsverity digest` (fsverity-utils) are the oracles of
	# the fs-verity tests and of testdata/fsverity/mkvectors.sh
	[ "$step" = check ] && { has_pc libfsverity || add libfsverity-dev; }
	[ "$step" = check ] && { has_cmd fsverity || add fsverity; }
	;;
bench)
	has_cmd veritysetup || [ -x /usr/sbin/veritysetup ] || add cryptsetup-bin
	has_cmd hyperfine || add hyperfine
	;;
*) ;;
esac
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || add "$p"
done

[ -z "$need" ] && exit 0
if [ "${NO_DEPS:-}" = 1 ] || [ "$(id -u)" != 0 ] || ! has_cmd apt-get; then
	echo "error: missing Debian packages for '$step':$need" >&2
	echo "       install them (apt-get install$need) or run as root without NO_DEPS=1" >&2
	exit 1
fi
echo "deps: installing$need" >&2
lock_opt="-o DPkg::Lock::Timeout=600"
export DEBIAN_FRONTEND=noninteractive
# A fresh machine has empty package lists: update once, then install.
if ! apt-get -qq $lock_opt install -y --no-install-recommends $need >/dev/null 2>&1; then
	apt-get -qq $lock_opt update >/dev/null
	apt-get -qq $lock_opt install -y --no-install-recommends $need >/dev/null
fi
