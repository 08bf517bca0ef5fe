#!/bin/sh
# SPDX-License-Identifier: MIT
# Guest side of an authenticated dm-crypt case (cases/crypt_auth.sh).
# Environment (from the host):
#   IMG PASS      image and passphrase file
#   HDR           detached LUKS2 header (IMG is then the data device)
#   FORMAT        cryptsetup luksFormat options: format IMG here (with the
#                 kernel's wipe), then write PAYLOAD through dm-crypt
#   PAYLOAD       with FORMAT: the file to write
#   MAPPED        expected mapped size in bytes
#   EXPSHA        sha256 of the whole mapped device
#   READLEN       read only the first READLEN bytes (no-wipe images)
#   BS            sector size
#   BAD           sectors (BS units) whose reads must fail with EILSEQ and
#                 "INTEGRITY AEAD ERROR, sector <512-byte number>"
#   GOOD          sectors that must still read
#   WRITE=1       write 64 KiB through the device and close cleanly
i=$(dev "$IMG")
hdr=
[ -n "${HDR:-}" ] && hdr="--header $(dev "$HDR")"
# shellcheck disable=SC2086
copen() { must cryptsetup open $hdr --key-file "$PASS" "$@" "$i" ca; }
cclose() { must cryptsetup close ca; }

if [ -n "${FORMAT:-}" ]; then
	# shellcheck disable=SC2086
	must cryptsetup luksFormat -q --batch-mode $FORMAT --key-file "$PASS" "$i"
	copen
	sz=$(size_of /dev/mapper/ca)
	psz=$(wc -c <"$PAYLOAD")
	[ "$psz" -le "$sz" ] || fail "harness: payload larger than the device"
	must $KT_DD if="$PAYLOAD" of=/dev/mapper/ca bs=65536 oflag=direct conv=fsync
	note "luksFormat $FORMAT; wrote $psz bytes through dm-crypt (mapped $sz)"
	cclose
	exit 0
fi

for jflag in "" --integrity-no-journal; do
	# shellcheck disable=SC2086
	copen $jflag
	sz=$(size_of /dev/mapper/ca)
	[ -z "${MAPPED:-}" ] || [ "$sz" = "$MAPPED" ] || fail "mapped size $sz, expected $MAPPED"
	if [ -n "${BAD:-}" ]; then
		for b in $BAD; do
			dmesg -c >/dev/null
			rd /dev/mapper/ca "$BS" "$b" 1 && fail "read of corrupted sector $b succeeded"
			case "$RD_ERR" in
			*"multibyte"* | *"Illegal byte"*) ;;
			*) fail "read of sector $b failed with '$RD_ERR', expected EILSEQ" ;;
			esac
			s=$((b * BS / 512))
			dm_logged "INTEGRITY AEAD ERROR, sector $s\$" rd /dev/mapper/ca "$BS" "$b" 1 ||
				fail "kernel did not log 'INTEGRITY AEAD ERROR, sector $s'"
			note "sector $b: $RD_ERR; kernel: $(dmesg | grep -m1 'AEAD ERROR' | sed 's/^\[[^]]*\] //')"
		done
		for b in $GOOD; do
			rd /dev/mapper/ca "$BS" "$b" 1 || fail "read of untouched sector $b failed: $RD_ERR"
		done
		cclose
		continue
	fi
	if [ -n "${READLEN:-}" ]; then
		rd_bytes /dev/mapper/ca 0 "$READLEN" || fail "read of the payload failed: $RD_ERR"
	else
		rd /dev/mapper/ca 65536 || fail "read of the mapped device failed ($jflag): $RD_ERR"
	fi
	[ "$RD_SHA" = "$EXPSHA" ] || fail "mapped device ($jflag) differs from the payload (sha256 $RD_SHA, expected $EXPSHA)"
	note "read back OK $jflag: ${READLEN:-$sz} bytes"
	cclose
done
[ -n "${BAD:-}" ] && exit 0

if [ "${WRITE:-}" = 1 ]; then
	copen
	dd if=/dev/urandom of=/tmp/pat bs=65536 count=1 2>/dev/null
	must $KT_DD if=/tmp/pat of=/dev/mapper/ca bs=65536 seek=1 count=1 oflag=direct conv=fsync
	cclose
	copen
	rd /dev/mapper/ca 65536 1 1 || fail "reading back the written block failed: $RD_ERR"
	[ "$RD_SHA" = "$(sha256sum </tmp/pat | cut -d' ' -f1)" ] || fail "data written through dm-crypt did not read back"
	cclose
	note "write at 64 KiB, close, reopen, read back: OK"
fi
exit 0
