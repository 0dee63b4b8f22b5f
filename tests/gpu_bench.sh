#!/usr/bin/env bash
# gpu: a short bench over a few reference cases produces complete figures (NO_MARK, ceilings,
# clocks); the clean bench twin passes against marks set by other processes (SAME), and its
# +10% variant, compared against the same mark, is REGRESSED and fails the gate (exit 1); the
# stream-0 copy is ERROR "is the work on another stream", its clean twin PASSes (issue #25); the
# capped GEMM has a measured spread and an energy per launch a board can draw, or none with the
# reason (#25.8); its mark carries the measured time.
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
# The window clock (stamps before and after each replay): recorded for every sample, within the
# device's clock range, on every row.
expect_jq '.device.sm_clock_max_mhz as $mx | [.results[] | select(.gate=="bench") | .figures
           | (.replay_sm_clock_median_mhz > 0.3 * $mx and .replay_sm_clock_median_mhz < 1.02 * $mx)
             and ([.per_sample.window_sm_clock_mhz[] | select(. == null or . < 0.3 * $mx
                   or . > 1.02 * $mx)] | length) == 0
             and (.per_sample.window_sm_clock_mhz | length) == (.per_sample.time_us | length)]
           | length == 4 and all' "$T/r.json" "a row lacks its window clocks, or one is out of range"
# A capped GEMM is decided on its samples' times x their window clock / max clock: the decided
# median is that of the kept samples so scaled (recomputed here from per_sample); a row that did
# not cap is decided on measured time. The capped row keeps every sample (no clock floor).
"$KG" bench --filter '^gemm_bf16/m=8192,n=8192,k=8192/bf16$' --budget 0.1 --seed 8 \
    --report "$T/g.json" --save-marks "$T/gm.json" >/dev/null || bad "gemm bench"
expect_jq '.device.sm_clock_max_mhz as $mx | .results[0].figures as $f | $f.per_sample as $p
    | def kept_median: [range(0; $p.time_us | length)
          | select(. as $i | $p.dropped_index | index([$i]) == null)
          | $p.time_us[.] * $p.window_sm_clock_mhz[.] / $mx] | sort | length as $k
          | if $k % 2 == 1 then .[$k / 2 | floor] else (.[$k / 2 - 1] + .[$k / 2]) / 2 end;
      if $f.power_state.label == "power-capped"
      then kept_median as $m | $f.time_basis == "replay-clock-normalised"
           and (($f.median_us - $m) | fabs) < 1e-6 * $m and $f.raw_median_us > $f.median_us
           and (($p.placement_starts | length) < 2
                or ($f.samples_dropped == 0 and $f.sm_clock_floor_mhz == 0))
      else $f.time_basis == "measured" end' "$T/g.json" \
    "the capped GEMM's decided median is not its window-normalised samples' median"
jq -r '.results[0].figures | "gemm 8192: \(.power_state.label), \(.time_basis), median \(.median_us),"
       + " raw \(.raw_median_us // .median_us), replay clock \(.replay_sm_clock_median_mhz) MHz,"
       + " probe \(.sm_clock_median_mhz) MHz"' "$T/g.json"
# Issue #25 item 8: what users pay beside the decided basis. The GEMM row has an energy per
# launch from NVML's total-energy counter (every sample's delta recorded), a spread, a mean power
# (energy per launch / measured time) a board can draw, and the measured times' spread; the mark
# it sets carries both. Printed as a table.
jq -r '.results[0].figures | ["case", "basis", "energy_mJ", "spread%", "units", "power_W",
        "measured_us", "meas_spread%", "note"],
       [.metric, (.energy_basis // "-"), (.energy_per_launch_mj // "-"),
        ((.energy_spread_rel // null) | if . == null then "-" else (. * 100 * 1000 | round / 1000) end),
        (.energy_units // "-"),
        (if .energy_per_launch_mj then (.energy_per_launch_mj / .raw_median_us * 1000 | round) else "-" end),
        .raw_median_us, (.measured_spread_rel * 100 * 1000 | round / 1000), (.energy_note // "")]
       | @tsv' "$T/g.json" | { command -v column >/dev/null && column -t -s $'\t' || cat; }
jq -r '.results[0].figures.per_sample.energy_mj | "per-sample energy_mj (first 8): \(.[0:8])"' "$T/g.json"
# The energy figure is either one a board can draw, or absent with the reason (on the H200 the
# counter's deltas over samples were 0 or implied kW: its update period is longer than a
# sample, kg_bench_energy_plausible): never a number that cannot be true.
expect_jq '.results[0].figures as $f | $f.measured_spread_rel >= 0
    and ($f.per_sample.energy_mj | length) == ($f.per_sample.time_us | length)
    and (if $f.energy_per_launch_mj then
           $f.energy_source == "nvml-total-energy" and $f.energy_per_launch_mj > 0
           and $f.energy_spread_rel >= 0 and $f.energy_units >= 1
           and ($f.energy_basis | IN("per-sample", "per-placement", "window"))
           and ($f.energy_per_launch_mj / $f.raw_median_us * 1000) as $w | $w > 30 and $w < 1500
         else ($f.energy_note // "") | test("no energy per launch") end)' "$T/g.json" \
    "the GEMM row has an energy per launch no board can draw, or none without saying why"
expect_jq '.marks[0] | .measured_median_us > 0 and .measured_spread_rel >= 0
    and (if .energy_per_launch_mj then .energy_per_launch_mj > 0 and .energy_spread_rel >= 0
         else true end)' "$T/gm.json" \
    "the GEMM mark lacks the measured time (or has a malformed energy per launch)"
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
# Issue #25: the copy launched on stream 0 is ERROR with the reason (no figures, no decision);
# its clean twin, the same kernel on the given stream, is timed and passes every sanity check.
"$DEF" bench --filter '^defect/bench/copy_192MiB/(stream0|clean)$' --budget 0.3 --seed 9 \
    --report "$T/s0.json" >/dev/null; rc=$?
[ "$rc" -eq 4 ] || bad "stream-0 defect: exit $rc, want 4 (an ERROR row)"
jq -r '.results[] | select(.gate=="bench") | "\(.case)\t\(.verdict)\t\(.figures.gbps // "-")\t\(.message[0:110])"' \
    "$T/s0.json" | awk -F'\t' 'BEGIN { printf "%-36s %-7s %12s  %s\n", "case", "verdict", "GB/s", "message" }
                              { printf "%-36s %-7s %12s  %s\n", $1, $2, $3, $4 }'
expect_jq '[.results[] | select(.case=="defect/bench/copy_192MiB/stream0")][0]
           | .verdict == "ERROR" and (.message | contains("is the work on another stream"))
           and (.figures | has("median_us") | not)' "$T/s0.json" \
    "stream-0 defect: not ERROR with the reason, or it kept figures"
expect_jq '[.results[] | select(.case=="defect/bench/copy_192MiB/clean")][0]
           | (.verdict | IN("PASS", "WARN")) and .figures.gbps > 0 and .figures.pct_copy_ceiling < 105' \
    "$T/s0.json" "clean twin of the stream-0 defect: not a plain PASS under the copy ceiling"
finish
