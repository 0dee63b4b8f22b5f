/* The bench gate's internals: the pure decision rule (shared with the production pipeline and
 * driven by CPU tests), the timing engine, the ceilings, the clock probe and the optional
 * NVML / CUPTI-activity helpers. */
#ifndef KG_BENCH_H
#define KG_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/kg_core.h"
#include "gate.h"
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
    KG_BENCH_UNPROVEN,      /* the mark was merged from too few separate processes to carry a
                             * measured spread: no decision, never advances (issue #14) */
    KG_BENCH_STATE_DIFFERS  /* the run and the mark were measured in different power states:
                             * no decision, never advances, the row says both states */
} kg_bench_decision;

const char *kg_bench_decision_name(kg_bench_decision d);

typedef struct {
    double band_floor;      /* relative tolerance floor (--band-floor) */
    double abs_floor_us;    /* absolute floor: launch/timer jitter of tiny kernels */
    double compute_floor;   /* floor for compute-bound cases (cross-process modes) */
    double alpha;           /* one-sided significance of the rank test (mark samples known) */
    double single_run_floor;/* floor for marks set by one process (runs <= 1): they carry no
                             * cross-process spread, which on an H200 reaches ~1.3% for large
                             * memory-bound cases (measured: separate processes, same code) */
} kg_decide_opts;
/* abs floor 0.4 us: cases of 1-10 us moved by 0.12..0.24 us between processes on the H200. */
#define KG_DECIDE_OPTS_INIT { .band_floor = 0.005, .abs_floor_us = 0.4, .compute_floor = 0.15, \
                             .alpha = 0.01, .single_run_floor = 0.02 }

/* This run's figures for one case and metric. */
typedef struct {
    double median, ci_lo, ci_hi;     /* metric units (us for times) */
    const double *samples;           /* optional: the kept samples (rank test vs mark samples) */
    size_t n_samples;
    bool compute_bound;              /* work model above the measured ridge point */
    int k;                           /* launches per timed replay (0 = unknown) */
    const char *power_state;         /* the state the samples were taken in (NULL = unknown) */
} kg_bench_obs;

typedef struct {
    kg_bench_decision decision;
    double delta_rel;       /* run vs mark, oriented so > 0 is worse (slower for times) */
    double ci_delta_lo, ci_delta_hi; /* the run's CI, same orientation (lo <= hi) */
    double tolerance_rel;   /* the band the delta had to clear */
    double mark_noise_rel;  /* mark.band_rel */
    double run_noise_rel;   /* (ci_hi - ci_lo) / (2 median) of this run */
    double floor_rel;       /* the floor in force (max of relative, absolute, compute) */
    bool significant;       /* the shift in the delta's direction is statistically significant */
    const char *test;       /* "mann-whitney-u" or "ci-disjoint" */
    double p_value;         /* rank test one-sided p (NaN for ci-disjoint) */
    char why[320];          /* one line: the figures that produced the decision */
} kg_bench_verdict;

/* The rule (docs/production-ci.md, "Bench decision"):
 *   delta     = run.median / mark.value - 1            (inverted for higher_is_better)
 *   tolerance = max(floor, mark.band_rel + run_noise), floor = max(band_floor,
 *               abs_floor_us / mark.value, compute_bound ? compute_floor : 0,
 *               mark.runs <= 1 ? single_run_floor : 0)
 *   significant: with mark samples, a one-sided Mann-Whitney U test at alpha; otherwise the
 *               run's CI of the median and the mark's [ci_lo, ci_hi] are disjoint
 *   REGRESSED when delta > tolerance and significant; IMPROVED when delta < -tolerance and
 *   significant; SAME otherwise; NO_MARK when mark is NULL. */
int kg_bench_decide(kg_bench_verdict *out, const kg_mark *mark, const kg_bench_obs *run,
                    const double *mark_samples, size_t n_mark_samples, const kg_decide_opts *o);
/* The decision's figures (for a report row), NULL on out of memory. */
cJSON *kg_bench_verdict_json(const kg_bench_verdict *v, const kg_mark *mark);

/* ---- engine --------------------------------------------------------------------------- */

typedef struct {
    int mode;               /* 0 warm, 1 cold (L2 flushed before every sample) */
    double budget_s;        /* per case, timing loop only */
    int min_samples;
    int max_samples;
    double target_ci_rel;   /* stop when (ci_hi - ci_lo) / median <= this */
    double ci_level;
    double min_replay_ms;   /* warm: k launches per graph replay so one replay lasts >= this */
    double min_clock_frac;  /* drop samples whose SM clock < this * max clock */
    bool kernels;           /* record kernel names/durations with CUPTI activity (one replay) */
} kg_bench_opts;
#define KG_BENCH_OPTS_INIT { .mode = 0, .budget_s = 1.0, .min_samples = 15, .max_samples = 2000, \
                            .target_ci_rel = 0.005, .ci_level = 0.95, .min_replay_ms = 1.0, \
                            .min_clock_frac = 0.70, .kernels = true }

typedef struct kg_bench_env kg_bench_env;

/* Shared per run: L2 flush buffer, clock probe buffers, NVML (optional). */
int kg_bench_env_new(kg_bench_env **out, const kg_device_info *dev, const kg_bench_opts *o);
void kg_bench_env_free(kg_bench_env *e);
/* NVML snapshot as JSON (temperature, power, clocks, throttle reasons) or NULL if no NVML. */
cJSON *kg_bench_env_nvml_json(kg_bench_env *e);

typedef struct {
    int k;                  /* launches per timed replay */
    bool graph;             /* timed as a CUDA graph replay (else direct launches) */
    size_t taken, kept, dropped;
    double *all_us;         /* every sample taken (per launch) */
    double *clock_mhz;      /* SM clock measured right after each sample (NaN unknown) */
    unsigned char *drop;    /* 1 = dropped (clock too low) */
    double *kept_us;        /* the samples the statistics use */
    kg_summary sum;
    bool have_sum;
    const char *stop;       /* "ci_converged", "budget", "max_samples" */
    double elapsed_s;
    double clock_min, clock_median, clock_max;
    cJSON *kernels;         /* [{name, ns, graph_node}] from CUPTI activity, or NULL */
    cJSON *nvml;            /* snapshot after timing, or NULL */
} kg_bench_result;

/* Time one case (setup, warm-up, capture, adaptive sampling, teardown). A CUDA failure of the
 * case is returned (<0) with the error set: the caller makes it the case's ERROR verdict. */
int kg_bench_time_case(kg_bench_result *res, kg_bench_env *env, const kg_case_desc *d,
                       uint64_t seed, int device, const kg_bench_opts *o);
void kg_bench_result_free(kg_bench_result *r);

/* Ceilings measured on this device in this run. */
typedef struct {
    double copy_gbps;       /* device-to-device copy, bytes read + written per second / 1e9 */
    double copy_bytes;
    double gemm_tflops;     /* bf16 cuBLAS GEMM, dense 2*M*N*K per second / 1e12 */
    int gemm_m, gemm_n, gemm_k;
    cJSON *detail;          /* samples, clocks, kernel names */
} kg_bench_ceilings;
int kg_bench_measure_ceilings(kg_bench_ceilings *c, kg_bench_env *env, uint64_t seed,
                              const kg_bench_opts *o);
void kg_bench_ceilings_free(kg_bench_ceilings *c);

/* ---- the gate --------------------------------------------------------------------------- */

/* The gate's options (its kg_opt table is in bench.c). `marks_path`, `save_marks`: the flags
 * of `kgate bench`, handled by the command layer, which loads the marks and hands the lookup
 * down (marks live above the gates). */
typedef struct {
    int mode;                   /* 0 warm, 1 cold (--mode) */
    double budget_s;            /* --budget, per case (0 = the case's bench_budget_s, else 1 s) */
    double band_floor;          /* --band-floor (0 = the case's bench_band_floor, else the
                                 * decision's default) */
    double compute_floor;       /* --compute-floor */
    double abs_floor_us;        /* --abs-floor */
    const char *marks_path;     /* --marks FILE (recorded in the settings) */
    const char *marks_ref;      /* --marks-ref REF: the marks file read at REF (command layer) */
    const char *save_marks;     /* --save-marks FILE */
    kg_mark_lookup_fn lookup;   /* NULL: every case NO_MARK */
    const void *marks;
} kg_bench_gate_opts;
#define KG_BENCH_GATE_OPTS_INIT { .mode = 0, .budget_s = 0, .band_floor = 0, \
                                  .compute_floor = 0, .abs_floor_us = 0, .marks_path = NULL, \
                                  .save_marks = NULL, .lookup = NULL, .marks = NULL }

/* The settings one case is timed and decided with: `o` and `dopt` hold the run's (flags or
 * defaults) and take the case's bench_budget_s / bench_band_floor where the command line
 * gave no --budget / --band-floor (pure: no GPU). */
void kg_bench_case_settings(kg_bench_opts *o, kg_decide_opts *dopt, const kg_bench_gate_opts *g,
                            const kg_case_desc *d);

/* One case's typed bench result: the decision, the figures it came from, their context. */
typedef struct {
    kg_bench_result r;          /* engine figures (owned) */
    kg_bench_verdict v;
    bool have_mark;
    kg_mark mark;               /* a shallow copy of the mark decided against (strings NULL) */
    char mark_kernels[1024];
    const char *metric;         /* "time_us_warm" | "time_us_cold" */
    kg_direction direction;
    char device_class[320];
    bool compute_bound;
    bool kernels_changed;
    char kernels[1024];         /* "a;b" from the CUPTI kernel trace */
    /* table cells */
    double ci_pct, gbps, tflops, pct_copy, pct_gemm;
    /* context of the figures */
    double copy_gbps, gemm_tflops, clock_floor_mhz, budget_s, target_ci_rel;
    int mode;
} kg_bench_row;

/* bench_figures.c: the report figures of a row, the run-level record, the table. */
cJSON *kg_bench_figures(const kg_case_desc *d, const kg_case_result *res);
#define KG_BENCH_N_COLUMNS 11
extern const kg_gate_column kg_bench_columns[KG_BENCH_N_COLUMNS];

/* ---- helpers used by the engine (clock_probe.cu, bench_nvml.c, bench_cupti.c) ------------ */

/* Timestamp kernel (clock_probe.c): load it for the current context (idempotent), then
 * launch: one thread spins ~span_ns of %globaltimer and writes {clock64 delta, ns delta}. */
int kg_clock_probe_init(void);
int kg_clock_probe_launch(unsigned long long *dev_out2, unsigned span_ns, cudaStream_t s);
/* Random bf16 in [-1, 1) (never zero) from a seed into device memory (synchronizes s). */
int kg_bench_fill_bf16(uint16_t *dev, size_t n, uint64_t seed, cudaStream_t s);

typedef struct kg_nvml kg_nvml;
/* NULL (and no error) when libnvidia-ml.so.1 is absent. */
kg_nvml *kg_nvml_open(const char *uuid);
void kg_nvml_close(kg_nvml *n);
/* Current / maximum SM clock in MHz, or NaN. */
double kg_nvml_sm_clock(kg_nvml *n);
double kg_nvml_sm_max_clock(kg_nvml *n);
/* The maximum SM clock the drop threshold is relative to (device attribute, else NVML; MHz,
 * 0 when unknown). */
double kg_bench_env_max_clock_mhz(const kg_bench_env *e);
cJSON *kg_nvml_snapshot(kg_nvml *n);

/* CUPTI activity records of the kernels launched between begin and end (no callbacks). */
int kg_kernel_trace_begin(void);
/* Ends the trace; returns [{name, ns, graph_node_id}] (NULL on error, the error set). */
cJSON *kg_kernel_trace_end(void);

#ifdef __cplusplus
}
#endif
#endif
