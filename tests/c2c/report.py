#!/usr/bin/env python3
"""The c2c report (`make c2c`, docs/c2c.md), in the manner of `perf c2c report`: for each window
the plugin measured (tests/c2c/plugin.c writes one JSON line per window), what it was (the
kernel's `C2C {...}` console lines name it and count its operations), cache-line transfers per
operation, the objects whose lines moved, and the hottest lines with the code that touched
them (function+offset and file:line, from smpmm.elf). Modelled times are the cost model's
(docs/c2c.md), never measurements.

usage: report.py --counts PLUGIN.json --log SERIAL.log --elf smpmm.elf [--lines N] [--json OUT]
"""
import argparse
import bisect
import json
import re
import subprocess
import sys

KERNEL_VMA = 0xffffffff80000000
OUTCOMES = ("hit", "cold", "hitm", "clean", "upgrade")


def transfers(n):
    return sum(n["hitm"]) + sum(n["clean"])


def cross(n):
    return sum(n[o][1] for o in OUTCOMES[1:])


class Elf:
    """Symbols of smpmm.elf: data objects by physical address, code by address."""

    def __init__(self, path):
        out = subprocess.run(["nm", "-S", "--defined-only", "-n", path], capture_output=True,
                             text=True, check=True).stdout
        self.data, self.code = [], []
        for line in out.splitlines():
            f = line.split()
            if len(f) == 4 and f[2] in "bBdDrR":
                addr, size = int(f[0], 16), int(f[1], 16)
                if addr >= KERNEL_VMA and size:
                    self.data.append((addr - KERNEL_VMA, size, f[3]))
            elif len(f) >= 3 and f[-2] in "tT":
                self.code.append((int(f[0], 16), f[-1]))
        self.code.sort()
        self.code_addrs = [a for a, _ in self.code]
        self.path, self.lines = path, {}

    def where(self, pcs):
        """{pc: 'function+0xoff (file:line)'} for the given PCs (one addr2line run)."""
        todo = sorted(set(p for p in pcs if p not in self.lines))
        if todo:
            out = subprocess.run(["addr2line", "-s", "-e", self.path] + ["%x" % p for p in todo],
                                 capture_output=True, text=True).stdout.splitlines()
            for pc, fl in zip(todo, out):
                i = bisect.bisect_right(self.code_addrs, pc) - 1
                fn = "%s+0x%x" % (self.code[i][1], pc - self.code[i][0]) if i >= 0 else "%x" % pc
                self.lines[pc] = "%s (%s)" % (fn, fl.split(" (")[0])
        return {p: self.lines[p] for p in pcs}


def read_console(path):
    """Windows' descriptions and results, and the dynamic objects, from the serial log."""
    windows, objects = {}, []
    with open(path, errors="replace") as f:
        for line in f:
            m = re.search(r"C2C (\{.*\})\s*$", line)
            if not m:
                continue
            d = json.loads(m.group(1))
            if "object" in d:
                objects.append((d["phys"], d["size"], d["object"]))
            else:
                windows.setdefault(d.pop("window"), {}).update(d)
    return windows, objects


class Objects:
    """Names a physical line: the smallest named object (console or ELF) that holds its start."""

    def __init__(self, elf, dynamic):
        self.objs = sorted(set(dynamic) | set(elf.data))

    def name(self, phys):
        best = None
        for start, size, name in self.objs:
            if start > phys:
                break
            if phys < start + size and (best is None or size < best[1]):
                best = (start, size, name)
        if not best:
            return "(unnamed: stack, per-CPU area or page data)", 0
        return best[2], phys - best[0]


def window_report(w, desc, objs, elf, nlines, out):
    t = w["total"]
    ops = desc.get("ops") or 0
    op = desc.get("op", "operation")
    xfer = transfers(t)
    per = lambda v: "%.3f" % (v / ops) if ops else "-"
    cpus = w["cpus"]
    counted = [c["counted_ps"] for c in cpus if c.get("clock", c.get("instructions", 0)) > 1]
    title = desc.get("name", "?")
    extra = ", ".join("%s %s" % (k, desc[k]) for k in ("model", "mode", "active", "pages") if k in desc)
    out.append("== window %d: %s (%s), %d CPUs, %d %s%s" % (
        w["window"], title, extra, len(cpus), ops, op + ("s" if ops != 1 else ""), ""))
    out.append("   transfers %d = %s per %s (HITM %d = %s, of which loads %d; clean %d); cross-socket %d = %s"
               % (xfer, per(xfer), op, sum(t["hitm"]), per(sum(t["hitm"])), t["hitm_loads"],
                  sum(t["clean"]), cross(t), per(cross(t))))
    out.append("   upgrades %d (copies invalidated %d); cold fills %d; loads %d, stores %d"
               % (sum(t["upgrade"]), t["invalidated"], sum(t["cold"]), t["loads"], t["stores"]))
    if counted:
        out.append("   modelled time per CPU (reference machine, docs/c2c.md): mean %.1f us, max %.1f us"
                   % (sum(counted) / len(counted) / 1e6, max(counted) / 1e6))
    if w.get("overflowed"):
        out.append("   OVERFLOWED: more events waited for the merge than the plugin's max_events; "
                   "the window stopped recording part way and its counts are partial")
    if w.get("cut") or w.get("spins_unanswered") or w.get("forced"):
        out.append("   model notes: %d CPUs cut at the window's end, %d pause loops nothing ended, "
                   "%d lock waits forced through" % (w.get("cut", 0), w.get("spins_unanswered", 0),
                                                   w.get("forced", 0)))
    by_obj = {}
    for ln in w["lines"]:
        name, _ = objs.name(ln["phys"])
        o = by_obj.setdefault(name, [0, 0, 0, 0])
        o[0] += transfers(ln["n"])
        o[1] += sum(ln["n"]["hitm"])
        o[2] += sum(ln["n"]["upgrade"])
        o[3] += 1
    if by_obj:
        out.append("   %-44s %12s %10s %10s %10s %6s" % ("object", "transfers", "per " + op[:6], "HITM",
                                                         "upgrades", "lines"))
        for name, (x, h, u, n) in sorted(by_obj.items(), key=lambda kv: -kv[1][0] - kv[1][2])[:12]:
            out.append("   %-44s %12d %10s %10d %10d %6d" % (name[:44], x, per(x), h, u, n))
    hot = sorted((ln for ln in w["lines"] if "pcs" in ln),
                 key=lambda ln: (-sum(ln["n"]["hitm"]), -transfers(ln["n"])))[:nlines]
    where = elf.where([pc for ln in hot for pc, _, _ in ln["pcs"]])
    for i, ln in enumerate(hot, 1):
        n = ln["n"]
        name, off = objs.name(ln["phys"])
        out.append("   #%d line %#x  %s+%#x  HITM %d (cross %d)  clean %d  upgrades %d  CPUs %d"
                   % (i, ln["phys"], name, off, sum(n["hitm"]), n["hitm"][1], sum(n["clean"]),
                      sum(n["upgrade"]), ln["cpus"]))
        for pc, acc, x in ln["pcs"]:
            out.append("        %8d accesses %8d transfers  %s" % (acc, x, where[pc]))
        if ln.get("pc_other"):
            out.append("        %8d accesses by other instructions" % ln["pc_other"])
    out.append("")
    return {"window": w["window"], "name": title, "desc": desc, "ops": ops, "transfers": xfer,
            "hitm": sum(t["hitm"]), "cross": cross(t), "upgrades": sum(t["upgrade"]),
            "per_op": (xfer / ops) if ops else None,
            "objects": {k: v[0] for k, v in by_obj.items()},
            "counted_ps": counted}


def machine_line(params):
    """The modelled machine, as the plugin's first line describes it (tests/c2c/machines/)."""
    ps, cost = params["ps"], params.get("cost_fs")
    insn = ("instruction time (ns): " + ", ".join("%s %.3f" % (k, v / 1e6) for k, v in cost.items())
            if cost else "%.3f ns per instruction" % (params["ps_per_insn"] / 1e3))
    return ("c2c: %d CPUs on %d sockets, %d threads a core, %d-byte lines; modelled machine: %s; "
            "HITM %.1f/%.1f ns, clean %.1f/%.1f ns, upgrade %.1f/%.1f ns, memory %.1f ns (same/other "
            "socket), %d streaming fills in flight\n" % (
                params["cpus"], params["sockets"], params.get("threads", 1), params["line"], insn,
                ps["hitm"][0] / 1e3, ps["hitm"][1] / 1e3, ps["clean"][0] / 1e3, ps["clean"][1] / 1e3,
                ps["upgrade"][0] / 1e3, ps["upgrade"][1] / 1e3, ps["cold"][0] / 1e3, params.get("mlp", 1)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--counts", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--elf", required=True)
    ap.add_argument("--lines", type=int, default=5, help="hottest lines shown per window")
    ap.add_argument("--json", help="write the per-window summary here")
    args = ap.parse_args()
    elf = Elf(args.elf)
    descs, dynamic = read_console(args.log)
    objs = Objects(elf, dynamic)
    out, summary, params = [], [], None
    with open(args.counts) as f:
        for line in f:
            d = json.loads(line)
            if "params" in d:
                params = d["params"]
                continue
            summary.append(window_report(d, descs.get(d["window"], {}), objs, elf, args.lines, out))
    if params:
        out.insert(0, machine_line(params))
    sys.stdout.write("\n".join(out) + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"params": params, "windows": summary}, f, indent=1)


if __name__ == "__main__":
    main()
