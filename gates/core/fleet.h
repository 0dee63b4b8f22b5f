/* Figures of a fleet: pure rules over numbers, no I/O, so the bench
 * (layer 1), the marks and history (layer 3) and the tests share them.
 *
 * Item 3, every figure knows its GPU. kg_fleet_offsets: one (device class, case, metric)'s
 * production runs, each with the UUID of the GPU it ran on, grouped by GPU; a GPU's figure is
 * the median of its runs' medians, the class's the median of the GPUs' figures (one vote per
 * GPU, however often it ran), a GPU's offset its figure / the class's - 1. The class's
 * cross-GPU spread is the largest minus the smallest figure of the GPUs with at least
 * KG_FLEET_MIN_RUNS runs, over the class's figure; unknown (< 0) with fewer than 2 such GPUs.
 * kg_fleet_xgpu_band: a run on a GPU that never set the mark (another UUID than the mark's)
 * is judged with the mark's band plus that spread, and says so; on the setting GPU, or with
 * either UUID unknown, the mark's band alone.
 *
 * Item 2, marks learn from every run. kg_fleet_history_band: a mark's band from its setter
 * processes and the last KG_FLEET_HISTORY_N production runs of its device class (across
 * runners; regressed runs left out, they are not the mark's code). Pooled, the band is the
 * larger of the setters' band and max(Q95/median - 1, 1 - Q05/median) of the pool, so a mode
 * that 15% of processes land in lies inside it (Q95 is two thirds into the top 15%; the bench
 * adds the run's own noise on top, bench_decide.c); the history part
 * applies only with at least KG_FLEET_HISTORY_MIN runs and never widens the band past
 * KG_FLEET_BAND_MAX (a regression of that size is always caught). */
#ifndef KG_FLEET_H
#define KG_FLEET_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KG_FLEET_MIN_RUNS 3     /* runs a GPU needs to count in the cross-GPU spread */
#define KG_FLEET_HISTORY_N 50   /* production runs of the class a band learns from */
#define KG_FLEET_HISTORY_MIN 10 /* fewer: the setters' band alone */
#define KG_FLEET_BAND_MAX 0.015 /* the history never widens a band past +-1.5% */

/* One production run of a (class, case, metric): the GPU it ran on ("" unknown), its median. */
typedef struct {
    const char *gpu;
    double median;
} kg_fleet_run;

typedef struct {
    char gpu[64];
    int runs;
    double median;     /* the median of this GPU's runs */
    double offset_rel; /* median / the class's - 1 */
} kg_fleet_gpu;

/* Up to `cap` GPUs into out (*n_out, first seen first), the class's figure and the spread (< 0:
 * unknown). Runs without a GPU count for the class's figure only when no run has one. */
int kg_fleet_offsets(kg_fleet_gpu *out, size_t *n_out, size_t cap, double *class_median,
                     double *spread_rel, const kg_fleet_run *runs, size_t n);

/* The band a run on run_gpu is judged with; note (n bytes) says why when it is not the mark's. */
double kg_fleet_xgpu_band(char *note, size_t n, double band_rel, const char *mark_gpu,
                          const char *run_gpu, double spread_rel, size_t n_gpus);

/* The band of a mark from its setters' band and the history's medians (the last ones first or
 * last: only the newest KG_FLEET_HISTORY_N count, taken from the end of the array). */
double kg_fleet_history_band(double setter_band_rel, const double *setter_medians, size_t n_set,
                             const double *history_medians, size_t n_hist);

/* The q-quantile (0..1, linear between order statistics) of v (n values, sorted in place). */
double kg_fleet_quantile(double *v, size_t n, double q);

#ifdef __cplusplus
}
#endif
#endif
