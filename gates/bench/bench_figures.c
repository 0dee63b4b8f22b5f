/* The bench gate's printer: report figures and table cells from the typed kg_bench_row that
 * bench.c measured and decided. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "bench/bench.h"

static cJSON *bf_per_sample(const kg_bench_result *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *us = cJSON_AddArrayToObject(o, "time_us"), *mhz = cJSON_AddArrayToObject(o, "sm_clock_mhz");
    cJSON *dr = cJSON_AddArrayToObject(o, "dropped_index");
    for (size_t i = 0; us && mhz && dr && i < r->taken; i++) {
        cJSON_AddItemToArray(us, cJSON_CreateNumber(r->all_us[i]));
        cJSON_AddItemToArray(mhz, isfinite(r->clock_mhz[i]) ? cJSON_CreateNumber(r->clock_mhz[i])
                                                            : cJSON_CreateNull());
        if (r->drop[i])
            cJSON_AddItemToArray(dr, cJSON_CreateNumber((double)i));
    }
    return o;
}

static void bf_num(cJSON *o, const char *k, double v)
{
    cJSON_AddItemToObject(o, k, isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull());
}

/* The row's figures: decision first (the keys the marks pipeline reads: decision, metric,
 * direction, median_us, ci_lo_us, ci_hi_us, band_rel, samples), then everything else. */
cJSON *kg_bench_figures(const kg_case_desc *d, const kg_case_result *res)
{
    const kg_bench_row *b = res->data;
    const kg_bench_result *r = &b->r;
    const kg_summary *s = &r->sum;
    cJSON *f = kg_bench_verdict_json(&b->v, b->have_mark ? &b->mark : NULL);
    if (!f)
        return NULL;
    cJSON_AddStringToObject(f, "metric", b->metric);
    cJSON_AddStringToObject(f, "direction", "lower_is_better");
    bf_num(f, "median_us", s->median);
    bf_num(f, "ci_lo_us", s->ci_lo);
    bf_num(f, "ci_hi_us", s->ci_hi);
    /* The run's own noise band: what a mark set from this run carries. */
    bf_num(f, "band_rel", s->median > 0 ? (s->ci_hi - s->ci_lo) / (2 * s->median) : NAN);
    cJSON_AddNumberToObject(f, "samples", (double)r->kept);
    cJSON_AddStringToObject(f, "op", d->op);
    cJSON_AddStringToObject(f, "mode", b->mode == 1 ? "cold" : "warm");
    cJSON_AddNumberToObject(f, "launches_per_sample", r->k);
    cJSON_AddStringToObject(f, "timing", r->graph ? "cuda-graph replay, cuda events"
                                                  : "direct launches, cuda events");
    cJSON_AddNumberToObject(f, "samples_taken", (double)r->taken);
    cJSON_AddNumberToObject(f, "samples_dropped", (double)r->dropped);
    bf_num(f, "mad_us", s->mad);
    bf_num(f, "q1_us", s->q1);
    bf_num(f, "q3_us", s->q3);
    bf_num(f, "iqr_us", s->iqr);
    bf_num(f, "min_us", s->min);
    bf_num(f, "max_us", s->max);
    bf_num(f, "mean_us", s->mean);
    bf_num(f, "ci_level", s->ci_level);
    bf_num(f, "ci_coverage", s->ci_coverage);
    bf_num(f, "ci_rel_width", s->ci_rel_width);
    bf_num(f, "target_ci_rel", b->target_ci_rel);
    cJSON_AddStringToObject(f, "stop_reason", r->stop ? r->stop : "none");
    bf_num(f, "budget_s", b->budget_s);
    bf_num(f, "elapsed_s", r->elapsed_s);
    bf_num(f, "sm_clock_median_mhz", r->clock_median);
    bf_num(f, "sm_clock_min_mhz", r->clock_min);
    bf_num(f, "sm_clock_max_mhz", r->clock_max);
    bf_num(f, "sm_clock_floor_mhz", b->clock_floor_mhz);
    cJSON_AddStringToObject(f, "bound", b->compute_bound ? "compute" : "memory");
    bf_num(f, "bytes_moved", d->bytes_moved);
    bf_num(f, "flops", d->flops);
    if (isfinite(b->gbps))
        bf_num(f, "gbps", b->gbps);
    if (isfinite(b->pct_copy))
        bf_num(f, "pct_copy_ceiling", b->pct_copy);
    if (isfinite(b->tflops))
        bf_num(f, "tflops", b->tflops);
    if (isfinite(b->pct_gemm))
        bf_num(f, "pct_gemm_ceiling", b->pct_gemm);
    if (r->kernels)
        cJSON_AddItemToObject(f, "kernels", cJSON_Duplicate(r->kernels, 1));
    if (r->nvml)
        cJSON_AddItemToObject(f, "nvml", cJSON_Duplicate(r->nvml, 1));
    cJSON_AddItemToObject(f, "per_sample", bf_per_sample(r));
    if (b->have_mark && b->mark_kernels[0]) {
        cJSON_AddBoolToObject(f, "kernels_changed", b->kernels_changed);
        if (b->kernels_changed)
            cJSON_AddStringToObject(f, "mark_kernels", b->mark_kernels);
    }
    return f;
}

static void bf_cell_decision(char *buf, size_t n, const kg_case_desc *d,
                             const kg_case_result *res, size_t l)
{
    KG_UNUSED(d), KG_UNUSED(l);
    snprintf(buf, n, "%s", kg_bench_decision_name(((const kg_bench_row *)res->data)->v.decision));
}

static void bf_cell_n(char *buf, size_t n, const kg_case_desc *d, const kg_case_result *res,
                      size_t l)
{
    KG_UNUSED(d), KG_UNUSED(l);
    snprintf(buf, n, "%zu", ((const kg_bench_row *)res->data)->r.kept);
}

static void bf_cell_stop(char *buf, size_t n, const kg_case_desc *d, const kg_case_result *res,
                         size_t l)
{
    const char *stop = ((const kg_bench_row *)res->data)->r.stop;
    KG_UNUSED(d), KG_UNUSED(l);
    snprintf(buf, n, "%s", stop ? stop : "none");
}

static void bf_cell_vs(char *buf, size_t n, const kg_case_desc *d, const kg_case_result *res,
                       size_t l)
{
    const kg_bench_row *b = res->data;
    KG_UNUSED(d), KG_UNUSED(l);
    if (b->have_mark)
        snprintf(buf, n, "%+.2f%%", 100 * b->v.delta_rel);
    else
        snprintf(buf, n, "-");
}

static void bf_cell_tol(char *buf, size_t n, const kg_case_desc *d, const kg_case_result *res,
                        size_t l)
{
    const kg_bench_row *b = res->data;
    KG_UNUSED(d), KG_UNUSED(l);
    if (b->have_mark)
        snprintf(buf, n, "%.2f", 100 * b->v.tolerance_rel);
    else
        snprintf(buf, n, "-");
}

static void bf_cell_mhz(char *buf, size_t n, const kg_case_desc *d, const kg_case_result *res,
                        size_t l)
{
    KG_UNUSED(d), KG_UNUSED(l);
    snprintf(buf, n, "%.0f", ((const kg_bench_row *)res->data)->r.clock_median);
}

static void bf_cell_zero_nan(char *buf, size_t n, double v, const char *fmt)
{
    snprintf(buf, n, fmt, isfinite(v) ? v : 0.0);
}

static void bf_cell_gbps(char *buf, size_t n, const kg_case_desc *d, const kg_case_result *res,
                         size_t l)
{
    KG_UNUSED(d), KG_UNUSED(l);
    bf_cell_zero_nan(buf, n, ((const kg_bench_row *)res->data)->gbps, "%.1f");
}

static void bf_cell_tflops(char *buf, size_t n, const kg_case_desc *d,
                           const kg_case_result *res, size_t l)
{
    KG_UNUSED(d), KG_UNUSED(l);
    bf_cell_zero_nan(buf, n, ((const kg_bench_row *)res->data)->tflops, "%.2f");
}

static void bf_cell_median(char *buf, size_t n, const kg_case_desc *d,
                           const kg_case_result *res, size_t l)
{
    KG_UNUSED(d), KG_UNUSED(l);
    snprintf(buf, n, "%.4f", ((const kg_bench_row *)res->data)->r.sum.median);
}

const kg_gate_column kg_bench_columns[KG_BENCH_N_COLUMNS] = {
    KG_COL_CASE(-44),
    { .key = "decision", .header = "decision", .width = -9, .cell = bf_cell_decision },
    { .key = "median_us", .header = "median_us", .width = 11, .cell = bf_cell_median },
    KG_COL_NUM("ci_rel_width", "CI+-%", 8, "%.3f", kg_bench_row, ci_pct),
    { .key = "samples", .header = "n", .width = 5, .cell = bf_cell_n },
    { .key = "stop_reason", .header = "stop", .width = -12, .cell = bf_cell_stop },
    { .key = "delta_rel", .header = "vs mark", .width = 8, .cell = bf_cell_vs },
    { .key = "tolerance_rel", .header = "tol%", .width = 7, .cell = bf_cell_tol },
    { .key = "gbps", .header = "GB/s", .width = 9, .cell = bf_cell_gbps },
    { .key = "tflops", .header = "TFLOP/s", .width = 8, .cell = bf_cell_tflops },
    { .key = "sm_clock_median_mhz", .header = "MHz", .width = 6, .cell = bf_cell_mhz },
};
