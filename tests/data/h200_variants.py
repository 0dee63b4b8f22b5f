#!/usr/bin/env python3
"""The recorded H200 run (h200-run-report.json) as a certifying run with something to show.

The recording passed everything, with no marks: NO_MARK on every bench row, no failure, no
error, diagnostic. The exporter and status tests also need the rows a real run writes when
things go wrong, so this derives them from the recorded rows, changing only what the writers
change in that case:

  * bench: three cases decided against a mark (REGRESSED +3.2%, IMPROVED -2.5%, SAME +0.1%), and
    one compute-bound case SAME: the figures kg_bench_verdict_json adds with a mark, computed
    with the decision rule's arithmetic (bench_decide.c, ci-disjoint test, default floors);
    the run's own figures (median, CI, ceilings, samples) stay the H200's;
  * parity: one case FAIL (tolerance exceeded; a message with every character the exporters
    escape), hotpath: one case ERROR (a CUDA error inside the case: no figures);
  * the top level of `run --production` (certifying, no notice, marks_update not committed).

Further variants (the third argument) add what the session and the worker write:

  * xfail: the parity FAIL case declares that expected failure (xfail_gate: parity), so its row
    is XFAIL with the session's message; the hotpath ERROR is a fault (the worker killed by
    SIGSEGV in launch: figures.fault with its output tail, the worker's message);
  * xpass: xfail, and a parity case that declares a failure passes: XPASS;
  * incomplete: xfail, interrupted (SIGTERM) during the last bench case: that row is a fault
    of class "interrupted" and the report has "incomplete": true.

The tests validate the result against baselines/report.schema.json before using it, so it
carries only keys the writers write.  Usage: h200_variants.py IN.json OUT.json
[decided|xfail|xpass|incomplete]
"""
import json
import sys

BAND_FLOOR, ABS_FLOOR_US = 0.005, 0.4  # bench's defaults (no compute floor since issue #14)
MARK_BAND = 0.002
DECIDE = {  # case -> (change against the mark, decision the rule must reach)
    "reduce_sum/n=67108869/f32": (0.032, "REGRESSED"),
    "rmsnorm/rows=16384,cols=8192/bf16": (-0.025, "IMPROVED"),
    "axpy/n=33554433/f32": (0.001, "SAME"),
    "gemm_bf16/m=8192,n=8192,k=8192/bf16": (0.004, "SAME"),
}
PARITY_FAIL = "softmax/rows=4096,cols=1000/f32"
HOTPATH_ERROR = "rmsnorm/rows=4096,cols=4096/bf16"
PARITY_XPASS = "axpy/n=4097/f32"
XFAIL_REASON = "softmax tolerance under review"
FAULT_TAIL = ["rmsnorm: launching grid (4096,1,1) block (256,1,1) <bf16> & \"rows\"",
              "worker: caught SIGSEGV at 0x0000000000000018"]


def fault(res, cls, what, phase, tail, **extra):
    """What gates/driver/worker.c writes for a case whose worker faulted (verdict ERROR)."""
    res["figures"]["fault"] = {"class": cls, **extra, "gate": res["gate"], "phase": phase,
                               "output_tail": tail}
    prior = res["message"]
    res["verdict"] = "ERROR"
    res["message"] = (f"FAULT {cls}: {what} in {res['gate']} ({phase})"
                      f"{': ' if prior else ''}{prior}")


def variant(rep, name):
    """The xfail, xpass and incomplete variants on top of the decided report."""
    rows = {(r["gate"], r["case"]): r for r in rep["results"]}
    x = rows[("parity", PARITY_FAIL)]
    x["verdict"] = "XFAIL"
    x["message"] = f"expected failure ({XFAIL_REASON}): {x['message']}"
    e = rows[("hotpath", HOTPATH_ERROR)]
    e["message"] = ""
    fault(e, "signal", "killed by SIGSEGV", "launch", FAULT_TAIL, signal="SIGSEGV")
    if name == "xpass":
        p = rows[("parity", PARITY_XPASS)]
        assert p["verdict"] == "PASS"
        p["verdict"] = "XPASS"
        p["message"] = ("passed, but the case declares an expected failure of parity "
                        f"(fixed upstream?): remove xfail_gate; {p['message']}")
    if name == "incomplete":
        last = rep["results"][-1]
        assert last["gate"] == "bench" and last["verdict"] == "PASS"
        last["figures"] = {}
        last["message"] = ""
        fault(last, "interrupted", "the run was interrupted by SIGTERM", "timing", [],
              signal="SIGTERM")
        rep["incomplete"] = True


def decide(rep, res, delta, want):
    """What bench.c writes for a case with a mark (lower is better: time)."""
    f = res["figures"]
    med, lo, hi = f["median_us"], f["ci_lo_us"], f["ci_hi_us"]
    value = med / (1 + delta)
    mark = {"value": value, "band_rel": MARK_BAND, "ci_lo": value * (1 - MARK_BAND),
            "ci_hi": value * (1 + MARK_BAND), "samples": f["samples"], "runs": 3,
            "commit": rep["provenance"]["commit"], "date": rep["started_at"],
            "run_id": "1796000000-1-abcdef"}
    run_noise = (hi - lo) / (2 * med)
    floor = max(BAND_FLOOR, ABS_FLOOR_US / value)
    tol = max(floor, MARK_BAND + run_noise)
    d = med / value - 1
    a, b = lo / value - 1, hi / value - 1
    sig = lo > mark["ci_hi"] if d > 0 else hi < mark["ci_lo"]
    dec = "REGRESSED" if d > tol and sig else "IMPROVED" if d < -tol and sig else "SAME"
    assert dec == want, (res["case"], dec, want)
    why = (f"{dec}{' (unconfirmed: one process)' if dec == 'IMPROVED' else ''}: "
           f"{100 * d:+.2f}% vs mark {value:.6g} (CI {100 * min(a, b):+.2f}%.."
           f"{100 * max(a, b):+.2f}%), tolerance {100 * tol:.2f}% = max(floor {100 * floor:.2f}%, "
           f"mark spread {100 * MARK_BAND:.2f}% over 3 process(es) + run noise "
           f"{100 * run_noise:.2f}%), ci-disjoint {'significant' if sig else 'not significant'}")
    head = {"decision": dec, "run_noise_rel": run_noise, "delta_rel": d, "ci_delta_lo": min(a, b),
            "ci_delta_hi": max(a, b), "tolerance_rel": tol, "floor_rel": floor,
            "mark_noise_rel": MARK_BAND, "significant": sig, "test": "ci-disjoint", "mark": mark,
            "why": why}
    rest = {k: v for k, v in f.items() if k not in ("decision", "run_noise_rel")}
    res["figures"] = {**head, **rest}
    res["verdict"] = "FAIL" if dec == "REGRESSED" else "PASS"
    res["message"] = (f"{why}; median {med:.4g} us (CI {lo:.4g}..{hi:.4g}, n={f['samples']}, "
                      f"{f['stop_reason']})")


def main(src, dst, name="decided"):
    assert name in ("decided", "xfail", "xpass", "incomplete"), name
    rep = json.load(open(src, encoding="utf-8"))
    assert rep["mode"] == "diagnostic" and rep["command"] == "run", "not the recorded run"
    seen = set()
    for res in rep["results"]:
        key = (res["gate"], res["case"])
        if res["gate"] == "bench" and res["case"] in DECIDE:
            decide(rep, res, *DECIDE[res["case"]])
        elif key == ("parity", PARITY_FAIL):
            f = res["figures"]
            f.update(max_abs=0.5, mismatched=4, first_bad_index=17)
            res["verdict"] = "FAIL"
            res["message"] = ("max_abs 0.5 > 1e-05 at 17: |out-ref| <tolerance> & \"cosine\" "
                              "'low'")
        elif key == ("hotpath", HOTPATH_ERROR):
            res.update(verdict="ERROR", figures={},
                       message="cudaStreamSynchronize(inst->stream) failed: "
                               "cudaErrorIllegalAddress (an illegal memory access was encountered)")
        else:
            continue
        seen.add(key)
    assert len(seen) == len(DECIDE) + 2, seen
    rep["mode"], rep["certifying"] = "production", True
    del rep["notice"]
    if name != "decided":
        variant(rep, name)
    bad = [f"{r['gate']} {r['case']}: {r['verdict']}" for r in rep["results"]
           if r["verdict"] in ("FAIL", "ERROR", "SKIP", "XPASS")]  # as kg_advance_parse words it
    rep["marks_update"] = {"committed": False, "reason": "; ".join(bad)}
    counts = {v: 0 for v in ("PASS", "WARN", "FAIL", "SKIP", "ERROR")}
    for r in rep["results"]:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    rep["summary"] = counts
    with open(dst, "w", encoding="utf-8") as out:
        json.dump(rep, out, indent=1, ensure_ascii=False)
        out.write("\n")


if __name__ == "__main__":
    main(*sys.argv[1:4])
