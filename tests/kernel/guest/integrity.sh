#!/bin/sh
# SPDX-License-Identifier: MIT
# Guest side of a dm-integrity case. Environment (from the host):
#   IMG [DDEV]     image (metadata device) and optional separate data device
#   OPEN           `integritysetup open` options matching the format, or
#   TABLE          a dm table (legacy images) with @DEV@ = data device,
#                  @META@ = metadata device, @LEN@ = provided_data_sectors
#                  from the superblock, loaded with `dmsetup create`
#   KEYFILE        hmac key file (in the case directory), if any
#   PROVIDED       expected mapped size in bytes
#   BS             sector (block) size in bytes
#   EXPSHA         sha256 of the whole mapped device ("" = don't check)
#   REGION         "OFFSET LENGTH SHA256": a byte range with known content
#   WRITE=1        write 64 KiB through the device, reopen, read it back
#   BAD            blocks whose reads must fail (EILSEQ, "Checksum failed")
#   GOOD           blocks that must still read fine (with BAD)
#   FORMAT         integritysetup format options: format the image here first
#                  (with wipe) and fill half of it with random data;
#                  "kernel": let the kernel format it through TABLE instead
#   PAYLOAD        with FORMAT: write this file (then zeros) instead
m=$(dev "$IMG")
data=$m
ddopt=
if [ -n "${DDEV:-}" ]; then
	data=$(dev "$DDEV")
	ddopt="--data-device $data"
fi

sb_provided() { dd if="$m" bs=512 count=1 2>/dev/null | od -An -tu8 -j16 -N8 | tr -d ' '; }
iopen() {
	if [ -n "${TABLE:-}" ]; then
		t=$(echo "$TABLE" | sed "s,@DEV@,$data,g; s,@META@,$m,g; s,@LEN@,${1:-$(sb_provided)},g")
		must dmsetup create ki --table "$t"
	else
		# shellcheck disable=SC2086
		must integritysetup open $OPEN $ddopt "$m" ki
	fi
}
iclose() {
	if [ -n "${TABLE:-}" ]; then must dmsetup remove ki; else must integritysetup close ki; fi
}
mismatches() { dmsetup status ki | awk '{print $4}'; }

if [ "${FORMAT:-}" = kernel ]; then
	# A zeroed superblock makes the kernel format (superblock + journal).
	must dd if=/dev/zero of="$m" bs=4096 count=1 conv=fsync
	iopen 8
	iclose
	note "kernel formatted the image through: $TABLE"
elif [ -n "${FORMAT:-}" ]; then
	# shellcheck disable=SC2086
	must integritysetup format -q --batch-mode $FORMAT $ddopt "$m"
fi
if [ -n "${FORMAT:-}" ]; then
	iopen
	sz=$(size_of /dev/mapper/ki)
	if [ -n "${PAYLOAD:-}" ]; then
		psz=$(wc -c <"$PAYLOAD")
		[ "$psz" -le "$sz" ] || fail "harness: payload larger than the device"
		{
			cat "$PAYLOAD"
			head -c $((sz - psz)) /dev/zero
		} | $KT_DD of=/dev/mapper/ki bs=65536 iflag=fullblock oflag=direct conv=fsync 2>/tmp/w.err ||
			fail "writing the payload failed: $(head -n 1 /tmp/w.err)"
		note "wrote $PAYLOAD and zeros over the whole device"
	else
		half=$((sz / 2 / 65536))
		must dd if=/dev/urandom of=/dev/mapper/ki bs=65536 count=$half oflag=direct conv=fsync
		note "formatted in the guest and wrote $half x 64 KiB of random data"
	fi
	iclose
fi

prov0=$(sb_provided)
iopen
sz=$(size_of /dev/mapper/ki)
if [ -n "${PROVIDED:-}" ] && [ "$sz" != "$PROVIDED" ]; then
	fail "mapped size $sz, expected $PROVIDED (provided_data_sectors)"
fi

if [ -n "${BAD:-}" ]; then
	for b in $BAD; do
		dmesg -c >/dev/null
		rd /dev/mapper/ki "$BS" "$b" 1 && fail "read of corrupted block $b succeeded"
		case "$RD_ERR" in
		*"multibyte"* | *"Illegal byte"* | *"I/O error"* | *"Input/output error"*) ;;
		*) fail "read of block $b failed with '$RD_ERR', expected EILSEQ" ;;
		esac
		hex=$(printf %x $((b * BS / 512)))
		dm_logged "Checksum failed at sector 0x${hex}( |$)" rd /dev/mapper/ki "$BS" "$b" 1 || fail "kernel did not log 'Checksum failed at sector 0x$hex' for block $b"
		note "block $b: $RD_ERR; kernel: $(dmesg | grep -m1 'Checksum failed' | sed 's/^\[[^]]*\] //')"
	done
	for b in $GOOD; do
		rd /dev/mapper/ki "$BS" "$b" 1 || fail "read of untouched block $b failed: $RD_ERR"
	done
	mm=$(mismatches)
	n=$(echo $BAD | wc -w)
	[ "$mm" -ge "$n" ] || fail "dmsetup status counts $mm mismatches, expected at least $n"
	note "corruption detected; mismatch count $mm"
	iclose
	exit 0
fi

rd /dev/mapper/ki 65536 || fail "read of the integrity device failed: $RD_ERR"
if [ -n "${EXPSHA:-}" ] && [ "$RD_SHA" != "$EXPSHA" ]; then
	fail "integrity device content differs from the expected payload (sha256 $RD_SHA, expected $EXPSHA)"
fi
if [ -n "${REGION:-}" ]; then
	set -- $REGION
	r=$(dd if=/dev/mapper/ki bs=512 skip=$(($1 / 512)) count=$(($2 / 512)) 2>/dev/null | sha256sum | cut -d' ' -f1)
	[ "$r" = "$3" ] || fail "bytes $1..+$2 differ from what the host wrote"
fi
mm=$(mismatches)
[ "$mm" = 0 ] || fail "dmsetup status counts $mm mismatches after a clean read"
note "clean read OK: $sz bytes${EXPSHA:+, sha256 matches}"

if [ "${WRITE:-}" = 1 ]; then
	off=$((sz / 2 / 65536))
	dd if=/dev/urandom of=/tmp/pat bs=65536 count=1 2>/dev/null
	must dd if=/tmp/pat of=/dev/mapper/ki bs=65536 seek=$off count=1 oflag=direct conv=fsync
	iclose
	iopen
	rd /dev/mapper/ki 65536 "$off" 1 || fail "reading back the written block failed: $RD_ERR"
	[ "$RD_SHA" = "$(sha256sum </tmp/pat | cut -d' ' -f1)" ] || fail "data written through dm-integrity did not read back"
	[ "$(mismatches)" = 0 ] || fail "mismatches after write and reopen"
	note "write at 64 KiB block $off, close, reopen, read back: OK"
fi
iclose
prov1=$(sb_provided)
[ "$prov0" = "$prov1" ] || fail "the kernel rewrote provided_data_sectors in the superblock: $prov0 -> $prov1"
