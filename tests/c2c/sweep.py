#!/usr/bin/env python3
"""What a modelled figure depends on: replays recorded streams (the plugin's trace=DIR) through
tests/c2c/replay with each assumed parameter of the machine file (tests/c2c/machines/) at the
low and the high end of its range, the others at their values, and reports every headline
figure as a range with a sensitivity table (which parameter moves it, how far). The range is
the figure at the two corners where every parameter sits at the end that lowered (raised) it
alone. A last row shakes one latency by a few picoseconds: the replay order's own jitter.

usage: sweep.py --replay BIN --experiment gup|pft|scale --machine NAME --boot NAME=TRACE,LOG ...
                [--out FILE.json] [--params a,b] (default: every assumed parameter)
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import machine  # noqa: E402
import report  # noqa: E402

SEED_PINS = 131072      # gup_test -m 512: the seed's pins per thread


def replay(binary, trace, mach, over):
    """The windows of one recorded run, replayed on mach with overrides: [window dict]."""
    with tempfile.NamedTemporaryFile("r", suffix=".json") as out:
        subprocess.run([binary, trace, "-o", out.name, "-l", "0"] + mach.plugin_args(over), check=True)
        return [d for d in map(json.loads, out) if "window" in d]


def active_ps(w):
    """Modelled time of each CPU that did work in the window (counted_ps; the report's rule)."""
    return [c["counted_ps"] for c in w["cpus"] if c.get("clock", 0) > 1 and c["n"]["loads"] + c["n"]["stores"]]


def gup_figures(runs):
    """gup_test's get time per thread, scaled to the seed's -m 512, both modes and the ratio."""
    out = {}
    for boot, (windows, descs) in runs.items():
        for w in windows:
            d = descs.get(w["window"], {})
            mode = d.get("mode")
            if not mode or not d.get("ops"):
                continue
            t = active_ps(w)
            pins = d["ops"] // len(t)
            out["%s %s us" % (boot, mode)] = sum(t) / len(t) / 1e6 * SEED_PINS / pins
        if "%s every-pin us" % boot in out and "%s if-clear us" % boot in out:
            out["%s ratio" % boot] = out["%s every-pin us" % boot] / out["%s if-clear us" % boot]
    return out


def hmean(xs):
    return len(xs) / sum(1.0 / x for x in xs) if xs and all(xs) else 0.0


def pft_figures(runs):
    """PFT's faults/sec (harmonic mean over iterations) per lock model and threads, and each
    model's difference against irqoff in per cent, as mmtests' compare prints it."""
    rates = {}
    for windows, descs in runs.values():
        for w in windows:
            d = descs.get(w["window"], {})
            if w.get("name", d.get("name")) != "pft" and d.get("name") != "pft":
                continue
            wall = max(active_ps(w)) / 1e12
            rates.setdefault((d["model"], d["threads"]), []).append(d["ops"] / wall)
    out = {}
    for (model, threads), xs in rates.items():
        out["%s faults/sec-%d" % (model, threads)] = hmean(xs)
    for (model, threads) in rates:
        base = out.get("irqoff faults/sec-%d" % threads)
        if model != "irqoff" and base:
            out["%s vs irqoff %%-%d" % (model, threads)] = out["%s faults/sec-%d" % (model, threads)] * 100 / base - 100
    return out


EXPERIMENTS = {"gup": gup_figures, "scale": gup_figures, "pft": pft_figures}


_cache = {}


def figures(args, mach, over):
    """The experiment's figures on mach with `over` ({param: value}), replayed once per setting."""
    key = tuple(sorted(over.items()))
    if key not in _cache:
        _cache[key] = _figures(args, mach, over)
    return _cache[key]


def _figures(args, mach, over):
    runs = {}
    for name, (trace, log) in args.boots.items():
        descs, _ = report.read_console(log)
        runs[name] = (replay(args.replay, trace, mach, over), descs)
    return EXPERIMENTS[args.experiment](runs)


def sweep(replay_bin, experiment, machine_name, boots, params=None, jitter=4):
    """The sweep of one experiment: boots {name: (trace dir, serial log)}; returns the result
    (nominal figures, a row per assumed parameter, ranges, corners, jitter)."""
    args = argparse.Namespace(replay=replay_bin, experiment=experiment, boots=boots)
    mach = machine.load(machine_name)
    _cache.clear()
    nominal = figures(args, mach, {})
    rows = []
    chosen = [a for a in mach.assumed() if a[2] != a[3] and (not params or a[0] in params)]
    for name, value, lo, hi in chosen:
        f_lo, f_hi = figures(args, mach, {name: lo}), figures(args, mach, {name: hi})
        rows.append({"param": name, "value": value, "low": lo, "high": hi, "at_low": f_lo, "at_high": f_hi})
        print("sweep: %s %s %g..%g done" % (experiment, name, lo, hi), file=sys.stderr, flush=True)
    corners, ranges = {}, {}
    for fig in nominal:
        for end, pick in (("min", min), ("max", max)):
            over = {}
            for r in rows:
                a, b = r["at_low"].get(fig, math.nan), r["at_high"].get(fig, math.nan)
                if a != b:
                    over[r["param"]] = r["low"] if pick(a, b) == a else r["high"]
            corners.setdefault(fig, {})[end] = over
        ranges[fig] = [figures(args, mach, corners[fig]["min"]).get(fig),
                       figures(args, mach, corners[fig]["max"]).get(fig)]
    hitm = mach.params["hitm_local"].value
    shaken = [figures(args, mach, {"hitm_local": hitm + d / 1000.0}) for d in range(1, jitter + 1)]
    return {"machine": machine_name, "experiment": experiment, "nominal": nominal, "rows": rows,
            "ranges": ranges, "corners": corners, "jitter": {fig: [j.get(fig) for j in shaken] for fig in nominal}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--replay", required=True)
    ap.add_argument("--experiment", required=True, choices=sorted(EXPERIMENTS))
    ap.add_argument("--machine", required=True)
    ap.add_argument("--boot", action="append", required=True, help="NAME=TRACE_DIR,SERIAL_LOG")
    ap.add_argument("--params", default="", help="only these assumed parameters")
    ap.add_argument("--jitter", type=int, default=4, help="replays with hitm_local moved by 1..N ps")
    ap.add_argument("--out", help="the results as JSON")
    args = ap.parse_args()
    boots = {}
    for b in args.boot:
        name, paths = b.split("=", 1)
        boots[name] = tuple(paths.split(","))
    result = sweep(args.replay, args.experiment, args.machine, boots,
                   [p for p in args.params.split(",") if p], args.jitter)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
    print("\n".join(table(result)))


def table(res):
    """The figures' ranges, then each parameter's effect on each figure: text lines."""
    figs = sorted(res["nominal"])
    out = ["%s on %s: modelled figures, nominal and range (both corners of the assumed parameters)"
           % (res["experiment"], res["machine"])]
    for f in figs:
        lo, hi = res["ranges"][f]
        jit = [x for x in res["jitter"][f] if x is not None] + [res["nominal"][f]]
        out.append("  %-34s %12.4g  range %12.4g .. %-12.4g  replay jitter (hitm_local +1..%d ps) %.4g .. %.4g"
                   % (f, res["nominal"][f], min(lo, hi), max(lo, hi), len(jit) - 1, min(jit), max(jit)))
    out.append("sensitivity: each figure with one parameter at the low / the high end of its range")
    for r in res["rows"]:
        out.append("  %-24s %g (%g .. %g)" % (r["param"], r["value"], r["low"], r["high"]))
        for f in figs:
            a, b = r["at_low"].get(f), r["at_high"].get(f)
            if a is not None and b is not None:
                out.append("      %-34s %12.4g .. %-12.4g (%s .. %s)" % (
                    f, a, b, change(a, res["nominal"][f], f), change(b, res["nominal"][f], f)))
    return out


def change(x, nominal, fig):
    """x against the nominal figure: in points for a figure that is a percentage, else in %."""
    if "%" in fig:
        return "%+.2f points" % (x - nominal)
    return "%+.1f%%" % ((x / nominal - 1) * 100) if nominal else "-"


if __name__ == "__main__":
    main()
