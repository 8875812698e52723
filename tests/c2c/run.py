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
figures, also printed), OUT/*.summary.json, OUT/pairs.png, and OUT/c2c.html, the pictures of every
window (tests/c2c/pictures.py).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import machine  # noqa: E402
import pictures  # noqa: E402
import report  # noqa: E402

SMP, SOCKETS = 40, 2
# The modelled machines (tests/c2c/machines/, every value with its source or its range): the
# seed's, and the same latencies with every CPU a core of its own.
SMT = machine.load("e5-2630v4")
CORES = machine.load("e5-2630v4-40cores")
# Mel Gorman's PFT table ("mm/page_alloc: protect PCP lists with a spinlock"): mmtests' client
# counts on his one-socket 8-CPU machine, each lock model in a boot of its own (pcp.lock=).
PFT_MACHINE = "pft-1s8"
PFT = machine.load(PFT_MACHINE)
PFT_CPUS, PFT_MODELS = (1, 3, 5, 7, 8), ("irqoff", "irqsave", "trylock")
# The seed's v5 table (5.19-rc3 vanilla, i.e. IRQs off, against the spinlock with IRQs saved);
# docs/results.md sets the v2 posting's percentages beside it.
PFT_SEED_V5 = {1: 0.61, 3: 0.40, 5: -1.34, 7: -0.74, 8: -0.66}
# has_pinned against CPUs: a machine file per count (the E5-2630 v4's shape and latencies).
SCALE = {40: "e5-2630v4", 128: "2s-128", 255: "2s-256"}
# The seed's figures: Linux 292648ac5cf1's message, gup_test -a -m 512 -j 40 on a two-socket
# E5-2630 v4, mean get time per thread (docs/pinning.md).
SEED_US = {"every-pin": 477729.97, "if-clear": 89144.65}
# The v1 posting's will-it-scale pin_fast, 256 threads on a 2-node 256-CPU box: average
# iterations with has_pinned written on every pin, and only when clear (docs/results.md).
PIN_FAST_256 = {"every-pin": 25617, "if-clear": 1194790}


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


RESUME = False  # --resume: a boot already made (counts, log, streams) is not made again


def made_before(image, counts, log, trace):
    """With --resume: this boot ran to its end before, of this image (its log has the exit
    line, its counts, newer than the image, and, if asked for, its recorded streams are there)."""
    if not RESUME or not os.path.exists(counts) or not os.path.exists(log):
        return False
    if os.path.getmtime(image) > os.path.getmtime(counts):
        return False                    # the kernel was built again since
    if trace and not os.path.exists(os.path.join(trace, "params.json")):
        return False
    with open(log, errors="replace") as f:
        return "EXIT: STATUS=" in f.read()


def boot(iso, out, name, cmdline, plugin, mach, timeout, cpus=SMP, trace=None, mem="2G"):
    """One boot under the plugin on machine `mach` (tests/c2c/machine.py), `cpus` of its CPUs
    present; trace: a directory for the streams (tests/c2c/replay.c). Returns (counts, log).
    At most 2 GiB: the plugin's physical addresses are QEMU's offsets in its RAM, which are
    the guest's only below q35's 2 GiB hole (above it the report would name no object)."""
    counts, log = os.path.join(out, name + ".json"), os.path.join(out, name + ".log")
    if made_before(iso, counts, log, trace):
        print("c2c: %s made before (--resume): %s" % (name, counts), flush=True)
        return counts, log
    tick = tick_entry(os.path.join(os.path.dirname(iso), "smpmm.elf"))
    args = ["out=" + counts, "tick=" + tick] + mach.plugin_args()
    if trace:
        shutil.rmtree(trace, ignore_errors=True)
        os.makedirs(trace)
        args.append("trace=" + trace)
    cmd = [sys.executable, os.path.join(HERE, "..", "runner.py"), "--iso", iso, "--smp", str(cpus),
           "--mem", mem, "--accel", "tcg,thread=single", "--qemu-arg=-icount",
           "--qemu-arg=shift=0,sleep=off", "--qemu-arg=-rtc", "--qemu-arg=clock=vm",
           "--timeout", str(timeout), "--progress", "none", "--log", log, "--name", "c2c-" + name,
           "--expect-cpus", "-1", "--cmdline", "test=none timer.hz=1 " + cmdline,
           "--qemu-arg=-smp", "--qemu-arg=" + mach.qemu_smp(cpus),
           "--qemu-arg=-plugin", "--qemu-arg=%s,%s" % (plugin, ",".join(args))]
    print("c2c: booting %s (%s): %s" % (name, mach.name, cmdline), flush=True)
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    if not os.path.exists(counts) or os.path.getsize(counts) == 0:
        sys.exit("c2c: %s: the plugin wrote nothing (log %s)" % (name, log))
    return counts, log


BOOTS = []     # (name, counts, log, elf) of every report: the pictures' page (pictures.py)


def report_of(counts, log, elf, out, name):
    """The full report of one boot into OUT/NAME.txt; returns its per-window summary."""
    BOOTS.append((name, counts, log, elf))
    js = os.path.join(out, name + ".summary.json")
    with open(os.path.join(out, name + ".txt"), "w") as f:
        subprocess.run([sys.executable, os.path.join(HERE, "report.py"), "--counts", counts,
                        "--log", log, "--elf", elf, "--json", js], stdout=f, check=True)
    with open(js) as f:
        return json.load(f)["windows"]


def obj_sum(w, *prefixes, suffix=""):
    return sum(v for k, v in w["objects"].items()
               if any(k.startswith(p) for p in prefixes) and k.endswith(suffix))


def gup_lines(windows, mb, mach):
    rows, times = ["  on %s:" % mach.name], {}
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
    return ["a drain of every CPU's lists by CPU 0, per lock model (%s):" % CORES.name] + rows


def pft_boots(args, trace_root):
    """bench=pft with a c2c window per iteration, once per lock model and start phase (the
    first phase's streams recorded under trace_root): {(model, phase): (counts, log)}."""
    boots = {}
    for phase in range(args.pft_phases):
        for model in PFT_MODELS:
            name = "pft-" + model + ("-p%d" % phase if phase else "")
            boots[model, phase] = boot(
                args.iso, args.out, name, "mm.poison=0 pcp.lock=%s bench=pft pft.c2c=1 pft.cpus=%s "
                "pft.size_mb=%d pft.iterations=%d%s" % (
                    model, ",".join(map(str, PFT_CPUS)), args.pft_mb, args.pft_iterations,
                    " c2c.phase=%d" % (97 * phase) if phase else ""),
                args.plugin, PFT, 1800, cpus=PFT.cpus(),
                trace=os.path.join(trace_root, name) if trace_root and not phase else None)
    return boots


def pft_lines(boots):
    """The PFT table as mmtests' compare prints it: Hmean faults/sec per client count over every
    iteration of every phase, each lock model's difference against irqoff (modelled: no
    significance stars), then each model's range over single iterations."""
    import sweep
    runs, samples = {}, {}
    for (model, phase), (counts, log) in boots.items():
        with open(counts) as f:
            windows = [d for d in map(json.loads, f) if "window" in d]
        runs["%s-%d" % (model, phase)] = (windows, report.read_console(log)[0])
        for key, xs in sweep.pft_samples({0: runs["%s-%d" % (model, phase)]}).items():
            samples.setdefault(key, []).extend(xs)
    fig = sweep.pft_figures(runs)
    rows = ["PFT (bench=pft pft.c2c=1, %s), modelled Hmean faults/sec and the difference against irqoff; "
            "the seed (v5 commit text: vanilla IRQs-off against the IRQ-saving spinlock) measured %s"
            % (PFT.name, ", ".join("%+.2f%%" % PFT_SEED_V5[c] for c in PFT_CPUS)),
            "%-25s" % "" + "".join(" %22s" % m for m in PFT_MODELS)]
    for c in PFT_CPUS:
        cells = []
        for model in PFT_MODELS:
            rate = fig.get("%s faults/sec-%d" % (model, c))
            pct = 0.0 if model == "irqoff" else fig.get("%s vs irqoff %%-%d" % (model, c))
            cells.append("%12.4f (%7.2f%%)" % (rate, pct) if rate and pct is not None else "%22s" % "-")
        rows.append("Hmean     faults/sec-%-4d %s" % (c, " ".join(cells)))
    rows.append("%d samples a cell (%d phases x %d iterations); the lowest and highest single sample:"
                % (len(samples.get((PFT_MODELS[0], PFT_CPUS[0]), [])), len({p for _, p in boots}),
                   len(samples.get((PFT_MODELS[0], PFT_CPUS[0]), [])) // max(1, len({p for _, p in boots}))))
    for c in PFT_CPUS:
        rows.append("Range     faults/sec-%-4d %s" % (c, " ".join(
            "%10.0f..%-10.0f" % (min(samples[m, c]), max(samples[m, c])) if samples.get((m, c)) else "%22s" % "-"
            for m in PFT_MODELS)))
    return rows, fig


def scale_boots(args, trace_root):
    """has_pinned (bench=gup, both modes) at each CPU count of --scale-cpus, on its machine:
    every thread on one range (gup_test -a), and each on a range of its own (will-it-scale's
    pin_fast). {(cpus, private): (counts, log)}."""
    boots = {}
    for cpus in map(int, args.scale_cpus.split(",")):
        for private in {"one": (False,), "own": (True,)}.get(args.scale_ranges, (False, True)):
            name = "scale-%d%s" % (cpus, "-private" if private else "")
            cmd = ("bench=gup gup.private=1 gup.size_mb=%d" % args.private_mb if private else
                   "bench=gup gup.size_mb=%d" % args.scale_mb)
            boots[cpus, private] = boot(args.iso, args.out, name, cmd, args.plugin, machine.load(SCALE[cpus]),
                                        4 * 3600, cpus=cpus,
                                        trace=os.path.join(trace_root, name) if trace_root else None)
    return boots


def scale_lines(args, boots, elf):
    rows, pts = ["has_pinned against CPUs, gup_test -a -j CPUS, modelled get time per thread scaled to the "
                 "seed's 131,072 pins (a machine file per count, tests/c2c/machines/): every thread on one "
                 "range (-m %d), or each on its own (-m %d, will-it-scale's pin_fast)" % (args.scale_mb, args.private_mb)], []
    for (cpus, private), (counts, log) in sorted(boots.items()):
        mach = machine.load(SCALE[cpus])
        windows = report_of(counts, log, elf, args.out, "report-scale-%d%s" % (cpus, "-private" if private else ""))
        times = {}
        for w in windows:
            mode = w["desc"].get("mode")
            if mode and w["ops"] and w["counted_ps"]:
                t = w["counted_ps"]
                times[mode] = (sum(t) / len(t) / 1e6 * 131072 / (w["ops"] // len(t)), w)
        if len(times) == 2:
            ratio = times["every-pin"][0] / times["if-clear"][0]
            pts.append((cpus, private, ratio))
            rows.append("  %3d CPUs, %-12s (%s): every-pin %9.0f us, if-clear %9.0f us; ratio %6.2fx; mm_struct "
                        "%.2f and %.3f transfers per pin" % (
                            cpus, "own ranges" if private else "one range", mach.name, times["every-pin"][0],
                            times["if-clear"][0], ratio,
                            times["every-pin"][1]["objects"].get("mm_struct", 0) / times["every-pin"][1]["ops"],
                            times["if-clear"][1]["objects"].get("mm_struct", 0) / times["if-clear"][1]["ops"]))
    return rows, pts


def phase_boots(args):
    """The lists-off pairs at the contended CPU counts, at --phases start phases (c2c.phase=)."""
    boots = []
    for k in range(args.phases):
        boots.append(boot(args.iso, args.out, "phase-%d" % k, "bench=c2c_pages c2c.cpus=%s c2c.phase=%d" % (
            args.phase_cpus, k * 97), args.plugin, CORES, 3600))
    return boots


def phase_lines(boots, elf, out):
    """Transfers per pair with the lists off, at each phase: the spread the interleaving gives."""
    per = {}
    for k, (counts, log) in enumerate(boots):
        for w in report_of(counts, log, elf, out, "report-phase-%d" % k):
            d = w["desc"]
            if w["name"] == "pairs lists off" and w["ops"]:
                per.setdefault(d["active"], []).append(w["per_op"])
    rows = ["order-0 pairs with the lists off at %d start phases (c2c.phase=0,97,..., each CPU spins phase x its "
            "number first): transfers per pair" % len(boots)]
    for cpus, xs in sorted(per.items()):
        rows.append("  %2d CPUs: %s; spread %.3f .. %.3f (%.1f%% of the mean)" % (
            cpus, " ".join("%.3f" % x for x in xs), min(xs), max(xs), (max(xs) - min(xs)) * 100 / (sum(xs) / len(xs))))
    return rows


def plot_scale(pts, out, ranges=None):
    """every-pin / if-clear against CPUs, with each point's modelled range (ranges: {(cpus,
    private): (low, high)} from the sweeps) as an error bar where there is one (gnuplot;
    skipped without it)."""
    if not shutil.which("gnuplot") or not pts:
        return None
    png, data = os.path.join(out, "scale.png"), os.path.join(out, "scale.dat")
    seed = SEED_US["every-pin"] / SEED_US["if-clear"]
    pin_fast = PIN_FAST_256["if-clear"] / PIN_FAST_256["every-pin"]
    with open(data, "w") as f:
        for private in (False, True):
            f.write("# %s: CPUs, ratio, the range's low and high (the ratio itself where no sweep ran)\n"
                    % ("each thread on its own range" if private else "every thread on one range"))
            for cpus, p, ratio in sorted(pts):
                if p == private:
                    lo, hi = (ranges or {}).get((cpus, p), (ratio, ratio))
                    f.write("%d %g %g %g\n" % (cpus, ratio, lo, hi))
            f.write("\n\n")
    script = ["set terminal png size 900,520 noenhanced", "set output '%s'" % png, "set xlabel 'CPUs pinning'",
              "set ylabel 'get time, every-pin / if-clear (modelled)'", "set grid", "set key top left",
              "set xrange [0:270]", "set yrange [0:*]",
              "set title \"c2c: has_pinned written on every pin against only when clear (gup_test -a)%s\""
              % ("\\nbars: the modelled range over every assumed parameter (the series drawn 2 CPUs apart)"
                 if ranges else ""),
              "plot '%s' index 0 using ($1-2):2:3:4 with yerrorlines lw 2 title 'model: every thread on one range', "
              "'%s' index 1 using ($1+2):2:3:4 with yerrorlines lw 2 title 'model: each thread on its own range', "
              "'-' using 1:2 with points pt 7 ps 2 title 'seed (measured): 40 CPUs, one range, %.2fx', "
              "'-' using 1:2 with points pt 5 ps 2 title 'v1 posting (measured): 256 CPUs, pin_fast, %.1fx'"
              % (data, data, seed, pin_fast), "40 %.2f" % seed, "e", "256 %.2f" % pin_fast, "e"]
    subprocess.run(["gnuplot"], input="\n".join(script), text=True, check=False)
    return png if os.path.exists(png) else None


def run_sweeps(args, sweeps):
    """Each (experiment, machine, boots): its figures' ranges and sensitivity (tests/c2c/sweep.py),
    into OUT/sweep-EXPERIMENT-MACHINE.json (the scale series: OUT/sweep-BOOT.json, a boot each),
    saved after each parameter; with --resume, a sweep there already is continued (its
    parameters kept once its nominal replays the same). Returns (summary rows, {boot names:
    result})."""
    import sweep
    rows, results = [], {}
    for experiment, mach, boots in sweeps:
        path = os.path.join(args.out, "sweep-%s.json" % (
            "-".join(boots) if experiment == "scale" else "%s-%s" % (experiment, mach)))
        earlier = None
        if args.resume and os.path.exists(path):
            with open(path) as f:
                earlier = json.load(f)

        def save(res):
            with open(path + ".part", "w") as f:
                json.dump(res, f, indent=1)
            os.replace(path + ".part", path)
        try:
            res = sweep.sweep(args.replay, experiment, mach, boots, jitter=args.jitter,
                              corners_of="%" if experiment == "pft" else None, save=save, resume=earlier)
        except sweep.Mismatch as e:
            sys.exit("c2c: cannot resume %s: %s" % (path, e))
        save(res)
        rows += sweep.table(res)
        results[tuple(boots)] = res
    return rows, results


def scale_ranges(results):
    """The ratio's modelled range of each scale boot swept: {(cpus, private): (low, high)}."""
    out = {}
    for names, res in results.items():
        if res["experiment"] != "scale" or len(names) != 1:
            continue
        name = names[0]
        cpus, private = int(name.split("-")[1]), name.endswith("-private")
        out[cpus, private] = tuple(res["ranges"]["%s ratio" % name])
    return out


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
    ap.add_argument("--only", default="gup,pages,drain,false_sharing,pft",
                    help="any of gup,pages,drain,false_sharing,pft (make c2c), gup-smt (the seed's "
                    "machine only), scale (make c2c-scale), phases (make c2c-phases)")
    ap.add_argument("--gup-mb", type=int, default=int(os.environ.get("C2C_GUP_MB", "64")))
    ap.add_argument("--cpus", default="1,2,4,8,16,24,32,40", help="CPU counts of the pairs series")
    ap.add_argument("--pft-mb", type=int, default=8, help="PFT: MiB faulted in per iteration")
    ap.add_argument("--pft-iterations", type=int, default=2)
    ap.add_argument("--pft-phases", type=int, default=1, help="PFT: boots per lock model, at start "
                    "phases c2c.phase=0,97,...")
    ap.add_argument("--scale-cpus", default="40,128,255")
    ap.add_argument("--scale-mb", type=int, default=4, help="gup_test -m for the CPU-count series")
    ap.add_argument("--private-mb", type=int, default=1, help="the same, each thread on its own range")
    ap.add_argument("--scale-ranges", choices=("one", "own", "both"), default="both",
                    help="the CPU-count series with every thread on one range, each on its own, or both")
    ap.add_argument("--phases", type=int, default=5, help="start phases of the lists-off spread")
    ap.add_argument("--phase-cpus", default="32,40")
    ap.add_argument("--trace", help="record the gup, pft and scale boots' streams under this directory "
                    "(for tests/c2c/replay and sweep.py)")
    ap.add_argument("--sweep", action="store_true", help="with --trace: each headline figure's range and "
                    "sensitivity over the machine's assumed parameters (tests/c2c/sweep.py)")
    ap.add_argument("--replay", help="tests/c2c/replay, for --sweep")
    ap.add_argument("--jitter", type=int, default=4, help="--sweep's replays with a latency shaken by 1..N ps")
    ap.add_argument("--smoke", action="store_true", help="make bench-smoke's short, checked run")
    ap.add_argument("--resume", action="store_true", help="continue a run cut short in OUT: a boot whose "
                    "counts, log (exit line) and streams are there is not booted again, a sweep whose JSON is "
                    "there keeps its parameters (once its nominal replays the same)")
    args = ap.parse_args()
    global RESUME
    RESUME = args.resume
    only = set(args.only.split(","))
    os.makedirs(args.out, exist_ok=True)
    elf = os.path.join(os.path.dirname(args.iso), "smpmm.elf")
    if args.smoke:
        sys.exit(1 if smoke(args, elf) else 0)
    benches = [b for b, k in (("gup", "gup"), ("c2c_pages", "pages"), ("c2c_drain", "drain")) if k in only]
    summary, pts = [], {}
    if "gup" in only or "gup-smt" in only:
        summary.append("gup_test -a -m %d -j %d (pin_user_pages_fast, one page per call, all threads on "
                       "one range; times are the cost model's):" % (args.gup_mb, SMP))
        counts, log = boot(args.iso, args.out, "gup-smt", "bench=gup gup.size_mb=%d" % args.gup_mb,
                           args.plugin, SMT, 3600,
                           trace=os.path.join(args.trace, "gup-smt") if args.trace else None)
        summary += gup_lines(report_of(counts, log, elf, args.out, "report-gup-smt"), args.gup_mb, SMT)
    if benches:
        counts, log = boot(args.iso, args.out, "experiments", "bench=%s gup.size_mb=%d c2c.cpus=%s" % (
            ",".join(benches), args.gup_mb, args.cpus), args.plugin, CORES, 3600)
        windows = report_of(counts, log, elf, args.out, "report")
        summary += gup_lines(windows, args.gup_mb, CORES) if "gup" in only else []
        if "pages" in only:
            rows, pts = pairs_lines(windows, " (%s)" % CORES.name)
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
    if "pft" in only:
        pft = pft_boots(args, args.trace)
        rows, _ = pft_lines(pft)
        summary += rows
    if "phases" in only:
        summary += phase_lines(phase_boots(args), elf, args.out)
    png = plot(pts, args.out)
    if "scale" in only:
        scale = scale_boots(args, args.trace)
        rows, scale_pts = scale_lines(args, scale, elf)
        summary += rows
    if args.sweep:
        sweeps = []
        if "gup" in only or "gup-smt" in only:
            sweeps.append(("gup", "e5-2630v4", {"smt": (os.path.join(args.trace, "gup-smt"),
                                                        os.path.join(args.out, "gup-smt.log"))}))
        if "pft" in only:
            sweeps.append(("pft", PFT_MACHINE, {m: (os.path.join(args.trace, "pft-" + m), log)
                                               for (m, phase), (_, log) in pft.items() if not phase}))
        for (cpus, private), (_, log) in sorted(scale.items()) if "scale" in only else []:
            name = "scale-%d%s" % (cpus, "-private" if private else "")
            sweeps.append(("scale", SCALE[cpus], {name: (os.path.join(args.trace, name), log)}))
        rows, results = run_sweeps(args, sweeps)
        summary += rows
    if "scale" in only:
        ranges = scale_ranges(results) if args.sweep else None
        summary += ["  the ratio's modelled range, %d CPUs, %s: %.2f .. %.2fx" % (
            cpus, "own ranges" if private else "one range", lo, hi) for (cpus, private), (lo, hi) in sorted((ranges or {}).items())]
        scale_png = plot_scale(scale_pts, args.out, ranges)
        summary += ["plot: %s" % scale_png] if scale_png else []
    html = pictures.page(BOOTS, os.path.join(args.out, "c2c.html"), "make c2c: cache lines that move")
    text = "\n".join(summary) + "\n" + ("plot: %s\n" % png if png else "")
    text += "pictures: %s\nfull reports: %s/report*.txt\n" % (html, args.out)
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
