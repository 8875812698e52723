#!/usr/bin/env python3
"""`make mutate`: plant each bug of tests/mutate/mutations.py in a tree copy; a test must fail.

The working tree is never touched. The tracked files are copied to build/mutate/base/ and
built there once; each mutation gets a copy of that (build/mutate/<name>/, sources and
objects, so only the mutated file recompiles), its edits, and its tests run in order until
one fails: the mutant is then KILLED by that test. A mutant no test fails SURVIVED: the
tests cannot tell that code from the real one. A hang counts as a kill only when the test
runner itself reports it as a failure (the host harness's watchdog, the kernel runner's
timeout); a hang that only this script's own timeout stops is not a kill. An original text
that is missing (or found twice) is an ERROR, so the list cannot silently rot.

A kill counts only if the killing test passes on the unmutated copy (checked the first time
that test kills something): a test that fails anyway proves nothing, and is then skipped.
With --runs N the killing test is run N times in all on the mutant, and the mutant counts
as killed only if it failed every time (a WEAK kill otherwise: a test that catches the bug
now and then is a race left to chance).

One line per mutation, then `N killed, M survived` (and the errors); exit status 1 if any
mutant survived, was killed WEAK, or any entry was in error. Not a measure of the tests' speed.
"""

import argparse
import fnmatch
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from mutations import MUTATIONS  # noqa: E402

HOST_BUILDS = {"host": "plain", "asan": "asan", "tsan": "tsan", "release": "release"}
SANITIZER_ENV = {
    "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0",
    "TSAN_OPTIONS": "halt_on_error=1 second_deadlock_stack=1 suppressions="
                    + os.path.join(ROOT, "tests/host/tsan.supp"),
}


def log_to(path, text):
    with open(path, "a") as f:
        f.write(text)


# ---- the tree copies ----------------------------------------------------------------------

def tracked_files():
    """The tree's files as git sees them: tracked, or new and not ignored (build/ is)."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, capture_output=True, check=True)
    return sorted({p for p in out.stdout.decode().split("\0") if p})


def sync_base(base):
    """Copy the tree's files (as they are in the working tree) into base, rewriting only
    those whose content changed, so base's build stays incremental; delete those that are
    gone (the Makefiles build every file of some folders)."""
    files = [f for f in tracked_files() if os.path.isfile(os.path.join(ROOT, f))]
    keep = set(files)
    for dirpath, dirnames, filenames in os.walk(base):
        rel_dir = os.path.relpath(dirpath, base)
        if rel_dir == ".":
            dirnames[:] = [d for d in dirnames if d != "build"]
        for f in filenames:
            rel = os.path.normpath(os.path.join(rel_dir, f))
            if rel not in keep:
                os.remove(os.path.join(dirpath, f))
    for rel in files:
        src, dst = os.path.join(ROOT, rel), os.path.join(base, rel)
        with open(src, "rb") as f:
            data = f.read()
        if os.path.exists(dst):
            with open(dst, "rb") as f:
                if f.read() == data:
                    continue
            with open(dst, "wb") as f:  # changed: now newer than anything built from it
                f.write(data)
            continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)  # new: keeps its time, as the objects seeded from build/


def seed_base(base, kinds):
    """A new base starts from the objects already built in the working tree's build/ (the
    sources keep their times, so make rebuilds only what changed since); only what the
    chosen tests need, since every mutant copies it."""
    if os.path.exists(os.path.join(base, "build")):
        return
    os.makedirs(os.path.join(base, "build"))
    subs = [f"host/{HOST_BUILDS[k]}" for k in kinds if k in HOST_BUILDS]
    if "acpi" in kinds:
        subs.append("host/acpi_test")
    if kinds & {"kernel", "matrix"}:
        subs += ["arch", "boot", "kernel", "mm", "tests", "iso", "smpmm.elf", "smpmm.iso"]
    if "conflict" in kinds:     # the release kernel and the plugin (with QEMU's header)
        subs += ["release", "c2c/include", "c2c/c2c.so"]
    for sub in subs:
        src = os.path.join(os.path.dirname(os.path.abspath(base)), "..", sub)
        if os.path.exists(src):
            os.makedirs(os.path.dirname(os.path.join(base, "build", sub)), exist_ok=True)
            subprocess.run(["cp", "-a", src, os.path.join(base, "build", sub)], check=True)


def test_names():
    """(host case and suite names, kernel suite.case names) as declared in the test sources."""
    host, kernel = set(), set()
    with open(os.path.join(ROOT, "tests/host/host.mk")) as fh:
        shared = re.findall(r"tests/kernel/\w+\.c", fh.read())  # suites the host runs too
    for f in [os.path.join("tests/host", f) for f in os.listdir(os.path.join(ROOT, "tests/host"))
              if f.endswith(".c")] + shared:
        with open(os.path.join(ROOT, f)) as fh:
            text = fh.read()
        host.update(re.findall(r"KTEST_CASE\w*\((\w+)", text))
        host.update(re.findall(r"^KTEST_SUITE\((\w+),", text, re.M))
    for f in os.listdir(os.path.join(ROOT, "tests/kernel")):
        with open(os.path.join(ROOT, "tests/kernel", f)) as fh:
            text = fh.read()
        suite = re.search(r"^KTEST_SUITE\((\w+),", text, re.M)
        if suite:
            cases = re.findall(r"KTEST_CASE\w*\((\w+)", text)
            kernel.update(f"{suite.group(1)}.{c}" for c in cases)
    return host, kernel


def matrix_rows():
    """make test's QEMU matrix (tests/matrix.py's MATRIX), for checking matrix: specs."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import matrix
    return matrix.MATRIX


def stale_specs(mutations):
    """Test specs that match no test in the tree (renamed or deleted tests)."""
    host, kernel = test_names()
    stale = []
    for spec in dict.fromkeys(t for m in mutations for t in m["tests"]):
        kind, p = parse_spec(spec)
        if kind == "kernel":
            ok = any(fnmatch.fnmatch(k, g) for g in p["glob"].split(",") for k in kernel)
        elif kind == "matrix":
            ok = any(fnmatch.fnmatch(r[0], p["rows"]) for r in matrix_rows())
        elif kind == "acpi":
            ok = p["check"] in acpi_checks()
        elif kind == "c2c":
            ok = any(p["filter"] in c for c in c2c_cases())
        elif kind == "conflict":
            ok = all(conflict_case_known(c) for c in p["filter"].split(","))
        else:
            ok = any(p["filter"] in h for h in host)
        if not ok:
            stale.append(spec)
    return stale


def acpi_checks():
    """The checks of tests/host/acpi_test.c (what its main() runs with RUN())."""
    with open(os.path.join(ROOT, "tests/host/acpi_test.c")) as fh:
        return set(re.findall(r"^\s+RUN\((\w+)\);", fh.read(), re.M))


def c2c_cases():
    """The cases of the c2c model's test program (tests/c2c/test_model.c)."""
    with open(os.path.join(ROOT, "tests/c2c/test_model.c")) as fh:
        return set(re.findall(r"^\s+CASE\((\w+)\),", fh.read(), re.M))


def conflict_case_known(text):
    """Is text part of a case name of bench=c2c_conflict (tests/bench/bench_c2c_conflict.c):
    an opposite's name, or operations of its table joined as the generated names are?"""
    with open(os.path.join(ROOT, "tests/bench/bench_c2c_conflict.c")) as fh:
        src = fh.read()
    if re.search(r'cf_case\("[^"]*%s' % re.escape(text), src):
        return True
    table = re.search(r"cf_names\[CF_NR_OPS\] = \{(.*?)\};", src, re.S)
    ops = set(re.findall(r'"(\w+)"', table.group(1))) if table else set()
    parts = re.sub(r"_on_4_cpus$", "", text).split("_vs_")
    return bool(ops) and all(p in ops for p in parts)


def make_target(kind):
    if kind in ("kernel", "matrix"):
        return "iso"
    if kind == "acpi":
        return "build/host/acpi_test"
    if kind == "c2c":
        return "build/c2c/test_model"
    if kind == "conflict":
        return "release build/c2c/c2c.so"
    return f"build/host/{HOST_BUILDS[kind]}/mmtest"


def build(tree, kinds, log):
    """Build what the given test kinds need in tree; returns an error text or None."""
    targets = sorted({t for k in kinds for t in make_target(k).split()})
    res = subprocess.run(["make", "--no-print-directory", "-j2", "BUILD=build"] + targets,
                         cwd=tree, capture_output=True, text=True)
    log_to(log, f"$ make {' '.join(targets)}\n{res.stdout}{res.stderr}")
    if res.returncode:
        errs = [l for l in (res.stdout + res.stderr).splitlines() if "error" in l]
        return "does not build: " + (errs[0].strip() if errs else f"make exit {res.returncode}")
    return None


def apply_edits(tree, m):
    """Apply m's edits to its file in tree; returns an error text or None."""
    path = os.path.join(tree, m["file"])
    if not os.path.exists(path):
        return f"{m['file']} does not exist"
    with open(path) as f:
        text = f.read()
    for i, (old, new) in enumerate(m["edits"], 1):
        n = text.count(old)
        if n != 1:
            first = old.strip().splitlines()[0].strip() if old.strip() else "(empty)"
            where = "not found" if n == 0 else f"found {n} times"
            return f"edit {i}: original text {where} in {m['file']} (starts `{first}`)"
        text = text.replace(old, new)
    with open(path, "w") as f:
        f.write(text)
    return None


# ---- running one test ---------------------------------------------------------------------

def parse_spec(spec):
    kind, _, rest = spec.partition(":")
    if kind in HOST_BUILDS:
        return kind, {"filter": rest}
    if kind == "kernel":
        smp, _, glob = rest.partition(":")
        return kind, {"smp": int(smp), "glob": glob}
    if kind == "matrix":
        return kind, {"rows": rest}
    if kind == "acpi":
        return kind, {"check": rest}
    if kind in ("c2c", "conflict"):
        return kind, {"filter": rest}
    raise SystemExit(f"mutate: bad test spec {spec!r} (host:|asan:|tsan:|release:FILTER, kernel:N:GLOB, "
                     "matrix:ROWS, acpi:CHECK, c2c:FILTER, conflict:CASES)")


def run_host(tree, kind, filt, timeout, log):
    """Returns (failed, reason, ran)."""
    cmd = [f"build/host/{HOST_BUILDS[kind]}/mmtest", "-t", str(timeout)]
    if kind == "tsan":
        cmd.append("-c")
    cmd.append(filt)
    env = dict(os.environ, **SANITIZER_ENV)
    try:
        res = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, env=env,
                             timeout=timeout + 60, errors="replace")
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        log_to(log, f"$ {' '.join(cmd)}\n{out}\n(hung; stopped by mutate.py)\n")
        return False, "hung, and the harness did not report it: not a kill", True
    out = res.stdout + res.stderr
    log_to(log, f"$ {' '.join(cmd)}\n{out}\n(exit {res.returncode})\n")
    m = re.search(r"^(\d+) passed, (\d+) failed\s*$", res.stdout, re.M)
    ran = not m or int(m.group(1)) + int(m.group(2)) > 0
    if res.returncode == 0:
        return False, "", ran
    failed = re.findall(r"^\s*not ok (?:\d+ )?(\S+)(.*)$", res.stdout, re.M)  # KTAP: case first
    if "ThreadSanitizer:" in out:
        kind_ = re.search(r"WARNING: ThreadSanitizer: ([^(\n]+)", out)
        return True, "TSan: " + (kind_.group(1).strip() if kind_ else "report"), ran
    if "AddressSanitizer" in out or "runtime error:" in out:
        return True, "ASan/UBSan report", ran
    if failed:
        name, rest = failed[0]
        return True, f"not ok {name}{' #' + rest.split('#', 1)[1] if '#' in rest else ''}", ran
    if "PANIC" in out:
        msg = re.search(r"PANIC[^:]*: (.*)", out)
        msg = msg.group(1).strip() if msg else "?"
        return True, "panic: " + (msg if len(msg) < 90 else msg[:60] + " ... " + msg[-25:]), ran
    return True, f"test binary died (exit {res.returncode})", ran


def run_acpi(tree, check, timeout, log):
    """tests/host/acpi_test (ASan+UBSan) runs all its checks; the spec names the one that
    must fail (its function reports `file:line: CHECK: expected ...`), or the program must
    die of a sanitizer report. Returns (failed, reason, ran)."""
    cmd = ["build/host/acpi_test"]
    env = dict(os.environ, **SANITIZER_ENV)
    try:
        res = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, env=env,
                             timeout=timeout + 60, errors="replace")
    except subprocess.TimeoutExpired:
        log_to(log, f"$ {' '.join(cmd)}\n(hung; stopped by mutate.py)\n")
        return False, "hung: not a kill", True
    out = res.stdout + res.stderr
    log_to(log, f"$ {' '.join(cmd)}\n{out}\n(exit {res.returncode})\n")
    mine = [l for l in res.stderr.splitlines() if f": {check}: expected" in l]
    if mine:
        return True, mine[0].split(": ", 1)[1][:100], True
    if "AddressSanitizer" in out or "runtime error:" in out:
        return True, "ASan/UBSan report", True
    if res.returncode and not re.search(r": \w+: expected", res.stderr):
        return True, f"acpi_test died (exit {res.returncode})", True
    return False, "", True


def run_c2c(tree, filt, timeout, log):
    """The c2c model's cases (tests/c2c/test_model.c) whose names contain filt. Returns
    (failed, reason, ran)."""
    cmd = ["build/c2c/test_model", filt]
    try:
        res = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, timeout=timeout,
                             errors="replace")
    except subprocess.TimeoutExpired:
        log_to(log, f"$ {' '.join(cmd)}\n(hung; stopped by mutate.py)\n")
        return False, "hung: not a kill", True
    log_to(log, f"$ {' '.join(cmd)}\n{res.stdout}{res.stderr}\n(exit {res.returncode})\n")
    failed = re.findall(r"^not ok \d+ (\S+)", res.stdout, re.M)
    ran = bool(re.search(r"^(?:not )?ok \d+ ", res.stdout, re.M))
    if res.returncode:
        return True, f"FAILED {failed[0]}" if failed else f"test_model died (exit {res.returncode})", ran
    return False, "", ran


def run_conflict(tree, cases, timeout, log):
    """The conflict-freedom layer (tests/c2c/conflict.py) on the release kernel, only the
    cases whose names hold one of the comma-separated texts. Returns (failed, reason, ran)."""
    cmd = [sys.executable, "tests/c2c/conflict.py", "--plugin", "build/c2c/c2c.so",
           "--iso", "build/release/smpmm.lnx", "--out", "build/c2c/conflict", "--only", cases]
    res = run_qemu_tool(tree, cmd, timeout, log)
    if res is None:
        return False, "hung, and the layer did not report it: not a kill", True
    ran = bool(re.search(r"^(?:not )?ok \d+ conflict", res.stdout, re.M))
    if res.returncode == 0:
        return False, "", ran
    failed = re.findall(r"^not ok \d+ (\S+?):? ", res.stdout, re.M)
    return True, f"FAILED {failed[0]}" if failed else f"conflict.py exit {res.returncode}", ran


def run_qemu_tool(tree, cmd, timeout, log):
    """Run tests/runner.py or tests/matrix.py in tree, logged; None if mutate.py had to stop
    it (a hang their own timeouts did not report)."""
    try:
        res = subprocess.run(cmd, cwd=tree, capture_output=True, text=True,
                             timeout=timeout + 60, errors="replace")
    except subprocess.TimeoutExpired:
        log_to(log, f"$ {' '.join(cmd)}\n(hung; stopped by mutate.py)\n")
        return None
    log_to(log, f"$ {' '.join(cmd)}\n{res.stdout}{res.stderr}\n(exit {res.returncode})\n")
    return res


def run_kernel(tree, smp, glob, timeout, log):
    """Returns (failed, reason, ran)."""
    cmd = [sys.executable, "tests/runner.py", "--iso", "build/smpmm.iso", "--smp", str(smp),
           "--mem", "512M", "--timeout", str(timeout), "--cmdline", f"test={glob}",
           "--log", os.path.abspath(log) + ".serial", "--progress", "failures"]
    res = run_qemu_tool(tree, cmd, timeout, log)
    if res is None:
        return False, "hung, and the runner did not report it: not a kill", True
    m = re.search(r"^(\d+) passed, (\d+) failed, (\d+) skipped", res.stdout, re.M)
    ran = bool(m) and sum(int(g) for g in m.groups()) > 0
    if res.returncode == 0:
        return False, "", ran
    failed = re.findall(r"^FAILED (\S+)", res.stdout, re.M)
    errors = re.findall(r"^ERROR (.*)$", res.stdout, re.M)
    if failed:
        return True, f"FAILED {failed[0]}", ran
    return True, errors[0] if errors else f"runner exit {res.returncode}", ran


def run_matrix(tree, rows, timeout, log):
    """Rows of make test's QEMU matrix (tests/matrix.py, a glob over their names), one QEMU at
    a time; QEMU 10 for the rows that need it is the working tree's (make qemu10 there, once,
    if it is missing). Returns (failed, reason, ran)."""
    q10 = os.path.join(ROOT, "build", "qemu10", "qemu-system-x86_64")
    needs_q10 = any(r[7].get("qemu10") for r in matrix_rows() if fnmatch.fnmatch(r[0], rows))
    if needs_q10 and not os.access(q10, os.X_OK):
        subprocess.run(["make", "--no-print-directory", "qemu10"], cwd=ROOT)
    cmd = [sys.executable, "tests/matrix.py", "--no-host", "--iso", "build/smpmm.iso",
           "--build", "build", "--only", rows, "--jobs", "1", "--qemu10", q10,
           "--progress", "failures"]
    res = run_qemu_tool(tree, cmd, timeout, log)
    if res is None:
        return False, "hung, and the matrix did not report it: not a kill", True
    ran = bool(re.search(r"^  (PASS|FAIL) ", res.stdout, re.M))
    if res.returncode == 0:
        return False, "", ran
    failed = re.findall(r"^\[[^]]+\] FAILED (\S+)", res.stdout, re.M)
    row = re.search(r"^  FAIL (\S+)", res.stdout, re.M)
    where = f"row {row.group(1)}" if row else "matrix"
    return True, f"{where}: FAILED {failed[0]}" if failed else f"{where} failed", ran


def run_spec(tree, spec, args, log):
    kind, p = parse_spec(spec)
    if kind == "matrix":
        return run_matrix(tree, p["rows"], args.kernel_timeout, log)
    if kind == "kernel":
        return run_kernel(tree, p["smp"], p["glob"], args.kernel_timeout, log)
    if kind == "acpi":
        return run_acpi(tree, p["check"], args.host_timeout, log)
    if kind == "c2c":
        return run_c2c(tree, p["filter"], args.host_timeout, log)
    if kind == "conflict":
        return run_conflict(tree, p["filter"], args.kernel_timeout, log)
    return run_host(tree, kind, p["filter"], args.host_timeout, log)


# ---- the whole run ------------------------------------------------------------------------

class Baseline:
    """Whether each test passes on the unmutated copy, run once per test when first needed."""

    def __init__(self, base, args):
        self.base, self.args, self.known = base, args, {}

    def passes(self, spec):
        if self.args.no_baseline:
            return True
        if spec not in self.known:
            t0 = time.time()
            failed, reason, ran = run_spec(self.base, spec, self.args,
                                           os.path.join(self.args.build, "baseline.log"))
            ok = not failed and ran and not reason
            self.known[spec] = ok
            print(f"  unmutated copy, {spec}: "
                  f"{'passes' if ok else 'FAILS: ' + (reason or 'no test ran')}"
                  f" ({time.time() - t0:.1f} s)", flush=True)
        return self.known[spec]

    def unusable(self):
        return sorted(s for s, ok in self.known.items() if not ok)


def judge(m, base, workdir, baseline, args):
    """Plant m in a copy of base and run its tests. Returns (verdict, detail)."""
    tree = os.path.join(workdir, m["name"])
    log = os.path.join(workdir, m["name"] + ".log")
    shutil.rmtree(tree, ignore_errors=True)
    if os.path.exists(log):
        os.remove(log)
    subprocess.run(["cp", "-a", base, tree], check=True)
    err = apply_edits(tree, m)
    if err:
        return "ERROR", err
    stale = [t for t in m["tests"] if t in args.stale]
    if stale:
        return "ERROR", f"test {stale[0]} matches no test in the tree"
    built = set()
    notes = []
    # A mutation whose bug hangs its host test gives the watchdog it needs ("host_timeout",
    # well above the test's own time): the kill is the harness's TIMEOUT, without the
    # default 120 s wait.
    margs = argparse.Namespace(**dict(vars(args), host_timeout=m.get("host_timeout", args.host_timeout)))
    for spec in m["tests"]:
        if spec in baseline.known and not baseline.known[spec]:
            notes.append(f"{spec} skipped (fails on the unmutated tree)")
            continue
        kind, _ = parse_spec(spec)
        if kind not in built:
            err = build(tree, [kind], log)
            if err:
                return "ERROR", err
            built.add(kind)
        failed, reason, ran = run_spec(tree, spec, margs, log)
        if failed and not baseline.passes(spec):
            notes.append(f"{spec} skipped (fails on the unmutated tree)")
            continue
        if failed:
            kills = 1 + sum(run_spec(tree, spec, margs, log)[0] for _ in range(args.runs - 1))
            if not args.keep:
                shutil.rmtree(tree, ignore_errors=True)
            rate = f" {kills}/{args.runs}" if args.runs > 1 else ""
            if kills < args.runs:
                return "WEAK", f"by {spec} in only {kills} of {args.runs} runs ({reason})"
            return "KILLED", f"by {spec}{rate} ({reason})"
        if not ran:
            notes.append(f"{spec} ran no test")
        elif reason:
            notes.append(f"{spec}: {reason}")
    return "SURVIVED", "; ".join(notes) or f"{len(m['tests'])} tests passed (log {log})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "mutate"),
                    help="work directory (default build/mutate)")
    ap.add_argument("--only", action="append", default=[],
                    help="glob on mutation names (repeatable)")
    ap.add_argument("--keep", action="store_true", help="keep killed mutants' trees too")
    ap.add_argument("--runs", type=int, default=1,
                    help="run the killing test this many times in all: the mutant counts as "
                    "killed only if it fails every time (docs/testing.md asks 5 of 5); "
                    "otherwise it is WEAK")
    ap.add_argument("--no-baseline", action="store_true",
                    help="do not check killing tests on the unmutated tree")
    ap.add_argument("--host-timeout", type=int, default=120,
                    help="per-test watchdog of the host harness (s)")
    ap.add_argument("--kernel-timeout", type=int, default=240, help="QEMU timeout (s)")
    ap.add_argument("--smoke", action="store_true",
                    help="host: and c2c: tests only (the plain build), for make test; mutations with "
                    "none are left out, and a `N passed, N failed` line is added")
    ap.add_argument("--list", action="store_true", help="print the mutations and exit")
    ap.add_argument("--check", action="store_true",
                    help="only check the list against the tree (every original text found "
                    "once, every test named exists); no build, no run")
    args = ap.parse_args()

    chosen = [m for m in MUTATIONS
              if not args.only or any(fnmatch.fnmatch(m["name"], g) for g in args.only)]
    if args.smoke:
        smoke = ("host:", "c2c:")
        left_out = [m["name"] for m in chosen if not any(t.startswith(smoke) for t in m["tests"])]
        chosen = [dict(m, tests=[t for t in m["tests"] if t.startswith(smoke)])
                  for m in chosen if m["name"] not in left_out]
        if left_out:
            print(f"mutate: smoke run, host: and c2c: tests only; left out (neither): "
                  f"{', '.join(left_out)}")
    if args.list:
        for m in chosen:
            print(f"{m['name']} ({m['file']}): {m['says']}\n    tests: {', '.join(m['tests'])}")
        return 0
    if not chosen:
        print("mutate: no mutation matches", args.only)
        return 1
    stale = args.stale = stale_specs(chosen)
    for spec in stale:
        print(f"mutate: ERROR: test {spec} matches no test in the tree (renamed? deleted?)")
    if args.check:
        errors = 0
        for m in chosen:
            with open(os.path.join(ROOT, m["file"])) as f:
                text = f.read()
            for i, (old, _) in enumerate(m["edits"], 1):
                if text.count(old) != 1:
                    errors += 1
                    print(f"mutate: ERROR: {m['name']}: edit {i}: original text found "
                          f"{text.count(old)} times in {m['file']}")
        print(f"mutate: {len(chosen)} mutations checked, {errors + len(stale)} errors")
        return 1 if errors or stale else 0
    t_start = time.time()
    base = os.path.join(args.build, "base")
    os.makedirs(base, exist_ok=True)
    specs = list(dict.fromkeys(s for m in chosen for s in m["tests"]))
    kinds = {parse_spec(s)[0] for s in specs}
    seed_base(base, kinds)
    sync_base(base)
    print(f"mutate: {len(chosen)} mutations, {len(specs)} distinct tests; building the "
          f"unmutated copy in {base}", flush=True)
    err = build(base, kinds, os.path.join(args.build, "base.log"))
    if err:
        print(f"mutate: the unmutated tree {err} (log {args.build}/base.log)")
        return 1
    baseline = Baseline(base, args)

    counts = {"KILLED": 0, "WEAK": 0, "SURVIVED": 0, "ERROR": 0}
    results = []
    width = max(len(m["name"]) for m in chosen)
    for i, m in enumerate(chosen, 1):
        t0 = time.time()
        verdict, detail = judge(m, base, args.build, baseline, args)
        dt = time.time() - t0
        counts[verdict] += 1
        results.append((m, verdict, detail, dt))
        print(f"[{i:2}/{len(chosen)}] {m['name']:<{width}} {verdict:<8} {dt:6.1f} s  {detail}\n"
              f"        {m['says']}", flush=True)
    total = time.time() - t_start
    bad = baseline.unusable()
    with open(os.path.join(args.build, "results.txt"), "w") as f:
        f.write(f"# make mutate, {time.strftime('%Y-%m-%d %H:%M')}, {total:.0f} s\n")
        for m, verdict, detail, dt in results:
            f.write(f"{m['name']}\t{verdict}\t{dt:.1f}\t{detail}\n")
    print(f"mutate: {total:.0f} s in all; results in {args.build}/results.txt")
    if args.smoke:  # for make test's summary: a kill is a passed check
        failed = counts["SURVIVED"] + counts["WEAK"] + counts["ERROR"] + len(bad)
        print(f"{counts['KILLED']} passed, {failed} failed")
    line = f"{counts['KILLED']} killed, {counts['SURVIVED']} survived"
    if counts["WEAK"]:
        line += f", {counts['WEAK']} killed in fewer than {args.runs} of {args.runs} runs"
    if counts["ERROR"] or bad:
        line += f", {counts['ERROR']} errors"
        if bad:
            line += f" ({len(bad)} tests fail on the unmutated tree: {', '.join(bad)})"
    print(line)
    return 1 if counts["SURVIVED"] or counts["WEAK"] or counts["ERROR"] or bad else 0


if __name__ == "__main__":
    sys.exit(main())
