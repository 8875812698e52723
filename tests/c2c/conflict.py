#!/usr/bin/env python3
"""The conflict-freedom layer (part of `make c2c-test`; docs/c2c.md, section 9): boot
bench=c2c_conflict (tests/bench/bench_c2c_conflict.c) at 4 CPUs under the c2c plugin and
judge each of its windows by Commuter's rule: a cache line that two or more CPUs touched in
the counted part of a window, one of them writing it, is a conflict. A case whose operations
commute must have none; an opposite case must move the lines it names, at least `min` times
(transfers and upgrades: a line one CPU wrote before the count moves when another takes it
in the count), and conflict on no line it does not name. A line a case says must be
alone (`alone`: zone.lock) must hold no other field that was touched. A failure names the
line, its object and field (tests/c2c/layout.py), and the code that touched it.

usage: conflict.py --plugin c2c.so --iso release.iso --out DIR [--only TEXT]
       conflict.py --judge --counts C.json --log SERIAL.log --elf smpmm.elf
Prints KTAP-style lines and "N passed, N failed".
"""
import argparse
import bisect
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from layout import KERNEL_VMA, LINE, Layout, field_name, short_type  # noqa: E402
from report import Elf, read_console, transfers  # noqa: E402

SMP, SOCKETS = 4, 2
BIG = 1 << 20           # objects larger than this (the memory map's sections) are looked at apart
OUTCOMES = ("hit", "cold", "hitm", "clean", "upgrade")


# ---- what a line is -------------------------------------------------------------------------

class Names:
    """Objects of the kernel (symbols, with their types from DWARF) and of the boot (the
    console's `C2C {"object":...}` lines): for a line, the object to name it by (the smallest)
    and the one to name its fields by (the outermost one with a type)."""

    def __init__(self, elf, log):
        self.elf, self.layout = Elf(elf), Layout(elf)
        self.objs = []                      # (start, size, name, type or None)
        with open(log, errors="replace") as f:
            for line in f:
                i = line.find('C2C {"object"')
                if i >= 0:
                    d = json.loads(line[i + 4:].strip())
                    self.objs.append((d["phys"], d["size"], d["object"], d.get("type")))
        self.objs += [(a, s, n, "sym") for a, s, n in self.elf.data]
        self.objs.sort()
        # For holders(): objects up to 1 MiB by start, the few larger ones (memory maps) apart.
        self.small = [o for o in self.objs if o[1] <= BIG]
        self.starts = [o[0] for o in self.small]
        self.big = [o for o in self.objs if o[1] > BIG]
        self.cache = {}

    def _holding(self, phys):
        """Objects holding byte phys, untyped symbols as they are: [(start, size, name, type)]."""
        out = [o for o in self.big if o[0] <= phys < o[0] + o[1]]
        i = bisect.bisect_right(self.starts, phys)
        while i > 0 and self.small[i - 1][0] > phys - BIG:
            i -= 1
            if phys < self.small[i][0] + self.small[i][1]:
                out.append(self.small[i])
        return out

    def prefetch(self, physs):
        """Ask gdb once for the types of every object holding these lines, and their layouts."""
        syms, types = [], []
        for phys in physs:
            for a, s, n, t in self._holding(phys):
                (syms if t == "sym" else types).append(n if t == "sym" else t)
        self.layout.symbol_types(syms)
        types += [t.split(" [")[0] for t in (self.layout.symbols.get(n, "") for n in syms) if t]
        self.layout._load([t for t in types if t])

    def holders(self, phys):
        """Objects holding byte phys, smallest first: [(start, size, name, type)]."""
        if phys in self.cache:
            return self.cache[phys]
        out = sorted(self._holding(phys), key=lambda o: o[1])
        for k, (a, s, n, t) in enumerate(out):
            if t == "sym":
                t = self.layout.symbol_type(n)
                out[k] = (a, s, n, t.split(" [")[0] if t.endswith("]") else t)
        self.cache[phys] = out
        return out

    def describe(self, phys):
        """(display name, outermost typed holder or None) of the line at phys."""
        hs = self.holders(phys)
        if not hs:
            return "(unnamed: a stack, a per-CPU area or page data)", None
        name = "%s+%#x" % (hs[0][2], phys - hs[0][0])
        typed = [h for h in hs if h[3] and self.layout.fields(h[3])]
        return name, (typed[-1] if typed else None)

    def is_array(self, holder):
        return holder[1] > self.layout.size(holder[3])

    def field(self, holder, phys):
        """'per_cpu_pages[1].stats.alloc_hit' for byte phys of holder."""
        start, _, name, ctype = holder
        idx, f = self.layout.at(ctype, phys - start, self.is_array(holder))
        return field_name(ctype, idx, f)

    def fields_of_line(self, holder, line_phys):
        start, size, _, ctype = holder
        lo, hi = max(line_phys, start) - start, min(line_phys + LINE, start + size) - start
        return [field_name(ctype, idx, f)
                for idx, f in self.layout.in_range(ctype, lo, hi, self.is_array(holder))]


def squeeze(fields):
    """A line's fields in a few words: per_cpu_pages[0].stats{_pad[2..3] alloc_hit free_hit}
    per_cpu_pages[1].lock{locked owner_cpu ...}: grouped by their first two names, arrays
    collapsed."""
    groups = []
    for f in fields:
        parts = f.split(".")
        key, rest = ".".join(parts[:2]), (parts[2] if len(parts) > 2 else "")
        if not groups or groups[-1][0] != key:
            groups.append((key, []))
        if rest and rest not in groups[-1][1]:
            groups[-1][1].append(rest)
    words = []
    for key, rest in groups:
        items = []
        for r in rest:
            base = r.split("[")[0]
            if items and "[" in r and items[-1][0] == base:
                items[-1][1].append(r[len(base):])
            else:
                items.append((base, [r[len(base):]]))
        inner = " ".join(b + (i[0] if len(i) == 1 else "%s..%s" % (i[0][:-1], i[-1][1:]))
                         for b, i in items)
        words.append(key + ("{%s}" % inner if inner else ""))
    return " ".join(words)


# ---- the judge ------------------------------------------------------------------------------

def field_matches(field, pattern):
    """per_cpu_pages[1].stats.alloc_hit matches per_cpu_pages.stats: the pattern's names
    are the field's first names, array indexes left out."""
    names = [p for p in field.replace("[", ".[").split(".") if not p.startswith("[")]
    want = pattern.split(".")
    return names[:len(want)] == want


def conflicting(ln):
    """Commuter's rule: touched by two or more CPUs in the counted part, written by one."""
    return ln["cpus"] >= 2 and ln["n"]["stores"] > 0


def moves(ln):
    return transfers(ln["n"]) + sum(ln["n"]["upgrade"])


class Line:
    """One line of a window as the judge sees it: where it is, what was touched there."""

    def __init__(self, ln, names, window):
        self.ln, self.phys = ln, ln["phys"]
        self.name, self.holder = names.describe(self.phys)
        self.touched = {}                   # field -> [pc, ...]
        self.code = []                      # (pc, accesses, transfers, [fields])
        for k, (pc, acc, x) in enumerate(ln.get("pcs", [])):
            mask = ln.get("pc_bytes", [0] * 6)[k] if k < len(ln.get("pc_bytes", [])) else 0
            fs = []
            for b in range(LINE):
                if mask >> b & 1:
                    f = names.field(self.holder, self.phys + b) if self.holder else "+%#x" % b
                    if f not in fs:
                        fs.append(f)
                    self.touched.setdefault(f, []).append(pc)
            self.code.append((pc, acc, x, fs))
        self.paths = ["%s" % f for f in self.touched] or [self.name]
        self.type = short_type(self.holder[3]) if self.holder else ""
        self.moved_by = {}
        for m in window.get("moves", []):
            if m["phys"] == self.phys:
                for _, f, t, o, _ in m["moves"]:
                    self.moved_by[(f, t)] = self.moved_by.get((f, t), 0) + 1

    def matches(self, pattern):
        """zone.lock, per_cpu_pages.stats, mm_struct.flags (a field touched on the line, or
        anything under it), `struct page` (the line's object)."""
        if pattern.startswith("struct "):
            return self.type == short_type(pattern)
        return any(field_matches(f, pattern) for f in self.touched)

    def report(self, names, elf):
        """The lines of a message about this line: where, what is there, who touched it."""
        n = self.ln["n"]
        out = ["line %#x: %s" % (self.phys, self.name)]
        if self.holder:
            out.append("  fields on this line: %s" % squeeze(names.fields_of_line(self.holder, self.phys)))
            out.append("  touched: %s" % ", ".join(self.touched))
        pairs = ", ".join("%d->%d x%d" % (f, t, c) for (f, t), c in sorted(self.moved_by.items()) if f != t)
        out.append("  transfers %d (HITM %d), upgrades %d, stores %d, loads %d, CPUs %d%s" % (
            transfers(n), sum(n["hitm"]), sum(n["upgrade"]), n["stores"], n["loads"], self.ln["cpus"],
            "; moves CPU->CPU: " + pairs if pairs else ""))
        where = elf.where([c[0] for c in self.code])
        for pc, acc, x, fs in self.code:
            out.append("  %8d accesses %6d transfers  %s  %s" % (acc, x, where[pc], " ".join(fs)))
        if self.ln.get("pc_other"):
            out.append("  %8d accesses by other instructions" % self.ln["pc_other"])
        return out


def judge_window(w, desc, names):
    """(test name, [problems], summary) of one window."""
    case = desc.get("case", "window%d" % w["window"])
    expect = desc.get("expect", "none")
    name = ("conflict_free_" if expect == "none" else "conflict_") + case
    lines = [Line(ln, names, w) for ln in w["lines"] if conflicting(ln)]
    moved = [Line(ln, names, w) for ln in w["lines"] if moves(ln) and not conflicting(ln)]
    problems = []
    if w.get("overflowed") or w.get("cut"):
        problems.append("the window was not measured whole (overflowed %s, CPUs cut %d)" % (
            w.get("overflowed"), w.get("cut", 0)))
    if expect == "none":
        for ln in lines:
            problems.append(("a line two CPUs touched and one wrote, in operations that commute", ln))
        what = "%s on %d CPUs, %d operations: no line shared and written" % (
            desc.get("plan", "?"), desc.get("active", 0), desc.get("ops", 0))
        return name, problems, what
    must = desc.get("must", "")
    may = desc.get("may", "").split()
    alone = desc.get("alone")
    hit = [ln for ln in lines + moved if ln.matches(must)]
    got = sum(moves(ln.ln) for ln in hit)
    if got < desc.get("min", 1):
        problems.append("%s moved %d times, expected at least %d: the layer must see this conflict"
                        % (must, got, desc.get("min", 1)))
    ups = sum(sum(ln.ln["n"]["upgrade"]) for ln in hit)
    if hit and (got > desc.get("max", got) or ups > desc.get("upgrades", ups)):
        worst = max(hit, key=lambda ln: moves(ln.ln))
        problems.append(("%s moved %d times in %d operations (%d transfers, %d upgrades), expected at "
                         "most %d and %d upgrades: each operation takes the lock once, free, and "
                         "its one exclusive access is a transfer; an upgrade is a second access, "
                         "the line read before it was taken (Linux c5bb27e2da3a: a spin_trylock() "
                         "before spin_lock())" % (must, got, desc.get("ops", 0), got - ups, ups,
                                                  desc.get("max", got), desc.get("upgrades", ups)),
                         worst))
    for ln in lines:
        if not ln.matches(must) and not any(ln.matches(p) for p in may):
            problems.append(("a line %s should not share: not %s" % (case, " or ".join([must] + may)), ln))
        if alone and ln.matches(alone):
            others = [f for f in ln.touched if not field_matches(f, alone)]
            if others:
                problems.append(("%s shares its line with %s, touched in the same window (Linux "
                                 "a368ab67aa55 moved zone->lock off the order-0 free lists' line)"
                                 % (alone, ", ".join(others)), ln))
    what = "%s moved %d times on %d lines (at least %d%s)" % (
        must, got, len(hit), desc.get("min", 1),
        ", at most %d, %d upgrades" % (desc["max"], ups) if "max" in desc else "")
    return name, problems, what


def judge(counts, log, elf, t0=None):
    """Judge every window of a boot; returns (passed, failed)."""
    names = Names(elf, log)
    descs, _ = read_console(log)
    windows = {}
    with open(counts) as f:
        for line in f:
            d = json.loads(line)
            if "window" in d:
                windows[d["window"]] = d
    cases = [(k, d) for k, d in sorted(descs.items()) if "case" in d]
    names.prefetch({ln["phys"] for w in windows.values() for ln in w["lines"]
                    if conflicting(ln) or moves(ln)})
    passed = failed = 0
    expected = None
    with open(log, errors="replace") as f:
        for line in f:
            if line.startswith("c2c_conflict: ") and " cases" in line:
                expected = int(line.split()[1])
    for i, (wid, desc) in enumerate(cases, 1):
        if wid not in windows:
            print("not ok %d conflict_%s: window %d missing from %s" % (i, desc["case"], wid, counts))
            failed += 1
            continue
        name, problems, what = judge_window(windows[wid], desc, names)
        if not problems:
            passed += 1
            print("ok %d %s: %s" % (i, name, what))
            continue
        failed += 1
        print("not ok %d %s: %d problem%s (window %d, plan %s)" % (
            i, name, len(problems), "s" if len(problems) > 1 else "", wid, desc.get("plan")))
        for p in problems[:6]:
            if isinstance(p, tuple):
                print("    # %s:" % p[0])
                for text in p[1].report(names, names.elf):
                    print("    #   " + text)
            else:
                print("    # " + p)
        if len(problems) > 6:
            print("    # ... and %d more" % (len(problems) - 6))
    if expected is None or expected != len(cases):
        failed += 1
        print("not ok %d conflict_layer_ran_every_case: the kernel reported %s cases, the log "
              "describes %d (log %s)" % (len(cases) + 1, expected, len(cases), log))
    elif not cases:
        failed += 1
        print("not ok 1 conflict_layer_ran: no case (log %s)" % log)
    if t0 is not None:
        print("# conflict layer: %d cases in %.1f s (one boot)" % (len(cases), time.time() - t0))
    return passed, failed


# ---- the boot -------------------------------------------------------------------------------

def tick_entry(elf):
    """The timer interrupt's entry stub, which the plugin leaves out (docs/c2c.md, section 3)."""
    out = subprocess.run(["nm", elf], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[2] == "isr_stub_48":
            return "0x" + f[0]
    sys.exit("conflict: no isr_stub_48 (the timer vector's entry) in %s" % elf)


def boot(plugin, iso, out, only=None, timeout=300):
    """bench=c2c_conflict at 4 CPUs under the plugin, single-threaded TCG with -icount (the
    same interleaving on any host: docs/c2c.md, section 3). Returns (counts, log, elf)."""
    os.makedirs(out, exist_ok=True)
    elf = os.path.join(os.path.dirname(iso), "smpmm.elf")
    counts, log = os.path.join(out, "conflict.json"), os.path.join(out, "conflict.log")
    for f in (counts, log):
        if os.path.exists(f):
            os.remove(f)
    cmdline = "test=none timer.hz=1 bench=c2c_conflict" + (" c2c.cases=" + only if only else "")
    cmd = [sys.executable, os.path.join(HERE, "..", "runner.py"), "--iso", iso, "--smp", str(SMP),
           "--accel", "tcg,thread=single", "--qemu-arg=-icount", "--qemu-arg=shift=0,sleep=off",
           "--qemu-arg=-rtc", "--qemu-arg=clock=vm", "--timeout", str(timeout), "--progress", "none",
           "--log", log, "--name", "c2c-conflict", "--expect-cpus", "-1", "--cmdline", cmdline,
           "--qemu-arg=-plugin", "--qemu-arg=%s,out=%s,tick=%s,sockets=%d" % (plugin, counts, tick_entry(elf),
                                                                               SOCKETS)]
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    return counts, log, elf


def run(plugin, iso, out, only=None):
    """Boot and judge; returns (passed, failed)."""
    t0 = time.time()
    counts, log, elf = boot(plugin, iso, out, only)
    if not os.path.exists(counts) or not os.path.getsize(counts):
        print("not ok 1 conflict_layer_boot: the plugin wrote nothing (log %s)" % log)
        return 0, 1
    return judge(counts, log, elf, t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plugin")
    ap.add_argument("--iso", help="the release kernel: its RAM-boot image (.lnx) or ISO")
    ap.add_argument("--out", default="build/c2c/conflict")
    ap.add_argument("--only", help="cases whose name holds this text (c2c.cases=)")
    ap.add_argument("--judge", action="store_true", help="judge an earlier boot's files")
    ap.add_argument("--counts")
    ap.add_argument("--log")
    ap.add_argument("--elf")
    args = ap.parse_args()
    if args.judge:
        p, f = judge(args.counts, args.log, args.elf)
    else:
        p, f = run(args.plugin, args.iso, args.out, args.only)
    print("%d passed, %d failed" % (p, f))
    sys.exit(1 if f else 0)


if __name__ == "__main__":
    main()
