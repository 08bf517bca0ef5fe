#!/bin/sh
# SPDX-License-Identifier: MIT
# The four programs of examples/ built against an installed libdmt with
# nothing but `pkg-config --cflags --libs libdmt`, run, and each result
# checked by an independent tool (`make check-install` and `make check`,
# through mk/install.mk's check-examples):
#   verity_tree      veritysetup verify on the tree and root hash (and a
#                    flipped data byte must make it fail)
#   fsverity_digest  `fsverity digest` of the same files: equal output
#   integrity_image  `integritysetup dump` shows the superblock printed
#   luks2_image      `cryptsetup luksDump`, `cryptsetup open
#                    --test-passphrase` with the passphrase on standard
#                    input (a wrong one must be refused)
# Usage: examples.sh TESTDIR ROOT LIBDIR
# (ROOT is the DESTDIR, LIBDIR the libdir inside it)
set -eu
dir=$1 root=$2 libdir=$3
lib=$root$libdir
CC=${CC:-cc}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
src=$(cd "$(dirname "$0")/../../examples" && pwd)
failed=0
fail() { echo "examples: FAIL: $*" >&2; failed=1; }
ok() { echo "examples: ok: $*"; }
# the oracles are in root's sbin (a user's PATH may lack it)
PATH=$PATH:/usr/sbin:/sbin
for c in veritysetup integritysetup cryptsetup:cryptsetup-bin fsverity; do
	command -v "${c%%:*}" >/dev/null 2>&1 || {
		echo "examples: FAIL: ${c%%:*} not found (apt-get install ${c#*:})" >&2
		exit 1
	}
done

rm -rf "$dir" && mkdir -p "$dir"
cflags=$(PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$root" \
	$PKG_CONFIG --cflags libdmt)
libs=$(PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$root" \
	$PKG_CONFIG --libs libdmt)
argon2=$(PKG_CONFIG_PATH="$lib/pkgconfig" $PKG_CONFIG --print-requires-private libdmt |
	grep -c argon2 || true)
for e in verity_tree fsverity_digest integrity_image luks2_image; do
	# shellcheck disable=SC2086
	$CC -std=c11 -Wall -Wextra -Werror -o "$dir/$e" "$src/$e.c" \
		$cflags $libs -Wl,-rpath,"$lib" ||
		{ fail "$e does not build with pkg-config's flags"; continue; }
	so=$(ldd "$dir/$e" | awk '/libdmt\.so/ { print $3 }')
	[ "$so" = "$lib/libdmt.so.0" ] || fail "$e loads libdmt from '$so', want $lib/libdmt.so.0"
done
[ "$failed" = 0 ] || exit 1
ok "4 examples built with pkg-config --cflags --libs libdmt: $cflags $libs"

# ---- dm-verity ----
d=$dir/verity
mkdir "$d"
head -c $((300 * 4096)) /dev/urandom >"$d/data"
if "$dir/verity_tree" "$d/data" "$d/hash" 5a17c0ffee00 >"$d/out"; then
	root_hash=$(sed -n 's/^root_hash //p' "$d/out")
	if veritysetup verify "$d/data" "$d/hash" "$root_hash" >"$d/verify.log" 2>&1; then
		cp "$d/data" "$d/bad"
		printf 'x' | dd of="$d/bad" bs=1 seek=$((123 * 4096 + 7)) conv=notrunc 2>/dev/null
		if veritysetup verify "$d/bad" "$d/hash" "$root_hash" >/dev/null 2>&1; then
			fail "veritysetup verify accepts a corrupted copy"
		else
			ok "verity_tree: veritysetup verify accepts root hash $root_hash (and refuses a flipped byte)"
		fi
	else
		fail "veritysetup verify refuses verity_tree's tree: $(cat "$d/verify.log")"
	fi
else
	fail "verity_tree"
fi

# ---- fs-verity ----
d=$dir/fsverity
mkdir -p "$d/tree/a/b" "$d/tree/c"
head -c 5000 /dev/urandom >"$d/tree/one"
: >"$d/tree/a/empty"
head -c 4096 /dev/urandom >"$d/tree/a/block"
head -c 300000 /dev/urandom >"$d/tree/a/b/big"
printf 'x' >"$d/tree/c/tiny"
ln -s one "$d/tree/link"	# not a regular file: neither lists it
if (cd "$d" && "$dir/fsverity_digest" tree) >"$d/got.unsorted"; then
	sort "$d/got.unsorted" >"$d/got"
	(cd "$d" && find tree -type f | sort | xargs fsverity digest) | sort >"$d/want"
	n=$(wc -l <"$d/want")
	if [ "$n" = 5 ] && cmp -s "$d/got" "$d/want"; then
		ok "fsverity_digest: the 5 files' digests = fsverity digest's"
	else
		fail "fsverity_digest differs from fsverity digest: $(diff "$d/want" "$d/got" | head -n 6 | tr '\n' ' ')"
	fi
else
	fail "fsverity_digest"
fi

# ---- dm-integrity ----
d=$dir/integrity
mkdir "$d"
if "$dir/integrity_image" "$d/img" 8 >"$d/out"; then
	integritysetup dump "$d/img" >"$d/dump" 2>&1 || fail "integritysetup dump: $(cat "$d/dump")"
	want() { sed -n "s/^$1 //p" "$d/out"; }
	has() { grep -qx "$1 $2" "$d/dump" || fail "integritysetup dump: want '$1 $2', has '$(grep "^$1 " "$d/dump")'"; }
	has integrity_tag_size "$(want tag_size)"
	has sector_size "$(want sector_size)"
	has provided_data_sectors "$(want provided_data_sectors)"
	has journal_sections "$(want journal_sections)"
	has integrity_tag_size 4
	grep -q '^flags.*fix_padding' "$d/dump" || fail "integritysetup dump: no fix_padding flag"
	[ "$(stat -c %s "$d/img")" = $((8 << 20)) ] || fail "the image is not 8 MiB"
	[ "$failed" = 0 ] && ok "integrity_image: integritysetup dump: tag size 4, $(want provided_data_sectors) data sectors"
else
	fail "integrity_image"
fi

# ---- LUKS2 ----
d=$dir/luks2
mkdir "$d"
printf 'correct horse battery' >"$d/pass"
printf 'correct horse batterx' >"$d/wrong"
kdf=
[ "$argon2" -gt 0 ] || kdf=pbkdf2
# shellcheck disable=SC2086
if "$dir/luks2_image" "$d/img" $kdf <"$d/pass" >"$d/out"; then
	uuid=$(sed -n 's/^uuid //p' "$d/out")
	if cryptsetup luksDump "$d/img" >"$d/dump" 2>&1; then
		grep -q "^UUID:[[:space:]]*$uuid\$" "$d/dump" || fail "luksDump: UUID is not $uuid"
		grep -q "cipher: aes-xts-plain64" "$d/dump" || fail "luksDump: no aes-xts-plain64 segment"
		grep -q "^  0: luks2" "$d/dump" || fail "luksDump: no keyslot 0"
	else
		fail "cryptsetup luksDump: $(cat "$d/dump")"
	fi
	cryptsetup open --test-passphrase --key-file=- "$d/img" <"$d/pass" >"$d/test.log" 2>&1 ||
		fail "cryptsetup open --test-passphrase refuses the passphrase: $(cat "$d/test.log")"
	cryptsetup open --test-passphrase --key-file=- "$d/img" <"$d/wrong" >/dev/null 2>&1 &&
		fail "cryptsetup open --test-passphrase accepts a wrong passphrase"
	[ "$failed" = 0 ] && ok "luks2_image: cryptsetup luksDump (UUID $uuid) and --test-passphrase accept it, a wrong passphrase is refused"
else
	fail "luks2_image"
fi

[ "$failed" = 0 ] || { echo "examples: FAILED" >&2; exit 1; }
echo "examples: passed"
