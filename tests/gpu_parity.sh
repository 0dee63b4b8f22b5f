#!/usr/bin/env bash
# gpu: every reference case passes parity; every parity defect fails parity (not errors).
set -u
KG=$1 DEF=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$KG" parity --report "$T/ref.json"; rc=$?
[ "$rc" -eq 3 ] && { echo "no GPU: skipped"; exit 77; }
fail=0
[ "$rc" -eq 0 ] || { echo "FAIL: reference parity exit $rc"; fail=1; }
"$DEF" parity --filter '^defect/parity/' --report "$T/def.json"; rc=$?
[ "$rc" -eq 1 ] || { echo "FAIL: defect parity exit $rc, want 1"; fail=1; }
n=$(jq '[.results[] | select(.gate=="parity")] | length' "$T/def.json")
bad=$(jq -r '.results[] | select(.gate=="parity" and .verdict!="FAIL") | "\(.case) \(.verdict) \(.message)"' "$T/def.json")
[ "$n" -ge 5 ] || { echo "FAIL: only $n parity defects ran"; fail=1; }
[ -z "$bad" ] || { echo "FAIL: defects not caught:"; echo "$bad"; fail=1; }
echo "gpu_parity: $n defects checked, fail=$fail"
exit $fail
