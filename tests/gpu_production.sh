#!/usr/bin/env bash
# gpu: `kgate run --production` in a scratch repository commits the first marks; a second
# identical run commits nothing new (bench SAME everywhere); `--diagnostic` commits nothing.
# Usage: gpu_production.sh KGATE [FILTER]
. "$(dirname "$0")/lib.sh"
KG=$(realpath "$1")
FILTER=${2:-'^(axpy|softmax)/'}
git_isolate
# These checks cover commits on the checked-out branch (--marks-branch HEAD); the marks
# branch (kgate-marks, the default) is test_marks_branch.sh's.
export KGATE_MARKS_BRANCH=HEAD
R=$T/scratch; scratch_repo "$R"; cd "$R"
M=baselines/high_water.json

"$KG" run --production --filter "$FILTER" --seed 11 --report "$T/p1.json"; rc=$?
skip_if_no_gpu "$rc"
[ "$rc" -eq 0 ] || bad "first production run exit $rc"
[ "$(git rev-list --count HEAD)" -eq 2 ] || bad "first production run: want one marks commit"
# bench marks (time_us_*); the counters gate's exact counts are marks of their own (runs 1)
n=$(jq '[.marks[] | select(.metric | startswith("time_us"))] | length' "$M" 2>/dev/null || echo 0)
nb=$(jq '[.results[] | select(.gate=="bench")] | length' "$T/p1.json")
[ "$n" -eq "$nb" ] && [ "$n" -gt 0 ] || bad "marks: $n, bench results: $nb"
expect_jq '.marks_update.committed == true' "$T/p1.json" "report lacks marks_update.committed"
# The bench was timed in 3 separate processes (the default --bench-processes) and the marks
# carry them: runs 3, their envelope, k.
expect_jq '[.results[] | select(.gate=="bench") | .figures.processes == 3 and (.figures.process_medians_us | length) == 3] | all' \
    "$T/p1.json" "production bench rows are not combined from 3 processes"
expect_jq '[.marks[] | select(.metric | startswith("time_us")) | .runs == 3 and .env_lo <= .env_hi and .k >= 1] | all' "$M" "bench marks lack runs 3, the envelope or k"
expect_jq '[.marks[] | select(.metric | startswith("time_us") | not)] | length > 0' "$M" "no counter marks were set"
[ -z "$(git status --porcelain)" ] || bad "work tree not clean after the commit"
git log --stat -1

"$KG" run --production --filter "$FILTER" --seed 11 --report "$T/p2.json"; rc=$?
[ "$(git rev-list --count HEAD)" -eq 2 ] || bad "second identical run committed (exit $rc)"
jq -r '.results[] | select(.gate=="bench") | "\(.case) \(.figures.decision)"' "$T/p2.json"
ns=$(jq '[.results[] | select(.gate=="bench" and .figures.decision!="SAME")] | length' "$T/p2.json")
[ "$ns" -eq 0 ] || bad "second run: $ns bench decision(s) not SAME"

"$KG" run --diagnostic --filter "$FILTER" --seed 13 --report "$T/d.json"; rc=$?
[ "$(git rev-list --count HEAD)" -eq 2 ] || bad "diagnostic run committed"
expect_jq '.certifying == false and .mode == "diagnostic"' "$T/d.json" "diagnostic report not stamped"
"$KG" marks advance --from-report "$T/d.json" >/dev/null 2>&1; rc=$?
[ "$rc" -eq 2 ] || bad "marks advance accepted a diagnostic report (exit $rc)"
git fsck --strict --no-progress || bad "git fsck"
finish
