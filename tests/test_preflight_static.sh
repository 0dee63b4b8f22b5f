#!/usr/bin/env bash
# cpu: the static preflight path (no GPU needed; --static forces it on a GPU machine too).
#  - the reference kernels pass against the committed baseline and allowlist;
#  - every planted preflight defect fails with its reason (test baseline/allowlist);
#  - malformed allowlist/baseline: exit 2, the file and entry named, nothing rewritten;
#  - --update-baseline writes a baseline that then passes, and is refused for spillers.
. "$(dirname "$0")/lib.sh"
KG=$1 DEF=$2
BASE="$SRC/baselines/resources.json" ALLOW="$SRC/baselines/spill_allowlist.json"
TBASE="$SRC/tests/data/preflight_defects_baseline.json"
TALLOW="$SRC/tests/data/preflight_defects_allowlist.json"

check "preflight --help" 0 "usage: kgate preflight" -- "$KG" preflight --help

# Reference kernels: no FAIL/ERROR; every case has kernel rows read from the cubins.
check "reference preflight" 0 "" -- "$KG" preflight --static --baseline "$BASE" --allowlist "$ALLOW" \
    --report "$T/ref.json"
nbad=$(jq '[.results[] | select(.gate=="preflight" and (.verdict=="FAIL" or .verdict=="ERROR"))] | length' "$T/ref.json")
nrows=$(jq '[.results[].figures.kernels[]? | select(.path=="static" and .registers > 0)] | length' "$T/ref.json")
nwarn=$(jq '[.results[] | select(.verdict=="WARN")] | length' "$T/ref.json")
[ "$nbad" -eq 0 ] && ok || bad "$nbad reference case(s) FAIL/ERROR"
[ "$nrows" -gt 0 ] && ok || bad "no static kernel rows with registers in the report"
[ "$nwarn" -eq 0 ] || echo "note: $nwarn reference case(s) WARN (baseline older than the kernels? run kgate preflight --static --update-baseline)"
expect_jq '[.results[].figures.kernels[]? | select(.path=="static" and .blocks_per_sm > 0) | .limiter_words
        | test("^(registers|shared memory|warps|blocks): .*[0-9]+ blocks?/SM")] | all' \
    "$T/ref.json" "a row lacks the limiter in words"

# Planted defects: each FAILs, with its own expected reason in the message.
check "defect preflight" 1 "" -- "$DEF" preflight --static --filter '^defect/preflight/' \
    --baseline "$TBASE" --allowlist "$TALLOW" --report "$T/def.json"
n=$(jq '[.results[] | select(.gate=="preflight")] | length' "$T/def.json")
[ "$n" -ge 4 ] && ok || bad "only $n preflight defects ran"
# The expectations come from the catalogue (`list --json`), never from the gate's figures.
"$DEF" list --json "$T/cat.json" >/dev/null || bad "list --json of the defect runner"
missed=$(jq -r --slurpfile cat "$T/cat.json" '($cat[0].cases | map({(.id): .expect_reason}) | add) as $why
          | .results[] | select(.gate=="preflight") | . as $r | $why[$r.case] as $w
          | select($r.verdict != "FAIL" or $w == null or ($r.message | contains($w) | not))
          | "\($r.case) \($r.verdict) want [\($w)] got: \($r.message)"' "$T/def.json")
[ -z "$missed" ] && ok || bad "defects not caught with their reason: $missed"

# The launch-bounds defect (declared 128, launched 256) FAILs on every architecture on the
# limit itself; its clean twin (declared 256) passes with no warning.
expect_jq '[.results[] | select(.case|startswith("defect/preflight/launch_bounds/")) | .figures.kernels[]
        | .verdict=="FAIL" and .max_threads_per_block==128 and .block_threads==256] | length > 0 and all' \
    "$T/def.json" "launch-bounds defect: every row FAILs on max_threads_per_block"
check "clean twin preflight" 0 "" -- "$DEF" preflight --static --filter '^clean/preflight/' \
    --baseline "$TBASE" --allowlist "$TALLOW" --report "$T/twin.json"
expect_jq '[.results[] | .verdict=="PASS"] | length > 0 and all' "$T/twin.json" \
    "the launch-bounds clean twin passes (in the test baseline)"

# The same through the environment defaults (how a selftest points the defect runner at them).
KGATE_RESOURCE_BASELINE="$TBASE" KGATE_SPILL_ALLOWLIST="$TALLOW" "$DEF" preflight --static \
    --filter '^defect/preflight/' --report "$T/env.json" >/dev/null 2>&1; rc=$?
[ "$rc" -eq 1 ] && [ "$(jq '[.results[] | select(.verdict=="FAIL")] | length' "$T/env.json")" -eq "$n" ] \
    && ok || bad "KGATE_RESOURCE_BASELINE/KGATE_SPILL_ALLOWLIST not honoured (exit $rc)"
run "$KG" preflight --bogus
[ "$rc" -eq 2 ] && grep -q "'--bogus'" "$T/err" && ok || bad "unknown flag: exit $rc"

# Malformed inputs: exit 2, the file and entry named, and an --update-baseline run writes nothing.
cp "$BASE" "$T/base.json"
sum0=$(cksum <"$T/base.json")
malformed() { # malformed DESC PATTERN --allowlist|--baseline FILE-CONTENT
    local desc=$1 pat=$2 flag=$3 args
    printf '%s\n' "$4" >"$T/badfile.json"
    local s1; s1=$(cksum <"$T/badfile.json")
    if [ "$flag" = "--allowlist" ]; then args=(--baseline "$T/base.json" --allowlist "$T/badfile.json")
    else args=(--baseline "$T/badfile.json"); fi
    run "$KG" preflight --static --update-baseline "${args[@]}"
    if [ "$rc" -ne 2 ]; then bad "$desc: exit $rc, want 2"; cat "$T/out" "$T/err"; return; fi
    grep -qF -- "badfile.json" "$T/err" && grep -qE -- "$pat" "$T/err" && ok \
        || { bad "$desc: stderr lacks file/entry /$pat/"; cat "$T/err"; }
    [ "$(cksum <"$T/badfile.json")" = "$s1" ] && ok || bad "$desc: the malformed file was rewritten"
}
malformed "allowlist not JSON" "not valid JSON" --allowlist '{ "version": 1, "entries": [ }'
malformed "allowlist wrong version" "version 2 is not supported" --allowlist '{"version": 2, "entries": []}'
malformed "allowlist bad bytes" "entries\[1\] \('k2'\): 'local_bytes'" --allowlist \
    '{"version":1,"entries":[{"kernel":"k1","arch":"sm_90","local_bytes":8,"reason":"r"},{"kernel":"k2","arch":"sm_90","local_bytes":-4,"reason":"r"}]}'
malformed "allowlist unknown key" "entries\[0\] \('k1'\): unknown key 'bytes'" --allowlist \
    '{"version":1,"entries":[{"kernel":"k1","arch":"sm_90","bytes":8,"reason":"r"}]}'
malformed "allowlist bad arch" "'arch' must look like" --allowlist \
    '{"version":1,"entries":[{"kernel":"k1","arch":"hopper","local_bytes":8,"reason":"r"}]}'
malformed "allowlist duplicate" "entries\[1\] \('k1'\): duplicate" --allowlist \
    '{"version":1,"entries":[{"kernel":"k1","arch":"sm_90","local_bytes":8,"reason":"r"},{"kernel":"k1","arch":"sm_90","local_bytes":16,"reason":"r"}]}'
malformed "baseline missing key" "kernels\[0\] \('axpy_kernel'\): missing 'blocks_per_sm'" --baseline \
    '{"version":1,"kernels":[{"kernel":"axpy_kernel","arch":"sm_90","block_threads":256,"dynamic_smem":0,"registers":24,"local_bytes":0,"static_smem":0}]}'
malformed "baseline fractional registers" "'registers' must be an integer" --baseline \
    '{"version":1,"kernels":[{"kernel":"axpy_kernel","arch":"sm_90","block_threads":256,"dynamic_smem":0,"registers":24.5,"blocks_per_sm":8,"local_bytes":0,"static_smem":0}]}'
[ "$(cksum <"$T/base.json")" = "$sum0" ] && ok || bad "a malformed input let --update-baseline rewrite the baseline"
ls "$T"/*.tmp.* >/dev/null 2>&1 && bad "temp files left behind" || ok
run "$KG" preflight --static --baseline "$T/none.json"
[ "$rc" -eq 2 ] && grep -q "none.json" "$T/err" && ok || bad "missing --baseline file: exit $rc"

# --update-baseline: written from this build, then the same build passes with no warning.
check "update-baseline" 0 "" -- "$KG" preflight --static --update-baseline --baseline "$T/new.json" --allowlist "$ALLOW"
"$KG" preflight --static --baseline "$T/new.json" --allowlist "$ALLOW" --report "$T/again.json" >/dev/null 2>&1
[ "$(jq '[.results[] | select(.verdict=="FAIL" or .verdict=="ERROR" or (.message | test("not in the resource baseline")))] | length' "$T/again.json")" -eq 0 ] && ok \
    || bad "a fresh baseline does not cover and pass the build"
# A spiller must not be written into a baseline.
cp "$T/new.json" "$T/keep.json"
run "$DEF" preflight --static --update-baseline --filter '^defect/preflight/maxnreg' --baseline "$T/new.json"
[ "$rc" -eq 2 ] && grep -q "refused" "$T/err" && cmp -s "$T/new.json" "$T/keep.json" && ok \
    || { bad "update-baseline over a spiller: exit $rc, or the file changed"; cat "$T/err"; }
# Registers up within the same step: WARN with the headroom; blocks/SM down: FAIL.
jq '(.kernels[] | select(.kernel=="axpy_kernel") | .registers) -= 8' "$T/new.json" >"$T/up.json"
"$KG" preflight --static --filter '^axpy/' --baseline "$T/up.json" --allowlist "$ALLOW" --report "$T/up_r.json" >/dev/null 2>&1; rc=$?
[ "$rc" -eq 0 ] && jq -e '[.results[] | .verdict=="WARN" and (.message | test("headroom"))] | all' "$T/up_r.json" >/dev/null \
    && ok || bad "register increase within the step should WARN with the headroom (exit $rc)"
jq '(.kernels[] | select(.kernel=="axpy_kernel") | .blocks_per_sm) += 1' "$T/new.json" >"$T/down.json"
"$KG" preflight --static --filter '^axpy/' --baseline "$T/down.json" --allowlist "$ALLOW" --report "$T/down_r.json" >/dev/null 2>&1; rc=$?
[ "$rc" -eq 1 ] && jq -e '[.results[] | .verdict=="FAIL" and (.message | test("blocks/SM dropped"))] | all' "$T/down_r.json" >/dev/null \
    && ok || bad "blocks/SM below the baseline should FAIL (exit $rc)"

finish
