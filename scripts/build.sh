#!/usr/bin/env bash
# Configure and build into ${KG_BUILD_DIR:-build}. Extra arguments go to cmake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
B=${KG_BUILD_DIR:-build}
gen=(); command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
cmake -S . -B "$B" "${gen[@]}" -DCMAKE_BUILD_TYPE="${KG_BUILD_TYPE:-Release}" "$@"
cmake --build "$B" --parallel "$(nproc)"
