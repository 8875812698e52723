#!/usr/bin/env python3
"""`make exercise-rates`: plant each exercise's bug (docs/exercises.md), run the command that
is meant to catch it RUNS times, and write the catch rates into docs/exercises.md.

Each entry of EXERCISES is one bug as an exercise describes it: the edits that plant it (or
the name of the tests/mutate/mutations.py entry that is the same bug) and the commands the
exercise gives, run as written in a copy of the tree (build/exercise-rates/<id>/; the working
tree is never touched). A run catches the bug when its command fails. Every command is run
once on the unplanted copy first: a command that fails there measures nothing, and its row
says so. The table goes between the exercise-rates markers in docs/exercises.md, with the
date, the commit, the number of runs and the host's load. Not part of make test (minutes).
"""
import argparse
import datetime
import fnmatch
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "mutate"))
import mutate  # noqa: E402
from mutations import MUTATIONS  # noqa: E402

# id, what the exercise plants, its edits (or mutation=NAME), the commands it gives, and
# for each command an optional (regex, label): the number the regex finds in the output,
# given in the table as a range over the runs.
EXERCISES = [
    dict(id="1", says="`mm_munmap()` without `mm_tlb_shootdown(mm)`",
         file="mm/vm.c",
         edits=[("\tmm_tlb_shootdown(mm);\n\tspin_unlock(&mm->lock);\n",
                 "\tspin_unlock(&mm->lock);\n")],
         commands=[('make run SMP=8 CMDLINE="test=gup_private.gup_unmap*"',
                    (r"poison reads (\d+)", "poisoned reads per run"))]),
    dict(id="1b", says="`gup_fast()` without `arch_irq_save()`/`arch_irq_restore()`",
         mutation="gup-fast-irqs-on",
         commands=[('make run SMP=8 CMDLINE="test=gup_private.gup_unmap*"',
                    (r"poison reads (\d+)", "poisoned reads per run"))]),
    dict(id="2", says="`drain_pages_zone()` reads `pcp->count` before `pcp->lock` and skips "
         "the CPU if it is 0", file="mm/pcp.c",
         edits=[("\tint count;\n\n\tdo {\n",
                 "\tint count = READ_ONCE(pcp->count);\n\n\tif (!count)\n\t\treturn;\n\tdo {\n")],
         commands=[('make run SMP=8 CMDLINE="test=mm_pcp*"', None),
                   ("build/host/plain/mmtest --pct 1 --runs 100 zone_pcp_disable_vs_refill",
                    (r"failed (\d+) of 100 runs", "seeds of 100 that fail"))]),
    dict(id="6", says="`nr_pcp_high()` without its `free_high` case", file="mm/page_alloc.c",
         edits=[("return (!high || free_high) ? 0 : high;", "return !high ? 0 : high;")],
         commands=[('make run SMP=4 CMDLINE="test=mm_pcp*"', None),
                   ("build/host/plain/mmtest pcp", None)]),
    dict(id="7", says="`__free_pages()` returns early for order-3 blocks",
         file="mm/page_alloc.c",
         edits=[("void __free_pages(struct page *page, unsigned int order)\n{\n",
                 "void __free_pages(struct page *page, unsigned int order)\n{\n"
                 "\tif (order == 3)\n\t\treturn;\n")],
         commands=[("make host-test", None),
                   ('make run SMP=4 CMDLINE="test=mm_buddy.*"', (r"after: (\d+) pages LOST", "summary: pages LOST")),
                   ("make soak SMP=4 DURATION=30", None)]),
    dict(id="10", says="`zone->lock` and `free_area[]` without `__cacheline_aligned` (Linux "
         "before a368ab67aa55)", mutation="share-zone-lock-on-free-lists-line",
         commands=[("make c2c-test", None)]),
    dict(id="10b", says="`spin_trylock_irqsave()` of `zone->lock` before `spin_lock_irqsave()` "
         "(Linux before c5bb27e2da3a)", mutation="share-zone-lock-trylock-then-lock",
         commands=[("make c2c-test", None)]),
]

BEGIN = "<!-- exercise-rates: begin (written by make exercise-rates) -->"
END = "<!-- exercise-rates: end -->"


def planted(ex):
    """The mutation-shaped entry (file, edits) of an exercise."""
    if "mutation" in ex:
        m = next(m for m in MUTATIONS if m["name"] == ex["mutation"])
        return dict(name=ex["id"], file=m["file"], edits=m["edits"])
    return dict(name=ex["id"], file=ex["file"], edits=ex["edits"])


def as_run(command, max_smp):
    """The command with SMP= lowered to max_smp (if given and smaller)."""
    m = re.search(r"\bSMP=(\d+)", command)
    if max_smp and m and int(m.group(1)) > max_smp:
        return command[:m.start(1)] + str(max_smp) + command[m.end(1):]
    return command


def run(tree, command, timeout, log):
    """(failed, output) of one run of command in tree (through bash, as typed)."""
    if command.startswith("build/host/"):     # a host binary: build it first
        subprocess.run(["make", "--no-print-directory", command.split()[0]], cwd=tree,
                       capture_output=True)
    try:
        res = subprocess.run(["bash", "-c", command], cwd=tree, capture_output=True, text=True,
                             errors="replace", timeout=timeout, stdin=subprocess.DEVNULL)
        out, failed = res.stdout + res.stderr, res.returncode != 0
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) \
            else (e.stdout or "")
        out, failed = out + f"\n(stopped by exercise_rates.py after {timeout} s)", None
    with open(log, "a") as f:
        f.write(f"$ {command}\n{out}\n(failed: {failed})\n")
    return failed, out


def what_failed(out):
    """The first failed cases, or the runner's error, in a few words."""
    names = re.findall(r"^FAILED (\S+)", out, re.M) or \
        re.findall(r"^ {2,}not ok \d+ (\S+)", out, re.M) or \
        re.findall(r"^not ok \d+ (\w+)", out, re.M)    # tests/runner.py; KTAP cases; c2c-test
    if names:
        return ", ".join(list(dict.fromkeys(names))[:3])
    m = re.search(r"^(?:ERROR|soak: FAILED)\s*(.*)$", out, re.M)
    return re.sub(r"\s*\(see the lines above\)", "", m.group(0))[:80] if m else \
        "(exit status only)"


def load_now():
    return os.getloadavg()[0]


def table_rows(text):
    """The rows of the table now in the doc: [(exercise id, row line)]."""
    if BEGIN not in text:
        return []
    block = text[text.index(BEGIN):text.index(END)]
    return [(line.split("|")[1].strip(), line) for line in block.splitlines()
            if line.startswith("| ") and not line.startswith("| exercise")]


def write_table(path, rows, ids):
    """Replace the rows of the exercises in ids, keep the others."""
    with open(path) as f:
        text = f.read()
    kept = [line for i, line in table_rows(text) if i not in ids]
    new = [f"| {r['id']} | {r['says']} | `{r['command']}` | {r['baseline']} | {r['caught']} | "
           f"{r['what']} | {r['figure']} | {r['when']} |" for r in rows]
    order = [e["id"] for e in EXERCISES]
    lines = sorted(kept + new, key=lambda l: order.index(l.split("|")[1].strip())
                   if l.split("|")[1].strip() in order else len(order))
    table = ["| exercise | bug planted | command (as run) | unplanted | caught | what failed "
             "| figure | measured |", "|---|---|---|---|---|---|---|---|"] + lines
    block = BEGIN + "\n" + "\n".join(table) + "\n" + END
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="runs of each command (default 5)")
    ap.add_argument("--only", default="*", help="glob over exercise ids (1, 1b, 2, 6, 7, 10, 10b)")
    ap.add_argument("--max-smp", type=int, default=0,
                    help="run commands that ask for more CPUs with this many (the table says so)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per run")
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "exercise-rates"))
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "exercises.md"))
    ap.add_argument("--no-write", action="store_true", help="print the table only")
    args = ap.parse_args()
    chosen = [e for e in EXERCISES if fnmatch.fnmatchcase(e["id"], args.only)]
    base = os.path.join(args.build, "base")
    os.makedirs(base, exist_ok=True)
    mutate.seed_base(base, {"kernel", "host", "conflict"})
    mutate.sync_base(base)
    for e in chosen:        # every planted text must be in the tree, once
        m = planted(e)
        with open(os.path.join(base, m["file"])) as f:
            text = f.read()
        for old, _ in m["edits"]:
            if text.count(old) != 1:
                sys.exit(f"exercise-rates: exercise {e['id']}: the text to change is found "
                         f"{text.count(old)} times in {m['file']}: the code moved; update "
                         "EXERCISES in tests/exercise_rates.py and the exercise's text")
    start, loads, rows = time.time(), [load_now()], []
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    print(f"exercise-rates: {len(chosen)} exercises, {args.runs} runs each; host load average "
          f"{loads[0]:.1f} on {os.cpu_count()} cores; copies in {args.build}", flush=True)
    baseline = {}
    for e in chosen:
        tree = os.path.join(args.build, e["id"])
        log = os.path.join(args.build, e["id"] + ".log")
        for p in (log,):
            if os.path.exists(p):
                os.remove(p)
        for command, figure_re in e["commands"]:
            cmd = as_run(command, args.max_smp)
            if cmd not in baseline:
                failed, out = run(base, cmd, args.timeout, os.path.join(args.build,
                                                                         "base.log"))
                baseline[cmd] = "passes" if failed is False else "FAILS"
                print(f"  unplanted: `{cmd}` {baseline[cmd]}", flush=True)
            subprocess.run(["rm", "-rf", tree])
            subprocess.run(["cp", "-a", base, tree], check=True)
            err = mutate.apply_edits(tree, planted(e))
            if err:
                sys.exit(f"exercise-rates: exercise {e['id']}: {err}")
            caught, whats, figures, run_loads = 0, [], [], [load_now()]
            for i in range(args.runs):
                t0 = time.time()
                failed, out = run(tree, cmd, args.timeout, log)
                loads.append(load_now())
                run_loads.append(loads[-1])
                caught += failed is True
                if failed:
                    whats.append(what_failed(out))
                if figure_re:
                    figures += [int(v) for v in re.findall(figure_re[0], out)]
                print(f"  exercise {e['id']}: `{cmd}` run {i + 1}: "
                      f"{'caught' if failed else 'not caught' if failed is False else 'hung'}"
                      f" ({time.time() - t0:.0f} s) {whats[-1] if failed else ''}", flush=True)
            common = max(set(whats), key=whats.count) if whats else "-"
            span = f"{min(figures)}" if figures and min(figures) == max(figures) else \
                f"{min(figures)}-{max(figures)}" if figures else ""
            figure = f"{figure_re[1]}: {span}" if figures else "-"
            when = (f"{datetime.date.today().isoformat()}, {commit}{'+' if dirty else ''}, "
                    f"load {min(run_loads):.1f}-{max(run_loads):.1f}")
            rows.append(dict(id=e["id"], says=e["says"], command=cmd, baseline=baseline[cmd],
                             caught=f"{caught} of {args.runs}", what=common, figure=figure,
                             when=when))
            print(f"exercise {e['id']}: `{cmd}`: caught {caught} of {args.runs}", flush=True)
    print(f"exercise-rates: {(time.time() - start) / 60:.0f} minutes, host load average "
          f"{min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores")
    if args.no_write:
        for r in rows:
            print(r)
    else:
        write_table(args.doc, rows, {e["id"] for e in chosen})
        print(f"exercise-rates: table written to {os.path.relpath(args.doc, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
