#!/usr/bin/env bash
# gpu: a short bench over a few reference cases produces complete figures (NO_MARK, ceilings,
# clocks); the clean bench twin passes against marks set by other processes (SAME), and its
# +10% variant, compared against the same mark, is REGRESSED and fails the gate (exit 1).
. "$(dirname "$0")/lib.sh"
KG=$1 DEF=$2
"$KG" bench --filter '^(axpy/n=(4097|33554433)|softmax/rows=4096,cols=1000)/' --budget 0.5 \
    --seed 7 --report "$T/r.json"; rc=$?
skip_if_no_gpu "$rc"
[ "$rc" -eq 0 ] || bad "reference bench exit $rc"
n=$(jq '[.results[] | select(.gate=="bench" and .verdict=="PASS" and .figures.decision=="NO_MARK"
        and .figures.median_us > 0 and .figures.ci_lo_us <= .figures.median_us
        and .figures.median_us <= .figures.ci_hi_us and .figures.samples >= 15
        and (.figures.stop_reason | IN("ci_converged","budget","max_samples"))
        and .figures.mad_us >= 0 and .figures.iqr_us >= 0 and .figures.gbps > 0
        and .figures.pct_copy_ceiling > 0 and .figures.sm_clock_median_mhz > 0
        and (.figures.kernels | length) >= 1)] | length' "$T/r.json")
[ "$n" -eq 4 ] || { bad "only $n of 4 rows have complete figures"; jq '.results[0]' "$T/r.json"; }
jq -e '.bench.ceilings.copy_gbps > 100 and .bench.ceilings.gemm_tflops > 10 and .bench.wall_s > 0
       and (.bench.ceilings.detail.gemm.kernels | length) >= 1 and .device.uuid != null' \
    "$T/r.json" >/dev/null || bad "report lacks ceilings, GEMM kernel, wall time or device"

# Marks of the clean twin from three separate processes (merged; each after the first against
# the marks so far, so it reuses their k), then the twin and its +10% variant (the twin's mark
# re-keyed to the variant's id) in fresh processes. A mark of fewer processes is UNPROVEN.
C='defect/bench/copy_256MiB/clean' V='defect/bench/copy_256MiB/+10pct'
for i in 1 2 3; do
    mk=(); [ "$i" -gt 1 ] && cp "$T/m.json" "$T/prev.json" && mk=(--marks "$T/prev.json")
    "$DEF" bench --filter "^$C\$" --budget 1 "${mk[@]}" --save-marks "$T/m.json" >/dev/null || bad "setter $i"
    [ "$i" -eq 1 ] && cp "$T/m.json" "$T/m1.json"
done
expect_jq '.marks[0].runs == 3 and .marks[0].k >= 1' "$T/m.json" "marks not merged from 3 processes (with k)"
"$DEF" bench --filter "^$C\$" --budget 1 --marks "$T/m1.json" --report "$T/u.json" >/dev/null
expect_jq '.results[0].figures.decision == "UNPROVEN" and .results[0].verdict == "PASS"' "$T/u.json" \
    "a mark of one process must decide UNPROVEN (not a failure)"
jq --arg c "$C" --arg v "$V" '.marks |= map(select(.case == $c) | .case = $v)' "$T/m.json" >"$T/m10.json"
"$DEF" bench --filter "^$C\$" --budget 1 --marks "$T/m.json" --report "$T/c.json"; rc=$?
[ "$rc" -eq 0 ] || bad "clean twin vs its own marks: exit $rc, want 0"
expect_jq '.results[0].figures.decision == "SAME"' "$T/c.json" "clean twin not SAME"
"$DEF" bench --filter "^${V//+/\\+}\$" --budget 1 --marks "$T/m10.json" --report "$T/v.json"; rc=$?
[ "$rc" -eq 1 ] || bad "+10% variant: exit $rc, want 1"
jq -e '.results[0].figures.decision == "REGRESSED" and .results[0].verdict == "FAIL"
       and .results[0].figures.delta_rel > 0.05' "$T/v.json" >/dev/null \
    || { bad "+10% variant not REGRESSED"; jq '.results[0].message' "$T/v.json"; }
finish
