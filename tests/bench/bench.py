#!/usr/bin/env python3
"""`make bench`: boot the kernel once per benchmark configuration, collect the `BENCH {json}`
lines it prints, and write build/bench/<name>.json (samples per metric), <name>.txt (a table
with mean, spread and run count) and PNG plots with gnuplot where a plot makes sense.

usage: tests/bench/bench.py [--only NAME,...] [--smoke] [--out build/bench] [--vs-rounds 5]
--smoke runs every configuration with tiny sizes (part of `make test`, about a minute), but
not vs-linux, which boots Debian's Linux beside ours (tests/bench/bench_linux.py).
"""
import argparse
import json
import re
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import stats  # noqa: E402
import plots  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))

ICOUNT = ["-icount", "shift=0"]

# name: (QEMU extra args, smp, mem, kernel command line, smoke command line, timeout s)
# Benchmarks boot the release kernel (DEBUG_VM=0) with poisoning off.
CONFIGS = {
    "page": ([], 2, "2G", "test=none mm.poison=0 bench=page bench.page_loops=20000",
             "test=none mm.poison=0 bench=page bench.page_loops=200 bench.windows=2", 600),
    "page-icount": (ICOUNT, 2, "2G", "test=none mm.poison=0 bench=page bench.page_loops=20000",
                    "test=none mm.poison=0 bench=page bench.page_loops=200 bench.windows=2", 900),
    "scaling": ([], 40, "2G", "test=none mm.poison=0 bench=scaling bench.scaling_pairs=20000",
                "test=none mm.poison=0 bench=scaling bench.scaling_pairs=400 bench.windows=2", 1200),
    "pft": ([], 40, "2G", "test=none mm.poison=0 bench=pft pft.size_mb=128 pft.iterations=30",
            "test=none mm.poison=0 bench=pft pft.size_mb=4 pft.iterations=2", 1800),
    "locks": ([], 40, "2G", "test=none bench=locks bench.lock_ms=500",
              "test=none bench=locks bench.lock_ms=20 bench.windows=2", 600),
    "gup": ([], 40, "2G", "test=none mm.poison=0 bench=gup gup.cmd=a gup.size_mb=512",
            "test=none mm.poison=0 bench=gup gup.cmd=a gup.size_mb=4", 1200),
    "numa": ([], 40, "2G", "test=none mm.poison=0 bench=numa bench.numa_pairs=4000",
             "test=none mm.poison=0 bench=numa bench.numa_pairs=400 bench.windows=2", 1200),
}
# Runner options a configuration needs beyond the above (tests/runner.py --help).
RUNNER_ARGS = {"numa": ["--numa", "2"]}
# The PCP lock model is the allocator's for its life (pcp.lock= at boot): the configurations
# that compare models boot once per model, and the metrics of the boots are merged. The
# lists-off series (nopcp) is measured in the first boot only. Smoke runs leave pft at one.
MODELS = ("trylock", "irqsave", "irqoff")
PER_MODEL = {"page": "bench.page_nopcp=0", "page-icount": "bench.page_nopcp=0",
             "scaling": "bench.scaling_models=%s", "pft": ""}
SMOKE_MODELS = {"pft": MODELS[:1]}


def run_models(name, cfg, smoke, outdir, iso):
    """run_config() once per lock model (pcp.lock=), the metrics of every boot together."""
    metrics, lines, ok = {}, [], True
    for i, model in enumerate(SMOKE_MODELS.get(name, MODELS) if smoke else MODELS):
        extra = "pcp.lock=" + model
        if i:
            extra += " " + PER_MODEL[name].replace("%s", model)
        qemu_args, smp, mem, cmdline, smoke_cmdline, timeout = cfg
        got, got_lines, good = run_config("%s-%s" % (name, model), (
            qemu_args, smp, mem, cmdline + " " + extra, smoke_cmdline + " " + extra, timeout),
            smoke, outdir, iso, runner_name=name)
        metrics.update(got)
        lines += got_lines
        ok &= good
    return metrics, lines, ok


def ram_image(iso):
    """The RAM-boot image beside an ISO (make release builds both), for -icount runs: booted
    from RAM no disk read is timed by the host, so they repeat exactly (Makefile, LNX)."""
    lnx = os.path.splitext(iso)[0] + ".lnx"
    return lnx if os.path.exists(lnx) else iso


def run_config(name, cfg, smoke, outdir, iso, runner_name=None):
    qemu_args, smp, mem, cmdline, smoke_cmdline, timeout = cfg
    if "-icount" in qemu_args:
        iso = ram_image(iso)
    log = os.path.join(outdir, name + ".log")
    cmd = [sys.executable, os.path.join(ROOT, "tests", "runner.py"), "--iso", iso,
           "--smp", str(smp), "--mem", mem, "--timeout", str(timeout), "--log", log,
           "--name", "bench-" + name, "--expect-cpus", "-1", "--progress", "none",
           "--cmdline", smoke_cmdline if smoke else cmdline]
    for a in qemu_args:
        cmd += ["--qemu-arg=" + a]
    cmd += RUNNER_ARGS.get(runner_name or name, [])
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


BOOT_CPUS = [1, 2, 4, 8, 16, 24, 32, 40]
BOOT_RUNS = 5
# "smp: 40 of 40 CPUs online, 789 ms from kernel entry (...)" or
# "smp: 1 CPU online (no APs started), 261 ms from kernel entry"
ONLINE_RE = re.compile(r"smp: .*online.*?, (\d+) ms from kernel entry")


def boot_once(iso, smp, timeout=300):
    """Boot once (boot tests only); return (firmware+GRUB s, kernel entry to all online ms)."""
    cmd = [sys.executable, os.path.join(ROOT, "tests", "runner.py"), "--iso", iso, "--smp",
           str(smp), "--mem", "2G", "--timeout", str(timeout), "--console", "--progress", "none",
           "--name", "bench-boot-%d" % smp, "--cmdline", "test=boot.*"]
    start = time.monotonic()
    entry = online_ms = None
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace")
    for line in proc.stdout:
        if entry is None and "smpmm: an SMP memory-management teaching kernel" in line:
            entry = time.monotonic() - start
        m = ONLINE_RE.search(line)
        if online_ms is None and m:
            online_ms = float(m.group(1))
    proc.wait()
    return entry, online_ms


def boot_bench(iso, outdir, smoke):
    """BOOT_RUNS boots per CPU count (one in smoke), rounds interleaved so drift spreads."""
    samples = {}
    cpus = [1, 40] if smoke else BOOT_CPUS
    for _ in range(1 if smoke else BOOT_RUNS):
        for n in cpus:
            fw, online = boot_once(iso, n)
            if fw is None or online is None:
                print("bench boot: -smp %d did not report its times" % n)
                continue
            samples.setdefault(n, ([], []))
            samples[n][0].append(fw)
            samples[n][1].append(online)
    metrics = {}
    rows = ["%6s %26s %30s" % ("CPUs", "firmware+GRUB s (sd, n)", "kernel to online ms (sd, n)")]
    for n, (fw, online) in sorted(samples.items()):
        a, b = stats.summarise(fw, False), stats.summarise(online, False)
        rows.append("%6d %14.2f (%5.2f, %d) %18.1f (%6.1f, %d)" % (
            n, a["mean"], a["stddev"], a["n"], b["mean"], b["stddev"], b["n"]))
        metrics["boot.firmware_s-%d" % n] = {"samples": fw, "higher": False, "unit": "s", "cpus": n}
        metrics["boot.online_ms-%d" % n] = {"samples": online, "higher": False, "unit": "ms",
                                            "cpus": n}
    return metrics, "\n".join(rows) + "\n"


# `make bench`'s comparison with Linux: ours and Debian's Linux 6.1 booted alternately,
# VS_ROUNDS times each, at 1 and 40 working CPUs of a 40-CPU guest, the same pairs per window;
# each boot measures VS_WINDOWS windows per point. Ours runs VS_PAIRS_OURS pairs per CPU per
# window, ten times Linux's VS_PAIRS: at 2-6 M pairs/s a 20000-pair window of ours lasts 3-7 ms,
# so one host preemption of a vCPU thread decided it (Linux's lasts 40-80 ms). Ours in its default model (trylock) and in
# irqsave, which is Linux 6.1's (IRQs off around the PCP lock); Linux as Debian ships it
# (init_on_alloc=1: every allocated page is zeroed) and with init_on_alloc=0, as ours.
VS_ROUNDS, VS_WINDOWS, VS_CPUS, VS_PAIRS, VS_PAIRS_OURS = 5, 3, "1,40", 20000, 200000
# A Linux boot of this comparison takes 14 s on an idle host; one hung before /init for more
# than 8 minutes (2026-12-01): give up after 5 and boot it again, once.
VS_LINUX_TIMEOUT = 300
VS_OURS = ("test=none mm.poison=0 bench=scaling bench.scaling_models=%s pcp.lock=%s "
           "bench.scaling_cpus=%s bench.scaling_pairs=%d bench.windows=%d")
VS_OURS_MODELS = ("trylock", "irqsave")    # one boot each per round: the model is fixed at boot
TSC_OURS_RE = re.compile(r"timer: TSC (\d+) kHz")
TSC_LINUX_RE = re.compile(r"tsc: (?:Refined TSC clocksource calibration|Detected): ([\d.]+) MHz")


def log_tsc_mhz(path, regex, scale):
    """The last TSC frequency a boot's log states, in MHz (None if it states none)."""
    try:
        with open(path, errors="replace") as f:
            found = regex.findall(f.read())
    except OSError:
        return None
    return float(found[-1]) / scale if found else None


def tsc_rescale(samples, logged_mhz, host_mhz):
    """Under TCG the guest TSC is the host's, so both kernels time with the same clock; but
    each converts cycles to seconds with its own calibration (ours, against the PIT before
    it bracketed its reads, was off by up to 20% on a loaded host). Convert both with the
    host's frequency."""
    if not logged_mhz or not host_mhz:
        return samples
    return [x * host_mhz / logged_mhz for x in samples]


def vs_linux(iso, outdir, rounds=VS_ROUNDS, inits=("1", "0")):
    """Interleaved rounds; returns (metrics, table text, ok)."""
    import bench_linux  # noqa: E402 (imports this module)
    files = bench_linux.prepare(os.path.join(ROOT, "build", "linux"))
    host_mhz = bench_linux.host_tsc_mhz()
    ours_cfgs = [(m, ([], 40, "2G", VS_OURS % (m, m, VS_CPUS, VS_PAIRS_OURS, VS_WINDOWS), "",
                      1200)) for m in VS_OURS_MODELS]
    linux_sides = [bench_linux.model_name(i) for i in inits]
    per_round, tsc = {}, {}    # (side, cpus) -> [[window samples] per round]; side -> [MHz]
    ok = True
    for r in range(rounds):
        # A round counts only if all its boots measured: each round's ratio pairs its own boots.
        this_round, round_ok = {}, True
        for model, ours_cfg in ours_cfgs:
            tag = "vs-linux-ours-%s-%d" % (model, r)
            got, _, good = run_config(tag, ours_cfg, False, outdir, iso)
            round_ok &= good
            mhz = log_tsc_mhz(os.path.join(outdir, tag + ".log"), TSC_OURS_RE, 1000.0)
            tsc.setdefault("ours", []).append(mhz)
            for key, m in got.items():
                side, cpus = "ours-" + key.split(".")[1], key.rsplit("cpus", 1)[-1]
                this_round[(side, cpus)] = tsc_rescale(m["samples"], mhz, host_mhz)
        for side, init in zip(linux_sides, inits):
            for _ in range(2):    # a 40-CPU Linux boot under TCG now and then hangs
                got, good = bench_linux.run_config(files, "scaling", False, outdir, init,
                                                   points=VS_CPUS, windows=VS_WINDOWS,
                                                   tag="-vs%d" % r, timeout=VS_LINUX_TIMEOUT)
                if good:
                    break
            round_ok &= good
            mhz = log_tsc_mhz(os.path.join(outdir, "scaling-%s-vs%d.log" % (side, r)),
                              TSC_LINUX_RE, 1.0)
            tsc.setdefault("linux", []).append(mhz)
            for key, m in got.items():
                this_round[(side, key.rsplit("cpus", 1)[-1])] = tsc_rescale(m["samples"], mhz,
                                                                             host_mhz)
        ok &= round_ok
        if not round_ok:
            print("vs-linux: round %d left out: a boot failed (its log says why)" % r, flush=True)
            continue
        for key, samples in this_round.items():
            per_round.setdefault(key, []).append(samples)
    metrics = {}
    for (side, cpus), rs in sorted(per_round.items()):
        metrics["vs.%s.cpus%s" % (side, cpus)] = {
            "samples": [x for w in rs for x in w], "higher": True, "unit": "pairs/s",
            "model": side, "cpus": int(cpus), "rounds": len(rs)}
    rows = ["ours against Debian's Linux %s, order-0 alloc+free pairs/s, %d interleaved rounds x "
            "%d windows (pairs per CPU per window: ours %d, Linux %d), 40-CPU guests:" % (
                files[2], rounds, VS_WINDOWS, VS_PAIRS_OURS, VS_PAIRS),
            "%-14s %5s %12s %8s %4s" % ("side", "CPUs", "Hmean", "CoeffV%", "n")]
    order = list(plots.VS_SIDES)
    for key in sorted(metrics, key=lambda k: (metrics[k]["cpus"], order.index(
            metrics[k]["model"]) if metrics[k]["model"] in order else 9, k)):
        m = metrics[key]
        st = stats.summarise(m["samples"], True)
        rows.append("%-14s %5d %12.0f %8.2f %4d" % (m["model"], m["cpus"], st["mean"],
                                                   st["coeffvar"], st["n"]))
    ours_sides = sorted({side for side, _ in per_round if side.startswith("ours-")})
    for ours in ours_sides:
        for side in linux_sides:
            for cpus in VS_CPUS.split(","):
                rows += vs_ratio(metrics, per_round, ours, side, cpus)
    for side, mhz in sorted(tsc.items()):
        mhz = [x for x in mhz if x]
        if mhz:
            rows.append("TSC as %s calibrated it: %.1f-%.1f MHz; rates above are converted "
                        "with the host's %s MHz" % (side, min(mhz), max(mhz), host_mhz))
    return metrics, "\n".join(rows) + "\n", ok


def vs_ratio(metrics, per_round, ours, linux, cpus):
    """One line: Hmean ratio over all windows, and its spread over the rounds (each round's
    ratio compares two boots made one after the other, so host drift mostly cancels)."""
    a, b = per_round.get((ours, cpus)), per_round.get((linux, cpus))
    if not a or not b:
        return []
    ratios = [stats.hmean(x) / stats.hmean(y) for x, y in zip(a, b) if stats.hmean(y) > 0]
    if not ratios:
        return []
    st = stats.summarise(ratios, False)
    total = stats.hmean([x for w in a for x in w]) / max(stats.hmean([x for w in b for x in w]),
                                                          1e-9)
    metrics["vs.ratio-%s-%s.cpus%s" % (ours, linux, cpus)] = {
        "samples": ratios, "higher": True, "unit": "ours/linux",
        "model": "ratio-%s-%s" % (ours, linux), "cpus": int(cpus)}
    return ["ratio %s/%s at %2s CPUs: %.2fx (per round: mean %.2f, sd %.2f, CoeffVar %.1f%%, "
            "range %.2f-%.2f, n %d)" % (ours, linux, cpus, total, st["mean"], st["stddev"],
                                        st["coeffvar"], min(ratios), max(ratios), st["n"])]


def split_by_model(metrics):
    """{model: {metric without the model prefix: m}} for metrics named model.rest."""
    out = {}
    for key, m in metrics.items():
        bench, rest = key.split(".", 1)
        model, metric = rest.split(".", 1) if "." in rest else ("all", rest)
        out.setdefault(model, {})[bench + "." + metric] = m
    return out


def write_results(outdir, name, metrics, smoke, text=None, quiet=False):
    with open(os.path.join(outdir, name + ".json"), "w") as f:
        json.dump({"config": name, "smoke": smoke, "date": time.strftime("%Y-%m-%d %H:%M"),
                   "metrics": metrics}, f, indent=1)
    text = text or table(metrics)
    with open(os.path.join(outdir, name + ".txt"), "w") as f:
        f.write(text)
    if not quiet:
        sys.stdout.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--iso", default=os.path.join(ROOT, "build", "smpmm.iso"))
    ap.add_argument("--vs-rounds", type=int, default=VS_ROUNDS,
                    help="vs-linux: rounds of ours + Linux boots (at least 5 for the docs)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    only = [n for n in args.only.split(",") if n]
    names = [n for n in list(CONFIGS) + ["boot", "vs-linux"] if not only or n in only]
    if args.smoke and "vs-linux" in names:
        names.remove("vs-linux")        # a Linux boot is not part of `make test`
    passed = failed = 0
    for name in names:
        if name == "boot":
            metrics, text = boot_bench(args.iso, args.out, args.smoke)
            ok = bool(metrics)
            write_results(args.out, name, metrics, args.smoke, text)
        elif name == "vs-linux":
            metrics, text, ok = vs_linux(args.iso, args.out, args.vs_rounds)
            write_results(args.out, name, metrics, args.smoke, text)
            for model, ms in split_by_model(metrics).items():
                write_results(args.out, "%s-%s" % (name, model), ms, args.smoke, quiet=True)
        else:
            run = run_models if name in PER_MODEL else run_config
            metrics, _, ok = run(name, CONFIGS[name], args.smoke, args.out, args.iso)
            write_results(args.out, name, metrics, args.smoke)
            if name in ("pft", "scaling", "page", "page-icount", "locks"):
                for model, ms in split_by_model(metrics).items():
                    write_results(args.out, "%s-%s" % (name, model), ms, args.smoke, quiet=True)
        passed += ok
        failed += not ok
    plots.make_all(args.out)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
