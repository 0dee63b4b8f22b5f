#!/usr/bin/env bash
# kgate CI, after a sharded GPU matrix (issue #27 item 4; GitHub: the merge job; GitLab: merge):
# the shard reports (every kgate-report.json under KGATE_REPORTS whose report has a shard) of
# each GPU class and selection merged into one report (`kgate report --merge`: each signature
# verified with KGATE_REPORT_KEY; overlapping, missing or mismatched shards refused, exit 2),
# with its JUnit, Markdown and HTML, in $KGATE_OUT/merged-<class>/; in production, the marks
# advanced from the merged signed report (`kgate marks advance --from-report --marks-branch
# <marks branch> --push origin`): a shard never commits on its own.
#
# Environment: KGATE_MODE (diagnostic|production), KGATE_REPORTS (where the matrix's reports
# were downloaded; default kgate-reports), KGATE_OUT (default kgate-reports), KGATE_MARKS_BRANCH
# (kgate-marks), KGATE_HISTORY_BRANCH (kgate-history: the bands learn from it), KGATE_PUSH_TOKEN
# (production: becomes KGATE_GIT_TOKEN, and fetches the history), KGATE_REPORT_KEY (the
# key the shards were signed with), KGATE_SUMMARY (a file the Markdown summary is appended to).
# Exit: 0 when there was nothing to merge or every merged report passed and advanced; else the
# first non-zero code of `report --merge` (1 a gate failed, 2 refused, 3 no GPU) or of the
# advance.
set -euo pipefail
bin=$(cd "${KGATE_BIN:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)
die() { echo "kgate-ci merge: $*" >&2; exit 2; }
[ -f "$bin/kgate-runners.env" ] || die "$bin/kgate-runners.env missing: unpack the build job's bundle first"
runner="$bin/bin/$(sed -n 's/^KGATE_RUNNER_NAME=//p' "$bin/kgate-runners.env")"
[ -x "$runner" ] || die "$runner is not executable (a broken bundle)"
mode=${KGATE_MODE:-}
case "$mode" in diagnostic|production) ;; *) die "KGATE_MODE: expected diagnostic or production, got '$mode'" ;; esac
reports=${KGATE_REPORTS:-kgate-reports}
out=${KGATE_OUT:-kgate-reports}
marks=${KGATE_MARKS_BRANCH-kgate-marks}
[ -z "$marks" ] || git check-ref-format --branch "$marks" >/dev/null 2>&1 || die "not a branch name: '$marks'"
unset KGATE_GIT_TOKEN
push_token=${KGATE_PUSH_TOKEN:-}
unset KGATE_PUSH_TOKEN
hist=${KGATE_HISTORY_BRANCH-kgate-history}
if [ "$mode" = production ] && [ -n "$hist" ]; then
    # The advance learns each band from the class's run history: origin's copy, fetched with
    # the push token through git's environment (never its command line or .git/config).
    if [ -n "$push_token" ]; then
        GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=http.extraheader \
        GIT_CONFIG_VALUE_0="AUTHORIZATION: basic $(printf 'x-access-token:%s' "$push_token" | base64 -w0)" \
            git fetch --quiet --no-tags origin "+refs/heads/$hist:refs/remotes/origin/$hist" 2>/dev/null || true
    else
        git fetch --quiet --no-tags origin "+refs/heads/$hist:refs/remotes/origin/$hist" 2>/dev/null || true
    fi
fi

# group: "<class>\t<selection hash>" -> the shard reports, one per line
declare -A group
while IFS= read -r -d '' f; do
    key=$(jq -r 'select(.shard.index != null) | "\(.device.class // "no-gpu")\t\(.shard.selection_hash)"' "$f" 2>/dev/null) || continue
    [ -n "$key" ] && group[$key]+="$f"$'\n'
done < <(find "$reports" -name kgate-report.json -not -path '*/merged-*' -print0 | sort -z)
if [ "${#group[@]}" -eq 0 ]; then
    echo "kgate-ci merge: no shard reports under $reports: nothing to merge"
    exit 0
fi
rc=0
for key in "${!group[@]}"; do
    cls=${key%%$'\t'*}
    name="merged-$(printf '%s' "$cls" | tr -c 'A-Za-z0-9._-' '_')"
    d="$out/$name"
    mkdir -p "$d"
    printf '%s\n' "$name" > "$d/kgate-name"
    mapfile -t files < <(printf '%s' "${group[$key]}")
    set +e
    "$runner" report --merge "$d/kgate-report.json" "${files[@]}"
    mrc=$?
    set -e
    printf '%s\n' "$mrc" > "$d/kgate-rc"
    if [ -f "$d/kgate-report.json" ]; then
        "$runner" report --from "$d/kgate-report.json" --junit "$d/kgate-junit.xml" \
            --markdown "$d/kgate-summary.md" --html "$d/kgate-report.html" || [ "$mrc" -ne 0 ] || mrc=4
        if [ -n "${KGATE_SUMMARY:-}" ] && [ -f "$d/kgate-summary.md" ]; then
            { echo "### kgate $mode: $cls, ${#files[@]} shards merged"; echo; cat "$d/kgate-summary.md"; echo; } >> "$KGATE_SUMMARY"
        fi
    fi
    if [ "$mode" = production ] && [ "$mrc" -eq 0 ]; then
        [ -n "$marks" ] || die "KGATE_MARKS_BRANCH is empty: production commits the marks to that branch"
        set +e
        KGATE_GIT_TOKEN=$push_token "$runner" marks advance --from-report "$d/kgate-report.json" \
            --marks-branch "$marks" --push origin
        mrc=$?
        set -e
    fi
    [ "$rc" -ne 0 ] || rc=$mrc
done
exit "$rc"
