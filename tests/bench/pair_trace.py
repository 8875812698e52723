#!/usr/bin/env python3
"""
Where the instructions of one order-0 alloc+free pair go: boots a kernel with bench=page
under QEMU's gdb stub, single-steps one iteration of page_bench's pcp_hit loop (pairs_hot())
in the chosen model, and prints every instruction with the function it was inlined from
(addr2line -i), then the count per innermost function. The total is what `page-icount`
measures for that model. Not part of make test; docs/pcp.md groups these counts by step.

usage: tests/bench/pair_trace.py [--build build/release] [--model trylock|irqoff|irqsave|nopcp]
"""
import argparse
import collections
import os
import subprocess
import sys
import tempfile

GDB_SCRIPT = r'''
import gdb, os
gdb.execute("set pagination off")
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
        out.append((pc, gdb.execute("x/i $pc", to_string=True).split(":", 1)[1].strip()))
    gdb.execute("stepi", to_string=True)
    if len(out) > 20000:
        break
with open(os.environ["PT_OUT"], "w") as f:
    for pc, insn in out:
        f.write("%x %s\n" % (pc, insn))
gdb.execute("kill")
'''

CONDS = {"irqoff": "pcp_lock_model == 0 && pcp_enabled", "irqsave": "pcp_lock_model == 1 && pcp_enabled",
         "trylock": "pcp_lock_model == 2 && pcp_enabled", "nopcp": "!pcp_enabled"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build/release", help="where smpmm.iso and smpmm.elf are")
    ap.add_argument("--model", default="trylock", choices=sorted(CONDS))
    ap.add_argument("--port", default="12399")
    args = ap.parse_args()
    iso, elf = os.path.join(args.build, "smpmm.iso"), os.path.join(args.build, "smpmm.elf")
    with tempfile.TemporaryDirectory() as tmp:
        script, out = os.path.join(tmp, "trace.py"), os.path.join(tmp, "trace.txt")
        with open(script, "w") as f:
            f.write(GDB_SCRIPT)
        qemu = subprocess.Popen(
            ["qemu-system-x86_64", "-M", "q35", "-m", "2G", "-smp", "2", "-cdrom", iso,
             "-display", "none", "-serial", "null", "-monitor", "none", "-no-reboot",
             "-fw_cfg", "name=opt/smpmm/cmdline,string=test=none mm.poison=0 bench=page "
             "bench.page_loops=100 bench.windows=1", "-gdb", "tcp::" + args.port, "-S"])
        env = dict(os.environ, PT_ELF=elf, PT_PORT=args.port, PT_COND=CONDS[args.model],
                   PT_OUT=out)
        try:
            subprocess.run(["gdb", "-batch", "-x", script], env=env, timeout=600,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        finally:
            qemu.kill()
            qemu.wait()
        if not os.path.exists(out):
            sys.exit("pair_trace: gdb left no trace")
        lines = [l.split(" ", 1) for l in open(out).read().splitlines()]
    funcs = []  # per instruction: the inline chain, innermost function first (addr2line -i)
    for pc, _ in lines:
        a2l = subprocess.run(["addr2line", "-f", "-i", "-e", elf, "0x" + pc],
                             capture_output=True, text=True).stdout.splitlines()
        funcs.append(a2l[0::2])
    per_func = collections.Counter()
    for (pc, insn), chain in zip(lines, funcs):
        print("%s  %-45s %s" % (pc, insn[:45], " < ".join(chain)))
        per_func[chain[0]] += 1
    print("\n%d instructions in one %s pair; by innermost function:" % (len(lines), args.model))
    for name, n in per_func.most_common():
        print("%5d  %s" % (n, name))


if __name__ == "__main__":
    main()
