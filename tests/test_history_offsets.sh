#!/usr/bin/env bash
# Every figure knows its GPU (issue #27 item 3): reports carry the GPU's UUID and serial, the
# history records them, and `kgate history offsets --case ID` shows each GPU's offset from the
# class and the class's cross-GPU spread from the production runs; a diagnostic or a regressed
# run (planted far off) does not count, nor a GPU with fewer than 3 runs in the spread; a mark
# advanced there records its GPU, the spread and a band learned from the class's runs.
# Usage: test_history_offsets.sh KGATE KG_REPORT_SIGN
. "$(dirname "$0")/lib.sh"
KG=$(realpath "$1")
SIGN=$(realpath "$2")
git_isolate
unset KGATE_HISTORY_BRANCH KGATE_REPORT_KEY KGATE_GIT_TOKEN
R=$T/repo; scratch_repo "$R"; cd "$R"
commit=$(git rev-parse HEAD)
n=0
rep() { # rep GPU SERIAL MEDIAN [MODE [DECISION]]: one report of axpy/n=1 on that GPU, appended
    n=$((n + 1))
    jq -n --arg gpu "$1" --arg sn "$2" --argjson m "$3" --arg mode "${4:-production}" \
        --arg dec "${5:-SAME}" --arg c "$commit" --arg rid "run-$n" --arg at "2026-11-01T00:$(printf %02d $n):00Z" '
      {schema: "kgate-report/1", command: "run", mode: $mode, run_id: $rid, started_at: $at,
       provenance: {commit: $c},
       device: {class: "NVIDIA H200/sm_90", uuid: $gpu, serial: (if $sn == "" then null else $sn end)},
       results: [{gate: "bench", case: "axpy/n=1/f32", verdict: "PASS", message: "",
                  figures: {metric: "time_us_warm", decision: $dec, median_us: $m,
                            ci_lo_us: ($m * 0.999), ci_hi_us: ($m * 1.001), samples: 100}}]}' >"$T/r$n.json"
    "$KG" history append --report "$T/r$n.json" >"$T/append.out" 2>&1 || { bad "append $n"; cat "$T/append.out"; }
}
for m in 10.0 10.01 9.99 10.0 10.0; do rep GPU-aaaa 1320000000001 "$m"; done
for m in 10.2 10.19 10.21 10.2; do rep GPU-bbbb 1320000000002 "$m"; done
rep GPU-cccc "" 9.0; rep GPU-cccc "" 9.0
rep GPU-bbbb 1320000000002 30.0 diagnostic   # planted: a diagnostic run far off
rep GPU-aaaa 1320000000001 30.0 production REGRESSED   # planted: a regressed run
git show kgate-history:history/NVIDIA_H200_sm_90.jsonl | head -1 >"$T/rec.json"
expect_jq '.gpu_uuid == "GPU-aaaa" and .gpu_serial == "1320000000001"' "$T/rec.json"
check "offsets" 0 "11 production run\(s\), 3 GPU\(s\), class figure 10; cross-GPU spread 2.00%" -- \
    "$KG" history offsets --case axpy/n=1/f32
expect_grep 'GPU-bbbb +1320000000002 +4 +10.2 +\+2.00%' "$T/out"
expect_grep 'GPU-aaaa +1320000000001 +5 +10 +\+0.00%' "$T/out"
expect_grep 'GPU-cccc +\(none\) +2 +9 +-10.00% \(too few runs for the spread\)' "$T/out"
check "one class" 0 "NVIDIA H200/sm_90" -- "$KG" history offsets --case axpy/n=1/f32 --device "NVIDIA H200/sm_90"
check "unknown case" 2 "no run of 'nope'" -- "$KG" history offsets --case nope
check "--case required" 2 "--case ID is required" -- "$KG" history offsets
check "no branch" 2 "no such branch" -- "$KG" history offsets --case axpy/n=1/f32 --branch nothere
# The production step learns from it (items 2 and 3): a mark set on GPU-dddd from a signed
# report records that GPU and serial, the class's cross-GPU spread (2 GPUs with 3+ runs) and a
# band learned from the 11 production runs (capped at 1.5%).
export KGATE_REPORT_KEY=test-report-key-$RANDOM-$RANDOM-0123456789 KGATE_MARKS_BRANCH=HEAD
jq -n --arg c "$commit" '
  {schema: "kgate-report/1", command: "run", mode: "production", certifying: true,
   run_id: "prod-1", started_at: "2026-11-02T00:00:00Z", seed: 7,
   device: {class: "NVIDIA H200/sm_90", uuid: "GPU-dddd", serial: "1320000000004", driver_cuda_version: "13.0", runtime_version: "13.0"},
   provenance: {commit: $c}, gates: ["parity","preflight","hotpath","bench","counters"],
   results: ([{gate: "selftest", case: "defect/parity/x", verdict: "PASS", message: "", figures: {}}] +
     [("parity","preflight","hotpath") as $g | {gate: $g, case: "axpy/n=1/f32", verdict: "PASS", message: "", figures: {}}] +
     [{gate: "counters", case: "axpy/n=1/f32", verdict: "PASS", message: "", figures: {decision: "OK", why: "", device_class: "x", kernels: 1, passes: 1, metrics: {}}},
      {gate: "bench", case: "axpy/n=1/f32", verdict: "PASS", message: "", figures: {decision: "NO_MARK", metric: "time_us_warm",
        median_us: 10, ci_lo_us: 9.99, ci_hi_us: 10.01, band_rel: 0.001, samples: 200, processes: 3, env_lo_us: 9.995, env_hi_us: 10.005}}])}' >"$T/prod.json"
KGATE_REPORT_KEY=$KGATE_REPORT_KEY "$SIGN" "$T/prod.json" || bad "signing"
check "advance learns from the history" 0 "band \+-[0-9.]+% -> \+-1.50%, learned from 11 production run" -- \
    "$KG" marks advance --from-report "$T/prod.json"
git show HEAD:baselines/high_water.json | jq '.marks[0]' >"$T/mark.json"
expect_jq '.gpu_uuid == "GPU-dddd" and .gpu_serial == "1320000000004" and .xgpu_gpus == 2 and (.xgpu_spread_rel - 0.02 | fabs) < 1e-9 and .history_runs == 11 and .band_rel == 0.015' "$T/mark.json"
unset KGATE_REPORT_KEY
# a report's device: the serial or null with the reason (the CPU run has no device at all)
"$KG" parity --filter '^axpy/n=1/f32$' --report "$T/cpu.json" >/dev/null 2>&1
expect_jq '.device == null' "$T/cpu.json"
finish
