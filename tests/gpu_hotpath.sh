#!/usr/bin/env bash
# gpu: every reference case passes the hotpath gate (the cuBLAS GEMM with a preset workspace
# included); every planted hotpath defect FAILS with its expected reason, except those the
# gate must refuse to judge (expect_reason "error:<text>": ERROR with <text>, e.g. a launch
# that writes nothing, whose checks compare only poison); the in-place accumulator (poison,
# then prepare) is nondeterministic with atomics and passes in a fixed order; the cuBLAS GEMM
# without a workspace is reported as observed (informational). Exit 77 without a GPU.
. "$(dirname "$0")/lib.sh"
KG=$1 DEF=$2

"$KG" hotpath --seed 11 --report "$T/ref.json"; rc=$?
skip_if_no_gpu "$rc"
[ "$rc" -eq 0 ] || bad "reference hotpath exit $rc, want 0"
nref=$(jq '[.results[] | select(.gate=="hotpath")] | length' "$T/ref.json")
notpass=$(jq -r '.results[] | select(.gate=="hotpath" and .verdict!="PASS") | "\(.case) \(.verdict) \(.message)"' "$T/ref.json")
[ "$nref" -ge 1 ] || bad "no reference case ran"
[ -z "$notpass" ] || bad "reference cases not PASS: $notpass"
ncublas=$(jq '[.results[] | select(.gate=="hotpath" and (.case|startswith("cublas_gemm")) and .verdict=="PASS"
              and .figures.calls.pass and .figures.graph.pass and .figures.determinism.pass)] | length' "$T/ref.json")
[ "$ncublas" -ge 1 ] || bad "the cuBLAS GEMM with a preset workspace does not pass all three checks"
nbatch=$(jq '[.results[] | select(.gate=="hotpath" and .figures.batch_invariance.checked and .figures.batch_invariance.pass)] | length' "$T/ref.json")
[ "$nbatch" -ge 1 ] || bad "no reference case had its batch invariance checked"

"$DEF" hotpath --filter '^defect/hotpath/' --seed 11 --report "$T/def.json"; rc=$?
[ "$rc" -eq 1 ] || bad "defect hotpath exit $rc, want 1"
# Every defect (expect_reason other than "observe", from the catalogue) FAILs and its message
# names the reason.
"$DEF" list --json "$T/cat.json" >/dev/null || bad "list --json of the defect runner"
WHY='($cat[0].cases | map({(.id): .expect_reason}) | add) as $why'
ndef=$(jq --slurpfile cat "$T/cat.json" "$WHY"' | [.results[] | select(.gate=="hotpath" and $why[.case] != null and $why[.case] != "observe")] | length' "$T/def.json")
missed=$(jq -r --slurpfile cat "$T/cat.json" "$WHY"' | .results[] | select(.gate=="hotpath" and $why[.case] != null and $why[.case] != "observe")
                | . as $r | $why[$r.case] as $w
                | (if ($w | startswith("error:")) then "ERROR" else "FAIL" end) as $v
                | ($w | ltrimstr("error:")) as $t
                | select($r.verdict != $v or ($r.message | contains($t) | not))
                | "\($r.case): \($r.verdict): \($r.message) (want: \($v) \($t))"' "$T/def.json")
want=20; [ "${KGATE_HOTPATH_HOST_MEMORY:-}" = 0 ] && want=17 # without the host-memory ones
[ "$ndef" -ge "$want" ] || bad "only $ndef hotpath defects ran, want $want"
# The host-function defect is on the right stream and capturable: only the host callback fails.
[ "$(jq -r '.results[] | select(.case|startswith("defect/hotpath/cudaLaunchHostFunc/")) | [.figures.calls.forbidden[].category] | join(",")' "$T/def.json")" = host-callback ] \
    || bad "cudaLaunchHostFunc defect: want exactly one host-callback violation"
# The clean twins of the catalogue pass every check.
"$DEF" hotpath --filter '^clean/' --seed 11 --report "$T/clean.json" >/dev/null; rc=$?
[ "$rc" -eq 0 ] || bad "clean twins: hotpath exit $rc, want 0"
[ -z "$missed" ] || { bad "defects not caught with their reason:"; echo "$missed"; }
[ "$(jq '[.results[] | select(.case|startswith("clean/hotpath/inplace_ordered_accumulate/")) | select(.verdict=="PASS" and .figures.determinism.pass and .figures.graph.pass)] | length' "$T/clean.json")" = 1 ] \
    || bad "in-place ordered accumulator (clean twin): want PASS with determinism and graph replay"
# Sharper checks on what was observed.
f() { jq -r --arg c "$1" ".results[] | select(.gate==\"hotpath\" and (.case|startswith(\$c))) | $2" "$T/def.json"; }
[ "$(f defect/hotpath/cudaMalloc/ '[.figures.calls.forbidden[].api] | join(",")')" = cudaMalloc ] \
    || bad "cudaMalloc defect: want exactly one violation, cudaMalloc (no cuMemAlloc double count, D2D copy allowed), got $(f defect/hotpath/cudaMalloc/ '[.figures.calls.forbidden[].api] | join(",")')"
[ "$(f defect/hotpath/cudaMalloc/ '.figures.calls.forbidden[0].count')" = 2 ] || bad "cudaMalloc defect: want count 2 (two observed launches)"
[ "$(f defect/hotpath/cudaMalloc/ '.figures.calls.forbidden[0].backtrace | length > 0')" = true ] || bad "cudaMalloc defect: no backtrace"
[ "$(f defect/hotpath/cudaMallocAsync/ '.figures.graph.pass')" = true ] || bad "cudaMallocAsync defect should still be graph-capturable"
[ "$(f defect/hotpath/d2h_memcpy_async/ '.figures.graph.pass')" = true ] || bad "D2H (pinned) copy should be graph-capturable"
[ "$(f defect/hotpath/unjoined_stream/ '.figures.graph.cuda_error')" = cudaErrorStreamCaptureUnjoined ] || bad "unjoined stream: graph.cuda_error"
[ "$(f defect/hotpath/atomic_sum/ '.figures.determinism.mismatched_runs > 0')" = true ] || bad "atomic sum: no mismatched run"
# In place (prepare restores the accumulator after the poison): the atomics differ between runs.
[ "$(f defect/hotpath/inplace_atomic_accumulate/ '.figures.determinism.mismatched_runs > 0')" = true ] \
    || bad "in-place atomic accumulator: no mismatched run (did it run on the poison?)"
# Writes nothing: determinism and graph replay vacuous (not PASS), the calls clean.
[ "$(f defect/hotpath/writes_nothing/ '[.figures.determinism.pass, .figures.graph.pass, .figures.calls.pass] | map(tostring) | join(",")')" = false,false,true ] \
    || bad "writes-nothing defect: want determinism and graph not passing (vacuous), calls PASS"
f defect/hotpath/writes_nothing/ '.message' | grep -q 'vacuous graph replay' || bad "writes-nothing: graph replay not reported vacuous"
# The host-memory checks (hotpath/um_counters.h) and their cases, unless
# KGATE_HOTPATH_HOST_MEMORY=0 turned them off.
if [ "${KGATE_HOTPATH_HOST_MEMORY:-}" != 0 ]; then
[ "$(jq '[.results[] | select(.case|startswith("clean/hotpath/device_mirror/")) | select(.verdict=="PASS")] | length' "$T/clean.json")" = 1 ] \
    || bad "device mirror (clean twin of the mapped host mirror): want PASS"

# Kernel arguments in host-reachable memory: one host-memory violation naming the kernel; the
# managed x (rewritten by the host before the launches) migrates too: um-migration as well.
[ "$(f defect/hotpath/mapped_host_mirror/ '[.figures.calls.forbidden[].category] | join(",")')" = host-memory ] \
    || bad "mapped_host_mirror: want exactly one host-memory violation, got $(f defect/hotpath/mapped_host_mirror/ '.message')"
[ "$(f defect/hotpath/managed_host_touched/ '[.figures.calls.forbidden[].category] | join(",")')" = host-memory,um-migration ] \
    || bad "managed_host_touched: want host-memory and um-migration, got $(f defect/hotpath/managed_host_touched/ '.message')"
# Managed x through a device-global pointer: no argument shows it, only the UM counters.
[ "$(f defect/hotpath/managed_via_global/ '[.figures.calls.forbidden[].category] | join(",")')" = um-migration ] \
    || bad "managed_via_global: want exactly one um-migration violation, got $(f defect/hotpath/managed_via_global/ '.message')"
for c in managed_host_touched managed_via_global; do
    [ "$(f defect/hotpath/$c/ '.figures.calls.unified_memory | .available and .htod_bytes > 0')" = true ] \
        || bad "$c: want UM counters available with host-to-device bytes, got $(f defect/hotpath/$c/ '.figures.calls.unified_memory')"
done
[ "$(jq '[.results[] | select(.case|startswith("clean/hotpath/device_via_global/")) | select(.verdict=="PASS" and .figures.calls.unified_memory.available and .figures.calls.unified_memory.htod_bytes == 0)] | length' "$T/clean.json")" = 1 ] \
    || bad "device x through a device-global pointer (clean twin): want PASS with UM counters available and 0 bytes"
echo "unified memory over the observed launches (CUPTI UM counters):"
printf '  %-52s %-7s %-9s %10s %10s %7s  %s\n' case verdict available htod_B dtoh_B gpu_flt categories
jq -r '.results[] | select(.gate=="hotpath" and (.case|test("managed_host_touched|managed_via_global|device_via_global|mapped_host_mirror|clean/hotpath/axpy/")))
       | [.case, .verdict, (.figures.calls.unified_memory.available|tostring), (.figures.calls.unified_memory.htod_bytes // "-"),
          (.figures.calls.unified_memory.dtoh_bytes // "-"), (.figures.calls.unified_memory.gpu_page_fault_groups // "-"),
          ([.figures.calls.forbidden[].category] | join(",") | if . == "" then "-" else . end)] | @tsv' "$T/def.json" "$T/clean.json" |
    while IFS=$'\t' read -r c v a h d g k; do printf '  %-52s %-7s %-9s %10s %10s %7s  %s\n' "$c" "$v" "$a" "$h" "$d" "$g" "$k"; done
f defect/hotpath/mapped_host_mirror/ '.figures.calls.forbidden[0].detail' | grep -q 'hp_mirror_kernel' \
    || bad "mapped mirror: the violation does not name hp_mirror_kernel"
fi
# Dies with exit(1) in the capture after the observed cudaMalloc: the verdict names the call.
f defect/hotpath/cudaMalloc_then_exit/ '"\(.verdict): \(.message)"' | grep -q '^FAIL: .*cudaMalloc \[alloc/free\]' \
    || bad "cudaMalloc-then-exit: want FAIL naming cudaMalloc (the worker reads the phase evidence), got: $(f defect/hotpath/cudaMalloc_then_exit/ '"\(.verdict): \(.message)"')"
[ "$(f defect/hotpath/batch_variant/ '[.figures.batch_invariance.pass, .figures.determinism.pass, .figures.calls.pass] | map(tostring) | join(",")')" = false,true,true ] \
    || bad "batch-variant defect: want batch FAIL, determinism and calls PASS"

# Launch configurations: every reference case launches what its kernels[] declares (no
# mismatched row); the planted ones FAIL [launch-config] with only that check failing.
nlc=$(jq '[.results[] | select(.gate=="hotpath" and .figures.launch_configs.pass == true)] | length' "$T/ref.json")
[ "$nlc" = "$nref" ] || bad "reference cases with launch_configs not passing: $(jq -r '.results[] | select(.gate=="hotpath" and .figures.launch_configs.pass != true) | "\(.case): \(.message)"' "$T/ref.json")"
for c in launch_config_half_block launch_config_undeclared_smem; do
    [ "$(f defect/hotpath/$c/ '[.figures.launch_configs.pass, .figures.calls.pass, .figures.determinism.pass, .figures.graph.pass] | map(tostring) | join(",")')" = false,true,true,true ] \
        || bad "$c: want only launch_configs failing, got $(f defect/hotpath/$c/ '.message')"
done
echo "launch configurations, declared vs observed (threads/block, dynamic smem B):"
printf '  %-58s %-24s %9s %9s %9s %9s %5s\n' case kernel decl_thr decl_smem obs_thr obs_smem match
jq -r '.results[] | select(.gate=="hotpath" and (.case|test("launch_config|clean/hotpath/axpy/|device_mirror|inplace_ordered")))
       | .case as $c | .figures.launch_configs.observed[]
       | [$c, .kernel, .declared_block_threads, .declared_dynamic_smem, .block_threads, .dynamic_smem, .match] | @tsv' "$T/def.json" "$T/clean.json" |
    while IFS=$'\t' read -r c k dt ds ot os m; do printf '  %-58s %-24s %9s %9s %9s %9s %5s\n' "$c" "$k" "$dt" "$ds" "$ot" "$os" "$m"; done
echo "reference cases: $(jq '[.results[] | select(.gate=="hotpath") | .figures.launch_configs.observed | length] | add' "$T/ref.json") observed configurations, $(jq '[.results[] | select(.gate=="hotpath") | .figures.launch_configs.undeclared_launches] | add' "$T/ref.json") launches of undeclared kernels; notes:"
jq -r '.results[] | select(.gate=="hotpath" and .figures.launch_configs.note) | "  \(.case): \(.figures.launch_configs.note)"' "$T/ref.json"

# Informational: cuBLAS without a preset workspace. Report what was observed; never ERROR.
obs=$(f defect/hotpath/cublas_no_workspace/ '"\(.verdict): \(.message)"')
echo "INFO cuBLAS GEMM without cublasSetWorkspace: $obs"
case "$obs" in PASS:*|FAIL:*) ;; *) bad "cuBLAS no-workspace case: $obs";; esac

finish "$nref reference cases, $ndef defects"
