#!/bin/bash
# SPDX-License-Identifier: MIT
# Kernel image helpers for the kernel conformance suite (sourced by run.sh):
#   kt_kernel_version   version of the installed Debian kernel package
#   kt_extract_vmlinux  uncompressed vmlinux from /boot/vmlinuz-<ver>
#   kt_build_initramfs  small uncompressed cpio with busybox, cryptsetup tools, modules
set -u

# Version of the kernel that the installed linux-image-amd64 package depends on
# (not `uname -r`: the running kernel is the host's, not Debian's).
kt_kernel_version() {
	local dep v
	dep=$(dpkg-query -W -f '${Depends}' linux-image-amd64 2>/dev/null | sed -n 's/^linux-image-\([^ ,]*\).*/\1/p')
	if [ -n "$dep" ] && [ -e "/boot/vmlinuz-$dep" ] && [ -d "/lib/modules/$dep" ]; then
		echo "$dep"
		return 0
	fi
	# Fallback: newest /boot/vmlinuz-* that has a module directory.
	for v in $(ls /boot/vmlinuz-* 2>/dev/null | sed 's,^/boot/vmlinuz-,,' | sort -V -r); do
		if [ -d "/lib/modules/$v" ]; then
			echo "$v"
			return 0
		fi
	done
	return 1
}

# The extract-vmlinux method: find an xz stream inside the bzImage and
# decompress it; the first candidate that yields an ELF file wins.
kt_extract_vmlinux() { # VMLINUZ OUT
	local in=$1 out=$2 off
	if [ -s "$out" ] && [ "$out" -nt "$in" ]; then
		return 0
	fi
	for off in $(LC_ALL=C grep -obUaP '\xFD7zXZ\x00' "$in" | cut -d: -f1); do
		tail -c +"$((off + 1))" "$in" | xz -dc 2>/dev/null >"$out.tmp"
		if [ "$(head -c 4 "$out.tmp" | od -An -c | tr -d ' ')" = '177ELF' ]; then
			mv "$out.tmp" "$out"
			return 0
		fi
	done
	rm -f "$out.tmp"
	echo "kernel: no xz-compressed ELF kernel found in $in" >&2
	return 1
}

KT_MODULES="virtio_pci virtio_blk loop dm-mod dm-bufio dm-integrity dm-verity reed_solomon
crc32c_generic crc32c-intel crc32_generic crc32-pclmul sha1_generic sha1-ssse3
sha256_generic sha256-ssse3 sha512_generic sha512-ssse3 xxhash_generic blake2b_generic
hmac async_xor ctr chacha_generic
dm-crypt xts essiv ecb aesni-intel ext4"

# mke2fs, fsverity and keyctl: the fs-verity cases (ext4 with -O verity)
KT_BINARIES="/usr/sbin/integritysetup /usr/sbin/veritysetup /usr/sbin/dmsetup /usr/sbin/blockdev /usr/bin/kmod
/usr/sbin/mke2fs /usr/bin/fsverity /usr/bin/keyctl"
# Authenticated dm-crypt (cases/crypt_auth.sh): the AEADs and
# their helpers (chacha20/poly1305 also need kernel/lib/crypto), cryptsetup;
# luksFormat --integrity probes the AEAD through AF_ALG (algif_aead).
KT_MODULES="$KT_MODULES authenc cryptd crypto_simd
gcm ghash-generic ghash-clmulni-intel aegis128 aegis128-aesni chacha20poly1305
chacha-x86_64 poly1305_generic poly1305-x86_64 libchacha libpoly1305 seqiv
af_alg algif_aead algif_skcipher algif_hash"
KT_BINARIES="$KT_BINARIES /usr/sbin/cryptsetup"

# Copy FILE and the shared libraries ldd lists for it into ROOT.
kt_copy_with_libs() { # ROOT FILE
	local root=$1 f=$2 lib
	mkdir -p "$root$(dirname "$f")"
	cp -L "$f" "$root$f"
	for lib in $(ldd "$f" 2>/dev/null | grep -o '/[^ )]*'); do
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}

kt_build_initramfs() { # KVER INIT OUT
	local kver=$1 init=$2 out=$3 root stamp m f a
	stamp="$kver $(sha256sum "$init" "${BASH_SOURCE[0]}" | sha256sum | cut -c1-16) $(dpkg-query -W -f '${Version}' busybox-static cryptsetup-bin dmsetup kmod 2>/dev/null | tr -d '\n')"
	if [ -s "$out" ] && [ "$(cat "$out.stamp" 2>/dev/null)" = "$stamp" ]; then
		return 0
	fi
	root="$out.root"
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run/cryptsetup,job,out,etc,lib/modules,mnt}
	cp /bin/busybox "$root/bin/busybox"
	for a in $("$root/bin/busybox" --list); do
		[ -e "$root/bin/$a" ] || ln -s busybox "$root/bin/$a"
	done
	for f in $KT_BINARIES; do
		kt_copy_with_libs "$root" "$f" || return 1
	done
	# coreutils dd: busybox dd accepts iflag=direct but silently drops O_DIRECT
	# when its buffer is not aligned (always, in practice).
	rm -f "$root/bin/dd"
	kt_copy_with_libs "$root" /bin/dd || return 1
	mkdir -p "$root/usr/lib/kt"
	mv "$root/bin/dd" "$root/usr/lib/kt/dd"
	ln -s busybox "$root/bin/dd"
	# kmod provides modprobe/insmod that understand modules.dep*; the kernel's
	# request_module helper runs /sbin/modprobe.
	for a in modprobe insmod rmmod lsmod depmod modinfo; do
		rm -f "$root/bin/$a" "$root/sbin/$a"
		ln -s /usr/bin/kmod "$root/sbin/$a"
	done
	# Modules (with their dependencies) from the installed package.
	local mdir="/lib/modules/$kver"
	for m in $KT_MODULES; do
		for f in $(modprobe -S "$kver" -D "$m" 2>/dev/null | awk '$1 == "insmod" {print $2}'); do
			mkdir -p "$root$(dirname "$f")"
			cp "$f" "$root$f"
		done
	done
	for f in modules.order modules.builtin modules.builtin.modinfo; do
		[ -e "$mdir/$f" ] && cp "$mdir/$f" "$root$mdir/"
	done
	depmod -b "$root" "$kver" || return 1
	echo "$KT_MODULES" | tr ' ' '\n' | grep -v '^$' >"$root/etc/kt-modules"
	[ -e /etc/mke2fs.conf ] && cp /etc/mke2fs.conf "$root/etc/"
	cp "$init" "$root/init"
	chmod 755 "$root/init"
	(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$out.tmp" || return 1
	mv "$out.tmp" "$out"
	echo "$stamp" >"$out.stamp"
	rm -rf "$root"
}
