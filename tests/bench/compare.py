#!/usr/bin/env python3
"""Compare two benchmark result files (JSON from `make bench`) in the style of mmtests'
compare-mmtests.pl: one row per metric, the baseline value with (0.00%), the other value with
its difference in parentheses, or between asterisks when the difference is larger than the
two 95% confidence intervals together (i.e. significant).

usage: tests/bench/compare.py [BASE.json NEW.json] [--names A B]
(without files: Linux against ours from make bench's interleaved rounds, vs-linux-*.json)
"""
import argparse
import json
import re
import sys
import os

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stats  # noqa: E402


def load(path):
    """A result file is {"metrics": {metric: {"samples": [...], "higher": bool}}, ...}."""
    with open(path) as f:
        data = json.load(f)
    return data.get("metrics", {})


# Which command writes which result file (build/bench/<prefix>...json).
MAKERS = [("vs-linux", "make bench BENCH_ONLY=vs-linux"),
          ("scaling-linux", "make bench-linux"), ("page-icount-linux", "make bench-linux"),
          ("gup-linux", "make bench-linux"), ("page-icount", "make bench BENCH_ONLY=page-icount"),
          ("page", "make bench BENCH_ONLY=page"), ("scaling", "make bench BENCH_ONLY=scaling"),
          ("pft", "make bench BENCH_ONLY=pft"), ("gup", "make bench BENCH_ONLY=gup"),
          ("locks", "make bench BENCH_ONLY=locks"), ("boot", "make bench BENCH_ONLY=boot")]


def missing_help(paths):
    """What to say instead of a traceback when result files are missing; None if all exist."""
    lines = []
    for p in paths:
        if os.path.exists(p):
            continue
        name = os.path.basename(p)
        how = next((cmd for prefix, cmd in MAKERS if name.startswith(prefix)), "make bench")
        lines.append("compare: %s does not exist: `%s` writes it" % (p, how))
    if not lines:
        return None
    folder = os.path.dirname(paths[0]) or "."
    have = sorted(f for f in os.listdir(folder) if f.endswith(".json")) \
        if os.path.isdir(folder) else []
    lines.append("result files in %s: %s" % (folder, ", ".join(have) if have else
                                              "none yet (run `make bench` first)"))
    lines.append("usage: make compare A=build/bench/pft-irqoff.json B=build/bench/pft-irqsave.json")
    return "\n".join(lines)


def natural_key(name):
    """faults/sec-2 before faults/sec-16: numbers compare as numbers."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def cell(base, new, higher):
    d = stats.pdiff(base["mean"], new["mean"], higher)
    if base is new:
        return "(%7.2f%%)" % 0.0
    mark = "*" if stats.significant(base, new) else None
    return ("*%7.2f%%*" if mark else "(%7.2f%%)") % d


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base", nargs="?", default="build/bench/vs-linux-linux.json")
    ap.add_argument("new", nargs="?", default="build/bench/vs-linux-ours-trylock.json")
    ap.add_argument("--names", nargs=2, default=None)
    args = ap.parse_args()
    problem = missing_help([args.base, args.new])
    if problem:
        print(problem)
        return 2
    a, b = load(args.base), load(args.new)
    names = args.names or [os.path.basename(args.base), os.path.basename(args.new)]
    print("%-8s %-34s %26s %26s" % ("", "metric", names[0][:26], names[1][:26]))
    for metric in sorted(set(a) & set(b), key=natural_key):
        higher = a[metric].get("higher", True)
        sa = stats.summarise(a[metric]["samples"], higher)
        sb = stats.summarise(b[metric]["samples"], higher)
        for key, label in (("mean", sa["kind"]), ("stddev", "Stddev"), ("coeffvar", "CoeffVar")):
            hib = higher if key == "mean" else False
            va, vb = sa[key], sb[key]
            if key == "mean":
                ca, cb = cell(sa, sa, hib), cell(sa, sb, hib)
            else:
                ca, cb = "(%7.2f%%)" % 0.0, "(%7.2f%%)" % stats.pdiff(va, vb, hib)
            print("%-8s %-34s %14.2f %11s %14.2f %11s" % (label, metric, va, ca, vb, cb))
    only = sorted(set(a) ^ set(b))
    if only:
        print("metrics in only one file: " + ", ".join(only))
    if not set(a) & set(b):
        print("compare: the two files have no metric in common")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
