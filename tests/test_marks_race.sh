#!/usr/bin/env bash
# Recovery and races of the marks commit (issue 16):
#  1. SIGKILL at random points of `marks advance`: afterwards the repository is as it was or as
#     it should be (the next advance finishes an interrupted update), git fsck passes, the marks
#     load, and the next advance commits;
#  2. a stale ref lock is reported with the command that clears it;
#  3. 16 processes push to one bare repository over file:// at once: every mark lands.
# Usage: test_marks_race.sh KGATE KG_REPORT_SIGN [KILLS]
. "$(dirname "$0")/lib.sh"
KG=$(realpath "$1")
SIGN=$(realpath "$2")
KILLS=${3:-30}
git_isolate
# These checks cover commits on the checked-out branch (--marks-branch HEAD); the marks
# branch (kgate-marks, the default) is test_marks_branch.sh's.
export KGATE_MARKS_BRANCH=HEAD
unset KGATE_GIT_AUTHOR_NAME KGATE_GIT_AUTHOR_EMAIL KGATE_GIT_TOKEN
export KGATE_REPORT_KEY=race-key-$RANDOM$RANDOM-0123456789abcdef
DEV="NVIDIA H200/sm_90"
M=baselines/high_water.json

# report FILE COMMIT RUN_ID CASE:MEDIAN...: a signed production report, NO_MARK/IMPROVED rows
report() {
    local f=$1 c=$2 rid=$3; shift 3
    local rows='[{"gate":"selftest","case":"defect/x","verdict":"PASS","message":"","figures":{}}]'
    for b in "$@"; do
        rows=$(jq -c --arg id "${b%%:*}" --argjson m "${b#*:}" '. + [
          {gate:"parity",case:$id,verdict:"PASS",message:"",figures:{}},
          {gate:"preflight",case:$id,verdict:"PASS",message:"",figures:{}},
          {gate:"hotpath",case:$id,verdict:"PASS",message:"",figures:{}},
          {gate:"counters",case:$id,verdict:"PASS",message:"",figures:{decision:"OK",why:"",
           device_class:"x",kernels:1,passes:1,metrics:{}}},
          {gate:"bench",case:$id,verdict:"PASS",message:"",figures:{decision:"IMPROVED",
           metric:"time_us_warm",median_us:$m,ci_lo_us:($m*0.99),ci_hi_us:($m*1.01),band_rel:0.01,
           samples:100,processes:3,env_lo_us:$m,env_hi_us:$m}}]' <<<"$rows")
    done
    jq -n --arg dev "$DEV" --arg c "$c" --arg rid "$rid" --argjson rows "$rows" '{
      schema:"kgate-report/1",command:"run",mode:"production",certifying:true,run_id:$rid,
      started_at:"2026-12-01T00:00:00Z",seed:7,
      device:{class:$dev,driver_cuda_version:"13.0",runtime_version:"13.0"},
      provenance:{commit:$c},gates:["parity","preflight","hotpath","bench","counters"],results:$rows}' >"$f"
    "$SIGN" "$f" || die "signing $f"
}
near() { [ -n "$1" ] && jq -ne --argjson a "$1" "(\$a - ($2)) | fabs < 1e-9" >/dev/null; }
markval() { git -C "$1" show "$2:$M" | jq -r --arg c "$3" '.marks[] | select(.case==$c) | .value'; }

# ---- 1. SIGKILL at random points ---------------------------------------------------------
R=$T/repo; scratch_repo "$R"; cd "$R"
C0=$(git rev-parse HEAD)
torn=0 killed=0 finished=0
v=1000
for i in $(seq 1 "$KILLS"); do
    v=$((v - 7))
    report "$T/k.json" "$C0" "kill-$i" "k:$v" "other/$i:50"
    "$KG" marks advance --from-report "$T/k.json" >"$T/k.out" 2>&1 &
    pid=$!
    sleep "$(printf '0.%03d' $((RANDOM % 40)))"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null; [ $? -eq 137 ] && killed=$((killed+1))
    git fsck --strict --no-progress >"$T/fsck" 2>&1 || { torn=$((torn+1)); bad "kill $i: git fsck"; cat "$T/fsck"; }
    # The next advance (a better run) must commit, finishing an interrupted update first.
    v=$((v - 7))
    report "$T/n.json" "$C0" "next-$i" "k:$v"
    "$KG" marks advance --from-report "$T/n.json" >"$T/n.out" 2>&1 \
        || { torn=$((torn+1)); bad "kill $i: the next advance failed"; cat "$T/n.out"; continue; }
    grep -q "finished an interrupted update" "$T/n.out" && finished=$((finished+1))
    [ -z "$(git status --porcelain)" ] && cmp -s "$M" <(git show HEAD:$M) \
        || { torn=$((torn+1)); bad "kill $i: work tree or index not at HEAD"; git status --porcelain; }
    "$KG" marks show >/dev/null 2>&1 || { torn=$((torn+1)); bad "kill $i: the marks do not load"; }
    near "$(markval . HEAD k)" "$v * 1.01" || { torn=$((torn+1)); bad "kill $i: mark k is $(markval . HEAD k), want $v * 1.01"; }
done
echo "kills: $KILLS runs, $killed killed by SIGKILL before exiting, $finished interrupted updates finished, $torn torn"
[ "$torn" -eq 0 ] && ok || bad "$torn torn states after kills"
# An interrupted update by hand: the ref moved, the work tree and index did not.
report "$T/h.json" "$C0" "by-hand" "k:1"
"$KG" marks advance --from-report "$T/h.json" >/dev/null 2>&1 || bad "by hand: advance"
git show HEAD~1:$M >"$M"; git add "$M"   # as a kill right after the ref moved leaves it
report "$T/h2.json" "$C0" "by-hand-2" "k:0.9" # h.json again is a replay (issue #28)
check "an interrupted update is finished" 0 "finished an interrupted update" -- "$KG" marks advance --from-report "$T/h2.json"
[ -z "$(git status --porcelain)" ] && ok || bad "not finished: $(git status --porcelain)"
# A real edit of the marks file is still refused.
echo " " >>"$M"
check "an edit is still refused" 2 "uncommitted changes" -- "$KG" marks advance --from-report "$T/h.json"
git checkout -q -- "$M"

# ---- 2. a stale lock -------------------------------------------------------------------------
report "$T/l.json" "$C0" "lock" "k:0.5"
touch .git/refs/heads/main.lock
check "stale ref lock" 4 "rm -f '.*refs/heads/main.lock'" -- "$KG" marks advance --from-report "$T/l.json"
rm -f .git/refs/heads/main.lock
check "after clearing it" 0 "committed" -- "$KG" marks advance --from-report "$T/l.json"

# ---- 3. 16 racing pushes over file:// ---------------------------------------------------------
BARE=$T/origin.git; git init -q --bare "$BARE"
S=$T/seed; scratch_repo "$S"; git -C "$S" push -q "$BARE" main
CS=$(git -C "$S" rev-parse main)
N=16
for i in $(seq 1 $N); do
    git clone -q "file://$BARE" "$T/w$i"
    report "$T/p$i.json" "$CS" "push-$i" "race/$i:$((100 + i))" "shared:$((200 - i))"
done
pids=()
for i in $(seq 1 $N); do
    (cd "$T/w$i" && exec "$KG" marks advance --from-report "$T/p$i.json" --push "file://$BARE") >"$T/p$i.out" 2>&1 &
    pids+=($!)
done
failed=0
for i in $(seq 1 $N); do
    wait "${pids[$((i-1))]}" || { failed=$((failed+1)); bad "pusher $i failed"; cat "$T/p$i.out"; }
done
lost=0
for i in $(seq 1 $N); do
    [ -n "$(markval "$BARE" main "race/$i")" ] || lost=$((lost+1))
done
near "$(markval "$BARE" main shared)" "184 * 1.01" || { lost=$((lost+1)); bad "shared mark is $(markval "$BARE" main shared), want the best 184 * 1.01"; }
retried=$(cat "$T"/p*.out | grep -c "push rejected" || true)
echo "push race: $N pushers over file://, $failed failed, $lost marks lost, $retried rejected pushes retried"
[ "$lost" -eq 0 ] && ok || bad "$lost marks lost in the push race"
git --git-dir="$BARE" fsck --strict --no-progress >"$T/fsck" 2>&1 && ok || { bad "fsck of the remote"; cat "$T/fsck"; }
[ "$(git --git-dir="$BARE" for-each-ref refs/kgate | wc -l)" -eq 0 ] && ok || bad "temporary push refs left on the remote"
finish
