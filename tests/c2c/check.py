#!/usr/bin/env python3
"""`make c2c-test` (part of make test): the c2c plugin's own cases. First the model alone
(tests/c2c/test_model.c, hand-written access streams); then the kernel's bench=c2c_selftest
booted at 4 CPUs under the plugin, where each window's counts must be exactly what MESI
predicts for its pattern (tests/bench/bench_c2c_selftest.c): two CPUs storing to one line in
turn, on one socket and across the two (2n - 1 transfers, every one HITM), private lines on
1, 2 and 4 CPUs (no transfer), one writer and three readers (one transfer per reader, the
first HITM, then hits). Prints KTAP-style lines and "N passed, N failed".
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import read_console, transfers  # noqa: E402

SMP = 4
SOCKETS = 2


def socket(cpu):
    return cpu * SOCKETS // SMP


def expectations(desc, cpus):
    """(name, {quantity: expected}) for one window, from its console description."""
    n, name = desc["n"], desc["name"]
    if name.startswith("pingpong"):
        a, b = desc["a"], desc["b"]
        x = 1 if socket(a) != socket(b) else 0
        return "c2c_plugin_%s" % name, {
            "transfers": 2 * n - 1, "HITM stores": 2 * n - 1, "HITM loads": 0, "cold fills": 1,
            "cross-socket": x * (2 * n - 1), "stores": 2 * n, "CPUs on the line": 2}
    if name == "private":
        k = desc["active"]
        return "c2c_plugin_private_lines_%d_cpus" % k, {
            "transfers": 0, "upgrades": 0, "cold fills": k, "stores": k * n, "loads": k * n}
    if name == "readers":
        readers = cpus - 1
        return "c2c_plugin_readers_of_line_written_once", {
            "transfers": readers, "HITM loads": 1, "clean": readers - 1, "cold fills": 1,
            "hits": readers * (n - 1), "stores": 1}
    return None, {}


def measured(w):
    t = w["total"]
    hot = max(w["lines"], key=lambda ln: transfers(ln["n"]), default=None)
    return {"transfers": transfers(t), "HITM stores": sum(t["hitm"]) - t["hitm_loads"],
            "HITM loads": t["hitm_loads"], "cold fills": sum(t["cold"]), "clean": sum(t["clean"]),
            "cross-socket": t["hitm"][1] + t["clean"][1], "upgrades": sum(t["upgrade"]),
            "hits": sum(t["hit"]), "stores": t["stores"], "loads": t["loads"],
            "CPUs on the line": hot["cpus"] if hot else 0}


def run_model(binary):
    """The model's own cases; returns (passed, failed)."""
    res = subprocess.run([binary], capture_output=True, text=True)
    sys.stdout.write(res.stdout + res.stderr)
    for line in reversed(res.stdout.splitlines()):
        f = line.split()
        if len(f) == 4 and f[1] == "passed,":
            return int(f[0]), int(f[2]) + (1 if res.returncode and not int(f[2]) else 0)
    return 0, 1


def run_kernel(args):
    """Boot the selftest under the plugin; returns (passed, failed)."""
    os.makedirs(args.out, exist_ok=True)
    counts, log = os.path.join(args.out, "selftest.json"), os.path.join(args.out, "selftest.log")
    here = os.path.dirname(os.path.abspath(__file__))
    cmd = [sys.executable, os.path.join(here, "..", "runner.py"), "--iso", args.iso, "--smp", str(SMP),
           "--timeout", "180", "--progress", "none", "--log", log, "--name", "c2c-selftest",
           "--cmdline", "test=none bench=c2c_selftest timer.hz=1",
           "--qemu-arg=-plugin", "--qemu-arg=%s,out=%s,sockets=%d" % (args.plugin, counts, SOCKETS)]
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    descs, _ = read_console(log) if os.path.exists(log) else ({}, [])
    windows = {}
    if os.path.exists(counts):
        with open(counts) as f:
            windows = {d["window"]: d for d in map(json.loads, f) if "window" in d}
    if not descs or not windows:
        print("not ok 1 c2c_plugin_selftest_boot: no windows (log %s, counts %s)" % (log, counts))
        return 0, 1
    passed = failed = 0
    for i, (wid, desc) in enumerate(sorted(descs.items()), 1):
        name, want = expectations(desc, desc.get("cpus", SMP))
        got = measured(windows[wid]) if wid in windows else None
        bad = ["window %d missing from %s" % (wid, counts)] if got is None else \
            ["%s %d, expected %d" % (k, got[k], v) for k, v in want.items() if got[k] != v]
        if bad:
            failed += 1
            print("not ok %d %s: %s" % (i, name, "; ".join(bad)))
        else:
            passed += 1
            print("ok %d %s: %s" % (i, name, ", ".join("%s %d" % kv for kv in want.items())))
    return passed, failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="test_model binary")
    ap.add_argument("--plugin", required=True, help="c2c.so")
    ap.add_argument("--iso", required=True)
    ap.add_argument("--out", required=True, help="directory for the selftest's log and counts")
    args = ap.parse_args()
    mp, mf = run_model(args.model)
    kp, kf = run_kernel(args)
    print("%d passed, %d failed" % (mp + kp, mf + kf))
    sys.exit(1 if mf + kf else 0)


if __name__ == "__main__":
    main()
