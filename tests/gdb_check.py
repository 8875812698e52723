#!/usr/bin/env python3
"""`make gdb-check` (part of make test): gdb can unwind the allocator of the debug kernel.

Boots build/smpmm.iso (the DEBUG_VM build `make test` uses) at 2 CPUs under QEMU's gdb stub,
stops in a test case with a hardware breakpoint (so nothing of the boot is caught), then breaks
in each path of STOPS on that CPU and checks its `bt`: every frame named (no `??`), the case's
own function and kmain among them. That needs unwind tables in the ELF (the Makefile's
-fno-asynchronous-unwind-tables with -g gives .debug_frame; linker.ld discards .eh_frame), so
this fails when they are dropped. docs/debugging.md is the recipe a person follows.
Ends with `N passed, N failed`.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "bench"))
import runner  # noqa: E402
from pair_trace import free_port  # noqa: E402

# The names this test stops at, in one place (mm/page_alloc.c may rename them; docs/debugging.md
# names the same functions). CASE: the test= filter of one case that allocates order-0 pages
# from, frees them to and drains this CPU's per-CPU list; its function is the part after
# the dot.
CASE = "mm_pcp.mm_pcp_batch_high_rules"
STOPS = [
    ("order-0 allocation from this CPU's list", "rmqueue_pcplist"),
    ("order-0 allocation, the list refilled", "rmqueue_bulk"),
    ("order-0 free to the per-CPU list", "free_unref_page_commit"),
    ("drain of this CPU's list", "drain_pages_zone"),
]
OUTERMOST = "kmain"

GDB_SCRIPT = r'''
import gdb, json, os
gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("file " + os.environ["GC_ELF"])
gdb.execute("target remote 127.0.0.1:" + os.environ["GC_PORT"])
out = {"stops": []}
gdb.execute("hbreak " + os.environ["GC_CASE_FN"])   # the kernel is not loaded yet: hardware
gdb.execute("continue")
out["case_frame"] = gdb.selected_frame().name()
cpu = gdb.selected_thread().num
gdb.execute("delete")
for fn in json.loads(os.environ["GC_STOPS"]):
    stop = {"function": fn}
    out["stops"].append(stop)
    try:
        bp = gdb.Breakpoint(fn)
        if bp.pending or not bp.locations:
            raise gdb.error(f"no function {fn} in the ELF")
        bp.thread = cpu                 # this CPU only: the case's own call
        gdb.execute("continue")
        stop.update(frame=gdb.selected_frame().name(), bt=gdb.execute("bt", to_string=True))
        bp.delete()
    except gdb.error as e:
        stop["error"] = str(e)
        break
with open(os.environ["GC_OUT"], "w") as f:
    json.dump(out, f)
gdb.execute("kill")
'''


def frames(bt):
    """The `#N ...` lines of a backtrace, one per frame (inlined frames included)."""
    return [line for line in bt.splitlines() if line.startswith("#")]


def frame_function(line):
    """`#3  0xffff... in name (args...)` or `#0  name (args...)`: the name."""
    words = line.split()
    return words[3] if len(words) > 3 and words[2] == "in" else words[1] if len(words) > 1 else ""


def run_gdb(args, port, tmp):
    out = os.path.join(tmp, "gdb.json")
    script = os.path.join(tmp, "check.py")
    with open(script, "w") as f:
        f.write(GDB_SCRIPT)
    env = dict(os.environ, GC_ELF=args.elf, GC_PORT=str(port), GC_OUT=out,
               GC_CASE_FN=CASE.split(".", 1)[1], GC_STOPS=json.dumps([fn for _, fn in STOPS]))
    res = subprocess.run(["gdb", "-batch", "-nx", "-x", script], env=env, capture_output=True,
                         text=True, timeout=args.timeout)
    if not os.path.exists(out):
        return None, res.stdout + res.stderr
    with open(out) as f:
        return json.load(f), res.stdout + res.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iso", default="build/smpmm.iso")
    ap.add_argument("--elf", default=None, help="default: smpmm.elf beside the ISO")
    ap.add_argument("--log", default="build/gdb_check.log")
    ap.add_argument("--timeout", type=float, default=300)
    args = ap.parse_args()
    args.elf = args.elf or os.path.join(os.path.dirname(args.iso), "smpmm.elf")
    port = free_port()
    qargs = runner.parse_args(["--iso", args.iso, "--smp", "2", "--mem", "1G", "--gdb",
                               "--gdb-port", port, "--cmdline", f"test={CASE}",
                               "--log", args.log])
    passed = failed = 0

    def check(ok, what, detail=""):
        nonlocal passed, failed
        print(f"{'ok' if ok else 'not ok'} {what}" + ("" if ok or not detail else f"\n{detail}"))
        passed += bool(ok)
        failed += not ok

    os.makedirs(os.path.dirname(os.path.abspath(args.log)), exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="smpmm-gdb-") as tmp, open(args.log, "wb") as log:
        qemu = subprocess.Popen(runner.qemu_command(qargs, tmp), stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT)
        try:
            result, gdb_out = run_gdb(args, port, tmp)
        except subprocess.TimeoutExpired:
            result, gdb_out = None, f"gdb did not finish within {args.timeout:.0f} s"
        finally:
            qemu.kill()
            qemu.wait()
    check(result is not None, f"gdb stopped in {CASE}", gdb_out[-2000:])
    for (what, fn), stop in zip(STOPS, (result or {}).get("stops", [])):
        if "error" in stop:
            check(False, f"{what}: gdb stopped in {fn}", f"gdb: {stop['error']} (a renamed "
                  "function? the names are STOPS in tests/gdb_check.py); its output:\n" +
                  gdb_out[-1500:])
            continue
        fr = frames(stop["bt"])
        names = [frame_function(f) for f in fr]
        unnamed = [f for f in fr if " ?? " in f or f.rstrip().endswith("??")]
        bt = "    " + stop["bt"].strip().replace("\n", "\n    ")
        case_fn = CASE.split(".", 1)[1]
        ok = [stop["frame"] == fn, bool(fr) and not unnamed,
              case_fn in names and OUTERMOST in names]
        check(ok[0], f"{what}: gdb stopped in {fn}")
        check(ok[1], f"{what}: bt from {fn} has no ?? frame ({len(fr)} frames)")
        check(ok[2], f"{what}: bt from {fn} reaches {case_fn} and {OUTERMOST}",
              bt if not all(ok) else "")
    print(f"gdb_check: {args.elf}, serial log {args.log}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
