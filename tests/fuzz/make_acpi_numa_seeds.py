#!/usr/bin/env python3
"""Seed corpus for the SRAT/SLIT fuzz target: ACPI 2.0 table sets (RSDP at offset 0, XSDT,
SRAT, SLIT; pointers are offsets) shaped as QEMU 7.2 writes them for its -numa options:
two even nodes, four nodes with uneven distances, a memoryless node, a CPU-less node, x2APIC
affinity entries, a hot-pluggable range, and no SLIT. Run from the repo root."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from acpi_tables import rsdp, sdt, write_corpus  # noqa: E402

OUT = "tests/fuzz/corpus/acpi_numa"


def srat(cpus, mems, hotplug=None):
    """cpus: node of each CPU (APIC ID = index; >= 255 as x2APIC entries); mems: (node, base,
    size) ranges; then QEMU's zeroed padding entries and an optional hot-pluggable range."""
    body = struct.pack("<IQ", 1, 0)
    for apic, node in enumerate(cpus):
        if apic < 255:
            body += struct.pack("<BBBBIB3sI", 0, 16, node, apic, 1, 0, bytes(3), 0)
        else:
            body += struct.pack("<BBHIIIII", 2, 24, 0, node, apic, 1, 0, 0)
    entries = list(mems) + [(0, 0, 0)] * max(0, len(set(c for c in cpus)) + 2 - len(mems))
    for node, base, size in entries:
        flags = 1 if size else 0
        body += struct.pack("<BBIHQQIIQ", 1, 40, node, 0, base, size, 0, flags, 0)
    if hotplug:
        node, base, size = hotplug
        body += struct.pack("<BBIHQQIIQ", 1, 40, node, 0, base, size, 0, 3, 0)
    return sdt(b"SRAT", body, 3)


def slit(matrix):
    n = len(matrix)
    return sdt(b"SLIT", struct.pack("<Q", n) + bytes(v for row in matrix for v in row))


def image(tables):
    at = 64 + 36 + 8 * len(tables)
    pointers, blobs = [], b""
    for t in tables:
        pointers.append(at + len(blobs))
        blobs += t
    root = sdt(b"XSDT", b"".join(struct.pack("<Q", p) for p in pointers))
    mem = bytearray(64)
    r = rsdp(True)
    mem[0:len(r)] = r
    return bytes(mem + root + blobs)


G, M = 1 << 30, 1 << 20
two = [(0, 0, 640 << 10), (0, M, G - M), (1, G, G)]
seeds = {
    "two_nodes": image([srat([0, 0, 1, 1], two), slit([[10, 20], [20, 10]])]),
    "two_nodes_no_slit": image([srat([0, 0, 1, 1], two)]),
    "four_uneven": image([srat([0, 1, 2, 3], [(0, 0, 640 << 10), (0, M, G - M), (1, G, G),
                                              (2, 2 * G, G), (3, 4 * G, G)]),
                          slit([[10, 12, 20, 30], [12, 10, 14, 24], [20, 14, 10, 16],
                                [30, 24, 16, 10]])]),
    "memoryless": image([srat([0, 0, 1, 1], [(0, 0, 640 << 10), (0, M, 2 * G - M)]),
                         slit([[10, 20], [20, 10]])]),
    "cpuless": image([srat([0, 0, 0, 0], two), slit([[10, 20], [20, 10]])]),
    "x2apic_hotplug": image([srat([0] * 254 + [1] * 6, two, hotplug=(1, 4 * G, 4 * G)),
                             slit([[10, 20], [20, 10]])]),
}
write_corpus(OUT, seeds)
