#!/usr/bin/env bash
# Marks the pull request cannot touch (issue #17): production commits on the marks branch
# (kgate-marks by default, --marks-branch, $KGATE_MARKS_BRANCH), created as an orphan holding
# only the marks file the first time, never on the checked-out branch; a fresh clone starts the
# branch at the remote's tip; the gates read the marks at a ref (--marks-ref
# origin/kgate-marks) through libgit2 and the report records where they came from
# (marks_source); `kgate marks guard --base REF` flags a change that edits the marks file
# (the planted defect) and passes one that does not (its clean twin).
# Scratch repositories made with the git CLI; the remote is a bare repository on disk, then the
# loopback smart-HTTP server with token auth (the credential rules of marks pushes).
# Usage: test_marks_branch.sh KGATE KG_REPORT_SIGN PYTHON3
. "$(dirname "$0")/lib.sh"
KG=$(realpath "$1")
SIGN=$(realpath "$2")
PY=${3:-python3}
git_isolate
unset KGATE_GIT_AUTHOR_NAME KGATE_GIT_AUTHOR_EMAIL KGATE_GIT_TOKEN KGATE_GIT_USER GITLAB_CI
unset KGATE_MARKS_BRANCH KGATE_MARKS
export KGATE_REPORT_KEY=test-report-key-$RANDOM-$RANDOM-0123456789
DEV="NVIDIA H200/sm_90"
M=baselines/high_water.json

# The gate table of this tree (a production report lists every gate): `kgate --help` names them.
GATES=$("$KG" --help | awk '/^commands:/ {on=1; next} on && /^  [a-z]/ {print $1} /^$/ && on {exit}' | grep -xE 'parity|preflight|hotpath|bench|counters' | paste -sd' ')
# report FILE RUN_ID BENCH... (BENCH = case:decision:median:ci_lo:ci_hi:band): a signed
# production report of HEAD of the current directory, every gate passing.
report() {
    local f=$1 rid=$2; shift 2
    {
        printf '{"schema":"kgate-report/1","command":"run","mode":"production","certifying":true,'
        printf '"run_id":"%s","started_at":"2026-12-01T00:00:00Z","seed":7,' "$rid"
        printf '"device":{"class":"%s","driver_cuda_version":"13.0","runtime_version":"13.0"},' "$DEV"
        printf '"provenance":{"commit":"%s"},"gates":[%s],"results":[' "$(git rev-parse HEAD)" "$(sed 's/[a-z]*/"&"/g; s/ /,/g' <<<"$GATES")"
        printf '{"gate":"selftest","case":"defect/parity/x","verdict":"PASS","message":"","figures":{}}'
        for b in "$@"; do
            IFS=: read -r c d med lo hi band <<<"$b"
            for g in parity preflight hotpath; do
                printf ',{"gate":"%s","case":"%s","verdict":"PASS","message":"","figures":{}}' "$g" "$c"
            done
            case " $GATES " in *" counters "*)
                printf ',{"gate":"counters","case":"%s","verdict":"PASS","message":"","figures":{"decision":"OK","why":"","device_class":"x","kernels":1,"passes":1,"metrics":{}}}' "$c" ;;
            esac
            printf ',{"gate":"bench","case":"%s","verdict":"PASS","message":"","figures":{"decision":"%s","metric":"time_us_warm","median_us":%s,"ci_lo_us":%s,"ci_hi_us":%s,"band_rel":%s,"samples":200,"processes":3,"env_lo_us":%s,"env_hi_us":%s}}' "$c" "$d" "$med" "$lo" "$hi" "$band" "$med" "$med"
        done
        printf ']}\n'
    } >"$f"
    "$SIGN" "$f" || bad "signing $f"
}
markval() { git -C "$1" show "$2:$M" | jq -r --arg c "$3" '.marks[] | select(.case==$c) | .value'; }

# A repository whose main branch carries a marks file (the layout before the marks branch).
BARE=$T/origin.git; git init -q --bare "$BARE"
R=$T/repo; scratch_repo "$R"; cd "$R"
git remote add origin "$BARE"
report "$T/r0.json" run-0 "a/n=1:NO_MARK:10:9.9:10.2:0.01"
mkdir -p baselines
# Issue #28 item 10: a killed write's temp file (kgate's own pattern, older than 10 s) is
# removed by the next write; a fresh one (a concurrent writer) and other names are not.
printf x >"$M.tmp.AbC123"; touch -d '1 minute ago' "$M.tmp.AbC123"
printf x >"$M.tmp.XyZ789"; printf x >"$M.tmp.mine"; touch -d '1 minute ago' "$M.tmp.mine"
printf '%s.tmp.*\n' "$M" >>.git/info/exclude # the leftovers are untracked, not a dirty tree
check "seed marks on main (--marks-branch HEAD)" 0 "committed .* on refs/heads/main" -- "$KG" marks advance --from-report "$T/r0.json" --marks-branch HEAD
grep -q "removed 1 leftover temp file(s) of .*$M" "$T/err" && [ ! -e "$M.tmp.AbC123" ] && [ -e "$M.tmp.XyZ789" ] && [ -e "$M.tmp.mine" ] && ok || bad "stale temp files: want only $M.tmp.AbC123 removed, said once"
rm -f "$M".tmp.*
main0=$(git rev-parse main)
git push -q origin main

# 1. Production's default: the first commit on kgate-marks, an orphan seeded from the work tree.
report "$T/r1.json" run-1 "b/n=2:NO_MARK:20:19.5:20.4:0.02"
check "first marks-branch commit" 0 "committed .* on refs/heads/kgate-marks" -- "$KG" marks advance --from-report "$T/r1.json"
[ "$(git rev-parse main)" = "$main0" ] && [ -z "$(git status --porcelain)" ] && ok || bad "production touched the checked-out branch or the work tree"
[ "$(git rev-list --count kgate-marks)" = 1 ] && ok || bad "kgate-marks is not an orphan: $(git rev-list --count kgate-marks) commits"
[ "$(git ls-tree -r --name-only kgate-marks)" = "$M" ] && ok || bad "kgate-marks holds more than $M: $(git ls-tree -r --name-only kgate-marks)"
[ "$(markval . kgate-marks a/n=1)" = "10.2" ] && [ "$(markval . kgate-marks b/n=2)" = "20.4" ] && ok || bad "kgate-marks lacks the seeded or the new mark"
[ -z "$(markval . main b/n=2)" ] && ok || bad "the new mark reached main"

# 2. The next one builds on it (and decides against its marks, not main's).
report "$T/r2.json" run-2 "b/n=2:IMPROVED:18:17.8:18.2:0.02"
check "second marks-branch commit" 0 "committed" -- "$KG" marks advance --from-report "$T/r2.json"
[ "$(git rev-list --count kgate-marks)" = 2 ] && [ "$(markval . kgate-marks b/n=2)" = "18.2" ] && ok || bad "second commit not on top of the first"

# 2b. Only a branch (issue #28): a tag, a remote-tracking ref, any other ref is refused (exit 2)
#     before anything is opened or run, and is never moved.
git tag v1 main; git update-ref refs/remotes/origin/x main
tag0=$(git rev-parse v1); rem0=$(git rev-parse refs/remotes/origin/x); km0=$(git rev-parse kgate-marks)
report "$T/rt.json" run-tag "b/n=2:IMPROVED:17:16.8:17.1:0.02"
for b in refs/tags/v1 refs/remotes/origin/x refs/notes/commits refs/heads/ -x refs/heads/HEAD; do
    check "--marks-branch $b refused" 2 "marks-branch '$b': (marks are committed only on a branch|not a valid reference name)" -- "$KG" marks advance --from-report "$T/rt.json" --marks-branch "$b"
done
# Short names git reads as another ref first (found by the campaign): never a branch of that name.
for b in tags/v1 remotes/origin/x heads/x FETCH_HEAD ORIG_HEAD $'caf\xe9'; do
    check "--marks-branch $b refused" 2 "(git reads this short name as another ref first|--marks-branch: not valid UTF-8)" -- "$KG" marks advance --from-report "$T/rt.json" --marks-branch "$b"
done
[ -z "$(git for-each-ref refs/heads/tags refs/heads/remotes refs/heads/FETCH_HEAD refs/heads/ORIG_HEAD)" ] && ok || bad "a short name that is another ref became a branch"

check "KGATE_MARKS_BRANCH=refs/tags/v1 refused" 2 "KGATE_MARKS_BRANCH 'refs/tags/v1': marks are committed only on a branch .*a tag is never moved" -- env KGATE_MARKS_BRANCH=refs/tags/v1 "$KG" marks advance --from-report "$T/rt.json"
check "lower on a tag refused" 2 "a tag is never moved" -- "$KG" marks lower --case b/n=2 --device "$DEV" --to 30 --reason x --marks-branch refs/tags/v1
check "run --production on a remote-tracking ref refused" 2 "a remote-tracking ref is never moved" -- "$KG" run --production --marks-branch refs/remotes/origin/x --filter '^axpy/n=4097/'
grep -q "selftest\|preflight" "$T/out" && bad "run --production started work before refusing the ref" || ok
[ "$(git rev-parse v1)" = "$tag0" ] && [ "$(git rev-parse refs/remotes/origin/x)" = "$rem0" ] && [ "$(git rev-parse kgate-marks)" = "$km0" ] && ok || bad "a refused --marks-branch moved a ref"
check "--marks-branch refs/heads/kgate-marks accepted" 0 "committed .* on refs/heads/kgate-marks" -- "$KG" marks advance --from-report "$T/rt.json" --marks-branch refs/heads/kgate-marks
git tag -d v1 >/dev/null; git update-ref -d refs/remotes/origin/x

# 3. --marks-branch and $KGATE_MARKS_BRANCH name another branch; lower goes there too.
report "$T/r3.json" run-3 "c/n=3:NO_MARK:30:29.5:30.3:0.02"
check "KGATE_MARKS_BRANCH" 0 "refs/heads/perf" -- env KGATE_MARKS_BRANCH=perf "$KG" marks advance --from-report "$T/r3.json"
check "--marks-branch over the variable" 0 "refs/heads/other" -- env KGATE_MARKS_BRANCH=perf "$KG" marks advance --from-report "$T/r3.json" --marks-branch other
check "lower on the marks branch" 0 "committed .* on refs/heads/kgate-marks" -- "$KG" marks lower --case b/n=2 --device "$DEV" --to 19 --reason "new driver"
[ "$(markval . kgate-marks b/n=2)" = "19" ] && [ "$(git rev-parse main)" = "$main0" ] && ok || bad "lower did not land on kgate-marks only"
check "show: the marks branch by default" 0 "2 mark\(s\) in refs/heads/kgate-marks:$M" -- "$KG" marks show
check "show --marks: the file" 0 "1 mark\(s\) in $M" -- "$KG" marks show --marks "$M"
check "bad --marks-branch" 2 "not a valid (reference|branch) name" -- "$KG" marks advance --from-report "$T/r3.json" --marks-branch 'a..b'

# 4. Push, then a fresh clone (no local kgate-marks) starts at the remote's tip.
check "push the marks branch" 0 "pushed" -- "$KG" marks advance --from-report "$T/r3.json" --push origin
[ "$(git -C "$BARE" rev-parse kgate-marks)" = "$(git rev-parse kgate-marks)" ] && ok || bad "kgate-marks not on the remote"
[ "$(git -C "$BARE" rev-parse main)" = "$main0" ] && ok || bad "the push moved the remote's main"
C=$T/clone; git clone -q "$BARE" "$C"
report "$T/r4.json" run-4 "c/n=3:IMPROVED:28:27.8:28.1:0.01"
check -C "$C" "fresh clone" 0 "starts at .* from origin" -- "$KG" marks advance --from-report "$T/r4.json" --push origin
[ "$(git -C "$BARE" rev-list --count kgate-marks)" = 6 ] && ok || bad "the clone's commit is not on top of the remote's: $(git -C "$BARE" rev-list --count kgate-marks)"
[ "$(markval "$BARE" kgate-marks c/n=3)" = "28.1" ] && [ "$(markval "$BARE" kgate-marks b/n=2)" = "19" ] && ok || bad "remote marks after the clone's push"
git -C "$BARE" fsck --no-progress >"$T/fsck" 2>&1 && ok || { bad "fsck"; cat "$T/fsck"; }

# 5. Reading marks at a ref: show, the gates (bench, run), and what the report says.
git -C "$C" fetch -q origin
tip=$(git -C "$C" rev-parse origin/kgate-marks)
check -C "$C" "show --marks-ref" 0 "3 mark\(s\) in origin/kgate-marks:$M \(commit ${tip:0:12}\)" -- "$KG" marks show --marks-ref origin/kgate-marks
check -C "$C" "show unknown ref" 2 "no such ref or commit .*git fetch origin kgate-marks" -- "$KG" marks show --marks-ref origin/nope
run _kg_in "$C" "$KG" bench --filter 'axpy' --marks-ref origin/kgate-marks --report "$T/b.json"
[ "$rc" -eq 3 ] && ok || { bad "bench --marks-ref without a GPU: exit $rc, want 3"; cat "$T/err"; }
expect_jq ".marks_source == {\"kind\":\"ref\",\"path\":\"$M\",\"ref\":\"origin/kgate-marks\",\"commit\":\"$tip\"}" "$T/b.json"
"$KG" report --from "$T/b.json" --html "$T/b.html" >/dev/null 2>&1
expect_grep "<th>marks_source.commit</th><td>$tip</td>" "$T/b.html" "the HTML report does not show where the marks came from"
run _kg_in "$C" "$KG" run --diagnostic --skip-selftest --filter axpy --marks-ref origin/kgate-marks --report "$T/d.json"
[ "$rc" -eq 3 ] && ok || { bad "run --marks-ref without a GPU: exit $rc, want 3"; cat "$T/err"; }
expect_jq ".marks_source.kind == \"ref\" and .marks_source.commit == \"$tip\"" "$T/d.json"
run _kg_in "$C" "$KG" run --diagnostic --skip-selftest --filter axpy --report "$T/f.json"
expect_jq ".marks_source == {\"kind\":\"file\",\"path\":\"$C/$M\"}" "$T/f.json"
run _kg_in "$T" "$KG" bench --filter axpy --report "$T/n.json"
expect_jq '.marks_source == {"kind":"none"}' "$T/n.json"
check -C "$C" "run --production --marks-ref" 2 "--marks-ref is for diagnostic runs" -- "$KG" run --production --marks-ref origin/kgate-marks
check -C "$C" "run --marks-branch without --production" 2 "need --production" -- "$KG" run --marks-branch kgate-marks

# 6. The guard. Clean twin: a change that leaves the marks file alone passes.
cd "$C"
git checkout -q -b feature origin/main
echo change >>README; git commit -qam "a code change"
check "guard: untouched" 0 "is as at origin/main .*: ok" -- "$KG" marks guard --base origin/main
# The planted defect: a PR that raises its own mark's bar down (edits the file).
jq '(.marks[] | select(.case == "a/n=1") | .value) = 50' "$M" >"$T/m.json" && cp "$T/m.json" "$M"
check "guard: work tree edit" 1 "in the work tree differs from the base" -- "$KG" marks guard --base origin/main
expect_grep "^~ a/n=1 \[$DEV\] time_us_warm: 10.2 -> 50 " "$T/out" "the guard does not name the changed mark"
git commit -qam "relax a mark"
check "guard: committed edit" 1 "at HEAD differs from the base" -- "$KG" marks guard --base origin/main
expect_grep "^~ a/n=1 .*10.2 -> 50 " "$T/out"
expect_grep "FAIL: this change edits $M" "$T/out"
! grep -q "in the work tree" "$T/out" && ok || bad "guard repeats the same change for the work tree"
git checkout -q origin/main -- "$M"; git commit -qm "restore"
check "guard: restored" 0 "ok" -- "$KG" marks guard --base origin/main
git rm -q "$M"; git commit -qm "drop the marks"
check "guard: deleted" 1 "at HEAD is deleted" -- "$KG" marks guard --base origin/main
git checkout -q -b fresh origin/main
printf '{"version": 1, "marks": [' >"$M"; git add "$M"; git commit -qm "garbage"
check "guard: unloadable" 1 "does not load" -- "$KG" marks guard --base origin/main
# Both sides unloadable, each differently: each side names its own parse error.
printf 'nope' >"$M"
check "guard: two unloadable sides" 1 "does not load" -- "$KG" marks guard --base origin/main
[ "$(grep -c "does not load: .*$M at HEAD" "$T/out")" = 1 ] && [ "$(grep -c "does not load: .*$M in the work tree" "$T/out")" = 1 ] && ok || bad "each side must show its own parse error: $(cat "$T/out")"
git checkout -q -- "$M"
check "guard: unknown base" 2 "--base origin/nope: no such ref" -- "$KG" marks guard --base origin/nope
check "guard: needs --base" 2 "--base" -- "$KG" marks guard

# 7. The same credential rules over smart HTTP: KGATE_GIT_TOKEN pushes the marks branch.
SRV=$T/srv; mkdir -p "$SRV"; git clone -q --bare "$BARE" "$SRV/marks.git"
JOB=job-$RANDOM$RANDOM; TOK=write-$RANDOM$RANDOM
"$PY" "$SRC/tests/git_http_server.py" "$SRV" "$T/port" "$T/server.log" "$JOB" "$TOK" &
spid=$!; on_exit "kill $spid 2>/dev/null"
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.1; done
H=$T/http; git clone -q "$BARE" "$H"; cd "$H"
git remote set-url origin "http://gitlab-ci-token:$JOB@127.0.0.1:$(cat "$T/port")/marks.git"
report "$T/r5.json" run-5 "d/n=4:NO_MARK:40:39.5:40.4:0.01"
check "http push with the token" 0 "pushed" -- env KGATE_GIT_TOKEN="$TOK" "$KG" marks advance --from-report "$T/r5.json" --push origin
[ "$(markval "$SRV/marks.git" kgate-marks d/n=4)" = "40.4" ] && ok || bad "the http remote lacks the new mark"
! grep -rq -e "$TOK" "$T/out" "$T/err" "$T/server.log" && ok || bad "the token was printed or logged"
# 8. Issue #28 item 10: an index.lock failure on --marks-branch HEAD leaves the marks file kgate
#    wrote in the work tree (untracked: the ref was rolled back to a commit without it). The
#    next advance restores what kgate itself left (.git/kgate-pending records the path and the
#    blob written), never a file edited since.
for variant in restore edited; do
    L=$T/lock-$variant; scratch_repo "$L"; cd "$L"
    report "$T/rl.json" run-lock "e/n=5:NO_MARK:50:49.5:50.4:0.01"
    : >.git/index.lock
    check "$variant: advance with index.lock held fails" 4 "updating the work tree copy of $M failed: .*index is locked.*until the next advance restores it" -- "$KG" marks advance --from-report "$T/rl.json" --marks-branch HEAD
    rm -f .git/index.lock
    [ "$(git rev-list --count HEAD)" = 1 ] && ok || bad "$variant: the failed advance left a commit on HEAD"
    [ -e .git/kgate-pending ] && ok || bad "$variant: no .git/kgate-pending after the failure"
    if [ $variant = restore ]; then
        check "restore: the next advance cleans kgate's leftover" 0 "committed .* on refs/heads/" -- "$KG" marks advance --from-report "$T/rl.json" --marks-branch HEAD
        [ "$(grep -c "^kgate: restored $M left by an interrupted advance$" "$T/out")" = 1 ] && ok || bad "restore: no one-line notice: $(cat "$T/out")"
        [ "$(markval . HEAD e/n=5)" = "50.4" ] && [ -z "$(git status --porcelain)" ] && [ ! -e .git/kgate-pending ] && ok || bad "restore: after the second advance: $(git status --porcelain)"
    else
        jq '.marks[0].value = 99' "$M" >"$T/e.json" && cp "$T/e.json" "$M"; cp "$M" "$T/edited.json"
        check "edited: the next advance refuses, naming the file" 2 "$M has uncommitted changes .*changed after an interrupted advance wrote it" -- "$KG" marks advance --from-report "$T/rl.json" --marks-branch HEAD
        cmp -s "$M" "$T/edited.json" && [ "$(git rev-list --count HEAD)" = 1 ] && ok || bad "edited: the user's edit was touched or a commit made"
        ! grep -q "kgate: restored" "$T/out" "$T/err" && ok || bad "edited: claims to have restored"
    fi
done
# The same failure on a tracked marks file: the roll back already rewrote HEAD's bytes, so the
# next advance finds it clean, drops the stale record and commits (no notice needed).
L=$T/lock-tracked; scratch_repo "$L"; cd "$L"
report "$T/rk.json" run-k0 "e/n=5:NO_MARK:50:49.5:50.4:0.01"
check "tracked: seed" 0 "committed" -- "$KG" marks advance --from-report "$T/rk.json" --marks-branch HEAD
report "$T/rk1.json" run-k1 "e/n=5:IMPROVED:40:39.5:40.4:0.01"
: >.git/index.lock
check "tracked: advance with index.lock held fails" 4 "index is locked.*rolled back" -- "$KG" marks advance --from-report "$T/rk1.json" --marks-branch HEAD
rm -f .git/index.lock
check "tracked: the next advance commits" 0 "committed .* on refs/heads/" -- "$KG" marks advance --from-report "$T/rk1.json" --marks-branch HEAD
[ "$(markval . HEAD e/n=5)" = "40.4" ] && [ -z "$(git status --porcelain)" ] && [ ! -e .git/kgate-pending ] && ok || bad "tracked: after the second advance: $(git status --porcelain)"

finish
