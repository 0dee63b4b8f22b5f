#!/usr/bin/env bash
# Demonstrate the production path on a GPU machine in a scratch repository: a production run
# records the first marks (one libgit2 commit, on the marks branch kgate-marks: an orphan),
# an identical second run commits nothing (SAME), a diagnostic run against the marks branch
# (--marks-ref kgate-marks) commits nothing; then the run history of the three runs, and the CI
# outputs of the diagnostic report.
#   usage: scripts/production-demo.sh [BUILD_DIR] [OUT_DIR] [FILTER]
set -uo pipefail
R=$(cd "$(dirname "$0")/.." && pwd)
B=$(realpath "${1:-$R/build}")
OUT=$(mkdir -p "${2:-$R/out}" && realpath "${2:-$R/out}")
F=${3:-'^(axpy/n=33554433|reduce_sum/n=67108869|rmsnorm/rows=16384|softmax/rows=(16384|32768)|gemm_bf16/m=(4096|8192))'}
KG=$B/runners/kgate
S=$(mktemp -d)/scratch
mkdir -p "$S/baselines" && cd "$S" || exit 4
git init -q -b main && git config user.name "Release Manager" && git config user.email rm@example.com
cp "$R"/baselines/*.json baselines/ && git add -A && git commit -qm "scratch: baselines" || exit 4
"$KG" run --production --filter "$F" --seed 1 --report "$OUT/p1.json" >"$OUT/p1.txt" 2>&1; echo "production run 1: exit $?, marks commits $(git rev-list --count kgate-marks 2>/dev/null || echo 0), HEAD commits $(git rev-list --count HEAD)"
"$KG" run --production --filter "$F" --seed 1 --report "$OUT/p2.json" >"$OUT/p2.txt" 2>&1; echo "production run 2: exit $?, marks commits $(git rev-list --count kgate-marks 2>/dev/null || echo 0), HEAD commits $(git rev-list --count HEAD)"
"$KG" run --diagnostic --skip-selftest --filter "$F" --seed 2 --marks-ref kgate-marks --report "$OUT/d.json" >"$OUT/d.txt" 2>&1; echo "diagnostic run: exit $?, marks commits $(git rev-list --count kgate-marks 2>/dev/null || echo 0), status '$(git status --porcelain)', marks from $(jq -c .marks_source "$OUT/d.json")"
for f in p1 p2 d; do echo "$f: $(jq -r '[.results[]|select(.gate=="bench")|.figures.decision]|group_by(.)|map("\(.[0]) \(length)")|join(", ")' "$OUT/$f.json")"; done
git log --stat kgate-marks >"$OUT/gitlog.txt" 2>&1
for f in p1 p2 d; do "$KG" history append --report "$OUT/$f.json"; done
"$KG" history render --out "$OUT/history" && echo "history: $OUT/history/index.html"
"$KG" marks show --marks-ref kgate-marks >"$OUT/marks-show.txt" 2>&1
"$KG" marks history --case 'axpy/n=33554433/f32' --out "$OUT/history.svg" >/dev/null 2>&1
"$KG" report --from "$OUT/d.json" --junit "$OUT/junit.xml" --markdown "$OUT/summary.md" --html "$OUT/report.html" >/dev/null
xmllint --noout --schema "$R/tests/data/junit-10.xsd" "$OUT/junit.xml" && echo "junit.xml validates"
