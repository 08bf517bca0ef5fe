#!/bin/sh
# SPDX-License-Identifier: MIT
# Authenticated LUKS2 (issue 14, "Speed"): crypt-tool format of one random
# payload, 4096-byte sectors, the cheap PBKDF (pbkdf2, 1000 iterations),
# in one run:
#   - on /dev/shm: LUKS2 aes-xts-plain64 (512-bit key, no integrity),
#     aes-gcm-random (256-bit key) + aead, aes-xts-random (512-bit key) +
#     hmac-sha256;
#   - the compute ceiling of the hmac pair: h = the engine's hmac(sha256)
#     on 2 threads over 4 KiB sectors, each with the 24-byte header
#     ("le64 sector || IV") dm-crypt MACs before it (bench_hash -t 2 -H 24),
#     and x = OpenSSL aes-256-xts on 2 cores (openssl speed -multi 2);
#     together 1/(1/h + 1/x);
#   - on the disk, durable: the gcm and hmac images against
#     `dd bs=16M oflag=direct conv=fsync` writing as many bytes (the gcm
#     image's size; the hmac image is 0.5% larger) from /dev/zero.
# Every image is an existing file of the right size (`crypt-tool size`),
# prepared untimed by writing it whole once; crypt-tool writes existing
# files in place.  Why: a new (or only fallocated) tmpfs file gets its
# pages at the first write, and that measures the hypervisor's page
# allocation (1.4 s to 6 s seen for the same 2 GiB write), not the tool.
# Medians of RUNS interleaved runs, wall and CPU (user + sys).  Memory:
# the payload and the three images live on /dev/shm at once (about 4.1x
# the payload; checked first), a copy and two images on the disk.
#
# Environment: CRYPT_TOOL (binary, required), BENCH_HASH (bench_hash
# binary, required), BENCH_CRYPT_AUTH_SIZE (payload, default 2G),
# BENCH_CRYPT_AUTH_RUNS (default 3), BENCH_CRYPT_AUTH_DIR (disk scratch,
# default /var/tmp), BENCH_CRYPT_AUTH_SHM (default /dev/shm),
# BENCH_CRYPT_AUTH_SPEED_SECONDS (openssl speed, default 2).  Exits 1 when
# a target is missed: gcm / xts-plain64 throughput >= 0.70; xts+hmac >=
# 0.80 x 1/(1/h + 1/x); on the disk gcm and hmac <= 1.2x dd.
# o and size_* are assigned through eval
# shellcheck disable=SC2154
set -eu
. "$(dirname "$0")/lib.sh"

tool=${CRYPT_TOOL:?set CRYPT_TOOL to the crypt-tool binary}
bh=${BENCH_HASH:?set BENCH_HASH to the bench_hash binary}
size=${BENCH_CRYPT_AUTH_SIZE:-2G}
runs=${BENCH_CRYPT_AUTH_RUNS:-3}
secs=${BENCH_CRYPT_AUTH_SPEED_SECONDS:-2}
[ -x /usr/bin/time ] || {
	echo "bench-crypt-auth: /usr/bin/time not found (apt-get install time)" >&2
	exit 1
}
ss="--sector-size 4096"
cheap="--pbkdf pbkdf2 --pbkdf-force-iterations 1000 $ss"
# shellcheck disable=SC2034 # used through eval
opt_xts=""
# shellcheck disable=SC2034
opt_gcm="--integrity aead --cipher aes-gcm-random --key-size 256"
# shellcheck disable=SC2034
opt_hmac="--integrity hmac-sha256 --cipher aes-xts-random --key-size 512"

disk=$(mktemp -d "${BENCH_CRYPT_AUTH_DIR:-/var/tmp}/dmt-bench-crypt-auth.XXXXXX")
shm=$(mktemp -d "${BENCH_CRYPT_AUTH_SHM:-/dev/shm}/dmt-bench-crypt-auth.XXXXXX")
trap 'rm -rf "$disk" "$shm"' EXIT INT TERM
res=$disk/results
bench_res=$res
verdict_width=50
mkdir -p "$res"
printf 'bench passphrase' >"$disk/pw"
want=$(numfmt --from=iec "$size" | awk '{ printf "%.0f", $1 * 4.2 / 1024 }')
have=$(df -Pk "$shm" | awk 'NR == 2 { print $4 }')
avail=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
if [ "$have" -lt "$want" ] || [ "$avail" -lt "$want" ]; then
	echo "bench-crypt-auth: $size needs about $((want / 1024)) MiB on $shm" \
		"and in memory (have $((have / 1024)) and $((avail / 1024)));" \
		"set BENCH_CRYPT_AUTH_SIZE lower" >&2
	exit 1
fi

echo "bench-crypt-auth: $size of random data, $runs runs each; disk $disk, shm $shm"
head -c "$size" /dev/zero | openssl enc -aes-128-ctr -nosalt \
	-K 000102030405060708090a0b0c0d0e0f \
	-iv 00000000000000000000000000000000 >"$shm/data"
cp "$shm/data" "$disk/data"
bytes=$(stat -c %s "$shm/data")

# prepare WHERE NAME: NAME.img, the right size, every page written once
# (untimed; see the header)
prepare() {
	eval o=\$opt_"$2"
	# shellcheck disable=SC2086
	n=$("$tool" size --payload-size "$bytes" $ss $o)
	eval "size_$2=$n"
	head -c "$n" /dev/zero >"$1/$2.img"
}
for p in xts gcm hmac; do
	prepare "$shm" "$p"
done
for p in gcm hmac; do
	prepare "$disk" "$p"
done
sync

# run NAME CMD...: one timed run from a clean state (nothing dirty);
# appends "wall cpu rss" to $res/NAME.
run() {
	name=$1
	shift
	sync
	/usr/bin/time -f '%e %U %S %M' -o "$res/t" "$@" >/dev/null
	awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$res/t" >>"$res/$name"
}
fmt() {	# fmt WHERE NAME: crypt-tool format of the payload into NAME.img
	eval o=\$opt_"$2"
	cat "$1/data" >/dev/null
	# shellcheck disable=SC2086
	run "$2_$3" "$tool" format -q $cheap $o --key-file "$disk/pw" \
		--data-from "$1/data" "$1/$2.img"
}

i=0
while [ "$i" -lt "$runs" ]; do
	for p in xts gcm hmac; do
		fmt "$shm" "$p" shm
	done
	# the compute ceiling of xts+hmac, in the same run
	"$bh" -t 2 -a 'hmac(sha256)' -m 4096 -p 0 -H 24 2>/dev/null |
		awk '{ print $1 * 1e9 }' >>"$res/h"
	openssl speed -evp aes-256-xts -bytes 4096 -multi 2 -seconds "$secs" \
		2>/dev/null | awk 'END { sub(/k$/, "", $NF); print $NF * 1000 }' \
		>>"$res/x"
	for p in gcm hmac; do
		fmt "$disk" "$p" disk
	done
	rm -f "$disk/dd.img"
	run dd_disk dd if=/dev/zero of="$disk/dd.img" bs=16M oflag=direct \
		conv=fsync status=none count="${size_gcm}B"
	rm -f "$disk/dd.img"
	i=$((i + 1))
done

# the images are what cryptsetup opens: every tag verifies, the plain one
# decrypts back to the payload
for p in gcm hmac; do
	"$tool" check -q --key-file "$disk/pw" "$shm/$p.img"
done
"$tool" decrypt -q --key-file "$disk/pw" "$shm/xts.img" "$shm/back"
cmp -n "$bytes" "$shm/back" "$shm/data"
rm -f "$shm/back"

rate() {	# rate NAME: payload GB/s of the median wall time
	awk -v b="$bytes" -v t="$(median "$1" 1)" \
		'BEGIN { printf "%.2f", (t > 0 ? b / 1e9 / t : 0) }'
}
line() {
	printf '%-46s %7ss %7ss %6s %8sM\n' "$2" "$(median "$1" 1)" \
		"$(median "$1" 2)" "$(rate "$1")" \
		"$(awk -v m="$(median "$1" 3)" 'BEGIN { printf "%.0f", m / 1024 }')"
}
echo
printf '%-46s %8s %8s %6s %9s\n' "median of $runs (GB/s: payload bytes)" wall cpu GB/s maxrss
line xts_shm "aes-xts-plain64, no integrity (/dev/shm)"
line gcm_shm "aes-gcm-random + aead (/dev/shm)"
line hmac_shm "aes-xts-random + hmac-sha256 (/dev/shm)"
line gcm_disk "aes-gcm-random + aead (disk, synced)"
line hmac_disk "aes-xts-random + hmac-sha256 (disk, synced)"
line dd_disk "dd bs=16M oflag=direct conv=fsync (disk)"
h=$(median h 1)
x=$(median x 1)
ceil=$(awk -v h="$h" -v x="$x" 'BEGIN { printf "%.0f", 1 / (1 / h + 1 / x) }')
awk -v h="$h" -v x="$x" -v c="$ceil" 'BEGIN {
	printf "%-46s %6.2f GB/s\n", "h: engine hmac(sha256), 2 threads, 4 KiB+24", h / 1e9
	printf "%-46s %6.2f GB/s\n", "x: openssl aes-256-xts, 2 cores, 4 KiB", x / 1e9
	printf "%-46s %6.2f GB/s\n", "1/(1/h + 1/x)", c / 1e9 }'

status=0
echo
# throughput ratios are inverse wall-time ratios
verdict "$(ratio xts_shm gcm_shm)" ">=" 0.70 "gcm / xts-plain64 throughput (/dev/shm)"
verdict "$(awk -v b="$bytes" -v t="$(median hmac_shm 1)" -v c="$ceil" \
	'BEGIN { printf "%.2f", (t > 0 ? b / t / c : 0) }')" ">=" 0.80 \
	"xts+hmac throughput / 1/(1/h + 1/x) (/dev/shm)"
verdict "$(ratio gcm_disk dd_disk)" "<=" 1.2 "gcm / dd on disk (wall)"
verdict "$(ratio hmac_disk dd_disk)" "<=" 1.2 "hmac / dd on disk (wall)"
echo "  CPU time (user + sys) ratios:"
printf '  %-50s %5s\n' "gcm / xts-plain64 (/dev/shm)" "$(ratio gcm_shm xts_shm 2)" \
	"xts+hmac / xts-plain64 (/dev/shm)" "$(ratio hmac_shm xts_shm 2)"
echo "  load average: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
