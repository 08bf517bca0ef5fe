#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make check-fresh`: the README's quick start on a brand-new Debian 12, as
# a first-time user meets it.  A minimal root (mmdebstrap --variant=minbase
# bookworm, plus make, gcc and git only, from the machine's own apt
# sources) gets a clone of the commit under test in /root/dmt (mode 0700
# above it, as a user's checkout is), and then, as root in a chroot:
#   1. and 2. exactly the commands of the README's quick start, in order
#      (read from README.md: `make demo`, `make check`);
#   3. `make check` again: still green, and nothing rebuilt (one suite by
#      default, the binary being the one step 2 ran; every test with
#      DMT_FRESH_SECOND=full);
#   4. scripts/check-debs.sh: the Debian packages built from a clean clone
#      (their build tools installed only now), lintian, `apt-get install
#      ./*.deb`, each installed tool's --version and a root hash equal to
#      the in-tree build's.
# The first failing step stops the run with its last lines.  The root is
# cached outside the checkout (DMT_FRESH_CACHE, else $XDG_CACHE_HOME/
# dmt-fresh, else /var/cache/dmt-fresh), keyed by the date and the lists
# of packages (this script, scripts/deps.sh, debian/control); the .debs
# apt downloads are kept beside it for the next run of the same key.
# Every run starts from the pristine root.
#
# The chroot runs in a private mount namespace: /proc, /sys and /dev are
# bound there only (the host's mount table never sees them, and they go
# when the namespace does), unmounted on every exit path (trap), and /dev's
# top is read-only there, so nothing inside can replace a host node
# (devices still work, /dev/pts and /dev/shm stay writable).  Afterwards
# the host's /dev/null, /dev/zero, /dev/urandom and /tmp are checked.
#
# Needs root.  Environment: DMT_FRESH_COMMIT (the commit under test,
# default HEAD: what is committed, not the work tree), DMT_FRESH_CACHE,
# DMT_FRESH_TIMEOUT (seconds per step, default 2700), DMT_FRESH_SECOND=full
# (the second make check runs every test again), DMT_FRESH_KEEP=1
# (keep the run's root afterwards).
set -euo pipefail

suite=bookworm
name=dmt
base_pkgs=make,gcc,git
readonly suite name base_pkgs

say() { printf 'check-fresh: %s\n' "$*"; }
die() { say "FAILED: $*" >&2; exit 1; }

# ---- inside the private mount namespace (see the end of the file) ----
inner_root= step_pid=
inner_cleanup() {
	local p
	[ -n "$inner_root" ] || return 0
	[ -z "$step_pid" ] || kill -TERM "$step_pid" 2>/dev/null
	# whatever still runs in the chroot (a hung test): it is ours
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$inner_root" ] &&
			kill -KILL "${p#/proc/}" 2>/dev/null
	done
	for m in dev sys proc; do
		mountpoint -q "$inner_root/$m" &&
			{ umount -R "$inner_root/$m" 2>/dev/null ||
			  umount -R -l "$inner_root/$m"; }
	done
	inner_root=
}

# inner ROOT LOGDIR: mounts, runs the steps, unmounts
inner() {
	local root=$1 logs=$2 n=0 t0 rc
	inner_root=$root
	trap inner_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	trap 'exit 129' HUP
	mount --bind /proc "$root/proc"
	mount --rbind /sys "$root/sys"
	mount --make-rslave "$root/sys"
	mount --rbind /dev "$root/dev"
	mount --make-rslave "$root/dev"
	mount -o remount,bind,ro "$root/dev"

	# run LABEL COMMAND: one step, as root's login shell in the checkout
	run() {
		local label=$1 cmd=$2 log
		n=$((n + 1))
		log=$logs/$n.log
		say "[$n] $label: $cmd"
		t0=$SECONDS
		rc=0
		# in the background: a signal's trap runs at once (wait returns)
		timeout -k 30 "${DMT_FRESH_TIMEOUT:-2700}" \
			chroot "$root" /usr/bin/env -i HOME=/root USER=root \
			LOGNAME=root SHELL=/bin/bash TERM=dumb \
			/bin/bash -l -c "cd /root/$name && $cmd" \
			</dev/null >"$log" 2>&1 &
		step_pid=$!
		wait "$step_pid" || rc=$?
		step_pid=
		printf '%s (%s): %s s\n' "$label" "$cmd" "$((SECONDS - t0))" >>"$logs/times"
		if [ "$rc" != 0 ]; then
			say "FAILED at step $n, $label: \`$cmd\` (exit $rc, $((SECONDS - t0)) s); its last lines:" >&2
			tail -n 40 "$log" >&2
			say "its whole log: logs/$n.log of the run's directory (below)" >&2
			exit 1
		fi
		grep -h 'Synthesis:' "$log" | sed 's/^/    /' || true
		say "[$n] ok in $((SECONDS - t0)) s"
	}

	local c i=0
	while IFS= read -r c; do
		i=$((i + 1))
		run "README command $i" "$c"
	done <"$logs/readme-commands"

	touch "$root/root/.check-fresh-marker"
	# The second make check: nothing may be rebuilt (checked below) and
	# the target must pass again.  Since nothing is rebuilt, its test
	# binary is the one step 2 ran in full minutes ago: by default it
	# runs one suite (the build configuration's) instead of repeating
	# every test (9 minutes of .ci/run's 60); DMT_FRESH_SECOND=full runs
	# the whole suite again.
	if [ "${DMT_FRESH_SECOND:-}" = full ]; then
		run "make check again" "make check"
	else
		run "make check again" "make check CRITERION_FLAGS='--filter=build_config/*'"
	fi
	rebuilt=$(cd "$root/root/$name" && find build -newer \
		"$root/root/.check-fresh-marker" -type f \( -name '*.o' -o \
		-name '*.a' -o -name '*.so*' -o -name '*.mk' -o -name '*.cfg' \
		-o -perm -u+x \) | head -n 20)
	compiled=$(grep -E '^  (CC|CC-PIC|LD|AR) ' "$logs/$n.log" | head -n 20 || true)
	if [ -n "$rebuilt$compiled" ]; then
		say "FAILED: the second make check rebuilt files:" >&2
		printf '%s\n' $rebuilt "$compiled" >&2
		exit 1
	fi
	say "    nothing rebuilt"

	run "Debian packages" "sh scripts/check-debs.sh all /root/debs build"
	# nothing inside may have touched these
	for d in tmp var/tmp; do
		[ "$(stat -c %a "$root/$d")" = 1777 ] ||
			{ say "FAILED: the root's /$d is no longer mode 1777" >&2; exit 1; }
	done
}

if [ "${1:-}" = --inner ]; then
	shift
	inner "$@"
	exit 0
fi

# ---- on the host ----
[ "$(id -u)" = 0 ] || die "needs root (mmdebstrap, chroot and mounts)"
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"
sh scripts/deps.sh fresh mmdebstrap
commit=$(git rev-parse --verify "${DMT_FRESH_COMMIT:-HEAD}^{commit}") ||
	die "no commit '${DMT_FRESH_COMMIT:-HEAD}'"
[ -n "${DMT_FRESH_COMMIT:-}" ] || git diff --quiet HEAD -- 2>/dev/null ||
	say "note: uncommitted changes are not tested (the clone is of $commit)"

cache=${DMT_FRESH_CACHE:-${XDG_CACHE_HOME:+$XDG_CACHE_HOME/dmt-fresh}}
cache=${cache:-/var/cache/dmt-fresh}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
case "$cache/" in
"$src"/*) die "the cache $cache is inside the checkout" ;;
esac

# The machine's apt sources and the options they need (a snapshot mirror
# may need Check-Valid-Until false), so the root uses the same mirror.
sources=/etc/apt/sources.list.d/debian.sources
[ -f "$sources" ] || sources=/etc/apt/sources.list
[ -f "$sources" ] || die "no apt sources on this machine ($sources)"
aptopts=()
while IFS= read -r o; do
	aptopts+=("--aptopt=$o")
done < <(apt-config dump | grep -E '^Acquire::(Check-Valid-Until|Check-Date) ' || true)

# The README's quick start: the commands of its first sh block.
t_all=$SECONDS
readme_cmds=$(awk '/^## Quick start/ { q = 1; next } /^## / { q = 0 }
	q && /^```sh/ { b = 1; next } q && b && /^```/ { exit }
	q && b { sub(/[ \t]*#.*/, ""); if ($0 != "") print }' \
	<(git show "$commit:README.md"))
[ -n "$readme_cmds" ] || die "no commands found in README.md's quick start"

# The key: the date (the archive moves), what makes the root, and the deps
# lists (the .debs kept with it).
key=$(date -u +%Y-%m-%d)-$( {
	echo "$suite minbase $base_pkgs" "${aptopts[@]}"
	cat "$sources" scripts/deps.sh debian/control
} | sha256sum | cut -c1-12)
keydir=$cache/$key
tarball=$keydir/root.tar
for d in "$cache"/*/; do
	d=${d%/}
	case "${d##*/}" in
	"$key" | failed) ;;
	run.*) kill -0 "${d##*.}" 2>/dev/null || rm -rf "$d" ;;
	*) rm -rf "$d" ;;
	esac
done

t_root=0
if [ ! -f "$tarball" ]; then
	say "making the Debian $suite minbase root (+ $base_pkgs) in $keydir"
	mkdir -p "$keydir/debs"
	t=$SECONDS
	# its own mounts (proc, dev in its temporary root) in a private
	# namespace too: even a killed mmdebstrap leaves none on the host
	trap 'kill -TERM "$mm_pid" 2>/dev/null; wait "$mm_pid"; rm -f "$tarball.tmp"; exit 1' INT TERM HUP
	unshare --mount --propagation private -- mmdebstrap --quiet \
		--format=tar --variant=minbase --include="$base_pkgs" \
		"${aptopts[@]}" \
		"$suite" "$tarball.tmp" "$sources" \
		>"$keydir/mmdebstrap.log" 2>&1 &
	mm_pid=$!
	wait "$mm_pid" || {
		tail -n 40 "$keydir/mmdebstrap.log" >&2
		rm -f "$tarball.tmp"
		die "mmdebstrap failed (log: $keydir/mmdebstrap.log)"
	}
	trap - INT TERM HUP
	mv "$tarball.tmp" "$tarball"
	t_root=$((SECONDS - t))
	say "root made in $t_root s"
else
	say "reusing the cached root $tarball"
fi

work=$cache/run.$$
root=$work/root
logs=$work/logs
inner_pid=
host_cleanup() {
	local rc=$?
	trap - EXIT INT TERM HUP
	if [ -n "$inner_pid" ]; then
		kill -TERM "$inner_pid" 2>/dev/null || true
		wait "$inner_pid" 2>/dev/null || true
	fi
	# the mounts were never visible here: removing the root is safe
	if [ -d "$work" ]; then
		if [ "$rc" != 0 ]; then
			rm -rf "$cache/failed"
			mv "$work" "$cache/failed"
			say "the failed run's root and logs/ are in $cache/failed" >&2
		elif [ "${DMT_FRESH_KEEP:-}" = 1 ]; then
			say "root kept in $work"
		else
			rm -rf "$work"
		fi
	fi
	exit "$rc"
}
trap host_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
mkdir -p "$root" "$logs"
echo "$readme_cmds" >"$logs/readme-commands"
tar -C "$root" --numeric-owner -xpf "$tarball"
# the machine's name service, as on any machine
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
cp /etc/hosts "$root/etc/hosts" 2>/dev/null || true
# .debs fetched by earlier runs of this key: apt finds them, no download
cp -l "$keydir"/debs/*.deb "$root/var/cache/apt/archives/" 2>/dev/null || true
# the commit as a branch of a bundle (a short-lived branch name of our own)
branch=check-fresh-$$
git branch -f "$branch" "$commit" >/dev/null
git bundle create -q "$root/root/$name.bundle" "$branch" 2>"$logs/clone.log" ||
	{ git branch -D "$branch" >/dev/null; cat "$logs/clone.log" >&2; die "git bundle"; }
git branch -D "$branch" >/dev/null
chroot "$root" git clone -q -b "$branch" "/root/$name.bundle" \
	"/root/$name" 2>"$logs/clone.log" ||
	{ cat "$logs/clone.log" >&2; die "git clone in the root failed"; }
rm -f "$root/root/$name.bundle"
[ "$(chroot "$root" git -C "/root/$name" rev-parse HEAD)" = "$commit" ] ||
	die "the clone is not at $commit"
say "commit $commit cloned to /root/$name; /root is mode $(stat -c %a "$root/root")"

unshare --mount --propagation private -- bash "$0" --inner "$root" "$logs" &
inner_pid=$!
rc=0
wait "$inner_pid" || rc=$?
inner_pid=

cp -n "$root"/var/cache/apt/archives/*.deb "$keydir/debs/" 2>/dev/null || true
# the host's nodes and /tmp, whatever happened inside
for n in null zero urandom; do
	[ -c "/dev/$n" ] || die "/dev/$n is no longer a character device!"
done
[ "$(stat -c %a /tmp)" = 1777 ] || die "/tmp is no longer mode 1777!"
say "host /dev/null, /dev/zero, /dev/urandom are character devices, /tmp is 1777"
[ "$rc" = 0 ] || exit "$rc"

say "timings: the root $t_root s ($([ "$t_root" = 0 ] && echo cached || echo made)), then"
sed 's/^/    /' "$logs/times"
say "total $((SECONDS - t_all)) s"
say "passed"
