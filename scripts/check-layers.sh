#!/bin/sh
# SPDX-License-Identifier: MIT
# The library's layers (README, Layout): nothing in a lower layer includes
# a higher one, nor a subsystem of its own layer.
#
#   0  lib/common    (I/O, threads, walk, CPU detection, the dispatcher)
#   1  lib/hash
#   2  lib/fec lib/sign lib/integrity lib/fsverity
#   3  lib/verity    (its FEC stage uses lib/fec)
#      lib/crypt     (authenticated dm-crypt lays its tags out through
#                    lib/integrity's geometry and journal)
#
# A file under lib/X/ (arch/ included) may include "lib/X/..." and
# "lib/Y/..." of a lower layer; the public headers (include/dmt/) include
# nothing under lib/.  A subsystem missing from the table fails too, so a
# new one is given its layer here.  Prints every offending line; exit 1 if
# there is one.
#
# Usage: check-layers.sh [SRCDIR]        (default: .)
#        check-layers.sh --self-test     (the check must catch an upward
#                                         include, and pass a clean tree)
set -eu

layer() {
	case "$1" in
	common) echo 0 ;;
	hash) echo 1 ;;
	fec | sign | integrity | fsverity) echo 2 ;;
	verity | crypt) echo 3 ;;
	*) echo "" ;;
	esac
}

check() {
	src=$1
	bad=0
	for d in "$src"/lib/*/; do
		sub=${d%/}
		sub=${sub##*/}
		own=$(layer "$sub")
		if [ -z "$own" ]; then
			echo "check-layers: lib/$sub has no layer (scripts/check-layers.sh)"
			bad=1
			continue
		fi
		# every "lib/Y/ include of lib/X, as file:line:Y
		hits=$(cd "$src" && grep -rnoE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"lib/[A-Za-z0-9_]+/' \
			"lib/$sub" --include='*.c' --include='*.h' --include='*.S' |
			sed -E 's|^([^:]*:[0-9]+):.*"lib/([A-Za-z0-9_]+)/$|\1:\2|') || true
		for h in $hits; do
			to=${h##*:}
			at=${h%:*}
			[ "$to" = "$sub" ] && continue
			tl=$(layer "$to")
			if [ -z "$tl" ] || [ "$tl" -ge "$own" ]; then
				echo "check-layers: $at: lib/$sub (layer $own) includes lib/$to (layer ${tl:-none})"
				bad=1
			fi
		done
	done
	pub=$(cd "$src" && grep -rnE '#[[:space:]]*include[[:space:]]+"lib/' include 2>/dev/null) || true
	if [ -n "$pub" ]; then
		echo "$pub" | sed 's/^/check-layers: a public header includes lib\/: /'
		bad=1
	fi
	return $bad
}

self_test() {
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT INT TERM
	mkdir -p "$tmp/lib/common" "$tmp/lib/hash" "$tmp/lib/fec/arch" \
		"$tmp/include/dmt"
	printf '#include "lib/common/a.h"\n' >"$tmp/lib/hash/h.c"
	printf '#include "lib/hash/h.h"\n#include "lib/fec/f.h"\n' \
		>"$tmp/lib/fec/arch/x.c"
	: >"$tmp/lib/common/a.h"
	check "$tmp" >/dev/null || {
		echo "check-layers: self-test: a clean tree fails"
		return 1
	}
	for bad in 'lib/common/c.c:lib/hash/h.h' 'lib/hash/d.c:lib/fec/f.h' \
		'lib/fec/arch/y.c:lib/crypt/aes.h' 'include/dmt/p.h:lib/common/a.h'; do
		f=${bad%%:*}
		printf '#include "%s"\n' "${bad#*:}" >"$tmp/$f"
		if check "$tmp" >/dev/null; then
			echo "check-layers: self-test: $f including ${bad#*:} passes"
			return 1
		fi
		rm -f "$tmp/$f"
	done
	mkdir -p "$tmp/lib/newsub"
	if check "$tmp" >/dev/null; then
		echo "check-layers: self-test: a subsystem without a layer passes"
		return 1
	fi
	echo "check-layers: self-test passed"
}

if [ "${1:-}" = --self-test ]; then
	self_test
else
	check "${1:-.}" && echo "check-layers: no upward include"
fi
