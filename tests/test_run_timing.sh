#!/usr/bin/env bash
# scripts/run-timing.sh (issue #29's benchmark of the main job's three forms): without a GPU
# (hidden here even where there is one: three whole runs would load it under the other tests)
# every run exits 3 and still writes its report, and the script prints one table row per form
# from their timing, the fresh selftest's passes, the verdicts, and exits 0 (the forms agree);
# an unknown form and a missing build are usage errors (2).
# Usage: test_run_timing.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
B=$1
export CUDA_VISIBLE_DEVICES=
run "$SRC/scripts/run-timing.sh" -b "$B" -s 9 -o "$T/o"
[ "$rc" -eq 0 ] && ok || { bad "run-timing: exit $rc, want 0"; cat "$T/out" "$T/err"; }
for f in fresh reuse skip; do
    expect_grep "^$f: exit 3, " "$T/out" "$f ran (no GPU: exit 3)"
    expect_grep "^\| $f \| [0-9.]+ \| " "$T/out" "the table's $f row"
    expect_jq '.timing.parts | length > 0' "$T/o/$f.json" "$f's report has its timing"
done
expect_grep '^\| run \| wall s \| selftest \| parity \| preflight \| hotpath \| bench \| counters \|$' \
    "$T/out" "the table's header names the gates in run order"
expect_grep '^\| skip \| [0-9.]+ \| - \| ' "$T/out" "skip has no selftest"
expect_grep '^selftest passes \(fresh\): defects/parity [0-9.]+, faults/parity' "$T/out" \
    "the fresh selftest's passes"
expect_grep '^  fresh: parity [0-9.]+/[0-9.]+, ' "$T/out" "the gates' own begin and end"
expect_grep '^verdicts \(skip\): [0-9]+ PASS, [0-9]+ SKIP$' "$T/out" "the verdicts"
expect_grep '^NO GPU|^no GPU ' "$T/out" "the device line says no GPU"
run "$SRC/scripts/run-timing.sh" -b "$B" -o "$T/o2" warm
[ "$rc" -eq 2 ] && grep -q "unknown form 'warm'" "$T/err" && ok || bad "unknown form: exit $rc"
run "$SRC/scripts/run-timing.sh" -b "$T/nowhere"
[ "$rc" -eq 2 ] && grep -q "not built" "$T/err" && ok || bad "no build: exit $rc"
finish
