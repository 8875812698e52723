#!/usr/bin/env python3
"""Did two `make c2c` runs give the same counts? Compares every boot's windows (OUT/*.json, the
plugin's output) of two runs, every field of every window, CPU and line, but `max_queued` (how
far the merge lagged behind QEMU: the host's timing, not the model's); prints one line per
window and `N passed, N failed`. docs/c2c.md, section 3.

usage: repeat.py RUN_A_DIR RUN_B_DIR
"""
import glob
import json
import os
import sys

HOST_TIMED = ("max_queued",)


def windows(path):
    with open(path) as f:
        return {d["window"]: {k: v for k, v in d.items() if k not in HOST_TIMED}
                for d in map(json.loads, f) if "window" in d}


def transfers(w):
    return sum(w["total"]["hitm"]) + sum(w["total"]["clean"])


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a_dir, b_dir = sys.argv[1:]
    passed = failed = 0
    for a_path in sorted(glob.glob(os.path.join(a_dir, "*.json"))):
        name = os.path.basename(a_path)
        if name.endswith(".summary.json") or name.startswith("sweep-"):
            continue
        b_path = os.path.join(b_dir, name)
        a, b = windows(a_path), windows(b_path) if os.path.exists(b_path) else {}
        for w in sorted(set(a) | set(b)):
            same = w in a and w in b and json.dumps(a[w], sort_keys=True) == json.dumps(b[w], sort_keys=True)
            passed += same
            failed += not same
            what = ("%d transfers" % transfers(a[w]) if same else "%s vs %s transfers" % (
                transfers(a[w]) if w in a else "-", transfers(b[w]) if w in b else "-"))
            print("%s %s window %d: %s" % ("identical" if same else "DIFFERENT", name[:-5], w, what))
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
