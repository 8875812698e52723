#!/usr/bin/env python3
"""Compare two benchmark result files (JSON from `make bench`) in the style of mmtests'
compare-mmtests.pl: one row per metric, the baseline value with (0.00%), the other value with
its difference in parentheses, or between asterisks when the difference is larger than the
two 95% confidence intervals together (i.e. significant).

usage: tests/bench/compare.py BASE.json NEW.json [--names A B]
"""
import argparse
import json
import re
import sys
import os

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stats  # noqa: E402


def load(path):
    """A result file is {"runs": {metric: {"samples": [...], "higher": bool}}, ...}."""
    with open(path) as f:
        data = json.load(f)
    return data.get("metrics", {})


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
    ap.add_argument("base")
    ap.add_argument("new")
    ap.add_argument("--names", nargs=2, default=None)
    args = ap.parse_args()
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


if __name__ == "__main__":
    main()
