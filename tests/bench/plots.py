#!/usr/bin/env python3
"""PNG plots of benchmark results (build/bench/*.json) with gnuplot: scaling curves per PCP
model (and Linux's, after make bench-linux), ours against Linux at 1 and 40 CPUs, PFT
faults/sec per model, gup get time every-pin vs if-clear, boot time vs CPUs; every point with
stddev error bars. A plot whose
data is missing is skipped; without gnuplot nothing is drawn (and that is said)."""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stats  # noqa: E402


def load(outdir, name):
    path = os.path.join(outdir, name + ".json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f).get("metrics", {})


def series_by_model(metrics, prefix):
    """{model: [(cpus, mean, stddev)]} from metrics named bench.model.<prefix><cpus>."""
    out = {}
    for key, m in metrics.items():
        parts = key.split(".", 2)
        if len(parts) < 3 or not parts[2].startswith(prefix) or not m.get("samples"):
            continue
        s = stats.summarise(m["samples"], m.get("higher", True))
        out.setdefault(parts[1], []).append((int(parts[2][len(prefix):]), s["mean"], s["stddev"]))
    return {k: sorted(v) for k, v in out.items()}


def linux_series(outdir, name, prefix):
    """{linux model: [(cpus, mean, stddev)]} from make bench-linux's <name>-linux*.json."""
    out = {}
    for model in ("linux", "linux-noinit"):
        ms = load(outdir, "%s-%s" % (name, model))
        pts = []
        for key, m in ms.items():
            metric = key.split(".", 1)[-1]
            if metric.startswith(prefix) and m.get("samples"):
                st = stats.summarise(m["samples"], m.get("higher", True))
                pts.append((int(metric[len(prefix):]), st["mean"], st["stddev"]))
        if pts:
            out[model] = sorted(pts)
    return out


VS_SIDES = ("ours-trylock", "ours-irqsave", "linux", "linux-noinit")


def vs_linux_plot(outdir):
    """Bars: ours and Linux pairs/s at 1 and 40 CPUs from make bench's interleaved rounds."""
    m = load(outdir, "vs-linux")
    rows = []
    for side in VS_SIDES:
        cells = []
        for cpus in (1, 40):
            key = "vs.%s.cpus%d" % (side, cpus)
            if key not in m or not m[key]["samples"]:
                break
            st = stats.summarise(m[key]["samples"], True)
            cells += ["%f %f" % (st["mean"], st["stddev"])]
        if len(cells) == 2:
            rows.append('"%s" %s\n' % (side, " ".join(cells)))
    if len(rows) < 2:
        return
    with open(os.path.join(outdir, "vs-linux.dat"), "w") as f:
        f.writelines(rows)
    gnuplot("set terminal png size 900,600\nset output 'vs-linux.png'\n"
            "set title 'order-0 alloc+free pairs/s, interleaved boots (Hmean, stddev bars)'\n"
            "set style data histogram\nset style histogram errorbars gap 1 lw 1\n"
            "set style fill solid 0.6 border -1\nset yrange [0:*]\nset grid ytics\n"
            "set ylabel 'pairs/s'\nset key left top\n"
            "plot 'vs-linux.dat' using 2:3:xtic(1) title '1 CPU', '' using 4:5 title '40 CPUs'\n",
            outdir)


def gnuplot(script, outdir):
    proc = subprocess.run(["gnuplot"], input=script, text=True, cwd=outdir,
                          capture_output=True)
    if proc.returncode:
        print("plots: gnuplot failed: " + proc.stderr.strip()[:300])


def line_plot(outdir, name, title, ylabel, series):
    if not series:
        return
    plot = []
    for model, pts in sorted(series.items()):
        dat = "%s-%s.dat" % (name, model)
        with open(os.path.join(outdir, dat), "w") as f:
            f.writelines("%d %f %f\n" % p for p in pts)
        plot.append("'%s' using 1:2:3 with yerrorlines title '%s'" % (dat, model))
    gnuplot("set terminal png size 900,600\nset output '%s.png'\nset title '%s'\n"
            "set xlabel 'CPUs'\nset ylabel '%s'\nset key left top\nset grid\nset yrange [0:*]\n"
            "plot %s\n" % (name, title, ylabel, ", ".join(plot)), outdir)


def gup_plot(outdir):
    m = load(outdir, "gup")
    rows = []
    for mode in ("every_pin", "if_clear"):
        key = "gup.get_us_" + mode
        if key in m and m[key]["samples"]:
            s = stats.summarise(m[key]["samples"], False)
            rows.append("%s %f %f\n" % (mode, s["mean"], s["stddev"]))
    if len(rows) != 2:
        return
    linux = load(outdir, "gup-linux").get("gup.get_us_if_clear")
    if linux and linux["samples"]:
        s = stats.summarise(linux["samples"], False)
        rows.append("linux-6.1 %f %f\n" % (s["mean"], s["stddev"]))
    with open(os.path.join(outdir, "gup.dat"), "w") as f:
        f.writelines(rows)
    gnuplot("set terminal png size 700,500\nset output 'gup.png'\n"
            "set title 'gup\\_test -a: mean per-thread get time (us), has\\_pinned mode'\n"
            "set style fill solid 0.5\nset boxwidth 0.5\nset yrange [0:*]\nset grid ytics\n"
            "plot 'gup.dat' using 0:2:3:xtic(1) with boxerrorbars notitle\n", outdir)


def boot_plot(outdir):
    m = load(outdir, "boot")
    pts = {}
    for key, v in m.items():
        kind, n = key.split(".")[1].rsplit("-", 1)
        st = stats.summarise(v["samples"], False)
        scale = 1000.0 if kind == "online_ms" else 1.0
        pts.setdefault(int(n), {})[kind] = (st["mean"] / scale, st["stddev"] / scale)
    rows = ["%d %f %f %f %f\n" % ((n,) + d["firmware_s"] + d["online_ms"])
            for n, d in sorted(pts.items()) if "firmware_s" in d and "online_ms" in d]
    if not rows:
        return
    with open(os.path.join(outdir, "boot.dat"), "w") as f:
        f.writelines(rows)
    gnuplot("set terminal png size 900,600\nset output 'boot.png'\n"
            "set title 'Boot time (SeaBIOS, TCG; mean, stddev bars)'\nset xlabel 'CPUs'\n"
            "set ylabel 'seconds'\nset key left top\nset grid\nplot 'boot.dat' using 1:2:3 "
            "with yerrorlines title 'QEMU start to kernel entry (firmware + GRUB)', 'boot.dat' "
            "using 1:4:5 with yerrorlines title 'kernel entry to all CPUs online'\n", outdir)


def make_all(outdir):
    if not shutil.which("gnuplot"):
        print("plots: gnuplot is not installed (apt-get install gnuplot-nox); no PNGs")
        return
    scaling = series_by_model(load(outdir, "scaling"), "cpus")
    scaling.update(linux_series(outdir, "scaling", "cpus"))
    line_plot(outdir, "scaling", "order-0 alloc+free pairs per second (Hmean, stddev bars)",
              "pairs/s", scaling)
    vs_linux_plot(outdir)
    line_plot(outdir, "pft", "PFT faults/sec (Hmean, stddev bars)", "faults/s",
              series_by_model(load(outdir, "pft"), "faults/sec-"))
    line_plot(outdir, "locks", "spinlock candidates: acquisitions per second (Hmean, stddev bars)",
              "acquisitions/s",
              series_by_model(load(outdir, "locks"), "cpus"))
    gup_plot(outdir)
    boot_plot(outdir)
    made = sorted(f for f in os.listdir(outdir) if f.endswith(".png"))
    print("plots: " + (", ".join(made) if made else "none (no data)"))


if __name__ == "__main__":
    make_all(sys.argv[1] if len(sys.argv) > 1 else "build/bench")
