#!/usr/bin/env bash
# What people look at, rendered in headless Chromium (scripts/screenshots.sh): the HTML report
# of a real CPU run of every gate and of the recorded H200 run, the run history page, `kgate
# marks history` and the PR comment, each checked at 360, 760 and 1280 px (a cell or label whose
# text overflows its box, an SVG text outside its SVG, a data point outside its plot area, a
# page wider than the window) and shot at 760 px. The check itself must fail on a page with
# each of those four defects and pass its clean twin.
# Skips (77) only when chromium is absent.
# Usage: test_render.sh BUILD_DIR PYTHON3
. "$(dirname "$0")/lib.sh"
BUILD=$(realpath "$1")
export KG_PYTHON3=${2:-python3}
S=$SRC/scripts/screenshots.sh
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
    || skip "chromium is not installed (scripts/deps.sh installs it)"

# The planted defects, one each, and the clean twin of the same page.
cat >"$T/defect.html" <<'HTML'
<!DOCTYPE html><html><body>
<table><tr><td style="width:80px;max-width:80px;white-space:nowrap;overflow:hidden">a_case_id_that_is_far_too_long_for_its_cell</td></tr></table>
<svg width="100" height="40"><text x="60" y="20" font-size="14">clipped label</text></svg>
<div style="width:3000px">wide</div>
<svg viewBox="0 0 200 80" width="100%" style="max-width:200px"><rect class="plot" x="10" y="10" width="100" height="50" fill="none" stroke="#999"/><circle class="pt" cx="160" cy="30" r="4"><title>a regressed dot past the plot</title></circle></svg>
</body></html>
HTML
cat >"$T/clean.html" <<'HTML'
<!DOCTYPE html><html><body>
<table><tr><td style="width:80px;max-width:80px;overflow-wrap:anywhere">a_case_id_that_is_far_too_long_for_its_cell</td></tr></table>
<svg width="200" height="40"><text x="10" y="20" font-size="14">clipped label</text></svg>
<div style="width:300px">wide</div>
<svg viewBox="0 0 200 80" width="100%" style="max-width:200px"><rect class="plot" x="10" y="10" width="100" height="50" fill="none" stroke="#999"/><circle class="pt" cx="60" cy="30" r="4"><title>a regressed dot past the plot</title></circle></svg>
</body></html>
HTML
check "the check catches a clipped cell" 1 "text overflows its <td>" -- "$S" --check "$T/defect.html" 800
expect_grep "SVG text outside its <svg>" "$T/out" "the check missed the SVG text outside its SVG"
expect_grep "px wide in a 800 px window" "$T/out" "the check missed the page wider than the window"
expect_grep "a point outside the plot area of its chart .*a regressed dot past the plot" "$T/out" \
    "the check missed the point outside its plot"
check "the clean twin passes" 0 "1 point\(s\) inside their plots" -- "$S" --check "$T/clean.html" 800

# The results table's script, in Chromium: the verdict menu, the text filter, a sort by change
# (descending: the +3.20% regression first, rows without a change last); its controls shown.
KG=$BUILD/runners/kgate
"$KG_PYTHON3" "$SRC/tests/data/h200_variants.py" "$SRC/tests/data/h200-run-report.json" "$T/dec.json" decided \
    && "$KG" report --from "$T/dec.json" --html "$T/dec.html" >/dev/null 2>&1 || bad "the decided report"
cp "$SRC/tests/render_table_probe.js" "$T/probe.js"
sed 's#</body>#<script src="probe.js"></script></body>#' "$T/dec.html" >"$T/dec-probe.html"
timeout 120 "$(command -v chromium || command -v chromium-browser)" --headless --no-sandbox --disable-gpu \
    --user-data-dir="$T/profile" --dump-dom "file://$T/dec-probe.html" 2>/dev/null | grep -o 'PROBE .*</pre>' >"$T/probe"
expect_grep "hidden=false \| attention: 3 of 150 rows \| text: 8 of 150 rows \| change desc first: reduce_sum/n=67108869/f32 \+3.20% / last - sort=descending" \
    "$T/probe" "the table's filter or sort: $(cat "$T/probe")"
# its defect twin: the page without the table's script (as with scripts off) shows no controls
sed 's#<script>(function(){var t=document.getElementById(.results.).*</script>##' "$T/dec-probe.html" >"$T/noscript.html"
grep -q "getElementById('results')" "$T/noscript.html" && bad "the twin still has the table's script"
timeout 120 "$(command -v chromium || command -v chromium-browser)" --headless --no-sandbox --disable-gpu \
    --user-data-dir="$T/profile" --dump-dom "file://$T/noscript.html" 2>/dev/null >"$T/noscript.dom"
grep -q 'PROBE hidden=false' "$T/noscript.dom" && bad "the probe passed without the table's script" || ok
grep -q '<div id="rf" class="filter" hidden' "$T/noscript.dom" && ok || bad "without the script the controls show"

# The real pages.
check "screenshots" 0 "comment: .*comment.png" -- "$S" --build "$BUILD" --out "$T/shots"
for n in report-cpu marks-history report h200-report-chart history comment; do
    for w in 360 760 1280; do
        expect_grep "^$n: no text overflows its box, every SVG text inside its SVG, .* \(${w}px wide\)" \
            "$T/out" "$n was not checked clean at $w px"
    done
done
# the points were there to check: the report's dots (the +3.2% regression among them), the
# history's runs, the marks history's marks
for n in report history marks-history; do
    expect_grep "^$n: .*, [1-9][0-9]* point\(s\) inside their plots \(360px wide\)" "$T/out" "$n: no point checked"
done
for n in report h200-report-chart history comment; do
    [ "$(head -c 8 "$T/shots/$n.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] && ok || bad "$n.png is not a PNG"
done
finish
