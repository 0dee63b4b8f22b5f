#!/usr/bin/env bash
# gpu: every reference case passes parity; every defect whose catalogue entry expects the parity
# gate fails parity (FAIL, not ERROR), with a NaN or tolerance reason.
. "$(dirname "$0")/lib.sh"
KG=$1 DEF=$2
"$KG" parity --report "$T/ref.json"; rc=$?
skip_if_no_gpu "$rc"
[ "$rc" -eq 0 ] || bad "reference parity exit $rc"
nref=$(jq '[.results[] | select(.gate=="parity" and .verdict=="PASS")] | length' "$T/ref.json")
ncase=$(jq '.results | length' "$T/ref.json")
[ "$nref" -ge 20 ] && [ "$nref" -eq "$ncase" ] || bad "$nref of $ncase reference cases passed"

"$DEF" list --json "$T/cat.json" >/dev/null || die "defect catalogue"
# The planted faults crash and hang on purpose: gpu_faults.sh runs them.
"$DEF" parity --exclude '^defect/fault/' --report "$T/def.json" >"$T/def.txt"; rc=$?
cat "$T/def.txt"
[ "$rc" -eq 1 ] || bad "defect parity exit $rc, want 1"
want=$(jq -r '.cases[] | select(.expect_gate=="parity" and (.id | startswith("defect/fault/") | not)) | .id' "$T/cat.json" | sort)
n=$(echo "$want" | grep -c .)
[ "$n" -ge 5 ] || bad "only $n parity defects in the catalogue"
for id in $want; do
    v=$(jq -r --arg id "$id" '.results[] | select(.gate=="parity" and .case==$id) | .verdict' "$T/def.json")
    [ "$v" = "FAIL" ] || bad "defect $id not caught by parity (verdict '$v')"
done
finish "$nref reference cases passed, $n parity defects checked"
