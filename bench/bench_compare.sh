#!/bin/sh
# SPDX-License-Identifier: MIT
# Old binaries against new ones on the same data, interleaved (old, new,
# old, new, ...), so that a busy or drifting machine hits both alike:
# issue 11's rule "medians of at least 5 interleaved runs give new/old
# >= 0.97".  Not a test.
#
# Usage: bench_compare.sh <old dir> <new dir>
#   each dir holds verity-tool and integrity-tool; fsverity-tool and
#   crypt-tool are compared too when both dirs have them.
# Environment: BENCH_COMPARE_SIZE (data, default 2G; 512M for a quick run),
# BENCH_COMPARE_RUNS (per side, default 5, at least 5 for the rule),
# BENCH_COMPARE_DIR (scratch, default /var/tmp), BENCH_COMPARE_MIN (the
# lowest acceptable new/old, default 0.97), BENCH_COMPARE_TSV (also write
# the results there, tab-separated).
#
# Commands, all with fixed --salt/--uuid, inputs warm in the page cache,
# outputs removed and nothing dirty before each run:
#   verity-tool build and verify, default threads and --threads 1;
#   verity-tool build --fec-device --fec-roots 2;
#   integrity-tool format --data-from (sha256, 4096-byte sectors), check;
#   fsverity-tool digest of the data file and --files-from of 20,000 small
#   files (1 byte to 64 KiB);
#   crypt-tool format plain and LUKS2 (PBKDF2 forced to 1000 iterations:
#   the key derivation is not what is timed), decrypt of a LUKS2 image.
# A LUKS2 image's salts and keys are random, so that one output is not
# compared (its decryption is, in the decrypt row).
# new/old is old time / new time (above 1: new is faster), of the median
# wall times; the same of the median CPU times (user + sys) is printed as
# well, for a machine that is not idle.  The outputs of the last run of
# each side are compared byte for byte.  Exits 1 when a new/old is below
# the minimum or an output differs.
set -eu

old=${1:?usage: bench_compare.sh <old dir> <new dir>}
new=${2:?usage: bench_compare.sh <old dir> <new dir>}
old=$(cd "$old" && pwd)
new=$(cd "$new" && pwd)
size=${BENCH_COMPARE_SIZE:-2G}
runs=${BENCH_COMPARE_RUNS:-5}
min=${BENCH_COMPARE_MIN:-0.97}
for d in "$old" "$new"; do
	for t in verity-tool integrity-tool; do
		[ -x "$d/$t" ] || { echo "bench-compare: no $d/$t" >&2; exit 1; }
	done
done
have_fv=1 have_ct=1
for d in "$old" "$new"; do
	[ -x "$d/fsverity-tool" ] || have_fv=0
	[ -x "$d/crypt-tool" ] || have_ct=0
done
[ -x /usr/bin/time ] || {
	echo "bench-compare: /usr/bin/time not found (apt-get install time)" >&2
	exit 1
}
[ "$runs" -ge 5 ] || echo "bench-compare: note: $runs runs, the rule asks for 5" >&2
salt=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
uuid=12345678-1234-1234-1234-123456789abc
isalt=000102030405060708090a0b0c0d0e0f

dir=$(mktemp -d "${BENCH_COMPARE_DIR:-/var/tmp}/dmt-bench-compare.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
d=$dir/data
head -c "$size" /dev/zero | openssl enc -aes-128-ctr -nosalt \
	-K 000102030405060708090a0b0c0d0e0f \
	-iv 00000000000000000000000000000000 >"$d"
bytes=$(stat -c %s "$d")

echo "bench-compare: $(numfmt --to=iec "$bytes") of random data in $dir, $runs interleaved runs per side"
echo "  old: $old ($(cat "$old/COMMIT" 2>/dev/null || "$old/verity-tool" --version))"
echo "  new: $new ($(git -C "$new/.." describe --always --dirty 2>/dev/null || "$new/verity-tool" --version))"
echo "  load before: $(cut -d' ' -f1-3 /proc/loadavg)"

# Reference outputs that verify and check read (made by the new tools;
# the old ones must accept them: the bytes are meant to be identical).
"$new/verity-tool" build "$d" "$dir/ref.hash" --salt $salt --uuid $uuid \
	>"$dir/ref.out"
root=$(awk '/^Root hash:/ { print $3 }' "$dir/ref.out")
"$new/integrity-tool" format -q -I sha256 -s 4096 --salt $isalt \
	--device-size auto --data-from "$d" "$dir/ref.img" >/dev/null
if [ "$have_fv" = 1 ]; then
	# 20,000 small files in 100 directories, sizes 1 byte .. 64 KiB
	mkdir -p "$dir/tree"
	awk 'BEGIN { srand(7); for (i = 0; i < 20000; i++)
		printf "%d %d\n", i, 1 + int(rand() * rand() * 65536) }' |
	while read -r i n; do
		sub=$dir/tree/$((i % 100))
		[ -d "$sub" ] || mkdir "$sub"
		echo "$sub/f$i $n"
	done >"$dir/tree.sizes"
	# one pass over the data file cut into pieces (perl is Essential in
	# Debian; a dd per file would be 20,000 processes)
	perl -e 'open(my $s, "<", $ARGV[0]) or die; open(my $l, "<", $ARGV[1]) or die;
		while (<$l>) { my ($p, $n) = split; read($s, my $b, $n) == $n or die;
			open(my $f, ">", $p) or die; print $f $b; close($f) or die; }' \
		"$d" "$dir/tree.sizes"
	cut -d' ' -f1 "$dir/tree.sizes" >"$dir/tree.list"
fi
if [ "$have_ct" = 1 ]; then
	head -c 64 "$d" >"$dir/key"
	"$new/crypt-tool" format -q --pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
		-d "$dir/key" --uuid $uuid --data-from "$d" "$dir/ref.luks" >/dev/null
fi

now() { date +%s.%N; }

# one NAME SIDE OUTPUT WARM -- CMD...: a timed run of CMD with the tools
# of SIDE ("old" or "new", as $T) after removing OUTPUT and warming the
# files in WARM (a space-separated list); "wall cpu" goes to NAME.SIDE.
one() {
	name=$1 side=$2 output=$3 warm=$4
	shift 5
	rm -f "$output"
	for f in $warm; do
		if [ -d "$f" ]; then
			find "$f" -type f -exec cat {} + >/dev/null
		else
			cat "$f" >/dev/null
		fi
	done
	sync
	t0=$(now)
	/usr/bin/time -f '%U %S' -o "$dir/t" "$@" >"$dir/stdout.$name.$side" ||
		{ echo "bench-compare: $side $name failed: $*" >&2; exit 1; }
	t1=$(now)
	awk -v a="$t0" -v b="$t1" '{ printf "%.4f %.2f\n", b - a, $1 + $2 }' \
		"$dir/t" >>"$dir/$name.$side"
}

# The commands: NAME|OUTPUT (suffixed with the side)|WARM|ARGS (after the
# tool name; $D data, $H reference hash, $I reference image, $O output).
commands="build|h|data|verity-tool build \$D \$O --salt $salt --uuid $uuid
build-t1|h|data|verity-tool build \$D \$O --salt $salt --uuid $uuid --threads 1
verify|-|data ref.hash|verity-tool verify \$D \$H $root
verify-t1|-|data ref.hash|verity-tool verify \$D \$H $root --threads 1
build-fec2|h|data|verity-tool build \$D \$O --salt $salt --uuid $uuid --fec-device \$O.fec --fec-roots 2
int-format|img|data|integrity-tool format -q -I sha256 -s 4096 --salt $isalt --device-size auto --data-from \$D \$O
int-check|-|ref.img|integrity-tool check -q -I sha256 \$I"
[ "$have_fv" = 1 ] && commands="$commands
fsv-digest|-|data|fsverity-tool digest \$D
fsv-files|-|tree tree.list|fsverity-tool digest --files-from \$L"
[ "$have_ct" = 1 ] && commands="$commands
ct-plain|img|data key|crypt-tool format -q -M plain -d \$K --data-from \$D \$O
ct-luks2|img~|data key|crypt-tool format -q --pbkdf pbkdf2 --pbkdf-force-iterations 1000 -d \$K --uuid $uuid --data-from \$D \$O
ct-decrypt|out|ref.luks key|crypt-tool decrypt -d \$K \$R \$O"

run_cmd() {	# SIDE LINE
	side=$1
	IFS='|' read -r name out warm args <<-EOF
	$2
	EOF
	[ "$side" = old ] && T=$old || T=$new
	# the same output path for both sides (stdout may name it)
	o=$dir/out.$name
	[ "$out" = - ] && o=$dir/none
	# out.NAME in every case (the suffix only marks what is compared)
	w=""
	for f in $warm; do w="$w $dir/$f"; done
	D=$d H=$dir/ref.hash I=$dir/ref.img O=$o L=$dir/tree.list
	K=$dir/key R=$dir/ref.luks
	# shellcheck disable=SC2046 # the words of args are the arguments
	set -- $(echo "$args" | sed "s|\$D|$D|g; s|\$H|$H|g; s|\$I|$I|g; s|\$O|$O|g; s|\$L|$L|g; s|\$K|$K|g; s|\$R|$R|g")
	tool=$1
	shift
	rm -f "$o.fec"
	one "$name" "$side" "$o" "$w" -- "$T/$tool" "$@"
	[ -e "$o" ] && mv "$o" "$o.$side"
	[ -e "$o.fec" ] && mv "$o.fec" "$o.fec.$side"
	return 0
}

r=0
while [ "$r" -lt "$runs" ]; do
	echo "$commands" | while IFS= read -r line; do
		run_cmd old "$line"
		run_cmd new "$line"
	done || exit 1
	r=$((r + 1))
	printf '  round %d of %d done, load %s\n' "$r" "$runs" \
		"$(cut -d' ' -f1 /proc/loadavg)"
done
echo "  load after: $(cut -d' ' -f1-3 /proc/loadavg)"

median() {	# FILE COLUMN
	sort -n -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c }
		END { if (NR % 2) print v[(NR + 1) / 2];
		      else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

status=0
echo
printf '| %-11s | %8s | %8s | %7s | %7s | %-9s |\n' command "old s" "new s" \
	new/old "CPU n/o" ""
printf '|%s|%s|%s|%s|%s|%s|\n' ------------- ---------- ---------- \
	--------- --------- -----------
[ -n "${BENCH_COMPARE_TSV:-}" ] &&
	printf 'command\told_s\tnew_s\tnew_over_old\tcpu_new_over_old\tstatus\n' \
		>"$BENCH_COMPARE_TSV"
for name in $(echo "$commands" | cut -d'|' -f1); do
	wo=$(median "$dir/$name.old" 1) wn=$(median "$dir/$name.new" 1)
	co=$(median "$dir/$name.old" 2) cn=$(median "$dir/$name.new" 2)
	ratio=$(awk -v o="$wo" -v n="$wn" 'BEGIN { printf "%.3f", o / n }')
	cpu=$(awk -v o="$co" -v n="$cn" \
		'BEGIN { if (n > 0) printf "%.3f", o / n; else print "-" }')
	verdict=ok
	awk -v r="$ratio" -v m="$min" 'BEGIN { exit !(r < m) }' &&
		{ verdict="SLOWER"; status=1; }
	out=$(echo "$commands" | grep "^$name|" | cut -d'|' -f2)
	# "img~": random by design (a LUKS2 image), not compared
	if [ "$out" != - ] && [ "${out%\~}" = "$out" ]; then
		for f in "$dir/out.$name" "$dir/out.$name.fec"; do
			[ -e "$f.old" ] || continue
			cmp -s "$f.old" "$f.new" ||
				{ verdict="$verdict, DIFFERS"; status=1; }
		done
	fi
	cmp -s "$dir/stdout.$name.old" "$dir/stdout.$name.new" ||
		{ verdict="$verdict, stdout differs"; status=1; }
	printf '| %-11s | %8s | %8s | %7s | %7s | %-9s |\n' "$name" "$wo" \
		"$wn" "$ratio" "$cpu" "$verdict"
	[ -n "${BENCH_COMPARE_TSV:-}" ] &&
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$wo" "$wn" "$ratio" \
			"$cpu" "$verdict" >>"$BENCH_COMPARE_TSV"
done
echo
echo "new/old = old time / new time of the medians (wall; CPU = user + sys);"
echo "below $min is flagged SLOWER.  Outputs and stdout compared byte for byte."
exit $status
