#!/usr/bin/env python3
"""Compare two kgate reports field by field: the same (gate, case) rows, the same verdicts, and
per gate how many messages and figures are equal. Figures that are measurements (times, clocks,
counts of a live GPU, energy) differ between any two runs; the deterministic ones (parity's
errors, preflight's resources, the hot path's checks, the selftest's matrix) must not.

usage: scripts/report-diff.py BEFORE.json AFTER.json   (exit 1 when a row or verdict differs,
       or a deterministic gate's message or figures do)"""
import json
import sys

DETERMINISTIC = {"parity", "preflight", "hotpath"}
# selftest rows: the verdict (caught or not) must hold; their messages quote what the defect did
# this time (a race's byte counts, a backtrace's addresses in this build)
VOLATILE = {"timing", "devices"}  # accounting, not results (a --devices run lists its GPUs)


def rows(path):
    rep = json.load(open(path))
    out = {}
    for r in rep["results"]:
        out[(r["gate"], r["case"])] = r
    return rep, out


def main():
    a_rep, a = rows(sys.argv[1])
    b_rep, b = rows(sys.argv[2])
    bad = 0
    only_a, only_b = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    for k in only_a:
        print(f"only in {sys.argv[1]}: {k}")
    for k in only_b:
        print(f"only in {sys.argv[2]}: {k}")
    bad += len(only_a) + len(only_b)
    stats = {}
    for k in sorted(set(a) & set(b)):
        g = k[0]
        s = stats.setdefault(g, [0, 0, 0, 0])
        s[0] += 1
        ra, rb = a[k], b[k]
        if ra["verdict"] == rb["verdict"]:
            s[1] += 1
        else:
            bad += 1
            print(f"verdict {k}: {ra['verdict']} -> {rb['verdict']}")
        if ra["message"] == rb["message"]:
            s[2] += 1
        elif g in DETERMINISTIC:
            bad += 1
            print(f"message {k}:\n  {ra['message']}\n  {rb['message']}")
        if ra.get("figures") == rb.get("figures"):
            s[3] += 1
        elif g in DETERMINISTIC:
            bad += 1
            print(f"figures {k}: differ")
    print(f"{'gate':10} {'rows':>5} {'verdict=':>9} {'message=':>9} {'figures=':>9}")
    for g, s in stats.items():
        print(f"{g:10} {s[0]:5} {s[1]:9} {s[2]:9} {s[3]:9}")
    keys_a, keys_b = set(a_rep) - VOLATILE, set(b_rep) - VOLATILE
    if keys_a != keys_b:
        print(f"top-level keys: only before {sorted(keys_a - keys_b)}, only after {sorted(keys_b - keys_a)}")
    for key in ("summary", "seed", "gates", "mode", "certifying", "schema"):
        if a_rep.get(key) != b_rep.get(key):
            bad += 1
            print(f"{key}: {a_rep.get(key)} -> {b_rep.get(key)}")
    sel_a = {r["case"]: r for r in (a_rep.get("selftest") or {}).get("matrix", [])}
    sel_b = {r["case"]: r for r in (b_rep.get("selftest") or {}).get("matrix", [])}
    for c in sorted(set(sel_a) | set(sel_b)):
        x, y = sel_a.get(c), sel_b.get(c)
        if not x or not y or x["outcome"] != y["outcome"] or x["expect_gate"] != y["expect_gate"]:
            bad += 1
            print(f"selftest matrix {c}: {x and x['outcome']} -> {y and y['outcome']}")
        elif x["observed"] != y["observed"]:  # a gate other than the one expected saw otherwise
            print(f"selftest matrix {c} (not its gate): {x['observed']} -> {y['observed']}")
    print("equal" if bad == 0 else f"{bad} differences")
    return 1 if bad else 0


sys.exit(main())
