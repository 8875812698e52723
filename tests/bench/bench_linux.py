#!/usr/bin/env python3
"""`make bench-linux`: the same alloc+free and pin benchmarks on Debian's Linux, in the same
QEMU with the same CPUs and memory, printing the same BENCH lines (tests/bench/linux/).

Debian's kernel, headers and busybox are fetched on demand with `apt-get download` and
unpacked with `dpkg -x` into build/linux/root: nothing is installed into the system. The
module is built against the unpacked headers with gcc-12 (what Debian built 6.1 with).
Writes build/bench/scaling-linux*.json, page-linux*.json, gup-linux.json and their .txt/.log.

usage: tests/bench/bench_linux.py [--out build/bench] [--only scaling,gup,page-icount]
                                  [--smoke] [--init-on-alloc 1,0]
"""
import argparse
import glob
import lzma
import os
import re
import shutil
import stat
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
SRC = os.path.join(HERE, "linux")
MODULE = "smpmm_linux_bench"
META_PKGS = ["linux-image-amd64", "linux-headers-amd64"]
CC = "gcc-12"

# name: (smp, mem, icount, module args, smpmm_gup=..., smoke module args, smoke gup, timeout)
# As tests/bench/bench.py's CONFIGS: the scaling points of bench=scaling (40-CPU guest, 20000
# pairs per CPU per window), gup_test -a -m 512 -j 40, page_bench pcp_hit under -icount.
CONFIGS = {
    "scaling": (40, "2G", False, "benches=scaling scaling_pairs=20000 windows=5", "",
                "benches=scaling scaling_pairs=400 windows=2 points=1,2,40", "", 2400),
    "gup": (40, "2G", False, "benches=", "40,512,1,1", "benches=", "40,4,1,1", 2400),
    "page-icount": (1, "2G", True, "benches=page page_loops=20000 windows=5", "",
                    "benches=page page_loops=200 windows=2", "", 1800),
}


def log(msg):
    print("bench-linux: " + msg, flush=True)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


# ---- fetching and unpacking Debian's packages (nothing installed) ----

def apt_depends(pkg):
    """Names that `pkg` Depends on (apt-cache depends), without alternatives' markers."""
    out = subprocess.run(["apt-cache", "depends", pkg], capture_output=True, text=True).stdout
    return [m.group(1) for m in re.finditer(r"^\s*\|?Depends: (\S+)", out, re.M)]


def resolve_packages():
    """linux-image-amd64 -> linux-image-6.1.0-N-amd64 and the headers' common + kbuild."""
    if not apt_depends("linux-image-amd64"):
        log("no package lists (or no linux-image-amd64 in them): apt-get update")
        run(["apt-get", "update", "-qq"])
    image = [d for d in apt_depends("linux-image-amd64") if d.startswith("linux-image-")]
    headers = [d for d in apt_depends("linux-headers-amd64") if d.startswith("linux-headers-")]
    if not image or not headers:
        raise SystemExit("bench-linux: apt-cache knows no linux-image-amd64/linux-headers-amd64")
    deps = [d for d in apt_depends(headers[0])
            if d.startswith("linux-headers-") or d.startswith("linux-kbuild-")]
    return [image[0], headers[0]] + deps + ["busybox-static"]


def fetch(work):
    """build/linux/root holds boot/vmlinuz-*, usr/src/linux-headers-*, bin/busybox."""
    root = os.path.join(work, "root")
    stamp = os.path.join(root, ".unpacked")
    if os.path.exists(stamp):
        return root
    pkgs = resolve_packages()
    debs = os.path.join(work, "debs")
    os.makedirs(debs, exist_ok=True)
    log("apt-get download " + " ".join(pkgs))
    # apt drops to the _apt user and warns when it cannot write here; the download works.
    run(["apt-get", "download", "-q"] + pkgs, cwd=debs, stdout=subprocess.DEVNULL)
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    for deb in sorted(glob.glob(os.path.join(debs, "*.deb"))):
        run(["dpkg", "-x", deb, root])
    # The arch headers' Makefile includes /usr/src/linux-headers-*-common/Makefile by
    # absolute path: point it at the unpacked copy (scripts/ and tools/ links are relative).
    for mk in glob.glob(os.path.join(root, "usr/src/linux-headers-*/Makefile")):
        with open(mk) as f:
            text = f.read()
        fixed = text.replace("include /usr/src/", "include %s/usr/src/" % root)
        if fixed != text:
            with open(mk, "w") as f:
                f.write(fixed)
    open(stamp, "w").close()
    return root


def kernel_files(root):
    vmlinuz = sorted(glob.glob(os.path.join(root, "boot/vmlinuz-*")))
    if not vmlinuz:
        raise SystemExit("bench-linux: no boot/vmlinuz-* in " + root)
    release = os.path.basename(vmlinuz[-1])[len("vmlinuz-"):]
    headers = os.path.join(root, "usr/src/linux-headers-" + release)
    return vmlinuz[-1], release, headers


def extract_vmlinux(vmlinuz, out):
    """The ELF kernel inside the bzImage (xz-compressed in Debian's), booted through its PVH
    entry: QEMU loads it directly, sparing the guest's xz decompressor, which takes minutes of
    TCG time on a loaded host. Same kernel code; only the boot stub (and KASLR) is skipped."""
    if newer(out, [vmlinuz]):
        return out
    with open(vmlinuz, "rb") as f:
        data = f.read()
    at = data.find(b"\xfd7zXZ\x00")
    if at < 0:
        raise SystemExit("bench-linux: no xz stream in " + vmlinuz)
    elf = lzma.LZMADecompressor().decompress(data[at:])
    if elf[:4] != b"\x7fELF":
        raise SystemExit("bench-linux: the xz stream in %s is not an ELF kernel" % vmlinuz)
    with open(out + ".tmp", "wb") as f:
        f.write(elf)
    os.replace(out + ".tmp", out)
    return out


# ---- building the module, gup_pin and the initramfs ----

def newer(target, sources):
    return os.path.exists(target) and all(os.path.getmtime(target) >= os.path.getmtime(s)
                                          for s in sources)


def build_module(work, headers):
    mod = os.path.join(work, "mod")
    ko = os.path.join(mod, MODULE + ".ko")
    srcs = [os.path.join(SRC, f) for f in ("Kbuild", MODULE + ".c")]
    if newer(ko, srcs):
        return ko
    if not shutil.which(CC):
        raise SystemExit("bench-linux: %s is missing (apt-get install gcc-12)" % CC)
    os.makedirs(mod, exist_ok=True)
    for s in srcs:
        shutil.copy(s, mod)
    log("building %s.ko against %s" % (MODULE, os.path.basename(headers)))
    proc = subprocess.run(["make", "-s", "-C", headers, "M=" + mod, "CC=" + CC, "modules"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode:
        sys.stdout.write(proc.stdout)
        raise SystemExit("bench-linux: the module did not build")
    return ko


def build_gup_pin(work):
    out = os.path.join(work, "gup_pin")
    src = os.path.join(SRC, "gup_pin.c")
    if not newer(out, [src]):
        run([CC, "-O2", "-static", "-pthread", "-Wall", "-Wextra", "-Werror", "-o", out, src])
    return out


def cpio_newc(entries):
    """A newc cpio archive (what the kernel unpacks as initramfs) from (name, mode, data, rdev)."""
    out = bytearray()
    for ino, (name, mode, data, rdev) in enumerate(entries + [("TRAILER!!!", 0, b"", (0, 0))], 1):
        nm = name.encode() + b"\0"
        fields = (ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1], len(nm), 0)
        out += b"070701" + b"".join(b"%08X" % v for v in fields) + nm
        out += b"\0" * (-len(out) % 4) + data
        out += b"\0" * (-len(out) % 4)
    return bytes(out)


def build_initramfs(work, root, ko, gup_pin):
    out = os.path.join(work, "initramfs.cpio")
    srcs = [ko, gup_pin, os.path.join(SRC, "init"), os.path.join(root, "bin/busybox")]
    if newer(out, srcs):
        return out
    read = lambda p: open(p, "rb").read()  # noqa: E731
    d, x = stat.S_IFDIR | 0o755, stat.S_IFREG | 0o755
    entries = [(n, d, b"", (0, 0)) for n in ("bin", "dev", "proc", "sys")]
    entries += [("dev/console", stat.S_IFCHR | 0o600, b"", (5, 1)),
                ("bin/busybox", x, read(os.path.join(root, "bin/busybox")), (0, 0)),
                ("init", x, read(os.path.join(SRC, "init")), (0, 0)),
                ("gup_pin", x, read(gup_pin), (0, 0)),
                (MODULE + ".ko", stat.S_IFREG | 0o644, read(ko), (0, 0))]
    with open(out, "wb") as f:
        f.write(cpio_newc(entries))
    return out


def prepare(work):
    """Everything a boot needs: (vmlinuz, initramfs, release)."""
    root = fetch(work)
    vmlinuz, release, headers = kernel_files(root)
    ko = build_module(work, headers)
    vmlinux = extract_vmlinux(vmlinuz, os.path.join(work, "vmlinux-" + release))
    return vmlinux, build_initramfs(work, root, ko, build_gup_pin(work)), release


# ---- one boot ----

def host_tsc_mhz():
    """The host's TSC frequency, which TCG gives the guest as is (None if unknown)."""
    try:
        with open("/proc/cpuinfo") as f:
            return float(re.search(r"^cpu MHz\s*:\s*([\d.]+)", f.read(), re.M).group(1))
    except (OSError, AttributeError, ValueError):
        return None


def host_lpj(hz=250):
    """loops_per_jiffy for lpj= (Debian's CONFIG_HZ=250): TSC cycles per jiffy."""
    mhz = host_tsc_mhz()
    return int(mhz * 1e6 / hz) if mhz else None


def boot(files, smp, mem, icount, modargs, gup, extra, logpath, timeout):
    """Boot Linux once; return (metrics as bench.collect gives them, ok, seconds, marks)."""
    kernel, initramfs, _ = files
    # tsc=reliable skips the TSC warp check that every AP runs against CPU 0 at bring-up, and
    # lpj= the delay-loop calibration on each AP: both spin two vCPUs against each other,
    # which on 2 loaded host cores took 2 of a 40-CPU boot's 3 minutes. Neither touches mm.
    lpj = host_lpj()
    words = ["console=ttyS0", "quiet", "panic=-1", "printk.time=0", "tsc=reliable"]
    words += (["lpj=%d" % lpj] if lpj and not icount else []) + extra.split()
    words += ["%s.%s" % (MODULE, a) for a in modargs.split()]
    if gup:
        words.append("smpmm_gup=" + gup)
    # As tests/runner.py starts ours: q35, TCG (multi-threaded unless -icount), QEMU's CPU.
    cmd = ["qemu-system-x86_64", "-M", "q35", "-m", mem, "-smp", str(smp), "-accel", "tcg",
           "-display", "none", "-serial", "stdio", "-monitor", "none", "-no-reboot",
           "-kernel", kernel, "-initrd", initramfs, "-append", " ".join(words)]
    if icount:
        cmd += ["-icount", "shift=0"]
    start = time.monotonic()
    marks = {}
    with open(logpath, "wb") as f:
        f.write(("# " + " ".join(cmd) + "\n").encode())
        f.flush()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        for raw in proc.stdout:
            f.write(raw)
            for key, text in BOOT_MARKS:
                if key not in marks and text in raw:
                    marks[key] = time.monotonic() - start
        proc.wait()
        timer.cancel()
        f.write(("# wall seconds: %s\n" % ", ".join("%s %.1f" % (k, v) for k, v in
                                                    sorted(marks.items(), key=lambda x: x[1])))
                .encode())
    took = time.monotonic() - start
    metrics, _ = bench.collect(logpath)
    return metrics, "done" in marks and bool(metrics), took, marks


# Wall-clock marks in a boot's log: kernel entry, /init, the module loaded, the last line.
BOOT_MARKS = [("kernel", b"Linux version"), ("init", b"linux-bench: "),
              ("module", b"smpmm_linux_bench: benches"), ("done", b"LINUX-BENCH: ok")]


def model_name(init_on_alloc):
    """Metric prefix: 'linux' is Debian's default (init_on_alloc=1: every page is zeroed)."""
    return "linux" if init_on_alloc == "1" else "linux-noinit"


def run_config(files, name, smoke, outdir, init_on_alloc="1", points=None, windows=None,
               tag="", timeout=None):
    smp, mem, icount, modargs, gup, s_modargs, s_gup, config_timeout = CONFIGS[name]
    timeout = timeout or config_timeout
    model = model_name(init_on_alloc)
    modargs = (s_modargs if smoke else modargs) + " model=" + model
    if points:
        modargs += " points=" + points
    if windows:
        modargs += " windows=%d" % windows
    logpath = os.path.join(outdir, "%s-%s%s.log" % (name, model, tag))
    metrics, ok, took, marks = boot(files, smp, mem, icount, modargs, s_gup if smoke else gup,
                                    "init_on_alloc=" + init_on_alloc, logpath, timeout)
    print("bench %-26s %5.1f s (%.0f s to /init), %d metrics%s" % (
        "linux-" + name + "-" + model + tag, took, marks.get("init", 0), len(metrics),
        "" if ok else " (FAILED: see " + logpath + ")"), flush=True)
    return metrics, ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "linux"))
    ap.add_argument("--only", default="")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--init-on-alloc", default="1,0",
                    help="boot each configuration with these init_on_alloc= values")
    ap.add_argument("--prepare-only", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    files = prepare(args.work)
    log("Linux %s ready: %s, %s" % (files[2], files[0], files[1]))
    if args.prepare_only:
        return 0
    only = [n for n in args.only.split(",") if n]
    passed = failed = 0
    for name in CONFIGS:
        if only and name not in only:
            continue
        # The pin path does not allocate: one boot with Debian's default is enough.
        inits = ["1"] if name == "gup" else args.init_on_alloc.split(",")
        for init in inits:
            metrics, ok = run_config(files, name, args.smoke, args.out, init)
            model = model_name(init)
            base = name.split("-")[0]
            out = "%s-%s" % (name, model) if name != "gup" else "gup-linux"
            ms = {k.split(".", 1)[0] + "." + k.split(".", 2)[-1] if base != "gup" else k: v
                  for k, v in metrics.items()}
            bench.write_results(args.out, out, ms, args.smoke)
            passed += ok
            failed += not ok
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
