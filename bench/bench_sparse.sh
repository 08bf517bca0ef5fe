#!/bin/sh
# SPDX-License-Identifier: MIT
# Every tool on a sparse file, beside its peers, in one run (issue 26):
#   BENCH_SPARSE_SIZE (default 32G) with 64 MiB of random data at 10 GB,
#   the rest a hole (the shape of VM disk images and preallocated files),
#   made with truncate + dd conv=notrunc:
#   - verity-tool build / verify vs veritysetup format / verify;
#   - fsverity-tool digest (and with --out-merkle-tree/--out-descriptor)
#     vs fsverity digest (fsverity-utils 1.5, which reads every zero);
#   - integrity-tool format --data-from / check (crc32c, 512-byte
#     sectors; the image is as sparse as the payload);
#   - crypt-tool format --data-from of a BENCH_SPARSE_CRYPT (default 8G)
#     hole (every byte is written: ciphertext of zeros is not zeros) and
#     decrypt of it, beside dd bs=16M oflag=direct conv=fsync writing as
#     many bytes (the floor of any tool on this disk).
# Every row: median wall time, CPU (user+sys) and peak RSS (maxrss) of
# RUNS interleaved runs (default 3); the hole's pages are dropped from the
# page cache before each run (only that file's: the machine may be
# shared).  Target: fsverity-tool digest within 2x of verity-tool build
# on the same file; every tool under 64 MiB of peak RSS.  The peers read
# every zero of the hole (32 GiB: minutes each, more than the memory of
# most machines): they run in the first BENCH_SPARSE_PEER_RUNS (default
# 1) of the runs; 0 leaves them out.
#
# Environment: DMT_BUILD (directory of the four tools, required),
# BENCH_SPARSE_SIZE, BENCH_SPARSE_CRYPT, BENCH_SPARSE_RUNS,
# BENCH_SPARSE_DIR (scratch on disk, default /var/tmp),
# BENCH_SPARSE_THREADS (default: all CPUs), BENCH_SPARSE_PEER_RUNS.
set -eu
. "$(dirname "$0")/lib.sh"

b=${DMT_BUILD:?set DMT_BUILD to the directory of the tools}
size=${BENCH_SPARSE_SIZE:-32G}
csize=${BENCH_SPARSE_CRYPT:-8G}
runs=${BENCH_SPARSE_RUNS:-3}
peer_runs=${BENCH_SPARSE_PEER_RUNS:-1}
threads=${BENCH_SPARSE_THREADS:+--threads $BENCH_SPARSE_THREADS}
PATH=$PATH:/usr/sbin:/sbin
for c in veritysetup fsverity /usr/bin/time; do
	command -v "$c" >/dev/null || {
		echo "bench-sparse: $c not found (cryptsetup-bin, fsverity, time)" >&2
		exit 1
	}
done
cheap="--pbkdf pbkdf2 --pbkdf-force-iterations 1000"

dir=$(mktemp -d "${BENCH_SPARSE_DIR:-/var/tmp}/dmt-bench-sparse.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
res=$dir/results
bench_res=$res
verdict_width=50
mkdir -p "$res"
printf 'bench passphrase' >"$dir/pw"
bytes=$(numfmt --from=iec "$size")
cbytes=$(numfmt --from=iec "$csize")
at=10000000000
[ "$at" -lt "$bytes" ] || at=$((bytes / 2))
truncate -s "$bytes" "$dir/sparse"
dd if=/dev/urandom of="$dir/sparse" bs=1M count=64 seek=$((at >> 20)) \
	conv=notrunc status=none
truncate -s "$cbytes" "$dir/hole"
echo "bench-sparse: $size file, 64 MiB of data at $(((at >> 20) << 20)), $csize hole for crypt-tool; $runs runs each in $dir"

# drop FILE...: their pages out of the page cache
drop() {
	for f in "$@"; do
		dd if="$f" iflag=nocache count=0 status=none
	done
}
# run NAME CMD...: one timed run, nothing dirty, the inputs cold;
# appends "wall cpu rss" to $res/NAME.
run() {
	name=$1
	shift
	sync
	drop "$dir/sparse" "$dir/hole"
	/usr/bin/time -f '%e %U %S %M' -o "$res/t" "$@" >/dev/null
	awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$res/t" >>"$res/$name"
}

s=$dir/sparse
i=0
while [ "$i" -lt "$runs" ]; do
	rm -f "$dir/h" "$dir/root" "$dir/i.img" "$dir/t" "$dir/d"
	run vt_build "$b/verity-tool" build $threads --salt=- "$s" "$dir/h" \
		--root-hash-file="$dir/root"
	run vt_verify "$b/verity-tool" verify $threads "$s" "$dir/h" \
		--root-hash-file="$dir/root"
	run fvt "$b/fsverity-tool" digest $threads "$s"
	run fvt_tree "$b/fsverity-tool" digest $threads "$s" \
		--out-merkle-tree="$dir/t" --out-descriptor="$dir/d"
	run it_format "$b/integrity-tool" format -q $threads \
		--device-size auto --data-from "$s" "$dir/i.img"
	run it_check "$b/integrity-tool" check -q $threads "$dir/i.img"
	rm -f "$dir/i.img" "$dir/c.img" "$dir/c.out"
	run ct_format "$b/crypt-tool" format -q $threads $cheap \
		--key-file "$dir/pw" --data-from "$dir/hole" "$dir/c.img"
	run ct_decrypt sh -c '"$1" decrypt -q $2 --key-file "$3" "$4" "$5" &&
		sync "$5"' sh "$b/crypt-tool" "$threads" "$dir/pw" "$dir/c.img" \
		"$dir/c.out"
	rm -f "$dir/c.img" "$dir/c.out" "$dir/dd"
	run dd sh -c 'dd if=/dev/zero of="$1" bs=16M count="$2"B \
		oflag=direct conv=fsync status=none' sh "$dir/dd" "$cbytes"
	rm -f "$dir/dd"
	if [ "$i" -lt "$peer_runs" ]; then
		rm -f "$dir/vh" "$dir/vt" "$dir/vd"
		run vs_format veritysetup format "$s" "$dir/vh" --salt=-
		# the same tree as ours (sha256, 4 KiB, no salt): our root
		run vs_verify veritysetup verify "$s" "$dir/vh" \
			"$(cat "$dir/root")"
		run fsv sh -c 'fsverity digest "$1" >"$2"' sh "$s" "$dir/fsv.out"
		run fsv_tree fsverity digest "$s" --out-merkle-tree="$dir/vt" \
			--out-descriptor="$dir/vd"
	fi
	i=$((i + 1))
done
# the same bytes from both sides
fa=$("$b/fsverity-tool" digest "$s" | cut -d' ' -f1)
if [ "$peer_runs" -gt 0 ]; then
	fb=$(sed -n 's/^\([^ ]*\) .*/\1/p' "$dir/fsv.out")
	[ "$fa" = "$fb" ] || { echo "bench-sparse: digests differ: $fa $fb" >&2; exit 1; }
	cmp -s "$dir/t" "$dir/vt" && cmp -s "$dir/d" "$dir/vd" ||
		{ echo "bench-sparse: trees or descriptors differ" >&2; exit 1; }
fi

line() {
	[ -s "$res/$1" ] || return 0
	printf '%-50s %8ss %7ss %7sM\n' "$2" "$(median "$1" 1)" \
		"$(median "$1" 2)" \
		"$(awk -v m="$(median "$1" 3)" 'BEGIN { printf "%.0f", m / 1024 }')"
}
echo
printf '%-50s %9s %8s %8s\n' "median of $runs (peers: $peer_runs), inputs cold" \
	wall cpu maxrss
line vt_build "verity-tool build ($size sparse)"
line vs_format "veritysetup format"
line vt_verify "verity-tool verify"
line vs_verify "veritysetup verify"
line fvt "fsverity-tool digest"
line fsv "fsverity digest"
line fvt_tree "fsverity-tool digest --out-merkle-tree/-descriptor"
line fsv_tree "fsverity digest --out-merkle-tree/-descriptor"
line it_format "integrity-tool format --data-from (crc32c)"
line it_check "integrity-tool check"
line ct_format "crypt-tool format --data-from ($csize hole, synced)"
line ct_decrypt "crypt-tool decrypt (synced)"
line dd "dd bs=16M oflag=direct conv=fsync ($csize)"

status=0
echo
verdict "$(ratio fvt vt_build)" "<=" 2 "fsverity-tool digest / verity-tool build"
if [ "$peer_runs" -gt 0 ]; then
	printf '  %-50s %5s\n' "fsverity digest / fsverity-tool digest" \
		"$(ratio fsv fvt)" \
		"veritysetup format / verity-tool build" "$(ratio vs_format vt_build)"
fi
printf '  %-50s %5s\n' "crypt-tool format / dd (same bytes)" "$(ratio ct_format dd)"
for r in vt_build vt_verify fvt fvt_tree it_format it_check ct_format ct_decrypt; do
	verdict "$(awk -v m="$(median "$r" 3)" 'BEGIN { printf "%.0f", m / 1024 }')" \
		"<=" 64 "$r peak RSS (MiB)"
done
echo "  load average: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
