#!/usr/bin/env python3
"""
Where the instructions of one order-0 alloc+free pair go: boots a kernel with bench=page in
the chosen lock model (pcp.lock=) under QEMU's gdb stub, single-steps one iteration of
page_bench's pcp_hit loop (pairs_hot()), and prints every instruction with the function it was
inlined from (addr2line -i), then the count per innermost function. The total is what
`page-icount` measures for that model. Not part of make test; docs/results.md groups these
counts by step.

With --pages it prints instead the pages the pair's loads and stores touch (each one a TLB
entry), and which of them would evict each other in a direct-mapped TLB of 64, 128 or 256
entries (index: virtual page number mod size), which is what QEMU's soft TLB is
(docs/bench.md, "QEMU's soft TLB").

With --functions it prints the functions the allocation and the free of the pair run (every
name of every instruction's inline chain), with the file each is defined in.

With --check (`make fastpath-check`, part of `make test`):
  * guards, not goals: the trylock pair at most MAX_INSNS instructions and MAX_PAGES pages;
    the irqsave and irqoff pairs above it by no more than their interrupt-flag instructions
    (those inlined from arch_irq_save() and arch_irq_restore(): the price of the model) and
    DISPATCH_PER_PAIR (the run-time choice of the model, which tests trylock first);
  * the reading lists of docs/pcp.md measured: list (a) must name every function the
    allocation and the free of the pair run, in each lock model of the release build and in
    the trylock model of the debug build `make run` uses (--debug-build); list (b) every
    function of mm/ and kernel/ a remote drain runs, in each model, in a debug and a release
    build of the host harness compiled with -finstrument-functions (tests/host/fn_trace.c:
    --fntrace-builds). Before the lists, the name check must fail on list (a) with one traced
    name taken out (a check that cannot fail is no check).

usage: tests/bench/pair_trace.py [--build build/release] [--model trylock|irqoff|irqsave|nopcp]
                                 [--smp N] [--pages | --functions | --check]
                                 [--debug-build build] [--fntrace-builds build/host]
"""
import argparse
import bisect
import collections
import os
import re
import subprocess
import sys
import socket
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import runner  # noqa: E402

GDB_SCRIPT = r'''
import gdb, os, re
gdb.execute("set pagination off")


def reg(name):
    return int(gdb.parse_and_eval("(long)$" + name)) & 0xffffffffffffffff


def data_addresses(insn):
    """The addresses insn (AT&T syntax, about to run) loads or stores: its memory operand
    (disp(base,index,scale), %gs:disp, or a rip-relative one gdb resolved in a comment) and
    the stack slot of a push, pop, call or ret."""
    op, _, args = insn.partition(" ")
    out = []
    if op.startswith(("lea", "nop")):
        return out
    m = re.search(r"# (0x[0-9a-f]+)", args)
    if m:
        out.append(int(m.group(1), 16))
    else:
        for m in re.finditer(r"(%gs:)?(-?0x[0-9a-f]+|-?\d+)?\((%\w+)?(?:,(%\w+))?(?:,(\d))?\)", args):
            ea = int(m.group(2), 0) if m.group(2) else 0
            ea += reg(m.group(3)[1:]) if m.group(3) else 0
            ea += reg(m.group(4)[1:]) * int(m.group(5) or 1) if m.group(4) else 0
            ea += reg("gs_base") if m.group(1) else 0
            out.append(ea & 0xffffffffffffffff)
        m = re.search(r"%gs:(0x[0-9a-f]+)(?![0-9a-fx(])", args)
        if m:
            out.append((int(m.group(1), 16) + reg("gs_base")) & 0xffffffffffffffff)
    if op.startswith(("push", "pop", "call", "ret")):
        out.append(reg("rsp") - (8 if op.startswith(("push", "call")) else 0))
    return out

gdb.execute("file " + os.environ["PT_ELF"])
gdb.execute("target remote :" + os.environ["PT_PORT"])
gdb.execute("hbreak pairs_hot")
gdb.execute("condition 1 " + os.environ["PT_COND"])
gdb.execute("continue")
gdb.execute("delete")
gdb.execute("hbreak alloc_pages_node")
gdb.execute("continue")        # the warm-up allocation before the timed loop
gdb.execute("continue")        # the loop's first pair
start = int(gdb.parse_and_eval("$pc"))
out = []
while True:
    pc = int(gdb.parse_and_eval("$pc"))
    if out and pc == start:
        break
    if not out or out[-1][0] != pc:    # a stepped branch may be shown twice
        insn = gdb.execute("x/i $pc", to_string=True).split(":", 1)[1].strip()
        out.append((pc, insn, data_addresses(insn)))
    gdb.execute("stepi", to_string=True)
    if len(out) > 20000:
        break
with open(os.environ["PT_OUT"], "w") as f:
    for pc, insn, eas in out:
        f.write("%x %s @@%s\n" % (pc, insn, ",".join("%x" % ea for ea in eas)))
gdb.execute("kill")
'''

# The boot's lock model (fixed for the allocator's life: pcp.lock=) and when to stop: the page
# bench's pcp_hit loop with the lists on, or (nopcp) its buddy-only series after.
BOOT_MODEL = {"irqoff": "irqoff", "irqsave": "irqsave", "trylock": "trylock", "nopcp": "trylock"}
CONDS = {"irqoff": "pcp_enabled", "irqsave": "pcp_enabled", "trylock": "pcp_enabled",
         "nopcp": "!pcp_enabled"}


# The trylock order-0 pair's guards (docs/pcp.md, docs/results.md): the instructions of the pair
# in Linux v6.1's shape (262 at the refactor of issue 30, against Linux 6.1's own 705 in the
# same QEMU; the 130 target of the fast-path era is retired), and the pages its loads and
# stores touch (9 then). A guard fails on a regression; it is not a target to bend code for.
MAX_INSNS, MAX_PAGES = 280, 12

# The bench's own loop, which calls the pair: not part of either list.
BENCH_FUNCS = {"pairs_hot"}
# Where docs/pcp.md's reading lists are, and which headings start them.
PCP_DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))), "docs", "pcp.md")
LIST_A, LIST_B = "### Reading list (a)", "### Reading list (b)"
SOURCE_DIRS = ("mm", "kernel", "arch", "tests/host/shim")

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def trace(build, model, smp, port):
    """Single-step one pair; returns [(pc, instruction, [addresses it loads or stores])]."""
    iso, elf = os.path.join(build, "smpmm.iso"), os.path.join(build, "smpmm.elf")
    with tempfile.TemporaryDirectory() as tmp:
        script, out = os.path.join(tmp, "trace.py"), os.path.join(tmp, "trace.txt")
        with open(script, "w") as f:
            f.write(GDB_SCRIPT)
        run_args = runner.parse_args([  # the machine every target boots (tests/runner.py)
            "--iso", iso, "--smp", smp, "--mem", "2G", "--gdb", "--gdb-port", port,
            "--log", os.path.join(tmp, "serial.log"), "--cmdline",
            "test=none mm.poison=0 bench=page bench.page_loops=100 bench.windows=1 pcp.lock="
            + BOOT_MODEL[model]])
        qemu = subprocess.Popen(runner.qemu_command(run_args, tmp), stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        env = dict(os.environ, PT_ELF=elf, PT_PORT=port, PT_COND=CONDS[model], PT_OUT=out)
        try:
            subprocess.run(["gdb", "-batch", "-x", script], env=env, timeout=600,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        finally:
            qemu.kill()
            qemu.wait()
        if not os.path.exists(out):
            sys.exit("pair_trace: gdb left no trace")
        traced = [l.split(" ", 1) for l in open(out).read().splitlines()]
    return [(pc, rest.rsplit(" @@", 1)[0],
             [int(a, 16) for a in rest.rsplit(" @@", 1)[1].split(",") if a])
            for pc, rest in traced]


def inline_chains(elf, steps):
    """Per instruction: its addr2line -i chain, innermost function first."""
    out = []
    for pc, _, _ in steps:
        a2l = subprocess.run(["addr2line", "-f", "-i", "-e", elf, "0x" + pc],
                             capture_output=True, text=True).stdout.splitlines()
        out.append(a2l[0::2])
    return out


FLAG_FUNCS = ("arch_irq_save", "arch_irq_restore")
# What the run-time choice of the lock model (mm/pcp.h pcp_lock(), pcp_unlock(), one if-chain
# on zone->pcp_lock with trylock tested first) may cost the other two models on top of their
# interrupt-flag instructions: a further load, compare and branch or two on each take and each
# release, 6 per hold, two holds per pair.
DISPATCH_PER_PAIR = 12
NOT_FLAGS = ("ret", "jmp", "call")     # a tail the compiler shared with the restore: not its


def pair_functions(elf, steps):
    """The functions (every name of each inline chain) the allocation and the free of one
    traced pair run: (alloc, free). The trace starts in alloc_pages_node(); back in
    pairs_hot(), the loop calls __free_pages() (which may go on by a tail jump), then
    inlines alloc_pages() (its names count for the allocation) before the next call."""
    alloc, free, phase = set(), set(), "alloc"
    for chain in inline_chains(elf, steps):
        if chain[-1] in BENCH_FUNCS:
            if "alloc_pages" in chain:
                alloc |= set(chain) - BENCH_FUNCS
            else:
                phase = "free"
            continue
        (alloc if phase == "alloc" else free).update(chain)
    return alloc, free


def defined_in(names, root=os.path.dirname(os.path.dirname(PCP_DOC))):
    """{name: the file that defines it}: a function's body or a macro's #define, from the
    sources (declarations are not definitions)."""
    found = {}
    for d in SOURCE_DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            for f in sorted(files):
                if not f.endswith((".c", ".h")):
                    continue
                text = open(os.path.join(dirpath, f), errors="replace").read()
                for name in names - set(found):
                    if re.search(r"^#\s*define\s+%s\(|^[A-Za-z_][^;{}()]*\b%s\([^;{}]*\)\s*\{"
                                 % (name, name), text, re.M):
                        found[name] = os.path.relpath(os.path.join(dirpath, f), root)
    return found


def doc_section(heading, text=None):
    """The text of docs/pcp.md from heading to the next heading of its level or above."""
    text = open(PCP_DOC).read() if text is None else text
    start = text.index(heading)
    end = re.search(r"^#{1,3} ", text[start + len(heading):], re.M)
    return text[start:start + len(heading) + end.start()] if end else text[start:]


def unnamed(section, names):
    """The names a reading list does not name (as a word: `name()`, `name`)."""
    return sorted(n for n in names if not re.search(r"(?<![\w])%s(?![\w])" % re.escape(n),
                                                    section))


def fntrace(build_dir, variant, model):
    """Function names of mm/ and kernel/ a remote drain runs: tests/host/fn_trace.c."""
    binary = os.path.join(build_dir, variant, "mmtest")
    out = subprocess.run([binary, "--fn-trace", "drain-" + model], capture_output=True,
                         text=True)
    if out.returncode:
        sys.exit("pair_trace: %s --fn-trace drain-%s failed: %s" % (binary, model, out.stderr))
    syms = collections.defaultdict(set)
    for line in subprocess.run(["nm", binary], capture_output=True, text=True).stdout.splitlines():
        f = line.split()
        if len(f) == 3:
            syms[int(f[0], 16)].add(f[2])
    lines = out.stdout.split()
    anchor = next(a for a, n in syms.items() if "fn_trace_main" in n)
    offset = int(lines[1], 16) - anchor
    names = set()
    for a in lines[2:]:
        names |= {n.split(".")[0] for n in syms.get(int(a, 16) - offset, {"?" + a})}
    return names


def list_cases(name, section, names):
    """One verdict: section names every one of names."""
    missing = unnamed(section, names)
    return (name, len(missing), 0, "names missing from docs/pcp.md: %s" % " ".join(missing)
            if missing else "of %d traced, every one named" % len(names))


def check(build, port, debug_build, fntrace_builds):
    """KTAP-like verdicts for the guards and the reading lists; returns the number failed."""
    elf = os.path.join(build, "smpmm.elf")
    steps = trace(build, "trylock", "2", port)
    pages = {ea >> 12 for _, _, eas in steps for ea in eas}
    cases = [("fastpath_trylock_pair_at_most_%d_instructions" % MAX_INSNS, len(steps),
              MAX_INSNS, "instructions"),
             ("fastpath_trylock_pair_at_most_%d_pages" % MAX_PAGES, len(pages), MAX_PAGES,
              "pages (tests/bench/pair_trace.py --pages lists them)")]
    hit = {"release trylock": pair_functions(elf, steps)}
    for model in ("irqsave", "irqoff"):
        other = trace(build, model, "2", free_port())
        chains = inline_chains(elf, other)
        flags = sum(1 for (_, insn, _), chain in zip(other, chains)
                    if set(chain) & set(FLAG_FUNCS) and not insn.startswith(NOT_FLAGS))
        cases.append(("fastpath_%s_above_trylock_by_at_most_its_flag_instructions_and_dispatch"
                      % model, len(other) - len(steps), flags + DISPATCH_PER_PAIR,
                      "instructions above trylock (%d in all; %d inlined from %s, and %d for "
                      "the model's dispatch)" % (len(other), flags, " and ".join(FLAG_FUNCS),
                                                  DISPATCH_PER_PAIR)))
        hit["release " + model] = pair_functions(elf, other)
    if debug_build:
        delf = os.path.join(debug_build, "smpmm.elf")
        hit["debug trylock"] = pair_functions(delf, trace(debug_build, "trylock", "2",
                                                          free_port()))
    list_a = doc_section(LIST_A)
    alloc, free = hit["release trylock"]
    planted = sorted(alloc)[0]     # the check must fail without one traced name
    cut = re.sub(r"(?<![\w])%s(?![\w])" % re.escape(planted), "", list_a)
    cases.append(("reading_list_check_fails_on_an_unnamed_function", int(not unnamed(cut, alloc)),
                  0, "list (a) without `%s`: reported missing" % planted))
    for what, (alloc, free) in hit.items():
        tag = what.replace(" ", "_")
        cases.append(list_cases("reading_list_a_names_the_%s_allocation" % tag, list_a, alloc))
        cases.append(list_cases("reading_list_a_names_the_%s_free" % tag, list_a, free))
    if fntrace_builds:
        list_b = doc_section(LIST_B)
        for variant in ("fntrace", "fntrace-release"):
            for model in ("trylock", "irqsave", "irqoff"):
                names = fntrace(fntrace_builds, variant, model)
                cases.append(list_cases("reading_list_b_names_the_%s_%s_remote_drain" % (
                    variant.replace("-", "_"), model), list_b, names))
    failed = 0
    for i, (name, got, limit, what) in enumerate(cases, 1):
        ok = got <= limit and (got > 0 or "above" in name or "reading_list" in name)
        failed += not ok
        print("%s %d %s: %d %s" % ("ok" if ok else "not ok", i, name, got, what))
    print("%d passed, %d failed, 0 skipped" % (len(cases) - failed, failed))
    return failed


def print_functions(elf, steps):
    """The pair's functions, allocation then free, each with its file; then the counts."""
    alloc, free = pair_functions(elf, steps)
    where = defined_in(alloc | free)
    for what, names in (("allocation", alloc), ("free", free)):
        files = {where.get(n, "?") for n in names}
        print("%s: %d functions in %d files" % (what, len(names), len(files)))
        for n in sorted(names, key=lambda n: (where.get(n, "?"), n)):
            print("  %-28s %s" % (n, where.get(n, "?")))


def image_symbols(elf):
    """(address, name) of the kernel image's symbols, sorted, and its sections' ranges."""
    syms, ranges = [], []
    for line in subprocess.run(["nm", "-n", elf], capture_output=True, text=True).stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] not in "aA":
            syms.append((int(f[0], 16), f[2]))
    for line in subprocess.run(["readelf", "-S", "-W", elf], capture_output=True,
                               text=True).stdout.splitlines():
        f = line.replace("[ ", "[").split()
        if len(f) > 7 and f[0].startswith("[") and "A" in f[7]:
            ranges.append((int(f[3], 16), int(f[3], 16) + int(f[5], 16)))
    return syms, ranges


def print_pages(elf, eas, ninsns, model):
    """Pages touched, with what lives there, and collisions in direct-mapped TLBs."""
    syms, ranges = image_symbols(elf)
    addrs = [a for a, _ in syms]
    pages, where = collections.Counter(), {}
    for insn_eas in eas:
        for ea in insn_eas:
            pages[ea >> 12] += 1
            if any(a <= ea < b for a, b in ranges):
                i = bisect.bisect_right(addrs, ea) - 1
                where.setdefault(ea >> 12, set()).add(syms[i][1])
    print("%d instructions, %d data accesses, %d pages in one %s pair:" % (
        ninsns, sum(pages.values()), len(pages), model))
    print("%-18s %8s %5s %5s %5s  %s" % ("page", "accesses", "i64", "i128", "i256", "what"))
    for vpn, n in pages.most_common():
        what = ", ".join(sorted(where[vpn])[:4]) if vpn in where else "outside the image (direct map)"
        print("%-18x %8d %5d %5d %5d  %s" % (vpn << 12, n, vpn % 64, vpn % 128, vpn % 256, what))
    for size in (64, 128, 256):
        sets = collections.defaultdict(list)
        for vpn in pages:
            sets[vpn % size].append("%x" % (vpn << 12))
        clash = {i: v for i, v in sets.items() if len(v) > 1}
        print("direct-mapped TLB of %d entries: %s" % (size, "; ".join(
            "index %d: %s" % (i, " ".join(v)) for i, v in sorted(clash.items())) or "no collisions"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build/release", help="where smpmm.iso and smpmm.elf are")
    ap.add_argument("--model", default="trylock", choices=sorted(CONDS))
    ap.add_argument("--port", help="gdb stub port (default: a free one)")
    ap.add_argument("--smp", default="2", help="CPUs of the guest (the pair runs on CPU 0)")
    ap.add_argument("--pages", action="store_true",
                    help="print the pages the pair touches and their TLB collisions")
    ap.add_argument("--functions", action="store_true",
                    help="print the functions the allocation and the free run, and their files")
    ap.add_argument("--check", action="store_true",
                    help="the guards (MAX_INSNS, MAX_PAGES, the models' flag instructions) and "
                    "docs/pcp.md's reading lists")
    ap.add_argument("--debug-build", help="--check: also list (a) against this debug build's pair")
    ap.add_argument("--fntrace-builds", help="--check: list (b) from the fntrace host builds here")
    args = ap.parse_args()
    elf = os.path.join(args.build, "smpmm.elf")
    if args.check:
        sys.exit(1 if check(args.build, args.port or free_port(), args.debug_build,
                            args.fntrace_builds) else 0)
    steps = trace(args.build, args.model, args.smp, args.port or free_port())
    lines = [(pc, insn) for pc, insn, _ in steps]
    if args.functions:
        print_functions(elf, steps)
        return
    if args.pages:
        print_pages(elf, [eas for _, _, eas in steps], len(lines), args.model)
        return
    funcs = inline_chains(elf, steps)
    per_func = collections.Counter()
    for (pc, insn), chain in zip(lines, funcs):
        print("%s  %-45s %s" % (pc, insn[:45], " < ".join(chain)))
        per_func[chain[0]] += 1
    print("\n%d instructions in one %s pair; by innermost function:" % (len(lines), args.model))
    for name, n in per_func.most_common():
        print("%5d  %s" % (n, name))


if __name__ == "__main__":
    main()
