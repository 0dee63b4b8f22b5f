#!/usr/bin/env bash
# `kgate comment` against a stateful loopback forge (tests/forge_server.py): the first run
# creates the one PR comment, the second updates it in place (no second comment), the marker
# found past the first page of comments; the GitLab notes path likewise (PUT); the body's
# headline, regression table (across two reports, one per GPU), failures, errors and link; the
# token in no output, log or state; no PR number -> a clear message, exit 2; a wrong token ->
# exit 4, redacted; --dry-run prints the body and sends nothing. Loopback only; bounded in time.
KG=$1
. "$(dirname "$0")/lib.sh"
H200=$SRC/tests/data/h200-run-report.json
SERVER=$SRC/tests/forge_server.py
PY=$(command -v /usr/bin/python3 || command -v python3)
REPORT=$T/h200-decided.json
"$PY" "$SRC/tests/data/h200_variants.py" "$H200" "$REPORT" || { echo "FAIL: h200_variants.py"; exit 1; }
SRV_PID=
on_exit '[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null'
TOKEN="kgtest_$(od -An -tx1 -N12 /dev/urandom | tr -d ' \n')"
BASE_ENV=(PATH="$PATH" LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}")

start_server() { # start_server NAME [--seed N]
    local name=$1; shift
    [ -n "$SRV_PID" ] && { kill "$SRV_PID" 2>/dev/null; wait "$SRV_PID" 2>/dev/null; }
    rm -f "$T/port"
    LOG=$T/$name.log STATE=$T/$name.state.json
    : >"$LOG"; echo '{}' >"$STATE"
    KG_TEST_TOKEN=$TOKEN "$PY" "$SERVER" --port-file "$T/port" --log "$LOG" --state "$STATE" \
        --max-life 40 "$@" &
    SRV_PID=$!
    for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.05; done
    PORT=$(cat "$T/port" 2>/dev/null) || { bad "server did not start"; return 1; }
}
gh_kg() { # gh_kg NAME TOKEN args...
    local name=$1 tok=$2; shift 2
    env -i "${BASE_ENV[@]}" GITHUB_ACTIONS=true GITHUB_API_URL="http://127.0.0.1:$PORT" \
        GITHUB_REPOSITORY=example/kernels GITHUB_REF=refs/pull/42/merge GITHUB_TOKEN="$tok" \
        GITHUB_SERVER_URL=https://github.example GITHUB_RUN_ID=99 \
        "$KG" comment "$@" >"$T/$name.out" 2>"$T/$name.err"
}
gl_kg() { # gl_kg NAME args...
    local name=$1; shift
    env -i "${BASE_ENV[@]}" GITLAB_CI=true CI_API_V4_URL="http://127.0.0.1:$PORT/api/v4" \
        CI_PROJECT_ID=group/kernels CI_MERGE_REQUEST_IID=7 KGATE_STATUS_TOKEN="$TOKEN" \
        CI_PIPELINE_URL=https://gitlab.example/group/kernels/-/pipelines/5 \
        "$KG" comment "$@" >"$T/$name.out" 2>"$T/$name.err"
}
ncomments() { jq "[.[] | .[] | select(.body | test(\"kgate-comment\"))] | length" "$STATE"; }
body() { jq -r '[.[] | .[] | select(.body | test("kgate-comment"))][0].body' "$STATE"; }
reqs() { jq -r '.method + " " + .path' "$LOG" | tr '\n' ';'; }

# 1. GitHub: the first run creates the comment (after paging through 150 unrelated ones)...
start_server gh --seed 150
gh_kg gh1 "$TOKEN" --from-report "$REPORT" --from-report "$H200" --report-url https://ci.example/r.html; rc=$?
[ "$rc" -eq 0 ] && ok || { bad "github create: exit $rc"; cat "$T/gh1.out" "$T/gh1.err"; }
P=/repos/example/kernels/issues/42/comments
[ "$(reqs)" = "GET /user;GET $P;GET $P;POST $P;" ] && ok || bad "github create: requests $(reqs)"
[ "$(ncomments)" = 1 ] && ok || bad "github create: $(ncomments) kgate comments"
[ "$(jq -r .auth "$LOG" | sort -u)" = "authorization:match" ] && ok || bad "github: auth header"
grep -q "created comment" "$T/gh1.out" && ok || bad "github create: output $(cat "$T/gh1.out")"
B=$(body)
[ "$(printf '%s\n' "$B" | head -1)" = "<!-- kgate-comment -->" ] && ok || bad "body: marker not first"
printf '%s\n' "$B" | grep -qx "## kgate: 1 regression, 1 failure, 1 error" && ok || bad "body: headline: $(printf '%s\n' "$B" | sed -n 2p)"
printf '%s\n' "$B" | grep -qF '| `reduce_sum/n=67108869/f32` | NVIDIA H200/sm_90 | +3.2 | 0.7 |' && ok || bad "body: regression row"
printf '%s\n' "$B" | grep -qF '| case | device | change % | tolerance % |' && ok || bad "body: table header"
printf '%s\n' "$B" | grep -qF -- '- **FAIL** parity `softmax/rows=4096,cols=1000/f32`' && ok || bad "body: failure"
printf '%s\n' "$B" | grep -qF -- '- **ERROR** hotpath `rmsnorm/rows=4096,cols=4096/bf16`' && ok || bad "body: error"
printf '%s\n' "$B" | grep -qF '[HTML report](https://ci.example/r.html)' && ok || bad "body: link"
printf '%s\n' "$B" | grep -qF '2 reports:' && ok || bad "body: reports footer"
# ...the second updates the same comment in place: no second comment.
jq '.results |= map(if .case == "softmax/rows=4096,cols=1000/f32" then .verdict = "PASS" else . end)' "$REPORT" >"$T/fixed.json"
ID1=$(jq '[.[] | .[] | select(.body | test("kgate-comment"))][0].id' "$STATE")
grep -q "created comment $ID1 on" "$T/gh1.out" && ok || bad "github create: not the forge's id $ID1: $(cat "$T/gh1.out")"
: >"$LOG"
gh_kg gh2 "$TOKEN" --from-report "$T/fixed.json"; rc=$?
[ "$rc" -eq 0 ] && ok || { bad "github update: exit $rc"; cat "$T/gh2.out" "$T/gh2.err"; }
[ "$(reqs)" = "GET /user;GET $P;GET $P;PATCH /repos/example/kernels/issues/comments/$ID1;" ] && ok || bad "github update: requests $(reqs)"
[ "$(ncomments)" = 1 ] && ok || bad "github update: $(ncomments) kgate comments"
[ "$(jq '[.[] | .[] | select(.body | test("kgate-comment"))][0].id' "$STATE")" = "$ID1" ] && ok || bad "github update: another comment"
body | grep -qx "## kgate: 1 regression, 1 error" && ok || bad "github update: headline $(body | sed -n 2p)"
body | grep -qF '[HTML report](https://github.example/example/kernels/actions/runs/99)' && ok || bad "github update: default link"
grep -q "updated comment $ID1" "$T/gh2.out" && ok || bad "github update: output $(cat "$T/gh2.out")"
# A wrong token: exit 4, the server's echo of it redacted.
gh_kg ghbad "wrong_$TOKEN" --from-report "$REPORT"; rc=$?
[ "$rc" -eq 4 ] && grep -q "401" "$T/ghbad.err" && ok || bad "401: exit $rc $(cat "$T/ghbad.err")"
W=wrong_$TOKEN # the server echoes it in base64 and hex as well: every form redacted (issue #28)
for enc in "$W" "$(printf %s "$W" | base64 -w0 | cut -c1-24)" "$(printf %s "$W" | od -An -tx1 | tr -d ' \n')"; do
    grep -qF "$enc" "$T/ghbad.out" "$T/ghbad.err" && bad "401: the echoed token leaked (${enc:0:10}...)" || ok
done

# 2. GitLab: create, then update in place (PUT), the project path URL-encoded.
start_server gl
gl_kg gl1 --from-report "$REPORT"; rc=$?
N=/api/v4/projects/group%2Fkernels/merge_requests/7/notes
[ "$rc" -eq 0 ] && [ "$(reqs)" = "GET /api/v4/user;GET $N;POST $N;" ] && ok || { bad "gitlab create: exit $rc, $(reqs)"; cat "$T/gl1.err"; }
[ "$(jq -r .auth "$LOG" | sort -u)" = "private-token:match" ] && ok || bad "gitlab: auth header"
body | grep -qF '[HTML report](https://gitlab.example/group/kernels/-/pipelines/5)' && ok || bad "gitlab: default link"
ID=$(jq '[.[] | .[] | select(.body | test("kgate-comment"))][0].id' "$STATE")
grep -q "created note $ID on" "$T/gl1.out" && ok || bad "gitlab create: not the forge's id $ID: $(cat "$T/gl1.out")"
: >"$LOG"
gl_kg gl2 --from-report "$T/fixed.json"; rc=$?
[ "$rc" -eq 0 ] && [ "$(reqs)" = "GET /api/v4/user;GET $N;PUT $N/$ID;" ] && ok || { bad "gitlab update: exit $rc, $(reqs)"; cat "$T/gl2.err"; }
[ "$(ncomments)" = 1 ] && ok || bad "gitlab update: $(ncomments) kgate notes"
grep -q "updated note $ID" "$T/gl2.out" && ok || bad "gitlab update: output $(cat "$T/gl2.out")"

# 2b. Ownership (issue #28): comments by another user that carry the marker (first line, or
# quoted) are never edited; nor is ours with an id out of range (1e30); kgate creates its own
# and updates that one. A GitHub App token that may not read /user comments as the app's bot.
start_server own --foreign
gh_kg own1 "$TOKEN" --from-report "$REPORT"; rc=$?
[ "$rc" -eq 0 ] && [ "$(reqs)" = "GET /user;GET $P;POST $P;" ] && ok || { bad "ownership: exit $rc, $(reqs)"; cat "$T/own1.err"; }
jq -e '[.[][] | select(.user.login == "mallory")] | length == 2 and (map(.body) | all(test("all gates passed|looks fine")))' "$STATE" >/dev/null \
    && ok || bad "ownership: another user's comment was edited"
jq -e '[.[][] | select(.id > 1e20)][0].body | test("out of range")' "$STATE" >/dev/null && ok || bad "ownership: the 1e30 comment was edited"
grep -q "comments/-" "$LOG" && bad "ownership: a negative id was sent" || ok
OWN=$(jq '[.[][] | select(.user.login == "kgate-bot" and .id < 1e20)][0].id' "$STATE")
: >"$LOG"
gh_kg own2 "$TOKEN" --from-report "$T/fixed.json"; rc=$?
[ "$rc" -eq 0 ] && [ "$(reqs)" = "GET /user;GET $P;PATCH /repos/example/kernels/issues/comments/$OWN;" ] && ok \
    || { bad "ownership update: exit $rc, $(reqs)"; cat "$T/own2.err"; }
start_server app --foreign --user-403 --login 'github-actions[bot]'
gh_kg app1 "$TOKEN" --from-report "$REPORT" && gh_kg app2 "$TOKEN" --from-report "$T/fixed.json"; rc=$?
[ "$rc" -eq 0 ] && [ "$(jq -r '.method' "$LOG" | grep -c PATCH)" = 1 ] && \
    jq -e '[.[][] | select(.user.login == "mallory")] | map(.body) | all(test("all gates passed|looks fine"))' "$STATE" >/dev/null \
    && ok || { bad "app token: exit $rc, $(reqs)"; cat "$T/app1.err" "$T/app2.err"; }
# A token with CR LF would inject a header: refused before anything is sent.
: >"$LOG"
gh_kg crlf "$TOKEN"$'\r\nX-Injected: 1' --from-report "$REPORT"; rc=$?
[ "$rc" -eq 2 ] && grep -q "control character" "$T/crlf.err" && [ ! -s "$LOG" ] && ok || bad "CR LF token: exit $rc $(cat "$T/crlf.err")"

# 3. All passed; no GPU; no PR number; --dry-run.
gh_kg pass "$TOKEN" --from-report "$H200" --dry-run; rc=$?
[ "$rc" -eq 0 ] && grep -qx "## kgate: all gates passed" "$T/pass.out" && ok || bad "all passed: exit $rc $(sed -n 2p "$T/pass.out")"
grep -q "dry run" "$T/pass.out" && grep -qx "<!-- kgate-comment -->" "$T/pass.out" && ok || bad "dry run: body not printed"
"$KG" parity --seed 3 --report "$T/parity.json" >/dev/null 2>&1
gh_kg nogpu "$TOKEN" --from-report "$T/parity.json" --dry-run; rc=$?
[ "$rc" -eq 0 ] && grep -qx "## kgate: incomplete: no GPU" "$T/nogpu.out" && ok || bad "no GPU: exit $rc $(sed -n 2p "$T/nogpu.out")"
: >"$LOG"
env -i "${BASE_ENV[@]}" GITHUB_ACTIONS=true GITHUB_API_URL="http://127.0.0.1:$PORT" \
    GITHUB_REPOSITORY=example/kernels GITHUB_REF=refs/heads/main GITHUB_TOKEN="$TOKEN" \
    "$KG" comment --from-report "$REPORT" >"$T/nopr.out" 2>"$T/nopr.err"; rc=$?
[ "$rc" -eq 2 ] && grep -q "no pull request number" "$T/nopr.err" && grep -q KGATE_PR_NUMBER "$T/nopr.err" \
    && ok || bad "no PR: exit $rc $(cat "$T/nopr.err")"
[ ! -s "$LOG" ] && ok || bad "no PR / dry run: requests were sent: $(reqs)"
"$KG" comment >/dev/null 2>&1; rc=$?
[ "$rc" -eq 2 ] && ok || bad "no --from-report: exit $rc"
"$KG" comment --from-report "$T/missing.json" >/dev/null 2>&1; rc=$?
[ "$rc" -eq 2 ] && ok || bad "missing report: exit $rc"
"$KG" comment --help | grep -q "kgate-comment" && ok || bad "--help"

# @mentions and bidi controls from a case's message never reach the comment as they are.
jq --arg m "$(printf 'ping @octocat and @org/team \u202egnp.exe\u2066x\u2069')" \
    '.results |= map(if .verdict == "FAIL" then .message = $m else . end)' "$REPORT" >"$T/mention.json"
gh_kg mention "$TOKEN" --from-report "$T/mention.json" --dry-run; rc=$?
[ "$rc" -eq 0 ] && grep -q "@$(printf '\u200b')octocat" "$T/mention.out" && ! grep -q '@octocat\|@org/team' "$T/mention.out" && ok \
    || bad "mentions: exit $rc $(grep -a octocat "$T/mention.out")"
grep -q "$(printf '\u202e')\|$(printf '\u2066')\|$(printf '\u2069')" "$T/mention.out" && bad "bidi controls reached the body" || ok

# 4. The A/B (issue #27 item 1) and every case's change (issue #30 item 5): an ab report beside
# the run's makes the marks informational, adds the A/B table and the collapsed table of every
# case's change, slowest first, with the GPU; each report linked to its own outputs.
jq '{schema, command: "ab", mode: "diagnostic", device, seed, results: [
  {gate: "ab", case: "reduce_sum/n=67108869/f32", verdict: "FAIL", message: "B_SLOWER",
   figures: {decision: "B_SLOWER", ratio_median: 1.0197, ratio_ci_lo: 1.013, ratio_ci_hi: 1.02, rounds: 10}},
  {gate: "ab", case: "gemm/m=8192/f16", verdict: "PASS", message: "B_FASTER",
   figures: {decision: "B_FASTER", ratio_median: 0.95, ratio_ci_lo: 0.94, ratio_ci_hi: 0.96, rounds: 10}}]}' \
    "$REPORT" >"$T/ab.json"
gh_kg ab "$TOKEN" --from-report "$REPORT" --report-url https://ci.example/artifacts/1 \
    --from-report "$T/ab.json" --report-url https://ci.example/artifacts/1 \
    --from-report "$H200" --report-url https://ci.example/artifacts/2 --dry-run; rc=$?
A=$T/ab.out
[ "$rc" -eq 0 ] && ok || { bad "ab: exit $rc"; cat "$T/ab.err"; }
grep -qx "## kgate: 1 slower than the base (A/B), 1 failure, 1 error (1 above the marks, informational)" "$A" && ok \
    || bad "ab: headline $(sed -n 2p "$A")"
grep -qF '| `reduce_sum/n=67108869/f32` | NVIDIA H200/sm\_90, GPU 0 (GPU-babe2e95) | 1.0197 | 1.0130..1.0200 | B\_SLOWER (fails) |' "$A" \
    || grep -qF '| `reduce_sum/n=67108869/f32` | NVIDIA H200/sm_90, GPU 0 (GPU-babe2e95) | 1.0197 | 1.0130..1.0200 | B_SLOWER (fails) |' "$A" \
    && ok || bad "ab: A/B row $(grep -a 'reduce_sum' "$A" | head -2)"
grep -q '^### Above the marks (informational' "$A" && ! grep -q '^### Regressions' "$A" && ok || bad "ab: marks not informational"
grep -q 'B_SLOWER' <(sed -n '/^### Failures/,/^###/p' "$A") && bad "ab: B_SLOWER listed as a failure" || ok
grep -q '^<details><summary>Every case.s change ([0-9]* rows, slowest first)</summary>' "$A" && grep -qx '</details>' "$A" \
    && ok || bad "ab: no collapsed table of every change"
CH=$(sed -n '/^<details>/,/^<\/details>/p' "$A" | awk -F' \\| ' 'NR > 4 && $3 != "-" && $3 != "" { print $3 }' | tr -d '+')
[ -n "$CH" ] && [ "$CH" = "$(printf '%s\n' "$CH" | sort -g -r)" ] && ok || bad "ab: changes not slowest first: $(echo $CH)"
[ "$(printf '%s\n' "$CH" | head -1)" = "3.20" ] && ok || bad "ab: first change $(printf '%s\n' "$CH" | head -1)"
grep -qF '| +1.97 | base (A/B) | B' "$A" && grep -qF '| +3.20 | mark | REGRESSED |' "$A" && ok || bad "ab: change rows against mark and base"
grep -qF '](https://ci.example/artifacts/1) · [' "$A" && grep -qF '](https://ci.example/artifacts/2)' "$A" \
    && [ "$(grep -c 'artifacts/1)' "$A")" = 1 ] && ok || bad "ab: per-report links $(grep -a 'HTML report' "$A")"
grep -q 'actions/runs/99' "$A" && bad "ab: the run page linked though every report has its own link" || ok
gh_kg abnolinks "$TOKEN" --report-url https://ci.example/a --from-report "$REPORT" --from-report "$H200" \
    --report-url https://ci.example/b --dry-run; rc=$?
[ "$rc" -eq 2 ] && grep -q "one after each --from-report" "$T/abnolinks.err" && ok || bad "ab: unpaired links: exit $rc"

# The token appears in no output, log or state file.
grep -rlF "$TOKEN" "$T" && bad "the token leaked into the files above" || ok

finish
