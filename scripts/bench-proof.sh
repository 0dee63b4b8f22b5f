#!/usr/bin/env bash
# Reproduce the bench gate's false-alarm and sensitivity figures on the GPU this runs on
# (docs/production-ci.md, "Proving the gate"). A benchmark, not a test: it takes minutes.
#
#   scripts/bench-proof.sh [-b BUILD_DIR] [-n PROCS] [-s SETTERS] [-t BUDGET] [-f FILTER] [-o DIR]
#                          [-x "BENCH FLAGS"]
#
#   -b  build directory holding runners/kgate and runners/kgate-defects (default: build)
#   -n  separate processes compared against the marks (default 10)
#   -s  separate processes whose runs are merged into the marks first (default 3)
#   -t  per-case timing budget in seconds of the compared processes (default 0.5)
#   -f  regex of reference cases for the false-alarm part (default: all reference cases)
#   -o  directory for the reports and marks (default: a new one under /tmp; kept)
#   -x  extra flags for every compared `bench` (e.g. "--band-floor 0.01" to try a setting)
#   -s 1 gives single-run marks, as the production pipeline sets them (no cross-process spread)
#
# 1. marks: S processes of the reference runner (the first at the default budget: its wall time
#    is the "whole bench" figure) and S of the clean twin defect/bench/copy_256MiB/clean, each
#    merged with `bench --save-marks` (kg_marks_merge);
# 2. false alarms: N more processes of identical code against those marks: every REGRESSED or
#    IMPROVED decision is a false alarm (target 0);
# 3. sensitivity: N processes of the planted variants defect/bench/copy_256MiB/+{1,2,5,10}pct
#    (the same kernel reading p% more bytes), each compared against the clean twin's mark
#    re-keyed to the variant's id: detection rate per size (target: every run).
# Exit: 0 targets met, 1 not met, 3 no GPU, 4 a run failed.
set -u
B=build N=10 S=3 BUD=0.5 F='' O='' X=''
while getopts "b:n:s:t:f:o:x:h" opt; do
    case $opt in
    b) B=$OPTARG ;; n) N=$OPTARG ;; s) S=$OPTARG ;; t) BUD=$OPTARG ;; f) F=$OPTARG ;;
    o) O=$OPTARG ;; x) X=$OPTARG ;; *) sed -n '2,26p' "$0"; exit 2 ;;
    esac
done
KG=$B/runners/kgate DEF=$B/runners/kgate-defects
for x in "$KG" "$DEF"; do [ -x "$x" ] || { echo "bench-proof: $x not built" >&2; exit 2; }; done
command -v jq >/dev/null || { echo "bench-proof: needs jq" >&2; exit 2; }
[ "$N" -ge 1 ] && [ "$S" -ge 1 ] 2>/dev/null || { echo "bench-proof: -n and -s must be >= 1" >&2; exit 2; }
O=${O:-$(mktemp -d /tmp/kgate-bench-proof-XXXXXX)}
mkdir -p "$O" || exit 2
FA=(); [ -n "$F" ] && FA=(--filter "$F")
read -r -a XA <<<"$X"
TWIN='defect/bench/copy_256MiB/clean'
TWIN_RE='^defect/bench/copy_256MiB/clean$'
ALL_RE='^defect/bench/copy_256MiB/'
now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { print a - b }'; }
T0=$(now)
run() { # run LOG -- cmd...: exit 3 -> no GPU; 0/1 fine; else stop
    local log=$1; shift 2
    "$@" >"$log" 2>&1; local rc=$?
    if [ "$rc" -eq 3 ]; then echo "bench-proof: no CUDA device: nothing to prove here"; exit 3; fi
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
        echo "bench-proof: '$*' exited $rc:"; tail -20 "$log"; exit 4
    fi
}

echo "bench-proof: outputs in $O"
echo "== 1. marks from $S separate processes"
for i in $(seq 1 "$S"); do
    t=$(now)
    bud=(); [ "$i" -gt 1 ] && bud=(--budget "$BUD")
    run "$O/set$i.log" -- "$KG" bench "${FA[@]}" "${bud[@]}" --save-marks "$O/marks.json" --report "$O/set$i.json"
    w=$(since "$t")
    [ "$i" -eq 1 ] && WHOLE=$w && WHOLE_IN=$(jq '.bench.wall_s' "$O/set$i.json") \
        && NC=$(jq '[.results[] | select(.gate=="bench")] | length' "$O/set$i.json")
    run "$O/twin$i.log" -- "$DEF" bench --filter "$TWIN_RE" --budget "$BUD" --save-marks "$O/twin_marks.json" --report "$O/twin$i.json"
    printf '  setter %d: reference bench %.1f s\n' "$i" "$w"
done
# The clean twin's mark, plus one copy re-keyed to every variant's id.
jq --arg t "$TWIN" '.marks |= (map(select(.case == $t)) as $m
      | $m + [ "+1pct", "+2pct", "+5pct", "+10pct" | . as $p | $m[] | .case = "defect/bench/copy_256MiB/" + $p ])' \
    "$O/twin_marks.json" >"$O/variant_marks.json" || exit 4

echo "== 2./3. $N separate processes against those marks"
for i in $(seq 1 "$N"); do
    run "$O/fa$i.log" -- "$KG" bench "${FA[@]}" --budget "$BUD" "${XA[@]}" --marks "$O/marks.json" --report "$O/fa$i.json"
    run "$O/sens$i.log" -- "$DEF" bench --filter "$ALL_RE" --budget "$BUD" "${XA[@]}" --marks "$O/variant_marks.json" --report "$O/sens$i.json"
    printf '  process %d/%d done\n' "$i" "$N"
done

echo
echo "== false alarms: $N processes x cases vs marks merged from $S other processes (target 0)"
printf '%-46s %9s %8s %5s %7s %11s %9s\n' case REGRESSED IMPROVED SAME other max_delta% tol%
jq -s -r '[.[] | .results[] | select(.gate=="bench")] | group_by(.case)[]
    | [ .[0].case,
        (map(select(.figures.decision=="REGRESSED")) | length),
        (map(select(.figures.decision=="IMPROVED")) | length),
        (map(select(.figures.decision=="SAME")) | length),
        (map(select(.figures.decision != "SAME" and .figures.decision != "REGRESSED" and .figures.decision != "IMPROVED")) | length),
        ([.[].figures.delta_rel // empty | fabs] | max // 0) * 100,
        ([.[].figures.tolerance_rel // empty] | min // 0) * 100 ] | @tsv' \
    "$O"/fa*.json $(for i in $(seq 1 "$N"); do echo "$O/sens$i.json"; done) |
    awk -F'\t' '$1 !~ /pct$/ { printf "%-46s %9d %8d %5d %7d %11.3f %9.3f\n", $1, $2, $3, $4, $5, $6, $7 }'
FALSE=$(jq -s '[.[] | .results[] | select(.gate=="bench" and (.case | test("pct$") | not)
               and (.figures.decision=="REGRESSED" or .figures.decision=="IMPROVED"))] | length' \
        "$O"/fa*.json "$O"/sens*.json)
DEC=$(jq -s '[.[] | .results[] | select(.gate=="bench" and (.case | test("pct$") | not)
             and (.figures.decision | IN("SAME","REGRESSED","IMPROVED")))] | length' "$O"/fa*.json "$O"/sens*.json)
echo "false alarms: $FALSE in $DEC decisions"

echo
echo "== sensitivity: planted slow variants vs the clean twin's mark, $N processes (target: all)"
printf '%-36s %10s %9s %14s %9s\n' variant detected rate median_delta% tol%
jq -s -r '[.[] | .results[] | select(.gate=="bench" and (.case | test("pct$")))]
    | group_by(.case) | sort_by(.[0].case | capture("\\+(?<p>[0-9]+)pct").p | tonumber)[]
    | [ .[0].case, (map(select(.figures.decision=="REGRESSED")) | length), length,
        ([.[].figures.delta_rel // empty] | sort | .[length/2|floor] // 0) * 100,
        ([.[].figures.tolerance_rel // empty] | sort | .[length/2|floor] // 0) * 100 ] | @tsv' \
    "$O"/sens*.json |
    awk -F'\t' '{ printf "%-36s %6d/%-3d %8.0f%% %14.3f %9.3f\n", $1, $2, $3, ($3 ? 100*$2/$3 : 0), $4, $5 }'
MISS2=$(jq -s '[.[] | .results[] | select(.gate=="bench" and (.case | test("\\+(2|5|10)pct$"))
               and .figures.decision != "REGRESSED")] | length' "$O"/sens*.json)
MISS1=$(jq -s '[.[] | .results[] | select(.gate=="bench" and (.case | test("\\+1pct$"))
               and .figures.decision != "REGRESSED")] | length' "$O"/sens*.json)

echo
echo "== ceilings per process (the GEMM: kernel cuBLAS chose, SM clock, NVML clock-event reasons)"
printf '%-12s %9s %9s %10s  %s\n' report copyGB/s gemmTF/s gemmMHz 'gemm kernel / reasons'
for f in "$O"/set*.json "$O"/fa*.json; do
    jq -r --arg f "$(basename "$f" .json)" '[ $f, (.bench.ceilings.copy_gbps // 0), (.bench.ceilings.gemm_tflops // 0),
        ((.bench.ceilings.detail.gemm.sm_clock_mhz // [] | map(select(. != null)) | sort | .[length/2|floor]) // 0),
        ((.bench.ceilings.detail.gemm.kernels // [] | map(.name) | join(";")) + "  "
         + ((.bench.nvml_end.clock_event_reasons // []) | join(",")))] | @tsv' "$f"
done | awk -F'\t' '{ printf "%-12s %9.0f %9.1f %10.0f  %s\n", $1, $2, $3, $4, substr($5, 1, 110) }'

TOTAL=$(since "$T0")
echo
printf 'whole reference bench (%s cases, default budget, one process): %.1f s wall (%.1f s inside kgate)\n' \
    "$NC" "$WHOLE" "$WHOLE_IN"
printf 'bench-proof total: %.0f s\n' "$TOTAL"
# Targets (issue 5): no false alarm; every run caught at >= 2%, and at 1% too for this
# memory-bound case moving >= 256 MiB.
if [ "$FALSE" -eq 0 ] && [ "$MISS2" -eq 0 ] && [ "$MISS1" -eq 0 ]; then
    echo "targets met: 0 false alarms; every +1/+2/+5/+10% variant caught in every run"; exit 0
fi
echo "targets NOT met: $FALSE false alarm(s), $MISS2 miss(es) at >= 2%, $MISS1 at +1%"
exit 1
