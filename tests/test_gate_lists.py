#!/usr/bin/env python3
"""The gate table (gates/driver/gates.c, kg_gates[]) is the one list of gates (issue #26 item 1);
every other place that must name them all agrees with it, in its order where it has one:
each gate's .name in its folder, the driver's CMake LAYERS, scripts/layers.py's GATE_FOLDERS,
the report schema's gate enums and report_keys.h's KG_RV_GATE_* values. And no code under
gates/ or runners/ names a gate (its kg_gate_<x> object or its name as a string literal)
outside its own folder, the table and report_keys.h (the report's declared gate values):
the rest asks the gate interface (docs/internals/gate-interface.md).

usage: test_gate_lists.py SOURCE_DIR          check the tree (exit 0 agree, 1 not)
       test_gate_lists.py SOURCE_DIR --plant  each list with one gate dropped must fail
"""
import json
import re
import sys
from pathlib import Path

EXTRA = {"run", "selftest", "ab", ""}  # enum values beside the gates (commands, non-gate rows)


def table(src):
    text = (src / "gates/driver/gates.c").read_text()
    body = re.search(r"kg_gates\[\]\s*=\s*\{([^}]*)\}", text).group(1)
    return re.findall(r"&kg_gate_(\w+)", body)


def lists(src):
    """Every other list: (where, names, ordered)."""
    out = []
    names = []
    for obj in table(src):
        hits = [m.group(1) for f in sorted((src / "gates").glob("*/*.c"))
                for m in [re.search(r"const struct kg_gate kg_gate_%s = \{\s*\.name = \"(\w+)\"" % obj,
                                    f.read_text())] if m]
        names.append(hits[0] if hits else "(no .name for kg_gate_%s)" % obj)
    out.append(("each gate's .name", names, True))
    cm = (src / "gates/CMakeLists.txt").read_text()
    drv = re.search(r"kg_layer\(kgate_driver SOURCES \S+\s+LAYERS ([^)]*)\)", cm).group(1)
    out.append(("gates/CMakeLists.txt kgate_driver LAYERS",
                [w[len("kgate_"):] for w in drv.split()], True))
    ly = (src / "scripts/layers.py").read_text()
    folders = re.search(r"GATE_FOLDERS = \(([^)]*)\)", ly).group(1)
    out.append(("scripts/layers.py GATE_FOLDERS", re.findall(r'"(\w+)"', folders), True))
    schema = json.loads((src / "baselines/report.schema.json").read_text())
    found = []

    def walk(node, path):
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "enum" and isinstance(v, list) and "parity" in v:
                    found.append((path, [x for x in v if x not in EXTRA]))
                walk(v, path + "/" + k)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, "%s[%d]" % (path, i))
    walk(schema, "")
    for path, v in found:
        out.append(("report.schema.json " + path, v, True))
    rk = (src / "gates/core/report_keys.h").read_text()
    macros = dict(re.findall(r'#define (KG_\w+) "(\w+)"', rk))
    rv = []
    for name, val in re.findall(r"#define KG_RV_GATE_(\w+) (\S+)", rk):
        val = macros.get(val, val.strip('"'))
        if val not in EXTRA:
            rv.append(val)
    out.append(("report_keys.h KG_RV_GATE_*", rv, False))
    return out


DEF = re.compile(r"^(?:static\s+)?const struct kg_gate kg_gate_(\w+) = \{\s*\.name = \"(\w+)\"", re.M)
CODE_EXT = (".c", ".h", ".cu", ".cpp")
NAME_OK = ("gates/driver/gates.c",)          # the table
LITERAL_OK = NAME_OK + ("gates/core/report_keys.h",)  # and the report's gate values
# A literal equal to a gate's name that is not the gate, each with why.
LITERAL_ALLOW = {
    ("runners/cli/list.c", '"parity"'): "the case's parity kind (kg_case_desc.parity), a field of list --json",
}


def strip_comments(text):
    """C comments out, string literals kept (a comment may name a gate; code may not)."""
    return re.sub(r'//[^\n]*|/\*.*?\*/|("(?:\\.|[^"\\])*")',
                  lambda m: m.group(1) or " ", text, flags=re.S)


def sources(src):
    return {str(f.relative_to(src)): f.read_text(errors="replace")
            for top in ("gates", "runners") for f in sorted((src / top).rglob("*"))
            if f.suffix in CODE_EXT and f.is_file()}


def gate_defs(files):
    """{object: (name, folder)} of every gate defined under gates/ (the table's and ab)."""
    return {m.group(1): (m.group(2), path.rsplit("/", 1)[0] + "/")
            for path, text in files.items() if path.startswith("gates/")
            for m in DEF.finditer(text)}


def name_leaks(files):
    """Every (file, what) that names a gate outside its folder, the table and report_keys.h."""
    leaks = []
    table_names = {n for n, _ in gate_defs(files).values()} - EXTRA  # ab: also a command name
    for obj, (name, folder) in sorted(gate_defs(files).items()):
        sym, lit = re.compile(r"\bkg_gate_%s\b" % obj), '"%s"' % name
        for path, text in files.items():
            if path.startswith(folder):
                continue
            code = strip_comments(text)
            if path not in NAME_OK and sym.search(code):
                leaks.append((path, "kg_gate_" + obj))
            if (name in table_names and path not in LITERAL_OK and lit in code
                    and (path, lit) not in LITERAL_ALLOW):
                leaks.append((path, lit))
    return leaks


def check_names(src, plant):
    files = sources(src)
    defs = gate_defs(files)
    if len(defs) < 5:
        print("FAIL: found only %d gate definitions (the parsing no longer matches the tree)" % len(defs))
        return 1
    if plant:  # a file outside every gate folder that names each gate must be caught, twice
        caught = 0
        for obj, (name, _) in defs.items():
            planted = dict(files)
            planted["runners/cli/planted.c"] = "int x = &kg_gate_%s != 0; /* \"%s\" */\nconst char *y = \"%s\";\n" % (obj, name, name)
            want = 2 if name not in EXTRA else 1  # ab's name is a command's too: its symbol only
            caught += len([1 for p, _ in name_leaks(planted) if p == "runners/cli/planted.c"]) == want
        print("test_gate_lists --plant: %d of %d planted gate names caught" % (caught, len(defs)))
        return 0 if caught == len(defs) else 1
    leaks = name_leaks(files)
    for path, what in leaks:
        print("FAIL: %s names the gate %s outside its folder (ask the gate interface, gates/gate.h)"
              % (path, what))
    print("test_gate_lists: %d gate definitions, %d names outside their folders" % (len(defs), len(leaks)))
    return 1 if leaks else 0


def check(want, others, quiet=False):
    bad = 0
    for where, names, ordered in others:
        ok = names == want if ordered else sorted(names) == sorted(want)
        if not ok and not quiet:
            print("FAIL: %s lists %s; the gate table (gates/driver/gates.c) %s" % (where, names, want))
        bad += not ok
    return bad


def main():
    src = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    want = table(src)
    others = lists(src)
    if len(others) < 5 or len(want) < 2:
        print("FAIL: found only %d lists / %d gates (the parsing no longer matches the tree)"
              % (len(others), len(want)))
        return 1
    if "--plant" in sys.argv:  # every list with its last gate dropped must be caught
        missed = [w for w, n, o in others if check(want, [(w, n[:-1], o)], quiet=True) == 0]
        for w in missed:
            print("FAIL: a gate dropped from %s went unnoticed" % w)
        print("test_gate_lists --plant: %d lists, %d planted drops missed" % (len(others), len(missed)))
        return 1 if missed or check_names(src, True) else 0
    bad = check(want, others)
    print("test_gate_lists: %d gates, %d lists checked, %d disagree" % (len(want), len(others), bad))
    return 1 if bad or check_names(src, False) else 0


if __name__ == "__main__":
    sys.exit(main())
