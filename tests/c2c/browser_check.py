#!/usr/bin/env python3
"""`make c2c-browser-check` (not in make test: installing Chromium takes minutes): render the
pictures page of `make c2c-small` (build/c2c-small/c2c.html) in headless Chromium, as a
student's browser would, the whole page in one screenshot at half scale, and check it is not
blank: enough pixels that are not the page's white, enough distinct colours, and some in
colour (the heat maps, the owner steps, the hot struct fields), not only grey text; and that
the page ended inside the window (its last rows white), so that the whole page was looked at.
The same test of a blank page must say blank, so that the check can fail. The PNG is read
here (zlib and the five PNG row filters), so nothing but Chromium is needed.

usage: browser_check.py --html build/c2c-small/c2c.html --out build/c2c-small/browser
Prints KTAP-style lines and "N passed, N failed"; the screenshot is OUT/c2c.png.
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

# What a page with pictures has and a blank one has not (measured on c2c-small's page,
# 2026-12-05: 14.7% not white, 10,452 colours, 9.1% in colour, at 1000 x 36000):
MIN_INK = 0.03          # pixels not near white
MIN_COLOURS = 256       # distinct colours: anti-aliased grey text alone has far fewer
MIN_COLOURED = 0.01     # pixels whose channels differ by 48 or more (heat map, red steps)
SCALE = 0.5             # device pixels per CSS pixel: a long page in a screenshot we can read


def chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("browser_check: no chromium (make c2c-browser-check installs Debian's)")


def screenshot(html, png, size, timeout=180):
    """Render file html into png with headless Chromium; returns (ok, what it printed)."""
    if os.path.exists(png):
        os.remove(png)
    with tempfile.TemporaryDirectory(prefix="smpmm-chromium-") as profile:
        cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
               "--no-first-run", "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--hide-scrollbars", "--user-data-dir=" + profile,
               "--force-device-scale-factor=%g" % SCALE,
               "--screenshot=" + png, "--window-size=%d,%d" % size,
               "file://" + os.path.abspath(html)]
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return False, "chromium did not finish in %d s" % timeout
    out = (res.stdout + res.stderr).strip().splitlines()
    return res.returncode == 0 and os.path.exists(png), out[-1] if out else ""


# ---- PNG, 8 bits per channel, grey/RGB/RGBA, not interlaced (what Chromium writes) ----------

def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def unfilter(kind, row, prev, bpp):
    """One row's bytes with its PNG filter undone (prev: the row above, unfiltered)."""
    if kind == 0:
        return row
    if kind == 2:
        return bytearray((x + y) & 255 for x, y in zip(row, prev))
    out = bytearray(row)
    n = len(out)
    if kind == 1:
        for i in range(bpp, n):
            out[i] = (out[i] + out[i - bpp]) & 255
    elif kind == 3:
        for i in range(n):
            left = out[i - bpp] if i >= bpp else 0
            out[i] = (out[i] + ((left + prev[i]) >> 1)) & 255
    elif kind == 4:
        for i in range(n):
            left = out[i - bpp] if i >= bpp else 0
            upleft = prev[i - bpp] if i >= bpp else 0
            out[i] = (out[i] + paeth(left, prev[i], upleft)) & 255
    else:
        raise ValueError("PNG filter type %d" % kind)
    return out


def read_png(path):
    """(width, height, channels, [row bytes]) of an 8-bit, non-interlaced PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("%s: not a PNG" % path)
    pos, idat, head = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = head
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(colour)
    if depth != 8 or not channels or interlace:
        raise ValueError("%s: PNG depth %d colour type %d interlace %d not read here"
                         % (path, depth, colour, interlace))
    raw, stride = zlib.decompress(b"".join(idat)), width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        prev = unfilter(raw[start], raw[start + 1:start + 1 + stride], prev, channels)
        rows.append(prev)
    return width, height, channels, rows


def measure(path):
    """What the screenshot holds: (width, height, ink share, distinct colours, coloured share,
    white rows at the bottom)."""
    width, height, ch, rows = read_png(path)
    colours, ink, coloured, last_ink = set(), 0, 0, -1
    for y, row in enumerate(rows):
        row_ink = 0
        for x in range(0, width * ch, ch):
            px = bytes(row[x:x + 3]) if ch >= 3 else bytes(row[x:x + 1]) * 3
            colours.add(px)
            lo, hi = min(px), max(px)
            row_ink += lo < 235
            coloured += hi - lo >= 48
        if row_ink:
            ink += row_ink
            last_ink = y
    total = width * height
    return width, height, ink / total, len(colours), coloured / total, height - 1 - last_ink


def judge(m):
    """The problems of a measured screenshot ([] if it shows pictures)."""
    _, _, ink, colours, coloured, _ = m
    out = []
    if ink < MIN_INK:
        out.append("%.2f%% of pixels not white (at least %.0f%%)" % (100 * ink, 100 * MIN_INK))
    if colours < MIN_COLOURS:
        out.append("%d distinct colours (at least %d)" % (colours, MIN_COLOURS))
    if coloured < MIN_COLOURED:
        out.append("%.3f%% of pixels in colour (at least %.1f%%)" % (100 * coloured, 100 * MIN_COLOURED))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--html", default="build/c2c-small/c2c.html")
    ap.add_argument("--out", default="build/c2c-small/browser")
    ap.add_argument("--size", default="1000,36000", help="window width,height (CSS pixels)")
    args = ap.parse_args()
    size = tuple(int(v) for v in args.size.split(","))
    os.makedirs(args.out, exist_ok=True)
    results = []

    def check(name, ok, what):
        results.append(ok)
        print("%s %d %s: %s" % ("ok" if ok else "not ok", len(results), name, what))

    if not os.path.exists(args.html):
        check("browser_pictures_page_exists", False, "%s missing (make c2c-small writes it)" % args.html)
    else:
        png = os.path.join(args.out, "c2c.png")
        ok, said = screenshot(args.html, png, size)
        check("browser_renders_pictures_page", ok, "%s, %s" % (png, said) if ok else said)
        if ok:
            m = measure(png)
            problems = judge(m)
            want = tuple(round(v * SCALE) for v in size)
            check("browser_screenshot_shows_pictures", (m[0], m[1]) == want and not problems,
                  "%dx%d pixels (%s wanted), %.1f%% not white, %d colours, %.2f%% in colour%s" % (
                      m[0], m[1], "%dx%d" % want, 100 * m[2], m[3], 100 * m[4],
                      "" if not problems else ": BLANK? " + "; ".join(problems)))
            check("browser_screenshot_holds_whole_page", m[5] >= m[1] // 20,
                  "the last %d rows white (the page ended inside the window)" % m[5]
                  if m[5] >= m[1] // 20 else "only %d white rows at the bottom: the page may go on "
                  "below the window; give a taller --size" % m[5])
    blank = os.path.join(args.out, "blank.html")
    with open(blank, "w") as f:
        f.write("<!DOCTYPE html><html><head><title>blank</title></head><body></body></html>\n")
    png = os.path.join(args.out, "blank.png")
    ok, said = screenshot(blank, png, size)
    if ok:
        m = measure(png)
        problems = judge(m)
        check("browser_blank_page_judged_blank", bool(problems),
              "%.1f%% not white, %d colours: %s" % (100 * m[2], m[3], "; ".join(problems) or
                                                     "NOT judged blank: the check cannot fail"))
    else:
        check("browser_blank_page_judged_blank", False, said)
    passed = sum(results)
    print("%d passed, %d failed" % (passed, len(results) - passed))
    sys.exit(0 if passed == len(results) else 1)


if __name__ == "__main__":
    main()
