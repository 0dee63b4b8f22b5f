#!/usr/bin/env bash
# kgate's counters against Nsight Compute's for the same launch (issue #25), on a GPU:
#   scripts/counters-check.sh [BUILD_DIR] [CASE ...]     (default build, the cases below)
# Per case: `kgate counters --filter '^case$' --report` (kgate's counts per launch, and the
# exact metric names it resolved on this device: report.counters.metrics), then ncu over
# `kgate parity --filter '^case$'` with the same metric names. Prints one table
#   case | metric | kgate | ncu | diff %
# and exits 1 when any gated metric differs by more than 1% (an absolute slack of 64 KiB for
# bytes, 256 KiB for sysmem bytes (decided against a 4 MiB floor), 64 for instruction counts,
# so a near-zero count cannot flap), 77 without ncu/python3,
# 2 on a case that cannot be compared (no counters row, ncu failed, kernels not found).
#
# Exactly one launch: `kgate parity` runs the case's launch() once (poison, launch,
# reference); the setup's fills and a cuBLAS reference run other kernels, so ncu profiles
# only kernels whose function name is one of the case's own (`kgate list --json`: kernels)
# and at most as many as kgate profiled in one launch (figures.kernels: -c N takes the first
# N matching launches, which is the one parity launch). Both sides start from a clean, cold
# L2: ncu --cache-control all, kgate's read-only flush before every pass (counters_flush.cu);
# --clock-control none leaves the clocks as kgate does. KGATE_ISOLATION=0 keeps the launch in
# the process ncu starts (no worker fork). A case with several kernels per launch differs
# by design where a later kernel reads what an earlier one left in L2: ncu flushes before
# every kernel, kgate once per launch (the default list has one such case, reduce_sum: ncu
# counts 2.3 MB more writes, its OFF row is expected; docs/measurements/h200-counters.md).
set -u
B=${1:-build}
shift || true
KG=$B/runners/kgate
CASES=("$@")
[ ${#CASES[@]} -gt 0 ] || CASES=(
  "axpy/n=33554433/f32"                 # streaming read + write, 4x L2
  "axpy/n=1048579/f32"                  # L2-resident: DRAM depends on the L2 state (flushed)
  "reduce_sum/n=67108869/f32"           # read-only, two kernels
  "rmsnorm/rows=16384,cols=8192/bf16"   # read + write, bf16
  "softmax/rows=16384,cols=4096/f32"    # read + write, f32
  "gemm_bf16/m=1000,n=1000,k=1000/bf16" # mma.sync (hmma)
  "gemm_bf16/m=4096,n=4096,k=4096/bf16" # wgmma (gmma), re-reads its inputs
)
command -v ncu >/dev/null || { echo "counters-check: ncu not found (CUDA toolkit bin)"; exit 77; }
command -v python3 >/dev/null || { echo "counters-check: python3 not found"; exit 77; }
[ -x "$KG" ] || { echo "counters-check: $KG not built"; exit 2; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
"$KG" list --json "$T/list.json" >/dev/null || { echo "counters-check: kgate list --json failed"; exit 2; }
# the gated counts (figures.metrics keys; pct and duration are not counts)
KEYS="dram_read_bytes dram_write_bytes inst fadd fmul ffma dadd dmul dfma hadd hmul hfma
      tensor_hmma_inst tensor_gmma_inst local_ld local_st sysmem_bytes"
rc=0
printf '%-38s %-50s %16s %16s %8s\n' case metric kgate ncu "diff %" | tee "$T/table"
for id in "${CASES[@]}"; do
    n=$(echo "$id" | tr -c 'A-Za-z0-9' _)
    if ! KGATE_ISOLATION=0 "$KG" counters --filter "^${id}\$" --report "$T/$n.json" \
        >"$T/$n.out" 2>&1; then
        grep -q "ERROR\|FAIL" "$T/$n.out" && { echo "$id: kgate counters:"; tail -3 "$T/$n.out"; }
    fi
    # the metric names kgate used, the case's kernels, and how many kgate profiled
    if ! python3 - "$T/$n.json" "$T/list.json" "$id" $KEYS >"$T/$n.plan" <<'EOF'
import json, re, sys
rep, lst, cid, keys = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4:]
row = [r for r in rep["results"] if r["gate"] == "counters" and r["case"] == cid]
cases = lst["cases"] if isinstance(lst, dict) else lst
case = [c for c in cases if c.get("id") == cid]
if not row or not case or "figures" not in row[0]:
    sys.exit(1)
names = rep["counters"]["metrics"]
kernels = case[0].get("kernels") or []
kernels = [k["name"] if isinstance(k, dict) else k for k in kernels]
base = sorted({re.sub(r"<.*", "", k) for k in kernels})
print("regex:^(" + "|".join(re.escape(b) for b in base) + ")(<.*)?$")  # templates: <...>
print(row[0]["figures"]["kernels"])
for k in keys:
    if names.get(k):
        print(k, names[k], row[0]["figures"]["metrics"].get(k))
EOF
    then echo "$id: no counters row in the report or not in \`kgate list\`"; rc=2; continue; fi
    kre=$(sed -n 1p "$T/$n.plan") cnt=$(sed -n 2p "$T/$n.plan")
    # DRAM bytes in an ncu run of their own: one pass, so ncu never restores the kernel's
    # memory between passes (a restore leaves dirty lines that a streaming kernel then
    # evicts inside the range); the other metrics in a second run, in as many passes as ncu needs
    dram=$(tail -n +3 "$T/$n.plan" | awk '$2 ~ /^dram__/ {print $2}' | paste -sd, -)
    rest=$(tail -n +3 "$T/$n.plan" | awk '$2 !~ /^dram__/ {print $2}' | paste -sd, -)
    csvs=() failed=0
    for set in "$dram" "$rest"; do
        [ -n "$set" ] || continue
        what=$([ "$set" = "$dram" ] && echo "DRAM bytes" || echo "the other metrics")
        k=${#csvs[@]}
        if ! KGATE_ISOLATION=0 ncu --cache-control all --clock-control none --target-processes all \
            --kernel-name "$kre" --launch-count "$cnt" --metrics "$set" --csv --page raw \
            --print-units base "$KG" parity --filter "^${id}\$" >"$T/$n.$k.csv" 2>"$T/$n.$k.err"; then
            echo "$id: ncu failed:"; tail -3 "$T/$n.$k.err"; failed=1; break
        fi
        csvs+=("$T/$n.$k.csv")
        echo "$id: $what: ncu took $(cat "$T/$n.$k.csv" "$T/$n.$k.err" |
             grep -o '[0-9]* pass\(es\)\?$' | sort | uniq -c | awk '{print $2 " " $3 " x" $1}' |
             paste -sd, -)" >>"$T/passes"
    done
    [ "$failed" = 0 ] || { rc=2; continue; }
    python3 - "$T/$n.plan" "$id" "${csvs[@]}" <<'EOF' | tee -a "$T/table"
import csv, io, math, sys
plan = open(sys.argv[1]).read().split("\n")[2:]
cid = sys.argv[2]
tables = []                             # (head, data) of each ncu run
for path in sys.argv[3:]:
    text = open(path).read()
    start = text.find('"ID"')           # ncu's own "==PROF==" lines come before the table
    rows = list(csv.reader(io.StringIO(text[start:]))) if start >= 0 else []
    if len(rows) < 3:
        print(f"{cid}: ncu profiled no kernel of the case"); sys.exit(2)
    tables.append((rows[0], rows[2:]))  # rows[1]: units
bad = 0
for line in plan:
    if not line.strip():
        continue
    key, name, kv = line.split(" ")
    head, data = next(((h, d) for h, d in tables if name in h), (None, None))
    col = head.index(name) if head else -1
    if col < 0:
        print(f"{cid:38} {name:50} {kv:>16} {'(not in ncu)':>16}"); bad = 1; continue
    scale = 32.0 if "lts__t_sectors" in name else 1.0   # kgate reports sectors as bytes
    nv = sum(float(r[col].replace(",", "") or 0) for r in data) * scale
    k = float(kv) if kv not in ("None", "null") else math.nan
    # sysmem is decided against a 4 MiB floor and is, for these kernels, the profilers' own
    # traffic (~0.8 MB a launch either way): 256 KiB of slack, a sixteenth of the floor
    slack = 262144 if key == "sysmem_bytes" else 65536 if "bytes" in key else 64
    diff = 0.0 if k == nv else (k - nv) / nv * 100 if nv else math.inf
    off = not (abs(k - nv) <= slack or abs(diff) <= 1.0)
    bad |= off
    print(f"{cid:38} {name:50} {k:16.0f} {nv:16.0f} {diff:8.2f}{'  OFF' if off else ''}")
sys.exit(1 if bad else 0)
EOF
    r=${PIPESTATUS[0]}
    [ "$r" -gt "$rc" ] && rc=$r
done
echo
cat "$T/passes" 2>/dev/null
echo "counters-check: $([ $rc -eq 0 ] && echo "every gated metric within 1% of ncu" ||
     echo "exit $rc: see OFF rows / messages above")"
exit $rc
