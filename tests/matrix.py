#!/usr/bin/env python3
"""`make test`: the host tests, then the kernel's KTAP tests on a table of QEMU configurations.

Make steps come first (STEPS: the kernel/lab boundary check, the docs' and comments'
references into the tree, the bare kernel's boot, host tests, the mutation smoke run, fuzz
smoke, the mm API generator's fixed seeds, the monitor script, gdb's unwinding, the tour and docs check, the benchmark smoke run,
the fast-path budget, the c2c plugin's cases; a missing target fails, with a note). Then every row of MATRIX boots once through tests/runner.py, two QEMUs at a time (this
is sized for a 2-core machine); the x2APIC rows need QEMU 10, which `make qemu10` fetches
first if it is not there. Everything is
summed into the last line, `N passed, N failed, N skipped`; the exit status is non-zero if
anything failed.
To add a configuration, add a row. Not a benchmark: the times printed are for orientation.
"""

import argparse
import concurrent.futures
import fnmatch
import os
import re
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402

# name, firmware, machine, CPUs, memory, timeout (s), kernel command line, options:
#   expect="panic": the run must end in exactly one PANIC report (exit 255), not pass tests;
#   expect_text=REGEX: with expect="panic", a line the report must contain;
#   expect_cpus=N: CPUs the boot tests expect online (default: the CPUs given);
#   numa=SPEC: NUMA nodes as tests/runner.py --numa takes them (CPUs and memory must add up
#   to the row's);
#   iso="release": the release kernel (DEBUG_VM=0, $(BUILD)/release/smpmm.iso: `make release`).
#   qemu10=True: boot it under QEMU 10 (`make qemu10`, fetched first if missing);
#   cpu=MODEL (QEMU -cpu) and qemu_args=[...] appended to QEMU's command line (any row).
# x2APIC under QEMU 10 (Debian's 7.2 has no TCG x2APIC): an AP whose x2APIC ID has another
# CPU's low byte, on a CPU model whose CPUID has no leaf 0xb, so that CPUID.1's 8-bit ID is all
# CPUID can tell it (docs/smp.md). The second -smp overrides the runner's with a topology: 3
# sockets of 128 cores, socket 2 core 1 being ID 257 (low byte 1, cpu1's); or 2 of 256, socket 1
# core 0 being ID 256 (low byte 0, the BSP's). The -device adds that CPU to the 2 of -smp.
X2APIC_257 = ["-smp", "2,maxcpus=384,sockets=3,cores=128,threads=1",
              "-device", "{model}-x86_64-cpu,socket-id=2,core-id=1,thread-id=0"]
X2APIC_256 = ["-smp", "2,maxcpus=512,sockets=2,cores=256,threads=1",
              "-device", "{model}-x86_64-cpu,socket-id=1,core-id=0,thread-id=0"]


def x2apic_row(name, model, topology):
    return (name, "bios", "q35", 2, "1G", 120, "test=boot.*",
            {"qemu10": True, "cpu": f"{model},+x2apic", "expect_cpus": 3,
             "qemu_args": [a.format(model=model) for a in topology]})


MATRIX = [
    ("bios-q35-smp1", "bios", "q35", 1, "2G", 300, "", {}),
    ("bios-q35-smp2", "bios", "q35", 2, "2G", 300, "", {}),
    ("bios-q35-smp40", "bios", "q35", 40, "2G", 480, "", {}),
    ("uefi-q35-smp40", "uefi", "q35", 40, "2G", 480, "", {}),
    ("bios-pc-smp4", "bios", "pc", 4, "2G", 300, "", {}),
    # Bad input: an AP that never answers is reported and skipped, the rest boots and passes.
    ("bios-q35-smp4-nosipi", "bios", "q35", 4, "2G", 300, "smp.test_no_sipi=2",
     {"expect_cpus": 3}),
    # ... and the last AP: nr_cpus - 1 is then offline, which no test may assume is not.
    ("bios-q35-smp4-nosipi-last", "bios", "q35", 4, "2G", 300,
     "smp.test_no_sipi=3 test=boot.*,smp.*", {"expect_cpus": 3}),
    # The timer's first window (opened before mm_init()) made to wrap, as a long mm_init()
    # would with a narrow reference counter: it must be caught (else the kernel panics) and
    # the fresh calibration must give ticks at the right rate (smp.timer_*).
    ("timer-wrap-smp2", "bios", "q35", 2, "2G", 300,
     "timer.test_wrap=22 test=boot.*,smp.timer*", {}),
    # Crash self-tests (tests/lab/panic_test.c): one report from many CPUs, and no hang.
    ("panic-all-smp40", "bios", "q35", 40, "2G", 120, "panic.test=all", {"expect": "panic"}),
    ("panic-fault-smp8", "bios", "q35", 8, "2G", 120, "panic.test=fault", {"expect": "panic"}),
    ("panic-remote-smp4", "bios", "q35", 4, "2G", 120, "panic.test=remote",
     {"expect": "panic"}),
    ("panic-nohang-smp4", "bios", "q35", 4, "2G", 120, "panic.test=nohang",
     {"expect": "panic"}),
    # An AP's stack overflow hits its guard page and is named as such.
    ("panic-overflow-smp4", "bios", "q35", 4, "2G", 120, "panic.test=overflow",
     {"expect": "panic", "expect_text": r"stack overflow on CPU \d+"}),
    # An AP panics during bring-up, before it is online (the kernel's cpu_starting_hook()).
    ("panic-starting-smp4", "bios", "q35", 4, "2G", 120, "panic.test=starting",
     {"expect": "panic", "expect_text": r"cpu3 panics as it starts"}),
    # Odd configurations: odd CPU counts, tiny memory (watermarks, exhaustion and
    # drain-and-retry under pressure), memory above 4 GiB (three zones), OVMF on -M pc.
    ("bios-q35-smp3", "bios", "q35", 3, "2G", 300, "", {}),
    ("bios-q35-smp37", "bios", "q35", 37, "2G", 480, "test=boot.*,smp.*,mm_pcp*,gup*", {}),
    ("bios-q35-smp4-64M", "bios", "q35", 4, "64M", 300, "test=boot.*,mm_*,gup*", {}),
    ("bios-q35-smp4-6G", "bios", "q35", 4, "6G", 300, "test=boot.*,mm_*,gup*,protect.*", {}),
    # ... and with the whole memory map built before SMP bring-up (no deferred init).
    ("uefi-pc-smp2", "uefi", "pc", 2, "1G", 300,
     "mm.deferred=0 test=boot.*,smp.*,mm_buddy.*,mm_private.*,mm_deferred.*", {}),
    ("bios-q35-smp4-128M", "bios", "q35", 4, "128M", 300, "test=mm_*,gup*", {}),
    # The memory suites booted in each PCP locking model and with the lists off (mm_pcp also
    # switches models itself; this covers everything else running on top of each).
    ("pcp-irqoff-smp8", "bios", "q35", 8, "2G", 300, "pcp.lock=irqoff test=mm_*,gup*", {}),
    ("pcp-irqsave-smp8", "bios", "q35", 8, "2G", 300, "pcp.lock=irqsave test=mm_*,gup*", {}),
    ("pcp-off-smp8", "bios", "q35", 8, "2G", 300, "pcp.enable=0 test=mm_*,gup*", {}),
    # The configuration users run: the release kernel (no page-state checks, the lock word
    # alone on the per-CPU lists) with poisoning off, so every free takes the path release
    # kernels take (issue 22 item 7: two bugs there lived because no test booted it).
    ("release-nopoison-smp4", "bios", "q35", 4, "2G", 300, "mm.poison=0 test=mm_*,gup*",
     {"iso": "release"}),
    # Every suite with 10% of page allocations failed on purpose (fail_page_alloc, a new
    # seed each run, printed): each case either copes and loses nothing, or says why it runs
    # with injection paused (KTEST_CASE_NOFAIL). The summary line counts the failures.
    ("fail-page-alloc-smp4", "bios", "q35", 4, "2G", 300, "fail_page_alloc=1,10,0,-1", {}),
    # NUMA (docs/numa.md): nodes from QEMU's SRAT and SLIT. Two sockets of 20 CPUs; four
    # nodes with uneven distances (each node's fallback order differs); a node of CPUs
    # without memory; a node of memory without CPUs; 6 GiB so that Normal spans both nodes
    # (and a hot-pluggable range in the SRAT).
    ("numa2-smp40", "bios", "q35", 40, "2G", 480,
     "test=boot.*,mm_numa.*,mm_pcp_private.pcp_stress*", {"numa": "2"}),
    ("numa4-uneven-smp8", "bios", "q35", 8, "2048M", 300,
     "test=boot.*,mm_numa.*,mm_buddy.mm_exhaustion*",
     {"numa": "2/512M,2/512M,2/512M,2/512M;dist=10,12,20,30,12,10,14,24,20,14,10,16,30,24,"
              "16,10"}),
    ("numa-memoryless-smp4", "bios", "q35", 4, "2048M", 300, "test=boot.*,mm_numa.*,mm_pcp*,gup*",
     {"numa": "2/2G,2/0"}),
    ("numa-cpuless-smp4", "bios", "q35", 4, "2048M", 300, "test=boot.*,mm_numa.*,mm_pcp*",
     {"numa": "4/1G,0/1G"}),
    ("numa2-6G-smp4", "bios", "q35", 4, "6G,slots=2,maxmem=8G", 300,
     "test=boot.*,mm_numa.*,mm_buddy.mm_boot*,mm_buddy.mm_gfp*,gup*", {"numa": "2/3G,2/3G"}),
    # Firmware tables that are well formed but wrong, added with -acpitable (tests/fw/
    # make_tables.py; QEMU makes no SRAT without -numa, and no HPET table with hpet=off):
    # an SRAT listing node 0's range twice, so that 1 GiB of the 2 lies in no node (ignored:
    # one node, all the RAM, boot.boot_memory_map_ram_all_in_nodes), an HPET table pointing
    # into RAM (refused: the PM timer calibrates); smp.maxcpus above MAX_CPUS changes nothing.
    ("fw-bad-tables-smp2", "bios", "q35", 2, "2G", 300, "test=boot.* smp.maxcpus=4096",
     {"qemu_args": ["-machine", "hpet=off",
                    "-acpitable", "sig=SRAT,rev=3,data=tests/fw/srat-range-listed-twice.bin",
                    "-acpitable", "sig=HPET,rev=1,data=tests/fw/hpet-in-ram.bin"]}),
    # x2APIC IDs whose low byte collides (above), under QEMU 10. phenom is AMD (CPUID up to
    # leaf 5); core2duo is Intel (up to leaf 0xa), so the IA32_MISC_ENABLE check runs too.
    x2apic_row("x2apic-phenom-id257", "phenom", X2APIC_257),
    x2apic_row("x2apic-core2duo-id257", "core2duo", X2APIC_257),
    x2apic_row("x2apic-phenom-id256", "phenom", X2APIC_256),
]

SUMMARY_RE = re.compile(r"^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?\s*$")


class Out:
    """Whole lines to stdout from several threads."""

    def __init__(self):
        self.lock = threading.Lock()

    def write(self, s):
        with self.lock:
            sys.stdout.write(s)

    def flush(self):
        with self.lock:
            sys.stdout.flush()


def make_step(make, target):
    """Run `make TARGET` (one of STEPS) and read its `N passed, N failed` line; returns
    (passed, failed, skipped, note). A target that does not exist fails (a broken Makefile
    must not turn a step into a silent skip); one with no summary line counts as one test."""
    probe = subprocess.run(make.split() + ["-n", target], capture_output=True, text=True)
    if probe.returncode != 0:
        return 0, 1, 0, f"{target}: FAILED: no such make target ({probe.stderr.strip()[-120:]})"
    print(f"== make {target}", flush=True)
    start = time.monotonic()
    proc = subprocess.run(make.split() + ["--no-print-directory", target],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sys.stdout.write(proc.stdout)
    took = time.monotonic() - start
    for line in reversed(proc.stdout.splitlines()):
        m = SUMMARY_RE.match(line.strip())
        if m:
            passed, failed, skipped = int(m[1]), int(m[2]), int(m[3] or 0)
            if proc.returncode != 0 and failed == 0:
                failed = 1     # the make target failed after its summary line
            return passed, failed, skipped, f"{target}: exit {proc.returncode} in {took:.0f}s"
    ok = proc.returncode == 0
    return int(ok), int(not ok), 0, f"{target}: exit {proc.returncode} in {took:.0f}s " \
        "(no 'N passed, N failed' line: counted as one test)"


# Steps run by `make test` before the QEMU matrix, in order.
STEPS = ["check-boundary", "ref-check", "bare-test", "host-test", "mutate-smoke", "fuzz-smoke",
         "gen-smoke", "shell-test", "gdb-check", "tour-check", "bench-smoke", "fastpath-check", "c2c-test"]


def runner_self_test():
    """tests/runner_test.py (the KTAP parser and verdicts on canned logs), in this process:
    a runner that misreads KTAP would make every row below meaningless."""
    import io
    import unittest
    import runner_test
    suite = unittest.defaultTestLoader.loadTestsFromModule(runner_test)
    stream = io.StringIO()
    result = unittest.TextTestRunner(stream=stream, verbosity=0).run(suite)
    bad = len(result.failures) + len(result.errors)
    if bad:
        sys.stdout.write(stream.getvalue())
    return result.testsRun - bad - len(result.skipped), bad, len(result.skipped)


def get_qemu10(opts):
    """`make qemu10` (tests/qemu10.sh: QEMU 10 from bookworm-backports into a private root;
    nothing to do if it is there). True if opts.qemu10 then runs."""
    if not os.access(opts.qemu10, os.X_OK):
        print(f"== make qemu10 (for the rows that need QEMU 10)", flush=True)
        subprocess.run(opts.make.split() + ["--no-print-directory", "qemu10"])
    return os.access(opts.qemu10, os.X_OK)


def run_row(row, opts, out):
    name, firmware, machine, smp, mem, timeout, cmdline, extra = row
    iso = os.path.join(opts.build, "release", "smpmm.iso") if extra.get("iso") == "release" \
        else opts.iso
    argv = ["--iso", iso, "--name", name, "--firmware", firmware, "--machine", machine,
            "--expect", extra.get("expect", "pass"),
            *(["--expect-text", extra["expect_text"]] if "expect_text" in extra else []),
            "--expect-cpus", str(extra.get("expect_cpus", smp)),
            *(["--numa", extra["numa"]] if "numa" in extra else []),
            "--smp", str(smp), "--mem", mem, "--timeout", str(timeout * opts.timeout_scale),
            "--accel", opts.accel, "--cmdline", " ".join(w for w in (cmdline, opts.cmdline) if w),
            *(["--qemu", opts.qemu10] if extra.get("qemu10") else []),
            *(["--cpu", extra["cpu"]] if "cpu" in extra else []),
            *[f"--qemu-arg={a}" for a in extra.get("qemu_args", [])],
            "--log", os.path.join(opts.build, "runs", name + ".log"),
            "--progress", opts.progress]
    args = runner.parse_args(argv)
    args.prefix = f"[{name}] "
    passed, failed, skipped, problems, run = runner.run_one(args, out)
    return row, passed, failed, skipped, run


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iso", default="build/smpmm.iso")
    ap.add_argument("--build", default="build")
    ap.add_argument("--make", default="make")
    ap.add_argument("--jobs", type=int, default=2, help="QEMUs at a time (default 2)")
    ap.add_argument("--only", default="*", help="glob over configuration names")
    ap.add_argument("--no-host", action="store_true",
                    help="skip the make steps (STEPS: boundary, bare boot, host tests, fuzz, "
                    "monitor, gdb, tour and docs, bench smoke, fast path)")
    ap.add_argument("--accel", default="tcg")
    ap.add_argument("--cmdline", default="", help="appended to every row's command line")
    ap.add_argument("--timeout-scale", type=float, default=1.0)
    ap.add_argument("--qemu10", default=None,
                    help="QEMU 10 for the rows that need it (default BUILD/qemu10/"
                    "qemu-system-x86_64, made by `make qemu10` if missing)")
    ap.add_argument("--progress", default="lines", choices=["lines", "cases", "failures", "none"])
    opts = ap.parse_args()
    opts.qemu10 = opts.qemu10 or os.path.join(opts.build, "qemu10", "qemu-system-x86_64")

    start = time.monotonic()
    notes = []
    sp, sf, ss = runner_self_test()
    totals = [sp, sf, ss]
    notes.append(f"runner self-test (tests/runner_test.py): {sp} passed, {sf} failed, "
                 f"{ss} skipped")
    print(f"== {notes[-1]}", flush=True)
    for target in [] if opts.no_host else STEPS:
        hp, hf, hs, note = make_step(opts.make, target)
        totals = [totals[0] + hp, totals[1] + hf, totals[2] + hs]
        notes.append(f"{note}: {hp} passed, {hf} failed, {hs} skipped")
        print(f"== {notes[-1]}", flush=True)

    rows = [r for r in MATRIX if fnmatch.fnmatch(r[0], opts.only)]
    if any(r[7].get("iso") == "release" for r in rows):    # fastpath-check built it, unless
        subprocess.run(opts.make.split() + ["--no-print-directory", "release"],   # --no-host
                       stdout=subprocess.DEVNULL, check=False)
    if any(r[7].get("qemu10") for r in rows) and not get_qemu10(opts):
        notes.append(f"no QEMU 10 at {opts.qemu10} (make qemu10 failed): its rows count as "
                     "failed")
        print(f"== {notes[-1]}", flush=True)
        totals[1] += sum(1 for r in rows if r[7].get("qemu10"))
        rows = [r for r in rows if not r[7].get("qemu10")]
    # Slow rows first (OVMF start-up, 40 CPUs running every suite, the 20 s call timeout in
    # panic.test=nohang), so the two lanes even out.
    rows.sort(key=lambda r: -(10 * (r[1] == "uefi") + 20 * ("nohang" in r[6]) +
                              15 * (r[3] >= 40 and r[7].get("expect") != "panic")))
    print(f"== QEMU matrix: {len(rows)} configurations, {opts.jobs} at a time", flush=True)
    out = Out()
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        futures = [pool.submit(run_row, r, opts, out) for r in rows]
        for f in futures:
            results.append(f.result())

    print("== summary", flush=True)
    for note in notes:
        print(f"  {note}")
    for row, passed, failed, skipped, run in results:
        first = f"{run.first_test_at:5.1f}s" if run.first_test_at is not None else "    -"
        verdict = "PASS" if failed == 0 else "FAIL"
        print(f"  {verdict} {row[0]:<22} {passed:4d} passed {failed:3d} failed {skipped:3d} "
              f"skipped   first test {first}  total {run.elapsed:5.1f}s")
        totals = [totals[0] + passed, totals[1] + failed, totals[2] + skipped]
    print(f"  wall time {time.monotonic() - start:.0f}s")
    print(f"{totals[0]} passed, {totals[1]} failed, {totals[2]} skipped")
    return 1 if totals[1] else 0


if __name__ == "__main__":
    sys.exit(main())
