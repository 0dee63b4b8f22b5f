/* The bench gate: its options, typed row and figures, over its parts, one header a concern:
 * bench_decide.h (the pure decision rule, shared with the production pipeline and driven by
 * CPU tests), bench_power.h (launch count, power state), bench_engine.h (the timing engine),
 * bench_ceiling.h, clock_probe.h, bench_nvml.h and bench_cupti.h (the optional NVML /
 * CUPTI-activity helpers). Including this header includes them all. */
#ifndef KG_BENCH_H
#define KG_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/kg_core.h"
#include "gate.h"
#include "core/mark.h"
#include "core/stats.h"
#include "bench/bench_decide.h"
#include "bench/bench_power.h"
#include "bench/bench_engine.h"
#include "bench/bench_ceiling.h"
#include "bench/clock_probe.h"
#include "bench/bench_nvml.h"
#include "bench/bench_cupti.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the gate --------------------------------------------------------------------------- */

/* The gate (bench.c); the driver finds it in its table (gates/driver/gates.c). */
extern const struct kg_gate kg_gate_bench;
/* Its production hooks (bench_passes.c): run --production's combination of its processes,
 * its candidate marks. */
extern const struct kg_gate_production kg_bench_production;
/* Its report_candidates hook (bench_report.c): a recorded report's bench row. */
int kg_bench_report_candidates(kg_advance_obs *out, size_t max, const cJSON *row, kg_verdict v,
                               const kg_advance_obs *stamp, const char *name,
                               bool (*claimed)(const char *metric));

/* The gate's options (its kg_opt table is in bench.c). `marks_path`, `save_marks`: the flags
 * of `kgate bench`, handled by the command layer, which loads the marks and hands the lookup
 * down (marks live above the gates). */
typedef struct {
    int mode;                 /* 0 warm, 1 cold (--mode) */
    double budget_s;          /* --budget, per case (0 = the case's bench_budget_s, else 1 s) */
    double band_floor;        /* --band-floor (0 = the case's bench_band_floor, else the
                                 * decision's default) */
    int min_mark_runs;        /* --min-mark-runs (0 = the decision's default, 3) */
    double abs_floor_us;      /* --abs-floor */
    const char *marks_path;   /* --marks FILE (recorded in the settings) */
    const char *marks_ref;    /* --marks-ref REF: the marks file read at REF (command layer) */
    const char *save_marks;   /* --save-marks FILE */
    int launches;             /* --launches K (0: the mark's k, else calibrated) */
    kg_mark_lookup_fn lookup; /* NULL: every case NO_MARK */
    const void *marks;
    double warmup_min_s; /* --warmup-min S (< 0: the rule, kg_warm_rule_for) */
    int placements;      /* --placements N (0: kg_bench_placements_for) */
} kg_bench_gate_opts;
#define KG_BENCH_GATE_OPTS_INIT                                                               \
    {                                                                                         \
        .mode = 0, .budget_s = 0, .band_floor = 0, .min_mark_runs = 0, .abs_floor_us = 0,     \
        .marks_path = NULL, .save_marks = NULL, .launches = 0, .lookup = NULL, .marks = NULL, \
        .warmup_min_s = -1, .placements = 0                                                   \
    }

/* The settings one case is timed and decided with: `o` and `dopt` hold the run's (flags or
 * defaults) and take the case's bench_budget_s / bench_band_floor where the command line
 * gave no --budget / --band-floor (pure: no GPU). */
void kg_bench_case_settings(kg_bench_opts *o, kg_decide_opts *dopt, const kg_bench_gate_opts *g,
                            const kg_case_desc *d);

/* The decision options one case is decided with: the defaults, the gate's flags
 * (--band-floor, --abs-floor, --min-mark-runs), the case's bench_band_floor where no
 * --band-floor was given (what bench.c applies; the production step's combination reuses it). */
void kg_bench_decide_opts_for(kg_decide_opts *dopt, const kg_bench_gate_opts *g,
                              const kg_case_desc *d);

/* One case's typed bench result: the decision, the figures it came from, their context. */
typedef struct {
    kg_bench_result r; /* engine figures (owned) */
    kg_bench_verdict v;
    bool have_mark;
    kg_mark mark; /* a shallow copy of the mark decided against (strings NULL) */
    char mark_kernels[1024];
    const char *metric; /* "time_us_warm" | "time_us_cold" */
    kg_direction direction;
    char device_class[320];
    bool compute_bound;
    bool kernels_changed;
    char kernels[1024]; /* "a;b" from the CUPTI kernel trace */
    /* table cells */
    double ci_pct, gbps, tflops, pct_copy, pct_gemm;
    /* context of the figures */
    double copy_gbps, gemm_tflops, clock_floor_mhz, budget_s, target_ci_rel;
    int mode;
} kg_bench_row;

/* bench_figures.c: the report figures of a row, the run-level record, the table. */
cJSON *kg_bench_figures(const kg_case_desc *d, const kg_case_result *res);
/* The console table. Its length is the gate's n_columns: bench_figures.c checks at compile time
 * that KG_BENCH_N_COLUMNS is the count of the definition's initializer (a column added or
 * removed without it is a build error, never a blank or a lost column). */
#define KG_BENCH_N_COLUMNS 11
extern const kg_gate_column kg_bench_columns[];

#ifdef __cplusplus
}
#endif
#endif
