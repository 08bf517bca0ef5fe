#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Oracle for discoverable verity images as systemd-repart 252 writes them
# (docs/discoverable.md). For each case it runs systemd-repart on a fresh
# image file in a private directory, records sfdisk --json, then recomputes
# independently (scripts/dps-oracle.py: python3 hmac/hashlib, veritysetup,
# openssl) the disk GUID, the layout, types, labels, flags, the verity
# partition bytes, the root-hash UUIDs and the verity-sig bytes, and compares.
# It also rebuilds the GPT with sfdisk from the dump and compares the GPT
# bytes (primary and backup) with repart's.
#
# Usage (root; repart 252 needs loop devices for Verity=hash):
#   scripts/dps-oracle.sh [-k] [CASE...]
#   -k: keep the work directory (printed). CASE names: see the list below.
# Exit: 0 all checks passed, 1 a check failed, 77 skipped (not root, no
# systemd-repart, no loop device, missing tool).
set -u
here=$(cd "$(dirname "$0")" && pwd)
keep=0
[ "${1:-}" = -k ] && { keep=1; shift; }

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (systemd-repart 252 makes loop devices for Verity=)"
for t in systemd-repart sfdisk veritysetup openssl python3 losetup; do
	command -v $t >/dev/null || skip "$t not installed"
done
[ -e /dev/loop-control ] || skip "no /dev/loop-control"
ver=$(systemd-repart --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p')
[ "$ver" = 252 ] || echo "note: systemd-repart $ver, the facts were taken from 252"

W=$(mktemp -d /var/tmp/dps-oracle.XXXXXX) || exit 1
cleanup() { [ $keep = 1 ] && echo "kept $W" || rm -rf "$W"; }
trap cleanup EXIT

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$W/key.pem" -out "$W/cert.pem" \
	-days 3650 -subj /CN=dps-oracle 2>/dev/null || exit 1
mkdata() { # NAME BYTES: reproducible pseudo-random data
	python3 -c "import hashlib,sys
n=int(sys.argv[2]); b=bytearray(); i=0
while len(b)<n: b+=hashlib.sha256(b'dps%d'%i).digest()*64; i+=1
open(sys.argv[1],'wb').write(b[:n])" "$W/$1" "$2"
}
mkdata d4m $((4 * 1024 * 1024))
mkdata d12m $((12 * 1024 * 1024 + 512 * 7))

# name kind type-arch-suffix arch seed size data sig sizemin_root sizemax_root sizemin_verity sizemax_verity
CASES="
root64   root x86-64 x86-64 11111111-2222-4333-8444-555555555555 64M  d4m  1 - - - -
root100  root x86-64 x86-64 11111111-2222-4333-8444-555555555555 100M d4m  1 - - - -
root12   root x86-64 x86-64 2f8a6e3c-5b1d-4c7e-9a0f-1e2d3c4b5a69 80M  d12m 1 - - - -
usr64    usr  x86-64 x86-64 11111111-2222-4333-8444-555555555555 64M  d4m  1 - - - -
arm64    root arm64  arm64  11111111-2222-4333-8444-555555555555 64M  d12m 1 - - - -
usrarm   usr  arm64  arm64  9e4f1c2b-3a5d-4e6f-8071-92a3b4c5d6e7 72M  d4m  1 - - - -
tight    root x86-64 x86-64 2f8a6e3c-5b1d-4c7e-9a0f-1e2d3c4b5a69 24M  d12m 1 - - - -
auto     root x86-64 x86-64 11111111-2222-4333-8444-555555555555 auto d12m 1 - - - -
sec4k    root x86-64 x86-64 11111111-2222-4333-8444-555555555555 64M  d4m  1 - - - -
nosig    root x86-64 x86-64 11111111-2222-4333-8444-555555555555 64M  d4m  0 - - - -
fixed    root x86-64 x86-64 11111111-2222-4333-8444-555555555555 64M  d4m  1 16777216 16777216 2097152 2097152
"
want="$*"
fail=0
while read -r name kind tarch arch seed size data sig smin smax vmin vmax; do
	[ -n "$name" ] || continue
	if [ -n "$want" ] && ! [[ " $want " == *" $name "* ]]; then continue; fi
	c="$W/$name"
	mkdir -p "$c/defs"
	ty="$kind"
	[ "$tarch" = x86-64 ] || ty="$kind-$tarch"   # Type=root is the native arch
	{
		printf '[Partition]\nType=%s\nCopyBlocks=%s\nVerity=data\nVerityMatchKey=%s\n' "$ty" "$W/$data" "$kind"
		[ "$smin" = - ] || printf 'SizeMinBytes=%s\nSizeMaxBytes=%s\n' "$smin" "$smax"
	} >"$c/defs/10-$kind.conf"
	{
		printf '[Partition]\nType=%s-verity\nVerity=hash\nVerityMatchKey=%s\n' "$ty" "$kind"
		[ "$vmin" = - ] || printf 'SizeMinBytes=%s\nSizeMaxBytes=%s\n' "$vmin" "$vmax"
	} >"$c/defs/20-verity.conf"
	keyargs=()
	if [ "$sig" = 1 ]; then
		printf '[Partition]\nType=%s-verity-sig\nVerity=signature\nVerityMatchKey=%s\n' "$ty" "$kind" >"$c/defs/30-sig.conf"
		cp "$W/key.pem" "$W/cert.pem" "$c/"
		keyargs=(--private-key="$c/key.pem" --certificate="$c/cert.pem")
	fi
	{
		echo "KIND=$kind"; echo "ARCH=$arch"; echo "SEED=$seed"; echo "SIZE=$size"
		echo "DATA=$W/$data"; echo "SIG=$sig"
		[ "$smin" = - ] || { echo "SIZEMIN_ROOT=$smin"; echo "SIZEMAX_ROOT=$smax"
			echo "SIZEMIN_VERITY=$vmin"; echo "SIZEMAX_VERITY=$vmax"; }
	} >"$c/case.env"
	# sec4k: repart on a loop device with 4096-byte logical sectors (a 4Kn
	# disk); every other case on a plain image file (512-byte sectors)
	ss=512 target="$c/disk.img" empty=create sizearg=--size="$size" loopdev=
	if [ "$name" = sec4k ]; then
		ss=4096 empty=force sizearg=
		truncate -s "$size" "$c/disk.img"
		loopdev=$(losetup -f --show --sector-size 4096 "$c/disk.img") || { echo "FAIL losetup"; fail=1; continue; }
		target=$loopdev
	fi
	echo "SECTOR=$ss" >>"$c/case.env"
	echo "== $name: $kind $arch --size=$size data=$data sig=$sig sector=$ss"
	systemd-repart --definitions="$c/defs" --empty=$empty $sizearg --dry-run=no \
		--seed="$seed" "${keyargs[@]}" --json=pretty "$target" >"$c/repart.json" 2>"$c/repart.err"
	rc=$?
	[ $rc = 0 ] && { sfdisk --json "$target" >"$c/sfdisk.json" || rc=1; }
	[ $rc = 0 ] && sfdisk -d "$target" >"$c/dump.sfdisk"
	[ -n "$loopdev" ] && losetup -d "$loopdev"
	if [ $rc != 0 ]; then
		echo "FAIL repart/sfdisk: $(tail -3 "$c/repart.err")"; fail=1; continue
	fi
	python3 "$here/dps-oracle.py" "$c" || fail=1

	# GPT bytes: libfdisk (sfdisk) re-creates the same table from the dump
	truncate -s "$(stat -c %s "$c/disk.img")" "$c/gpt.img"
	gtarget="$c/gpt.img" loopdev=
	if [ $ss != 512 ]; then
		loopdev=$(losetup -f --show --sector-size $ss "$c/gpt.img") || { echo "FAIL losetup"; fail=1; continue; }
		gtarget=$loopdev
	fi
	sfdisk -q --no-reread --no-tell-kernel "$gtarget" <"$c/dump.sfdisk" >"$c/sfdisk.out" 2>"$c/sfdisk.err"
	rc=$?
	[ -n "$loopdev" ] && losetup -d "$loopdev"
	if [ $rc = 0 ]; then
		n=$(($(stat -c %s "$c/disk.img") / ss)) head=$((2 + 16384 / ss)) tail=$((1 + 16384 / ss))
		a=$(dd if="$c/disk.img" bs=$ss count=$head status=none | sha256sum)
		b=$(dd if="$c/gpt.img" bs=$ss count=$head status=none | sha256sum)
		a2=$(dd if="$c/disk.img" bs=$ss skip=$((n - tail)) status=none | sha256sum)
		b2=$(dd if="$c/gpt.img" bs=$ss skip=$((n - tail)) status=none | sha256sum)
		if [ "$a" = "$b" ] && [ "$a2" = "$b2" ]; then
			echo "ok   GPT (PMBR, primary, backup) byte-identical when sfdisk replays the dump"
		else
			echo "FAIL GPT bytes differ from an sfdisk replay (primary $([ "$a" = "$b" ] && echo same || echo differs), backup $([ "$a2" = "$b2" ] && echo same || echo differs))"
			fail=1
		fi
	else
		echo "FAIL sfdisk replay: $(cat "$c/sfdisk.err")"; fail=1
	fi
	rm -f "$c/gpt.img"
	[ $keep = 1 ] || rm -f "$c/disk.img"
done <<<"$CASES"

# Without --private-key a Verity=signature definition is refused up front.
if [ -z "$want" ] || [[ " $want " == *" nokey "* ]]; then
	echo "== nokey: verity-sig definition without --private-key"
	c="$W/root64"
	[ -d "$c/defs" ] || { mkdir -p "$c/defs"; printf '[Partition]\nType=root-verity-sig\nVerity=signature\nVerityMatchKey=root\n' >"$c/defs/30-sig.conf"; }
	systemd-repart --definitions="$c/defs" --empty=create --size=64M --dry-run=no \
		--seed=11111111-2222-4333-8444-555555555555 --certificate="$W/cert.pem" "$W/nokey.img" \
		>/dev/null 2>"$W/nokey.err"
	rc=$?
	if [ $rc != 0 ] && grep -q 'no private key provided' "$W/nokey.err"; then
		echo "ok   refused (rc $rc): $(grep -o 'Verity signature partition requested.*' "$W/nokey.err" | head -1)"
	else
		echo "FAIL nokey: rc $rc $(cat "$W/nokey.err")"; fail=1
	fi
fi
[ $fail = 0 ] && echo "dps-oracle: all checks passed" || echo "dps-oracle: FAILED"
exit $fail
