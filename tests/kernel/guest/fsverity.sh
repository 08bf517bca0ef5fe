#!/bin/sh
# SPDX-License-Identifier: MIT
# Guest side of an fs-verity case. Environment (from the host):
#   FS          blank case disk for the ext4 file system
#   HASH SALT   the parameters fsverity-tool used ("" = no salt)
#   SIGN        1: check the signatures f4.sig (of files/f4) and f5.sig
# Files: payload.tar (files/, meta/<f>.merkle_tree|.descriptor, digests;
# sparse.recipe, pool and sparse.digests: the sparse files, rebuilt here),
# and with SIGN cert.der f4.sig f5.sig.
d=$(dev "$FS")
must tar -xf payload.tar
# busybox has its own mke2fs applet: the real one by full path
must /usr/sbin/mke2fs -q -F -t ext4 -b 4096 -O verity "$d"
mkdir -p /mnt/fv
must mount -t ext4 "$d" /mnt/fv
saltopt=
[ -n "$SALT" ] && saltopt="--salt=$SALT"
n=0
while read -r dig path; do
	f=${path#files/}
	cp "$path" "/mnt/fv/$f" || fail "cp $path"
	# shellcheck disable=SC2086
	must fsverity enable --hash-alg="$HASH" $saltopt "/mnt/fv/$f"
	got=$(fsverity measure "/mnt/fv/$f" | cut -d' ' -f1)
	[ "$got" = "$dig" ] || fail "$f: fsverity measure says $got, fsverity-tool $dig"
	fsverity dump_metadata merkle_tree "/mnt/fv/$f" >/tmp/tree || fail "$f: dump_metadata merkle_tree failed"
	cmp -s /tmp/tree "meta/$f.merkle_tree" || fail "$f: the kernel's Merkle tree differs from fsverity-tool's ($(wc -c </tmp/tree) vs $(wc -c <"meta/$f.merkle_tree") bytes)"
	fsverity dump_metadata descriptor "/mnt/fv/$f" >/tmp/desc || fail "$f: dump_metadata descriptor failed"
	cmp -s /tmp/desc "meta/$f.descriptor" || fail "$f: the kernel's descriptor differs from fsverity-tool's"
	# the kernel checks reads against the tree (from the disk, not the
	# page cache cp filled)
	echo 3 >/proc/sys/vm/drop_caches
	sha256sum <"/mnt/fv/$f" >/tmp/a
	sha256sum <"$path" >/tmp/b
	cmp -s /tmp/a /tmp/b || fail "$f: content read through fs-verity differs"
	n=$((n + 1))
done <digests
[ "$n" = 10 ] || fail "checked $n files, expected 10"
note "$n files: measure, merkle_tree and descriptor equal fsverity-tool's ($HASH${SALT:+, salt $SALT})"

# The sparse files, made again here from the host's recipe (real holes on
# ext4: the kernel reads them as zeros).
DD=/usr/lib/kt/dd
[ -x "$DD" ] || DD=dd
mkdir -p /mnt/fv/holes
while read -r name a b; do
	if [ -z "$b" ]; then
		truncate -s "$a" "/mnt/fv/holes/$name" || fail "truncate $name"
	else
		$DD if=pool of="/mnt/fv/holes/$name" bs=1M iflag=count_bytes \
			count="$b" oflag=seek_bytes seek="$a" conv=notrunc \
			status=none || fail "dd into $name"
	fi
done <sparse.recipe
n=0
while read -r dig path; do
	f=${path#holes/}
	# shellcheck disable=SC2086
	must fsverity enable --hash-alg="$HASH" $saltopt "/mnt/fv/holes/$f"
	got=$(fsverity measure "/mnt/fv/holes/$f" | cut -d' ' -f1)
	[ "$got" = "$dig" ] || fail "sparse $f: fsverity measure says $got, fsverity-tool $dig"
	fsverity dump_metadata merkle_tree "/mnt/fv/holes/$f" >/tmp/tree || fail "sparse $f: dump_metadata merkle_tree failed"
	cmp -s /tmp/tree "meta/$f.merkle_tree" || fail "sparse $f: the kernel's Merkle tree differs from fsverity-tool's"
	fsverity dump_metadata descriptor "/mnt/fv/holes/$f" >/tmp/desc || fail "sparse $f: dump_metadata descriptor failed"
	cmp -s /tmp/desc "meta/$f.descriptor" || fail "sparse $f: the kernel's descriptor differs from fsverity-tool's"
	n=$((n + 1))
done <sparse.digests
[ "$n" = 6 ] || fail "checked $n sparse files, expected 6"
note "$n sparse files (holes at the start, the end, off the grid, many, all, over subtrees): the kernel's digests, trees and descriptors equal fsverity-tool's"

if [ "$SIGN" = 1 ]; then
	must sh -c 'keyctl padd asymmetric "" %keyring:.fs-verity < cert.der'
	cp files/f4 /mnt/fv/signed || fail "cp"
	cp files/f4 /mnt/fv/wrongsig || fail "cp"
	# shellcheck disable=SC2086
	must fsverity enable --hash-alg="$HASH" $saltopt --signature=f4.sig /mnt/fv/signed
	# shellcheck disable=SC2086
	run fsverity enable --hash-alg="$HASH" $saltopt --signature=f5.sig /mnt/fv/wrongsig &&
		fail "the kernel accepted a signature over another file's digest"
	note "signature of f4 accepted, f5's signature refused for f4 ($ERR)"
fi
umount /mnt/fv
