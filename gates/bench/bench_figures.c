/* The bench gate's printer: report figures and table cells from the typed kg_bench_row that
 * bench.c measured and decided. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "bench/bench.h"
#include "core/report_keys.h"

static cJSON *bf_per_sample(const kg_bench_result *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *us = cJSON_AddArrayToObject(o, KG_FIG_PS_TIME),
          *mhz = cJSON_AddArrayToObject(o, KG_FIG_PS_SM_CLOCK);
    cJSON *win = cJSON_AddArrayToObject(o, KG_FIG_PS_WINDOW_CLOCK);
    cJSON *en = r->energy_mj ? cJSON_AddArrayToObject(o, KG_FIG_PS_ENERGY) : NULL;
    cJSON *dr = cJSON_AddArrayToObject(o, KG_FIG_PS_DROPPED);
    cJSON *ps = cJSON_AddArrayToObject(o, KG_FIG_PS_PLACEMENT_STARTS);
    for (int p = 0; ps && r->taken > 0 && p < r->placements; p++)
        cJSON_AddItemToArray(ps, cJSON_CreateNumber((double)r->place_start[p]));
    for (size_t i = 0; us && mhz && win && dr && i < r->taken; i++) {
        cJSON_AddItemToArray(us, cJSON_CreateNumber(r->all_us[i]));
        cJSON_AddItemToArray(mhz, isfinite(r->clock_mhz[i]) ? cJSON_CreateNumber(r->clock_mhz[i])
                                                            : cJSON_CreateNull());
        cJSON_AddItemToArray(win, isfinite(r->window_mhz[i]) ? cJSON_CreateNumber(r->window_mhz[i])
                                                             : cJSON_CreateNull());
        if (en)
            cJSON_AddItemToArray(en, isfinite(r->energy_mj[i]) ? cJSON_CreateNumber(r->energy_mj[i])
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

static cJSON *bf_reason_names(unsigned long long r)
{
    cJSON *a = cJSON_CreateArray();
    for (unsigned b = 0; a && b < 64; b++)
        if (r & (1ULL << b)) {
            const char *nm = kg_power_reason_name(b);
            char tmp[16];
            if (!nm)
                snprintf(tmp, sizeof tmp, "bit%u", b);
            cJSON_AddItemToArray(a, cJSON_CreateString(nm ? nm : tmp));
        }
    return a;
}

/* NVML's side of the state: context beside the probe's figures. */
static void bf_power_nvml(cJSON *o, const kg_power_state *ps)
{
    cJSON_AddNumberToObject(o, KG_FIG_POWER_POLLS, ps->polls);
    cJSON_AddStringToObject(o, KG_FIG_POWER_NVML_LABEL,
                            ps->nvml_label[0] ? ps->nvml_label : "unknown");
    cJSON_AddBoolToObject(o, KG_FIG_POWER_NVML_STEADY, ps->nvml_steady);
    cJSON_AddBoolToObject(o, KG_FIG_POWER_NVML_HELD, ps->nvml_held);
    cJSON_AddBoolToObject(o, KG_FIG_POWER_NVML_NEAR_LIMIT, ps->nvml_near_limit);
    bf_num(o, KG_FIG_POWER_NVML_SM_MIN, ps->nvml_sm_min);
    bf_num(o, KG_FIG_POWER_NVML_SM_MEDIAN, ps->nvml_sm_median);
    bf_num(o, KG_FIG_POWER_NVML_SM_MAX, ps->nvml_sm_max);
    bf_num(o, KG_FIG_NVML_MEM_CLOCK, ps->mem_mhz);
    bf_num(o, KG_FIG_NVML_POWER, ps->power_w);
    bf_num(o, KG_FIG_NVML_POWER_LIMIT, ps->power_limit_w);
    bf_num(o, KG_FIG_NVML_TEMPERATURE, ps->temp_c);
    cJSON_AddItemToObject(o, KG_FIG_POWER_REASONS, bf_reason_names(ps->reasons));
    cJSON_AddItemToObject(o, KG_FIG_POWER_REASONS_SEEN, bf_reason_names(ps->reasons_seen));
}

/* The time basis (measured or clock-normalised), the measured times, the placements. */
static void bf_basis(cJSON *f, const kg_bench_result *r)
{
    cJSON_AddStringToObject(f, KG_FIG_TIME_BASIS,
                            r->clock_normalised ? KG_RV_TB_NORMALISED : KG_RV_TB_MEASURED);
    bf_num(f, KG_FIG_RAW_MEDIAN, r->raw_sum.median > 0 ? r->raw_sum.median : NAN);
    bf_num(f, KG_FIG_RAW_CI_LO, r->raw_sum.ci_lo > 0 ? r->raw_sum.ci_lo : NAN);
    bf_num(f, KG_FIG_RAW_CI_HI, r->raw_sum.ci_hi > 0 ? r->raw_sum.ci_hi : NAN);
    cJSON_AddNumberToObject(f, KG_FIG_PLACEMENTS, r->placements);
    if (r->placements > 1 && isfinite(r->place_half_rel)) { /* NaN: a combination's */
        cJSON *pm = cJSON_AddArrayToObject(f, KG_FIG_PLACEMENT_MEDIANS);
        for (int i = 0; pm && i < r->placements; i++)
            cJSON_AddItemToArray(pm, isfinite(r->place_median[i])
                                         ? cJSON_CreateNumber(r->place_median[i])
                                         : cJSON_CreateNull());
        bf_num(f, KG_FIG_PLACEMENT_HALF, r->place_half_rel);
    }
}

/* Where the energy per launch came from, or why there is none; the figure and its
 * spread are the verdict's (kg_bench_verdict_json: combined over processes in production). */
static void bf_energy(cJSON *f, const kg_bench_result *r)
{
    char note[200];
    if (r->energy.basis != KG_ENERGY_NONE) {
        cJSON_AddStringToObject(f, KG_FIG_ENERGY_SOURCE, KG_RV_ENERGY_NVML);
        cJSON_AddStringToObject(f, KG_FIG_ENERGY_BASIS, kg_energy_basis_name(r->energy.basis));
        cJSON_AddNumberToObject(f, KG_FIG_ENERGY_UNITS, (double)r->energy.units);
        if (r->energy.basis == KG_ENERGY_WINDOW) {
            cJSON_AddNumberToObject(f, KG_FIG_ENERGY_WINDOW_LAUNCH, r->window_launch_us);
            cJSON_AddNumberToObject(f, KG_FIG_ENERGY_POWER_W, r->energy.implied_w);
            cJSON_AddNumberToObject(f, KG_FIG_ENERGY_PERIOD_MAX_W, r->energy.period_max_w);
        }
        return;
    }
    kg_bench_energy_note(note, sizeof note, r->energy_rc, &r->energy);
    cJSON_AddStringToObject(f, KG_FIG_ENERGY_NOTE, note);
}

cJSON *kg_power_state_json(const kg_power_state *ps)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, KG_FIG_POWER_LABEL, ps->label[0] ? ps->label : "unknown");
    cJSON_AddBoolToObject(o, KG_FIG_POWER_STEADY, ps->steady);
    cJSON_AddBoolToObject(o, KG_FIG_POWER_HELD, ps->held);
    bf_num(o, KG_FIG_POWER_WARMUP, ps->warmup_s);
    cJSON_AddStringToObject(o, KG_FIG_POWER_CLOCK_SOURCE, ps->probe ? "probe" : "none");
    cJSON_AddBoolToObject(o, KG_FIG_POWER_HEAVY, ps->heavy);
    bf_num(o, KG_FIG_POWER_WARMUP_MIN, ps->warmup_min_s);
    cJSON_AddNumberToObject(o, KG_FIG_POWER_WARMUP_READINGS, ps->warmup_readings);
    bf_num(o, KG_FIG_POWER_MAX_MHZ, ps->max_mhz > 0 ? ps->max_mhz : NAN);
    bf_num(o, KG_FIG_POWER_STEADY_MHZ, ps->ref_mhz > 0 ? ps->ref_mhz : NAN);
    bf_num(o, KG_FIG_POWER_SM_MIN, ps->sm_min);
    bf_num(o, KG_FIG_POWER_SM_MEDIAN, ps->sm_median);
    bf_num(o, KG_FIG_POWER_SM_MAX, ps->sm_max);
    bf_num(o, KG_FIG_POWER_CLOCK_FRAC, ps->max_mhz > 0 ? ps->sm_median / ps->max_mhz : NAN);
    if (ps->nvml)
        bf_power_nvml(o, ps);
    if (!ps->probe || !ps->nvml)
        cJSON_AddStringToObject(o, KG_FIG_POWER_NOTE,
                                !ps->probe ? "no clock probe (the PTX module did not load, or "
                                             "no sample measured a clock): the power state was "
                                             "not observed"
                                           : "no NVML (libnvidia-ml.so.1 or its clock-event "
                                             "reasons): no reasons, power or temperature");
    return o;
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
    cJSON_AddStringToObject(f, KG_FIG_METRIC, b->metric);
    cJSON_AddStringToObject(f, KG_FIG_DIRECTION, KG_RV_DIR_LOWER);
    bf_num(f, KG_FIG_MEDIAN, s->median);
    bf_num(f, KG_FIG_CI_LO, s->ci_lo);
    bf_num(f, KG_FIG_CI_HI, s->ci_hi);
    /* The run's own noise band: what a mark set from this run carries. */
    bf_num(f, KG_FIG_BAND, s->median > 0 ? (s->ci_hi - s->ci_lo) / (2 * s->median) : NAN);
    cJSON_AddNumberToObject(f, KG_FIG_SAMPLES, (double)r->kept);
    bf_basis(f, r);
    bf_energy(f, r);
    cJSON_AddStringToObject(f, KG_FIG_OP, d->op);
    cJSON_AddStringToObject(f, KG_FIG_MODE, b->mode == 1 ? "cold" : "warm");
    cJSON_AddNumberToObject(f, KG_FIG_LAUNCHES_PER_SAMPLE, r->k);
    cJSON_AddStringToObject(f, KG_FIG_LAUNCHES_SOURCE, kg_bench_k_source_name(r->k_source));
    cJSON_AddBoolToObject(f, KG_FIG_BLOCKING_START, r->blocking);
    cJSON_AddNumberToObject(f, KG_FIG_BLOCK_TIMEOUTS, (double)r->block_timeouts);
    cJSON_AddItemToObject(f, KG_FIG_POWER_STATE, kg_power_state_json(&r->power));
    cJSON_AddStringToObject(f, KG_FIG_TIMING,
                            r->graph ? "cuda-graph replay, cuda events"
                                     : "direct launches, cuda events");
    cJSON_AddNumberToObject(f, KG_FIG_SAMPLES_TAKEN, (double)r->taken);
    cJSON_AddNumberToObject(f, KG_FIG_SAMPLES_DROPPED, (double)r->dropped);
    bf_num(f, KG_FIG_MAD, s->mad);
    bf_num(f, KG_FIG_Q1, s->q1);
    bf_num(f, KG_FIG_Q3, s->q3);
    bf_num(f, KG_FIG_IQR, s->iqr);
    bf_num(f, KG_FIG_MIN, s->min);
    bf_num(f, KG_FIG_MAX, s->max);
    bf_num(f, KG_FIG_MEAN, s->mean);
    bf_num(f, KG_FIG_CI_LEVEL, s->ci_level);
    bf_num(f, KG_FIG_CI_COVERAGE, s->ci_coverage);
    bf_num(f, KG_FIG_CI_REL_WIDTH, s->ci_rel_width);
    bf_num(f, KG_FIG_TARGET_CI_REL, b->target_ci_rel);
    cJSON_AddStringToObject(f, KG_FIG_STOP_REASON, r->stop ? r->stop : "none");
    bf_num(f, KG_FIG_BUDGET, b->budget_s);
    bf_num(f, KG_FIG_ELAPSED, r->elapsed_s);
    bf_num(f, KG_FIG_WINDOW_S, r->window_s);
    bf_num(f, KG_FIG_TRACE_S, r->trace_s);
    bf_num(f, KG_FIG_OPEN_S, r->open_s);
    bf_num(f, KG_FIG_CALIBRATE_S, r->calibrate_s);
    bf_num(f, KG_FIG_CAPTURE_S, r->capture_s);
    bf_num(f, KG_FIG_SAMPLE_S, r->sample_s);
    bf_num(f, KG_FIG_NVML_S, r->nvml_s);
    bf_num(f, KG_FIG_SM_CLOCK_MEDIAN, r->clock_median);
    bf_num(f, KG_FIG_SM_CLOCK_MIN, r->clock_min);
    bf_num(f, KG_FIG_SM_CLOCK_MAX, r->clock_max);
    bf_num(f, KG_FIG_REPLAY_CLOCK_MEDIAN, r->window_median);
    bf_num(f, KG_FIG_SM_CLOCK_FLOOR, b->clock_floor_mhz);
    cJSON_AddStringToObject(f, KG_FIG_BOUND,
                            b->compute_bound ? KG_RV_BOUND_COMPUTE : KG_RV_BOUND_MEMORY);
    bf_num(f, KG_FIG_BYTES_MOVED, d->bytes_moved);
    bf_num(f, KG_FIG_FLOPS, d->flops);
    if (isfinite(b->gbps))
        bf_num(f, KG_FIG_GBPS, b->gbps);
    if (isfinite(b->pct_copy))
        bf_num(f, KG_FIG_PCT_COPY_CEILING, b->pct_copy);
    if (isfinite(b->tflops))
        bf_num(f, KG_FIG_TFLOPS, b->tflops);
    if (isfinite(b->pct_gemm))
        bf_num(f, KG_FIG_PCT_GEMM_CEILING, b->pct_gemm);
    if (r->kernels)
        cJSON_AddItemToObject(f, KG_FIG_KERNELS, cJSON_Duplicate(r->kernels, 1));
    if (r->nvml)
        cJSON_AddItemToObject(f, KG_FIG_NVML, cJSON_Duplicate(r->nvml, 1));
    cJSON_AddItemToObject(f, KG_FIG_PER_SAMPLE, bf_per_sample(r));
    if (b->have_mark && b->mark_kernels[0]) {
        cJSON_AddBoolToObject(f, KG_FIG_KERNELS_CHANGED, b->kernels_changed);
        if (b->kernels_changed)
            cJSON_AddStringToObject(f, KG_FIG_MARK_KERNELS_WAS, b->mark_kernels);
    }
    return f;
}

static void bf_cell_decision(char *buf, size_t n, const kg_case_desc *d, const kg_case_result *res,
                             size_t l)
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

static void bf_cell_tflops(char *buf, size_t n, const kg_case_desc *d, const kg_case_result *res,
                           size_t l)
{
    KG_UNUSED(d), KG_UNUSED(l);
    bf_cell_zero_nan(buf, n, ((const kg_bench_row *)res->data)->tflops, "%.2f");
}

static void bf_cell_median(char *buf, size_t n, const kg_case_desc *d, const kg_case_result *res,
                           size_t l)
{
    KG_UNUSED(d), KG_UNUSED(l);
    snprintf(buf, n, "%.4f", ((const kg_bench_row *)res->data)->r.sum.median);
}

const kg_gate_column kg_bench_columns[] = {
    KG_COL_CASE(-44),
    { .key = KG_FIG_DECISION, .header = "decision", .width = -9, .cell = bf_cell_decision },
    { .key = KG_FIG_MEDIAN, .header = "median_us", .width = 11, .cell = bf_cell_median },
    KG_COL_NUM(KG_FIG_CI_REL_WIDTH, "CI+-%", 8, "%.3f", kg_bench_row, ci_pct),
    { .key = KG_FIG_SAMPLES, .header = "n", .width = 5, .cell = bf_cell_n },
    { .key = KG_FIG_STOP_REASON, .header = "stop", .width = -12, .cell = bf_cell_stop },
    { .key = KG_FIG_DELTA, .header = "vs mark", .width = 8, .cell = bf_cell_vs },
    { .key = KG_FIG_TOLERANCE, .header = "tol%", .width = 7, .cell = bf_cell_tol },
    { .key = KG_FIG_GBPS, .header = "GB/s", .width = 9, .cell = bf_cell_gbps },
    { .key = KG_FIG_TFLOPS, .header = "TFLOP/s", .width = 8, .cell = bf_cell_tflops },
    { .key = KG_FIG_SM_CLOCK_MEDIAN, .header = "MHz", .width = 6, .cell = bf_cell_mhz },
};
_Static_assert(KG_ARRAY_LEN(kg_bench_columns) == KG_BENCH_N_COLUMNS,
               "KG_BENCH_N_COLUMNS (the gate's n_columns) must count kg_bench_columns");
