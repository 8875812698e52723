#!/usr/bin/env python3
"""Summary statistics as mmtests computes them: arithmetic or harmonic mean, standard
deviation, coefficient of variation and a 95% confidence interval of the mean (Student's t).
Used by tests/bench/bench.py and tests/bench/compare.py; no third-party modules."""
import math

# Two-sided 95% Student t quantiles for 1..30 degrees of freedom; 1.96 beyond.
_T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t95(dof):
    """Two-sided 95% quantile of Student's t: the table up to 30 degrees of freedom, then the
    Cornish-Fisher expansion around z = 1.96 (within 0.001 of the exact value: 2.021 at 40,
    1.984 at 100), never 1.96 itself, which would make small samples look significant."""
    if dof <= 0:
        return float("inf")
    if dof <= len(_T95):
        return _T95[dof - 1]
    z = 1.959964
    return z + (z ** 3 + z) / (4 * dof) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * dof ** 2)


def mean(xs):
    return sum(xs) / len(xs)


def hmean(xs):
    """Harmonic mean: the right mean for rates (ops/s), as mmtests uses for Higher-is-better."""
    if any(x <= 0 for x in xs):
        return 0.0
    return len(xs) / sum(1.0 / x for x in xs)


def stddev(xs):
    if len(xs) < 2:
        return 0.0
    m = mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def summarise(xs, higher_is_better=True):
    """Dict with n, min, max, mean (harmonic for rates), stddev, coeffvar (% of the arithmetic
    mean), ci95 half-width."""
    n = len(xs)
    centre = hmean(xs) if higher_is_better else mean(xs)
    sd = stddev(xs)
    ci = t95(n - 1) * sd / math.sqrt(n) if n > 1 else float("inf")
    return {
        "n": n,
        "min": min(xs),
        "max": max(xs),
        "mean": centre,
        "kind": "Hmean" if higher_is_better else "Amean",
        "stddev": sd,
        # stddev over the arithmetic mean (as mmtests): over a harmonic mean dragged down by
        # one stalled window it would read thousands of percent.
        "coeffvar": 100.0 * sd / mean(xs) if mean(xs) else 0.0,
        "ci95": ci,
    }


def pdiff(base, new, higher_is_better=True):
    """mmtests' percentage difference: positive means better."""
    if base == 0:
        return 0.0
    d = new * 100.0 / base - 100.0
    return d if higher_is_better else -d


def significant(a, b):
    """True when the means differ by more than the sum of their 95% CI half-widths."""
    return abs(a["mean"] - b["mean"]) > a["ci95"] + b["ci95"]


if __name__ == "__main__":
    s = summarise([10.0, 11.0, 9.5, 10.5])
    assert abs(s["mean"] - 4 / (1 / 10 + 1 / 11 + 1 / 9.5 + 1 / 10.5)) < 1e-9
    assert not significant(s, summarise([10.1, 11.1, 9.4, 10.4]))
    assert significant(s, summarise([20.0, 21.0, 19.0, 20.5]))
    assert t95(4) == 2.776 and abs(t95(40) - 2.021) < 0.001 and abs(t95(100) - 1.984) < 0.001
    assert summarise([5.0])["ci95"] == float("inf")   # one run is never significant
    print("stats self-test ok")
