#!/bin/sh
# SPDX-License-Identifier: MIT
# Guest side of a dm-verity case. Environment (from the host):
#   DATA HASH [FEC]  image files (HASH may equal DATA: appended tree)
#   ROOT             root hash (hex)
#   OPEN             extra `veritysetup open` options (matching the build)
#   DBS NBLK         data block size and number of data blocks
#   SHA              sha256 of the first NBLK*DBS bytes of DATA
#   CORRUPT          data block to corrupt afterwards ("" = none)
#   FEC_ROOTS        set when FEC is used: the corrupted read must be corrected
d=$(dev "$DATA")
h=$(dev "$HASH")
fecopt=
[ -n "${FEC:-}" ] && fecopt="--fec-device $(dev "$FEC") --fec-roots $FEC_ROOTS"

vopen() {
	# shellcheck disable=SC2086
	must veritysetup open $OPEN $fecopt "$d" kv "$h" "$ROOT"
}
vclose() { must veritysetup close kv; }

vopen
sz=$(size_of /dev/mapper/kv)
[ "$sz" = $((NBLK * DBS)) ] || fail "mapped size $sz, expected $((NBLK * DBS))"
rd /dev/mapper/kv 65536 || fail "read of the verity device failed: $RD_ERR"
[ "$RD_SHA" = "$SHA" ] || fail "verity device content differs from the data image (sha256 $RD_SHA, expected $SHA)"
st=$(dmsetup status kv)
case "$st" in
*" V"*) ;;
*) fail "dmsetup status '$st' does not say V" ;;
esac
note "clean read OK: $sz bytes, sha256 matches"
vclose

[ -n "${CORRUPT:-}" ] || exit 0
flip_byte "$d" $((CORRUPT * DBS + 77 % DBS))
dmesg -c >/dev/null
vopen
if [ -n "${FEC:-}" ]; then
	rd /dev/mapper/kv 65536 || fail "read with one corrupted data block failed despite FEC: $RD_ERR"
	[ "$RD_SHA" = "$SHA" ] || fail "FEC-corrected content differs from the original data"
	dm_logged 'verity-fec.*corrected|FEC.*corrected' rd /dev/mapper/kv 65536 || fail "read succeeded but the kernel logged no FEC correction"
	note "corrupted block $CORRUPT was corrected by FEC"
else
	rd /dev/mapper/kv 65536 && fail "read of a device with corrupted data block $CORRUPT succeeded"
	if [ "$CORRUPT" -gt 0 ]; then
		rd_bytes /dev/mapper/kv 0 $((CORRUPT * DBS)) || fail "blocks before the corrupted block $CORRUPT are unreadable: $RD_ERR"
	fi
	rd /dev/mapper/kv "$DBS" "$CORRUPT" 1 && fail "read of corrupted data block $CORRUPT succeeded"
	case "$RD_ERR" in
	*"I/O error"* | *"Input/output error"*) ;;
	*) fail "read failed with '$RD_ERR', expected an I/O error (EIO)" ;;
	esac
	dm_logged "data block $CORRUPT is corrupted" rd /dev/mapper/kv "$DBS" "$CORRUPT" 1 || fail "kernel did not log 'data block $CORRUPT is corrupted'"
	rd_bytes /dev/mapper/kv $(((CORRUPT + 1) * DBS)) $(((NBLK - CORRUPT - 1) * DBS)) || fail "blocks after the corrupted one are unreadable: $RD_ERR"
	case "$(dmsetup status kv)" in
	*" C"*) ;;
	*) fail "dmsetup status '$(dmsetup status kv)' does not say C after corruption" ;;
	esac
	note "corruption of data block $CORRUPT detected with EIO"
fi
vclose
