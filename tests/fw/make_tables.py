#!/usr/bin/env python3
"""ACPI table bodies a QEMU row adds with -acpitable (QEMU writes the 36-byte header and the
checksum; tests/matrix.py, row fw-bad-tables-smp2): firmware input that is well formed but
wrong, so that the kernel's consumers of it are tested in a real boot, not only on the host
(tests/host/test_boot_input.c, tests/fuzz/boot_fuzz.c). Writes tests/fw/*.bin.

  python3 tests/fw/make_tables.py
"""

import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
MiB, GiB = 1 << 20, 1 << 30


def srat_memory(pxm, base, length, flags=1):
    return struct.pack("<BBIHQQIIQ", 1, 40, pxm, 0, base, length, 0, flags, 0)


def srat_cpu(pxm, apic_id):
    return struct.pack("<BBBBIB3sI", 0, 16, pxm, apic_id, 1, 0, b"\0\0\0", 0)


def srat(entries):
    """The SRAT's body: 4 bytes of 'table revision' (1) and 8 reserved, then the entries."""
    return struct.pack("<I8x", 1) + b"".join(entries)


def hpet(base):
    """The HPET table's body: event timer block ID, the registers' address (a generic address
    structure in memory space), HPET number, minimum tick, page protection."""
    return struct.pack("<IBBBBQBHB", 0x8086a201, 0, 64, 0, 0, base, 0, 0x80, 0)


TABLES = {
    # Node 0's memory listed twice for a 2 GiB machine: 1 GiB of RAM lies in no range
    # (issue 29 #9: it was counted twice, the SRAT adopted, and 1 GiB dropped unsaid).
    "srat-range-listed-twice.bin": srat([srat_memory(0, 0, 1 * GiB),
                                         srat_memory(0, 0, 1 * GiB),
                                         srat_cpu(0, 0), srat_cpu(0, 1)]),
    # The HPET's registers said to be at 16 MiB, in usable RAM: nothing may be written there.
    "hpet-in-ram.bin": hpet(16 * MiB),
}


def main():
    for name, body in TABLES.items():
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(body)
    print(f"{len(TABLES)} table bodies in {HERE}")


if __name__ == "__main__":
    main()
