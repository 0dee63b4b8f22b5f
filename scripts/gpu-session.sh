#!/usr/bin/env bash
# What the lead runs on a GPU machine: build, the gpu tests, and each gate over the reference
# kernels and the defect catalogue; full logs and reports under ${OUT:-out}, a short table last.
# usage: scripts/gpu-session.sh [STEP...]   (steps: build ctest parity preflight hotpath bench run)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out}; mkdir -p "$OUT"
B=${KG_BUILD_DIR:-build}
steps=("$@"); [ "${#steps[@]}" -gt 0 ] || steps=(build ctest parity)
declare -A rcs
for s in "${steps[@]}"; do
    t0=$(date +%s)
    case "$s" in
    build) cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$OUT/build.log" 2>&1 \
             && cmake --build "$B" >>"$OUT/build.log" 2>&1; rc=$?; tail -5 "$OUT/build.log" ;;
    ctest) ctest --test-dir "$B" -L gpu --output-on-failure --timeout 900 >"$OUT/ctest.log" 2>&1; rc=$?; grep -E "tests passed|Failed|Skipped|\*\*\*" "$OUT/ctest.log" | tail -25 ;;
    *) "$B"/runners/kgate "$s" --seed 1234 --report "$OUT/$s.json" >"$OUT/$s.txt" 2>&1; rc=$?
       "$B"/runners/kgate-defects "$s" --seed 1234 --report "$OUT/defects-$s.json" >"$OUT/defects-$s.txt" 2>&1; rc2=$?
       rc="$rc/$rc2" ;;
    esac
    rcs[$s]="rc=$rc $(( $(date +%s) - t0 ))s"
done
for s in "${steps[@]}"; do echo "$s: ${rcs[$s]}"; done
