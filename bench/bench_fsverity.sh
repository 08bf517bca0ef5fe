#!/bin/sh
# SPDX-License-Identifier: MIT
# fsverity-tool digest against `fsverity digest` (fsverity-utils 1.5) in
# the same run, sha256, 4 KiB blocks, cached data:
#   big    one file of BENCH_FSVERITY_BIG (default 2G);
#   usr    BENCH_FSVERITY_FILES files (default 50000) with the sizes of a
#          real /usr (log-normal, median ~5 KB, a tail to 64 MiB; fixed
#          seed), vs `xargs -n 1000 fsverity digest` and the same with
#          -P$(nproc);
#   small  as many files of 0-16 KiB, vs `xargs -n 1000 fsverity digest`;
#          and as a drop-in, `xargs -n 1000 fsverity-tool digest` (files
#          as arguments, one process per 1,000) vs the same (issue 24:
#          >= 1.5x), with the cost per call of each and of the same
#          files through --files-from.
# Every command runs RUNS times interleaved (default 3); medians compared
# (wall time; peak RSS printed beside);
# outputs of both tools are checked equal first.  Issue 12's targets: big
# >= 3x, usr >= 4x (xargs) and >= 2x (xargs -P), small >= 4x.  Prints
# the ratios with the load average and the engine; exits 0 (a report, not
# a test) unless a tool fails or the outputs differ.
#
# With FSVERITY_FLOOR (bench/fsverity_floor.c), the small run also times
# the least a program does for it: the same four system calls per file and
# the same engine calls, nothing else (its digests are checked against
# fsverity's first), and those system calls alone.  The target is met only
# where the floor leaves room for it.
#
# Environment: FSVERITY_TOOL (binary, required), BENCH_SUMMARY_DIR (where
# to write summary-fsverity.tsv for bench_summary.sh), BENCH_FSVERITY_BIG,
# BENCH_FSVERITY_FILES, BENCH_FSVERITY_RUNS, BENCH_FSVERITY_DIR (scratch,
# default /var/tmp), BENCH_FSVERITY_THREADS (default: all CPUs),
# BENCH_FSVERITY_KEEP=DIR (generate the trees in DIR and keep them; a later
# run with the same DIR, size and count reuses them).
set -eu

tool=${FSVERITY_TOOL:?set FSVERITY_TOOL to the fsverity-tool binary}
floor=${FSVERITY_FLOOR:-}
big=${BENCH_FSVERITY_BIG:-2G}
nfiles=${BENCH_FSVERITY_FILES:-50000}
runs=${BENCH_FSVERITY_RUNS:-3}
threads=${BENCH_FSVERITY_THREADS:+--threads $BENCH_FSVERITY_THREADS}
ncpu=$(nproc)
command -v fsverity >/dev/null || {
	echo "bench-fsverity: fsverity not found (apt-get install fsverity)" >&2
	exit 1
}
command -v perl >/dev/null || {
	echo "bench-fsverity: perl not found" >&2
	exit 1
}
[ -x /usr/bin/time ] || {
	echo "bench-fsverity: /usr/bin/time not found (apt-get install time)" >&2
	exit 1
}

keep=${BENCH_FSVERITY_KEEP:-}
if [ -n "$keep" ]; then
	mkdir -p "$keep"
	dir=$(cd "$keep" && pwd)
else
	dir=$(mktemp -d "${BENCH_FSVERITY_DIR:-/var/tmp}/dmt-bench-fsverity.XXXXXX")
	trap 'rm -rf "$dir"' EXIT INT TERM
fi
stamp="$big $nfiles"

# Deterministic bytes: AES-128-CTR keystream of a fixed key.
stream() { # BYTES
	head -c "$1" /dev/zero | openssl enc -aes-128-ctr -nosalt \
		-K 000102030405060708090a0b0c0d0e0f \
		-iv 00000000000000000000000000000000
}

if [ -n "$keep" ] && [ "$(cat "$dir/.generated" 2>/dev/null)" = "$stamp" ]; then
	echo "bench-fsverity: reusing the trees in $dir (big $big, $nfiles + $nfiles files)"
	usr_bytes=$(cat "$dir/.usr_bytes")
	small_bytes=$(cat "$dir/.small_bytes")
	rm -f "$dir"/*.times "$dir"/*.t
else
	rm -rf "$dir/usr" "$dir/small" "$dir/.generated"
	echo "bench-fsverity: generating in $dir (big $big, $nfiles + $nfiles files)"
	stream "$big" >"$dir/big"
	stream 64M >"$dir/pool"
	# make_tree DIR KIND SEED: files whose sizes come from a seeded xorshift
	# (log-normal for "usr", uniform 0..16384 for "small"), contents slices of
	# the pool; 100 files per directory.
	make_tree() {
		perl -e '
			use strict; my ($dir, $kind, $n, $seed) = @ARGV;
			open(my $p, "<", "$dir/../pool") or die; binmode $p;
			local $/; my $pool = <$p>; my $plen = length $pool;
			my $s = $seed;
			sub rnd { $s ^= ($s << 13) & 0xffffffffffffffff; $s ^= $s >> 7;
				  $s ^= ($s << 17) & 0xffffffffffffffff;
				  return ($s % 1000000007) / 1000000007; }
			my $total = 0;
			for my $i (0 .. $n - 1) {
				my $size;
				if ($kind eq "usr") {
					my ($u1, $u2) = (rnd() || 1e-9, rnd());
					my $z = sqrt(-2 * log($u1)) * cos(6.283185307 * $u2);
					$size = int(4800 * exp(2.39 * $z));
					$size = 64 << 20 if $size > 64 << 20;
				} else {
					$size = int(rnd() * 16385);
				}
				my $d = sprintf("%s/%03d", $dir, $i / 100);
				mkdir $d;
				open(my $f, ">", sprintf("%s/f%05d", $d, $i)) or die;
				binmode $f;
				my $left = $size;
				while ($left > 0) {
					my $off = int(rnd() * ($plen - 1));
					my $take = $plen - $off < $left ? $plen - $off : $left;
					print $f substr($pool, $off, $take);
					$left -= $take;
				}
				close $f; $total += $size;
			}
			print "$total\n";
		' "$1" "$2" "$nfiles" "$3"
	}
	mkdir "$dir/usr" "$dir/small"
	usr_bytes=$(make_tree "$dir/usr" usr 88172645463325252)
	small_bytes=$(make_tree "$dir/small" small 1181783497276652981)
	rm -f "$dir/pool"
	(cd "$dir" && find usr -type f | LC_ALL=C sort >usr.list &&
		find small -type f | LC_ALL=C sort >small.list)
	echo "$usr_bytes" >"$dir/.usr_bytes"
	echo "$small_bytes" >"$dir/.small_bytes"
	echo "$stamp" >"$dir/.generated"
fi
echo "bench-fsverity: usr tree $usr_bytes bytes, small tree $small_bytes bytes"

# Warm the page cache, and check both tools agree before timing them.
cd "$dir"
cat big usr.list small.list >/dev/null
xargs cat <usr.list >/dev/null
xargs cat <small.list >/dev/null
"$tool" digest big >mine.out
fsverity digest big >theirs.out
xargs -n 1000 fsverity digest <usr.list >>theirs.out
"$tool" digest $threads --files-from usr.list >>mine.out
cmp -s mine.out theirs.out || {
	echo "bench-fsverity: outputs of fsverity-tool and fsverity differ" >&2
	exit 1
}
# the drop-in: the same files as arguments, 1,000 per process
xargs -n 1000 fsverity digest <small.list >theirs.out
xargs -n 1000 "$tool" digest $threads <small.list >mine.out
cmp -s mine.out theirs.out || {
	echo "bench-fsverity: xargs fsverity-tool and xargs fsverity differ" >&2
	exit 1
}
if [ -n "$floor" ]; then
	"$floor" -t "$ncpu" -p small.list >floor.out
	xargs -n 1000 fsverity digest <small.list >theirs.out
	cmp -s floor.out theirs.out || {
		echo "bench-fsverity: digests of fsverity_floor and fsverity differ" >&2
		exit 1
	}
fi

# run NAME CMD...: one timed run, "wall maxrss(KiB) cpu(user+sys)"
# appended to NAME.times
run() {
	name=$1
	shift
	/usr/bin/time -f '%e %M %U %S' -o "$name.t" "$@" >/dev/null
	tail -n1 "$name.t" | awk '{ print $1, $2, $3 + $4 }' >>"$name.times"
}
# median NAME [COLUMN]: of the wall times (or maxrss, column 2)
median() { sort -n -k"${2:-1}" "$1.times" | awk -v c="${2:-1}" '{v[NR] = $c} END {
	if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mib() { awk -v k="$(median "$1" 2)" 'BEGIN { printf "%.0f", k / 1024 }'; }

i=0
while [ $i -lt "$runs" ]; do
	run big_ours "$tool" digest $threads big
	run big_fsv fsverity digest big
	run usr_ours "$tool" digest $threads --files-from usr.list
	run usr_fsv sh -c 'xargs -n 1000 fsverity digest <usr.list'
	run usr_fsvP sh -c "xargs -n 1000 -P$ncpu fsverity digest <usr.list"
	run small_ours "$tool" digest $threads --files-from small.list
	run small_fsv sh -c 'xargs -n 1000 fsverity digest <small.list'
	run small_oursx sh -c "xargs -n 1000 '$tool' digest $threads <small.list"
	if [ -n "$floor" ]; then
		run small_floor "$floor" -t "$ncpu" small.list
		run small_sys "$floor" -t "$ncpu" -s small.list
	fi
	i=$((i + 1))
done

ratio() { printf '%.2f' "$(echo "$1 / $2" | bc -l)"; }
line() { # LABEL OURS THEIRS TARGET
	o=$(median "$2")
	t=$(median "$3")
	printf '%-44s %8.3f s vs %8.3f s  %6sx (target >= %sx)  maxrss %sM vs %sM\n' \
		"$1" "$o" "$t" "$(ratio "$t" "$o")" "$4" "$(mib "$2")" "$(mib "$3")"
}
echo "bench-fsverity: medians of $runs runs, $ncpu CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "bench-fsverity: default engines (sha256): $("$tool" --list-engines 2>/dev/null |
	awk '$3 == "default" && / sha256/ {printf "%s(%s lanes) ", $1, $2}')"
line "one $big file" big_ours big_fsv 3
line "$nfiles usr-like files vs xargs -n 1000" usr_ours usr_fsv 4
line "$nfiles usr-like files vs xargs -n 1000 -P$ncpu" usr_ours usr_fsvP 2
line "$nfiles files of 0-16 KiB vs xargs -n 1000" small_ours small_fsv 4
if [ -n "$floor" ]; then
	printf '%-44s %8.3f s vs %8.3f s  %6sx (the most this machine allows)  maxrss %sM\n' \
		"  floor: same syscalls and engine, no more" \
		"$(median small_floor)" "$(median small_fsv)" \
		"$(ratio "$(median small_fsv)" "$(median small_floor)")" \
		"$(mib small_floor)"
	printf '%-44s %8.3f s (the system calls alone)  maxrss %sM\n' \
		"  floor: open, fstat, pread, close per file" "$(median small_sys)" \
		"$(mib small_sys)"
fi
# The drop-in (issue 24, point 1): per call of 1,000 files, ours as
# arguments, fsverity's, and ours through --files-from (the same files in
# one process); the ratio of the wall times, and of the CPU times.
calls=$(( (nfiles + 999) / 1000 ))
per_call() { awk -v t="$1" -v n="$calls" 'BEGIN { printf "%.1f", t * 1000 / n }'; }
ox=$(median small_oursx)
tx=$(median small_fsv)
rx=$(ratio "$tx" "$ox")
crx=$(ratio "$(median small_fsv 3)" "$(median small_oursx 3)")
if awk -v v="$rx" 'BEGIN { exit !(v >= 1.5) }'; then verdict=ok; else verdict=MISSED; fi
printf '%-44s %8.3f s vs %8.3f s  %6sx (target >= 1.5x) %s; cpu %sx\n' \
	"$nfiles files of 0-16 KiB, xargs -n 1000 both" "$ox" "$tx" "$rx" \
	"$verdict" "$crx"
printf '%-44s %s ms ours, %s ms fsverity; --files-from %s ms per 1,000\n' \
	"  per call of 1,000 files (wall)" "$(per_call "$ox")" \
	"$(per_call "$tx")" "$(per_call "$(median small_ours)")"
if [ -n "${BENCH_SUMMARY_DIR:-}" ]; then
	printf 'fsverity-xargs\t%s\t-\t%s vs %s ms per call of 1000 (--files-from %s), cpu %s, median of %s, load %s\n' \
		"$rx" "$(per_call "$ox")" "$(per_call "$tx")" \
		"$(per_call "$(median small_ours)")" "$crx" "$runs" \
		"$(cut -d' ' -f1-3 /proc/loadavg)" \
		>"$BENCH_SUMMARY_DIR/summary-fsverity.tsv"
fi
