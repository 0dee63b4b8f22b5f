#!/usr/bin/env bash
# scripts/ab-proof.sh without a GPU: the jobs and the table over mock runners that write the
# reports `kgate ab` writes (ab rows: decision, ratio_median; the device's uuid). Checks each
# job's `kgate ab` calls (base vs head, base vs base, with -R kgate vs kgate; a fresh seed per
# job), a met target, a missed catch, a false alarm, an ERROR row, that a second call counts
# the jobs already done and runs only the missing ones, exit 3 without a GPU, and usage errors.
. "$(dirname "$0")/lib.sh"
PROOF=$SRC/scripts/ab-proof.sh
command -v jq >/dev/null || skip "needs jq"
command -v python3 >/dev/null || skip "needs python3"
mkdir -p "$T/b/runners"

# The mock: MOCK_MODE good, slow (each run 1.1 s), cut (job 2's base vs base interrupted once),
# miss (head caught in only the first 17 jobs), alarm (B_SLOWER in
# job 2's base vs base), error (an ERROR row in job 3's base vs head), nogpu.
cat >"$T/b/runners/mock" <<'EOF'
#!/usr/bin/env bash
set -u
self=$(basename "$0") cmd=$1; shift
report='' seed=''
while [ $# -gt 2 ]; do
    case $1 in --report) report=$2; shift ;; --seed) seed=$2; shift ;; esac
    shift
done
a=$(basename "$1") b=$(basename "$2")
echo "$self $cmd $a $b seed=$seed" >>"$MOCK_LOG"
[ "$MOCK_MODE" = nogpu ] && { echo "kgate: no CUDA device"; exit 3; }
[ "$MOCK_MODE" = slow ] && sleep 1.1
job=$(grep -c "^$self ab $a $b " "$MOCK_LOG")
if [ "$self" = kgate ]; then cases='axpy/n=1/f32 gemm_bf16/m=8192,n=8192,k=8192/bf16'
else cases='ab/fma_chain_1ms ab/fma_chain_6us ab/copy_256MiB'; fi
rows=()
for c in $cases; do
    d=SAME r=1.001
    [ "$b" = kgate-ab-head ] && d=B_SLOWER r=1.02
    [ "$MOCK_MODE" = miss ] && [ "$b" = kgate-ab-head ] && [ "$job" -gt 17 ] && [ "$c" = ab/fma_chain_6us ] && d=SAME r=1.004
    [ "$MOCK_MODE" = alarm ] && [ "$b" = kgate-ab-base ] && [ "$job" = 2 ] && [ "$c" = ab/copy_256MiB ] && d=B_SLOWER r=1.008
    v=PASS; [ "$d" = B_SLOWER ] && v=FAIL
    if [ "$MOCK_MODE" = error ] && [ "$job" = 3 ] && [ "$c" = ab/fma_chain_1ms ]; then
        rows+=("$(jq -nc --arg c "$c" '{gate: "ab", case: $c, verdict: "ERROR", figures: {}}')"); continue
    fi
    rows+=("$(jq -nc --arg c "$c" --arg d "$d" --arg v "$v" --argjson r "$r" \
        '{gate: "ab", case: $c, verdict: $v, figures: {decision: $d, ratio_median: $r}}')")
done
inc=false
[ "$MOCK_MODE" = cut ] && [ "$b" = kgate-ab-base ] && [ "$job" = 2 ] && [ ! -e "$MOCK_LOG.cut" ] &&
    touch "$MOCK_LOG.cut" && inc=true # interrupted once: an incomplete report, exit 4
printf '%s\n' "${rows[@]}" | jq -s --argjson i $inc '{device: {uuid: "GPU-mock"}, results: .} +
    (if $i then {incomplete: true} else {} end)' >"$report"
$inc && exit 4
jq -e '.results[] | select(.figures.decision == "B_SLOWER")' "$report" >/dev/null && exit 1
jq -e '.results[] | select(.verdict == "ERROR")' "$report" >/dev/null && exit 4 # kgate's policy
exit 0
EOF
chmod +x "$T/b/runners/mock"
for r in kgate kgate-ab-base kgate-ab-head; do ln -s mock "$T/b/runners/$r"; done

proof() { # proof MODE EXPECT_RC [FLAGS]
    local mode=$1 want=$2; shift 2
    export MOCK_MODE=$mode MOCK_LOG=$T/$mode.calls
    : >"$MOCK_LOG"
    "$PROOF" -b "$T/b" -o "$T/out-$mode" "$@" >"$T/$mode.out" 2>&1
    local r=$?
    [ "$r" -eq "$want" ] && ok || { bad "$mode: exit $r, want $want"; tail -20 "$T/$mode.out"; }
}

proof good 0
O=$T/good.out
expect_grep '^jobs: 20 of 20; GPU\(s\): GPU-mock$' "$O"
expect_grep '^\| base vs head \(\+2%\) \| ab/fma_chain_6us \| 20 \| 0 \| 0 \| 0 \| 1.0200..1.0200 \| B_SLOWER >= 19/20 \|$' "$O"
expect_grep '^\| base vs base \| ab/copy_256MiB \| 0 \| 20 \| 0 \| 0 \| 1.0010..1.0010 \| SAME in every job \|$' "$O"
expect_grep '^wall time of a job: median [0-9.]+ s \([0-9.]+\.\.[0-9.]+ s over 20 jobs\)$' "$O"
expect_grep '^ab-proof: every target met$' "$O"
L=$T/good.calls
[ "$(grep -c '^kgate-ab-base ab kgate-ab-base kgate-ab-head ' "$L")" -eq 20 ] && ok || bad "want 20 base-vs-head runs"
[ "$(grep -c '^kgate-ab-base ab kgate-ab-base kgate-ab-base ' "$L")" -eq 20 ] && ok || bad "want 20 base-vs-base runs"
! grep -q '^kgate ab' "$L" && ok || bad "no reference runs without -R"
[ "$(grep -o 'seed=[0-9]*' "$L" | sort -u | wc -l)" -ge 15 ] && ok || bad "a fresh seed per job"
[ "$(grep -c 'seed=' "$L")" -eq 40 ] && ! grep -q 'seed= ' "$L" && ok || bad "every run has a seed"

proof miss 1
expect_grep '^\| base vs head \(\+2%\) \| ab/fma_chain_6us \| 17 \| 3 \| 0 \| 0 \| .* \| B_SLOWER >= 19/20  \(NOT MET\) \|$' "$T/miss.out"
expect_grep '^ab-proof: targets NOT met$' "$T/miss.out"
proof alarm 1
expect_grep '^\| base vs base \| ab/copy_256MiB \| 1 \| 19 \| 0 \| 0 \| .*\(NOT MET\) \|$' "$T/alarm.out"
proof error 1 # job 3's ERROR rows (kgate ab exits 4 on the same-code one) counted, not fatal
expect_grep '^\| base vs head \(\+2%\) \| ab/fma_chain_1ms \| 19 \| 0 \| 0 \| 1 \| .*\(NOT MET\) \|$' "$T/error.out"
expect_grep '^\| base vs base \| ab/fma_chain_1ms \| 0 \| 19 \| 0 \| 1 \| .*\(NOT MET\) \|$' "$T/error.out"
expect_grep '^jobs: 20 of 20;' "$T/error.out"

# a run cut off midway: exit 4, nothing of it counted; the next call resumes the job, same seed
proof cut 4 -n 3
[ ! -e "$T/out-cut/job-2/same.json" ] && [ -e "$T/out-cut/job-2/slower.json" ] && ok || bad "a cut run left a report"
s1=$(cat "$T/out-cut/job-2/seed")
"$PROOF" -b "$T/b" -o "$T/out-cut" -n 3 >"$T/cut2.out" 2>&1 && ok || { bad "resume after a cut"; tail "$T/cut2.out"; }
[ "$(grep -c 'kgate-ab-base kgate-ab-base seed='"$s1"'$' "$MOCK_LOG")" -eq 2 ] && ok || bad "the resumed job kept its seed"
expect_grep '^jobs: 3 of 3;' "$T/cut2.out"

# the same directory again: its 20 jobs are counted, none run again
proof good 0 -x "--band-floor 0.005"
[ ! -s "$T/good.calls" ] && ok || bad "jobs already done ran again"
expect_grep '^jobs: 20 of 20;' "$T/good.out"
# spread over calls: 3 jobs, then 5 in all runs only the 2 missing; -R adds the reference runs
export MOCK_MODE=good MOCK_LOG=$T/part.calls; : >"$MOCK_LOG"
"$PROOF" -b "$T/b" -o "$T/out-part" -n 3 -R >"$T/part1.out" 2>&1; r1=$?
"$PROOF" -b "$T/b" -o "$T/out-part" -n 5 -R >"$T/part2.out" 2>&1; r2=$?
[ "$r1" -eq 0 ] && [ "$r2" -eq 0 ] && ok || bad "part runs: exit $r1, $r2"
[ "$(grep -c '^kgate-ab-base ab kgate-ab-base kgate-ab-head ' "$MOCK_LOG")" -eq 5 ] && ok || bad "want 5 jobs in all over two calls"
[ "$(grep -c '^kgate ab kgate kgate ' "$MOCK_LOG")" -eq 5 ] && ok || bad "-R: a reference run per job"
expect_grep '^jobs: 5 of 5;' "$T/part2.out"
expect_grep '^| kgate vs kgate \| axpy/n=1/f32 \| 0 \| 5 \| 0 \| 0 \|' "$T/part2.out"
# -L: no job starts that would end past it (as long as the longest so far); exit 5 for the rest
export MOCK_MODE=slow
check "-L" 5 "-L 2 s: no room for job 7" -- "$PROOF" -b "$T/b" -o "$T/out-part" -n 8 -L 2 -R
expect_grep '^jobs: 6 of 8;' "$T/out"
expect_grep 'run again with the same -o' "$T/out"

proof nogpu 3
expect_grep 'no CUDA device: nothing to prove here' "$T/nogpu.out"
check "bad -n" 2 "must be integers" -- "$PROOF" -b "$T/b" -n x
check "no runners" 2 "not built" -- "$PROOF" -b "$T/nowhere"
finish
