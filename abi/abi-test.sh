#!/bin/sh
# SPDX-License-Identifier: MIT
# `make check-abi-test`: proves that check-abi fails when it must, on the
# libraries mk/abi.mk relinked in DIR from the built PIC objects (the real
# baseline, headers and map are never touched: DIR holds copies):
#   DIR/same     one object recompiled against an unchanged copy of the
#                headers: must pass (the relinking alone changes nothing)
#   DIR/field    the same object against a copy with a member inserted at
#                the top of struct dmt_verity_params: must fail, by abidiff
#   DIR/removed  all objects, the first global of the map left out: must
#                fail, by abidiff (a removed function)
# and the real library must pass.
# Usage: abi-test.sh DIR SHLIB MAP SYMBOLS
set -eu
dir=$1 so=$2 map=$3 symbols=$4
here=$(cd "$(dirname "$0")" && pwd)
base=$dir/baseline.abi
failed=0

# run NAME WANT(pass|fail) SHLIB MAP PATTERN HEADERS_DIR...: a failure
# must be abidiff's, and its report must match the extended regex PATTERN
run() {
	name=$1 want=$2 lib=$3 m=$4 pat=$5
	shift 5
	rc=0
	sh "$here/abi.sh" check "$base" "$lib" "$m" "$symbols" "$@" \
		>"$dir/$name.out" 2>&1 || rc=$?
	if [ "$want" = pass ]; then
		if [ "$rc" = 0 ]; then
			echo "check-abi-test: ok: $name passes"
			return
		fi
	elif [ "$rc" = 1 ] &&
		grep -q '^check-abi: FAIL: abidiff: incompatible' "$dir/$name.out" &&
		grep -qE "$pat" "$dir/$name.out"; then
		echo "check-abi-test: ok: $name fails: $(grep -m1 -E "$pat" "$dir/$name.out" | sed 's/^ *//')"
		return
	fi
	echo "check-abi-test: FAIL: $name should $want (exit $rc):" >&2
	sed 's/^/  /' "$dir/$name.out" >&2
	failed=1
}

run real pass "$so" "$map" - include/dmt
run same pass "$dir/same/libdmt.so.0" "$map" - include/dmt "$dir/same/include/dmt"
run field fail "$dir/field/libdmt.so.0" "$map" "'.* abi_test_inserted'" \
	include/dmt "$dir/field/include/dmt"
run removed fail "$dir/removed/libdmt.so.0" "$dir/removed/libdmt.map" \
	"\\[D\\] .*$(cat "$dir/removed/symbol")" include/dmt
cmp -s "$base" abi/libdmt.so.0.abi || { echo "check-abi-test: FAIL: the baseline copy changed" >&2; failed=1; }
[ "$failed" = 0 ] || { echo "check-abi-test: FAILED" >&2; exit 1; }
echo "check-abi-test: passed"
