#!/usr/bin/env python3
"""`make c2c`: the experiments of docs/c2c.md under the c2c plugin, then their report.

Every boot is the release kernel at 40 CPUs on two sockets (the guest's ACPI topology and the
model's agree), booted from RAM (make lnx: no disk read, timed by the host, before kmain),
under single-threaded TCG with -icount shift=0: the vCPUs take turns in an order fixed by
instruction counts, so a run is the same run on any host at any load and the counts repeat
exactly (docs/c2c.md, section 2); one tick a second (timer.hz=1), which the
plugin leaves out (tick=). Two modelled machines (docs/c2c.md): the seed's, a two-socket Xeon E5-2630 v4 whose
40 CPUs are 20 cores of 2 SMT threads (siblings share a cache; a busy core's one instruction
per cycle is shared by its two threads), and the same with every CPU a core of its own. The
seed's machine runs bench=gup (gup_test -a -m GUP_MB -j 40, both has-pinned modes), to set
beside the seed's figures; the 40-core one runs bench=gup again, bench=c2c_pages (order-0
pairs on 1..40 CPUs, lists on and off) and bench=c2c_drain (a drain of every CPU in each lock
model), and a build with struct per_cpu_pages unpadded (-DCONFIG_PCP_PADDING=0) runs
bench=c2c_pages on 2 and 40 CPUs: the false-sharing exercise (on the SMT machine the CPUs
whose lists share a line are siblings, which share a cache: no transfer). Writes
OUT/report*.txt (the perf-c2c-style report of every window), OUT/summary.txt (the headline
figures, also printed), OUT/*.summary.json, OUT/pairs.png.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import report  # noqa: E402

SMP, SOCKETS = 40, 2
# (name, QEMU topology, plugin arguments): the modelled machines (tests/c2c/plugin.c).
SMT = ("E5-2630 v4, 2 sockets x 10 cores x 2 threads", "40,sockets=2,cores=10,threads=2",
       "sockets=2,threads=2,insn_ps=910")
CORES = ("2 sockets x 20 cores, no SMT", "40,sockets=2,cores=20,threads=1", "sockets=2,threads=1,insn_ps=455")
# The seed's figures: Linux 292648ac5cf1's message, gup_test -a -m 512 -j 40 on a two-socket
# E5-2630 v4, mean get time per thread (docs/pinning.md).
SEED_US = {"every-pin": 477729.97, "if-clear": 89144.65}


def ram_or_iso(image):
    """'lnx' when the runs boot from RAM (make lnx: no disk read before kmain, so the counts
    repeat exactly), else 'iso': the make target, and the image's extension."""
    return "lnx" if image.endswith(".lnx") else "iso"


def tick_entry(elf):
    """The timer interrupt's entry stub (vector 0x30: arch/x86_64/cpu.h VEC_TIMER), which the
    plugin leaves out of the counts (docs/c2c.md, section 2)."""
    out = subprocess.run(["nm", elf], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[2] == "isr_stub_48":
            return "0x" + f[0]
    sys.exit("c2c: no isr_stub_48 (the timer vector's entry) in %s" % elf)


def boot(iso, out, name, cmdline, plugin, machine, timeout):
    """One boot under the plugin; returns (counts path, log path)."""
    counts, log = os.path.join(out, name + ".json"), os.path.join(out, name + ".log")
    tick = tick_entry(os.path.join(os.path.dirname(iso), "smpmm.elf"))
    cmd = [sys.executable, os.path.join(HERE, "..", "runner.py"), "--iso", iso, "--smp", str(SMP),
           "--accel", "tcg,thread=single", "--qemu-arg=-icount", "--qemu-arg=shift=0,sleep=off", "--qemu-arg=-rtc", "--qemu-arg=clock=vm",
           "--timeout", str(timeout), "--progress", "none", "--log", log, "--name", "c2c-" + name,
           "--expect-cpus", "-1", "--cmdline", "test=none timer.hz=1 " + cmdline,
           "--qemu-arg=-smp", "--qemu-arg=" + machine[1],
           "--qemu-arg=-plugin", "--qemu-arg=%s,out=%s,tick=%s,%s" % (plugin, counts, tick, machine[2])]
    print("c2c: booting %s (%s): %s" % (name, machine[0], cmdline), flush=True)
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    if not os.path.exists(counts) or os.path.getsize(counts) == 0:
        sys.exit("c2c: %s: the plugin wrote nothing (log %s)" % (name, log))
    return counts, log


def report_of(counts, log, elf, out, name):
    """The full report of one boot into OUT/NAME.txt; returns its per-window summary."""
    js = os.path.join(out, name + ".summary.json")
    with open(os.path.join(out, name + ".txt"), "w") as f:
        subprocess.run([sys.executable, os.path.join(HERE, "report.py"), "--counts", counts,
                        "--log", log, "--elf", elf, "--json", js], stdout=f, check=True)
    with open(js) as f:
        return json.load(f)["windows"]


def obj_sum(w, *prefixes, suffix=""):
    return sum(v for k, v in w["objects"].items()
               if any(k.startswith(p) for p in prefixes) and k.endswith(suffix))


def gup_lines(windows, mb, machine):
    rows, times = ["  on %s:" % machine[0]], {}
    for w in windows:
        mode = w["desc"].get("mode")
        if not mode or not w["ops"]:
            continue
        flags = w["objects"].get("mm_struct", 0)
        t = [c for c in w["counted_ps"]]
        mean_us = sum(t) / len(t) / 1e6 if t else 0
        pins = w["ops"] // SMP
        times[mode] = mean_us * 131072 / pins if pins else 0
        rows.append("    %-9s transfers per pin %7.2f (mm_struct's lines %6.2f, struct pages %5.2f); modelled get "
                    "time per thread %9.0f us for %d pins, %9.0f us scaled to -m 512 (131,072 pins); "
                    "seed %9.0f us" % (mode, w["per_op"], flags / w["ops"], obj_sum(w, "struct page") / w["ops"],
                                       mean_us, pins, times[mode], SEED_US[mode]))
    if len(times) == 2 and times["if-clear"]:
        model = times["every-pin"] / times["if-clear"]
        seed = SEED_US["every-pin"] / SEED_US["if-clear"]
        rows.append("    every-pin / if-clear, modelled: %.2fx; the seed measured %.2fx (model/seed %.2f)"
                    % (model, seed, model / seed))
    return rows


def pairs_lines(windows, label):
    """Transfers per pair of zone->lock's and the free lists' lines, and all, by CPUs."""
    rows, pts = [], {}
    for w in windows:
        d = w["desc"]
        if not w["name"].startswith("pairs") or not w["ops"]:
            continue
        lock = obj_sum(w, "node", suffix="->lock")
        free = obj_sum(w, "node", suffix="->free_area")
        on = "on" if d.get("lists") else "off"
        pts.setdefault(on, []).append((d["active"], w["per_op"], (lock + free) / w["ops"], w["hitm"] / w["ops"]))
        rows.append("  lists %-3s %2d CPUs: %9.3f transfers per pair (zone->lock %8.3f, free lists %8.3f, "
                    "HITM %8.3f)" % (on, d["active"], w["per_op"], lock / w["ops"], free / w["ops"],
                                     w["hitm"] / w["ops"]))
    return ["order-0 alloc+free pairs, 8 held per CPU%s:" % label] + rows, pts


def drain_lines(windows):
    rows = []
    for w in windows:
        if w["name"] != "drain all CPUs" or not w["ops"]:
            continue
        d, ops, flags = w["desc"], w["ops"], obj_sum(w, "the bench")
        rows.append("  %-8s %6.2f transfers per CPU drained (%d pages in all; struct pages %5.2f, pcp lines "
                    "%5.2f, zone->lock + free lists %5.2f, the rest %5.2f), besides the bench's done flag %4.2f; "
                    "modelled drain on CPU 0 %6.1f us"
                    % (d.get("model"), (w["transfers"] - flags) / ops, d.get("pages", 0),
                       obj_sum(w, "struct page") / ops, obj_sum(w, "private", suffix="->pcp[]") / ops,
                       (obj_sum(w, "private", suffix="->lock") + obj_sum(w, "private", suffix="->free_area")) / ops,
                       (w["transfers"] - flags - obj_sum(w, "struct page", "private")) / ops, flags / ops,
                       (w["counted_ps"] or [0])[0] / 1e6))
    return ["a drain of every CPU's lists by CPU 0, per lock model (%s):" % CORES[0]] + rows


def plot(pts, out):
    """Transfers per pair against CPUs, lists on and off (gnuplot; skipped without it)."""
    if not shutil.which("gnuplot") or not pts:
        return None
    png, data = os.path.join(out, "pairs.png"), os.path.join(out, "pairs.dat")
    with open(data, "w") as f:
        for key in sorted(pts):
            f.write("# %s\n" % key)
            for cpus, per, lockfree, hitm in sorted(pts[key]):
                f.write("%d %g %g %g\n" % (cpus, max(per, 1e-3), max(lockfree, 1e-3), max(hitm, 1e-3)))
            f.write("\n\n")
    keys = sorted(pts)
    script = ["set terminal png size 900,520", "set output '%s'" % png, "set logscale y",
              "set xlabel 'CPUs doing order-0 alloc+free pairs'",
              "set ylabel 'cache-line transfers per pair (modelled)'", "set key top left", "set grid",
              "set title 'c2c: what the per-CPU lists save (40-CPU guest, 2 sockets; 0 drawn at 0.001)'",
              "plot " + ", ".join("'%s' index %d using 1:2 with linespoints title 'lists %s: all lines', "
                                  "'%s' index %d using 1:3 with linespoints title 'lists %s: zone->lock + free lists'"
                                  % (data, i, k, data, i, k) for i, k in enumerate(keys))]
    subprocess.run(["gnuplot"], input="\n".join(script), text=True, check=False)
    return png if os.path.exists(png) else None


def smoke(args, elf):
    """make bench-smoke's look at the experiments: a short boot, the headline counts loosely."""
    counts, log = boot(args.iso, args.out, "smoke", "bench=gup,c2c_pages gup.size_mb=4 c2c.cpus=1,4,40 "
                       "c2c.pairs=400", args.plugin, CORES, 600)
    windows = report_of(counts, log, elf, args.out, "report-smoke")
    checks = []
    for w in windows:
        d, ops = w["desc"], w["ops"] or 1
        lockfree = (obj_sum(w, "node", suffix="->lock") + obj_sum(w, "node", suffix="->free_area")) / ops
        if d.get("mode") == "every-pin":
            checks.append(("c2c_gup_every_pin_moves_mm_flags_line_nearly_every_pin",
                           w["objects"].get("mm_struct", 0) / ops >= 0.9, "%.3f per pin" % (
                               w["objects"].get("mm_struct", 0) / ops)))
        elif d.get("mode") == "if-clear":
            checks.append(("c2c_gup_if_clear_leaves_mm_flags_line_alone",
                           w["objects"].get("mm_struct", 0) / ops <= 0.01, "%.3f per pin" % (
                               w["objects"].get("mm_struct", 0) / ops)))
        elif d.get("lists") is True:
            checks.append(("c2c_pairs_lists_on_%d_cpus_leave_zone_lock_and_free_lists_alone" % d["active"],
                           lockfree < 0.01, "%.3f per pair" % lockfree))
        elif d.get("lists") is False and d["active"] == 40:
            checks.append(("c2c_pairs_lists_off_40_cpus_move_zone_lock_and_free_lists",
                           lockfree >= 10, "%.3f per pair" % lockfree))
    for i, (name, ok, what) in enumerate(checks, 1):
        print("%s %d %s: %s" % ("ok" if ok else "not ok", i, name, what))
    bad = sum(not ok for _, ok, _ in checks) + (len(checks) != 6)
    if len(checks) != 6:
        print("not ok %d c2c_smoke_windows: %d checks made, 6 expected (report %s)" % (
            len(checks) + 1, len(checks), os.path.join(args.out, "report-smoke.txt")))
    print("%d passed, %d failed" % (len(checks) - sum(not ok for _, ok, _ in checks), bad))
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--iso", required=True, help="the release kernel's RAM-boot image (.lnx), or its ISO")
    ap.add_argument("--out", required=True)
    ap.add_argument("--make", default="make")
    ap.add_argument("--only", default="gup,pages,drain,false_sharing")
    ap.add_argument("--gup-mb", type=int, default=int(os.environ.get("C2C_GUP_MB", "64")))
    ap.add_argument("--cpus", default="1,2,4,8,16,24,32,40", help="CPU counts of the pairs series")
    ap.add_argument("--smoke", action="store_true", help="make bench-smoke's short, checked run")
    args = ap.parse_args()
    only = set(args.only.split(","))
    os.makedirs(args.out, exist_ok=True)
    elf = os.path.join(os.path.dirname(args.iso), "smpmm.elf")
    if args.smoke:
        sys.exit(1 if smoke(args, elf) else 0)
    benches = [b for b, k in (("gup", "gup"), ("c2c_pages", "pages"), ("c2c_drain", "drain")) if k in only]
    summary, pts = [], {}
    if "gup" in only:
        summary.append("gup_test -a -m %d -j %d (pin_user_pages_fast, one page per call, all threads on "
                       "one range; times are the cost model's):" % (args.gup_mb, SMP))
        counts, log = boot(args.iso, args.out, "gup-smt", "bench=gup gup.size_mb=%d" % args.gup_mb,
                           args.plugin, SMT, 3600)
        summary += gup_lines(report_of(counts, log, elf, args.out, "report-gup-smt"), args.gup_mb, SMT)
    if benches:
        counts, log = boot(args.iso, args.out, "experiments", "bench=%s gup.size_mb=%d c2c.cpus=%s" % (
            ",".join(benches), args.gup_mb, args.cpus), args.plugin, CORES, 3600)
        windows = report_of(counts, log, elf, args.out, "report")
        summary += gup_lines(windows, args.gup_mb, CORES) if "gup" in only else []
        if "pages" in only:
            rows, pts = pairs_lines(windows, " (%s)" % CORES[0])
            summary += rows
        summary += drain_lines(windows) if "drain" in only else []
    if "false_sharing" in only:
        build = os.path.join(args.out, "unpadded")
        subprocess.run(args.make.split() + ["--no-print-directory", "BUILD=" + build, "DEBUG_VM=0",
                                            "KDEFS=-DCONFIG_PCP_PADDING=0", ram_or_iso(args.iso)],
                       stdout=subprocess.DEVNULL, check=True)
        counts, log = boot(os.path.join(build, "smpmm." + ram_or_iso(args.iso)), args.out, "unpadded",
                           "bench=c2c_pages c2c.cpus=2,40", args.plugin, CORES, 1800)
        rows, _ = pairs_lines(report_of(counts, log, os.path.join(build, "smpmm.elf"), args.out,
                                        "report-unpadded"), ", struct per_cpu_pages unpadded (false sharing)")
        summary += rows
    png = plot(pts, args.out)
    text = "\n".join(summary) + "\n" + ("plot: %s\n" % png if png else "")
    text += "full reports: %s/report*.txt\n" % args.out
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
