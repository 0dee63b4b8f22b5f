/* The bench gate, launch count, power state and the warm-up rule (bench_power.c, pure) (one concern of gates/bench/bench.h, which includes every part). */
#ifndef KG_BENCH_POWER_H
#define KG_BENCH_POWER_H

#include <stdbool.h>
#include <stddef.h>
#include "core/kg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- launch count and power state (bench_power.c: pure, no GPU) --------------------------- */

#define KG_MAX_K 1024 /* launches per replay at most */
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
#define KG_POWER_WINDOW 3      /* consecutive polls that must agree */
#define KG_POWER_BAND_REL 0.01 /* SM clock band of a steady / held state */
#define KG_POWER_POLL_S 0.025  /* NVML poll cadence while warming and sampling */
#define KG_POWER_WARMUP_MAX_S 1.5
#define KG_POWER_MAX_POLLS 512 /* polls kept for the median (min/max see all) */

/* The NVML name of reason bit `bit` ("sw_power_cap"), NULL past the known ones. */
const char *kg_power_reason_name(unsigned bit);

typedef struct {
    double t_s, sm_mhz, mem_mhz, power_w, temp_c; /* NaN where NVML did not answer */
    unsigned long long reasons;
    bool ok;              /* SM clock and reasons read */
    double power_limit_w; /* enforced power limit (NaN/0 unknown) */
} kg_power_poll;

/* NVML's own view (supplementary: its reasons and clocks lag the in-kernel probe, as measured
 * in docs/measurements/h200-bench.md). The last KG_POWER_WINDOW polls agree: same reasons (KG_POWER_IGNORED
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
 *     case recovers in plateaus, each steady for tens of ms);
 * and never before the minimum warm-up (KG_HEAVY_WARMUP_MIN_S for a heavy case: one launch >=
 * KG_HEAVY_LAUNCH_US or compute-bound, so the cap has engaged; else 0), at most
 * KG_POWER_WARMUP_MAX_S. */
#define KG_FULL_CLOCK_FRAC 0.98
#define KG_PROBE_BAND_FULL 0.01
#define KG_PROBE_BAND_LOW 0.02 /* the cap controller dithers ~1.1% (1498-1515 MHz) */
#define KG_PROBE_STEADY_N 3
#define KG_PROBE_SPAN_FULL_S 0.020
#define KG_PROBE_SPAN_HEAVY_S 0.100
#define KG_PROBE_SPAN_LIGHT_S 0.500
#define KG_HEAVY_LAUNCH_US 50.0
#define KG_HEAVY_WARMUP_MIN_S 0.3
#define KG_WARM_CHUNK_S 0.005
#define KG_PROBE_MAX_READINGS 2048 /* warm-up readings kept (> 0.5 s of the shortest chunks) */

typedef struct {
    double t_s, mhz; /* since the warm-up began; the probe's SM clock */
} kg_clock_reading;

typedef struct {
    double max_mhz;      /* max SM clock (0 = unknown: every window judged as full) */
    bool heavy;          /* power-hungry */
    double min_s, max_s; /* minimum and maximum warm-up */
} kg_warm_rule;

/* The rule for a case: heavy = launch_us >= KG_HEAVY_LAUNCH_US or compute_bound; min_s =
 * override when >= 0 (--warmup-min), else KG_HEAVY_WARMUP_MIN_S when heavy, else 0; max_s =
 * max(KG_POWER_WARMUP_MAX_S, min_s). */
kg_warm_rule kg_warm_rule_for(double max_mhz, double launch_us, bool compute_bound,
                              double override_min_s);
/* Steady at the last reading r[n-1] (see above); *ref_mhz: the window's median (NaN if not). */
bool kg_probe_steady(const kg_clock_reading *r, size_t n, const kg_warm_rule *w, double *ref_mhz);
/* Stop warming at r[n-1]: steady, or the cap reached. */
bool kg_probe_warm_done(const kg_clock_reading *r, size_t n, const kg_warm_rule *w, bool *steady,
                        double *ref_mhz);
/* The label (what the decision compares, so it must not flap): "unknown" without a probe
 * clock or a max clock; "full-clock" when median >= KG_FULL_CLOCK_FRAC x max; below:
 * "thermal" with NVML thermal reasons, "throttled" with hw_slowdown / hw_power_brake,
 * "power-capped" when NVML saw sw_power_cap or power near the limit or the case is heavy
 * (NVML lags: the capped GEMMs read "no reasons"), else "throttled". */
void kg_power_label_probe(char *buf, size_t n, double median_mhz, double max_mhz, bool heavy,
                          unsigned long long nvml_reasons, bool nvml_near_limit);

/* The state a case (or a ceiling) was sampled in. No pointers: it travels with the row. */
typedef struct {
    char label[64];                   /* from the probe (kg_power_label_probe) */
    bool probe;                       /* probe clocks measured (else label "unknown") */
    bool steady;                      /* the warm-up reached a steady probe clock (else capped) */
    bool held;                        /* every sample's probe clock stayed in the steady band */
    bool heavy;                       /* warmed as a power-hungry case */
    double warmup_s;                  /* back-to-back warm-up before sampling */
    double warmup_min_s;              /* the minimum in force */
    int warmup_readings;              /* probe readings during the warm-up */
    double max_mhz;                   /* the max SM clock the label is relative to */
    double ref_mhz;                   /* the warm-up's steady probe clock (NaN: not steady) */
    double sm_min, sm_median, sm_max; /* probe SM clock while sampling (MHz) */
    /* NVML, supplementary */
    bool nvml;            /* NVML answered */
    bool nvml_steady;     /* its polls were steady at the warm-up's end */
    bool nvml_held;       /* every poll while sampling kept its reasons and clock */
    bool nvml_near_limit; /* some poll read power >= 95% of the enforced limit */
    char nvml_label[64];  /* kg_power_label of the reasons at the warm-up's end */
    int polls;            /* NVML polls while sampling */
    double nvml_sm_min, nvml_sm_median, nvml_sm_max; /* NVML SM clock while sampling (MHz) */
    double mem_mhz, power_w, power_limit_w, temp_c;  /* the last poll */
    unsigned long long reasons;                      /* at the end of the warm-up */
    unsigned long long reasons_seen;                 /* every reason seen, warm-up and sampling */
} kg_power_state;

typedef struct {
    kg_power_state *ps;
    double ref_mhz;
    double sm[KG_POWER_MAX_POLLS];
    size_t n;
} kg_power_track;
/* NVML: start from the warm-up's polls (p[0..n)): nvml_steady, nvml_label, the band. */
void kg_power_track_begin(kg_power_track *t, kg_power_state *ps, const kg_power_poll *p, size_t n);
void kg_power_track_add(kg_power_track *t, const kg_power_poll *p);
void kg_power_track_end(kg_power_track *t);
/* A later placement's state into the first one's: NVML reasons seen, near-limit, polls, the
 * NVML clock range and the warm-up time add up; the probe side stays the first's (its
 * warm-up is the case's; every sample's clock feeds kg_power_finish). Pure. */
void kg_power_state_fold(kg_power_state *dst, const kg_power_state *src);
/* The probe side, after the warm-up (ps->steady, ref_mhz, max_mhz, heavy set) and sampling:
 * sm_* from the sampled clocks mhz[0..n) (NaN skipped), held, the label. */
void kg_power_finish(kg_power_state *ps, const double *mhz, size_t n);

#ifdef __cplusplus
}
#endif
#endif
