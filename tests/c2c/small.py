#!/usr/bin/env python3
"""`make c2c-small`: make c2c's experiments at 4 CPUs (two sockets of two), in under a minute,
with their pictures: what a student runs to see cache lines move. Two boots of the release
kernel from RAM (make lnx) under the c2c plugin, single-threaded TCG with -icount (the same
counts on any host: docs/c2c.md, section 3): bench=gup (gup_test -a -m 4 -j 4, has_pinned
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

SMP = 4


class Small:
    """The 40-core machine of make c2c (tests/c2c/machines/e5-2630v4-40cores.machine, every
    value sourced or assumed with a range) cut to 2 cores per socket: 4 CPUs, 2 sockets."""

    def __init__(self):
        self.m = run.machine.load("e5-2630v4-40cores")
        self.over = {"cores": 2}
        self.name = "2 sockets x 2 cores, no SMT (the E5-2630 v4's latencies)"

    def plugin_args(self):
        return self.m.plugin_args(self.over)

    def qemu_smp(self, cpus=None):
        return "%d,sockets=%d,cores=2,threads=1" % (SMP, self.m.value("sockets"))


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
    mach = Small()
    counts, log = run.boot(args.image, args.out, "padded", "bench=gup,c2c_pages gup.size_mb=4 c2c.cpus=2,4 "
                           "c2c.pairs=400", args.plugin, mach, 600, cpus=SMP)
    windows = run.report_of(counts, log, elf, args.out, "report")
    ucounts, ulog = run.boot(os.path.join(build, "smpmm.lnx"), args.out, "unpadded",
                             "bench=c2c_pages c2c.cpus=2,4 c2c.pairs=400", args.plugin, mach, 600, cpus=SMP)
    uwindows = run.report_of(ucounts, ulog, uelf, args.out, "report-unpadded")
    summary = ["gup_test -a -m 4 -j %d (times are the cost model's):" % SMP]
    summary += run.gup_lines(windows, 4, mach)
    summary += run.pairs_lines(windows, " (%s)" % mach.name)[0]
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
