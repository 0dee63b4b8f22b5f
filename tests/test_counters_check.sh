#!/usr/bin/env bash
# scripts/counters-check.sh without a GPU: its table and verdict over a mock kgate (list --json,
# counters --report: the rows and metric names the real one writes) and a mock ncu (the CSV
# `--csv --page raw` prints, values from $MOCK_NCU). Checks the two ncu runs (DRAM bytes apart),
# ncu's write floor (taken from the floor case, applied to DRAM-write rows only, said on the
# row), a miss that the floor does not excuse, a read row off, no floor case, a floor that is
# none (ncu counting less), ncu failing on a case, a value that is not a number, and exit 77
# without ncu.
. "$(dirname "$0")/lib.sh"
CC=$SRC/scripts/counters-check.sh
command -v python3 >/dev/null || skip "needs python3"
command -v jq >/dev/null || skip "needs jq"
mkdir -p "$T/b/runners" "$T/bin"
AX=axpy/n=33554433/f32 RS=reduce_sum/n=67108869/f32

# kgate's counts per case: "case key value" lines
cat >"$T/kgate.counts" <<EOF
$AX dram_read_bytes 268440576
$AX dram_write_bytes 115843840
$AX inst 7274513
$RS dram_read_bytes 268446464
$RS dram_write_bytes 123136
$RS inst 4654176
EOF
cat >"$T/b/runners/kgate" <<'EOF'
#!/usr/bin/env bash
set -u
cmd=$1; shift
echo "kgate $cmd $*" >>"$MOCK_LOG"
case $cmd in
list) jq -n '{cases: [{id: "axpy/n=33554433/f32", kernels: ["axpy_kernel"]},
                      {id: "reduce_sum/n=67108869/f32",
                       kernels: ["reduce_sum_partials_kernel", "reduce_sum_final_kernel"]}]}' >"$2" ;;
counters)
    id=${2#^}; id=${id%\$}
    awk -v c="$id" '$1 == c { print $2 "\t" $3 }' "$MOCK_COUNTS" |
        jq -R 'split("\t") | {(.[0]): (.[1] | tonumber)}' | jq -s --arg c "$id" '
        {counters: {metrics: {dram_read_bytes: "dram__bytes_read.sum",
                              dram_write_bytes: "dram__bytes_write.sum", inst: "sm__inst_executed.sum"}},
         results: [{gate: "counters", case: $c,
                    figures: {kernels: (if ($c | test("reduce")) then 2 else 1 end), metrics: add}}]}' >"$4" ;;
esac
EOF
# ncu: one CSV row per profiled kernel; the case's value split over its kernels
cat >"$T/bin/ncu" <<'EOF'
#!/usr/bin/env bash
set -u
metrics='' id=''
while [ $# -gt 0 ]; do
    case $1 in --metrics) metrics=$2; shift ;; --filter) id=${2#^}; id=${id%\$}; shift ;; esac
    shift
done
echo "ncu $id $metrics" >>"$MOCK_LOG"
[ "$id" = "${MOCK_NCU_FAIL:-}" ] && { echo "==ERROR== profiling failed" >&2; exit 1; }
echo '==PROF== Connected to process'
echo '==PROF== Profiling "k" - 0: 0%....50%....100% - 1 pass'
IFS=, read -ra ms <<<"$metrics"
printf '"ID","Kernel Name"'; for m in "${ms[@]}"; do printf ',"%s"' "$m"; done; echo
printf '"",""'; for m in "${ms[@]}"; do printf ',"byte"'; done; echo
for k in 0 1; do
    [ $k = 1 ] && [[ $id != reduce* ]] && break
    printf '"%s","k%s"' $k $k
    for m in "${ms[@]}"; do
        v=$(awk -v c="$id" -v m="$m" '$1 == c && $2 == m { print $3 }' "$MOCK_NCU")
        [[ $id == reduce* ]] && v=$((v / 2))
        printf ',"%s"' "${v:-0}"
    done
    echo
done
EOF
chmod +x "$T/b/runners/kgate" "$T/bin/ncu"
export MOCK_COUNTS=$T/kgate.counts MOCK_LOG=$T/calls

ncu_table() { # AXPY_READ AXPY_WRITE REDUCE_WRITE
    cat >"$T/ncu.values" <<EOF
$AX dram__bytes_read.sum $1
$AX dram__bytes_write.sum $2
$AX sm__inst_executed.sum 7274513
$RS dram__bytes_read.sum 268454912
$RS dram__bytes_write.sum $3
$RS sm__inst_executed.sum 4654176
EOF
}
cc() { # WANT_RC NAME [ENV=V ...]
    local want=$1 name=$2; shift 2
    : >"$MOCK_LOG"
    env MOCK_NCU="$T/ncu.values" PATH="$T/bin:$PATH" "$@" \
        bash "$CC" "$T/b" "$AX" "$RS" >"$T/$name.out" 2>&1
    local r=$?
    [ "$r" -eq "$want" ] && ok || { bad "$name: exit $r, want $want"; cat "$T/$name.out"; }
}

# axpy's writes 2.1% over kgate's, as measured; reduce_sum's ncu writes carry the floor
ncu_table 268444928 118306304 2062848
cc 0 floor
O=$T/floor.out
expect_grep "^ncu's write floor \(its DRAM writes beyond kgate's on $RS\): 1939712 B$" "$O"
expect_grep '^axpy/n=33554433/f32 +dram__bytes_write.sum +115843840 +118306304 +-2.08  ncu - floor = 116366592: -0.45%$' "$O" \
    "the write row compared with the floor taken off, and said"
expect_grep '^reduce_sum/n=67108869/f32 +dram__bytes_write.sum .*\(floor case' "$O"
expect_grep '^axpy/n=33554433/f32 +dram__bytes_read.sum +268440576 +268444928 +-0.00$' "$O" "a read row, raw"
expect_grep 'every gated metric within 1% of ncu' "$O"
[ "$(grep -c "^ncu $AX dram__bytes_read.sum,dram__bytes_write.sum$" "$MOCK_LOG")" -eq 1 ] && ok \
    || bad "the DRAM bytes in an ncu run of their own"
[ "$(grep -c "^ncu $AX sm__inst_executed.sum$" "$MOCK_LOG")" -eq 1 ] && ok || bad "the other metrics in a second run"
expect_grep "^$AX: DRAM bytes: ncu took 1 pass x1$" "$O" "the pass count of each ncu run"

# no floor case: the same numbers are off
cc 1 nofloor CC_FLOOR_CASE=
expect_grep '^axpy/n=33554433/f32 +dram__bytes_write.sum .* -2.08  OFF$' "$T/nofloor.out"
expect_grep '^reduce_sum/n=67108869/f32 +dram__bytes_write.sum .* -94.03  OFF$' "$T/nofloor.out"

# a miss the floor does not excuse: 8% more writes in ncu
ncu_table 268444928 125000000 2062848
cc 1 miss
expect_grep '^axpy/n=33554433/f32 +dram__bytes_write.sum .*ncu - floor = 123060288: -5.86%  OFF$' "$T/miss.out"
expect_grep 'exit 1: see OFF rows' "$T/miss.out"

# a read row 2% off: no floor for reads
ncu_table 274000000 118306304 2062848
cc 1 read
expect_grep '^axpy/n=33554433/f32 +dram__bytes_read.sum +268440576 +274000000 +-2.03  OFF$' "$T/read.out"

# ncu counting LESS on the floor case: no floor, that row OFF, axpy judged raw
ncu_table 268444928 118306304 0
cc 1 negfloor
expect_grep "^no write floor: ncu minus kgate on $RS is -123136 B, outside \\[0, 4 MiB\\]$" "$T/negfloor.out"
expect_grep '^reduce_sum/n=67108869/f32 +dram__bytes_write.sum .*floor case: no floor.*OFF$' "$T/negfloor.out"
expect_grep '^axpy/n=33554433/f32 +dram__bytes_write.sum .* -2.08  OFF$' "$T/negfloor.out"

# ncu failing on one case, and a value that is not a number: exit 2, the other case still judged
ncu_table 268444928 118306304 2062848
cc 2 ncufail MOCK_NCU_FAIL=$AX
expect_grep "^$AX: ncu failed:" "$T/ncufail.out"
expect_grep '^reduce_sum/n=67108869/f32 +dram__bytes_read.sum ' "$T/ncufail.out" "the other case still in the table"
ncu_table n/a 118306304 2062848
cc 2 nan
expect_grep "^$AX: dram__bytes_read.sum: ncu printed a value that is not a number$" "$T/nan.out"

# without ncu
check "no ncu" 77 "ncu not found" -- env PATH=/usr/bin:/bin bash "$CC" "$T/b"
finish
