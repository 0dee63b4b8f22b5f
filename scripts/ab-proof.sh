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
# Each into its .json only once whole (its wall time in .wall, its log in .log).
# A job is done when every run it asks for (with -R: the reference run too) is in place; a
# run cut off midway leaves nothing, and the job resumes with its seed (DIR/job-J/seed). A
# case's ERROR (kgate ab's exit 4 with its report) is counted, not fatal. -L: no job starts
# that, as long as the longest job so far, would end past it.
# Then the table: per case its catches and wrong verdicts over the jobs, the ratios' range, and
# the wall time of a job. Exit: 0 when every ab/ case is caught (B_SLOWER) in >= 95% of the
# jobs (19 of 20) and every same-code run is SAME, no ERROR anywhere; 1 not met (or, with jobs
# still missing, already lost); 5 fewer jobs than -n done and nothing lost yet (run again with
# the same -o); 2 usage; 3 no GPU; 4 a run failed.
set -u
B=build N=20 ROUNDS='' O='' REF=0 LIMIT=540 X=''
while getopts "b:n:r:o:RL:x:h" opt; do
    case $opt in
    b) B=$OPTARG ;; n) N=$OPTARG ;; r) ROUNDS=$OPTARG ;; o) O=$OPTARG ;; R) REF=1 ;;
    L) LIMIT=$OPTARG ;; x) X=$OPTARG ;;
    *) sed -n '2,33p' "$0"; exit 2 ;;
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
T0=$(now) LONGEST=0
# Would the next job end past -L? Its length: the longest job seen in DIR so far.
no_room() { awk -v a="$(now)" -v b="$T0" -v l="$LIMIT" -v j="$LONGEST" 'BEGIN { exit !(a - b + j >= l) }'; }
# LONGEST becomes job DIR's wall time (its runs' .wall summed) where that is longer
longest_with() {
    LONGEST=$(cat "$1"/*.wall 2>/dev/null |
              awk -v m="$LONGEST" '{ s += $1 } END { print (s > m ? sprintf("%.1f", s) : m) }')
}

# ab OUT EXE A B: one `kgate ab` into OUT.json, its wall time in OUT.wall, the report put in
# place last (so a job cut off midway is run again, never counted). 0 (not slower), 1 (B
# slower) and 4 with a whole report of ab rows (a case ERROR: counted, not fatal) are results;
# 3 is no GPU; anything else, or an incomplete report, stops the proof.
ab() {
    local out=$1 exe=$2 a=$3 b=$4 t r
    t=$(now)
    "$exe" ab --seed "$SEED" --color never ${RA[@]+"${RA[@]}"} ${XA[@]+"${XA[@]}"} \
        --report "$out.tmp.json" "$a" "$b" >"$out.log" 2>&1
    r=$?
    if [ "$r" -eq 3 ]; then echo "ab-proof: no CUDA device: nothing to prove here"; exit 3; fi
    if [ "$r" -gt 1 ] && ! { [ "$r" -eq 4 ] && jq -e '(.incomplete | not) and
            ([.results[]? | select(.gate == "ab")] | length > 0)' "$out.tmp.json" >/dev/null 2>&1; }; then
        echo "ab-proof: $exe ab $a $b exited $r:"; tail -20 "$out.log"; exit 4
    fi
    awk -v a="$(now)" -v b="$t" 'BEGIN { printf "%.1f\n", a - b }' >"$out.wall"
    mv "$out.tmp.json" "$out.json"
}

echo "ab-proof: jobs in $O"
for d in "$O"/job-*; do # the longest job so far, for -L
    [ -d "$d" ] && longest_with "$d"
done
for j in $(seq 1 "$N"); do
    J=$O/job-$j
    [ -s "$J/slower.json" ] && [ -s "$J/same.json" ] && { [ "$REF" = 0 ] || [ -s "$J/ref.json" ]; } &&
        continue # done before
    if no_room; then echo "ab-proof: -L $LIMIT s: no room for job $j (a job took ${LONGEST} s)"; break; fi
    mkdir -p "$J"
    [ -s "$J/seed" ] || echo $(( (RANDOM << 15 | RANDOM) + 1 )) >"$J/seed"
    SEED=$(cat "$J/seed") # a job resumed keeps its seed
    echo "== job $j: seed $SEED"
    [ -s "$J/slower.json" ] || ab "$J/slower" "$BASE" "$BASE" "$HEAD"
    [ -s "$J/same.json" ] || ab "$J/same" "$BASE" "$BASE" "$BASE"
    [ "$REF" = 0 ] || [ -s "$J/ref.json" ] || ab "$J/ref" "$KG" "$KG" "$KG"
    longest_with "$J"
done

# The table, over every finished job in DIR
python3 - "$O" "$N" "$REF" <<'EOF'
import glob, json, math, os, statistics, sys
root, want, ref = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
kinds = ("slower", "same", "ref") if ref else ("slower", "same")
def rows(path):
    return [r for r in json.load(open(path)).get("results", []) if r.get("gate") == "ab"]
# a job is done when every run this call asks for is in place (with -R: its reference run too)
jobs = sorted(d for d in glob.glob(os.path.join(root, "job-*"))
              if all(os.path.exists(os.path.join(d, k + ".json")) for k in kinds))
done = len(jobs)
need = math.ceil(0.95 * done)
met, lost, cases, walls, gpus = True, False, {}, [], set()
for d in jobs:
    wall = 0.0
    for kind in kinds:
        p = os.path.join(d, kind + ".json")
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
        # more jobs cannot mend an ERROR, nor more misses than -n allows
        lost |= other > 0 or (n - slow) > want - math.ceil(0.95 * want)
    else:
        ok = slow == 0 and fast == 0 and other == 0
        target = "SAME in every job"
        lost |= not ok
    met &= ok
    label = {"slower": "base vs head (+2%)", "same": "base vs base", "ref": "kgate vs kgate"}[kind]
    print(f"| {label} | {case} | {slow} | {same} | {fast} | {other} | {span} | "
          f"{target}{'' if ok else '  (NOT MET)'} |")
if walls:
    print(f"\nwall time of a job: median {statistics.median(walls):.1f} s "
          f"({min(walls):.1f}..{max(walls):.1f} s over {len(walls)} jobs)")
met = met and bool(cases)
if done < want and not lost:
    print(f"ab-proof: {done} of {want} jobs: run again with the same -o to add the rest")
    sys.exit(5)
print(f"ab-proof: {'every target met' if met else 'targets NOT met'}")
sys.exit(0 if met else 1)
EOF
