#!/bin/bash
# SPDX-License-Identifier: MIT
# Host-side helpers for defining kernel conformance cases (sourced by run.sh).
#
# A case is a chain of steps that share one directory ($CD = $KW/c/NAME):
#   host prep  ->  [guest stage in boot b  ->  host hook]*  ->  verdict
# Registration (in cases/*.sh):
#   kcase NAME FUNC ARGS...           FUNC ARGS runs before the first boot
#   kcase_after PARENT NAME FUNC ...  runs once PARENT called `ready`
#                                     (SKIP if PARENT ended without it)
# Inside FUNC or a hook (a subshell whose cwd is $CD):
#   fail MSG / skip MSG               end the case now
#   tool CMD...                       run a project tool; on failure the case
#                                     fails with "host tool failed: <stderr>"
#   tool_rc WANT CMD...               same, but the exit status must be WANT
#   mkrand FILE BYTES                 random file
#   attach FILE                       attach FILE (in $CD) to the next boot
#   gfile FILE                        copy FILE (in $CD) into the guest job
#   genv KEY VALUE                    environment for the guest script
#   guest SCRIPT                      run guest/SCRIPT.sh in the next boot
#   hook FUNC ARGS...                 host step after that guest stage passes
#   ready                             artifacts are there for kcase_after cases
# A step that ends without `guest` and without failing makes the case PASS.
set -u

declare -a KT_NAMES=()
declare -A KT_PREP=() KT_DEP=()

kcase() {
	local name=$1
	shift
	KT_NAMES+=("$name")
	KT_PREP[$name]=$(printf '%q ' "$@")
}
kcase_after() {
	local parent=$1 name=$2
	shift 2
	kcase "$name" "$@"
	KT_DEP[$name]=$parent
}

# ---- inside a case --------------------------------------------------------
kt_state() { cat "$KW/c/$1/state" 2>/dev/null; }
fail() {
	[ -e "$CD/state" ] || echo "FAIL $*" >"$CD/state"
	echo "FAIL: $*"
	exit 1
}
skip() {
	[ -e "$CD/state" ] || echo "SKIP $*" >"$CD/state"
	echo "SKIP: $*"
	exit 0
}
ready() { touch "$CD/ready"; }

KT_TOOLN=0
# tool_rc WANT CMD...: run a project tool with its output kept in the case
# directory; an unexpected exit status fails the case.
tool_rc() {
	local want=$1 rc first
	shift
	KT_TOOLN=$((KT_TOOLN + 1))
	local base="$CD/tool.$KT_TOOLN.$(basename "$1")"
	echo "+ $*" >"$base.cmd"
	echo "+ $*"
	if [ ! -x "$1" ] && ! command -v "$1" >/dev/null 2>&1; then
		fail "host tool failed: $1 not found (build it with make tools)"
	fi
	timeout -k 5 "${KT_TOOL_TIMEOUT:-300}" "$@" >"$base.out" 2>"$base.err" </dev/null
	rc=$?
	TOOL_OUT=$base.out
	cat "$base.out" "$base.err" | head -n 40
	[ "$rc" = "$want" ] && return 0
	first=$(grep -v '^[[:space:]]*$' "$base.err" | head -n 1)
	[ -n "$first" ] || first="exit status $rc"
	[ "$rc" = 124 ] && first="timed out after ${KT_TOOL_TIMEOUT:-300} s"
	if [ "$want" != 0 ] && { [ "$rc" = 0 ] || [ "$rc" = 2 ] || [ "$rc" = 1 ]; }; then
		fail "$(basename "$1") $2 exited $rc, expected $want${first:+ ($first)}"
	fi
	fail "host tool failed: $(basename "$1") $2: $first"
}
tool() { tool_rc 0 "$@"; }

mkrand() { head -c "$2" /dev/urandom >"$CD/$1"; }
sha_of() { sha256sum "$@" | cut -d' ' -f1; }
# Bytes of FILE from OFFSET, LENGTH long, padded with zeros to LENGTH.
sha_range() { # FILE OFFSET LENGTH
	{
		tail -c +"$(($2 + 1))" "$1" | head -c "$3"
		local have
		have=$(($(stat -c %s "$1") - $2))
		[ "$have" -lt 0 ] && have=0
		[ "$have" -lt "$3" ] && head -c $(($3 - have)) /dev/zero
	} | sha256sum | cut -d' ' -f1
}

attach() { echo "$1" >>"$CD/next/disks"; }
gfile() { echo "$1" >>"$CD/next/files"; }
genv() { printf "%s='%s'\n" "$1" "${2//\'/\'\\\'\'}" >>"$CD/next/env"; }
guest() { echo "$1" >"$CD/next/script"; }
hook() { printf '%q ' "$@" >"$CD/next/hook"; }

# Flip one byte (xor 0xff) of FILE at OFFSET.
flip_host() { # FILE OFFSET
	local v
	v=$(od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' ')
	[ -n "$v" ] || fail "harness: offset $2 is past the end of $1"
	printf "\\$(printf %o $((v ^ 255)))" | dd of="$1" bs=1 seek="$2" count=1 conv=notrunc status=none
}

# ---- dm-integrity geometry from a superblock (formats.md section 2) -------
# igeom META: sets G_T G_JS G_FLAGS G_LSPB G_LIL G_PROV G_INIT G_MR
igeom() {
	local f=$1 magic es space eps se ss pad
	magic=$(head -c 8 "$f" | tr -d '\0')
	[ "$magic" = integrt ] || fail "no dm-integrity superblock on $(basename "$f")"
	G_LIL=$(od -An -tu1 -j 9 -N 1 "$f" | tr -d ' ')
	G_T=$(od -An -tu2 -j 10 -N 2 "$f" | tr -d ' ')
	G_JS=$(od -An -tu4 -j 12 -N 4 "$f" | tr -d ' ')
	G_PROV=$(od -An -tu8 -j 16 -N 8 "$f" | tr -d ' ')
	G_FLAGS=$(od -An -tu4 -j 24 -N 4 "$f" | tr -d ' ')
	G_LSPB=$(od -An -tu1 -j 28 -N 1 "$f" | tr -d ' ')
	local spb=$((1 << G_LSPB))
	es=$(((8 + 8 * spb + G_T + 7) / 8 * 8))
	space=504
	[ $((G_FLAGS & 1)) = 1 ] && space=496
	eps=$((space / es))
	se=$((eps * 8))
	ss=$((se * spb + 8))
	G_INIT=$((8 + G_JS * ss))
	if [ $((G_FLAGS & 8)) = 8 ]; then pad=4096; else pad=131072; fi
	G_MR=0
	if [ "$G_LIL" != 0 ]; then
		G_MR=$(((G_T * (1 << (G_LIL - G_LSPB)) + pad - 1) / pad * pad / 512))
	fi
}
# Byte offset of logical sector S in the data file (interleaved: the image).
idata_off() {
	if [ "$G_LIL" = 0 ]; then
		echo $(($1 * 512))
		return
	fi
	local area=$(($1 >> G_LIL)) off=$(($1 & ((1 << G_LIL) - 1)))
	echo $(((G_INIT + area * (1 << G_LIL) + (area + 1) * G_MR + off) * 512))
}
# Byte offset of the tag of the block starting at logical sector S.
itag_off() {
	if [ "$G_LIL" = 0 ]; then
		echo $((G_INIT * 512 + ($1 >> G_LSPB) * G_T))
		return
	fi
	local area=$(($1 >> G_LIL)) off=$(($1 & ((1 << G_LIL) - 1)))
	echo $(((G_INIT + area * ((1 << G_LIL) + G_MR)) * 512 + (off >> G_LSPB) * G_T))
}
