#!/usr/bin/env bash
# Prove the bench verdicts on the GPU this runs on, to the protocol of issue #14
# (docs/production-ci.md, "Proving the gate"). A benchmark, not a test: ~9 minutes on an H200.
#
#   scripts/bench-proof.sh [-b BUILD_DIR] [-n PROCS] [-s SETTERS] [-t BUDGET] [-T SET_BUDGET]
#                          [-L LIMIT_S] [-f FILTER] [-o DIR] [-x "BENCH FLAGS"]
#
#   -b  build directory holding runners/kgate and runners/kgate-defects (default: build)
#   -n  separate compared processes (default 20)
#   -s  separate processes whose runs are merged into the marks first (default 3)
#   -t  per-case timing budget of the compared processes, seconds (default 0.1)
#   -T  per-case timing budget of the mark-setting processes, seconds (default 0.3)
#   -L  wall-time limit of the whole script, seconds (default 540): no compared process starts
#       past it (the targets then fail: too few processes)
#   -f  regex of reference cases (default: all reference cases)
#   -o  directory for the reports and marks (default: a new one under /tmp; kept)
#   -x  extra flags for every compared `bench` (e.g. "--band-floor 0.01" to try a setting)
#   -W  0: skip step 0 (the whole-run wall time is then "not measured" and that target unmet;
#       for a device call too short for both)
#
# 0. `kgate run --diagnostic` once, the whole of it (selftest included): its wall time;
# 1. marks: S separate processes of the reference runner over every reference case and S of
#    the defect runner over the clean twins (defect/bench/*/clean), merged with `bench
#    --save-marks` (kg_marks_merge); every process after the first is timed against the marks
#    so far (--marks, a copy) so that it reuses their k;
# 2. false alarms: N more processes of identical code against those marks, over every
#    reference case and every clean twin: each REGRESSED or IMPROVED is a false alarm;
# 3. sensitivity: in the same N processes of the defect runner, the planted variants
#    defect/bench/<family>/+<p>pct, each against its clean twin's mark re-keyed to its id;
# 4. gemm_bf16 8192^3: the coefficient of variation of its median across the N processes.
# Then the table of issue #14 with the measured figures. Exit: 0 every target met, 1 not met,
# 2 usage, 3 no GPU, 4 a run failed.
set -u
B=build N=20 S=3 BUD=0.1 SBUD=0.3 LIMIT=540 F='' O='' X='' WHOLE=1
while getopts "b:n:s:t:T:L:f:o:x:W:h" opt; do
    case $opt in
    b) B=$OPTARG ;; n) N=$OPTARG ;; s) S=$OPTARG ;; t) BUD=$OPTARG ;; T) SBUD=$OPTARG ;;
    L) LIMIT=$OPTARG ;; f) F=$OPTARG ;; o) O=$OPTARG ;; x) X=$OPTARG ;; W) WHOLE=$OPTARG ;;
    *) sed -n '2,33p' "$0"; exit 2 ;;
    esac
done
KG=$B/runners/kgate DEF=$B/runners/kgate-defects
for x in "$KG" "$DEF"; do [ -x "$x" ] || { echo "bench-proof: $x not built" >&2; exit 2; }; done
command -v jq >/dev/null || { echo "bench-proof: needs jq" >&2; exit 2; }
{ [ "$N" -ge 1 ] && [ "$S" -ge 1 ] && [ "$LIMIT" -ge 1 ]; } 2>/dev/null \
    || { echo "bench-proof: -n, -s and -L must be integers >= 1" >&2; exit 2; }
O=${O:-$(mktemp -d /tmp/kgate-bench-proof-XXXXXX)}
mkdir -p "$O" || exit 2
FA=(); [ -n "$F" ] && FA=(--filter "$F")
read -r -a XA <<<"$X"
GEMM='gemm_bf16/m=8192,n=8192,k=8192/bf16'
TWINS_RE='^defect/bench/.*/clean$'
ALL_RE='^defect/bench/.*/(clean|\+[0-9]+pct)$' # not the stream-0 defect: an ERROR, no time
now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.1f", a - b }'; }
T0=$(now)
run() { # run LOG -- cmd...: exit 3 -> no GPU; 0/1 fine; else stop
    local log=$1; shift 2
    "$@" >"$log" 2>&1; local rc=$?
    if [ "$rc" -eq 3 ]; then echo "bench-proof: no CUDA device: nothing to prove here"; exit 3; fi
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
        echo "bench-proof: '$*' exited $rc:"; tail -20 "$log"; exit 4
    fi
}
# setters RUNNER TAG FILTER...: S processes merged into $O/TAG_marks.json, each after the first
# against a copy of the marks so far.
setters() {
    local exe=$1 tag=$2; shift 2
    local i mk=()
    for i in $(seq 1 "$S"); do
        [ "$i" -gt 1 ] && cp "$O/${tag}_marks.json" "$O/${tag}_prev.json" && mk=(--marks "$O/${tag}_prev.json")
        run "$O/set-$tag$i.log" -- "$exe" bench "$@" --budget "$SBUD" "${mk[@]}" \
            --save-marks "$O/${tag}_marks.json" --report "$O/set-$tag$i.json"
    done
}

echo "bench-proof: outputs in $O"
echo "== 0. kgate run --diagnostic, once, whole"
if [ "$WHOLE" = 0 ]; then
    RUNWALL="not measured (-W 0):"; echo "   skipped (-W 0)"
else
    t=$(now)
    run "$O/run-diagnostic.log" -- "$KG" run --diagnostic --defects "$DEF" --report "$O/run-diagnostic.json"
    RUNWALL=$(since "$t")
    echo "   $RUNWALL s"
fi

echo "== 1. marks from $S separate processes (reference cases; clean twins)"
setters "$KG" ref "${FA[@]}"
setters "$DEF" twin --filter "$TWINS_RE"
"$DEF" list --json "$O/catalogue.json" >/dev/null || exit 4
# The twins' marks, plus one copy of each re-keyed to every variant of its family.
jq --slurpfile cat "$O/catalogue.json" '.marks as $m | .marks = ($m + [
      $cat[0].cases[] | select(.id | test("^defect/bench/.*/\\+[0-9]+pct$")) | .id as $v
      | ($v | sub("/[^/]*$"; "/clean")) as $t | $m[] | select(.case == $t) | .case = $v ])' \
    "$O/twin_marks.json" >"$O/variant_marks.json" || exit 4
echo "   $(jq '.marks | length' "$O/ref_marks.json") reference marks, $(jq '.marks | length' "$O/variant_marks.json") twin/variant marks ($(since "$T0") s so far)"

echo "== 2./3. $N separate processes against those marks (budget $BUD s/case)"
P=0
for i in $(seq 1 "$N"); do
    if awk -v e="$(since "$T0")" -v l="$LIMIT" 'BEGIN { exit !(e > l) }'; then
        echo "   time limit ($LIMIT s) reached: stopped after $P process(es)"; break
    fi
    run "$O/fa$i.log" -- "$KG" bench "${FA[@]}" --budget "$BUD" "${XA[@]}" --marks "$O/ref_marks.json" --report "$O/fa$i.json"
    run "$O/sens$i.log" -- "$DEF" bench --filter "$ALL_RE" --budget "$BUD" "${XA[@]}" --marks "$O/variant_marks.json" --report "$O/sens$i.json"
    P=$i
    printf '   process %d/%d done (%s s)\n' "$i" "$N" "$(since "$T0")"
done
[ "$P" -ge 1 ] || { echo "bench-proof: no compared process ran"; exit 4; }
FAF=(); SEF=()
for i in $(seq 1 "$P"); do FAF+=("$O/fa$i.json"); SEF+=("$O/sens$i.json"); done

# Every bench row of the compared processes: case, decision, delta, tolerance, median.
jq -r '.results[] | select(.gate == "bench")
       | [.case, (.figures.decision // "none"), (.figures.delta_rel // 0), (.figures.tolerance_rel // 0),
          (.figures.median_us // 0), (.figures.raw_median_us // .figures.median_us // 0),
          (.figures.time_basis // "measured")] | @tsv' "${FAF[@]}" "${SEF[@]}" >"$O/rows.tsv"

echo
echo "== false alarms: reference cases and clean twins, $P processes vs marks of $S other processes"
# max_delta% and tol%: the largest |delta| and the smallest tolerance of the case; of_tol: the
# largest |delta| / tolerance of one decision (how close the case came to a false alarm).
printf '%-46s %9s %8s %5s %9s %11s %9s %7s\n' case REGRESSED IMPROVED SAME undecided max_delta% tol% of_tol
awk -F'\t' '$1 !~ /pct$/ { c[$1] = 1; d[$1, $2]++; a = $3 < 0 ? -$3 : $3; if (a > m[$1]) m[$1] = a;
        if (!($1 in t) || $4 < t[$1]) t[$1] = $4
        if ($2 ~ /^(SAME|REGRESSED|IMPROVED)$/ && $4 > 0 && a / $4 > r[$1]) r[$1] = a / $4 }
    END { for (k in c) printf "%-46s %9d %8d %5d %9d %11.3f %9.3f %7.2f\n", k, d[k, "REGRESSED"],
          d[k, "IMPROVED"], d[k, "SAME"], d[k, "UNPROVEN"] + d[k, "STATE_DIFFERS"] + d[k, "NO_MARK"],
          100 * m[k], 100 * t[k], r[k] }' "$O/rows.tsv" | sort
CLOSEST=$(awk -F'\t' '$1 !~ /pct$/ && $2 ~ /^(SAME|REGRESSED|IMPROVED)$/ && $4 > 0 {
        a = $3 < 0 ? -$3 : $3; if (a / $4 > r) { r = a / $4; k = $1 } }
    END { if (k != "") printf "%s at %.2f of its tolerance", k, r; else print "none" }' "$O/rows.tsv")
echo "closest to a false alarm: $CLOSEST"
FALSE=$(awk -F'\t' '$1 !~ /pct$/ && ($2 == "REGRESSED" || $2 == "IMPROVED")' "$O/rows.tsv" | wc -l)
NFA=$(awk -F'\t' '$1 !~ /pct$/' "$O/rows.tsv" | wc -l)
UNDEC=$(awk -F'\t' '$1 !~ /pct$/ && $2 != "REGRESSED" && $2 != "IMPROVED" && $2 != "SAME"' "$O/rows.tsv" | wc -l)
NCASES=$(awk -F'\t' '$1 !~ /pct$/ { print $1 }' "$O/rows.tsv" | sort -u | wc -l)

echo
echo "== sensitivity: planted slow variants vs their clean twin's mark, $P processes"
printf '%-40s %10s %14s %9s\n' variant caught median_delta% tol%
jq -s -r '[.[] | .results[] | select(.gate == "bench" and (.case | test("pct$")))] | group_by(.case)[]
    | [ .[0].case, (map(select(.figures.decision == "REGRESSED")) | length), length,
        ([.[].figures.delta_rel // empty] | sort | .[length / 2 | floor] // 0) * 100,
        ([.[].figures.tolerance_rel // empty] | sort | .[length / 2 | floor] // 0) * 100 ] | @tsv' \
    "${SEF[@]}" | awk -F'\t' '{ printf "%-40s %6d/%-3d %14.3f %9.3f\n", $1, $2, $3, $4, $5 }'
# caught RE: the worst case ("caught/processes") over the variants matching RE.
caught() {
    awk -F'\t' -v re="$1" '$1 ~ re { n[$1]++; if ($2 == "REGRESSED") r[$1]++ }
        END { w = -1; for (k in n) if (w < 0 || r[k] + 0 < w) { w = r[k] + 0; wn = n[k]; wk = k }
              if (w < 0) print "0 0 none"; else print w, wn, wk }' "$O/rows.tsv"
}
read -r C_MEM N_MEM K_MEM <<<"$(caught '^defect/bench/copy_[0-9]+MiB/\+2pct$')"
read -r C_CMP N_CMP K_CMP <<<"$(caught '^defect/bench/fma_chain_1ms/\+2pct$')"
read -r C_5 N_5 K_5 <<<"$(caught '^defect/bench/.*/\+5pct$')"

# gemm_bf16 8192^3: CV of the per-process medians it was decided on (clock-normalised when
# power-capped), and of the measured times beside it.
cvcol() {
    awk -F'\t' -v g="$GEMM" -v c="$1" '$1 == g && $c > 0 { n++; s += $c; q += $c * $c }
        END { if (n < 2) { print "nan"; exit } m = s / n; v = (q - n * m * m) / (n - 1); if (v < 0) v = 0;
              printf "%.3f", 100 * sqrt(v) / m }' "$O/rows.tsv"
}
CV=$(cvcol 5) RAWCV=$(cvcol 6)
BASIS=$(awk -F'\t' -v g="$GEMM" '$1 == g { print $7 }' "$O/rows.tsv" | sort | uniq -c |
        awk '{ printf "%s%s %s", sep, $2, $1; sep = ", " }')
GEMMINFO=""
[ "$CV" = "$RAWCV" ] || GEMMINFO="; $BASIS; measured times ${RAWCV}%"
NGEMM=$(awk -F'\t' -v g="$GEMM" '$1 == g' "$O/rows.tsv" | wc -l)
# For the record: its spread inside one process (1.4826 MAD / median, the median over processes).
INCV=$(jq -s -r --arg g "$GEMM" '[.[] | .results[] | select(.gate == "bench" and .case == $g
        and (.figures.mad_us // null) != null and .figures.median_us > 0)
        | 148.26 * .figures.mad_us / .figures.median_us] | sort | if length == 0 then "nan"
        else .[length / 2 | floor] * 1000 | round / 1000 end' "${FAF[@]}")

echo
echo "== power states seen (bench figures power_state.label; run_power_state of the decision)"
jq -r '.results[] | select(.gate == "bench") | (.figures.power_state.label? // .figures.run_power_state? // "unreported")' \
    "$O"/set-*.json "${FAF[@]}" "${SEF[@]}" 2>/dev/null | sort | uniq -c | awk '{ printf "   %s: %d rows\n", $2, $1 }'

TOTAL=$(since "$T0")
ALLOW=$((N / 20)) # misses allowed: 1 in 20
met() { [ "$1" = yes ] && echo "" || echo "  (NOT MET)"; }
ok_fa=no; [ "$FALSE" -eq 0 ] && [ "$UNDEC" -eq 0 ] && [ "$P" -ge "$N" ] && ok_fa=yes
okc() { [ "$P" -ge "$N" ] && [ "$2" -ge 1 ] && [ "$1" -ge $(( $2 - ALLOW )) ] && echo yes || echo no; }
ok_mem=$(okc "$C_MEM" "$N_MEM"); ok_cmp=$(okc "$C_CMP" "$N_CMP"); ok_5=$(okc "$C_5" "$N_5")
ok_cv=$(awk -v c="$CV" 'BEGIN { print (c != "nan" && c + 0 <= 0.5) ? "yes" : "no" }')
ok_run=no
[ "$WHOLE" = 0 ] || ok_run=$(awk -v w="$RUNWALL" 'BEGIN { print (w + 0 <= 60) ? "yes" : "no" }')
echo
[ "$UNDEC" -eq 0 ] || echo "note: $UNDEC false-alarm row(s) decided nothing (UNPROVEN, STATE_DIFFERS, NO_MARK): the proof does not hold for them"
[ "$P" -ge "$N" ] || echo "note: only $P of $N compared processes ran (time limit)"
echo "gemm_bf16 8192^3: CV of the per-process medians ${CV}% (the table; time basis: ${BASIS:-none}), of their measured times ${RAWCV}%; inside one process (robust, median over processes) ${INCV}%"
echo "| figure | measured | target |"
echo "| --- | --- | --- |"
echo "| false alarms (processes x cases) | $FALSE in $P x $NCASES ($NFA decisions)$(met $ok_fa) | 0 |"
echo "| +2% caught, cases >= 100 us memory-bound | $C_MEM/$N_MEM (worst: ${K_MEM#defect/bench/})$(met "$ok_mem") | >= $((N - ALLOW))/$N |"
echo "| +2% caught compute-bound | $C_CMP/$N_CMP (${K_CMP#defect/bench/})$(met "$ok_cmp") | >= $((N - ALLOW))/$N |"
echo "| +5% caught, cases >= 10 us | $C_5/$N_5 (worst: ${K_5#defect/bench/})$(met "$ok_5") | >= $((N - ALLOW))/$N |"
echo "| gemm_bf16 8192^3 median CV across processes | ${CV}% ($NGEMM processes$GEMMINFO)$(met "$ok_cv") | <= 0.5% |"
echo "| whole run --diagnostic | ${RUNWALL} s$(met "$ok_run") | <= 60 s |"
echo
echo "bench-proof: wall time ${TOTAL} s"
for v in $ok_fa $ok_mem $ok_cmp $ok_5 $ok_cv $ok_run; do [ "$v" = yes ] || exit 1; done
exit 0
