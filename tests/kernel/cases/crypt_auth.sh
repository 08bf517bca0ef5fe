#!/bin/bash
# SPDX-License-Identifier: MIT
# Authenticated dm-crypt (LUKS2 with an integrity segment), made offline by
# crypt-tool format --integrity and checked by crypt-tool check / decrypt:
#  crypt-auth-COMBO-SS        forward: crypt-tool format (payload + --wipe) on the
#                             host; the guest opens it with cryptsetup, with
#                             and without --integrity-no-journal, reads every
#                             sector of the mapped device and compares with
#                             payload + zeros, writes 64 KiB through dm-crypt
#                             and closes; crypt-tool check then still passes.
#  crypt-auth-COMBO-SS.corrupt one ciphertext byte and one tag byte flipped:
#                             crypt-tool check names exactly those sectors
#                             (512-byte units) and the kernel fails them with
#                             EILSEQ and "INTEGRITY AEAD ERROR, sector N".
#  crypt-auth-nowipe-*        without wipe: the payload reads back.
#  crypt-auth-rev-*           reverse: luksFormat --integrity (with the
#                             kernel's wipe) in the guest, a payload written
#                             through dm-crypt; crypt-tool check passes and
#                             crypt-tool decrypt gives the payload back.
: "${CRYPT_TOOL:=$(cd "$(dirname "${VERITY_TOOL:-build/x}")" 2>/dev/null && pwd)/crypt-tool}"
CA_KEY=(--key-file pass.bin)
CA_DOFF=1048576		# data offset: keeps the images small
CA_PAYLOAD=1048576

# COMBO name -> "cipher integrity keybytes"
ca_combo() {
	case "$1" in
	xts-hmac-sha256) echo "aes-xts-random hmac-sha256 64" ;;
	xts-hmac-sha512) echo "aes-xts-random hmac-sha512 64" ;;
	xts-hmac-sha1) echo "aes-xts-random hmac-sha1 64" ;;
	gcm-aead) echo "aes-gcm-random aead 32" ;;
	chacha20-poly1305) echo "chacha20-random poly1305 32" ;;
	aegis128-aead) echo "aegis128-random aead 16" ;;
	esac
}

ca_fwd() { # COMBO SS [nowipe|detached]
	local -a c
	read -r -a c <<<"$(ca_combo "$1")"
	local ss=$2 nowipe="" detached="" doff=$CA_DOFF
	case "${3:-}" in
	nowipe) nowipe=1 ;;
	detached) detached=1 doff=0 ;;
	esac
	[ -x "$CRYPT_TOOL" ] || fail "host tool failed: $CRYPT_TOOL not found (make tools)"
	printf 'kernel test passphrase' >pass.bin
	mkrand payload.bin "$CA_PAYLOAD"
	rm -f img.bin hdr.bin
	local -a w=(--wipe) h=()
	[ -n "$nowipe" ] && w=()
	[ -n "$detached" ] && h=(--header hdr.bin)
	tool "$CRYPT_TOOL" format --json --type luks2 --cipher "${c[0]}" \
		--integrity "${c[1]}" --key-size $((c[2] * 8)) --sector-size "$ss" \
		--offset $((doff / 512)) --pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
		"${CA_KEY[@]}" --data-from payload.bin "${w[@]}" "${h[@]}" img.bin
	local prov
	prov=$(($(grep '"mapped_size"' "$TOOL_OUT" | tr -dc 0-9) / 512))
	[ -n "$nowipe" ] || tool "$CRYPT_TOOL" check "${CA_KEY[@]}" "${h[@]}" img.bin
	cp img.bin img.orig
	echo "$prov" >prov
	ready
	genv IMG img.bin
	genv PASS pass.bin
	genv BS "$ss"
	genv MAPPED $((prov * 512))
	if [ -n "$nowipe" ]; then
		genv READLEN "$CA_PAYLOAD"
		genv EXPSHA "$(sha_of payload.bin)"
	else
		genv EXPSHA "$(sha_range payload.bin 0 $((prov * 512)))"
		genv WRITE 1
	fi
	attach img.bin
	if [ -n "$detached" ]; then
		genv HDR hdr.bin
		attach hdr.bin
	fi
	gfile pass.bin
	guest crypt_auth
	[ -n "$nowipe" ] || hook ca_after_write "${h[@]}"
}
ca_after_write() {
	tool "$CRYPT_TOOL" check "${CA_KEY[@]}" "$@" img.bin
}

# The dm-integrity part of the image starts at CA_DOFF: geometry from there.
ca_corrupt() { # PARENT SS
	local parent=$1 ss=$2
	cp "$KW/c/$parent/img.orig" img.bin
	cp "$KW/c/$parent/pass.bin" pass.bin
	tail -c +$((CA_DOFF + 1)) img.bin | head -c 4096 >sb.bin
	igeom sb.bin
	local spb=$((ss / 512)) nblk=$((G_PROV * 512 / ss))
	local a=$((nblk / 3)) b=$((nblk * 2 / 3)) c=$((nblk / 2))
	flip_host img.bin $((CA_DOFF + $(idata_off $((a * spb))) + 100))
	flip_host img.bin $((CA_DOFF + $(itag_off $((b * spb))) + 1))
	tool_rc 2 "$CRYPT_TOOL" check "${CA_KEY[@]}" img.bin
	local got want
	got=$(grep '^bad sector ' "$TOOL_OUT" | awk '{print $3}' | tr '\n' ' ')
	want="$((a * spb)) $((b * spb)) "
	[ "$got" = "$want" ] || fail "crypt-tool check named sectors '$got', expected '$want'"
	genv IMG img.bin
	genv PASS pass.bin
	genv BS "$ss"
	genv BAD "$a $b"
	genv GOOD "$c 0"
	attach img.bin
	gfile pass.bin
	guest crypt_auth
}

ca_rev() { # COMBO SS
	local -a c
	read -r -a c <<<"$(ca_combo "$1")"
	local ss=$2
	[ -x "$CRYPT_TOOL" ] || fail "host tool failed: $CRYPT_TOOL not found (make tools)"
	printf 'kernel test passphrase' >pass.bin
	mkrand payload.bin "$CA_PAYLOAD"
	rm -f img.bin
	truncate -s 4M img.bin
	genv IMG img.bin
	genv PASS pass.bin
	genv FORMAT "--type luks2 --cipher ${c[0]} --integrity ${c[1]} --key-size $((c[2] * 8)) --sector-size $ss --offset 2048 --pbkdf pbkdf2 --pbkdf-force-iterations 1000"
	genv PAYLOAD payload.bin
	attach img.bin
	gfile pass.bin
	gfile payload.bin
	guest crypt_auth
	hook ca_rev_after
}
ca_rev_after() {
	tool "$CRYPT_TOOL" check "${CA_KEY[@]}" img.bin
	rm -f out.bin
	tool "$CRYPT_TOOL" decrypt "${CA_KEY[@]}" img.bin out.bin
	cmp -n "$CA_PAYLOAD" out.bin payload.bin >/dev/null || fail "crypt-tool decrypt of the kernel's image differs from what was written"
}

for combo in xts-hmac-sha256 xts-hmac-sha512 xts-hmac-sha1 gcm-aead chacha20-poly1305 aegis128-aead; do
	for ss in 512 4096; do
		kcase "crypt-auth-$combo-$ss" ca_fwd "$combo" "$ss"
		kcase_after "crypt-auth-$combo-$ss" "crypt-auth-$combo-$ss.corrupt" ca_corrupt "crypt-auth-$combo-$ss" "$ss"
	done
done
kcase crypt-auth-nowipe-gcm-aead-4096 ca_fwd gcm-aead 4096 nowipe
kcase crypt-auth-detached-xts-hmac-sha512-4096 ca_fwd xts-hmac-sha512 4096 detached
kcase crypt-auth-detached-chacha20-poly1305-512 ca_fwd chacha20-poly1305 512 detached
kcase crypt-auth-rev-xts-hmac-sha256-4096 ca_rev xts-hmac-sha256 4096
kcase crypt-auth-rev-gcm-aead-512 ca_rev gcm-aead 512
kcase crypt-auth-rev-aegis128-aead-4096 ca_rev aegis128-aead 4096
