#!/bin/bash
# SPDX-License-Identifier: MIT
# dm-verity cases: the hash tree is built on the host by verity-tool (or, for
# the ref-* control cases, by veritysetup in userspace); the guest opens it
# with veritysetup, reads the whole mapped device and compares it with the
# data image, then flips one data byte and expects EIO at that block (or a
# FEC-corrected read).

# verity_case KEY=VALUE...
#   hash dbs hbs fmt   as for veritysetup (defaults sha256 4096 4096 1)
#   sb=0               --no-superblock (the guest passes every parameter)
#   salt=HEX|-|rand    salt (rand: random 32 bytes given explicitly)
#   layout=sep|append|hoff
#                      separate hash file / tree appended to the data image at
#                      hash offset = data size / separate file at offset 8192
#   size=BYTES         data image size; blocks=N: --data-blocks
#   fec=ROOTS          FEC in a separate file
#   uuid=UUID          --uuid (the kernel never sees it; the superblock must
#                      still be accepted by veritysetup open)
#   corrupt=BLOCK      data block to corrupt (default: a middle block)
#   builder=tool|ref   verity-tool build, or veritysetup format
verity_case() {
	local hash=sha256 dbs=4096 hbs=4096 fmt=1 sb=1 salt=rand layout=sep size=1048576
	local blocks="" fec="" uuid="" corrupt="" builder=tool kv
	for kv in "$@"; do
		case "$kv" in
		hash=* | dbs=* | hbs=* | fmt=* | sb=* | salt=* | layout=* | size=* | blocks=* | fec=* | uuid=* | corrupt=* | builder=*)
			local "${kv%%=*}=${kv#*=}"
			;;
		*) fail "harness: bad verity_case argument $kv" ;;
		esac
	done
	local -a cmd args
	if [ "$builder" = ref ]; then
		cmd=(veritysetup format)
	else
		[ "$VERITY_TOOL" = none ] && skip "VERITY_TOOL=none"
		[ -x "$VERITY_TOOL" ] || fail "host tool failed: $VERITY_TOOL not found (make tools)"
		cmd=("$VERITY_TOOL" build)
		if [ -n "$fec" ] && ! "$VERITY_TOOL" build --help 2>&1 | grep -q -- --fec-device; then
			skip "verity-tool build --help does not mention --fec-device"
		fi
	fi
	[ -n "$blocks" ] || blocks=$((size / dbs))
	[ "$corrupt" ] || corrupt=$((blocks / 2 + 1))
	[ "$corrupt" -ge "$blocks" ] && corrupt=$((blocks - 1))
	[ "$salt" = rand ] && salt=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')

	mkrand data.img "$size"
	args=(--hash "$hash" --data-block-size "$dbs" --hash-block-size "$hbs" --format "$fmt" --salt "$salt")
	[ "$sb" = 0 ] && args+=(--no-superblock)
	[ -n "$uuid" ] && args+=(--uuid "$uuid")
	[ "$blocks" != $((size / dbs)) ] && args+=(--data-blocks "$blocks")
	local hashf=hash.img hoff=""
	case "$layout" in
	sep) ;;
	append)
		hashf=data.img
		hoff=$size
		[ "$blocks" = $((size / dbs)) ] && args+=(--data-blocks "$blocks")
		;;
	hoff) hoff=8192 ;;
	*) fail "harness: bad layout $layout" ;;
	esac
	[ -n "$hoff" ] && args+=(--hash-offset "$hoff")
	[ -n "$fec" ] && args+=(--fec-device fec.img --fec-roots "$fec")
	tool "${cmd[@]}" "${args[@]}" --root-hash-file root.hex data.img "$hashf"

	# The printed root hash must be the one in --root-hash-file.
	local root printed
	root=$(cat root.hex)
	printed=$(sed -n 's/^Root hash:[[:space:]]*//p' "$TOOL_OUT" | tr -d '[:space:]')
	[ ${#root} -ge 40 ] || fail "--root-hash-file holds '${root:0:80}', not a root hash"
	[ "$printed" = "$root" ] || fail "printed root hash '$printed' differs from --root-hash-file '$root'"

	local open=""
	[ -n "$hoff" ] && open="--hash-offset $hoff"
	if [ "$sb" = 0 ]; then
		open="$open --no-superblock --hash $hash --data-block-size $dbs --hash-block-size $hbs --format $fmt --salt $salt --data-blocks $blocks"
	fi
	attach data.img
	[ "$hashf" != data.img ] && attach "$hashf"
	genv DATA data.img
	genv HASH "$hashf"
	if [ -n "$fec" ]; then
		attach fec.img
		genv FEC fec.img
		genv FEC_ROOTS "$fec"
	fi
	genv ROOT "$root"
	genv OPEN "$open"
	genv DBS "$dbs"
	genv NBLK "$blocks"
	genv SHA "$(head -c $((blocks * dbs)) data.img | sha_of)"
	genv CORRUPT "$corrupt"
	guest verity
}

# Control case: veritysetup-made tree, proves the VM plumbing and the guest
# checks independently of verity-tool.
kcase ref-verity-sha256 verity_case builder=ref
kcase ref-verity-sha1-512-nosb verity_case builder=ref hash=sha1 dbs=512 hbs=512 fmt=0 sb=0 size=524288

# Hash algorithm x block sizes x format x superblock (pairwise cover).
kcase verity-sha256-4k-f1-sb verity_case hash=sha256 dbs=4096 hbs=4096 fmt=1 sb=1
kcase verity-sha256-512-f0-nosb verity_case hash=sha256 dbs=512 hbs=512 fmt=0 sb=0 size=1048576
kcase verity-sha1-4k-f0-sb verity_case hash=sha1 dbs=4096 hbs=4096 fmt=0 sb=1
kcase verity-sha1-512-f1-nosb verity_case hash=sha1 dbs=512 hbs=4096 fmt=1 sb=0
kcase verity-sha512-4k-f1-nosb verity_case hash=sha512 dbs=4096 hbs=4096 fmt=1 sb=0 size=2097152
kcase verity-sha512-512-f0-sb verity_case hash=sha512 dbs=512 hbs=512 fmt=0 sb=1 size=524288
kcase verity-sha256-4k-512-f0-sb verity_case hash=sha256 dbs=4096 hbs=512 fmt=0 sb=1
kcase verity-sha1-512-4k-f1-sb verity_case hash=sha1 dbs=512 hbs=4096 fmt=1 sb=1 size=524288
# Salt variants, explicit uuid.
kcase verity-nosalt-nosb verity_case salt=- sb=0
kcase verity-nosalt-sb-f0 verity_case salt=- fmt=0 uuid=12345678-1234-1234-1234-123456789abc
kcase verity-longsalt verity_case salt=$(printf '%02x' $(seq 0 99) | tr -d '\n') hash=sha1
# Tree appended to the data image at hash offset = data size.
kcase verity-append-sb verity_case layout=append size=2097152
kcase verity-append-nosb-sha1-f0 verity_case layout=append sb=0 hash=sha1 fmt=0 dbs=512 hbs=512 size=524288
kcase verity-append-sha512-partial verity_case layout=append hash=sha512 size=1048576 blocks=200
# Separate hash file with the tree at an offset.
kcase verity-hashoffset-sb verity_case layout=hoff
kcase verity-hashoffset-nosb verity_case layout=hoff sb=0 hash=sha512
# Data-block counts: one block (0 levels), odd counts (partial hash blocks),
# a deep tree (512-byte hash blocks), a 16 MiB image.
kcase verity-1block verity_case blocks=1 corrupt=0
kcase verity-129blocks verity_case blocks=129 size=1048576 hash=sha1 fmt=0
kcase verity-deep-512 verity_case dbs=512 hbs=512 size=2097152 blocks=4095 corrupt=4094
kcase verity-16m verity_case size=16777216 corrupt=4000
# FEC (separate FEC file); the corrupted block must be corrected.
kcase verity-fec2 verity_case fec=2
kcase verity-fec8-sha1-nosb verity_case fec=8 hash=sha1 sb=0 size=2097152
kcase verity-fec24-512 verity_case fec=24 dbs=512 hbs=512 size=524288
