#!/usr/bin/env bash
# kgate CI, the workflow_run relay (GitHub: pipelines/github/relay, pipelines/github-relay.yml):
# posts the PR comment and the commit statuses of a pull request from a FORK, whose own run had
# a read-only token. It runs trusted code only (this script and a kgate built from the relay's
# own kgate tree, never the pull request's build) and reads only the reports that the fork's
# run uploaded, treated as untrusted data:
#   - layout: $KGATE_RELAY_IN/<name>/ (or one GPU's files flat); regular files only (no link, no
#     device, no deeper directory), names from the list gate.sh writes, each at most 16 MiB,
#     at most 64 MiB and 64 GPUs in all; <name> and kgate-name [A-Za-z0-9._-]{1,64} and equal;
#     kgate-url is dropped (a link chosen by the fork is never posted);
#   - content: every kgate-report.json / kgate-ab.json loads as a kgate report (`kgate report
#     --from`: schema, strict JSON, size), is diagnostic (a fork never certifies) and is the
#     command gate.sh runs (run; ab);
#   - signature: with KGATE_RELAY_REQUIRE_SIGNATURE=true every report must carry a valid one
#     (`kgate report --verify-signature` with KGATE_REPORT_KEY; a fork's run holds no key, so
#     this is for runners that sign with a key of their own); otherwise none is needed, and
#     nothing the relay reads can move a mark either way;
#   - the pull request: the number is never taken from the artifact: the open PR whose head is
#     KGATE_RELAY_HEAD_REPO at KGATE_RELAY_HEAD_SHA (from the workflow_run event), asked of the
#     API; none or several: nothing is posted (exit 2).
# Then report.sh (the same comment and statuses as for any PR, KGATE_STATUS_SHA the head) with
# the run's artifact links. Environment: KGATE_RELAY_IN, KGATE_RELAY_KGATE (the trusted kgate
# executable), KGATE_RELAY_RUN_ID, KGATE_RELAY_HEAD_SHA, KGATE_RELAY_HEAD_REPO,
# KGATE_RELAY_HEAD_BRANCH, GITHUB_REPOSITORY, GITHUB_API_URL, GITHUB_SERVER_URL, GITHUB_TOKEN,
# KGATE_RELAY_PR (tests only: skips the API look-up), KGATE_DRY_RUN.
# Exit: report.sh's code; 2 for an artifact or event that fails validation (nothing posted).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
die() { echo "kgate-ci relay: $*" >&2; exit 2; }
in=${KGATE_RELAY_IN:?KGATE_RELAY_IN: the downloaded artifacts}
kg=${KGATE_RELAY_KGATE:?KGATE_RELAY_KGATE: the trusted kgate executable}
[ -x "$kg" ] || die "KGATE_RELAY_KGATE: $kg is not executable"
[ -d "$in" ] || die "no artifacts in '$in' (did the fork's run upload kgate-report-*?)"
sha=${KGATE_RELAY_HEAD_SHA:-}
[[ "$sha" =~ ^[0-9a-f]{40}$ ]] || die "KGATE_RELAY_HEAD_SHA: expected a full commit id, got '$sha'"
[[ "${KGATE_RELAY_RUN_ID:-}" =~ ^[0-9]{1,20}$ ]] || die "KGATE_RELAY_RUN_ID: expected the run's number, got '${KGATE_RELAY_RUN_ID:-}'"
allowed=" kgate-report.json kgate-ab.json kgate-name kgate-rc kgate-ab-rc kgate-junit.xml kgate-summary.md kgate-report.html kgate-url "
max_file=$((16 * 1024 * 1024)) max_total=$((64 * 1024 * 1024))

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
odd=$(find "$in" -mindepth 1 \( -type l -o \( ! -type f ! -type d \) \) -print -quit)
[ -z "$odd" ] && odd=$(find "$in" -mindepth 3 -print -quit)
[ -z "$odd" ] || die "the artifact holds something other than files of one level of GPU folders: ${odd#"$in"/}"
total=$(find "$in" -type f -printf '%s\n' | awk '{ t += $1 } END { print t + 0 }')
[ "$total" -le "$max_total" ] || die "the artifacts hold $total bytes, more than $max_total"
dirs=()
if [ -f "$in/kgate-name" ] || [ -f "$in/kgate-report.json" ]; then dirs=("$in")
else while IFS= read -r d; do dirs+=("$d"); done < <(find "$in" -mindepth 1 -maxdepth 1 -type d | LC_ALL=C sort); fi
if [ "${#dirs[@]}" -lt 1 ] || [ "${#dirs[@]}" -gt 64 ]; then die "expected 1 to 64 GPU folders, got ${#dirs[@]}"; fi
for d in "${dirs[@]}"; do
    [ "$d" = "$in" ] || [ -z "$(find "$d" -mindepth 1 -type d -print -quit)" ] || die "a folder inside ${d#"$in"/}"
    n=$(head -c 65 "$d/kgate-name" 2>/dev/null | head -1) || true
    [[ "$n" =~ ^[A-Za-z0-9._-]{1,64}$ ]] || die "${d#"$in"/}: kgate-name is missing or not [A-Za-z0-9._-]{1,64}"
    [ "$d" = "$in" ] || [ "$(basename "$d")" = "$n" ] || [ "$(basename "$d")" = "kgate-report-$n" ] ||
        die "${d#"$in"/}: its kgate-name says '$n'"
    [ ! -e "$T/in/$n" ] || die "two GPU folders are named '$n'"
    mkdir -p "$T/in/$n"
    for f in "$d"/*; do
        [ -e "$f" ] || continue
        b=$(basename "$f")
        case "$allowed" in *" $b "*) ;; *) die "$n/$b: not a file a kgate GPU job writes" ;; esac
        [ "$(stat -c %s "$f")" -le "$max_file" ] || die "$n/$b: larger than $max_file bytes"
        [ "$b" = kgate-url ] && continue # never a link the fork chose
        cp "$f" "$T/in/$n/$b"
    done
    for r in kgate-report.json kgate-ab.json; do
        [ -f "$T/in/$n/$r" ] || continue
        "$kg" report --from "$T/in/$n/$r" --markdown - > /dev/null 2> "$T/err" ||
            die "$n/$r: not a kgate report: $(head -c 300 "$T/err")"
        mode=$(jq -r '.mode // ""' "$T/in/$n/$r") cmd=$(jq -r '.command // ""' "$T/in/$n/$r")
        [ "$mode" != production ] || die "$n/$r: a production report from a fork's run"
        case "$r:$cmd" in kgate-report.json:run|kgate-ab.json:ab) ;; *) die "$n/$r: a '$cmd' report where gate.sh writes another" ;; esac
        if [ "${KGATE_RELAY_REQUIRE_SIGNATURE:-false}" = true ]; then
            [ -n "${KGATE_REPORT_KEY:-}" ] || die "KGATE_RELAY_REQUIRE_SIGNATURE=true needs KGATE_REPORT_KEY"
            "$kg" report --from "$T/in/$n/$r" --verify-signature 2> "$T/err" ||
                die "$n/$r: no valid signature: $(head -c 300 "$T/err")"
        fi
    done
done
echo "kgate-ci relay: ${#dirs[@]} GPU report folder(s) validated ($total bytes)"

# The pull request, from the event's head (never from the artifact).
pr=${KGATE_RELAY_PR:-}
if [ -z "$pr" ]; then
    hrepo=${KGATE_RELAY_HEAD_REPO:?KGATE_RELAY_HEAD_REPO} hbranch=${KGATE_RELAY_HEAD_BRANCH:?KGATE_RELAY_HEAD_BRANCH}
    owner=${hrepo%%/*}
    q=$(jq -rn --arg h "$owner:$hbranch" '$h | @uri')
    curl -fsS --max-time 30 --retry 2 -H "Authorization: Bearer ${GITHUB_TOKEN:?GITHUB_TOKEN}" \
        -H "Accept: application/vnd.github+json" \
        "${GITHUB_API_URL:-https://api.github.com}/repos/$GITHUB_REPOSITORY/pulls?state=open&per_page=100&head=$q" > "$T/pulls.json" ||
        die "the pull requests of $GITHUB_REPOSITORY could not be listed"
    mapfile -t prs < <(jq -r --arg s "$sha" --arg r "$hrepo" '.[] | select(.head.sha == $s and .head.repo.full_name == $r) | .number' "$T/pulls.json")
    [ "${#prs[@]}" = 1 ] || die "expected one open pull request with head $hrepo@${sha:0:12}, found ${#prs[@]}: nothing posted"
    pr=${prs[0]}
fi
[[ "$pr" =~ ^[0-9]{1,10}$ ]] || die "not a pull request number: '$pr'"

# report.sh over the validated copy, with the trusted kgate as the bundle's runner.
mkdir -p "$T/bin/bin"
ln -s "$(readlink -f "$kg")" "$T/bin/bin/kgate"
printf 'KGATE_RUNNER_NAME=kgate\n' > "$T/bin/kgate-runners.env"
urls="$T/artifact-urls"
: > "$urls"
if [ -z "${KGATE_RELAY_PR:-}" ]; then
    curl -fsS --max-time 30 --retry 2 -H "Authorization: Bearer $GITHUB_TOKEN" -H "Accept: application/vnd.github+json" \
        "${GITHUB_API_URL:-https://api.github.com}/repos/$GITHUB_REPOSITORY/actions/runs/$KGATE_RELAY_RUN_ID/artifacts?per_page=100" |
      jq -r --arg u "${GITHUB_SERVER_URL:-https://github.com}/$GITHUB_REPOSITORY/actions/runs/$KGATE_RELAY_RUN_ID/artifacts/" \
        '.artifacts[] | select(.name | startswith("kgate-report-")) | "\(.name | ltrimstr("kgate-report-")) \($u)\(.id)"' > "$urls" ||
      echo "kgate-ci relay: the run's artifacts could not be listed: the comment links the run"
fi
echo "kgate-ci relay: posting for pull request #$pr (head ${sha:0:12}, run $KGATE_RELAY_RUN_ID)"
export GITHUB_RUN_ID=$KGATE_RELAY_RUN_ID # the links: the fork's run, not this relay's
unset KGATE_REPORT_KEY
KGATE_BIN="$T/bin" KGATE_REPORTS_DIR="$T/in" KGATE_COMMENT=true KGATE_STATUSES=true \
    KGATE_PR_NUMBER=$pr KGATE_STATUS_SHA=$sha KGATE_ARTIFACT_URLS=$urls KGATE_HISTORY_PUSH=false \
    "$here/report.sh"
