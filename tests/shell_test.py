#!/usr/bin/env python3
"""Test the live serial monitor (`make shell`) the way a person uses it: boot with `shell`,
wait for the prompt, type each command, and check what comes back. Ends with
`N passed, N failed`; exit status non-zero on any failure or a timeout."""
import argparse
import os
import re
import subprocess
import sys
import threading
import time

PROMPT = "smpmm> "

# (what to type, regex the reply must contain)
SCRIPT = [
    ("help", r"verify\s+mm_verify"),
    ("cpus", r"\n\s+3\s+\d+\s+yes"),
    ("mem", r"free pages: \d+ of \d+ managed"),
    ("mem zoneinfo", r"(?i)zone"),
    ("mem pagetypeinfo", r"(?i)movable"),
    ("alloc 2 on 1", r"alloc: #0 = order 2 at pfn 0x[0-9a-f]+ \(zone \w+\) on cpu1"),
    ("pcp 1", r"\n\s*1 \w+\s+\d+"),
    ("free 0", r"free: 1 block\(s\) freed"),
    ("drain all", r"drain: pages on per-CPU lists \d+ -> 0"),
    ("pin 8", r"pin: 8 page\(s\) pinned; 8 held; .*maybe_dma_pinned yes"),
    ("unpin", r"unpin: 8 page\(s\) unpinned"),
    ("lockstat", r"lock\s+acquired\s+contended"),
    ("stress 1", r"mm_verify: 0 problems"),
    ("model irqsave", r"model: per-CPU lists now use irqsave"),
    ("verify", r"verify: ok \(0 problems\)"),
    ("alloc x", r"usage: alloc ORDER \[on CPU\]"),
    ("drain 999", r"usage: drain \[CPU\|all\]"),
    ("frobnicate", r"unknown command 'frobnicate' \(try help\)"),
]


class Console:
    """QEMU's serial port on pipes: everything read is kept; expect() waits for a pattern."""

    def __init__(self, cmd):
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        self.buf = ""
        self.lock = threading.Lock()
        threading.Thread(target=self._reader, daemon=True).start()

    def _reader(self):
        for chunk in iter(lambda: self.proc.stdout.read1(4096), b""):
            with self.lock:
                self.buf += chunk.decode(errors="replace").replace("\r", "")

    def expect(self, pattern, since, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                text = self.buf[since:]
            m = re.search(pattern, text)
            if m:
                return since + m.end()
            if self.proc.poll() is not None:
                return None
            time.sleep(0.05)
        return None

    def type(self, line):
        for ch in line + "\r":	# one byte at a time, as a person types
            self.proc.stdin.write(ch.encode())
            self.proc.stdin.flush()
            time.sleep(0.002)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iso", default="build/smpmm.iso")
    ap.add_argument("--smp", type=int, default=4)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--log", default="build/shell_test.log")
    args = ap.parse_args()
    cmd = ["qemu-system-x86_64", "-M", "q35", "-m", "1G", "-smp", str(args.smp), "-display",
           "none", "-serial", "stdio", "-monitor", "none", "-no-reboot", "-device",
           "isa-debug-exit,iobase=0xf4,iosize=0x04", "-cdrom", args.iso, "-fw_cfg",
           "name=opt/smpmm/cmdline,string=test=none shell"]
    con = Console(cmd)
    passed = failed = 0
    pos = con.expect(re.escape(PROMPT), 0, args.timeout)
    if pos is None:
        print("not ok boot: no prompt within %.0f s" % args.timeout)
        failed += 1
    for line, pattern in SCRIPT if pos is not None else []:
        start = len(con.buf)
        con.type(line)
        end = con.expect(pattern, start, args.timeout)
        if end is not None and con.expect(re.escape(PROMPT), end, args.timeout) is not None:
            print("ok %s" % line)
            passed += 1
        else:
            print("not ok %s: expected /%s/; got:\n%s" % (line, pattern, con.buf[start:][-800:]))
            failed += 1
            pos = con.expect(re.escape(PROMPT), start, 5)
    if pos is not None:
        con.type("exit")
    try:
        status = con.proc.wait(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        con.proc.kill()
        status = None
    if status == 33:
        print("ok exit (QEMU status 33)")
        passed += 1
    else:
        print("not ok exit: QEMU status %s" % status)
        failed += 1
    os.makedirs(os.path.dirname(args.log) or ".", exist_ok=True)
    with open(args.log, "w") as f:
        f.write(con.buf)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
