#!/usr/bin/env bash
# --shard I/N and `kgate report --merge` (issue #27 item 4) on the CPU: 4 shards of a no-GPU
# diagnostic run merge equal, verdict for verdict, to the unsharded run (exit code and summary
# too); the shards are disjoint, complete and the same on every invocation; each refusal
# (overlapping, missing, mismatched seed/N/commit/selection, unsigned or forged production
# shard, incomplete, foreign row, not a shard, already merged) names the file and the rule; a
# production shard never advances alone and the merged signed report does.
# Usage: test_shard_merge.sh KGATE KG_REPORT_SIGN
. "$(dirname "$0")/lib.sh"
KG=$(realpath "$1")
SIGN=$(realpath "$2")
git_isolate
unset KGATE_REPORT_KEY KGATE_GIT_TOKEN
export KGATE_MARKS_BRANCH=HEAD
rows() { jq -c '[.results[] | [.gate, .case, .verdict]] | sort' "$1"; }

# ---- a CPU run, unsharded and in 4 shards ---------------------------------------------------
SEL=(--filter '^(axpy|reduce_sum|softmax)/')
run "$KG" run --diagnostic --skip-selftest --seed 7 "${SEL[@]}" --report "$T/full.json"; full_rc=$rc
[ -s "$T/full.json" ] && ok || { bad "unsharded run: no report (exit $rc)"; cat "$T/out" "$T/err"; }
n_full=$(jq '[.results[] | .case] | unique | length' "$T/full.json")
[ "$n_full" -ge 4 ] && ok || bad "the selection has $n_full cases, want >= 4"
for i in 1 2 3 4; do
    check "shard $i/4" "$full_rc" "shard $i/4: [0-9]+ of $n_full selected case" -- \
        "$KG" run --diagnostic --skip-selftest --seed 7 "${SEL[@]}" --shard "$i/4" --report "$T/s$i.json"
done
jq -e '.shard.index == 2 and .shard.count == 4 and (.shard.selection_hash | length) == 64' \
    "$T/s2.json" >/dev/null && ok || bad "shard 2's report lacks its shard"
# complete and disjoint: every case once over the four
all=$(jq -s -c '[.[].shard.cases[]] | sort' "$T"/s[1-4].json)
uniq=$(jq -s -c '[.[].shard.cases[]] | unique' "$T"/s[1-4].json)
want=$(jq -c '[.results[] | .case] | unique' "$T/full.json")
[ "$all" = "$uniq" ] && ok || bad "a case is in two shards: $all"
[ "$uniq" = "$want" ] && ok || bad "the shards' cases $uniq are not the selection $want"
# stable: the same cases again (another process, another order of the flags)
"$KG" run --shard 3/4 --seed 7 --diagnostic "${SEL[@]}" --skip-selftest --report "$T/s3b.json" >/dev/null 2>&1
[ "$(jq -c .shard.cases "$T/s3.json")" = "$(jq -c .shard.cases "$T/s3b.json")" ] && ok \
    || bad "shard 3/4 differs between two invocations"

check "merge 4 shards" "$full_rc" "report --merge: 4 shard\(s\)" -- \
    "$KG" report --merge "$T/merged.json" "$T/s3.json" "$T/s1.json" "$T/s4.json" "$T/s2.json"
[ "$(rows "$T/merged.json")" = "$(rows "$T/full.json")" ] && ok \
    || { bad "merged verdicts differ from the unsharded run"; diff <(rows "$T/full.json" | jq .) <(rows "$T/merged.json" | jq .); }
[ "$(jq -c .summary "$T/merged.json")" = "$(jq -c .summary "$T/full.json")" ] && ok \
    || bad "merged summary $(jq -c .summary "$T/merged.json") != $(jq -c .summary "$T/full.json")"
expect_jq '.shard.merged and .shard.count == 4 and (.shard.parts | length) == 4 and (.shard | has("index") | not)' "$T/merged.json"
expect_jq '.run_id | startswith("merged-")' "$T/merged.json"
# the planted defect the equality check must catch: a merge that loses one shard's rows
jq 'del(.results[-1])' "$T/merged.json" >"$T/lossy.json"
[ "$(rows "$T/lossy.json")" != "$(rows "$T/full.json")" ] && ok || bad "the equality check misses a lost row"

# ---- usage errors -------------------------------------------------------------------------
check "--shard without --seed" 2 "needs an explicit --seed" -- "$KG" parity --shard 1/2
check "--shard 0/2" 2 "expected I/N" -- "$KG" parity --shard 0/2 --seed 1
check "--shard 3/2" 2 "expected I/N" -- "$KG" parity --shard 3/2 --seed 1
check "more shards than cases" 2 "at most one shard per case" -- "$KG" parity --filter '^axpy/n=1/f32$' --shard 1/2 --seed 1
check "ab --shard" 2 "ab: --shard is not supported" -- "$KG" ab "$KG" "$KG" --shard 1/2 --seed 1
check "selftest --shard" 2 "selftest: --shard is not supported" -- "$KG" selftest --shard 1/2 --seed 1
check "--merge with --from" 2 "--merge takes only shard reports" -- "$KG" report --merge "$T/x.json" --from "$T/s1.json"
check "stray argument" 2 "shard reports follow --merge" -- "$KG" report --from "$T/s1.json" --junit - "$T/s2.json"

# ---- refusals, each naming the file and the rule ------------------------------------------
refuse() { # refuse DESC PATTERN SHARD...
    local desc=$1 pat=$2; shift 2
    rm -f "$T/never.json"
    check "$desc" 2 "$pat" -- "$KG" report --merge "$T/never.json" "$@"
    [ ! -e "$T/never.json" ] && ok || bad "$desc: a merged report was written"
}
refuse "missing shard" "missing shard 4/4 \(given 3 of 4" "$T/s1.json" "$T/s2.json" "$T/s3.json"
refuse "overlapping shards" "s3b.json: refused: overlapping shards: .*s3.json is shard 3/4 too" \
    "$T/s1.json" "$T/s2.json" "$T/s3.json" "$T/s3b.json" "$T/s4.json"
"$KG" run --diagnostic --skip-selftest --seed 8 "${SEL[@]}" --shard 2/4 --report "$T/seed8.json" >/dev/null 2>&1
refuse "mismatched seed" "seed8.json: refused: mismatched shard: its seed \(8\) differs" \
    "$T/s1.json" "$T/seed8.json" "$T/s3.json" "$T/s4.json"
"$KG" run --diagnostic --skip-selftest --seed 7 "${SEL[@]}" --shard 2/3 --report "$T/n3.json" >/dev/null 2>&1
refuse "mismatched N" "n3.json: refused: mismatched shard: its shard count N \(3\)" \
    "$T/s1.json" "$T/n3.json" "$T/s3.json" "$T/s4.json"
"$KG" run --diagnostic --skip-selftest --seed 7 --filter '^(axpy|reduce_sum)/' --shard 2/4 \
    --report "$T/sel.json" >/dev/null 2>&1
refuse "mismatched selection" "sel.json: refused: mismatched shard: its selection" \
    "$T/s1.json" "$T/sel.json" "$T/s3.json" "$T/s4.json"
jq '.provenance.commit = "0123456789012345678901234567890123456789"' "$T/s2.json" >"$T/commit.json"
refuse "mismatched commit" "commit.json: refused: mismatched shard: its commit under test" \
    "$T/s1.json" "$T/commit.json" "$T/s3.json" "$T/s4.json"
jq '.device = {"class": "NVIDIA A100/sm_80"}' "$T/s2.json" >"$T/class.json"
refuse "mismatched GPU class" "class.json: refused: mismatched shard: its GPU class" \
    "$T/s1.json" "$T/class.json" "$T/s3.json" "$T/s4.json"
jq '.shard.cases = []' "$T/s2.json" >"$T/short.json"
refuse "a shard without its cases" "refused: the shards' [0-9]+ cases are not the selection" \
    "$T/s1.json" "$T/short.json" "$T/s3.json" "$T/s4.json"
other=$(jq -r '.shard.cases[0]' "$T/s1.json")
jq --arg c "$other" '.results += [{"gate":"parity","case":$c,"verdict":"PASS","message":"","figures":{}}]' \
    "$T/s2.json" >"$T/foreign.json"
refuse "a row of another shard's case" "foreign.json: refused: a parity result for '.*', which is not one of shard 2's cases" \
    "$T/s1.json" "$T/foreign.json" "$T/s3.json" "$T/s4.json"
jq '.incomplete = true' "$T/s2.json" >"$T/inc.json"
refuse "incomplete shard" "inc.json: refused: shard 2/4 is incomplete" "$T/s1.json" "$T/inc.json" "$T/s3.json" "$T/s4.json"
refuse "not a shard report" "full.json: refused: not a shard report" "$T/full.json"
refuse "a merged report" "merged.json: refused: already a merged report" "$T/merged.json"

# ---- production: signed shards, one verdict, the advance from the merged report -----------
export KGATE_REPORT_KEY=test-report-key-$RANDOM-$RANDOM-0123456789
R=$T/repo; scratch_repo "$R"; cd "$R"
HEAD=$(git rev-parse HEAD)
SH=$(printf '%s\n' a/n=1 b/n=2 | LC_ALL=C sort | sha256sum | cut -c1-64)
AH=$(printf 'x' | sha256sum | cut -c1-64)
prod_shard() { # prod_shard FILE INDEX CASE SELFTEST_VERDICT
    jq -n --arg c "$3" --argjson i "$2" --arg commit "$HEAD" --arg sh "$SH" --arg ah "$AH" --arg st "$4" '
      {schema: "kgate-report/1", command: "run", mode: "production", certifying: true,
       run_id: "shard-run-\($i)", started_at: "2026-12-01T00:0\($i):00Z", seed: 7,
       device: {class: "NVIDIA H200/sm_90", uuid: "GPU-\($i)", driver_cuda_version: "13.0", runtime_version: "13.0"},
       provenance: {commit: $commit}, gates: ["parity","preflight","hotpath","bench","counters"],
       results: ([{gate: "selftest", case: "defect/parity/x", verdict: $st, message: "", figures: {}}] +
         [("parity","preflight","hotpath") as $g | {gate: $g, case: $c, verdict: "PASS", message: "", figures: {}}] +
         [{gate: "counters", case: $c, verdict: "PASS", message: "", figures: {decision: "OK", why: "", device_class: "x", kernels: 1, passes: 1, metrics: {}}},
          {gate: "bench", case: $c, verdict: "PASS", message: "", figures: {decision: "NO_MARK", metric: "time_us_warm",
            median_us: 10, ci_lo_us: 9.9, ci_hi_us: 10.2, band_rel: 0.01, samples: 200, processes: 3, env_lo_us: 10, env_hi_us: 10}}]),
       marks_update: {committed: false, reason: "shard \($i)/2: a shard never commits"},
       shard: {index: $i, count: 2, selection_n: 2, selection_hash: $sh, assignment_hash: $ah,
               balance: "case count", cases: [$c]}}' >"$1" && "$SIGN" "$1" || bad "making $1"
}
prod_shard "$T/p1.json" 1 a/n=1 PASS
prod_shard "$T/p2.json" 2 b/n=2 PASS
check "a shard never advances alone" 2 "p1.json: a shard report .* never advances marks alone" -- \
    "$KG" marks advance --from-report "$T/p1.json"
check "merge signed shards" 0 "2 shard\(s\): 11 passed" -- "$KG" report --merge "$T/pm.json" "$T/p2.json" "$T/p1.json"
expect_jq '.signature.alg == "hmac-sha256" and .started_at == "2026-12-01T00:01:00Z" and (has("marks_update") | not)' "$T/pm.json"
expect_jq '[.shard.parts[].device_uuid] == ["GPU-1", "GPU-2"]' "$T/pm.json"
check "advance from the merged report" 0 "committed" -- "$KG" marks advance --from-report "$T/pm.json"
[ "$(git show HEAD:baselines/high_water.json | jq -c '[.marks[].case] | sort')" = '["a/n=1","b/n=2"]' ] && ok \
    || bad "the merged advance did not set both shards' marks"
check "the merged report twice" 0 "already applied" -- "$KG" marks advance --from-report "$T/pm.json"
# a forged shard, an unsigned one, another key
jq '.results[1].verdict = "PASS" | .seed = 7' "$T/p2.json" >"$T/same.json"
jq '(.results[] | select(.gate == "bench")).figures.median_us = 1' "$T/p2.json" >"$T/forged.json"
refuse "a forged production shard" "forged.json: .*signature" "$T/p1.json" "$T/forged.json"
jq 'del(.signature)' "$T/p2.json" >"$T/unsigned.json"
refuse "an unsigned production shard" "unsigned.json: unsigned report" "$T/p1.json" "$T/unsigned.json"
# one shard's selftest failed: the merged report keeps the worst verdict and fails
prod_shard "$T/p2f.json" 2 b/n=2 FAIL
check "a shard's failed selftest fails the merge" 1 "1 failed" -- "$KG" report --merge "$T/pmf.json" "$T/p1.json" "$T/p2f.json"
expect_jq '[.results[] | select(.gate == "selftest") | .verdict] == ["FAIL"]' "$T/pmf.json"
finish
