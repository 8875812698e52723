#!/usr/bin/env python3
"""The references the docs and comments make into the tree, checked against it (make test).

A reader follows `mm/pcp.c`, `mm/pcp.c:120` or "free_unref_page() in mm/pcp.h" into the
tree; each must lead somewhere. Checked, in docs/*.md and README.md, and in the comments of
the C, header and assembly sources of boot/ arch/ kernel/ mm/ tests/:
  path            the file or folder exists (a path whose first folder is one of the tree's);
  path:line[-N]   the file has that line;
  path:function   the file defines or declares the function, macro, type or variable, and
                  so do the forms "function() in path", "function() (path)", "path
                  function()" and "function(), other() in path";
  a comment of a source file that names a function with a path (another file's or its
  own), likewise.
A reference to Linux's tree (its mm/page_alloc.c is not ours) says so on the same line:
"Linux", "Linux's" or a commit id before it, or it is in a commit's quoted subject, or its
folder is not one of ours (arch/x86/kernel), or it is a subject's tag ("[mm/page_alloc]
f26b3fa046: ..."); those are not checked, nor are paths under
build/ (made by the build), with a wildcard, or in code blocks (``` or indented: commands
and quoted output).
`mm/vm.[ch]` is both files; `arch/arch_ops.h` resolves as the compilers' -I folders do.

Before the tree, one wrong reference of each kind is planted in a scratch tree and must be
caught: a check that cannot fail is not counted as a pass. Ends with `N passed, N failed`.
"""

import argparse
import os
import re
import sys
import tempfile

TOPS = ("boot", "arch", "kernel", "mm", "tests", "docs", ".ci")
INCLUDE_DIRS = ("", "arch/x86_64/include/", "tests/host/shim/")   # as the Makefiles' -I
TOP_FILES = ("Makefile", "README.md", "linker.ld")
SOURCE_DIRS = ("boot", "arch", "kernel", "mm", "tests")
SOURCE_EXT = (".c", ".h", ".asm", ".inc")
SEG = r"[A-Za-z0-9_+.-]*[A-Za-z0-9_+-]"      # a path component, not ending in a full stop
PATH = r"(?:(?:%s)(?:/%s)+(?:\.\[ch\])?|%s)" % (
    "|".join(re.escape(t) for t in TOPS), SEG, "|".join(re.escape(f) for f in TOP_FILES))
NAME = r"[A-Za-z_][A-Za-z0-9_]*"
# path:line[-line] and path:name (not a URL, not a port)
COLON_RE = re.compile(r"(?<![\w/.-])(%s):(?:(\d+)(?:-(\d+))?|(%s)\b)" % (PATH, NAME))
# name() in/of path, name() (path), name(), other() in path
IN_RE = re.compile(r"((?:`?%s\(\)`?(?:,\s*|\s+and\s+|\s+or\s+))*`?%s\(\)`?)\s+(?:in|of|from)\s+"
                   r"`?(%s)`?" % (NAME, NAME, PATH))
PAREN_RE = re.compile(r"`?(%s)\(\)`?\s+\(`?(%s)`?[,)]" % (NAME, PATH))
# path name(): the file first, then the function
AFTER_RE = re.compile(r"(?<![\w/.-])`?(%s)`?\s+`?(%s)\(\)" % (PATH, NAME))
BARE_RE = re.compile(r"(?<![\w/.:-])`?(%s)`?(?![\w(])" % PATH)
LINUX_RE = re.compile(r"Linux|\b[0-9a-f]{12}\b|upstream|kernel\.org", re.I)


def tree_files(root):
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirnames[:] = [d for d in dirnames if not (rel == "." and d in ("build", ".git"))]
        out += [os.path.normpath(os.path.join(rel, f)) for f in filenames]
    return out


def defines(text, name, path):
    """Does the file's text define or declare name (a C function, macro, type, variable, an
    asm label, a make target or variable, a Python def or class, a shell function)?"""
    n = re.escape(name)
    if path.endswith(".py"):
        return re.search(r"^\s*(?:def|class)\s+%s\b|^%s\s*=" % (n, n), text, re.M) is not None
    if path.endswith((".asm", ".inc")):
        return re.search(r"^\s*%s:|^\s*%%(?:macro|define)\s+%s\b|\b(?:global|extern)\s+%s\b"
                         % (n, n, n), text, re.M) is not None
    if os.path.basename(path) == "Makefile" or path.endswith(".mk"):
        return re.search(r"^%s\s*[:?+]?=|^%s\s*:|^\.PHONY:.*\b%s\b" % (n, n, n), text,
                         re.M) is not None
    if path.endswith(".sh") or path == ".ci/run":
        return re.search(r"^%s\s*\(\)" % n, text, re.M) is not None
    return re.search(
        r"^#\s*define\s+%s\b"                              # a macro
        r"|^[A-Za-z_][^;{}()=]*?[\s*]%s\s*\("              # a function at file level
        r"|^\s*(?:struct|union|enum)\s+%s\b"               # a type
        r"|^[A-Za-z_][^;{}()]*[\s*]%s\s*(?:\[[^\]]*\]\s*)*(?:=|;|__)"  # a variable
        r"|^\s*%s,?\s*(?:/\*.*)?$"                         # an enumerator
        r"|^\s*%s\s*=" % (n, n, n, n, n, n), text, re.M) is not None


def comments(text, path):
    """(line number, text) of the comments of a C or assembly source."""
    out = []
    if path.endswith((".asm", ".inc")):
        for i, line in enumerate(text.splitlines(), 1):
            if ";" in line:
                out.append((i, line.split(";", 1)[1]))
        return out
    for m in re.finditer(r"/\*.*?\*/|//[^\n]*", text, re.S):
        line = text.count("\n", 0, m.start()) + 1
        for j, part in enumerate(m.group(0).split("\n")):
            out.append((line + j, part))
    return out


class Checker:
    def __init__(self, root):
        self.root = root
        self.files = set(tree_files(root))
        self.dirs = {os.path.dirname(f) for f in self.files}
        self.dirs |= {d for f in self.files for d in self._parents(f)}
        self.cache = {}
        self.problems = []
        self.checked = 0

    @staticmethod
    def _parents(f):
        parts = f.split("/")[:-1]
        return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]

    def text(self, path):
        if path not in self.cache:
            with open(os.path.join(self.root, path), errors="replace") as f:
                self.cache[path] = f.read()
        return self.cache[path]

    def skip(self, line, start, path):
        end = start + line[start:].find(path) + len(path)
        folder = os.path.dirname(path)
        return (path.startswith("build/") or line[end:end + 1] == "*" or
                (line[start - 1:start] == "[" and line[end:end + 1] == "]") or   # a subject tag
                LINUX_RE.search(line[:start]) is not None or line[start - 1:start] == '"' or
                (folder and not any(d + folder in self.dirs for d in INCLUDE_DIRS)))

    def resolve(self, path):
        """The tree file or folder path names (as is, or in an -I folder), or None."""
        for d in INCLUDE_DIRS:
            p = (d + path).rstrip("/")
            if p in self.files or p in self.dirs:
                return p
        return None

    def exists(self, path):
        return self.resolve(path) is not None

    def problem(self, where, what):
        self.problems.append("%s: %s" % (where, what))

    def check_path(self, where, path):
        self.checked += 1
        if path.endswith(".[ch]"):
            return self.check_path(where, path[:-5] + ".c") and \
                self.check_path(where, path[:-5] + ".h")
        if not self.exists(path):
            self.problem(where, "`%s` does not exist" % path)
            return False
        return True

    def check_name(self, where, path, name):
        if path.endswith(".md"):
            return      # a pointer to prose about the function, not to its definition
        self.checked += 1
        if path.endswith(".[ch]"):
            paths = [path[:-5] + ".c", path[:-5] + ".h"]
        else:
            paths = [self.resolve(path) or path]
        if not all(p in self.files for p in paths):
            self.problem(where, "`%s` (for %s) is not a file" % (path, name))
        elif not any(defines(self.text(p), name, p) for p in paths):
            self.problem(where, "%s is not defined in %s" % (name, path))

    def check_line(self, where, path, first, last):
        self.checked += 1
        if path not in self.files:
            self.problem(where, "`%s` does not exist" % path)
            return
        n = self.text(path).count("\n") + 1
        if int(last or first) > n:
            self.problem(where, "%s has %d lines, not %s" % (path, n, last or first))

    def scan_line(self, where, line):
        seen = set()
        for m in COLON_RE.finditer(line):
            path = m.group(1)
            seen.add(m.start(1))
            if self.skip(line, m.start(), path):
                continue
            if m.group(2):
                self.check_line(where, path, m.group(2), m.group(3))
            else:
                self.check_name(where, path, m.group(4))
        for m in IN_RE.finditer(line):
            path = m.group(2)
            seen.add(m.start(2))
            if not self.skip(line, m.start(), path):
                for name in re.findall(r"(%s)\(\)" % NAME, m.group(1)):
                    self.check_name(where, path, name)
        for m in PAREN_RE.finditer(line):
            seen.add(m.start(2) + (1 if line[m.start(2) - 1:m.start(2)] == "`" else 0))
            if not self.skip(line, m.start(), m.group(2)):
                self.check_name(where, m.group(2), m.group(1))
        for m in AFTER_RE.finditer(line):
            seen.add(m.start(1))
            if not self.skip(line, m.start(), m.group(1)):
                self.check_name(where, m.group(1), m.group(2))
        for m in BARE_RE.finditer(line):
            if m.start(1) in seen or self.skip(line, m.start(), m.group(1)):
                continue
            path = m.group(1).rstrip(".,;:")
            if path.split("/")[0] in TOPS or path in TOP_FILES:
                self.check_path(where, path)

    def run(self):
        docs = sorted(f for f in self.files if f.startswith("docs/") and f.endswith(".md"))
        for path in docs + [f for f in ("README.md",) if f in self.files]:
            fence = False
            for i, line in enumerate(self.text(path).splitlines(), 1):
                if line.lstrip().startswith("```"):
                    fence = not fence
                elif not fence and not line.startswith(("    ", "\t")):   # not code
                    self.scan_line("%s:%d" % (path, i), line)
        for path in sorted(self.files):
            if path.split("/")[0] in SOURCE_DIRS and path.endswith(SOURCE_EXT):
                for i, part in comments(self.text(path), path):
                    self.scan_line("%s:%d" % (path, i), part)
        return self.problems


# One wrong reference of each kind, planted in a scratch tree: each must be reported.
SCRATCH = {
    "mm/a.c": "/* The caller: b_fn() in mm/b.h. */\nint a_fn(void)\n{\n\treturn 0;\n}\n",
    "mm/b.h": "int b_fn(void);\n",
    "docs/x.md": "`mm/a.c`, `mm/a.c:3`, `a_fn()` in `mm/a.c`, mm/b.h b_fn().\n",
}
PLANTS = [
    ("a path that does not exist", "docs/x.md", "See `mm/nosuch.c`.\n"),
    ("a line past the end", "docs/x.md", "See `mm/a.c:99`.\n"),
    ("path:function, wrong file", "docs/x.md", "See `mm/b.h:a_fn`.\n"),
    ("function() in path, wrong file", "docs/x.md", "`a_fn()` in `mm/b.h` does it.\n"),
    ("function() (path), wrong file", "docs/x.md", "`a_fn()` (`mm/b.h`) does it.\n"),
    ("path function(), wrong file", "docs/x.md", "mm/b.h a_fn() does it.\n"),
    ("a comment naming another file's function", "mm/a.c",
     "/* Called from a_fn() in mm/b.h. */\n"),
    ("a comment naming its own file's function wrongly", "mm/b.h",
     "/* Pairs with c_fn() in mm/b.h. */\n"),
]


def self_test():
    """Each plant must be caught, and the scratch tree without plants must be clean."""
    passed = failed = 0
    for what, path, text in [(None, None, None)] + PLANTS:
        with tempfile.TemporaryDirectory() as tmp:
            for p, t in SCRATCH.items():
                os.makedirs(os.path.join(tmp, os.path.dirname(p)), exist_ok=True)
                with open(os.path.join(tmp, p), "w") as f:
                    f.write(t + (text if p == path else ""))
            problems = Checker(tmp).run()
        ok = bool(problems) if what else not problems
        name = ("catches %s" % what) if what else "a clean scratch tree is clean"
        print("%s self-test: %s%s" % ("ok" if ok else "not ok", name,
                                      "" if ok or not problems else ": " + problems[0]))
        passed += ok
        failed += not ok
    return passed, failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = ap.parse_args()
    passed, failed = self_test()
    checker = Checker(args.root)
    problems = checker.run()
    for p in problems:
        print("not ok reference %s" % p)
    print("%s references: %d checked, %d do not resolve" % (
        "ok" if not problems else "not ok", checker.checked, len(problems)))
    passed += not problems
    failed += bool(problems)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
