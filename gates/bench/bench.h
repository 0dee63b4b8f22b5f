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

/* Floors from measurements, one rule for every case (issue #14): a relative resolution floor
 * and an absolute one; everything above them is the mark's spread measured across the
 * processes that set it, plus this run's noise. No fixed compute-bound or single-process
 * floor: a mark merged from fewer than min_mark_runs processes decides nothing (UNPROVEN). */
typedef struct {
    double band_floor;      /* relative resolution floor (--band-floor) */
    double abs_floor_us;    /* absolute floor: launch/timer jitter of tiny kernels */
    double alpha;           /* one-sided significance of the rank test (mark samples known) */
    int min_mark_runs;      /* --min-mark-runs: separate processes a mark must be merged from */
} kg_decide_opts;
/* abs floor 0.4 us: cases of 1-10 us moved by 0.12..0.24 us between processes on the H200. */
#define KG_DECIDE_OPTS_INIT { .band_floor = 0.005, .abs_floor_us = 0.4, .alpha = 0.01, \
                             .min_mark_runs = 3 }
/* The most separate processes one decision combines (run --bench-processes). */
#define KG_BENCH_MAX_PROCESSES 16

/* This run's figures for one case and metric. */
typedef struct {
    double median, ci_lo, ci_hi;     /* metric units (us for times) */
    const double *samples;           /* optional: the kept samples (rank test vs mark samples) */
    size_t n_samples;
    bool compute_bound;              /* work model above the measured ridge point */
    int k;                           /* launches per timed replay (0 = unknown) */
    const char *power_state;         /* the state the samples were taken in (NULL = unknown) */
    /* issue #25, what users pay (0 = unknown: not gated on it): the measured (not normalised)
     * median and its relative half-width; the energy per launch (mJ) and its half-width */
    double measured_median, measured_spread_rel;
    double energy_mj, energy_spread_rel;
} kg_bench_obs;

/* The gate on what users pay (issue #25): a power-capped compute-bound row is decided on its
 * replay-clock-normalised time (the cycles), which does not see a change that only draws more
 * power: cuBLAS 8192^3 bf16 on all-zero inputs ran 0.858x the wall time of random inputs on
 * the H200 (1600 against 1375 MHz under the cap), its decided time 1.003x. So such a row is
 * also gated on its measured time and its energy per launch against the mark's:
 *   REGRESSED when measured > mark.measured_median_us x (1 + max(floor, mark.measured_spread_rel
 *             + run measured spread)) and the two intervals are disjoint (significant), or
 *             energy > mark.energy_per_launch_mj x (1 + max(band floor, mark.energy_spread_rel +
 *             run energy spread));
 * the why names which. Not gated (said in the why): another basis, a decision that is no
 * decision (STATE_DIFFERS, UNPROVEN, NO_MARK), a mark without the figures (before issue #25). */
typedef enum {
    KG_PAY_NOT_GATED = 0,   /* not a normalised row, no decision, or the mark lacks the figures */
    KG_PAY_WITHIN,          /* gated: within the bands */
    KG_PAY_REGRESSED        /* gated: measured time or energy per launch regressed */
} kg_bench_pay_gate;
/* "not-gated" | "within" | "regressed" */
const char *kg_bench_pay_gate_name(kg_bench_pay_gate g);
/* True for a decided state on the replay-clock-normalised basis (KG_STATE_NORMALISED_SUFFIX). */
bool kg_bench_state_normalised(const char *state);

typedef struct {
    kg_bench_decision decision;
    double delta_rel;       /* run vs mark, oriented so > 0 is worse (slower for times) */
    double ci_delta_lo, ci_delta_hi; /* the run's CI, same orientation (lo <= hi) */
    double tolerance_rel;   /* the band the delta had to clear */
    double mark_noise_rel;  /* mark.band_rel: the spread across the processes that set it */
    double run_noise_rel;   /* (ci_hi - ci_lo) / (2 median) of this run */
    double floor_rel;       /* the floor in force (max of relative and absolute) */
    bool significant;       /* the shift in the delta's direction is statistically significant */
    const char *test;       /* "mann-whitney-u" or "ci-disjoint" */
    double p_value;         /* rank test one-sided p (NaN for ci-disjoint) */
    /* What the run was measured with (copied from kg_bench_obs: --save-marks and the
     * production step write them into the marks they set). */
    bool compute_bound;     /* the run's bound (kg_bench_state_decides) */
    int run_k;              /* 0 = unknown */
    char run_power_state[64]; /* "" = unknown (kg_power_state.label: at most 63 bytes) */
    /* Separate processes behind this decision (kg_bench_combine; 1 = this process alone). */
    int processes;
    double env_lo, env_hi;  /* lowest / highest per-process median (processes >= 2) */
    double proc_median[KG_BENCH_MAX_PROCESSES];
    kg_bench_decision proc_decision[KG_BENCH_MAX_PROCESSES];
    /* issue #25: what users pay, beside the decided basis (kg_bench_obs's; combined over the
     * processes by kg_bench_combine). 0 = unknown. */
    double run_measured, run_measured_spread, run_energy, run_energy_spread;
    double measured_change_rel, energy_change_rel; /* vs the mark's, > 0 worse (NaN: none) */
    double measured_tol_rel, energy_tol_rel;       /* the bands they had to clear (NaN: none) */
    bool measured_significant;
    kg_bench_pay_gate pay_gate;
    char why[768];          /* one line: the figures that produced the decision */
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
/* Whether a power-state label decides (issue #25): only where it changes the time. A memory-
 * or latency-bound row is set by the memory clock and the launch path, not the SM clock's cap
 * (H200: softmax rows=32768,cols=4096/bf16, 131 us, came out STATE_DIFFERS in 6 of 6 processes,
 * mark full-clock, run power-capped, at -0.06% against the mark), so it is decided on its
 * measured time whatever the label (the label is still recorded in the row and the mark); a
 * compute-bound row of another state is STATE_DIFFERS, as is a combination of compute-bound
 * processes of different states (pure). */
bool kg_bench_state_decides(bool compute_bound);
/* True for the decisions that fail the gate (REGRESSED). */
bool kg_bench_decision_fails(kg_bench_decision d);

/* N separate processes of one case into one decision (run --production, issue #14): each
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
/* The mark a run on `gpu_uuid` is decided against (issue #27, core/fleet.h): mark itself on the
 * GPU that set it (or either UUID unknown); else a copy in *tmp (its strings borrowed) whose
 * band is the mark's plus the class's cross-GPU spread it records, with the row's note in
 * note (n bytes; "" when none). mark may be NULL (returned). */
const kg_mark *kg_bench_mark_on_gpu(kg_mark *tmp, const kg_mark *mark, const char *gpu_uuid,
                                    char *note, size_t n);

/* Figures no kernel can reach (issue #25: a launcher on stream 0 left the timed graph empty
 * and the bench reported 0.0097 us and 13874727.9 GB/s). A row's GB/s above the copy ceiling,
 * or its TFLOP/s above the GEMM ceiling, by more than the row's CI + the ceiling's own spread +
 * KG_CEIL_HEADROOM is ERROR, never a number. The headroom: on the H200 DRAM-streaming kernels
 * beat the cudaMemcpy ceiling by up to 1.6% (reduce_sum n=67108869: 4270 against 4202 GB/s).
 * The copy ceiling is DRAM's: it bounds only a working set that streams from DRAM
 * (bytes_moved >= 2 x L2); an L2-resident one runs faster (axpy n=1048579, 12 MB: 4694 GB/s
 * warm) and is bounded by the kernel count alone. The GEMM ceiling is timed in its own, often
 * power-capped, state: scaled by max clock / its clock for a row that ran faster clocks. */
#define KG_CEIL_HEADROOM 0.05
typedef struct {
    double gbps, tflops;        /* the row's figures at its measured time (NaN: not declared) */
    double ci_rel;              /* the row's CI half-width, relative to its median */
    bool dram;                  /* the working set streams from DRAM: the copy ceiling applies */
    double copy_gbps, copy_spread_rel;   /* ceiling (0: not measured), half its sample range */
    double gemm_tflops, gemm_spread_rel;
    double gemm_clock_scale;    /* max SM clock / the GEMM ceiling's probe clock (<= 1: none) */
} kg_ceiling_obs;
/* True when a figure passes its ceiling (see above); why: the ERROR's reason (pure). */
bool kg_bench_ceiling_exceeded(char *why, size_t n, const kg_ceiling_obs *o);

/* ---- launch count and power state (bench_power.c: pure, no GPU) --------------------------- */

#define KG_MAX_K 1024           /* launches per replay at most */
typedef enum { KG_K_CALIBRATED = 0, KG_K_MARK, KG_K_FLAG, KG_K_COLD } kg_k_source;
/* "calibrated" | "mark" | "flag" | "cold" */
const char *kg_bench_k_source_name(kg_k_source s);
/* k: cold 1; else the mark's k (> 0); else --launches (> 0); else ceil(min_replay_ms / est_ms)
 * rounded DOWN to a power of two, in [1, KG_MAX_K]. */
int kg_bench_choose_k(kg_k_source *source, int mark_k, int flag_k, bool cold, double est_ms,
                      double min_replay_ms);

/* NVML clock-event reason bits (nvml.h nvmlClocksEventReason*). */
#define KG_POWER_GPU_IDLE 0x1ULL
#define KG_POWER_APP_CLOCKS 0x2ULL
#define KG_POWER_SW_POWER_CAP 0x4ULL
#define KG_POWER_HW_SLOWDOWN 0x8ULL
#define KG_POWER_SW_THERMAL 0x20ULL
#define KG_POWER_HW_THERMAL 0x40ULL
#define KG_POWER_DISPLAY_CLOCKS 0x100ULL
/* Not throttling: left out of comparisons and labels. */
#define KG_POWER_IGNORED (KG_POWER_GPU_IDLE | KG_POWER_APP_CLOCKS | KG_POWER_DISPLAY_CLOCKS)
#define KG_POWER_WINDOW 3       /* consecutive polls that must agree */
#define KG_POWER_BAND_REL 0.01  /* SM clock band of a steady / held state */
#define KG_POWER_POLL_S 0.025   /* NVML poll cadence while warming and sampling */
#define KG_POWER_WARMUP_MAX_S 1.5
#define KG_POWER_MAX_POLLS 512  /* polls kept for the median (min/max see all) */

/* The NVML name of reason bit `bit` ("sw_power_cap"), NULL past the known ones. */
const char *kg_power_reason_name(unsigned bit);

typedef struct {
    double t_s, sm_mhz, mem_mhz, power_w, temp_c; /* NaN where NVML did not answer */
    unsigned long long reasons;
    bool ok;                    /* SM clock and reasons read */
    double power_limit_w;       /* enforced power limit (NaN/0 unknown) */
} kg_power_poll;

/* NVML's own view (supplementary since issue #14 round 2: on the H200 its reasons and clocks
 * lag the in-kernel probe; the GEMM ceiling read 1498-1515 MHz by the probe while NVML said
 * 1980 MHz, no reasons). The last KG_POWER_WINDOW polls agree: same reasons (KG_POWER_IGNORED
 * left out), SM clocks within KG_POWER_BAND_REL of the highest. */
bool kg_power_steady(const kg_power_poll *p, size_t n);
/* NVML's label: "full-clock" (no reasons beyond KG_POWER_IGNORED), "power-capped"
 * (sw_power_cap only), "thermal" (sw/hw thermal, with or without the power cap), "other:a+b",
 * "unknown" (no NVML). Recorded as nvml_label; the state's label comes from the probe. */
void kg_power_label(char *buf, size_t n, bool have_nvml, unsigned long long reasons);

/* The power state from the clock probe (the SM clock measured in a kernel after every warm-up
 * chunk and every sample). Warm-up: chunks of ~KG_WARM_CHUNK_S back-to-back, a probe reading
 * after each; steady when a trailing window of >= KG_PROBE_STEADY_N readings is
 *   at full clock (every reading within KG_PROBE_BAND_FULL of the max clock): within
 *     KG_PROBE_BAND_FULL of each other over >= KG_PROBE_SPAN_FULL_S;
 *   below it: within KG_PROBE_BAND_LOW over >= KG_PROBE_SPAN_HEAVY_S (a power-hungry case: its
 *     own cap) or KG_PROBE_SPAN_LIGHT_S (a light case: a residual throttle of an earlier heavy
 *     case recovers in plateaus, 1515 -> 1734 -> 1949 -> 1980 MHz on the H200);
 * and never before the minimum warm-up (KG_HEAVY_WARMUP_MIN_S for a heavy case: one launch >=
 * KG_HEAVY_LAUNCH_US or compute-bound, so the cap has engaged; else 0), at most
 * KG_POWER_WARMUP_MAX_S. */
#define KG_FULL_CLOCK_FRAC 0.98
#define KG_PROBE_BAND_FULL 0.01
#define KG_PROBE_BAND_LOW 0.02      /* the cap controller dithers ~1.1% (1498-1515 MHz) */
#define KG_PROBE_STEADY_N 3
#define KG_PROBE_SPAN_FULL_S 0.020
#define KG_PROBE_SPAN_HEAVY_S 0.100
#define KG_PROBE_SPAN_LIGHT_S 0.500
#define KG_HEAVY_LAUNCH_US 50.0
#define KG_HEAVY_WARMUP_MIN_S 0.3
#define KG_WARM_CHUNK_S 0.005
#define KG_PROBE_MAX_READINGS 2048  /* warm-up readings kept (> 0.5 s of the shortest chunks) */

typedef struct {
    double t_s, mhz;            /* since the warm-up began; the probe's SM clock */
} kg_clock_reading;

typedef struct {
    double max_mhz;             /* max SM clock (0 = unknown: every window judged as full) */
    bool heavy;                 /* power-hungry */
    double min_s, max_s;        /* minimum and maximum warm-up */
} kg_warm_rule;

/* The rule for a case: heavy = launch_us >= KG_HEAVY_LAUNCH_US or compute_bound; min_s =
 * override when >= 0 (--warmup-min), else KG_HEAVY_WARMUP_MIN_S when heavy, else 0; max_s =
 * max(KG_POWER_WARMUP_MAX_S, min_s). */
kg_warm_rule kg_warm_rule_for(double max_mhz, double launch_us, bool compute_bound,
                              double override_min_s);
/* Steady at the last reading r[n-1] (see above); *ref_mhz: the window's median (NaN if not). */
bool kg_probe_steady(const kg_clock_reading *r, size_t n, const kg_warm_rule *w,
                     double *ref_mhz);
/* Stop warming at r[n-1]: steady, or the cap reached. */
bool kg_probe_warm_done(const kg_clock_reading *r, size_t n, const kg_warm_rule *w,
                        bool *steady, double *ref_mhz);
/* The label (what the decision compares, so it must not flap): "unknown" without a probe
 * clock or a max clock; "full-clock" when median >= KG_FULL_CLOCK_FRAC x max; below:
 * "thermal" with NVML thermal reasons, "throttled" with hw_slowdown / hw_power_brake,
 * "power-capped" when NVML saw sw_power_cap or power near the limit or the case is heavy
 * (NVML lags: the capped GEMMs read "no reasons"), else "throttled". */
void kg_power_label_probe(char *buf, size_t n, double median_mhz, double max_mhz, bool heavy,
                          unsigned long long nvml_reasons, bool nvml_near_limit);

/* The state a case (or a ceiling) was sampled in. No pointers: it travels with the row. */
typedef struct {
    char label[64];             /* from the probe (kg_power_label_probe) */
    bool probe;                 /* probe clocks measured (else label "unknown") */
    bool steady;                /* the warm-up reached a steady probe clock (else capped) */
    bool held;                  /* every sample's probe clock stayed in the steady band */
    bool heavy;                 /* warmed as a power-hungry case */
    double warmup_s;            /* back-to-back warm-up before sampling */
    double warmup_min_s;        /* the minimum in force */
    int warmup_readings;        /* probe readings during the warm-up */
    double max_mhz;             /* the max SM clock the label is relative to */
    double ref_mhz;             /* the warm-up's steady probe clock (NaN: not steady) */
    double sm_min, sm_median, sm_max; /* probe SM clock while sampling (MHz) */
    /* NVML, supplementary */
    bool nvml;                  /* NVML answered */
    bool nvml_steady;           /* its polls were steady at the warm-up's end */
    bool nvml_held;             /* every poll while sampling kept its reasons and clock */
    bool nvml_near_limit;       /* some poll read power >= 95% of the enforced limit */
    char nvml_label[64];        /* kg_power_label of the reasons at the warm-up's end */
    int polls;                  /* NVML polls while sampling */
    double nvml_sm_min, nvml_sm_median, nvml_sm_max; /* NVML SM clock while sampling (MHz) */
    double mem_mhz, power_w, power_limit_w, temp_c;  /* the last poll */
    unsigned long long reasons; /* at the end of the warm-up */
    unsigned long long reasons_seen; /* every reason seen, warm-up and sampling */
} kg_power_state;

typedef struct {
    kg_power_state *ps;
    double ref_mhz;
    double sm[KG_POWER_MAX_POLLS];
    size_t n;
} kg_power_track;
/* NVML: start from the warm-up's polls (p[0..n)): nvml_steady, nvml_label, the band. */
void kg_power_track_begin(kg_power_track *t, kg_power_state *ps, const kg_power_poll *p,
                          size_t n);
void kg_power_track_add(kg_power_track *t, const kg_power_poll *p);
void kg_power_track_end(kg_power_track *t);
/* A later placement's state into the first one's: NVML reasons seen, near-limit, polls, the
 * NVML clock range and the warm-up time add up; the probe side stays the first's (its
 * warm-up is the case's; every sample's clock feeds kg_power_finish). Pure. */
void kg_power_state_fold(kg_power_state *dst, const kg_power_state *src);
/* The probe side, after the warm-up (ps->steady, ref_mhz, max_mhz, heavy set) and sampling:
 * sm_* from the sampled clocks mhz[0..n) (NaN skipped), held, the label. */
void kg_power_finish(kg_power_state *ps, const double *mhz, size_t n);

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
    int mark_k;             /* k of the case's mark (0: none), wins over flag_k */
    int flag_k;             /* --launches (0: calibrate) */
    bool warm_to_steady;    /* warm up back-to-back until the probe clock is steady */
    bool compute_bound;     /* the case is compute-bound (a heavy warm-up, kg_warm_rule_for) */
    double warmup_min_s;    /* --warmup-min (< 0: the rule's minimum) */
    int placements;         /* fresh-buffer placements (0: kg_bench_placements_for) */
} kg_bench_opts;
#define KG_BENCH_OPTS_INIT { .mode = 0, .budget_s = 1.0, .min_samples = 15, .max_samples = 2000, \
                            .target_ci_rel = 0.005, .ci_level = 0.95, .min_replay_ms = 4.0, \
                            .min_clock_frac = 0.70, .kernels = true, .mark_k = 0, .flag_k = 0, \
                            .warm_to_steady = true, .compute_bound = false, \
                            .warmup_min_s = -1, .placements = 0 }

/* Placements (issue #14). A power-capped compute-bound case's figure moved with where its
 * buffers landed: on the H200, four fresh placements of gemm_bf16 8192^3 in one process spread
 * 1201..1232 us (clock-normalised), as wide as ten separate processes (1204..1235), while the
 * median over four placements put five processes within 1220..1227; full-clock cases did not
 * move with placement. (Much of that was the clock during the replay, which the probe after it
 * missed: under the replay clock three placements of one process lay within 0.1-1.6%.) So a
 * compute-bound case whose launch takes >= KG_HEAVY_LAUNCH_US and whose warm-up ends below
 * full clock (capped) is timed on KG_BENCH_PLACEMENTS placements, each on freshly allocated
 * buffers behind a held shim allocation of a size drawn from the seed, the budget split between
 * them, the samples pooled; other cases on one. Samples of one placement share it, so the
 * process figure's interval is at least KG_PLACEMENT_Z x sd(placement medians) /
 * sqrt(placements) around the median (kg_bench_placement_half). */
#define KG_BENCH_PLACEMENTS 3
#define KG_BENCH_MAX_PLACEMENTS 8
/* 99% normal quantile: with three placements a t interval (4.30) would blind the gate to 4% on
 * a capped GEMM; 1.96 left one false alarm replaying the H200 proof's 20 processes. */
#define KG_PLACEMENT_Z 2.576
/* o->placements when > 0 (at most KG_BENCH_MAX_PLACEMENTS), else KG_BENCH_PLACEMENTS for a
 * warm-mode compute-bound case whose launch takes >= KG_HEAVY_LAUNCH_US and whose warm-up's
 * steady clock (warm_mhz, NaN when it did not settle) is below KG_FULL_CLOCK_FRAC of max_mhz
 * (unknown max: not capped), else 1 (pure). */
int kg_bench_placements_for(const kg_bench_opts *o, double launch_us, double warm_mhz,
                            double max_mhz);
/* Each placement's median (pm[0..n), NaN for one whose samples were all dropped) of the kept
 * values kept[] (one per sample not dropped, in order), placement p owning the samples
 * [starts[p], starts[p + 1]) of taken; returns the placements with a median, (size_t)-1 out of
 * memory (pure). */
size_t kg_bench_placement_medians(double *pm, const double *kept, const unsigned char *drop,
                                  size_t taken, const size_t *starts, size_t n);
/* Half-width (relative to `median`) of the placement-level interval: KG_PLACEMENT_Z x the
 * sample sd of the n placement medians pm / sqrt(n); 0 for n < 2 (pure). */
double kg_bench_placement_half(const double *pm, size_t n, double median);
/* The shim held before placement p >= 1: 2..512 MiB in 2 MiB steps, from the seed (pure). */
size_t kg_bench_shim_bytes(uint64_t seed, int p);

/* Clock normalisation (issue #14). Under the power cap the SM clock settles per process at
 * 1395..1515 MHz on the H200 (as the probe reads it after a replay): ten processes of
 * gemm_bf16 8192^3 alone read raw medians of 1598..1722 us (CV 2.3%). Scaled by the probe's
 * clock they kept a CV of 0.3-0.6%, and inside the full proof 0.52% (raw 0.49%): the clock
 * during the replay is not the one after it. The window stamps read it during the replay:
 * there it was ~10% below the probe's (1274-1323 against 1395-1450 MHz), and time x window
 * clock spread 0.11% over ten processes (raw 1.4%). So a power-capped compute-bound row is
 * decided on each sample's time scaled to the max clock by its own window clock,
 * t x f_window / f_max: the time its cycles would take at f_max. Its raw figures stay in the
 * report (raw_median_us); a full-clock row is decided on raw time. A regression that only draws
 * more power (same cycles, a lower capped clock) shows in the raw figures and the clock, not in
 * the decision. normalised[i] for the samples not dropped, in order; returns how many (pure).
 * Precondition: every sample not dropped has a finite window clock > 0 (the engine normalises
 * only then). */
size_t kg_bench_clock_normalise(double *normalised, const double *us, const double *window,
                                const unsigned char *drop, size_t n, double max_mhz);
/* The decided state of a normalised row ("power-capped:replay-clock-normalised"): the basis is
 * part of the state the decision and the marks compare, so a normalised run against a mark of
 * measured times (or of the probe-normalised basis of an earlier kgate, ":clock-normalised",
 * ~10% apart) is STATE_DIFFERS, and the two are never merged into one mark. */
#define KG_STATE_NORMALISED_SUFFIX ":replay-clock-normalised"
/* The clock floor (min_clock_frac of the max clock) drops a sample whose probe clock is below it:
 * its measured time is not the state's. A case timed on several placements (a capped heavy
 * compute-bound one) is sampled without it, since its clock-normalised time holds at any clock:
 * in the round-4 proof the probe read 1336-1381 MHz (< 1386, 70%) over a whole placement of
 * gemm_bf16 8192^3 in 2 of 20 processes, and those placements' normalised medians (1119.0,
 * 1112.5 us) lay among the others' (1111.9-1123.5). When such a row is not normalised after all
 * (another label, a replay clock missing) the floor is applied afterwards: drop[i] set again
 * for every sample from mhz[] (probe), kept[] the measured times of the others; returns how many
 * were kept (pure). */
size_t kg_bench_refloor(double *kept, unsigned char *drop, const double *us, const double *mhz,
                        size_t n, double floor_mhz);
/* Energy per launch (issue #25) from NVML's total-energy counter (mJ, resolution 1 mJ), read
 * before and after each sample's timed replay: mj[i] the delta of sample i (NaN: not read).
 * Per sample (every kept sample's delta >= KG_ENERGY_MIN_MJ): each sample's mj / k; the median,
 * and a spread of max(the CI half-width of the median, the placement-level half-width), as the
 * time's. Else per placement: each placement's kept deltas summed / (kept x k), placements
 * below KG_ENERGY_MIN_MJ in all left out; the median, and a spread of max(the placement-level
 * half-width, KG_ENERGY_TICK_Z / sqrt(ticks)), ticks = total / the largest single delta (a
 * coarse counter steps in whole ticks, a window of random phase catches a binomial count of
 * them). NONE when no kept sample was read or nothing reached KG_ENERGY_MIN_MJ (pure). */
#define KG_ENERGY_MIN_MJ 100.0
#define KG_ENERGY_TICK_Z 2.0
typedef enum { KG_ENERGY_NONE = 0, KG_ENERGY_PER_SAMPLE, KG_ENERGY_PER_PLACEMENT } kg_energy_basis;
/* "none" | "per-sample" | "per-placement" */
const char *kg_energy_basis_name(kg_energy_basis b);
typedef struct {
    kg_energy_basis basis;
    double per_launch_mj;       /* median (0: none) */
    double spread_rel;          /* relative half-width */
    size_t units;               /* samples or placements it is the median of */
    double total_mj;            /* the kept samples' deltas summed */
    double implied_w;           /* per_launch_mj over the measured time (a refused figure's) */
} kg_energy_summary;
int kg_bench_energy_summarize(kg_energy_summary *out, const double *mj, const unsigned char *drop,
                              size_t taken, const size_t *starts, size_t np, int k,
                              double ci_level);

/* The SM clock (MHz) over a sample from the window stamps taken before and after it: slot j =
 * {clock64, globaltimer ns} of SM j (zero where no stamp block ran); each SM stamped at both
 * ends gives its cycles over its ns, and the highest is the clock (all SMs share one clock; an
 * SM idle in the window may count fewer cycles). NaN when none was stamped at both (pure). */
double kg_clock_window_mhz(const unsigned long long *before, const unsigned long long *after,
                           size_t n_slots);

typedef struct kg_bench_env kg_bench_env;

/* Shared per run: L2 flush buffer, clock probe buffers, NVML (optional). */
int kg_bench_env_new(kg_bench_env **out, const kg_device_info *dev, const kg_bench_opts *o);
void kg_bench_env_free(kg_bench_env *e);
/* NVML snapshot as JSON (temperature, power, clocks, throttle reasons) or NULL if no NVML. */
cJSON *kg_bench_env_nvml_json(kg_bench_env *e);

typedef struct {
    int k;                  /* launches per timed replay */
    kg_k_source k_source;   /* where k came from */
    size_t block_timeouts;  /* samples whose blocking start timed out (host too slow) */
    bool blocking;          /* the replay was held behind the blocking kernel */
    kg_power_state power;   /* the state the samples were taken in */
    bool graph;             /* timed as a CUDA graph replay (else direct launches) */
    size_t taken, kept, dropped;
    double *all_us;         /* every sample taken (per launch) */
    double *clock_mhz;      /* SM clock measured right after each sample (NaN unknown) */
    double *window_mhz;     /* SM clock during each sample's replay (kg_clock_window_mhz) */
    double *energy_mj;      /* NVML total energy over each sample's replay (NaN: not read) */
    int energy_rc;          /* the first NVML energy read that failed: its code (0: none;
                             * KG_NVML_NO_LIBRARY: no NVML) */
    kg_energy_summary energy; /* of the kept samples (kg_bench_energy_summarize) */
    double measured_spread_rel; /* of raw_sum: max(its CI half-width, the placement-level
                                 * half-width of the measured times) (issue #25) */
    unsigned char *drop;    /* 1 = dropped (clock too low) */
    double *kept_us;        /* the samples the statistics use (clock-normalised when so) */
    kg_summary sum;         /* of kept_us: what is decided */
    bool have_sum;
    kg_summary raw_sum;     /* of the kept raw times (== sum unless clock_normalised) */
    bool clock_normalised;  /* kept_us/sum are clock-normalised (a power-capped row) */
    int placements;         /* fresh-buffer placements the samples were pooled from */
    size_t place_start[KG_BENCH_MAX_PLACEMENTS]; /* each placement's first sample index */
    double place_median[KG_BENCH_MAX_PLACEMENTS]; /* each placement's median (decided basis) */
    double place_half_rel;  /* kg_bench_placement_half: what widened the interval (0: none) */
    bool placements_short;  /* fewer placements than chosen (a shim did not fit, or the cap) */
    char decided_state[64]; /* power.label, + KG_STATE_NORMALISED_SUFFIX when normalised */
    const char *stop;       /* "ci_converged", "budget", "max_samples" */
    double elapsed_s;
    double clock_min, clock_median, clock_max; /* the probe's, after each sample */
    double window_median;   /* the window clock's (during each replay), kept samples */
    double clock_floor_mhz; /* the floor the kept samples passed (0: none; kg_bench_refloor) */
    bool floor_off;         /* sampled without the floor (chosen for several placements) */
    cJSON *kernels;         /* [{name, ns, graph_node}] from CUPTI activity, or NULL */
    int graph_kernels;      /* kernel nodes of the captured graph (-1: not a graph) */
    int replay_kernels;     /* kernels CUPTI saw in one replay after sampling (-1: no trace) */
    cJSON *nvml;            /* snapshot after timing, or NULL */
} kg_bench_result;

/* Time one case (setup, warm-up, capture, adaptive sampling, teardown). A CUDA failure of the
 * case is returned (<0) with the error set: the caller makes it the case's ERROR verdict. */
int kg_bench_time_case(kg_bench_result *res, kg_bench_env *env, const kg_case_desc *d,
                       uint64_t seed, int device, const kg_bench_opts *o);
void kg_bench_result_free(kg_bench_result *r);

/* Timing helpers shared by the cases and the ceilings (bench_engine.c). An operation enqueued
 * on s; the warm-up runs it back-to-back (chunks of ~KG_WARM_CHUNK_S, op_ms each), the clock
 * probe after every chunk, NVML every KG_POWER_POLL_S, until the probe clock is steady under w
 * (kg_probe_warm_done; without the probe: NVML steady after w's minimum, or w's cap), and
 * leaves the warm-up's state in ps (NVML tracking begun; kg_power_finish after sampling). */
typedef int (*kg_bench_op)(void *arg, cudaStream_t s);
int kg_bench_warm_to_steady(kg_power_state *ps, kg_power_track *t, kg_bench_env *e,
                            kg_bench_op op, void *arg, cudaStream_t s, double op_ms,
                            const kg_warm_rule *w);
/* Poll NVML into the tracker when KG_POWER_POLL_S has passed since the last (or `force`). */
void kg_bench_poll_track(kg_bench_env *e, kg_power_track *t, bool force);
/* The blocking start: a 1-thread kernel on s spins on a host-mapped flag (bounded by a 50 ms
 * %globaltimer timeout), so everything enqueued after it starts only when the host releases it:
 * the host's submission latency is outside the timed region. release after the enqueues;
 * timed_out after the stream synchronized. Without the kernel (it did not load) all are no-ops. */
int kg_bench_block(kg_bench_env *e, cudaStream_t s);
void kg_bench_block_release(kg_bench_env *e);
bool kg_bench_block_timed_out(const kg_bench_env *e);
bool kg_bench_block_available(const kg_bench_env *e);
/* The state's report object (the row's power_state, also each ceiling's). */
cJSON *kg_power_state_json(const kg_power_state *ps);

/* Ceilings measured on this device in this run. */
typedef struct {
    double copy_gbps;       /* device-to-device copy, bytes read + written per second / 1e9 */
    double copy_bytes;
    double gemm_tflops;     /* bf16 cuBLAS GEMM, dense 2*M*N*K per second / 1e12 */
    int gemm_m, gemm_n, gemm_k;
    double copy_spread_rel;     /* half the range of its samples / median (kg_ceiling_obs) */
    double gemm_spread_rel;
    double gemm_clock_scale;    /* max SM clock / the GEMM's probe clock median (1: unknown) */
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
    int min_mark_runs;          /* --min-mark-runs (0 = the decision's default, 3) */
    double abs_floor_us;        /* --abs-floor */
    const char *marks_path;     /* --marks FILE (recorded in the settings) */
    const char *marks_ref;      /* --marks-ref REF: the marks file read at REF (command layer) */
    const char *save_marks;     /* --save-marks FILE */
    int launches;               /* --launches K (0: the mark's k, else calibrated) */
    kg_mark_lookup_fn lookup;   /* NULL: every case NO_MARK */
    const void *marks;
    double warmup_min_s;        /* --warmup-min S (< 0: the rule, kg_warm_rule_for) */
    int placements;             /* --placements N (0: kg_bench_placements_for) */
} kg_bench_gate_opts;
#define KG_BENCH_GATE_OPTS_INIT { .mode = 0, .budget_s = 0, .band_floor = 0, \
                                  .min_mark_runs = 0, .abs_floor_us = 0, .marks_path = NULL, \
                                  .save_marks = NULL, .launches = 0, .lookup = NULL, \
                                  .marks = NULL, .warmup_min_s = -1, .placements = 0 }

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
/* The blocking kernel (same library): spins until flag[0] == want or timeout_ns have passed;
 * on a timeout it writes want to flag[1]. flag: a device pointer of host-mapped memory. */
int kg_block_wait_launch(unsigned *flag_dev, unsigned want, unsigned long long timeout_ns,
                         cudaStream_t s);
/* The window stamp (same library): `blocks` one-thread blocks, each writing {%clock64,
 * %globaltimer} of its SM to slots_dev[2 * smid] when smid < n_slots (an SM that no block
 * reached keeps what was there: the engine zeroes the slots first). */
int kg_clock_stamp_launch(unsigned long long *slots_dev, unsigned n_slots, unsigned blocks,
                          cudaStream_t s);
/* Random bf16 in [-1, 1) (never zero) from a seed into device memory (synchronizes s). */
int kg_bench_fill_bf16(uint16_t *dev, size_t n, uint64_t seed, cudaStream_t s);

typedef struct kg_nvml kg_nvml;
/* NULL (and no error) when libnvidia-ml.so.1 is absent. */
kg_nvml *kg_nvml_open(const char *uuid);
void kg_nvml_close(kg_nvml *n);
/* NVML's total energy since the driver loaded (mJ): nvmlDeviceGetTotalEnergyConsumption's
 * return code (0 success, 3 NVML_ERROR_NOT_SUPPORTED, ...), KG_NVML_NO_LIBRARY without NVML or
 * the symbol. */
#define KG_NVML_NO_LIBRARY (-1)
#define KG_NVML_NOT_SUPPORTED 3
#define KG_NVML_COUNTER_BACK (-2) /* the counter read lower after a replay than before it */
#define KG_NVML_IMPLAUSIBLE (-3)  /* the deltas imply more power than the board can draw */
/* Energy per launch over measured time per launch is a power: one above the board's enforced
 * limit (+10%; 1500 W when unknown) cannot be true. On the H200 the counter's deltas over
 * short samples implied 3-25 kW (its update period is longer than a sample): such a figure is
 * dropped, never decided on (pure). */
bool kg_bench_energy_plausible(double per_launch_mj, double measured_us, double power_limit_w,
                               double *implied_w);
int kg_nvml_energy_mj(kg_nvml *n, unsigned long long *mj);
/* Why a row has no energy figure, from its energy_rc and summary ("" when it has one). */
void kg_bench_energy_note(char *buf, size_t n, int energy_rc, const kg_energy_summary *e);
/* Current / maximum SM clock in MHz, or NaN. */
double kg_nvml_sm_clock(kg_nvml *n);
double kg_nvml_sm_max_clock(kg_nvml *n);
/* The maximum SM clock the drop threshold is relative to (device attribute, else NVML; MHz,
 * 0 when unknown). */
double kg_bench_env_max_clock_mhz(const kg_bench_env *e);
cJSON *kg_nvml_snapshot(kg_nvml *n);
/* One poll (SM and memory clock, reasons, power, temperature) at time t_s; ok = false without
 * NVML or when the SM clock or the reasons did not answer. */
void kg_nvml_poll(kg_nvml *n, kg_power_poll *p, double t_s);

/* CUPTI activity records of the kernels launched between begin and end (no callbacks). */
int kg_kernel_trace_begin(void);
/* Kernels recorded since begin, records flushed (-1 in *n when CUPTI dropped some). */
int kg_kernel_trace_count(int *n);
/* Ends the trace; returns [{name, ns, graph_node_id}] (NULL on error, the error set). */
cJSON *kg_kernel_trace_end(void);

#ifdef __cplusplus
}
#endif
#endif
