#!/usr/bin/env python3
"""Tables and a plot from `make test-big` logs (build/test-big-smpN.log and .out): the boot
(firmware + GRUB time, the kernel's bring-up) and what the per-CPU lists cost (bench=pcp_cost)
at each CPU count. Prints markdown for docs/results.md; with --plot, writes the gnuplot PNG.
Only reads logs: it boots nothing. Usage:
  python3 tests/big_report.py build/test-big-smp40.log build/test-big-smp255.log ... [--plot docs/pcp-cost.png]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ONLINE_RE = re.compile(r"^smp: (\d+) of (\d+) CPUs online, (\d+) ms from kernel entry \((\d+) ms in "
                       r"arch_smp_init, of which AP start-up (\d+) us")
MODE_RE = re.compile(r"^smp: started by (.*) \((x2?) APIC\)")
CLOCK_RE = re.compile(r"^# ktest: clock: (\d+) ms since kernel entry")
FIRST_RE = re.compile(r"first test at ([0-9.]+)s")
TOTAL_RE = re.compile(r"QEMU exit (\d+) in ([0-9.]+)s")
SKEW_RE = re.compile(r"kernel clock ran ([0-9.]+)x wall time")


def read(path):
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "replace").splitlines()


def parse(log):
    r = {"log": log, "zones": [], "drains": []}
    for line in read(log):
        line = line.strip("\r")
        m = ONLINE_RE.match(line)
        if m:
            r.update(online=int(m[1]), cpus=int(m[2]), entry_ms=int(m[3]), smp_init_ms=int(m[4]),
                     ap_us=int(m[5]))
        m = MODE_RE.match(line)
        if m:
            r["mode"], r["apic"] = m[1], m[2] + "APIC"
        m = CLOCK_RE.match(line)
        if m and "clock_ms" not in r:
            r["clock_ms"] = int(m[1])
        if line.startswith("PCPCOST "):
            r["zones"].append(json.loads(line[8:]))
        if line.startswith("PCPDRAIN "):
            r["drains"].append(json.loads(line[9:]))
    out = log[:-4] + ".out" if log.endswith(".log") else None
    if out and os.path.exists(out):
        for line in read(out):
            m = FIRST_RE.search(line)
            if m:
                r["first_test_s"] = float(m[1])
            m = TOTAL_RE.search(line)
            if m:
                r["status"], r["total_s"] = int(m[1]), float(m[2])
            m = SKEW_RE.search(line)
            if m:
                r["skew"] = float(m[1])
    return r


def boot_table(runs):
    print("| CPUs | APIC | firmware + GRUB | kernel entry to all online | arch_smp_init | AP start-up | "
          "whole run | kernel clock / wall |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in runs:
        fw = (f"{r['first_test_s'] - r['clock_ms'] / 1000 / r.get('skew', 1.0):.0f} s"
              if "first_test_s" in r and "clock_ms" in r else "-")
        print(f"| {r.get('online', '?')} of {r.get('cpus', '?')} | {r.get('apic', '?')} | {fw} | "
              f"{r.get('entry_ms', 0)} ms | {r.get('smp_init_ms', 0)} ms | "
              f"{r.get('ap_us', 0) / 1000:.0f} ms | {r.get('total_s', 0):.0f} s | "
              f"{r.get('skew', 1.0):.2f} |")


def cost_table(runs):
    print("| CPUs | zone | pages | low wmark | batch | high per CPU | sum of high | of the zone | "
          "x low wmark | v6.7 high_max sum |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in runs:
        for z in r["zones"]:
            print(f"| {z['cpus']} | {z['zone']} | {z['managed']} | {z['low']} | {z['batch']} | "
                  f"{z['high']} | {z['sum_high']} | {100 * z['sum_high'] / z['managed']:.1f}% | "
                  f"{z['sum_high'] / max(z['low'], 1):.1f} | {z['sum_high_max_v67']} |")
    print()
    print("Times by the kernel's clock divided by the run's kernel clock / wall ratio (the boot "
          "table's last column).")
    print()
    print("| CPUs | model | CPUs drained | pages on lists | drain_all_pages() | IPIs | "
          "empty lists | zone_pcp_disable |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in runs:
        k = r.get("skew", 1.0)
        for d in r["drains"]:
            print(f"| {d['cpus']} | {d['model']} | {d['filled_cpus']} | {d['pages']} | "
                  f"{d['drain_us'] / k / 1000:.1f} ms | {d['ipis']} | "
                  f"{d['empty_drain_us'] / k:.0f} us | {d['disable_us'] / k / 1000:.1f} ms |")


def plot(runs, png):
    """Pages that can sit on the lists (sum of high) against the zone and its low watermark,
    per zone, and drain_all_pages() time, against the CPU count."""
    with tempfile.TemporaryDirectory() as tmp:
        dat = os.path.join(tmp, "cost.dat")
        with open(dat, "w") as f:
            for zone in ("DMA32", "DMA"):
                f.write(f"# {zone}: cpus sum_high low managed\n")
                for r in runs:
                    for z in r["zones"]:
                        if z["zone"] == zone:
                            f.write(f"{z['cpus']} {z['sum_high']} {z['low']} {z['managed']}\n")
                f.write("\n\n")
            f.write("# drains: cpus trylock_ms irqoff_ms\n")
            for r in runs:
                ms = {d["model"]: d["drain_us"] / 1000 / r.get("skew", 1.0) for d in r["drains"]}
                f.write(f"{r.get('online', 0)} {ms.get('trylock', 0)} {ms.get('irqoff', 0)}\n")
        script = f"""
set terminal pngcairo size 1100,460 font ",10" noenhanced
set output "{png}"
set multiplot layout 1,2 title "smpmm per-CPU page lists as CPUs grow (QEMU 10 TCG, 2 GiB guest, one node)"
set logscale xy
set xlabel "CPUs online"
set ylabel "pages (4 KiB)"
set key bottom right
set xtics (40, 255, 1024)
set xrange [30:1400]
plot "{dat}" index 0 using 1:2 with linespoints lw 2 title "DMA32: sum of high over CPUs", \\
     "" index 0 using 1:3 with lines dt 2 lw 2 title "DMA32 low watermark", \\
     "" index 0 using 1:4 with lines lw 2 title "DMA32 zone size", \\
     "" index 1 using 1:2 with linespoints lw 2 title "DMA: sum of high over CPUs", \\
     "" index 1 using 1:4 with lines lw 2 title "DMA zone size"
set ylabel "drain_all_pages() on full lists, ms (wall)"
set logscale y
set key top left
plot "{dat}" index 2 using 1:2 with linespoints lw 2 title "trylock: drainer takes each lock", \\
     "" index 2 using 1:3 with linespoints lw 2 title "irqoff: one IPI per CPU with pages"
unset multiplot
"""
        subprocess.run(["gnuplot"], input=script, text=True, check=True)
    print(f"wrote {png}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--plot", help="write the PNG here")
    args = ap.parse_args()
    runs = sorted((parse(p) for p in args.logs), key=lambda r: r.get("cpus", 0))
    boot_table(runs)
    print()
    cost_table(runs)
    if args.plot:
        plot(runs, args.plot)


if __name__ == "__main__":
    main()
