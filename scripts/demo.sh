#!/bin/sh
# SPDX-License-Identifier: MIT
# `make demo`: the main job on a generated sample image.  Builds a 256 MiB
# "root filesystem" (random data with a hole), then:
#   1. verity-tool build: hash tree + root hash (and veritysetup's root hash
#      for the same salt/uuid when veritysetup is installed);
#   2. verity-tool verify, then again after flipping one data byte;
#   3. integrity-tool format --data-from: a dm-integrity image holding the
#      payload with every tag precomputed, then integrity-tool check;
#   4. crypt-tool format: a LUKS2 image of it (what `cryptsetup open` maps),
#      crypt-tool dump (and luksDump when cryptsetup is installed), then
#      crypt-tool decrypt back to the payload.
#   5. fsverity-tool digest -r: the fs-verity digest of every file of a
#      small tree (and `fsverity digest`'s for the same files, when
#      installed: identical).
set -eu
O=${1:-build}
dir=${DEMO_DIR:-demo}
mkdir -p "$dir"
img=$dir/rootfs.img
vt=$O/verity-tool
it=$O/integrity-tool
salt=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
uuid=12345678-1234-1234-1234-123456789abc
# seconds between two `date +%s.%N` (awk: in Debian's minimal set, bc is not)
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

echo "== $("$vt" --version) (what it was built with)"
echo "== generating $img (256 MiB: 192 MiB random data, 64 MiB hole)"
rm -f "$img"
dd if=/dev/urandom of="$img" bs=1M count=192 status=none
truncate -s 256M "$img"

echo "== verity-tool build"
rm -f "$dir/rootfs.verity"
t0=$(date +%s.%N)
"$vt" build --salt "$salt" --uuid "$uuid" --root-hash-file "$dir/rootfs.roothash" "$img" "$dir/rootfs.verity"
t1=$(date +%s.%N)
echo "   took $(elapsed "$t0" "$t1") s"
if command -v veritysetup >/dev/null 2>&1 || [ -x /usr/sbin/veritysetup ]; then
	PATH=$PATH:/usr/sbin
	rm -f "$dir/rootfs.verity.ref"
	t0=$(date +%s.%N)
	ref=$(veritysetup format --salt "$salt" --uuid "$uuid" "$img" "$dir/rootfs.verity.ref" | sed -n 's/^Root hash:[[:space:]]*//p')
	t1=$(date +%s.%N)
	echo "== veritysetup format (reference) took $(elapsed "$t0" "$t1") s"
	ours=$(cat "$dir/rootfs.roothash")
	if [ "$ref" = "$ours" ] && cmp -s "$dir/rootfs.verity" "$dir/rootfs.verity.ref"; then
		echo "   root hash and hash image identical to veritysetup's: $ours"
	else
		echo "   MISMATCH with veritysetup: ours $ours, veritysetup $ref" >&2
		exit 1
	fi
else
	echo "   (veritysetup not installed: not compared; make check installs cryptsetup-bin)"
fi

echo "== verity-tool verify (intact)"
"$vt" verify --root-hash-file "$dir/rootfs.roothash" "$img" "$dir/rootfs.verity" && echo "   OK"
echo "== verity-tool verify after flipping one byte of data block 1000"
cp "$img" "$dir/corrupt.img"
printf '\377' | dd of="$dir/corrupt.img" bs=1 seek=$((1000 * 4096 + 17)) conv=notrunc status=none
if "$vt" verify --root-hash-file "$dir/rootfs.roothash" "$dir/corrupt.img" "$dir/rootfs.verity"; then
	echo "   corruption NOT detected" >&2
	exit 1
else
	echo "   detected (exit $?)"
fi
rm -f "$dir/corrupt.img"

echo "== integrity-tool format --data-from (crc32c, auto-sized device)"
rm -f "$dir/rootfs.integrity"
"$it" format --data-from "$img" --device-size auto "$dir/rootfs.integrity"
echo "== integrity-tool check"
"$it" check "$dir/rootfs.integrity" && echo "   all tags OK"
"$it" dump "$dir/rootfs.integrity"
echo "== crypt-tool format --data-from (LUKS2, aes-xts-plain64, 4096-byte sectors)"
ct=$O/crypt-tool
printf 'demo passphrase' > "$dir/rootfs.pass"
chmod 600 "$dir/rootfs.pass"
rm -f "$dir/rootfs.luks"
# the argon2id default (2 s, 1 GiB) is what a real image wants; the demo
# takes a cheap fixed cost
"$ct" format --key-file "$dir/rootfs.pass" --pbkdf argon2id \
	--pbkdf-force-iterations 4 --pbkdf-memory 65536 --uuid "$uuid" \
	--data-from "$img" "$dir/rootfs.luks"
"$ct" dump "$dir/rootfs.luks" | sed -n '1,16p'
if command -v cryptsetup >/dev/null 2>&1; then
	if [ "$("$ct" dump "$dir/rootfs.luks")" = "$(cryptsetup luksDump "$dir/rootfs.luks")" ]; then
		echo "   crypt-tool dump and cryptsetup luksDump agree"
	else
		echo "   crypt-tool dump differs from cryptsetup luksDump" >&2
		exit 1
	fi
else
	echo "   (cryptsetup not installed: not compared; make check installs cryptsetup-bin)"
fi
echo "== crypt-tool decrypt (offline read-back)"
"$ct" decrypt --key-file "$dir/rootfs.pass" "$dir/rootfs.luks" "$dir/rootfs.decrypted"
if cmp -s "$img" "$dir/rootfs.decrypted"; then
	echo "   decrypted image identical to $img"
else
	echo "   decrypted image differs from $img" >&2
	exit 1
fi
rm -f "$dir/rootfs.decrypted"
echo "== fsverity-tool digest -r (fs-verity digests of a small tree)"
ft=$O/fsverity-tool
rm -rf "$dir/tree"
mkdir -p "$dir/tree/etc" "$dir/tree/bin"
head -c 5000 "$img" >"$dir/tree/etc/config"
head -c 300000 "$img" >"$dir/tree/bin/prog"
: >"$dir/tree/etc/empty"
ln -s prog "$dir/tree/bin/link"
"$ft" digest -r "$dir/tree" | tee "$dir/tree.digests"
if command -v fsverity >/dev/null 2>&1; then
	find "$dir/tree" -type f | LC_ALL=C sort | xargs fsverity digest >"$dir/tree.digests.ref"
	if cmp -s "$dir/tree.digests" "$dir/tree.digests.ref"; then
		echo "   identical to fsverity digest"
	else
		echo "   MISMATCH with fsverity digest" >&2
		exit 1
	fi
else
	echo "   (fsverity not installed: not compared; make check installs fsverity)"
fi
echo "== demo done; files in $dir/"
