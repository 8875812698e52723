#!/usr/bin/env python3
"""Test the live serial monitor (`make shell`) the way a person uses it: boot with `shell`,
wait for the prompt, type each command, and check what comes back. Ends with
`N passed, N failed`; exit status non-zero on any failure or a timeout."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402

PROMPT = "smpmm> "

# (what to type, regex the reply must contain). The test boots 4 CPUs (--smp): CPUs 0-3.
SCRIPT = [
    ("help", r"verify\s+mm_verify"),
    ("HELP", r"verify\s+mm_verify"),                   # commands are case-insensitive
    ("cpus", r"\n\s+3\s+\d+\s+yes"),
    ("mem", r"free pages: \d+ of \d+ managed"),
    ("mem zoneinfo", r"(?i)zone"),
    ("mem pagetypeinfo", r"(?i)movable"),
    ("alloc 2 on 1", r"alloc: #0 = order 2 at pfn 0x[0-9a-f]+ \(zone \w+\) on cpu1"),
    ("pcp 1", r"\n\s*1 \w+\s+\d+"),
    ("free 0", r"free: 1 block\(s\) freed"),
    ("Alloc 0 ON 2", r"alloc: #0 = order 0 at pfn 0x[0-9a-f]+ \(zone \w+\) on cpu2"),
    ("FREE ALL", r"free: 1 block\(s\) freed"),
    ("drain 1", r"drain: pages on per-CPU lists \d+ -> \d+"),
    ("drain all", r"drain: pages on per-CPU lists \d+ -> 0"),
    ("pin 8", r"pin: 8 page\(s\) pinned; 8 held; .*maybe_dma_pinned yes"),
    ("unpin", r"unpin: 8 page\(s\) unpinned"),
    ("lockstat", r"lock\s+acquired\s+contended[^\n]*\n(.*\n)*pcp cpu[0-3] DMA32 "),
    ("stress 1", r"mm_verify: 0 problems"),
    ("model", r"model: per-CPU lists use trylock, for the allocator's life"),
    ("verify", r"verify: ok \(0 problems\)"),
    # Bad input: what was wrong and what is allowed, then the usage line; nothing runs.
    ("alloc", r"alloc: which order\? 0 \(one page\) to 10 \(4096 KiB\)\nusage: alloc ORDER"),
    ("alloc x", r"alloc: 'x' is not an order: 0 to 10\nusage: alloc ORDER \[on CPU\]"),
    ("alloc 99", r"alloc: order 99 is too large: the highest order is 10 \(MAX_ORDER, 4096 KiB "
                 r"blocks\)\nusage: alloc"),
    ("alloc 3 on 99", r"alloc: there is no online CPU 99; online CPUs: 0-3\nusage: alloc"),
    ("alloc 3 at 1", r"alloc: after the order only 'on CPU' may follow\nusage: alloc"),
    ("pcp 999", r"pcp: there is no online CPU 999; online CPUs: 0-3\nusage: pcp \[CPU\]"),
    ("pcp one", r"pcp: 'one' is not a CPU number; online CPUs: 0-3\nusage: pcp"),
    ("drain 999", r"drain: there is no online CPU 999; online CPUs: 0-3\nusage: drain \[CPU\|all\]"),
    ("free", r"free: which block\? its number from alloc \(#N\), or all; held: none"),
    ("free 42", r"free: block #42 is not held; held: none \(alloc makes some\)\nusage: free"),
    ("free x", r"free: 'x' is not a block number; held: none"),
    ("pin -5", r"pin: '-5' is not a page count: 1 to 256 \(then 'longterm' if wanted\)\nusage: pin"),
    ("pin 0", r"pin: 0 pages: 1 to 256 can be pinned now \(0 of 256 held; unpin frees them\)"),
    ("pin 300", r"pin: 300 pages: 1 to 256 can be pinned now"),
    ("pin 2 forever", r"pin: after the count only 'longterm' may follow\nusage: pin"),
    ("model irqsave", r"model: the model is fixed when the allocator is created \(now trylock\): "
                      r"boot with pcp.lock=irqsave\nusage: model"),
    ("model foo", r"model: no model 'foo': irqoff, irqsave or trylock\nusage: model"),
    ("mem nonsense", r"mem: no table 'nonsense': buddyinfo \(the default\), zoneinfo or "
                     r"pagetypeinfo\nusage: mem"),
    ("stress 0", r"stress: '0' is not a number of seconds from 1 to 3600\nusage: stress"),
    ("bench nosuch", r"bench: no benchmark 'nosuch'; the benchmarks are:\n\s+\w+\s+\S"),
    ("cpus 1 2", r"cpus: too many words: 2 after 'cpus', at most 0\nusage: cpus"),
    ("frobnicate", r"unknown command 'frobnicate' \(try help\)"),
    ("pcpp 1", r"unknown command 'pcpp': did you mean 'pcp'\? \(help lists them all\)"),
    ("drian all", r"unknown command 'drian': did you mean 'drain'\?"),
    # A line longer than the monitor's buffer is refused whole, not cut and run.
    ("alloc 0 " + "x" * 292, r"line too long: 300 characters, the monitor reads at most 127; "
                             r"nothing was run"),
    ("verify", r"verify: ok \(0 problems\)"),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iso", default="build/smpmm.iso")
    ap.add_argument("--smp", type=int, default=4)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--log", default="build/shell_test.log")
    args = ap.parse_args()
    # The machine `make shell` boots (tests/runner.py --shell), its serial port on pipes.
    run_args = runner.parse_args(["--iso", args.iso, "--smp", str(args.smp), "--mem", "1G",
                                  "--shell", "--log", args.log + ".serial"])
    with tempfile.TemporaryDirectory(prefix="smpmm-shell-test-") as tmp:
        passed, failed = script(runner.MonitorConsole(runner.qemu_command(run_args, tmp)), args)
    if scripted(args):
        failed += 1
    else:
        passed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


# `make shell` fed from a pipe (runner.py's scripted monitor): each line typed at a prompt,
# none lost (fed at once, they used to reach the firmware and the kernel's UART reset first:
# "pcp 1" arrived as "unknown command 'p'").
PIPED = "pcp 1\n# a comment, skipped\nalloc 0 on 1\n\npcp 1\n"
PIPED_REPLIES = [r"smpmm> pcp 1\n(.*\n)*?\s*1 \w+\s+\d+",
                 r"smpmm> alloc 0 on 1\nalloc: #0 = order 0 at pfn 0x[0-9a-f]+ \(zone \w+\) on cpu1",
                 r"smpmm> pcp 1\n(.*\n)*?\s*1 \w+\s+\d+", r"smpmm> exit"]


def scripted(args):
    """The monitor scripted through a pipe, as `printf ... | make shell` runs it; 0 if every
    reply came, in order, nothing was unknown, and QEMU left by the implied exit."""
    cmd = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "runner.py"),
           "--iso", args.iso, "--smp", str(args.smp), "--mem", "1G", "--shell",
           "--timeout", str(int(args.timeout)), "--log", args.log + ".piped.serial"]
    res = subprocess.run(cmd, input=PIPED, capture_output=True, text=True, timeout=args.timeout * 4)
    out, pos, bad = res.stdout, 0, []
    for pattern in PIPED_REPLIES:
        m = re.compile(pattern).search(out, pos)
        if not m:
            bad.append("no /%s/" % pattern)
            break
        pos = m.end()
    if "unknown command" in out:
        bad.append("a line arrived mangled: " + re.search(r"unknown command.*", out).group(0))
    if res.returncode:
        bad.append("runner exit %d" % res.returncode)
    with open(args.log + ".piped", "w") as f:
        f.write(out + res.stderr)
    print("%s piped_script_every_line_typed_at_a_prompt%s" % ("not ok" if bad else "ok",
                                                             ": " + "; ".join(bad) if bad else ""))
    if bad:
        print(out[-1500:])
    return 1 if bad else 0


def script(con, args):
    """Type SCRIPT at the prompt, then exit; prints a line per step; returns (passed, failed)."""
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
            print("ok %s" % (line if len(line) < 60 else line[:40] + "... (%d characters)" % len(line)))
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
    return passed, failed


if __name__ == "__main__":
    sys.exit(main())
