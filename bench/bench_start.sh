#!/bin/sh
# SPDX-License-Identifier: MIT
# Process start against the peers (issue 24, point 3): the median of RUNS
# whole runs (fork to exit, interleaved with the peer's, bench/start_time)
# of
#   - `fsverity-tool digest` of an empty file vs `fsverity digest`;
#   - `verity-tool build` of a 4 KiB file vs `veritysetup format`, each
#     into a hash file of its own (the same salt and UUID on both sides).
# The ratios are the peer's time / ours: no slower is >= 0.95.
#
# Environment: FSVERITY_TOOL, VERITY_TOOL, START_TIME (binaries,
# required), BENCH_START_RUNS (default 30), BENCH_SUMMARY_DIR (where to
# write summary-start.tsv for bench_summary.sh).  Exits 1 when a target
# is missed.
set -eu

fvt=${FSVERITY_TOOL:?set FSVERITY_TOOL to the fsverity-tool binary}
vt=${VERITY_TOOL:?set VERITY_TOOL to the verity-tool binary}
st=${START_TIME:?set START_TIME to the bench/start_time binary}
runs=${BENCH_START_RUNS:-30}
fsv=$(command -v fsverity) || {
	echo "bench-start: fsverity not found (apt-get install fsverity)" >&2
	exit 1
}
vs=$(PATH=$PATH:/usr/sbin:/sbin command -v veritysetup) || {
	echo "bench-start: veritysetup not found (apt-get install cryptsetup-bin)" >&2
	exit 1
}

dir=$(mktemp -d "${TMPDIR:-/tmp}/dmt-bench-start.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
: >"$dir/empty"
head -c 4096 /dev/urandom >"$dir/small"
: >"$dir/h.ours"
: >"$dir/h.peer"
salt=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
uuid=12345678-1234-1234-1234-123456789abc
export START_TIME_OUT="$dir/out"

echo "bench-start: median of $runs whole runs each, interleaved"
set -- $("$st" "$runs" "$fsv" digest "$dir/empty" -- \
	"$fvt" digest "$dir/empty")
fsv_ms=$1 fvt_ms=$2 fsv_cpu=$3 fvt_cpu=$4
set -- $("$st" "$runs" "$vs" format --salt "$salt" --uuid "$uuid" \
	"$dir/small" "$dir/h.peer" -- "$vt" build --salt "$salt" \
	--uuid "$uuid" "$dir/small" "$dir/h.ours")
vs_ms=$1 vt_ms=$2 vs_cpu=$3 vt_cpu=$4
cmp "$dir/h.peer" "$dir/h.ours"

r_fsv=$(awk -v a="$fsv_ms" -v b="$fvt_ms" 'BEGIN { printf "%.2f", a / b }')
r_vs=$(awk -v a="$vs_ms" -v b="$vt_ms" 'BEGIN { printf "%.2f", a / b }')
printf '  %-44s %8s %8s\n' "median of $runs" "wall ms" "cpu ms" \
	"fsverity digest (empty file)" "$fsv_ms" "$fsv_cpu" \
	"fsverity-tool digest (empty file)" "$fvt_ms" "$fvt_cpu" \
	"veritysetup format (4 KiB file)" "$vs_ms" "$vs_cpu" \
	"verity-tool build (4 KiB file)" "$vt_ms" "$vt_cpu"
cr_fsv=$(awk -v a="$fsv_cpu" -v b="$fvt_cpu" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
cr_vs=$(awk -v a="$vs_cpu" -v b="$vt_cpu" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
load=$(cut -d' ' -f1-3 /proc/loadavg)
status=0
for r in "$r_fsv fsverity / fsverity-tool, process start" \
	"$r_vs veritysetup / verity-tool, process start"; do
	set -- $r
	v=$1
	shift
	if awk -v v="$v" 'BEGIN { exit !(v >= 0.95) }'; then
		printf '  %-44s %5s (target >= 0.95) ok\n' "$*" "$v"
	else
		printf '  %-44s %5s (target >= 0.95) MISSED\n' "$*" "$v"
		status=1
	fi
done
printf '  %-44s %5s\n' "the same in CPU time (user + sys):" "" \
	"fsverity / fsverity-tool" "$cr_fsv" "veritysetup / verity-tool" "$cr_vs"
echo "  load average: $load (wall ratios need idle cores)"
if [ -n "${BENCH_SUMMARY_DIR:-}" ]; then
	printf 'start-fsverity\t%s\t-\t%s ms vs %s ms, cpu %s, median of %s, load %s\n' \
		"$r_fsv" "$fsv_ms" "$fvt_ms" "$cr_fsv" "$runs" "$load" \
		>"$BENCH_SUMMARY_DIR/summary-start.tsv"
	printf 'start-verity\t%s\t-\t%s ms vs %s ms, cpu %s, median of %s, load %s\n' \
		"$r_vs" "$vs_ms" "$vt_ms" "$cr_vs" "$runs" "$load" \
		>>"$BENCH_SUMMARY_DIR/summary-start.tsv"
fi
exit $status
