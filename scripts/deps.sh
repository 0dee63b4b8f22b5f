#!/usr/bin/env bash
# Install what kgate needs on Debian 12 (the CUDA toolkit is expected at /usr/local/cuda).
# Idempotent: installs only what is missing. Run as root (CI runners are) or with sudo.
set -euo pipefail
pkgs=(cmake ninja-build pkg-config libgit2-dev libcjson-dev libcurl4-openssl-dev libmbedtls-dev clang jq libxml2-utils git python3 python3-yaml python3-jsonschema
      chromium python3-markdown fonts-dejavu-core) # headless screenshots (tests/test_render.sh)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ "${#missing[@]}" -gt 0 ]; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if ! command -v nvcc >/dev/null 2>&1; then
    if [ -x /usr/local/cuda/bin/nvcc ]; then
        echo "deps: add /usr/local/cuda/bin to PATH (export PATH=/usr/local/cuda/bin:\$PATH)" >&2
    else
        echo "deps: the CUDA toolkit (nvcc, CUPTI, cuBLAS) is required: install it first" >&2
        exit 2
    fi
fi
