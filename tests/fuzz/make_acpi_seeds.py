#!/usr/bin/env python3
"""Seed corpus for the ACPI fuzz target: valid ACPI 1.0 (RSDT) and 2.0 (XSDT) table sets with
local APIC (type 0), local x2APIC (type 9), I/O APIC, override and NMI (types 4, 10) entries, laid out as the
target reads them (RSDP at offset 0, pointers are offsets). Run from the repo root."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from acpi_tables import rsdp, sdt, write_corpus  # noqa: E402

OUT = "tests/fuzz/corpus/acpi"


def madt(n_lapic, n_x2apic, disabled=1):
    body = struct.pack("<II", 0xFEE00000, 1)
    for i in range(n_lapic):
        body += struct.pack("<BBBBI", 0, 8, i, i, 1)
    for i in range(disabled):
        body += struct.pack("<BBBBI", 0, 8, 200 + i, 200 + i, 0)
    for i in range(n_x2apic):
        body += struct.pack("<BBHIII", 9, 16, 0, 300 + i, 1, 300 + i)
    body += struct.pack("<BBBBII", 1, 12, 0, 0, 0xFEC00000, 0)       # I/O APIC
    body += struct.pack("<BBBBIH", 2, 10, 0, 0, 2, 0)                # interrupt override
    body += struct.pack("<BBBHB", 4, 6, 0xFF, 0, 1)                  # LINT1 NMI, all (type 4)
    if n_x2apic:
        body += struct.pack("<BBHIB3x", 10, 12, 0, 0xFFFFFFFF, 1)    # same, x2APIC (type 10)
    return sdt(b"APIC", body, 3)


def image(v2, n_lapic, n_x2apic):
    mem = bytearray(64)
    m = madt(n_lapic, n_x2apic)
    madt_at = 256
    if v2:
        root = sdt(b"XSDT", struct.pack("<Q", madt_at))
    else:
        root = sdt(b"RSDT", struct.pack("<I", madt_at))
    r = rsdp(v2)
    mem[0:len(r)] = r
    mem += root
    mem += b"\0" * (madt_at - len(mem))
    mem += m
    return bytes(mem)


seeds = {"v1_rsdt_4cpus": image(False, 4, 0), "v2_xsdt_40cpus": image(True, 40, 0),
         "v2_x2apic_mixed": image(True, 8, 8), "v2_300cpus": image(True, 250, 50)}
write_corpus(OUT, seeds)
