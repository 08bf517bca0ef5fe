#!/bin/sh
# SPDX-License-Identifier: MIT
# The last table of `make bench`: issue 15's and 24's ratios on this CPU, each
# with its target, whether it is met and the backend that ran.
#
# Usage: bench_summary.sh <dir> <verity-tool>
#   <dir> holds the rows the benches wrote (summary-hash.tsv,
#   summary-verity.tsv, summary-fec.tsv, summary-integrity.tsv,
#   summary-crypt.tsv, summary-fsverity.tsv, summary-start.tsv: key,
#   value, backend, detail, tab-separated).  Writes <dir>/summary.tsv:
#   "#" lines naming the CPU, then a header line and one row per ratio
#   (key, description, value, op, target, status, backend, detail).
#   Exits 1 when a target is missed or a ratio was not measured.
#
# The targets live here, in one place (issue 15, "What to build"):
#   sha256-1way      the 1-way path vs OpenSSL 1-way, 4 KiB      >= 1.0
#   sha256-multi     the default (multi-way) vs OpenSSL 1-way    >= 1.8 on
#                    AMD (2-way SHA-NI), >= 1.39 elsewhere (one SHA unit)
#   sha512-best      the default sha512 vs OpenSSL, 4 KiB        >= 1.6
#   verity-*         tool bytes/s vs the engine's own rate on as many
#                    threads (bench_hash -t), cached data        >= 0.85
#   fec-roots24/2    veritysetup's FEC time / ours               >= 50 / 30
#   integrity-*      time / dd's time for the same bytes         <= 1.2
#   crypt-shm-floor  crypt-tool format in place on /dev/shm / the best
#                    copy floor (dd conv=notrunc, copy_floor -t 2)
#                    (issue 24)                                  <= 1.3
#   crypt-disk-dd    crypt-tool format on disk / dd conv=fsync   <= 1.15
#   fsverity-xargs   `xargs -n 1000 fsverity digest` / the same with
#                    fsverity-tool, 50,000 files of 0-16 KiB (issue 24) >= 1.5
#   start-*          the peer's process start / ours, median of 30
#                    whole runs (fsverity digest, veritysetup
#                    format; issue 24)                           >= 0.95
set -eu

dir=${1:?usage: bench_summary.sh <dir> <verity-tool>}
vt=${2:?usage: bench_summary.sh <dir> <verity-tool>}
out=$dir/summary.tsv
tab=$(printf '\t')

cpuinfo() {	# first value of a /proc/cpuinfo field
	sed -n "s/^$1[[:space:]]*: *//p" /proc/cpuinfo 2>/dev/null | head -n1
}
vendor=$(cpuinfo vendor_id)
family=$(cpuinfo 'cpu family')
model=$(cpuinfo model)
name=$(cpuinfo 'model name')
[ -n "$vendor" ] || vendor=$(cpuinfo 'CPU implementer')
[ -n "$model" ] || model=$(cpuinfo 'CPU part')
[ -n "$name" ] || name=$(uname -m)
# the features the backends are chosen by
features=$(cpuinfo flags | tr ' ' '\n' | grep -xE \
	'sha_ni|avx2|avx512f|avx512bw|avx512vl|gfni|vaes|vpclmulqdq|ssse3|sse4_2' |
	tr '\n' ' ' | sed 's/ $//')
[ -n "$features" ] || features=$(cpuinfo Features)
engines=$("$vt" --list-engines 2>/dev/null |
	awk '$3 == "default" { printf "%s%s=%s", sep, $4, $1; sep = " " }')

multi=1.39
[ "$vendor" = AuthenticAMD ] && multi=1.8

{
	printf '# cpu_vendor\t%s\n# cpu_family_model\t%s/%s\n' \
		"$vendor" "$family" "$model"
	printf '# cpu_model_name\t%s\n# cpus\t%s\n# cpu_features\t%s\n' \
		"$name" "$(nproc)" "$features"
	printf '# default_backends\t%s\n# load_average\t%s\n# date\t%s\n' \
		"$engines" "$(cut -d' ' -f1-3 /proc/loadavg)" \
		"$(date -u '+%Y-%m-%d %H:%M UTC')"
	printf 'key\tdescription\tvalue\top\ttarget\tstatus\tbackend\tdetail\n'
} >"$out"

# key|description|op|target, in the order of the table
targets="sha256-1way|sha256 1-way vs OpenSSL 1-way, 4 KiB|>=|1.0
sha256-multi|sha256 default (multi-way) vs OpenSSL 1-way|>=|$multi
sha512-best|sha512 default vs OpenSSL 1-way, 4 KiB|>=|1.6
verity-build|verity build vs engine, same threads|>=|0.85
verity-verify|verity verify vs engine, same threads|>=|0.85
verity-build-1|verity build --threads 1 vs engine 1-core|>=|0.85
verity-verify-1|verity verify --threads 1 vs engine 1-core|>=|0.85
fec-roots24|veritysetup FEC / ours, roots 24|>=|50
fec-roots2|veritysetup FEC / ours, roots 2|>=|30
integrity-format|integrity format / dd oflag=direct,fsync|<=|1.2
integrity-check|integrity check / dd iflag=direct, cold|<=|1.2
crypt-shm-floor|crypt format in place / best copy floor, shm|<=|1.3
crypt-disk-dd|crypt format / dd conv=fsync, disk|<=|1.15
fsverity-xargs|xargs -n 1000 fsverity / fsverity-tool, small files|>=|1.5
start-fsverity|fsverity digest / ours, process start|>=|0.95
start-verity|veritysetup format / ours, process start|>=|0.95"

rows=$(cat "$dir"/summary-hash.tsv "$dir"/summary-verity.tsv \
	"$dir"/summary-fec.tsv "$dir"/summary-integrity.tsv \
	"$dir"/summary-crypt.tsv "$dir"/summary-fsverity.tsv \
	"$dir"/summary-start.tsv 2>/dev/null || :)
status=0
missed=0
total=0
echo "$targets" | {
	while IFS='|' read -r key desc op target; do
		total=$((total + 1))
		line=$(printf '%s\n' "$rows" | grep "^$key$tab" | tail -n1 || :)
		if [ -z "$line" ]; then
			printf '%s\t%s\t-\t%s\t%s\tnot run\t-\t-\n' "$key" \
				"$desc" "$op" "$target" >>"$out"
			missed=$((missed + 1))
			continue
		fi
		printf '%s\n' "$line" | awk -F'\t' -v OFS='\t' -v d="$desc" \
			-v op="$op" -v t="$target" '{
			ok = (op == ">=") ? $2 + 0 >= t + 0 : $2 + 0 <= t + 0
			print $1, d, $2, op, t, (ok ? "met" : "MISSED"), $3, $4
		}' >>"$out"
		tail -n1 "$out" | grep -q "${tab}met$tab" || missed=$((missed + 1))
	done
	echo "$missed $total" >"$out.count"
}
read -r missed total <"$out.count"
rm -f "$out.count"

echo
echo "== make bench summary: issue 15's and issue 24's ratios on this CPU =="
echo "CPU: $name ($vendor, family $family model $model), $(nproc) CPUs"
echo "features: $features"
echo "default backends: $engines"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (the ratios need idle cores)"
echo
awk -F'\t' '
/^#/ || $1 == "key" { next }
{ rows[n++] = $0; if (length($2) > w) w = length($2) }
END {
	printf "| %-*s | %6s | %-7s | %-7s | %-9s | %s |\n", w, "ratio",
		"value", "target", "", "backend", "detail"
	printf "|---|---|---|---|---|---|\n"
	for (i = 0; i < n; i++) {
		split(rows[i], f, "\t")
		printf "| %-*s | %6s | %-2s %-4s | %-7s | %-9s | %s |\n", w,
			f[2], f[3], f[4], f[5], f[6], f[7], f[8]
	}
}' "$out"
echo
if [ "$missed" -gt 0 ]; then
	echo "bench: $missed of $total targets missed or not measured (rows in $out)"
	status=1
else
	echo "bench: all $total targets met (rows in $out)"
fi
exit $status
