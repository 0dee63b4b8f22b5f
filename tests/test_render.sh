#!/usr/bin/env bash
# What people look at, rendered in headless Chromium (scripts/screenshots.sh): the HTML report
# of a real CPU run of every gate and of the recorded H200 run, the run history page, and the
# PR comment, each checked for clipping (a cell or label whose text overflows its box, an SVG
# text outside its SVG, a page wider than the window) and shot. The check itself must fail on
# a page with each of those three defects and pass its clean twin.
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
</body></html>
HTML
cat >"$T/clean.html" <<'HTML'
<!DOCTYPE html><html><body>
<table><tr><td style="width:80px;max-width:80px;overflow-wrap:anywhere">a_case_id_that_is_far_too_long_for_its_cell</td></tr></table>
<svg width="200" height="40"><text x="10" y="20" font-size="14">clipped label</text></svg>
<div style="width:300px">wide</div>
</body></html>
HTML
check "the check catches a clipped cell" 1 "text overflows its <td>" -- "$S" --check "$T/defect.html" 800
expect_grep "SVG text outside its <svg>" "$T/out" "the check missed the SVG text outside its SVG"
expect_grep "px wide in a 800 px window" "$T/out" "the check missed the page wider than the window"
check "the clean twin passes" 0 "no text overflows" -- "$S" --check "$T/clean.html" 800

# The real pages.
check "screenshots" 0 "comment: .*comment.png" -- "$S" --build "$BUILD" --out "$T/shots"
for n in report-cpu marks-history report history comment; do
    expect_grep "^$n: no text overflows its box, every SVG text inside its SVG" "$T/out" "$n was not checked clean"
done
for n in report history comment; do
    [ "$(head -c 8 "$T/shots/$n.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] && ok || bad "$n.png is not a PNG"
done
finish
