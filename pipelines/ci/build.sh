#!/usr/bin/env bash
# kgate CI, the build job (GitHub: pipelines/github/build; GitLab: .kgate-build). Runs ONCE per
# pipeline on a CPU runner with the CUDA toolkit: gets kgate (an installed prefix, or built
# from the kgate tree this script belongs to and installed, cached), configures and builds the
# project against it with ccache, and packs one bundle (a .tar.gz, so file modes survive the
# artifact store) for the GPU and report jobs:
#   bin/<runner> bin/kgate-defects share/kgate/defects/*.json ci/*.sh (and kgate's deps.sh)
#   kgate-runners.env
#
# Environment (every path relative to the current directory unless absolute):
#   KGATE_CUDA_ARCHITECTURES  required: CMAKE_CUDA_ARCHITECTURES, e.g. "90" or "90;100"
#   KGATE_RUNNER              the runner executable relative to the build directory
#                             (kgate_add_runner's NAME, e.g. my-kernels); required unless KGATE_SELF
#   KGATE_DEFECTS_PATH        the defect runner relative to the build directory (default: the
#                             installed kgate's bin/kgate-defects)
#   KGATE_PROJECT_DIR (.)  KGATE_BUILD_DIR (build, inside the project)  KGATE_CMAKE_ARGS (split on spaces)
#   KGATE_PREFIX              an installed kgate; empty: build kgate into KGATE_INSTALL_DIR
#   KGATE_INSTALL_DIR         (default .kgate-install) reused when its stamp matches this kgate
#   KGATE_SELF=true           the project is kgate itself (runner runners/kgate, no package)
#   KGATE_BUNDLE              the bundle to write (default kgate-runners.tar.gz)
#   CCACHE_DIR                ccache's directory (the CI caches it); ccache is used when installed
#   KGATE_AB_BASE             pull/merge requests: the commit the PR is compared with (GitHub: HEAD^1
#                             of the merge commit, the target it merges into; GitLab: the MR's diff
#                             base). Its tree is built too (same kgate, same ccache: a second build
#                             directory) and bundled as bin/base/<runner>, the A side of the GPU
#                             jobs' `kgate ab`. A base that does not build is a warning: the bundle
#                             then has no base and the GPU jobs say the A/B could not run.
# `build.sh --print-kgate-key` prints the cache key of this kgate tree and architectures.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ksrc=$(cd "$here/../.." && pwd) # the kgate source tree these scripts belong to
die() { echo "kgate-ci build: $*" >&2; exit 2; }

kb_key() {
    # Every file that changes what kgate builds, and the architectures: a changed kgate (or a
    # moved tag) never reuses a stale install.
    local h
    h=$(cd "$ksrc" && find . -path ./.git -prune -o -path './build*' -prune -o -path ./.kgate-base -prune -o -type f \
            \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name '*.cpp' \
               -o -name 'CMakeLists.txt' -o -name '*.cmake' -o -name '*.in' -o -name '*.json' \) \
            -print | LC_ALL=C sort | xargs -d '\n' sha256sum | sha256sum | cut -c1-16)
    echo "${h}-$(printf '%s' "${KGATE_CUDA_ARCHITECTURES:-}" | tr -c 'A-Za-z0-9' '-')"
}

if [ "${1:-}" = --print-kgate-key ]; then kb_key; exit 0; fi
install_only=0 # --install-kgate: only kgate, built from this tree into KGATE_INSTALL_DIR (cached);
               # the workflow_run relay's trusted kgate, which never builds the pull request
if [ "${1:-}" = --install-kgate ]; then install_only=1; shift; KGATE_SELF=false KGATE_PREFIX=""; fi
[ $# -eq 0 ] || die "unknown argument '$1' (only --print-kgate-key, --install-kgate)"

archs=${KGATE_CUDA_ARCHITECTURES:-}
[ -n "$archs" ] || die "KGATE_CUDA_ARCHITECTURES is empty: set the GPUs' architectures, e.g. 90 (H100/H200)"
[[ "$archs" =~ ^[0-9a-z\;-]+$ ]] || die "KGATE_CUDA_ARCHITECTURES: expected e.g. '90' or '80;90', got '$archs'"
self=${KGATE_SELF:-false}
proj=$(cd "${KGATE_PROJECT_DIR:-.}" 2>/dev/null && pwd) || die "KGATE_PROJECT_DIR: no directory '${KGATE_PROJECT_DIR}'"
bld="$proj/${KGATE_BUILD_DIR:-build}"
bundle=${KGATE_BUNDLE:-kgate-runners.tar.gz}
export PATH="/usr/local/cuda/bin:$PATH"
gen=(); command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
launch=()
if command -v ccache >/dev/null 2>&1; then
    export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
    launch=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
            -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
    ccache -z >/dev/null 2>&1 || true
else
    echo "kgate-ci build: ccache not installed: building without a compiler cache"
fi

# ---- kgate -----------------------------------------------------------------------------------
prefix=""
if [ "$self" = true ]; then
    runner=${KGATE_RUNNER:-runners/kgate}
    defects="$bld/${KGATE_DEFECTS_PATH:-runners/kgate-defects}"
    fixtures="$proj/tests/data"
elif [ -n "${KGATE_PREFIX:-}" ]; then
    prefix=$(cd "$KGATE_PREFIX" 2>/dev/null && pwd) || die "KGATE_PREFIX: no directory '$KGATE_PREFIX'"
    [ -x "$prefix/bin/kgate-defects" ] || die "KGATE_PREFIX: $prefix has no bin/kgate-defects (not a kgate install)"
else
    prefix=$(mkdir -p "${KGATE_INSTALL_DIR:-.kgate-install}" && cd "${KGATE_INSTALL_DIR:-.kgate-install}" && pwd)
    key=$(kb_key)
    if [ "$(cat "$prefix/.kgate-key" 2>/dev/null)" = "$key" ] && [ -x "$prefix/bin/kgate-defects" ]; then
        echo "kgate-ci build: kgate $key from the cache ($prefix)"
    else
        echo "kgate-ci build: building kgate from $ksrc into $prefix ($key)"
        rm -rf "$prefix" "$prefix.build"
        cmake -S "$ksrc" -B "$prefix.build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
            -DCMAKE_CUDA_ARCHITECTURES="$archs" -DBUILD_TESTING=OFF "${launch[@]}"
        cmake --build "$prefix.build" --parallel "$(nproc)"
        cmake --install "$prefix.build" --prefix "$prefix"
        rm -rf "$prefix.build"
        echo "$key" > "$prefix/.kgate-key"
    fi
fi
if [ "$install_only" = 1 ]; then echo "kgate-ci build: kgate installed in $prefix"; exit 0; fi
if [ -n "$prefix" ]; then
    [ -n "${KGATE_RUNNER:-}" ] || die "KGATE_RUNNER is empty: name the runner executable (kgate_add_runner's NAME), relative to the build directory"
    runner=$KGATE_RUNNER
    if [ -n "${KGATE_DEFECTS_PATH:-}" ]; then defects="$bld/$KGATE_DEFECTS_PATH"; else defects="$prefix/bin/kgate-defects"; fi
    fixtures="$prefix/share/kgate/defects"
fi

# ---- the project -----------------------------------------------------------------------------
cfg=(-S "$proj" -B "$bld" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$archs" "${launch[@]}")
[ -n "$prefix" ] && cfg+=(-DCMAKE_PREFIX_PATH="$prefix")
[ "$self" = true ] && cfg+=(-DBUILD_TESTING=OFF)
# shellcheck disable=SC2206 # KGATE_CMAKE_ARGS is split on spaces on purpose
cfg+=(${KGATE_CMAKE_ARGS:-})
cmake "${cfg[@]}"
cmake --build "$bld" --parallel "$(nproc)"
command -v ccache >/dev/null 2>&1 && { ccache -s 2>/dev/null | sed -n '1,12p' || true; }

# ---- the A/B base (pull/merge requests) -------------------------------------------------------
# The base tree sits in .kgate-base/ of the checkout, laid out like it, so that ccache (basedir =
# the checkout, no hashed directory) finds the head's objects for every file the PR left alone.
top=$(git -C "$proj" rev-parse --show-toplevel 2>/dev/null || echo "$proj")
btop="$top/.kgate-base"
base_sha="" base_note="" base_bld=""
kb_base() {
    local rev=$1 sha rel bproj bbld bcfg
    sha=$(git -C "$top" rev-parse --verify -q "$rev^{commit}" 2>/dev/null) ||
        { git -C "$top" fetch --quiet --no-tags --depth=1 origin "$rev" 2>/dev/null &&
          sha=$(git -C "$top" rev-parse --verify -q "$rev^{commit}" 2>/dev/null); } ||
        { base_note="the base commit '$rev' is not in the checkout and cannot be fetched"; return 1; }
    rm -rf "$btop" && mkdir -p "$btop"
    git -C "$top" archive --format=tar "$sha" | tar -xf - -C "$btop" ||
        { base_note="git archive of $sha failed"; return 1; }
    rel=${proj#"$top"}
    bproj="$btop$rel"
    bbld="$bproj/${KGATE_BUILD_DIR:-build}"
    bcfg=("${cfg[@]}")
    bcfg[1]=$bproj bcfg[3]=$bbld # -S and -B
    echo "kgate-ci build: the A/B base ${sha:0:12} in $bbld"
    if ! { cmake "${bcfg[@]}" && cmake --build "$bbld" --parallel "$(nproc)"; } >"$btop.log" 2>&1; then
        tail -20 "$btop.log" >&2
        base_note="the base ${sha:0:12} does not build (its log is above)"; return 1
    fi
    { [ -f "$bbld/$runner" ] && [ -x "$bbld/$runner" ]; } ||
        { base_note="the base ${sha:0:12} made no $runner"; return 1; }
    base_sha=$sha base_bld=$bbld
}
if [ -n "${KGATE_AB_BASE:-}" ]; then
    if ! kb_base "$KGATE_AB_BASE"; then
        echo "kgate-ci build: WARNING: no A/B base: $base_note; the GPU jobs gate the bench against the marks" >&2
    fi
fi

# ---- the bundle ------------------------------------------------------------------------------
{ [ -f "$bld/$runner" ] && [ -x "$bld/$runner" ]; } ||
    die "KGATE_RUNNER: $bld/$runner is not an executable the build made (the kgate_add_runner NAME, relative to $bld)"
[ -x "$defects" ] || die "the defect runner $defects is missing (KGATE_DEFECTS_PATH)"
stage=$(mktemp -d)
trap 'rm -rf "$stage" "$btop" "$btop.log"' EXIT
mkdir -p "$stage/bin" "$stage/share/kgate/defects" "$stage/ci"
name=$(basename "$runner")
[ "$name" != kgate-defects ] || die "KGATE_RUNNER: the runner must not be named kgate-defects"
cp "$bld/$runner" "$stage/bin/$name"
cp "$defects" "$stage/bin/kgate-defects"
for f in preflight_defects_baseline.json preflight_defects_allowlist.json; do
    [ -f "$fixtures/$f" ] || die "the defect runner's fixture $fixtures/$f is missing"
    cp "$fixtures/$f" "$stage/share/kgate/defects/"
done
cp "$here/build.sh" "$here/gate.sh" "$here/report.sh" "$here/relay.sh" "$here/merge.sh" "$stage/ci/"
cp "$ksrc/scripts/deps.sh" "$stage/ci/deps.sh" # the GPU and report jobs' packages
printf 'KGATE_RUNNER_NAME=%s\n' "$name" > "$stage/kgate-runners.env"
if [ -n "$base_sha" ]; then
    mkdir -p "$stage/bin/base"
    cp "$base_bld/$runner" "$stage/bin/base/$name"
    printf 'KGATE_AB_BASE_SHA=%s\n' "$base_sha" >> "$stage/kgate-runners.env"
    "$stage/bin/base/$name" list >/dev/null || die "bin/base/$name list failed: the base runner does not start"
elif [ -n "${KGATE_AB_BASE:-}" ]; then
    printf 'KGATE_AB_NOTE=%s\n' "$base_note" | tr -d '\r' >> "$stage/kgate-runners.env"
fi
# Both runners must start here (no GPU needed for `list`): a broken link fails the build job,
# not every GPU job.
"$stage/bin/$name" list >/dev/null || die "bin/$name list failed: the runner does not start"
"$stage/bin/kgate-defects" list >/dev/null || die "bin/kgate-defects list failed"
tmp="$bundle.tmp.$$"
tar -czf "$tmp" -C "$stage" .
mv -f "$tmp" "$bundle"
echo "kgate-ci build: $bundle: bin/$name, bin/kgate-defects${base_sha:+, bin/base/$name (${base_sha:0:12})} ($(du -h "$bundle" | cut -f1))"
