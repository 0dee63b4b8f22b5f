#!/usr/bin/env bash
# kgate CI, the one job after the GPU matrix (GitHub: pipelines/github/report; GitLab:
# .kgate-comment). With every GPU's outputs under $KGATE_REPORTS_DIR/<name>/ (what gate.sh
# left in its KGATE_OUT), it:
#   - appends each GPU's Markdown summary to $KGATE_SUMMARY (when set);
#   - KGATE_STATUSES=true: posts the commit statuses of every report, `kgate/<gate> (<name>)`;
#     with an A/B report also `kgate/ab (<name>)`, the run's bench-vs-marks regressions then
#     posted as WARN (informational: the A/B is a pull request's bench verdict);
#   - KGATE_COMMENT=true: creates or updates the ONE pull/merge request comment, made from all
#     reports at once (a comment step per GPU would have each overwrite the others'), each GPU's
#     A/B report (kgate-ab.json) beside its run report, each linked to where its outputs are:
#     <name>/kgate-url (GitLab: the job's artifacts browse URL, written by gate.sh), else the
#     line "<name> <url>" of $KGATE_ARTIFACT_URLS (GitHub: the upload's artifact URL), else
#     KGATE_REPORT_URL, else (kgate comment's default) the run page;
#   - KGATE_HISTORY_PUSH=true (diagnostic runs; production appends in its GPU jobs): appends
#     every report to KGATE_HISTORY_BRANCH (kgate-history) and pushes, with KGATE_GIT_TOKEN.
#   - KGATE_DRY_RUN=true: `kgate status` and `kgate comment` print what they would send.
# A GPU job that wrote no report is named; the job then fails (exit 1) after posting the rest.
# Tokens: the kgate commands read GITHUB_TOKEN / KGATE_STATUS_TOKEN / CI_JOB_TOKEN and
# KGATE_GIT_TOKEN themselves; nothing here prints them.
set -euo pipefail
bin=$(cd "${KGATE_BIN:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)
die() { echo "kgate-ci report: $*" >&2; exit 2; }
[ -f "$bin/kgate-runners.env" ] || die "$bin/kgate-runners.env missing: unpack the build job's bundle first"
KGATE_RUNNER_NAME=$(sed -n 's/^KGATE_RUNNER_NAME=//p' "$bin/kgate-runners.env")
runner="$bin/bin/$KGATE_RUNNER_NAME"
[ -x "$runner" ] || die "$runner is not executable (a broken bundle)"
dir=${KGATE_REPORTS_DIR:-kgate-reports}
[ -d "$dir" ] || die "KGATE_REPORTS_DIR: no directory '$dir' (did any GPU job upload its outputs?)"
hist=${KGATE_HISTORY_BRANCH-kgate-history}

kr_url() { # kr_url DIR NAME: the link of that GPU's outputs, or nothing
    local u=""
    if [ -f "$1/kgate-url" ]; then u=$(head -c 1024 "$1/kgate-url" | head -1)
    elif [ -n "${KGATE_ARTIFACT_URLS:-}" ] && [ -f "$KGATE_ARTIFACT_URLS" ]; then
        u=$(awk -v n="$2" '$1 == n { print $2; exit }' "$KGATE_ARTIFACT_URLS")
    fi
    [ -n "$u" ] || u=${KGATE_REPORT_URL:-}
    [[ "$u" =~ ^https?://[^[:space:]\(\)\<\>]+$ ]] && printf '%s' "$u"
    return 0
}

reports=() names=() missing=() abs=() urls=()
while IFS= read -r d; do
    n=$(cat "$d/kgate-name" 2>/dev/null || basename "$d")
    if [ -f "$d/kgate-report.json" ]; then
        reports+=("$d/kgate-report.json"); names+=("$n"); urls+=("$(kr_url "$d" "$n")")
        if [ -f "$d/kgate-ab.json" ]; then abs+=("$d/kgate-ab.json"); else abs+=(""); fi
    else
        missing+=("$n")
    fi
done < <(
    # One GPU's outputs straight in $dir (GitHub's download-artifact extracts a pattern that
    # matches a single artifact flat), else one directory per GPU.
    if [ -f "$dir/kgate-name" ] || [ -f "$dir/kgate-report.json" ]; then echo "$dir"
    else find "$dir" -mindepth 1 -maxdepth 1 -type d | LC_ALL=C sort; fi)
echo "kgate-ci report: ${#reports[@]} report(s): ${names[*]:-none}${missing[*]:+; no report from: ${missing[*]}}"
dry=(); [ "${KGATE_DRY_RUN:-false}" = true ] && dry=(--dry-run)
rc=0
kr_fail() { echo "kgate-ci report: $1 failed (exit $2)" >&2; [ "$rc" -ne 0 ] || rc=4; }

if [ -n "${KGATE_SUMMARY:-}" ]; then
    for i in "${!reports[@]}"; do
        { echo "### kgate: ${names[$i]}"; echo
          "$runner" report --from "${reports[$i]}" --markdown - || echo "(unreadable report)"; echo; } >> "$KGATE_SUMMARY"
    done
    for n in "${missing[@]}"; do echo "### kgate: $n: no report (the job failed before its run ended)" >> "$KGATE_SUMMARY"; done
fi
# A GPU with an A/B report (a pull request): its kgate/ab status is the bench verdict, and the
# run's bench rows decided REGRESSED against the marks post as WARN (informational), from a copy.
kr_informational() { # kr_informational REPORT OUT
    jq '.results |= map(if .gate == "bench" and .figures.decision == "REGRESSED" and .verdict == "FAIL"
        then .verdict = "WARN" | .message = "informational on a pull request (the A/B decides): " + (.message // "")
        else . end)' "$1" > "$2"
}
if [ "${KGATE_STATUSES:-false}" = true ]; then
    stmp=$(mktemp -d)
    trap 'rm -rf "$stmp"' EXIT
    for i in "${!reports[@]}"; do
        from=${reports[$i]}
        if [ -n "${abs[$i]}" ] && kr_informational "$from" "$stmp/$i.json" 2>/dev/null; then from=$stmp/$i.json; fi
        "$runner" status "${dry[@]}" --from-report "$from" --context-suffix "${names[$i]}" || kr_fail "status (${names[$i]})" $?
        [ -z "${abs[$i]}" ] ||
            "$runner" status "${dry[@]}" --from-report "${abs[$i]}" --context-suffix "${names[$i]}" || kr_fail "status (${names[$i]}, A/B)" $?
    done
fi
if [ "${KGATE_COMMENT:-false}" = true ] && [ "${#reports[@]}" -gt 0 ]; then
    from=()
    for i in "${!reports[@]}"; do
        # One --report-url per --from-report (the GPU's link), or none at all.
        from+=(--from-report "${reports[$i]}" ${urls[$i]:+--report-url "${urls[$i]}"})
        [ -z "${abs[$i]}" ] || from+=(--from-report "${abs[$i]}" ${urls[$i]:+--report-url "${urls[$i]}"})
    done
    "$runner" comment "${dry[@]}" "${from[@]}" || kr_fail comment $?
fi
if [ "${KGATE_HISTORY_PUSH:-false}" = true ] && [ -n "$hist" ]; then
    for i in "${!reports[@]}"; do
        "$runner" history append --report "${reports[$i]}" --branch "$hist" --push || kr_fail "history append (${names[$i]})" $?
    done
fi
if [ "${#missing[@]}" -gt 0 ] || [ "${#reports[@]}" -eq 0 ]; then
    echo "kgate-ci report: no report from: ${missing[*]:-any GPU job} (see those jobs' logs)" >&2
    [ "$rc" -ne 0 ] || rc=1
fi
exit "$rc"
