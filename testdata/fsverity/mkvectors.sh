#!/bin/sh
# SPDX-License-Identifier: MIT
# Regenerates vectors.txt with `fsverity digest` (fsverity-utils; Debian's
# fsverity 1.5), the oracle, never with our library.  Data kinds (the
# tests rebuild the same bytes, tests/unit/test_fsverity.c):
#   aes    first <size> bytes of the AES-128-CTR keystream, key and IV zero
#   zero   all zero (a sparse file, truncate)
#   sparse zero, but the first 4096 keystream bytes at offset size / 2
#          (cut at size)
# Salts: "-" for none, else <n> bytes 00 01 02 .. as hex.
# Line format:
#   alg|block size|salt hex|kind|size|digest hex|formatted digest hex|
#   sha256 of --out-merkle-tree|sha256 of --out-descriptor
set -eu
command -v fsverity >/dev/null || { echo "needs fsverity (apt-get install fsverity)" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ks() {	# n: first n keystream bytes on stdout
	openssl enc -aes-128-ctr -nosalt -K 00000000000000000000000000000000 \
		-iv 00000000000000000000000000000000 -in /dev/zero 2>/dev/null |
		head -c "$1"
}
gen() {	# kind size file
	case $1 in
	aes) ks "$2" >"$3" ;;
	zero) rm -f "$3"; truncate -s "$2" "$3" ;;
	sparse) rm -f "$3"; truncate -s "$2" "$3"
		at=$(($2 / 2)) n=$(($2 - $2 / 2))
		[ "$n" -gt 4096 ] && n=4096
		ks "$n" | dd of="$3" bs=4096 oflag=seek_bytes seek="$at" \
			conv=notrunc status=none ;;
	esac
}
salt() {	# n: n bytes 00 01 .. as hex, "-" for 0
	[ "$1" = 0 ] && { echo -; return; }
	i=0 s=
	while [ $i -lt "$1" ]; do s=$s$(printf %02x $i); i=$((i + 1)); done
	echo "$s"
}
vec() {	# alg bs saltlen kind size
	s=$(salt "$3") f=$dir/data
	gen "$4" "$5" "$f"
	set -- "$1" "$2" "$s" "$4" "$5"
	opt="--hash-alg=$1 --block-size=$2"
	[ "$s" != - ] && opt="$opt --salt=$s"
	# shellcheck disable=SC2086
	d=$(fsverity digest $opt --compact --out-merkle-tree="$dir/t" \
		--out-descriptor="$dir/d" "$f")
	# shellcheck disable=SC2086
	fd=$(fsverity digest $opt --compact --for-builtin-sig "$f")
	t=$(sha256sum <"$dir/t" | cut -d' ' -f1)
	ds=$(sha256sum <"$dir/d" | cut -d' ' -f1)
	echo "$1|$2|$s|$4|$5|$d|$fd|$t|$ds"
}
{
	echo "# fs-verity golden vectors: $(fsverity --version | head -1)"
	echo "# regenerate with testdata/fsverity/mkvectors.sh (format there)"
	for sz in 0 1 4095 4096 4097 524288 528384 528385 2101248; do
		vec sha256 4096 0 aes $sz
	done
	vec sha256 4096 0 zero 528385
	vec sha256 4096 0 sparse 1048579
	for sz in 1 4097 262144 266240; do vec sha512 4096 0 aes $sz; done
	for sz in 32768 33792 1048576 1048577; do vec sha256 1024 32 aes $sz; done
	for sz in 0 1 65535 65536 65537 196613; do vec sha256 65536 0 aes $sz; done
	for sz in 1 64 65 128 129 4097; do vec sha256 64 1 aes $sz; done
	for sz in 129 1000 16385; do vec sha512 128 0 aes $sz; done
	for sz in 5 2097153; do vec sha512 1048576 0 aes $sz; done
	for n in 1 16 31 32; do vec sha256 4096 $n aes 12345; done
	for n in 16 32; do vec sha512 4096 $n aes 12345; done
} >vectors.txt.new
mv vectors.txt.new vectors.txt
