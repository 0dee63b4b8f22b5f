#!/usr/bin/env bash
# The main job: install what is missing (not the docs' screenshot tools: scripts/deps.sh
# --docs-tools), build, and run the pipeline over the built-in reference kernels in diagnostic
# mode (non-certifying: it never advances a mark). The report goes to build/kgate-report.json
# (under KG_BUILD_DIR), never into the source tree. Exit codes: see docs/production-ci.md (0
# pass, 1 gate failed, 2 usage/input error, 3 no GPU, 4 runtime error).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${KG_BUILD_DIR:-build}
scripts/deps.sh
# The build's own progress, one line a step ("[12/197] Building CUDA object ..."), not the
# configure step's chatter.
echo "main.sh: building into $B/ (the first build takes a few minutes, a rebuild seconds)"
scripts/build.sh | { grep --line-buffered -vE '^-- ' || true; }
exec "$B"/runners/kgate run --diagnostic --report "$B/kgate-report.json" "$@"
