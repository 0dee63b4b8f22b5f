#!/usr/bin/env bash
# gpu: the fault matrix (kernels/defects/fault_matrix.cu): every fault class in every phase of
# every gate that runs cases, through `kgate run` (all gates in one run, one report). Each
# planted fault must be an ERROR with figures.fault of its class in its own gate, the same case
# must be decided (no ERROR) in every other gate, the case after it in the same gate must be
# decided too, and the report must be written and valid. Then each chain (a case faulting in
# one gate and again in a later one) alone: both faults reported, the report written.
# Prints the matrix (gate x phase: one cell per class) and writes it to $KG_MATRIX_OUT if set.
# KG_MATRIX_DEVICES=0,0 runs it with --devices (driver/pool.c: two workers on one GPU, so every
# fault lands in a lane while the other lane runs its cases; gpu_fault_matrix_lanes).
# Usage: gpu_fault_matrix.sh KGATE_DEFECTS
. "$(dirname "$0")/lib.sh"
DEF=$1
export KGATE_FAULT_MATRIX=1
opts=(--diagnostic --skip-selftest --case-timeout "${KG_MATRIX_TIMEOUT:-3}" --budget 0.02 --seed 11)
[ -n "${KG_MATRIX_DEVICES:-}" ] && opts+=(--devices "$KG_MATRIX_DEVICES")
"$DEF" run "${opts[@]}" --filter '^defect/faultmx/(parity|hotpath|bench|counters)/' \
    --report "$T/mx.json" >"$T/mx.txt" 2>&1; rc=$?
skip_if_no_gpu "$rc"
[ "$rc" -eq 4 ] && ok || { bad "matrix run: exit $rc, want 4"; tail -30 "$T/mx.txt"; }
[ -s "$T/mx.json" ] && ok || die "matrix run wrote no report"
valid_report "$T/mx.json" && ok || bad "matrix report does not validate against the schema"

# One line per case and gate: verdict, fault class, the phase the fault names.
jq -r '.results[] | select(.case | startswith("defect/faultmx/"))
       | [.gate, .case, .verdict, (.figures.fault.class // "-"), (.figures.fault.phase // "-")]
       | @tsv' "$T/mx.json" >"$T/rows.tsv"
gates="parity hotpath bench counters"
declare -A cell
while IFS=$'\t' read -r gate id verdict cls phase; do
    IFS=/ read -r _ _ tg tph tcls <<<"$id"
    if [ "$gate" = "$tg" ]; then
        w=$(fault_class_of "$tcls")
        if [ "$verdict" = ERROR ] && [ "$cls" = "$w" ]; then ok; cell[$tg/$tph/$tcls]="$cls"
        else bad "$id in $gate: $verdict class $cls, want ERROR $w"; cell[$tg/$tph/$tcls]="MISS:$verdict"; fi
        # a host fault happens where it is planted, so its phase says so (a device fault is
        # named where it surfaced: a later sync may see it)
        case $tcls in host_segfault|exit|abort|host_hang)
            [[ $phase == "$tph"* ]] && ok || bad "$id in $gate: phase '$phase', want $tph";; esac
    elif [ "$gate" != preflight ]; then
        case $verdict in ERROR) bad "$id in $gate (not its fault's gate): ERROR";; *) ok;; esac
    fi
done <"$T/rows.tsv"
# The case after each fault, in the same gate, is decided.
jq -r '[.results[] | select(.case | startswith("defect/faultmx/"))] | group_by(.gate)[]
       | . as $g | range(0; length - 1) | [$g[.], $g[. + 1]]
       | select(.[0].figures.fault != null)
       | select(.[1].verdict == "ERROR" and (.[1].case | split("/")[2]) != .[1].gate)
       | "\(.[0].gate): \(.[1].case) after the fault of \(.[0].case): \(.[1].verdict) \(.[1].message)"' \
    "$T/mx.json" >"$T/after"
[ -s "$T/after" ] && { bad "a case after a fault was not decided:"; cat "$T/after"; } || ok

# The table: a row per gate and phase, a cell per class (the class the fault was reported as).
{
    printf '%-9s %-10s' gate phase
    for c in illegal_address trap assert kernel_hang host_segfault exit abort host_hang; do printf ' %-15s' "$c"; done
    printf '\n'
    for g in $gates; do
        for p in setup prepare launch capture replay reference teardown; do
            line=$(printf '%-9s %-10s' "$g" "$p"); any=0
            for c in illegal_address trap assert kernel_hang host_segfault exit abort host_hang; do
                v=${cell[$g/$p/$c]:-}; [ -n "$v" ] && any=1
                line+=$(printf ' %-15s' "${v:--}")
            done
            [ "$any" -eq 1 ] && echo "$line"
        done
    done
} >"$T/table"
cat "$T/table"
[ -n "${KG_MATRIX_OUT:-}" ] && cp "$T/table" "$KG_MATRIX_OUT" && cp "$T/rows.tsv" "${KG_MATRIX_OUT%.*}.tsv"
echo "rows: $(wc -l <"$T/rows.tsv"), faults reported: $(jq '[.results[] | select(.figures.fault != null)] | length' "$T/mx.json")"

# The chains alone: the faulted case is the last (only) case of each gate, so the next gate
# starts with no worker alive.
for chain in hotpath_capture_exit+bench_setup_exit parity_launch_trap+counters_launch_segfault; do
    "$DEF" run "${opts[@]}" --filter "^defect/faultmx/chain/${chain//+/\\+}\$" \
        --report "$T/c.json" >"$T/c.txt" 2>&1; rc=$?
    [ "$rc" -eq 4 ] && [ -s "$T/c.json" ] && ok || { bad "chain $chain: exit $rc (want 4) or no report"; tail -20 "$T/c.txt"; continue; }
    valid_report "$T/c.json" && ok || bad "chain $chain: report invalid"
    a=${chain%%+*} b=${chain#*+}
    for part in "$a" "$b"; do
        g=${part%%_*}
        jq -e --arg g "$g" '[.results[] | select(.gate == $g and .figures.fault != null)] | length == 1' \
            "$T/c.json" >/dev/null && ok || bad "chain $chain: no fault row in $g"
    done
    jq -r '.results[] | select(.case != "*") | "  \(.gate)\t\(.verdict)\t\(.message[0:110])"' "$T/c.json"
done
finish "fault matrix"
