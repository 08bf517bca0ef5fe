#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Known-answer vectors for lib/crypt's cipher engine (cipher-kat.txt).

Independent of our C code: python3-cryptography (OpenSSL underneath) with
the IV rules of the kernel's dm-crypt written out here (formats.md,
dm-crypt):  iv_sector = sector * (ss/512) + iv_offset, shifted right by
log2(ss/512) with iv_large_sectors; plain = le32, plain64 = le64, essiv =
AES-256-ECB_{sha256(key)}(le64), all zero-padded to 16 bytes.

Plaintext byte j of the run (j counted over the whole run) is
(j * 31 + 7) & 0xff.  Each line:
  cipher key_hex sector_size iv_large iv_offset first count sha256(ciphertext)
Run:  python3 testdata/crypt/make_vectors.py > testdata/crypt/cipher-kat.txt
"""
import hashlib
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes


def iv_bytes(cipher, key, ss, large, iv_offset, sector):
    shift = (ss // 512).bit_length() - 1
    v = (sector << shift) + iv_offset
    if large:
        v >>= shift
    if cipher.endswith("-plain"):
        v &= 0xFFFFFFFF
    iv = (v & (2**64 - 1)).to_bytes(8, "little") + bytes(8)
    if cipher.endswith("essiv:sha256"):
        salt = hashlib.sha256(key).digest()
        e = Cipher(algorithms.AES(salt), modes.ECB()).encryptor()
        iv = e.update(iv) + e.finalize()
    return iv


def encrypt(cipher, key, ss, large, iv_offset, first, count):
    pt = bytes(((j * 31 + 7) & 0xFF) for j in range(ss * count))
    out = b""
    for i in range(count):
        iv = iv_bytes(cipher, key, ss, large, iv_offset, first + i)
        mode = modes.XTS(iv) if "-xts-" in cipher else modes.CBC(iv)
        e = Cipher(algorithms.AES(key), mode).encryptor()
        out += e.update(pt[i * ss:(i + 1) * ss]) + e.finalize()
    return out


def key_of(n, seed):
    return bytes(((i * 13 + seed * 101 + 1) & 0xFF) for i in range(n))


CASES = []
for cipher, sizes in (("aes-xts-plain64", (64, 32)), ("aes-xts-plain", (64,)),
                      ("aes-cbc-essiv:sha256", (32, 16)),
                      ("aes-cbc-plain64", (32, 24, 16))):
    for ks in sizes:
        for ss in (512, 1024, 4096):
            for large in ((0,) if ss == 512 else (0, 1)):
                for iv_offset in (0, 8):
                    CASES.append((cipher, ks, ss, large, iv_offset, 0, 3))
    # IV sectors past 2^32: plain wraps, plain64 does not
    CASES.append((cipher, sizes[0], 4096, 0, 0, (1 << 29) - 1, 2))
    CASES.append((cipher, sizes[0], 512, 0, 16, (1 << 32) - 9, 2))

print("# cipher key sector_size iv_large iv_offset first count sha256(ct)")
for n, (cipher, ks, ss, large, off, first, count) in enumerate(CASES):
    key = key_of(ks, n)
    ct = encrypt(cipher, key, ss, large, off, first, count)
    print(cipher, key.hex(), ss, large, off, first, count,
          hashlib.sha256(ct).hexdigest())
