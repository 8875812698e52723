#!/usr/bin/env python3
"""`make c2c-test`'s check of the offline replay (tests/c2c/replay.c) and of the model's counts
(tests/c2c/mesi_check.py): boots bench=c2c_selftest at 4 CPUs under the plugin with its streams
recorded, replays them on the machine the plugin modelled (every count must equal the live
run's), then on every machine file (tests/c2c/machines/: 8 to 256 CPUs, with and without SMT),
each time checking every access's outcome against the MESI table written apart from model.c;
then tests/c2c/sweep.py's resume on those streams (a sweep cut short and continued equals one
made whole; the earlier sweeps' ranges are kept in the range; a sweep of other streams is
refused).

usage: replay_check.py --plugin c2c.so --replay BIN --iso ISO --out DIR
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

LIVE_MACHINE = "e5-2630v4-40cores"      # its topology at 4 CPUs: 2 sockets, no SMT
VOLATILE = ("max_queued", "overflowed")  # how far the merge lagged QEMU: host timing


def windows(path):
    with open(path) as f:
        return {d["window"]: d for d in map(json.loads, f) if "window" in d}


SWEEP_MACHINE, SWEEP_PARAMS = "e5-2630v4-40cores", ["cpi", "upgrade_local"]


def sweep_checks(replay, trace, log):
    """[(test, problems)]: sweep.py's resume on the selftest's streams (experiment `windows`)."""
    import copy
    import sweep
    boots = {"selftest": (trace, log)}
    run = lambda params, **kw: sweep.sweep(replay, "windows", SWEEP_MACHINE, boots, params, jitter=1, **kw)
    whole = run(SWEEP_PARAMS)
    parts = []
    run(SWEEP_PARAMS[:1], save=lambda res: parts.append(copy.deepcopy(res)))
    resumed = run(SWEEP_PARAMS, resume=parts[-1])
    problems = []
    if any(key and key[0][0] == SWEEP_PARAMS[0] for key in sweep.replays):
        problems.append("the resumed sweep replayed %s again: %s" % (SWEEP_PARAMS[0], sweep.replays))
    for k in ("nominal", "rows", "ranges", "corners", "jitter"):
        if resumed[k] != whole[k]:
            problems.append("%s differs from the whole sweep's" % k)
    if not any(r["at_high"] != whole["nominal"] for r in whole["rows"]):
        problems.append("no parameter moved any figure: the comparison shows nothing")
    checks = [("c2c_sweep_resumed_equals_whole_sweep", problems)]
    wider = copy.deepcopy(whole)         # an earlier sweep whose corners went further
    wider["ranges"] = {f: [lo - 1, hi + 1] for f, (lo, hi) in whole["ranges"].items()}
    folded = run(SWEEP_PARAMS, resume=[whole, wider])
    checks.append(("c2c_sweep_resumed_ranges_take_in_the_earlier_sweeps", [
        "%s: %s, the earlier sweep's %s" % (f, folded["ranges"][f], wider["ranges"][f])
        for f in whole["ranges"] if folded["ranges"][f] != wider["ranges"][f]][:3]))
    other = copy.deepcopy(parts[-1])
    key = sorted(k for k in other["nominal"] if k.endswith(" us"))[0]
    other["nominal"][key] += 1e-3        # as if recorded from other streams
    try:
        run(SWEEP_PARAMS, resume=other)
        checks.append(("c2c_sweep_resume_of_other_streams_refused", ["resumed a sweep whose %s differs" % key]))
    except sweep.Mismatch:
        checks.append(("c2c_sweep_resume_of_other_streams_refused", []))
    return checks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--replay", required=True)
    ap.add_argument("--iso", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    trace = os.path.join(args.out, "trace")
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(trace)
    live, log = os.path.join(args.out, "live.json"), os.path.join(args.out, "selftest.log")
    live_args = ["out=" + live, "trace=" + trace, "cpus=4"] + machine.load(LIVE_MACHINE).plugin_args()[1:]
    subprocess.run([sys.executable, os.path.join(HERE, "..", "runner.py"), "--iso", args.iso, "--smp", "4",
                    "--timeout", "180", "--progress", "none", "--log", log, "--name", "c2c-replay-check",
                    "--cmdline", "test=none bench=c2c_selftest timer.hz=1",
                    "--qemu-arg=-plugin", "--qemu-arg=%s,%s" % (args.plugin, ",".join(live_args))],
                   stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    n = failed = 0
    want = windows(live) if os.path.exists(live) else {}
    for i, path in enumerate([None] + machine.machine_files()):
        mach = machine.load(path or LIVE_MACHINE)
        margs = (["cpus=4"] + mach.plugin_args()[1:]) if path is None else mach.plugin_args()
        name = os.path.basename(path)[:-len(".machine")] if path else "live"
        out, prefix = os.path.join(args.out, name + ".json"), os.path.join(args.out, name + ".log")
        res = subprocess.run([args.replay, trace, "-o", out, "-log", prefix] + margs,
                             capture_output=True, text=True)
        got = windows(out) if res.returncode == 0 else {}
        problems = [] if got and want else ["no windows (replay: %s)" % res.stderr.strip()[-200:]]
        if path is None and not problems:
            strip = lambda d: {k: v for k, v in d.items() if k not in VOLATILE}
            problems += ["window %d differs from the live run" % w for w in want
                         if strip(want[w]) != strip(got.get(w, {}))]
        if not problems:
            chk = subprocess.run([sys.executable, os.path.join(HERE, "mesi_check.py"), out, prefix],
                                 capture_output=True, text=True)
            if chk.returncode:
                problems.append("mesi_check: " + " | ".join(chk.stdout.splitlines()[-6:]))
        n += 1
        test = ("c2c_replay_equals_live_run" if path is None else
                "c2c_replay_on_%s_matches_mesi_table" % name.replace("-", "_"))
        if problems:
            failed += 1
            print("not ok %d %s" % (n, test))
            for p in problems[:5]:
                print("    # " + p)
        else:
            print("ok %d %s: %d windows%s" % (n, test, len(got), ", every count equal" if path is None else
                                              ", every access's outcome as the table says"))
    for test, problems in sweep_checks(args.replay, trace, log):
        n += 1
        failed += bool(problems)
        print("%s %d %s" % ("not ok" if problems else "ok", n, test))
        for p in problems[:5]:
            print("    # " + p)
    print("%d passed, %d failed" % (n - failed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
