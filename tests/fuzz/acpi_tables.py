"""ACPI table builders for the seed corpora of the ACPI fuzz targets (make_acpi_seeds.py,
make_acpi_numa_seeds.py): checksummed SDTs and RSDPs, laid out as the targets read memory
(the RSDP at offset 0, table pointers are offsets), and writing a corpus. Not a parser."""
import os
import struct


def checksum_fix(buf, at, start=0, end=None):
    """Set buf[at] so that bytes start..end sum to 0 (mod 256)."""
    end = len(buf) if end is None else end
    buf[at] = 0
    buf[at] = (-sum(buf[start:end])) & 0xFF


def sdt(sig, body, rev=1):
    """A system description table: the 36-byte header (QEMU's OEM fields) and body."""
    hdr = bytearray(sig + struct.pack("<IBB", 36 + len(body), rev, 0) + b"BOCHS BXPC    " +
                    struct.pack("<III", 1, 0x20202020, 1))
    t = hdr + body
    checksum_fix(t, 9)
    return bytes(t)


def rsdp(v2, root_at=64):
    """The RSDP: ACPI 1.0 (20 bytes, RSDT at root_at) or 2.0 (36 bytes, XSDT at root_at)."""
    if not v2:
        r = bytearray(b"RSD PTR " + b"\0" + b"BOCHS " + bytes([0]) + struct.pack("<I", root_at))
        checksum_fix(r, 8, 0, 20)
        return bytes(r)
    r = bytearray(b"RSD PTR " + b"\0" + b"BOCHS " + bytes([2]) + struct.pack("<I", 0) +
                  struct.pack("<IQ", 36, root_at) + b"\0\0\0\0")
    checksum_fix(r, 8, 0, 20)
    checksum_fix(r, 32, 0, 36)
    return bytes(r)


def write_corpus(out, seeds):
    """Write each seed (name -> bytes) to out/name."""
    os.makedirs(out, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print("wrote", len(seeds), "seeds to", out)
