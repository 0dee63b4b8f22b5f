/* The bench gate, the decision against the mark and the ceiling check (bench_decide.c, pure) (one concern of gates/bench/bench.h, which includes every part). */
#ifndef KG_BENCH_DECIDE_H
#define KG_BENCH_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include "core/kg_core.h"
#include "core/mark.h"
#include "core/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- decision (pure: no GPU, no files) ------------------------------------------------ */

typedef enum {
    KG_BENCH_NO_MARK = 0,
    KG_BENCH_SAME,
    KG_BENCH_IMPROVED,
    KG_BENCH_REGRESSED,
    KG_BENCH_UNPROVEN,     /* the mark was merged from too few separate processes to carry a
                              * measured spread: no decision, never advances */
    KG_BENCH_STATE_DIFFERS /* the run and the mark were measured in different power states:
                              * no decision, never advances, the row says both states */
} kg_bench_decision;

const char *kg_bench_decision_name(kg_bench_decision d);

/* Floors from measurements, one rule for every case: a relative resolution floor
 * and an absolute one; everything above them is the mark's spread measured across the
 * processes that set it, plus this run's noise. No fixed compute-bound or single-process
 * floor: a mark merged from fewer than min_mark_runs processes decides nothing (UNPROVEN). */
typedef struct {
    double band_floor;   /* relative resolution floor (--band-floor) */
    double abs_floor_us; /* absolute floor: launch/timer jitter of tiny kernels */
    double alpha;        /* one-sided significance of the rank test (mark samples known) */
    int min_mark_runs;   /* --min-mark-runs: separate processes a mark must be merged from */
    double pay_floor;    /* what users pay FAILs only beyond this too (KG_PAY_FLOOR) */
} kg_decide_opts;
/* The pay floor: on the H200 marks set on a cold GPU met 10 processes on a warm one (after 45 s
 * of GEMM load) at +14.7..+18.0% measured time, every one beyond the setters' spread, with the
 * normalised basis within its own; the energy per launch of a capped GEMM moves with its time
 * (the board draws its cap). So what users pay FAILs only past 25%, above that thermal spread;
 * between the band and the floor it is a WARNING in the why. */
#define KG_PAY_FLOOR 0.25
/* abs floor 0.4 us: above what cases of 1-10 us move between processes (docs/measurements/h200-bench.md). */
#define KG_DECIDE_OPTS_INIT                                                          \
    {                                                                                \
        .band_floor = 0.005, .abs_floor_us = 0.4, .alpha = 0.01, .min_mark_runs = 3, \
        .pay_floor = KG_PAY_FLOOR                                                    \
    }
/* The most separate processes one decision combines (run --bench-processes). */
#define KG_BENCH_MAX_PROCESSES 16

/* This run's figures for one case and metric. */
typedef struct {
    double median, ci_lo, ci_hi; /* metric units (us for times) */
    const double *samples;       /* optional: the kept samples (rank test vs mark samples) */
    size_t n_samples;
    bool compute_bound;      /* work model above the measured ridge point */
    int k;                   /* launches per timed replay (0 = unknown) */
    const char *power_state; /* the state the samples were taken in (NULL = unknown) */
    /* what users pay (0 = unknown: not gated on it): the measured (not normalised)
     * median and its relative half-width; the energy per launch (mJ) and its half-width */
    double measured_median, measured_spread_rel;
    double energy_mj, energy_spread_rel;
} kg_bench_obs;

/* The gate on what users pay: a power-capped compute-bound row is decided on its
 * replay-clock-normalised time (the cycles), which does not see a change that only draws more
 * power (inputs that draw less power run faster under the cap at the same cycles). So such a row is
 * also gated on its measured time and its energy per launch against the mark's:
 *   REGRESSED when measured > mark.measured_median_us x (1 + max(floor, mark.measured_spread_rel
 *             + run measured spread)) and the two intervals are disjoint (significant), or
 *             energy > mark.energy_per_launch_mj x (1 + max(band floor, mark.energy_spread_rel +
 *             run energy spread)) (the mark's spread widened by (r+1)/(r-1) for r setters);
 *   FAILED when that change is also beyond KG_PAY_FLOOR (decide opts' pay_floor): the row FAILs;
 * the why names which. Not gated (said in the why): another basis, a decision that is no
 * decision (STATE_DIFFERS, UNPROVEN, NO_MARK), a mark without the figures (an older mark). */
typedef enum {
    KG_PAY_NOT_GATED = 0, /* not a normalised row, no decision, or the mark lacks the figures */
    KG_PAY_WITHIN,        /* gated: within the bands */
    KG_PAY_REGRESSED,     /* gated: measured time or energy per launch regressed (a WARNING) */
    KG_PAY_FAILED         /* ... beyond the pay floor too: the row FAILs */
} kg_bench_pay_gate;
/* "not-gated" | "within" | "regressed" | "failed" */
const char *kg_bench_pay_gate_name(kg_bench_pay_gate g);
/* True for a decided state on the replay-clock-normalised basis (KG_STATE_NORMALISED_SUFFIX). */
bool kg_bench_state_normalised(const char *state);

typedef struct {
    kg_bench_decision decision;
    double delta_rel;                /* run vs mark, oriented so > 0 is worse (slower for times) */
    double ci_delta_lo, ci_delta_hi; /* the run's CI, same orientation (lo <= hi) */
    double tolerance_rel;            /* the band the delta had to clear */
    double mark_noise_rel; /* mark.band_rel: the spread across the processes that set it */
    double run_noise_rel;  /* (ci_hi - ci_lo) / (2 median) of this run */
    double floor_rel;      /* the floor in force (max of relative and absolute) */
    bool significant;      /* the shift in the delta's direction is statistically significant */
    const char *test;      /* "mann-whitney-u" or "ci-disjoint" */
    double p_value;        /* rank test one-sided p (NaN for ci-disjoint) */
    /* What the run was measured with (copied from kg_bench_obs: --save-marks and the
     * production step write them into the marks they set). */
    bool compute_bound;       /* the run's bound (kg_bench_state_decides) */
    int run_k;                /* 0 = unknown */
    char run_power_state[64]; /* "" = unknown (kg_power_state.label: at most 63 bytes) */
    /* Separate processes behind this decision (kg_bench_combine; 1 = this process alone). */
    int processes;
    double env_lo, env_hi; /* lowest / highest per-process median (processes >= 2) */
    double proc_median[KG_BENCH_MAX_PROCESSES];
    kg_bench_decision proc_decision[KG_BENCH_MAX_PROCESSES];
    /* what users pay, beside the decided basis (kg_bench_obs's; combined over the
     * processes by kg_bench_combine). 0 = unknown. */
    double run_measured, run_measured_spread, run_energy, run_energy_spread;
    double measured_change_rel, energy_change_rel; /* vs the mark's, > 0 worse (NaN: none) */
    double measured_tol_rel, energy_tol_rel;       /* the bands they had to clear (NaN: none) */
    bool measured_significant;
    kg_bench_pay_gate pay_gate;
    char why[768]; /* one line: the figures that produced the decision */
} kg_bench_verdict;

/* The rule (docs/production-ci.md, "Bench decision"):
 *   delta     = run.median / mark.value - 1            (inverted for higher_is_better)
 *   tolerance = max(floor, mark.band_rel + run_noise), floor = max(band_floor,
 *               abs_floor_us / mark.value); mark.band_rel is the spread measured across the
 *               processes that set the mark (kg_marks_merge)
 *   significant: with mark samples, a one-sided Mann-Whitney U test at alpha; otherwise the
 *               run's CI of the median and the mark's [ci_lo, ci_hi] are disjoint
 *   REGRESSED when delta > tolerance and significant; IMPROVED when delta < -tolerance and
 *   significant; SAME otherwise; NO_MARK when mark is NULL. Then, figures kept:
 *   STATE_DIFFERS when the mark's and the run's power states are both known and differ and
 *   the row is compute-bound (kg_bench_state_decides; others are decided on time);
 *   UNPROVEN when the mark was merged from fewer than min_mark_runs processes. Neither is a
 *   failure and neither ever advances a mark. */
int kg_bench_decide(kg_bench_verdict *out, const kg_mark *mark, const kg_bench_obs *run,
                    const double *mark_samples, size_t n_mark_samples, const kg_decide_opts *o);
/* Whether a power-state label decides: only where it changes the time. A memory-
 * or latency-bound row is set by the memory clock and the launch path, not the SM clock's cap
 * (a memory-bound row labelled differently from its mark is the same measurement), so it is
 * decided on its
 * measured time whatever the label (the label is still recorded in the row and the mark); a
 * compute-bound row of another state is STATE_DIFFERS, as is a combination of compute-bound
 * processes of different states (pure). */
bool kg_bench_state_decides(bool compute_bound);
/* True for the decisions that fail the gate (REGRESSED). */
bool kg_bench_decision_fails(kg_bench_decision d);
/* True for a verdict that fails the gate: its decision fails, or what users pay FAILED. */
bool kg_bench_verdict_fails(const kg_bench_verdict *v);

/* N separate processes of one case into one decision (run --production): each
 * process's own obs and verdict (decided against the same mark) in `per`/`pv`, n in [1,
 * KG_BENCH_MAX_PROCESSES]. The combined obs (*comb) has the median of the per-process medians,
 * an interval [min ci_lo, max ci_hi], a run noise of max(median per-process noise, half the
 * spread of the medians), and the processes' k and power state. The combined decision:
 *   REGRESSED when the combined obs is REGRESSED against the mark (the why names the processes
 *             that were REGRESSED on their own);
 *   IMPROVED  only when the combined obs is IMPROVED AND every process was IMPROVED on its own
 *             (confirmation), else SAME "unconfirmed";
 *   STATE_DIFFERS when the processes were measured in different power states, UNPROVEN when
 *             they were timed with different k (neither advances);
 *   otherwise the combined obs's decision (SAME, NO_MARK, UNPROVEN, STATE_DIFFERS).
 * n == 1 (a diagnostic run): the process's verdict, an IMPROVED reported "unconfirmed". */
int kg_bench_combine(kg_bench_verdict *out, kg_bench_obs *comb, const kg_mark *mark,
                     const kg_bench_obs *per, const kg_bench_verdict *pv, size_t n,
                     const kg_decide_opts *o);
/* The decision's figures (for a report row), NULL on out of memory. */
cJSON *kg_bench_verdict_json(const kg_bench_verdict *v, const kg_mark *mark);
/* The mark a run on `gpu_uuid` is decided against (core/fleet.h): mark itself on the
 * GPU that set it (or either UUID unknown); else a copy in *tmp (its strings borrowed) whose
 * band is the mark's plus the class's cross-GPU spread it records, with the row's note in
 * note (n bytes; "" when none). mark may be NULL (returned). */
const kg_mark *kg_bench_mark_on_gpu(kg_mark *tmp, const kg_mark *mark, const char *gpu_uuid,
                                    char *note, size_t n);

/* Figures no kernel can reach (a launcher on stream 0 leaves the timed graph empty: the
 * figure would be absurd). A row's GB/s above the copy ceiling,
 * or its TFLOP/s above the GEMM ceiling, by more than the row's CI + the ceiling's own spread +
 * KG_CEIL_HEADROOM is ERROR, never a number. The headroom: DRAM-streaming kernels beat the
 * cudaMemcpy ceiling by a little (docs/measurements/h200-bench.md).
 * The copy ceiling is DRAM's: it bounds only a working set that streams from DRAM
 * (bytes_moved >= 2 x L2); an L2-resident one runs faster and is bounded by the kernel count
 * alone. The GEMM ceiling is timed in its own, often
 * power-capped, state: scaled by max clock / its clock for a row that ran faster clocks. */
#define KG_CEIL_HEADROOM 0.05
typedef struct {
    double gbps, tflops; /* the row's figures at its measured time (NaN: not declared) */
    double ci_rel;       /* the row's CI half-width, relative to its median */
    bool dram;           /* the working set streams from DRAM: the copy ceiling applies */
    double copy_gbps, copy_spread_rel; /* ceiling (0: not measured), half its sample range */
    double gemm_tflops, gemm_spread_rel;
    double gemm_clock_scale; /* max SM clock / the GEMM ceiling's probe clock (<= 1: none) */
} kg_ceiling_obs;
/* True when a figure passes its ceiling (see above); why: the ERROR's reason (pure). */
bool kg_bench_ceiling_exceeded(char *why, size_t n, const kg_ceiling_obs *o);

#ifdef __cplusplus
}
#endif
#endif
