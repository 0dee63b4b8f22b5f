/* The bench's part of run --production (the kg_gate_production hooks, gate.h): one case's rows
 * from N separate processes into one row (kg_bench_combine: the median of the per-process
 * medians, IMPROVED only when every process was IMPROVED on its own, REGRESSED when the
 * combination is), and a row's candidate mark for the ratchet. Here, in the gate's folder,
 * because only the bench knows its typed row. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench/bench.h"
#include "core/report_keys.h"

/* The combined row: a copy of the process closest to the combined median (context, kernels),
 * with the combined figures and decision. */
static int bp_combined_row(kg_bench_row **out, const kg_bench_row *near, const kg_bench_obs *c,
                           const kg_bench_verdict *v, const kg_mark *mark)
{
    kg_bench_row *b = malloc(sizeof *b);
    if (!b)
        return KG_ERR(KG_ENOMEM, "out of memory combining bench processes");
    *b = *near;
    /* owned by the pass's row */
    b->r.all_us = b->r.clock_mhz = b->r.window_mhz = b->r.kept_us = NULL;
    b->r.drop = NULL;
    b->r.kernels = b->r.nvml = NULL;
    double scale = near->r.sum.median / c->median;
    b->r.sum.median = c->median;
    b->r.sum.ci_lo = c->ci_lo;
    b->r.sum.ci_hi = c->ci_hi;
    b->r.sum.ci_rel_width = (c->ci_hi - c->ci_lo) / c->median;
    b->ci_pct = 50 * b->r.sum.ci_rel_width;
    b->gbps *= scale;
    b->tflops *= scale;
    b->pct_copy *= scale;
    b->pct_gemm *= scale;
    b->v = *v;
    b->have_mark = mark != NULL;
    if (mark)
        b->mark = *mark; /* shallow: its strings are borrowed for the figures (bp_unborrow) */
    *out = b;
    return 0;
}

/* The row keeps no string of the marks (they are freed before the run's rows). */
static void bp_unborrow(kg_bench_row *b)
{
    b->mark.device_class = b->mark.case_id = b->mark.metric = NULL;
    b->mark.commit = b->mark.date = b->mark.run_id = NULL;
    b->mark.driver = b->mark.cuda = b->mark.set_by = b->mark.kernels = NULL;
    b->mark.power_state = b->mark.gpu_uuid = b->mark.gpu_serial = NULL;
}

/* The combined row's samples: those of all N processes (kept, taken, dropped, placements). Its
 * per-sample arrays stay with the processes' rows (in the parent a worker's row has none). */
static void bp_sum_samples(kg_bench_row *b, const kg_bench_row *const *rows, int n)
{
    b->r.kept = b->r.taken = b->r.dropped = 0;
    b->r.placements = 0;
    for (int i = 0; i < n; i++) {
        b->r.kept += rows[i]->r.kept;
        b->r.taken += rows[i]->r.taken;
        b->r.dropped += rows[i]->r.dropped;
        b->r.placements += rows[i]->r.placements;
    }
}

/* The combined row's measured times (raw_median_us, its interval): the median of the
 * processes' own medians and the envelope of their intervals (context: the decided figures
 * are combined by kg_bench_combine); the placement medians are per process and not listed. */
static void bp_combine_raw(kg_bench_row *b, const kg_bench_row *const *rows, int n)
{
    double m[KG_BENCH_MAX_PROCESSES];
    b->r.raw_sum.ci_lo = rows[0]->r.raw_sum.ci_lo;
    b->r.raw_sum.ci_hi = rows[0]->r.raw_sum.ci_hi;
    for (int i = 0; i < n; i++) {
        m[i] = rows[i]->r.raw_sum.median;
        b->r.raw_sum.ci_lo = fmin(b->r.raw_sum.ci_lo, rows[i]->r.raw_sum.ci_lo);
        b->r.raw_sum.ci_hi = fmax(b->r.raw_sum.ci_hi, rows[i]->r.raw_sum.ci_hi);
    }
    b->r.raw_sum.median = kg_stats_median(m, (size_t)n);
    b->r.place_half_rel = NAN; /* per process: not listed for the combination */
}

/* The figures of the combined row: taken is cleared while the figures are made (no per-sample
 * arrays to list), then restored in the row and the figures. */
static cJSON *bp_figures(const kg_case_desc *d, kg_case_result *res)
{
    kg_bench_row *b = res->data;
    size_t taken = b->r.taken;
    b->r.taken = 0;
    cJSON *f = kg_bench_figures(d, res);
    b->r.taken = taken;
    if (f && cJSON_GetObjectItemCaseSensitive(f, KG_FIG_SAMPLES_TAKEN))
        cJSON_ReplaceItemInObjectCaseSensitive(f, KG_FIG_SAMPLES_TAKEN,
                                               cJSON_CreateNumber((double)taken));
    return f;
}

/* The processes' figures and decisions as kg_bench_combine takes them. */
static void bp_per(kg_bench_obs *per, kg_bench_verdict *pv, const kg_bench_row *const *rows, int n)
{
    for (int i = 0; i < n; i++) {
        const kg_bench_row *b = rows[i];
        per[i] = (kg_bench_obs){ .median = b->r.sum.median,
                                 .ci_lo = b->r.sum.ci_lo,
                                 .ci_hi = b->r.sum.ci_hi,
                                 .compute_bound = b->compute_bound,
                                 .k = b->v.run_k,
                                 .power_state = b->v.run_power_state[0] ? b->v.run_power_state
                                                                        : NULL };
        pv[i] = b->v;
    }
}

static int bp_combine(kg_case_result *out, cJSON **figures, const kg_case_desc *d,
                      const kg_case_result *const *pr, int n, const void *opts,
                      const kg_gate_env *env)
{
    const kg_bench_gate_opts *bo = opts;
    kg_bench_obs per[KG_BENCH_MAX_PROCESSES], comb;
    kg_bench_verdict pv[KG_BENCH_MAX_PROCESSES], v;
    const kg_bench_row *rows[KG_BENCH_MAX_PROCESSES];
    kg_decide_opts dopt;
    bool warn = false;
    int rc = 0, near = 0;
    for (int i = 0; i < n; i++) {
        rows[i] = pr[i]->data;
        warn |= pr[i]->verdict == KG_VERDICT_WARN;
    }
    bp_per(per, pv, rows, n);
    const kg_mark *mk = bo->lookup
                            ? bo->lookup(bo->marks, rows[0]->device_class, d->id, rows[0]->metric)
                            : NULL;
    kg_mark xg;
    char xnote[400];
    mk = kg_bench_mark_on_gpu(&xg, mk, env->dev ? env->dev->uuid : "", xnote, sizeof xnote);
    kg_bench_decide_opts_for(&dopt, bo, d);
    KG_TRY(kg_bench_combine(&v, &comb, mk, per, pv, (size_t)n, &dopt));
    for (int i = 1; i < n; i++)
        if (fabs(per[i].median - comb.median) < fabs(per[near].median - comb.median))
            near = i;
    out->verdict = kg_bench_verdict_fails(&v) ? KG_VERDICT_FAIL
                   : warn                     ? KG_VERDICT_WARN
                                              : KG_VERDICT_PASS;
    KG_TRY(bp_combined_row((kg_bench_row **)&out->data, rows[near], &comb, &v, mk));
    bp_sum_samples(out->data, rows, n);
    bp_combine_raw(out->data, rows, n);
    snprintf(out->message, sizeof out->message,
             "%s; median of %d processes %.4g us (medians "
             "%.4g..%.4g)",
             v.why, n, comb.median, v.env_lo, v.env_hi);
    if (xnote[0]) { /* judged with the class's cross-GPU spread */
        size_t at = strlen(out->message);
        snprintf(out->message + at, sizeof out->message - at, "; %s", xnote);
    }
    if (!env->quiet)
        printf("%-46s %-9s %-13s %10.4g us  %s\n", d->id, kg_verdict_name(out->verdict),
               kg_bench_decision_name(v.decision), comb.median, v.why);
    *figures = bp_figures(d, out);
    bp_unborrow(out->data);
cleanup:
    return rc;
}

static void bp_note(const void *opts, int processes)
{
    const kg_bench_gate_opts *bo = opts;
    int min_runs = bo->min_mark_runs > 0 ? bo->min_mark_runs
                                         : ((kg_decide_opts)KG_DECIDE_OPTS_INIT).min_mark_runs;
    if (processes < min_runs)
        printf("kgate: note: --bench-processes %d < --min-mark-runs %d: the marks this run sets "
               "will decide UNPROVEN until merged from more processes\n",
               processes, min_runs);
}

/* A passing (PASS, WARN, XFAIL) timed row offers its mark; the ratchet decides. */
static size_t bp_candidates(kg_advance_obs *out, size_t max, const kg_case_desc *d,
                            const kg_case_result *res, const kg_advance_obs *stamp)
{
    const kg_bench_row *b = res->data;
    kg_verdict v = res->verdict;
    if (!max || !b || (v != KG_VERDICT_PASS && v != KG_VERDICT_WARN && v != KG_VERDICT_XFAIL))
        return 0;
    const kg_summary *s = &b->r.sum;
    *out = *stamp;
    out->case_id = d->id;
    out->decision = kg_bench_decision_name(b->v.decision);
    out->metric = b->metric;
    out->direction = b->direction;
    out->median = s->median;
    out->ci_lo = s->ci_lo;
    out->ci_hi = s->ci_hi;
    out->band = s->median > 0 ? (s->ci_hi - s->ci_lo) / (2 * s->median) : -1;
    out->samples = (double)b->r.kept;
    out->processes = b->v.processes > 0 ? b->v.processes : 1;
    out->env_lo = b->v.env_lo;
    out->env_hi = b->v.env_hi;
    out->k = b->v.run_k;
    out->power_state = b->v.run_power_state[0] ? b->v.run_power_state : NULL;
    out->measured_median = b->v.run_measured;
    out->measured_spread = b->v.run_measured_spread;
    out->energy_mj = b->v.run_energy;
    out->energy_spread = b->v.run_energy_spread;
    return 1;
}

const struct kg_gate_production kg_bench_production = {
    .combine = bp_combine,
    .max_passes = KG_BENCH_MAX_PROCESSES,
    .note = bp_note,
    .record_key = KG_RK_BENCH,
    .candidates = bp_candidates,
    .source = "this run",
    .counted = true,
    .report_candidates = kg_bench_report_candidates,
};
