#!/usr/bin/env bash
# Issue #29's benchmark: the main job's three forms on this GPU, one process each, in this order,
# sharing one cache directory (so the fresh selftest's certificate is what the reuse run takes):
#   fresh   kgate run --diagnostic --seed S
#   reuse   the same with --reuse-selftest
#   skip    the same with --skip-selftest
# Prints the per-part table from each report's timing (the selftest, each gate, a gate's own
# begin and end), the selftest's passes, the verdicts, and whether any (gate, case) verdict
# differs between the forms (the selftest's rows left out). A benchmark, not a test: the
# targets (fresh <= 30 s, reuse and skip <= 15 s on an H200) are printed against, never asserted.
#   usage: scripts/run-timing.sh [-b BUILD] [-s SEED] [-o DIR] [FORM ...]
# Exit: 0 every run wrote its report and every form agrees on every verdict, 1 a verdict
# differs, 2 usage, 4 a run wrote no report.
set -uo pipefail
cd "$(dirname "$0")/.."
B=build S=4242 O=''
while getopts "b:s:o:h" o; do
    case $o in b) B=$OPTARG ;; s) S=$OPTARG ;; o) O=$OPTARG ;; *) sed -n '2,14p' "$0"; exit 2 ;; esac
done
shift $((OPTIND - 1))
FORMS=("$@")
[ ${#FORMS[@]} -gt 0 ] || FORMS=(fresh reuse skip)
KG=$B/runners/kgate
[ -x "$KG" ] || { echo "run-timing: $KG not built" >&2; exit 2; }
command -v python3 >/dev/null || { echo "run-timing: needs python3" >&2; exit 2; }
O=${O:-$(mktemp -d /tmp/kgate-run-timing-XXXXXX)}
mkdir -p "$O/cache" || exit 2
now() { python3 -c 'import time; print(time.monotonic())'; }
for f in "${FORMS[@]}"; do
    case $f in
    fresh) args=() ;;
    reuse) args=(--reuse-selftest) ;;
    skip) args=(--skip-selftest) ;;
    *) echo "run-timing: unknown form '$f' (fresh, reuse, skip)" >&2; exit 2 ;;
    esac
    t0=$(now)
    KGATE_CACHE_DIR=$O/cache "$KG" run --diagnostic --seed "$S" "${args[@]}" \
        --report "$O/$f.json" >"$O/$f.txt" 2>&1
    rc=$?
    echo "$f: exit $rc, $(python3 -c "print(round($(now) - $t0, 1))") s of wall time (process)"
    [ -s "$O/$f.json" ] || { echo "run-timing: $f wrote no report ($O/$f.txt)" >&2; exit 4; }
done
python3 - "$O" "${FORMS[@]}" <<'PY'
import json, sys
d, forms = sys.argv[1], sys.argv[2:]
reps = {f: json.load(open(f"{d}/{f}.json")) for f in forms}
r0 = reps[forms[0]]
dev, tool = r0.get("device") or {}, r0.get("tool") or {}
print(f"\n{dev.get('name', 'no GPU')} {dev.get('uuid', '')}, CUDA driver API {dev.get('driver_cuda_version', '?')}, "
      f"kgate build {str(tool.get('build', '?'))[:12]}, seed {r0.get('seed')}, {d}")
gates = []
for f in forms:
    for p in reps[f]["timing"]["parts"]:
        if p["name"] != "selftest" and "/" not in p["name"] and p["name"] not in gates:
            gates.append(p["name"])
print("\n| run | wall s | selftest | " + " | ".join(gates) + " |")
print("| --- | ---: | ---: | " + " | ".join("---:" for _ in gates) + " |")
for f in forms:
    parts = {p["name"]: p for p in reps[f]["timing"]["parts"]}
    cell = lambda n: f"{parts[n]['wall_s']:.2f}" if n in parts else "-"
    print(f"| {f} | {reps[f]['timing']['total_s']:.1f} | {cell('selftest')} | "
          + " | ".join(cell(g) for g in gates) + " |")
ge = lambda p, k: f"{p[k]:.2f}" if k in p else "-"  # reports before the keys: "-"
print("\ngates' own begin and end (outside every case), s:")
for f in forms:
    print(f"  {f}: " + ", ".join(f"{p['name']} {ge(p, 'begin_s')}/{ge(p, 'end_s')}"
                                 for p in reps[f]["timing"]["parts"] if p["name"] in gates))
for f in forms:
    st = reps[f].get("selftest") or {}
    if st.get("passes"):
        print(f"selftest passes ({f}): " + ", ".join(f"{p['name']} {p['wall_s']:.2f}"
                                                     for p in st["passes"]))
def verdicts(r):
    return {(x["gate"], x["case"]): x["verdict"] for x in r["results"] if x["gate"] != "selftest"}
diff, base = 0, verdicts(r0)
for f in forms:
    v = verdicts(reps[f])
    counts = {}
    for x in v.values():
        counts[x] = counts.get(x, 0) + 1
    print(f"verdicts ({f}): " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    for k in sorted(set(base) & set(v)):
        if base[k] != v[k]:
            diff += 1
            print(f"  DIFFERS {k[0]} {k[1]}: {forms[0]} {base[k]}, {f} {v[k]}")
print("targets (an H200's): fresh <= 30 s, reuse <= 15 s, skip <= 15 s")
sys.exit(1 if diff else 0)
PY
