#!/usr/bin/env python3
"""`make bench-meminit`: what the deferred memory-map init buys (mm/mm_init.c).

Three series, each point booted --runs times, the points interleaved round by round so that
a change in the shared host's load hits every point alike:
  bringup  -smp 40, 2 GiB: kernel entry to all CPUs online, deferred (default) and
           mm.deferred=0 (everything built on the boot CPU before SMP bring-up); with
           --baseline-iso, also the default boot of that other kernel (e.g. the tree before a
           change), interleaved with the rest, with where the time went (the boot: line);
  workers  -smp 40, 6 GiB: the deferred phase on 1, 2, 4 and 40 CPUs (mm.deferred_workers);
  prealloc the same with QEMU's -mem-prealloc, so that the host has faulted in all guest RAM
           before the kernel runs: what is left is the guest's own work;
  inboot   -smp 40, 6 GiB, bench=meminit: within one boot, a 4 GiB private node finished on
           1, 2, 4, ... 40 CPUs, 15 rounds interleaved (paired figures; host memory already
           faulted in), three boots;
  ceiling  the inboot boot with QEMU on both host cores and pinned to one (taskset -c 0),
           alternately, three of each: what the host's cores allow;
  icount   -smp 1 with -icount shift=0 (1 ns per guest instruction, deterministic, one boot
           each): guest instructions of mm_init() and of the deferred phase.
Writes OUT/meminit.txt (tables with median, min-max, mean, stddev, CoeffVar and the load
average) and OUT/meminit.json (every sample). Not part of `make test`.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import stats  # noqa: E402

ONLINE_RE = re.compile(r"^smp: .*online.*?, (\d+) ms from kernel entry(?: \((\d+) ms in arch_smp_init)?")
# arch/x86_64/smp.c: "... of which AP start-up 1774 us, CPU areas 7201 us, timer calibration
# 4528 us; ..." (the last two since the timer's window opens before mm_init())
SMP_PARTS_RE = re.compile(r"of which AP start-up (\d+) us(?:, CPU areas (\d+) us, timer "
                          r"calibration (\d+) us)?")
DEFERRED_RE = re.compile(r"^mm: deferred init: (\d+) pages in ([\d.]+) ms on (\d+) CPUs.*"
                         r"mm_init\(\) took ([\d.]+) ms")
EAGER_RE = re.compile(r"^mm: no deferred init .* in ([\d.]+) ms")
# kernel/main.c: "boot: kernel entry to CPUs online 45.813 ms: boot report 8.012, paging 1.374, ..."
STEPS_RE = re.compile(r"^boot: kernel entry to CPUs online ([\d.]+) ms: (.*)$")
ONLINE_TARGET_MS = 150     # issue 12: kernel entry to all 40 CPUs online


def bench_lines(log):
    """The BENCH records of bench=meminit in log: {cpus: [ms, ...]}."""
    out = {}
    with open(log, errors="replace") as f:
        for line in f:
            if line.startswith("BENCH {"):
                try:
                    obj = json.loads(line[6:])
                except ValueError:
                    continue
                if obj.get("bench") == "meminit":
                    out[obj["cpus"]] = obj["samples"]
    return out


def boot(iso, smp, mem, cmdline, qemu_args=(), timeout=900, prefix=()):
    """One boot with no tests; returns the figures the kernel printed (ms), or None. prefix:
    a command the runner (and so QEMU) runs under, e.g. taskset."""
    log = os.path.join(ROOT, "build", "runs", "bench-meminit.log")
    lnx = os.path.splitext(iso)[0] + ".lnx"     # -icount from RAM: no host-timed disk reads
    iso = lnx if "-icount" in qemu_args and os.path.exists(lnx) else iso
    cmd = list(prefix) + [sys.executable, os.path.join(ROOT, "tests", "runner.py"), "--iso", iso, "--smp",
           str(smp), "--mem", mem, "--timeout", str(timeout), "--log", log, "--name",
           "bench-meminit", "--expect-cpus", "-1", "--progress", "none",
           "--cmdline", "test=none " + cmdline] + ["--qemu-arg=" + a for a in qemu_args]
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    out = {}
    with open(log, errors="replace") as f:
        for line in f:
            if m := ONLINE_RE.match(line):
                out["online_ms"] = float(m[1])
                if m[2]:
                    out["smp_init_ms"] = float(m[2])
                    out["before_smp_ms"] = out["online_ms"] - out["smp_init_ms"]
                if p := SMP_PARTS_RE.search(line):
                    out["ap_startup_ms"] = int(p[1]) / 1000
                    if p[2]:
                        out["cpu_areas_ms"] = int(p[2]) / 1000
                        out["timer_ms"] = int(p[3]) / 1000
            elif m := DEFERRED_RE.match(line):
                out.update(deferred_pages=int(m[1]), deferred_ms=float(m[2]),
                           workers=int(m[3]), mm_init_ms=float(m[4]))
            elif m := EAGER_RE.match(line):
                out["mm_init_ms"] = float(m[1])
            elif m := STEPS_RE.match(line):
                out["steps"] = {k: float(v) for k, v in
                                (step.rsplit(" ", 1) for step in m[2].split(", "))}
    out["bench"] = bench_lines(log)
    return out if "online_ms" in out else None


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2


def table(title, rows, samples, key):
    lines = [title, "%-28s %3s %9s %19s %9s %8s %6s" % ("", "n", "median", "min-max", "mean",
                                                        "stddev", "CV%")]
    for name in rows:
        xs = [s[key] for s in samples[name] if s and key in s]
        if not xs:
            lines.append("%-28s no samples" % name)
            continue
        st = stats.summarise(xs, higher_is_better=False)
        lines.append("%-28s %3d %9.1f %9.1f-%-9.1f %9.1f %8.1f %6.1f" % (
            name, st["n"], median(xs), st["min"], st["max"], st["mean"], st["stddev"],
            st["coeffvar"]))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iso", default=os.path.join(ROOT, "build", "release", "smpmm.iso"))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default="bringup,workers,prealloc,inboot,ceiling,icount")
    ap.add_argument("--baseline-iso", help="bringup: also boot this kernel, interleaved")
    args = ap.parse_args()
    only = args.only.split(",")
    os.makedirs(args.out, exist_ok=True)

    points = {}
    if "bringup" in only:
        if args.baseline_iso:
            points["2G baseline"] = (40, "2G", "", (), args.baseline_iso)
        points["2G deferred"] = (40, "2G", "", (), args.iso)
        points["2G mm.deferred=0"] = (40, "2G", "mm.deferred=0", (), args.iso)
    for series, qemu in (("workers", ()), ("prealloc", ("-mem-prealloc",))):
        if series in only:
            for w in (1, 2, 4, 40):
                points["6G workers=%d%s" % (w, " prealloc" if qemu else "")] = (
                    40, "6G", "mm.deferred_workers=%d" % w, qemu, args.iso)
    samples = {name: [] for name in points}
    loads = []
    start = time.strftime("%Y-%m-%d %H:%M")
    for r in range(args.runs if points else 0):
        for name, (smp, mem, cmdline, qemu, iso) in points.items():
            load = os.getloadavg()[0]
            fig = boot(iso, smp, mem, cmdline, qemu)
            if fig:
                fig["load1"] = load
            loads.append(load)
            samples[name].append(fig)
            print("round %d %-20s load %5.1f  %s" % (r + 1, name, load, fig), flush=True)

    inboot = []
    if "inboot" in only:
        for b in range(3):
            fig = boot(args.iso, 40, "6G", "bench=meminit meminit.rounds=15 meminit.mb=4096")
            inboot.append({"load1": os.getloadavg()[0], "bench": fig["bench"] if fig else {}})
            loads.append(inboot[-1]["load1"])
            print("inboot %d %s" % (b + 1, inboot[-1]), flush=True)

    ceiling = []
    if "ceiling" in only:
        for b in range(3):
            for cores, prefix in (("0,1", ()), ("0", ("taskset", "-c", "0"))):
                load = os.getloadavg()[0]
                fig = boot(args.iso, 40, "6G", "bench=meminit meminit.rounds=15 meminit.mb=4096",
                           prefix=prefix)
                ceiling.append({"cores": cores, "load1": load,
                                "bench": fig["bench"] if fig else {}})
                loads.append(load)
                print("ceiling %d host cores %s %s" % (b + 1, cores, ceiling[-1]), flush=True)

    icount = {}
    if "icount" in only:
        for name, mem, cmdline in (("2G deferred", "2G", ""),
                                   ("2G mm.deferred=0", "2G", "mm.deferred=0"),
                                   ("6G deferred", "6G", ""),
                                   ("6G mm.deferred=0", "6G", "mm.deferred=0")):
            icount[name] = boot(args.iso, 1, mem, cmdline, ("-icount", "shift=0"))
            print("icount %-20s %s" % (name, icount[name]), flush=True)

    text = ["bench-meminit, %s to %s, %d runs per point, 1-min load average %.1f-%.1f" % (
        start, time.strftime("%H:%M"), args.runs, min(loads, default=0), max(loads, default=0))]
    if "bringup" in only:
        names = (["2G baseline"] if args.baseline_iso else []) + ["2G deferred",
                                                                  "2G mm.deferred=0"]
        if args.baseline_iso:
            text.append("2G baseline: %s; 2G deferred and mm.deferred=0: %s" % (
                args.baseline_iso, args.iso))
        text.append(table("kernel entry to all 40 CPUs online (ms), -smp 40, 2 GiB", names,
                          samples, "online_ms"))
        for name in names:
            xs = [s["online_ms"] for s in samples[name] if s]
            text.append("%-28s under %d ms: %d of %d boots (%d did not finish)" % (
                name, ONLINE_TARGET_MS, sum(x < ONLINE_TARGET_MS for x in xs), len(xs),
                len(samples[name]) - len(xs)))
        text.append("")
        for name in names:
            steps = [s["steps"] for s in samples[name] if s and "steps" in s]
            if steps:
                by_step = {step: [{"ms": st[step]} for st in steps if step in st]
                           for step in steps[0]}
                text.append(table("%s: where it went (the boot: line, ms)" % name,
                                  list(by_step), by_step, "ms"))
        text.append(table("of which arch_smp_init() (ms)", names, samples, "smp_init_ms"))
        text.append(table("of which AP start-up, first INIT to all online (ms)", names,
                          samples, "ap_startup_ms"))
        text.append(table("of which before arch_smp_init() (ms)", names, samples,
                          "before_smp_ms"))
        text.append(table("of which mm_init() (ms)", names, samples, "mm_init_ms"))
        text.append(table("deferred phase after bring-up (ms)", names[:1], samples,
                          "deferred_ms"))
    for series, suffix in (("workers", ""), ("prealloc", " prealloc")):
        if series not in only:
            continue
        names = ["6G workers=%d%s" % (w, suffix) for w in (1, 2, 4, 40)]
        text.append(table("deferred phase, -smp 40, 6 GiB%s (ms)" % (
            ", -mem-prealloc" if suffix else ""), names, samples, "deferred_ms"))
        base = [s["deferred_ms"] for s in samples[names[0]] if s]
        for n in names[1:]:
            xs = [s["deferred_ms"] for s in samples[n] if s]
            if base and xs:
                text.append("speed-up %s over workers=1: %.2fx (medians), %.2fx (best of %d)"
                            % (n, median(base) / median(xs), min(base) / min(xs), len(xs)))
        text.append("")
    for title, boots in (("bench=meminit, -smp 40, 6 GiB guest, 4 GiB private node, 15 "
                          "interleaved rounds per boot", inboot),
                         ("the same, QEMU on host cores 0,1 (both) and 0 (taskset), boots "
                          "alternating", ceiling)):
        if not boots:
            continue
        text.append(title + ": median ms (best ms), speed-up over 1 CPU by medians / best")
        cpus = sorted({c for b in boots for c in b["bench"]})
        text.append("%6s " % "CPUs" + " ".join("%26s" % ("boot %d%s (load %.0f)" % (
            i + 1, " cores " + b["cores"] if "cores" in b else "", b["load1"]))
            for i, b in enumerate(boots)))
        for c in cpus:
            row = []
            for b in boots:
                xs, base = b["bench"].get(c), b["bench"].get(1)
                if not xs or not base:
                    row.append("%26s" % "-")
                    continue
                row.append("%7.1f (%5.1f) %4.2f/%4.2fx" % (median(xs), min(xs),
                           median(base) / median(xs), min(base) / min(xs)))
            text.append("%6d " % c + " ".join(row))
        text.append("")
    if icount:
        text.append("\nguest instructions (millions; -icount shift=0, -smp 1, one boot each)")
        for name, fig in icount.items():
            if fig:
                text.append("%-20s mm_init %7.2f  deferred phase %7.2f  entry to online %5.0f"
                            % (name, fig.get("mm_init_ms", 0), fig.get("deferred_ms", 0),
                               fig["online_ms"]))
                if "steps" in fig:
                    text.append("%-20s boot: line %s" % ("", ", ".join(
                        "%s %.3f" % kv for kv in fig["steps"].items())))
    report = "\n".join(text) + "\n"
    sys.stdout.write(report)
    with open(os.path.join(args.out, "meminit.txt"), "w") as f:
        f.write(report)
    with open(os.path.join(args.out, "meminit.json"), "w") as f:
        json.dump({"samples": samples, "inboot": inboot, "ceiling": ceiling, "icount": icount,
                   "loads": loads}, f,
                  indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
