#!/bin/bash
# SPDX-License-Identifier: MIT
# Make sure the host has what the kernel conformance suite needs.
# Installs missing Debian packages with apt-get when run as root, unless
# NO_DEPS=1 (then it only reports what is missing and fails).
set -u

KT_PACKAGES="linux-image-amd64 qemu-system-x86 busybox-static cryptsetup-bin dmsetup kmod cpio xz-utils
e2fsprogs fsverity keyutils openssl"

kt_missing_packages() {
	local p missing=""
	for p in $KT_PACKAGES; do
		if ! dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
			missing="$missing $p"
		fi
	done
	echo "${missing# }"
}

kt_ensure_deps() {
	local missing
	missing=$(kt_missing_packages)
	[ -z "$missing" ] && return 0
	if [ "${NO_DEPS:-0}" = 1 ]; then
		echo "kernel: missing packages: $missing (NO_DEPS=1, not installing)" >&2
		echo "kernel: install them with: apt-get install $missing" >&2
		return 1
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "kernel: missing packages: $missing (not root, cannot install)" >&2
		return 1
	fi
	echo "kernel: installing: $missing"
	# Another apt may hold the lock for a while; wait for it instead of failing.
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends $missing >"$KT_O/apt.log" 2>&1; then
		apt-get -o DPkg::Lock::Timeout=600 update >>"$KT_O/apt.log" 2>&1
		if ! apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends $missing >>"$KT_O/apt.log" 2>&1; then
			echo "kernel: apt-get install $missing failed; see $KT_O/apt.log" >&2
			tail -5 "$KT_O/apt.log" >&2
			return 1
		fi
	fi
	missing=$(kt_missing_packages)
	if [ -n "$missing" ]; then
		echo "kernel: still missing after install: $missing" >&2
		return 1
	fi
}
