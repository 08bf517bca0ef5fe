#!/bin/sh
# SPDX-License-Identifier: MIT
# The ABI of libdmt.so.0 held against the committed baseline
# (abi/libdmt.so.0.abi), with abidw and abidiff from abigail-tools.
#
#   abi.sh dump SHLIB OUT HEADERS_DIR...
#	the ABI of SHLIB as abixml: only the types the public headers
#	declare (--headers-dir, --drop-private-types), no paths, no source
#	locations, no DT_NEEDED and hashed type ids, so that the same
#	library gives the same file from any checkout or build directory
#	(and a comment or line moved in a header changes nothing)
#   abi.sh check BASELINE SHLIB MAP SYMBOLS HEADERS_DIR...
#	fails (exit 1) when SHLIB is not ABI-compatible with BASELINE (a
#	removed or changed exported function, variable or public type:
#	abidiff's verdict with added symbols left out), when its soname is
#	not the baseline's, or when the export lists disagree: the globals
#	of MAP (scripts/libdmt-map.sh, from the headers: the only export
#	list), what SHLIB exports, the baseline's symbols and the names in
#	SYMBOLS (debian/libdmt0.symbols) must be one list.  An addition
#	is compatible but must reach the baseline in the same commit.
# Each failure is one line starting with "check-abi: FAIL"; `make
# abi-baseline` regenerates the baseline, `make check-abi-test` shows
# that each kind of break is caught.
set -eu
ABIDW=${ABIDW:-abidw}
ABIDIFF=${ABIDIFF:-abidiff}
NM=${NM:-nm}
cmd=${1:?usage: abi.sh dump|check ...}
shift

dump() {
	so=$1 out=$2
	shift 2
	hd=
	for d in "$@"; do
		hd="$hd --headers-dir $d"
	done
	# shellcheck disable=SC2086
	$ABIDW $hd --drop-private-types --no-corpus-path --no-comp-dir-path \
		--no-show-locs --no-elf-needed --type-id-style hash \
		--out-file "$out" "$so"
	# without DWARF abidw still writes the symbols, and every type would
	# look removed: say what is missing instead
	grep -q '<function-decl' "$out" || {
		echo "check-abi: FAIL: $so has no debug information (build with -g)" >&2
		return 1
	}
}

if [ "$cmd" = dump ]; then
	dump "$@"
	exit 0
fi
[ "$cmd" = check ] || { echo "usage: abi.sh dump|check ..." >&2; exit 2; }

base=$1 so=$2 map=$3 symbols=$4
shift 4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
failed=0
fail() { echo "check-abi: FAIL: $*" >&2; failed=1; }

[ -f "$base" ] || { fail "no baseline $base (make abi-baseline)"; exit 1; }
dump "$so" "$tmp/cur.abi" "$@" || exit 1

want=$(sed -n "1s/.* soname='\([^']*\)'.*/\1/p" "$base")
got=$(sed -n "1s/.* soname='\([^']*\)'.*/\1/p" "$tmp/cur.abi")
[ "$got" = "$want" ] || fail "soname is '$got', the baseline's is '$want'"

# abidiff exits with bit 4 for an ABI change, 8 for an incompatible one;
# added functions are left out here (compatible), counted below
rc=0
$ABIDIFF --no-added-syms "$base" "$tmp/cur.abi" >"$tmp/diff" 2>&1 || rc=$?
if [ "$rc" != 0 ]; then
	sed 's/^/  /' "$tmp/diff" >&2
	if [ $((rc & 3)) != 0 ]; then
		fail "abidiff could not compare (exit $rc)"
	else
		fail "abidiff: incompatible ABI change against $base (exit $rc; if it is meant, bump the soname or run make abi-baseline and commit it)"
	fi
fi

# the four export lists
sed -n "s/.*<elf-symbol name='\([^']*\)'.*/\1/p" "$base" | LC_ALL=C sort -u \
	>"$tmp/baseline"
sed -n 's/^	\(dmt_[A-Za-z0-9_]*\);$/\1/p' "$map" | LC_ALL=C sort -u >"$tmp/map"
$NM -D --defined-only "$so" | awk '$2 != "A" { print $3 }' | sed 's/@.*//' |
	LC_ALL=C sort -u >"$tmp/exported"
sed -n 's/^ \([A-Za-z0-9_]*\)@.*/\1/p' "$symbols" | grep -v '^LIBDMT_' |
	LC_ALL=C sort -u >"$tmp/symbols"
[ -s "$tmp/map" ] || fail "$map lists no global symbol"
lists() {
	a=$1 b=$2 what=$3
	only_a=$(LC_ALL=C comm -23 "$tmp/$a" "$tmp/$b" | tr '\n' ' ')
	only_b=$(LC_ALL=C comm -13 "$tmp/$a" "$tmp/$b" | tr '\n' ' ')
	[ -z "$only_a$only_b" ] && return 0
	fail "$what: only in the $a list: ${only_a:-none}; only in the $b list: ${only_b:-none}"
}
lists map exported "the library does not export what the version script says"
lists exported baseline "the baseline is not up to date (make abi-baseline, commit abi/)"
lists exported symbols "$symbols is not up to date (make debian-symbols)"

if [ "$failed" != 0 ]; then
	exit 1
fi
if cmp -s "$base" "$tmp/cur.abi"; then
	same="identical to the baseline"
else
	same="compatible with the baseline"
fi
echo "check-abi: ok: $(wc -l <"$tmp/exported") exported symbols, soname $got, ABI $same"
