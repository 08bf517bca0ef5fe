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

# Sparse files (issue 26: fsverity-tool skips holes, the kernel reads
# them as zeros): "NAME SIZE" starts a file, "NAME OFFSET LENGTH" puts the
# first LENGTH bytes of the pool there.  Made from this recipe on the host
# (for fsverity-tool) and again in the guest on ext4 (for the kernel), so
# the holes are real holes on both sides.  Holes at the start, at the end,
# off the block grid, hundreds of small ones, a file that is one hole (a
# fan-out edge plus one byte), holes over whole level-1 subtrees.
MiB=1048576
sparse_recipe() {
	echo "s_start $((9 * MiB + 3000))"
	echo "s_start $((8 * MiB + 512)) $((MiB + 2488))"
	echo "s_end $((8 * MiB + 5))"
	echo "s_end 0 $((3 * MiB + 100))"
	echo "s_grid $((12 * MiB + 777))"
	echo "s_grid 5000 65000"
	echo "s_grid $((MiB + 3)) 65539"
	echo "s_grid $((7 * MiB + 12345)) $((3 * MiB - 12344))"
	echo "s_grid $((11 * MiB + 1)) $((MiB + 776))"
	echo "s_small $((2 * MiB + 1))"
	local off
	for ((off = 0; off < 2 * MiB; off += 32768)); do
		echo "s_small $off 4096"
	done
	echo "s_hole $((4 * MiB + 1))"
	# [0, 68 MiB) one hole: the whole level-1 subtree of 64 MiB (sha256)
	# or four of 16 MiB (sha512)
	echo "s_subtrees $((72 * MiB))"
	echo "s_subtrees $((68 * MiB)) 4096"
	echo "s_subtrees $((72 * MiB - 10)) 10"
}

# make_sparse DIR RECIPE POOL: the files of the recipe in DIR.
make_sparse() {
	local dir=$1 name a b
	while read -r name a b; do
		if [ -z "$b" ]; then
			rm -f "$dir/$name"
			truncate -s "$a" "$dir/$name"
		else
			dd if="$3" of="$dir/$name" bs=1M iflag=count_bytes count="$b" \
				oflag=seek_bytes seek="$a" conv=notrunc status=none ||
				fail "harness: dd into $name"
		fi
	done <"$2"
}

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
	sparse_recipe >sparse.recipe
	head -c $((4 * MiB)) /dev/urandom >pool
	mkdir -p holes
	make_sparse holes sparse.recipe pool
	tool "$FSVERITY_TOOL" digest -r "${opt[@]}" --out-dir meta holes
	cp "$TOOL_OUT" sparse.digests
	[ "$(wc -l <sparse.digests)" = 6 ] || fail "fsverity-tool digest printed $(wc -l <sparse.digests) lines for the sparse files, expected 6"
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
	tar -cf payload.tar files meta digests sparse.recipe sparse.digests pool
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
