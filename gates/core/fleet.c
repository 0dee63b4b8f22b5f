/* Pure rules of a fleet: see fleet.h for each rule. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/fleet.h"
#include "core/kg_core.h"

static int fl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double kg_fleet_quantile(double *v, size_t n, double q)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, fl_cmp);
    double at = q * (double)(n - 1);
    size_t lo = (size_t)floor(at), hi = lo + 1 < n ? lo + 1 : lo;
    return v[lo] + (at - (double)lo) * (v[hi] - v[lo]);
}

/* The median of the medians of runs[] on one GPU (gpu NULL: every run). */
static double fl_gpu_median(const kg_fleet_run *runs, size_t n, const char *gpu, double *tmp,
                            int *count)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (runs[i].median > 0 && (!gpu || (runs[i].gpu && strcmp(runs[i].gpu, gpu) == 0)))
            tmp[k++] = runs[i].median;
    *count = (int)k;
    return kg_fleet_quantile(tmp, k, 0.5);
}

int kg_fleet_offsets(kg_fleet_gpu *out, size_t *n_out, size_t cap, double *class_median,
                     double *spread_rel, const kg_fleet_run *runs, size_t n)
{
    size_t ng = 0;
    double *tmp = calloc(n ? n : 1, sizeof *tmp), *fig = calloc(cap ? cap : 1, sizeof *fig);
    double lo = INFINITY, hi = -INFINITY;
    int counted = 0, c = 0;
    *n_out = 0;
    *class_median = NAN;
    *spread_rel = -1;
    if (!tmp || !fig) {
        free(tmp), free(fig);
        return KG_ERR(KG_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n && ng < cap; i++) {
        size_t g = 0;
        if (!runs[i].gpu || !runs[i].gpu[0])
            continue;
        while (g < ng && strcmp(out[g].gpu, runs[i].gpu) != 0)
            g++;
        if (g < ng)
            continue;
        snprintf(out[ng].gpu, sizeof out[ng].gpu, "%s", runs[i].gpu);
        out[ng].median = fl_gpu_median(runs, n, runs[i].gpu, tmp, &out[ng].runs);
        fig[ng] = out[ng].median;
        ng++;
    }
    *class_median = ng ? kg_fleet_quantile(fig, ng, 0.5) : fl_gpu_median(runs, n, NULL, tmp, &c);
    for (size_t g = 0; g < ng; g++) {
        out[g].offset_rel = out[g].median / *class_median - 1;
        if (out[g].runs >= KG_FLEET_MIN_RUNS) {
            lo = fmin(lo, out[g].median);
            hi = fmax(hi, out[g].median);
            counted++;
        }
    }
    if (counted >= 2 && *class_median > 0)
        *spread_rel = (hi - lo) / *class_median;
    *n_out = ng;
    free(tmp);
    free(fig);
    return 0;
}

double kg_fleet_xgpu_band(char *note, size_t n, double band_rel, const char *mark_gpu,
                          const char *run_gpu, double spread_rel, size_t n_gpus)
{
    if (n)
        note[0] = '\0';
    if (!mark_gpu || !mark_gpu[0] || !run_gpu || !run_gpu[0] || strcmp(mark_gpu, run_gpu) == 0)
        return band_rel;
    if (spread_rel < 0) {
        snprintf(note, n,
                 "this GPU (%.40s) never set the mark (set on %.40s); the class's "
                 "cross-GPU spread is unknown (fewer than 2 GPUs with %d runs in the "
                 "history): judged with the mark's band alone",
                 run_gpu, mark_gpu, KG_FLEET_MIN_RUNS);
        return band_rel;
    }
    snprintf(note, n,
             "this GPU (%.40s) never set the mark (set on %.40s): judged with the "
             "mark's band +-%.2f%% plus the class's cross-GPU spread %.2f%% (history: "
             "%zu GPUs)",
             run_gpu, mark_gpu, 100 * band_rel, 100 * spread_rel, n_gpus);
    return band_rel + spread_rel;
}

double kg_fleet_history_band(double setter_band_rel, const double *setter_medians, size_t n_set,
                             const double *history_medians, size_t n_hist)
{
    size_t take = n_hist > KG_FLEET_HISTORY_N ? KG_FLEET_HISTORY_N : n_hist, k = 0;
    double *pool = NULL, band = setter_band_rel;
    if (take < KG_FLEET_HISTORY_MIN || !(pool = calloc(n_set + take, sizeof *pool)))
        return setter_band_rel;
    for (size_t i = 0; i < n_set; i++)
        if (setter_medians[i] > 0 && isfinite(setter_medians[i]))
            pool[k++] = setter_medians[i];
    for (size_t i = n_hist - take; i < n_hist; i++)
        if (history_medians[i] > 0 && isfinite(history_medians[i]))
            pool[k++] = history_medians[i];
    double med = kg_fleet_quantile(pool, k, 0.5);
    double q05 = kg_fleet_quantile(pool, k, 0.05), q95 = kg_fleet_quantile(pool, k, 0.95);
    if (k >= KG_FLEET_HISTORY_MIN && med > 0) {
        double learned = fmax(q95 / med - 1, 1 - q05 / med);
        band = fmax(setter_band_rel, fmin(learned, KG_FLEET_BAND_MAX));
    }
    free(pool);
    return band;
}
