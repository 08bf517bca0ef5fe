#!/bin/bash
# SPDX-License-Identifier: MIT
# dm-integrity cases.
#  integ-*      forward: integrity-tool format (optionally --data-from) on the
#               host; the guest opens the image (integritysetup open, or
#               dmsetup create for legacy superblocks), reads every sector,
#               compares with the payload, checks the mismatch count, writes
#               through the device and reads it back after a reopen.
#  *.corrupt    a copy with one data byte and one tag byte flipped:
#               integrity-tool check must exit 2 and the kernel must fail
#               exactly those blocks.
#  *.recalc     integrity-tool recalculate after changing data behind the
#               tags' back: the kernel must then read it cleanly.
#  rev-*        reverse: the guest runs integritysetup format (with wipe) and
#               writes through dm-integrity; integrity-tool check on the
#               result must exit 0 (2 on a corrupted copy).
#  ref-integ-*  control cases without project tools: guest-formatted images
#               corrupted on the host; prove the harness and its geometry.

# Kernel crypto name and default tag size of an integritysetup algorithm name.
ialg_kernel() {
	case "$1" in
	hmac-*) echo "hmac(${1#hmac-})" ;;
	*) echo "$1" ;;
	esac
}
ialg_tag() {
	case "$1" in
	crc32 | crc32c) echo 4 ;;
	xxhash64) echo 8 ;;
	sha1 | hmac-sha1) echo 20 ;;
	sha256 | hmac-sha256) echo 32 ;;
	sha512 | hmac-sha512) echo 64 ;;
	*) echo 4 ;;
	esac
}

# Parse KEY=VALUE arguments of the integrity cases into I_* variables.
#   alg tag ss size      algorithm, tag size, sector size, image size (2 MiB)
#   key=N                hmac key of N bytes (random, in key.bin)
#   ddev=1               separate data device (--data-device); IMG is then metadata
#   mode=J|B             open in journal or bitmap mode
#   jsize=B il=N         --journal-size, --interleave-sectors
#   lpad=1 lhmac=1       --integrity-legacy-padding / --integrity-legacy-hmac
#                        (opened with dmsetup and a table without fix_*)
#   from=1               a random payload of a quarter of the device: --data-from, or
#                        with ddev=1 written into the data device before format
#                        (the tool refuses --data-from there), which then uses
#                        --no-wipe + integrity-tool recalculate
#   nowipe=1             --no-wipe, payload written raw into the data area
#                        behind the tags' back, then integrity-tool recalculate
#   builder=tool|guest   integrity-tool format, or integritysetup format in the guest
#   devsize=SIZE|auto    --device-size: the tool creates the image file itself
#   jcrypt=CIPHER        --journal-crypt CIPHER with a random key of jckey=N
#                        bytes (default 32) in jc.bin
#   jmac=ALG             --journal-integrity ALG with a random key of jmkey=N
#                        bytes (default 32) in jm.bin
iparse() {
	I_ALG=crc32c I_TAG="" I_SS=512 I_SIZE=2097152 I_KEY="" I_DDEV="" I_MODE=J
	I_JSIZE="" I_IL="" I_LPAD="" I_LHMAC="" I_FROM="" I_NOWIPE="" I_BUILDER=tool I_DEVSIZE=""
	I_JCRYPT="" I_JCKEY=32 I_JMAC="" I_JMKEY=32
	local kv
	for kv in "$@"; do
		case "$kv" in
		alg=*) I_ALG=${kv#*=} ;;
		tag=*) I_TAG=${kv#*=} ;;
		ss=*) I_SS=${kv#*=} ;;
		size=*) I_SIZE=${kv#*=} ;;
		key=*) I_KEY=${kv#*=} ;;
		ddev=*) I_DDEV=${kv#*=} ;;
		mode=*) I_MODE=${kv#*=} ;;
		jsize=*) I_JSIZE=${kv#*=} ;;
		il=*) I_IL=${kv#*=} ;;
		lpad=*) I_LPAD=${kv#*=} ;;
		lhmac=*) I_LHMAC=${kv#*=} ;;
		from=*) I_FROM=${kv#*=} ;;
		nowipe=*) I_NOWIPE=${kv#*=} ;;
		builder=*) I_BUILDER=${kv#*=} ;;
		devsize=*) I_DEVSIZE=${kv#*=} ;;
		jcrypt=*) I_JCRYPT=${kv#*=} ;;
		jckey=*) I_JCKEY=${kv#*=} ;;
		jmac=*) I_JMAC=${kv#*=} ;;
		jmkey=*) I_JMKEY=${kv#*=} ;;
		*) fail "harness: bad integrity argument $kv" ;;
		esac
	done
	I_TAGEFF=${I_TAG:-$(ialg_tag "$I_ALG")}
	# I_ALGOPTS: what is not on disk (algorithm, key), for check and
	# recalculate, and integritysetup open; I_FMTOPTS adds the tag and sector
	# sizes (format).
	I_ALGOPTS=(--integrity "$I_ALG")
	if [ -n "$I_KEY" ]; then
		[ -e key.bin ] || head -c "$I_KEY" /dev/urandom >key.bin
		I_ALGOPTS+=(--integrity-key-file key.bin --integrity-key-size "$I_KEY")
	fi
	if [ -n "$I_JCRYPT" ]; then
		[ -e jc.bin ] || head -c "$I_JCKEY" /dev/urandom >jc.bin
		I_ALGOPTS+=(--journal-crypt "$I_JCRYPT" --journal-crypt-key-file jc.bin
			--journal-crypt-key-size "$I_JCKEY")
	fi
	if [ -n "$I_JMAC" ]; then
		[ -e jm.bin ] || head -c "$I_JMKEY" /dev/urandom >jm.bin
		I_ALGOPTS+=(--journal-integrity "$I_JMAC" --journal-integrity-key-file jm.bin
			--journal-integrity-key-size "$I_JMKEY")
	fi
	I_OPENOPTS=("${I_ALGOPTS[@]}") # integritysetup 2.6.1 open takes no --tag-size
	I_FMTOPTS=("${I_ALGOPTS[@]}")
	[ -n "$I_TAG" ] && I_FMTOPTS+=(--tag-size "$I_TAG")
	[ "$I_SS" != 512 ] && I_FMTOPTS+=(--sector-size "$I_SS")
	I_DDOPTS=()
	[ -n "$I_DDEV" ] && I_DDOPTS=(--data-device data.img)
	return 0
}

# Payload size for from=1: a quarter of the image plus a bit, so that it fits
# the provided size even with 32-byte tags on 512-byte sectors (whose first
# tag run takes 1 MiB).
ipayload_size() { echo $((I_SIZE / 4 + 4096)); }

# Create the empty image files (IMG = metadata device with ddev=1).
icreate() {
	rm -f img.bin data.img
	if [ -n "$I_DDEV" ]; then
		truncate -s "$I_SIZE" data.img
		truncate -s 2M img.bin
	elif [ -z "$I_DEVSIZE" ]; then
		truncate -s "$I_SIZE" img.bin
	fi
}

# Guest environment for opening the image (integritysetup or a legacy table).
iguest_open_env() {
	local open="${I_OPENOPTS[*]}"
	[ "$I_MODE" = B ] && open="$open --integrity-bitmap-mode"
	genv IMG img.bin
	[ -n "$I_DDEV" ] && genv DDEV data.img
	attach img.bin
	[ -n "$I_DDEV" ] && attach data.img
	[ -n "$I_KEY" ] && gfile key.bin
	[ -n "$I_JCRYPT" ] && gfile jc.bin
	[ -n "$I_JMAC" ] && gfile jm.bin
	genv BS "$I_SS"
	if [ -n "$I_LPAD$I_LHMAC" ]; then
		local -a o=()
		[ -n "$I_DDEV" ] && o+=("meta_device:@META@")
		[ "$I_SS" != 512 ] && o+=("block_size:$I_SS")
		[ -n "$I_IL" ] && o+=("interleave_sectors:$I_IL")
		[ -n "$I_JSIZE" ] && o+=("journal_sectors:$((I_JSIZE / 512))")
		local ih="internal_hash:$(ialg_kernel "$I_ALG")"
		[ -n "$I_KEY" ] && ih="$ih:$(od -An -tx1 key.bin | tr -d ' \n')"
		o+=("$ih")
		[ -z "$I_LPAD" ] && [ -z "$I_DDEV" ] && o+=(fix_padding)
		[ -z "$I_LHMAC" ] && o+=(fix_hmac)
		genv TABLE "0 @LEN@ integrity @DEV@ 0 $I_TAGEFF $I_MODE ${#o[@]} ${o[*]}"
	else
		genv OPEN "$open"
	fi
	return 0
}

# ---- forward: integrity-tool format -> kernel ---------------------------------
integ_case() {
	iparse "$@"
	[ "$INTEGRITY_TOOL" = none ] && skip "INTEGRITY_TOOL=none"
	icreate
	local -a args=("${I_FMTOPTS[@]}" "${I_DDOPTS[@]}")
	[ -n "$I_JSIZE" ] && args+=(--journal-size "$I_JSIZE")
	[ -n "$I_IL" ] && args+=(--interleave-sectors "$I_IL")
	[ "$I_MODE" = B ] && args+=(--integrity-bitmap-mode)
	[ -n "$I_LPAD" ] && args+=(--integrity-legacy-padding)
	[ -n "$I_LHMAC" ] && args+=(--integrity-legacy-hmac)
	[ -n "$I_DEVSIZE" ] && args+=(--device-size "$I_DEVSIZE")
	local recalc=""
	if [ -n "$I_FROM" ]; then
		mkrand payload.bin "$(ipayload_size)"
	fi
	if [ -n "$I_FROM" ] && [ -n "$I_DDEV" ]; then
		dd if=payload.bin of=data.img conv=notrunc status=none
		args+=(--no-wipe)
		recalc=1
	elif [ -n "$I_NOWIPE" ]; then
		args+=(--no-wipe)
		recalc=1
	elif [ -n "$I_FROM" ]; then
		args+=(--data-from payload.bin)
	fi
	tool "$INTEGRITY_TOOL" format "${args[@]}" img.bin
	if [ -n "$I_NOWIPE" ] && [ -z "$I_DDEV" ] && [ -n "$I_FROM" ]; then
		# Payload into the data area directly (area 0 is contiguous).
		igeom img.bin
		[ "$(ipayload_size)" -le $(((1 << G_LIL) * 512)) ] || fail "harness: payload larger than area 0"
		[ "$(ipayload_size)" -le $((G_PROV * 512)) ] || fail "harness: payload larger than provided_data_sectors"
		dd if=payload.bin of=img.bin bs=512 seek=$(($(idata_off 0) / 512)) conv=notrunc status=none
	fi
	[ -n "$recalc" ] && tool "$INTEGRITY_TOOL" recalculate "${I_ALGOPTS[@]}" "${I_DDOPTS[@]}" img.bin
	igeom img.bin
	case "$I_DEVSIZE" in
	*M)
		local want=$((${I_DEVSIZE%M} * 1048576))
		[ "$(stat -c %s img.bin)" = "$want" ] || fail "--device-size $I_DEVSIZE made a file of $(stat -c %s img.bin) bytes"
		;;
	auto)
		[ $((G_PROV * 512)) -ge "$(stat -c %s payload.bin)" ] ||
			fail "--device-size auto: provided_data_sectors $G_PROV do not hold the $(stat -c %s payload.bin)-byte payload"
		;;
	esac
	cp img.bin img.orig
	[ -n "$I_DDEV" ] && cp data.img data.orig
	ready
	local prov=$((G_PROV * 512))
	if [ -n "$I_FROM" ]; then
		genv EXPSHA "$(sha_range payload.bin 0 $prov)"
	else
		genv EXPSHA "$(head -c $prov /dev/zero | sha_of)"
	fi
	genv PROVIDED "$prov"
	genv WRITE 1
	iguest_open_env
	guest integrity
}

# Corrupted copy of the parent's fresh image: one data byte of block A, one
# tag byte of block B. integrity-tool check: 0 before, 2 after; kernel: blocks
# A and B fail, block C reads.
integ_corrupt() { # PARENT ARGS...
	local parent=$1
	shift
	cp "$KW/c/$parent/img.orig" img.bin
	[ -e "$KW/c/$parent/data.orig" ] && cp "$KW/c/$parent/data.orig" data.img
	[ -e "$KW/c/$parent/key.bin" ] && cp "$KW/c/$parent/key.bin" key.bin
	[ -e "$KW/c/$parent/jc.bin" ] && cp "$KW/c/$parent/jc.bin" jc.bin
	[ -e "$KW/c/$parent/jm.bin" ] && cp "$KW/c/$parent/jm.bin" jm.bin
	iparse "$@"
	integ_flip_and_check
}
integ_flip_and_check() {
	igeom img.bin
	local spb=$((I_SS / 512)) nblk=$((G_PROV * 512 / I_SS))
	local a=$((nblk / 3)) b=$((nblk * 2 / 3)) c=$((nblk / 2))
	if [ "$I_BUILDER" != guest ]; then
		tool_rc 0 "$INTEGRITY_TOOL" check "${I_ALGOPTS[@]}" "${I_DDOPTS[@]}" img.bin
	fi
	local dfile=img.bin
	[ -n "$I_DDEV" ] && dfile=data.img
	flip_host "$dfile" $(($(idata_off $((a * spb))) + 100))
	flip_host img.bin "$(itag_off $((b * spb)))"
	if [ "$I_BUILDER" != guest ]; then
		tool_rc 2 "$INTEGRITY_TOOL" check "${I_ALGOPTS[@]}" "${I_DDOPTS[@]}" img.bin
	fi
	genv BAD "$a $b"
	genv GOOD "$c 0 $((nblk - 1))"
	iguest_open_env
	guest integrity
}

# ---- reverse: kernel (integritysetup format in the guest) -> integrity-tool ----
rev_case() {
	iparse "$@"
	icreate
	if [ -n "$I_LPAD$I_LHMAC" ]; then
		# integritysetup 2.6.1 ignores --integrity-legacy-padding: let the
		# kernel format through a table without fix_padding / fix_hmac.
		genv FORMAT kernel
	else
		local fmt="${I_FMTOPTS[*]}"
		[ -n "$I_JSIZE" ] && fmt="$fmt --journal-size $I_JSIZE"
		[ -n "$I_IL" ] && fmt="$fmt --interleave-sectors $I_IL"
		genv FORMAT "$fmt"
	fi
	if [ -n "$I_FROM" ]; then
		mkrand payload.bin "$(ipayload_size)"
		gfile payload.bin
		genv PAYLOAD payload.bin
	else
		genv WRITE 1
	fi
	iguest_open_env
	guest integrity
	hook rev_after "$@"
}
rev_after() {
	iparse "$@"
	if [ "$I_BUILDER" != guest ]; then
		[ "$INTEGRITY_TOOL" = none ] && skip "INTEGRITY_TOOL=none (the guest side passed)"
		tool_rc 0 "$INTEGRITY_TOOL" check "${I_ALGOPTS[@]}" "${I_DDOPTS[@]}" img.bin
	fi
	ready
}
# Corrupted copy of the guest-written image.
rev_corrupt() { # PARENT ARGS...
	local parent=$1
	shift
	cp "$KW/c/$parent/img.bin" img.bin
	[ -e "$KW/c/$parent/data.img" ] && cp "$KW/c/$parent/data.img" data.img
	[ -e "$KW/c/$parent/key.bin" ] && cp "$KW/c/$parent/key.bin" key.bin
	[ -e "$KW/c/$parent/jc.bin" ] && cp "$KW/c/$parent/jc.bin" jc.bin
	[ -e "$KW/c/$parent/jm.bin" ] && cp "$KW/c/$parent/jm.bin" jm.bin
	iparse "$@"
	if [ "$I_BUILDER" != guest ] && [ "$INTEGRITY_TOOL" = none ]; then
		skip "INTEGRITY_TOOL=none"
	fi
	integ_flip_and_check
}

# Forward-style check (payload, size, write/reopen) of PARENT's guest-made
# image: proves the forward path of the harness without integrity-tool.
rev_fwd() { # PARENT ARGS...
	local parent=$1
	shift
	local f
	for f in img.bin data.img key.bin jc.bin jm.bin payload.bin; do
		[ -e "$KW/c/$parent/$f" ] && cp "$KW/c/$parent/$f" "$f"
	done
	iparse "$@"
	igeom img.bin
	genv EXPSHA "$(sha_range payload.bin 0 $((G_PROV * 512)))"
	genv PROVIDED $((G_PROV * 512))
	genv WRITE 1
	iguest_open_env
	guest integrity
}

# ---- recalculate: change data behind the tags, integrity-tool recalculate --------
# PARENT's image (tool-made or guest-written); 64 KiB of new random data go
# straight into the data area at logical byte 1 MiB - 64 KiB (or lower on
# small images).
recalc_case() { # PARENT IMGFILE DATAFILE ARGS...
	local parent=$1 imgf=$2 dataf=$3
	shift 3
	cp "$KW/c/$parent/$imgf" img.bin
	[ -n "$dataf" ] && cp "$KW/c/$parent/$dataf" data.img
	[ -e "$KW/c/$parent/key.bin" ] && cp "$KW/c/$parent/key.bin" key.bin
	[ -e "$KW/c/$parent/jc.bin" ] && cp "$KW/c/$parent/jc.bin" jc.bin
	[ -e "$KW/c/$parent/jm.bin" ] && cp "$KW/c/$parent/jm.bin" jm.bin
	iparse "$@"
	[ "$INTEGRITY_TOOL" = none ] && skip "INTEGRITY_TOOL=none"
	igeom img.bin
	# 128 sectors inside the provided area (and inside one interleave area).
	local s=$((2048 - 128)) dfile=img.bin
	[ $((s + 128)) -le "$G_PROV" ] || s=$(((G_PROV - 128) / 128 * 128))
	[ "$s" -ge 0 ] || fail "harness: image too small for the recalculate case"
	[ -n "$I_DDEV" ] && dfile=data.img
	mkrand new.bin 65536
	dd if=new.bin of="$dfile" bs=512 seek=$(($(idata_off $s) / 512)) conv=notrunc status=none
	tool_rc 2 "$INTEGRITY_TOOL" check "${I_ALGOPTS[@]}" "${I_DDOPTS[@]}" img.bin
	tool "$INTEGRITY_TOOL" recalculate "${I_ALGOPTS[@]}" "${I_DDOPTS[@]}" img.bin
	tool_rc 0 "$INTEGRITY_TOOL" check "${I_ALGOPTS[@]}" "${I_DDOPTS[@]}" img.bin
	genv REGION "$((s * 512)) 65536 $(sha_of new.bin)"
	genv PROVIDED "$((G_PROV * 512))"
	iguest_open_env
	guest integrity
}

# integ NAME ARGS...: a forward case; with `+corrupt` / `+recalc` in ARGS also
# the derived cases NAME.corrupt / NAME.recalc.
integ() {
	local name=$1 a
	shift
	local -a args=() extra=()
	for a in "$@"; do
		case "$a" in
		+*) extra+=("${a#+}") ;;
		*) args+=("$a") ;;
		esac
	done
	kcase "$name" integ_case "${args[@]}"
	for a in "${extra[@]}"; do
		case "$a" in
		corrupt) kcase_after "$name" "$name.corrupt" integ_corrupt "$name" "${args[@]}" ;;
		recalc) kcase_after "$name" "$name.recalc" recalc_case "$name" img.orig "$([ -n "$(printf '%s\n' "${args[@]}" | grep '^ddev=')" ] && echo data.orig)" "${args[@]}" ;;
		esac
	done
}
rev() {
	local name=$1 a
	shift
	local -a args=() extra=()
	for a in "$@"; do
		case "$a" in
		+*) extra+=("${a#+}") ;;
		*) args+=("$a") ;;
		esac
	done
	kcase "$name" rev_case "${args[@]}"
	for a in "${extra[@]}"; do
		case "$a" in
		corrupt) kcase_after "$name" "$name.corrupt" rev_corrupt "$name" "${args[@]}" ;;
		fwd) kcase_after "$name" "$name.fwd" rev_fwd "$name" "${args[@]}" ;;
		recalc) kcase_after "$name" "$name.recalc" recalc_case "$name" img.bin "$([ -n "$(printf '%s\n' "${args[@]}" | grep '^ddev=')" ] && echo data.img)" "${args[@]}" ;;
		esac
	done
}

# Controls: no project tool involved.
rev ref-integ-crc32c-512 builder=guest +corrupt
rev ref-integ-sha256-4096-ddev builder=guest alg=sha256 ss=4096 ddev=1 +corrupt
rev ref-integ-hmac-il1024 builder=guest alg=hmac-sha256 key=32 il=1024 mode=B +corrupt
rev ref-integ-legacy-crc32c-il1024 builder=guest lpad=1 lhmac=1 il=1024 from=1 +fwd +corrupt
rev ref-integ-legacyhmac-sha256-ddev builder=guest lhmac=1 alg=hmac-sha256 key=32 ss=4096 ddev=1 from=1 mode=B +fwd

# Forward, pairwise over algorithm x sector size x tag size x layout x mode.
integ integ-crc32c-512-J +corrupt
integ integ-crc32c-4096-B-from alg=crc32c ss=4096 mode=B from=1 +recalc
integ integ-crc32-512-tag8-J-from alg=crc32 tag=8 from=1 +corrupt
integ integ-crc32-1024-B-ddev alg=crc32 ss=1024 mode=B ddev=1
integ integ-sha1-512-tag4-B-from alg=sha1 tag=4 mode=B from=1
integ integ-sha1-2048-tag32-J-ddev-from alg=sha1 ss=2048 tag=32 ddev=1 from=1 +corrupt
integ integ-sha256-4096-J-from alg=sha256 ss=4096 from=1 +corrupt
integ integ-sha256-512-tag16-B-il1024 alg=sha256 tag=16 mode=B il=1024
integ integ-hmac-sha256-512-J-from alg=hmac-sha256 key=32 from=1 +corrupt +recalc
integ integ-hmac-sha256-4096-B-ddev alg=hmac-sha256 key=16 ss=4096 mode=B ddev=1
integ integ-xxhash64-512-J-ddev-from alg=xxhash64 ddev=1 from=1 +corrupt
integ integ-xxhash64-2048-tag4-B alg=xxhash64 ss=2048 tag=4 mode=B
integ integ-xxhash64-1024-tag16-J-from alg=xxhash64 ss=1024 tag=16 from=1
integ integ-sha512-4096-B alg=sha512 ss=4096 mode=B
integ integ-crc32c-jsize64k-il128-J-from jsize=65536 il=128 from=1
integ integ-crc32c-16m-J-from size=16777216 from=1
# Legacy superblocks (no fix_padding / fix_hmac): opened with dmsetup.
integ integ-legacy-crc32c-il1024-J-from lpad=1 lhmac=1 il=1024 from=1 +corrupt
integ integ-legacy-sha256-4096-B lpad=1 lhmac=1 alg=sha256 ss=4096 mode=B
integ integ-legacy-hmac-sha256-ddev-J lhmac=1 alg=hmac-sha256 key=32 ddev=1 from=1
integ integ-legacypad-crc32-il2048-B lpad=1 alg=crc32 il=2048 mode=B from=1
# --no-wipe + recalculate.
integ integ-nowipe-recalc-sha256-from alg=sha256 nowipe=1 from=1
integ integ-nowipe-recalc-crc32c-ddev ddev=1 nowipe=1 from=1
# --device-size: the tool creates the file (a size, or just fitting the payload).
integ integ-devsize-3m-sha1 alg=sha1 devsize=3M
integ integ-devsize-auto-from devsize=auto from=1 size=4194304

# Journal encryption (journal_crypt): the stream ciphers (keystream over the
# whole journal, commit ids derived from it) and a block cipher (IV per
# section), both directions.
integ integ-jcrypt-ctr-aes-J-from jcrypt=ctr-aes jsize=1048576 size=8388608 from=1 +corrupt
integ integ-jcrypt-cbc-aes16-sha256-4096-J-from jcrypt=cbc-aes jsize=1048576 jckey=16 alg=sha256 ss=4096 size=8388608 from=1 +corrupt
integ integ-jcrypt-chacha20-hmac-J jcrypt=chacha20 jsize=1048576 alg=hmac-sha256 key=32 size=8388608
rev rev-jcrypt-ctr-aes24-J jcrypt=ctr-aes jsize=1048576 jckey=24 size=8388608 +corrupt +recalc
rev rev-jcrypt-cbc-aes-sha1-1024-J jcrypt=cbc-aes jsize=1048576 alg=sha1 ss=1024 size=8388608 +corrupt
rev rev-jcrypt-chacha20-xxhash64-J jcrypt=chacha20 jsize=1048576 alg=xxhash64 size=8388608
# Journal MACs (journal_mac, and the superblock MAC that comes with
# fix_hmac), alone and under journal encryption (MAC over the plaintext).
# The kernel checks the superblock MAC when it opens a device (a wrong one
# fails the forward cases) but a section MAC only when it replays that
# section, so the section MACs are proven by the reverse cases: check
# recomputes the MACs the kernel wrote (one wrong bit fails them).
integ integ-jmac-hmac-sha256-J-from jmac=hmac-sha256 jsize=1048576 size=8388608 from=1
integ integ-jmac-hmac-sha512-jcrypt-ctr-aes-J jmac=hmac-sha512 jmkey=64 jcrypt=ctr-aes jsize=1048576 size=8388608
rev rev-jmac-hmac-sha256-J jmac=hmac-sha256 jsize=1048576 size=8388608 +corrupt
rev rev-jmac-hmac-sha1-jcrypt-cbc-aes-J jmac=hmac-sha1 jmkey=20 jcrypt=cbc-aes jsize=1048576 size=8388608

# Reverse: kernel-written images checked by integrity-tool.
rev rev-crc32c-512-J +corrupt +recalc
rev rev-sha256-4096-B alg=sha256 ss=4096 mode=B +corrupt
rev rev-hmac-sha256-512-J alg=hmac-sha256 key=32 +corrupt +recalc
rev rev-xxhash64-1024-ddev-J alg=xxhash64 ss=1024 ddev=1 +corrupt
rev rev-crc32-2048-tag8-B alg=crc32 ss=2048 tag=8 mode=B +corrupt
rev rev-sha1-512-tag4-il1024-J alg=sha1 tag=4 il=1024
