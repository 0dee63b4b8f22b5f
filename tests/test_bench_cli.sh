#!/usr/bin/env bash
# bench and ab command lines: usage and marks-file errors exit 2 naming the flag or the file and
# entry, before any GPU work and with the marks file unchanged; without a GPU one line, exit 3.
. "$(dirname "$0")/lib.sh"
KG=$1
mark() { # one valid mark entry; $1 = case, $2 = value
    printf '{"device_class":"NVIDIA H200/sm_90","case":"%s","metric":"time_us_warm","direction":"lower_is_better","value":%s,"band_rel":0.004,"run_median":%s,"ci_lo":%s,"ci_hi":%s,"samples":40,"provenance":{"commit":"abc","date":"2026-11-30T12:00:00Z","run_id":"r1","driver":"13.0","cuda":"13.0","set_by":"test"}}' "$1" "$2" "$2" "$2" "$2"
}
printf '{"version": 1, "marks": [%s]}\n' "$(mark axpy/n=1/f32 2.5)" >"$T/good.json"
printf '{"version": 2, "marks": []}\n' >"$T/v2.json"
printf '{"version": 1, "marks": [%s, %s]}\n' "$(mark a 1)" "$(mark a 2)" >"$T/dup.json"
printf '{"version": 1, "marks": [%s]}\n' "$(mark a -3)" >"$T/neg.json"
printf '{"version": 1, "marks": [%s]}\n' "$(mark a NaN)" >"$T/nan.json"
head -c 120 "$T/good.json" >"$T/trunc.json"

check "bench --help" 0 "usage: kgate bench" -- "$KG" bench --help
check "top-level help lists bench" 0 "bench " -- "$KG" --help
check "top-level help lists ab" 0 "ab " -- "$KG" --help
check "unknown flag" 2 "'--bogus'" -- "$KG" bench --bogus
check "bad mode" 2 "--mode: expected warm or cold" -- "$KG" bench --mode hot
check "bad budget" 2 "--budget" -- "$KG" bench --budget 0
check "budget not a number" 2 "--budget: expected a number" -- "$KG" bench --budget 1s
check "bad band floor" 2 "--band-floor: expected a relative tolerance" -- "$KG" bench --band-floor 1.5
check "bad compute floor" 2 "--compute-floor" -- "$KG" bench --compute-floor -1
check "bad abs floor" 2 "--abs-floor: expected microseconds" -- "$KG" bench --abs-floor 0
check "--placements not an integer" 2 "--placements: expected fresh-buffer placements, an integer in \[1, 8\], got '2.5'" -- "$KG" bench --placements 2.5
check "--placements too many" 2 "--placements: .*got '9'" -- "$KG" bench --placements 9
check "--placements zero" 2 "--placements" -- "$KG" bench --placements 0
check "bench --help lists --placements" 0 "--placements N" -- "$KG" bench --help
# issue #14: no fixed compute floor (an error that says so); --min-mark-runs; production's
# separate bench processes.
check "compute floor removed" 2 "--compute-floor 0.1: removed: no fixed floor" -- "$KG" bench --compute-floor 0.1
check "run: compute floor removed" 2 "--compute-floor .*removed" -- "$KG" run --diagnostic --compute-floor 0.1
check "min mark runs 0" 2 "--min-mark-runs: expected an integer in \[1, 1000\]" -- "$KG" bench --min-mark-runs 0
check "min mark runs 2.5" 2 "--min-mark-runs: expected an integer" -- "$KG" bench --min-mark-runs 2.5
check "bench --help: min mark runs" 0 "--min-mark-runs N" -- "$KG" bench --help
check "run --help: bench processes" 0 "--bench-processes N" -- "$KG" run --help
check "bench processes 1" 2 "--bench-processes: expected an integer in \[2, 16\] \(production never advances a mark from one process\)" -- "$KG" run --production --bench-processes 1
check "bench processes 17" 2 "--bench-processes: expected an integer in \[2, 16\]" -- "$KG" run --production --bench-processes 17
check "bench processes diagnostic" 2 "--bench-processes needs --production" -- "$KG" run --diagnostic --bench-processes 3
KGATE_ISOLATION=0 check "production in one process" 2 "KGATE_ISOLATION=0 .* separate processes" -- "$KG" run --production
check "filter no match" 2 "matches no case" -- "$KG" bench --filter zzz_nothing
check "marks missing" 2 "missing.json: cannot open" -- "$KG" bench --marks "$T/missing.json"
check "marks version" 2 "v2.json: unsupported version 2" -- "$KG" bench --marks "$T/v2.json"
check "marks duplicate" 2 "dup.json: marks\[1\] .*duplicate key" -- "$KG" bench --marks "$T/dup.json"
check "marks negative" 2 "neg.json: marks\[0\] .*'value' must be > 0" -- "$KG" bench --marks "$T/neg.json"
check "marks NaN" 2 "nan.json: not valid JSON" -- "$KG" bench --marks "$T/nan.json"
check "marks truncated" 2 "trunc.json: .*truncated" -- "$KG" bench --marks "$T/trunc.json"
# Marks errors come before the device: no "GPU checks are skipped" line, no seed line.
"$KG" bench --marks "$T/v2.json" >"$T/out" 2>&1
if grep -qE "skipped|seed" "$T/out"; then bad "marks error not reported first"; cat "$T/out"; else ok; fi
for f in v2 dup neg nan trunc; do cp "$T/$f.json" "$T/$f.orig"; done
"$KG" bench --marks "$T/dup.json" --save-marks "$T/dup.json" >/dev/null 2>&1
for f in v2 dup neg nan trunc; do
    cmp -s "$T/$f.json" "$T/$f.orig" && ok || bad "$f.json was rewritten"
done
check "save over --marks" 2 "would rewrite the marks" -- "$KG" bench --marks "$T/good.json" --save-marks "$T/good.json"
check "save into missing dir" 2 "cannot write there" -- "$KG" bench --save-marks "$T/no/such/m.json"
check "save into invalid file" 2 "v2.json: unsupported version" -- "$KG" bench --save-marks "$T/v2.json"
check "committed marks file is valid" 0 "usage" -- "$KG" bench --marks "$SRC/baselines/high_water.json" --help

check "ab no args" 2 "expected two runner executables" -- "$KG" ab
check "ab one arg" 2 "expected two runner executables" -- "$KG" ab "$KG"
check "ab rounds" 2 "--rounds: expected an integer in \[3" -- "$KG" ab "$KG" "$KG" --rounds 1
check "ab not executable" 2 "not an executable" -- "$KG" ab "$T/none" "$KG"
check "ab bad mode" 2 "--mode" -- "$KG" ab "$KG" "$KG" --mode hot
check "ab bad seed" 2 "--seed: expected a non-negative integer" -- "$KG" ab "$KG" "$KG" --seed x
check "ab bad device" 2 "--device: expected an integer" -- "$KG" ab "$KG" "$KG" --device -1
check "ab --help" 0 "usage: kgate ab" -- "$KG" ab --help

# ab's bookkeeping without a GPU: two fake runners writing bench reports with known medians
# (B 5% slower than A on one case, equal on the other) -> B_SLOWER fails (exit 1), SAME passes.
fake() { # fake NAME MEDIAN_CASE1 MEDIAN_CASE2
    cat >"$T/$1" <<FAKE
#!/usr/bin/env bash
rep=; while [ \$# -gt 0 ]; do [ "\$1" = --report ] && rep=\$2; shift; done
j=\$(( RANDOM % 7 ))
printf '{"results":[{"gate":"bench","case":"c/slow","verdict":"PASS","figures":{"median_us":%s.%d}},{"gate":"bench","case":"c/same","verdict":"PASS","figures":{"median_us":%s.%d}}],"device":{"class":"fake"}}' $2 \$j $3 \$j >"\$rep"
FAKE
    chmod +x "$T/$1"
}
fake A 100 200; fake B 105 200
check "ab fake: B slower" 1 "c/slow +B_SLOWER" -- "$KG" ab "$T/A" "$T/B" --rounds 6 --seed 1 --report "$T/ab.json"
jq -e '[.results[] | select(.case=="c/slow")][0] | .verdict == "FAIL" and .figures.ratio_ci_lo > 1.03
       and .figures.rounds == 6' "$T/ab.json" >/dev/null && ok \
    || { bad "ab report (slow)"; jq . "$T/ab.json"; }
expect_jq '[.results[] | select(.case=="c/same")][0] | .verdict == "PASS" and .figures.decision == "SAME"' \
    "$T/ab.json" "ab report (same)"
check "ab fake: same exe" 0 "c/same +SAME" -- "$KG" ab "$T/A" "$T/A" --rounds 5
check "ab fake: B faster" 0 "c/slow +B_FASTER" -- "$KG" ab "$T/B" "$T/A" --rounds 6
# Issue #25: a bench row that is ERROR, or whose figures pass that report's own ceilings (an
# older runner without the check), is the case's ERROR with the reason, never a ratio.
cat >"$T/C" <<'FAKE'
#!/usr/bin/env bash
rep=; while [ $# -gt 0 ]; do [ "$1" = --report ] && rep=$2; shift; done
printf '{"results":[{"gate":"bench","case":"c/slow","verdict":"ERROR","message":"the replay launched no kernel: is the work on another stream?","figures":{}},{"gate":"bench","case":"c/same","verdict":"PASS","figures":{"median_us":0.0097,"gbps":13874727.9,"bytes_moved":134217728,"ci_rel_width":0.01}}],"device":{"class":"fake","l2_bytes":52428800},"bench":{"ceilings":{"copy_gbps":4200,"gemm_tflops":800}}}' >"$rep"
exit 4 # as kgate bench does when a case is ERROR
FAKE
chmod +x "$T/C"
check "ab fake: ERROR row" 4 "c/slow +ERROR +round 1, B: bench ERROR: the replay launched no kernel" \
    -- "$KG" ab "$T/A" "$T/C" --rounds 3 --report "$T/ab-err.json"
expect_grep "c/same +ERROR +round 1, B: 1.38747e\+07 GB/s is above the measured copy ceiling 4200 GB/s" \
    "$T/out" "ab: a figure above the report's copy ceiling"
expect_jq '[.results[] | select(.case=="c/same")][0] | .verdict == "ERROR"' "$T/ab-err.json" \
    "ab report: impossible figure is ERROR"
# A bench that faults on one case (exit 4, the report whole): that case ERROR naming the
# fault, the other decided from every round (issue #25: ab ended at the first exit 4).
cat >"$T/F" <<FAKE
#!/usr/bin/env bash
rep=; while [ \$# -gt 0 ]; do [ "\$1" = --report ] && rep=\$2; shift; done
"$T/A" --report "\$rep.a" && jq -c '.results[0] = {"gate":"bench","case":"c/slow","verdict":"ERROR","message":"FAULT exit: the process called exit(1) in bench (setup)","figures":{"fault":{"class":"exit","phase":"setup"}}}' "\$rep.a" >"\$rep" && rm "\$rep.a"
exit 4
FAKE
chmod +x "$T/F"
check "ab fake: a fault in one case" 4 "c/slow +ERROR +round 1, B: bench ERROR: FAULT exit" \
    -- "$KG" ab "$T/A" "$T/F" --rounds 3 --report "$T/ab-fault.json"
expect_jq '[.results[] | select(.case=="c/same")][0] | .verdict == "PASS" and .figures.rounds == 3' \
    "$T/ab-fault.json" "ab: the case beside a fault was not decided from its 3 rounds"
# The selection and the watchdog go to every bench run (they were dropped: a hanging case
# waited out the bench's own 60 s); the reports' cases are not selected again.
cat >"$T/L" <<FAKE
#!/usr/bin/env bash
echo "\$*" >>"$T/ab-args"
exec "$T/A" "\$@"
FAKE
chmod +x "$T/L"
check "ab: --exclude, --tag, --case-timeout" 0 "c/same +SAME" \
    -- "$KG" ab "$T/L" "$T/L" --rounds 3 --exclude '^c/x$' --tag t1 --case-timeout 2.5
[ "$(grep -c -- "--exclude \^c/x\$ --tag t1 --case-timeout 2.5\$" "$T/ab-args")" -eq 6 ] && ok \
    || { bad "ab: the bench runs lack the selection or the watchdog"; cat "$T/ab-args"; }
# exit 4 with no report, or an incomplete one (interrupted): ab stops, naming the round
cat >"$T/G" <<'FAKE'
#!/usr/bin/env bash
rep=; while [ $# -gt 0 ]; do [ "$1" = --report ] && rep=$2; shift; done
printf '{"results":[],"incomplete":true,"stopped_at":"bench"}' >"$rep"; exit 4
FAKE
chmod +x "$T/G"
check "ab fake: incomplete report" 4 "round 1: .*/G bench exited 4 without a report ab can read.*incomplete" \
    -- "$KG" ab "$T/A" "$T/G" --rounds 3

# Ctrl-C during the rounds (issue #30): the round running is killed at once with what it
# started, not waited for; the report is incomplete, says where the rounds stopped and decides
# no case; exit 4. H is a runner whose second call (round 1, B) hangs in a grandchild.
cat >"$T/H" <<FAKE
#!/usr/bin/env bash
if [ -e "$T/h.first" ]; then sleep 300 & echo \$! >"$T/h-sleep.pid"; echo \$\$ >"$T/h.pid"; wait; fi
touch "$T/h.first"; exec "$T/A" "\$@"
FAKE
chmod +x "$T/H"
"$KG" ab "$T/H" "$T/H" --rounds 3 --seed 1 --report "$T/ab-int.json" >"$T/out" 2>"$T/err" &
pid=$!
for i in $(seq 300); do [ -s "$T/h-sleep.pid" ] && break; sleep 0.1; done
t0=$(date +%s%N); kill -INT "$pid"; wait "$pid"; rc=$?
dt=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$rc" -eq 4 ] && grep -q "interrupted by SIGINT in ab: round 1/3, B ($T/H); 0 complete round(s), no case decided: the report is partial (incomplete)" "$T/err" \
    && ok || { bad "ab SIGINT: exit $rc, want 4 and where it stopped"; cat "$T/out" "$T/err"; }
[ "$dt" -lt 3000 ] && ok || bad "ab SIGINT took $dt ms (the round was waited for)"
sleep 0.3
for f in h.pid h-sleep.pid; do
    p=$(cat "$T/$f" 2>/dev/null) && [ -r "/proc/$p/stat" ] && [ "$(sed 's/.*) //' "/proc/$p/stat" | cut -c1)" != Z ] \
        && bad "ab SIGINT: $f $p still running" || ok
done
expect_jq '.incomplete == true and (.stopped_at | startswith("ab: round 1/3, B")) and (.results | length) == 0' \
    "$T/ab-int.json" "ab SIGINT: the report is not incomplete with where it stopped"

# A real run: without a GPU one line and exit 3 with SKIPs (the marks file was still read);
# with one, the bench runs and decides against the marks.
run "$KG" bench --filter '^axpy/n=4097/' --marks "$T/good.json" --budget 0.2 --seed 3 --report "$T/r.json"
if [ "$rc" -eq 3 ]; then
    expect_no_gpu_line "no-GPU bench should say so in one line"
    jq -e '.results[0].verdict == "SKIP" and .results[0].gate == "bench" and .seed == 3' "$T/r.json" >/dev/null \
        && ok || { bad "no-GPU report"; cat "$T/r.json"; }
    "$KG" ab "$KG" "$KG" --filter '^axpy/n=4097/' --rounds 3 >"$T/out" 2>&1; rc=$?
    [ "$rc" -eq 3 ] && grep -q "no CUDA device" "$T/out" && ok \
        || { bad "ab without a GPU: exit $rc"; cat "$T/out"; }
elif [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; then
    expect_jq '.results[0].figures.median_us > 0' "$T/r.json" "GPU bench report lacks median_us"
else
    bad "bench run exit $rc"; cat "$T/out" "$T/err"
fi
finish
