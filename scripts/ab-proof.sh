#!/usr/bin/env bash
# Prove a pull request's A/B verdict on the GPU this runs on (issue #27): separate jobs, each
# what a PR's GPU job runs (pipelines/ci/gate.sh: `kgate ab BASE HEAD`), over two builds of one
# runner whose only difference is known. A benchmark, not a test.
#
#   scripts/ab-proof.sh [-b BUILD_DIR] [-n JOBS] [-r ROUNDS] [-o DIR] [-R] [-L LIMIT_S]
#                       [-x "AB FLAGS"]
#
#   -b  build directory holding runners/kgate-ab-base, kgate-ab-head and kgate (default build)
#   -n  jobs in all (default 20). Jobs already in DIR are counted, not run again: a proof may
#       be spread over several device calls (each job's reports name their GPU)
#   -r  rounds of each `kgate ab` (default: kgate ab's own, 10)
#   -o  directory of the jobs (default: a new one under /tmp; kept)
#   -R  each job also runs the reference cases, same code (`kgate ab kgate kgate`; long)
#   -L  wall-time limit of this call, seconds: no job starts past it (default 540)
#   -x  extra flags for every `kgate ab` (e.g. "--band-floor 0.01" to try a setting)
#
# Job J (DIR/job-J/, its seed printed), each `kgate ab` a process of its own:
#   slower.json  kgate-ab-base ab BASE HEAD over the ab/ cases, HEAD's kernels 2% slower
#                (kernels/defects/bench_defects.cu): B_SLOWER is a catch;
#   same.json    the same with BASE twice: B_SLOWER is a false alarm, B_FASTER a wrong verdict;
#   ref.json     (-R) kgate ab kgate kgate over the reference cases: the same.
# Then the table: per case its catches and false alarms over the jobs, the ratios' range, and
# the wall time of a job. Exit: 0 when every ab/ case is caught in >= 95% of the jobs (19 of
# 20) with no false alarm and no ERROR anywhere; 1 not met (also: fewer jobs than -n done);
# 2 usage; 3 no GPU; 4 a run failed.
set -u
B=build N=20 ROUNDS='' O='' REF=0 LIMIT=540 X=''
while getopts "b:n:r:o:RL:x:h" opt; do
    case $opt in
    b) B=$OPTARG ;; n) N=$OPTARG ;; r) ROUNDS=$OPTARG ;; o) O=$OPTARG ;; R) REF=1 ;;
    L) LIMIT=$OPTARG ;; x) X=$OPTARG ;;
    *) sed -n '2,27p' "$0"; exit 2 ;;
    esac
done
BASE=$B/runners/kgate-ab-base HEAD=$B/runners/kgate-ab-head KG=$B/runners/kgate
for x in "$BASE" "$HEAD" "$KG"; do [ -x "$x" ] || { echo "ab-proof: $x not built" >&2; exit 2; }; done
command -v jq >/dev/null || { echo "ab-proof: needs jq" >&2; exit 2; }
{ [ "$N" -ge 1 ] && [ "$LIMIT" -ge 1 ] && { [ -z "$ROUNDS" ] || [ "$ROUNDS" -ge 1 ]; }; } 2>/dev/null ||
    { echo "ab-proof: -n, -r and -L must be integers >= 1" >&2; exit 2; }
O=${O:-$(mktemp -d /tmp/kgate-ab-proof-XXXXXX)}
mkdir -p "$O" || exit 2
read -r -a XA <<<"$X"
RA=(); [ -n "$ROUNDS" ] && RA=(--rounds "$ROUNDS")
now() { date +%s.%N; }
T0=$(now)
past_limit() { awk -v a="$(now)" -v b="$T0" -v l="$LIMIT" 'BEGIN { exit !(a - b >= l) }'; }

# ab OUT EXE A B [FLAGS]: one `kgate ab` into OUT.json (its wall time in OUT.wall); 0 and 1
# (B slower) are results, 3 is no GPU, anything else stops the proof.
ab() {
    local out=$1 exe=$2 a=$3 b=$4 t r; shift 4
    t=$(now)
    "$exe" ab --seed "$SEED" --color never "${RA[@]}" "${XA[@]}" "$@" --report "$out.json" \
        "$a" "$b" >"$out.log" 2>&1
    r=$?
    awk -v a="$(now)" -v b="$t" 'BEGIN { printf "%.1f\n", a - b }' >"$out.wall"
    if [ "$r" -eq 3 ]; then echo "ab-proof: no CUDA device: nothing to prove here"; exit 3; fi
    if [ "$r" -gt 1 ] || [ ! -s "$out.json" ]; then
        echo "ab-proof: $exe ab $a $b exited $r:"; tail -20 "$out.log"; rm -f "$out.json"; exit 4
    fi
}

echo "ab-proof: jobs in $O"
for j in $(seq 1 "$N"); do
    J=$O/job-$j
    [ -s "$J/same.json" ] && { [ "$REF" = 0 ] || [ -s "$J/ref.json" ]; } && continue # done before
    if past_limit; then echo "ab-proof: -L $LIMIT s reached before job $j"; break; fi
    mkdir -p "$J"
    SEED=$(( (RANDOM << 15 | RANDOM) + 1 ))
    echo "== job $j: seed $SEED"
    [ -s "$J/slower.json" ] || ab "$J/slower" "$BASE" "$BASE" "$HEAD"
    [ -s "$J/same.json" ] || ab "$J/same" "$BASE" "$BASE" "$BASE"
    [ "$REF" = 0 ] || [ -s "$J/ref.json" ] || ab "$J/ref" "$KG" "$KG" "$KG"
done

# The table, over every finished job in DIR
python3 - "$O" "$N" <<'EOF'
import glob, json, math, os, statistics, sys
root, want = sys.argv[1], int(sys.argv[2])
def rows(path):
    return [r for r in json.load(open(path)).get("results", []) if r.get("gate") == "ab"]
jobs = sorted(d for d in glob.glob(os.path.join(root, "job-*"))
              if os.path.exists(os.path.join(d, "same.json")))
done = len(jobs)
need = math.ceil(0.95 * done)
met, cases, walls, gpus = done >= want, {}, [], set()
for d in jobs:
    wall = 0.0
    for kind in ("slower", "same", "ref"):
        p = os.path.join(d, kind + ".json")
        if not os.path.exists(p):
            continue
        rep = json.load(open(p))
        gpus.add((rep.get("device") or {}).get("uuid") or "?")
        wall += float(open(os.path.join(d, kind + ".wall")).read())
        for r in rows(p):
            c = cases.setdefault((kind, r["case"]), {"n": 0, "dec": {}, "ratios": []})
            f = r.get("figures") or {}
            dec = f.get("decision") or r.get("verdict", "?")
            c["n"] += 1
            c["dec"][dec] = c["dec"].get(dec, 0) + 1
            if isinstance(f.get("ratio_median"), (int, float)):
                c["ratios"].append(f["ratio_median"])
    walls.append(wall)
print(f"\njobs: {done} of {want}; GPU(s): {', '.join(sorted(gpus)) or '-'}")
print("| runs | case | B_SLOWER | SAME | B_FASTER | other | B/A median ratio | target |")
print("| --- | --- | ---: | ---: | ---: | ---: | --- | --- |")
for (kind, case), c in sorted(cases.items()):
    dec, n = c["dec"], c["n"]
    slow, same, fast = dec.get("B_SLOWER", 0), dec.get("SAME", 0), dec.get("B_FASTER", 0)
    other = n - slow - same - fast
    r = c["ratios"]
    span = f"{min(r):.4f}..{max(r):.4f}" if r else "-"
    if kind == "slower":
        ok = slow >= need and other == 0
        target = f"B_SLOWER >= {need}/{n}"
    else:
        ok = slow == 0 and other == 0
        target = "no B_SLOWER, no ERROR"
    met &= ok
    label = {"slower": "base vs head (+2%)", "same": "base vs base", "ref": "kgate vs kgate"}[kind]
    print(f"| {label} | {case} | {slow} | {same} | {fast} | {other} | {span} | "
          f"{target}{'' if ok else '  (NOT MET)'} |")
if walls:
    print(f"\nwall time of a job: median {statistics.median(walls):.1f} s "
          f"({min(walls):.1f}..{max(walls):.1f} s over {len(walls)} jobs)")
print(f"ab-proof: {'every target met' if met and cases else 'targets NOT met'}")
sys.exit(0 if met and cases else 1)
EOF
