#!/usr/bin/env bash
# The cost of case isolation on this GPU: alternating separate processes of
#   kgate run --diagnostic --skip-selftest --quiet --seed S
# with the worker (default) and in-process (KGATE_ISOLATION=0), N rounds each, and the median
# wall time of each mode. Noise is a cross-process property: the modes alternate so drift in
# clocks or temperature hits both alike.
#   usage: scripts/isolation-cost.sh [-b BUILD] [-n ROUNDS] [-s SEED]
set -uo pipefail
cd "$(dirname "$0")/.."
B=build N=5 S=4242
while getopts "b:n:s:" o; do
    case $o in b) B=$OPTARG ;; n) N=$OPTARG ;; s) S=$OPTARG ;; *) exit 2 ;; esac
done
KG=$B/runners/kgate
[ -x "$KG" ] || { echo "isolation-cost: $KG not built" >&2; exit 2; }
now() { python3 -c 'import time; print(time.monotonic())'; }
declare -a iso inproc
for r in $(seq 1 "$N"); do
    for m in 1 0; do
        t0=$(now)
        KGATE_ISOLATION=$m "$KG" run --diagnostic --skip-selftest --quiet --seed "$S" >/dev/null 2>&1
        rc=$?
        t=$(python3 -c "print(round($(now) - $t0, 3))")
        [ "$rc" -le 1 ] || echo "isolation-cost: round $r isolation=$m exited $rc" >&2
        if [ "$m" = 1 ]; then iso+=("$t"); else inproc+=("$t"); fi
        echo "round $r isolation=$m ${t} s"
    done
done
python3 - "${iso[*]}" "${inproc[*]}" <<'PY'
import statistics, sys
a = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
ma, mb = statistics.median(a), statistics.median(b)
print(f"isolated    median {ma:.2f} s  (min {min(a):.2f}, max {max(a):.2f}, n={len(a)})")
print(f"in-process  median {mb:.2f} s  (min {min(b):.2f}, max {max(b):.2f}, n={len(b)})")
print(f"isolation cost {100 * (ma / mb - 1):+.1f}% of the in-process median")
PY
