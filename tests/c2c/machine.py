#!/usr/bin/env python3
"""The modelled machines (tests/c2c/machines/*.machine): read one, check that every value has
its source or is marked assumed with a range, and turn it into the c2c plugin's (and
tests/c2c/replay's) key=value arguments and QEMU's -smp topology.

A machine file is a list of parameters, each a line `name = value [unit]` followed by
indented lines that say where the value comes from, either

    quote: "the words of the source"
    url: where they are
    measured: on which CPU, with what

or

    assumed: LOW .. HIGH
    why: why this value, and why the range

(plus free `note:` lines). Lines starting with # are comments; `machine: TEXT` names it;
`base: FILE` takes every parameter of another machine file first (with its sources), which
the parameters that follow replace.

usage: machine.py check [FILE...]         check files (default: every machine file)
       machine.py args FILE [NAME=VALUE...] the plugin's arguments, with overrides
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MACHINES = os.path.join(HERE, "machines")

# Every parameter a machine has, its unit, and whether it is a whole number.
PARAMS = {
    "sockets": ("", True), "cores": ("", True), "threads": ("", True),
    "ghz": ("GHz", False), "cpi": ("", False), "smt_slowdown": ("", False),
    "hitm_local": ("ns", False), "hitm_remote": ("ns", False),
    "clean_local": ("ns", False), "clean_remote": ("ns", False),
    "upgrade_local": ("ns", False), "upgrade_remote": ("ns", False),
    "memory": ("ns", False), "mlp": ("", True), "string_bytes_per_cycle": ("", False),
    "lock_cycles": ("", False), "xchg_cycles": ("", False), "pushf_cycles": ("", False),
    "popf_cycles": ("", False), "cli_cycles": ("", False), "sti_cycles": ("", False),
}
SOURCE_KEYS = ("quote", "url", "measured")


class Param:
    def __init__(self, name, value, unit, line):
        self.name, self.value, self.unit, self.line = name, value, unit, line
        self.info = {}

    @property
    def assumed(self):
        return "assumed" in self.info

    def range(self):
        """(low, high) of an assumed value; (value, value) of a sourced one."""
        if not self.assumed:
            return self.value, self.value
        lo, hi = (float(x) for x in self.info["assumed"].split(".."))
        return lo, hi


class Machine:
    def __init__(self, path):
        self.path, self.name, self.params, self.errors = path, None, {}, []
        self.based = set()              # parameters taken from the base file, not yet replaced
        self._read()
        self._check()

    def _read(self):
        cur = None
        with open(self.path) as f:
            for n, raw in enumerate(f, 1):
                line = raw.rstrip("\n")
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                if line.startswith("machine:"):
                    self.name = line.split(":", 1)[1].strip()
                    continue
                if line.startswith("base:"):
                    base = Machine(os.path.join(os.path.dirname(self.path), line.split(":", 1)[1].strip()))
                    self.errors += base.errors
                    self.params.update(base.params)
                    self.based = set(base.params)
                    continue
                m = re.match(r"^(\w+)\s*=\s*([-+0-9.eE]+)\s*(\S*)\s*$", line)
                if m:
                    name, value, unit = m.group(1), m.group(2), m.group(3)
                    if name not in PARAMS:
                        self.errors.append("%s:%d: unknown parameter %s" % (self.path, n, name))
                        cur = None
                        continue
                    whole = PARAMS[name][1]
                    cur = Param(name, int(value) if whole else float(value), unit, n)
                    if name in self.params and name not in self.based:
                        self.errors.append("%s:%d: %s given twice" % (self.path, n, name))
                    self.based.discard(name)
                    self.params[name] = cur
                    continue
                m = re.match(r"^\s+(\w+):\s*(.*)$", line)
                if m and cur:
                    key, text = m.group(1), m.group(2)
                    cur.info[key] = (cur.info[key] + " " + text) if key in cur.info else text
                    continue
                self.errors.append("%s:%d: not a parameter or its source: %r" % (self.path, n, line))

    def _check(self):
        if not self.name:
            self.errors.append("%s: no `machine:` line" % self.path)
        for name, (unit, _) in PARAMS.items():
            p = self.params.get(name)
            if p is None:
                self.errors.append("%s: %s missing" % (self.path, name))
                continue
            where = "%s:%d: %s" % (self.path, p.line, name)
            if p.unit != unit:
                self.errors.append("%s: unit %r, expected %r" % (where, p.unit, unit))
            sourced = all(p.info.get(k) for k in SOURCE_KEYS)
            if p.assumed == sourced:
                self.errors.append("%s: needs either quote, url and measured, or assumed and why"
                                   % where)
            if p.assumed:
                if not p.info.get("why"):
                    self.errors.append("%s: assumed without `why`" % where)
                try:
                    lo, hi = p.range()
                    if not lo <= p.value <= hi:
                        self.errors.append("%s: %s outside its range %s" % (where, p.value, p.info["assumed"]))
                except ValueError:
                    self.errors.append("%s: range %r is not LOW .. HIGH" % (where, p.info["assumed"]))
            elif not p.info["url"].startswith("http"):
                self.errors.append("%s: url %r is not an address" % (where, p.info["url"]))
            if not p.value > 0:
                self.errors.append("%s: must be positive" % where)

    def value(self, name, overrides=None):
        return (overrides or {}).get(name, self.params[name].value)

    def cpus(self):
        return self.value("sockets") * self.value("cores") * self.value("threads")

    def assumed(self):
        """The assumed parameters: [(name, value, low, high)]."""
        return [(p.name, p.value) + p.range() for p in self.params.values() if p.assumed]

    def plugin_args(self, overrides=None, cpus=None):
        """The plugin's (and replay's) key=value arguments; overrides: {name: value}."""
        v = lambda n: self.value(n, overrides)
        cycle_fs = 1e6 / v("ghz")
        smt = v("smt_slowdown") if v("threads") > 1 else 1.0
        cost = lambda cycles: max(1, round(cycles * cycle_fs * smt))
        ps = lambda ns: round(ns * 1000)
        cpus = v("sockets") * v("cores") * v("threads")   # with the overrides (c2c-small's cores=2)
        args = ["cpus=%d" % cpus, "sockets=%d" % v("sockets"), "threads=%d" % v("threads"),
                "mlp=%d" % round(v("mlp")),
                "cost_plain=%d" % cost(v("cpi")), "cost_lock=%d" % cost(v("lock_cycles")),
                "cost_xchg=%d" % cost(v("xchg_cycles")), "cost_pushf=%d" % cost(v("pushf_cycles")),
                "cost_popf=%d" % cost(v("popf_cycles")), "cost_cli=%d" % cost(v("cli_cycles")),
                "cost_sti=%d" % cost(v("sti_cycles")),
                "cost_string_byte=%d" % cost(1.0 / v("string_bytes_per_cycle")),
                "cold=%d:%d" % (ps(v("memory")), ps(v("memory"))),
                "hitm=%d:%d" % (ps(v("hitm_local")), ps(v("hitm_remote"))),
                "clean=%d:%d" % (ps(v("clean_local")), ps(v("clean_remote"))),
                "upgrade=%d:%d" % (ps(v("upgrade_local")), ps(v("upgrade_remote")))]
        return args

    def qemu_smp(self, cpus=None):
        """QEMU's -smp for `cpus` of this machine's CPUs (default all): its topology when they
        are all there, so that the guest's ACPI tables and the model (model.h: c2c_socket())
        number sockets and cores alike. With fewer (255 of 256), QEMU's topology would need
        APIC IDs above 254 (x2APIC, which QEMU 7.2's TCG lacks): QEMU's default topology then,
        and the model keeps the machine's (the plugin's cpus=; smpmm runs one node either way)."""
        total = self.cpus()
        if (cpus or total) != total:
            return str(cpus)
        return "%d,sockets=%d,cores=%d,threads=%d" % (total, self.value("sockets"), self.value("cores"),
                                                      self.value("threads"))


def machine_files():
    return sorted(os.path.join(MACHINES, f) for f in os.listdir(MACHINES) if f.endswith(".machine"))


def load(name):
    """A machine by file name (with or without .machine) or path; exits if it is not valid."""
    path = name if os.path.exists(name) else os.path.join(MACHINES, name if name.endswith(".machine")
                                                          else name + ".machine")
    m = Machine(path)
    if m.errors:
        sys.exit("\n".join(m.errors))
    return m


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("check", "args"):
        sys.exit(__doc__)
    if sys.argv[1] == "check":
        bad = 0
        for i, path in enumerate(sys.argv[2:] or machine_files(), 1):
            m = Machine(path)
            name = "c2c_machine_%s_every_value_sourced_or_assumed" % re.sub(
                r"\W", "_", os.path.basename(path)[:-len(".machine")])
            if m.errors:
                bad += 1
                print("not ok %d %s" % (i, name))
                for e in m.errors:
                    print("    # " + e)
            else:
                print("ok %d %s: %d parameters, %d assumed" % (i, name, len(m.params), len(m.assumed())))
        print("%d passed, %d failed" % (i - bad, bad))
        sys.exit(1 if bad else 0)
    m = load(sys.argv[2])
    over = {}
    for kv in sys.argv[3:]:
        k, v = kv.split("=", 1)
        over[k] = float(v)
    print(" ".join(m.plugin_args(over)))


if __name__ == "__main__":
    main()
