#!/usr/bin/env python3
"""A second coherence model, written apart from tests/c2c/model.c from the MESI table of
docs/c2c.md (section 1), to check that model.c's counts are the protocol's: it takes every
access in the order model.c's merge replayed it (tests/c2c/replay -log PREFIX), decides each
one's outcome from the table with its own per-core states (M, E, S; absent is I), and counts
them as the report does. Every access's outcome, and every window's, CPU's and line's counts,
must agree exactly with model.c's (replay's JSON output).

usage: mesi_check.py REPLAY.json LOG-PREFIX [--windows N,N]
"""
import argparse
import json
import os
import struct
import sys

OUTCOMES = ("hit", "cold", "hitm", "clean", "upgrade")
HIT, COLD, HITM, CLEAN, UPGRADE = range(5)


class Machine:
    """Whose cache a CPU uses, and which socket it sits on (docs/c2c.md, "Sockets and SMT")."""

    def __init__(self, cpus, sockets, threads):
        self.core = [c // threads for c in range(cpus)]
        self.socket = [c * sockets // cpus for c in range(cpus)]
        self.core_socket = {self.core[c]: self.socket[c] for c in range(cpus)}


def new_counts():
    return {"loads": 0, "stores": 0, "hitm_loads": 0, "invalidated": 0,
            **{o: [0, 0] for o in OUTCOMES}}


def access(states, core, socket_of, store):
    """One access by `core` to a line whose caches are `states` ({core: 'M'|'E'|'S'}), by the
    table: returns (outcome, cross-socket, copies invalidated) and updates `states`."""
    mine = states.get(core)
    others = [c for c in states if c != core]
    here = socket_of[core]
    if not store:
        if mine:
            return HIT, False, 0
        if not others:
            states[core] = "E"                      # load, nobody holds it: from memory
            return COLD, False, 0
        dirty = any(states[c] == "M" for c in others)
        for c in others:                            # the owner writes back; all share
            states[c] = "S"
        states[core] = "S"
        cross = not any(socket_of[c] == here for c in others)
        return (HITM if dirty else CLEAN), cross, 0
    if not others:
        states.clear()
        states[core] = "M"
        return (HIT if mine else COLD), False, 0   # alone (M/E) or nobody: ownership here
    outcome = UPGRADE if mine else HITM if any(states[c] == "M" for c in others) else CLEAN
    cross = any(socket_of[c] != here for c in others)
    states.clear()                                  # every other copy invalidated
    states[core] = "M"
    return outcome, cross, len(others)


def check_window(window, log_path, mach, want_cpus):
    """Replays one window's log; returns (problems, counts: total, per CPU, per line)."""
    lines, total, per_cpu, per_line, problems = {}, new_counts(), {}, {}, []
    with open(log_path, "rb") as f:
        data = f.read()
    for i, (cpu, flags, model_outcome, line) in enumerate(struct.iter_unpack("<HBBI", data)):
        store, counted = bool(flags & 1), bool(flags & 2)
        states = lines.get(line)
        if states is None:
            states = lines[line] = {}
        o, cross, inval = access(states, mach.core[cpu], mach.core_socket, store)
        if o != model_outcome or (o != HIT and cross != bool(flags & 4)):
            if len(problems) < 5:
                problems.append("window %d access %d (CPU %d, %s line %#x): table says %s%s, model.c %s%s"
                                % (window, i, cpu, "store" if store else "load", line << 6, OUTCOMES[o],
                                   " cross" if cross else "", OUTCOMES[model_outcome],
                                   " cross" if flags & 4 else ""))
            continue
        if not counted:
            continue
        for n in (total, per_cpu.setdefault(cpu, new_counts()), per_line.setdefault(line, new_counts())):
            n["stores" if store else "loads"] += 1
            n[OUTCOMES[o]][cross and o != HIT] += 1
            n["hitm_loads"] += o == HITM and not store
            n["invalidated"] += inval
    return problems, total, per_cpu, per_line


def same(mine, theirs):
    return all(mine[k] == theirs[k] for k in mine)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", help="replay's output (its params line, then one line per window)")
    ap.add_argument("log", help="replay's -log PREFIX")
    ap.add_argument("--windows", default="", help="only these windows")
    args = ap.parse_args()
    only = {int(w) for w in args.windows.split(",") if w}
    params, windows = None, []
    with open(args.json) as f:
        for text in f:
            d = json.loads(text)
            if "params" in d:
                params = d["params"]
            elif not only or d["window"] in only:
                windows.append(d)
    mach = Machine(params["cpus"], params["sockets"], params["threads"])
    bad = 0
    for i, w in enumerate(windows, 1):
        path = "%s.w%03d" % (args.log, w["window"])
        problems, total, per_cpu, per_line = check_window(w["window"], path, mach, w["cpus"])
        accesses = os.path.getsize(path) // 8
        if same(total, w["total"]):
            pass
        else:
            problems.append("window total: table %s, model.c %s" % (
                {k: v for k, v in total.items()}, {k: w["total"][k] for k in total}))
        for c in w["cpus"]:
            mine = per_cpu.get(c["cpu"], new_counts())
            if not same(mine, c["n"]):
                problems.append("CPU %d: table %s, model.c %s" % (c["cpu"], mine, {k: c["n"][k] for k in mine}))
        for ln in w["lines"]:
            mine = per_line.get(ln["phys"] >> 6, new_counts())
            if not same(mine, ln["n"]):
                problems.append("line %#x: table %s, model.c %s" % (ln["phys"], mine, {k: ln["n"][k] for k in mine}))
        name = "c2c_mesi_table_agrees_with_model_window_%d" % w["window"]
        transfers = sum(total["hitm"]) + sum(total["clean"])
        if problems:
            bad += 1
            print("not ok %d %s" % (i, name))
            for p in problems[:8]:
                print("    # " + p)
        else:
            print("ok %d %s: %d accesses, every outcome the same; %d transfers, %d CPUs and %d lines' "
                  "counts equal" % (i, name, accesses, transfers, len(w["cpus"]), len(w["lines"])))
    print("%d passed, %d failed" % (len(windows) - bad, bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
