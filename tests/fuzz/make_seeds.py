#!/usr/bin/env python3
"""Write the seed corpus for the multiboot2 fuzz target: well-formed information blocks like
GRUB's (BIOS and UEFI shapes) plus a few malformed ones. Run from the repo root."""
import os
import struct

OUT = "tests/fuzz/corpus/multiboot"


def tag(t, body):
    raw = struct.pack("<II", t, 8 + len(body)) + body
    return raw + b"\0" * (-len(raw) % 8)


def mmap(entries):
    body = struct.pack("<II", 24, 0)
    for base, length, typ in entries:
        body += struct.pack("<QQII", base, length, typ, 0)
    return tag(6, body)


def rsdp(v2):
    r = b"RSD PTR " + b"\0" + b"BOCHS " + bytes([2 if v2 else 0]) + struct.pack("<I", 0x7FFE1234)
    if v2:
        r += struct.pack("<IQ", 36, 0x7FFE2000) + b"\0\0\0\0"
    return tag(15 if v2 else 14, r)


def mbi(tags):
    body = b"".join(tags) + struct.pack("<II", 0, 8)
    return struct.pack("<II", 8 + len(body), 0) + body


bios = [(0, 0x9FC00, 1), (0x9FC00, 0x400, 2), (0xF0000, 0x10000, 2),
        (0x100000, 0x7FEDF000, 1), (0x7FFDF000, 0x21000, 2), (0xFFFC0000, 0x40000, 2)]
seeds = {
    "bios_q35": mbi([tag(1, b"test=boot.* seed=1\0"), tag(2, b"GRUB 2.06\0"), mmap(bios), rsdp(False)]),
    "uefi_like": mbi([tag(1, b"\0"), mmap(bios + [(0x100000000, 0x80000000, 1)]), rsdp(False), rsdp(True),
                      tag(17, struct.pack("<II", 48, 1) + b"\0" * 96)]),
    "unsorted_overlap": mbi([mmap([(0x200000, 0x1000, 1), (0, 0x300000, 1), (0x1234, 0, 1), (0x1001, 0x2003, 1)])]),
    "no_end_tag": mbi([tag(1, b"x\0")])[:-8],
    "tag_too_long": struct.pack("<II", 24, 0) + struct.pack("<II", 1, 4096) + b"abcdefgh",
}
os.makedirs(OUT, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
print("wrote", len(seeds), "seeds to", OUT)
