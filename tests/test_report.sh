#!/usr/bin/env bash
# `kgate report`: JUnit validates against the committed JUnit XSD with the expected counts and
# escaping; Markdown puts failures and regressions first and stamps diagnostic runs; HTML is
# standalone (no http(s) resource) with the marks chart; bad input exits 2 and writes nothing.
set -u
KG=$1
SRC=${KG_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
REPORT=$SRC/tests/data/sample_report.json
XSD=$SRC/tests/data/junit-10.xsd
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass+1)); }
bad() { echo "FAIL: $*"; fail=$((fail+1)); }
has() { grep -qF -- "$2" "$1" && ok || bad "$1 lacks: $2"; }
hasnt() { grep -qF -- "$2" "$1" && bad "$1 has: $2" || ok; }

"$KG" report --from "$REPORT" --junit "$T/j.xml" --markdown "$T/s.md" --html "$T/r.html" \
    >"$T/out" 2>&1; rc=$?
[ "$rc" -eq 0 ] && ok || { bad "report: exit $rc"; cat "$T/out"; }

# JUnit: schema-valid, one testcase per result, verdicts mapped, text escaped.
xmllint --noout --schema "$XSD" "$T/j.xml" 2>"$T/xsd.err" && ok || { bad "JUnit invalid"; cat "$T/xsd.err"; }
# The schema check itself can fail: a suite without its required counts is rejected.
echo '<testsuites><testsuite name="x"><testcase name="c"/></testsuite></testsuites>' >"$T/bad.xml"
xmllint --noout --schema "$XSD" "$T/bad.xml" 2>/dev/null && bad "the XSD accepts an invalid file" || ok
x() { xmllint --xpath "$1" "$T/j.xml" 2>/dev/null; }
[ "$(x 'count(//testcase)')" = "$(jq '.results | length' "$REPORT")" ] && ok || bad "testcase count $(x 'count(//testcase)')"
[ "$(x 'count(//testcase/failure)')" = 2 ] && ok || bad "failures $(x 'count(//testcase/failure)')"
[ "$(x 'count(//testcase/error)')" = 1 ] && ok || bad "errors"
[ "$(x 'count(//testcase/skipped)')" = 1 ] && ok || bad "skipped"
[ "$(x 'string(/testsuites/@failures)')" = 2 ] && ok || bad "testsuites@failures"
[ "$(x 'string(//testcase[@classname="bench" and @name="reduce_sum/n=268435456/f32"]/failure/@type)')" = REGRESSED ] \
    && ok || bad "bench regression not typed REGRESSED"
x 'string(//testcase[@classname="bench" and @name="reduce_sum/n=268435456/f32"]/failure)' | grep -q "delta_rel = 0.032" \
    && ok || bad "failure text lacks the figures"
[ "$(x 'string(//testcase[@classname="parity" and starts-with(@name,"softmax")]/failure/@message)')" = \
  "$(jq -r '.results[1].message' "$REPORT")" ] && ok || bad "message not escaped/round-tripped"
[ "$(x 'string(//property[@name="kgate.mode"]/@value)')" = production ] && ok || bad "mode property"

# Markdown: failures and regressions first, the figures in the rows, no banner in production.
has "$T/s.md" "### Needs attention"
first=$(grep -m1 -n '^| `' "$T/s.md" | cut -d: -f1)
sed -n "${first}p" "$T/s.md" | grep -q "REGRESSED" && ok || bad "first row is not the regression"
has "$T/s.md" '| bench | 🔴 FAIL (REGRESSED) | 412.80 µs | +3.20% (band ±0.40%) | 88.1% |'
has "$T/s.md" '| bench | ✅ PASS (IMPROVED) | 97.50 µs | -2.50% (band ±0.60%) | 91.7% |'
has "$T/s.md" 'no mark'
has "$T/s.md" '\|out-ref\|'
hasnt "$T/s.md" "DIAGNOSTIC"
att=$(awk '/### Needs attention/{f=1} /### All results/{f=0} f && /^\| `/' "$T/s.md" | wc -l)
[ "$att" -eq 3 ] && ok || bad "attention rows: $att, want 3"

# HTML: standalone, the chart with the mark bands, the table.
has "$T/r.html" '<svg id="chart-marks"'
has "$T/r.html" '<svg id="chart-ceiling"'
[ "$(grep -o '<circle' "$T/r.html" | wc -l)" -eq 3 ] && ok || bad "chart points (want 3: cases with a mark)"
grep -qiE '(src|href|action)=["'\'']?(https?:)?//|url\(|@import|<script|<link' "$T/r.html" \
    && bad "HTML references an external resource" || ok
grep -qiE 'https?://' "$T/r.html" && bad "HTML mentions an http(s) URL" || ok
hasnt "$T/r.html" 'id="diagnostic"'
# Each inline chart is well-formed XML (what an SVG renderer needs).
python3 - "$T/r.html" <<'PY' && ok || bad "inline SVG is not well-formed"
import re, sys, xml.etree.ElementTree as ET
svgs = re.findall(r"<svg\b.*?</svg>", open(sys.argv[1], encoding="utf-8").read(), re.S)
assert len(svgs) == 2, len(svgs)
for s in svgs:
    ET.fromstring(s)
PY

# Diagnostic runs are stamped everywhere.
jq '.mode = "diagnostic" | .certifying = false' "$REPORT" >"$T/diag.json"
"$KG" report --from "$T/diag.json" --junit "$T/dj.xml" --markdown - --html "$T/dr.html" >"$T/ds.md" 2>/dev/null \
    && ok || bad "diagnostic report: exit $?"
has "$T/ds.md" "DIAGNOSTIC RUN: NON-CERTIFYING"
has "$T/dr.html" 'id="diagnostic"'
has "$T/dj.xml" 'kgate (DIAGNOSTIC, non-certifying)'
xmllint --noout --schema "$XSD" "$T/dj.xml" 2>/dev/null && ok || bad "diagnostic JUnit invalid"

# A report of the real CLI (any command's report converts): parity without a GPU gives SKIPs.
"$KG" parity --filter '^axpy/' --seed 3 --report "$T/p.json" >/dev/null 2>&1
if [ -s "$T/p.json" ]; then
    "$KG" report --from "$T/p.json" --junit "$T/pj.xml" --markdown "$T/ps.md" >/dev/null 2>&1 && ok || bad "parity report conversion"
    xmllint --noout --schema "$XSD" "$T/pj.xml" 2>/dev/null && ok || bad "parity JUnit invalid"
    has "$T/ps.md" "DIAGNOSTIC RUN"
else bad "parity wrote no report"; fi

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

echo "test_report: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
