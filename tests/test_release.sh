#!/usr/bin/env bash
# scripts/release.sh on a scratch clone (issue #30 item 7): it tags HEAD vX.Y.Z and moves vX to
# it, pushes both, refuses a release tag that exists and a dirty tree; and a pin made before any
# tag exists, a full commit SHA, is one the GitLab build job can clone (`clone --branch` takes
# only a branch or a tag).
. "$(dirname "$0")/lib.sh"
git_isolate
git clone -q "$SRC" "$T/kg" || die "cannot clone $SRC"
git -C "$T/kg" config user.email rm@example.com && git -C "$T/kg" config user.name rm
git clone -q --bare "$T/kg" "$T/origin.git"
git -C "$T/kg" tag -l | xargs -r git -C "$T/kg" tag -d >/dev/null
ver=$(sed -n 's/^project(kgate VERSION \([0-9.]*\) .*/\1/p' "$T/kg/CMakeLists.txt")
major=v${ver%%.*}
head=$(git -C "$T/kg" rev-parse HEAD)
check "release: tags" 0 "tagged v$ver and moved $major" -- "$T/kg/scripts/release.sh" --push "$T/origin.git"
[ "$(git -C "$T/origin.git" rev-parse "v$ver^{commit}")" = "$head" ] && ok || bad "v$ver not pushed at HEAD"
[ "$(git -C "$T/origin.git" rev-parse "$major^{commit}")" = "$head" ] && ok || bad "$major not pushed at HEAD"
check "release: a release tag never moves" 1 "v$ver exists already" -- "$T/kg/scripts/release.sh"
echo dirt >>"$T/kg/README.md"
check "release: dirty tree" 1 "the work tree has changes" -- "$T/kg/scripts/release.sh"
git -C "$T/kg" checkout -q README.md
check "release: bad flag" 2 "unknown argument '--bogus'" -- "$T/kg/scripts/release.sh" --bogus

# The GitLab build job's clone of KGATE_SOURCE_URL at KGATE_VERSION, as the template runs it.
clone_block=$(sed -n '/^        rm -rf .kgate-src$/,/^        ksrc=.kgate-src$/p' "$SRC/pipelines/gitlab/kgate.gitlab-ci.yml")
[ -n "$clone_block" ] || die "the template's clone block was not found"
for pin in "$head" "v$ver" ""; do
    rm -rf "$T/job" && mkdir "$T/job"
    (cd "$T/job" && KGATE_SOURCE_URL=file://$T/origin.git KGATE_VERSION=$pin bash -euo pipefail -c "$clone_block") \
        >"$T/out" 2>&1 && [ "$(git -C "$T/job/.kgate-src" rev-parse HEAD)" = "$head" ] && ok \
        || { bad "the GitLab build job cannot clone kgate at '$pin'"; cat "$T/out"; }
done
finish
