#!/usr/bin/env bash
# gpu: the planted faults (kernels/defects/fault_defects.cu) each cost only their own verdict:
# an illegal address, a trap and a device assert (a dead CUDA context), a host segfault and an
# exit() in launch, an abort in setup, a kernel that spins forever and a host hang each come
# out ERROR "FAULT <class>" with figures.fault, while the clean case after each one PASSes in
# the same run; the report validates against the schema; the selftest counts them as caught.
. "$(dirname "$0")/lib.sh"
KG=$1 DEF=$2
"$DEF" list --json "$T/cat.json" >/dev/null || die "defect catalogue"
"$DEF" parity --filter '^defect/fault/' --case-timeout 5 --seed 5 --report "$T/f.json" >"$T/f.txt" 2>&1; rc=$?
cat "$T/f.txt"
skip_if_no_gpu "$rc"
[ "$rc" -eq 4 ] || bad "fault run exit $rc, want 4 (errors)"
jq -r --slurpfile cat "$T/cat.json" '($cat[0].cases | map({(.id): .expect_reason}) | add) as $why
    | .results[] | select(.case | startswith("defect/fault/")) | . as $r | $why[$r.case] as $w
    | if $w == null then select($r.verdict != "PASS") | "clean case \($r.case): \($r.verdict): \($r.message)"
      else ($w | ltrimstr("fault:")) as $cls
           | select($r.verdict != "ERROR" or $r.figures.fault.class != $cls
                    or ($r.message | contains("FAULT " + $cls) | not))
           | "fault \($r.case): \($r.verdict) class \($r.figures.fault.class // "-"), want \($cls): \($r.message)"
      end' "$T/f.json" >"$T/missed"
[ -s "$T/missed" ] && { bad "faults not reported with their class, or clean cases after them not passing:"; cat "$T/missed"; }
nf=$(jq '[.results[] | select(.figures.fault != null)] | length' "$T/f.json")
np=$(jq '[.results[] | select(.verdict == "PASS")] | length' "$T/f.json")
[ "$nf" -eq 8 ] || bad "$nf faults reported, want 8"
[ "$np" -eq 8 ] || bad "$np clean cases passed, want 8"
jq -r '.results[] | select(.figures.fault != null) | "\(.case)\t\(.figures.fault.class)\t\(.figures.fault.signal // .figures.fault.cuda_error // .figures.fault.exit_status // .figures.fault.timeout_s)\t\(.figures.fault.phase)"' "$T/f.json"
if python3 -c 'import jsonschema' 2>/dev/null; then
    valid_report "$T/f.json" || bad "fault report does not validate"
fi
finish "$nf faults reported with their class, $np clean cases after them passed"
