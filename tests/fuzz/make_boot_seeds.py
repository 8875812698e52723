#!/usr/bin/env python3
"""Seed corpus of tests/fuzz/boot_fuzz.c: the boots the project's QEMU configurations give
(tests/matrix.py), written in the fuzz target's program encoding (its header). Each seed is
a machine someone runs, none a planted bug. Writes tests/fuzz/corpus/boot/.

  python3 tests/fuzz/make_boot_seeds.py
"""

import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "boot")
KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
USABLE, RESERVED, ACPI, NVS = 1, 2, 3, 4


def addr(x):
    """The 5-byte address encoding: v << shift (shift < 32), + 0x400 if bit 5 is set."""
    for bit5 in (0, 0x20):
        y = x - (0x400 if bit5 else 0)
        for shift in range(32):
            if y >= 0 and y % (1 << shift) == 0 and y >> shift < 1 << 32:
                return struct.pack("<BI", shift | bit5, y >> shift)
    raise ValueError(hex(x))


def header(x2apic=False, xsdt=False, bsp=0):
    return struct.pack("<B", (1 if x2apic else 0) | (2 if xsdt else 0)) + \
        struct.pack("<I", bsp)[:3]


def entry(base, length, kind, count=0, gap=0):
    return b"\x00" + addr(base) + addr(length) + struct.pack("<BBH", kind, count, gap)


def srat_mem(base, length, dom, flags=1, count=0, gap=0, step=0):
    return b"\x01" + addr(base) + addr(length) + struct.pack("<BBB", dom, flags, count) + \
        addr(gap << 12) + struct.pack("<B", step)


def srat_cpu(apic, dom, count, x2=False, id_step=1, dom_step=0, flags=1):
    return b"\x02" + struct.pack("<BIBBHBB", int(x2), apic, dom, flags, count - 1, id_step,
                                 dom_step)


def slit(matrix):
    n = len(matrix)
    upper = bytes(matrix[a][b] for a in range(n) for b in range(a + 1, n))
    return b"\x03" + struct.pack("<BB", n, 1) + upper


def madt_cpus(apic, count, x2=False, step=1):
    return b"\x04" + struct.pack("<BIBHB", int(x2), apic, 1, count - 1, step)


def nmi_all_lint1():
    return b"\x05" + struct.pack("<BQ", 2, 0xff | 1 << 8)


def words(text, count=1):
    w = text.encode()
    return b"\x06" + struct.pack("<BB", count - 1, len(w)) + w


def srat_by_map(nodes, flags=1):
    """The usable map entries so far shared out to nodes in order, a range per node."""
    return b"\x0a" + struct.pack("<BB", nodes - 1, flags)


def hpet(base):
    return b"\x09" + addr(base)


def qemu_bios_map(mem):
    """SeaBIOS's e820 on q35 with mem bytes of RAM (below 2 GiB: all of it low)."""
    low = min(mem, 2 * GiB)
    out = entry(0, 0x9fc00, USABLE) + entry(0x9fc00, 0x400, RESERVED) + \
        entry(0xf0000, 0x10000, RESERVED) + entry(1 * MiB, low - 1 * MiB - 0x20000, USABLE) + \
        entry(low - 0x20000, 0x20000, RESERVED) + entry(0xb0000000, 0x10000000, RESERVED) + \
        entry(0xfed1c000, 0x4000, RESERVED) + entry(0xfeffc000, 0x4000, RESERVED) + \
        entry(0xfffc0000, 0x40000, RESERVED)
    if mem > 2 * GiB:
        out += entry(4 * GiB, mem - 2 * GiB, USABLE)
    return out


def uefi_map():
    """An OVMF-like map: many small entries (boot services, runtime, ACPI) below 2 GiB."""
    out = entry(0, 0xa0000, USABLE) + entry(1 * MiB, 7 * MiB, USABLE)
    out += entry(8 * MiB, 16 * KiB, NVS) + entry(8 * MiB + 16 * KiB, 8 * MiB, USABLE)
    out += entry(32 * MiB, 64 * KiB, USABLE, count=90, gap=1)      # 90 pieces, holes between
    out += entry(64 * MiB, 1984 * MiB - 64 * MiB, USABLE)
    out += entry(1984 * MiB, 128 * KiB, ACPI, count=3, gap=4)
    out += entry(0xffc00000, 4 * MiB, RESERVED)
    return out


SEEDS = {
    # make run: -smp 40, 2G, one node, no SRAT.
    "qemu_q35_2g_smp40": header() + qemu_bios_map(2 * GiB) + madt_cpus(0, 40) +
    nmi_all_lint1() + hpet(0xfed00000) + words("test=boot.*,mm_* expect_cpus=40"),
    # numa2-smp40: two nodes of 1 GiB and 20 CPUs each, QEMU's SRAT and SLIT.
    "qemu_numa2": header() + qemu_bios_map(2 * GiB) + madt_cpus(0, 40) +
    srat_mem(0, 0xa0000, 0) + srat_mem(1 * MiB, 1 * GiB - 1 * MiB, 0) +
    srat_mem(1 * GiB, 1 * GiB, 1) + srat_cpu(0, 0, 20) + srat_cpu(20, 1, 20) +
    slit([[10, 20], [20, 10]]),
    # numa4-uneven-smp8: four nodes of 512 MiB, uneven distances.
    "qemu_numa4_uneven": header() + qemu_bios_map(2 * GiB) + madt_cpus(0, 8) +
    srat_mem(0, 0xa0000, 0) + srat_mem(1 * MiB, 511 * MiB, 0) +
    srat_mem(512 * MiB, 512 * MiB, 1, count=1, step=1) + srat_mem(1536 * MiB, 512 * MiB, 3) +
    srat_cpu(0, 0, 2) + srat_cpu(2, 1, 2) + srat_cpu(4, 2, 2) + srat_cpu(6, 3, 2) +
    slit([[10, 12, 20, 30], [12, 10, 14, 24], [20, 14, 10, 16], [30, 24, 16, 10]]),
    # numa2-6G-smp4: 3 GiB a node, Normal in both, a hot-pluggable range above the RAM.
    "qemu_numa2_6g_hotplug": header() + qemu_bios_map(6 * GiB) + madt_cpus(0, 4) +
    srat_mem(0, 0xa0000, 0) + srat_mem(1 * MiB, 2 * GiB - 1 * MiB, 0) +
    srat_mem(4 * GiB, 1 * GiB, 0) + srat_mem(5 * GiB, 3 * GiB, 1) +
    srat_mem(8 * GiB, 2 * GiB, 1, flags=3) + srat_cpu(0, 0, 2) + srat_cpu(2, 1, 2),
    # numa-memoryless-smp4 and numa-cpuless-smp4.
    "qemu_numa_memoryless": header() + qemu_bios_map(2 * GiB) + madt_cpus(0, 4) +
    srat_mem(0, 0xa0000, 0) + srat_mem(1 * MiB, 2 * GiB - 1 * MiB, 0) + srat_cpu(0, 0, 2) +
    srat_cpu(2, 1, 2),
    "qemu_numa_cpuless": header() + qemu_bios_map(2 * GiB) + madt_cpus(0, 4) +
    srat_mem(0, 0xa0000, 0) + srat_mem(1 * MiB, 1 * GiB - 1 * MiB, 0) +
    srat_mem(1 * GiB, 1 * GiB, 1) + srat_cpu(0, 0, 4),
    # An 8-socket machine (-numa node x8, 256 MiB each, maxmem: a hot-pluggable range in the
    # last node), SLIT with three distances.
    "qemu_numa8_hotplug": header() + qemu_bios_map(2 * GiB) + madt_cpus(0, 16) +
    srat_mem(0, 0xa0000, 0) + srat_mem(1 * MiB, 255 * MiB, 0) +
    srat_mem(256 * MiB, 256 * MiB, 1, count=6, step=1) + srat_mem(4 * GiB, 4 * GiB, 7, flags=3) +
    srat_cpu(0, 0, 16, dom_step=1) +
    slit([[10 if a == b else 16 if a // 4 == b // 4 else 32 for b in range(8)] for a in range(8)]),
    # uefi-q35 with -numa node,mem=1000M -numa node,mem=1048M: a node boundary off the
    # 128 MiB section lines, on OVMF's fragmented map.
    "ovmf_numa2_uneven": header(xsdt=True) + uefi_map() + madt_cpus(0, 4) +
    srat_mem(0, 0xa0000, 0) + srat_mem(1 * MiB, 999 * MiB, 0) +
    srat_mem(1000 * MiB, 1048 * MiB, 1) + srat_cpu(0, 0, 2) + srat_cpu(2, 1, 2),
    # Firmware that gives two nodes a share each of the RAM entries it found, on OVMF's map.
    "ovmf_numa2_by_map": header(xsdt=True) + uefi_map() + madt_cpus(0, 4) + srat_by_map(2) +
    srat_cpu(0, 0, 2) + srat_cpu(2, 1, 2),
    # uefi-q35-smp40: OVMF's fragmented map, ACPI 2.0.
    "ovmf_q35_smp40": header(xsdt=True) + uefi_map() + madt_cpus(0, 40),
    # test-big: 1024 CPUs under QEMU 10 in x2APIC mode, IDs past 254 from type 9 entries.
    "qemu10_x2apic_1024": header(x2apic=True, xsdt=True) + qemu_bios_map(2 * GiB) +
    madt_cpus(0, 255) + madt_cpus(255, 769, x2=True) +
    words("smp.ap_timeout_ms=600000 smp.call_timeout_ms=900000 test=boot.*"),
    # bios-q35-smp4-64M and a long command line of test filters.
    "qemu_q35_64m_smp4": header() + qemu_bios_map(64 * MiB) + madt_cpus(0, 4) +
    words("test=boot.*,mm_*,gup*", 40) + words("smp.maxcpus=4 numa=off"),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print(f"{len(SEEDS)} seeds in {OUT}")


if __name__ == "__main__":
    main()
