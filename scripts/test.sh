#!/usr/bin/env bash
# The test command: install what is missing, build, run the whole CTest suite.
# Without a GPU the gpu-labelled tests report "Skipped" (exit 77), never "Passed".
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --lint-tools --docs-tools # test_render.sh: chromium
scripts/build.sh "$@"
ctest --test-dir "${KG_BUILD_DIR:-build}" --output-on-failure --parallel "$(nproc)"
