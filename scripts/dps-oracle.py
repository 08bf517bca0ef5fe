#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Independent recomputation of a systemd-repart 252 verity image (see
docs/discoverable.md). Called by scripts/dps-oracle.sh for one case:

  dps-oracle.py CASEDIR

CASEDIR holds disk.img (repart's output), repart.json (--json=pretty),
sfdisk.json (sfdisk --json disk.img), case.env (KIND, ARCH, SEED, SIZE,
DATA, SIG, SIZEMIN_*, SIZEMAX_*) and, with SIG=1, key.pem/cert.pem.
Prints one line per check ("ok ..."/"FAIL ...") and exits 1 on any FAIL.
"""
import base64
import hashlib
import hmac
import json
import os
import subprocess
import sys
import uuid

GRAIN = 4096  # max(4096, sector size); both sizes tested are <= 4096
SECTOR = 512  # set from case.env SECTOR (image file: 512; 4Kn loop: 4096)
DEFAULT_MIN = 10 * 1024 * 1024
HARD_MIN = 4096
VERITY_SIG_SIZE = 4 * HARD_MIN
FLAG_GROWFS = 59
FLAG_READ_ONLY = 60

fails = 0


def check(name, ok, detail=""):
    global fails
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    if not ok:
        fails += 1


def up(x, a=GRAIN):
    return (x + a - 1) // a * a


def down(x, a=GRAIN):
    return x // a * a


def v4(b):
    b = bytearray(b[:16])
    b[6] = (b[6] & 0x0F) | 0x40
    b[8] = (b[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(b)))


def derive_token(seed, token):
    # repart.c derive_uuid(): HMAC-SHA256(key=seed bytes, msg=token), first
    # 16 bytes, v4 bits set.
    return v4(hmac.new(seed, token.encode(), hashlib.sha256).digest())


def derive_partition(seed, type_uuid, instance=0):
    # repart.c partition_acquire_uuid(): HMAC-SHA256(key=seed,
    # msg=type uuid bytes [|| le64(instance) for instance > 0]).
    msg = uuid.UUID(type_uuid).bytes
    if instance:
        msg += instance.to_bytes(8, "little")
    return v4(hmac.new(seed, msg, hashlib.sha256).digest())


def gpt_tail():
    """sectors after the last usable LBA: 16 KiB of entries + 1 header"""
    return 16384 // SECTOR + 1


def layout(total, parts):
    """parts: list of dicts with min, max (bytes); returns [(offset, size)].
    Model of context_allocate/grow/place_partitions for one free area on a
    fresh disk, all weights 1000, padding weight 0."""
    last_lba = total // SECTOR - gpt_tail() - 1  # backup entries + header after
    start = up(1024 * 1024)  # libfdisk's first usable LBA, 1 MiB
    end = down((last_lba + 1) * SECTOR)
    span = end - start
    sizes = [None] * len(parts)
    wsum = 1000 * len(parts)
    for phase in ("over", "under", "dist"):
        while True:
            again = False
            for i, p in enumerate(parts):
                if sizes[i] is not None:
                    continue
                share = span * 1000 // wsum if wsum != 1000 else span
                if phase == "over" and p["min"] > share:
                    sizes[i] = p["min"]
                    again = True
                elif phase == "under" and p["max"] < share:
                    sizes[i] = p["max"]
                    again = True
                elif phase == "dist":
                    sizes[i] = min(max(down(share), p["min"]), p["max"])
                else:
                    continue
                span -= up(sizes[i])
                wsum -= 1000
            if not again or phase == "dist":
                break
    for i, p in enumerate(parts):  # leftovers: first partition that can grow
        if span == 0:
            break
        m = min(max(down(sizes[i] + span), sizes[i]), p["max"])
        span -= m - sizes[i]
        sizes[i] = m
    out, off = [], start
    for s in sizes:
        out.append((off, s))
        off = up(off + s)
    return out


def run(*cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, **kw).stdout


def main():
    d = sys.argv[1]
    env = {}
    for line in open(os.path.join(d, "case.env")):
        k, _, v = line.strip().partition("=")
        env[k] = v
    kind, arch, sig = env["KIND"], env["ARCH"], env["SIG"] == "1"
    global SECTOR
    SECTOR = int(env.get("SECTOR") or 512)
    seed = uuid.UUID(env["SEED"]).bytes
    disk = os.path.join(d, "disk.img")
    total = os.path.getsize(disk)
    data = open(env["DATA"], "rb").read()
    types = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                        "dps-types.json")))
    names = [f"{kind}-{arch}", f"{kind}-{arch}-verity"] + ([f"{kind}-{arch}-verity-sig"] if sig else [])
    sf = json.load(open(os.path.join(d, "sfdisk.json")))["partitiontable"]
    rj = json.load(open(os.path.join(d, "repart.json")))
    sp = sf["partitions"]
    check("partition count", len(sp) == len(names), f"{len(sp)} != {len(names)}")
    if len(sp) != len(names):
        return

    # disk GUID
    check("disk GUID = v4(HMAC(seed,'disk-uuid'))",
          sf["id"].lower() == derive_token(seed, "disk-uuid"),
          f'{sf["id"]} vs {derive_token(seed, "disk-uuid")}')
    check(f"sector size {SECTOR} / first LBA 1 MiB",
          sf["sectorsize"] == SECTOR and sf["firstlba"] * SECTOR == 1024 * 1024,
          f'{sf["sectorsize"]} {sf["firstlba"]}')
    check(f"last LBA = sectors - {gpt_tail() + 1}",
          sf["lastlba"] == total // SECTOR - gpt_tail() - 1, str(sf["lastlba"]))

    # layout
    mins, maxs = [], []
    for i, n in enumerate(["ROOT", "VERITY"]):
        smin = int(env.get("SIZEMIN_" + n) or 0) or None
        smax = int(env.get("SIZEMAX_" + n) or 0) or None
        m = HARD_MIN
        if i == 0:
            m = max(m, up(len(data)))
        m = max(up(smin if smin else DEFAULT_MIN), m)
        mins.append(m)
        maxs.append(max(m, down(smax)) if smax else 1 << 62)
    if sig:
        mins.append(VERITY_SIG_SIZE)
        maxs.append(VERITY_SIG_SIZE)
    exp = layout(total, [{"min": a, "max": b} for a, b in zip(mins, maxs)])
    got = [(p["start"] * SECTOR, p["size"] * SECTOR) for p in sp]
    check("offsets and sizes (layout model)", exp == got, f"model {exp} repart {got}")

    # types, labels, flags
    for i, n in enumerate(names):
        check(f"type {n}", sp[i]["type"].lower() == types[n], f'{sp[i]["type"]} vs {types.get(n)}')
        check(f"label {n}", sp[i]["name"] == n, sp[i]["name"])
        want = {0: f"GUID:{FLAG_GROWFS}", 1: f"GUID:{FLAG_READ_ONLY}", 2: None}[i]
        check(f"attrs {n}", sp[i].get("attrs") == want, str(sp[i].get("attrs")))

    img = open(disk, "rb")

    def part(i):
        img.seek(got[i][0])
        return img.read(got[i][1])

    # every byte outside the GPT areas and the partitions is zero
    n = total // SECTOR
    holes = [((2 + 16384 // SECTOR) * SECTOR, got[0][0])]
    holes += [(got[i][0] + got[i][1], got[i + 1][0]) for i in range(len(got) - 1)]
    holes.append((got[-1][0] + got[-1][1], (n - gpt_tail()) * SECTOR))
    nz = []
    for a, b in holes:
        img.seek(a)
        if img.read(b - a).count(0) != b - a:
            nz.append((a, b))
    check("gaps between GPT and partitions are zero", not nz, str(nz))

    dpart, hpart = part(0), part(1)
    check("data partition = data image + zeros",
          dpart[:len(data)] == data and dpart[len(data):].count(0) == len(dpart) - len(data))

    # verity superblock of repart's hash partition (salt/uuid are random in 252)
    sb = hpart[:512]
    check("verity superblock magic, version 1, hash type 1, sha256",
          sb[:8] == b"verity\0\0" and sb[8:16] == b"\1\0\0\0\1\0\0\0"
          and sb[32:64].rstrip(b"\0") == b"sha256")
    sb_uuid = str(uuid.UUID(bytes=sb[16:32]))
    dbs = int.from_bytes(sb[64:68], "little")
    hbs = int.from_bytes(sb[68:72], "little")
    nblocks = int.from_bytes(sb[72:80], "little")
    saltlen = int.from_bytes(sb[80:82], "little")
    salt = sb[88:88 + min(saltlen, 256)].hex()
    check(f"verity data/hash block size = sector size {SECTOR}", dbs == SECTOR and hbs == SECTOR,
          f"{dbs} {hbs}")
    check("verity data blocks = whole data partition", nblocks == got[0][1] // dbs, str(nblocks))
    check("salt 32 bytes", saltlen == 32, str(saltlen))
    print(f"info salt={salt} sb_uuid={sb_uuid}")

    # recompute the hash partition with veritysetup, same salt and uuid
    dfile, hfile = os.path.join(d, "re-data.img"), os.path.join(d, "re-hash.img")
    with open(dfile, "wb") as f:
        f.write(dpart)
    with open(hfile, "wb") as f:
        f.truncate(got[1][1])
    out = run("veritysetup", "format", "--hash=sha256", f"--data-block-size={SECTOR}",
              f"--hash-block-size={SECTOR}", f"--salt={salt}", f"--uuid={sb_uuid}", dfile, hfile).decode()
    rh = [l.split(":", 1)[1].strip() for l in out.splitlines() if l.startswith("Root hash")][0]
    check("hash partition byte-identical (veritysetup, repart's salt+uuid)",
          open(hfile, "rb").read() == hpart)
    repart_rh = [p["roothash"] for p in rj if p.get("roothash")]
    check("root hash = repart --json roothash", repart_rh == [rh], f"{repart_rh} vs {rh}")
    check("data UUID = root hash[0:16]", sp[0]["uuid"].lower() == str(uuid.UUID(rh[:32])), sp[0]["uuid"])
    check("verity UUID = root hash[-16:]", sp[1]["uuid"].lower() == str(uuid.UUID(rh[-32:])), sp[1]["uuid"])
    for q in rj:
        i = names.index(q["label"])
        check(f"--json uuid/offset/raw_size {q['label']}",
              (q["uuid"], q["offset"], q["raw_size"]) == (sp[i]["uuid"].lower(), got[i][0], got[i][1]))

    if not sig:
        os.unlink(dfile)
        os.unlink(hfile)
        return
    check("verity-sig UUID = v4(HMAC(seed, type uuid))",
          sp[2]["uuid"].lower() == derive_partition(seed, types[names[2]]), sp[2]["uuid"])
    rhf = os.path.join(d, "roothash.txt")
    with open(rhf, "w") as f:
        f.write(rh)
    der_sig = run("openssl", "smime", "-sign", "-binary", "-noattr", "-outform", "DER",
                  "-md", "sha256", "-in", rhf, "-signer", os.path.join(d, "cert.pem"),
                  "-inkey", os.path.join(d, "key.pem"))
    cert_der = run("openssl", "x509", "-in", os.path.join(d, "cert.pem"), "-outform", "DER")
    obj = ('{"rootHash":"%s","certificateFingerprint":"%s","signature":"%s"}'
           % (rh, hashlib.sha256(cert_der).hexdigest(), base64.b64encode(der_sig).decode()))
    blob = obj.encode() + b"\0" * (up(len(obj)) - len(obj))
    blob += b"\0" * (VERITY_SIG_SIZE - len(blob))
    spart = part(2)
    check("verity-sig partition byte-identical (JSON + NUL padding)", spart == blob,
          spart.rstrip(b"\0")[:120].decode(errors="replace"))
    # the signature verifies as detached PKCS#7 over the hex string
    sigf = os.path.join(d, "sig.der")
    with open(sigf, "wb") as f:
        f.write(der_sig)
    r = subprocess.run(["openssl", "smime", "-verify", "-binary", "-inform", "DER", "-in", sigf,
                        "-content", rhf, "-CAfile", os.path.join(d, "cert.pem"), "-purpose", "any"],
                       capture_output=True)
    check("signature verifies (openssl smime -verify)", r.returncode == 0, r.stderr.decode()[-200:])
    os.unlink(dfile)
    os.unlink(hfile)


if __name__ == "__main__":
    main()
    sys.exit(1 if fails else 0)
