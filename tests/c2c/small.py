#!/usr/bin/env python3
"""`make c2c-small`: make c2c's experiments at 4 CPUs (two sockets of two), in under a minute,
with their pictures: what a student runs to see cache lines move. Two boots of the release
kernel from RAM (make lnx) under the c2c plugin, single-threaded TCG with -icount (the same
counts on any host: docs/c2c.md, section 2): bench=gup (gup_test -a -m 4 -j 4, has_pinned
every-pin and if-clear) with bench=c2c_pages (order-0 pairs on 2 and 4 CPUs, the lists on and
off), then c2c_pages again on a kernel built with struct per_cpu_pages unpadded
(-DCONFIG_PCP_PADDING=0: exercise 9's false sharing). Writes OUT/report.txt and
OUT/report-unpadded.txt (the text reports), OUT/summary.txt, and OUT/c2c.html: for every
window a CPU x CPU heat map, the hottest line's owner over time, the hit structs' layouts
coloured by transfers, and the source lines annotated with counts (tests/c2c/pictures.py).
"""
import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pictures  # noqa: E402
import run  # noqa: E402

SMP, SOCKETS = 4, 2
MACHINE = ("2 sockets x 2 cores, no SMT", "%d,sockets=%d,cores=%d,threads=1" % (SMP, SOCKETS, SMP // SOCKETS),
           "sockets=%d,threads=1,insn_ps=455" % SOCKETS)


def boot(image, out, name, cmdline, plugin, timeout=600):
    """One boot at SMP CPUs under the plugin; returns (counts, log)."""
    counts, log = os.path.join(out, name + ".json"), os.path.join(out, name + ".log")
    elf = os.path.join(os.path.dirname(image), "smpmm.elf")
    cmd = [sys.executable, os.path.join(HERE, "..", "runner.py"), "--iso", image, "--smp", str(SMP),
           "--accel", "tcg,thread=single", "--qemu-arg=-icount", "--qemu-arg=shift=0,sleep=off",
           "--qemu-arg=-rtc", "--qemu-arg=clock=vm", "--timeout", str(timeout), "--progress", "none",
           "--log", log, "--name", "c2c-small-" + name, "--expect-cpus", "-1",
           "--cmdline", "test=none timer.hz=1 " + cmdline, "--qemu-arg=-smp", "--qemu-arg=" + MACHINE[1],
           "--qemu-arg=-plugin", "--qemu-arg=%s,out=%s,tick=%s,%s" % (plugin, counts, run.tick_entry(elf), MACHINE[2])]
    print("c2c-small: booting %s (%s): %s" % (name, MACHINE[0], cmdline), flush=True)
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    if not os.path.exists(counts) or not os.path.getsize(counts):
        sys.exit("c2c-small: %s: the plugin wrote nothing (log %s)" % (name, log))
    return counts, log


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--image", required=True, help="the release kernel's RAM-boot image (smpmm.lnx)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--make", default="make")
    args = ap.parse_args()
    t0 = time.time()
    os.makedirs(args.out, exist_ok=True)
    run.SMP = SMP       # run.py's summaries divide by the CPUs of its runs
    build = os.path.join(args.out, "unpadded")
    subprocess.run(args.make.split() + ["--no-print-directory", "BUILD=" + build, "DEBUG_VM=0",
                                        "KDEFS=-DCONFIG_PCP_PADDING=0", "lnx"], stdout=subprocess.DEVNULL, check=True)
    elf = os.path.join(os.path.dirname(args.image), "smpmm.elf")
    uelf = os.path.join(build, "smpmm.elf")
    counts, log = boot(args.image, args.out, "padded", "bench=gup,c2c_pages gup.size_mb=4 c2c.cpus=2,4 "
                       "c2c.pairs=400", args.plugin)
    windows = run.report_of(counts, log, elf, args.out, "report")
    ucounts, ulog = boot(os.path.join(build, "smpmm.lnx"), args.out, "unpadded",
                         "bench=c2c_pages c2c.cpus=2,4 c2c.pairs=400", args.plugin)
    uwindows = run.report_of(ucounts, ulog, uelf, args.out, "report-unpadded")
    summary = ["gup_test -a -m 4 -j %d (times are the cost model's):" % SMP]
    summary += run.gup_lines(windows, 4, MACHINE)
    summary += run.pairs_lines(windows, " (%s)" % MACHINE[0])[0]
    summary += run.pairs_lines(uwindows, ", struct per_cpu_pages unpadded (false sharing)")[0]
    html = pictures.page([("the release kernel (padded struct per_cpu_pages)", counts, log, elf),
                          ("struct per_cpu_pages unpadded (-DCONFIG_PCP_PADDING=0)", ucounts, ulog, uelf)],
                         os.path.join(args.out, "c2c.html"), "c2c at %d CPUs: cache lines that move" % SMP)
    text = "\n".join(summary) + "\npictures: %s\ntext reports: %s/report.txt, %s/report-unpadded.txt\n" % (
        html, args.out, args.out)
    text += "c2c-small: %.0f s\n" % (time.time() - t0)
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
