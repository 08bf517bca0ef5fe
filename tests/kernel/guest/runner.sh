#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside the guest: every case listed in /job/cases ("NAME SCRIPT"),
# one after the other, each in its own shell with a time limit. Results go
# to /out (NAME.verdict, NAME.log, NAME.dmesg) and, after every case, the
# whole of /out is written as a tar onto the disk with serial "out", so a
# hung case still leaves the earlier results behind.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export DM_DISABLE_UDEV=1
OUT=/out
mkdir -p $OUT
uptime_s() { cut -d' ' -f1 /proc/uptime; }
flush_out() {
	tar -c -C $OUT . 2>/dev/null | dd of=/dev/kt-out bs=65536 conv=fsync 2>/dev/null
	last_flush=$(uptime_s)
}
# The tar (logs, dmesg) is rewritten at most every 20 s; the verdict list
# ($OUT/times) goes after every case to byte 48 MiB of the out disk, so the
# verdicts before a hung case survive even if the last tar is stale.
maybe_flush_out() {
	dd if=$OUT/times of=/dev/kt-out bs=4096 seek=12288 conv=notrunc,fsync 2>/dev/null
	awk "BEGIN { exit !($(uptime_s) - $last_flush >= 20) }" && flush_out
}
# O_DIRECT reads: coreutils dd when the initramfs has it (busybox dd accepts
# iflag=direct but falls back to buffered reads when its buffer is unaligned),
# else busybox dd with iflag=direct if it takes the flag, else plain reads.
KT_DD="dd"
KT_DIRECT=
if [ -x /usr/lib/kt/dd ] && /usr/lib/kt/dd if=/dev/kt-job of=/dev/null bs=4096 count=1 iflag=direct 2>/dev/null; then
	KT_DD=/usr/lib/kt/dd
	KT_DIRECT=iflag=direct
elif dd if=/dev/kt-job of=/dev/null bs=4096 count=1 iflag=direct 2>/dev/null; then
	KT_DIRECT=iflag=direct
fi
export KT_DD KT_DIRECT
KT_CASE_TIMEOUT=$(cat /job/case-timeout 2>/dev/null || echo 300)
{
	echo "kernel $(uname -r)"
	echo "boot-uptime $(uptime_s)"
	echo "dd-direct $KT_DD ${KT_DIRECT:-buffered}"
	echo "nproc $(grep -c ^processor /proc/cpuinfo)"
} >$OUT/info
dmesg >$OUT/boot.dmesg
flush_out
while read -r c script; do
	[ -n "$c" ] || continue
	t0=$(uptime_s)
	dmesg -c >/dev/null 2>&1
	echo "[kt] running $c" >/dev/console
	timeout "$KT_CASE_TIMEOUT" sh -c 'cd "/job/c/$1" || exit 99; CASE=$1; s=/job/scripts/$2.sh; [ -e "./$2.sh" ] && s=./$2.sh; . /job/lib.sh; . ./env; . "$s"' kt "$c" "$script" >"$OUT/$c.log" 2>&1 </dev/null
	rc=$?
	t1=$(uptime_s)
	dmesg >"$OUT/$c.dmesg" 2>&1
	dmsetup remove_all >/dev/null 2>&1
	dt=$(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }")
	if [ $rc = 0 ]; then
		v="OK"
	elif grep -q '^FAIL: ' "$OUT/$c.log"; then
		v="FAIL $(grep '^FAIL: ' "$OUT/$c.log" | head -n 1 | cut -c7-)"
	elif awk "BEGIN { exit !($t1 - $t0 >= $KT_CASE_TIMEOUT - 1) }"; then
		v="FAIL timed out after ${KT_CASE_TIMEOUT} s in the guest"
	else
		v="FAIL guest script exited $rc without a verdict"
	fi
	echo "$v" >"$OUT/$c.verdict"
	echo "$c $dt $v" >>$OUT/times
	echo "[kt] $c: $v (${dt} s)" >/dev/console
	maybe_flush_out
done </job/cases
echo "end-uptime $(uptime_s)" >>$OUT/info
echo "done" >$OUT/complete
flush_out
