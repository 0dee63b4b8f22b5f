#!/usr/bin/env bash
# `kgate compare A.json B.json`: two reports derived with jq from the recorded H200 run (one
# bench median +5% with its CI, one parity verdict change, one case removed) compare to exactly
# those changes in the text, JSON and Markdown; a report the CLI writes here (parity, with or
# without a GPU) against itself has no changes; differing device classes and bench modes warn;
# bad inputs (wrong arguments, missing file, not a report, a duplicate JSON key, a (gate, case)
# given twice, an unwritable output) exit 2 naming the file and write nothing.
. "$(dirname "$0")/lib.sh"
KG=$1
H200=$SRC/tests/data/h200-run-report.json
BC='axpy/n=4097/f32' PC='softmax/rows=33,cols=1023/f32' GONE='rmsnorm/rows=3,cols=1000/bf16'

jq --arg bc "$BC" --arg pc "$PC" --arg gone "$GONE" '
  (.results[] | select(.gate == "bench" and .case == $bc) | .figures)
      |= (.median_us *= 1.05 | .ci_lo_us *= 1.05 | .ci_hi_us *= 1.05)
  | (.results[] | select(.gate == "parity" and .case == $pc)) |= (.verdict = "FAIL")
  | .results |= map(select(.gate != "hotpath" or .case != $gone))' "$H200" >"$T/b.json" \
    || die "jq: derive B"

# ---- the three changes, and nothing else
check "compare A B" 0 "" -- "$KG" compare "$H200" "$T/b.json" --json "$T/c.json" --markdown "$T/c.md"
cp "$T/out" "$T/text"
expect_grep "^compare: 149 matched, 3 changed: 1 verdict change, 1 bench median changed \(1 beyond noise: 1 slower, 0 faster\), 0 parity changes, 1 only in A, 0 only in B$" "$T/text" "summary line"
expect_grep "^  axpy/n=4097/f32 +PASS +PASS +1\.549 +1\.626 +\+5\.00% beyond" "$T/text" "bench row: A us, B us, +5%, beyond noise"
expect_grep "softmax/rows=33,cols=1023/f32 +PASS +FAIL .*verdict PASS -> FAIL$" "$T/text" "verdict change row"
expect_grep "rmsnorm/rows=3,cols=1000/bf16 +PASS +- +only in A$" "$T/text" "case only in A"
expect_grep "^hotpath: 31 cases, 1 changed$" "$T/text" "hotpath count"
expect_grep "^preflight: 31 cases, 0 changed$" "$T/text" "an unchanged gate"
grep -q "warning" "$T/text" "$T/err" && bad "like with like: no warning expected" || ok
expect_jq '.schema == "kgate-compare/1" and .warnings == []' "$T/c.json"
expect_jq '.summary == {matched: 149, changed: 3, verdict_changes: 1, bench_changes: 1,
  beyond_noise: 1, slower: 1, faster: 0, parity_changes: 0, only_a: 1, only_b: 0}' "$T/c.json" "JSON summary"
expect_jq '[.gates[].results[] | select(.changed)] | length == 3' "$T/c.json" "three changed rows"
expect_jq '.gates[] | select(.gate == "bench") | .results[] | select(.case == "axpy/n=4097/f32")
  | .in == "both" and (.change_pct - 5 | fabs) < 1e-9 and .beyond_noise == true
    and .median_us_b > .median_us_a' "$T/c.json" "JSON bench row"
expect_jq '.gates[] | select(.gate == "bench") | .results[] | select(.case == "axpy/n=1/f32")
  | .changed == false and .change_pct == 0 and .beyond_noise == false' "$T/c.json" "an unchanged bench row"
expect_jq '.gates[] | select(.gate == "parity") | .results[] | select(.case == "softmax/rows=33,cols=1023/f32")
  | .verdict_a == "PASS" and .verdict_b == "FAIL" and .max_abs_a == .max_abs_b' "$T/c.json" "JSON verdict row"
expect_jq '.gates[] | select(.gate == "hotpath") | .results[] | select(.case == "rmsnorm/rows=3,cols=1000/bf16")
  | .in == "a" and .verdict_b == null' "$T/c.json" "JSON only-in-A row"
expect_jq '[.gates[] | .cases] == [31, 31, 31, 31, 26]' "$T/c.json" "every case of every gate"
expect_grep '^\| `axpy/n=4097/f32` \| PASS \| PASS \| 1\.549 \| 1\.626 \| \+5\.00% \| beyond \|' "$T/c.md" "Markdown bench row"
expect_grep 'only in A' "$T/c.md"
expect_grep '^\*\*compare: 149 matched, 3 changed' "$T/c.md" "Markdown summary"

# B against A: the mirror image (faster, only in B)
check "compare B A" 0 "1 beyond noise: 0 slower, 1 faster\), 0 parity changes, 0 only in A, 1 only in B" \
    -- "$KG" compare "$T/b.json" "$H200"
# a change inside the noise is reported, not flagged
jq --arg bc "$BC" '(.results[] | select(.gate == "bench" and .case == $bc) | .figures.median_us) *= 1.0005' \
    "$H200" >"$T/small.json"
check "a change within the noise" 0 "1 bench median changed \(0 beyond noise" -- "$KG" compare "$H200" "$T/small.json"
expect_grep "axpy/n=4097/f32 .* \+0\.05% within" "$T/out"
# SKIP -> PASS (a run without a GPU against one with): the bench row and the parity row gain
# their figures, a verdict change each, not a changed median or parity error (issue #30)
jq --arg bc "$BC" --arg pc "$PC" '(.results[] | select((.gate == "bench" and .case == $bc) or
      (.gate == "parity" and .case == $pc))) |= (.verdict = "SKIP" | .message = "no CUDA device" | .figures = {})' \
    "$H200" >"$T/skip.json"
check "SKIP -> PASS" 0 "^compare: 150 matched, 2 changed: 2 verdict changes, 0 bench medians changed \(0 beyond noise: 0 slower, 0 faster\), 0 parity changes" \
    -- "$KG" compare "$T/skip.json" "$H200"

# a capped row decided on clock-normalised time against a report of measured times: the sides'
# bases differ, so their measured times are compared (here unchanged)
jq --arg bc "$BC" '(.results[] | select(.gate == "bench" and .case == $bc) | .figures)
      |= (.raw_median_us = .median_us | .raw_ci_lo_us = .ci_lo_us | .raw_ci_hi_us = .ci_hi_us
          | .median_us *= 0.74 | .ci_lo_us *= 0.74 | .ci_hi_us *= 0.74
          | .time_basis = "replay-clock-normalised")' "$H200" >"$T/norm.json"
check "bases differ: measured times" 0 "^compare: 150 matched, no changes$" -- "$KG" compare "$H200" "$T/norm.json"
jq --arg bc "$BC" '(.results[] | select(.gate == "bench" and .case == $bc) | .figures.raw_median_us) *= 1.05' \
    "$T/norm.json" >"$T/norm5.json"
check "bases differ: a measured +5%" 0 "1 bench median changed" -- "$KG" compare "$H200" "$T/norm5.json"
expect_grep "axpy/n=4097/f32 .* \+5\.00% .*time bases differ: measured times$" "$T/out"
# a report of an older kgate (normalised by the probe's clock, ~10% apart) against the replay
# clock's: two normalised sides of different bases, so both sides' measured times
jq --arg bc "$BC" '(.results[] | select(.gate == "bench" and .case == $bc) | .figures)
      |= (.median_us *= 1.1 | .ci_lo_us *= 1.1 | .ci_hi_us *= 1.1
          | .time_basis = "clock-normalised")' "$T/norm.json" >"$T/old.json"
check "older basis: measured times" 0 "^compare: 150 matched, no changes$" -- "$KG" compare "$T/old.json" "$T/norm.json"
check "older basis: a measured +5%" 0 "1 bench median changed" -- "$KG" compare "$T/old.json" "$T/norm5.json"
expect_grep "axpy/n=4097/f32 .* \+5\.00% .*time bases differ: measured times$" "$T/out"

# ---- a CPU-generated report against itself: no changes
"$KG" parity --filter '^axpy/' --seed 3 --report "$T/p.json" >/dev/null 2>&1
[ -s "$T/p.json" ] || die "parity wrote no report"
check "self-compare" 0 "^compare: [0-9]+ matched, no changes$" -- "$KG" compare "$T/p.json" "$T/p.json" --json "$T/self.json"
expect_jq '.summary.changed == 0 and .summary.only_a == 0 and .summary.only_b == 0' "$T/self.json"

# ---- unlike with unlike: warnings (stderr, the text and the JSON)
jq '.device.class = "NVIDIA A100/sm_80" | .bench.settings.mode = "cold"' "$H200" >"$T/other.json"
check "different device and bench mode" 0 "warning: device classes differ: A NVIDIA H200/sm_90, B NVIDIA A100/sm_80" \
    -- "$KG" compare "$H200" "$T/other.json" --json "$T/w.json"
expect_grep "warning: bench modes differ: A warm, B cold" "$T/err"
expect_jq '.warnings | length == 2' "$T/w.json"
check "a no-GPU report against a GPU one" 0 "device classes differ: A NVIDIA H200/sm_90, B \(no device\)" \
    -- "$KG" compare "$H200" "$T/p.json"
# --json - prints the JSON alone
"$KG" compare "$H200" "$T/b.json" --json - 2>/dev/null | jq -e '.summary.changed == 3' >/dev/null \
    && ok || bad "--json - writes the JSON to stdout"

# ---- bad inputs: exit 2, naming the file, nothing written
echo '{"schema": "kgate-report/1", "results": [], "results": []}' >"$T/dup.json"
echo '{"not": "a report"}' >"$T/notrep.json"
jq '.results += [.results[0]]' "$H200" >"$T/twice.json"
check "missing file" 2 "$T/nope.json" -- "$KG" compare "$H200" "$T/nope.json" --json "$T/x.json"
check "not a report" 2 "notrep.json: field 'schema'" -- "$KG" compare "$T/notrep.json" "$H200" --json "$T/x.json"
check "duplicate JSON key" 2 "dup.json.*duplicate" -- "$KG" compare "$H200" "$T/dup.json" --json "$T/x.json"
check "(gate, case) twice" 2 "twice.json: results\[150\]: gate 'selftest' case '.*' given twice" \
    -- "$KG" compare "$T/twice.json" "$H200" --json "$T/x.json"
check "not JSON" 2 "README.md: not valid JSON" -- "$KG" compare "$H200" "$SRC/README.md" --json "$T/x.json"
[ -e "$T/x.json" ] && bad "a bad input wrote --json" || ok
check "one report" 2 "expected two reports" -- "$KG" compare "$H200"
check "three reports" 2 "unexpected argument|expected two reports" -- "$KG" compare "$H200" "$H200" "$H200"
check "unknown flag" 2 "compare: unknown flag '--frob'" -- "$KG" compare --frob "$H200" "$H200"
check "unwritable --json" 2 "" -- "$KG" compare "$H200" "$T/b.json" --json "$T/no/such/dir/c.json"
[ -s "$T/out" ] && bad "an unwritable output printed a comparison" || ok
check "--help" 0 "usage: kgate compare .*A.json B.json" -- "$KG" compare --help

finish
