#!/usr/bin/env python3
"""`make bench`: boot the kernel once per benchmark configuration, collect the `BENCH {json}`
lines it prints, and write build/bench/<name>.json (samples per metric), <name>.txt (a table
with mean, spread and run count) and PNG plots with gnuplot where a plot makes sense.

usage: tests/bench/bench.py [--only NAME,...] [--smoke] [--out build/bench]
--smoke runs every configuration with tiny sizes (part of `make test`, about a minute).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import stats  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))

# name: (QEMU extra args, smp, mem, kernel command line, smoke command line, timeout s)
CONFIGS = {
    "gup": ([], 40, "2G",
            "test=none bench=gup gup.cmd=a gup.size_mb=512 gup.repeats=1",
            "test=none bench=gup gup.cmd=a gup.size_mb=4", 1200),
}


def run_config(name, cfg, smoke, outdir, iso):
    qemu_args, smp, mem, cmdline, smoke_cmdline, timeout = cfg
    log = os.path.join(outdir, name + ".log")
    cmd = [sys.executable, os.path.join(ROOT, "tests", "runner.py"), "--iso", iso,
           "--smp", str(smp), "--mem", mem, "--timeout", str(timeout), "--log", log,
           "--name", "bench-" + name, "--expect-cpus", "-1", "--progress", "none",
           "--cmdline", smoke_cmdline if smoke else cmdline]
    for a in qemu_args:
        cmd += ["--qemu-arg=" + a]
    start = time.monotonic()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.monotonic() - start
    metrics, lines = collect(log)
    # Benchmark boots select no KTAP test, so the runner's verdict does not apply: the kernel
    # must have exited with the pass status and printed its figures.
    with open(log, errors="replace") as f:
        passed = "EXIT: STATUS=33" in f.read()
    ok = passed and bool(metrics)
    print("bench %-12s %5.1f s, %d metrics%s" % (name, wall, len(metrics),
          "" if ok else " (FAILED: no pass exit or no BENCH lines)"), flush=True)
    if not ok:
        sys.stdout.write(proc.stdout[-3000:])
    return metrics, lines, ok


def collect(log):
    """Metrics from BENCH lines: {bench.metric: {samples, higher, unit, extra...}}."""
    metrics, lines = {}, []
    if not os.path.exists(log):
        return metrics, lines
    with open(log, errors="replace") as f:
        for raw in f:
            line = raw.strip()
            if not line.startswith("BENCH {"):
                continue
            try:
                obj = json.loads(line[6:])
            except ValueError:
                continue
            lines.append(obj)
            key = obj["bench"] + "." + obj["metric"]
            metrics[key] = obj
    return metrics, lines


def table(metrics):
    rows = ["%-40s %14s %12s %9s %4s %s" % ("metric", "mean", "stddev", "CoeffV%", "n", "unit")]
    for key in sorted(metrics):
        m = metrics[key]
        if not m["samples"]:
            continue
        s = stats.summarise(m["samples"], m.get("higher", True))
        rows.append("%-40s %14.2f %12.2f %9.2f %4d %s (%s)" % (key, s["mean"], s["stddev"],
                    s["coeffvar"], s["n"], m.get("unit", ""), s["kind"]))
    return "\n".join(rows) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--iso", default=os.path.join(ROOT, "build", "smpmm.iso"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    only = [n for n in args.only.split(",") if n]
    failed = 0
    for name, cfg in CONFIGS.items():
        if only and name not in only:
            continue
        metrics, lines, ok = run_config(name, cfg, args.smoke, args.out, args.iso)
        failed += not ok
        with open(os.path.join(args.out, name + ".json"), "w") as f:
            json.dump({"config": name, "smoke": args.smoke, "metrics": metrics}, f, indent=1)
        text = table(metrics)
        with open(os.path.join(args.out, name + ".txt"), "w") as f:
            f.write(text)
        sys.stdout.write(text)
    print("%d passed, %d failed" % (len(CONFIGS) - failed if not only else len(only) - failed,
                                    failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
