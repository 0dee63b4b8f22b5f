#!/usr/bin/env bash
# Every picture in docs/images, regenerated from the current code in headless Chromium, each
# page checked for clipping at 360, 760 and 1280 px first (the shots are taken at 760 px):
#   report.png             `kgate report --html` of the recorded H200 run (tests/data, with a
#                          regression, a failure and an error: tests/data/h200_variants.py decided)
#   h200-report-chart.png  the same page of the recorded H200 run as it is (diagnostic, no marks)
#   history.png            `kgate history render` of synthetic runs on two device classes, with a
#                          lowering, a regression and a commit run twice
#   comment.png            the PR comment (`kgate comment --dry-run`), Markdown rendered as a forge would
#   roofline.png           the roofline of a report with counters rows: needs a GPU run
#                          (--gpu-report FILE: a `kgate run` report of a GPU with the counters gate)
#   h200-history.png       `kgate history render` of an H200's history: needs GPU runs
#                          (--gpu-history REPO: a clone with a kgate-history branch)
# plus report-cpu.html, the HTML report of a real CPU run of every gate, and `kgate marks
# history` of the demo's marks branch (checked, not shot).
# Each page gets scripts/render_check.js injected and run (--dump-dom): a cell or label whose
# text overflows its box, an SVG text outside its SVG, a data point outside its plot or a page
# wider than the window fails the script (exit 1).
# Usage: scripts/screenshots.sh [--build DIR] [--out DIR] [--gpu-report FILE] [--gpu-history REPO]
#                               (default build/, docs/images/)
#        scripts/screenshots.sh --check PAGE.html WIDTH      (only the check, of one page)
# Exit: 0 written, 1 clipping found, 2 usage, 77 no chromium (tests/test_render.sh skips).
set -u
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$SRC/build OUT=$SRC/docs/images CHECK= GPU_REPORT= GPU_HISTORY=
WIDTHS=${KG_SHOT_WIDTHS:-360 760 1280} SHOT_W=${KG_SHOT_W:-760}
while [ $# -gt 0 ]; do
    case $1 in
        --check) CHECK=$(realpath "$2"); CHECK_W=$3; shift 3 ;;
        --build) BUILD=$(realpath "$2"); shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --gpu-report) GPU_REPORT=$(realpath "$2"); shift 2 ;;
        --gpu-history) GPU_HISTORY=$(realpath "$2"); shift 2 ;;
        *) echo "screenshots.sh: unknown argument '$1' (usage: [--build DIR] [--out DIR]" \
                "[--gpu-report FILE] [--gpu-history REPO])" >&2; exit 2 ;;
    esac
done
KG=$BUILD/runners/kgate
PY=${KG_PYTHON3:-/usr/bin/python3}   # Debian's, where python3-markdown is
[ -x "$PY" ] || PY=python3
CHROME=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROME" ] || { echo "screenshots.sh: chromium is not installed (scripts/deps.sh installs it)"; exit 77; }
[ -n "$CHECK" ] || [ -x "$KG" ] || { echo "screenshots.sh: $KG is not built" >&2; exit 2; }
mkdir -p "$OUT" || exit 2
OUT=$(realpath "$OUT")
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export GIT_CONFIG_GLOBAL=$W/gitconfig GIT_CONFIG_NOSYSTEM=1
git config --global user.name "kgate screenshots"; git config --global user.email kgate@localhost
git config --global init.defaultBranch main
unset KGATE_MARKS_BRANCH KGATE_HISTORY_BRANCH KGATE_MARKS KGATE_REPORT_KEY
fail=0

chrome() { # chrome ARGS...: headless, no sandbox (CI runs as root), no GPU, its own profile
    timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --force-device-scale-factor=1 --no-first-run --user-data-dir="$W/profile" "$@" 2>>"$W/chrome.log"
}

# check PAGE.html NAME WIDTH: the render check at one window width.
check_at() {
    local page=$1 name=$2 width=$3
    sed 's#</body>#<script src="render_check.js"></script></body>#' "$page" >"${page%.html}.check.html"
    cp "$SRC/scripts/render_check.js" "$(dirname "$page")/render_check.js"
    chrome --window-size="$width,1000" --dump-dom "file://${page%.html}.check.html" >"$W/$name.dom"
    local res
    res=$(grep -o 'KGCHECK {.*}' "$W/$name.dom" | head -1 | sed 's/^KGCHECK //; s/&quot;/"/g; s/&lt;/</g; s/&gt;/>/g; s/&amp;/\&/g')
    if [ -z "$res" ]; then
        echo "FAIL: $name: the check did not run in chromium"; tail -5 "$W/chrome.log"; fail=1; return 1
    fi
    local n
    n=$(jq '.problems | length' <<<"$res")
    HEIGHT=$(jq '.height' <<<"$res")
    if [ "$n" -ne 0 ]; then
        echo "FAIL: $name: $n problem(s) at ${width}px:"; jq -r '.problems[] | "  " + .' <<<"$res"; fail=1
    else
        echo "$name: no text overflows its box, every SVG text inside its SVG, $(jq .points <<<"$res") point(s) inside their plots (${width}px wide)"
    fi
}

# shoot PAGE.html NAME [MAX_HEIGHT]: the check at every width of $WIDTHS, then a screenshot
# $SHOT_W wide and as tall as the page (at most MAX_HEIGHT, default 4000; none for report-cpu,
# marks-history and --check).
shoot() {
    local page=$1 name=$2 maxh=${3:-4000} w h=
    for w in $WIDTHS; do
        check_at "$page" "$name" "$w" || return
        [ "$w" = "$SHOT_W" ] && h=$HEIGHT
    done
    case $name in report-cpu|marks-history|check) return ;; esac
    [ -n "$h" ] || { check_at "$page" "$name" "$SHOT_W" || return; h=$HEIGHT; }
    [ "$h" -gt "$maxh" ] && h=$maxh
    chrome --window-size="$SHOT_W,$h" --screenshot="$OUT/$name.png" "file://$page" >/dev/null
    [ -s "$OUT/$name.png" ] && echo "$name: $OUT/$name.png (${SHOT_W}x$h)" \
        || { echo "FAIL: $name: no screenshot"; fail=1; }
}

if [ -n "$CHECK" ]; then
    cp "$CHECK" "$W/page.html"
    check_at "$W/page.html" check "$CHECK_W"
    exit "$fail"
fi

# ---- the HTML report: the recorded H200 run, and a real CPU run ------------------------------
"$PY" "$SRC/tests/data/h200_variants.py" "$SRC/tests/data/h200-run-report.json" \
    "$W/kgate-report.json" decided || exit 2
"$KG" report --from "$W/kgate-report.json" --html "$W/report.html" >/dev/null 2>&1 || exit 2
"$KG" report --from "$SRC/tests/data/h200-run-report.json" --html "$W/h200-report-chart.html" \
    >/dev/null 2>&1 || exit 2
(cd "$W" && "$KG" run --diagnostic --skip-selftest --seed 1 --report "$W/cpu.json" >/dev/null 2>&1)
"$KG" report --from "$W/cpu.json" --html "$W/report-cpu.html" >/dev/null 2>&1 || exit 2

# ---- the history page: two device classes, a mark that steps, one lowering -------------------
R=$W/repo; mkdir -p "$R"; git -C "$R" init -q
echo "history demo" >"$R/README"; git -C "$R" add README; git -C "$R" commit -qm initial
"$PY" "$SRC/tests/history_reports.py" "$W/runs" 12 || exit 2
# a commit run twice: the last H200 run again, a little slower (the page puts it beside the first)
last=$W/runs/h200-12.json
jq '.run_id += "-rerun" | .started_at = "2026-11-28T02:00:00Z" | .results[].figures |=
    (if .median_us then .median_us *= 1.004 | .ci_lo_us *= 1.004 | .ci_hi_us *= 1.004 else . end)' \
    "$last" >"$W/runs/h200-rerun.json" || exit 2
for f in "$W"/runs/h200-*.json "$W"/runs/h100-*.json; do
    (cd "$R" && "$KG" history append --report "$f" >/dev/null) || exit 2
done
mkdir -p "$R/baselines"
printf '{"version":1,"marks":[{"device_class":"NVIDIA H200/sm_90","case":"softmax/rows=4096/cols=1024/f32","metric":"time_us_warm","direction":"lower_is_better","value":20.5,"band_rel":0.01,"run_median":20.4,"ci_lo":20.3,"ci_hi":20.5,"samples":400,"runs":1,"provenance":{"commit":"unknown","date":"2026-11-01T02:00:00Z","run_id":"r","driver":"580.1","cuda":"13.0","set_by":"kgate run --production"}}]}\n' >"$R/baselines/high_water.json"
git -C "$R" add baselines; git -C "$R" commit -qm marks
(cd "$R" && "$KG" marks lower --case softmax/rows=4096/cols=1024/f32 --device "NVIDIA H200/sm_90" \
    --to 21.2 --reason "driver 580: softmax 3% slower, accepted (issue #93)" >/dev/null) || exit 2
(cd "$R" && "$KG" history render --out "$W/history" --case '^(axpy|softmax)/' >/dev/null) || exit 2
(cd "$R" && "$KG" marks history --case softmax/rows=4096/cols=1024/f32 --out "$W/marks-history.html" \
    >/dev/null) || exit 2

# ---- the PR comment, rendered the way a forge renders Markdown --------------------------------
(cd "$W" && "$KG" comment --dry-run --from-report kgate-report.json \
    --report-url https://ci.example.com/kgate/run/42/report.html) 2>/dev/null | grep -v '^dry run:' >"$W/comment.md"
"$PY" - "$W/comment.md" "$W/comment.html" <<'PY' || exit 2
import html, sys
text = open(sys.argv[1]).read()
try:
    import markdown
    body = markdown.markdown(text, extensions=["tables"])
except ImportError:  # no python3-markdown: the text as it is
    body = "<pre style='white-space:pre-wrap'>" + html.escape(text) + "</pre>"
css = """body{font-family:'DejaVu Sans',Arial,sans-serif;font-size:14px;color:#1f2328;margin:0;
background:#f6f8fa}.c{max-width:860px;margin:16px;background:#fff;border:1px solid #d0d7de;
border-radius:6px}.h{background:#f6f8fa;border-bottom:1px solid #d0d7de;padding:8px 16px;
color:#57606a}.b{padding:8px 16px 16px}table{border-collapse:collapse;display:block;max-width:100%;
overflow:auto}td,th{border:1px solid #d0d7de;padding:6px 12px}th{background:#f6f8fa}
code{background:#eff1f3;padding:1px 4px;border-radius:4px;font-size:12px;overflow-wrap:anywhere}
li{margin:4px 0;overflow-wrap:anywhere}h2{font-size:20px;border-bottom:1px solid #d8dee4;
padding-bottom:6px}h3{font-size:16px}"""
open(sys.argv[2], "w").write("<!DOCTYPE html><html><head><meta charset='utf-8'><title>kgate PR "
    "comment</title><style>" + css + "</style></head><body><div class='c'><div class='h'>"
    "<b>kgate-bot</b> commented</div><div class='b'>" + body + "</div></div></body></html>\n")
PY

# crop PAGE.html OUT.html FROM UNTIL: the page's head and its body from FROM up to UNTIL.
crop() {
    "$PY" - "$@" <<'PY' || exit 2
import sys
s = open(sys.argv[1], encoding="utf-8").read()
body = s.index("<body>") + len("<body>")
a, b = s.index(sys.argv[3]), s.index(sys.argv[4])
open(sys.argv[2], "w", encoding="utf-8").write(s[:body] + s[a:b] + "</body></html>\n")
PY
}
crop "$W/h200-report-chart.html" "$W/h200-chart.html" "<h1>" "<h2>Results</h2>"

# ---- the pictures of GPU runs, where one is given ---------------------------------------------
if [ -n "$GPU_REPORT" ]; then
    "$KG" report --from "$GPU_REPORT" --html "$W/gpu-report.html" >/dev/null 2>&1 || exit 2
    crop "$W/gpu-report.html" "$W/roofline.html" "<h2>Roofline" "<h2>Results</h2>"
fi
if [ -n "$GPU_HISTORY" ]; then
    (cd "$GPU_HISTORY" && "$KG" history render --out "$W/h200-history" >/dev/null) || exit 2
fi

shoot "$W/report-cpu.html" report-cpu
shoot "$W/marks-history.html" marks-history
shoot "$W/report.html" report 2400
shoot "$W/h200-chart.html" h200-report-chart 1800
shoot "$W/history/index.html" history 2400
shoot "$W/comment.html" comment
if [ -n "$GPU_REPORT" ]; then shoot "$W/roofline.html" roofline 2400
else echo "roofline: not regenerated (a GPU run's report: --gpu-report FILE)"; fi
if [ -n "$GPU_HISTORY" ]; then shoot "$W/h200-history/index.html" h200-history 2400
else echo "h200-history: not regenerated (an H200 history: --gpu-history REPO)"; fi
exit "$fail"
