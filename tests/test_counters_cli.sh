#!/usr/bin/env bash
# The counters command line (issue #18): usage and marks errors exit 2 naming the flag or the
# file before any GPU work; without a GPU every case is SKIP "no CUDA device" (exit 3) and the
# report validates its counters rows as SKIP; `run` lists the gate; the defect catalogue holds
# the counters family with a clean twin for every defect.
. "$(dirname "$0")/lib.sh"
KG=$1 KD=$2
check "counters --help" 0 "usage: kgate counters" -- "$KG" counters --help
check "help names the rule" 0 "model-factor" -- "$KG" counters --help
check "top-level help lists counters" 0 "counters " -- "$KG" --help
check "unknown flag" 2 "'--bogus'" -- "$KG" counters --bogus
check "bad factor" 2 "--model-factor: expected a number in \\(1, 100\\]" -- "$KG" counters --model-factor 1
check "bad ridge" 2 "--ridge" -- "$KG" counters --ridge 0
check "help names the ridge" 0 "compute-bound" -- "$KG" counters --help
check "bad tolerance" 2 "--counter-tolerance" -- "$KG" counters --counter-tolerance 0
check "marks missing" 2 "missing.json: cannot open" -- "$KG" counters --marks "$T/missing.json"
check "save-marks unwritable" 2 "cannot write there" -- "$KG" counters --save-marks "$T/no/dir/m.json"
printf '{"version": 1, "marks": []}\n' >"$T/m.json"
check "save-marks over the compared marks" 2 "would rewrite the marks" -- \
    "$KG" counters --marks "$T/m.json" --save-marks "$T/m.json"
check "no GPU: every case SKIP" 3 "counters: ([0-9]+) cases?: 0 passed, 0 warnings, 0 failed, 0 errors, [0-9]+ skipped" -- \
    "$KG" counters --filter '^axpy/' --report "$T/r.json"
expect_no_gpu_line
expect_jq '[.results[] | select(.gate == "counters")] | length > 0 and all(.verdict == "SKIP" and .message == "no CUDA device")' \
    "$T/r.json" "counters rows are not SKIP \"no CUDA device\""
check "run accepts the counters flags" 3 "== counters ==" -- \
    "$KG" run --diagnostic --skip-selftest --filter '^axpy/n=1/' --model-factor 3
check "run refuses the standalone --save-marks" 2 "save-marks" -- \
    "$KG" run --diagnostic --skip-selftest --save-marks "$T/x.json"
"$KD" list --json "$T/list.json" >/dev/null 2>&1 || bad "kgate-defects list --json"
for fam in strided tensor sysmem spill model; do
    expect_jq "([.cases[] | select(.id == \"defect/counters/$fam/defect\") | .expect_gate] == [\"counters\"])
         and ([.cases[] | select(.id == \"defect/counters/$fam/clean\" and .expect_gate == null)] | length == 1)" \
        "$T/list.json" "defect/counters/$fam: not caught by counters or without a clean twin"
done
# the spill twin declares 16 mul + 16 add per element (the H200 counted 32n FP operations)
expect_jq '[.cases[] | select(.id | startswith("defect/counters/spill/")) | .flops] == [134217728, 134217728]' \
    "$T/list.json" "defect/counters/spill: flops not 32 per element"
finish
