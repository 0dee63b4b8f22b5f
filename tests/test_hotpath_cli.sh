#!/usr/bin/env bash
# cpu: `kgate hotpath` flags and the no-GPU behaviour (every case SKIP, one line, exit 3).
. "$(dirname "$0")/lib.sh"
KG=$1
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
[ -e "$T/no/dir/r.json" ] && bad "report written under a missing dir"

run "$KG" hotpath --filter '^axpy/' --seed 7 --report "$T/r.json"
if [ "$rc" -eq 3 ]; then
    expect_no_gpu_line
    n=$(jq '[.results[] | select(.gate=="hotpath")] | length' "$T/r.json")
    nskip=$(jq '[.results[] | select(.gate=="hotpath" and .verdict=="SKIP")] | length' "$T/r.json")
    ncase=$("$KG" list --filter '^axpy/' | grep -c '^axpy/')
    if [ "$n" -ge 1 ] && [ "$n" -eq "$nskip" ] && [ "$n" -eq "$ncase" ] \
        && [ "$(jq -r .command "$T/r.json")" = hotpath ] && [ "$(jq .seed "$T/r.json")" = 7 ]; then
        ok
    else bad "no-GPU report: $n results, $nskip SKIP, $ncase cases"; cat "$T/r.json"; fi
elif [ "$rc" -eq 0 ]; then
    nbad=$(jq '[.results[] | select(.gate=="hotpath" and .verdict!="PASS")] | length' "$T/r.json")
    [ "$nbad" -eq 0 ] && ok || bad "GPU axpy hotpath not all PASS"
else
    bad "hotpath run exit $rc"; cat "$T/out" "$T/err"
fi
finish
