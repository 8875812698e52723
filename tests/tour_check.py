#!/usr/bin/env python3
"""Check that the docs' commands still run and their quoted output still appears (`make
tour-check`, part of make test): docs/tour.md, and every transcript in README.md and docs/.

docs/tour.md: its small-machine commands (`make run` and `make shell` lines with SMP=8 or fewer)
are run as written, one after the other, `make shell` with the `smpmm>` lines after it typed at
its prompt; each must pass, none of its command-line words may be refused, each test= glob must
select a case, each monitor line must be accepted, and a `make shell` with NUMA=K must show K
nodes at `numa`. A command without SMP= boots 40 CPUs, too slow here: it must have a twin with a
small SMP= and otherwise the same variables, which was run. Every quote in the tour's prose (a
backtick span with a standalone N or ..., plus EXTRA_QUOTES) must match a line of some output;
the numbers stops 3 and 4 explain are checked.

Transcripts: an indented block in README.md or docs/*.md whose first line is `$ make run ...`
or `$ make shell ...` is run as written (8 CPUs at most), and each line after it must match
the output, in order (`smpmm>` lines are typed; a line `...` skips any number of lines).
A block of the docs every line of which has an N (quoted output, not a command) must match
lines of the outputs too, and every `suite.case` the docs name must exist.

In quoted output N stands for a number, ... for any text, a space for one or more.
Ends with `N passed, N failed`. Not a test of the kernel's behaviour beyond that.
"""
import argparse
import fnmatch
import glob
import os
import re
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import runner  # noqa: E402
from shell_test import PROMPT  # noqa: E402

# Quotes without N or ... that are output too (backticks also mark code, so not every span is).
EXTRA_QUOTES = ["==== smpmm summary ===="]
SMALL_SMP = 8       # commands with at most this many CPUs are run
FILE_EXTENSIONS = {"c", "h", "py", "md", "png", "txt", "json", "log", "asm", "so"}
COMMAND_TIMEOUT = 600


def doc_text(path):
    with open(path) as f:
        return f.read()


def code_blocks(text):
    """Indented code blocks (blank lines inside one included), each a list of its lines
    without the indentation."""
    blocks, cur, blank = [], [], 0
    for line in text.splitlines() + ["end"]:
        if line.startswith("    "):
            cur += [""] * blank + [line[4:].rstrip()]
            blank = 0
        elif not line.strip() and cur:
            blank += 1
        else:
            if cur:
                blocks.append(cur)
            cur, blank = [], 0
    return blocks


def quotes(text):
    """The quoted output lines: backtick spans with a standalone N or '...', in prose (code
    blocks left out), whitespace as one space, in order, each once."""
    prose = " ".join(line for line in text.splitlines() if not line.startswith("    "))
    spans = re.findall(r"`([^`]+)`", re.sub(r"\s+", " ", prose))
    found = [s for s in spans if len(s) > 3 and re.search(r"(?<!\w)N(?!\w)|\.\.\.", s)]
    found += [q for q in EXTRA_QUOTES if q in spans]
    return list(dict.fromkeys(found))


def quote_regex(quote):
    """N: a number (also right before a unit: Ns, Nms, Nus, Nx); ...: anything; a space: one
    or more."""
    rx = re.escape(quote)
    rx = rx.replace(r"\.\.\.", ".*?")
    rx = re.sub(r"(?<![\w\\])N(?=(?:s|ms|us|x)?(?!\w))", r"\\d+", rx)
    return re.compile(rx.replace(r"\ ", " +"))


class Command:
    """A `make run` or `make shell` line of a doc, and the monitor lines typed into it."""

    def __init__(self, line, source):
        self.line = line.split(" #")[0].strip()
        self.source = source
        words = shlex.split(self.line)
        self.target = words[1]
        self.vars = dict(w.split("=", 1) for w in words[2:] if "=" in w)
        self.typed = []
        self.output = ""
        self.status = None

    @property
    def small(self):
        return self.vars.get("SMP", "").isdigit() and int(self.vars["SMP"]) <= SMALL_SMP

    def twin_key(self):
        """What a 40-CPU command and its small-machine twin share."""
        return (self.target, tuple(sorted((k, v) for k, v in self.vars.items() if k != "SMP")),
                tuple(self.typed))

    def globs(self):
        return [g for w in self.vars.get("CMDLINE", "").split() if w.startswith("test=")
                for g in w[5:].split(",")]


def tour_commands(text):
    """The tour's `make run`/`make shell` lines in its code blocks, with their monitor lines."""
    cmds = []
    for block in code_blocks(text):
        for line in block:
            if re.match(r"make (run|shell)\b", line):
                cmds.append(Command(line, "docs/tour.md"))
            elif line.startswith(PROMPT) and cmds and cmds[-1].target == "shell":
                cmds[-1].typed.append(line[len(PROMPT):].strip())
    return cmds


def transcripts(paths):
    """(Command, expected lines) of every `$ make run|shell` block in the files."""
    out = []
    for path in paths:
        for block in code_blocks(doc_text(path)):
            m = re.match(r"\$ (make (run|shell)\b.*)", block[0])
            if not m:
                continue
            cmd = Command(m.group(1), os.path.relpath(path, ROOT))
            expected = []
            for line in block[1:]:
                if line.startswith(PROMPT):
                    cmd.typed.append(line[len(PROMPT):].strip())
                expected.append(line)
            out.append((cmd, expected))
    return out


def run_captured(cmd, argv, script):
    """argv from the top of the tree with script (or nothing) on its stdin; fills cmd.output
    and cmd.status (None when it ran past COMMAND_TIMEOUT)."""
    try:
        res = subprocess.run(argv, cwd=ROOT, input=script, capture_output=True, text=True,
                             errors="replace", timeout=COMMAND_TIMEOUT)
        cmd.output, cmd.status = res.stdout + res.stderr, res.returncode
    except subprocess.TimeoutExpired as e:     # POSIX: the output so far, as bytes
        cmd.output, cmd.status = (e.stdout or b"").decode(errors="replace"), None


def run_command(cmd):
    """Run cmd as written from the top of the tree; fills cmd.output and cmd.status."""
    argv = shlex.split(cmd.line)
    start = time.monotonic()
    if cmd.target == "run":
        run_captured(cmd, argv, "")
    else:
        cmd.replies = type_into_shell(cmd, argv)
    cmd.output = runner.ANSI_RE.sub("", cmd.output).replace("\r", "")
    cmd.took = time.monotonic() - start


def type_into_shell(cmd, argv):
    """`make shell ...` scripted as docs/running.md tells a student to: the monitor lines on
    its stdin (the runner types each at a prompt, then `exit`). Returns [(typed, reply)],
    a reply being what came between the prompt the line was typed at and the next one, or
    None when no prompt came back."""
    run_captured(cmd, argv, "".join(line + "\n" for line in cmd.typed))
    parts = cmd.output.replace("\r", "").split(PROMPT)
    cmd.prompt_seen = len(parts) > 1
    replies = []
    for i, line in enumerate(cmd.typed if cmd.prompt_seen else []):
        done = i + 2 < len(parts) and line != "exit"
        replies.append((line, parts[i + 1] + PROMPT if done else None))
        if not done:
            break
    return replies


class Check:
    def __init__(self):
        self.passed = self.failed = 0

    def __call__(self, ok, what, detail=""):
        print(f"{'ok' if ok else 'not ok'} {what}" + ("" if ok or not detail else f": {detail}"),
              flush=True)
        self.passed += bool(ok)
        self.failed += not ok


def ktap_cases(output):
    parser = runner.KtapParser()
    for line in output.splitlines():
        parser.feed(line)
    parser.finish()
    return [name for name, node in (parser.root.walk() if parser.root else [])
            if node.leaf and name.count(".") == 1]


def glob_selects(glob_, names):
    """Does a test= glob (suite, or suite.case) select one of the cases that ran?"""
    pattern = glob_ if "." in glob_ else glob_ + ".*"
    return any(fnmatch.fnmatchcase(n, pattern) for n in names)


def check_tour_command(check, cmd):
    """One small-machine command of the tour, after it ran."""
    where = f"`{cmd.line}` ({cmd.took:.0f} s)"
    if cmd.target == "shell":
        check(getattr(cmd, "prompt_seen", False), f"{where} reaches the monitor prompt",
              cmd.output.strip()[-600:])
        for typed, reply in cmd.replies:
            bad = reply is None or re.search(r"usage:|unknown command|line too long", reply)
            check(not bad, f"`{cmd.line}`: monitor `{typed}` is accepted",
                  (reply or "no prompt came back").strip()[-300:])
        nodes = cmd.vars.get("NUMA", "")
        numa = [r for t, r in cmd.replies if t == "numa" and r]
        if numa and re.fullmatch(r"\d+", nodes):
            check(re.search(rf"^numa: {nodes} node\(s\)", numa[0], re.M),
                  f"`{cmd.line}`: `numa` shows {nodes} nodes", numa[0].strip()[:300])
    else:
        check(cmd.status == 0, f"{where} passes", "exit %s; last lines:\n%s" % (
            cmd.status, "\n".join(cmd.output.splitlines()[-12:])))
        cases = ktap_cases(cmd.output)
        globs = cmd.globs()
        missing = [g for g in globs if not glob_selects(g, cases)]
        check(globs and not missing, f"`{cmd.line}` selects tests",
              f"no case matches {', '.join(missing) or 'test= (none given)'}")
    refused = [ln for ln in cmd.output.splitlines()
               if ln.startswith("cmdline: ") and "(ignored)" in ln]
    check(not refused, f"`{cmd.line}`: every command-line word is accepted", "; ".join(refused))


def check_quotes(check, text, output_lines):
    for q in quotes(text):
        rx = quote_regex(q)
        hit = next((ln for ln in output_lines if rx.search(ln)), None)
        check(hit is not None, f"quoted `{q}` appears",
              "no output line matches it (the kernel's output or docs/tour.md changed: "
              "update the tour)")


def check_pagesets(check, out):
    """Stop 3: zoneinfo's DMA32 pagesets are the pcp: line's batch and high."""
    z = re.search(r"zone +DMA32\n(?:.*\n)*?\s*pagesets: high (\d+) batch (\d+)", out)
    p = re.search(r"pcp: on, .*DMA32 batch (\d+) high (\d+)", out)
    ok = bool(z and p and (z[1], z[2]) == (p[2], p[1]))
    check(ok, "mm.dump's DMA32 pagesets match the pcp: line (stop 3)",
          f"zoneinfo {z and z.group(0).splitlines()[-1].strip()}, {p and p.group(0)}")


def pcp_row(reply, cpu, zone="DMA32"):
    """count, batch and refill of `pcp CPU`'s row for zone."""
    m = re.search(rf"^\s*{cpu} {zone}\s+(\d+)\s+\d+\s+(\d+) \|\s+\d+\s+\d+\s+(\d+)", reply, re.M)
    return tuple(map(int, m.groups())) if m else None


def check_refill(check, cmd):
    """Stop 4: after `alloc 0 on 1`, CPU 1's list was refilled once and holds batch - 1."""
    rows = [pcp_row(r or "", 1) for t, r in cmd.replies if t == "pcp 1"][:2]
    before, after = (rows + [None, None])[:2]
    ok = before and after and after[2] == before[2] + 1 and after[0] == after[1] - 1
    check(ok, "stop 4: the first allocation on CPU 1 refilled a batch, count is batch - 1",
          f"pcp 1 before {before}, after {after} (count, batch, refill)")


def check_transcript(check, cmd, expected):
    """The lines of a transcript appear in the command's output, in order."""
    lines = [ln.rstrip() for ln in cmd.output.splitlines()]
    pos, missing = 0, None
    for want in expected:
        if want.strip() in ("...", ""):
            continue
        rx = quote_regex(want.strip())
        hit = next((i for i in range(pos, len(lines)) if rx.fullmatch(lines[i].strip())), None)
        if hit is None:
            missing = want
            break
        pos = hit + 1
    check(missing is None, f"{cmd.source}: the transcript of `{cmd.line}` matches its output "
          f"({cmd.took:.0f} s)", f"no line after the last match is /{missing}/; the "
          "output's last lines:\n" + "\n".join(lines[-10:]))


def declared_tests():
    """{suite: {case, ...}} of the kernel's and the host's suites, and the command-line
    option names (suite.case and option.name look alike: `gup.gup_pin_fast`, `gup.size_mb`)."""
    suites, options = {}, set()
    for path in glob.glob(os.path.join(ROOT, "**", "*.c"), recursive=True):
        if os.sep + "build" + os.sep in path:
            continue
        text = doc_text(path)
        options.update(re.findall(r'CMDLINE_\w+\("([^"]+)"', text))
        m = re.search(r"^KTEST_SUITE\((\w+),", text, re.M)
        if m:
            suites.setdefault(m.group(1), set()).update(re.findall(r"KTEST_CASE\w*\((\w+)", text))
    return suites, options


N_RE = re.compile(r"(?<![\w\\])N(?=(?:s|ms|us|x)?(?!\w))")


def quote_blocks(paths):
    """(path, lines) of the quoted-output blocks of the docs: indented blocks every line of
    which has an N in it, other than commands and transcripts."""
    out = []
    for path in paths:
        for block in code_blocks(doc_text(path)):
            lines = [ln for ln in block if ln.strip()]
            if lines and all(N_RE.search(ln) for ln in lines) and not re.match(
                    r"(\$ |make |python3 |build/|smpmm> )", lines[0]):
                out.append((path, lines))
    return out


def check_quote_blocks(check, paths, output_lines):
    for path, lines in quote_blocks(paths):
        missing = [q for q in lines if not any(quote_regex(q.strip()).fullmatch(ln.strip())
                                               for ln in output_lines)]
        check(not missing, f"{os.path.relpath(path, ROOT)}: the quoted lines "
              f"`{lines[0].strip()[:50]}...` appear in the output",
              "no output line matches: " + "; ".join(missing))


def check_case_names(check, paths):
    """Every `suite.case` (or `suite.glob*`) the docs name in backticks exists."""
    suites, options = declared_tests()
    stale = []
    for path in paths:
        for n, line in enumerate(doc_text(path).splitlines(), 1):
            for span in re.findall(r"`([^`]+)`", line):
                for m in re.finditer(r"(?<![\w/.])(\w+)\.([\w*?]+)(?![\w.])", span):
                    suite, case = m.groups()
                    if case in FILE_EXTENSIONS:
                        continue
                    if suite in suites and m.group(0) not in options and not any(
                            fnmatch.fnmatchcase(c, case) for c in suites[suite]):
                        stale.append(f"{os.path.relpath(path, ROOT)}:{n}: {m.group(0)}")
    check(not stale, "every suite.case the docs name exists",
          "; ".join(stale) + " (renamed? a former name can be named without backticks)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tour", default=os.path.join(ROOT, "docs", "tour.md"))
    ap.add_argument("--docs", nargs="*", default=None,
                    help="files whose `$ make ...` transcripts are run (default README.md "
                    "and docs/*.md)")
    ap.add_argument("--log", default="build/tour_check.log")
    ap.add_argument("--list", action="store_true", help="print what would run, run nothing")
    ap.add_argument("--only", default="*", help="glob over the command lines: run and check "
                    "only those (e.g. 'make shell*')")
    args = ap.parse_args()
    docs = args.docs if args.docs is not None else \
        [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    text = doc_text(args.tour)
    tour = [c for c in tour_commands(text) if fnmatch.fnmatchcase(c.line, args.only)]
    scripts = [(c, e) for c, e in transcripts(docs) if fnmatch.fnmatchcase(c.line, args.only)]
    small = [c for c in tour if c.small]
    to_run = list({c.line: c for c in small + [c for c, _ in scripts]}.values())
    print(f"tour_check: {len(tour)} tour commands ({len(small)} small enough to run), "
          f"{len(quotes(text))} quotes, {len(scripts)} transcripts in README.md and docs/; "
          f"{len(to_run)} commands to run (host {runner.host_load()})", flush=True)
    if args.list:
        for c in to_run:
            print(f"  {c.line}" + (f"  + typed: {', '.join(c.typed)}" if c.typed else ""))
        return 0
    check = Check()
    start = time.monotonic()
    for cmd in to_run:
        if cmd.small or cmd.source != "docs/tour.md":
            if not cmd.small:
                check(False, f"{cmd.source}: `{cmd.line}` can be run here",
                      f"a transcript must use SMP={SMALL_SMP} or fewer (it is run by make test)")
                continue
            run_command(cmd)
    ran = {c.line: c for c in to_run if c.status is not None or c.output}
    for cmd in tour:
        if cmd.small:
            check_tour_command(check, ran.get(cmd.line, cmd))
        else:
            twin = next((c for c in small if c.twin_key() == cmd.twin_key()), None)
            check(twin is not None, f"`{cmd.line}` (40 CPUs, not booted here) has a "
                  f"small-machine twin that was run" + (f": `{twin.line}`" if twin else ""),
                  f"add one with SMP=4 and the same variables beside it")
    outputs = [ln for c in ran.values() for ln in c.output.splitlines()]
    if args.only == "*":
        check_quotes(check, text, outputs)
    dump = next((c for c in ran.values() if "mm.dump" in c.vars.get("CMDLINE", "")), None)
    if dump:
        check_pagesets(check, dump.output)
    shell = next((c for c in ran.values() if c.target == "shell" and "pcp 1" in c.typed), None)
    if shell:
        check_refill(check, shell)
    for cmd, expected in scripts:
        if cmd.line in ran:
            check_transcript(check, ran[cmd.line], expected)
    if args.only == "*":
        check_quote_blocks(check, docs, outputs)
    check_case_names(check, docs)
    os.makedirs(os.path.dirname(os.path.abspath(args.log)), exist_ok=True)
    with open(args.log, "w") as f:
        for c in ran.values():
            f.write(f"$ {c.line}  (exit {c.status})\n{c.output}\n")
    print(f"tour_check: {time.monotonic() - start:.0f} s, outputs in {args.log}")
    print(f"{check.passed} passed, {check.failed} failed")
    return 1 if check.failed else 0


if __name__ == "__main__":
    sys.exit(main())
