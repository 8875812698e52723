#!/usr/bin/env python3
"""What a modelled figure depends on: replays recorded streams (the plugin's trace=DIR) through
tests/c2c/replay with each assumed parameter of the machine file (tests/c2c/machines/) at the
low and the high end of its range, the others at their values, and reports every headline
figure as a range with a sensitivity table (which parameter moves it, how far). The range is
the lowest and highest of every replay made: the nominal, each parameter alone at either end,
the two corners where every parameter sits at the end that lowered (raised) the figure alone,
and the jitter rows (the model is not monotone: a corner alone can land inside). A last row shakes one latency by a few picoseconds: the replay order's own jitter.

usage: sweep.py --replay BIN --experiment gup|pft|scale|windows --machine NAME --boot NAME=TRACE,LOG ...
                [--out FILE.json] [--params a,b] (default: every assumed parameter)
                [--resume FILE.json ...] (earlier sweeps of the same streams, whole or cut short:
                their parameters' rows are kept, not replayed, once their nominal replays the
                same, and their ranges count among the replays the range is taken over)
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


CLASS_OF = {"lock_cycles": "lock", "xchg_cycles": "xchg", "pushf_cycles": "pushf", "popf_cycles": "popf",
            "cli_cycles": "cli", "sti_cycles": "sti", "string_bytes_per_cycle": "string_byte"}
class_counts = {}       # trace dir: {class: instructions in all its windows}


def replay(binary, trace, mach, over):
    """The windows of one recorded run, replayed on mach with overrides: [window dict]."""
    with tempfile.NamedTemporaryFile("r", suffix=".json") as out, \
            tempfile.NamedTemporaryFile("r", suffix=".json") as classes:
        subprocess.run([binary, trace, "-o", out.name, "-l", "0", "-classes", classes.name] +
                       mach.plugin_args(over), check=True)
        counts = class_counts.setdefault(trace, {})
        for d in map(json.loads, classes):
            for k, v in d.items():
                if k != "window":
                    counts[k] = counts.get(k, 0) + v
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


def pft_samples(runs):
    """Each PFT window's faults/sec: its faults over its slowest CPU's modelled time (every CPU
    starts at 0), by (lock model, threads)."""
    rates = {}
    for windows, descs in runs.values():
        for w in windows:
            d = descs.get(w["window"], {})
            if d.get("name") != "pft":
                continue
            wall = max(active_ps(w)) / 1e12
            rates.setdefault((d["model"], d["threads"]), []).append(d["ops"] / wall)
    return rates


def pft_figures(runs):
    """PFT's faults/sec (harmonic mean over iterations) per lock model and threads, and each
    model's difference against irqoff in per cent, as mmtests' compare prints it."""
    rates = pft_samples(runs)
    out = {}
    for (model, threads), xs in rates.items():
        out["%s faults/sec-%d" % (model, threads)] = hmean(xs)
    for (model, threads) in rates:
        base = out.get("irqoff faults/sec-%d" % threads)
        if model != "irqoff" and base:
            out["%s vs irqoff %%-%d" % (model, threads)] = out["%s faults/sec-%d" % (model, threads)] * 100 / base - 100
    return out


def pairs_figures(runs):
    """Order-0 pairs (bench=c2c_pages): transfers per pair, lists on and off, by CPUs."""
    out = {}
    for windows, descs in runs.values():
        for w in windows:
            d = descs.get(w["window"], {})
            if not d.get("name", "").startswith("pairs") or not d.get("ops"):
                continue
            t = w["total"]
            out["lists %s %d CPUs" % ("on" if d["lists"] else "off", d["active"])] = \
                (sum(t["hitm"]) + sum(t["clean"])) / d["ops"]
    return out


def windows_figures(runs):
    """Any recorded run: each window's transfers and its slowest CPU's modelled time in us."""
    out = {}
    for boot, (windows, _) in runs.items():
        for w in windows:
            t = w["total"]
            out["%s w%d transfers" % (boot, w["window"])] = sum(t["hitm"]) + sum(t["clean"])
            out["%s w%d us" % (boot, w["window"])] = max(active_ps(w) or [0]) / 1e6
    return out


EXPERIMENTS = {"gup": gup_figures, "scale": gup_figures, "pft": pft_figures, "pairs": pairs_figures,
               "windows": windows_figures}


_cache = {}
replays = []            # every setting replayed (for the tests: what a resumed sweep spared)


def figures(args, mach, over):
    """The experiment's figures on mach with `over` ({param: value}), replayed once per setting
    (a parameter overridden with its own value is the nominal: one replay serves both)."""
    key = tuple(sorted((k, v) for k, v in over.items() if v != mach.value(k)))
    if key not in _cache:
        replays.append(key)
        _cache[key] = _figures(args, mach, dict(key))
    return _cache[key]


def _figures(args, mach, over):
    runs = {}
    for name, (trace, log) in args.boots.items():
        descs, _ = report.read_console(log)
        runs[name] = (replay(args.replay, trace, mach, over), descs)
    return EXPERIMENTS[args.experiment](runs)


class Mismatch(Exception):
    """A sweep to resume is not of these streams on this machine."""


def resumed_rows(earlier, mach, machine_name, experiment, nominal):
    """The rows of an earlier sweep (its JSON, whole or saved part-way) that this one keeps:
    only if it is of the same experiment on the same machine file, and its nominal figures
    are exactly those replayed now (the same streams, replayer and machine file)."""
    if isinstance(earlier, list):       # several: their rows together, a parameter's once
        rows = {}
        for e in earlier:
            for r in resumed_rows(e, mach, machine_name, experiment, nominal):
                if rows.setdefault(r["param"], r) != r:
                    raise Mismatch("two rows of %s differ" % r["param"])
        return list(rows.values())
    if (earlier.get("machine"), earlier.get("experiment")) != (machine_name, experiment):
        raise Mismatch("it is %s on %s, not %s on %s" % (earlier.get("experiment"), earlier.get("machine"),
                                                           experiment, machine_name))
    if earlier.get("nominal") != nominal:
        raise Mismatch("its nominal figures are not this replay's: %s against %s" % (earlier.get("nominal"), nominal))
    rows = []
    for r in earlier.get("rows", []):
        a = {a[0]: a for a in mach.assumed()}.get(r["param"])
        if a is None or tuple(a[1:]) != (r["value"], r["low"], r["high"]):
            raise Mismatch("its row %s (%s, %s..%s) is not the machine file's %s" % (
                r["param"], r["value"], r["low"], r["high"], a))
        rows.append(r)
    return rows


def sweep(replay_bin, experiment, machine_name, boots, params=None, jitter=4, corners_of=None, save=None,
          resume=None):
    """The sweep of one experiment: boots {name: (trace dir, serial log)}; returns the result
    (nominal figures, a row per assumed parameter, ranges, corners, jitter). corners_of: only
    the figures whose name contains it get their corners replayed (the others' ranges add up
    the single parameters' moves); save(result so far) after each parameter; resume: an
    earlier result (or a part saved on the way), or a list of them, whose parameters are
    kept, not replayed, and whose ranges (replays made then: corners of fewer parameters,
    jitter) are among those this range is taken over (Mismatch if of other streams)."""
    args = argparse.Namespace(replay=replay_bin, experiment=experiment, boots=boots)
    mach = machine.load(machine_name)
    _cache.clear()
    class_counts.clear()
    del replays[:]
    nominal = figures(args, mach, {})
    earlier = (resume if isinstance(resume, list) else [resume]) if resume else []
    rows = resumed_rows(earlier, mach, machine_name, experiment, nominal)
    skipped = sorted({p for e in earlier for p in e.get("no_instructions_of_class", [])})
    for r in rows:                      # their replays, as if made here
        _cache[((r["param"], r["low"]),)] = r["at_low"]
        _cache[((r["param"], r["high"]),)] = r["at_high"]
    kept = {r["param"] for r in rows} | set(skipped)
    before = {}                         # each figure's range in the sweeps resumed
    for e in earlier:
        for fig, xs in list(e.get("ranges", {}).items()) + list(e.get("earlier_ranges", {}).items()):
            xs = [x for x in xs + before.get(fig, []) if x is not None]
            before[fig] = [min(xs), max(xs)] if xs else []
    chosen = [a for a in mach.assumed() if a[2] != a[3] and (not params or a[0] in params) and a[0] not in kept]
    if len(earlier) == 1 and "ranges" in earlier[0] and not chosen:
        return earlier[0]               # finished before: its corners and jitter stand
    if rows:
        print("sweep: %s: %d parameters kept from the sweep resumed (%s)" % (
            experiment, len(rows), ", ".join(r["param"] for r in rows)), file=sys.stderr, flush=True)
    for name, value, lo, hi in chosen:
        if name in CLASS_OF and not any(c.get(CLASS_OF[name]) for c in class_counts.values()) or \
                name == "smt_slowdown" and mach.value("threads") == 1:
            skipped.append(name)        # no instruction of its class ran, no SMT: it moves nothing
            continue
        f_lo, f_hi = figures(args, mach, {name: lo}), figures(args, mach, {name: hi})
        rows.append({"param": name, "value": value, "low": lo, "high": hi, "at_low": f_lo, "at_high": f_hi})
        print("sweep: %s %s %g..%g done" % (experiment, name, lo, hi), file=sys.stderr, flush=True)
        if save:
            save({"machine": machine_name, "experiment": experiment, "nominal": nominal, "rows": rows,
                  "no_instructions_of_class": skipped, "earlier_ranges": before})
    corners, ranges = {}, {}
    for fig in nominal:
        if corners_of and corners_of not in fig:     # the single moves added up
            down = sum(min(0, r["at_low"].get(fig, nominal[fig]) - nominal[fig],
                           r["at_high"].get(fig, nominal[fig]) - nominal[fig]) for r in rows)
            up = sum(max(0, r["at_low"].get(fig, nominal[fig]) - nominal[fig],
                         r["at_high"].get(fig, nominal[fig]) - nominal[fig]) for r in rows)
            ranges[fig] = [nominal[fig] + down, nominal[fig] + up]
            continue
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
    for fig in ranges:                  # the model is not monotone: a corner may land inside
        seen = [nominal[fig]] + [x for x in ranges[fig] if x is not None] + \
            [r[k].get(fig) for r in rows for k in ("at_low", "at_high") if r[k].get(fig) is not None] + \
            [j.get(fig) for j in shaken if j.get(fig) is not None] + \
            before.get(fig, [])
        ranges[fig] = [min(seen), max(seen)]
    return {"machine": machine_name, "experiment": experiment, "nominal": nominal, "rows": rows,
            "no_instructions_of_class": skipped, "earlier_ranges": before,
            "ranges": ranges, "corners": corners, "jitter": {fig: [j.get(fig) for j in shaken] for fig in nominal}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--replay", required=True)
    ap.add_argument("--experiment", required=True, choices=sorted(EXPERIMENTS))
    ap.add_argument("--machine", required=True)
    ap.add_argument("--boot", action="append", required=True, help="NAME=TRACE_DIR,SERIAL_LOG")
    ap.add_argument("--params", default="", help="only these assumed parameters")
    ap.add_argument("--jitter", type=int, default=4, help="replays with hitm_local moved by 1..N ps")
    ap.add_argument("--out", help="the results as JSON (also after each parameter)")
    ap.add_argument("--corners-of", help="replay corners only for figures whose name contains this")
    ap.add_argument("--resume", action="append", default=[], help="an earlier sweep's JSON of these "
                    "streams (whole or cut short; may be repeated): its parameters are kept, the others "
                    "replayed, the ranges taken over all")
    args = ap.parse_args()
    boots = {}
    for b in args.boot:
        name, paths = b.split("=", 1)
        boots[name] = tuple(paths.split(","))
    def save(res):
        if args.out:
            with open(args.out, "w") as f:
                json.dump(res, f, indent=1)
    earlier = []
    for path in args.resume:
        with open(path) as f:
            earlier.append(json.load(f))
    try:
        result = sweep(args.replay, args.experiment, args.machine, boots,
                       [p for p in args.params.split(",") if p], args.jitter, args.corners_of, save, earlier)
    except Mismatch as e:
        sys.exit("sweep.py: cannot resume %s: %s" % (args.resume, e))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
    print("\n".join(table(result)))


def table(res):
    """The figures' ranges, then each parameter's effect on each figure: text lines."""
    figs = sorted(res["nominal"])
    out = ["%s on %s: modelled figures, nominal and range (the lowest and highest of every replay below: corners, single parameters, jitter)"
           % (res["experiment"], res["machine"])]
    for f in figs:
        lo, hi = res["ranges"][f]
        if lo is None or hi is None:
            continue
        jit = [x for x in res["jitter"][f] if x is not None] + [res["nominal"][f]]
        out.append("  %-34s %12.4g  range %12.4g .. %-12.4g  replay jitter (hitm_local +1..%d ps) %.4g .. %.4g"
                   % (f, res["nominal"][f], min(lo, hi), max(lo, hi), len(jit) - 1, min(jit), max(jit)))
    if res.get("no_instructions_of_class"):
        out.append("  not varied (no instruction of their class ran in these windows, or no SMT): " +
                   ", ".join(res["no_instructions_of_class"]))
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
