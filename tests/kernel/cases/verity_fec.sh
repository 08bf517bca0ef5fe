#!/bin/bash
# SPDX-License-Identifier: MIT
# dm-verity FEC beyond the separate-file cases of verity.sh: the parity in
# the hash file at --fec-offset, data + tree + parity in one image, and
# images that already have whole blocks (data and tree) destroyed when the
# kernel opens them.  On the host, `verity-tool verify --fec-device` must
# call the damage repairable (exit 0; plain verify exits 2) and `repair`
# on a copy must restore every byte.  In the guest (the script below,
# shipped with each case): veritysetup open with the FEC device, the whole
# device must read back the original data, then one more data byte is
# flipped and the read must still succeed, corrected by the kernel's FEC.

# Guest side.  Environment: DATA HASH FEC FEC_ROOTS ROOT OPEN DBS NBLK SHA
# CORRUPT as for guest/verity.sh, plus DAMAGED ("", data or tree: what the
# host destroyed).  With a destroyed tree block the kernel (6.1) still
# returns the right data, but its FEC recursion limit makes it report the
# block as corrupted while it rebuilds the erasure list (verity_hash_for_
# block inside the round of that very block), so the status may say C.
fec_guest_script() {
	cat >verity_fec.sh <<'GUEST'
d=$(dev "$DATA")
h=$(dev "$HASH")
f=$(dev "$FEC")
vopen() {
	# shellcheck disable=SC2086
	must veritysetup open $OPEN --fec-device "$f" --fec-roots "$FEC_ROOTS" "$d" kv "$h" "$ROOT"
}
vclose() { must veritysetup close kv; }

dmesg -c >/dev/null
vopen
sz=$(size_of /dev/mapper/kv)
[ "$sz" = $((NBLK * DBS)) ] || fail "mapped size $sz, expected $((NBLK * DBS))"
rd /dev/mapper/kv 65536 || fail "read of the verity device failed despite FEC: $RD_ERR"
[ "$RD_SHA" = "$SHA" ] || fail "verity device content differs from the original data (sha256 $RD_SHA, expected $SHA)"
st=$(dmsetup status kv)
case "$DAMAGED:$st" in
tree:*" C"* | *" V"*) ;;
*) fail "dmsetup status '$st' does not say V" ;;
esac
if [ -n "$DAMAGED" ]; then
	dm_logged 'verity-fec.*corrected' rd /dev/mapper/kv 65536 || fail "destroyed blocks read back but the kernel logged no FEC correction"
	note "destroyed $DAMAGED blocks read back corrected ($st)"
else
	note "clean read OK: $sz bytes, sha256 matches"
fi
vclose

flip_byte "$d" $((CORRUPT * DBS + 77 % DBS))
dmesg -c >/dev/null
vopen
rd /dev/mapper/kv 65536 || fail "read with one more corrupted data block failed despite FEC: $RD_ERR"
[ "$RD_SHA" = "$SHA" ] || fail "FEC-corrected content differs from the original data"
dm_logged 'verity-fec.*corrected' rd /dev/mapper/kv 65536 || fail "read succeeded but the kernel logged no FEC correction"
note "corrupted block $CORRUPT was corrected by FEC"
vclose
GUEST
	gfile verity_fec.sh
}

# fec_case KEY=VALUE...
#   roots=N            --fec-roots (default 8)
#   layout=sep|shared|append
#                      parity in fec.img / in hash.img after the tree /
#                      tree and parity appended to data.img
#   size=BYTES         data image size (default 2 MiB, 4 KiB blocks)
#   damage="dN tN ..." whole blocks overwritten with random bytes before
#                      anything is opened: data block N, tree block N
#                      (tN: hash-file block hash_start + N, t0 the top)
#   corrupt=N          data block the guest flips afterwards
fec_case() {
	local roots=8 layout=sep size=2097152 damage="" corrupt="" kv
	for kv in "$@"; do
		case "$kv" in
		roots=* | layout=* | size=* | damage=* | corrupt=*)
			local "${kv%%=*}=${kv#*=}"
			;;
		*) fail "harness: bad fec_case argument $kv" ;;
		esac
	done
	[ "$VERITY_TOOL" = none ] && skip "VERITY_TOOL=none"
	[ -x "$VERITY_TOOL" ] || fail "host tool failed: $VERITY_TOOL not found (make tools)"
	"$VERITY_TOOL" build --help 2>&1 | grep -q -- --fec-device ||
		skip "verity-tool build --help does not mention --fec-device"

	local bs=4096 blocks=$((size / 4096)) hoff=0 end
	[ -n "$corrupt" ] || corrupt=$((blocks / 2 + 1))
	mkrand data.img "$size"
	local salt
	salt=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
	local -a geo=(--salt "$salt") fec=(--fec-roots "$roots") sz=()
	local hashf=hash.img fecf=fec.img
	case "$layout" in
	sep) ;;
	shared | append)
		if [ "$layout" = append ]; then
			hashf=data.img
			hoff=$size
			geo+=(--hash-offset "$hoff" --data-blocks "$blocks")
			sz=(--hash-offset "$hoff" --data-blocks "$blocks")
		fi
		fecf=$hashf
		# the parity goes right after the tree
		end=$("$VERITY_TOOL" size --json --data-size "$size" "${sz[@]}" |
			sed -n 's/.*"hash_device_bytes": *\([0-9]*\).*/\1/p')
		[ -n "$end" ] || fail "host tool failed: verity-tool size --json gave no hash_device_bytes"
		fec+=(--fec-offset "$end")
		;;
	*) fail "harness: bad layout $layout" ;;
	esac
	fec+=(--fec-device "$fecf")
	tool "$VERITY_TOOL" build "${geo[@]}" "${fec[@]}" --root-hash-file root.hex data.img "$hashf"
	local root
	root=$(cat root.hex)
	[ ${#root} = 64 ] || fail "--root-hash-file holds '${root:0:80}', not a sha256 root hash"
	genv SHA "$(head -c $((blocks * bs)) data.img | sha_of)"
	cp data.img data.orig
	[ "$hashf" = data.img ] || cp "$hashf" hash.orig
	[ "$fecf" = fec.img ] && cp fec.img fec.orig

	# Destroy whole blocks; the tree starts one block after the superblock.
	local d blk f damaged=""
	for d in $damage; do
		case "$d" in
		d*) f=data.img blk=${d#d} damaged=${damaged:-data} ;;
		t*) f=$hashf blk=$((hoff / bs + 1 + ${d#t})) damaged=tree ;;
		*) fail "harness: bad damage $d" ;;
		esac
		head -c "$bs" /dev/urandom | dd of="$f" bs="$bs" seek="$blk" count=1 conv=notrunc status=none ||
			fail "harness: cannot damage block $blk of $f"
	done

	# Host: the damage is detected, called repairable, and repaired.
	local -a vopt=()
	[ "$hoff" != 0 ] && vopt+=(--hash-offset "$hoff")
	if [ -n "$damage" ]; then
		tool_rc 2 "$VERITY_TOOL" verify "${vopt[@]}" data.img "$hashf" "$root"
		tool "$VERITY_TOOL" verify "${vopt[@]}" "${fec[@]}" data.img "$hashf" "$root"
		grep -q 'repairable errors with FEC device' "${TOOL_OUT%.out}.err" ||
			fail "verify --fec-device said nothing about FEC corrections"
		# repair copies: r-data.img, r-hash.img, r-fec.img
		cp data.img r-data.img
		local rhash=r-data.img
		if [ "$hashf" != data.img ]; then
			cp "$hashf" r-hash.img
			rhash=r-hash.img
		fi
		[ "$fecf" = fec.img ] && cp fec.img r-fec.img
		tool "$VERITY_TOOL" repair "${vopt[@]}" "${fec[@]/%$fecf/r-$fecf}" r-data.img "$rhash" "$root"
		cmp -s r-data.img data.orig || fail "repair did not restore data.img byte for byte"
		if [ "$hashf" != data.img ]; then
			cmp -s r-hash.img hash.orig || fail "repair did not restore $hashf byte for byte"
		fi
		rm -f r-data.img r-hash.img r-fec.img
	fi

	local open=""
	[ "$hoff" != 0 ] && open="--hash-offset $hoff"
	[ "$fecf" != fec.img ] && open="$open --fec-offset $end"
	attach data.img
	[ "$hashf" != data.img ] && attach "$hashf"
	[ "$fecf" = fec.img ] && attach fec.img
	genv DATA data.img
	genv HASH "$hashf"
	genv FEC "$fecf"
	genv FEC_ROOTS "$roots"
	genv ROOT "$root"
	genv OPEN "$open"
	genv DBS "$bs"
	genv NBLK "$blocks"
	genv CORRUPT "$corrupt"
	genv DAMAGED "$damaged"
	fec_guest_script
	guest verity_fec
}

# Parity in the hash file, after the tree.
kcase verity-fec-shared fec_case layout=shared roots=4
# Data, tree and parity in one image.
kcase verity-fec-append fec_case layout=append roots=2 size=1048576 corrupt=100
# 2 MiB, 517 covered blocks, 3 rounds (block b is in round b mod 3):
# round 1 loses data blocks 10, 13 and 100 (3 of the 4 errors roots=8
# corrects without erasures), round 2 block 11; the guest's flip of block
# 200 lands in round 2 as well.
kcase verity-fec-damaged-data fec_case roots=8 damage="d10 d13 d100 d11" corrupt=200
# A level-0 tree block (covered block 514, round 1) and data in its round.
kcase verity-fec-damaged-tree fec_case roots=8 damage="d10 t2" corrupt=200
# The top hash block and six data blocks (two per round) destroyed.
kcase verity-fec-damaged-top-shared fec_case layout=shared roots=24 damage="d0 d1 d2 d3 d4 d5 t0" corrupt=300
