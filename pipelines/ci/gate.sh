#!/usr/bin/env bash
# kgate CI, one GPU job of the matrix (GitHub: pipelines/github/gate; GitLab: .kgate-gate and
# .kgate-production). Runs from the project's checkout, with the bundle of the build job
# unpacked (this script is its ci/gate.sh), and leaves every output in $KGATE_OUT:
#   kgate-report.json kgate-junit.xml kgate-summary.md kgate-report.html kgate-name kgate-rc
#   kgate-ab.json kgate-ab-rc (pull/merge requests with a base runner in the bundle)
#   kgate-url (GitLab: the job's artifacts browse URL, the comment's link)
#
#   diagnostic (pull/merge requests): `marks guard --base origin/<target>` (a PR must not edit
#     the marks), then `run --diagnostic --marks-ref origin/<marks branch>`: gated against the
#     target's marks, nothing committed, no write token used; then, when the build job bundled
#     the base's runner (bin/base/, KGATE_AB_BASE), `kgate ab BASE HEAD --device N`: interleaved
#     rounds of both builds on this GPU. The A/B is the PR's bench verdict (B_SLOWER fails); the
#     bench's comparison with the marks stays in the report and the comment, informational: a
#     run whose only failures are bench rows decided REGRESSED against the marks passes;
#   production (default branch): `run --production --marks-branch <marks branch> --push origin`
#     (marks committed to their own branch, never the default branch), then `history append`
#     of the report to the history branch, pushed, whether the run passed or not.
#
# Environment: KGATE_MODE (diagnostic|production), KGATE_DEVICE (the ordinal), KGATE_NAME (the
# GPU's name in reports, statuses and artifacts; default <KGATE_GPU>-gpu<N>), KGATE_OUT (default
# kgate-reports/<name>), KGATE_MARKS_BRANCH (kgate-marks), KGATE_HISTORY_BRANCH (kgate-history;
# empty: no history), KGATE_MARKS_FILE (baselines/high_water.json), KGATE_BASE_REF (the PR's
# target branch: guard; empty: no guard), KGATE_RUN_ARGS (more `kgate run` flags, split on
# spaces), KGATE_FETCH_TOKEN (read token for fetching when the checkout kept no credentials),
# KGATE_PUSH_TOKEN (production only: becomes KGATE_GIT_TOKEN), KGATE_SUMMARY (a file the
# Markdown summary is appended to, e.g. $GITHUB_STEP_SUMMARY), KGATE_AB (auto: the A/B when the
# bundle has a base runner; off: never, the marks decide the bench), KGATE_AB_ARGS (more `kgate
# ab` flags, split on spaces: --rounds N, --budget S; the A/B selects the cases the run's
# --filter/--exclude/--tag of KGATE_RUN_ARGS select), KGATE_SHARD (I/N: this job's part of the
# selection; production then commits nothing, ci/merge.sh advances from the merged report),
# KGATE_SEED (the matrix's one seed; default the pipeline's id) and KGATE_SELFTEST (diagnostic
# only: reuse, the default, takes the certificate a passing selftest of the same kgate build
# left on this GPU, `run --reuse-selftest`, else runs it fresh; fresh always runs it; production
# always runs it fresh and leaves the certificate the pull requests then reuse).
# Exit: kgate run's code (0 pass, 1 gate failed, 2 usage, 3 no GPU, 4 runtime error), with a PR's
# bench-vs-marks regressions not counted when the A/B ran; else the A/B's code (1: B slower on a
# case); 1 when the gates passed but the guard refused the PR; 4 when they passed but the
# history push failed.
set -euo pipefail
bin=$(cd "${KGATE_BIN:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)
die() { echo "kgate-ci gate: $*" >&2; exit 2; }
[ -f "$bin/kgate-runners.env" ] || die "$bin/kgate-runners.env missing: unpack the build job's bundle first"
KGATE_RUNNER_NAME=$(sed -n 's/^KGATE_RUNNER_NAME=//p' "$bin/kgate-runners.env")
runner="$bin/bin/$KGATE_RUNNER_NAME"
[ -x "$runner" ] || die "$runner is not executable (a broken bundle)"
base_runner="$bin/bin/base/$KGATE_RUNNER_NAME"
ab_note=$(sed -n 's/^KGATE_AB_NOTE=//p' "$bin/kgate-runners.env")
export KGATE_DEFECTS="$bin/bin/kgate-defects"

mode=${KGATE_MODE:-}
case "$mode" in diagnostic|production) ;; *) die "KGATE_MODE: expected diagnostic or production, got '$mode'" ;; esac
dev=${KGATE_DEVICE:-}
[[ "$dev" =~ ^[0-9]+$ ]] || die "KGATE_DEVICE: expected a GPU ordinal (0, 1, ...), got '$dev'"
name=${KGATE_NAME:-${KGATE_GPU:-gpu}-gpu$dev}
[[ "$name" =~ ^[A-Za-z0-9._-]+$ ]] || die "KGATE_NAME: letters, digits, '.', '_' and '-' only, got '$name'"
out=${KGATE_OUT:-kgate-reports/$name}
marks=${KGATE_MARKS_BRANCH-kgate-marks}
hist=${KGATE_HISTORY_BRANCH-kgate-history}
for b in "$marks" "$hist" "${KGATE_BASE_REF:-}"; do
    [ -z "$b" ] || git check-ref-format --branch "$b" >/dev/null 2>&1 || die "not a branch name: '$b'"
done
ab=${KGATE_AB:-auto}
case "$ab" in auto|true|on) ab=auto ;; off|false) ab=off ;; *) die "KGATE_AB: expected auto or off, got '$ab'" ;; esac
[ "$mode" = diagnostic ] && [ "$ab" = auto ] && [ -x "$base_runner" ] || ab=off
mkdir -p "$out"
printf '%s\n' "$name" > "$out/kgate-name"
if [ -n "${CI_JOB_URL:-}" ] && [[ "$out" != /* ]]; then # GitLab: where this job's outputs are browsed
    printf '%s/artifacts/browse/%s/\n' "$CI_JOB_URL" "${out%/}" > "$out/kgate-url"
fi
# The marks file inside the repository: the build machine's path baked into the runner
# (kgate_add_runner MARKS) does not exist here.
export KGATE_MARKS=${KGATE_MARKS:-$PWD/${KGATE_MARKS_FILE:-baselines/high_water.json}}
unset KGATE_GIT_TOKEN
push_token=${KGATE_PUSH_TOKEN:-}
unset KGATE_PUSH_TOKEN

kg_fetch() { # kg_fetch BRANCH: origin's BRANCH into refs/remotes/origin/BRANCH; 1 if it has none
    # A shallow checkout (pull requests: the guard and the marks read only the tips) fetches the
    # tip alone, not the branch's whole history.
    local depth=()
    [ "$(git rev-parse --is-shallow-repository 2>/dev/null)" = true ] && depth=(--depth=1)
    if [ -n "${KGATE_FETCH_TOKEN:-}" ]; then
        # For this one git process only, through its environment (not its command line, not
        # .git/config); the CI masks the token in logs.
        GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=http.extraheader \
        GIT_CONFIG_VALUE_0="AUTHORIZATION: basic $(printf 'x-access-token:%s' "$KGATE_FETCH_TOKEN" | base64 -w0)" \
            git fetch --quiet --no-tags "${depth[@]}" origin "+refs/heads/$1:refs/remotes/origin/$1" 2>/dev/null
    else
        git fetch --quiet --no-tags "${depth[@]}" origin "+refs/heads/$1:refs/remotes/origin/$1" 2>/dev/null
    fi
}

# A PR's bench verdict is the A/B: a run whose only failures are bench rows decided REGRESSED
# against the marks (informational on PRs) counts as passed. Anything else that failed, an
# ERROR included, still fails. Without jq the run's own code stands.
kg_marks_informational() {
    local others regressed
    command -v jq >/dev/null 2>&1 || { echo "kgate-ci gate: jq not installed: the run's bench-vs-marks verdict counts" >&2; return 1; }
    others=$(jq '[.results[] | select((.verdict == "FAIL" or .verdict == "XPASS" or .verdict == "ERROR")
                  and ((.gate == "bench" and .figures.decision == "REGRESSED") | not))] | length' \
                "$out/kgate-report.json") || return 1
    regressed=$(jq '[.results[] | select(.gate == "bench" and .figures.decision == "REGRESSED")] | length' \
                "$out/kgate-report.json") || return 1
    [ "$others" = 0 ] || return 1
    echo "kgate-ci gate: $regressed bench row(s) above the marks: informational on a pull request (the A/B decides)"
}

kg_ab() { # the A/B of the base and head runners on this GPU; its code joins rc
    local ab_rc=0 base_sha
    base_sha=$(sed -n 's/^KGATE_AB_BASE_SHA=//p' "$bin/kgate-runners.env")
    echo "kgate-ci gate: A/B of the base ${base_sha:0:12} (A) and this pull request (B) on GPU $dev"
    # The run's selection (--filter, --exclude, --tag of KGATE_RUN_ARGS) is the A/B's too, then
    # KGATE_AB_ARGS; both are split on spaces on purpose.
    # shellcheck disable=SC2206
    local run_args=(${KGATE_RUN_ARGS:-}) extra=() i=0
    while [ "$i" -lt "${#run_args[@]}" ]; do
        case "${run_args[$i]}" in
            --filter|--exclude|--tag) extra+=("${run_args[$i]}" "${run_args[$((i + 1))]:-}"); i=$((i + 1)) ;;
            --filter=*|--exclude=*|--tag=*) extra+=("${run_args[$i]}") ;;
        esac
        i=$((i + 1))
    done
    # shellcheck disable=SC2206
    extra+=(${KGATE_AB_ARGS:-})
    set +e
    "$runner" ab "$base_runner" "$runner" --device "$dev" --report "$out/kgate-ab.json" "${extra[@]}"
    ab_rc=$?
    set -e
    printf '%s\n' "$ab_rc" > "$out/kgate-ab-rc"
    if [ -f "$out/kgate-ab.json" ] && [ -n "${KGATE_SUMMARY:-}" ]; then
        { echo "### kgate A/B (base ${base_sha:0:12} vs this PR): $name"; echo
          "$runner" report --from "$out/kgate-ab.json" --markdown - || echo "(unreadable A/B report)"; echo; } >> "$KGATE_SUMMARY"
    fi
    if [ "$rc" -eq 1 ] && [ -f "$out/kgate-report.json" ] && kg_marks_informational; then rc=0; fi
    case "$ab_rc" in
        0) ;;
        1) echo "kgate-ci gate: the A/B found this pull request slower than its base (B_SLOWER)" >&2
           [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ] || rc=1 ;;
        3) [ "$rc" -ne 0 ] || rc=3 ;; # no GPU: said by kgate ab itself
        *) echo "kgate-ci gate: kgate ab exited $ab_rc" >&2
           [ "$rc" -ne 0 ] || rc=$ab_rc ;;
    esac
}

args=(run --device "$dev" --report "$out/kgate-report.json")
guard_rc=0
if [ "$mode" = diagnostic ]; then
    args+=(--diagnostic)
    # The selftest proves the kgate build on this GPU, not the pull request's kernels: the
    # certificate of a passing one (the last production run's, say) serves until the build,
    # driver or GPU changes or it is a day old. KGATE_RUN_ARGS may still say otherwise.
    case "${KGATE_SELFTEST:-reuse}" in
        reuse) [[ " ${KGATE_RUN_ARGS:-} " =~ \ --(skip|reuse)-selftest\  ]] || args+=(--reuse-selftest) ;;
        fresh) ;;
        *) die "KGATE_SELFTEST: expected reuse or fresh, got '$KGATE_SELFTEST'" ;;
    esac
    if [ -n "$marks" ] && kg_fetch "$marks"; then
        args+=(--marks-ref "origin/$marks")
    else
        echo "kgate-ci gate: no branch '$marks' on origin yet (no production run has committed marks): gating without marks"
    fi
    if [ -n "${KGATE_BASE_REF:-}" ]; then
        kg_fetch "$KGATE_BASE_REF" || die "cannot fetch the target branch '$KGATE_BASE_REF' from origin"
        set +e
        "$runner" marks guard --base "origin/$KGATE_BASE_REF"
        guard_rc=$?
        set -e
    fi
else
    [ -n "$marks" ] || die "KGATE_MARKS_BRANCH is empty: production commits the marks to that branch"
    args+=(--production --marks-branch "$marks" --push origin)
    # The advance learns each band from the class's run history (issue #27): origin's copy.
    [ -z "$hist" ] || kg_fetch "$hist" || echo "kgate-ci gate: no branch '$hist' on origin yet: bands from the setting processes alone"
    [ -n "$push_token" ] && export KGATE_GIT_TOKEN="$push_token"
fi
# --shard I/N (issue #27): this job runs part I of N of the selection, with the seed every job
# of the matrix shares (KGATE_SEED, else the pipeline's id); ci/merge.sh merges the parts.
if [ -n "${KGATE_SHARD:-}" ]; then
    [[ "$KGATE_SHARD" =~ ^[0-9]+/[0-9]+$ ]] || die "KGATE_SHARD: expected I/N (e.g. 2/4), got '$KGATE_SHARD'"
    seed=${KGATE_SEED:-${GITHUB_RUN_ID:-${CI_PIPELINE_ID:-}}}
    [[ "$seed" =~ ^[0-9]+$ ]] || die "KGATE_SHARD needs KGATE_SEED (digits; default: the pipeline's id), got '$seed'"
    args+=(--shard "$KGATE_SHARD" --seed "$seed")
fi
# shellcheck disable=SC2206 # KGATE_RUN_ARGS is split on spaces on purpose
args+=(${KGATE_RUN_ARGS:-})

unset KGATE_FETCH_TOKEN
set +e
"$runner" "${args[@]}"
rc=$?
set -e
printf '%s\n' "$rc" > "$out/kgate-rc" # kgate run's own code
if [ -f "$out/kgate-report.json" ]; then
    "$runner" report --from "$out/kgate-report.json" --junit "$out/kgate-junit.xml" \
        --markdown "$out/kgate-summary.md" --html "$out/kgate-report.html" || [ "$rc" -ne 0 ] || rc=4
    if [ -n "${KGATE_SUMMARY:-}" ] && [ -f "$out/kgate-summary.md" ]; then
        { echo "### kgate $mode: $name"; echo; cat "$out/kgate-summary.md"; echo; } >> "$KGATE_SUMMARY"
    fi
    if [ "$mode" = production ] && [ -n "$hist" ]; then
        # Every production run goes into the history, passed or not.
        if ! "$runner" history append --report "$out/kgate-report.json" --branch "$hist" --push; then
            echo "kgate-ci gate: history append to '$hist' failed" >&2
            [ "$rc" -ne 0 ] || rc=4
        fi
    fi
else
    echo "kgate-ci gate: kgate run wrote no report (exit $rc)" >&2
fi
if [ "$ab" = auto ]; then
    kg_ab
elif [ "$mode" = diagnostic ] && [ -n "$ab_note" ]; then
    echo "kgate-ci gate: no A/B ($ab_note): the bench is gated against the marks"
fi
if [ "$guard_rc" -eq 1 ]; then
    echo "kgate-ci gate: marks guard refused this pull/merge request: marks move only through production runs and \`kgate marks lower\`" >&2
    [ "$rc" -ne 0 ] || rc=1
elif [ "$guard_rc" -ne 0 ]; then
    echo "kgate-ci gate: marks guard failed (exit $guard_rc)" >&2
    [ "$rc" -ne 0 ] || rc=$guard_rc
fi
exit "$rc"
