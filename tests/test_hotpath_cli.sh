#!/usr/bin/env bash
# cpu: `kgate hotpath` flags and the no-GPU behaviour (every case SKIP, one line, exit 3).
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
check "listed in --help" 0 "hotpath" -- "$KG" --help
check "hotpath --help" 0 "usage: kgate hotpath .*--runs N|--runs N" -- "$KG" hotpath --help
check "--runs below 10" 2 "--runs" -- "$KG" hotpath --runs 5
check "--runs not a number" 2 "--runs" -- "$KG" hotpath --runs 1x
check "--runs missing value" 2 "--runs" -- "$KG" hotpath --runs
check "unknown flag" 2 "'--bogus'" -- "$KG" hotpath --bogus
check "filter no match" 2 "matches no case" -- "$KG" hotpath --filter zzz_nothing
check "bad seed" 2 "--seed" -- "$KG" hotpath --seed -1
check "stray arg" 2 "unexpected argument" -- "$KG" hotpath extra
check "unwritable report" 2 "cannot write there" -- "$KG" hotpath --report "$T/no/dir/r.json"
[ -e "$T/no/dir/r.json" ] && { echo "FAIL: report written under a missing dir"; fail=$((fail+1)); }

"$KG" hotpath --filter '^axpy/' --seed 7 --report "$T/r.json" >"$T/out" 2>"$T/err"; rc=$?
if [ "$rc" -eq 3 ]; then
    if [ "$(grep -c 'no CUDA device' "$T/out")" -ne 1 ] || [ -s "$T/err" ]; then
        echo "FAIL: no-GPU run should say so in one line, stderr empty"; cat "$T/out" "$T/err"; fail=$((fail+1))
    else pass=$((pass+1)); fi
    n=$(jq '[.results[] | select(.gate=="hotpath")] | length' "$T/r.json")
    nskip=$(jq '[.results[] | select(.gate=="hotpath" and .verdict=="SKIP")] | length' "$T/r.json")
    ncase=$("$KG" list --filter '^axpy/' | grep -c '^axpy/')
    if [ "$n" -ge 1 ] && [ "$n" -eq "$nskip" ] && [ "$n" -eq "$ncase" ] \
        && [ "$(jq -r .command "$T/r.json")" = hotpath ] && [ "$(jq .seed "$T/r.json")" = 7 ]; then
        pass=$((pass+1))
    else echo "FAIL: no-GPU report: $n results, $nskip SKIP, $ncase cases"; cat "$T/r.json"; fail=$((fail+1)); fi
elif [ "$rc" -eq 0 ]; then
    bad=$(jq '[.results[] | select(.gate=="hotpath" and .verdict!="PASS")] | length' "$T/r.json")
    [ "$bad" -eq 0 ] && pass=$((pass+1)) || { echo "FAIL: GPU axpy hotpath not all PASS"; fail=$((fail+1)); }
else
    echo "FAIL: hotpath run exit $rc"; cat "$T/out" "$T/err"; fail=$((fail+1))
fi
echo "test_hotpath_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
