#!/bin/sh
# SPDX-License-Identifier: MIT
# Helpers for the guest-side case scripts (busybox sh). Sourced with CASE set
# and the current directory /job/c/$CASE; ./env was sourced before the script.
set -o pipefail 2>/dev/null
BB_BLOCKDEV=/usr/sbin/blockdev   # busybox has its own blockdev applet

# End the case with a verdict. The kernel's dm messages follow for context.
fail() {
	echo "FAIL: $*"
	dmesg | grep -E 'device-mapper|verity|integrity' | tail -n 25 | sed 's/^/dmesg: /'
	exit 1
}
note() { echo "# $*"; }

# run CMD...: log it, keep the telling stderr line in ERR, return its status.
run() {
	echo "+ $*"
	"$@" >/tmp/run.out 2>/tmp/run.err
	rc=$?
	cat /tmp/run.out
	grep -v "^[[:space:]]" /tmp/run.err
	# The last line says most with cryptsetup (its own summary after the
	# libdevmapper error) and after a usage text.
	ERR=$(grep -v -e '^$' -e '^Usage:' -e '^[[:space:]]' -e 'records in' -e 'records out' -e 'bytes.*copied' /tmp/run.err | tail -n 1)
	[ -n "$ERR" ] || ERR="exit $rc"
	return $rc
}
must() { run "$@" || fail "$1 $2 failed (exit $rc): $ERR"; }

# dev FILE: the /dev/vdX node of this case's image FILE.
dev() {
	while read -r s c f; do
		if [ "$c" = "$CASE" ] && [ "$f" = "$1" ]; then
			readlink -f "/dev/kt-$s"
			return 0
		fi
	done </job/disks
	fail "harness: image $1 not attached"
}

size_of() { $BB_BLOCKDEV --getsize64 "$1"; }
flush_dev() { sync; $BB_BLOCKDEV --flushbufs "$1" 2>/dev/null; echo 3 >/proc/sys/vm/drop_caches; }

# rd DEV BS [SKIP COUNT]: read with O_DIRECT when possible (SKIP and COUNT
# in units of BS; rd_bytes DEV OFFSET LENGTH reads a byte range in 64 KiB
# requests, both multiples of 512). Sets RD_SHA (sha256
# of what was read) and RD_ERR (dd's error line; busybox dd prints no record
# counts after a read error).
rd() {
	if [ "$2" = bytes ]; then
		$KT_DD if="$1" bs=65536 skip="$3" count="$4" iflag=skip_bytes,count_bytes${KT_DIRECT:+,direct} 2>/tmp/dd.err | sha256sum >/tmp/dd.sha
	elif [ -n "$3" ]; then
		$KT_DD if="$1" bs="$2" skip="$3" count="$4" $KT_DIRECT 2>/tmp/dd.err | sha256sum >/tmp/dd.sha
	else
		$KT_DD if="$1" bs="$2" $KT_DIRECT 2>/tmp/dd.err | sha256sum >/tmp/dd.sha
	fi
	rc=$?
	RD_SHA=$(cut -d' ' -f1 /tmp/dd.sha)
	RD_ERR=$(grep -v 'records\|bytes' /tmp/dd.err | head -n 1)
	[ $rc = 0 ] || sed "s/^/dd: /" /tmp/dd.err
	[ $rc = 0 ] && ! grep -q 'error' /tmp/dd.err
}

rd_bytes() { rd "$1" bytes "$2" "$3"; }

# flip_byte DEV OFFSET: invert one byte of a raw device.
flip_byte() {
	fb_v=$(dd if="$1" bs=1 skip="$2" count=1 2>/dev/null | od -An -tu1 | tr -d ' \n')
	[ -n "$fb_v" ] || fail "harness: cannot read byte $2 of $1"
	fb_n=$((fb_v ^ 255))
	# shellcheck disable=SC2059
	printf "\\$(printf %o $fb_n)" | dd of="$1" bs=1 seek="$2" count=1 conv=notrunc,fsync 2>/dev/null ||
		fail "harness: cannot write byte $2 of $1"
	note "flipped byte $2 of $1 ($fb_v -> $fb_n)"
	flush_dev "$1"
}

# dmesg_has PATTERN: the kernel log of this case contains PATTERN (grep -E).
dmesg_has() { dmesg | grep -qE "$1"; }

# dm_logged PATTERN CMD...: the kernel logged PATTERN (grep -E) for this
# case.  In 6.1 every DMERR_LIMIT/DMWARN_LIMIT line of every device-mapper
# target shares one rate limit (10 lines per 5 s), so the error storm of an
# earlier case in the same boot can swallow this case's line.  If it is
# missing, wait out the window and run CMD (a read that makes the kernel log
# it again) once more; CMD's own status is not judged here.
dm_logged() {
	dl_pat=$1
	shift
	dmesg_has "$dl_pat" && return 0
	note "no '$dl_pat' in dmesg yet; waiting out the 5 s rate limit, then: $*"
	sleep 6
	dmesg -c >/dev/null
	"$@" >/dev/null 2>&1
	dmesg_has "$dl_pat"
}
