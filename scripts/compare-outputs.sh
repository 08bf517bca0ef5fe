#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Before/after comparison of the tools (issue 11, rule 6): runs one matrix of
# verity-tool, integrity-tool, fsverity-tool and crypt-tool commands (the
# last two when both sides have them) with the binaries of OLD_DIR and
# of NEW_DIR, salt/uuid/seed fixed so every output is deterministic, and
# compares per command: exit code, stdout bytes and the sha256 of every file
# in the working directory afterwards (what it wrote, and what it left alone).
# Files named *.rnd (LUKS2 images: their salts and key material are random
# by design) are compared by name and size only; their contents are checked
# by decrypting them in the same case.
# stderr may change (intended message fixes): the before/after message diff
# is printed for review.  Exit status 1 if any exit code, stdout or file
# differs, 2 on a usage or setup error.
#
# Usage: scripts/compare-outputs.sh OLD_DIR NEW_DIR [WORK_DIR]
#   e.g. scripts/compare-outputs.sh /work/before build
# WORK_DIR (default: a new temporary directory, removed at the end) keeps
# the per-command results: WORK_DIR/{old,new}/NNN.{cmd,rc,out,err,files}.
# Both sides run every command in the same directory (WORK_DIR/run), so
# paths in outputs are the same.  Environment: KEEP=1 keeps WORK_DIR.
set -euo pipefail
export LC_ALL=C
unset DMT_ENGINE DMT_IO_FAULT 2>/dev/null || true

usage() { echo "usage: $0 OLD_DIR NEW_DIR [WORK_DIR]" >&2; exit 2; }
[ $# -ge 2 ] && [ $# -le 3 ] || usage
old_dir=$(cd "$1" && pwd) || usage
new_dir=$(cd "$2" && pwd) || usage
for d in "$old_dir" "$new_dir"; do
	for t in verity-tool integrity-tool; do
		[ -x "$d/$t" ] || { echo "$0: $d/$t not found" >&2; exit 2; }
	done
done
# fsverity-tool and crypt-tool: compared when both sides have them
have_fv=1 have_ct=1
for d in "$old_dir" "$new_dir"; do
	[ -x "$d/fsverity-tool" ] || have_fv=0
	[ -x "$d/crypt-tool" ] || have_ct=0
done
if [ $# -eq 3 ]; then
	work=$3
	mkdir -p "$work"
	work=$(cd "$work" && pwd)
	rm -rf "$work/old" "$work/new" "$work/run" "$work/fixtures"
else
	work=$(mktemp -d "${TMPDIR:-/var/tmp}/compare-outputs.XXXXXX")
	[ "${KEEP:-}" = 1 ] || trap 'rm -rf "$work"' EXIT
fi
command -v openssl >/dev/null || { echo "$0: needs openssl" >&2; exit 2; }

# ---- fixtures, made once and copied into the run directory per case ----
fix=$work/fixtures
mkdir -p "$fix"
# gen FILE BYTES SEED: deterministic pseudo-random bytes (AES-CTR of zeros)
gen() {
	head -c "$2" /dev/zero | openssl enc -aes-128-ctr -nosalt \
		-K "$(printf '%032x' "$3")" -iv 00000000000000000000000000000000 >"$1"
}
gen "$fix/d1m" $((1 << 20)) 1
gen "$fix/d4m" $((4 << 20)) 2
gen "$fix/dodd" $((3 * 1048576 + 5 * 4096)) 3	# levels do not fill up
gen "$fix/pay" $((2 << 20)) 4
gen "$fix/k16" 16 5
gen "$fix/k32" 32 6
gen "$fix/k32b" 32 7
gen "$fix/k64" 64 8
# a sparse data file: holes around a few written blocks
truncate -s $((4 << 20)) "$fix/sparse"
gen "$fix/blk" 12288 9
dd if="$fix/blk" of="$fix/sparse" bs=4096 seek=300 conv=notrunc status=none
dd if="$fix/blk" of="$fix/sparse" bs=4096 seek=1000 conv=notrunc status=none
rm -f "$fix/blk"
# signing key and certificate (RSA PKCS#1 v1.5 signatures are deterministic)
have_sign=1
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$fix/k.pem" \
	-out "$fix/c.pem" -subj /CN=compare-outputs -days 30 \
	>/dev/null 2>&1 || have_sign=0
if [ "$have_sign" = 1 ]; then
	printf 'secret pass\n' >"$fix/pass"
	openssl pkey -in "$fix/k.pem" -aes256 -passout "file:$fix/pass" \
		-out "$fix/ke.pem" 2>/dev/null || have_sign=0
fi

# LUKS2 fixtures (made once, by the old side's crypt-tool), read by both
if [ -x "$1/crypt-tool" ] && [ -x "$2/crypt-tool" ]; then
	"$old_dir/crypt-tool" format -q --pbkdf pbkdf2 \
		--pbkdf-force-iterations 1000 -d "$fix/k32" \
		--data-from "$fix/pay" "$fix/luks.fix" >/dev/null
	"$old_dir/crypt-tool" format -q --pbkdf pbkdf2 \
		--pbkdf-force-iterations 1000 -d "$fix/k32" -I hmac-sha256 \
		-c aes-xts-random --data-from "$fix/pay" "$fix/auth.fix" >/dev/null
fi

SALT=5a17c0ffee0123456789abcdef5a17c0ffee0123456789abcdef00112233aabb
UUID=0badcafe-1234-4321-8888-0123456789ab
ISALT=00112233445566778899aabbccddeeff

# ---- the recorder ----
run=$work/run
side=
n=0
# case_begin NAME FIXTURE...: a fresh run directory holding those fixtures
case_begin() {
	cname=$1
	shift
	cd "$work"
	rm -rf "$run"
	mkdir -p "$run"
	for f in "$@"; do cp "$fix/$f" "$run/$f"; done
	cd "$run"
}
# flip FILE OFFSET [MASK]: xor one byte (damage)
flip() {
	local b
	b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	printf "\\$(printf '%03o' $(((b ^ ${3:-1}) & 255)))" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
record() {
	local tool=$1 rc=0 id
	shift
	n=$((n + 1))
	id=$(printf '%03d' "$n")
	printf '%s | %s %s\n' "$cname" "$tool" "$*" >"$work/$side/$id.cmd"
	"$bin/$tool" "$@" <"/dev/null" >"$work/$side/$id.out" \
		2>"$work/$side/$id.err" || rc=$?
	echo "$rc" >"$work/$side/$id.rc"
	{
		find . -type f ! -name '*.rnd' -print0 | sort -z |
			xargs -0 -r sha256sum
		find . -type f -name '*.rnd' -printf 'random %s %p\n' | sort
	} >"$work/$side/$id.files"
}
vt() { record verity-tool "$@"; }
it() { record integrity-tool "$@"; }
fv() { record fsverity-tool "$@"; }
ct() { record crypt-tool "$@"; }

# ---- the matrix ----
verity_matrix() {
	local h bs s fec
	# build + verify: hash x block size x salt
	for h in sha256 sha512 sha1; do
		for bs in 512 1024 4096; do
			for s in "$SALT" -; do
				case_begin "build $h bs=$bs salt=${s:0:4}" d1m
				vt build --hash "$h" --data-block-size "$bs" \
					--hash-block-size "$bs" --salt "$s" \
					--uuid "$UUID" --root-hash-file root d1m h.img
				vt verify --root-hash-file root d1m h.img
			done
		done
	done
	case_begin "build mixed block sizes" dodd
	vt build --data-block-size 4096 --hash-block-size 1024 --salt "$SALT" \
		--uuid "$UUID" --root-hash-file root dodd h.img
	vt verify --root-hash-file root dodd h.img
	vt dump h.img
	vt build --data-block-size 1024 --hash-block-size 4096 --salt "$SALT" \
		--uuid "$UUID" dodd h2.img
	vt build --json --salt "$SALT" --uuid "$UUID" dodd h3.img
	vt build --salt "$SALT" --uuid "$UUID" --threads 1 dodd h4.img
	case_begin "build --data-blocks, sparse data" sparse d1m
	vt build --data-blocks 100 --salt "$SALT" --uuid "$UUID" d1m h.img
	vt build --salt "$SALT" --uuid "$UUID" --root-hash-file root sparse hs.img
	vt verify --root-hash-file root sparse hs.img
	vt build --seed reproducible-1 sparse hseed.img
	vt dump hseed.img
	case_begin "hash area in the data file (--hash-offset)" d4m
	vt build --data-blocks 768 --hash-offset $((768 * 4096)) \
		--salt "$SALT" --uuid "$UUID" --root-hash-file root d4m d4m
	vt verify --data-blocks 768 --hash-offset $((768 * 4096)) \
		--root-hash-file root d4m d4m
	vt dump --hash-offset $((768 * 4096)) d4m
	vt build --hash-offset 8192 --salt "$SALT" --uuid "$UUID" d4m hoff.img
	case_begin "--no-superblock, --format 0" d1m
	vt build --no-superblock --hash sha512 --salt "$SALT" \
		--root-hash-file root d1m h.img
	vt verify --no-superblock --hash sha512 --salt "$SALT" \
		--root-hash-file root d1m h.img
	vt dump h.img
	vt build --format 0 --salt "$SALT" --uuid "$UUID" \
		--root-hash-file root0 d1m h0.img
	vt verify --root-hash-file root0 d1m h0.img
	vt build --format 0 --no-superblock --hash sha1 --salt - \
		--data-block-size 1024 --hash-block-size 1024 d1m h0n.img
	case_begin "--json" d1m
	vt build --json --salt "$SALT" --uuid "$UUID" --root-hash-file root \
		d1m h.img
	vt verify --json --root-hash-file root d1m h.img
	vt dump --json h.img
	vt size --json d1m
	case_begin "size" d4m dodd
	vt size d4m
	vt size --data-block-size 1024 --hash sha512 dodd
	vt size --data-size 100M
	vt size --data-size 1G --hash-block-size 512 --hash sha1
	vt size --data-size 64M --fec-device f.img --fec-roots 24
	vt size --json --data-size 64M --fec-device f.img
	# FEC: parity file, roots 2 and 24, parity inside the hash file
	for fec in 2 24; do
		case_begin "FEC --fec-roots $fec" d4m
		vt build --fec-device f.img --fec-roots "$fec" --salt "$SALT" \
			--uuid "$UUID" --root-hash-file root d4m h.img
		vt verify --fec-device f.img --fec-roots "$fec" \
			--root-hash-file root d4m h.img
		flip d4m 100000
		flip d4m 2000001 0x80
		vt verify --root-hash-file root d4m h.img
		vt verify --fec-device f.img --fec-roots "$fec" \
			--root-hash-file root d4m h.img
		vt repair --fec-device f.img --fec-roots "$fec" \
			--root-hash-file root d4m h.img
		vt verify --root-hash-file root d4m h.img
		# a hash block, then more damage than roots=2 can correct
		flip h.img $((4096 + 77))
		vt verify --fec-device f.img --fec-roots "$fec" \
			--root-hash-file root d4m h.img
		vt repair --fec-device f.img --fec-roots "$fec" \
			--root-hash-file root d4m h.img
		dd if=/dev/zero of=d4m bs=4096 seek=10 count=40 conv=notrunc \
			status=none
		vt verify --fec-device f.img --fec-roots "$fec" \
			--root-hash-file root d4m h.img
		vt repair --fec-device f.img --fec-roots "$fec" \
			--root-hash-file root d4m h.img
	done
	case_begin "FEC in the hash file (--fec-offset)" dodd
	vt build --fec-device h.img --fec-offset 1048576 --salt "$SALT" \
		--uuid "$UUID" --root-hash-file root --json dodd h.img
	flip dodd 3000000
	vt verify --fec-device h.img --fec-offset 1048576 \
		--root-hash-file root dodd h.img
	vt repair --fec-device h.img --fec-offset 1048576 \
		--root-hash-file root dodd h.img
	vt verify --root-hash-file root dodd h.img
	case_begin "verify failures and usage errors" d1m
	vt build --salt "$SALT" --uuid "$UUID" --root-hash-file root d1m h.img
	vt verify d1m h.img \
		0000000000000000000000000000000000000000000000000000000000000000
	vt verify --root-hash-file root d1m missing.img
	vt verify d1m h.img
	flip h.img 8 6	# superblock version 1 -> 7
	vt verify --root-hash-file root d1m h.img
	vt dump --debug h.img
	flip h.img 8 6
	flip h.img 5	# magic
	vt verify --root-hash-file root d1m h.img
	vt dump h.img
	vt build -v --threads 1 --salt "$SALT" --uuid "$UUID" d1m hv.img
	vt build -q --salt "$SALT" --uuid "$UUID" d1m hq.img
	vt open d1m vroot hv.img "$(cat root)"
	vt -V
	vt build --hash nosuchalg --salt "$SALT" d1m x.img
	vt build --data-block-size 1000 --salt "$SALT" d1m x.img
	vt build --salt 0g d1m x.img
	vt build --fec-roots 25 --fec-device f.img --salt "$SALT" d1m x.img
	vt nosuchaction d1m
	vt build d1m
	if [ "$have_sign" = 1 ]; then
		case_begin "signatures" d1m k.pem c.pem ke.pem pass
		vt build --salt "$SALT" --uuid "$UUID" --root-hash-file root \
			--sign-key k.pem --sign-cert c.pem \
			--root-hash-signature root.p7s d1m h.img
		vt verify --root-hash-file root --cert c.pem \
			--root-hash-signature root.p7s d1m h.img
		vt sign --key k.pem --cert c.pem --root-hash-file root s2.p7s
		vt sign --key ke.pem --key-passphrase-file pass --cert c.pem \
			"$(cat root)" s3.p7s
		vt build --salt "$SALT" --uuid "$UUID" --sidecar \
			--sign-key k.pem --sign-cert c.pem d1m h2.img
		flip root.p7s 200
		vt verify --root-hash-file root --cert c.pem \
			--root-hash-signature root.p7s d1m h.img
	fi
}

integrity_matrix() {
	local alg key ss j
	for alg in crc32c sha256 hmac-sha256; do
		key=
		[ "$alg" = hmac-sha256 ] && key="--integrity-key-file k32"
		for ss in 512 4096; do
			case_begin "format -I $alg -s $ss" k32 k32b
			# shellcheck disable=SC2086
			it format -I "$alg" $key -s "$ss" --salt "$ISALT" \
				--device-size 4M i.img
			# shellcheck disable=SC2086
			it check -I "$alg" $key i.img
			it dump i.img
			it size -I "$alg" -s "$ss" --payload-size 3000000
			flip i.img 3500017
			# shellcheck disable=SC2086
			it check -I "$alg" $key i.img
			# shellcheck disable=SC2086
			it recalculate -I "$alg" $key i.img
			# shellcheck disable=SC2086
			it check -I "$alg" $key i.img
		done
	done
	case_begin "wrong algorithm or key" k32 k32b
	it format -q -I hmac-sha256 --integrity-key-file k32 --salt "$ISALT" \
		--device-size 4M i.img
	it check -I hmac-sha256 --integrity-key-file k32b i.img
	it check -I sha256 i.img
	it check i.img
	it format -q -I sha256 -s 4096 --salt "$ISALT" --device-size 4M s.img
	it check -I crc32c s.img
	case_begin "--data-from, --device-size auto, --no-wipe" pay
	it format --salt "$ISALT" --device-size 8M --data-from pay i.img
	it check --json i.img
	it format -I sha256 -s 4096 --salt "$ISALT" --device-size auto \
		--data-from pay auto.img
	it check -I sha256 auto.img
	it size -I sha256 -s 4096 --payload-size 2097152
	it size --json -I sha256 -s 4096 --payload-size 2097152
	it format -q --no-wipe --salt "$ISALT" --device-size 4M nw.img
	it dump nw.img
	it recalculate nw.img
	it check nw.img
	it format -q -t 8 --interleave-sectors 8 --salt "$ISALT" \
		--device-size 8M --data-from pay il.img
	it check il.img
	it dump --json il.img
	it format -q --seed build-42 --device-size 4M seed.img
	it dump seed.img
	it format --json --salt "$ISALT" -I crc32 --device-size 4M j.img
	it format -q -B --bitmap-sectors-per-bit 8 --salt "$ISALT" \
		--device-size 4M bm.img
	it dump bm.img
	it format -q --integrity-legacy-padding --integrity-legacy-hmac \
		--device-size 4M leg.img
	it dump leg.img
	it check leg.img
	it format -q --journal-size 1M --buffer-sectors 64 --salt "$ISALT" \
		-I xxhash64 --device-size 4M js.img
	it check -I xxhash64 js.img
	case_begin "--data-device" pay
	it size --data-device pay
	it format -q --data-device pay --salt "$ISALT" -I sha256 \
		--device-size 1M meta.img
	it check --data-device pay -I sha256 meta.img
	flip pay 123456
	it check --data-device pay -I sha256 meta.img
	it recalculate --data-device pay -I sha256 meta.img
	it check --data-device pay -I sha256 meta.img
	case_begin "journal MAC and encryption" k16 k32 k64 k32b
	it format -I hmac-sha256 --integrity-key-file k32 \
		--journal-integrity hmac-sha256 --journal-integrity-key-file k32b \
		--salt "$ISALT" --device-size 4M jm.img
	it check -I hmac-sha256 --integrity-key-file k32 \
		--journal-integrity hmac-sha256 --journal-integrity-key-file k32b \
		jm.img
	it check -I hmac-sha256 --integrity-key-file k32 \
		--journal-integrity hmac-sha256 --journal-integrity-key-file k32 \
		jm.img
	flip jm.img 3000000
	it recalculate -I hmac-sha256 --integrity-key-file k32 \
		--journal-integrity hmac-sha256 --journal-integrity-key-file k32b \
		jm.img
	it check -I hmac-sha256 --integrity-key-file k32 \
		--journal-integrity hmac-sha256 --journal-integrity-key-file k32b \
		jm.img
	for j in "ctr(aes) k32" "cbc(aes) k16" "chacha20 k32"; do
		# shellcheck disable=SC2086 # "cipher keyfile"
		set -- $j
		it format -q --journal-size 1M --journal-crypt "$1" \
			--journal-crypt-key-file "$2" --salt "$ISALT" \
			--device-size 4M "jc-$1.img"
		it check --journal-crypt "$1" --journal-crypt-key-file "$2" \
			"jc-$1.img"
		it check "jc-$1.img"
	done
	it format -q --journal-crypt "ctr(aes)" --journal-crypt-key-file k64 \
		--journal-integrity sha256 --salt "$ISALT" --device-size 4M jx.img
	it format -q --journal-crypt "ctr(aes)" --journal-crypt-key-file k16 \
		--journal-integrity sha256 --salt "$ISALT" --device-size 4M jx.img
	it dump jx.img
	it check --journal-crypt "ctr(aes)" --journal-crypt-key-file k16 \
		--journal-integrity sha256 jx.img
	case_begin "integrity errors" k32 pay
	it format -q --salt "$ISALT" --device-size 4M i.img
	it format --salt "$ISALT" --device-size 4M i.img
	it check -v i.img
	it check --debug --allow-discards i.img
	it recalculate --integrity-recalculate-reset i.img
	it format -q --threads 1 --salt "$ISALT" --data-from pay \
		--device-size 4M t1.img
	flip i.img 8 0xfa	# superblock version 5 -> 255
	it check i.img
	it dump i.img
	: >empty.key
	head -c 5000 pay >big.key
	it format -I hmac-sha256 --integrity-key-file empty.key \
		--device-size 4M x.img
	it format -I hmac-sha256 --integrity-key-file big.key \
		--device-size 4M x.img
	it format -I hmac-sha256 --integrity-key-file missing.key \
		--device-size 4M x.img
	it format -I nosuchalg --device-size 4M x.img
	it format --sector-size 1000 --device-size 4M x.img
	it format --tag-size 0 --device-size 4M x.img
	it format --device-size 12Q x.img
	it format -I hmac-sha256 --device-size 4M x.img
	it check missing.img
	it check k32
	it dump k32
	it recalculate --integrity-recalculate-reset k32
	it nosuchcommand x.img
	it format
}

fsverity_matrix() {
	local h bs
	case_begin "fsverity digest" d1m dodd pay sparse
	mkdir -p tree/a/b
	cp d1m tree/a/one
	head -c 5000 pay >tree/a/b/two
	: >tree/empty
	ln -s a/one tree/link
	for h in sha256 sha512; do
		for bs in 1024 4096 65536; do
			fv digest --hash-alg "$h" --block-size "$bs" d1m dodd sparse
		done
	done
	fv digest --salt "${SALT:0:16}" d1m
	fv digest --compact d1m dodd
	fv digest --for-builtin-sig d1m
	fv digest --json d1m dodd
	fv digest -r tree
	fv digest -r --strict tree
	fv digest --threads 1 -r tree
	printf 'd1m\ndodd\nsparse\n' >list
	fv digest --files-from list
	printf 'd1m\0pay\0' >list0
	fv digest -0 --files-from list0
	fv digest --out-merkle-tree mt.bin --out-descriptor desc.bin dodd
	mkdir -p od
	fv digest --out-dir od -r tree
	fv digest missing d1m
	fv digest --stop-on-error missing d1m
	fv digest --hash-alg md5 d1m
	fv digest --block-size 1000 d1m
	fv digest --salt xyz d1m
	fv digest
	fv nosuchcommand d1m
	if [ "$have_sign" = 1 ]; then
		case_begin "fsverity sign" d1m dodd k.pem c.pem ke.pem pass
		fv sign --key k.pem --cert c.pem d1m d1m.sig
		fv sign --key ke.pem --cert c.pem --key-passphrase-file pass \
			dodd dodd.sig
		mkdir -p sigs
		fv sign --key k.pem --cert c.pem --out-dir sigs d1m dodd
		fv sign --key k.pem --cert c.pem --manifest m.json d1m dodd
		fv sign --key ke.pem --cert c.pem d1m x.sig
		fv sign --key missing.pem --cert c.pem d1m x.sig
		fv sign d1m x.sig
	fi
}

crypt_matrix() {
	local c ss
	# plain mode is deterministic: the images themselves are compared
	case_begin "crypt plain" pay k32 k64
	for c in aes-xts-plain64 aes-cbc-essiv:sha256 aes-cbc-plain64; do
		for ss in 512 4096; do
			ct format -q -M plain -c "$c" --sector-size "$ss" \
				-d k64 -s $([ "$c" = aes-xts-plain64 ] && echo 512 || echo 256) \
				--data-from pay "p-${c%%:*}-$ss.img"
		done
	done
	ct decrypt -M plain -d k64 p-aes-xts-plain64-512.img p.out
	ct decrypt -M plain -d k64 --sector-size 4096 \
		p-aes-xts-plain64-4096.img p4.out
	ct format -q -M plain -d k64 --offset 8 --skip 16 --data-from pay \
		--device-size 4M po.img
	ct decrypt -M plain -d k64 --offset 8 --skip 16 po.img po.out
	ct format -q -M plain -d k64 --threads 1 --wipe --data-from pay \
		--device-size 3M pw.img
	ct format --json -M plain -d k64 --data-from pay pj.img
	ct size --payload-size 1000000
	ct size -M plain --payload-size 1000000
	ct size --json --payload-size 4096 -I hmac-sha256 -c aes-xts-random
	# LUKS2: random salts, so format and decrypt in one case
	case_begin "crypt luks2" pay k32 luks.fix auth.fix
	ct format -q --pbkdf pbkdf2 --pbkdf-force-iterations 1000 -d k32 \
		--uuid "$UUID" --data-from pay l.rnd
	ct decrypt -d k32 l.rnd l.out
	ct format -q --pbkdf pbkdf2 --pbkdf-force-iterations 1000 -d k32 \
		--sector-size 512 -c aes-cbc-essiv:sha256 -s 256 \
		--uuid "$UUID" --label lab --data-from pay l2.rnd
	ct decrypt -d k32 l2.rnd l2.out
	ct format -q --pbkdf argon2id --pbkdf-force-iterations 4 \
		--pbkdf-memory 32 --pbkdf-parallel 1 -d k32 --uuid "$UUID" \
		--header hdr.rnd --data-from pay det.rnd
	ct decrypt -d k32 --header hdr.rnd det.rnd det.out
	ct dump luks.fix
	ct dump --json luks.fix
	ct decrypt -d k32 luks.fix fix.out
	ct decrypt -d pay luks.fix bad.out
	ct decrypt luks.fix nokey.out
	ct dump pay
	ct decrypt -d k32 missing.img x.out
	ct format -q --pbkdf pbkdf2 --pbkdf-force-iterations 1000 -d k32 \
		--uuid "$UUID" -I hmac-sha256 -c aes-xts-random \
		--data-from pay a.rnd
	ct check -d k32 a.rnd
	ct decrypt -d k32 a.rnd a.out
	ct check -d k32 auth.fix
	flip auth.fix 18200000
	ct check -d k32 auth.fix
	ct format -c nosuch -d k32 --data-from pay x.img
	ct format -M plain -d k32 --sector-size 1000 --data-from pay x.img
	ct format -d missing.key --data-from pay x.img
	ct format
	ct nosuchcommand x.img
}

run_side() {
	side=$1
	bin=$2
	n=0
	mkdir -p "$work/$side"
	verity_matrix
	integrity_matrix
	[ "$have_fv" = 0 ] || fsverity_matrix
	[ "$have_ct" = 0 ] || crypt_matrix
	cd "$work"
}

start=$SECONDS
run_side old "$old_dir"
run_side new "$new_dir"
rm -rf "$run"

# ---- compare ----
total=$n
same=0
differ=0
msgs=0
report=$work/differences.txt
msgdiff=$work/messages.diff
: >"$report"
: >"$msgdiff"
for i in $(seq 1 "$total"); do
	id=$(printf '%03d' "$i")
	o=$work/old/$id
	w=$work/new/$id
	what=""
	cmp -s "$o.rc" "$w.rc" || what="$what exit code $(cat "$o.rc") -> $(cat "$w.rc");"
	cmp -s "$o.out" "$w.out" || what="$what stdout;"
	cmp -s "$o.files" "$w.files" || what="$what files;"
	if [ -z "$what" ]; then
		same=$((same + 1))
	else
		differ=$((differ + 1))
		{
			echo "DIFFER $id: $(cat "$o.cmd")"
			echo "   $what"
			# (diff exits 1 when it finds a difference)
			cmp -s "$o.out" "$w.out" ||
				{ diff -u --label old/stdout --label new/stdout \
					"$o.out" "$w.out" || true; } |
				sed 's/^/   /' | head -40
			cmp -s "$o.files" "$w.files" ||
				{ diff -u --label old/files --label new/files \
					"$o.files" "$w.files" || true; } |
				sed 's/^/   /'
		} >>"$report"
	fi
	if ! cmp -s "$o.err" "$w.err"; then
		msgs=$((msgs + 1))
		{
			echo "== $id: $(cat "$o.cmd")"
			{ diff -u --label before --label after "$o.err" \
				"$w.err" || true; } | tail -n +3
		} >>"$msgdiff"
	fi
done

if [ "$msgs" -gt 0 ]; then
	echo "---- stderr, before -> after ($msgs commands changed their messages) ----"
	cat "$msgdiff"
fi
if [ "$differ" -gt 0 ]; then
	echo "---- exit code / stdout / file differences ----"
	cat "$report"
fi
[ "$have_sign" = 1 ] || echo "compare-outputs: note: no openssl key, signing cases skipped"
[ "$have_fv" = 1 ] || echo "compare-outputs: note: no fsverity-tool on both sides, its cases skipped"
[ "$have_ct" = 1 ] || echo "compare-outputs: note: no crypt-tool on both sides, its cases skipped"
[ "$have_fv" = 1 ] || echo "compare-outputs: note: no fsverity-tool on both sides, its cases skipped"
[ "$have_ct" = 1 ] || echo "compare-outputs: note: no crypt-tool on both sides, its cases skipped"
echo "compare-outputs: old=$old_dir new=$new_dir ($((SECONDS - start)) s)"
echo "compare-outputs: $total commands, $same identical, $differ differ" \
	"($msgs with changed messages)"
[ "$differ" -eq 0 ]
