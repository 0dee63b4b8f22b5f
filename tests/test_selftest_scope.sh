#!/usr/bin/env bash
# kgate selftest (issue #14): the correctness passes run as concurrent child processes, their
# headers still printed in table order; the scope leaves the bench's slow variants out of
# parity/hotpath/counters and the counters defects out of hotpath ("-" cells); every other
# (defect, gate) cell and every clean case on every gate but bench still runs. Without a GPU
# (hidden here even where there is one: the scope does not depend on it, and a full selftest
# would load the GPU under the other tests) a run is SKIP, which is not "-".
# Usage: test_selftest_scope.sh KGATE
. "$(dirname "$0")/lib.sh"
KG=$1
export CUDA_VISIBLE_DEVICES=
run "$KG" selftest --seed 7 --keep "$T/keep" --report "$T/st.json"
case $rc in 0|3) ok ;; *) bad "selftest exited $rc"; cat "$T/out" "$T/err" ;; esac
# The headers in the order of the table (the children run at once, are taken in this order):
# parity's over the catalogue, then its three over the planted faults (the hangs each alone).
grep '^selftest: ' "$T/out" | sed 's/ over.*//' > "$T/order"
printf 'selftest: %s\n' parity parity parity parity preflight hotpath bench counters > "$T/want"
diff "$T/want" "$T/order" >/dev/null && ok || bad "header order: $(tr '\n' ' ' < "$T/order")"
for f in defects-parity faults-parity clean-parity defects-preflight clean-preflight \
         defects-hotpath clean-hotpath defects-counters clean-counters; do
    [ -s "$T/keep/$f.json" ] && ok || bad "no child report $f.json"
done
M='.selftest.matrix[]'
expect_jq "[$M | select(.expect_gate == \"bench\") | .observed | .parity, .hotpath, .counters]
           | length > 0 and all(. == \"-\")" "$T/st.json" "slow variants ran parity/hotpath/counters"
expect_jq "[$M | select(.expect_gate == \"bench\") | .observed.preflight] | all(. != \"-\")" \
    "$T/st.json" "slow variants left out of preflight"
expect_jq "[$M | select(.expect_gate == \"counters\") | .observed.hotpath] | length > 0 and all(. == \"-\")" \
    "$T/st.json" "counters defects ran hotpath"
expect_jq "[$M | select(.expect_gate == \"counters\") | .observed | .parity, .preflight, .counters]
           | all(. != \"-\")" "$T/st.json" "counters defects left out of another gate"
expect_jq "[$M | select(.expect_gate == \"\" and (.case | startswith(\"defect/fault/\") | not))
                        | .observed | .parity, .preflight, .hotpath, .counters]
           | length > 100 and all(. != \"-\")" "$T/st.json" "a clean case left out of a gate"
expect_jq "[$M | select(.case | test(\"^defect/bench/.*/clean$\")) | .observed | .parity, .hotpath, .counters]
           | length == 5 * 3 and all(. != \"-\")" "$T/st.json" "a bench clean twin left out"
expect_jq "[$M | select(.expect_gate != \"\" and .expect_gate != \"bench\" and .expect_gate != \"counters\"
                        and (.case | startswith(\"defect/fault/\") | not)) | .observed | .parity, .hotpath]
           | all(. != \"-\")" "$T/st.json" "another defect left out of parity/hotpath"

# --filter narrows the defects: the rows are the selected ones (a left-out defect is no row, not
# "not run", which would read as a run without a GPU and exit 3 on one), the clean cases all run.
run "$KG" selftest --seed 7 --filter '^defect/bench/copy_256MiB/' --report "$T/f.json"
case $rc in 0|3) ok ;; *) bad "selftest --filter exited $rc"; cat "$T/out" "$T/err" ;; esac
expect_jq "[$M | select(.case | startswith(\"defect/\")) | .case] | sort ==
           [\"defect/bench/copy_256MiB/+10pct\", \"defect/bench/copy_256MiB/+1pct\",
            \"defect/bench/copy_256MiB/+2pct\", \"defect/bench/copy_256MiB/+5pct\",
            \"defect/bench/copy_256MiB/clean\"]" "$T/f.json" "--filter: rows beyond the selected defects"
expect_jq "[$M | select(.expect_gate == \"\" and (.case | startswith(\"defect/\") | not))] | length > 20" \
    "$T/f.json" "--filter: the clean cases did not all run"
expect_jq ".selftest.not_run == 3 and .selftest.informational == 1" "$T/f.json" \
    "--filter: not_run counts other defects than the 3 selected (and the +1% observed)"
finish
