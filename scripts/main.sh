#!/usr/bin/env bash
# The main job: install what is missing, build, and run the pipeline over the built-in reference
# kernels in diagnostic mode (non-certifying: it never advances a mark). Exit codes: see
# docs/production-ci.md (0 pass, 1 gate failed, 2 usage/input error, 3 no GPU, 4 runtime error).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh >/dev/null
exec "${KG_BUILD_DIR:-build}"/runners/kgate run --diagnostic --report kgate-report.json "$@"
