#!/usr/bin/env bash
# The reference GEMMs run on tensor cores: in the SASS of the built runner, gemm_bf16_wgmma_kernel's
# sm_90a image holds HGMMA (Hopper warpgroup MMA) and gemm_bf16_kernel holds HMMA in every image it
# has; the control, axpy_kernel, holds neither (the match is per function, so it can fail). Static:
# needs cuobjdump (CUDA toolkit), no GPU; exits 77 (skipped) without it.
. "$(dirname "$0")/lib.sh"
BIN=$1
command -v cuobjdump >/dev/null 2>&1 || skip "no cuobjdump"
cuobjdump --dump-sass "$BIN" >"$T/sass.txt" 2>"$T/err.txt" || { cat "$T/err.txt"; die "cuobjdump"; }
# One line per (image arch, function): counts of HGMMA and HMMA instructions.
awk '/code for sm_/ { arch = $3 }
     /Function : / { fn = $3; key = arch " " fn; seen[key] = 1 }
     /HGMMA/ { hg[key]++ }
     /[^G]HMMA/ { hm[key]++ }
     END { for (k in seen) printf "%s %d %d\n", k, hg[k] + 0, hm[k] + 0 }' "$T/sass.txt" | sort >"$T/counts.txt"
wg=$(grep -E ' _Z22gemm_bf16_wgmma_kernel' "$T/counts.txt")
echo "$wg" | awk '$1 == "sm_90a" && $3 > 0 { ok = 1 } END { exit !ok }' && ok ||
    bad "no HGMMA in gemm_bf16_wgmma_kernel's sm_90a image"
echo "$wg" | awk '$1 == "sm_90" { bad = 1 } END { exit bad }' && ok ||
    bad "gemm_bf16_wgmma_kernel also has a plain sm_90 image (the loader may pick it)"
mm=$(grep -E ' _Z16gemm_bf16_kernel' "$T/counts.txt")
[ -n "$mm" ] && ok || bad "gemm_bf16_kernel not found in the SASS"
echo "$mm" | awk '$4 == 0 { bad = 1 } END { exit bad }' && ok ||
    bad "an image of gemm_bf16_kernel without HMMA"
ax=$(grep -E ' _Z11axpy_kernel' "$T/counts.txt")
[ -n "$ax" ] && ok || bad "control axpy_kernel not found in the SASS"
echo "$ax" | awk '$3 + $4 > 0 { bad = 1 } END { exit bad }' && ok ||
    bad "control axpy_kernel shows tensor-core instructions: the match is wrong"
echo "$wg"; echo "$mm"; echo "$ax"
finish
