#!/usr/bin/env python3
"""Struct layouts from smpmm.elf's DWARF, through gdb's `ptype /o` (pahole's table): which
field of which object a byte of a cache line is, and which fields share a line. Used by the
conflict layer's messages (tests/c2c/conflict.py) and the pictures (tests/c2c/pictures.py).
Not the report's object names (report.py): those come from symbols and the console.

usage: layout.py ELF TYPE [OFFSET]   (prints the fields, or the field at OFFSET)
"""
import re
import subprocess
import sys

KERNEL_VMA = 0xffffffff80000000
LINE = 64

# "/* offset | size */ decl": a union's members print no offset (they are all at its own).
_MEMBER = re.compile(r"^/\*\s*(?:(\d+)(?::\s*\d+)?\s*\|)?\s*(\d+)\s*\*/\s*(.*)$")
_DECL = re.compile(r"^(.*?)\s*\b(\w+)((?:\[\d+\])*);$")


class Field:
    """A leaf field: its byte offset in the outermost type, size, and path ("stats.alloc_hit",
    "lists[3].next", "free_area[0].free_list[1].prev")."""

    def __init__(self, offset, size, path):
        self.offset, self.size, self.path = offset, size, path

    def __repr__(self):
        return "%s@%d+%d" % (self.path, self.offset, self.size)


class Layout:
    """Types of one ELF, from gdb, cached: fields(type) gives its leaf fields in order."""

    def __init__(self, elf):
        self.elf = elf
        self.raw = {}        # type name -> ptype /o text (None: not a struct or union)
        self.sizes = {}      # type name -> size in bytes
        self.leaves = {}     # type name -> [Field]
        self.symbols = {}    # symbol -> type name ("struct zone", "u8 [16]")

    def _gdb(self, commands):
        """Run gdb on the ELF with these -ex commands, each output after a marker line."""
        args = ["gdb", "-batch", "-nx", "-q", self.elf]
        for i, c in enumerate(commands):
            args += ["-ex", "echo @@%d\\n" % i, "-ex", c]
        out = subprocess.run(args, capture_output=True, text=True).stdout
        parts = re.split(r"^@@(\d+)$", out, flags=re.M)
        res = {}
        for k in range(1, len(parts) - 1, 2):
            res[int(parts[k])] = parts[k + 1].strip("\n")
        return [res.get(i, "") for i in range(len(commands))]

    def _load(self, types):
        """Fetch the ptype /o of every type not known yet, and of the types they contain."""
        todo = [t for t in dict.fromkeys(types) if t not in self.raw]
        while todo:
            outs = self._gdb(["ptype /o %s" % t for t in todo] + ["print sizeof(%s)" % t for t in todo])
            more = []
            for t, text, size in zip(todo, outs[:len(todo)], outs[len(todo):]):
                m = re.search(r"= (\d+)", size)
                self.sizes[t] = int(m.group(1)) if m else 0
                body = re.search(r"type = (struct|union) [^\n]*\{\n", text)
                self.raw[t] = text[body.end():] if body else None
                for base in self._member_types(self.raw[t] or ""):
                    if base not in self.raw and base not in more and base not in todo:
                        more.append(base)
            todo = more

    @staticmethod
    def _member_types(text):
        """Types of members printed without their own body (to look up next)."""
        out = []
        for line in text.splitlines():
            m = _MEMBER.match(line.strip())
            if not m or m.group(3).endswith("{"):
                continue
            d = _DECL.match(m.group(3))
            if d and "*" not in d.group(1) and "(" not in d.group(1):
                out.append(d.group(1).strip())
        return out

    def fields(self, ctype):
        """Leaf fields of ctype, offsets from its start; [] if it is not a struct or union."""
        if ctype in self.leaves:
            return self.leaves[ctype]
        self._load([ctype])
        leaves = []
        text = self.raw.get(ctype)
        if text:
            self._walk(text.splitlines(), 0, "", leaves, None)
        self.leaves[ctype] = leaves
        return leaves

    def size(self, ctype):
        self._load([ctype])
        return self.sizes.get(ctype, 0)

    def _walk(self, lines, base, prefix, leaves, union_off):
        """Members of one body (the lines after its opening brace) until its closing one;
        returns how many lines it used. Offsets gdb prints are from the start of the type it
        was asked for (nested bodies included), which sits at base; a union's members print
        none: they are at union_off."""
        i = 0
        while i < len(lines):
            line = lines[i].strip()
            i += 1
            if line.startswith("}"):
                return i
            m = _MEMBER.match(line)
            if not m:
                continue
            off = base + int(m.group(1)) if m.group(1) is not None else union_off
            size, decl = int(m.group(2)), m.group(3)
            if decl.endswith("{"):          # a nested struct or union, printed inline
                sub = []
                used = self._walk(lines[i:], base, "", sub, off if decl.startswith("union") else None)
                close = lines[i + used - 1].strip() if used else ""
                name = re.match(r"}\s*(\w*)((?:\[\d+\])*);", close)
                name = name.group(1) if name else ""
                for f in sub:
                    f.path = prefix + (name + "." if name else "") + f.path
                leaves += sub
                i += used
                continue
            d = _DECL.match(decl)
            if not d:
                continue
            t, name, dims = d.group(1).strip(), d.group(2), d.group(3)
            n = 1
            for k in re.findall(r"\[(\d+)\]", dims):
                n *= int(k)
            self._leaf(t if "*" not in t else None, off, size, n, prefix + name, leaves)
        return i

    def _leaf(self, t, off, size, n, path, leaves):
        """A member: a struct (its fields), an array (each element), or a scalar."""
        sub = self.fields(t) if t else []
        esize = size // n if n else size
        if not sub and (n == 1 or n > 64):
            leaves.append(Field(off, size, path))
            return
        for k in range(n):
            idx = "[%d]" % k if n > 1 else ""
            if not sub:
                leaves.append(Field(off + k * esize, esize, path + idx))
            for f in sub:
                leaves.append(Field(off + k * esize + f.offset, f.size, "%s%s.%s" % (path, idx, f.path)))

    def symbol_types(self, names):
        """Learn the types of these global symbols, in one gdb run."""
        todo = [n for n in dict.fromkeys(names) if n not in self.symbols]
        for name, out in zip(todo, self._gdb(["whatis %s" % n for n in todo]) if todo else []):
            m = re.search(r"type = (.*)$", out, re.M)
            self.symbols[name] = m.group(1).strip() if m else ""

    def symbol_type(self, name):
        """The type of a global symbol (struct zone, u8 [4], ...), from gdb's whatis."""
        self.symbol_types([name])
        return self.symbols[name]

    def at(self, ctype, offset, array=False):
        """(element index or None, Field or None) at byte offset of an object of ctype, or of
        an array of them (array, or an offset past one: the element's index too)."""
        esize = self.size(ctype)
        idx = None
        if esize and (array or offset >= esize):
            idx, offset = offset // esize, offset % esize
        for f in self.fields(ctype):
            if f.offset <= offset < f.offset + max(f.size, 1):
                return idx, f
        return idx, None

    def in_range(self, ctype, start, end, array=False):
        """[(element index or None, Field)] overlapping bytes [start, end) of an object of
        ctype, or of an array of them (array, or a range past one)."""
        esize = self.size(ctype) or (end - start)
        array = array or end > esize
        out = []
        for k in range(start // esize, (end - 1) // esize + 1):
            for f in self.fields(ctype):
                a, b = k * esize + f.offset, k * esize + f.offset + max(f.size, 1)
                if a < end and b > start:
                    out.append((k if array else None, f))
        return out


def short_type(ctype):
    """'struct per_cpu_pages' -> 'per_cpu_pages', as the layer's patterns write it."""
    return re.sub(r"^(struct|union|enum)\s+", "", ctype)


def field_name(ctype, idx, field, array_name=None):
    """How a message names a field: per_cpu_pages[1].stats.alloc_hit, zone.lock.locked."""
    base = short_type(ctype) if array_name is None else array_name
    where = "%s[%d]" % (base, idx) if idx is not None else base
    return "%s.%s" % (where, field.path) if field else "%s (padding)" % where


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    lay = Layout(sys.argv[1])
    if len(sys.argv) > 3:
        idx, f = lay.at(sys.argv[2], int(sys.argv[3], 0))
        print(field_name(sys.argv[2], idx, f))
        return
    for f in lay.fields(sys.argv[2]):
        print("%6d %4d  %s%s" % (f.offset, f.size, f.path,
                                 "   <- line %d" % (f.offset // LINE) if f.offset % LINE == 0 else ""))
    print("size %d" % lay.size(sys.argv[2]))


if __name__ == "__main__":
    main()
