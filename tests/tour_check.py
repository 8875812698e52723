#!/usr/bin/env python3
"""Check that docs/tour.md still matches the kernel (part of `make test`, one boot at 4 CPUs).

The tour quotes output in backticks, with N for a number and ... for text left out; every such
quote (a backtick span with a standalone N or ..., plus the few in EXTRA_QUOTES) must match a
line of the output. Its `make run` commands must still be valid: their CMDLINE words are booted
together (SLOW cases left out), no word may be refused, and every test= glob must select a
case. Its monitor commands (`smpmm> ...`) are typed at the prompt and must be accepted, and the
numbers stop 3 and stop 4 explain are checked. Ends with `N passed, N failed`.
Not a test of the kernel's behaviour beyond that: the suites themselves do that.
"""
import argparse
import fnmatch
import os
import re
import shlex
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402
from shell_test import PROMPT, Console  # noqa: E402

# Quotes without N or ... that are output too (backticks also mark code, so not every span is).
EXTRA_QUOTES = ["==== smpmm summary ===="]
# Cases the tour's commands select that take long and quote nothing (at 4 CPUs on an idle
# 2-core machine: 15 s, 2 s, 2 s of the ~30 s the commands' suites take together).
SLOW = ["mm_buddy.mm_exhaustion_restores_counts", "mm_buddy.mm_bench_*",
        "mm_private.mm_private_pcp_exhaustion_all_cpus"]
SMP = 4


def tour_text(path):
    with open(path) as f:
        return f.read()


def code_lines(text):
    """Lines of indented code blocks, without the indentation."""
    return [line[4:].rstrip() for line in text.splitlines() if line.startswith("    ")]


def quotes(text):
    """The quoted output lines: backtick spans with a standalone N or '...', in prose (code
    blocks left out), whitespace as one space, in order, each once."""
    prose = " ".join(line for line in text.splitlines() if not line.startswith("    "))
    spans = re.findall(r"`([^`]+)`", re.sub(r"\s+", " ", prose))
    found = [s for s in spans if len(s) > 3 and re.search(r"(?<!\w)N(?!\w)|\.\.\.", s)]
    found += [q for q in EXTRA_QUOTES if q in spans]
    return list(dict.fromkeys(found))


def quote_regex(quote):
    """N: a number; ...: anything; a space: one or more."""
    rx = re.escape(quote)
    rx = rx.replace(r"\.\.\.", ".*?")
    rx = re.sub(r"(?<![\w\\])N(?!\w)", r"\\d+", rx)
    return re.compile(rx.replace(r"\ ", " +"))


def make_run_commands(text):
    """(line, {VAR: value}) of every `make run ...` line in the code blocks."""
    cmds = []
    for line in code_lines(text):
        if line.startswith("make run"):
            words = shlex.split(line.split("#")[0])[2:]
            cmds.append((line, dict(w.split("=", 1) for w in words if "=" in w)))
    return cmds


def boot_cmdline(cmds):
    """All the tours' CMDLINE words in one line: their test= globs joined, SLOW excluded."""
    globs, other = [], []
    for _, var in cmds:
        for word in var.get("CMDLINE", "").split():
            if word.startswith("test="):
                globs += [g for g in word[5:].split(",") if g not in globs]
            elif word not in other:
                other.append(word)
    return " ".join(["test=" + ",".join(globs + ["-" + s for s in SLOW])] + other + ["shell"])


def glob_selects(glob, names):
    """Does a test= glob (suite, or suite.case) select one of the cases that ran?"""
    pattern = glob if "." in glob else glob + ".*"
    return any(fnmatch.fnmatchcase(n, pattern) for n in names)


class Check:
    def __init__(self):
        self.passed = self.failed = 0

    def __call__(self, ok, what, detail=""):
        print(f"{'ok' if ok else 'not ok'} {what}" + ("" if ok or not detail else f": {detail}"))
        self.passed += bool(ok)
        self.failed += not ok


def check_commands(check, cmds, lines, cases):
    refused = [ln for ln in lines if ln.startswith("cmdline: ") and "(ignored)" in ln]
    check(not refused, "the tour's command-line words are all accepted", "; ".join(refused))
    for line, var in cmds:
        globs = [g for w in var.get("CMDLINE", "").split() if w.startswith("test=")
                 for g in w[5:].split(",")]
        missing = [g for g in globs if not glob_selects(g, cases)]
        check(globs and not missing, f"`{line.split('#')[0].strip()}` selects tests",
              f"no case matches {', '.join(missing) or 'test= (none given)'}")


def check_quotes(check, text, output_lines):
    for q in quotes(text):
        rx = quote_regex(q)
        hit = next((ln for ln in output_lines if rx.search(ln)), None)
        check(hit is not None, f"quoted `{q}` appears",
              "no output line matches it (the kernel's output or docs/tour.md changed: "
              "update the tour)")


def check_pagesets(check, out):
    """Stop 3: zoneinfo's DMA32 pagesets are the pcp: line's batch and high."""
    z = re.search(r"zone +DMA32\n(?:.*\n)*?\s*pagesets: high (\d+) batch (\d+)", out)
    p = re.search(r"pcp: on, .*DMA32 batch (\d+) high (\d+)", out)
    ok = bool(z and p and (z[1], z[2]) == (p[2], p[1]))
    check(ok, "mm.dump's DMA32 pagesets match the pcp: line (stop 3)",
          f"zoneinfo {z and z.group(0).splitlines()[-1].strip()}, {p and p.group(0)}")


def pcp_row(reply, cpu, zone="DMA32"):
    """count, batch and refill of `pcp CPU`'s row for zone."""
    m = re.search(rf"^\s*{cpu} {zone}\s+(\d+)\s+\d+\s+(\d+) \|\s+\d+\s+\d+\s+(\d+)", reply, re.M)
    return tuple(map(int, m.groups())) if m else None


def run_monitor(check, con, text, timeout):
    """Type the tour's `smpmm>` lines; each must be accepted. Returns {command: reply}."""
    replies = {}
    for line in code_lines(text):
        if not line.startswith(PROMPT):
            continue
        cmd = line[len(PROMPT):].strip()
        start = len(con.buf)
        con.type(cmd)
        end = con.expect(re.escape(PROMPT), start + len(cmd), timeout)
        reply = con.buf[start:end] if end else con.buf[start:]
        bad = re.search(r"usage:|unknown command|line too long", reply)
        check(end is not None and not bad, f"monitor `{cmd}` is accepted",
              reply.strip()[-300:] or "no prompt came back")
        replies.setdefault(cmd, []).append(reply)
    return replies


def check_refill(check, replies):
    """Stop 4: after `alloc 0 on 1`, CPU 1's list was refilled once and holds batch - 1."""
    before, after = (pcp_row(r, 1) for r in replies.get("pcp 1", [""] * 2)[:2])
    ok = before and after and after[2] == before[2] + 1 and after[0] == after[1] - 1
    check(ok, "stop 4: the first allocation on CPU 1 refilled a batch, count is batch - 1",
          f"pcp 1 before {before}, after {after} (count, batch, refill)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iso", default="build/smpmm.iso")
    ap.add_argument("--tour", default=os.path.join(os.path.dirname(__file__), "..", "docs",
                                                   "tour.md"))
    ap.add_argument("--log", default="build/tour_check.log")
    ap.add_argument("--timeout", type=float, default=240)
    args = ap.parse_args()
    text = tour_text(args.tour)
    cmds = make_run_commands(text)
    cmdline = boot_cmdline(cmds)
    print(f"tour_check: {len(cmds)} make run commands, {len(quotes(text))} quotes; booting "
          f"{SMP} CPUs with: {cmdline}", flush=True)
    check = Check()
    start = time.monotonic()
    con = Console(["qemu-system-x86_64", "-M", "q35", "-m", "2G", "-smp", str(SMP), "-display",
                   "none", "-serial", "stdio", "-monitor", "none", "-no-reboot", "-device",
                   "isa-debug-exit,iobase=0xf4,iosize=0x04", "-cdrom", args.iso, "-fw_cfg",
                   "name=opt/smpmm/cmdline,string=" + runner.fw_cfg_escape(
                       f"expect_cpus={SMP} {cmdline}")])
    prompt = con.expect(re.escape(PROMPT), 0, args.timeout)
    check(prompt is not None, f"boot reached the monitor prompt in {time.monotonic() - start:.0f} s",
          f"no prompt within {args.timeout:.0f} s")
    replies = run_monitor(check, con, text, 30) if prompt is not None else {}
    if prompt is not None:
        con.type("exit")
    try:
        con.proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        con.proc.kill()
    out = con.buf
    os.makedirs(os.path.dirname(args.log) or ".", exist_ok=True)
    with open(args.log, "w") as f:
        f.write(out)
    lines = [runner.ANSI_RE.sub("", ln) for ln in out.splitlines()]
    parser = runner.KtapParser()
    for ln in lines:
        parser.feed(ln)
    parser.finish()
    passed, failed, _, missing = parser.counts()
    check(passed and not failed and not missing and not parser.errors,
          f"the selected tests pass ({passed} passed)",
          f"{failed} failed, {missing} missing, {parser.errors}")
    cases = [name for name, node in (parser.root.walk() if parser.root else []) if node.leaf
             and name.count(".") == 1]
    check_commands(check, cmds, lines, cases)
    check_quotes(check, text, lines)
    check_pagesets(check, out)
    if replies:
        check_refill(check, replies)
    print(f"tour_check: {time.monotonic() - start:.0f} s, log {args.log}")
    print(f"{check.passed} passed, {check.failed} failed")
    return 1 if check.failed else 0


if __name__ == "__main__":
    sys.exit(main())
