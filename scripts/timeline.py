#!/usr/bin/env python3
"""Prefix each line of stdin with the seconds since start (where a long run spends its time)."""
import sys, time
t0 = time.monotonic()
for line in sys.stdin:
    sys.stdout.write(f"{time.monotonic() - t0:8.2f} {line}")
    sys.stdout.flush()
