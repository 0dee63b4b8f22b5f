#!/usr/bin/env bash
# Pushing marks over smart HTTP with token auth (tests/git_http_server.py: git http-backend on
# loopback; fetching takes the read or the write token, pushing the write token only):
#   1. KGATE_GIT_TOKEN takes precedence over credentials embedded in the remote URL (a GitLab
#      runner's origin: gitlab-ci-token:<job token>@, which can fetch but gets 403 on push);
#   2. an advance whose push failed is pushed by the next `marks advance`, even when that run
#      moves no mark; a server that is down fails before anything is committed;
#   3. the token is in no output and in no server log line.
# Usage: test_push_http.sh KGATE KG_REPORT_SIGN PYTHON3
. "$(dirname "$0")/lib.sh"
KG=$(realpath "$1")
SIGN=$(realpath "$2")
PY=${3:-python3}
git_isolate
# These checks cover commits on the checked-out branch (--marks-branch HEAD); the marks
# branch (kgate-marks, the default) is test_marks_branch.sh's.
export KGATE_MARKS_BRANCH=HEAD
unset KGATE_GIT_AUTHOR_NAME KGATE_GIT_AUTHOR_EMAIL KGATE_GIT_TOKEN KGATE_GIT_USER GITLAB_CI
export KGATE_REPORT_KEY=test-report-key-$RANDOM-$RANDOM-0123456789
DEV="NVIDIA H200/sm_90"
M=baselines/high_water.json
JOB=job-token-$RANDOM$RANDOM        # read-only, embedded in the origin URL
TOK=write-token-$RANDOM$RANDOM      # the push token

# report FILE RUN_ID BENCH... (BENCH = case:decision:median:ci_lo:ci_hi:band), signed.
report() {
    local f=$1 rid=$2; shift 2
    {
        printf '{"schema":"kgate-report/1","command":"run","mode":"production","certifying":true,'
        printf '"run_id":"%s","started_at":"2026-12-01T00:00:00Z","seed":7,' "$rid"
        printf '"device":{"class":"%s","driver_cuda_version":"13.0","runtime_version":"13.0"},' "$DEV"
        printf '"provenance":{"commit":"%s"},"gates":["parity","preflight","hotpath","bench","counters"],"results":[' "$SEED"
        printf '{"gate":"selftest","case":"defect/parity/x","verdict":"PASS","message":"","figures":{}}'
        for b in "$@"; do
            IFS=: read -r c d med lo hi band <<<"$b"
            printf ',{"gate":"counters","case":"%s","verdict":"PASS","message":"","figures":{"decision":"OK","why":"","device_class":"x","kernels":1,"passes":1,"metrics":{}}}' "$c"
            for g in parity preflight hotpath; do
                printf ',{"gate":"%s","case":"%s","verdict":"PASS","message":"","figures":{}}' "$g" "$c"
            done
            printf ',{"gate":"bench","case":"%s","verdict":"PASS","message":"","figures":{"decision":"%s","metric":"time_us_warm","median_us":%s,"ci_lo_us":%s,"ci_hi_us":%s,"band_rel":%s,"samples":200,"processes":3,"env_lo_us":%s,"env_hi_us":%s}}' "$c" "$d" "$med" "$lo" "$hi" "$band" "$med" "$med"
        done
        printf ']}\n'
    } >"$f"
    "$SIGN" "$f" || bad "signing $f"
}

SRV=$T/srv; mkdir -p "$SRV"; BARE=$SRV/marks.git; git init -q --bare "$BARE"
S=$T/seed; scratch_repo "$S"; git -C "$S" push -q "$BARE" main; SEED=$(git -C "$S" rev-parse main)
PORT=
server_pid=
start_server() {
    rm -f "$T/port"
    "$PY" "$SRC/tests/git_http_server.py" "$SRV" "$T/port" "$T/server.log" "$JOB" "$TOK" $PORT &
    server_pid=$!
    for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.1; done
    [ -s "$T/port" ] || die "the git http server did not start"
    PORT=$(cat "$T/port")
}
stop_server() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null; server_pid=; }
on_exit stop_server
start_server
remote_tip() { git --git-dir="$BARE" rev-parse main; }
no_token() { # the push token is in no output and no server log line
    if grep -q -- "$TOK" "$T/out" "$T/err" "$T/server.log"; then bad "$1: the token appeared"; else ok; fi
    if grep -q -- "$JOB" "$T/out" "$T/err" "$T/server.log"; then bad "$1: the URL's job token appeared"; else ok; fi
}

W=$T/work; git clone -q "$BARE" "$W"
git -C "$W" remote set-url origin "http://gitlab-ci-token:$JOB@127.0.0.1:$PORT/marks.git"
report "$T/r1.json" run-1 "a/n=1:NO_MARK:10:9.9:10.2:0.01"
report "$T/r2.json" run-2 "a/n=1:IMPROVED:9:8.9:9.1:0.01"
report "$T/r3.json" run-3 "a/n=1:IMPROVED:8:7.9:8.1:0.01"

# 1a. Without the token the URL's job token is used: fetching works, the push gets 403 and the
#     commit stays local (the stranded state of issue 17).
check -C "$W" "push with the job token" 4 "403" -- "$KG" marks advance --from-report "$T/r1.json" --push origin
no_token "job-token push"
[ "$(remote_tip)" = "$SEED" ] && ok || bad "the job-token push moved the remote"
LOCAL1=$(git -C "$W" rev-parse main)
[ "$LOCAL1" != "$SEED" ] && ok || bad "the first advance committed nothing locally"

# 2a. The rerun moves no mark, but finds the local ref ahead of the remote by a marks commit and
#     pushes it first (the token, not the URL's credentials).
: >"$T/server.log"
KGATE_GIT_TOKEN=$TOK check -C "$W" "rerun pushes the stranded commit" 0 "pushing ${LOCAL1:0:12} first" -- "$KG" marks advance --from-report "$T/r1.json" --push origin
grep -q "no mark moved" "$T/out" && ok || bad "the rerun should still say no mark moved"
grep -q "pushed the earlier marks commit ${LOCAL1:0:12}" "$T/out" && ok || { bad "the rerun does not say it pushed the earlier commit"; cat "$T/out"; }
grep -q "instead of the credentials in the URL http://\*\*\*@127.0.0.1" "$T/out" && ok || bad "the URL credentials were not said to be replaced"
no_token "rerun"
[ "$(remote_tip)" = "$LOCAL1" ] && ok || bad "the stranded commit did not reach the remote"
grep -q "POST /marks.git/git-receive-pack user=x-access-token ok" "$T/server.log" && ok || { bad "push not made as x-access-token with the token"; cat "$T/server.log"; }
grep -q "user=gitlab-ci-token" "$T/server.log" && bad "the URL's credentials were still sent" || ok

# 1b. An improvement with the token: committed and pushed in one go; on GitLab CI the user is oauth2.
: >"$T/server.log"
GITLAB_CI=true KGATE_GIT_TOKEN=$TOK check -C "$W" "token over URL credentials" 0 "pushed" -- "$KG" marks advance --from-report "$T/r2.json" --push origin
no_token "token push"
[ "$(remote_tip)" = "$(git -C "$W" rev-parse main)" ] && ok || bad "the token push did not land"
grep -q "git-receive-pack user=oauth2 ok" "$T/server.log" && ok || { bad "GitLab push not made as oauth2"; cat "$T/server.log"; }
KGATE_GIT_USER=rel-bot KGATE_GIT_TOKEN=$TOK check -C "$W" "KGATE_GIT_USER, nothing to do" 0 "no mark moved" -- "$KG" marks advance --from-report "$T/r2.json" --push origin
grep -q "user=rel-bot ok" "$T/server.log" && ok || { bad "KGATE_GIT_USER not sent"; cat "$T/server.log"; }

# 1c. A wrong token is rejected (403), named as such, and never printed.
KGATE_GIT_TOKEN=wrong-$TOK check -C "$W" "wrong token" 4 "403|authentication" -- "$KG" marks advance --from-report "$T/r3.json" --push origin
grep -q -- "wrong-" "$T/out" "$T/err" && bad "the wrong token appeared" || ok
[ "$(git -C "$W" rev-parse main)" = "$(remote_tip)" ] && ok || bad "a failed fetch should commit nothing"

# 2b. The server is down: nothing is committed; with the server back up the rerun lands it.
stop_server
KGATE_GIT_TOKEN=$TOK check -C "$W" "server down" 4 "" -- "$KG" marks advance --from-report "$T/r3.json" --push origin
no_token "server down"
[ "$(git -C "$W" rev-parse main)" = "$(remote_tip)" ] && ok || bad "server down: committed although nothing can be pushed"
start_server
KGATE_GIT_TOKEN=$TOK check -C "$W" "server back up" 0 "pushed" -- "$KG" marks advance --from-report "$T/r3.json" --push origin
[ "$(remote_tip)" = "$(git -C "$W" rev-parse main)" ] && ok || bad "after the outage the commit did not reach the remote"
[ "$(git --git-dir="$BARE" show main:$M | jq -r '.marks[0].value')" = "8.1" ] && ok || bad "remote marks: $(git --git-dir="$BARE" show main:$M)"
git --git-dir="$BARE" fsck --strict --no-progress >"$T/fsck" 2>&1 && ok || { bad "git fsck of the remote"; cat "$T/fsck"; }
[ -z "$(git -C "$W" status --porcelain)" ] && ok || bad "work tree not clean"

finish "push over http on 127.0.0.1:$PORT"
