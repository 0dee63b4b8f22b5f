#!/usr/bin/env bash
# CLI contract: usage errors exit 2 with a message naming the flag, nothing half-written;
# without a GPU a gate says so in one line and exits 3 with a report of SKIPs.
set -u
KG=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
check() { # check DESC EXPECTED_RC PATTERN -- cmd...
    local desc=$1 want=$2 pat=$3; shift 4
    "$@" >"$T/out" 2>"$T/err"; local rc=$?
    if [ "$rc" -ne "$want" ]; then
        echo "FAIL: $desc: exit $rc, want $want"; cat "$T/out" "$T/err"; fail=$((fail+1)); return
    fi
    if [ -n "$pat" ] && ! grep -qE -- "$pat" "$T/out" "$T/err"; then
        echo "FAIL: $desc: output lacks /$pat/"; cat "$T/out" "$T/err"; fail=$((fail+1)); return
    fi
    pass=$((pass+1))
}
check "no command" 2 "usage:" -- "$KG"
check "unknown command" 2 "unknown command 'bogus'" -- "$KG" bogus
check "--help" 0 "usage:" -- "$KG" --help
check "--version" 0 "kgate [0-9]" -- "$KG" --version
check "list" 0 "case\(s\)" -- "$KG" list
check "list filter" 0 "^axpy/" -- "$KG" list --filter '^axpy/'
check "list bad filter" 2 "matches no case" -- "$KG" list --filter 'no-such-case'
for c in list parity report status selftest run ab; do
    check "$c unknown flag" 2 "$c: unknown option or missing value: '--bogus'" -- "$KG" $c --bogus
done
check "marks show unknown flag" 2 "marks show: unknown option or missing value: '--bogus'" -- "$KG" marks show --bogus
check "report flag without value" 2 "report: unknown option or missing value: '--from'" -- "$KG" report --from
check "selftest missing defects" 2 "not found or not executable" -- "$KG" selftest --defects "$T/none"
check "selftest defects path too long" 2 "path too long" -- "$KG" selftest --defects "/$(printf 'a%.0s' $(seq 5000))"
check "parity --help" 0 "usage: kgate parity" -- "$KG" parity --help
check "parity unknown flag" 2 "'--bogus'" -- "$KG" parity --bogus
check "parity missing value" 2 "--filter" -- "$KG" parity --filter
check "parity filter no match" 2 "--filter 'zzz_nothing' matches no case" -- "$KG" parity --filter zzz_nothing
check "parity invalid regex" 2 "invalid regular expression" -- "$KG" parity --filter '(['
check "parity bad seed" 2 "--seed: expected a non-negative integer" -- "$KG" parity --seed 12abc
check "parity bad device" 2 "--device" -- "$KG" parity --device -3
check "parity stray arg" 2 "unexpected argument" -- "$KG" parity extra
check "parity unwritable report" 2 "cannot write there" -- "$KG" parity --report "$T/no/such/dir/r.json"
[ -e "$T/no/such/dir/r.json" ] && { echo "FAIL: report written under a missing dir"; fail=$((fail+1)); }

# A real run: on a GPU machine it passes (0); without one, one clear line and exit 3.
"$KG" parity --filter '^axpy/' --seed 5 --report "$T/r.json" >"$T/out" 2>"$T/err"; rc=$?
if [ "$rc" -eq 3 ]; then
    if [ "$(grep -c 'no CUDA device' "$T/out")" -ne 1 ] || [ -s "$T/err" ]; then
        echo "FAIL: no-GPU run should say so in one line, stderr empty"; cat "$T/out" "$T/err"; fail=$((fail+1))
    else pass=$((pass+1)); fi
    if grep -q '"verdict":[[:space:]]*"SKIP"' "$T/r.json" && grep -q '"no_device"' "$T/r.json" \
        && grep -q '"seed":[[:space:]]*5' "$T/r.json"; then pass=$((pass+1))
    else echo "FAIL: no-GPU report lacks SKIP/no_device/seed"; cat "$T/r.json"; fail=$((fail+1)); fi
elif [ "$rc" -eq 0 ]; then
    grep -q '"verdict":[[:space:]]*"PASS"' "$T/r.json" && pass=$((pass+1)) || { echo "FAIL: GPU report lacks PASS"; fail=$((fail+1)); }
else
    echo "FAIL: parity run exit $rc"; cat "$T/out" "$T/err"; fail=$((fail+1))
fi
echo "test_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
