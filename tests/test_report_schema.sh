#!/usr/bin/env bash
# The report format kgate-report/1 against baselines/report.schema.json: every report the
# CPU-capable commands write here (run diagnostic, production and --devices, each gate,
# selftest, ab, the defects runner) and the recorded H200 run (tests/data/h200-run-report.json,
# all four gates and the selftest on a GPU) validate; reports with keys or values no writer
# produces do not; and the keys of gates/core/report_keys.h and of the schema are the same set,
# group by group (a key is declared once and documented once). Needs python3-jsonschema
# (scripts/deps.sh).
# Usage: test_report_schema.sh KGATE KGATE_DEFECTS [PYTHON3]
KG=$(realpath "$1")
KD=$(realpath "$2")
PY=${3:-/usr/bin/python3}
. "$(dirname "$0")/lib.sh"
SCHEMA=$SRC/baselines/report.schema.json
KEYS=$SRC/gates/core/report_keys.h
H200=$SRC/tests/data/h200-run-report.json

"$PY" -c 'from jsonschema import Draft202012Validator' 2>/dev/null || {
    echo "FAIL: $PY has no jsonschema (Debian: python3-jsonschema; scripts/deps.sh installs it)"
    exit 1
}

# validate SCHEMA FILE...: one line per file, the first errors of an invalid one; exit 1 if any.
cat >"$T/validate.py" <<'PY'
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1]))
Draft202012Validator.check_schema(schema)
v, rc = Draft202012Validator(schema), 0
for f in sys.argv[2:]:
    errs = sorted(v.iter_errors(json.load(open(f))), key=lambda e: list(e.absolute_path))
    for e in errs[:5]:
        print(f"  {f}: /{'/'.join(map(str, e.absolute_path))}: {e.message[:240]}")
    print(f"{f}: {'valid' if not errs else 'INVALID'}")
    rc |= bool(errs)
sys.exit(rc)
PY

# ---- the schema is a valid draft 2020-12 schema, and the recorded GPU run is valid ----------
"$PY" "$T/validate.py" "$SCHEMA" "$H200" >"$T/h200.log" 2>&1 && ok \
    || { bad "the H200 report"; cat "$T/h200.log"; }
[ "$(jq -r '.device.class' "$H200")" = "NVIDIA H200/sm_90" ] && ok || bad "the H200 fixture is not the H200 run"
[ "$(jq -c '[.results[].gate] | unique' "$H200")" = \
  '["bench","hotpath","parity","preflight","selftest"]' ] && ok || bad "the H200 fixture lacks a gate"
"$PY" "$SRC/tests/data/h200_variants.py" "$H200" "$T/h200-decided.json" && ok || bad "h200_variants.py"

# ---- reports the real commands write without a GPU ------------------------------------------
gen() { # gen NAME WANT_EXIT CMD...: run it with --report $T/NAME.json
    local name=$1 want=$2; shift 2
    "$@" --report "$T/$name.json" >"$T/$name.out" 2>&1; local rc=$?
    [ "$rc" -eq "$want" ] && [ -s "$T/$name.json" ] && ok \
        || { bad "$name: exit $rc (want $want) or no report"; tail -5 "$T/$name.out"; }
}
gen run 3 "$KG" run --diagnostic --seed 1
gen parity 3 "$KG" parity --seed 2
gen preflight 0 "$KG" preflight
gen preflight-static 0 "$KG" preflight --static
gen hotpath 3 "$KG" hotpath --filter '^axpy/'
gen bench 3 "$KG" bench --filter '^axpy/'
gen counters 3 "$KG" counters --filter '^axpy/'
gen selftest 3 "$KG" selftest --seed 3
gen run-devices 3 "$KG" run --diagnostic --skip-selftest --seed 1 --filter '^axpy/' --devices 0,1
jq -e '[.results[] | .device] | length > 0 and all(. == 0 or . == 1)' "$T/run-devices.json" \
    >/dev/null && ok || bad "run --devices 0,1: a row without its GPU (results[].device)"
gen ab 3 "$KG" ab "$KG" "$KG" --rounds 3
gen defects-preflight 1 "$KD" preflight
gen defects-run 1 "$KD" run --diagnostic --skip-selftest --seed 4
# issue #27: shard reports and their merge
gen shard1 3 "$KG" parity --seed 2 --shard 1/2
gen shard2 3 "$KG" parity --seed 2 --shard 2/2
"$KG" report --merge "$T/merged.json" "$T/shard1.json" "$T/shard2.json" >"$T/merged.out" 2>&1
[ $? -eq 3 ] && [ -s "$T/merged.json" ] && ok || { bad "report --merge"; tail -5 "$T/merged.out"; }
# run --production (in a scratch repository: marks live in git) refuses to advance without a
# GPU and says so in marks_update.
(
    export GIT_CONFIG_GLOBAL=$T/gitconfig GIT_CONFIG_NOSYSTEM=1
    git config --global user.name "Test Setup"; git config --global user.email setup@example.com
    mkdir "$T/repo" && cd "$T/repo" && git init -q && echo x >README && git add README \
        && git commit -qm initial && exec "$KG" run --production --seed 5 --report "$T/production.json"
) >"$T/production.out" 2>&1; rc=$?
[ "$rc" -eq 3 ] && jq -e '.mode == "production" and .marks_update.committed == false' \
    "$T/production.json" >/dev/null && ok || { bad "production: exit $rc"; tail -5 "$T/production.out"; }
reports=("$T"/*.json)
"$PY" "$T/validate.py" "$SCHEMA" "${reports[@]}" >"$T/cpu.log" 2>&1 && ok || { bad "a report the CLI wrote is invalid"; cat "$T/cpu.log"; }
[ "$(grep -c ': valid$' "$T/cpu.log")" -eq "${#reports[@]}" ] && ok || bad "not every report validated"

# A case's declared expected failure: XFAIL and XPASS verdicts, counted in the summary.
jq '.results[0].verdict = "XFAIL" | .results[1].verdict = "XPASS" | .summary.XFAIL = 1 | .summary.XPASS = 1' \
    "$T/defects-run.json" >"$T/xfail.json"
"$PY" "$T/validate.py" "$SCHEMA" "$T/xfail.json" >"$T/xfail.log" 2>&1 && ok \
    || { bad "a report with XFAIL/XPASS verdicts is invalid"; cat "$T/xfail.log"; }

# ---- what no writer produces is rejected ----------------------------------------------------
reject() { # reject DESC JQ-FILTER [FILE]
    jq "$2" "${3:-$H200}" >"$T/bad.json" || { bad "$1: jq"; return; }
    "$PY" "$T/validate.py" "$SCHEMA" "$T/bad.json" >"$T/bad.log" 2>&1 && bad "$1: accepted" || ok
}
first_bench='(.results | map(.gate == "bench") | index(true))'
reject "a figure no gate writes (mark_us)" ".results[$first_bench].figures.mark_us = 2.0"
reject "a figure no gate writes (pct_of_ceiling)" ".results[$first_bench].figures.pct_of_ceiling = 41.5"
reject "a bench row without its median" "del(.results[$first_bench].figures.median_us)"
reject "an unknown decision" ".results[$first_bench].figures.decision = \"FASTER\""
reject "a mark without its comparison" ".results[$first_bench].figures.decision = \"SAME\""
reject "a regression that passes" \
    '(.results[] | select(.figures.decision? == "REGRESSED")).verdict = "PASS"' "$T/h200-decided.json"
reject "an unknown verdict" '.results[0].verdict = "MAYBE"'
reject "an unknown summary verdict" '.summary.XFAILED = 1'
reject "an unknown gate" '.results[0].gate = "lint"'
reject "an unknown top-level key" '.wall_s = 3'
reject "a shard without its index" 'del(.shard.index)' "$T/shard1.json"
reject "a merged report with an index" '.shard.index = 1' "$T/merged.json"
reject "an undeclared device field" '.device.memory = 1'
reject "a row's GPU that is no ordinal" '.results[0].device = "0"' "$T/run-devices.json"
reject "a row's GPU out of range" '.results[0].device = -1' "$T/run-devices.json"
reject "a devices list of one GPU (that is 'device')" '.devices = [.device]'
reject "a certifying diagnostic run" '.certifying = true'
reject "a hotpath row without its checks" \
    'del((.results[] | select(.gate == "hotpath") | .figures.graph))'
reject "a preflight kernel row without its verdict" \
    'del((.results[] | select(.gate == "preflight") | .figures.kernels[0].verdict))'
reject "a parity figure of another gate" \
    '(.results[] | select(.gate == "parity") | .figures.median_us) = 1'

# ---- one key, one macro, one place in the schema --------------------------------------------
"$PY" - "$KEYS" "$SCHEMA" >"$T/keys.log" 2>&1 <<'PY' && { ok; cat "$T/keys.log"; } || { bad "keys of report_keys.h and the schema differ"; cat "$T/keys.log"; }
import json, re, sys
text = open(sys.argv[1]).read()
macros = dict(re.findall(r'^#define\s+(KG_(?:RK|RES|FIG)_\w+)\s+"([^"]*)"', text, re.M))
assert len(macros) > 200, "no key macros found"
undeclared = re.findall(r'^#define\s+(KG_(?:RK|RES|FIG)_\w+)\s+(?!")(\S+)', text, re.M)
s = json.load(open(sys.argv[2]))
def names(o, acc):  # the property names of a part of the schema ($refs not followed)
    if isinstance(o, dict):
        for k, v in o.items():
            if k == "properties" and isinstance(v, dict):
                acc.update(v)
            if k not in ("$defs", "if"):  # a condition names keys documented elsewhere
                names(v, acc)
    elif isinstance(o, list):
        for x in o:
            names(x, acc)
    return acc
# each group of macros against the part of the schema that documents it
groups = [("KG_RES_", ["result"]), ("KG_FIG_PARITY_", ["parity_figures", "parity_decided"]),
          ("KG_FIG_PF_", ["preflight_figures", "preflight_row", "preflight_decided"]),
          ("KG_FIG_HP_", ["hotpath_figures", "hotpath_decided"]),
          ("KG_FIG_AB_", ["ab_figures", "ab_decided"]),
          ("KG_FIG_FAULT_", ["fault"]),
          ("KG_FIG_CT_", ["counters_figures"]),
          ("KG_FIG_", ["bench_figures", "bench_decided", "mark", "kernel_trace", "nvml"]),
          ("KG_RK_", [None, "provenance", "device", "selftest", "preflight_info", "bench_info",
                      "counters_info", "marks_update", "phase_seconds"])]
seen, bad = set(), [f"{m} is not a string key: {v}" for m, v in undeclared
                    if not v.startswith(("KG_", "\\"))]  # an alias, a list
for prefix, parts in groups:
    mine = {m: v for m, v in macros.items() if m.startswith(prefix) and m not in seen}
    seen |= set(mine)
    where = set()
    for p in parts:
        names(s if p is None else s["$defs"][p], where)
    for m, v in sorted(mine.items()):
        if v not in where:
            bad.append(f"{m} \"{v}\" is not in the schema's {parts}")
    for k in sorted(where - set(mine.values()) - {"fault"}):  # figures.fault: a shared $ref
        bad.append(f"the schema's {parts} document \"{k}\", which no {prefix}* macro defines")
# A case of any gate can fault (gates/driver/worker.c): every gate's figures take figures.fault.
bad += [f"$defs/{g}_figures has no fault (a faulted {g} row would fail the schema)"
        for g in ("parity", "preflight", "hotpath", "bench", "counters", "ab")
        if s["$defs"][f"{g}_figures"].get("properties", {}).get("fault") != {"$ref": "#/$defs/fault"}]
covered = {p for _, ps in groups for p in ps if p}
bad += [f"$defs/{d} has keys no macro group covers" for d in s["$defs"]
        if d not in covered and names(s["$defs"][d], set())]
everywhere = names(s, set())
for d in s["$defs"].values():
    names(d, everywhere)
bad += [f"the schema names \"{k}\", which no macro defines"
        for k in sorted(everywhere - set(macros.values()))]
print("\n".join(bad) or f"{len(macros)} key macros, {len(set(macros.values()))} spellings: consistent")
sys.exit(bool(bad))
PY

# ---- the readers spell no key themselves ----------------------------------------------------
if grep -nE 'cJSON_(GetObjectItem(CaseSensitive)?|HasObjectItem)\([^,]+, *"' "$SRC"/gates/report/*.c >"$T/lit.log"; then
    bad "gates/report reads a report key by a literal, not its report_keys.h macro:"; cat "$T/lit.log"
else ok; fi
finish
