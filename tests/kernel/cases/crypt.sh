#!/bin/bash
# SPDX-License-Identifier: MIT
# dm-crypt cases (crypt-tool; cryptsetup in the guest).
#  crypt-luks2-* / crypt-plain-*  forward (also of sparse payloads):
#               crypt-tool format --data-from on
#               the host; the guest maps the image with `cryptsetup open`
#               (LUKS2 from its header, plain with the line format printed),
#               checks the mapped size and reads back exactly the payload.
#               LUKS2 cases first try a wrong passphrase (refused in the
#               guest, and by crypt-tool decrypt with exit 2 on the host).
#  crypt-rev-*  reverse: the guest writes a payload through dm-crypt; on the
#               host crypt-tool decrypt of the image gives it back.
#  crypt-dmg-*  damage: one header copy (still opens from the other), both
#               copies (crypt-tool exit 4, cryptsetup refuses), the keyslot
#               (crypt-tool exit 2, cryptsetup refuses).
# Images are small: LUKS2 with a 2 MiB data offset except one default case.

: "${CRYPT_TOOL:=$(cd "$(dirname "${VERITY_TOOL:-build/x}")" 2>/dev/null && pwd)/crypt-tool}"
CT_PASS="kernel case passphrase"
CT_CHEAP="--pbkdf pbkdf2 --pbkdf-force-iterations 1000"
CT_ARGON="--pbkdf argon2id --pbkdf-force-iterations 4 --pbkdf-memory 32 --pbkdf-parallel 1"

# The guest half (a case-local script, copied into the job).
ct_guest_script() {
	cat >crypt_guest.sh <<'EOF'
# Environment: IMG (attached), HDR (detached header file, in the job), OPEN
# (cryptsetup open options), KEY (key file in the job; "-": PASS on stdin),
# WRONG (a wrong key file: must be refused), MAPPED (bytes), SHA (sha256 of
# the mapped device), EXPECT (open|refuse), WRITE (file to write through).
d=$(dev "$IMG")
hdr=
[ -n "${HDR:-}" ] && hdr="--header $PWD/$HDR"
copen() { # KEYFILE
	if [ "$1" = - ]; then
		# shellcheck disable=SC2086
		echo "+ cryptsetup open $OPEN $hdr $d kc (passphrase on stdin)"
		printf '%s\n' "$PASS" | cryptsetup open $OPEN $hdr "$d" kc >/tmp/run.out 2>/tmp/run.err
		rc=$?
		cat /tmp/run.out /tmp/run.err
		ERR=$(tail -n 1 /tmp/run.err)
		return $rc
	fi
	# shellcheck disable=SC2086
	run cryptsetup open $OPEN $hdr --key-file "$PWD/$1" "$d" kc
}
modprobe dm-crypt 2>/dev/null
if [ -n "${WRONG:-}" ]; then
	copen "$WRONG" && fail "cryptsetup open accepted a wrong key"
	note "wrong key refused: $ERR"
fi
if [ "${EXPECT:-open}" = refuse ]; then
	copen "$KEY" && fail "cryptsetup open accepted a damaged image"
	note "refused: $ERR"
	exit 0
fi
copen "$KEY" || fail "cryptsetup open failed (exit $rc): $ERR"
sz=$(size_of /dev/mapper/kc)
[ "$sz" = "$MAPPED" ] || fail "mapped size $sz, expected $MAPPED"
if [ -n "${WRITE:-}" ]; then
	$KT_DD if="$WRITE" of=/dev/mapper/kc bs=65536 oflag=direct conv=fsync 2>/tmp/dd.err ||
		fail "write through dm-crypt failed: $(head -n 1 /tmp/dd.err)"
	note "wrote $(stat -c %s "$WRITE") bytes through dm-crypt"
else
	rd /dev/mapper/kc 65536 || fail "read of the mapped device failed: $RD_ERR"
	[ "$RD_SHA" = "$SHA" ] || fail "mapped device differs from the payload (sha256 $RD_SHA, expected $SHA)"
	note "read back $sz bytes: the payload"
fi
must cryptsetup close kc
EOF
	gfile crypt_guest.sh
}

# ct_case KEY=VALUE...
#   type=luks2|plain  opts="crypt-tool format options"  size=BYTES (payload)
#   key=file|stdin|line  LUKS2: passphrase file or passphrase on stdin; plain:
#                     a regular key file or a hashed passphrase (--key-file -),
#                     line: a line of stdin (no --key-file), in the guest too
#   header=1          LUKS2 detached header
#   rev=1             the kernel writes the payload; crypt-tool decrypts it
#   dmg=primary|both|keyslot
#   sparse=1          the payload is mostly holes (crypt-tool reads only its
#                     data; the holes must still be encrypted zeros)
ct_case() {
	local type=luks2 opts="" size=1048576 key=file header="" rev="" dmg="" sparse="" kv
	for kv in "$@"; do
		case "$kv" in
		type=* | opts=* | size=* | key=* | header=* | rev=* | dmg=* | sparse=*) local "${kv%%=*}=${kv#*=}" ;;
		*) fail "harness: bad ct_case argument $kv" ;;
		esac
	done
	[ -x "$CRYPT_TOOL" ] || fail "host tool failed: $CRYPT_TOOL not found (make tools)"
	local -a fmt=(--type "$type" --batch-mode) kopt=()
	# shellcheck disable=SC2206
	fmt+=($opts)
	if [ "$rev" = 1 ]; then
		head -c 4096 /dev/zero >payload.bin
		fmt+=(--device-size "$((size + 2097152))")
	elif [ "$sparse" = 1 ]; then
		# holes over whole 8 MiB chunks and inside them, data off the
		# sector grid, a size that is no whole sector
		truncate -s "$size" payload.bin
		head -c 70000 /dev/urandom | dd of=payload.bin bs=1 seek=3145731 conv=notrunc status=none
		head -c 1048576 /dev/urandom | dd of=payload.bin bs=1M seek=17 conv=notrunc status=none
		head -c 1000 /dev/urandom | dd of=payload.bin bs=1 seek=$((size - 1000)) conv=notrunc status=none
	else
		mkrand payload.bin "$size"
	fi
	printf '%s' "$CT_PASS" >pass.txt
	printf 'not it' >wrong.txt
	head -c 64 /dev/urandom >key.bin
	case "$type/$key" in
	luks2/file) kopt=(--key-file pass.txt); genv KEY pass.txt ;;
	luks2/stdin) genv KEY - ;;
	plain/file) kopt=(--key-file key.bin); genv KEY key.bin ;;
	plain/stdin | plain/line) genv KEY - ;;
	esac
	[ "$header" = 1 ] && fmt+=(--header hdr.bin)
	if [ "$type/$key" = luks2/stdin ] || [ "$type/$key" = plain/line ]; then
		tool sh -c 'p=$1; shift; printf "%s\n" "$p" | "$@"' sh "$CT_PASS" \
			"$CRYPT_TOOL" format "${fmt[@]}" --data-from payload.bin img.bin
	elif [ "$type/$key" = plain/stdin ]; then
		tool sh -c 'exec "$@" <pass.txt' sh "$CRYPT_TOOL" format "${fmt[@]}" \
			--key-file - --data-from payload.bin img.bin
	else
		tool "$CRYPT_TOOL" format "${fmt[@]}" "${kopt[@]}" --data-from payload.bin img.bin
	fi
	local open="" off=0 line
	if [ "$type" = plain ]; then
		line=$(grep -o 'cryptsetup open --type plain .* NAME' "${TOOL_OUT%.out}.err" | head -n 1)
		[ -n "$line" ] || fail "format printed no cryptsetup open line"
		open=$(echo "$line" | sed -e 's/^cryptsetup open //' -e 's/ --key-file [^ ]*//' -e 's/ [^ ]* NAME$//')
		off=$(($(echo "$line" | sed 's/.*--offset \([0-9]*\).*/\1/') * 512))
	else
		[ "$header" = 1 ] && gfile hdr.bin && genv HDR hdr.bin
		local h=img.bin
		[ "$header" = 1 ] && h=hdr.bin
		off=$("$CRYPT_TOOL" dump "$h" | sed -n 's/^\toffset: \([0-9]*\) .*/\1/p')
		genv WRONG wrong.txt
		local hopt=()
		[ "$header" = 1 ] && hopt=(--header hdr.bin)
		tool_rc 2 "$CRYPT_TOOL" decrypt "${hopt[@]}" --key-file wrong.txt img.bin out.bin
		[ -e out.bin ] && fail "a failed decrypt left out.bin"
	fi
	gfile pass.txt
	gfile wrong.txt
	gfile key.bin
	genv PASS "$CT_PASS"
	genv OPEN "$open"
	genv IMG img.bin
	local mapped=$(($(stat -c %s img.bin) - off))
	genv MAPPED "$mapped"
	genv SHA "$(sha_range payload.bin 0 "$mapped")"
	[ -n "$dmg" ] && ct_damage "$dmg" "$type"
	if [ "$rev" = 1 ]; then
		mkrand write.bin "$size"
		gfile write.bin
		genv WRITE write.bin
		case "$type/$key" in plain/stdin | plain/line) fail "harness: reverse plain cases use a key file" ;; esac
		hook ct_rev_after "$type" "$opts"
	fi
	attach img.bin
	ct_guest_script
	guest crypt_guest
}

# Damage after format: the host tool's verdict first, then the guest's.
ct_damage() { # primary|both|keyslot TYPE
	case "$1" in
	primary)
		flip_host img.bin 4200
		tool "$CRYPT_TOOL" decrypt --key-file pass.txt img.bin out.bin
		cmp -s -n "$(stat -c %s payload.bin)" out.bin payload.bin ||
			fail "decrypt from the secondary header differs from the payload"
		grep -q secondary "${TOOL_OUT%.out}.err" || fail "no warning about the damaged primary header"
		rm -f out.bin
		;;
	both)
		flip_host img.bin 4200
		flip_host img.bin $((16384 + 4200))
		tool_rc 4 "$CRYPT_TOOL" dump img.bin
		tool_rc 4 "$CRYPT_TOOL" decrypt --key-file pass.txt img.bin out.bin
		genv EXPECT refuse
		;;
	keyslot)
		local aoff
		aoff=$("$CRYPT_TOOL" dump img.bin | sed -n 's/^\tArea offset:\([0-9]*\) .*/\1/p' | head -n 1)
		dd if=/dev/zero of=img.bin bs=4096 seek=$((aoff / 4096)) count=16 conv=notrunc status=none
		tool_rc 2 "$CRYPT_TOOL" decrypt --key-file pass.txt img.bin out.bin
		genv EXPECT refuse
		;;
	esac
	[ -e out.bin ] && fail "a failed decrypt left out.bin"
	genv WRONG ""
}

# After the guest wrote write.bin through dm-crypt: crypt-tool reads it back.
ct_rev_after() { # TYPE OPTS
	local type=$1 opts=$2 n
	if [ "$type" = plain ]; then
		# shellcheck disable=SC2086
		tool "$CRYPT_TOOL" decrypt --type plain $opts --key-file key.bin img.bin out.bin
	else
		tool "$CRYPT_TOOL" decrypt --key-file pass.txt img.bin out.bin
	fi
	n=$(stat -c %s write.bin)
	cmp -s -n "$n" out.bin write.bin ||
		fail "crypt-tool decrypt of the kernel-written image differs from what the guest wrote"
}

# Forward: every cipher, both sector sizes, both KDFs, passphrase and key file.
kcase crypt-luks2-default ct_case opts="$CT_CHEAP"
kcase crypt-luks2-argon2id-512 ct_case opts="$CT_ARGON --sector-size 512 --offset 4096"
kcase crypt-luks2-stdin-xts-plain ct_case key=stdin opts="$CT_ARGON --cipher aes-xts-plain --key-size 256 --offset 4096"
kcase crypt-luks2-essiv-512 ct_case opts="$CT_CHEAP --cipher aes-cbc-essiv:sha256 --sector-size 512 --offset 4096"
kcase crypt-luks2-cbc-plain64-4096 ct_case opts="$CT_ARGON --cipher aes-cbc-plain64 --key-size 128 --offset 4096"
kcase crypt-luks2-detached ct_case header=1 opts="$CT_CHEAP --sector-size 4096"
kcase crypt-plain-keyfile ct_case type=plain opts="--cipher aes-xts-plain64 --key-size 512"
kcase crypt-plain-hash-4096 ct_case type=plain key=stdin opts="--hash sha256 --sector-size 4096 --offset 8 --skip 16"
kcase crypt-plain-essiv ct_case type=plain opts="--cipher aes-cbc-essiv:sha256 --key-size 256 --offset 3 --skip 7"
kcase crypt-plain-cbc-large ct_case type=plain opts="--cipher aes-cbc-plain64 --key-size 128 --sector-size 4096 --iv-large-sectors --skip 8"
kcase crypt-plain-xts-plain ct_case type=plain key=stdin opts="--hash sha512 --cipher aes-xts-plain --key-size 256"
# A sparse payload (issue 26): its holes are never read, still encrypted.
kcase crypt-luks2-sparse ct_case sparse=1 size=$((40 * 1048576 + 777)) opts="$CT_CHEAP"
kcase crypt-plain-sparse ct_case sparse=1 type=plain size=$((40 * 1048576 + 777)) opts="--cipher aes-xts-plain64 --key-size 512 --sector-size 4096"
# --hash plain (issue 27): the 22-byte passphrase zero-padded, cut, or plain:N
kcase crypt-plain-hashplain-pad ct_case type=plain key=line opts="--hash plain --cipher aes-cbc-essiv:sha256 --key-size 256"
kcase crypt-plain-hashplain-cut ct_case type=plain key=line opts="--hash plain --cipher aes-cbc-plain64 --key-size 128"
kcase crypt-plain-hashplain-n ct_case type=plain key=line opts="--hash plain:16 --cipher aes-xts-plain64 --key-size 512"
# Reverse: the kernel encrypts.
kcase crypt-rev-luks2 ct_case rev=1 opts="$CT_CHEAP --offset 4096"
kcase crypt-rev-luks2-essiv-512 ct_case rev=1 opts="$CT_ARGON --cipher aes-cbc-essiv:sha256 --sector-size 512 --offset 4096"
kcase crypt-rev-plain ct_case type=plain rev=1 opts="--cipher aes-xts-plain64 --key-size 256 --sector-size 4096 --offset 8"
# Damage.
kcase crypt-dmg-primary ct_case dmg=primary opts="$CT_CHEAP --offset 4096"
kcase crypt-dmg-both ct_case dmg=both opts="$CT_CHEAP --offset 4096"
kcase crypt-dmg-keyslot ct_case dmg=keyslot opts="$CT_CHEAP --offset 4096"
