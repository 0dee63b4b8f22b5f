#!/usr/bin/env bash
# The test command: install what is missing, build, run the whole CTest suite.
# Without a GPU the gpu-labelled tests report "Skipped" (exit 77), never "Passed".
# Then the sanitizer pass: the CPU suite again in its own build (${KG_ASAN_BUILD_DIR:-build-asan},
# one CUDA architecture) with the host C/C++ code under AddressSanitizer and UndefinedBehavior-
# Sanitizer (KG_SANITIZE=address,undefined, every finding fatal, leaks included: only
# third-party leaks are suppressed, tests/lsan.supp); without a GPU the gpu tests too, which
# must skip (exit 77) under the sanitizers as well. KG_SANITIZE=0 skips the pass.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --lint-tools --docs-tools # test_render.sh: chromium
scripts/build.sh "$@"
ctest --test-dir "${KG_BUILD_DIR:-build}" --output-on-failure --parallel "$(nproc)"
san=${KG_SANITIZE:-address,undefined}
[ "$san" = 0 ] && exit 0
A=${KG_ASAN_BUILD_DIR:-build-asan}
KG_BUILD_DIR=$A scripts/build.sh -DKG_SANITIZE="$san" -DCMAKE_CUDA_ARCHITECTURES=90 "$@"
# handle_segv=0: a planted SIGSEGV stays a signal (the isolation tests expect one); memory
# errors are still caught by the shadow checks. protect_shadow_gap=0: the CUDA driver maps
# memory there on a GPU machine.
export ASAN_OPTIONS=detect_leaks=1:handle_segv=0:handle_sigbus=0:protect_shadow_gap=0:abort_on_error=0
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
labels=(-LE 'style|install')  # the style checks read sources; install rebuilds from scratch
nvidia-smi -L >/dev/null 2>&1 && labels+=(-L cpu)  # with a GPU: the CPU suite only
ctest --test-dir "$A" --output-on-failure --parallel "$(nproc)" "${labels[@]}" -E '^test_pipelines_lint$'
