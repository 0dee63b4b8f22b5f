#!/usr/bin/env python3
"""Synthetic kgate reports with bench rows, for the run history tests and screenshots.

usage: history_reports.py OUT_DIR [N_RUNS]
Writes OUT_DIR/h200-<i>.json and OUT_DIR/h100-<i>.json (i = 1..N_RUNS, default 8): two device
classes, three cases, a mark that steps down as runs improve, one run without a mark (the first),
skipped rows, commits that look like real ones. The keys are those the bench gate writes
(gates/bench/bench_figures.c, baselines/report.schema.json)."""
import hashlib
import json
import os
import sys

CASES = [("axpy/n=33554433/f32", 140.0), ("softmax/rows=4096/cols=1024/f32", 21.5),
         ("gemm_bf16/m=4096/n=4096/k=4096", 610.0)]
DEVICES = [("h200", "NVIDIA H200/sm_90", 1.0), ("h100", "NVIDIA H100 80GB HBM3/sm_90", 1.32)]
# relative medians per run: improvements, a regression that gets fixed, noise
SHAPE = [1.00, 0.995, 0.97, 0.975, 1.06, 0.965, 0.962, 0.964, 0.95, 0.952, 0.951, 0.949]


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    os.makedirs(out, exist_ok=True)
    for tag, cls, scale in DEVICES:
        mark = {}
        for i in range(n):
            commit = hashlib.sha1(f"commit {i}".encode()).hexdigest()
            rows = []
            for case, base in CASES:
                med = base * scale * SHAPE[i % len(SHAPE)]
                half = med * 0.006
                fig = {"metric": "time_us_warm", "median_us": round(med, 4),
                       "ci_lo_us": round(med - half, 4), "ci_hi_us": round(med + half * 1.2, 4),
                       "samples": 400, "launches_per_sample": 16,
                       "power_state": {"label": "full-clock", "steady": True, "held": True}}
                m = mark.get(case)
                if m is None:
                    fig["decision"] = "NO_MARK"
                elif med + half * 1.2 < m:
                    fig["decision"] = "IMPROVED"
                elif med - half > m * 1.01:
                    fig["decision"] = "REGRESSED"
                else:
                    fig["decision"] = "SAME"
                if m is not None:
                    fig["mark"] = {"value": round(m, 4)}
                if fig["decision"] in ("NO_MARK", "IMPROVED"):
                    mark[case] = med + half * 1.2
                verdict = "FAIL" if fig["decision"] == "REGRESSED" else "PASS"
                rows.append({"gate": "bench", "case": case, "verdict": verdict, "message": "",
                             "figures": fig})
            rows.append({"gate": "bench", "case": "layernorm/rows=8192/f32", "verdict": "SKIP",
                         "message": "no kernel for this architecture", "figures": {}})
            rep = {"schema": "kgate-report/1", "command": "run", "mode": "diagnostic",
                   "certifying": False, "run_id": f"{tag}-run-{i + 1}",
                   "started_at": f"2026-11-{i + 1:02d}T0{2 if tag == 'h200' else 3}:00:00Z",
                   "seed": 7, "device": {"class": cls}, "provenance": {"commit": commit},
                   "results": rows}
            with open(os.path.join(out, f"{tag}-{i + 1}.json"), "w") as f:
                json.dump(rep, f)


if __name__ == "__main__":
    main()
