#!/bin/sh
# SPDX-License-Identifier: MIT
# FEC encoding: veritysetup vs the library, on the same image in the same
# run.  veritysetup's FEC time is `format --fec-device` minus a plain
# `format` (the hash tree).  Our parity must be byte-identical.
#
# Environment: BENCH_FEC (driver binary, required), BENCH_FEC_SIZE (data
# size, default 2G), BENCH_FEC_ROOTS (default "2 24"), BENCH_FEC_DIR
# (scratch directory, default /var/tmp), BENCH_FEC_TARGET (minimum
# speedup; default issue 15's: 50 at roots 24, 30 at roots 2, 10 for other
# roots; below it the script exits 1), BENCH_SUMMARY_DIR (where to write
# summary-fec.tsv for bench_summary.sh).
set -eu

drv=${BENCH_FEC:?set BENCH_FEC to the bench_fec binary}
size=${BENCH_FEC_SIZE:-2G}
roots_list=${BENCH_FEC_ROOTS:-2 24}
vs=$(PATH=$PATH:/usr/sbin:/sbin command -v veritysetup) || {
	echo "bench-fec: veritysetup not found (cryptsetup-bin)" >&2
	exit 1
}
salt=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
uuid=12345678-1234-1234-1234-123456789abc

dir=$(mktemp -d "${BENCH_FEC_DIR:-/var/tmp}/dmt-bench-fec.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
# rss CMD...: runs CMD (stdout kept), its peak RSS in MiB into $dir/rss
rss() {
	/usr/bin/time -f %M -o "$dir/rss.t" "$@"
	awk '{ printf "%.0f", $1 / 1024 }' "$dir/rss.t" >"$dir/rss"
}

echo "bench-fec: $size of random data in $dir"
# AES-CTR keystream: random-looking, much faster than /dev/urandom
head -c "$size" /dev/zero | openssl enc -aes-128-ctr -nosalt \
	-K 000102030405060708090a0b0c0d0e0f \
	-iv 00000000000000000000000000000000 >"$dir/data"
bytes=$(stat -c %s "$dir/data")
cat "$dir/data" >/dev/null	# same page-cache state for everyone

status=0
for roots in $roots_list; do
	rm -f "$dir/hash0" "$dir/hash1" "$dir/vs.fec" "$dir/our.fec"
	t0=$(now)
	rss "$vs" format "$dir/data" "$dir/hash0" --salt "$salt" --uuid "$uuid" \
		>/dev/null
	t1=$(now)
	rss "$vs" format "$dir/data" "$dir/hash1" --salt "$salt" --uuid "$uuid" \
		--fec-device "$dir/vs.fec" --fec-roots "$roots" >/dev/null
	t2=$(now)
	vs_rss=$(cat "$dir/rss")
	tree=$(elapsed "$t0" "$t1")
	withfec=$(elapsed "$t1" "$t2")
	vsfec=$(elapsed "$tree" "$withfec")

	set -- "$dir/data" "$dir/hash1"
	case $roots in
	24) target=${BENCH_FEC_TARGET:-50} ;;
	2) target=${BENCH_FEC_TARGET:-30} ;;
	*) target=${BENCH_FEC_TARGET:-10} ;;
	esac
	res=$(rss "$drv" encode "$@" "$dir/our.fec" "$roots" 4096)
	ours=${res%% *} gf=${res#* } our_rss=$(cat "$dir/rss")
	if ! cmp -s "$dir/vs.fec" "$dir/our.fec"; then
		echo "bench-fec: roots $roots: parity differs!" >&2
		status=1
		continue
	fi
	check=$(rss "$drv" check "$@" "$dir/our.fec" "$roots" 4096 | cut -d' ' -f1)
	check_rss=$(cat "$dir/rss")
	one=$(rss "$drv" encode "$@" "$dir/our1.fec" "$roots" 4096 1 | cut -d' ' -f1)
	one_rss=$(cat "$dir/rss")
	rm -f "$dir/our1.fec"

	speedup=$(awk -v a="$vsfec" -v b="$ours" \
		'BEGIN { printf "%.1f", a / b }')
	mibs=$(awk -v s="$bytes" -v t="$ours" \
		'BEGIN { printf "%.0f", s / 1048576 / t }')
	printf 'roots %-2s  veritysetup: format %ss, with FEC %ss' \
		"$roots" "$tree" "$withfec"
	printf ' -> FEC %ss (maxrss %sM)\n' "$vsfec" "$vs_rss"
	printf '          ours (%s): encode %ss (%s MiB/s, maxrss %sM; 1 thread %ss, %sM),' \
		"$gf" "$ours" "$mibs" "$our_rss" "$one" "$one_rss"
	printf ' check %ss (%sM)\n' "$check" "$check_rss"
	printf '          parity identical; speedup %sx (target %sx)\n' \
		"$speedup" "$target"
	[ -n "${BENCH_SUMMARY_DIR:-}" ] &&
		printf 'fec-roots%s\t%s\t%s\t%ss vs veritysetup %ss, %s, default threads\n' \
			"$roots" "$speedup" "$gf" "$ours" "$vsfec" "$size" \
			>>"$BENCH_SUMMARY_DIR/summary-fec.tsv"
	if awk -v s="$speedup" -v t="$target" 'BEGIN { exit !(s < t) }'
	then
		echo "bench-fec: roots $roots: below ${target}x" >&2
		status=1
	fi
done
exit $status
