/* One high-water mark: the record the bench gate decides against and the marks layer
 * (gates/marks/) loads, validates, ratchets and commits. Only the type lives here, so the
 * gate below the marks layer can read a mark without linking it. */
#ifndef KG_MARK_H
#define KG_MARK_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { KG_LOWER_IS_BETTER = 0, KG_HIGHER_IS_BETTER = 1 } kg_direction;

/* The largest k (launches per timed replay) a mark may carry (marks/marks.h validates it; the
 * bench reads a report's run_k against it). */
#define KG_MARK_MAX_K 1048576

/* One mark: keyed by (device_class, case_id, metric). Strings are owned by the kg_marks. */
typedef struct {
    char *device_class; /* "NVIDIA H200/sm_90" (kg_device_class) */
    char *case_id;
    char *metric; /* "time_us_warm", "time_us_cold", ... (mode is part of the metric) */
    kg_direction direction;
    double value;        /* the mark itself, in metric units (> 0, finite) */
    double band_rel;     /* noise band, relative half-width (>= 0), e.g. 0.004 */
    double run_median;   /* the median of the run that set it */
    double ci_lo, ci_hi; /* that run's confidence interval of the median */
    int samples;         /* that run's sample count (>= 1) */
    /* provenance */
    char *commit;
    char *date; /* ISO 8601 UTC */
    char *run_id;
    char *driver; /* driver CUDA version, "13.0" */
    char *cuda;   /* runtime version */
    char *set_by; /* "kgate run --production", "kgate marks lower: <reason>", ... */
    /* Extensions (optional in the file; 0/NULL in a struct means "absent"). */
    int runs;              /* separate processes merged into this mark (kg_marks_merge); 0 = 1 */
    double env_lo, env_hi; /* lowest and highest per-process median merged (0 = unknown) */
    char *kernels;         /* kernels the case ran when the mark was set ("a;b"), for the record */
    int k;                 /* launches per timed replay the mark was measured with (0 = unknown):
                              * a run against this mark reuses it, so the figure never depends on
                              * a k chosen afresh by calibration */
    char *power_state;     /* the power state the mark was measured in ("full-clock",
                              * "power-capped", ...; NULL = unknown): runs compare only against a
                              * mark of their own state */
    /* What users pay, beside a replay-clock-normalised value (that basis hides power).
     * 0 = absent (marks written before): not gated on them. */
    double measured_median_us;   /* the measured (not normalised) time per launch */
    double measured_spread_rel;  /* its relative half-width across the processes that set it */
    double energy_per_launch_mj; /* NVML total-energy delta over the timed replays / launches */
    double energy_spread_rel;    /* its relative half-width across those processes */
    /* a fleet: the GPU that set the mark (NULL: unknown, marks written before) and
     * what the class's run history taught it when it was set (0: nothing). A run on another
     * GPU is judged with band_rel + xgpu_spread_rel (core/fleet.h) when xgpu_gpus >= 2. */
    char *gpu_uuid;
    char *gpu_serial;
    double xgpu_spread_rel; /* the class's cross-GPU spread of this case */
    int xgpu_gpus;          /* the GPUs it was learned from (0: unknown) */
    int history_runs;       /* production runs of the class band_rel learned from */
} kg_mark;

/* How the bench gate finds the mark of a case: the command layer loads the marks file and
 * hands this lookup down (NULL result: no mark). */
typedef const kg_mark *(*kg_mark_lookup_fn)(const void *marks, const char *device_class,
                                            const char *case_id, const char *metric);

/* One result that may move a mark, as both advance paths see it: a recorded report
 * (kg_advance_parse, marks/advance.h) and the typed results of the run in memory (a gate's
 * kg_gate_production.candidates, gate.h). Here, below the gates, so a gate can fill it.
 * Strings are borrowed. */
typedef struct {
    const char *case_id, *decision, *metric;
    kg_direction direction;
    double median, ci_lo, ci_hi, band, samples;
    const char *commit, *date, *driver, *cuda, *set_by;
    /* the separate processes behind the decision (figures.processes, default 1),
     * their envelope of medians (processes >= 2), and what they were measured with */
    int processes;
    double env_lo, env_hi;
    int k;                   /* 0 = unknown */
    const char *power_state; /* NULL = unknown */
    bool exact;              /* a hardware count (counters gate), not a timing: near-deterministic,
                                * so one process is enough (runs 1, no envelope, band as given) */
    /* what users pay (0 = absent): figures.raw_median_us and measured_spread_rel,
     * energy_per_launch_mj and energy_spread_rel, the mark's measured_* and energy_* */
    double measured_median, measured_spread, energy_mj, energy_spread;
} kg_advance_obs;

#ifdef __cplusplus
}
#endif
#endif
