#!/usr/bin/env bash
# kgate's counters next to Nsight Compute's for the same kernels (issue #18): runs
# `kgate counters` on the reference runner and on the defect runner, then `ncu` on three cases
# (each launched alone through `kgate parity --filter '^id$'`), and prints both side by side.
# Usage: scripts/counters-check.sh [BUILD_DIR] (default build). Needs a GPU, ncu, jq.
set -u
B=${1:-build}
KG=$B/runners/kgate KD=$B/runners/kgate-defects
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
command -v ncu >/dev/null || { echo "counters-check: ncu not found (CUDA toolkit bin)"; exit 77; }
command -v jq >/dev/null || { echo "counters-check: jq not found"; exit 77; }
KGATE_COUNTERS_LOG="$T/cupti.log" "$KG" counters --report "$T/ref.json" >"$T/ref.out" 2>&1
echo "kgate counters (reference runner): exit $?"; tail -3 "$T/ref.out"
KGATE_COUNTERS_LOG="$T/cupti-d.log" "$KD" counters --filter '^defect/counters/' \
    --report "$T/def.json" >"$T/def.out" 2>&1
echo "kgate counters (defect runner): exit $?"; cat "$T/def.out"
BYTES="dram__bytes_read.sum:dram_read_bytes dram__bytes_write.sum:dram_write_bytes"
FFMA="sm__sass_thread_inst_executed_op_ffma_pred_on.sum:ffma"
SYSMEM="lts__t_sectors_aperture_sysmem_op_read.sum:sysmem_read_bytes lts__t_sectors_aperture_sysmem_op_write.sum:sysmem_write_bytes"
TENSOR="sm__inst_executed_pipe_tensor_op_hmma.sum:tensor_hmma_inst sm__inst_executed_pipe_tensor_op_gmma.sum:tensor_gmma_inst sm__ops_path_tensor_src_bf16_dst_fp32.sum:tensor_ops_bf16"
# case id | kernel regex | runner | kgate report | ncu metric:kgate key pairs (sysmem: kgate
# reports bytes, ncu sectors: x 32)
CASES=(
  "axpy/n=33554433/f32|axpy_kernel|$KG|$T/ref.json|$BYTES $FFMA $SYSMEM"
  "defect/counters/strided/defect|cd_strided_kernel|$KD|$T/def.json|$BYTES"
  "defect/counters/spill/defect|cd_spill_kernel|$KD|$T/def.json|$BYTES $FFMA"
  "defect/counters/sysmem/defect|cd_scale_kernel|$KD|$T/def.json|$SYSMEM"
  "gemm_bf16/m=1000,n=1000,k=1000/bf16|gemm_bf16|$KG|$T/ref.json|$TENSOR"
  "gemm_bf16/m=4096,n=4096,k=4096/bf16|gemm_bf16|$KG|$T/ref.json|$TENSOR"
)
printf '\n%-36s %-52s %16s %16s\n' case metric kgate ncu
for c in "${CASES[@]}"; do
    IFS='|' read -r id re exe rep pairs <<<"$c"
    if ! jq -e --arg id "$id" '.results[] | select(.gate == "counters" and .case == $id)' "$rep" >/dev/null 2>&1; then
        echo "$id: no counters row in $rep (is the case id right? \`kgate list\`)"; continue
    fi
    metrics=$(for m in $pairs; do printf '%s,' "${m%%:*}"; done)
    ncu --metrics "${metrics%,}" -k "regex:$re" -c 1 --csv "$exe" parity --filter "^${id}\$" \
        >"$T/ncu.csv" 2>"$T/ncu.err" || { echo "$id: ncu failed:"; tail -3 "$T/ncu.err"; continue; }
    for m in $pairs; do
        name=${m%%:*} key=${m##*:}
        kv=$(jq -r --arg id "$id" --arg k "$key" '.results[] | select(.gate == "counters" and .case == $id) | .figures.metrics[$k]' "$rep")
        # ncu --csv: "...","Metric Name","Metric Unit","Metric Value"; bytes may come in KB/MB
        nv=$(awk -F'","' -v m="$name" '$0 ~ m { u=$(NF-1); v=$NF; gsub(/[",]/, "", v);
             f = (u ~ /^Kbyte/) ? 1e3 : (u ~ /^Mbyte/) ? 1e6 : (u ~ /^Gbyte/) ? 1e9 : 1;
             if (m ~ /aperture_sysmem/) f *= 32;
             printf "%.0f", v * f; exit }' "$T/ncu.csv")
        printf '%-36s %-52s %16s %16s\n' "$id" "$name" "$kv" "${nv:-?}"
    done
done
echo; echo "CUPTI log (first lines): "; head -40 "$T/cupti.log" 2>/dev/null
