#!/usr/bin/env bash
# gpu: every reference case passes parity; every defect whose catalogue entry expects the parity
# gate fails parity (FAIL, not ERROR), with a NaN or tolerance reason.
set -u
KG=$1 DEF=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$KG" parity --report "$T/ref.json"; rc=$?
[ "$rc" -eq 3 ] && { echo "no GPU: skipped"; exit 77; }
fail=0
[ "$rc" -eq 0 ] || { echo "FAIL: reference parity exit $rc"; fail=1; }
nref=$(jq '[.results[] | select(.gate=="parity" and .verdict=="PASS")] | length' "$T/ref.json")
ncase=$(jq '.results | length' "$T/ref.json")
[ "$nref" -ge 20 ] && [ "$nref" -eq "$ncase" ] || { echo "FAIL: $nref of $ncase reference cases passed"; fail=1; }

"$DEF" list --json "$T/cat.json" >/dev/null || { echo "FAIL: defect catalogue"; exit 1; }
"$DEF" parity --report "$T/def.json" >"$T/def.txt"; rc=$?
cat "$T/def.txt"
[ "$rc" -eq 1 ] || { echo "FAIL: defect parity exit $rc, want 1"; fail=1; }
want=$(jq -r '.cases[] | select(.expect_gate=="parity") | .id' "$T/cat.json" | sort)
n=$(echo "$want" | grep -c .)
[ "$n" -ge 5 ] || { echo "FAIL: only $n parity defects in the catalogue"; fail=1; }
for id in $want; do
    v=$(jq -r --arg id "$id" '.results[] | select(.gate=="parity" and .case==$id) | .verdict' "$T/def.json")
    [ "$v" = "FAIL" ] || { echo "FAIL: defect $id not caught by parity (verdict '$v')"; fail=1; }
done
echo "gpu_parity: $nref reference cases passed, $n parity defects checked, fail=$fail"
exit $fail
