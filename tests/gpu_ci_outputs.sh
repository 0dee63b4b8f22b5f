#!/usr/bin/env bash
# On a GPU: a real run's report converts to JUnit (valid against tests/data/junit-10.xsd, one
# testcase per result), Markdown (the device and every case) and HTML (standalone). Exits 77
# (skipped) without a CUDA device. KG_CI_OUT=DIR keeps the files (report, JUnit, summary, HTML).
. "$(dirname "$0")/lib.sh"
KG=$1

# `run` runs every gate; before it exists, the parity gate's report serves the same purpose.
# A subset keeps the test short; the selftest has its own tests (the full run is scripts/main.sh).
cmd=(run --diagnostic --skip-selftest --filter '^(axpy/n=(4097|33554433)|softmax/rows=4096,cols=1000/f32|gemm_bf16/m=127)')
"$KG" "${cmd[@]}" --seed 7 --report "$T/report.json" >"$T/run.out" 2>&1; rc=$?
skip_if_no_gpu "$rc"
echo "kgate ${cmd[*]}: exit $rc"
[ -s "$T/report.json" ] || { cat "$T/run.out"; die "no report"; }
# `run` also runs GPU-free checks (static preflight), so no GPU need not mean exit 3.
if [ "$(jq -r '.device' "$T/report.json")" = null ]; then skip "no CUDA device"; fi
[ "$(jq -r '.device.name // empty' "$T/report.json")" != "" ] && ok || bad "report has no device"

"$KG" report --from "$T/report.json" --junit "$T/junit.xml" --markdown "$T/summary.md" \
    --html "$T/report.html" && ok || bad "kgate report: exit $?"
xmllint --noout --schema "$SRC/tests/data/junit-10.xsd" "$T/junit.xml" && ok || bad "JUnit invalid"
n=$(jq '.results | length' "$T/report.json")
[ "$n" -gt 0 ] && [ "$(xmllint --xpath 'count(//testcase)' "$T/junit.xml")" = "$n" ] \
    && ok || bad "testcases != $n results"
grep -qF "$(jq -r '.device.class' "$T/report.json")" "$T/summary.md" && ok || bad "summary lacks the device class"
for c in $(jq -r '.results[].case' "$T/report.json" | sort -u); do
    grep -qF "$c" "$T/summary.md" || bad "summary lacks case $c"
done
grep -qF "DIAGNOSTIC RUN" "$T/summary.md" && ok || bad "diagnostic banner missing"
grep -qiE '(src|href)=["'\'']?https?:' "$T/report.html" && bad "HTML references the network" || ok
if [ -n "${KG_CI_OUT:-}" ]; then
    mkdir -p "$KG_CI_OUT" && cp "$T"/report.json "$T"/junit.xml "$T"/summary.md "$T"/report.html "$KG_CI_OUT"/
    echo "kept in $KG_CI_OUT"
fi
finish
