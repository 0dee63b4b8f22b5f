#!/usr/bin/env bash
# Build the runner and the kernel stopwatch for the local GPU's architecture and print the
# speed table (ceilings measured in the same process). Parity and the SASS are the gates' job
# (kgate parity, tests/test_sass_tensor.sh). Usage: kernels/tools/kernel_speed.sh [build-dir] [case-id substrings...]
set -u
cd "$(dirname "$0")/../.."
B=${1:-build-speed}; shift || true
mkdir -p "$B"
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$B/cfg.log" 2>&1 &&
    cmake --build "$B" --target kgate_runner kgate_defects kgate_kernel_speed >"$B/build.log" 2>&1 ||
    { tail -40 "$B/cfg.log" "$B/build.log"; exit 4; }
command -v nvidia-smi >/dev/null &&
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv
[ $# -gt 0 ] || set -- gemm_bf16/m=384 gemm_bf16/m=4096 gemm_bf16/m=8192 axpy/n=33554433 \
    reduce_sum/n=67108869 rmsnorm/rows=16384 softmax/rows=16384 softmax/rows=32768 softmax/rows=4096
timeout 300 "$B/kernels/kgate_kernel_speed" "$@"
