#!/bin/sh
# SPDX-License-Identifier: MIT
# Seed corpora and dictionaries for the fuzz targets, made with our own
# tools (nothing binary is committed).  Usage: seeds.sh <tool dir> <out dir>
set -eu
bin=$1
out=$2
VT=$bin/verity-tool
IT=$bin/integrity-tool
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dmt-seeds-XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
for t in verity_sb verity_verify integrity_sb integrity_check verity_cli \
	integrity_cli luks2_header luks2_json; do
	rm -rf "${out:?}/$t"
	mkdir -p "$out/$t"
done

# deterministic bytes: mkdata <count> <seed>
mkdata() {
	perl -e 'srand($ARGV[1]);
		print map { chr(int(rand(256))) } 1..$ARGV[0]' "$1" "$2"
}
# a root hash as 64 bytes, zero-padded
root64() {
	perl -e 'print pack("H*", $ARGV[0]);
		print "\0" x (64 - length($ARGV[0]) / 2)' "$1"
}
# le64 le64 u8 le16
sizes() { perl -e 'print pack("Q<Q<CS<", @ARGV)' "$@"; }
root_of() { sed -n 's/^Root hash:[[:space:]]*//p' "$1"; }

# ---- verity: superblocks and small images ----
i=0
for spec in "sha256 512 512 1 32" "sha1 512 1024 1 0" "sha512 1024 1024 0 1" \
	"sha256 4096 4096 1 256" "md5 512 512 0 7" "sha384 512 4096 1 64" \
	"sha256 512 512 0 32" "sha224 1024 512 1 16"; do
	set -- $spec
	i=$((i + 1))
	blocks=$(( (i * 5) % 32 + 1 ))
	[ "$2" = 512 ] || blocks=$(( 4096 / $2 ))
	[ "$blocks" -ge 1 ] || blocks=1
	n=$(( blocks * $2 ))
	mkdata "$n" "$i" > "$tmp/d"
	salt=-
	[ "$5" = 0 ] ||
		salt=$(mkdata "$5" "$((i + 100))" | od -An -tx1 | tr -d ' \n')
	"$VT" build --hash "$1" --data-block-size "$2" --hash-block-size "$3" \
		--format "$4" --salt "$salt" \
		--uuid "12345678-1234-4234-8234-12345678900$((i % 10))" \
		"$tmp/d" "$tmp/h" > "$tmp/out"
	head -c 512 "$tmp/h" > "$out/verity_sb/$i"
	# verity_verify wants 512-byte data blocks: n % 32 + 1 of them
	if [ "$2" = 512 ]; then
		{
			perl -e 'print chr($ARGV[0] - 1)' "$blocks"
			root64 "$(root_of "$tmp/out")"
			cat "$tmp/d" "$tmp/h"
		} > "$out/verity_verify/$i"
	fi
	rm -f "$tmp/h"
done

# ---- integrity: superblocks and small images ----
i=0
for opts in "" "--sector-size 4096" "-I sha256" "-I xxhash64 --tag-size 8" \
	"--integrity-legacy-padding --interleave-sectors 256" \
	"--integrity-legacy-hmac" "-I crc32 --integrity-bitmap-mode" \
	"--journal-integrity hmac-sha256 --journal-integrity-key-file KEY" \
	"-I hmac-sha256 --integrity-key-file KEY" "--no-wipe" \
	"--sector-size 1024 --tag-size 2"; do
	i=$((i + 1))
	# the key fuzz_integrity_check.c uses
	printf 'fuzzing key for hmac(sha256)...\0' > "$tmp/key"
	mkdata 12345 "$i" > "$tmp/payload"
	rm -f "$tmp/img"
	o=$(echo "$opts" | sed "s|KEY|$tmp/key|")
	data_from="--data-from $tmp/payload"
	case "$opts" in *no-wipe*) data_from= ;; esac
	seed="--seed seed$i"
	case "$opts" in *legacy-hmac*) seed= ;; esac
	# shellcheck disable=SC2086
	"$IT" format -q --device-size 128K --journal-size 8K \
		--interleave-sectors 64 $seed $o $data_from "$tmp/img" \
		>/dev/null 2>&1 ||
	"$IT" format -q --device-size 256K $seed $o $data_from \
		"$tmp/img" >/dev/null
	sz=$(wc -c < "$tmp/img")
	{ head -c 512 "$tmp/img"; sizes $((sz / 512)) $((sz / 512)) 0 128; } \
		> "$out/integrity_sb/$i"
	case "$opts" in
	*"hmac-sha256 --integrity-key"*) alg=5 ;;
	"-I sha256") alg=2 ;;
	*xxhash64*) alg=3 ;;
	*"-I crc32 "*) alg=1 ;;
	*) alg=0 ;;
	esac
	case "$opts" in *journal-integrity*) alg=$((alg + 128)) ;; esac
	{ perl -e 'print chr($ARGV[0])' "$alg"; cat "$tmp/img"; } \
		> "$out/integrity_check/$i"
done
# a separate metadata device
mkdata 65536 3 > "$tmp/ddev"
rm -f "$tmp/meta"
truncate -s 128K "$tmp/meta"
"$IT" format -q --data-device "$tmp/ddev" "$tmp/meta" >/dev/null
{ head -c 512 "$tmp/meta"; sizes 256 128 1 128; } > "$out/integrity_sb/meta"

# ---- command lines (one argument per line) and dictionaries ----
n=0
cli() {
	n=$((n + 1))
	dir=$1
	shift
	printf '%s\n' "$@" | head -c -1 > "$out/$dir/$n"
}
cli verity_cli build d x
cli verity_cli build --data-block-size 512 --hash-block-size 512 --salt - d x
cli verity_cli build --format 0 --hash sha1 --json --seed s d x
cli verity_cli build --no-superblock --data-blocks 8 --hash-offset 8192 d d
cli verity_cli verify --root-hash-file r d h
cli verity_cli verify --json d h 00
cli verity_cli verify --no-superblock --salt 0011223344 --data-block-size 512 \
	--hash-block-size 512 --hash-offset 512 d h 00
cli verity_cli dump h
cli verity_cli dump --json --hash-offset 0 h
cli verity_cli size --data-size 1G --hash sha512 --json
cli verity_cli size d --data-blocks 3
cli verity_cli --version
cli verity_cli build --progress-json --progress-frequency 1 --threads 2 d x
cli integrity_cli check i
cli integrity_cli check --json --allow-discards i
cli integrity_cli dump --json i
cli integrity_cli recalculate --integrity-recalculate-reset i
cli integrity_cli format --device-size 64K --seed s n
cli integrity_cli format --device-size auto --data-from p -I sha256 n
cli integrity_cli format --no-wipe --sector-size 4096 --tag-size 8 \
	-I xxhash64 i
cli integrity_cli format -I hmac-sha256 --integrity-key-file k \
	--integrity-key-size 32 i
cli integrity_cli format --journal-integrity hmac-sha256 \
	--journal-integrity-key-file k i
cli integrity_cli format --integrity-bitmap-mode --bitmap-sectors-per-bit 64 i
cli integrity_cli format --data-device p i
cli integrity_cli size --payload-size 1M --json --integrity-legacy-padding
cli integrity_cli check --buffer-sectors 8 --threads 2 i

dict() {
	"$1" --help 2>/dev/null | grep -o -- '--[a-z0-9-]*' | sort -u |
		sed 's/.*/"&"/'
	shift
	for w in "$@"; do printf '"%s"\n' "$w"; done
}
dict "$VT" build format verify dump size d h e r x 512 4096 sha1 sha256 \
	sha512 md5 - 0 1 > "$out/verity_cli.dict"
dict "$IT" format check recalculate dump size i p k e n 512 4096 auto \
	crc32c crc32 sha256 xxhash64 hmac-sha256 64K 1M \
	> "$out/integrity_cli.dict"
echo "seeds: $(find "$out" -type f | wc -l) files in $out"

# ---- LUKS2: header areas crypt-tool writes (both copies and the start of
# the keyslots area) ----
CT=$bin/crypt-tool
printf 'seed passphrase' > "$tmp/pw"
mkdata 5000 7 > "$tmp/pay"
i=0
for spec in "--pbkdf pbkdf2 --pbkdf-force-iterations 1000" \
	"--pbkdf argon2id --pbkdf-force-iterations 4 --pbkdf-memory 32 --pbkdf-parallel 1 --label seed --subsystem fuzz" \
	"--pbkdf pbkdf2 --pbkdf-force-iterations 1000 --luks2-metadata-size 64k --cipher aes-cbc-essiv:sha256 --sector-size 512" \
	"--pbkdf argon2i --pbkdf-force-iterations 4 --pbkdf-memory 32 --pbkdf-parallel 1 --key-slot 3 --hash sha512"; do
	i=$((i + 1))
	rm -f "$tmp/l"
	# shellcheck disable=SC2086
	"$CT" format -q $spec --key-file "$tmp/pw" \
		--uuid "12345678-1234-4234-8234-12345678900$i" \
		--data-from "$tmp/pay" "$tmp/l"
	head -c 139264 "$tmp/l" > "$out/luks2_header/$i"
done
# ---- LUKS2 JSON (structure-aware, fuzz_luks2_json): the JSON text of
# those headers, and fuzz/luks2_json/*.json (luksFormat's, an interrupted
# reencryption, several segments and unknown types, the segment flags that
# are not an array which once aborted crypt-tool inside json-c) ----
for f in "$out"/luks2_header/*; do
	dd if="$f" bs=4096 skip=1 count=3 2>/dev/null | tr -d '\000' \
		> "$out/luks2_json/ours-$(basename "$f").json"
done
cp "$(dirname "$0")"/luks2_json/*.json "$out/luks2_json/"
