#!/usr/bin/env bash
# scripts/bench-proof.sh without a GPU: the protocol and the table, over mock runners that
# write the reports the real ones write (bench rows: decision, delta, tolerance, median, power
# state). Checks the order and count of the processes (marks from -s processes, each after the
# first against the marks so far; -n compared processes of both runners), the re-keyed variant
# marks, every figure of the table, the exit code of a met and of a missed target, and exit 3
# when the runner says there is no GPU.
. "$(dirname "$0")/lib.sh"
PROOF=$SRC/scripts/bench-proof.sh
command -v jq >/dev/null || skip "needs jq"
mkdir -p "$T/b/runners"

# The mock: MOCK_MODE good (every target met), slow_run (run --diagnostic 75 s), alarm (one
# IMPROVED on a reference case), miss (+2% compute-bound caught in only 17 processes), capped
# (the GEMM decided on clock-normalised time, its measured times spread), nogpu.
cat >"$T/b/runners/mock" <<'EOF'
#!/usr/bin/env bash
set -u
self=$(basename "$0") cmd=$1; shift
report='' save='' marks='' filter=''
while [ $# -gt 0 ]; do
    case $1 in
    --report) report=$2; shift ;; --save-marks) save=$2; shift ;; --marks) marks=$2; shift ;;
    --filter) filter=$2; shift ;; --json) report=$2; shift ;;
    esac
    shift
done
echo "$self $cmd filter=$filter marks=${marks##*/} save=${save##*/}" >>"$MOCK_LOG"
[ "$MOCK_MODE" = nogpu ] && { echo "kgate: no CUDA device"; exit 3; }
if [ "$self" = kgate ]; then
    cases='axpy/n=1/f32 gemm_bf16/m=8192,n=8192,k=8192/bf16'
else
    cases='defect/bench/copy_192MiB/clean defect/bench/copy_192MiB/+2pct defect/bench/copy_256MiB/+2pct
           defect/bench/fma_chain_1ms/clean defect/bench/fma_chain_1ms/+2pct defect/bench/fma_chain_1ms/+5pct
           defect/bench/fma_chain_10us/clean defect/bench/fma_chain_10us/+5pct defect/bench/copy_256MiB/clean'
fi
if [ "$cmd" = list ]; then
    printf '%s\n' $cases | jq -R '{id: .}' | jq -s '{cases: .}' >"$report"; exit 0
fi
if [ "$cmd" = run ]; then
    [ "$MOCK_MODE" = slow_run ] && echo "wall 75" >>"$MOCK_LOG"
    echo '{"results": []}' >"$report"; exit 0
fi
n=$(grep -c "bench" "$MOCK_LOG")
rows=()
for c in $cases; do
    [ -n "$filter" ] && ! [[ $c =~ $filter ]] && continue
    d=SAME; [ -n "$marks" ] && [[ $c == *pct ]] && d=REGRESSED
    [ -z "$marks" ] && d=NO_MARK
    [ "$MOCK_MODE" = alarm ] && [ -n "$marks" ] && [ -z "$save" ] && [ "$c" = axpy/n=1/f32 ] \
        && [ ! -e "$MOCK_LOG.alarm" ] && touch "$MOCK_LOG.alarm" && d=IMPROVED
    [ "$MOCK_MODE" = miss ] && [ "$c" = defect/bench/fma_chain_1ms/+2pct ] && [ "$n" -gt 40 ] && d=SAME
    med=100; [[ $c == gemm* ]] && med=$((1000 + n % 3))
    extra='{}' # capped: the GEMM decided on clock-normalised time, its measured times wander
    [ "$MOCK_MODE" = capped ] && [[ $c == gemm* ]] && extra=$(jq -nc --argjson r $((1300 + n % 7 * 20)) \
        '{time_basis: "replay-clock-normalised", raw_median_us: $r, power_state: {label: "power-capped"}}')
    rows+=("$(jq -nc --arg c "$c" --arg d "$d" --argjson m "$med" --argjson x "$extra" \
        '{gate: "bench", case: $c, verdict: "PASS", figures: ({decision: $d, delta_rel: 0.02,
          tolerance_rel: 0.006, median_us: $m, power_state: {label: "full-clock"}} + $x)}')")
done
printf '%s\n' "${rows[@]}" | jq -s '{results: .}' >"$report"
if [ -n "$save" ]; then
    old='[]'; [ -f "$save" ] && old=$(jq -c '.marks' "$save")
    printf '%s\n' "${rows[@]}" | jq -s --argjson old "$old" \
        '{version: 1, marks: ($old + map({case: .case}) | unique_by(.case))}' >"$save"
fi
[ -n "$marks" ] && jq -e '.results[] | select(.figures.decision == "REGRESSED")' "$report" >/dev/null && exit 1
exit 0
EOF
chmod +x "$T/b/runners/mock"
ln -s mock "$T/b/runners/kgate"
ln -s mock "$T/b/runners/kgate-defects"
# The mock's clock: `run --diagnostic` takes 75 s in slow_run (date is wrapped only there).
mkdir -p "$T/bin"
cat >"$T/bin/date" <<'EOF'
#!/usr/bin/env bash
base=$(/bin/date +%s.%N)
extra=0; grep -q "wall 75" "$MOCK_LOG" 2>/dev/null && extra=75
awk -v b="$base" -v e="$extra" 'BEGIN { printf "%.9f\n", b + e }'
EOF
chmod +x "$T/bin/date"

proof() { # proof MODE EXPECT_RC
    export MOCK_MODE=$1 MOCK_LOG=$T/$1.calls
    : >"$MOCK_LOG"
    PATH=$T/bin:$PATH "$PROOF" -b "$T/b" -o "$T/out-$1" >"$T/$1.out" 2>&1
    local r=$?
    [ "$r" -eq "$2" ] && ok || { bad "$1: exit $r, want $2"; tail -20 "$T/$1.out"; }
}

proof good 0
O=$T/good.out
expect_grep '^\| figure \| measured \| target \|$' "$O" "the table's header"
expect_grep '^\| false alarms \(processes x cases\) \| 0 in 20 x 6 \(120 decisions\) \| 0 \|$' "$O"
expect_grep '^\| \+2% caught, cases >= 100 us memory-bound \| 20/20 .* \| >= 19/20 \|$' "$O"
expect_grep '^\| \+2% caught compute-bound \| 20/20 \(fma_chain_1ms/\+2pct\) \| >= 19/20 \|$' "$O"
expect_grep '^\| \+5% caught, cases >= 10 us \| 20/20 .* \| >= 19/20 \|$' "$O"
expect_grep '^\| gemm_bf16 8192\^3 median CV across processes \| 0\.0[0-9]+% \(20 processes\) \| <= 0.5% \|$' "$O"
expect_grep '^\| whole run --diagnostic \| [0-9.]+ s \| <= 60 s \|$' "$O"
expect_grep 'full-clock: [0-9]+ rows' "$O" "the power states seen"
expect_grep '^closest to a false alarm: axpy/n=1/f32 at 3.33 of its tolerance$' "$O" "the closest call"
expect_grep 'bench-proof: wall time' "$O"
L=$T/good.calls
[ "$(grep -c '^kgate run' "$L")" -eq 1 ] && ok || bad "run --diagnostic not once"
[ "$(grep -c '^kgate bench filter= marks=' "$L")" -eq 23 ] && ok || bad "want 3 setters + 20 compared reference processes"
[ "$(grep -c "^kgate-defects bench filter=^defect/bench/.\*/clean\$ marks=.*save=twin_marks.json" "$L")" -eq 3 ] && ok || bad "want 3 twin setters"
[ "$(grep -c 'save=ref_marks.json' "$L")" -eq 3 ] && [ "$(grep -c 'marks=ref_prev.json save=ref_marks.json' "$L")" -eq 2 ] && ok \
    || bad "setters 2 and 3 must run against the marks so far"
[ "$(grep -cxF 'kgate-defects bench filter=^defect/bench/.*/(clean|\+[0-9]+pct)$ marks=variant_marks.json save=' "$L")" -eq 20 ] && ok || bad "want 20 compared defect processes"
expect_jq '[.marks[] | select(.case == "defect/bench/fma_chain_1ms/+5pct")] | length == 1' "$T/out-good/variant_marks.json" "a variant's re-keyed mark"

proof capped 0
expect_grep '^\| gemm_bf16 8192\^3 median CV across processes \| 0\.0[0-9]+% \(20 processes; replay-clock-normalised 20; measured times [1-9][0-9.]*%\) \| <= 0.5% \|$' \
    "$T/capped.out" "the CV row names its basis and the measured times' CV"
expect_grep 'power-capped: [0-9]+ rows' "$T/capped.out"
proof alarm 1
expect_grep '^\| false alarms \(processes x cases\) \| 1 in 20 x 6 .*\(NOT MET\) \| 0 \|$' "$T/alarm.out"
proof miss 1
expect_grep '^\| \+2% caught compute-bound \| 17/20 \(fma_chain_1ms/\+2pct\)  \(NOT MET\) \| >= 19/20 \|$' "$T/miss.out"
proof slow_run 1
expect_grep '^\| whole run --diagnostic \| 7[5-9]\.[0-9] s  \(NOT MET\) \| <= 60 s \|$' "$T/slow_run.out"
proof nogpu 3
expect_grep 'no CUDA device: nothing to prove here' "$T/nogpu.out"
check "bad -n" 2 "must be integers" -- "$PROOF" -b "$T/b" -n x
finish
