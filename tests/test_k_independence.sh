#!/usr/bin/env bash
# scripts/k-independence.sh judges what it is given (--from DIR, synthetic bench reports): equal
# per-launch medians pass, a t = a/k + b pattern (the issue #14 symptom) fails, a row measured
# with the mark's k instead of the flag's fails, usage errors exit 2; the script's own kgate
# command line is accepted; and the bench command line takes --launches (integers in [1, 1024],
# bench only; exit 3 without a GPU) and --warmup-min (seconds in [0, 10], bench only).
. "$(dirname "$0")/lib.sh"
KG=$1
S=$SRC/scripts/k-independence.sh
report() { # report FILE MEDIAN K SOURCE
    printf '{"results":[{"gate":"bench","case":"reduce_sum/n=1000/f32","figures":{"median_us":%s,"launches_source":"%s","launches_per_sample":%s,"power_state":{"label":"full-clock"},"blocking_timeouts":0}}]}\n' \
        "$2" "$4" "$3" >"$1"
}
mk() { # mk DIR SOURCE MEDIAN_OF_K...: rounds 1..2
    local d=$1 src=$2; shift 2; mkdir -p "$d"
    for k in 16 32 64 128 256; do
        for r in 1 2; do report "$d/k$k-r$r.json" "$(awk -v k=$k -v r=$r "BEGIN { $* }")" "$k" "$src"; done
    done
}
mk "$T/flat" flag 'print 3.10 + 0.005 * r'
check "equal medians: k-independent" 0 "k-independent" -- "$S" -n 2 --from "$T/flat"
mk "$T/ak" flag 'print 3.05 + 12 / k'
check "t = a/k + b: depends on k" 1 "DEPENDS ON K" -- "$S" -n 2 --from "$T/ak"
mk "$T/small" flag 'print 1.00 + 0.05 * (k == 256)'
check "within 0.1 us on a 1 us kernel: k-independent" 0 "k-independent" -- "$S" -n 2 --from "$T/small"
mk "$T/mark" mark 'print 3.10'
check "the mark's k won: refused" 1 "not the flag's" -- "$S" -n 2 --from "$T/mark"
check "missing reports" 1 "missing" -- "$S" -n 3 --from "$T/flat"
check "bad -n" 2 "-n: expected rounds" -- "$S" -n x --from "$T/flat"
check "bad -k" 2 "-k: expected launch counts" -- "$S" -k "16 x" --from "$T/flat"
check "table header" 0 "K +median_us +spread_us" -- "$S" -n 2 --from "$T/flat"
# the script's own kgate command line is one bench accepts (it passed --quiet, which bench
# rejects with exit 2): without a GPU the script reports kgate's "no CUDA device" (exit 3), on
# a GPU one K in one round is trivially k-independent
run "$S" --kgate "$KG" -n 1 -k 16
if [ "$rc" = 3 ]; then
    expect_grep "no CUDA device" "$T/out" "the script's bench command line is accepted (no GPU)"
else
    [ "$rc" = 0 ] && ok || { bad "k-independence.sh -n 1 -k 16: exit $rc"; cat "$T/out" "$T/err"; }
fi

check "--launches not an integer" 2 "--launches: expected launches per replay, an integer in \[1, 1024\], got '3.5'" -- "$KG" bench --launches 3.5
check "--launches too large" 2 "--launches: .*got '2000'" -- "$KG" bench --launches 2000
check "--launches zero" 2 "--launches" -- "$KG" bench --launches 0
check "--launches is bench only" 2 "'--launches' is a standalone option" -- "$KG" run --launches 16
check "--launches in the help" 0 "--launches K" -- "$KG" bench --help
check "--warmup-min not a number" 2 "--warmup-min: expected a number, got 'x'" -- "$KG" bench --warmup-min x
check "--warmup-min too large" 2 "--warmup-min: expected seconds in \[0, 10\], got '11'" -- "$KG" bench --warmup-min 11
check "--warmup-min negative" 2 "--warmup-min: expected seconds in \[0, 10\], got '-1'" -- "$KG" bench --warmup-min -1
check "--warmup-min is bench only" 2 "'--warmup-min' is a standalone option" -- "$KG" run --warmup-min 0.3
check "--warmup-min in the help" 0 "--warmup-min S" -- "$KG" bench --help
run env -u KGATE_MARKS "$KG" bench --filter '^reduce_sum/n=1000/f32$' --launches 16 \
    --report "$T/k16.json"
if [ "$rc" = 3 ]; then expect_no_gpu_line "bench --launches 16 without a GPU"; else
    [ "$rc" = 0 ] && ok || bad "bench --launches 16 on a GPU: exit $rc"
    expect_jq '[.results[] | select(.gate == "bench") | .figures
               | .launches_per_sample == 16 and .launches_source == "flag"
                 and .blocking_start == true and (.power_state.label | type) == "string"]
               == [true]' "$T/k16.json" "the row says k 16 from the flag, the blocking start, a power state"
    expect_jq '([.results[] | select(.gate == "bench") | .figures.power_state.label] | length == 1) and (.bench.ceilings.detail.copy.power_state.label | type) == "string" and (.bench.ceilings.detail.gemm.power_state.label | type) == "string"' \
        "$T/k16.json" "the row and both ceilings record their power state"
    # the new figures as a GPU writes them against the schema (also the ceilings' power_state)
    /usr/bin/python3 - "$SRC/baselines/report.schema.json" "$T/k16.json" <<'PY' && ok || bad "the --launches report does not validate"
import json, sys
from jsonschema import Draft202012Validator
errs = list(Draft202012Validator(json.load(open(sys.argv[1]))).iter_errors(json.load(open(sys.argv[2]))))
for e in errs[:5]:
    print("  /" + "/".join(map(str, e.absolute_path)) + ": " + e.message[:200])
sys.exit(bool(errs))
PY
fi
finish
