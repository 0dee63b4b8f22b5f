#!/usr/bin/env bash
# `kgate report` on reports the real gates wrote: the recorded H200 run
# (tests/data/h200-run-report.json), its certifying variant with failures, an error and bench
# decisions against marks (tests/data/h200_variants.py; validated against the report schema
# first), and reports the CLI writes here without a GPU. JUnit validates against the committed
# JUnit XSD with the expected counts, escaping and the reports' figures; Markdown puts failures
# and regressions first, shows the bench medians, changes and ceilings, and stamps diagnostic
# runs; HTML is standalone (no http(s) resource) with the marks chart; expected failures
# (XFAIL, XPASS), a faulted case and an interrupted (incomplete) run are shown as such (the
# variants xfail, xpass and incomplete of h200_variants.py, validated too); bad input exits 2
# and writes nothing.
KG=$1
KD=$(dirname "$KG")/kgate-defects
. "$(dirname "$0")/lib.sh"
H200=$SRC/tests/data/h200-run-report.json
XSD=$SRC/tests/data/junit-10.xsd
PY=$(command -v /usr/bin/python3 || command -v python3)
has() { grep -qF -- "$2" "$1" && ok || bad "$1 lacks: $2"; }
hasnt() { grep -qF -- "$2" "$1" && bad "$1 has: $2" || ok; }
fig() { jq -r --arg g "$1" --arg c "$2" ".results[] | select(.gate == \$g and .case == \$c) | .figures.$3" "$REPORT"; }

# The certifying variant of the H200 run: parity softmax FAIL, hotpath rmsnorm ERROR, bench
# reduce_sum REGRESSED, rmsnorm IMPROVED, axpy and gemm SAME, every other bench case NO_MARK.
REPORT=$T/h200-decided.json
"$PY" "$SRC/tests/data/h200_variants.py" "$H200" "$REPORT" || { echo "FAIL: h200_variants.py"; exit 1; }
"$PY" - "$SRC/baselines/report.schema.json" "$REPORT" "$H200" <<'PY' && ok || bad "a fixture is not a valid kgate-report/1"
import json, sys
from jsonschema import Draft202012Validator
v = Draft202012Validator(json.load(open(sys.argv[1])))
for f in sys.argv[2:]:
    v.validate(json.load(open(f)))
PY
for v in xfail xpass incomplete; do
    "$PY" "$SRC/tests/data/h200_variants.py" "$H200" "$T/h200-$v.json" "$v" || { echo "FAIL: h200_variants.py $v"; exit 1; }
done
"$PY" - "$SRC/baselines/report.schema.json" "$T"/h200-xfail.json "$T"/h200-xpass.json "$T"/h200-incomplete.json <<'PY' && ok || bad "a variant is not a valid kgate-report/1"
import json, sys
from jsonschema import Draft202012Validator
v = Draft202012Validator(json.load(open(sys.argv[1])))
for f in sys.argv[2:]:
    v.validate(json.load(open(f)))
PY
REG=reduce_sum/n=67108869/f32 IMP=rmsnorm/rows=16384,cols=8192/bf16 NOMARK=softmax/rows=16384,cols=4096/f32
[ "$(fig bench "$REG" decision)" = REGRESSED ] && [ "$(fig bench "$IMP" decision)" = IMPROVED ] \
    && ok || bad "the decided fixture lacks its regression or improvement"

"$KG" report --from "$REPORT" --junit "$T/j.xml" --markdown "$T/s.md" --html "$T/r.html" \
    >"$T/out" 2>&1; rc=$?
[ "$rc" -eq 0 ] && ok || { bad "report: exit $rc"; cat "$T/out"; }

# JUnit: schema-valid, one testcase per result, verdicts mapped, text escaped.
xmllint --noout --schema "$XSD" "$T/j.xml" 2>"$T/xsd.err" && ok || { bad "JUnit invalid"; cat "$T/xsd.err"; }
# The schema check itself can fail: a suite without its required counts is rejected.
echo '<testsuites><testsuite name="x"><testcase name="c"/></testsuite></testsuites>' >"$T/bad.xml"
xmllint --noout --schema "$XSD" "$T/bad.xml" 2>/dev/null && bad "the XSD accepts an invalid file" || ok
x() { xmllint --xpath "$1" "${2:-$T/j.xml}" 2>/dev/null; }
nv() { jq "[.results[] | select(.verdict == \"$1\")] | length" "${2:-$REPORT}"; }
[ "$(x 'count(//testcase)')" = "$(jq '.results | length' "$REPORT")" ] && ok || bad "testcase count $(x 'count(//testcase)')"
[ "$(x 'count(//testcase/failure)')" = 2 ] && [ "$(nv FAIL)" = 2 ] && ok || bad "failures $(x 'count(//testcase/failure)')"
[ "$(x 'count(//testcase/error)')" = 1 ] && ok || bad "errors"
[ "$(x 'count(//testcase/skipped)')" = 0 ] && ok || bad "skipped (a GPU run skips nothing)"
[ "$(x 'string(/testsuites/@failures)')" = 2 ] && ok || bad "testsuites@failures"
[ "$(x "string(//testcase[@classname=\"bench\" and @name=\"$REG\"]/failure/@type)")" = REGRESSED ] \
    && ok || bad "bench regression not typed REGRESSED"
x "string(//testcase[@classname=\"bench\" and @name=\"$REG\"]/failure)" >"$T/regfail.txt"
has "$T/regfail.txt" "delta_rel = 0.032"
has "$T/regfail.txt" "median_us = $(fig bench "$REG" median_us | cut -c1-10)"
[ "$(x 'string(//testcase[@classname="parity" and starts-with(@name,"softmax/rows=4096")]/failure/@message)')" = \
  "$(jq -r '.results[] | select(.gate == "parity" and .verdict == "FAIL") | .message' "$REPORT")" ] \
    && ok || bad "message not escaped/round-tripped"
[ "$(x 'string(//property[@name="kgate.mode"]/@value)')" = production ] && ok || bad "mode property"
[ "$(x 'string(//property[@name="kgate.device_class"]/@value)')" = "NVIDIA H200/sm_90" ] && ok || bad "device class property"
# Passing rows keep the H200's figures (the bench median of the smallest case, its kernel).
x 'string(//testcase[@classname="bench" and @name="axpy/n=1/f32"]/system-out)' >"$T/axpy.txt"
has "$T/axpy.txt" "median_us = $(fig bench axpy/n=1/f32 median_us | cut -c1-10)"
has "$T/axpy.txt" "_Z11axpy_kernelfPKfS0_Pfm"
[ "$(x "string(//testcase[@classname=\"bench\" and @name=\"$REG\"]/@time)")" = \
  "$(printf '%.6f' "$(fig bench "$REG" elapsed_s)")" ] && ok || bad "bench testcase time is not its elapsed_s"

# Markdown: failures and regressions first, the figures in the rows, no banner in production.
has "$T/s.md" "### Needs attention"
first=$(grep -m1 -n '^| `' "$T/s.md" | cut -d: -f1)
sed -n "${first}p" "$T/s.md" | grep -q "REGRESSED" && ok || bad "first row is not the regression"
md_row() { # md_row CASE ICON-AND-VERDICT: the bench row as the summary must show it
    printf '| bench | %s | %.2f µs | %+.2f%% (band ±%.2f%%) | %.1f%% |' "$2" "$(fig bench "$1" median_us)" \
        "$(jq -n "$(fig bench "$1" delta_rel) * 100")" "$(jq -n "$(fig bench "$1" tolerance_rel) * 100")" \
        "$(fig bench "$1" pct_copy_ceiling)"
}
has "$T/s.md" "$(md_row "$REG" '🔴 FAIL (REGRESSED)')"
has "$T/s.md" "$(md_row "$IMP" '✅ PASS (IMPROVED)')"
has "$T/s.md" '| bench | 🔴 FAIL (REGRESSED) | 62.86 µs | +3.20% (band ±0.66%) | 101.6% |'
# compute-bound: the GEMM ceiling, not the copy ceiling; the same 0.5% floor as every case (issue #14)
has "$T/s.md" '| bench | ✅ PASS (SAME) | 1404.13 µs | +0.40% (band ±0.50%) | 98.2% |'
has "$T/s.md" "$(printf '| bench | ✅ PASS (NO_MARK) | %.2f µs | no mark | %.1f%% |' \
    "$(fig bench "$NOMARK" median_us)" "$(fig bench "$NOMARK" pct_copy_ceiling)")"
has "$T/s.md" 'no mark'
has "$T/s.md" '\|out-ref\|'
has "$T/s.md" '&lt;tolerance&gt; &amp;'
hasnt "$T/s.md" "DIAGNOSTIC"
att=$(awk '/### Needs attention/{f=1} /### All results/{f=0} f && /^\| `/' "$T/s.md" | wc -l)
[ "$att" -eq 3 ] && ok || bad "attention rows: $att, want 3"

# HTML: standalone, the chart with the mark bands, the table.
has "$T/r.html" '<svg id="chart-marks"'
has "$T/r.html" '<svg id="chart-ceiling"'
marked=$(jq '[.results[] | select(.figures.mark?)] | length' "$REPORT")
[ "$marked" -eq 4 ] && [ "$(grep -o '<circle' "$T/r.html" | wc -l)" -eq "$marked" ] && ok \
    || bad "chart points (want $marked: cases with a mark)"
has "$T/r.html" "$(printf '<td class="num">%.3f</td><td class="num">%.3f</td><td class="num">+3.20%%</td><td class="num">±0.66%%</td>' \
    "$(fig bench "$REG" median_us)" "$(fig bench "$REG" mark.value)")"
has "$T/r.html" "$(printf ': %.3f vs mark %.3f (+3.20%%, band ±0.66%%) REGRESSED</title>' \
    "$(fig bench "$REG" median_us)" "$(fig bench "$REG" mark.value)")"
grep -qiE '(src|href|action)=["'\'']?(https?:)?//|url\(|@import|<script[^>]*src|<link' "$T/r.html" \
    && bad "HTML references an external resource" || ok
grep -qiE 'https?://' "$T/r.html" && bad "HTML mentions an http(s) URL" || ok
hasnt "$T/r.html" 'id="diagnostic"'
# The charts scale to the page; the table filters and sorts where scripts run (its controls are
# hidden without them); a case id breaks only at / , = (no mid-token break); the ceiling named.
has "$T/r.html" '<svg id="chart-marks" viewBox="0 0 640 '
has "$T/r.html" 'width="100%" style="max-width:640px;height:auto'
has "$T/r.html" '<div id="rf" class="filter" hidden>'
has "$T/r.html" "<script>(function(){var t=document.getElementById('results')"
has "$T/r.html" '<code>axpy/<wbr>n=<wbr>33554433/<wbr>f32</code>'
has "$T/r.html" '% <span class="meta">of copy</span>'
has "$T/r.html" 'of GEMM</text>'
has "$T/r.html" 'against the GEMM): copy 4203 GB/s (memory-bound cases); bf16 cuBLAS GEMM 797.4 TFLOP/s'
has "$T/s.md" "% of ceiling: of this run's measured copy 4203 GB/s"
# Each inline chart is well-formed XML (what an SVG renderer needs).
"$PY" - "$T/r.html" <<'PY' && ok || bad "inline SVG is not well-formed"
import re, sys, xml.etree.ElementTree as ET
svgs = re.findall(r"<svg\b.*?</svg>", open(sys.argv[1], encoding="utf-8").read(), re.S)
assert len(svgs) == 2, len(svgs)
for s in svgs:
    ET.fromstring(s)
PY

# The recorded run itself is diagnostic: stamped everywhere; every case and the medians shown.
"$KG" report --from "$H200" --junit "$T/dj.xml" --markdown - --html "$T/dr.html" >"$T/ds.md" 2>/dev/null \
    && ok || bad "diagnostic report: exit $?"
has "$T/ds.md" "DIAGNOSTIC RUN: NON-CERTIFYING"
has "$T/dr.html" 'id="diagnostic"'
has "$T/dj.xml" 'kgate (DIAGNOSTIC, non-certifying)'
xmllint --noout --schema "$XSD" "$T/dj.xml" 2>/dev/null && ok || bad "diagnostic JUnit invalid"
[ "$(x 'count(//testcase)' "$T/dj.xml")" = "$(jq '.results | length' "$H200")" ] && ok || bad "H200 testcases"
has "$T/ds.md" '· device `NVIDIA H200/sm_90` · commit `1f64c0b96d8d...` · seed `4242`'
missing=0
while IFS=$'\t' read -r c med; do
    grep -qF "$c" "$T/ds.md" && grep -qF "$(printf '%.2f µs' "$med")" "$T/ds.md" || { missing=1; echo "  $c $med"; }
done < <(jq -r '.results[] | select(.gate == "bench") | [.case, .figures.median_us] | @tsv' "$H200")
[ "$missing" -eq 0 ] && ok || bad "the H200 summary lacks a bench case or its median"
has "$T/dr.html" 'No case in this report has a time and a mark'
has "$T/dr.html" '<svg id="chart-ceiling"'
has "$T/dr.html" '<tr><th>device.class</th><td>NVIDIA H200/sm_90</td></tr>'

# Reports of the real CLI without a GPU convert: parity gives SKIPs; the defects runner's run
# gives static preflight FAILs and WARNs besides the SKIPs.
"$KG" parity --filter '^axpy/' --seed 3 --report "$T/p.json" >/dev/null 2>&1
if [ -s "$T/p.json" ]; then
    "$KG" report --from "$T/p.json" --junit "$T/pj.xml" --markdown "$T/ps.md" >/dev/null 2>&1 && ok || bad "parity report conversion"
    xmllint --noout --schema "$XSD" "$T/pj.xml" 2>/dev/null && ok || bad "parity JUnit invalid"
    has "$T/ps.md" "DIAGNOSTIC RUN"
    [ "$(x 'count(//testcase/skipped)' "$T/pj.xml")" = "$(nv SKIP "$T/p.json")" ] && ok || bad "parity skips"
else bad "parity wrote no report"; fi
"$KD" run --diagnostic --skip-selftest --seed 4 --report "$T/d.json" >/dev/null 2>&1
if [ -s "$T/d.json" ] && [ "$(nv FAIL "$T/d.json")" -gt 0 ]; then
    "$KG" report --from "$T/d.json" --junit "$T/dfj.xml" --markdown "$T/dfs.md" >/dev/null 2>&1 && ok || bad "defects report conversion"
    xmllint --noout --schema "$XSD" "$T/dfj.xml" 2>/dev/null && ok || bad "defects JUnit invalid"
    [ "$(x 'count(//testcase/failure)' "$T/dfj.xml")" = "$(nv FAIL "$T/d.json")" ] && ok || bad "defects failures"
    [ "$(x 'count(//testcase/skipped)' "$T/dfj.xml")" = "$(nv SKIP "$T/d.json")" ] && ok || bad "defects skips"
    has "$T/dfs.md" "### Needs attention"
    has "$T/dfs.md" '| preflight | ❌ FAIL |'
    has "$T/dfs.md" 'local memory: 64 B/thread'
    # Where the time went: the run's parts and its slowest cases, from the report's timing.
    has "$T/dfs.md" '### Where the time went'
    has "$T/dfs.md" '| preflight | '
    has "$T/dfs.md" 'slowest cases:'
    [ "$(jq '[.timing.parts[].name] | index("preflight") != null' "$T/d.json")" = true ] && ok \
        || bad "the defects run's timing has no preflight part"
    [ "$(jq '[.results[] | select(.timing)] | length' "$T/d.json")" = "$(jq '.results | length' "$T/d.json")" ] \
        && ok || bad "a result without its timing"
    # The HTML draws it (issue #29): a bar per part, the slowest cases stacked by phase.
    "$KG" report --from "$T/d.json" --html "$T/dfh.html" >/dev/null 2>&1 && ok || bad "defects HTML"
    has "$T/dfh.html" '<h2>Where the time went</h2>'
    has "$T/dfh.html" '<svg id="chart-timing" viewBox="0 0 640 '
    grep -qE '<text x="[0-9.]+" y="89.0">preflight</text>' "$T/dfh.html" && ok || bad "no preflight bar label"
    # Each gate's part carries its own begin and end (outside every case), the table and the
    # chart's legend name them.
    [ "$(jq '[.timing.parts[] | select(.name == "preflight") | (.begin_s >= 0 and .end_s >= 0)] | all' "$T/d.json")" = true ] \
        && ok || bad "the preflight part has no begin_s/end_s"
    has "$T/dfs.md" '| gate begin | gate end |'
    has "$T/dfh.html" '&#9632;</span> gate begin'
    has "$T/dfh.html" '&#9632;</span> gate end'

    # Slowest first; cases of the same time (many at 0.0001 s) by case id, then gate: the same
    # report always draws the same first bar and lists the same first row.
    first='[.results[] | select(.timing)] | sort_by([-.timing.wall_s, .case, .gate]) | first'
    slowest=$(jq -r "$first"' | "\(.gate): \(.case)"' "$T/d.json")
    sed -n '/<svg id="chart-slowest"/,/<\/svg>/p' "$T/dfh.html" | grep -o '<title>[^<]*</title>' | head -1 \
        | grep -qF "<title>$slowest: " && ok \
        || bad "the slowest-cases chart does not start with the slowest case ($slowest)"
    slowest_md=$(jq -r "$first"' | "| \(.gate) | `\(.case)` |"' "$T/d.json")
    sed -n '/slowest cases:/,$p' "$T/dfs.md" | sed -n 5p | grep -qF "$slowest_md" && ok \
        || bad "the slowest-cases table does not start with the slowest case ($slowest_md)"
    grep -qE '<title>preflight: work [0-9.e+-]+ m?s</title>' "$T/dfh.html" && ok || bad "no work phase drawn"
    # Every case at the same time, in report order and reversed: the same ten, by case id.
    jq '.results |= map(if .timing then .timing.wall_s = 0.0001 else . end)' "$T/d.json" >"$T/tie.json"
    jq '.results |= reverse' "$T/tie.json" >"$T/tier.json"
    for r in tie tier; do
        "$KG" report --from "$T/$r.json" --html "$T/$r.html" --markdown "$T/$r.md" >/dev/null 2>&1
        sed -n '/<svg id="chart-slowest"/,/<\/svg>/p' "$T/$r.html" >"$T/$r.svg"
        sed -n '/slowest cases:/,$p' "$T/$r.md" | sed -n '5,14p' >"$T/$r.rows"
    done
    want=$(jq -r '[.results[] | select(.timing)] | sort_by([.case, .gate]) | .[0:10][] | "| \(.gate) | `\(.case)`"' "$T/tie.json")
    [ -s "$T/tie.svg" ] && cmp -s "$T/tie.svg" "$T/tier.svg" && cmp -s "$T/tie.rows" "$T/tier.rows" \
        && [ "$(cut -d' ' -f1-4 "$T/tie.rows")" = "$want" ] && ok \
        || bad "slowest cases of equal time not in case-id order whatever the report's order"
else bad "the defects run wrote no report with failures"; fi
# A report from before timing (the recorded H200 run) has no such section.
hasnt "$T/ds.md" 'Where the time went'
"$KG" report --from "$REPORT" --html "$T/dsh.html" >/dev/null 2>&1
hasnt "$T/dsh.html" 'Where the time went'

# A run without a GPU (exit 3) is never headlined "passed": "incomplete: no GPU", in the
# Markdown, the HTML title, headline and banner; failures still say so after it.
if [ -s "$T/p.json" ]; then
    "$KG" report --from "$T/p.json" --markdown "$T/ps.md" --html "$T/ph.html" >/dev/null 2>&1 && ok || bad "parity no-GPU html: exit $?"
    grep -qxF '## kgate parity: ⏭️ incomplete: no GPU' "$T/ps.md" && ok || bad "parity no-GPU headline"
    has "$T/ps.md" '**INCOMPLETE: NO GPU.** 4 of 4 results were skipped (no CUDA device'
    has "$T/ph.html" '<h1>kgate parity: incomplete: no GPU</h1>'
    grep -q '^## kgate.*passed' "$T/ps.md" && bad "a no-GPU parity report is headlined passed" || ok
fi
[ -s "$T/d.json" ] && has "$T/dfs.md" '## kgate run: ⏭️ incomplete: no GPU, ❌ failed'
# The recorded H200 run as it would be without a GPU (from the CPU parity report's no_device
# and SKIP rows): selftest and static preflight pass, every GPU gate skipped.
jq --slurpfile p "$T/p.json" '
    .device = null | .no_device = $p[0].no_device
    | .results |= map(if .gate == "parity" or .gate == "hotpath" or .gate == "bench"
                      then {gate, case, verdict: "SKIP", message: $p[0].results[0].message, figures: {}}
                      else . end)
    | .summary = (reduce .results[].verdict as $v ({PASS: 0, WARN: 0, FAIL: 0, SKIP: 0, ERROR: 0}; .[$v] += 1))' \
    "$H200" >"$T/xng.json"
"$PY" - "$SRC/baselines/report.schema.json" "$T/xng.json" <<'PY' && ok || bad "no-GPU run is not a valid kgate-report/1"
import json, sys
from jsonschema import Draft202012Validator
Draft202012Validator(json.load(open(sys.argv[1]))).validate(json.load(open(sys.argv[2])))
PY
[ "$(nv SKIP "$T/xng.json")" = 93 ] && [ "$(nv PASS "$T/xng.json")" = 57 ] && ok || bad "no-GPU run: derived counts"
"$KG" report --from "$T/xng.json" --markdown "$T/xng.md" --html "$T/xng.html" >/dev/null 2>&1 && ok || bad "no-GPU run: exit $?"
grep -qxF '## kgate run: ⏭️ incomplete: no GPU' "$T/xng.md" && ok || bad "no-GPU run headline"
has "$T/xng.md" '**INCOMPLETE: NO GPU.** 93 of 150 results were skipped (no CUDA device'
has "$T/xng.md" '**57 passed** (0 with warnings), **0 failed**, 0 errors, 93 skipped · mode `diagnostic` · no GPU'
grep -q '^## kgate.*passed' "$T/xng.md" && bad "a no-GPU run is headlined passed" || ok
has "$T/xng.html" '<title>kgate run (DIAGNOSTIC) (incomplete: no GPU)</title>'
has "$T/xng.html" '<h1>kgate run: incomplete: no GPU</h1>'
has "$T/xng.html" '<div class="incomplete" id="no-gpu">INCOMPLETE: NO GPU. 93 of 150 results were skipped'
grep -q '<h1>[^<]*passed' "$T/xng.html" && bad "a no-GPU HTML report is headlined passed" || ok
# A run with a GPU says nothing of it.
hasnt "$T/s.md" 'no GPU'
hasnt "$T/r.html" 'no-gpu'

# Expected failures and a fault (the xpass variant): the parity FAIL declared xfail_gate (XFAIL),
# another parity case declares one but passes (XPASS), the hotpath ERROR is a worker killed by
# SIGSEGV (figures.fault, its output tail).
XR=$T/h200-xpass.json XF=softmax/rows=4096,cols=1000/f32 XP=axpy/n=4097/f32 FC=rmsnorm/rows=4096,cols=4096/bf16
[ "$(nv XFAIL "$XR")" = 1 ] && [ "$(nv XPASS "$XR")" = 1 ] && [ "$(jq -r '.summary.XPASS' "$XR")" = 1 ] \
    && [ "$(jq -r --arg c "$FC" '.results[] | select(.gate == "hotpath" and .case == $c) | .figures.fault.class' "$XR")" = signal ] \
    && ok || bad "the xpass variant lacks its XFAIL, XPASS or fault"
"$KG" report --from "$XR" --junit "$T/xj.xml" --markdown "$T/xs.md" --html "$T/xr.html" >"$T/xout" 2>&1 \
    && ok || { bad "report of the xpass variant: exit $?"; cat "$T/xout"; }
xmllint --noout --schema "$XSD" "$T/xj.xml" 2>"$T/xsd.err" && ok || { bad "xpass JUnit invalid"; cat "$T/xsd.err"; }
tc() { echo "//testcase[@classname=\"$1\" and @name=\"$2\"]"; }
# XPASS: a <failure> with the message, counted with the failures.
[ "$(x "string($(tc parity "$XP")/failure/@type)" "$T/xj.xml")" = XPASS ] && ok || bad "XPASS is not a failure typed XPASS"
x "string($(tc parity "$XP")/failure/@message)" "$T/xj.xml" | grep -q '^passed, but the case declares an expected failure of parity' \
    && ok || bad "XPASS failure lacks the message"
# (the bench regression and the XPASS: the parity FAIL is the XFAIL now)
[ "$(x 'string(/testsuites/@failures)' "$T/xj.xml")" = 2 ] && ok || bad "testsuites@failures with an XPASS: $(x 'string(/testsuites/@failures)' "$T/xj.xml")"
[ "$(x 'string(//testsuite[@name="parity"]/@failures)' "$T/xj.xml")" = 1 ] && ok || bad "parity suite failures (the XPASS)"
# XFAIL: a <skipped type="XFAIL"> whose message says "expected failure", never a failure.
[ "$(x "count($(tc parity "$XF")/failure)" "$T/xj.xml")" = 0 ] && [ "$(x "string($(tc parity "$XF")/skipped/@type)" "$T/xj.xml")" = XFAIL ] \
    && ok || bad "XFAIL is not a skipped typed XFAIL"
x "string($(tc parity "$XF")/skipped/@message)" "$T/xj.xml" | grep -q '^expected failure (softmax tolerance under review): max_abs 0.5' \
    && ok || bad "XFAIL skipped lacks the expected-failure message"
[ "$(x 'string(//testsuite[@name="parity"]/@skipped)' "$T/xj.xml")" = 1 ] && ok || bad "parity suite skipped (the XFAIL)"
# The fault: an <error typed FAULT signal, its output tail line by line in <system-err>.
[ "$(x "string($(tc hotpath "$FC")/error/@type)" "$T/xj.xml")" = "FAULT signal" ] && ok || bad "fault error type"
x "string($(tc hotpath "$FC")/system-err)" "$T/xj.xml" >"$T/ferr.txt"
has "$T/ferr.txt" 'rmsnorm: launching grid (4096,1,1) block (256,1,1) <bf16> & "rows"'
has "$T/ferr.txt" 'worker: caught SIGSEGV at 0x0000000000000018'
[ "$(grep -c . "$T/ferr.txt")" = 3 ] && ok || bad "system-err: not one line per output line"
x "string($(tc hotpath "$FC")/error)" "$T/xj.xml" >"$T/ferr2.txt"
has "$T/ferr2.txt" 'fault.class = signal'
has "$T/ferr2.txt" 'fault.phase = launch'
[ "$(x 'count(//system-err)' "$T/xj.xml")" = 1 ] && ok || bad "system-err on a row without a fault"
# Markdown: the verdict names and icons, XPASS and the fault in "Needs attention", the counts.
has "$T/xs.md" '## kgate run: ❌ failed'
has "$T/xs.md" '**1 failed**, 1 errors (1 fault), 0 skipped, 1 expected failure, **1 unexpected pass** · mode `production`'
has "$T/xs.md" '| `axpy/n=4097/f32` | parity | ❗ XPASS | - | - | - | passed, but the case declares'
has "$T/xs.md" '| `softmax/rows=4096,cols=1000/f32` | parity | ☑️ XFAIL | - | - | - | expected failure (softmax tolerance under review)'
has "$T/xs.md" '| hotpath | 💥 ERROR **FAULT signal** | - | - | - | FAULT signal: killed by SIGSEGV in hotpath (launch) |'
att=$(awk '/### Needs attention/{f=1} /### All results/{f=0} f && /^\| `/' "$T/xs.md")
echo "$att" | grep -q 'XPASS' && echo "$att" | grep -q 'FAULT signal' && ! echo "$att" | grep -q XFAIL \
    && [ "$(echo "$att" | wc -l)" -eq 3 ] && ok || bad "attention rows with XFAIL/XPASS/fault: $att"
hasnt "$T/xs.md" 'incomplete'
# HTML: the verdict classes, the fault badge and its output, the counts.
has "$T/xr.html" '<h1>kgate run: failed</h1>'
has "$T/xr.html" '<td class="XPASS">XPASS (unexpected pass)</td>'
has "$T/xr.html" '<td class="XFAIL">XFAIL (expected failure)</td>'
has "$T/xr.html" '<td class="ERROR">ERROR <span class="fault">FAULT signal</span></td>'
has "$T/xr.html" '<pre>rmsnorm: launching grid (4096,1,1) block (256,1,1) &lt;bf16&gt; &amp; &quot;rows&quot;&#10;worker: caught SIGSEGV'
has "$T/xr.html" '1 failed, 1 errors (1 fault), 0 skipped, 1 expected failure, <strong class="XPASS">1 unexpected pass</strong> · mode production'
hasnt "$T/xr.html" 'id="incomplete"'
# XFAIL alone passes: the headline says so and counts only the expected failure.
"$KG" report --from "$T/h200-xfail.json" --junit "$T/xfj.xml" --markdown "$T/xfs.md" >/dev/null 2>&1 && ok || bad "xfail variant: exit $?"
# (the variant's other FAIL and ERROR rows as the recorded run wrote them: passes)
jq --slurpfile h "$H200" '
    ($h[0].results | map({key: "\(.gate) \(.case)", value: .}) | from_entries) as $rec
    | .results |= map(if .verdict == "FAIL" or .verdict == "ERROR" then $rec["\(.gate) \(.case)"] else . end)
    | .marks_update.reason = "" | .summary = (reduce .results[].verdict as $v
        ({PASS: 0, WARN: 0, FAIL: 0, SKIP: 0, ERROR: 0}; .[$v] += 1))' "$T/h200-xfail.json" >"$T/xfonly.json"
"$PY" - "$SRC/baselines/report.schema.json" "$T/xfonly.json" <<'PY' && ok || bad "xfonly is not a valid kgate-report/1"
import json, sys
from jsonschema import Draft202012Validator
Draft202012Validator(json.load(open(sys.argv[1]))).validate(json.load(open(sys.argv[2])))
PY
"$KG" report --from "$T/xfonly.json" --markdown "$T/xfo.md" --junit "$T/xfo.xml" >/dev/null 2>&1 && ok || bad "xfonly: exit $?"
has "$T/xfo.md" '## kgate run: ✅ passed'
has "$T/xfo.md" '**149 passed** (0 with warnings), **0 failed**, 0 errors, 0 skipped, 1 expected failure · mode'
hasnt "$T/xfo.md" 'unexpected pass'
hasnt "$T/xfo.md" '### Needs attention'
[ "$(x 'string(/testsuites/@failures)' "$T/xfo.xml")" = 0 ] && [ "$(x 'count(//skipped[@type="XFAIL"])' "$T/xfo.xml")" = 1 ] \
    && ok || bad "xfonly JUnit: an XFAIL counted as a failure"
# Reports without expected failures say nothing of them.
hasnt "$T/s.md" 'expected failure'
hasnt "$T/s.md" 'unexpected pass'
hasnt "$T/r.html" 'expected failure'
# An interrupted run: headlined "incomplete (interrupted)" everywhere; the interrupted case a fault.
IR=$T/h200-incomplete.json
"$KG" report --from "$IR" --junit "$T/ij.xml" --markdown "$T/is.md" --html "$T/ir.html" >/dev/null 2>&1 && ok || bad "incomplete: exit $?"
xmllint --noout --schema "$XSD" "$T/ij.xml" 2>/dev/null && ok || bad "incomplete JUnit invalid"
has "$T/is.md" '## kgate run: ⏹️ incomplete (interrupted), ❌ failed'
has "$T/is.md" '**INCOMPLETE (INTERRUPTED).**'
has "$T/is.md" '| bench | 💥 ERROR **FAULT interrupted** | - | - | - | FAULT interrupted: the run was interrupted by SIGTERM in bench (timing) |'
has "$T/is.md" '2 errors (2 faults)'
has "$T/ir.html" '<h1>kgate run: incomplete (interrupted), failed</h1>'
has "$T/ir.html" '<div class="incomplete" id="incomplete">INCOMPLETE (INTERRUPTED)'
has "$T/ir.html" '<title>kgate run (incomplete, interrupted)</title>'
has "$T/ij.xml" '<testsuites name="kgate (incomplete: interrupted)"'
[ "$(x 'string(//property[@name="kgate.incomplete"]/@value)' "$T/ij.xml")" = "true (interrupted): the results so far" ] \
    && ok || bad "incomplete property"
[ "$(x 'string(//testcase[@classname="bench" and @name="cublas_gemm_bf16/m=256,n=384,k=512/bf16"]/error/@type)' "$T/ij.xml")" = "FAULT interrupted" ] \
    && ok || bad "the interrupted case is not a FAULT interrupted error"
hasnt "$T/s.md" 'incomplete'
hasnt "$T/r.html" 'incomplete (interrupted)'

# Bad input: exit 2, message naming the file/field, nothing written.
check2() { # check2 DESC PATTERN args...
    local d=$1 p=$2; shift 2
    "$KG" report "$@" >"$T/o2" 2>"$T/e2"; local rc=$?
    [ "$rc" -eq 2 ] && grep -qF -- "$p" "$T/e2" && ok || { bad "$d: exit $rc"; cat "$T/e2"; }
}
check2 "no --from" "--from REPORT.json is required" --junit "$T/n1.xml"
check2 "no output" "nothing to write" --from "$REPORT"
check2 "missing file" "$T/none.json" --from "$T/none.json" --junit "$T/n2.xml"
printf '{"schema": "kgate-report/1", "results": [' >"$T/trunc.json"
check2 "truncated" "malformed JSON" --from "$T/trunc.json" --junit "$T/n3.xml"
echo '{"schema": "other/2", "results": []}' >"$T/schema.json"
check2 "wrong schema" "field 'schema'" --from "$T/schema.json" --junit "$T/n4.xml"
echo '{"schema": "kgate-report/1", "results": [{"gate":"g","case":"c","verdict":"MAYBE"}]}' >"$T/verdict.json"
check2 "bad verdict" "results[0].verdict" --from "$T/verdict.json" --markdown "$T/n5.md"
check2 "unknown flag" "'--bogus'" --from "$REPORT" --bogus
check2 "unwritable" "cannot write there" --from "$REPORT" --junit "$T/no/dir/x.xml"
ls "$T"/n*.* >/dev/null 2>&1 && bad "a file was written on bad input" || ok
# An output that is the input (issue #28): refused, by path or through another name.
cp "$REPORT" "$T/self.json"; ln "$T/self.json" "$T/self-link.json"; SUM=$(cksum <"$T/self.json")
check2 "--junit X of --from X" "is the input" --from "$T/self.json" --junit "$T/self.json"
check2 "--html through a hard link" "is the input" --from "$T/self.json" --html "$T/self-link.json"
[ "$(cksum <"$T/self.json")" = "$SUM" ] && ok || bad "the input was overwritten"
# A time of 1e999 (inf), or times whose sum is (1.7e308 each), is never written as time="inf".
jq '.results[0].figures.elapsed_s = 12345.5 | .results[1:] |= map(.figures.elapsed_s = 1.7e308)' "$REPORT" \
    | sed 's/"elapsed_s": 12345.5/"elapsed_s": 1e999/' >"$T/inf.json"
grep -q 1e999 "$T/inf.json" && "$KG" report --from "$T/inf.json" --junit "$T/inf.xml" 2>/dev/null \
    && ! grep -qi 'time="[^"]*\(inf\|nan\)' "$T/inf.xml" && ok || bad "junit: a non-finite time: $(grep -o 'time="[^"]*"' "$T/inf.xml" | sort -u | head -3)"

finish
