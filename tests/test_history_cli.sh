#!/usr/bin/env bash
# Every run on record (issue #17): `kgate history append` takes a report's bench rows onto the
# kgate-history branch (one JSON line per row, one file per device class; the work tree, HEAD
# and the marks file untouched), refuses hostile reports (control characters, wrong schema,
# duplicate keys, an unsigned production report when a key is set), adds nothing twice,
# survives parallel appends (compare-and-swap), pushes and continues from a fresh clone;
# `kgate history render` draws the charts (step marks, whiskers, legend, lowerings from the
# marks branch) for a selection.
# Usage: test_history_cli.sh KGATE KG_REPORT_SIGN PYTHON3
. "$(dirname "$0")/lib.sh"
KG=$(realpath "$1")
SIGN=$(realpath "$2")
PY=${3:-python3}
git_isolate
unset KGATE_GIT_AUTHOR_NAME KGATE_GIT_AUTHOR_EMAIL KGATE_GIT_TOKEN KGATE_HISTORY_BRANCH KGATE_MARKS_BRANCH KGATE_REPORT_KEY
H200="NVIDIA H200/sm_90"
F=history/NVIDIA_H200_sm_90.jsonl
"$PY" "$SRC/tests/history_reports.py" "$T/rep" 6 || die "history_reports.py"
nrec() { git -C "${2:-.}" show "kgate-history:$1" 2>/dev/null | grep -c . ; }

BARE=$T/origin.git; git init -q --bare "$BARE"
R=$T/repo; scratch_repo "$R"; cd "$R"; git remote add origin "$BARE"; git push -q origin main
head0=$(git rev-parse HEAD)

# 1. One record per measured bench row; the SKIP row is not one.
check "append" 0 "committed .* on refs/heads/kgate-history: 3 record\(s\) in $F" -- "$KG" history append --report "$T/rep/h200-1.json"
[ "$(nrec $F)" = 3 ] && ok || bad "want 3 records, have $(nrec $F)"
[ "$(git rev-parse HEAD)" = "$head0" ] && [ -z "$(git status --porcelain)" ] && ok || bad "append touched HEAD or the work tree"
[ "$(git ls-tree -r --name-only kgate-history)" = "$F" ] && ok || bad "the history branch holds more than $F"
git show "kgate-history:$F" | head -1 >"$T/rec.json"
expect_jq '.case == "axpy/n=33554433/f32" and .device_class == "NVIDIA H200/sm_90" and .metric == "time_us_warm" and .samples == 400 and .k == 16 and .run_id == "h200-run-1" and .date == "2026-11-01T02:00:00Z" and .mode == "diagnostic" and .decision == "NO_MARK" and .mark == null and (.commit | length) == 40 and .ci_lo_us < .median_us and .median_us < .ci_hi_us' "$T/rec.json"
# The power state label (issue #14: figures.power_state.label), once the bench figures carry it.
if grep -q '^#define KG_FIG_POWER_LABEL ' "$SRC/gates/core/report_keys.h"; then
    expect_jq '.power_state == "full-clock"' "$T/rec.json"
else
    expect_jq 'has("power_state") | not' "$T/rec.json"
fi
check "append again" 0 "already holds .*nothing committed" -- "$KG" history append --report "$T/rep/h200-1.json"
[ "$(git rev-list --count kgate-history)" = 1 ] && ok || bad "a second append of one report committed"
check "second class, own file" 0 "NVIDIA_H100_80GB_HBM3_sm_90.jsonl" -- "$KG" history append --report "$T/rep/h100-1.json"
check "--branch" 0 "refs/heads/perf-history" -- "$KG" history append --report "$T/rep/h200-2.json" --branch perf-history
check "KGATE_HISTORY_BRANCH" 0 "refs/heads/envh" -- env KGATE_HISTORY_BRANCH=envh "$KG" history append --report "$T/rep/h200-2.json"

# 2. Reports are untrusted: each refusal names the file and the field, commits nothing.
tip=$(git rev-parse kgate-history)
hostile() { # hostile DESC PATTERN JQ-EDIT
    jq "$3" "$T/rep/h200-3.json" >"$T/bad.json"
    check "refused: $1" 2 "$2" -- "$KG" history append --report "$T/bad.json"
}
hostile "control character in a case id" "bad.json: results\[0\]: 'case' has a control character" '.results[0].case = "axpy\u001b[31m"'
hostile "control character in the run id" "'run_id' has a control character" '.run_id = "r\nfake"'
hostile "C1 control character" "'case' has a control character" '.results[1].case = "a\u0085b"'
hostile "an oversized case id" "'case' is .* bytes, over the limit" ".results[0].case = \"$(printf 'x%.0s' $(seq 300))\""
hostile "a negative median" "'median_us' must be a finite number" '.results[0].figures.median_us = -3'
hostile "a metric that is not one" "metric 'Time Us' is not" '.results[0].figures.metric = "Time Us"'
hostile "a bad date" "date 'yesterday'" '.started_at = "yesterday"'
hostile "a reversed interval" "is reversed" '.results[0].figures.ci_lo_us = 1e9'
hostile "a commit that is not one" "commit '../x'" '.provenance.commit = "../x"'
hostile "not a kgate report" "not a kgate report" '.schema = "other/1"'
hostile "results not an array" "'results' must be an array" '.results = {}'
printf '{"schema":"kgate-report/1","schema":"x"}' >"$T/dup.json"
check "refused: duplicate keys" 2 "dup.json" -- "$KG" history append --report "$T/dup.json"
check "refused: no such file" 2 "nope.json" -- "$KG" history append --report "$T/nope.json"
jq '.mode = "production" | .certifying = true' "$T/rep/h200-3.json" >"$T/prod.json"
check "refused: unsigned production report with a key set" 2 "prod.json" -- env KGATE_REPORT_KEY=history-key-0123456789abcdef "$KG" history append --report "$T/prod.json"
KGATE_REPORT_KEY=history-key-0123456789abcdef "$SIGN" "$T/prod.json" || bad "signing"
[ "$(git rev-parse kgate-history)" = "$tip" ] && ok || bad "a refused report committed something"
check "signed production report" 0 "committed" -- env KGATE_REPORT_KEY=history-key-0123456789abcdef "$KG" history append --report "$T/prod.json"
git show "kgate-history:$F" | tail -1 | jq -e '.mode == "production"' >/dev/null && ok || bad "the production record is not marked production"
check "usage: --report" 2 "--report" -- "$KG" history append
check "usage: --remote without --push" 2 "--remote needs --push" -- "$KG" history append --report "$T/rep/h200-4.json" --remote origin
check "usage: bad branch" 2 "not a valid branch" -- "$KG" history append --report "$T/rep/h200-4.json" --branch 'a..b'

# 3. A report a real command writes without a GPU: no measured row, nothing recorded.
run "$KG" bench --filter axpy --report "$T/cpu.json"
# Its SKIP rows are counted as skipped, not "(0 skipped)".
NSKIP=$(jq '[.results[] | select(.gate == "bench" and .verdict == "SKIP")] | length' "$T/cpu.json")
[ "$NSKIP" -gt 0 ] && ok || bad "the no-GPU bench report has no SKIP row"
check "no-GPU report" 0 "no measured bench row \($NSKIP skipped, all SKIP: run without a GPU\): nothing recorded" -- "$KG" history append --report "$T/cpu.json"

# 4. Parallel appends all land (compare-and-swap on the ref, retried).
pids=()
for i in 4 5 6; do "$KG" history append --report "$T/rep/h200-$i.json" >"$T/par$i.out" 2>&1 & pids+=($!); done
for p in "${pids[@]}"; do wait "$p" || bad "a parallel append failed: $(cat "$T"/par*.out)"; done
[ "$(nrec $F)" = 15 ] && ok || bad "parallel appends: want 15 records, have $(nrec $F)"

# 5. Push, then a fresh clone appends on top of the remote's history.
check "push" 0 "pushed" -- "$KG" history append --report "$T/rep/h100-2.json" --push
[ "$(git -C "$BARE" rev-parse kgate-history)" = "$(git rev-parse kgate-history)" ] && ok || bad "kgate-history not pushed"
C=$T/clone; git clone -q "$BARE" "$C"
check -C "$C" "fresh clone push" 0 "pushed" -- "$KG" history append --report "$T/rep/h100-3.json" --push
[ "$(git -C "$BARE" rev-list --count kgate-history)" = "$(( $(git rev-list --count kgate-history) + 1 ))" ] && ok || bad "the clone's append is not on top of the remote's"
check "stale local, push" 0 "pushed" -- "$KG" history append --report "$T/rep/h100-4.json" --push
[ "$(nrec history/NVIDIA_H100_80GB_HBM3_sm_90.jsonl "$BARE")" = 12 ] && ok || bad "after three pushes the remote has $(nrec history/NVIDIA_H100_80GB_HBM3_sm_90.jsonl "$BARE") H100 records, want 12"
git -C "$BARE" fsck --no-progress >"$T/fsck" 2>&1 && ok || { bad "fsck"; cat "$T/fsck"; }

# 6. Render: the charts, a selection, the lowerings of the marks branch.
mkdir -p baselines
printf '{"version":1,"marks":[{"device_class":"%s","case":"axpy/n=33554433/f32","metric":"time_us_warm","direction":"lower_is_better","value":140,"band_rel":0.01,"run_median":139.5,"ci_lo":139,"ci_hi":140,"samples":400,"runs":1,"provenance":{"commit":"%s","date":"2026-11-01T02:00:00Z","run_id":"r","driver":"580.1","cuda":"13.0","set_by":"kgate run --production"}}]}\n' "$H200" "$head0" >baselines/high_water.json
git add baselines; git commit -qm "marks"
check "a lowering on the marks branch" 0 "committed" -- "$KG" marks lower --case axpy/n=33554433/f32 --device "$H200" --to 150 --reason "driver 580 regressed axpy"
check "render" 0 "history: 27 record\(s\), 3 chart\(s\)" -- "$KG" history render --out "$T/charts"
[ "$(ls "$T/charts"/*.svg | wc -l)" = 3 ] && [ -s "$T/charts/index.html" ] && ok || bad "render wrote $(ls "$T/charts")"
A=$(ls "$T/charts"/*axpy*.svg)
expect_grep 'class="mark"' "$A" "no mark step line"
expect_grep 'class="whisker"' "$A" "no whiskers"
expect_grep 'NVIDIA H100 80GB HBM3/sm_90' "$A" "no legend entry for the second class"
expect_grep 'class="lowered"' "$A" "the lowering is not drawn"
# run 5 regressed (history_reports.py): ringed; the page's heading is the title, the chart's not
expect_grep '<circle class="regressed"' "$A" "the regressed run is not ringed"
nreg=$(git show kgate-history:history/ | grep jsonl | while read -r f; do git show "kgate-history:history/$f"; done | grep '"case":"axpy/' | grep -c '"decision":"REGRESSED"')
[ "$nreg" -ge 1 ] && [ "$(grep -c 'class="regressed"' "$A")" = "$nreg" ] && ok || bad "want one ring per regressed axpy run ($nreg), got $(grep -c 'class="regressed"' "$A")"
[ "$(grep -c 'font-weight="bold"' "$A")" = 1 ] && ok || bad "the SVG file lacks its title"
grep -q 'font-weight="bold"' "$T/charts/index.html" && bad "the page shows each title twice" || ok
expect_grep '<svg class="trend" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 [0-9]+ [0-9]+" width="100%"|<svg xmlns="http://www.w3.org/2000/svg" class="trend" viewBox="0 0 [0-9]+ [0-9]+" width="100%"' "$A" "the chart does not scale (viewBox, width 100%)"
expect_grep '>[0-9]+ us</text>' "$A" "the y ticks carry no unit"
expect_grep '<title>lowered to 150: driver 580 regressed axpy</title>' "$A" "the lowering's reason is not shown"
expect_grep 'lowered to 150: driver 580 regressed axpy' "$T/charts/index.html" "the page does not list the lowering"
! grep -q 'class="lowered"' "$(ls "$T/charts"/*gemm*.svg)" && ok || bad "a lowering drawn on the wrong chart"
want=$(git show kgate-history:history/ | grep jsonl | while read -r f; do git show "kgate-history:history/$f"; done | grep -c '"case":"axpy/')
"$PY" - "$A" "$want" <<'PY' && ok || bad "the chart is not valid XML, or not one whisker per axpy record ($want)"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
w = [e for e in root.iter(ns + "path") if e.get("class") == "whisker"]
m = [e for e in root.iter(ns + "path") if e.get("class") == "mark"]
assert len(w) == int(sys.argv[2]), (len(w), sys.argv[2])
assert len(m) == 2, len(m)  # one step line per device class
PY
check "render --case" 0 "2 chart\(s\)" -- "$KG" history render --out "$T/sel" --case '^(axpy|softmax)/'
check "render --device" 0 "1[0-9] record\(s\), 3 chart\(s\)" -- "$KG" history render --out "$T/dev" --device "$H200"
! grep -q "H100" "$T/dev/index.html" && ok || bad "--device kept another class"
check "render: nothing selected" 0 "0 chart" -- "$KG" history render --out "$T/none" --case zzz
expect_grep "No runs on record" "$T/none/index.html"
check "render: bad regex" 2 "--case '\(': not a regular expression" -- "$KG" history render --out "$T/x" --case '('
check "render: unknown branch" 2 "history nope: no such branch" -- "$KG" history render --out "$T/x" --branch nope
check "render: --out needed" 2 "--out" -- "$KG" history render
check "render: remote ref" 0 "chart" -- "$KG" history render --out "$T/remote" --branch origin/kgate-history

# 7. The history branch is input too, but one bad line must not stop every production job
# (issue #28 item 7): it is skipped and named (branch, file, line, what is wrong, how to
# repair); render draws the good lines, append commits and leaves the bad line out.
mkbranch() { # mkbranch NAME FILE: a branch whose history/ holds FILE as $F
    local blob tree
    blob=$(git hash-object -w "$2")
    tree=$(printf '100644 blob %s\tNVIDIA_H200_sm_90.jsonl\n' "$blob" | git mktree)
    tree=$(printf '040000 tree %s\thistory\n' "$tree" | git mktree)
    git update-ref "refs/heads/$1" "$(git commit-tree "$tree" -m "$1")"
}
good=$(git show "kgate-history:$F" | grep -c .)
{ git show "kgate-history:$F"; printf '{"case":"x\\u0007","device_class":"d"}\nnot json at all\n'; } >"$T/edited.jsonl"
mkbranch edited "$T/edited.jsonl"
jq '.run_id = "h200-run-new"' "$T/rep/h200-6.json" >"$T/new.json" # not on kgate-history yet
n=$(git show "edited:$F" | grep -c .)
check "render: an edited history" 0 "skipped edited:$F:$((n - 1)): 'case' has a control character at byte 1 \(repair: remove line $((n - 1)) of $F on branch edited\)" -- "$KG" history render --out "$T/ed" --branch edited
grep -q "skipped edited:$F:$n: " "$T/err" && grep -q "history: $good record(s)" "$T/out" && ok || bad "render: the second bad line or the good records"
check "append: an edited history" 0 "committed .* on refs/heads/edited" -- "$KG" history append --report "$T/new.json" --branch edited
grep -q "skipped refs/heads/edited:$F:$n: .*repair: remove line $n of $F" "$T/err" && grep -q "leaves out the 2 unreadable line" "$T/err" && ok || bad "append: the skipped lines are not named"; cat "$T/err"
[ "$(git show "edited:$F" | grep -c .)" = $((good + 3)) ] && ! git show "edited:$F" | grep -q 'not json' && ok || bad "append: want $good + 3 good records, no bad line"
# A commit run twice: its second run stands beside the first ("<sha> #2"), not on top of it.
check "render: a commit run twice" 0 "chart" -- "$KG" history render --out "$T/twice" --branch edited --case '^axpy/'
expect_grep 'class="xlabel"[^>]*>[0-9a-f]{8} #2<' "$T/twice/index.html" "the second run of a commit has no slot of its own"
# A NUL byte mid-file: only its line is skipped, the records after it stay.
{ git show "kgate-history:$F" | head -1; printf '\0'; git show "kgate-history:$F" | tail -n +2; } >"$T/nul.jsonl"
mkbranch nul "$T/nul.jsonl"
check "append: a NUL byte in the history" 0 "skipped refs/heads/nul:$F:2: " -- "$KG" history append --report "$T/new.json" --branch nul
[ "$(git show "nul:$F" | grep -c .)" = $((good + 2)) ] && ok || bad "append over a NUL byte: want $good - 1 + 3 records, have $(git show "nul:$F" | grep -c .)"
# A flood is no stray line: more than 16 bad lines and more than half the file: refused.
{ git show "kgate-history:$F"; for i in $(seq 40); do echo "junk $i"; done; } >"$T/flood.jsonl"
mkbranch flood "$T/flood.jsonl"
tip=$(git rev-parse flood)
check "append: a flooded history" 2 "40 of $((good + 40)) lines are not history records: more than half, refused" -- "$KG" history append --report "$T/new.json" --branch flood
[ "$(git rev-parse flood)" = "$tip" ] && [ "$(grep -c '^history: skipped' "$T/err")" = 10 ] && grep -q '\.\.\. and 30 more' "$T/err" && ok || bad "flood: committed, or named every line"
check "render: a flooded history" 2 "more than half, refused" -- "$KG" history render --out "$T/fl" --branch flood
{ git show "kgate-history:$F"; for i in $(seq 16); do echo "junk $i"; done; } >"$T/some.jsonl"
mkbranch some "$T/some.jsonl"
check "append: 16 bad lines are tolerated" 0 "committed .* on refs/heads/some" -- "$KG" history append --report "$T/new.json" --branch some

# issue #28: a flooded history (over 64 MiB, 200k records of as many cases) never blocks an
# append: its newest 64 MiB are read, the commit stays within the limit and holds the new
# records; render draws at most 200 charts and says the selection holds more.
"$PY" - "$T/huge.jsonl" <<'EOP' || die "huge history"
import json, sys
r = {"case": "x", "device_class": "NVIDIA H200/sm_90", "metric": "time_us_warm", "median_us": 10.0,
     "ci_lo_us": 9.9, "ci_hi_us": 10.1, "samples": 400, "k": 16, "commit": "0" * 40, "run_id": "r",
     "date": "2026-11-01T00:00:00Z", "mode": "diagnostic", "decision": "NO_MARK", "mark": None}
with open(sys.argv[1], "w") as f:
    for i in range(200000):
        r["case"], r["run_id"] = "flood/%06d/%s" % (i, "p" * 120), "run-%06d" % i
        f.write(json.dumps(r, separators=(",", ":")) + "\n")
EOP
[ "$(stat -c %s "$T/huge.jsonl")" -gt $((64 << 20)) ] || die "the huge history is under 64 MiB"
mkbranch huge "$T/huge.jsonl"
check "append: a history over 64 MiB" 0 "committed .* on refs/heads/huge: 3 record" -- timeout 120 "$KG" history append --report "$T/new.json" --branch huge
grep -q "is $(stat -c %s "$T/huge.jsonl") bytes, over the limit of 67108864: only its newest" "$T/err" && ok || { bad "huge: the cut is not said"; cat "$T/err"; }
size=$(git cat-file -s "huge:$F")
[ "$size" -le $((64 << 20)) ] && [ "$(git show "huge:$F" | grep -c '"run_id":"h200-run-new"')" = 3 ] && ok \
    || bad "huge: committed $size bytes, or without the new records"
check "render: a history over 64 MiB" 0 "chart\(s\)" -- timeout 120 "$KG" history render --out "$T/huge" --branch huge
grep -q "drew the first 200 (case, metric) charts; the selection holds more" "$T/err" && [ "$(ls "$T/huge"/*.svg | wc -l)" = 200 ] \
    && ok || { bad "huge render: not bounded to 200 charts"; cat "$T/err"; }

# 8. An append older than the 500-record window is dropped by the cap, not "already held".
check "cap: the report's records" 0 "committed" -- "$KG" history append --report "$T/rep/h200-6.json" --branch six
git show "six:$F" | jq -c 'range(500) as $i | .run_id = "future-\($i)" | .date = "2030-01-01T00:00:00Z"' >"$T/full.jsonl"
mkbranch full "$T/full.jsonl"
tip=$(git rev-parse full)
check "cap: an append older than the window" 0 "nothing committed from .*h200-6.json; 3 record\(s\) older than the newest 500 of their \(device class, case, metric\) on refs/heads/full: dropped by the cap" -- "$KG" history append --report "$T/rep/h200-6.json" --branch full
! grep -q "already holds" "$T/out" && [ "$(git rev-parse full)" = "$tip" ] && ok || bad "cap: said 'already holds', or committed"
finish
