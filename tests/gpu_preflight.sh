#!/usr/bin/env bash
# gpu: the runtime preflight (cudaFuncGetAttributes + cudaOccupancyMaxActiveBlocksPerMultiprocessor)
# passes for the reference kernels, fails every planted preflight defect with its reason, and
# agrees with the static path (cubins in the binary) on registers, local bytes, static shared
# memory and blocks/SM for every symbol. Exit 77 without a GPU.
. "$(dirname "$0")/lib.sh"
KG=$1 DEF=$2
BASE="$SRC/baselines/resources.json" ALLOW="$SRC/baselines/spill_allowlist.json"

"$KG" preflight --baseline "$BASE" --allowlist "$ALLOW" --report "$T/ref.json"; rc=$?
if jq -e 'has("no_device")' "$T/ref.json" >/dev/null 2>&1; then skip "no GPU"; fi
[ "$rc" -eq 0 ] || bad "reference preflight exit $rc, want 0"
jq -r '.results[] | select(.verdict=="FAIL" or .verdict=="ERROR") | "  \(.case) \(.verdict) \(.message)"' "$T/ref.json"
nrt=$(jq '[.results[].figures.kernels[]? | select(.path=="runtime")] | length' "$T/ref.json")
[ "$nrt" -gt 0 ] || bad "no runtime rows in the report"
# Static and runtime agree for every symbol the runtime path saw.
dis=$(jq -r '.results[].figures.kernels[]? | select(.path=="runtime")
       | select(.static_agreement.static_found != true or .static_agreement.agree != true)
       | "  \(.kernel) \(.arch): runtime regs \(.registers) local \(.local_bytes) smem \(.static_smem) blocks \(.blocks_per_sm) | static \(.static_agreement)"' \
       "$T/ref.json" | sort -u)
[ -z "$dis" ] || { bad "static and runtime paths disagree:"; echo "$dis"; }
# Our calculator against cudaOccupancyMaxActiveBlocksPerMultiprocessor on the device.
calc=$(jq -r '.results[].figures.kernels[]? | select(.path=="runtime" and .calc_blocks_per_sm != .blocks_per_sm)
       | "  \(.kernel) \(.arch): runtime \(.blocks_per_sm) blocks/SM, calculator \(.calc_blocks_per_sm)"' "$T/ref.json" | sort -u)
[ -z "$calc" ] || { bad "occupancy calculator disagrees with the runtime:"; echo "$calc"; }
echo "symbols (runtime vs static):"
jq -r '[.results[].figures.kernels[]? | select(.path=="runtime")] | unique_by(.symbol)[]
       | "  \(.kernel) \(.arch) regs \(.registers) local \(.local_bytes) smem \(.static_smem) blocks/SM \(.blocks_per_sm) agree=\(.static_agreement.agree)"' "$T/ref.json"

# Planted defects: each FAILs on the runtime path too, with its reason.
"$DEF" preflight --filter '^defect/preflight/' --baseline "$SRC/tests/data/preflight_defects_baseline.json" \
    --allowlist "$SRC/tests/data/preflight_defects_allowlist.json" --report "$T/def.json" >"$T/def.out"; rc=$?
[ "$rc" -eq 1 ] || bad "defect preflight exit $rc, want 1"
n=$(jq '[.results[] | select(.gate=="preflight")] | length' "$T/def.json")
[ "$n" -ge 4 ] || bad "only $n preflight defects ran"
"$DEF" list --json "$T/cat.json" >/dev/null || bad "list --json of the defect runner"
missed=$(jq -r --slurpfile cat "$T/cat.json" '($cat[0].cases | map({(.id): .expect_reason}) | add) as $why
          | .results[] | select(.gate=="preflight") | . as $r
          | select($r.verdict != "FAIL" or ($r.message | contains($why[$r.case] // "?") | not)
                   or ([$r.figures.kernels[] | select(.path=="runtime" and .verdict=="FAIL")] | length) == 0)
          | "  \($r.case) \($r.verdict): \($r.message)"' "$T/def.json")
[ -z "$missed" ] || { bad "defects not caught on the runtime path:"; echo "$missed"; }
# The launch-bounds defect fails on the limit itself on the runtime path (not "cannot launch").
jq -e '[.results[] | select(.case|startswith("defect/preflight/launch_bounds/")) | .figures.kernels[]
        | select(.path=="runtime") | .verdict=="FAIL" and (.reasons|contains("launch bounds exceeded"))
        and .max_threads_per_block==128] | length > 0 and all' "$T/def.json" >/dev/null \
    || bad "launch-bounds defect: no runtime row FAILing on maxThreadsPerBlock 128"
# Its clean twin (declared for the block it launches) passes.
"$DEF" preflight --filter '^clean/preflight/' --report "$T/twin.json" >/dev/null; rc=$?
[ "$rc" -eq 0 ] || { bad "clean twin preflight exit $rc, want 0"; jq -r '.results[].message' "$T/twin.json"; }
dis=$(jq -r '.results[].figures.kernels[]? | select(.path=="runtime" and .static_agreement.agree != true)
       | "  \(.kernel): \(.static_agreement)"' "$T/def.json")
[ -z "$dis" ] || { bad "static and runtime disagree on the defect kernels:"; echo "$dis"; }

# Optional: one symbol's registers against Nsight Compute (needs ncu and counter permissions).
if command -v ncu >/dev/null 2>&1; then
    ncu --metrics launch__registers_per_thread -k regex:axpy_kernel --launch-count 1 --csv \
        "$KG" parity --filter '^axpy/n=4097/' --seed 1 >"$T/ncu.csv" 2>&1 \
        && echo "ncu axpy_kernel: $(grep -h launch__registers_per_thread "$T/ncu.csv" | tail -1)" \
        || echo "ncu run failed (not a test failure): $(tail -2 "$T/ncu.csv")"
fi
finish "$nrt runtime rows, $n defects"
