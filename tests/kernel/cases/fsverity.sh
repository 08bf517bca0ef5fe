#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-verity cases: fsverity-tool computes digests, Merkle trees, descriptors
# and signatures on the host; the guest makes an ext4 file system with the
# verity feature on a case disk, copies the same files in, lets the kernel
# enable fs-verity on each (`fsverity enable`), and requires
# `fsverity measure` == our digest, `fsverity dump_metadata merkle_tree` ==
# our --out-dir tree and `dump_metadata descriptor` == our descriptor.
# With sign=1 our `sign` output must be accepted by `fsverity enable
# --signature` with the certificate in the .fs-verity keyring, and a
# signature over another file's digest refused.  6.1 takes 4096-byte Merkle
# blocks only (the page size).

# fsverity_case KEY=VALUE...
#   hash=sha256|sha512  (default sha256)
#   salt=HEX            (default: none)
#   sign=1              also the built-in signature checks
fsverity_case() {
	local hash=sha256 salt="" sign=0 kv
	for kv in "$@"; do
		case "$kv" in
		hash=* | salt=* | sign=*) local "${kv%%=*}=${kv#*=}" ;;
		*) fail "harness: bad fsverity_case argument $kv" ;;
		esac
	done
	[ "$FSVERITY_TOOL" = none ] && skip "FSVERITY_TOOL=none"
	[ -x "$FSVERITY_TOOL" ] || fail "host tool failed: $FSVERITY_TOOL not found (make tools)"
	local -a opt=(--hash-alg "$hash")
	[ -n "$salt" ] && opt+=(--salt "$salt")
	# sizes: empty, 1 byte, block-1, block, block+1, the fan-out edges of
	# both hashes (64 / 128 digests per block) and one past, sparse
	mkdir -p files
	local -a sizes=(0 1 4095 4096 4097 262144 262145 524288 524289)
	local i
	for i in "${!sizes[@]}"; do
		head -c "${sizes[$i]}" /dev/urandom >"files/f$i"
	done
	truncate -s 3M files/sparse
	printf x | dd of=files/sparse bs=1 seek=1500000 conv=notrunc status=none
	tool "$FSVERITY_TOOL" digest -r "${opt[@]}" --out-dir meta files
	cp "$TOOL_OUT" digests
	[ "$(wc -l <digests)" = 10 ] || fail "fsverity-tool digest printed $(wc -l <digests) lines, expected 10"
	if [ "$sign" = 1 ]; then
		openssl req -newkey rsa:2048 -nodes -keyout key.pem -x509 -out cert.pem \
			-subj /CN=fsverity-kt -days 30 2>/dev/null || fail "openssl req failed"
		openssl x509 -in cert.pem -outform der -out cert.der || fail "openssl x509 failed"
		tool "$FSVERITY_TOOL" sign "${opt[@]}" files/f4 f4.sig --key key.pem --cert cert.pem
		tool "$FSVERITY_TOOL" sign "${opt[@]}" files/f5 f5.sig --key key.pem --cert cert.pem
		gfile cert.der
		gfile f4.sig
		gfile f5.sig
	fi
	tar -cf payload.tar files meta digests
	gfile payload.tar
	truncate -s 64M fs.img
	attach fs.img
	genv FS fs.img
	genv HASH "$hash"
	genv SALT "$salt"
	genv SIGN "$sign"
	guest fsverity
}

kcase fsverity-sha256 fsverity_case sign=1
kcase fsverity-sha256-salt fsverity_case salt=0123456789abcdef
kcase fsverity-sha512 fsverity_case hash=sha512
kcase fsverity-sha512-salt32 fsverity_case hash=sha512 sign=1 \
	salt=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
