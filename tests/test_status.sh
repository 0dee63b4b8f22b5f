#!/usr/bin/env bash
# `kgate status` against a real HTTP server on 127.0.0.1 (tests/status_server.py), per scenario:
# retry on 500/429 (Retry-After honored), 401 (clear message, exit 4, no retry), a hang (the
# timeout fires), GitHub and GitLab request shapes, every status finished (never pending:
# diagnostic reports post the production states, stamped DIAGNOSTIC), a run without a GPU
# "incomplete: no GPU" (error), and the token appearing in no output, log or file. Loopback only; every step bounded in time.
# Reports: the recorded H200 run (tests/data/h200-run-report.json, diagnostic), its certifying
# variant with a parity FAIL, a hotpath ERROR and a bench regression (tests/data/h200_variants.py),
# its xfail, xpass and incomplete variants (expected failures, a fault, an interrupted run;
# validated against the report schema), and a report the CLI writes here without a GPU.
KG=$1
. "$(dirname "$0")/lib.sh"
H200=$SRC/tests/data/h200-run-report.json
SERVER=$SRC/tests/status_server.py
PY=$(command -v /usr/bin/python3 || command -v python3)
REPORT=$T/h200-decided.json
"$PY" "$SRC/tests/data/h200_variants.py" "$H200" "$REPORT" || { echo "FAIL: h200_variants.py"; exit 1; }
SRV_PID=
on_exit '[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null'
TOKEN="kgtest_$(od -An -tx1 -N12 /dev/urandom | tr -d ' \n')"
SHA=0123456789abcdef0123456789abcdef01234567
BASE_ENV=(PATH="$PATH" LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}")

start_server() { # start_server NAME SCRIPT
    local name=$1
    [ -n "$SRV_PID" ] && { kill "$SRV_PID" 2>/dev/null; wait "$SRV_PID" 2>/dev/null; }
    rm -f "$T/port"
    LOG=$T/$name.log
    : >"$LOG"
    KG_TEST_TOKEN=$TOKEN "$PY" "$SERVER" --port-file "$T/port" --log "$LOG" --script "$2" \
        --hang-s 8 --max-life 40 &
    SRV_PID=$!
    for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.05; done
    PORT=$(cat "$T/port" 2>/dev/null) || { bad "server did not start"; return 1; }
}

# A clean environment: the CI's own variables (and any proxy) must not leak into the test.
gh_kg() { # gh_kg NAME args...
    local name=$1; shift
    env -i "${BASE_ENV[@]}" GITHUB_ACTIONS=true GITHUB_API_URL="http://127.0.0.1:$PORT" \
        GITHUB_REPOSITORY=example/kernels GITHUB_SHA=$SHA GITHUB_TOKEN="$TOKEN" \
        GITHUB_SERVER_URL=https://github.example GITHUB_RUN_ID=99 \
        "$KG" status "$@" >"$T/$name.out" 2>"$T/$name.err"
}
nreq() { wc -l <"$LOG" | tr -d ' '; }
jqlog() { jq -r "$1" "$LOG"; }

# 1. 500 then 429 (Retry-After: 1) then 201: retried with backoff, then every gate posted.
start_server retry "500,429:1"
s=$(date +%s)
gh_kg retry --from-report "$REPORT" --timeout 5 --verbose; rc=$?
[ "$rc" -eq 0 ] && ok || { bad "retry: exit $rc"; cat "$T/retry.out" "$T/retry.err"; }
[ "$(nreq)" -eq 7 ] && ok || bad "retry: $(nreq) requests, want 7 (3 for selftest + 4 gates)"
[ "$(jqlog .auth | sort -u)" = "authorization:match" ] && ok || bad "retry: auth header missing or wrong: $(jqlog .auth | sort -u)"
[ "$(jqlog .path | sort -u)" = "/repos/example/kernels/statuses/$SHA" ] && ok || bad "retry: path $(jqlog .path | sort -u)"
[ "$(jqlog .body.context | uniq | tr '\n' ' ')" = "kgate/selftest kgate/parity kgate/preflight kgate/hotpath kgate/bench " ] \
    && ok || bad "retry: contexts $(jqlog .body.context | tr '\n' ' ')"
[ "$(jqlog '.body.state' | tail -5 | tr '\n' ' ')" = "success failure success error failure " ] \
    && ok || bad "retry: states $(jqlog .body.state | tr '\n' ' ')"
gap=$(jq -rs '.[2].t - .[1].t' "$LOG")
# backoff alone would wait 2 s here: Retry-After: 1 must win
awk -v g="$gap" 'BEGIN { exit !(g >= 0.9 && g < 1.8) }' && ok || bad "retry: Retry-After 1 not honored (gap $gap s)"
grep -qF "kgate/hotpath: error (ERROR: 1 of 31 cases errored (first: rmsnorm/rows=4096,cols=4096/bf16))" "$T/retry.out" \
    && ok || bad "retry: hotpath description"
grep -qF "kgate/bench: failure (FAIL: 1 of 31 cases failed (first: reduce_sum/n=67108869/f32))" "$T/retry.out" \
    && ok || bad "retry: bench description"
grep -qF "kgate/selftest: success (PASS: 26 of 26 cases passed)" "$T/retry.out" && ok || bad "retry: selftest description"
[ "$(jqlog '.headers["Accept"]' | sort -u)" = "application/vnd.github+json" ] && ok || bad "retry: Accept header"
jqlog .body.target_url | grep -qx "https://github.example/example/kernels/actions/runs/99" && ok || bad "retry: target_url"
grep -q "kgate/bench: failure" "$T/retry.out" && ok || bad "retry: output lacks the bench line"
[ $(( $(date +%s) - s )) -lt 20 ] && ok || bad "retry: took too long"

# 2. 401: a clear message, exit 4, no retry; the server echoes the token and we must redact it.
start_server unauth "401"
gh_kg unauth --from-report "$REPORT" --verbose; rc=$?
[ "$rc" -eq 4 ] && ok || bad "401: exit $rc, want 4"
grep -q "HTTP 401, unauthorized" "$T/unauth.err" && grep -q "GITHUB_TOKEN" "$T/unauth.err" \
    && ok || { bad "401: unclear message"; cat "$T/unauth.err"; }
[ "$(nreq)" -eq 1 ] && ok || bad "401: retried ($(nreq) requests)"

# 3. A hang: the total timeout (1 s here) fires; with no retry it fails within a few seconds...
start_server hang "hang"
s=$(date +%s)
gh_kg hang --from-report "$REPORT" --timeout 1 --retries 0; rc=$?
[ "$rc" -eq 4 ] && ok || bad "hang: exit $rc, want 4"
grep -q "timed out" "$T/hang.err" && ok || { bad "hang: no timeout message"; cat "$T/hang.err"; }
[ $(( $(date +%s) - s )) -le 5 ] && ok || bad "hang: the timeout did not bound the request"
# ...and with a retry the next attempt goes through.
start_server hang2 "hang"
gh_kg hang2 --from-report "$REPORT" --timeout 1 --retries 1; rc=$?
[ "$rc" -eq 0 ] && [ "$(nreq)" -eq 6 ] && ok || bad "hang+retry: exit $rc, $(nreq) requests"

# 4. A diagnostic report's statuses finish, never pending: passing gates are success, stamped
# DIAGNOSTIC in the description (the recorded H200 run passed everything)...
start_server diag ""
gh_kg diag --from-report "$H200"; rc=$?
[ "$rc" -eq 0 ] && ok || bad "diagnostic: exit $rc"
jqlog .body.state | grep -qx pending && bad "diagnostic: posted pending" || ok
[ "$(jqlog 'select(.body.context == "kgate/preflight") | .body.description')" = "DIAGNOSTIC (non-certifying): PASS: 31 of 31 cases passed" ] \
    && ok || bad "diagnostic: preflight $(jqlog 'select(.body.context == "kgate/preflight") | .body.description')"
[ "$(jqlog .body.state | sort -u)" = "success" ] && ok || bad "diagnostic: states $(jqlog .body.state | tr '\n' ' ')"
[ "$(jqlog .body.description | grep -c '^DIAGNOSTIC (non-certifying)')" -eq 5 ] && ok || bad "diagnostic: descriptions not stamped"
grep -q "DIAGNOSTIC (non-certifying)" "$T/diag.out" && ok || bad "diagnostic: no notice on the console"
# ...while failures and errors post as in production.
jq --arg n "$(jq -r .notice "$H200")" '.mode = "diagnostic" | .certifying = false | .notice = $n' "$REPORT" >"$T/diagf.json"
start_server diagf ""
gh_kg diagf --from-report "$T/diagf.json"; rc=$?
[ "$rc" -eq 0 ] && [ "$(jqlog .body.state | tr '\n' ' ')" = "success failure success error failure " ] \
    && ok || bad "diagnostic with failures: exit $rc, states $(jqlog .body.state | tr '\n' ' ')"
# A report the CLI wrote without a GPU: every case SKIP, a finished error (GitHub's state for
# a check that could not be made), "incomplete: no GPU", "not run".
"$KG" parity --seed 3 --report "$T/parity.json" >/dev/null 2>&1
gh_kg cpu --from-report "$T/parity.json" --dry-run; rc=$?
[ "$rc" -eq 0 ] && grep -qF '"state":"error","context":"kgate/parity","description":"DIAGNOSTIC (non-certifying): incomplete: no GPU: SKIP: 31 of 31 cases not run (first: axpy/n=1/f32)"' \
    "$T/cpu.out" && ok || { bad "CPU parity report: exit $rc"; cat "$T/cpu.out"; }
grep -qF "the run had no GPU: gates with skipped cases are posted as 'error' (incomplete: no GPU)" "$T/cpu.out" \
    && ok || bad "CPU parity report: no notice on the console"
# The recorded H200 run as it would be without a GPU (no_device and the SKIP rows of the CPU
# parity report, schema-valid): the gates that ran (selftest, static preflight) success, the GPU
# gates error "incomplete: no GPU"; GitLab failed.
jq --slurpfile p "$T/parity.json" '
    .device = null | .no_device = $p[0].no_device
    | .results |= map(if .gate == "parity" or .gate == "hotpath" or .gate == "bench"
                      then {gate, case, verdict: "SKIP", message: $p[0].results[0].message, figures: {}}
                      else . end)
    | .summary = (reduce .results[].verdict as $v ({PASS: 0, WARN: 0, FAIL: 0, SKIP: 0, ERROR: 0}; .[$v] += 1))' \
    "$H200" >"$T/nogpu.json"
"$PY" - "$SRC/baselines/report.schema.json" "$T/nogpu.json" <<'PY' && ok || bad "nogpu is not a valid kgate-report/1"
import json, sys
from jsonschema import Draft202012Validator
Draft202012Validator(json.load(open(sys.argv[1]))).validate(json.load(open(sys.argv[2])))
PY
start_server nogpu ""
gh_kg nogpu --from-report "$T/nogpu.json"; rc=$?
[ "$rc" -eq 0 ] && [ "$(jqlog .body.state | tr '\n' ' ')" = "success error success error error " ] \
    && ok || bad "no GPU: exit $rc, states $(jqlog .body.state | tr '\n' ' ')"
[ "$(jqlog 'select(.body.context == "kgate/hotpath") | .body.description')" = \
  "DIAGNOSTIC (non-certifying): incomplete: no GPU: SKIP: 31 of 31 cases not run (first: $(jq -r '[.results[] | select(.gate == "hotpath")][0].case' "$H200"))" ] \
    && ok || bad "no GPU: hotpath description $(jqlog 'select(.body.context == "kgate/hotpath") | .body.description')"
[ "$(jqlog 'select(.body.context == "kgate/selftest") | .body.description')" = "DIAGNOSTIC (non-certifying): PASS: 26 of 26 cases passed" ] \
    && ok || bad "no GPU: selftest description $(jqlog 'select(.body.context == "kgate/selftest") | .body.description')"
env -i "${BASE_ENV[@]}" GITLAB_CI=true CI_API_V4_URL="http://127.0.0.1:$PORT/api/v4" \
    CI_PROJECT_ID=group/kernels CI_COMMIT_SHA=$SHA KGATE_STATUS_TOKEN="$TOKEN" \
    "$KG" status --from-report "$T/nogpu.json" --dry-run >"$T/glnogpu.out" 2>&1; rc=$?
[ "$rc" -eq 0 ] && grep -c '"state":"failed"' "$T/glnogpu.out" | grep -qx 3 && grep -c '"state":"success"' "$T/glnogpu.out" | grep -qx 2 \
    && ok || { bad "gitlab no GPU: exit $rc"; cat "$T/glnogpu.out"; }

# 5. GitLab: project path URL-encoded, PRIVATE-TOKEN header, GitLab state names.
start_server gitlab ""
env -i "${BASE_ENV[@]}" GITLAB_CI=true CI_API_V4_URL="http://127.0.0.1:$PORT/api/v4" \
    CI_PROJECT_ID=group/kernels CI_COMMIT_SHA=$SHA KGATE_STATUS_TOKEN="$TOKEN" \
    CI_JOB_URL=https://gitlab.example/job/7 "$KG" status --from-report "$REPORT" \
    >"$T/gitlab.out" 2>"$T/gitlab.err"; rc=$?
[ "$rc" -eq 0 ] && ok || { bad "gitlab: exit $rc"; cat "$T/gitlab.err"; }
[ "$(jqlog .path | sort -u)" = "/api/v4/projects/group%2Fkernels/statuses/$SHA" ] && ok || bad "gitlab: path $(jqlog .path | sort -u)"
[ "$(jqlog .auth | sort -u)" = "private-token:match" ] && ok || bad "gitlab: auth $(jqlog .auth | sort -u)"
[ "$(jqlog .body.name | tr '\n' ' ')" = "kgate/selftest kgate/parity kgate/preflight kgate/hotpath kgate/bench " ] && ok || bad "gitlab: names"
[ "$(jqlog .body.state | tr '\n' ' ')" = "success failed success failed failed " ] && ok || bad "gitlab: states $(jqlog .body.state | tr '\n' ' ')"

# 5b. issue #28: a 200 whose body is broken (not JSON, no body, another shape, another state)
# did not set the status: exit 4 naming the gate, the first gate only (nothing claimed posted).
for b in junk empty emptyobj array otherstate; do
    start_server "broken-$b" "$b"
    gh_kg "broken-$b" --from-report "$REPORT" --retries 0; rc=$?
    case $b in junk) want="with a body that is not JSON" ;; empty) want="with no body" ;;
               *) want='without the status it posted \(expected a JSON object whose "state" is "success"\)' ;; esac
    [ "$rc" -eq 4 ] && grep -qE "status kgate/selftest: POST .* answered HTTP 200 $want" "$T/broken-$b.err" \
        && ok || { bad "broken body $b: exit $rc, want 4 naming it"; cat "$T/broken-$b.out" "$T/broken-$b.err"; }
    grep -q -- '-> HTTP' "$T/broken-$b.out" && bad "broken body $b: a status claimed posted" || ok
    [ "$(nreq)" -eq 1 ] && ok || bad "broken body $b: $(nreq) requests, want 1 (stops at the first)"
done
start_server broken-gitlab "emptyobj"
env -i "${BASE_ENV[@]}" GITLAB_CI=true CI_API_V4_URL="http://127.0.0.1:$PORT/api/v4" \
    CI_PROJECT_ID=group/kernels CI_COMMIT_SHA=$SHA KGATE_STATUS_TOKEN="$TOKEN" \
    "$KG" status --from-report "$REPORT" >"$T/broken-gitlab.out" 2>"$T/broken-gitlab.err"; rc=$?
[ "$rc" -eq 4 ] && grep -q 'whose "status" is "success"' "$T/broken-gitlab.err" && ok \
    || { bad "gitlab broken body: exit $rc"; cat "$T/broken-gitlab.err"; }

# 6. Input errors exit 2 and send nothing; a dry run sends nothing and shows no token.
start_server inputs ""
env -i "${BASE_ENV[@]}" GITHUB_ACTIONS=true GITHUB_API_URL="http://127.0.0.1:$PORT" \
    GITHUB_REPOSITORY=example/kernels GITHUB_SHA=$SHA "$KG" status --from-report "$REPORT" \
    >"$T/notoken.out" 2>"$T/notoken.err"; rc=$?
[ "$rc" -eq 2 ] && grep -q "no token" "$T/notoken.err" && ok || bad "no token: exit $rc"
env -i "${BASE_ENV[@]}" GITHUB_ACTIONS=true GITHUB_REPOSITORY=example/kernels GITHUB_SHA=nothex \
    GITHUB_TOKEN="$TOKEN" "$KG" status --from-report "$REPORT" >"$T/badsha.out" 2>"$T/badsha.err"; rc=$?
[ "$rc" -eq 2 ] && grep -q "GITHUB_SHA" "$T/badsha.err" && ok || bad "bad sha: exit $rc"
env -i "${BASE_ENV[@]}" "$KG" status --from-report "$REPORT" >"$T/noci.out" 2>"$T/noci.err"; rc=$?
[ "$rc" -eq 2 ] && grep -q "no CI detected" "$T/noci.err" && ok || bad "no CI: exit $rc"
gh_kg badflag --from-report "$REPORT" --timeout 0; rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--timeout" "$T/badflag.err" && ok || bad "bad --timeout: exit $rc"
echo '{"schema": "kgate-report/1", "results": [{"gate": "x"}]}' >"$T/broken.json"
gh_kg broken --from-report "$T/broken.json"; rc=$?
[ "$rc" -eq 2 ] && grep -q "results\[0\].case" "$T/broken.err" && ok || bad "broken report: exit $rc"
gh_kg dry --from-report "$REPORT" --dry-run; rc=$?
[ "$rc" -eq 0 ] && [ "$(grep -c '^dry run: POST' "$T/dry.out")" -eq 5 ] && ok || bad "dry run: exit $rc"
gh_kg drysfx --from-report "$REPORT" --dry-run --context-suffix "h200/gpu1"; rc=$?
[ "$rc" -eq 0 ] && grep -q '"context":"kgate/bench (h200/gpu1)"' "$T/drysfx.out" && ok || bad "context suffix: exit $rc"
# A newline in the suffix would print a workflow command of its own (issue #28): refused.
gh_kg sfxnl --from-report "$REPORT" --dry-run --context-suffix $'gpu1\n::error::forged'; rc=$?
[ "$rc" -eq 2 ] && grep -q "control character" "$T/sfxnl.err" && ! grep -q '^::error::forged' "$T/sfxnl.out" && ok \
    || bad "--context-suffix with a newline: exit $rc $(cat "$T/sfxnl.out" "$T/sfxnl.err")"
# A token with CR LF would inject a header: refused.
gh_kg_tok() { env -i PATH="$PATH" GITHUB_ACTIONS=true GITHUB_API_URL=http://127.0.0.1:9 GITHUB_REPOSITORY=example/kernels GITHUB_SHA=0123456789abcdef0123456789abcdef01234567 GITHUB_TOKEN="$1" "$KG" status --from-report "$REPORT" >"$T/tokcrlf.out" 2>"$T/tokcrlf.err"; }
gh_kg_tok $'tok\r\nX-Injected: 1'; rc=$?
[ "$rc" -eq 2 ] && grep -q "control character" "$T/tokcrlf.err" && ok || bad "CR LF token: exit $rc $(cat "$T/tokcrlf.err")"
[ "$(nreq)" -eq 0 ] && ok || bad "input errors or dry run sent $(nreq) requests"

# 6b. Expected failures and interrupted runs. XFAIL passes (success, the count in the
# description), XPASS fails (failure); an incomplete report is headlined "incomplete
# (interrupted)" and posts no success.
for v in xfail xpass incomplete; do
    "$PY" "$SRC/tests/data/h200_variants.py" "$H200" "$T/h200-$v.json" "$v" || bad "h200_variants.py $v"
done
# A gate with both a FAIL and an XPASS: the xpass variant with the XFAIL failing undeclared.
jq '(.results[] | select(.verdict == "XFAIL")) |= (.verdict = "FAIL" | .message |= sub("^expected failure \\([^)]*\\): "; ""))
    | .summary.FAIL += 1 | del(.summary.XFAIL)' "$T/h200-xpass.json" >"$T/h200-failxpass.json"
# The interrupted run as a diagnostic one.
jq --arg n "$(jq -r .notice "$H200")" '.mode = "diagnostic" | .certifying = false | .notice = $n' "$T/h200-incomplete.json" >"$T/incdiag.json"
"$PY" - "$SRC/baselines/report.schema.json" "$T"/h200-xfail.json "$T"/h200-xpass.json \
    "$T"/h200-incomplete.json "$T"/h200-failxpass.json "$T/incdiag.json" <<'PY' && ok || bad "a variant is not a valid kgate-report/1"
import json, sys
from jsonschema import Draft202012Validator
v = Draft202012Validator(json.load(open(sys.argv[1])))
for f in sys.argv[2:]:
    v.validate(json.load(open(f)))
PY
states() { grep -o '"state":"[a-z]*"' "$1" | cut -d'"' -f4 | tr '\n' ' '; }
gh_kg xf --from-report "$T/h200-xfail.json" --dry-run; rc=$?
[ "$rc" -eq 0 ] && [ "$(states "$T/xf.out")" = "success success success error failure " ] \
    && ok || bad "xfail: exit $rc, states $(states "$T/xf.out")"
grep -qF '"state":"success","context":"kgate/parity","description":"PASS: 30 of 31 cases passed (1 expected failure)"' "$T/xf.out" \
    && ok || { bad "xfail: parity description"; grep parity "$T/xf.out"; }
grep -qF '"context":"kgate/preflight","description":"PASS: 31 of 31 cases passed"' "$T/xf.out" \
    && ok || bad "xfail: a gate without expected failures mentions them"
start_server xpass ""
gh_kg xpass --from-report "$T/h200-xpass.json"; rc=$?
[ "$rc" -eq 0 ] && [ "$(jqlog .body.state | tr '\n' ' ')" = "success failure success error failure " ] \
    && ok || bad "xpass: exit $rc, states $(jqlog .body.state | tr '\n' ' ')"
[ "$(jqlog 'select(.body.context == "kgate/parity") | .body.description')" = \
  "XPASS: 1 of 31 cases passed unexpectedly (remove xfail_gate) (first: axpy/n=4097/f32)" ] \
    && ok || bad "xpass: parity description $(jqlog 'select(.body.context == "kgate/parity") | .body.description')"
grep -qF "kgate/hotpath: error (ERROR: 1 of 31 cases errored (first: rmsnorm/rows=4096,cols=4096/bf16))" "$T/xpass.out" \
    && ok || bad "xpass: the fault is not an error"
gh_kg failxpass --from-report "$T/h200-failxpass.json" --dry-run; rc=$?
[ "$rc" -eq 0 ] && grep -qF '"state":"failure","context":"kgate/parity","description":"FAIL: 1 of 31 cases failed (first: softmax/rows=4096,cols=1000/f32); XPASS: 1 (first: axpy/n=4097/f32)"' \
    "$T/failxpass.out" && ok || { bad "FAIL and XPASS: exit $rc"; grep parity "$T/failxpass.out"; }
env -i "${BASE_ENV[@]}" GITLAB_CI=true CI_API_V4_URL="http://127.0.0.1:$PORT/api/v4" \
    CI_PROJECT_ID=group/kernels CI_COMMIT_SHA=$SHA KGATE_STATUS_TOKEN="$TOKEN" \
    "$KG" status --from-report "$T/h200-xpass.json" --dry-run >"$T/glxp.out" 2>&1; rc=$?
[ "$rc" -eq 0 ] && [ "$(states "$T/glxp.out")" = "success failed success failed failed " ] \
    && ok || bad "gitlab xpass: exit $rc, states $(states "$T/glxp.out")"
start_server incomplete ""
gh_kg incomplete --from-report "$T/h200-incomplete.json"; rc=$?
[ "$rc" -eq 0 ] && [ "$(jqlog .body.state | tr '\n' ' ')" = "error error error error failure " ] \
    && ok || bad "incomplete: exit $rc, states $(jqlog .body.state | tr '\n' ' ')"
[ "$(jqlog .body.description | grep -c '^incomplete (interrupted): ')" -eq 5 ] && ok || bad "incomplete: descriptions not headlined"
[ "$(jqlog 'select(.body.context == "kgate/selftest") | .body.description')" = "incomplete (interrupted): PASS: 26 of 26 cases passed" ] \
    && ok || bad "incomplete: selftest description"
[ "$(jqlog 'select(.body.context == "kgate/bench") | .body.description')" = \
  "incomplete (interrupted): FAIL: 1 of 31 cases failed (first: reduce_sum/n=67108869/f32)" ] && ok || bad "incomplete: bench description"
grep -qF "the report is INCOMPLETE (the run was interrupted)" "$T/incomplete.out" && ok || bad "incomplete: no notice on the console"
gh_kg incdiag --from-report "$T/incdiag.json" --dry-run; rc=$?
[ "$rc" -eq 0 ] && [ "$(states "$T/incdiag.out")" = "error error error error failure " ] \
    && grep -qF '"description":"DIAGNOSTIC (non-certifying): incomplete (interrupted): PASS: 26 of 26 cases passed"' "$T/incdiag.out" \
    && ok || bad "incomplete diagnostic: exit $rc, states $(states "$T/incdiag.out")"
grep -q 'incomplete' "$T/retry.out" "$T/gitlab.out" && bad "a complete report is headlined incomplete" || ok

# Every status posted or printed finished: none is pending.
if grep -lE '"state": ?"pending"' "$T"/*.log "$T"/*.out 2>/dev/null | grep -q .; then
    bad "a status was left pending: $(grep -lE '"state": ?"pending"' "$T"/*.log "$T"/*.out | tr '\n' ' ')"
else ok; fi

# 7. The token is nowhere: outputs, errors, server logs, generated files.
if grep -rqF "$TOKEN" "$T"; then bad "the token leaked into: $(grep -rlF "$TOKEN" "$T" | tr '\n' ' ')"; else ok; fi

finish
