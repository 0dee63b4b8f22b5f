#!/usr/bin/env bash
# Cut a kgate release (docs/production-ci.md, "Versions and releases"): the version is
# CMakeLists.txt's project(kgate VERSION X.Y.Z) and KG_VERSION_STRING (include/kgate/kgate.h),
# equal; the pipelines and examples reference the moving major tag vX. This script checks that
# everything agrees, then tags HEAD vX.Y.Z (annotated, never moved) and moves vX to it.
#   scripts/release.sh [--check] [--push REMOTE]
#     --check        only check (what tests/test_pipelines.py runs); exit 1 naming what disagrees
#     --push REMOTE  push vX.Y.Z, then force-push vX (the only tag that moves)
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
check=0 remote=""
while [ $# -gt 0 ]; do
    case "$1" in
        --check) check=1; shift ;;
        --push) remote=${2:?--push REMOTE}; shift 2 ;;
        *) echo "release: unknown argument '$1' (--check, --push REMOTE)" >&2; exit 2 ;;
    esac
done
ver=$(sed -n 's/^project(kgate VERSION \([0-9]*\.[0-9]*\.[0-9]*\) .*/\1/p' "$src/CMakeLists.txt")
[ -n "$ver" ] || { echo "release: no project(kgate VERSION X.Y.Z ...) in CMakeLists.txt" >&2; exit 1; }
major=v${ver%%.*}
bad=0
hv=$(sed -n 's/^#define KG_VERSION_STRING "\(.*\)"$/\1/p' "$src/include/kgate/kgate.h")
[ "$hv" = "$ver" ] || { echo "release: KG_VERSION_STRING is '$hv', CMakeLists.txt says $ver" >&2; bad=1; }
# A project's find_package(kgate X.Y) names this major (kgate's package is SameMajorVersion).
while IFS= read -r line; do
    echo "release: find_package of another major: $line" >&2; bad=1
done < <(cd "$src" && grep -rnE 'find_package\(kgate [0-9]' examples README.md docs 2>/dev/null | grep -vE "find_package\(kgate ${major#v}\.")
# Every reference to kgate's own actions and template names the major tag (a regex: the
# backticks and quotes in it are literal).
# shellcheck disable=SC2016
while IFS= read -r line; do
    echo "release: not at $major: $line" >&2; bad=1
done < <(cd "$src" && grep -rnoE '(kgate/kgate/pipelines/github/[a-z]+@[^ #",`]+|ref: v[0-9][^ #",`]*|KGATE_VERSION: v[0-9][^ #",`]*|/-/raw/v[0-9][^/]*/)' \
            pipelines examples README.md docs 2>/dev/null | grep -vE "(@|ref: |KGATE_VERSION: |/-/raw/)$major(/|\$)")
[ "$bad" = 0 ] || exit 1
echo "release: kgate $ver, tags v$ver and $major"
[ "$check" = 1 ] && exit 0
git -C "$src" diff --quiet HEAD || { echo "release: the work tree has changes: commit them first" >&2; exit 1; }
if git -C "$src" rev-parse -q --verify "refs/tags/v$ver" >/dev/null; then
    echo "release: v$ver exists already: a release tag never moves (bump the version)" >&2; exit 1
fi
git -C "$src" tag -a "v$ver" -m "kgate $ver"
git -C "$src" tag -f -a "$major" -m "kgate $major (moving: $ver)" "v$ver^{commit}"
if [ -n "$remote" ]; then
    git -C "$src" push "$remote" "refs/tags/v$ver"
    git -C "$src" push --force "$remote" "refs/tags/$major"
fi
echo "release: tagged v$ver and moved $major to $(git -C "$src" rev-parse --short HEAD)"
