#!/bin/sh
# SPDX-License-Identifier: MIT
# Cross-builds the library, the tools and every test file for s390x
# (big-endian) and/or arm64 and runs the unit tests under qemu-user, linked
# against the in-tree runner (tests/runner) instead of Criterion, which has
# no s390x package and re-executes itself (fails under qemu-user).  The
# runs set DMT_TEST_REDUCED=1: the tests shrink their vectors (emulation
# hashes ~10x slower) but keep every case; and DMT_TEST_EMULATED=1: what
# measures the tools' own processes (peak RSS: here qemu's) skips.
#
# Usage: cross-check.sh ARCH...   (ARCH: s390x, arm64)
# Environment: MAKE, CROSS_JOBS (build and test -j, default nproc),
# CROSS_PARALLEL (1: the architectures build and run side by side; default
# 0, one after the other: measured faster on 2 cores, 300 s against 326 s
# with CROSS_JOBS=1 and 353 s with -j2 each), CROSS_BUILD (build directory
# prefix, default build-: build-s390x/, build-arm64/),
# CROSS_TIMEOUT (seconds per emulated run, default 900), CROSS_TEST_CAP
# (seconds per test, default 180: a slower test fails instead of eating the
# run), and CROSS_TEST_FLAGS (extra runner flags for the full-suite runs,
# e.g. --filter=...).
#
# s390x runs: the whole suite on `-cpu max` (KIMD/KLMD SHA-512 emulated),
# then the s390 suite and the engine's cpacf/default tests with SHA-512
# switched off and with MSA switched off, each with the query masks
# detection must find.  arm64: the whole suite on `-cpu max`, the hash
# engine tests on cortex-a57 (no SHA-512 crypto extension); arm64 runs the
# library's suites only unless CROSS_ARM64_FULL=1 (its tools are the
# host's little-endian code paths; s390x runs every suite).
# A test file that does not compile for the target counts as a failure; the
# others still run.  The last lines sum everything up, one per architecture
# and the total; the exit status is non-zero when anything failed:
#   cross-s390x: N passed, N failed, N skipped
#   cross-arm64: N passed, N failed, N skipped
#   cross: N passed, N failed, N skipped (Ns)
set -u
MAKE=${MAKE:-make}
jobs=${CROSS_JOBS:-$(nproc 2>/dev/null || echo 2)}
run_timeout=${CROSS_TIMEOUT:-900}
test_cap=${CROSS_TEST_CAP:-180}
prefix=${CROSS_BUILD:-build-}
extra_env=
slowest=0
src=$(pwd)
total_pass=0 total_fail=0 total_skip=0
t0=$(date +%s)
[ $# -gt 0 ] || set -- s390x arm64

parallel=${CROSS_PARALLEL:-0}
[ $# -gt 1 ] || parallel=0

# While the architectures run side by side their reports are collected in
# files; progress lines still go to the terminal.
exec 3>&2
say() { printf 'cross: %s\n' "$*" >&2; }
progress() {
	[ "$parallel" = 1 ] || return 0
	printf 'cross: [%4ds] %s\n' "$(($(date +%s) - t0))" "$*" >&3
}

# Adds one runner summary line ("N passed, N failed, N skipped") to the
# totals; a run without one (crash, timeout) counts as one failure.
account() {
	label=$1 log=$2 rc=$3
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		say "$label: no result line (exit $rc): counted as 1 failure"
		tail -n 20 "$log" >&2
		total_fail=$((total_fail + 1))
		progress "$label: no result line (exit $rc)"
		return
	fi
	set -- $(echo "$line" | tr -cs '0-9' ' ')
	total_pass=$((total_pass + $1))
	total_fail=$((total_fail + $2))
	total_skip=$((total_skip + ${3:-0}))
	if [ "$2" != 0 ] || [ "$rc" != 0 ]; then
		# Failures with their output, then the list of them.
		sed -n '/^\[FAIL\]/,/^\[\(PASS\|SKIP\)\]/{
			/^\[\(PASS\|SKIP\)\]/d; /^[0-9]* passed, /d; p; d; }
			/^FAILED:/p' "$log" >&2
	fi
	say "$label: $line"
	progress "$label: $line"
	# The slowest tests of the full runs: candidates for DMT_TEST_REDUCED.
	[ "$slowest" = 0 ] && return
	sed -n 's/^\[[A-Z]*\] \([^ ]*\) (\([0-9.]*\)s).*/\2 \1/p' "$log" |
		sort -rn | head -n "$slowest" | while read -r t n; do
		say "    slowest: ${t}s $n"
	done
}

# run LABEL QEMU_CPU EXPECT RUNNER-ARGS...
run() {
	label=$1 cpu=$2 expect=$3
	shift 3
	log="$O/logs/$(echo "$label" | tr -c 'A-Za-z0-9_.\n-' '_').log"
	say "$label: qemu-$qarch -cpu $cpu $*"
	progress "$label: running"
	start=$(date +%s)
	timeout -s KILL "$run_timeout" env $extra_env \
		QEMU_CPU="$cpu" DMT_BUILD="$run_dir" DMT_SRC="$src" \
		DMT_TEST_REDUCED=1 DMT_TEST_TIMEOUT_SCALE=20 DMT_TEST_EMULATED=1 \
		DMT_TEST_S390_EXPECT="$expect" \
		"qemu-$qarch" "$O/tests/unit-tests" -j"$jobs" --verbose \
		--timeout="$test_cap" "$@" \
		>"$log" 2>&1
	rc=$?
	account "$label ($(($(date +%s) - start))s)" "$log" "$rc"
}

cross_one() {
	arch=$1
	case "$arch" in
	s390x)
		triple=s390x-linux-gnu qarch=s390x
		pkgs="gcc-s390x-linux-gnu libc6-dev-s390x-cross"
		;;
	arm64 | aarch64)
		arch=arm64 triple=aarch64-linux-gnu qarch=aarch64
		pkgs="gcc-aarch64-linux-gnu libc6-dev-arm64-cross"
		;;
	*)
		say "unknown architecture '$arch' (s390x, arm64)"
		total_fail=$((total_fail + 1))
		return
		;;
	esac
	O=$prefix$arch
	mkdir -p "$O/logs"
	O=$(cd "$O" && pwd)
	if ! sh scripts/deps.sh cross $pkgs qemu-user ||
	   ! sh scripts/cross-sysroot.sh "$arch" "$O/sysroot"; then
		say "$arch: toolchain or sysroot missing"
		total_fail=$((total_fail + 1))
		return
	fi
	sys="$O/sysroot"
	pc="env PKG_CONFIG_SYSROOT_DIR=$sys"
	pc="$pc PKG_CONFIG_LIBDIR=$sys/usr/lib/$triple/pkgconfig"
	pc="$pc:$sys/usr/share/pkgconfig"
	pc="$pc pkg-config --static"
	libs=$($pc --libs libcrypto popt uuid json-c libxxhash libargon2)

	tests=""
	for f in tests/unit/*.c tests/cli/*/*.c tests/s390/*.c \
		 tests/support/*.c; do
		[ -e "$f" ] && tests="$tests $O/${f%.c}.o"
	done
	tools=""
	# the shipped tools and their test builds (DMT_TEST_HOOKS: the test
	# binary and the fault tests need the hooked library)
	for d in tools/*/; do
		d=${d%/}
		[ "${d##*/}" = common ] ||
			tools="$tools $O/${d##*/} $O/test-tools/${d##*/}"
	done
	tool_common=""
	for f in tools/common/*.c; do
		tool_common="$tool_common $O/${f%.c}.o"
	done
	inc="-I$sys/usr/include -I$sys/usr/include/$triple -Itests/runner"
	set -- O="$O" CC="$triple-gcc" AR="$triple-ar" PKG_CONFIG="$pc" \
		CPPFLAGS="$inc" LDFLAGS=-static
	say "$arch: building (logs in $O/logs)"
	progress "$arch: building"
	start=$(date +%s)
	"$MAKE" -k -j"$jobs" "$@" "$O/libdmt.a" "$O/libdmt-hooks.a" $tool_common \
		"$O/tests/runner/runner.o" \
		$tools $tests \
		>"$O/logs/build.log" 2>&1
	good="" bad=0
	for obj in "$O/libdmt.a" "$O/libdmt-hooks.a" $tool_common \
		   "$O/tests/runner/runner.o" $tools $tests; do
		if "$MAKE" -q "$@" "$obj" >/dev/null 2>&1 && [ -e "$obj" ]; then
			case "$obj" in
			*/tests/runner/*) ;;
			*/tests/*/*.o) good="$good $obj" ;;
			esac
			continue
		fi
		say "$arch: FAILED to build ${obj#$O/}"
		bad=$((bad + 1))
	done
	if [ "$bad" != 0 ]; then
		grep -E 'error|Error' "$O/logs/build.log" | head -n 40 >&2
		total_fail=$((total_fail + bad))
	fi
	if ! "$triple-gcc" -static -pthread -o "$O/tests/unit-tests" $good \
	     "$O/tests/runner/runner.o" \
	     $tool_common "$O/libdmt-hooks.a" $libs \
	     >"$O/logs/link.log" 2>&1; then
		grep -v 'statically linked applications' "$O/logs/link.log" |
			head -n 20 >&2
		say "$arch: test binary did not link"
		total_fail=$((total_fail + 1))
		return
	fi
	say "$arch: built in $(($(date +%s) - start))s"
	progress "$arch: built ($(($(date +%s) - start))s, $bad failed)"

	# Tests run the tools as $DMT_BUILD/<tool>: host shell wrappers that
	# start the static foreign binaries under qemu (QEMU_CPU inherited).
	# -0 passes the name the wrapper was called by, so a tool started
	# through a symlink (fsverity-tool as "fsverity") sees that name.
	run_dir="$O/qemu-run"
	rm -rf "$run_dir"
	mkdir -p "$run_dir"
	for e in "$O"/*; do
		n=${e##*/}
		case "$n" in
		*-tool)
			printf '#!/bin/sh\nexec qemu-%s -0 "$0" "%s" "$@"\n' "$qarch" \
				"$e" >"$run_dir/$n"
			chmod +x "$run_dir/$n"
			;;
		test-tools)
			# the test builds (DMT_IO_FAULT): wrapped the same way
			mkdir -p "$run_dir/$n"
			for t in "$e"/*-tool; do
				printf '#!/bin/sh\nexec qemu-%s -0 "$0" "%s" "$@"\n' \
					"$qarch" "$t" >"$run_dir/$n/${t##*/}"
				chmod +x "$run_dir/$n/${t##*/}"
			done
			;;
		qemu-run) ;;
		*) ln -s "$e" "$run_dir/$n" ;;
		esac
	done

	x=00000000000000000000000000000000
	case "$arch" in
	s390x)
		slowest=5
		run "s390x max" max \
			"9${x#0},9${x#0},8${x#0}" $CROSS_TEST_FLAGS
		slowest=0
		# Fallbacks: the s390 suite plus the engine's choice and its
		# cpacf tests (skipped when the engine is gone).
		set -- --filter='s390/*' --filter='hash/*cpacf*' \
			--filter='hash/misc_default'
		run "s390x no-sha512" max,kimd-sha-512=off,klmd-sha-512=off \
			"8${x#0},8${x#0},8${x#0}" "$@"
		run "s390x no-msa" max,msa-base=off none "$@"
		# $DMT_S390CAP end to end: KLMD-SHA-512 masked off.
		extra_env="DMT_S390CAP=klmd:~0x1000000000000000:~0"
		run "s390x DMT_S390CAP" max "9${x#0},8${x#0},8${x#0}" \
			--filter='s390/*'
		extra_env=""
		;;
	arm64)
		slowest=5
		# Little-endian as the host: what differs is the library's
		# ISA backends (crypto extensions, NEON), so its suites only;
		# CROSS_ARM64_FULL=1 (or CROSS_TEST_FLAGS) runs every suite.
		if [ -z "$CROSS_TEST_FLAGS" ] && [ "${CROSS_ARM64_FULL:-0}" != 1 ]; then
			set -f
			set -- $arm64_lib_filters
			set +f
		else
			set -- $CROSS_TEST_FLAGS
		fi
		run "arm64 max" max - "$@"
		slowest=0
		# No SHA-512 crypto extension: the engine's fallback.
		run "arm64 cortex-a57" cortex-a57 - --filter='hash/misc_*' \
			--filter='hash/*ce*'
		;;
	esac
}

# cross_arch ARCH RESULT-FILE: cross_one, its totals into the file.
cross_arch() {
	total_pass=0 total_fail=0 total_skip=0
	cross_one "$1"
	echo "$total_pass $total_fail $total_skip" >"$2"
}

CROSS_TEST_FLAGS=${CROSS_TEST_FLAGS:-}
# arm64's default run: the library's suites (tests/unit/*.c, tests/arch)
arm64_lib_filters=
for s in hash engine backends_new threads walk verity fec sign fsverity \
	fsverity_sparse crypt crypt_xts_tweaks crypt_auth luks2 luks2_rules \
	integrity_sb integrity_journal integrity_tags integrity_ops \
	integrity_geom integrity_jcrypt; do
	arm64_lib_filters="$arm64_lib_filters --filter=$s/*"
done
res_dir=$(mktemp -d "${TMPDIR:-/tmp}/cross-check.XXXXXX") || exit 1
trap 'rm -rf "$res_dir"' EXIT
trap 'exit 130' INT TERM
# Each architecture's report goes to its own file while they run side by
# side, and is shown whole afterwards (no interleaving).
i=0
pids=""
for a in "$@"; do
	i=$((i + 1))
	if [ "$parallel" = 1 ]; then
		cross_arch "$a" "$res_dir/$i.res" 2>"$res_dir/$i.log" &
		pids="$pids $!"
	else
		cross_arch "$a" "$res_dir/$i.res"
	fi
done
for p in $pids; do
	wait "$p"
done
i=0
summary=""
total_pass=0 total_fail=0 total_skip=0
for a in "$@"; do
	i=$((i + 1))
	[ -f "$res_dir/$i.log" ] && cat "$res_dir/$i.log" >&2
	if [ -s "$res_dir/$i.res" ]; then
		read -r p f s <"$res_dir/$i.res"
	else
		p=0 f=1 s=0	# the architecture's run died
	fi
	summary="${summary}cross-$a: $p passed, $f failed, $s skipped
"
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	total_skip=$((total_skip + s))
done
printf '%s' "$summary"
echo "cross: $total_pass passed, $total_fail failed, $total_skip skipped" \
	"($(($(date +%s) - t0))s)"
[ "$total_fail" = 0 ]
