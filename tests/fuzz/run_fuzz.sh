#!/usr/bin/env bash
# Run one libFuzzer harness for a few seconds from seed inputs (a fresh corpus each time).
# Usage: run_fuzz.sh HARNESS SECONDS SEED...   (exit 0: no crash, leak, hang or sanitizer report)
set -u
H=$1 S=$2; shift 2
C=$(mktemp -d)
trap 'rm -rf "$C"' EXIT
for f in "$@"; do cp "$f" "$C/"; done
mkdir -p "$C/out"
KG_FUZZ_OUT=$C/out "$H" -max_total_time="$S" -max_len=65536 -timeout=10 -rss_limit_mb=4096 \
    -artifact_prefix="$C/" "$C" >"$C/log" 2>&1
rc=$?
grep -E "^Done|^#[0-9]+ +DONE" "$C/log" | tail -2
if [ "$rc" -ne 0 ]; then
    tail -40 "$C/log"
    for a in "$C"/crash-* "$C"/leak-* "$C"/timeout-* "$C"/oom-*; do
        [ -e "$a" ] && { echo "artifact: $a"; head -c 600 "$a" | od -c | head -20; }
    done
fi
exit "$rc"
