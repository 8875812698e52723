#!/usr/bin/env python3
"""Boot smpmm once in QEMU, watch its serial console, and judge the KTAP it prints.

One run: start qemu-system-x86_64 with the chosen CPUs, memory, firmware, machine type and
accelerator; give the kernel its command line through QEMU's fw_cfg (file opt/smpmm/cmdline,
appended by the kernel to GRUB's line, so no ISO rebuild per run); copy the serial output to a
log file; stop QEMU at a timeout; parse the KTAP; exit non-zero on any failed case, crash, panic,
timeout or missing result. The last line is always `N passed, N failed, N skipped`.
A bare kernel (`make LAB=0`, --expect bare) prints no KTAP: it passes when it says all its CPUs
are online, and is stopped there (it idles).
Not a build tool: `make` builds the ISO first. tests/matrix.py runs this for many configurations.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

# isa-debug-exit statuses chosen by tests/ktest/ktest.c: (value << 1) | 1.
EXIT_PASS = 33    # 0x10
EXIT_FAIL = 35    # 0x11
OVMF_CODE = ["/usr/share/OVMF/OVMF_CODE_4M.fd", "/usr/share/OVMF/OVMF_CODE.fd"]
OVMF_VARS = ["/usr/share/OVMF/OVMF_VARS_4M.fd", "/usr/share/OVMF/OVMF_VARS.fd"]
OVMF_WHOLE = "/usr/share/ovmf/OVMF.fd"

# A line that means the kernel died, whatever the tests printed before it.
CRASH_RE = re.compile(r"^\s*(PANIC\b|Kernel panic|panic:|.*\bcpu\d+: EXCEPTION\b|"
                      r"!!! |.*\bdouble fault\b)")
ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")   # GRUB's screen clearing, on the serial line
# The kernel's clock points: "# ktest: clock:" at the start and end of the tests, and the
# watchdog's TIMEOUT line (tests/ktest/ktest.c); the kernel's first line marks its entry.
CLOCK_RE = re.compile(r"\b(\d+) ms since kernel entry \(TSC (\d+) kHz")
KERNEL_ENTRY_RE = re.compile(r"^smpmm: an SMP memory-management teaching kernel$")
SUITE_TIME_RE = re.compile(r"skipped in (\d+) ms$")   # tests/ktest/ktest.c run_suite()
EXIT_LINE_RE = re.compile(r"^EXIT: STATUS=(\d+)\s*$")
# What the bare kernel's lab_main() (kernel/main.c) says before it idles.
BARE_DONE_RE = re.compile(r"^smpmm: (?:all CPUs online \((\d+)\)|(\d+) of \d+ CPUs online);"
                          r" no lab built in")
# kernel/lockdep.c: a report no test expected (an expected one is printed as "# " lines).
LOCKDEP_RE = re.compile(r"^WARNING: lockdep: (.*)")
LOCKDEP_END_RE = re.compile(r"^lockdep: turning off the locking correctness validator")


# ---- KTAP -------------------------------------------------------------------------------

class Node:
    """A KTAP test: a leaf case, or a parent (a suite, or the whole run) with children."""

    def __init__(self, level, name="", leaf=False):
        self.level = level          # indentation of this test's own plan and child results
        self.name = name
        self.leaf = leaf
        self.plan = None            # N from "1..N"
        self.children = []
        self.result = None          # "ok" / "not ok" / "skip"; None: no result line yet
        self.log = []               # diagnostics ("# ...") printed before its result

    def walk(self, path=""):
        """(dotted name, node) for every test below this one."""
        for c in self.children:
            full = f"{path}.{c.name}" if path else c.name
            yield full, c
            yield from c.walk(full)


VERSION_RE = re.compile(r"^(K?TAP) version (\d+)$")
PLAN_RE = re.compile(r"^1\.\.(\d+)")
RESULT_RE = re.compile(r"^(ok|not ok) (\d+)(?: -)?(?: ([^#]*?))?\s*(?:#\s*(\w+)\b\s*(.*))?$")
SUBTEST_RE = re.compile(r"^# Subtest: (.*)$")


class KtapParser:
    """Incremental KTAP v1 parser: feed() lines as they arrive, then finish().

    Structure comes from indentation, as in Documentation/dev-tools/ktap.rst: a subtest's
    lines are indented two more spaces than its parent's, and its own result line sits at
    the parent's indentation. Lines that are not KTAP (other kernel output) are ignored.
    """

    def __init__(self, on_result=None):
        self.root = None
        self.stack = []             # open parents, outermost first
        self.errors = []
        self.on_result = on_result  # callback(node, parent) for progress
        self.pending_log = []

    def _parent_at(self, indent):
        while len(self.stack) > 1 and self.stack[-1].level > indent:
            node = self.stack.pop()
            self.errors.append(f"{node.name or 'subtest'}: no result line")
        return self.stack[-1]

    def feed(self, line):
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        text = stripped.rstrip()
        if self.root is None:
            if VERSION_RE.match(text):
                self.root = Node(indent, "")
                self.base = indent
                self.stack = [self.root]
            return
        indent -= self.base
        if indent < 0:
            return
        m = VERSION_RE.match(text)
        if m:
            parent = self._parent_at(indent - 2)
            node = Node(indent)
            parent.children.append(node)
            self.stack.append(node)
            self.pending_log = []
            return
        if self._feed_header(indent, text):
            self.pending_log = []
            return
        m = RESULT_RE.match(text)
        if m:
            self._result(indent, m)
        elif text.startswith("#"):
            self.pending_log.append(text)

    def _feed_header(self, indent, text):
        m = SUBTEST_RE.match(text)
        if m:
            node = self.stack[-1]
            if node.level == indent and node is not self.root:
                node.name = m.group(1).strip()
            return True
        m = PLAN_RE.match(text)
        if m:
            node = self._parent_at(indent)
            if node.level == indent:
                node.plan = int(m.group(1))
            return True
        return False

    def _result(self, indent, m):
        status, num, name = m.group(1), int(m.group(2)), (m.group(3) or "").strip()
        directive = (m.group(4) or "").upper()
        self._parent_at(indent + 2)
        if len(self.stack) > 1 and self.stack[-1].level == indent + 2:
            node = self.stack.pop()          # the result of an open subtest
            if node.name and name and node.name != name:
                self.errors.append(f"subtest {node.name}: result line names {name}")
            node.name = node.name or name
        else:
            node = Node(indent + 2, name, leaf=True)
        parent = self._parent_at(indent)
        if node not in parent.children:
            parent.children.append(node)
        if num != len(parent.children):
            self.errors.append(f"{parent.name or 'top'}: result {num} out of order")
        node.result = "skip" if directive == "SKIP" else status
        node.log, self.pending_log = self.pending_log, []
        if self.on_result:
            self.on_result(node, parent)

    def finish(self):
        if self.root is None:
            self.errors.append("no KTAP output (no 'KTAP version 1' line)")
            return
        while len(self.stack) > 1:
            node = self.stack.pop()
            self.errors.append(f"{node.name or 'subtest'}: no result line (output cut off)")
        self._check_plans(self.root, "")

    def _check_plans(self, node, path):
        name = f"{path}.{node.name}" if path else (node.name or "top level")
        if node.plan is not None and node.plan != len(node.children):
            self.errors.append(f"{name}: plan 1..{node.plan} but {len(node.children)} results")
        for c in node.children:
            if not c.leaf:
                self._check_plans(c, name if node is not self.root else "")

    def where(self):
        """Where the output stopped: ", in suite S, case N of M" (for timeouts and crashes)."""
        open_ = [n for n in self.stack[1:] if n.result is None]
        if not open_:
            return ""
        node = open_[-1]
        if node.plan is not None and len(node.children) >= node.plan:
            return f", in suite {node.name or '?'}, after its last case"
        total = f" of {node.plan}" if node.plan is not None else ""
        return f", in suite {node.name or '?'}, case {len(node.children) + 1}{total}"

    def counts(self):
        """(passed, failed, skipped, missing) over leaf cases; missing: results a plan
        promised that never came. A parent that says "not ok" with no failed case under it
        counts as one failure, so a suite failing on its own is never lost."""
        passed = failed = skipped = 0
        missing = self._missing(self.root) if self.root else 0
        for _, node in (self.root.walk() if self.root else []):
            if node.leaf:
                passed += node.result == "ok"
                skipped += node.result == "skip"
                failed += node.result not in ("ok", "skip")
            elif node.result == "not ok" and not self._has_failed_leaf(node):
                failed += 1
        return passed, failed, skipped, missing

    def _missing(self, node):
        own = max(0, (node.plan or 0) - len(node.children))
        return own + sum(self._missing(c) for c in node.children if not c.leaf)

    def _has_failed_leaf(self, node):
        return any(n.leaf and n.result not in ("ok", "skip") for _, n in node.walk())

    def failed_cases(self):
        return [(name, node) for name, node in (self.root.walk() if self.root else [])
                if (node.leaf and node.result not in ("ok", "skip")) or
                (node.result == "not ok" and not self._has_failed_leaf(node))]


# ---- QEMU -------------------------------------------------------------------------------

def first_existing(paths):
    for p in paths:
        if os.path.exists(p):
            return p
    return None


def fw_cfg_escape(s):
    """QEMU option values double their commas."""
    return s.replace(",", ",,")


# ---- NUMA: --numa SPEC -> QEMU's -object memory-backend-ram / -numa node / -numa dist -------

NUMA_HELP = ("N: N nodes, CPUs and memory split evenly, distances 10 local / 20 remote; or "
             "CPUS/MEM,CPUS/MEM,... one per node (e.g. 20/1G,20/1G; 0 CPUs: a CPU-less node, "
             "memory 0: a memoryless node; -smp and -m become the sums), then optionally "
             "';dist=D,D,...' (the N x N distance matrix, row by row; QEMU makes it the SLIT) or "
             "';dist=none' (no SLIT: the kernel assumes 10 / 20)")


def parse_size_mib(text):
    """'1G', '512M', '0' -> MiB."""
    m = re.fullmatch(r"(\d+)([MG]?)", text.strip().upper())
    if not m:
        raise ValueError(f"bad memory size {text!r} (use e.g. 512M or 1G)")
    return int(m[1]) * (1024 if m[2] == "G" else 1)


def parse_numa(spec, smp, mem):
    """Returns (nodes, dist): nodes is [(cpus, mib)], dist an N x N list or None (no SLIT)."""
    head, _, tail = spec.partition(";")
    if re.fullmatch(r"\d+", head.strip()):
        n = int(head)
        if not 1 <= n <= 8:
            raise ValueError("between 1 and 8 nodes")
        total = parse_size_mib(mem)
        nodes = [(smp // n + (i < smp % n), total // n + (total % n if i == n - 1 else 0))
                 for i in range(n)]
    else:
        nodes = []
        for part in head.split(","):
            cpus, sep, size = part.partition("/")
            if not sep or not cpus.strip().isdigit():
                raise ValueError(f"bad node {part!r}: use CPUS/MEM such as 20/1G")
            nodes.append((int(cpus), parse_size_mib(size)))
    n = len(nodes)
    if not 1 <= n <= 8 or not any(c for c, _ in nodes) or not any(m for _, m in nodes):
        raise ValueError("1 to 8 nodes, some CPUs and some memory")
    dist = [[10 if a == b else 20 for b in range(n)] for a in range(n)]
    if tail.strip():
        key, _, value = tail.partition("=")
        if key.strip() != "dist":
            raise ValueError(f"unknown part {tail!r} (only dist=...)")
        if value.strip() == "none":
            return nodes, None
        vals = [int(v) for v in value.split(",")]
        if len(vals) != n * n:
            raise ValueError(f"dist= needs {n * n} numbers for {n} nodes, got {len(vals)}")
        dist = [vals[a * n:(a + 1) * n] for a in range(n)]
    return nodes, dist


def numa_qemu_args(nodes, dist):
    """QEMU 7.2 options for the nodes: memory backends, nodes with their CPU ranges, and every
    distance (both directions, so an asymmetric matrix stays asymmetric)."""
    args, cpu = [], 0
    for i, (cpus, mib) in enumerate(nodes):
        opt = f"node,nodeid={i}"
        if cpus:
            opt += f",cpus={cpu}-{cpu + cpus - 1}"
            cpu += cpus
        if mib:
            args += ["-object", f"memory-backend-ram,id=numa{i},size={mib}M"]
            opt += f",memdev=numa{i}"
        args += ["-numa", opt]
    for a in range(len(nodes) if dist else 0):
        for b in range(len(nodes)):
            if a != b:
                args += ["-numa", f"dist,src={a},dst={b},val={dist[a][b]}"]
    return args


def numa_describe(nodes, dist):
    parts = [f"{c} CPUs/{m}M" if c else f"no CPUs/{m}M" for c, m in nodes]
    return (f"{len(nodes)} nodes ({', '.join(parts)}), " +
            ("no SLIT" if dist is None else "distances " +
             " / ".join(" ".join(str(v) for v in row) for row in dist)))


def boot_media(args):
    """QEMU's options that give it the kernel: the ISO as a CD, or a RAM-boot image (`make lnx`:
    GRUB with the kernel in a memdisk, loaded by -kernel), with which no disk is read before the
    kernel runs, so that -icount runs repeat exactly (BIOS only)."""
    if args.iso.endswith(".lnx"):
        if args.firmware != "bios":
            raise SystemExit(f"runner: {args.iso} is a RAM-boot image (GRUB for BIOS): use --firmware bios")
        return ["-kernel", args.iso]
    return ["-cdrom", args.iso, "-boot", "d"]


def qemu_command(args, tmpdir):
    """The QEMU command line of a run: every target that boots smpmm builds it here."""
    if args.shell:
        # The serial port is this terminal, shared with QEMU's monitor (Ctrl-A C; Ctrl-A X
        # quits), and copied to the log.
        os.makedirs(os.path.dirname(os.path.abspath(args.log)), exist_ok=True)
        serial = ["-chardev", f"stdio,id=con,mux=on,logfile={os.path.abspath(args.log)}",
                  "-serial", "chardev:con", "-mon", "chardev=con,mode=readline"]
    else:
        serial = ["-serial", "stdio", "-monitor", "none"]
    cmd = [args.qemu, "-M", args.machine, "-m", args.mem, "-smp", str(args.smp),
           "-accel", args.accel, "-display", "none", *serial,
           "-no-reboot", "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04",
           *boot_media(args)]
    if args.cpu:
        cmd += ["-cpu", args.cpu]
    if args.numa_nodes:
        cmd += numa_qemu_args(args.numa_nodes, args.numa_dist)
    if args.firmware == "uefi":
        code, vars_ = first_existing(OVMF_CODE), first_existing(OVMF_VARS)
        if code and vars_:
            vars_copy = os.path.join(tmpdir, "OVMF_VARS.fd")
            shutil.copyfile(vars_, vars_copy)
            cmd += ["-drive", f"if=pflash,format=raw,unit=0,readonly=on,file={code}",
                    "-drive", f"if=pflash,format=raw,unit=1,file={vars_copy}"]
        elif os.path.exists(OVMF_WHOLE):
            cmd += ["-bios", OVMF_WHOLE]
        else:
            raise SystemExit("runner: no OVMF firmware found (install the 'ovmf' package)")
    cmdline = kernel_cmdline(args)
    if cmdline:
        cmd += ["-fw_cfg", f"name=opt/smpmm/cmdline,string={fw_cfg_escape(cmdline)}"]
    if args.gdb:
        cmd += ["-gdb", f"tcp:127.0.0.1:{args.gdb_port}", "-S"]
    return cmd + args.qemu_arg


def kernel_cmdline_max():
    """The longest command line the kernel keeps: BOOT_CMDLINE_MAX in kernel/bootinfo.h,
    less its NUL (GRUB's own part of the line is empty: boot/grub.cfg passes no words)."""
    header = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernel",
                          "bootinfo.h")
    with open(header) as f:
        return int(re.search(r"#define BOOT_CMDLINE_MAX (\d+)", f.read()).group(1)) - 1


def cmdline_problem(args):
    """Why this run's kernel command line cannot be passed whole, or None."""
    n, limit = len(kernel_cmdline(args).encode()), kernel_cmdline_max()
    if n <= limit:
        return None
    return (f"the kernel command line is {n} bytes; the kernel keeps at most {limit} "
            "(BOOT_CMDLINE_MAX in kernel/bootinfo.h) and would drop the rest: shorten it")


def kernel_cmdline(args):
    words = []
    if args.expect == "bare":
        return args.cmdline     # no lab: nothing reads expect_cpus= or ktest.timeout=
    if args.shell:              # no tests unless --cmdline asks (its test= comes later, wins)
        return " ".join(["test=none", "shell"] + ([args.cmdline] if args.cmdline else []))
    if args.expect_cpus is not None and args.expect_cpus >= 0:
        words.append(f"expect_cpus={args.expect_cpus}")
    if not args.gdb:
        # The kernel's per-case watchdog: a case using half of this run's time is hung; the
        # kernel then names it. A later ktest.timeout= in --cmdline wins.
        words.append(f"ktest.timeout={max(5, int(args.timeout) // 2)}")
    if args.cmdline:
        words.append(args.cmdline)
    return " ".join(words)


class Run:
    """One QEMU process: a reader thread copies serial output to the log and the parser."""

    def __init__(self, args, out):
        self.args = args
        self.out = out
        self.lines = []
        self.exit_line = None
        self.bare_done = None       # the bare kernel's last line, once seen
        self.crash = None
        self.first_test_at = None
        self.parser = KtapParser(on_result=self._progress)
        self.clock = []             # (wall s since QEMU start, kernel ms, TSC kHz)
        self.entry_at = None        # wall s since QEMU start of the kernel's first line
        self.suite_wall = []        # (suite, wall s from the previous suite's result to its own)
        self._last_mark = None
        self.loads = []             # the host's 1-minute load average at the start and end
        self._symbolizer = None     # addr2line for backtraces on the console, once needed
        self._exact_next = False    # the next backtrace address is a trap's rip

    def say(self, msg):
        self.out.write(f"{self.args.prefix}{msg}\n")
        self.out.flush()

    def _progress(self, node, parent):
        if parent is self.parser.root:
            now = time.monotonic()
            self.suite_wall.append((node.name, now - (self._last_mark or now)))
            self._last_mark = now
        if self.args.console or self.args.progress == "none":
            return
        if parent is self.parser.root:
            bad = [c.name for c in node.children if c.result not in ("ok", "skip")]
            n = len(node.children)
            took = next((m.group(1) for m in map(SUITE_TIME_RE.search, node.log) if m), None)
            took = "" if took is None else \
                f" in {took} ms" if int(took) < 1000 else f" in {int(took) / 1000:.1f} s"
            if bad:
                self.say(f"{node.name}: {n - len(bad)}/{n} passed{took}, "
                         f"FAILED: {', '.join(bad)}")
            elif self.args.progress == "lines":
                self.say(f"{node.name}: {n} ok{took}")
        elif self.args.progress == "cases" or (self.args.progress == "failures" and
                                                node.result not in ("ok", "skip")):
            self.say(f"  {parent.name}.{node.name}: {node.result}")

    def _line(self, raw, start):
        line = ANSI_RE.sub("", raw.decode("utf-8", "replace")).replace("\r", "").rstrip("\n")
        self.lines.append(line)
        if self.args.console:
            self.out.write(self._resolved(line) + "\n")
            self.out.flush()
        if self.first_test_at is None and VERSION_RE.match(line.strip()):
            self.first_test_at = time.monotonic() - start
            self._last_mark = time.monotonic()
            if not self.args.console and self.args.progress != "none":
                self.say(f"tests started {self.first_test_at:.1f}s after QEMU start")
        m = CLOCK_RE.search(line)
        if m:
            self.clock.append((time.monotonic() - start, int(m.group(1)), int(m.group(2))))
        if self.entry_at is None and KERNEL_ENTRY_RE.match(line):
            self.entry_at = time.monotonic() - start
        m = EXIT_LINE_RE.match(line)
        if m:
            self.exit_line = int(m.group(1))
        if self.args.expect == "bare" and BARE_DONE_RE.match(line):
            self.bare_done = line
        if self.crash is None and CRASH_RE.match(line):
            self.crash = line.strip()
        self.parser.feed(line)

    def _resolved(self, line):
        """A backtrace line with its function and line appended (the log keeps it raw)."""
        if BACKTRACE_HEAD_RE.match(line):
            self._exact_next = trap_report_before(self.lines[-31:-1])
            return line
        m = BACKTRACE_ADDR_RE.match(line)
        if not m:
            return line
        if self._symbolizer is None:
            self._symbolizer = Symbolizer(self.args.elf)
        where = self._symbolizer.lookup(m.group(1), self._exact_next)
        self._exact_next = False
        return f"{line.rstrip()}  {where}" if where else line

    def _reader(self, proc, log, start):
        for raw in iter(proc.stdout.readline, b""):
            log.write(raw)
            log.flush()
            self._line(raw, start)

    def execute(self):
        with tempfile.TemporaryDirectory(prefix="smpmm-run-") as tmpdir:
            cmd = qemu_command(self.args, tmpdir)
            os.makedirs(os.path.dirname(os.path.abspath(self.args.log)), exist_ok=True)
            with open(self.args.log, "wb") as log:
                log.write(("# " + " ".join(cmd) + "\n").encode())
                return self._wait(cmd, log)

    def _sample_load(self):
        try:
            self.loads.append(os.getloadavg()[0])
        except OSError:
            pass

    def _wait(self, cmd, log):
        start = time.monotonic()
        self._sample_load()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)
        reader = threading.Thread(target=self._reader, args=(proc, log, start), daemon=True)
        reader.start()
        timed_out = False
        try:
            timed_out = self._wait_with_heartbeat(proc, start)
        except KeyboardInterrupt:
            proc.kill()
            proc.wait()
            raise
        reader.join(timeout=5)
        self._sample_load()
        if self._symbolizer:
            self._symbolizer.close()
        self.elapsed = time.monotonic() - start
        self.timed_out = timed_out
        self.status = proc.returncode
        self.where = self.parser.where()    # before finish() closes what was left open
        self.parser.finish()
        return self


    def _wait_with_heartbeat(self, proc, start):
        """Wait for QEMU; every HEARTBEAT_S without a new serial line, say so (with the last
        line seen) so a long boot or test does not look like a hang. True on timeout."""
        limit = None if self.args.gdb else start + self.args.timeout
        seen, quiet_since = 0, time.monotonic()
        while True:
            now = time.monotonic()
            if limit is not None and now >= limit:
                proc.kill()
                proc.wait()
                return True
            try:
                proc.wait(timeout=1 if limit is None else min(1, limit - now))
                return False
            except subprocess.TimeoutExpired:
                pass
            if self.bare_done is not None:     # it idles from here on: nothing more to see
                proc.kill()
                proc.wait()
                return False
            if len(self.lines) != seen:
                seen, quiet_since = len(self.lines), time.monotonic()
            elif (time.monotonic() - quiet_since >= HEARTBEAT_S and not self.args.console
                  and self.args.progress != "none"):
                where = self.parser.where()
                last = self.lines[-1].strip()[:70] if self.lines else "(no output yet)"
                self.say(f"... {time.monotonic() - start:.0f}s, waiting" +
                         (where if where else f"; last line: {last}"))
                quiet_since = time.monotonic()


HEARTBEAT_S = 15
PANIC_LINE_RE = re.compile(r"^PANIC: ")
EXIT_PANIC = 255  # kernel/trap.h PANIC_EXIT_CODE 0x7f


def panic_verdict(run):
    """--expect panic: the kernel must crash on purpose with exactly one report and exit
    255, within the timeout. One test, named after the run."""
    problems = []
    reports = [line for line in run.lines if PANIC_LINE_RE.match(line)]
    if run.timed_out:
        problems.append(f"timeout after {run.args.timeout:g}s: a hang, not a panic")
    elif run.status != EXIT_PANIC:
        problems.append(f"QEMU exit status {run.status}, expected {EXIT_PANIC} (panic)")
    if len(reports) != 1:
        problems.append(f"{len(reports)} PANIC reports, expected exactly one")
    if run.exit_line != EXIT_PANIC:
        problems.append(f"no 'EXIT: STATUS={EXIT_PANIC}' line")
    want = getattr(run.args, "expect_text", None)
    if want and not any(re.search(want, line) for line in run.lines):
        problems.append(f"the report does not say /{want}/")
    return problems


def bare_verdict(run):
    """--expect bare: the kernel without its lab must boot to its "all CPUs online" line
    (with --expect-cpus of them, unless -1), without a crash, within the timeout. One test."""
    problems = []
    if run.crash:
        problems.append(f"crash: {run.crash}")
    if run.bare_done is None:
        problems.append(f"timeout after {run.args.timeout:g}s: no 'smpmm: all CPUs online' line"
                        if run.timed_out else
                        f"QEMU exit status {run.status} before 'smpmm: all CPUs online'")
        return problems
    m = BARE_DONE_RE.match(run.bare_done)
    online = int(m.group(1) or m.group(2))
    if m.group(1) is None:
        problems.append(f"not every CPU came up: {run.bare_done}")
    if run.args.expect_cpus >= 0 and online != run.args.expect_cpus:
        problems.append(f"{online} CPUs online, expected {run.args.expect_cpus}")
    return problems


def clock_warning(run):
    """The kernel's elapsed time against ours; None if they agree (or the span is too short
    to tell). Over the tests when they span 5 s, else from the kernel's first line to its
    last clock point (a run that ends early, or a watchdog TIMEOUT, has just one): the
    lines reach us a little late, never early, so a short span is only good for a gross
    error. Not a failure by itself: a warning that explains others."""
    if not run.clock or "-icount" in run.args.qemu_arg:
        return None     # under -icount the guest's clock counts instructions, not seconds
    (w0, k0, khz), (w1, k1, _) = run.clock[0], run.clock[-1]
    span = "during the tests"
    if w1 - w0 < 5:
        if run.entry_at is None or w1 - run.entry_at < 1:
            return None
        w0, k0, span = run.entry_at, 0, f"from kernel entry to {k1} ms"
    ratio = (k1 - k0) / 1000 / (w1 - w0)
    if 0.67 <= ratio <= 1.5:
        return None
    return (f"kernel clock ran {ratio:.2f}x wall time {span} (TSC calibrated at {khz} kHz): "
            "timeouts and delays in the kernel are off by that much")


NO_TEST_RE = re.compile(r'^# ktest: the filter "(.*)" selects no test')
SUGGEST_RE = re.compile(r"^# ktest: did you mean (\S+)\?")
LOST_RE = re.compile(r"^memory: .*: (\d+ pages (?:LOST|more than before))")


def no_test_selected(run):
    """"no test ran: the filter test=X selects no test; did you mean Y?", or None."""
    for i, line in enumerate(run.lines):
        m = NO_TEST_RE.match(line)
        if m:
            near = SUGGEST_RE.match(run.lines[i + 1]) if i + 1 < len(run.lines) else None
            return (f"no test ran: the filter test={m.group(1)} selects no test" +
                    (f"; did you mean test={near.group(1)}?" if near else ""))
    return None


def verdict(run):
    """Problems of the run as a whole: the KTAP's structure, a timeout, a crash, an exit
    status that is not ktest's. Any of them makes the run fail."""
    problems = list(run.parser.errors)
    if run.timed_out:
        problems.append(f"timeout after {run.args.timeout:g}s{run.where}")
    if run.crash:
        problems.append(f"crash: {run.crash}{run.where}")
    passed, failed, _, _ = run.parser.counts()
    if not run.timed_out and not run.args.gdb:
        if run.status not in (EXIT_PASS, EXIT_FAIL):
            problems.append(f"QEMU exit status {run.status}: not a ktest exit "
                            "(panic, triple fault or reset)")
        elif run.status == EXIT_PASS and failed:
            problems.append("kernel said pass but the KTAP has failures")
        elif run.status == EXIT_FAIL and not failed and not problems:
            problems.append(no_test_selected(run) or "kernel reported failure (exit 35) with "
                            "no failed case")
        if run.exit_line is None and run.status in (EXIT_PASS, EXIT_FAIL):
            problems.append("no 'EXIT: STATUS=' line")
    lockdep_lines = lockdep_report(run)
    if lockdep_lines:
        problems.append(f"lockdep: {LOCKDEP_RE.match(lockdep_lines[0]).group(1)} (report below)")
    if passed + failed == 0 and not problems:
        problems.append("no test ran")
    return problems


def lockdep_report(run):
    """The lines of the validator's report, if it made one that no test expected."""
    start = next((i for i, line in enumerate(run.lines) if LOCKDEP_RE.match(line)), None)
    if start is None:
        return []
    end = next((i for i in range(start, len(run.lines)) if LOCKDEP_END_RE.match(run.lines[i])),
               min(start + 40, len(run.lines) - 1))
    return run.lines[start:end + 1]


BACKTRACE_ADDR_RE = re.compile(r"^\s+(0xffffffff[0-9a-f]{8})\s*$")
BACKTRACE_HEAD_RE = re.compile(r"^\s+backtrace \(addr2line")
WARNING_RE = re.compile(r"^WARNING: cpu\d+: ")
EXPECT_WARN_RE = re.compile(r"^\s*# expect a WARN\b")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Symbolizer:
    """Kernel addresses as `function at file:line`, with the callers they were inlined into,
    from one addr2line kept running. A return address is looked up one byte back (inside its
    call instruction, so the line is the call's, as Linux's unwinder does); the faulting rip
    of a panic is exact. Empty strings when there is no ELF or no addr2line."""

    def __init__(self, elf):
        self.proc = None
        if elf and os.path.exists(elf) and shutil.which("addr2line"):
            self.proc = subprocess.Popen(["addr2line", "-f", "-i", "-p", "-e", elf],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         text=True, bufsize=1)

    def lookup(self, addr, exact=False):
        if self.proc is None:
            return ""
        a = int(addr, 16) - (0 if exact else 1)
        # A second address that resolves to nothing marks the end of this one's lines.
        self.proc.stdin.write(f"{a:#x}\n0\n")
        self.proc.stdin.flush()
        out = []
        while True:
            line = self.proc.stdout.readline()
            if not line or line.startswith("?? ??:0"):
                break
            # NASM's file names come as "dir//dir/file.asm"
            out.append(re.sub(r"\S*//", "", line.strip().replace(ROOT + os.sep, "")))
        return " ".join(out)

    def close(self):
        if self.proc:
            self.proc.stdin.close()
            self.proc.wait()
            self.proc = None


TRAP_REPORT_RE = re.compile(r"^PANIC: cpu\d+ \(APIC id \d+\): .*: vector \d+")
REPORT_START_RE = re.compile(r"^(PANIC: |WARNING: )")


def trap_report_before(lines):
    """Is the report these lines end in (the last PANIC/WARNING line) a trap's? Its backtrace
    starts with the rip that trapped, an exact address."""
    start = next((l for l in reversed(lines) if REPORT_START_RE.match(l)), "")
    return bool(TRAP_REPORT_RE.match(start))


def backtrace_addresses(lines):
    """(address, exact) of each backtrace line: exact for the first address of a trap's
    report (that address is the rip, not a return address)."""
    out, exact_next = [], False
    for i, line in enumerate(lines):
        if BACKTRACE_HEAD_RE.match(line):
            exact_next = trap_report_before(lines[max(0, i - 30):i])
            continue
        m = BACKTRACE_ADDR_RE.match(line)
        if m:
            out.append((m.group(1), exact_next))
            exact_next = False
    return out


def symbolize(lines, elf):
    """Backtrace addresses in a report, as `address function at file:line` (addr2line)."""
    addrs = backtrace_addresses(lines)
    sym = Symbolizer(elf)
    try:
        return [f"{a} {sym.lookup(a, exact)}" for a, exact in addrs] if sym.proc else []
    finally:
        sym.close()


def warning_reports(lines):
    """[(start, end)] of each WARN_ON report (its line and backtrace) that no test announced
    with an `# expect a WARN` line just before it."""
    out = []
    for i, line in enumerate(lines):
        if not WARNING_RE.match(line):
            continue
        if any(EXPECT_WARN_RE.match(l) for l in lines[max(0, i - 3):i]):
            continue
        end = i + 1
        while end < len(lines) and (BACKTRACE_HEAD_RE.match(lines[end]) or
                                    BACKTRACE_ADDR_RE.match(lines[end])):
            end += 1
        out.append((i, end))
    return out


KUNIT_COUNTS_RE = re.compile(r"Testing complete\. Ran (\d+) tests?(?:: (.*))?$")


def kunit_problem(path):
    """Why `kunit.py parse` cannot run from PATH, or None. Linux's kunit.py changes to the
    kernel tree's root (the part of its own path before tools/testing/kunit) before it opens
    the log, and exits 1 without a word when its path has no tools/testing/kunit in it."""
    if not os.path.isfile(path):
        return (f"--kunit/KUNIT_PY: {path} does not exist (give the path of kunit.py in a "
                "Linux tree: LINUX/tools/testing/kunit/kunit.py)")
    if "tools/testing/kunit" not in os.path.realpath(path):
        return (f"--kunit/KUNIT_PY: {path} is not under a tools/testing/kunit folder; "
                "kunit.py exits 1 silently there (it looks for the Linux tree above it)")
    return None


def kunit_counts(stdout):
    """(passed, failed, skipped) from kunit.py's `Testing complete. Ran N tests: passed: N,
    failed: N, crashed: N, skipped: N, errors: N` (zero counts are left out); None if absent.
    Crashed cases and parse errors count as failed, as this runner counts them."""
    for line in reversed(stdout.splitlines()):
        m = KUNIT_COUNTS_RE.search(ANSI_RE.sub("", line).strip())
        if m:
            n = dict((k, int(v)) for k, v in re.findall(r"(\w+): (\d+)", m.group(2) or ""))
            return (n.get("passed", 0), n.get("failed", 0) + n.get("crashed", 0) +
                    n.get("errors", 0), n.get("skipped", 0))
    return None


def kunit_crosscheck(path, log):
    """Linux's tools/testing/kunit/kunit.py parse on the same log, which must be given as an
    absolute path (kunit.py changes directory first). Returns (exit status, the counts it
    printed or None, the last lines of its stderr)."""
    res = subprocess.run([sys.executable, path, "parse", os.path.abspath(log)],
                         capture_output=True, text=True)
    return res.returncode, kunit_counts(res.stdout), res.stderr.strip().splitlines()[-6:]


def kunit_verdict(run, problems):
    """--kunit: run kunit.py parse on this run's log and compare its verdict and counts with
    ours; a disagreement (or a kunit.py that cannot run) is a problem of the run."""
    why = kunit_problem(run.args.kunit)
    if why:
        problems.append(why)
        return
    rc, counts, stderr = kunit_crosscheck(run.args.kunit, run.args.log)
    passed, failed, skipped, missing = run.parser.counts()
    ours = (passed, failed + missing + len(run.parser.errors), skipped)
    run.say(f"kunit.py parse: exit {rc}, " + (f"{counts[0]} passed, {counts[1]} failed, "
            f"{counts[2]} skipped" if counts else "no 'Testing complete' line"))
    for line in stderr:
        run.say(f"    kunit.py: {line}")
    if (rc == 0) != (ours[1] == 0):
        problems.append(f"kunit.py parse exit {rc} disagrees with this runner "
                        f"({ours[1]} failed)")
    elif counts is not None and counts != ours:
        problems.append(f"kunit.py parse counts {counts[0]} passed, {counts[1]} failed, "
                        f"{counts[2]} skipped; this runner {ours[0]}, {ours[1]}, {ours[2]}")
    elif counts is None:
        problems.append("kunit.py parse printed no 'Testing complete' line")


def report(run, problems, out):
    say = run.say
    for name, leaf in run.parser.failed_cases():
        say(f"FAILED {name}")
        for line in leaf.log[-8:]:
            say(f"    {line}")
    for p in problems:
        say(f"ERROR {p}")
    if problems and not run.args.console:
        say(f"last serial lines ({run.args.log}):")
        for line in run.lines[-15:]:
            say(f"    | {line}")
    if run.crash and not run.args.console:    # on the console each line was resolved
        for line in symbolize(run.lines, run.args.elf):
            say(f"    at {line}")
    for start, end in [] if run.args.console else warning_reports(run.lines):
        say(f"{run.lines[start]}")
        for line in symbolize(run.lines[start:end], run.args.elf):
            say(f"    at {line}")
    lost = next((m.group(1) for m in map(LOST_RE.match, run.lines) if m), None)
    if lost:
        say(f"WARNING the kernel's summary: {lost} (free pages after the tests against before, "
            "per-CPU lists drained)")
    report_lines = lockdep_report(run)
    if report_lines:
        say("lockdep report:")
        for line in report_lines:
            say(f"    | {line}")
        for line in symbolize(report_lines, run.args.elf):
            say(f"    at {line}")


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iso", default="build/smpmm.iso",
                    help="the ISO, or a RAM-boot image (.lnx, make lnx) booted with -kernel")
    ap.add_argument("--elf", default=None, help="kernel ELF for backtraces "
                    "(default: smpmm.elf beside the ISO)")
    ap.add_argument("--smp", type=int, default=40)
    ap.add_argument("--mem", default="2G")
    ap.add_argument("--firmware", choices=["bios", "uefi"], default="bios")
    ap.add_argument("--machine", choices=["q35", "pc"], default="q35")
    ap.add_argument("--accel", default="tcg", help="tcg, kvm, or e.g. tcg,thread=single")
    ap.add_argument("--cpu", default=None, help="QEMU -cpu model (default: QEMU's)")
    ap.add_argument("--numa", default="", help="NUMA nodes: " + NUMA_HELP)
    ap.add_argument("--cmdline", default="", help="kernel command line (test=, seed=, ...)")
    ap.add_argument("--expect-cpus", type=int, default=None,
                    help="CPUs the boot tests expect online (default: --smp; -1: none)")
    ap.add_argument("--expect-text", default=None,
                    help="with --expect panic: a regex the report must contain")
    ap.add_argument("--expect", choices=["pass", "panic", "bare"], default="pass",
                    help="pass: the KTAP tests must pass; panic: the kernel must end in "
                    "exactly one PANIC report and exit 255 (crash self-tests); bare: a kernel "
                    "without its lab (make LAB=0) must reach 'smpmm: all CPUs online' "
                    "(QEMU is stopped there)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds before QEMU is killed")
    ap.add_argument("--log", default=None, help="serial log file (default build/runs/NAME.log)")
    ap.add_argument("--name", default=None, help="label for this run")
    ap.add_argument("--console", action="store_true", help="copy the serial console here")
    ap.add_argument("--progress", choices=["lines", "cases", "failures", "none"],
                    default="lines", help="without --console: a line per suite (default), "
                    "per case, only failures, or nothing")
    ap.add_argument("--build", action="store_true",
                    help="run `make iso` first (the Makefile targets have already built)")
    ap.add_argument("--gdb", action="store_true",
                    help="QEMU waits for gdb on localhost:--gdb-port, stopped before firmware")
    ap.add_argument("--gdb-port", type=int, default=1234, help="(default 1234, as QEMU's -s)")
    ap.add_argument("--shell", action="store_true",
                    help="the live monitor on this terminal: the kernel boots with `test=none "
                    "shell` (then --cmdline), the serial port is this terminal (Ctrl-A X "
                    "leaves QEMU, as does `exit` at the prompt) and is copied to --log")
    ap.add_argument("--qemu", default="qemu-system-x86_64")
    ap.add_argument("--qemu-arg", action="append", default=[], help="extra QEMU argument")
    ap.add_argument("--kunit", default=os.environ.get("KUNIT_PY") or None, metavar="KUNIT_PY",
                    help="LINUX/tools/testing/kunit/kunit.py (default: $KUNIT_PY): also read "
                    "the log with Linux's `kunit.py parse` and fail if it disagrees")
    args = ap.parse_args(argv)
    args.numa_nodes, args.numa_dist = None, None
    if args.numa:
        size, comma, rest = args.mem.partition(",")    # keep e.g. ",slots=2,maxmem=4G"
        try:
            args.numa_nodes, args.numa_dist = parse_numa(args.numa, args.smp, size)
        except ValueError as e:
            ap.error(f"--numa {args.numa!r}: {e}")
        args.smp = sum(c for c, _ in args.numa_nodes)
        args.mem = f"{sum(m for _, m in args.numa_nodes)}M{comma}{rest}"
    if args.expect_cpus is None:
        args.expect_cpus = args.smp
    args.name = args.name or f"{args.machine}-{args.firmware}-smp{args.smp}"
    args.log = args.log or os.path.join("build", "runs", args.name + ".log")
    args.elf = args.elf or os.path.join(os.path.dirname(args.iso), "smpmm.elf")
    args.prefix = ""
    return args


# ---- run time: what to expect before, what each suite took after -------------------------

# Wall time of a whole default run (all suites), QEMU start to exit, on the project's 2-core
# machine while other work shared it: CPUs -> (seconds, the host's load average during the run).
# Under TCG a run's time grows with the host's load: on 2 cores at load 5, a vCPU gets about
# a third of a core. The 4-CPU figure is from 2026-12-01 (main 4961178 and this branch's
# messages); the others from the run before the memory suites grew to 16 (fewer cases).
MEASURED_FULL_RUN_S = {1: (48, "14-30"), 4: (42, "4.5-5.0"), 8: (78, "14-30"),
                       40: (231, "14-30")}
QUICK_HINT = "make run SMP=4 CMDLINE='test=boot.*' (seconds)"


def history_path(args):
    return os.path.join(os.path.dirname(os.path.abspath(args.log)), "run-times.json")


def history_key(args):
    numa = f" numa={args.numa}" if args.numa else ""
    return f"smp={args.smp} mem={args.mem}{numa} {args.firmware} {args.machine} " \
        f"{args.cmdline}".strip()


def read_history(args):
    try:
        with open(history_path(args)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def host_load():
    """'load average 4.5 on 2 cores' now (the 1-minute figure), for the lines about time."""
    try:
        return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    except OSError:
        return f"{os.cpu_count()} cores"


def expected_time(args, history):
    """One line for the start of `make run`: how long this is likely to take, under which
    load, and how to run one suite quickly. From the last run with the same options if there
    is one, else the measured table (its load named: a busier host takes longer)."""
    what = "every suite" if "test=" not in args.cmdline else "the tests selected by test="
    last = history.get(history_key(args))
    if last:
        then = f" at load average {last['load']}" if last.get("load") else ""
        est = f"the last run like this here took {last['total']:.0f} s{then}"
    elif "test=" not in args.cmdline:
        near = min(MEASURED_FULL_RUN_S, key=lambda n: abs(n - args.smp))
        secs, load = MEASURED_FULL_RUN_S[near]
        est = (f"about {secs} s at {near} CPUs, measured on 2 cores at load average {load} "
               "(longer on a busier host, shorter on an idle one)")
    else:
        secs, load = MEASURED_FULL_RUN_S[4]
        est = (f"less than all suites (those took about {secs} s at 4 CPUs, 2 cores at load "
               f"average {load})")
    hint = f"; one suite quickly: {QUICK_HINT}" if args.smp > 4 or "test=" not in args.cmdline \
        else ""
    return f"runner: {args.smp} CPUs, {what}: {est}; this host now: {host_load()}{hint}"


def suite_times(run):
    """[(suite, seconds)] by the wall clock (the kernel's own "in N ms" is in the log, and is
    off when a busy host skewed its TSC calibration), slowest first."""
    return sorted(run.suite_wall, key=lambda t: -t[1])


def times_line(run):
    """The final summary's time line: boot to the first test, then each suite."""
    parts = [f"{name} {s:.1f} s" if s >= 0.1 else f"{name} <0.1 s" for name, s in suite_times(run)]
    first = f"{run.first_test_at:.1f} s to the first test; " \
        if run.first_test_at is not None else ""
    loads = sorted(run.loads)
    load = f" (host load average {loads[0]:.1f}-{loads[-1]:.1f})" if loads else ""
    return f"time: {run.elapsed:.0f} s in all{load}, {first}suites: " + ", ".join(parts)


def save_history(run):
    history = read_history(run.args)
    loads = sorted(run.loads)
    history[history_key(run.args)] = {"total": round(run.elapsed, 1),
                                      "suites": dict(suite_times(run)),
                                      "load": f"{loads[0]:.1f}-{loads[-1]:.1f}" if loads else ""}
    try:
        with open(history_path(run.args), "w") as f:
            json.dump(history, f, indent=1, sort_keys=True)
    except OSError:
        pass


def run_one(args, out=sys.stdout):
    """Boot once; returns (passed, failed, skipped, problems, run)."""
    if args.build:
        subprocess.run(["make", "--no-print-directory", "iso"], check=True)
    if not os.path.exists(args.iso):
        raise SystemExit(f"runner: {args.iso} not found; run `make` first (or use --build)")
    if args.kunit and kunit_problem(args.kunit):
        raise SystemExit(f"runner: {kunit_problem(args.kunit)}")
    if cmdline_problem(args):
        raise SystemExit(f"runner: {cmdline_problem(args)}")
    run = Run(args, out)
    if args.numa_nodes:
        run.say(f"numa: {numa_describe(args.numa_nodes, args.numa_dist)}")
    if args.console and args.expect != "bare":
        run.say(expected_time(args, read_history(args)))
    if not args.console:
        run.say(f"booting {args.name}: -M {args.machine} -smp {args.smp} -m {args.mem} "
                f"{args.firmware} {args.accel} cmdline '{kernel_cmdline(args)}'")
    run.execute()
    if args.expect in ("panic", "bare"):
        problems = panic_verdict(run) if args.expect == "panic" else bare_verdict(run)
        for p in problems:
            run.say(f"ERROR {p}")
        if not problems:
            run.say(f"ok: one panic report, exit {EXIT_PANIC}" if args.expect == "panic" else
                    f"ok: {run.bare_done}")
        elif not args.console:
            for line in run.lines[-15:]:
                run.say(f"    | {line}")
        return int(not problems), int(bool(problems)), 0, problems, run
    # Under gdb the session ends when the user says so: report the KTAP seen, nothing more.
    problems = [] if args.gdb else verdict(run)
    if args.kunit:
        kunit_verdict(run, problems)
    passed, failed, skipped, missing = run.parser.counts()
    warning = clock_warning(run)
    if warning:
        run.say(f"WARNING {warning}")
    report(run, problems, out)
    # A missing result is a failed case; the run's own problems count once more.
    return passed, failed + missing + (1 if problems else 0), skipped, problems, run


MONITOR_PROMPT = "smpmm> "


class MonitorConsole:
    """QEMU with the serial port (and its monitor, Ctrl-A C) on pipes: everything read is kept
    (and copied to `echo`, a file, if given); expect() waits for a pattern, type() types a
    line a character at a time, as a person does. Used by the scripted monitor below and by
    tests/shell_test.py."""

    def __init__(self, cmd, echo=None):
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        self.buf = ""
        self.echo = echo
        self.lock = threading.Lock()
        threading.Thread(target=self._reader, daemon=True).start()

    def _reader(self):
        for chunk in iter(lambda: self.proc.stdout.read1(4096), b""):
            text = chunk.decode(errors="replace").replace("\r", "")
            with self.lock:
                self.buf += text
            if self.echo:
                self.echo.write(text)
                self.echo.flush()

    def expect(self, pattern, since, timeout):
        """The end of the first match of pattern after offset since, or None (timeout, or
        QEMU gone)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                text = self.buf[since:]
            m = re.search(pattern, text)
            if m:
                return since + m.end()
            if self.proc.poll() is not None:
                return None
            time.sleep(0.05)
        return None

    def type(self, line):
        for ch in line + "\r":
            self.proc.stdin.write(ch.encode())
            self.proc.stdin.flush()
            time.sleep(0.002)


def run_shell_script(args, lines):
    """--shell with stdin not a terminal: type each line of the script at the monitor's prompt,
    waiting for the prompt before each (QEMU would pass piped bytes on while the firmware,
    GRUB or the kernel's UART set-up still drops them), then `exit` unless the script did.
    The session goes to stdout (and, by QEMU, to the log); returns 0 if QEMU left by `exit`."""
    with tempfile.TemporaryDirectory(prefix="smpmm-shell-") as tmpdir:
        con = MonitorConsole(qemu_command(args, tmpdir), echo=sys.stdout)
        pos, exited = 0, False
        for line in lines + ["exit"]:
            pos = con.expect(re.escape(MONITOR_PROMPT), pos, args.timeout)
            if pos is None:
                sys.stdout.write("\nrunner: no monitor prompt within %d s (--timeout); stopping\n" % args.timeout)
                break
            con.type(line)
            exited = line.strip().lower() == "exit"
            if exited:
                break
        try:
            status = con.proc.wait(timeout=args.timeout if exited else 5)
        except subprocess.TimeoutExpired:
            con.proc.kill()
            status = None
    return 0 if status in (EXIT_PASS, 0) else (status or 1)


def run_shell(args):
    """--shell: QEMU on this terminal until it exits; returns 0 if it left by `exit`. With
    stdin a pipe or a file, the monitor is scripted (run_shell_script())."""
    if not os.path.exists(args.iso):
        raise SystemExit(f"runner: {args.iso} not found; run `make` first")
    if not sys.stdin.isatty():
        lines = [l.rstrip("\r\n") for l in sys.stdin if l.strip() and not l.lstrip().startswith("#")]
        print(f"runner: the monitor, scripted: {len(lines)} line(s) from stdin, each typed at a prompt "
              f"(-smp {args.smp} -m {args.mem}); log {args.log}", flush=True)
        return run_shell_script(args, lines)
    if args.numa_nodes:
        print(f"numa: {numa_describe(args.numa_nodes, args.numa_dist)}")
    print(f"runner: the monitor on this terminal (-smp {args.smp} -m {args.mem} "
          f"{args.firmware} {args.machine} {args.accel}); type help, exit or Ctrl-A X to "
          f"leave; log {args.log}", flush=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.log)), exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="smpmm-shell-") as tmpdir:
        status = subprocess.call(qemu_command(args, tmpdir))
    return 0 if status in (EXIT_PASS, 0) else status


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.shell:
        return run_shell(args)
    passed, failed, skipped, problems, run = run_one(args)
    if args.gdb:    # the session ended when gdb said so: no verdict on cases cut short
        print(f"{args.name}: QEMU exit {run.status} after {run.elapsed:.1f}s under gdb; "
              f"{passed} cases had passed, {failed} failed or were cut short; log {args.log}")
        return 0
    when = f", first test at {run.first_test_at:.1f}s" if run.first_test_at is not None else ""
    how = "stopped (the bare kernel idles)" if run.bare_done else f"exit {run.status}"
    print(f"{args.name}: QEMU {how} in {run.elapsed:.1f}s{when}; log {args.log}")
    if args.console and not args.gdb and args.expect == "pass":
        print(times_line(run))
        save_history(run)
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("\nrunner: interrupted; QEMU stopped")
        sys.exit(130)
