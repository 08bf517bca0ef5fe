#!/bin/sh
# SPDX-License-Identifier: MIT
# Guest side of an fs-verity case. Environment (from the host):
#   FS          blank case disk for the ext4 file system
#   HASH SALT   the parameters fsverity-tool used ("" = no salt)
#   SIGN        1: check the signatures f4.sig (of files/f4) and f5.sig
# Files: payload.tar (files/, meta/<f>.merkle_tree|.descriptor, digests),
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
