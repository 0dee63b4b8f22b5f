#!/usr/bin/env python3
"""Check kgate's layering: which source file depends on which, from the built objects and the
#include lines, against the layer order of the layout.

    scripts/layers.py [--build DIR] [--source DIR] [--target NAME]... [--dot FILE] [--dot-files]

Layers (a file's layer is its folder; a dependency may only point to a lower layer, or stay in
its own folder):

    0  gates/core/                                        errors, files, registry, report, ...
    1  gates/parity/ gates/preflight/ gates/hotpath/ gates/bench/ gates/counters/ one folder per gate; one gate
       never depends on another; gates/gate.h (the gate interface) is shared by them
    2  gates/driver/                                      the driver, the one gate table, the
                                                          in-process session, case isolation
    3  gates/git/ gates/report/                           libgit2 plumbing; exporters, status, HTTP
    4  gates/marks/                                       marks format, advance, marks on git
    5  gates/history/ gates/production/                   run history; the production step
       gates/selftest/ gates/ab/                          the selftest's engine; the ab gate
    6  runners/cli/                                       one file per command
    include/kgate/ (the public API) may be included from any layer; runners/*.c (the mains) sit
    above everything.

What it reports, each on its own lines:
  (a) cycles: every strongly connected component of more than one file, in the symbol graph (an
      undefined symbol of A's object defined in B's object: A -> B) and in the include graph;
  (b) layer violations in the symbol graph: A -> B where B's layer is above A's, or both are
      gates of layer 1 in different folders ("bench -> hotpath");
  (c) the same for #include "..." edges between the library's sources and headers.
Exit 0 when there is none, 1 when there is one, 2 when the build cannot be read.

The sources are those of the library target(s) (--target, default: every layer library, kgate and kgate_*) in the build's
compile_commands.json (CMAKE_EXPORT_COMPILE_COMMANDS); without that file, the objects under
*/CMakeFiles/<target>.dir/. Symbols come from `nm -P -g` of each object.

--dot FILE writes the graph in Graphviz DOT (FILE '-' = stdout): one node per folder (per file
with --dot-files), ranked by layer, solid edges for symbols, dashed for includes only, red for a
violation; `dot -Tsvg FILE > layers.svg` draws it.
"""
import argparse
import collections
import json
import os
import re
import shlex
import subprocess
import sys

GATE_FOLDERS = ("parity", "preflight", "hotpath", "bench", "counters")
LAYER_NAMES = {-1: "public API", 0: "0: core", 1: "1: gates", 2: "2: driver",
               3: "3: git, report", 4: "4: marks", 5: "5: history, production",
               6: "6: command line", 7: "mains"}
# Folders under gates/ above the gates, by layer.
FOLDER_LAYERS = {"driver": 2, "git": 3, "report": 3, "marks": 4, "history": 5, "production": 5,
                 "selftest": 5, "ab": 5}
SOURCE_EXTS = (".c", ".cc", ".cpp", ".cxx", ".cu")
HEADER_EXTS = (".h", ".hh", ".hpp", ".cuh", ".inc")


def place(rel):
    """(layer, group) of a path relative to the source root; layer None = outside the layout."""
    parts = rel.split("/")
    if parts[0] == "include":
        return (-1, "include/kgate")
    if parts[0] == "gates":
        if len(parts) == 2:
            if parts[1] == "gate.h":
                return (1, "gate.h")
            return (None, "gates")
        if parts[1] == "core":
            return (0, "core")
        if parts[1] in GATE_FOLDERS:
            return (1, parts[1])
        if parts[1] in FOLDER_LAYERS:
            return (FOLDER_LAYERS[parts[1]], parts[1])
        return (None, "gates/" + parts[1])
    if parts[0] == "runners":
        if len(parts) >= 3 and parts[1] == "cli":
            return (6, "cli")
        return (7, "runners")
    return (None, parts[0])


def violation(a, b):
    """Why the dependency a -> b (relative paths) breaks the layering, or None."""
    (la, ga), (lb, gb) = place(a), place(b)
    if la is None or lb is None or ga == gb:
        return None
    if lb == -1:
        return None                      # the public API: anyone may use it
    if la == -1:
        return "the public API depends on %s (layer %d)" % (gb, lb)
    if lb > la:
        return "layer %d (%s) depends on layer %d (%s)" % (la, ga, lb, gb)
    if la == lb == 1 and ga in GATE_FOLDERS and gb in GATE_FOLDERS:
        return "gate %s depends on gate %s" % (ga, gb)
    return None


# ---- the build: sources, objects, include paths ------------------------------------------------

def from_compile_commands(build, source, target):
    path = os.path.join(build, "compile_commands.json")
    if not os.path.exists(path):
        return None
    with open(path) as fh:
        entries = json.load(fh)
    marker = "/CMakeFiles/%s.dir/" % target
    out = []
    for e in entries:
        args = e["arguments"] if "arguments" in e else shlex.split(e["command"])
        obj = e.get("output")
        incs = []
        for i, a in enumerate(args):
            if a == "-o" and i + 1 < len(args) and obj is None:
                obj = args[i + 1]
            for flag in ("-I", "-isystem", "-iquote"):
                if a == flag and i + 1 < len(args):
                    incs.append(args[i + 1])
                elif a.startswith(flag) and len(a) > len(flag) and flag == "-I":
                    incs.append(a[2:])
        if obj is None:
            continue
        obj = os.path.normpath(os.path.join(e["directory"], obj))
        if marker not in "/" + os.path.relpath(obj, build).replace(os.sep, "/"):
            continue
        src = os.path.normpath(os.path.join(e["directory"], e["file"]))
        incs = [os.path.normpath(os.path.join(e["directory"], d)) for d in incs]
        out.append((src, obj, incs))
    return out


def from_object_scan(build, source, target):
    """The objects under */CMakeFiles/<target>.dir/, mapped back to their sources."""
    out = []
    for dirpath, _dirs, files in os.walk(build):
        rel = os.path.relpath(dirpath, build).replace(os.sep, "/")
        m = re.match(r"(?:(.*)/)?CMakeFiles/%s\.dir(?:/(.*))?$" % re.escape(target), rel)
        if not m:
            continue
        for f in files:
            if not f.endswith(".o"):
                continue
            srcrel = "/".join(p for p in (m.group(1), m.group(2), f[:-2]) if p)
            srcrel = srcrel.replace("/__/", "/../").replace("__/", "../")
            src = os.path.normpath(os.path.join(source, srcrel))
            out.append((src, os.path.join(dirpath, f), []))
    return out


def nm_symbols(obj):
    """(defined, undefined) external symbols of an object."""
    r = subprocess.run(["nm", "-P", "-g", obj], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if r.returncode != 0:
        raise RuntimeError("nm %s: %s" % (obj, r.stderr.strip()))
    defined, undefined = set(), set()
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) < 2 or line.endswith(":"):
            continue
        name, kind = f[0], f[1]
        (undefined if kind in ("U", "w", "v") else defined).add(name)
    return defined, undefined


def demangle(names):
    mangled = [n for n in names if n.startswith("_Z")]
    if not mangled:
        return {}
    try:
        r = subprocess.run(["c++filt"], input="\n".join(mangled), stdout=subprocess.PIPE,
                           universal_newlines=True)
        return dict(zip(mangled, r.stdout.splitlines()))
    except OSError:
        return {}


# ---- includes ----------------------------------------------------------------------------------

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


def strip_comments(text):
    # Block and line comments out, string literals kept (an include's name is one).
    return re.sub(r'/\*.*?\*/|//[^\n]*|("(?:\\.|[^"\\\n])*")',
                  lambda m: m.group(1) or re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)


def include_edges(files, inc_dirs, source):
    """{(a, b): [line, ...]} over the files, following every quoted include found in the tree."""
    edges = collections.defaultdict(list)
    seen, todo = set(), list(files)
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        try:
            with open(f, encoding="utf-8", errors="replace") as fh:
                text = strip_comments(fh.read())
        except OSError:
            continue
        for m in INCLUDE.finditer(text):
            name = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            dirs = [os.path.dirname(f)] + inc_dirs.get(f, []) + inc_dirs.get(None, [])
            for d in dirs:
                cand = os.path.normpath(os.path.join(d, name))
                if os.path.isfile(cand):
                    if cand.startswith(source + os.sep):
                        edges[(f, cand)].append(line)
                        todo.append(cand)
                    break
    return edges


# ---- graphs ------------------------------------------------------------------------------------

def sccs(nodes, succ):
    """Tarjan's strongly connected components (iterative), each sorted."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(succ.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(succ.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def short_list(items, n=4):
    items = sorted(items)
    return ", ".join(items[:n]) + (", ... (%d in all)" % len(items) if len(items) > n else "")


def write_dot(path, rel, sym_edges, inc_edges, per_file):
    node = (lambda f: rel(f)) if per_file else (lambda f: place(rel(f))[1])
    layer_of = {}
    edges = {}
    for kind, graph in (("symbol", sym_edges), ("include", inc_edges)):
        for (a, b) in graph:
            na, nb = node(a), node(b)
            for f, n in ((a, na), (b, nb)):
                layer_of[n] = place(rel(f))[0]
            if na == nb:
                continue
            e = edges.setdefault((na, nb), {"symbol": 0, "include": 0, "bad": False})
            e[kind] += 1
            e["bad"] = e["bad"] or violation(rel(a), rel(b)) is not None
    lines = ["digraph kgate_layers {", "  rankdir=BT;", "  node [shape=box, fontname=Helvetica];"]
    bylayer = collections.defaultdict(list)
    for n, lay in layer_of.items():
        bylayer[lay].append(n)
    for lay in sorted(bylayer, key=lambda x: (x is None, x if x is not None else 0)):
        label = LAYER_NAMES.get(lay, "outside the layout")
        lines.append('  subgraph "cluster_%s" { label="%s"; rank=same;' % (lay, label))
        for n in sorted(bylayer[lay]):
            lines.append('    "%s";' % n)
        lines.append("  }")
    for (a, b), e in sorted(edges.items()):
        attrs = []
        if not e["symbol"]:
            attrs.append("style=dashed")
        if e["bad"]:
            attrs.append("color=red")
        if not per_file:
            attrs.append('label="%d"' % (e["symbol"] or e["include"]))
        lines.append('  "%s" -> "%s"%s;' % (a, b, " [%s]" % ", ".join(attrs) if attrs else ""))
    lines.append("}")
    text = "\n".join(lines) + "\n"
    if path == "-":
        sys.stdout.write(text)
    else:
        with open(path, "w") as fh:
            fh.write(text)


def main():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 2)[2])
    ap.add_argument("--build", default=os.environ.get("KG_BUILD_DIR", os.path.join(here, "build")),
                    help="the CMake build folder (default $KG_BUILD_DIR or build/)")
    ap.add_argument("--source", default=here, help="the source tree (default this checkout)")
    ap.add_argument("--target", action="append",
                    help="a library target whose sources are checked (repeatable; default: every layer library)")
    ap.add_argument("--dot", metavar="FILE", help="write the graph as Graphviz DOT ('-' = stdout)")
    ap.add_argument("--dot-files", action="store_true", help="one DOT node per file, not per folder")
    a = ap.parse_args()
    source = os.path.realpath(a.source)
    build = os.path.realpath(a.build)
    say = sys.stderr if a.dot == "-" else sys.stdout

    targets = a.target or ["kgate", "kgate_core", "kgate_parity", "kgate_preflight", "kgate_hotpath",
                           "kgate_bench", "kgate_counters", "kgate_driver", "kgate_git", "kgate_report", "kgate_marks",
                           "kgate_history", "kgate_production", "kgate_selftest", "kgate_ab"]
    units, how = [], "compile_commands.json"
    for t in targets:
        units += from_compile_commands(build, source, t) or []
    if not units:
        how = "CMakeFiles/<target>.dir"
        for t in targets:
            units += from_object_scan(build, source, t)
    if not units:
        print("layers: no object of target %s under %s (configure and build first)"
              % (", ".join(targets), build), file=sys.stderr)
        return 2

    def rel(f):
        r = os.path.relpath(os.path.realpath(f), source).replace(os.sep, "/")
        return r

    missing = [o for _s, o, _i in units if not os.path.exists(o)]
    if missing:
        print("layers: %d object(s) not built, e.g. %s (build first)" % (len(missing), missing[0]),
              file=sys.stderr)
        return 2

    # (a), (b): the symbol graph.
    defs = collections.defaultdict(set)
    undefs = {}
    for src, obj, _inc in units:
        d, u = nm_symbols(obj)
        for s in d:
            defs[s].add(src)
        undefs[src] = u
    sym_edges = collections.defaultdict(set)
    for src, u in undefs.items():
        for s in u:
            for other in defs.get(s, ()):
                if other != src:
                    sym_edges[(src, other)].add(s)
    names = demangle({s for ss in sym_edges.values() for s in ss})

    # (c): the include graph over the library's sources and the headers they reach.
    inc_dirs = {src: [d for d in inc if d.startswith(source)] for src, _o, inc in units}
    inc_dirs[None] = sorted({d for ds in inc_dirs.values() for d in ds}) or \
        [os.path.join(source, d) for d in ("gates", "include")]   # the library's own -I dirs
    srcs = [src for src, _o, _i in units]
    extra = []
    for top in ("gates", "runners", "include"):
        for dirpath, _dirs, files in os.walk(os.path.join(source, top)):
            extra += [os.path.join(dirpath, f) for f in files if f.endswith(HEADER_EXTS + SOURCE_EXTS)
                      and os.path.join(dirpath, f) not in srcs]
    inc_edges = include_edges(srcs + sorted(extra), inc_dirs, source)

    nfiles = len({f for e in list(sym_edges) + list(inc_edges) for f in e} | set(srcs))
    print("layers: %d objects of %s (from %s), %d files; %d symbol edges, %d include edges"
          % (len(units), "+".join(targets), how, nfiles, len(sym_edges), len(inc_edges)), file=say)

    problems = 0
    for kind, graph, detail in (
            ("symbols", sym_edges, lambda e: "via " + short_list(names.get(s, s) for s in sym_edges[e])),
            ("includes", inc_edges, lambda e: "(#include at line %s)" % ",".join(map(str, sorted(set(inc_edges[e])))))):
        succ = collections.defaultdict(set)
        nodes = set()
        for (x, y) in graph:
            succ[x].add(y)
            nodes.update((x, y))
        for comp in sccs(nodes, succ):
            if len(comp) < 2:
                continue
            problems += 1
            print("cycle (%s) of %d files: %s" % (kind, len(comp), " ".join(rel(f) for f in comp)), file=say)
            cs = set(comp)
            for (x, y) in sorted(graph):
                if x in cs and y in cs:
                    print("    %s -> %s %s" % (rel(x), rel(y), detail((x, y))), file=say)
        for (x, y) in sorted(graph, key=lambda e: (rel(e[0]), rel(e[1]))):
            why = violation(rel(x), rel(y))
            if why:
                problems += 1
                print("layer (%s): %s -> %s %s: %s" % (kind, rel(x), rel(y), detail((x, y)), why), file=say)

    outside = sorted({rel(f) for e in list(sym_edges) + list(inc_edges) for f in e} | {rel(s) for s in srcs})
    outside = [f for f in outside if place(f)[0] is None]
    for f in outside:
        print("note: %s is outside the layout (no layer; not checked)" % f, file=say)

    if a.dot:
        write_dot(a.dot, rel, sym_edges, inc_edges, a.dot_files)
    if problems:
        print("layers: %d violation(s)" % problems, file=say)
        return 1
    print("layers: no cycle, no edge against the layer order", file=say)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        sys.exit(1)
    except RuntimeError as e:
        print("layers: %s" % e, file=sys.stderr)
        sys.exit(2)
