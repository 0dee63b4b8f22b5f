#!/usr/bin/env bash
# The lead's GPU verification in one call: build, the gpu tests (serial: they time and share the
# GPU), then the cpu tests with a GPU present. Logs and reports under $OUT, a short table last.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out}; L=${LOGDIR:-/tmp/kglogs}; mkdir -p "$OUT" "$L/logs"
B=${KG_BUILD_DIR:-build}
t0=$(date +%s)
{ cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=${ARCH:-90} \
  && cmake --build "$B"; } >"$L/logs/build.log" 2>&1; echo "build rc=$? $(( $(date +%s)-t0 ))s"
for step in "$@"; do
    t1=$(date +%s)
    case "$step" in
    gpu) KG_CI_OUT=$L/ci timeout ${GPU_T:-420} ctest --test-dir "$B" -L gpu --output-on-failure -V >"$L/logs/ctest-gpu.log" 2>&1; rc=$?
         grep -E "^\s*[0-9]+/[0-9]+ Test|tests passed" "$L/logs/ctest-gpu.log" ;;
    cpu) timeout ${CPU_T:-200} ctest --test-dir "$B" -LE gpu -j8 --output-on-failure >"$L/logs/ctest-cpu.log" 2>&1; rc=$?
         grep -E "tests passed|\(Failed\)|Skipped" "$L/logs/ctest-cpu.log" ;;
    *) eval "$step" >"$L/logs/step-$(echo "$step" | tr -c 'a-zA-Z0-9' _ | cut -c1-40).log" 2>&1; rc=$? ;;
    esac
    echo "step [$step] rc=$rc $(( $(date +%s)-t1 ))s"
done
tar -czf "$OUT/logs.tgz" -C "$L" . 2>/dev/null
