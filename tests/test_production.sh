#!/usr/bin/env bash
# The production path on the CPU: `kgate marks advance --from-report` with synthetic report
# files (schema of gates/report.c + the bench figures of gates/advance.h) on temporary git
# repositories made with the real git CLI, checked with git log / show / fsck.
# Usage: test_production.sh KGATE KG_REPORT_SIGN
. "$(dirname "$0")/lib.sh"
KG=$(realpath "$1")
SIGN=$(realpath "$2")
git_isolate
# These checks cover commits on the checked-out branch (--marks-branch HEAD); the marks
# branch (kgate-marks, the default) is test_marks_branch.sh's.
export KGATE_MARKS_BRANCH=HEAD
unset KGATE_GIT_AUTHOR_NAME KGATE_GIT_AUTHOR_EMAIL KGATE_GIT_TOKEN
export KGATE_REPORT_KEY=test-report-key-$RANDOM-$RANDOM-0123456789
DEV="NVIDIA H200/sm_90"
M=baselines/high_water.json

# report FILE MODE CERTIFYING RUN_ID DEVICE_CLASS|null EXTRA_VERDICT BENCH...
#   BENCH = case:decision:median:ci_lo:ci_hi:band   EXTRA_VERDICT = verdict of a parity row
# A production report as `run --production` writes it: the selftest row, every gate, the commit
# under test (RCOMMIT, else HEAD of the current directory's repository), signed with
# KGATE_REPORT_KEY (UNSIGNED=1: not signed).
report() {
    local f=$1 mode=$2 cert=$3 rid=$4 dev=$5 pv=$6; shift 6
    local dj='null' commit=${RCOMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
    [ "$dev" != null ] && dj="{\"class\":\"$dev\",\"driver_cuda_version\":\"13.0\",\"runtime_version\":\"13.0\"}"
    {
        printf '{"schema":"kgate-report/1","command":"run","mode":"%s","certifying":%s,' "$mode" "$cert"
        printf '"run_id":"%s","started_at":"%s","seed":7,"device":%s,' "$rid" "${STARTED:-2026-12-01T00:00:00Z}" "$dj"
        printf '"provenance":{"commit":"%s"},"gates":["parity","preflight","hotpath","bench","counters"],"results":[' "$commit"
        printf '{"gate":"selftest","case":"defect/parity/x","verdict":"PASS","message":"","figures":{}}'
        for b in "$@"; do
            IFS=: read -r c d med lo hi band <<<"$b"
            printf ',{"gate":"parity","case":"%s","verdict":"%s","message":"","figures":{}},' "$c" "$pv"
            printf '{"gate":"preflight","case":"%s","verdict":"PASS","message":"","figures":{}},' "$c"
            printf '{"gate":"hotpath","case":"%s","verdict":"PASS","message":"","figures":{}},' "$c"
            printf '{"gate":"counters","case":"%s","verdict":"PASS","message":"","figures":{"decision":"OK","why":"","device_class":"x","kernels":1,"passes":1,"metrics":{}}},' "$c"
            printf '{"gate":"bench","case":"%s","verdict":"PASS","message":"","figures":{"decision":"%s","metric":"time_us_warm","median_us":%s,"ci_lo_us":%s,"ci_hi_us":%s,"band_rel":%s,"samples":200,"processes":3,"env_lo_us":%s,"env_hi_us":%s}}' "$c" "$d" "$med" "$lo" "$hi" "$band" "$med" "$med"
        done
        printf ']%s}\n' "${MU:+,\"marks_update\":$MU}"
    } >"$f"
    [ -n "${UNSIGNED:-}" ] || [ "$mode" != production ] || "$SIGN" "$f" || bad "signing $f"
}
ncommits() { git -C "$1" rev-list --count HEAD; }
markval() { # markval REPO REV CASE
    git -C "$1" show "$2:$M" | jq -r --arg c "$3" '.marks[] | select(.case==$c) | .value'
}

R=$T/repo; scratch_repo "$R"; cd "$R"

# 1. A fully passing run with two NO_MARK cases commits exactly those two marks.
report "$T/r1.json" production true run-1 "$DEV" PASS "a/n=1:NO_MARK:10:9.9:10.2:0.01" "b/n=2:NO_MARK:20:19.5:20.4:0.02"
check "first marks" 0 "committed" -- "$KG" marks advance --from-report "$T/r1.json"
[ "$(ncommits .)" -eq 2 ] && ok || bad "first marks: want 2 commits, have $(ncommits .)"
[ "$(git show --name-only --format= HEAD)" = "$M" ] && ok || bad "commit touches more than $M"
[ "$(markval . HEAD a/n=1)" = "10.2" ] && ok || bad "mark a is not the run's ci_hi (ratchet guard): $(markval . HEAD a/n=1)"
[ "$(markval . HEAD b/n=2)" = "20.4" ] && ok || bad "mark b is not ci_hi"
msg=$(git log -1 --format=%B)
for want in "a/n=1 \[$DEV\] time_us_warm: \(none\) -> 10.2 \(band \+-1.00%\)" "b/n=2" "run-1"; do
    grep -qE -- "$want" <<<"$msg" && ok || { bad "commit message lacks /$want/"; echo "$msg"; }
done
[ "$(git log -1 --format='%an <%ae>|%cn <%ce>')" = "kgate <kgate@localhost>|kgate <kgate@localhost>" ] && ok || bad "default author: $(git log -1 --format='%an <%ae>|%cn <%ce>')"
[ -z "$(git status --porcelain)" ] && ok || { bad "work tree not clean after a commit"; git status --porcelain; }
cmp -s "$M" <(git show HEAD:$M) && ok || bad "work tree marks file differs from HEAD"
git fsck --strict --no-progress >"$T/fsck" 2>&1 && ok || { bad "git fsck"; cat "$T/fsck"; }

# 2. The same run again: already applied, it moves nothing (issue #28), nothing committed.
check "identical rerun" 0 "run run-1: it was already applied by the marks commit .*; it moves nothing now" -- "$KG" marks advance --from-report "$T/r1.json"
[ "$(ncommits .)" -eq 2 ] && ok || bad "identical rerun committed"
report "$T/same.json" production true run-same "$DEV" PASS "a/n=1:SAME:10.1:10:10.3:0.01"
check "SAME run" 0 "no mark moved" -- "$KG" marks advance --from-report "$T/same.json"
[ "$(ncommits .)" -eq 2 ] && ok || bad "SAME run committed"

# 3. IMPROVED advances to the conservative edge (ci_hi), with old -> new in the message.
report "$T/r2.json" production true run-2 "$DEV" PASS "a/n=1:IMPROVED:9:8.9:9.1:0.01" "b/n=2:SAME:20:19.9:20.1:0.02"
KGATE_GIT_AUTHOR_NAME="Env Author" KGATE_GIT_AUTHOR_EMAIL=env@example.com \
    check "improved" 0 "a/n=1 .*10.2 -> 9.1" -- "$KG" marks advance --from-report "$T/r2.json"
[ "$(markval . HEAD a/n=1)" = "9.1" ] && ok || bad "improved mark is $(markval . HEAD a/n=1), want ci_hi 9.1"
[ "$(markval . HEAD b/n=2)" = "20.4" ] && ok || bad "SAME case moved"
[ "$(git log -1 --format='%an <%ae>')" = "Env Author <env@example.com>" ] && ok || bad "env author: $(git log -1 --format='%an <%ae>')"
git log -1 --format=%B | grep -q "10.2 -> 9.1" && ok || bad "message lacks old -> new"

# 4. Ratchet guard: an IMPROVED median whose CI edge does not beat the mark moves nothing.
report "$T/lucky.json" production true run-lucky "$DEV" PASS "a/n=1:IMPROVED:8.5:8:9.5:0.01"
check "lucky run" 0 "no mark moved" -- "$KG" marks advance --from-report "$T/lucky.json"
[ "$(markval . HEAD a/n=1)" = "9.1" ] && ok || bad "lucky run moved the mark"

# 5. Any failing, errored or skipped gate, or no GPU, commits nothing (exit 1).
n0=$(ncommits .)
for v in FAIL ERROR SKIP; do
    report "$T/v.json" production true "run-$v" "$DEV" "$v" "a/n=1:IMPROVED:5:4.9:5.1:0.01"
    check "parity $v" 1 "not advancing" -- "$KG" marks advance --from-report "$T/v.json"
done
report "$T/nodev.json" production true run-nodev null PASS "a/n=1:IMPROVED:5:4.9:5.1:0.01"
check "no GPU" 1 "no GPU" -- "$KG" marks advance --from-report "$T/nodev.json"
[ "$(ncommits .)" -eq "$n0" ] && ok || bad "a failing report committed"

# 6. Diagnostic reports are refused (exit 2), whatever else they say.
report "$T/diag.json" diagnostic false run-diag "$DEV" PASS "a/n=1:IMPROVED:5:4.9:5.1:0.01"
check "diagnostic report" 2 "diagnostic \(non-certifying\)" -- "$KG" marks advance --from-report "$T/diag.json"
report "$T/diag2.json" production false run-diag2 "$DEV" PASS "a/n=1:IMPROVED:5:4.9:5.1:0.01"
check "certifying false" 2 "non-certifying" -- "$KG" marks advance --from-report "$T/diag2.json"
[ "$(ncommits .)" -eq "$n0" ] && ok || bad "a diagnostic report committed"
echo '{"mode":' >"$T/broken.json"
check "malformed report" 2 "not valid JSON" -- "$KG" marks advance --from-report "$T/broken.json"

# 7. Refusals: clear message, exit 2, nothing changed.
sum0=$(sha1sum "$M"); head0=$(git rev-parse HEAD)
echo " " >>"$M"
check "dirty marks file" 2 "uncommitted changes" -- "$KG" marks advance --from-report "$T/v.json"
git checkout -q -- "$M"
cp "$M" "$T/keep"; jq '.marks[0].value = 1.5' "$T/keep" >"$M"; git add "$M"
check "staged marks file" 2 "uncommitted changes" -- "$KG" marks advance --from-report "$T/r2.json"
git reset -q; git checkout -q -- "$M"
git checkout -q --detach HEAD
check "detached HEAD" 2 "detached" -- "$KG" marks advance --from-report "$T/r2.json"
git checkout -q main
mkdir -p "$T/plain"; check -C "$T/plain" "not a git repo" 2 "not inside a git repository" -- "$KG" marks advance --from-report "$T/r2.json"
[ "$(git rev-parse HEAD)" = "$head0" ] && [ "$(sha1sum "$M")" = "$sum0" ] && ok || bad "a refusal changed something"
B=$T/broken; scratch_repo "$B"; mkdir -p "$B/baselines"; echo '{"version": 1, "marks": [{"case": 3}]}' >"$B/$M"
git -C "$B" add "$M"; git -C "$B" commit -qm "broken marks"
check -C "$B" "malformed marks file" 2 "high_water.json" -- "$KG" marks advance --from-report "$T/r1.json"
[ "$(ncommits "$B")" -eq 2 ] && ok || bad "malformed marks file: something was committed"

# 8. --marks-ref (the older name of --marks-branch): commit on another branch, created as an
#    orphan holding only the marks file, seeded from the work tree's; the work tree is untouched.
report "$T/r3.json" production true run-3 "$DEV" PASS "b/n=2:IMPROVED:18:17.8:18.2:0.02"
check "marks-ref" 0 "refs/heads/perf-marks" -- "$KG" marks advance --from-report "$T/r3.json" --marks-ref perf-marks --author "Rel Mgr" --email rm@example.com
[ "$(git rev-list --count perf-marks)" = 1 ] && [ "$(git ls-tree -r --name-only perf-marks)" = "$M" ] && ok || bad "perf-marks is not an orphan holding only $M"
[ "$(markval . perf-marks b/n=2)" = "18.2" ] && [ "$(markval . main b/n=2)" = "20.4" ] && ok || bad "marks-ref values"
[ "$(git log -1 --format='%an <%ae>' perf-marks)" = "Rel Mgr <rm@example.com>" ] && ok || bad "--author/--email"
[ -z "$(git status --porcelain)" ] && ok || bad "marks-ref touched the work tree"
git checkout -q --detach HEAD
report "$T/r2b.json" production true run-2b "$DEV" PASS "a/n=1:IMPROVED:9:8.9:9.1:0.01" "b/n=2:SAME:20:19.9:20.1:0.02"
check "detached with --marks-ref" 0 "committed" -- "$KG" marks advance --from-report "$T/r2b.json" --marks-ref main --marks "$R/$M"
git checkout -q main

# 9. Release-manager commands.
check "show" 0 "a/n=1" -- "$KG" marks show --device "$DEV"
check "diff" 0 "~ a/n=1 .*10.2 -> 9.1" -- "$KG" marks diff HEAD~1 HEAD
check "diff bad rev" 2 "not found" -- "$KG" marks diff nosuchrev HEAD
check "lower needs reason" 2 "--reason" -- "$KG" marks lower --case a/n=1 --device "$DEV"
check "lower upward refused" 2 "does not lower" -- "$KG" marks lower --case a/n=1 --device "$DEV" --reason x --to 5
check "lower unknown" 2 "no mark for case" -- "$KG" marks lower --case zz --device "$DEV" --reason x
check "lower" 0 "committed" -- "$KG" marks lower --case a/n=1 --device "$DEV" --to 9.6 --reason "driver 580 is slower"
[ "$(markval . HEAD a/n=1)" = "9.6" ] && ok || bad "lowered value"
git log -1 --format=%B | grep -q "Reason: driver 580 is slower" && ok || bad "lower commit lacks the reason"
check "remove" 0 "removed" -- "$KG" marks lower --case b/n=2 --device "$DEV" --reason "kernel rewritten"
[ -z "$(markval . HEAD b/n=2)" ] && ok || bad "mark b not removed"
check "history svg" 0 "point" -- "$KG" marks history --case a/n=1 --out "$T/h.svg"
[ "$(grep -c '<circle' "$T/h.svg")" -eq 3 ] && ok || bad "history: want 3 points (10.2, 9.1, 9.6), got $(grep -c '<circle' "$T/h.svg")"
grep -q "Env Author" "$T/h.svg" && ok || bad "history lacks who moved it"
xmllint --noout "$T/h.svg" 2>/dev/null && ok || { command -v xmllint >/dev/null && bad "history SVG is not well-formed XML" || ok; }
check "history html" 0 "" -- "$KG" marks history --case a/n=1 --out "$T/h.html"
grep -q "<svg" "$T/h.html" && grep -q "driver 580" "$T/h.html" && ok || bad "history html"
check "history bad ext" 2 "svg or .html" -- "$KG" marks history --case a/n=1 --out "$T/h.png"
git fsck --strict --no-progress >"$T/fsck" 2>&1 && ok || { bad "git fsck"; cat "$T/fsck"; }

# 9b. Replay, freshness, ancestry (issue #28): an old signed report never undoes a lowering.
Q=$T/replay; scratch_repo "$Q"; cd "$Q"
report "$T/o1.json" production true run-o1 "$DEV" PASS "a/n=1:NO_MARK:10:9.9:10.2:0.01"
check "replay: first advance" 0 "committed" -- "$KG" marks advance --from-report "$T/o1.json"
report "$T/o2.json" production true run-o2 "$DEV" PASS "a/n=1:IMPROVED:9:8.9:9.1:0.01" # never applied
check "replay: lower" 0 "lowered from 10.2 to 12" -- "$KG" marks lower --case a/n=1 --device "$DEV" --to 12 --reason "driver 590 is slower"
git log -1 --format=%B | grep -q '^Kgate-Lowered: {"device_class":"NVIDIA H200/sm_90","case":"a/n=1","metric":"time_us_warm","at":"' && ok || bad "the lowering has no Kgate-Lowered trailer"
git commit -q --allow-empty -m "code 1"; git commit -q --allow-empty -m "code 2"
check "replay: the same old report again" 2 "refused by the replay rule: run run-o1: it was already applied by the marks commit .*, and it would move a/n=1" -- "$KG" marks advance --from-report "$T/o1.json"
check "replay: an old report never applied" 2 "refused by the freshness rule: the run started at 2026-12-01T00:00:00Z, not after the last lowering of a/n=1" -- "$KG" marks advance --from-report "$T/o2.json"
[ "$(markval . HEAD a/n=1)" = "12" ] && ok || bad "the lowering was undone: mark a is $(markval . HEAD a/n=1), want 12"
STARTED=2099-01-01T00:00:00Z report "$T/o3.json" production true run-o3 "$DEV" PASS "a/n=1:IMPROVED:9:8.9:9.1:0.01"
check "replay: a report from the future" 2 "refused by the freshness rule: started_at '2099-01-01T00:00:00Z'" -- "$KG" marks advance --from-report "$T/o3.json"
report "$T/o4.json" production true 'run o4 Run-Id: x' "$DEV" PASS "a/n=1:IMPROVED:9:8.9:9.1:0.01"
check "replay: a run id outside the charset" 2 "refused by the replay rule: run_id" -- "$KG" marks advance --from-report "$T/o4.json"
sleep 1
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
STARTED=$now report "$T/o5.json" production true run-o5 "$DEV" PASS "a/n=1:IMPROVED:9:8.9:9.1:0.01"
check "replay: a run started after the lowering" 0 "a/n=1 .*12 -> 9.1" -- "$KG" marks advance --from-report "$T/o5.json"
STARTED=$now RCOMMIT=$(git rev-parse HEAD~2) report "$T/o6.json" production true run-o6 "$DEV" PASS "a/n=1:IMPROVED:8:7.9:8.1:0.01"
check "replay: older code than the mark's" 2 "refused by the ancestry rule: the report's commit .* does not descend from" -- "$KG" marks advance --from-report "$T/o6.json"
mc=$(git rev-parse HEAD)
STARTED=$now MU="{\"committed\":true,\"commit\":\"$mc\"}" report "$T/o7.json" production true run-o7 "$DEV" PASS "a/n=1:IMPROVED:8:7.9:8.1:0.01"
check "replay: a report whose marks_update names a marks commit already held" 2 "refused by the replay rule: run run-o7: the report's own marks_update names the marks commit" -- "$KG" marks advance --from-report "$T/o7.json"
[ "$(markval . HEAD a/n=1)" = "9.1" ] && [ "$(git rev-parse HEAD)" = "$mc" ] && ok || bad "a refused report moved a mark"
check "replay: remove" 0 "removed" -- "$KG" marks lower --case a/n=1 --device "$DEV" --reason "kernel rewritten"
STARTED=$now report "$T/o8.json" production true run-o8 "$DEV" PASS "a/n=1:NO_MARK:9:8.9:9.1:0.01"
check "replay: a report started before a removal" 2 "refused by the freshness rule" -- "$KG" marks advance --from-report "$T/o8.json"
check "lower: --reason of invalid UTF-8" 2 "--reason: not valid UTF-8 at byte 3" -- "$KG" marks lower --case a/n=1 --device "$DEV" --to 50 --reason $'caf\xe9 driver'
check "lower: --author of invalid UTF-8" 2 "--author: not valid UTF-8 at byte 1" -- "$KG" marks lower --case a/n=1 --device "$DEV" --to 50 --reason x --author $'R\xc3\x28sum'
printf '\xef\xbb\xbf' | cat - "$M" >"$T/bom.json"
check "a marks file with a BOM" 2 "bom.json: starts with a UTF-8 byte-order mark" -- "$KG" marks show --marks "$T/bom.json"
cd "$R"

# 10. Concurrency: 6 runners finish at once, improving different and overlapping marks.
C=$T/conc; scratch_repo "$C"; cd "$C"
report "$T/c0.json" production true run-c0 "$DEV" PASS "k1:NO_MARK:100:99:101:0.01" "k2:NO_MARK:100:99:101:0.01" "k3:NO_MARK:100:99:101:0.01" "k4:NO_MARK:100:99:101:0.01"
"$KG" marks advance --from-report "$T/c0.json" >/dev/null || bad "concurrency setup"
report "$T/c1.json" production true run-c1 "$DEV" PASS "k1:IMPROVED:90:89:91:0.01" "k2:IMPROVED:95:94:96:0.01"
report "$T/c2.json" production true run-c2 "$DEV" PASS "k2:IMPROVED:80:79:81:0.01" "k3:IMPROVED:97:96:98:0.01"
report "$T/c3.json" production true run-c3 "$DEV" PASS "k1:IMPROVED:85:84:86:0.01" "k4:IMPROVED:70:69:71:0.01"
report "$T/c4.json" production true run-c4 "$DEV" PASS "k3:IMPROVED:60:59:61:0.01" "k2:IMPROVED:88:87:89:0.01"
report "$T/c5.json" production true run-c5 "$DEV" PASS "k4:IMPROVED:75:74:76:0.01" "k1:IMPROVED:92:91:93:0.01"
report "$T/c6.json" production true run-c6 "$DEV" PASS "k1:IMPROVED:83:82:84:0.01" "k3:IMPROVED:65:64:66:0.01"
pids=()
for i in 1 2 3 4 5 6; do
    "$KG" marks advance --from-report "$T/c$i.json" >"$T/c$i.out" 2>&1 & pids+=($!)
done
for i in 0 1 2 3 4 5; do
    wait "${pids[$i]}" || { bad "concurrent runner $((i+1)) failed"; cat "$T/c$((i+1)).out"; }
done
cat "$T"/c[1-6].out | grep -o "[0-9]* attempt(s)" | sort | uniq -c | sed 's/^/  concurrency: /'
for kv in k1:84 k2:81 k3:61 k4:71; do
    k=${kv%%:*} v=${kv#*:}
    [ "$(markval . HEAD "$k")" = "$v" ] && ok || bad "concurrency: $k is $(markval . HEAD "$k"), want the best $v"
done
# History: linear, every commit valid, and no mark ever went up (lost or lowered) along it.
[ "$(git rev-list --merges HEAD | wc -l)" -eq 0 ] && ok || bad "merge commits in marks history"
prev=""
for c in $(git rev-list --reverse HEAD -- "$M"); do
    cur=$(git show "$c:$M" | jq -c '[.marks[] | {(.case): .value}] | add')
    if [ -n "$prev" ]; then
        jq -n --argjson p "$prev" --argjson c "$cur" '[$p | keys[] as $k | ($c[$k] // 1e300) <= $p[$k]] | all' | grep -q true \
            && ok || bad "concurrency: a mark was lost or raised at $c"
    fi
    prev=$cur
done
[ -z "$(git status --porcelain)" ] && ok || { bad "concurrency: work tree not clean"; git status --porcelain; }
cmp -s "$M" <(git show HEAD:$M) && ok || bad "concurrency: work tree file is not HEAD's"
git fsck --strict --no-progress >"$T/fsck" 2>&1 && ok || { bad "git fsck after concurrency"; cat "$T/fsck"; }

# 11. Push to a local bare repository; a stale clone is rejected, fetches, merges, retries.
BARE=$T/origin.git; git init -q --bare "$BARE"
S=$T/seed; scratch_repo "$S"; git -C "$S" push -q "$BARE" main
git clone -q "$BARE" "$T/w1"; git clone -q "$BARE" "$T/w2"
RCOMMIT=$(git -C "$S" rev-parse main) report "$T/c0.json" production true run-c0 "$DEV" PASS "k1:NO_MARK:100:99:101:0.01" "k2:NO_MARK:100:99:101:0.01" "k3:NO_MARK:100:99:101:0.01" "k4:NO_MARK:100:99:101:0.01"
RCOMMIT=$(git -C "$S" rev-parse main) report "$T/c1.json" production true run-c1 "$DEV" PASS "k1:IMPROVED:90:89:91:0.01" "k2:IMPROVED:95:94:96:0.01"
check -C "$T/w1" "push" 0 "pushed" -- "$KG" marks advance --from-report "$T/c0.json" --push origin
[ "$(git --git-dir="$BARE" rev-parse main)" = "$(git -C "$T/w1" rev-parse main)" ] && ok || bad "push did not land"
KGATE_GIT_TOKEN=s3cr3t-token-value check -C "$T/w2" "push after rejection" 0 "pushed" -- "$KG" marks advance --from-report "$T/c1.json" --push "$BARE"
grep -q "push rejected" "$T/out" && ok || bad "the stale clone's push was not rejected first"
grep -q "s3cr3t" "$T/out" "$T/err" && bad "the token appeared in the output" || ok
[ "$(markval "$BARE" main k1)" = "91" ] && [ "$(markval "$BARE" main k3)" = "101" ] && ok || bad "rejected push: merge lost marks ($(git --git-dir="$BARE" show main:$M | jq -c '[.marks[]|.value]'))"
[ "$(git --git-dir="$BARE" rev-list --count main)" -eq 3 ] && ok || bad "remote history: want 3 commits"
git --git-dir="$BARE" fsck --strict --no-progress >"$T/fsck" 2>&1 && ok || { bad "git fsck on the bare remote"; cat "$T/fsck"; }
(cd "$T/w2" && [ -z "$(git status --porcelain)" ]) && ok || bad "w2 work tree not clean after rebase"

# 12. `kgate run`: without a GPU a production run can never commit (exit 3); a diagnostic run
# never writes the marks file or commits. (On a GPU machine gpu_production.sh covers commits.)
RR=$T/runrepo; scratch_repo "$RR"; cd "$RR"
"$KG" run --production --filter '^axpy/n=4097/' --seed 5 --report "$T/run.json" >"$T/out" 2>&1; rc=$?
if [ "$rc" -eq 3 ]; then
    [ "$(ncommits .)" -eq 1 ] && [ ! -e "$M" ] && ok || bad "no-GPU production run committed or wrote marks"
    grep -q "cannot commit" "$T/out" && ok || bad "no-GPU production run does not say it cannot commit"
    jq -e '.mode == "production" and .certifying == true and .marks_update.committed == false' "$T/run.json" >/dev/null \
        && ok || bad "no-GPU production report lacks marks_update.committed=false"
    check "advance from a no-GPU run" 1 "no GPU" -- "$KG" marks advance --from-report "$T/run.json"
fi
"$KG" run --diagnostic --filter '^axpy/n=4097/' --seed 5 --report "$T/diag-run.json" >"$T/out" 2>&1; rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] && ok || { bad "diagnostic run exit $rc"; cat "$T/out"; }
[ "$(ncommits .)" -le 2 ] && [ -z "$(git status --porcelain)" ] && ok || bad "diagnostic run changed the repository"
n_before=$(ncommits .)
jq -e '.mode == "diagnostic" and .certifying == false and (.marks_update == null)' "$T/diag-run.json" >/dev/null \
    && ok || bad "diagnostic report not stamped non-certifying"
check "advance from a diagnostic run" 2 "non-certifying" -- "$KG" marks advance --from-report "$T/diag-run.json"
[ "$(ncommits .)" -eq "$n_before" ] && ok || bad "diagnostic report committed"
check "run: modes exclude" 2 "exclude each other" -- "$KG" run --production --diagnostic
check "run: push needs production" 2 "need --production" -- "$KG" run --diagnostic --push origin
cd "$T/plain" && check "run --production outside git" 2 "not inside a git repository" -- "$KG" run --production --filter '^axpy/'

finish
