#!/usr/bin/env python3
"""Pictures of a c2c run, for a student to read at a glance: one static HTML page (inline SVG,
no script, no server) beside the text report, with, for each window the plugin measured:

  - a CPU x CPU heat map: how many cache lines moved from which CPU's cache to which;
  - the hottest line's owner over time: which CPU took it, each move a step (red: it was
    Modified there, HITM; blue: a clean copy; amber: an upgrade, the copies invalidated);
  - the layout of the structs whose lines moved (pahole's table, from DWARF by gdb: fields,
    offsets, cache-line boundaries), each field coloured by the transfers its accesses caused;
  - the source lines that caused transfers, annotated with their counts (cg_annotate's way).

The counts are the coherence model's (docs/c2c.md), not timings. Not the text report
(tests/c2c/report.py), which lists every line.

usage: pictures.py --counts PLUGIN.json --log SERIAL.log --elf smpmm.elf --out PAGE.html
                   [--title TEXT] [--windows 1,3] [--check]
"""
import argparse
import html
import json
import math
import os
import re
import subprocess
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from conflict import Names  # noqa: E402
from layout import LINE, field_name, short_type  # noqa: E402
from report import read_console, transfers  # noqa: E402

OUTCOME = {2: ("HITM", "#d62728"), 3: ("clean", "#1f77b4"), 4: ("upgrade", "#e6a000")}
E = html.escape


def heat(v, vmax):
    """White to dark red, on a log scale: 0 is white."""
    if v <= 0 or vmax <= 0:
        return "#ffffff"
    f = math.log1p(v) / math.log1p(vmax)
    r, g, b = 255, int(245 - 200 * f), int(240 - 215 * f)
    if f > 0.75:
        r = int(255 - 110 * (f - 0.75) / 0.25)
    return "#%02x%02x%02x" % (r, max(g, 0), max(b, 0))


def ink(v, vmax):
    return "#ffffff" if vmax and v and math.log1p(v) / math.log1p(vmax) > 0.6 else "#000000"


# ---- the heat map --------------------------------------------------------------------------

def heatmap_svg(pairs, ncpus, sockets):
    """CPU x CPU: rows the CPU the line came from, columns the CPU that took it."""
    m = defaultdict(int)
    for f, t, n in pairs:
        m[(f, t)] = n
    vmax = max(m.values(), default=0)
    scale = max(vmax, 64)       # a handful of transfers stays pale beside a hot window's
    cell = 26 if ncpus <= 8 else 14 if ncpus <= 20 else 9
    left, top = 70, 60
    size = cell * ncpus
    w, h = left + size + 150, top + size + 40
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
           'font-size="11">' % (w, h)]
    out.append('<text x="%d" y="14" font-size="12">to (the CPU that took the line) &#8594;</text>' % left)
    out.append('<text x="12" y="%d" font-size="12" transform="rotate(-90 12 %d)">from (the CPU that had it) '
               '&#8594;</text>' % (top + size, top + size))
    step = 1 if ncpus <= 16 else 4 if ncpus <= 40 else 8
    for c in range(ncpus):
        if c % step == 0:
            out.append('<text x="%d" y="%d" text-anchor="middle">%d</text>' % (left + c * cell + cell / 2, top - 6, c))
            out.append('<text x="%d" y="%d" text-anchor="end">%d</text>' % (left - 6, top + c * cell + cell * 0.7, c))
    for f in range(ncpus):
        for t in range(ncpus):
            v = m.get((f, t), 0)
            x, y = left + t * cell, top + f * cell
            out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#ddd" stroke-width="0.5">'
                       '<title>CPU %d to CPU %d: %d transfers</title></rect>' % (x, y, cell, cell, heat(v, scale), f, t, v))
            if cell >= 26 and v:
                out.append('<text x="%d" y="%d" text-anchor="middle" font-size="9" fill="%s">%s</text>' % (
                    x + cell / 2, y + cell * 0.65, ink(v, scale), short_count(v)))
    if sockets > 1:     # socket boundaries
        for s in range(1, sockets):
            p = s * ncpus // sockets * cell
            out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333" stroke-dasharray="4 2"/>' % (
                left + p, top, left + p, top + size))
            out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333" stroke-dasharray="4 2"/>' % (
                left, top + p, left + size, top + p))
    lx = left + size + 20
    for k in range(6):          # the scale
        v = round(math.expm1(math.log1p(scale) * k / 5))
        out.append('<rect x="%d" y="%d" width="16" height="14" fill="%s" stroke="#999"/>' % (lx, top + k * 18, heat(v, scale)))
        out.append('<text x="%d" y="%d">%s</text>' % (lx + 22, top + k * 18 + 11, short_count(v)))
    out.append('<text x="%d" y="%d">transfers</text>' % (lx, top - 6))
    if sockets > 1:
        out.append('<text x="%d" y="%d" fill="#555">dashes: sockets</text>' % (lx, top + 6 * 18 + 12))
    out.append("</svg>")
    return "\n".join(out)


def short_count(v):
    return "%d" % v if v < 10000 else "%.0fk" % (v / 1000) if v < 10 ** 6 else "%.1fM" % (v / 1e6)


# ---- the hottest line's owner over time -------------------------------------------------------

def timeline_svg(moves, ncpus, total, limit=60):
    """A step line: which CPU last took the line, against modelled time; each move a step
    coloured by its outcome, a dot for a load, a square for a store."""
    shown = moves[:limit]
    if not shown:
        return "<p>(no move recorded)</p>"
    t0, t1 = shown[0][0], shown[-1][0]
    span = max(t1 - t0, 1)
    row = 18 if ncpus <= 8 else 9 if ncpus <= 20 else 6
    left, top, width = 60, 30, 760
    height = row * ncpus
    X = lambda t: left + (t - t0) * width / span
    Y = lambda c: top + c * row + row / 2
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
           'font-size="11">' % (left + width + 30, top + height + 45)]
    for c in range(ncpus):
        if ncpus <= 20 or c % 4 == 0:
            out.append('<text x="%d" y="%d" text-anchor="end">CPU %d</text>' % (left - 6, Y(c) + 4, c))
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/>' % (left, Y(c), left + width, Y(c)))
    owner, x_prev = shown[0][1], X(t0)
    for t, f, to, o, store in shown:
        x = X(t)
        out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#444" stroke-width="1.5"/>' % (
            x_prev, Y(owner), x, Y(owner)))
        name, colour = OUTCOME.get(o, ("?", "#000"))
        out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5">'
                   '<title>%.3f us: CPU %d took it from CPU %d (%s %s)</title></line>' % (
                       x, Y(f), x, Y(to), colour, t / 1e6, to, f, name, "store" if store else "load"))
        if store:
            out.append('<rect x="%.1f" y="%.1f" width="5" height="5" fill="%s"/>' % (x - 2.5, Y(to) - 2.5, colour))
        else:
            out.append('<circle cx="%.1f" cy="%.1f" r="2.8" fill="%s"/>' % (x, Y(to), colour))
        owner, x_prev = to, x
    axis_y = top + height + 14
    out.append('<text x="%d" y="%d">%.2f us</text>' % (left, axis_y, t0 / 1e6))
    out.append('<text x="%d" y="%d" text-anchor="end">%.2f us (modelled time)</text>' % (left + width, axis_y, t1 / 1e6))
    lx = left
    for o in (2, 3, 4):
        out.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d">%s</text>' % (
            lx, axis_y + 12, OUTCOME[o][1], lx + 14, axis_y + 21, OUTCOME[o][0]))
        lx += 90
    out.append('<text x="%d" y="%d">square: a store takes it; dot: a load. %d of %d moves shown</text>' % (
        lx, axis_y + 21, len(shown), total))
    out.append("</svg>")
    return "\n".join(out)


# ---- struct layouts coloured by transfers -------------------------------------------------------

def field_heat(window, names):
    """Per typed object holding moved lines: {holder: {offset in holder: transfers}} from each
    instruction's transfers, shared out among the bytes it began accesses at on that line."""
    per = defaultdict(lambda: defaultdict(float))
    lines = {ln["phys"]: ln for ln in window["lines"]}
    for ln in window["lines"]:
        if "pcs" not in ln:         # (only the hottest lines have their code locations)
            continue
        _, holder = names.describe(ln["phys"])
        if not holder:
            continue
        for k, (pc, acc, x) in enumerate(ln["pcs"]):
            mask = ln["pc_bytes"][k] if k < len(ln.get("pc_bytes", [])) else 0
            offs = [b for b in range(LINE) if mask >> b & 1]
            for b in offs:
                per[holder][ln["phys"] + b - holder[0]] += x / len(offs)
    return per, lines


def layout_html(holder, heatmap, lines, names, nr_lines=2):
    """pahole's table of holder's type, every field with the transfers its accesses caused;
    dark rows are cache-line boundaries with the line's own counts. An array shows, side by
    side in memory, the elements on its nr_lines hottest lines: a line two elements share
    (false sharing) shows as one dark row with both elements' fields under it."""
    start, size, name, ctype = holder
    lay = names.layout
    esize = lay.size(ctype) or size
    is_array = size > esize
    mine = {p: ln for p, ln in lines.items() if start <= p < start + size}
    weight = lambda ln: transfers(ln["n"]) + sum(ln["n"]["upgrade"])
    hottest = sorted(mine, key=lambda p: -weight(mine[p]))[:nr_lines]
    total = sum(weight(ln) for ln in mine.values())
    elems = [None]
    if is_array:
        hit = {int(off // esize) for off in heatmap} | {(p - start) // esize for p in mine}
        elems = sorted({k for p in hottest for k in range(max(p - start, 0) // esize,
                                                           (p + LINE - 1 - start) // esize + 1)
                        if (k + 1) * esize <= size})
    title = "%s (%s)%s" % (E(name), E(ctype), ", %d bytes each" % esize if is_array else "")
    if is_array:
        title += ": %d of its elements were hit; shown, the ones on its %s" % (
            len(hit), "hottest line" if len(hottest) == 1 else "%d hottest lines" % len(hottest))
    rows = []
    for k in elems:
        off0 = (k or 0) * esize
        for f in lay.fields(ctype):
            rows.append((k, f, off0 + f.offset, acc_sum(heatmap, f, off0)))
    vmax = max((r[3] for r in rows), default=0)
    out = ['<table class="layout"><caption>%s; %d moves on its lines</caption>' % (title, total),
           '<tr><th>offset</th><th>size</th><th>field</th><th>transfers</th></tr>']
    cur_line, hidden, cold_lines = None, [], set()

    def flush_hidden():
        if hidden:
            out.append('<tr class="cold"><td colspan="4">&#8942; %d fields (%s .. %s)%s: nothing moved</td></tr>'
                       % (len(hidden), E(hidden[0]), E(hidden[-1]),
                          ", %d cache lines" % len(cold_lines) if len(cold_lines) > 1 else ""))
            hidden.clear()
            cold_lines.clear()

    for k, f, off, v in rows:
        abs_line = (start + off) // LINE
        if abs_line != cur_line:
            cur_line = abs_line
            ln = lines.get(abs_line * LINE)
            if ln:
                flush_hidden()
                n = ln["n"]
                out.append('<tr class="line"><td colspan="4">cache line at %#x: %d transfers (HITM %d), '
                           '%d upgrades, %d CPUs</td></tr>' % (abs_line * LINE, transfers(n), sum(n["hitm"]),
                                                               sum(n["upgrade"]), ln["cpus"]))
        label = field_name(ctype, k, f)
        if v < 0.5 and abs_line * LINE not in lines:
            hidden.append(label)
            cold_lines.add(abs_line)
            continue
        out.append('<tr style="background:%s;color:%s"><td>%d</td><td>%d</td><td>%s</td><td>%s</td></tr>' % (
            heat(v, vmax), ink(v, vmax), f.offset, f.size, E(label), "%.0f" % v if v >= 0.5 else ""))
    flush_hidden()
    out.append("</table>")
    return "\n".join(out)


def acc_sum(heatmap, f, base=0):
    return sum(v for off, v in heatmap.items() if base + f.offset <= off < base + f.offset + max(f.size, 1))


# ---- annotated source ----------------------------------------------------------------------

def source_lines(window, elf_path):
    """{(file, line): [transfers, accesses]} over every instruction the window recorded."""
    pcs = defaultdict(lambda: [0, 0])
    for ln in window["lines"]:
        for pc, acc, x in ln.get("pcs", []):
            pcs[pc][0] += x
            pcs[pc][1] += acc
    if not pcs:
        return {}
    order = sorted(pcs)
    out = subprocess.run(["addr2line", "-e", elf_path] + ["%x" % p for p in order],
                         capture_output=True, text=True).stdout.splitlines()
    src = defaultdict(lambda: [0, 0])
    for pc, where in zip(order, out):
        where = where.split(" (")[0]
        if ":" not in where or where.startswith("??"):
            continue
        path, line = where.rsplit(":", 1)
        try:
            line = int(line)
        except ValueError:
            continue
        rel = os.path.relpath(path, ROOT) if os.path.isabs(path) else path
        src[(rel, line)][0] += pcs[pc][0]
        src[(rel, line)][1] += pcs[pc][1]
    return src


def annotate_html(src, max_files=4, context=2):
    """cg_annotate's view: each file's hot lines with two lines around, counts in the margin."""
    by_file = defaultdict(dict)
    for (f, line), v in src.items():
        by_file[f][line] = v
    files = sorted(by_file, key=lambda f: -sum(v[0] for v in by_file[f].values()))
    files = [f for f in files if sum(v[0] for v in by_file[f].values()) > 0][:max_files]
    if not files:
        return "<p>No instruction the plugin recorded caused a transfer.</p>"
    out = []
    for f in files:
        pre = []
        path = os.path.join(ROOT, f)
        try:
            with open(path, errors="replace") as fh:
                text = fh.read().splitlines()
        except OSError:
            text = []
        hot = by_file[f]
        total = sum(v[0] for v in hot.values())
        vmax = max(v[0] for v in hot.values())
        out.append('<div class="src"><div class="srchead">%s: %d transfers</div>' % (E(f), total))
        show = sorted({n for line, v in hot.items() if v[0] or v[1]
                       for n in range(line - context, line + context + 1) if 1 <= n <= len(text)})
        prev = None
        pre.append("<b>%9s %9s</b>\n" % ("transfers", "accesses"))
        for n in show:
            if prev is not None and n != prev + 1:
                pre.append('<span class="gap">%9s %9s   ...</span>\n' % ("", ""))
            x, a = hot.get(n, [0, 0])
            style = ' style="background:%s;color:%s"' % (heat(x, vmax), ink(x, vmax)) if x else ""
            pre.append('<span%s>%9s %9s %5d  %s</span>\n' % (
                style, x if x else (".") if a else "", a if a else "", n, E(text[n - 1]) if n <= len(text) else ""))
            prev = n
        out.append("<pre>" + "".join(pre) + "</pre></div>")
    return "\n".join(out)


# ---- the page ------------------------------------------------------------------------------

CSS = """
body { font-family: sans-serif; margin: 1.5em; max-width: 1200px; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; border-top: 2px solid #888; padding-top: .6em; }
h3 { font-size: 1em; margin-bottom: .3em; }
.sum { font-family: monospace; white-space: pre-wrap; background: #f6f6f6; padding: .4em; }
table.layout { border-collapse: collapse; font-family: monospace; font-size: 12px; margin: .5em 1em 1em 0;
  display: inline-table; vertical-align: top; }
table.layout td, table.layout th { padding: 1px 8px; text-align: left; }
table.layout tr.line td { background: #333; color: #fff; font-size: 11px; }
table.layout tr.cold td { color: #999; font-style: italic; }
table.layout caption { text-align: left; font-weight: bold; font-family: sans-serif; padding-bottom: 4px; }
.src pre { font-size: 12px; margin: 0; } .srchead { font-weight: bold; margin-top: .8em; }
.gap { color: #999; } .toc li { margin: .15em 0; } .note { color: #555; font-size: .9em; }
"""


def window_title(desc):
    """'pairs lists on, 4 CPUs', 'gup every-pin', a conflict case's name."""
    title = desc.get("case") or desc.get("name", "?")
    if "active" in desc and "case" not in desc:
        title += ", %d CPU%s" % (desc["active"], "s" if desc["active"] != 1 else "")
    return title


def window_html(w, desc, names, elf_path, params, anchor):
    ncpus = params.get("cpus", len(w["cpus"]))
    sockets = params.get("sockets", 1)
    t = w["total"]
    ops = desc.get("ops") or 0
    title = window_title(desc)
    extra = ", ".join("%s %s" % (k, desc[k]) for k in ("plan", "mode", "lists", "active", "model") if k in desc)
    out = ['<h2 id="%s">window %d: %s</h2>' % (anchor, w["window"], E(title))]
    xfer = transfers(t)
    out.append('<div class="sum">%s\ntransfers %d%s (HITM %d, clean %d), upgrades %d; %d CPUs in the window</div>' % (
        E(extra), xfer, " = %.3f per %s" % (xfer / ops, desc.get("op", "operation")) if ops else "",
        sum(t["hitm"]), sum(t["clean"]), sum(t["upgrade"]), len(w["cpus"])))
    out.append("<h3>Which CPU took lines from which</h3>")
    out.append(heatmap_svg(w.get("pairs", []), ncpus, sockets))
    hot = w.get("moves", [])
    if hot and hot[0]["moves"]:
        name, holder = names.describe(hot[0]["phys"])
        ln0 = next((ln for ln in w["lines"] if ln["phys"] == hot[0]["phys"]), None)
        touched = []
        for k, _ in enumerate(ln0.get("pcs", []) if holder and ln0 else []):
            mask = ln0["pc_bytes"][k] if k < len(ln0.get("pc_bytes", [])) else 0
            for b in range(LINE):
                f = names.field(holder, hot[0]["phys"] + b) if mask >> b & 1 else None
                if f and f not in touched:
                    touched.append(f)
        fields = " (" + ", ".join(touched[:4]) + ("..." if len(touched) > 4 else "") + ")" if touched else ""
        total = transfers(ln0["n"]) + sum(ln0["n"]["upgrade"]) if ln0 else len(hot[0]["moves"])
        out.append("<h3>The hottest line's owner over time: %#x, %s%s</h3>" % (hot[0]["phys"], E(name), E(fields)))
        out.append(timeline_svg(hot[0]["moves"], ncpus, total))
    heatm, lines = field_heat(w, names)
    moved = lambda h: sum(transfers(ln["n"]) + sum(ln["n"]["upgrade"]) for p, ln in lines.items()
                          if h[0] <= p < h[0] + h[1])
    holders = sorted(heatm, key=lambda h: -moved(h))[:3]
    holders = [h for h in holders if moved(h) and moved(h) >= 0.02 * (xfer + sum(t["upgrade"]))]
    if holders:
        out.append("<h3>Where the transfers hit: the structs' layouts</h3>")
        out.append('<p class="note">Each field coloured by the transfers of the instructions that touched '
                   'it (an instruction that touched several fields of a line shares its count among them); '
                   'dark rows are cache-line boundaries, with the line\'s own count.</p>')
        for h in holders:
            out.append(layout_html(h, heatm[h], lines, names))
    out.append("<h3>The code that caused them</h3>")
    out.append(annotate_html(source_lines(w, elf_path)))
    return "\n".join(out)


def page(runs, out, title, only=None):
    """One HTML page for runs [(label, counts, log, elf)]: a contents list, then every window
    (only: {(run index, window number)} to keep) of every run."""
    body, toc = [], ['<ul class="toc">']
    for i, (label, counts, log, elf) in enumerate(runs):
        names = Names(elf, log)
        descs, _ = read_console(log)
        params, windows = {}, []
        with open(counts) as f:
            for line in f:
                d = json.loads(line)
                if "params" in d:
                    params = d["params"]
                elif "window" in d and (not only or (i, d["window"]) in only):
                    windows.append(d)
        names.prefetch({ln["phys"] for w in windows for ln in w["lines"] if "pcs" in ln})
        body.append('<h1 id="r%d">%s</h1>' % (i, E(label)))
        if params:
            body.append('<p class="note">%d CPUs on %d sockets, %d-byte lines; every count is the coherence '
                        'model\'s (docs/c2c.md), not a measurement of time. Kernel %s; counts %s.</p>' % (
                            params["cpus"], params["sockets"], params["line"], E(elf), E(counts)))
        toc.append("<li><b>%s</b><ul>" % E(label))
        for w in windows:
            d = descs.get(w["window"], {})
            anchor = "r%dw%d" % (i, w["window"])
            toc.append('<li><a href="#%s">window %d: %s</a> (%d transfers)</li>' % (
                anchor, w["window"], E(window_title(d)), transfers(w["total"])))
            body.append(window_html(w, d, names, elf, params, anchor))
        toc.append("</ul></li>")
    toc.append("</ul>")
    with open(out, "w") as f:
        f.write("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title><style>%s</style>"
                "</head><body>\n<h1>%s</h1>\n%s\n%s\n</body></html>\n" % (
                    E(title), CSS, E(title), "\n".join(toc), "\n".join(body)))
    return out


def check(counts, log, elf, out):
    """make c2c-test's look at the pictures, on the conflict layer's own boot: the page parses,
    every window has its heat map, and the every-pin case's page shows what a student must
    see there (its hottest line mm_struct.flags, red steps, a struct table whose flags row has
    the transfers, the has-pinned write in the annotated source). Prints KTAP-style lines."""
    import html.parser
    descs, _ = read_console(log)
    every = [w for w, d in descs.items() if d.get("case", "").startswith("every_pin_pins_move")]
    page([("conflict layer", counts, log, elf)], out, "c2c-test: the pictures")
    with open(out) as f:
        text = f.read()
    checks = []
    parser = html.parser.HTMLParser()
    try:
        parser.feed(text)
        parser.close()
        checks.append(("c2c_pictures_page_parses", True, "%d bytes" % len(text)))
    except Exception as e:      # noqa: BLE001 (any parse failure fails the check)
        checks.append(("c2c_pictures_page_parses", False, str(e)))
    maps, windows = text.count("Which CPU took lines from which"), len([d for d in descs.values() if "case" in d])
    checks.append(("c2c_pictures_heat_map_per_window", maps == windows, "%d heat maps, %d windows" % (maps, windows)))
    if every:
        page([("every-pin", counts, log, elf)], out + ".every.html", "every-pin", only={(0, every[0])})
        with open(out + ".every.html") as f:
            ev = f.read()
        flags_row = re.search(r"<td>mm_struct\.flags</td><td>(\d+)</td>", ev)
        checks += [
            ("c2c_pictures_every_pin_owner_is_mm_flags", "owner over time: 0x" in ev and "(mm_struct.flags" in ev,
             "the hottest line's title"),
            ("c2c_pictures_every_pin_steps_are_hitm", ev.count('stroke="%s"' % OUTCOME[2][1]) >= 30,
             "%d HITM steps" % ev.count('stroke="%s"' % OUTCOME[2][1])),
            ("c2c_pictures_every_pin_flags_field_hot", bool(flags_row) and int(flags_row.group(1)) > 0,
             "mm_struct.flags row: %s transfers" % (flags_row.group(1) if flags_row else "none")),
            ("c2c_pictures_every_pin_source_annotated", "__atomic_fetch_or(&amp;mm-&gt;flags" in ev,
             "mm/gup.c's write of the flag"),
        ]
    else:
        checks.append(("c2c_pictures_every_pin_window", False, "no every_pin case in %s" % log))
    for i, (name, ok, what) in enumerate(checks, 1):
        print("%s %d %s: %s" % ("ok" if ok else "not ok", i, name, what))
    bad = sum(not ok for _, ok, _ in checks)
    print("%d passed, %d failed" % (len(checks) - bad, bad))
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--counts", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--elf", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--title", default="c2c")
    ap.add_argument("--windows", help="only these windows (comma-separated numbers)")
    ap.add_argument("--check", action="store_true", help="make c2c-test's check, on the conflict "
                    "layer's boot (build/c2c/conflict)")
    args = ap.parse_args()
    if args.check:
        sys.exit(1 if check(args.counts, args.log, args.elf, args.out) else 0)
    only = {(0, int(x)) for x in args.windows.split(",")} if args.windows else None
    print(page([(os.path.basename(args.counts), args.counts, args.log, args.elf)], args.out, args.title, only))


if __name__ == "__main__":
    main()
