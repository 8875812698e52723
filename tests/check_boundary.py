#!/usr/bin/env python3
"""The rule between the kernel and its lab, checked on every #include (part of `make test`).

The kernel proper is boot/ arch/ kernel/ mm/; the lab is tests/ (docs/architecture.md). The lab
uses the kernel through its headers; the kernel never uses the lab. Concretely:
  kernel-includes-lab   nothing in boot/ arch/ kernel/ mm/ includes a file under tests/;
  mm-internal           mm/internal.h is included from mm/ only;
  mm-test-window        mm/mm_test.h (what tests may reach inside mm/) is included from tests/,
                        and from mm/ itself (mm/internal.h, so that the definitions are checked
                        against its declarations), never from boot/ arch/ kernel/;
  kernel-names-lab      no C code in boot/ arch/ kernel/ mm/ names what a lab header declares
                        (tests/ktest/, tests/lab/, tests/bench/: a function, macro, variable or
                        struct), say through its own extern declaration instead of an include.
Each `#include` (C) and `%include` (NASM) is resolved as the compilers do: the including
file's folder, then the -I folders of its build (the tree's top and arch/x86_64/include;
tests/host/shim first for the host harness and the fuzzers). Headers found nowhere in the tree
(<stdarg.h>) are the compiler's and are not checked. Comments and strings are not code. What
this cannot see, the bare build can: `make bare-test` links the kernel without tests/.

Before the tree, each rule is run on a scratch tree with one crossing include planted, and must
catch it: a check that cannot fail is not counted as a pass. Ends with `N passed, N failed`.
"""

import argparse
import os
import re
import sys
import tempfile

KERNEL_DIRS = ("boot", "arch", "kernel", "mm")
LAB_DIR = "tests"
LAB_HEADER_DIRS = ("tests/ktest", "tests/lab", "tests/bench")   # the lab's own API
SOURCE_EXT = (".c", ".h", ".asm", ".inc")
INCLUDE_RE = re.compile(r'^\s*(?:#\s*include|%include)\s*([<"])([^>"]+)[>"]')


def top_dir(path):
    return path.split("/", 1)[0]


def in_kernel(path):
    return top_dir(path) in KERNEL_DIRS


def search_path(path):
    """The -I folders of the build that compiles path (kernel/lab: the Makefile's KCFLAGS;
    the host harness and fuzzers: tests/host/host.mk and tests/fuzz/fuzz.mk)."""
    dirs = [".", "arch/x86_64/include"]
    if path.startswith(("tests/host/", "tests/fuzz/")):
        dirs.insert(0, "tests/host/shim")
    return dirs


def resolve(root, path, quote, name):
    """The tree path an include names, or None if it is the compiler's own header."""
    dirs = search_path(path)
    if quote == '"':
        dirs = [os.path.dirname(path) or "."] + dirs
    for d in dirs:
        cand = os.path.normpath(os.path.join(d, name))
        if not cand.startswith("..") and os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def includes(root):
    """(file, line number, text, included tree path) for every include in the tree."""
    for top in KERNEL_DIRS + (LAB_DIR,):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith(SOURCE_EXT):
                    continue
                full = os.path.join(dirpath, f)
                path = os.path.relpath(full, root)
                with open(full, errors="replace") as fh:
                    for n, line in enumerate(fh, 1):
                        m = INCLUDE_RE.match(line)
                        if not m:
                            continue
                        target = resolve(root, path, m.group(1), m.group(2))
                        if target:
                            yield path, n, line.strip(), target


def source_files(root, tops):
    for top in tops:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith(SOURCE_EXT):
                    yield os.path.relpath(os.path.join(dirpath, f), root)


COMMENT_OR_STRING_RE = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                                  re.S)
PREPROCESSOR_RE = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
DEFINE_RE = re.compile(r"^[ \t]*#\s*define\s+(\w+)", re.M)
ATTRIBUTE_RE = re.compile(r"\b__\w+\s*(?:\((?:[^()]|\([^()]*\))*\))?")
IDENT_RE = re.compile(r"[A-Za-z_]\w*")


def code_of(root, path):
    """The C text of path with comments and string literals blanked (lines kept)."""
    with open(os.path.join(root, path), errors="replace") as fh:
        text = fh.read()
    return COMMENT_OR_STRING_RE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def file_level_statements(code):
    """The text of each declaration outside braces (struct bodies, function bodies and
    initialisers left out), ended by ';' or by the '{' that opens a body."""
    depth, start = 0, 0
    for i, ch in enumerate(code):
        if ch == "{":
            if depth == 0:
                yield code[start:i], "{"
            depth += 1
        elif ch == "}":
            depth -= 1
            start = i + 1
        elif ch == ";" and depth == 0:
            yield code[start:i], ";"
            start = i + 1


def declared_name(stmt, ender):
    """The name a file-level declaration introduces (function, variable, typedef, tag)."""
    stmt = ATTRIBUTE_RE.sub(" ", stmt).strip()
    m = re.match(r"(?:typedef\s+)?(?:struct|enum|union)\s+(\w+)\s*$", stmt)
    if m and ender == "{":
        return m.group(1)
    m = re.search(r"\(\s*\*\s*(\w+)\s*\)", stmt)     # function pointer: (*name)
    if m:
        return m.group(1)
    head = stmt.split("(", 1)[0].split("=", 1)[0].split("[", 1)[0]
    idents = IDENT_RE.findall(head)
    return idents[-1] if len(idents) >= 2 or stmt.startswith("typedef") else None


def lab_names(root):
    """Names the lab's headers declare at file level: macros, functions, variables, tags."""
    names = set()
    for path in source_files(root, LAB_HEADER_DIRS):
        if not path.endswith(".h"):
            continue
        code = code_of(root, path)
        names.update(n for n in DEFINE_RE.findall(code) if not n.endswith("_H"))
        for stmt, ender in file_level_statements(PREPROCESSOR_RE.sub("", code)):
            name = declared_name(stmt, ender)
            if name:
                names.add(name)
    return names


def names_used(root):
    """(file, line number, name) for every lab name in kernel C code."""
    names = lab_names(root)
    if not names:
        return
    word = re.compile(r"\b(" + "|".join(sorted(map(re.escape, names))) + r")\b")
    for path in source_files(root, KERNEL_DIRS):
        if path.endswith((".c", ".h")):
            for n, line in enumerate(code_of(root, path).split("\n"), 1):
                for m in word.finditer(line):
                    yield path, n, m.group(1)


def kernel_includes_lab(path, target):
    return in_kernel(path) and top_dir(target) == LAB_DIR


def mm_internal(path, target):
    return target == "mm/internal.h" and top_dir(path) != "mm"


def mm_test_window(path, target):
    return target == "mm/mm_test.h" and top_dir(path) not in ("mm", LAB_DIR)


RULES = [
    ("kernel-includes-lab", "boot/ arch/ kernel/ mm/ include nothing under tests/",
     kernel_includes_lab),
    ("mm-internal", "only mm/ includes mm/internal.h", mm_internal),
    ("mm-test-window", "only tests/ (and mm/) include mm/mm_test.h", mm_test_window),
    ("kernel-names-lab", "boot/ arch/ kernel/ mm/ name nothing a lab header declares", None),
]

# One planted crossing per rule, in a scratch tree: (file, its text); the rule must flag it.
PLANTED = {
    "kernel-includes-lab": ("arch/x86_64/trap.c", '#include "tests/ktest/ktest.h"\n'),
    "mm-internal": ("tests/lab/summary.c", '#include "mm/internal.h"\n'),
    "mm-test-window": ("kernel/main.c", '#include "../mm/mm_test.h"\n'),
    "kernel-names-lab": ("arch/x86_64/smp.c", "/* ktest_traps_wired */ extern bool "
                         "ktest_traps_wired;\nvoid f(void) { ktest_traps_wired = true; }\n"),
}
SCRATCH_FILES = [("tests/ktest/ktest.h", "#ifndef KTEST_H\n#define KTEST_H\n"
                  "extern bool ktest_traps_wired;\nvoid ktest_finish(unsigned int n);\n"),
                 ("mm/internal.h", "/* scratch */\n"), ("mm/mm_test.h", "/* scratch */\n"),
                 ("kernel/panic.c", 'void f(void) { printk("ktest_finish"); }\n')]


def violations(root):
    """{rule name: [(file, line, text)]} over the tree at root."""
    found = {name: [] for name, _, _ in RULES}
    for path, n, text, target in includes(root):
        for name, _, broken in RULES:
            if broken and broken(path, target):
                found[name].append((path, n, text))
    for path, n, name in names_used(root):
        found["kernel-names-lab"].append((path, n, f"uses {name}"))
    return found


def rules_can_fail():
    """Names of the rules that miss their planted crossing (should be none)."""
    with tempfile.TemporaryDirectory(prefix="smpmm-boundary-") as root:
        for path, text in SCRATCH_FILES + list(PLANTED.values()):
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as fh:
                fh.write(text)
        found = violations(root)
    missed = [name for name, (path, _) in PLANTED.items()
              if not any(v[0] == path for v in found[name])]
    # ...and flag nothing else: not kernel/panic.c, which names a lab function in a string.
    wrong = [name for name, hits in found.items()
             if any(v[0] != PLANTED[name][0] for v in hits)]
    return missed + wrong


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   ".."), help="the source tree (default: this one)")
    args = ap.parse_args()
    blind = rules_can_fail()
    found = violations(os.path.abspath(args.root))
    passed = failed = 0
    for name, what, _ in RULES:
        bad = found[name]
        if name in blind:
            print(f"FAILED {name}: the rule did not catch an include planted to break it")
        elif bad:
            print(f"FAILED {name}: {what}; crossings:")
            for path, n, text in bad:
                print(f"    {path}:{n}: {text}")
        else:
            print(f"ok {name}: {what}")
        ok = not bad and name not in blind
        passed += ok
        failed += not ok
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
