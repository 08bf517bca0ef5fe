#!/bin/bash
# SPDX-License-Identifier: MIT
# Kernel conformance suite: checks images made by verity-tool and
# integrity-tool against the real dm-verity / dm-integrity of the installed
# Debian kernel, booted under QEMU. See tests/kernel/README.md.
#
# Environment:
#   O                 build directory (default build); work goes to $O/kernel
#   VERITY_TOOL       default $O/verity-tool   ("none": skip those cases)
#   INTEGRITY_TOOL    default $O/integrity-tool ("none": skip those cases)
#   FSVERITY_TOOL     default $O/fsverity-tool ("none": skip those cases)
#   NO_DEPS=1         do not apt-get install missing packages
#   KT_CASES          space-separated globs: run only matching cases
#   KT_ACCEL          auto (default: probe KVM once), kvm or tcg
#   KT_BOOT_TIMEOUT   seconds per boot (default: 90 + 10 per case)
#   KT_CASE_TIMEOUT   seconds per case inside the guest (default 180)
#   KT_LIST=1         only list the case names
set -u
export LC_ALL=C

KT_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=${O:-build}
mkdir -p "$O/kernel"
O=$(cd "$O" && pwd)
KT_O=$O/kernel
KW=$KT_O/work
VERITY_TOOL=${VERITY_TOOL:-$O/verity-tool}
INTEGRITY_TOOL=${INTEGRITY_TOOL:-$O/integrity-tool}
FSVERITY_TOOL=${FSVERITY_TOOL:-$O/fsverity-tool}
export VERITY_TOOL INTEGRITY_TOOL FSVERITY_TOOL
KT_CASE_TIMEOUT=${KT_CASE_TIMEOUT:-180}
KT_MAX_BOOTS=${KT_MAX_BOOTS:-8}

. "$KT_SRC/deps.sh"
. "$KT_SRC/kimage.sh"
. "$KT_SRC/hostlib.sh"

KT_T0=$(date +%s.%N)
KT_PHASE_T=$KT_T0
phase() { # NAME: print the time since the previous phase mark
	local now
	now=$(date +%s.%N)
	awk -v n="$now" -v t0="$KT_T0" -v tp="$KT_PHASE_T" -v name="$1" -v extra="${2:+  $2}" 'BEGIN { printf "kernel: [%6.1fs] %-30s %6.1fs%s\n", n - t0, name, n - tp, extra }'
	KT_PHASE_T=$now
}

# ---- cleanup: no QEMU may survive us ---------------------------------------
KT_QEMU_PIDS=()
kt_kill_tree() { # PID: kill a process and its descendants (by id)
	local c
	for c in $(sed -n 's/^\([0-9]*\) (.*) [A-Za-z] \([0-9]*\) .*/\1 \2/p' /proc/[0-9]*/stat 2>/dev/null | awk -v p="$1" '$2 == p {print $1}'); do
		kt_kill_tree "$c"
	done
	kill -KILL "$1" 2>/dev/null
}
kt_cleanup() {
	local p
	disown -a 2>/dev/null # no "Killed" job notices
	for p in "${KT_QEMU_PIDS[@]}"; do
		kt_kill_tree "$p"
	done
	for p in "$KT_O"/*.qemu.pid; do
		[ -e "$p" ] || continue
		kill -KILL "$(cat "$p")" 2>/dev/null
		rm -f "$p"
	done
}
trap kt_cleanup EXIT
trap 'kt_cleanup; echo "kernel: interrupted" >&2; exit 130' INT TERM HUP

# ---- VM ---------------------------------------------------------------------
KT_CMDLINE="console=ttyS0 quiet panic=-1 8250.nr_uarts=1 mitigations=off tsc=reliable cryptomgr.notests ipv6.disable=1 apparmor=0 initcall_blacklist=crypto_kdf108_init,init_encrypted,init_kprobe_trace"

# kt_boot TAG ACCEL TIMEOUT JOBTAR OUTIMG DISKLIST
# DISKLIST lines: "SERIAL FILE". Returns QEMU's (timeout's) exit status.
kt_boot() {
	local tag=$1 accel=$2 tmo=$3 job=$4 outimg=$5 list=$6
	local -a args
	local jobsize n=0 serial file bridge=0 slot=0 rc
	jobsize=$(stat -c %s "$job")
	truncate -s 0 "$outimg"
	truncate -s 64M "$outimg"
	case "$accel" in
	kvm) args=(-accel kvm -cpu host -smp 2) ;;
	*) args=(-accel tcg,thread=multi -cpu max -smp 2) ;;
	esac
	args+=(-M pc -m 1024 -nodefaults -no-reboot -display none -monitor none
		-serial "file:$KT_O/$tag.console"
		-kernel "$KT_O/vmlinux" -initrd "$KT_O/initramfs.cpio"
		-pidfile "$KT_O/$tag.qemu.pid")
	# Disks go onto PCI bridges (31 slots each), the job and out disks first.
	while read -r serial file; do
		if [ "$slot" = 0 ]; then
			bridge=$((bridge + 1))
			args+=(-device "pci-bridge,id=br$bridge,chassis_nr=$bridge,bus=pci.0,addr=$(printf 0x%x $((bridge + 4))),shpc=off")
			slot=1
		fi
		local ro=""
		[ "$serial" = job ] && ro=",readonly=on"
		args+=(-drive "file=$file,if=none,id=d$n,format=raw,cache=unsafe$ro"
			-device "virtio-blk-pci,drive=d$n,serial=$serial,bus=br$bridge,addr=$(printf 0x%x "$slot")")
		n=$((n + 1))
		slot=$((slot + 1))
		[ "$slot" -gt 31 ] && slot=0
	done < <(printf 'job %s\nout %s\n' "$job" "$outimg"; cat "$list")
	args+=(-append "$KT_CMDLINE kt.job=$jobsize kt.disks=$n")
	echo "qemu-system-x86_64 ${args[*]}" >"$KT_O/$tag.cmd"
	# In a subshell, so that a QEMU killed by a signal (e.g. an assertion under
	# a broken KVM) is not reported by this shell as "Aborted".
	(
		timeout -k 5 "$tmo" qemu-system-x86_64 "${args[@]}"
		exit $?
	) </dev/null >"$KT_O/$tag.qemu.log" 2>&1 &
	KT_QEMU_PIDS+=($!)
	wait $!
	rc=$?
	if [ -e "$KT_O/$tag.qemu.pid" ]; then
		kill -KILL "$(cat "$KT_O/$tag.qemu.pid")" 2>/dev/null
		rm -f "$KT_O/$tag.qemu.pid"
	fi
	return $rc
}

# kt_job DIR TAR: pack a job directory (runner, library, guest scripts).
kt_job() {
	local dir=$1 tar=$2
	mkdir -p "$dir/scripts"
	cp "$KT_SRC/guest/runner.sh" "$KT_SRC/guest/lib.sh" "$dir/"
	cp "$KT_SRC"/guest/*.sh "$dir/scripts/"
	echo "$KT_CASE_TIMEOUT" >"$dir/case-timeout"
	touch "$dir/cases" "$dir/disks"
	tar -c -f "$tar" -C "$dir" . || return 1
}

# KVM: one short boot that must answer, otherwise TCG (kernel-vm.md).
kt_choose_accel() {
	local want=${KT_ACCEL:-auto} d=$KT_O/probe cache=$KT_O/accel
	case "$want" in
	kvm | tcg)
		KT_ACCEL_USED=$want
		KT_ACCEL_WHY="KT_ACCEL=$want"
		return
		;;
	esac
	if [ ! -w /dev/kvm ]; then
		KT_ACCEL_USED=tcg
		KT_ACCEL_WHY="no usable /dev/kvm"
		return
	fi
	if [ -s "$cache" ] && [ "$(sed -n 2p "$cache")" = "$KT_KVER $(hostname)" ]; then
		KT_ACCEL_USED=$(sed -n 1p "$cache")
		KT_ACCEL_WHY="cached KVM probe result ($cache)"
		return
	fi
	rm -rf "$d"
	mkdir -p "$d/job"
	kt_job "$d/job" "$d/job.tar"
	: >"$d/disks"
	local t0 t1
	t0=$(date +%s)
	kt_boot probe kvm "${KT_KVM_PROBE_TIMEOUT:-20}" "$d/job.tar" "$d/out.img" "$d/disks"
	local prc=$?
	t1=$(date +%s)
	mkdir -p "$d/out"
	if tar -x -f "$d/out.img" -C "$d/out" 2>/dev/null && [ -e "$d/out/complete" ]; then
		KT_ACCEL_USED=kvm
		KT_ACCEL_WHY="KVM probe answered in $((t1 - t0)) s"
	else
		KT_ACCEL_USED=tcg
		if [ $prc = 124 ] || [ $prc = 137 ]; then
			KT_ACCEL_WHY="KVM probe gave no answer within ${KT_KVM_PROBE_TIMEOUT:-20} s"
		else
			KT_ACCEL_WHY="KVM probe failed: qemu exit $prc: $(grep -v '^$' "$KT_O/probe.qemu.log" | head -n 1 | cut -c1-80)"
		fi
	fi
	printf '%s\n%s\n' "$KT_ACCEL_USED" "$KT_KVER $(hostname)" >"$cache"
}

# ---- case bookkeeping ---------------------------------------------------------
KT_PASS=0 KT_FAIL=0 KT_SKIP=0
declare -a KT_FAILED=()
declare -A KT_REPORTED=()

# Run a host step of case NAME (prep or hook) in a subshell in its directory.
kt_host_step() { # NAME CMDSTRING
	local name=$1 cmd=$2 rc
	mkdir -p "$KW/c/$name/next"
	(
		CASE=$name
		CD=$KW/c/$name
		cd "$CD" || exit 99
		eval "$cmd"
	) >>"$KW/c/$name/host.log" 2>&1
	rc=$?
	local cd=$KW/c/$name
	if [ ! -e "$cd/state" ]; then
		if [ "$rc" != 0 ]; then
			echo "FAIL harness: host step '$cmd' exited $rc (see $cd/host.log)" >"$cd/state"
		elif [ ! -e "$cd/next/script" ]; then
			echo PASS >"$cd/state"
		fi
	fi
	grep -q "^FAIL" "$cd/state" 2>/dev/null && touch "$cd/failed-in-host"
}

# Print the verdict line of every case that has one and was not printed yet.
kt_report() {
	local name st cd log
	for name in "${KT_NAMES[@]}"; do
		[ -n "${KT_REPORTED[$name]:-}" ] && continue
		cd=$KW/c/$name
		st=$(kt_state "$name")
		[ -n "$st" ] || continue
		KT_REPORTED[$name]=1
		case "$st" in
		PASS*)
			echo "PASS $name"
			KT_PASS=$((KT_PASS + 1))
			;;
		SKIP*)
			echo "SKIP $name: ${st#SKIP }"
			KT_SKIP=$((KT_SKIP + 1))
			;;
		*)
			echo "FAIL $name: ${st#FAIL }"
			KT_FAIL=$((KT_FAIL + 1))
			KT_FAILED+=("$name")
			# The guest's log of the failing stage: commands, errors, and
			# the kernel's dm-verity / dm-integrity messages.
			log=$(ls -t "$cd"/guest.*.log 2>/dev/null | head -n 1)
			if [ -n "$log" ] && [ -e "$cd/failed-in-guest" ]; then
				grep -v '^$' "$log" | tail -n 30 | sed 's/^/    | /'
			elif [ -e "$cd/failed-in-host" ] && [ -e "$cd/host.log" ]; then
				grep -v '^$' "$cd/host.log" | tail -n 8 | sed 's/^/    | /'
			fi
			;;
		esac
	done
}

kt_matches() { # NAME: selected by KT_CASES?
	local g
	local -a pats
	[ -z "${KT_CASES:-}" ] && return 0
	read -r -a pats <<<"$KT_CASES" # no pathname expansion of the globs
	for g in "${pats[@]}"; do
		# shellcheck disable=SC2053
		[[ $1 == $g ]] && return 0
	done
	return 1
}

# ---- main ---------------------------------------------------------------------
main() {
	local name

	for f in "$KT_SRC"/cases/*.sh; do
		. "$f"
	done
	for f in ${KT_EXTRA_CASES:-}; do
		. "$f"
	done
	if [ -n "${KT_CASES:-}" ]; then
		# Keep the selected cases and whatever they depend on.
		local -a keep=()
		local -A want=()
		for name in "${KT_NAMES[@]}"; do
			kt_matches "$name" && want[$name]=1
		done
		local changed=1
		while [ $changed = 1 ]; do
			changed=0
			for name in "${!want[@]}"; do
				local p=${KT_DEP[$name]:-}
				if [ -n "$p" ] && [ -z "${want[$p]:-}" ]; then
					want[$p]=1
					changed=1
				fi
			done
		done
		for name in "${KT_NAMES[@]}"; do
			[ -n "${want[$name]:-}" ] && keep+=("$name")
		done
		KT_NAMES=("${keep[@]}")
	fi
	if [ "${KT_LIST:-0}" = 1 ]; then
		printf '%s\n' "${KT_NAMES[@]}"
		return 0
	fi
	if [ ${#KT_NAMES[@]} = 0 ]; then
		echo "kernel: no case matches KT_CASES='${KT_CASES:-}'" >&2
		return 1
	fi

	kt_ensure_deps || {
		echo "kernel: 0 passed, 1 failed"
		return 1
	}
	phase "dependencies"
	KT_KVER=$(kt_kernel_version) || {
		echo "kernel: no installed Debian kernel (linux-image-amd64) found" >&2
		echo "kernel: 0 passed, 1 failed"
		return 1
	}
	kt_extract_vmlinux "/boot/vmlinuz-$KT_KVER" "$KT_O/vmlinux" || {
		echo "kernel: 0 passed, 1 failed"
		return 1
	}
	phase "vmlinux $KT_KVER"
	kt_build_initramfs "$KT_KVER" "$KT_SRC/init" "$KT_O/initramfs.cpio" || {
		echo "kernel: cannot build the initramfs" >&2
		echo "kernel: 0 passed, 1 failed"
		return 1
	}
	phase "initramfs" "$(($(stat -c %s "$KT_O/initramfs.cpio") / 1048576)) MiB"
	kt_choose_accel
	phase "accelerator: $KT_ACCEL_USED" "($KT_ACCEL_WHY)"

	rm -rf "$KW"
	mkdir -p "$KW/c"
	local boot=0 progress
	while :; do
		# Start every case whose dependency is satisfied.
		progress=1
		local nprep=0
		while [ $progress = 1 ]; do
			progress=0
			for name in "${KT_NAMES[@]}"; do
				[ -e "$KW/c/$name/started" ] && continue
				local p=${KT_DEP[$name]:-}
				if [ -n "$p" ]; then
					if [ -e "$KW/c/$p/ready" ]; then
						:
					elif [ -n "$(kt_state "$p")" ]; then
						mkdir -p "$KW/c/$name"
						touch "$KW/c/$name/started"
						echo "SKIP needs $p, which ended without its images" >"$KW/c/$name/state"
						progress=1
						continue
					else
						continue
					fi
				fi
				mkdir -p "$KW/c/$name/next"
				touch "$KW/c/$name/started"
				kt_host_step "$name" "${KT_PREP[$name]}"
				nprep=$((nprep + 1))
				progress=1
			done
		done
		kt_report
		[ $nprep -gt 0 ] && phase "host steps" "$nprep cases prepared"

		# Collect the guest stages for the next boot.
		local -a bcases=()
		for name in "${KT_NAMES[@]}"; do
			[ -z "$(kt_state "$name")" ] && [ -e "$KW/c/$name/next/script" ] && bcases+=("$name")
		done
		[ ${#bcases[@]} = 0 ] && break
		# The guest shows at most 130 case disks (see kt_run_boot): the
		# ready cases go into as many boots as their disks need.
		local -a chunk=()
		local cdisks=0 nd
		for name in "${bcases[@]}"; do
			nd=0
			[ -e "$KW/c/$name/next/disks" ] &&
				nd=$(grep -c . "$KW/c/$name/next/disks")
			if [ ${#chunk[@]} -gt 0 ] && [ $((cdisks + nd)) -gt 130 ]; then
				kt_next_boot "${chunk[@]}"
				chunk=()
				cdisks=0
			fi
			chunk+=("$name")
			cdisks=$((cdisks + nd))
		done
		kt_next_boot "${chunk[@]}"
	done

	# Anything still open is a harness error.
	for name in "${KT_NAMES[@]}"; do
		if [ -z "$(kt_state "$name")" ]; then
			mkdir -p "$KW/c/$name"
			echo "FAIL harness: case never completed" >"$KW/c/$name/state"
		fi
	done
	kt_report
	phase "total"
	[ ${#KT_FAILED[@]} -gt 0 ] && echo "kernel: failed: ${KT_FAILED[*]}"
	echo "kernel: $KT_SKIP skipped"
	echo "kernel: $KT_PASS passed, $KT_FAIL failed"
	[ "$KT_FAIL" = 0 ]
}

# kt_next_boot CASES...: the next boot (counted in main's $boot) for these
# cases, or their failure when KT_MAX_BOOTS are used up.
kt_next_boot() {
	local name
	boot=$((boot + 1))
	if [ $boot -gt "$KT_MAX_BOOTS" ]; then
		for name in "$@"; do
			echo "FAIL harness: more than $KT_MAX_BOOTS boots needed" >"$KW/c/$name/state"
		done
		return 0
	fi
	kt_run_boot $boot "$@"
	kt_report
}

# kt_run_boot N CASES...: one VM boot running the queued guest stage of each case.
kt_run_boot() {
	local b=$1
	shift
	local bd=$KW/boot$b name cd serial=0 f tmo rc ndisks=0
	rm -rf "$bd"
	mkdir -p "$bd/job/c" "$bd/out"
	: >"$bd/disks"
	for name in "$@"; do
		cd=$KW/c/$name
		mv "$cd/next" "$cd/stage$b"
		mkdir -p "$cd/next" "$bd/job/c/$name"
		touch "$cd/stage$b/env"
		cp "$cd/stage$b/env" "$bd/job/c/$name/env"
		if [ -e "$cd/stage$b/files" ]; then
			while read -r f; do cp "$cd/$f" "$bd/job/c/$name/"; done <"$cd/stage$b/files"
		fi
		if [ -e "$cd/stage$b/disks" ]; then
			while read -r f; do
				serial=$((serial + 1))
				echo "k$serial $name $f" >>"$bd/job/disks"
				echo "k$serial $cd/$f" >>"$bd/disks"
				ndisks=$((ndisks + 1))
			done <"$cd/stage$b/disks"
		fi
		echo "$name $(cat "$cd/stage$b/script")" >>"$bd/job/cases"
	done
	kt_job "$bd/job" "$bd/job.tar" || {
		echo "kernel: cannot pack the job for boot $b" >&2
		return 1
	}
	# The 6.1 guest on QEMU's pc machine shows at most 132 virtio disks
	# (seen with 134: two never appeared, whatever the queues or legacy
	# I/O ports); job and out take two of them.
	if [ $((ndisks + 2)) -gt 132 ]; then
		echo "kernel: boot $b would need $ndisks case disks; the guest sees at most 130: fewer or smaller cases" >&2
		return 1
	fi
	tmo=${KT_BOOT_TIMEOUT:-$((90 + 10 * $#))}
	phase "boot $b prepared" "$# cases, $ndisks disks, timeout ${tmo}s"
	kt_boot "boot$b" "$KT_ACCEL_USED" "$tmo" "$bd/job.tar" "$bd/out.img" "$bd/disks"
	rc=$?
	tar -x -f "$bd/out.img" -C "$bd/out" 2>/dev/null
	dd if="$bd/out.img" bs=4096 skip=12288 status=none | tr -d '\0' >"$bd/times.raw"
	local why=""
	if [ ! -e "$bd/out/complete" ]; then
		if [ $rc = 124 ] || [ $rc = 137 ]; then
			why="VM timed out after ${tmo} s"
		else
			why="VM stopped (qemu exit $rc) before finishing"
		fi
		echo "kernel: boot $b: $why; console tail:" >&2
		tail -n 15 "$KT_O/boot$b.console" 2>/dev/null | sed 's/^/    console| /' >&2
		[ -s "$KT_O/boot$b.qemu.log" ] && sed 's/^/    qemu| /' "$KT_O/boot$b.qemu.log" >&2
	fi
	local info=""
	[ -e "$bd/out/info" ] && info="guest boot $(sed -n 's/^boot-uptime //p' "$bd/out/info")s, dd ${KT_DIRECT_INFO:-$(sed -n 's/^dd-direct //p' "$bd/out/info")}"
	phase "boot $b ran" "$info"
	cp "$bd/times.raw" "$KT_O/boot$b.times"
	local nhooks=0 hung=""
	for name in "$@"; do
		cd=$KW/c/$name
		for f in log dmesg; do
			[ -e "$bd/out/$name.$f" ] && cp "$bd/out/$name.$f" "$cd/guest.$b.$f"
		done
		if [ ! -e "$bd/out/$name.verdict" ] && [ -z "$why" ]; then
			echo "FAIL harness: no verdict from the guest" >"$cd/state"
			continue
		fi
		if [ ! -e "$bd/out/$name.verdict" ]; then
			# The tar is stale: take the verdict from the list after it.
			local tv
			tv=$(awk -v n="$name" '$1 == n { $1 = ""; $2 = ""; sub(/^  /, ""); print }' "$bd/times.raw" 2>/dev/null)
			[ -n "$tv" ] && echo "$tv" >"$bd/out/$name.verdict"
		fi
		if [ ! -e "$bd/out/$name.verdict" ]; then
			if [ -z "$hung" ]; then
				hung=$name
				echo "FAIL did not finish: $why while this case ran" >"$cd/state"
				touch "$cd/failed-in-guest"
			else
				echo "FAIL not run: $why during $hung" >"$cd/state"
			fi
			continue
		fi
		local v
		v=$(cat "$bd/out/$name.verdict")
		case "$v" in
		OK) ;;
		*)
			touch "$cd/failed-in-guest"
			echo "FAIL ${v#FAIL }" >"$cd/state"
			continue
			;;
		esac
		if [ -s "$cd/stage$b/hook" ]; then
			kt_host_step "$name" "$(cat "$cd/stage$b/hook")"
			nhooks=$((nhooks + 1))
		else
			echo PASS >"$cd/state"
		fi
	done
	[ $nhooks -gt 0 ] && phase "host checks after boot $b" "$nhooks cases"
	[ -z "$why" ]
}

main "$@"
