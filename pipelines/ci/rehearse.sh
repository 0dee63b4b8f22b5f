#!/usr/bin/env bash
# Rehearse the whole pipeline on this machine, without a forge, with the very scripts the
# GitHub actions and the GitLab template run: examples/external in a scratch repository whose
# origin is a local bare repository, then
#   1. build once (build.sh: kgate built from this tree and installed, the example against it);
#   2. production on each GPU (gate.sh): marks committed to origin's kgate-marks, the report
#      appended to origin's kgate-history;
#   3. a pull request on each GPU: marks guard + diagnostic run against origin/kgate-marks;
#   4. a pull request that edits the marks file: the guard fails it;
#   5. the report job (report.sh) over the PR's reports, comment and statuses as --dry-run;
#   6. a pull request's build of the head and its base (KGATE_AB_BASE=main: bin/base/ in the
#      bundle) and its GPU job: `kgate ab BASE HEAD` after the diagnostic run (without a GPU
#      both say so, exit 3).
# Each step's exit code is checked: with a GPU 0, 0, 1 (the guard) and both branches on origin;
# without one 3 (no GPU) and neither branch (a run without a GPU commits no marks and records
# no history).
#   pipelines/ci/rehearse.sh [--devices 0,1] [--archs 90] [--keep]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ksrc=$(cd "$here/../.." && pwd)
devices=0 archs=90 keep=0
while [ $# -gt 0 ]; do
    case "$1" in
        --devices) devices=${2:?--devices N[,M...]}; shift 2 ;;
        --archs) archs=${2:?--archs 90}; shift 2 ;;
        --keep) keep=1; shift ;;
        *) echo "rehearse: unknown argument '$1' (--devices LIST, --archs A, --keep)" >&2; exit 2 ;;
    esac
done
[[ "$devices" =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "rehearse: --devices: expected 0 or 0,1, got '$devices'" >&2; exit 2; }
T=$(mktemp -d /tmp/kgate-rehearse.XXXXXX)
if [ "$keep" = 1 ]; then echo "rehearse: keeping $T"; else trap 'rm -rf "$T"' EXIT; fi
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=rehearse \
    GIT_AUTHOR_EMAIL=rehearse@localhost GIT_COMMITTER_NAME=rehearse GIT_COMMITTER_EMAIL=rehearse@localhost
unset KGATE_GIT_TOKEN KGATE_STATUS_TOKEN GITHUB_TOKEN CI_JOB_TOKEN
gpu=0
nvidia-smi -L >/dev/null 2>&1 && gpu=1
fails=0
step() { # step NAME WANT GOT
    if [ "$2" = "$3" ]; then echo "rehearse: ok   $1 (exit $3)"; else echo "rehearse: FAIL $1: exit $3, expected $2"; fails=$((fails + 1)); fi
}

git init -q -b main "$T/seed"
cp -r "$ksrc/examples/external/." "$T/seed/"
git -C "$T/seed" add -A && git -C "$T/seed" commit -qm "my kernels"
git clone -q --bare "$T/seed" "$T/origin.git"
git clone -q "$T/origin.git" "$T/proj"
cd "$T/proj"

rc=0
KGATE_CUDA_ARCHITECTURES=$archs KGATE_RUNNER=my-kernels KGATE_INSTALL_DIR="$T/install" \
    CCACHE_DIR="${CCACHE_DIR:-$T/ccache}" KGATE_BUNDLE="$T/kgate-runners.tar.gz" \
    "$here/build.sh" > "$T/build.log" 2>&1 || rc=$?
step "build once" 0 "$rc"
[ "$rc" = 0 ] || { tail -20 "$T/build.log"; exit 1; }
mkdir -p "$T/bin" && tar -xzf "$T/kgate-runners.tar.gz" -C "$T/bin"
want=3; [ "$gpu" = 1 ] && want=0

IFS=, read -r -a devs <<< "$devices"
for d in "${devs[@]}"; do
    rc=0
    KGATE_MODE=production KGATE_DEVICE=$d KGATE_NAME=local-gpu$d KGATE_SUMMARY="$T/summary.md" \
        "$T/bin/ci/gate.sh" > "$T/production-$d.log" 2>&1 || rc=$?
    step "production, GPU $d" "$want" "$rc"
done
has() { git --git-dir="$T/origin.git" rev-parse --verify -q "refs/heads/$1" >/dev/null && echo yes || echo no; }
step "origin has kgate-marks" "$([ "$gpu" = 1 ] && echo yes || echo no)" "$(has kgate-marks)"
# Without a GPU the bench rows are SKIP: history append records nothing (and says so).
step "origin has kgate-history" "$([ "$gpu" = 1 ] && echo yes || echo no)" "$(has kgate-history)"

git checkout -q -b topic
echo "// a pull request" >> my_kernels.cu
git commit -qam "a pull request"
for d in "${devs[@]}"; do
    rc=0
    KGATE_MODE=diagnostic KGATE_DEVICE=$d KGATE_NAME=local-gpu$d KGATE_BASE_REF=main \
        KGATE_OUT="$T/pr-reports/local-gpu$d" "$T/bin/ci/gate.sh" > "$T/pr-$d.log" 2>&1 || rc=$?
    step "pull request, GPU $d" "$want" "$rc"
done
rc=0
KGATE_REPORTS_DIR="$T/pr-reports" KGATE_SUMMARY="$T/pr-summary.md" KGATE_STATUSES=true \
    KGATE_COMMENT=true KGATE_DRY_RUN=true KGATE_PR_NUMBER=1 GITHUB_ACTIONS=true \
    GITHUB_REPOSITORY=rehearse/kgate GITHUB_SHA=$(git rev-parse HEAD) GITHUB_RUN_ID=1 \
    GITHUB_API_URL=https://api.invalid GITHUB_SERVER_URL=https://forge.invalid \
    GITHUB_TOKEN=dry-run-token "$T/bin/ci/report.sh" > "$T/report.log" 2>&1 || rc=$?
step "report job (comment + statuses, dry run)" 0 "$rc"

rc=0
KGATE_CUDA_ARCHITECTURES=$archs KGATE_RUNNER=my-kernels KGATE_INSTALL_DIR="$T/install" KGATE_AB_BASE=main \
    CCACHE_DIR="${CCACHE_DIR:-$T/ccache}" KGATE_BUNDLE="$T/kgate-runners-ab.tar.gz" \
    "$here/build.sh" > "$T/build-ab.log" 2>&1 || rc=$?
step "pull request build: head and base" 0 "$rc"
mkdir -p "$T/bin-ab" && tar -xzf "$T/kgate-runners-ab.tar.gz" -C "$T/bin-ab"
step "the bundle has the base's runner" yes "$([ -x "$T/bin-ab/bin/base/my-kernels" ] && grep -q "^KGATE_AB_BASE_SHA=$(git rev-parse main)$" "$T/bin-ab/kgate-runners.env" && echo yes || echo no)"
step "the base tree is removed" no "$([ -e .kgate-base ] && echo yes || echo no)"
rc=0
KGATE_MODE=diagnostic KGATE_DEVICE="${devs[0]}" KGATE_NAME=local-ab KGATE_BASE_REF=main KGATE_AB_ARGS="--rounds 3" \
    KGATE_OUT="$T/pr-ab" "$T/bin-ab/ci/gate.sh" > "$T/pr-ab.log" 2>&1 || rc=$?
step "pull request A/B, GPU ${devs[0]}" "$want" "$rc"
step "the A/B ran after the run" yes "$(grep -q 'A/B of the base' "$T/pr-ab.log" && [ -f "$T/pr-ab/kgate-ab.json" ] && echo yes || echo no)"

git checkout -q -b edits-marks main
echo '{"version": 1, "marks": []}' > baselines/high_water.json
git commit -qam "edit the marks by hand"
rc=0
KGATE_MODE=diagnostic KGATE_DEVICE="${devs[0]}" KGATE_BASE_REF=main KGATE_OUT="$T/guard" \
    "$T/bin/ci/gate.sh" > "$T/guard.log" 2>&1 || rc=$?
step "pull request editing the marks (guard)" "$([ "$gpu" = 1 ] && echo 1 || echo 3)" "$rc"
step "the guard refused it" yes "$(grep -q 'marks guard refused' "$T/guard.log" && echo yes || echo no)"
step "the guard passed the plain pull request" yes "$(grep -q 'marks guard: .* ok$' "$T/pr-${devs[0]}.log" && ! grep -q 'marks guard refused' "$T/pr-${devs[0]}.log" && echo yes || echo no)"

echo "rehearse: logs in $T (--keep to keep them); $fails failed"
[ "$fails" = 0 ]
