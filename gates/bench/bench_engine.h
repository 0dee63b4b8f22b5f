/* The bench gate, the timing engine (bench_engine.c) (one concern of gates/bench/bench.h, which includes every part). */
#ifndef KG_BENCH_ENGINE_H
#define KG_BENCH_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/kg_core.h"
#include "bench/bench_decide.h"
#include "bench/bench_power.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- engine --------------------------------------------------------------------------- */

typedef struct {
    int mode;        /* 0 warm, 1 cold (L2 flushed before every sample) */
    double budget_s; /* per case, timing loop only */
    int min_samples;
    int max_samples;
    double target_ci_rel; /* stop when (ci_hi - ci_lo) / median <= this */
    double ci_level;
    double min_replay_ms;  /* warm: k launches per graph replay so one replay lasts >= this */
    double min_clock_frac; /* drop samples whose SM clock < this * max clock */
    bool kernels;          /* record kernel names/durations with CUPTI activity (one replay) */
    int mark_k;            /* k of the case's mark (0: none), wins over flag_k */
    int flag_k;            /* --launches (0: calibrate) */
    bool warm_to_steady;   /* warm up back-to-back until the probe clock is steady */
    bool compute_bound;    /* the case is compute-bound (a heavy warm-up, kg_warm_rule_for) */
    double warmup_min_s;   /* --warmup-min (< 0: the rule's minimum) */
    int placements;        /* fresh-buffer placements (0: kg_bench_placements_for) */
} kg_bench_opts;
#define KG_BENCH_OPTS_INIT                                                                         \
    {                                                                                              \
        .mode = 0, .budget_s = 1.0, .min_samples = 15, .max_samples = 2000,                        \
        .target_ci_rel = 0.005, .ci_level = 0.95, .min_replay_ms = 4.0, .min_clock_frac = 0.70,    \
        .kernels = true, .mark_k = 0, .flag_k = 0, .warm_to_steady = true, .compute_bound = false, \
        .warmup_min_s = -1, .placements = 0                                                        \
    }

/* Placements. A power-capped compute-bound case's figure moves with where its buffers land,
 * as much as between separate processes; full-clock cases do not (docs/measurements/h200-bench.md). So a
 * compute-bound case whose launch takes >= KG_HEAVY_LAUNCH_US and whose warm-up ends below
 * full clock (capped) is timed on KG_BENCH_PLACEMENTS placements, each on freshly allocated
 * buffers behind a held shim allocation of a size drawn from the seed, the budget split between
 * them, the samples pooled; other cases on one. Samples of one placement share it, so the
 * process figure's interval is at least KG_PLACEMENT_Z x sd(placement medians) /
 * sqrt(placements) around the median (kg_bench_placement_half). */
#define KG_BENCH_PLACEMENTS 3
#define KG_BENCH_MAX_PLACEMENTS 8
/* 99% normal quantile: with three placements a t interval (4.30) would blind the gate to 4% on
 * a capped GEMM; 1.96 left a false alarm in the proof's replay (docs/measurements/h200-bench.md). */
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

/* Clock normalisation. Under the power cap the SM clock settles at a level of its own per
 * process, and the clock during the replay (the window stamps) is not the one the probe reads
 * after it; time x window clock is what repeats across processes (docs/measurements/h200-bench.md). So a power-capped compute-bound row is
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
/* Energy per launch from NVML's total-energy counter (mJ, resolution 1 mJ), read
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
typedef enum {
    KG_ENERGY_NONE = 0,
    KG_ENERGY_PER_SAMPLE,
    KG_ENERGY_PER_PLACEMENT,
    KG_ENERGY_WINDOW
} kg_energy_basis;
/* "none" | "per-sample" | "per-placement" | "window" */
const char *kg_energy_basis_name(kg_energy_basis b);
typedef struct {
    kg_energy_basis basis;
    double per_launch_mj; /* median (0: none) */
    double spread_rel;    /* relative half-width */
    size_t units;         /* samples or placements it is the median of */
    double total_mj;      /* the kept samples' deltas summed */
    double implied_w;     /* per_launch_mj over the measured time (a refused figure's) */
    double period_max_w;  /* window: its largest period's power (0: no window) */
} kg_energy_summary;
int kg_bench_energy_summarize(kg_energy_summary *out, const double *mj, const unsigned char *drop,
                              size_t taken, const size_t *starts, size_t np, int k,
                              double ci_level);
/* The energy window (compute-bound rows): NVML's counter steps once per update period (100 ms
 * on the H200, measured: 8 updates in 0.84 s of GEMM load), so a sample's delta is 0 or a whole
 * period's and per-sample figures are noise. Instead the replays run back-to-back for
 * KG_ENERGY_WINDOW_S after the samples, the counter is polled, and its update edges while the
 * GPU was busy throughout bound whole periods: edge i at host time t_s[i] (s) with counter
 * mj[i]. The power is the energy between the first and last edge over their span (a ratio of
 * sums: a mean of per-period ratios leans high with the edges' timing jitter); the spread is
 * the larger of the periods' t-based 95% half-width and a quarter of the poll interval over
 * the window (edge timing), relative; the energy per launch is that power times launch_us, the
 * launch's GPU time (CUDA events) over the same replays. NONE with fewer than
 * KG_ENERGY_MIN_PERIODS periods, a counter that went back, a window whose power exceeds
 * limit_w x KG_ENERGY_LIMIT_MARGIN or one period whose power exceeds limit_w x
 * KG_ENERGY_PERIOD_MARGIN (limit_w not finite or <= 0: either beyond KG_ENERGY_NO_LIMIT_W); a refused
 * figure's power in implied_w. period_max_w is the largest period's power (pure). */
#define KG_ENERGY_WINDOW_S 0.65
#define KG_ENERGY_MIN_PERIODS 3
#define KG_ENERGY_POLL_S 2e-4
/* What the counter reads against the enforced limit, measured: capped GEMMs of an H100 (700 W
 * enforced; GPU-38a04d37, 2026-12-07) read 769-782 W over their windows, 1.10-1.12x, and up to
 * 864 W (1.23x) in one period: the counter's board is not the limiter's (the former per-period
 * limit + 10% refused every capped GEMM of a cold H100); a counter's glitch reads kilowatts
 * (3-25 kW per sample, 2026-12-02). A mean beyond 1.25x the limit, or one period beyond 1.6x,
 * cannot be true. */
#define KG_ENERGY_LIMIT_MARGIN 1.25
#define KG_ENERGY_PERIOD_MARGIN 1.6
#define KG_ENERGY_NO_LIMIT_W 1500.0 /* no enforced limit read: more than any board draws */
void kg_bench_energy_window(kg_energy_summary *out, const double *t_s, const double *mj,
                            size_t n_edges, double launch_us, double limit_w);

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
    int k;                 /* launches per timed replay */
    kg_k_source k_source;  /* where k came from */
    size_t block_timeouts; /* samples whose blocking start timed out (host too slow) */
    bool blocking;         /* the replay was held behind the blocking kernel */
    kg_power_state power;  /* the state the samples were taken in */
    bool graph;            /* timed as a CUDA graph replay (else direct launches) */
    size_t taken, kept, dropped;
    double *all_us;           /* every sample taken (per launch) */
    double *clock_mhz;        /* SM clock measured right after each sample (NaN unknown) */
    double *window_mhz;       /* SM clock during each sample's replay (kg_clock_window_mhz) */
    double *energy_mj;        /* NVML total energy over each sample's replay (NaN: not read) */
    int energy_rc;            /* the first NVML energy read that failed: its code (0: none;
                                 * KG_NVML_NO_LIBRARY: no NVML) */
    kg_energy_summary energy; /* of the kept samples (kg_bench_energy_summarize), or of the
                                 * energy window (kg_bench_energy_window) where it ran */
    kg_energy_summary energy_window; /* the window's (basis NONE: none ran or it failed) */
    double window_launch_us;         /* the launch's GPU time over the energy window (0: none) */
    double measured_spread_rel;      /* of raw_sum: max(its CI half-width, the placement-level
                                        * half-width of the measured times) */
    unsigned char *drop;             /* 1 = dropped (clock too low) */
    double *kept_us;                 /* the samples the statistics use (clock-normalised when so) */
    kg_summary sum;                  /* of kept_us: what is decided */
    bool have_sum;
    kg_summary raw_sum;    /* of the kept raw times (== sum unless clock_normalised) */
    bool clock_normalised; /* kept_us/sum are clock-normalised (a power-capped row) */
    int placements;        /* fresh-buffer placements the samples were pooled from */
    size_t place_start[KG_BENCH_MAX_PLACEMENTS];  /* each placement's first sample index */
    double place_median[KG_BENCH_MAX_PLACEMENTS]; /* each placement's median (decided basis) */
    double place_half_rel;  /* kg_bench_placement_half: what widened the interval (0: none) */
    bool placements_short;  /* fewer placements than chosen (a shim did not fit, or the cap) */
    char decided_state[64]; /* power.label, + KG_STATE_NORMALISED_SUFFIX when normalised */
    const char *stop;       /* "ci_converged", "budget", "max_samples" */
    double elapsed_s;
    double window_s, trace_s; /* wall seconds of the energy window and the kernel trace (in
                               * elapsed_s: where a row's time went) */
    double open_s, calibrate_s, capture_s, sample_s; /* ... and of the instances' open and
                                                      * close, the warm-up launches and k's
                                                      * estimate, the capture and first replay,
                                                      * the sampling (power.warmup_s is apart) */
    double nvml_s; /* of sample_s: inside NVML (each sample's energy reads, the polls between) */
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
int kg_bench_warm_to_steady(kg_power_state *ps, kg_power_track *t, kg_bench_env *e, kg_bench_op op,
                            void *arg, cudaStream_t s, double op_ms, const kg_warm_rule *w);
/* Poll NVML into the tracker when KG_POWER_POLL_S has passed since the last (or `force`). */
void kg_bench_poll_track(kg_bench_env *e, kg_power_track *t, bool force);
/* The blocking start: a 1-thread kernel on s spins on a host-mapped flag (bounded by a 50 ms
 * %globaltimer timeout), so everything enqueued after it starts only when the host releases it:
 * the host's submission latency is outside the timed region. release after the enqueues;
 * timed_out after the stream synchronized. Without the kernel (it did not load) all are no-ops. */
int kg_bench_block(kg_bench_env *e, cudaStream_t s);
void kg_bench_block_release(kg_bench_env *e);
bool kg_bench_block_timed_out(const kg_bench_env *e);
/* The state's report object (the row's power_state, also each ceiling's). */
cJSON *kg_power_state_json(const kg_power_state *ps);

#ifdef __cplusplus
}
#endif
#endif
