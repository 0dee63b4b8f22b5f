#!/usr/bin/env bash
# A power-state label must decide only where it changes the time (issue #25, item 4): marks set
# on a cold GPU, then a few minutes of unrelated GPU load, then N separate compared processes on
# the warm GPU. A benchmark, not a test: ~4-6 minutes on an H200.
#
#   scripts/warm-state-proof.sh [-b BUILD_DIR] [-n PROCS] [-s SETTERS] [-w WARM_S] [-t BUDGET]
#                               [-f FILTER] [-o DIR]
#
#   -b  build directory holding runners/kgate (default: build)
#   -n  separate compared processes on the warm GPU (default 10)
#   -s  separate mark-setting processes, merged (default 3), run first, on the cold GPU
#   -w  seconds of unrelated load between the two (a bf16 GEMM bench loop; default 150)
#   -t  per-case budget of the compared processes (default 0.1; setters 0.3)
#   -f  regex of reference cases (default: all)
#   -o  directory for the reports and marks (default: a new one under /tmp; kept)
#
# Prints, per case: its bound, the power-state labels of the marks and of the compared rows,
# how many compared rows were STATE_DIFFERS and how many were false alarms (REGRESSED or
# IMPROVED: the code is the same). Exit 0 when no row that is not compute-bound was
# STATE_DIFFERS and there was no false alarm; 1 otherwise; 3 no GPU; 4 a run failed.
set -u
B=build N=10 S=3 W=150 BUD=0.1 F='' O=''
while getopts "b:n:s:w:t:f:o:h" opt; do
    case $opt in
    b) B=$OPTARG ;; n) N=$OPTARG ;; s) S=$OPTARG ;; w) W=$OPTARG ;; t) BUD=$OPTARG ;;
    f) F=$OPTARG ;; o) O=$OPTARG ;; *) sed -n '2,20p' "$0"; exit 2 ;;
    esac
done
KG=$B/runners/kgate
[ -x "$KG" ] || { echo "warm-state-proof: $KG not built" >&2; exit 2; }
command -v jq >/dev/null || { echo "warm-state-proof: needs jq" >&2; exit 2; }
O=${O:-$(mktemp -d /tmp/kgate-warm-state-XXXXXX)}
mkdir -p "$O" || exit 2
FA=(); [ -n "$F" ] && FA=(--filter "$F")
step() { # step LOG cmd...: 0/1 fine, 3 no GPU, else stop
    local log=$1; shift
    "$@" >"$log" 2>&1; local rc=$?
    [ "$rc" -eq 3 ] && { echo "warm-state-proof: no CUDA device"; exit 3; }
    [ "$rc" -le 1 ] || { echo "warm-state-proof: '$*' exited $rc:"; tail -20 "$log"; exit 4; }
}
gpu() { nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
            --format=csv,noheader 2>/dev/null || echo "nvidia-smi: -"; }
echo "warm-state-proof: outputs in $O"
echo "== 1. marks: $S separate processes on the cold GPU ($(gpu))"
for i in $(seq 1 "$S"); do
    mk=(); [ "$i" -gt 1 ] && cp "$O/marks.json" "$O/prev.json" && mk=(--marks "$O/prev.json")
    step "$O/set$i.log" "$KG" bench "${FA[@]}" --budget 0.3 "${mk[@]}" --save-marks "$O/marks.json" \
        --report "$O/set$i.json"
done
echo "== 2. ${W} s of unrelated GPU load (gemm_bf16 8192^3 benches)"
end=$(( $(date +%s) + W ))
while [ "$(date +%s)" -lt "$end" ]; do
    step "$O/load.log" "$KG" bench --filter 'gemm_bf16/m=8192' --budget 5 --band-floor 0.5
done
echo "   after the load: $(gpu)"
echo "== 3. $N separate compared processes on the warm GPU"
for i in $(seq 1 "$N"); do
    step "$O/cmp$i.log" "$KG" bench "${FA[@]}" --budget "$BUD" --marks "$O/marks.json" --report "$O/cmp$i.json"
done
echo "   at the end: $(gpu)"
jq -s -r '[.[] | .results[] | select(.gate == "bench" and .case != "*")]
    | group_by(.case)[] | {
        case: .[0].case, bound: (.[0].figures.bound // "-"),
        mark: ([.[] | .figures.mark.power_state // "-"] | unique | join(",")),
        run: ([.[] | .figures.run_power_state // .figures.power_state.label // "-"] | unique | join(",")),
        n: length,
        sd: ([.[] | select(.figures.decision == "STATE_DIFFERS")] | length),
        fa: ([.[] | select(.figures.decision == "REGRESSED" or .figures.decision == "IMPROVED")] | length),
        decisions: ([.[] | .figures.decision] | group_by(.) | map("\(.[0])x\(length)") | join(" "))}
    | [.case, .bound, .mark, .run, .n, .sd, .fa, .decisions] | @tsv' "$O"/cmp*.json >"$O/table.tsv"
{
    printf '| case | bound | mark state | run states | rows | STATE_DIFFERS | false alarms | decisions |\n'
    printf '| --- | --- | --- | --- | --- | --- | --- | --- |\n'
    awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8 }' "$O/table.tsv"
} | tee "$O/table.md"
sd_bad=$(awk -F'\t' '$2 != "compute" { s += $6 } END { print s + 0 }' "$O/table.tsv")
sd_cb=$(awk -F'\t' '$2 == "compute" { s += $6 } END { print s + 0 }' "$O/table.tsv")
fa=$(awk -F'\t' '{ s += $7 } END { print s + 0 }' "$O/table.tsv")
rows=$(awk -F'\t' '{ s += $5 } END { print s + 0 }' "$O/table.tsv")
echo "rows $rows; STATE_DIFFERS on rows not compute-bound: $sd_bad (target 0); on compute-bound rows: $sd_cb; false alarms: $fa (target 0)"
[ "$sd_bad" -eq 0 ] && [ "$fa" -eq 0 ]
