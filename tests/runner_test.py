#!/usr/bin/env python3
"""Tests of tests/runner.py's KTAP parser and verdicts on canned serial logs (no QEMU).

Each test feeds a log shaped like what tests/ktest/ktest.c prints, including the ways a run goes
wrong (a failed case, a skip, output cut off by a hang or a panic, kernel noise between KTAP
lines), and checks what the runner would conclude. `python3 tests/runner_test.py`.
"""

import os
import sys
import tempfile
import io
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402

GOOD = """\
smpmm: an SMP memory-management teaching kernel
KTAP version 1
# ktest: seed=5 filter="*" (repeat with seed=5)
1..2
  KTAP version 1
  # Subtest: boot
  1..2
  ok 1 boot_cpus_online_equals_smp
cpu3: a line from another CPU in the middle
  ok 2 boot_apic_ids_unique # SKIP needs 2 CPUs
  # boot: 1 passed, 0 failed, 1 skipped in 25 ms
ok 1 boot
  KTAP version 1
  # Subtest: ktest
  1..1
    # nested case x: start (its failures are checked, not counted)
      # x: EXPECTATION FAILED at tests/kernel/ktest_self.c:56
    # nested case x: fail
  ok 1 ktest_expect_failure_recorded
  # ktest: 1 passed, 0 failed, 0 skipped in 3 ms
ok 2 ktest
# ktest: 2 passed, 0 failed, 1 skipped
EXIT: STATUS=33
"""


def parse(text):
    p = runner.KtapParser()
    for line in text.splitlines():
        p.feed(line)
    p.finish()
    return p


class KtapParserTest(unittest.TestCase):
    # A clean run: counts per leaf case; noise, nested diagnostics and SKIP understood.
    def test_parse_good_run(self):
        p = parse(GOOD)
        self.assertEqual(p.errors, [])
        self.assertEqual(p.counts(), (2, 0, 1, 0))
        self.assertEqual(p.failed_cases(), [])

    # A failed case is counted and keeps its diagnostics for the report.
    def test_parse_failed_case_keeps_log(self):
        text = GOOD.replace("  ok 1 boot_cpus_online_equals_smp",
                            "    # boot_cpus_online_equals_smp: EXPECTATION FAILED at a.c:1\n"
                            "    # Expected 39 == 40\n"
                            "  not ok 1 boot_cpus_online_equals_smp").replace(
                            "\nok 1 boot\n", "\nnot ok 1 boot\n")
        p = parse(text)
        self.assertEqual(p.counts(), (1, 1, 1, 0))
        (name, node), = p.failed_cases()
        self.assertEqual(name, "boot.boot_cpus_online_equals_smp")
        self.assertIn("    # Expected 39 == 40".strip(), node.log)

    # Output cut off inside a suite (hang, panic): missing results and open suites reported.
    def test_parse_cut_off_counts_missing(self):
        text = GOOD.split("ok 1 boot\n")[0].replace("  ok 2 boot_apic_ids_unique # SKIP "
                                                   "needs 2 CPUs\n", "")
        p = parse(text)
        self.assertEqual(p.counts(), (1, 0, 0, 2))     # 1 case of boot, 1 suite missing
        self.assertTrue(any("no result line" in e for e in p.errors))
        self.assertEqual(p.where(), "")

    # where() names the suite and case that was running when output stopped.
    def test_where_names_running_case(self):
        p = runner.KtapParser()
        for line in GOOD.split("cpu3:")[0].splitlines():
            p.feed(line)
        self.assertEqual(p.where(), ", in suite boot, case 2 of 2")

    # A log without KTAP is an error, not an empty success.
    def test_parse_no_ktap(self):
        p = parse("GRUB loading\nPANIC: cpu0: early\n")
        self.assertEqual(p.counts(), (0, 0, 0, 0))
        self.assertTrue(p.errors)

    # Result numbers out of order are a structural error.
    def test_parse_out_of_order(self):
        p = parse(GOOD.replace("  ok 2 boot_apic", "  ok 3 boot_apic"))
        self.assertTrue(any("out of order" in e for e in p.errors))


class FakeRun:
    """Just enough of runner.Run for verdict(), panic_verdict() and bare_verdict()."""

    def __init__(self, text, status, timed_out=False):
        self.args = runner.parse_args(["--timeout", "60"])
        self.lines = text.splitlines()
        self.parser = runner.KtapParser()
        for line in self.lines:
            self.parser.feed(line)
        self.where = self.parser.where()
        self.parser.finish()
        self.status = status
        self.timed_out = timed_out
        self.loads = []
        self.crash = next((ln for ln in self.lines if runner.CRASH_RE.match(ln)), None)
        self.exit_line = next((int(m.group(1)) for m in map(runner.EXIT_LINE_RE.match,
                                                             self.lines) if m), None)
        self.bare_done = next((ln for ln in self.lines if runner.BARE_DONE_RE.match(ln)), None)


class VerdictTest(unittest.TestCase):
    # Exit 33 with a clean KTAP: no problem.
    def test_verdict_pass(self):
        self.assertEqual(runner.verdict(FakeRun(GOOD, 33)), [])

    # A panic in the log is a problem even if QEMU's status looked fine.
    def test_verdict_panic_line(self):
        run = FakeRun(GOOD.replace("EXIT: STATUS=33", "PANIC: cpu1: boom\nEXIT: STATUS=255"),
                      255)
        self.assertTrue(any(p.startswith("crash") for p in runner.verdict(run)))

    # Exit 33 while the KTAP has a failure: the two disagree, which is reported.
    def test_verdict_status_disagrees(self):
        run = FakeRun(GOOD.replace("  ok 1 boot_cpus", "  not ok 1 boot_cpus"), 33)
        self.assertTrue(any("said pass" in p for p in runner.verdict(run)))

    # A timeout is reported with where the output stopped.
    def test_verdict_timeout(self):
        run = FakeRun(GOOD.split("ok 1 boot\n")[0], -9, timed_out=True)
        problems = runner.verdict(run)
        self.assertIn("timeout after 60s, in suite boot, after its last case", problems)

    # --expect panic: exactly one report and exit 255 pass; two reports do not.
    def test_panic_verdict(self):
        one = "PANIC: cpu3: on purpose\nEXIT: STATUS=255\n"
        self.assertEqual(runner.panic_verdict(FakeRun(one, 255)), [])
        two = "PANIC: cpu3: x\nPANIC: cpu4: y\nEXIT: STATUS=255\n"
        self.assertTrue(runner.panic_verdict(FakeRun(two, 255)))
        self.assertTrue(runner.panic_verdict(FakeRun(one, -9, timed_out=True)))

    # An unexpected lockdep report fails a run whose tests all passed, and its lines are
    # what report() repeats; one captured by a test's expect scope ("# " lines) does not.
    def test_verdict_lockdep_report(self):
        report = ("====\nWARNING: lockdep: possible recursive locking of 'x'\n----\n"
                  "backtrace of cpu0:\n"
                  "lockdep: turning off the locking correctness validator\n====\n")
        run = FakeRun(GOOD.replace("EXIT: STATUS=33", report + "EXIT: STATUS=33"), 33)
        self.assertIn("lockdep: possible recursive locking of 'x' (report below)",
                      runner.verdict(run))
        lines = runner.lockdep_report(run)
        self.assertEqual(lines[0], "WARNING: lockdep: possible recursive locking of 'x'")
        self.assertEqual(lines[-1], "lockdep: turning off the locking correctness validator")
        captured = "    # WARNING: lockdep: possible recursive locking of 'x'\n"
        run = FakeRun(GOOD.replace("EXIT: STATUS=33", captured + "EXIT: STATUS=33"), 33)
        self.assertEqual(runner.verdict(run), [])

    # --expect bare: the bare kernel's last line with every CPU passes (QEMU is stopped
    # there, status -9); fewer CPUs than expected, no such line, or a crash do not.
    def test_bare_verdict(self):
        smp = "smp: 4 of 4 CPUs online, 900 ms from kernel entry\n"
        done = "smpmm: all CPUs online (4); no lab built in, idling\n"
        run = FakeRun(smp + done, -9)
        run.args.expect_cpus = 4
        self.assertEqual(runner.bare_verdict(run), [])
        run.args.expect_cpus = 5
        self.assertIn("4 CPUs online, expected 5", runner.bare_verdict(run))
        short = FakeRun("smpmm: 3 of 4 CPUs online; no lab built in, idling\n", -9)
        short.args.expect_cpus = -1
        self.assertTrue(any("not every CPU" in p for p in runner.bare_verdict(short)))
        hung = FakeRun(smp, -9, timed_out=True)
        self.assertTrue(any("no 'smpmm: all CPUs online'" in p for p in runner.bare_verdict(hung)))
        crashed = FakeRun("PANIC: cpu0: boom\n" + done, -9)
        self.assertTrue(any(p.startswith("crash") for p in runner.bare_verdict(crashed)))


class ClockTest(unittest.TestCase):
    # The kernel's clock agreeing with the wall clock gives no warning; 2.4x fast does.
    def test_clock_warning(self):
        run = FakeRun(GOOD, 33)
        run.clock = [(1.0, 1000, 2600000), (21.0, 21500, 2600000)]
        self.assertIsNone(runner.clock_warning(run))
        run.clock = [(1.0, 1000, 1083448), (21.0, 49000, 1083448)]
        self.assertIn("2.40x", runner.clock_warning(run))

    # One clock point (a run cut short) is measured from the kernel's first line: the same
    # clock 2x fast warns, right does not; no first line or under 1 s: no verdict.
    def test_clock_warning_one_point(self):
        run = FakeRun(GOOD, 33)
        run.entry_at, run.clock = 2.0, [(4.0, 2100, 2445406)]
        self.assertIsNone(runner.clock_warning(run))
        run.clock = [(4.0, 4000, 1222703)]
        self.assertIn("2.00x", runner.clock_warning(run))
        run.clock = [(4.0, 900, 5000000)]
        self.assertIn("0.45x", runner.clock_warning(run))
        run.entry_at = None
        self.assertIsNone(runner.clock_warning(run))
        run.entry_at, run.clock = 3.5, [(4.0, 4000, 1222703)]
        self.assertIsNone(runner.clock_warning(run))
        run.entry_at, run.clock = 2.0, [(4.0, 4000, 1222703)]
        run.args.qemu_arg = ["-icount", "shift=0"]
        self.assertIsNone(runner.clock_warning(run))

    # The runner's patterns match what the kernel prints (kernel/main.c, kernel/ktest.c).
    def test_clock_lines_match_kernel(self):
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
        with open(os.path.join(root, "kernel", "main.c")) as f:
            self.assertIn('"\\nsmpmm: an SMP memory-management teaching kernel\\n"', f.read())
        timeout = ("    # x: TIMEOUT: still running after 150 s (ktest.timeout=), seen by cpu3; "
                   "58812 ms since kernel entry (TSC 957000 kHz, against the PIT)")
        self.assertEqual(runner.CLOCK_RE.search(timeout).groups(), ("58812", "957000"))
        self.assertTrue(runner.KERNEL_ENTRY_RE.match(
            "smpmm: an SMP memory-management teaching kernel"))

# A stand-in for Linux's kunit.py with its two habits that matter here: it changes to the
# Linux tree's root (the path before tools/testing/kunit) before it opens the log, and it
# ends with a "Testing complete" line. It counts "ok"/"not ok" case lines of the log.
FAKE_KUNIT = """\
import os, re, sys
os.chdir(os.path.realpath(__file__).split("tools/testing/kunit")[0])
text = open(sys.argv[2]).read()
if "CRASH-THE-PARSER" in text:
    raise ValueError("LineStream: going past EOF")
ok = len(re.findall(r"^  ok ", text, re.M))
bad = len(re.findall(r"^  not ok ", text, re.M))
print("[10:00:00] Testing complete. Ran %d tests: passed: %d" % (ok + bad, ok) +
      (", failed: %d" % bad if bad else ""))
sys.exit(1 if bad else 0)
"""


class KunitTest(unittest.TestCase):
    """--kunit: the cross-check with Linux's kunit.py, without needing kunit.py itself."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="runner-test-")
        self.linux = os.path.join(self.tmp.name, "linux")
        kdir = os.path.join(self.linux, "tools", "testing", "kunit")
        os.makedirs(kdir)
        self.kunit = os.path.join(kdir, "kunit.py")
        with open(self.kunit, "w") as f:
            f.write(FAKE_KUNIT)
        self.work = os.path.join(self.tmp.name, "smpmm")
        os.makedirs(os.path.join(self.work, "build"))
        self.cwd = os.getcwd()
        os.chdir(self.work)

    def tearDown(self):
        os.chdir(self.cwd)
        self.tmp.cleanup()

    def write_log(self, text):
        with open("build/run.log", "w") as f:
            f.write(text)
        return "build/run.log"          # relative, as `make run` passes it

    # A relative log path reaches kunit.py as an absolute one (kunit.py changes directory
    # first, so the relative path would be FileNotFoundError), and the counts agree.
    def test_kunit_log_path_made_absolute(self):
        rc, counts, stderr = runner.kunit_crosscheck(self.kunit, self.write_log(GOOD))
        self.assertEqual((rc, stderr), (0, []))
        self.assertEqual(counts, (3, 0, 0))     # the stand-in counts "  ok" lines

    # kunit.py's own failure is shown: its stderr's last lines come back to be printed.
    def test_kunit_stderr_returned(self):
        rc, counts, stderr = runner.kunit_crosscheck(
            self.kunit, self.write_log(GOOD + "CRASH-THE-PARSER\n"))
        self.assertNotEqual(rc, 0)
        self.assertIsNone(counts)
        self.assertIn("ValueError: LineStream: going past EOF", stderr[-1])

    # A path that does not exist, or a kunit.py outside tools/testing/kunit (where the real
    # one exits 1 without a word), is named before any boot.
    def test_kunit_bad_path_named(self):
        self.assertIn("does not exist", runner.kunit_problem("/no/such/kunit.py"))
        flat = os.path.join(self.tmp.name, "kunit.py")
        with open(flat, "w") as f:
            f.write(FAKE_KUNIT)
        self.assertIn("not under a tools/testing/kunit", runner.kunit_problem(flat))
        self.assertIsNone(runner.kunit_problem(self.kunit))
        args = runner.parse_args(["--kunit", "/no/such/kunit.py", "--iso", __file__])
        with self.assertRaises(SystemExit) as e:
            runner.run_one(args)
        self.assertIn("/no/such/kunit.py does not exist", str(e.exception))

    # KUNIT_PY in the environment is the default of --kunit; empty means off.
    def test_kunit_env_default(self):
        old = os.environ.get("KUNIT_PY")
        try:
            os.environ["KUNIT_PY"] = self.kunit
            self.assertEqual(runner.parse_args([]).kunit, self.kunit)
            os.environ["KUNIT_PY"] = ""
            self.assertIsNone(runner.parse_args([]).kunit)
        finally:
            if old is None:
                os.environ.pop("KUNIT_PY", None)
            else:
                os.environ["KUNIT_PY"] = old

    # kunit.py's summary line, colours and all; zero counts are left out of it.
    def test_kunit_counts_line(self):
        line = "[10:35:47] \x1b[1;31mTesting complete. Ran 12 tests: passed: 10, failed: 1, " \
               "crashed: 1\x1b[0;0m"
        self.assertEqual(runner.kunit_counts("x\n" + line + "\n"), (10, 2, 0))
        self.assertEqual(runner.kunit_counts("Testing complete. Ran 3 tests: passed: 2, "
                                             "skipped: 1"), (2, 0, 1))
        self.assertIsNone(runner.kunit_counts("Traceback ...\n"))


class CmdlineLengthTest(unittest.TestCase):
    # A command line the kernel could not keep whole is refused before booting, with the
    # limit named; one that fits goes through. (The kernel's own cut-and-say is tested by
    # cmdline.cmdline_cut_to_words_drops_cut_word.)
    def test_long_cmdline_refused(self):
        limit = runner.kernel_cmdline_max()
        self.assertGreaterEqual(limit, 2047)
        base = len(runner.kernel_cmdline(runner.parse_args(["--cmdline", ""])))
        fits = runner.parse_args(["--cmdline", "x" * (limit - base - 1), "--iso", __file__])
        self.assertIsNone(runner.cmdline_problem(fits))
        args = runner.parse_args(["--cmdline", "x" * 3000 + " " + "y" * 2000 + " test=boot.*",
                                  "--iso", __file__])
        with self.assertRaises(SystemExit) as e:
            runner.run_one(args)
        self.assertIn(f"keeps at most {limit}", str(e.exception))


class BootMediaTest(unittest.TestCase):
    # An ISO boots from the CD; a RAM-boot image (make lnx) with -kernel and no drive, so that
    # -icount runs read no disk; UEFI cannot boot it, and the runner says so.
    def test_boot_media_iso_or_ram_image(self):
        iso = runner.parse_args(["--iso", "build/smpmm.iso"])
        self.assertEqual(runner.boot_media(iso), ["-cdrom", "build/smpmm.iso", "-boot", "d"])
        lnx = runner.parse_args(["--iso", "build/release/smpmm.lnx"])
        self.assertEqual(runner.boot_media(lnx), ["-kernel", "build/release/smpmm.lnx"])
        self.assertEqual(lnx.elf, os.path.join("build/release", "smpmm.elf"))
        uefi = runner.parse_args(["--iso", "build/smpmm.lnx", "--firmware", "uefi"])
        with self.assertRaises(SystemExit) as e:
            runner.boot_media(uefi)
        self.assertIn("--firmware bios", str(e.exception))


class MessagesTest(unittest.TestCase):
    # A filter that selects nothing is named, with the kernel's suggestion.
    def test_no_test_selected(self):
        run = FakeRun('KTAP version 1\n1..0\n# ktest: the filter "bot.*" selects no test\n'
                      "# ktest: did you mean boot.*?\n# ktest: 0 passed, 0 failed, 0 skipped\n"
                      "EXIT: STATUS=35\n", 35)
        self.assertIn("no test ran: the filter test=bot.* selects no test; did you mean "
                      "test=boot.*?", runner.verdict(run))

    # WARN reports a test announced are left alone; the others are found with their trace.
    def test_warning_reports(self):
        lines = ["    # expect a WARN from mm/gup.c: on purpose",
                 "WARNING: cpu0: WARN_ON(x) at mm/gup.c:533",
                 "  backtrace (addr2line -e build/smpmm.elf):", "    0xffffffff80217634",
                 "  ok 1 a", "WARNING: cpu1: WARN_ON(y) at mm/pcp.c:10",
                 "  backtrace (addr2line -e build/smpmm.elf):", "    0xffffffff80217634",
                 "    0xffffffff80218740", "  ok 2 b"]
        self.assertEqual(runner.warning_reports(lines), [(5, 9)])

    # A trap's first address is its rip (exact); the others are return addresses.
    def test_backtrace_addresses_exact_rip(self):
        lines = ["PANIC: cpu0 (APIC id 0): exception: vector 14 #PF, error code 0x0",
                 "  RIP ffffffff80210000  CS 0008  RFLAGS 0000000000000046",
                 "  backtrace (addr2line -e build/smpmm.elf):", "    0xffffffff80210000",
                 "    0xffffffff80220000", "WARNING: cpu0: WARN_ON(x) at a.c:1",
                 "  backtrace (addr2line -e build/smpmm.elf):", "    0xffffffff80230000"]
        self.assertEqual(runner.backtrace_addresses(lines),
                         [("0xffffffff80210000", True), ("0xffffffff80220000", False),
                          ("0xffffffff80230000", False)])

    # The summary's lost pages are repeated at the end of the run's report.
    def test_lost_pages_reported(self):
        run = FakeRun(GOOD + "memory:  519414 free pages before the tests, 519366 after: "
                      "48 pages LOST; mm_verify: 0 problems\n", 33)
        run.args.console = True
        out = io.StringIO()
        run.say = lambda msg: out.write(msg + "\n")
        runner.report(run, [], out)
        self.assertIn("WARNING the kernel's summary: 48 pages LOST", out.getvalue())


class RunTimeTest(unittest.TestCase):
    # Before a run: the last run with the same options if known, else the measured table,
    # and the quick one-suite command when the run is big.
    def test_expected_time(self):
        args = runner.parse_args(["--smp", "40", "--log", "/tmp/none/run.log"])
        line = runner.expected_time(args, {})
        self.assertIn("about 231 s at 40 CPUs, measured on 2 cores at load average 14-30", line)
        self.assertIn("this host now: ", line)
        self.assertIn(runner.QUICK_HINT, line)
        line = runner.expected_time(args, {runner.history_key(args): {"total": 75.2}})
        self.assertIn("the last run like this here took 75 s", line)
        small = runner.parse_args(["--smp", "4", "--cmdline", "test=boot.*"])
        self.assertNotIn(runner.QUICK_HINT, runner.expected_time(small, {}))

    # After a run: wall time to the first test and per suite, slowest first.
    def test_times_line(self):
        run = FakeRun(GOOD, 33)
        run.elapsed, run.first_test_at = 61.4, 1.2
        run.suite_wall = [("boot", 0.05), ("mm_pcp", 38.0), ("mm_buddy", 17.25)]
        self.assertEqual(runner.times_line(run), "time: 61 s in all, 1.2 s to the first test; "
                         "suites: mm_pcp 38.0 s, mm_buddy 17.2 s, boot <0.1 s")


class NumaTest(unittest.TestCase):
    # NUMA=2 splits -smp and -m evenly and gives QEMU a 10/20 SLIT; an explicit spec sets
    # -smp and -m to its sums (keeping ,slots=/maxmem= options), leaves out cpus= for a
    # CPU-less node and memdev= for a memoryless one, and passes both directions of every
    # distance (so an asymmetric matrix reaches the kernel as it was written).
    def test_even_split(self):
        args = runner.parse_args(["--numa", "2", "--smp", "5", "--mem", "3G"])
        self.assertEqual(args.numa_nodes, [(3, 1536), (2, 1536)])
        qemu = runner.numa_qemu_args(args.numa_nodes, args.numa_dist)
        self.assertIn("node,nodeid=0,cpus=0-2,memdev=numa0", qemu)
        self.assertIn("node,nodeid=1,cpus=3-4,memdev=numa1", qemu)
        self.assertIn("dist,src=1,dst=0,val=20", qemu)

    def test_explicit_nodes(self):
        args = runner.parse_args(["--numa", "4/2G,0/1G,2/0;dist=10,20,30,20,10,40,30,40,10",
                                  "--mem", "2G,slots=2,maxmem=8G"])
        self.assertEqual((args.smp, args.mem, args.expect_cpus),
                         (6, "3072M,slots=2,maxmem=8G", 6))
        qemu = " ".join(runner.numa_qemu_args(args.numa_nodes, args.numa_dist))
        self.assertIn("node,nodeid=1,memdev=numa1 ", qemu)
        self.assertIn("node,nodeid=2,cpus=4-5 ", qemu)
        self.assertIn("dist,src=2,dst=1,val=40", qemu)

    def test_matrix_rows_add_up(self):
        import matrix
        for row in (r for r in matrix.MATRIX if "numa" in r[7]):
            args = runner.parse_args(["--numa", row[7]["numa"], "--smp", str(row[3]),
                                      "--mem", row[4]])
            self.assertEqual(args.smp, row[3], row[0])
            self.assertEqual(runner.parse_size_mib(args.mem.split(",")[0]),
                             runner.parse_size_mib(row[4].split(",")[0]), row[0])

    def test_no_slit_and_bad_specs(self):
        args = runner.parse_args(["--numa", "2;dist=none"])
        self.assertNotIn("dist", " ".join(runner.numa_qemu_args(args.numa_nodes, None)))
        for bad in ["0", "9", "2/1G,2", "2/1G;dist=10,20", "0/1G,0/1G", "2/0,2/0", "2;x=1"]:
            with self.assertRaises(SystemExit, msg=bad):
                runner.parse_args(["--numa", bad])


if __name__ == "__main__":
    unittest.main()
