/* The production step, shared by `run --production` (from the run's typed results) and
 * `marks advance --from-report` (from a recorded report): the advance input, then one
 * compare-and-swap commit of the marks that moved. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "bench/bench.h"
#include "core/report_keys.h"
#include "production/production.h"
#include "production/production_counters.h" /* counter marks */

static void pr_why(kg_advance_input *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pr_why(kg_advance_input *in, const char *fmt, ...)
{
    size_t n = strlen(in->why_not);
    va_list ap;
    in->all_passed = false;
    if (n + 4 >= sizeof in->why_not)
        return;
    if (n)
        n += (size_t)snprintf(in->why_not + n, sizeof in->why_not - n, "; ");
    va_start(ap, fmt);
    vsnprintf(in->why_not + n, sizeof in->why_not - n, fmt, ap);
    va_end(ap);
}

/* Every gate of the table must have decided every selected case. */
static void pr_coverage(kg_advance_input *in, const kg_run *run)
{
    for (size_t g = 0; g < kg_n_gates; g++) {
        size_t n = 0;
        for (size_t i = 0; i < run->n_rows; i++)
            n += run->rows[i].gate == kg_gates[g];
        if (n != run->sel.n) {
            pr_why(in, "gate %s has %zu result(s) for %zu case(s)", kg_gates[g]->name, n,
                   run->sel.n);
            return;
        }
    }
}

/* One typed bench row into the advance input. */
static int pr_bench(kg_advance_input *in, const kg_run *run, const kg_run_row *row,
                    const char *set_by, const char *drv, const char *rt)
{
    const kg_bench_row *b = row->res.data;
    const kg_summary *s = &b->r.sum;
    kg_advance_obs o = { .case_id = row->desc->id,
                         .decision = kg_bench_decision_name(b->v.decision),
                         .metric = b->metric, .direction = b->direction, .median = s->median,
                         .ci_lo = s->ci_lo, .ci_hi = s->ci_hi,
                         .band = s->median > 0 ? (s->ci_hi - s->ci_lo) / (2 * s->median) : -1,
                         .samples = (double)b->r.kept, .commit = kg_report_commit(run->rep),
                         .date = kg_report_started_at(run->rep), .driver = drv, .cuda = rt,
                         .set_by = set_by, .processes = b->v.processes > 0 ? b->v.processes : 1,
                         .env_lo = b->v.env_lo, .env_hi = b->v.env_hi, .k = b->v.run_k,
                         .power_state = b->v.run_power_state[0] ? b->v.run_power_state : NULL,
                         .measured_median = b->v.run_measured,
                         .measured_spread = b->v.run_measured_spread,
                         .energy_mj = b->v.run_energy, .energy_spread = b->v.run_energy_spread };
    return kg_advance_add(in, &o, "this run");
}

static int pr_rows(kg_advance_input *in, const kg_run *run, const char *set_by)
{
    int rc = 0, n_bad = 0;
    char drv[16], rt[16];
    kg_device_version_str(drv, sizeof drv, run->dev.driver_version);
    kg_device_version_str(rt, sizeof rt, run->dev.runtime_version);
    for (size_t i = 0; i < run->n_rows; i++) {
        const kg_run_row *row = &run->rows[i];
        kg_verdict v = row->res.verdict;
        bool ok = v == KG_VERDICT_PASS || v == KG_VERDICT_WARN || v == KG_VERDICT_XFAIL;
        if (!ok && ++n_bad <= 3) /* the first few name the problem; the count says the rest */
            pr_why(in, "%s %s: %s", row->gate->name, row->desc->id, kg_verdict_name(v));
        else if (!ok)
            in->all_passed = false;
        if (row->gate != &kg_gate_bench)
            continue;
        in->n_bench++;
        if (in->device_class && ok && row->res.data)
            KG_TRY(pr_bench(in, run, row, set_by, drv, rt));
    }
    if (n_bad > 3)
        pr_why(in, "and %d more not passing", n_bad - 3);
    /* Rows the run holds no typed result for: the selftest's. */
    int typed_bad = n_bad, all_bad = in->counts[KG_VERDICT_FAIL] + in->counts[KG_VERDICT_ERROR] +
                                     in->counts[KG_VERDICT_SKIP];
    if (all_bad > typed_bad)
        pr_why(in, "selftest: %d row(s) not passing", all_bad - typed_bad);
cleanup:
    return rc;
}

int kg_advance_from_run(kg_advance_input **out, const kg_run *run, const char *set_by)
{
    int rc = 0;
    char cls[320];
    kg_advance_input *in = calloc(1, sizeof *in);
    *out = NULL;
    if (!in)
        return KG_ERR(KG_ENOMEM, "out of memory");
    in->certifying = !run->env.diagnostic;
    in->all_passed = true;
    if (!(in->run_id = strdup(kg_report_run_id(run->rep) ? kg_report_run_id(run->rep) : ""))) {
        rc = KG_ERR(KG_ENOMEM, "out of memory");
        goto cleanup;
    }
    if (run->env.dev) {
        kg_device_class(run->env.dev, cls, sizeof cls);
        if (!(in->device_class = strdup(cls))) {
            rc = KG_ERR(KG_ENOMEM, "out of memory");
            goto cleanup;
        }
    } else {
        pr_why(in, "no GPU in the run");
    }
    const char *st = kg_report_started_at(run->rep), *cm = kg_report_commit(run->rep);
    if ((st && !(in->started_at = strdup(st))) || (cm && !(in->commit = strdup(cm)))) {
        rc = KG_ERR(KG_ENOMEM, "out of memory");
        goto cleanup;
    }
    kg_run_counts(run, in->counts);
    KG_TRY(pr_rows(in, run, set_by));
    pr_coverage(in, run);
    /* the counters gate's marks ratchet too (gates/production/production_counters.c) */
    KG_TRY(kg_advance_counters_from_run(in, run, set_by));
    *out = in;
    in = NULL;
cleanup:
    kg_advance_input_free(in);
    return rc;
}

typedef struct {
    const kg_advance_input *in;
    kg_mark_moves moves;
    const kg_marks_target *t;
    const char *name;
} adv_ud;

static int adv_update(kg_marks *m, void *ud, char **message)
{
    adv_ud *u = ud;
    /* replay, freshness and ancestry, against the commit this attempt builds on
     * (after a lost race or a rejected push, the new tip's history is checked again) */
    int rc = kg_advance_guard(u->t->git, u->t->attempt_has_base ? &u->t->attempt_base : NULL, m,
                              u->in, u->name);
    if (rc < 0)
        return rc;
    rc = kg_advance_apply(m, u->in, &u->moves);
    if (rc < 0 || u->moves.n == 0)
        return rc;
    KG_TRY(kg_advance_message(message, u->in, &u->moves));
    rc = (int)u->moves.n;
cleanup:
    return rc;
}

static cJSON *moves_json(const kg_mark_moves *mv)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < mv->n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, KG_RK_MV_CASE, mv->v[i].case_id);
        cJSON_AddStringToObject(o, KG_RK_MV_DEVICE_CLASS, mv->v[i].device_class);
        cJSON_AddStringToObject(o, KG_RK_MV_METRIC, mv->v[i].metric);
        if (mv->v[i].had_old)
            cJSON_AddNumberToObject(o, KG_RK_MV_OLD, mv->v[i].old_value);
        else
            cJSON_AddNullToObject(o, KG_RK_MV_OLD);
        cJSON_AddNumberToObject(o, KG_RK_MV_NEW, mv->v[i].new_value);
        cJSON_AddNumberToObject(o, KG_RK_MV_BAND, mv->v[i].band_rel);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

/* Advance the marks from a passing certifying report; *summary (may be NULL) receives what
 * happened for the report. */
int kg_production_advance(kg_marks_target *t, const kg_marks_git_opts *o,
                          const kg_advance_input *in, cJSON **summary)
{
    int rc = 0;
    char name[160];
    snprintf(name, sizeof name, "run %.140s", in->run_id);
    adv_ud u = { in, { NULL, 0 }, t, name };
    kg_marks_commit_result res;
    KG_TRY(kg_marks_commit_update(t, o, adv_update, &u, &res));
    if (summary && (*summary = cJSON_CreateObject())) {
        cJSON_AddBoolToObject(*summary, KG_RK_MU_COMMITTED, res.committed);
        cJSON_AddStringToObject(*summary, KG_RK_MU_REF, t->refname);
        cJSON_AddStringToObject(*summary, KG_RK_MU_FILE, t->relpath);
        if (res.committed)
            cJSON_AddStringToObject(*summary, KG_RK_MU_COMMIT, git_oid_tostr_s(&res.commit));
        cJSON_AddItemToObject(*summary, KG_RK_MU_MOVED, moves_json(res.committed ? &u.moves
                                                                         : &(kg_mark_moves){ 0 }));
        cJSON_AddBoolToObject(*summary, KG_RK_MU_PUSHED, res.pushed);
        cJSON_AddNumberToObject(*summary, KG_RK_MU_ATTEMPTS, res.attempts);
    }
    if (!res.committed) {
        printf("marks: no mark moved (%d bench result(s), %d SAME, %zu candidate(s) not better "
               "than the marks at %s, %d of one process never advance): nothing committed\n",
               in->n_bench, in->n_same, in->n_cands, t->refname, in->n_single);
        if (res.pushed_pending) {
            char shown[1024];
            printf("marks: pushed the earlier marks commit %.12s (%d commit(s)) to %s\n",
                   git_oid_tostr_s(&res.pending), res.pushed_pending,
                   kg_git_remote_shown(shown, sizeof shown, o->push_remote));
        }
        goto cleanup;
    }
    printf("marks: committed %.12s on %s (%zu mark(s) moved, %d attempt(s))%s\n",
           git_oid_tostr_s(&res.commit), t->refname, u.moves.n, res.attempts,
           res.pushed ? ", pushed" : "");
    for (size_t i = 0; i < u.moves.n; i++) {
        const kg_mark_move *m = &u.moves.v[i];
        char old[48] = "(none)";
        if (m->had_old)
            snprintf(old, sizeof old, "%.6g", m->old_value);
        printf("  %s [%s] %s: %s -> %.6g (band +-%.2f%%)\n", m->case_id, m->device_class,
               m->metric, old, m->new_value, 100.0 * m->band_rel);
    }
    if (o->push_remote && res.pushed) {
        char shown[1024];
        printf("marks: pushed %s to %s\n", t->refname,
               kg_git_remote_shown(shown, sizeof shown, o->push_remote));
    }
cleanup:
    kg_mark_moves_free(&u.moves);
    return rc;
}


/* ---- run --production's bench: N separate processes, combined per case ------------------- */

typedef struct {
    kg_run_row *rows;     /* this pass's bench rows (typed results owned here) */
    size_t n;
    kg_report *rep;       /* the pass's own report (its rows are not the run's) */
} pb_pass;

static void pb_pass_free(pb_pass *p)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->rows[i].res.data && p->rows[i].gate->result_free)
            p->rows[i].gate->result_free(p->rows[i].res.data);
    free(p->rows);
    kg_report_free(p->rep);
    memset(p, 0, sizeof *p);
}

/* One pass of the bench gate in a fresh worker, into its own report; its typed rows are moved
 * out of the run. */
static int pb_one_pass(pb_pass *p, kg_run *run, const kg_registry *reg, const void *opts,
                       int i, int n)
{
    int rc = 0;
    kg_report *real = run->rep;
    size_t n0 = run->n_rows;
    KG_TRY(kg_report_new(&p->rep, run->command, run->env.diagnostic));
    if (run->env.dev)
        kg_report_set_device(p->rep, run->env.dev);
    if (!run->env.quiet)
        printf("\n== bench: process %d of %d ==\n", i + 1, n);
    run->rep = run->env.rep = p->rep; /* the fresh worker forks with this report */
    (void)kg_run_fresh_worker(run);
    rc = kg_run_gate(run, reg, &kg_gate_bench, opts, false);
    run->rep = run->env.rep = real;
    p->n = run->n_rows - n0;
    if (p->n && !(p->rows = malloc(p->n * sizeof *p->rows))) {
        for (size_t k = n0; k < run->n_rows; k++)
            if (run->rows[k].res.data)
                kg_gate_bench.result_free(run->rows[k].res.data);
        run->n_rows = n0;
        p->n = 0;
        return KG_ERR(KG_ENOMEM, "out of memory keeping a bench pass");
    }
    if (p->n)
        memcpy(p->rows, run->rows + n0, p->n * sizeof *p->rows);
    run->n_rows = n0;
cleanup:
    return rc;
}

static const kg_run_row *pb_row_of(const pb_pass *p, const kg_case_desc *d)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->rows[i].desc == d)
            return &p->rows[i];
    return NULL;
}

/* A case some process could not time: the first such row, its message naming the process. */
static int pb_record_failed(kg_run *run, const kg_case_desc *d, const kg_run_row *bad, int i)
{
    kg_case_result res = { .verdict = bad ? bad->res.verdict : KG_VERDICT_ERROR };
    snprintf(res.message, sizeof res.message, "bench process %d: %.990s", i + 1,
             bad ? bad->res.message : "no result for this case");
    if (res.verdict == KG_VERDICT_PASS || res.verdict == KG_VERDICT_WARN)
        res.verdict = KG_VERDICT_ERROR; /* a passing row without its typed result */
    return kg_run_record(run, &kg_gate_bench, d, &res, NULL);
}

/* The combined row: a copy of the process closest to the combined median (context, kernels),
 * with the combined figures and decision. */
static int pb_combined_row(kg_bench_row **out, const kg_bench_row *near, const kg_bench_obs *c,
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
        b->mark = *mark; /* shallow: its strings are borrowed for the figures (pb_unborrow) */
    *out = b;
    return 0;
}

/* The row keeps no string of the marks (they are freed before the run's rows). */
static void pb_unborrow(kg_bench_row *b)
{
    b->mark.device_class = b->mark.case_id = b->mark.metric = NULL;
    b->mark.commit = b->mark.date = b->mark.run_id = NULL;
    b->mark.driver = b->mark.cuda = b->mark.set_by = b->mark.kernels = NULL;
    b->mark.power_state = b->mark.gpu_uuid = b->mark.gpu_serial = NULL;
}

/* The combined row's samples: those of all N processes (kept, taken, dropped, placements). Its
 * per-sample arrays stay with the processes' rows (in the parent a worker's row has none). */
static void pb_sum_samples(kg_bench_row *b, const kg_bench_row *const *rows, int n)
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
static void pb_combine_raw(kg_bench_row *b, const kg_bench_row *const *rows, int n)
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
static cJSON *pb_figures(const kg_case_desc *d, kg_case_result *res)
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

int kg_production_bench_case(kg_run *run, const kg_run_row *const *pr, int n,
                             const kg_case_desc *d, const kg_bench_gate_opts *bo)
{
    kg_bench_obs per[KG_BENCH_MAX_PROCESSES], comb;
    kg_bench_verdict pv[KG_BENCH_MAX_PROCESSES], v;
    const kg_bench_row *rows[KG_BENCH_MAX_PROCESSES];
    kg_decide_opts dopt;
    bool warn = false;
    int rc = 0, near = 0;
    if (n < 1 || n > KG_BENCH_MAX_PROCESSES)
        return KG_ERR(KG_EINVAL, "bench combine: %d process(es), need 1..%d", n,
                      KG_BENCH_MAX_PROCESSES);
    for (int i = 0; i < n; i++) {
        const kg_run_row *r = pr[i];
        if (!r || !r->res.data ||
            (r->res.verdict != KG_VERDICT_PASS && r->res.verdict != KG_VERDICT_WARN &&
             r->res.verdict != KG_VERDICT_FAIL))
            return pb_record_failed(run, d, r, i);
        rows[i] = r->res.data;
        warn |= r->res.verdict == KG_VERDICT_WARN;
        const kg_bench_row *b = rows[i];
        per[i] = (kg_bench_obs){ .median = b->r.sum.median, .ci_lo = b->r.sum.ci_lo,
                                 .ci_hi = b->r.sum.ci_hi, .compute_bound = b->compute_bound,
                                 .k = b->v.run_k,
                                 .power_state = b->v.run_power_state[0] ? b->v.run_power_state
                                                                        : NULL };
        pv[i] = b->v;
    }
    const kg_mark *mk = bo->lookup ? bo->lookup(bo->marks, rows[0]->device_class, d->id,
                                                rows[0]->metric) : NULL;
    kg_mark xg;
    char xnote[400];
    mk = kg_bench_mark_on_gpu(&xg, mk, run->dev.uuid, xnote, sizeof xnote); /* issue #27 */
    kg_bench_decide_opts_for(&dopt, bo, d);
    KG_TRY(kg_bench_combine(&v, &comb, mk, per, pv, (size_t)n, &dopt));
    for (int i = 1; i < n; i++)
        if (fabs(per[i].median - comb.median) < fabs(per[near].median - comb.median))
            near = i;
    kg_case_result res = { .verdict = kg_bench_verdict_fails(&v) ? KG_VERDICT_FAIL
                                      : warn ? KG_VERDICT_WARN : KG_VERDICT_PASS };
    KG_TRY(pb_combined_row((kg_bench_row **)&res.data, rows[near], &comb, &v, mk));
    pb_sum_samples(res.data, rows, n);
    pb_combine_raw(res.data, rows, n);
    snprintf(res.message, sizeof res.message, "%s; median of %d processes %.4g us (medians "
             "%.4g..%.4g)", v.why, n, comb.median, v.env_lo, v.env_hi);
    if (xnote[0]) { /* issue #27: judged with the class's cross-GPU spread */
        size_t at = strlen(res.message);
        snprintf(res.message + at, sizeof res.message - at, "; %s", xnote);
    }
    if (!run->env.quiet)
        printf("%-46s %-9s %-13s %10.4g us  %s\n", d->id, kg_verdict_name(res.verdict),
               kg_bench_decision_name(v.decision), comb.median, v.why);
    cJSON *fig = pb_figures(d, &res);
    pb_unborrow(res.data);
    KG_TRY(kg_run_record(run, &kg_gate_bench, d, &res, fig));
cleanup:
    return rc;
}

/* The bench's run-level record: the last pass's (settings, ceilings, NVML), with the count. */
static void pb_record(kg_run *run, const pb_pass *last, int n)
{
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(kg_report_json(last->rep), KG_RK_BENCH);
    cJSON *copy = b ? cJSON_Duplicate(b, true) : NULL;
    if (copy)
        kg_report_set_extra(run->rep, KG_RK_BENCH, copy);
    (void)n;
}

int kg_production_bench(kg_run *run, const kg_registry *reg, const kg_bench_gate_opts *bo,
                        int n)
{
    int rc = 0;
    pb_pass ps[KG_BENCH_MAX_PROCESSES];
    int done = 0;
    memset(ps, 0, sizeof ps);
    if (n < 1 || n > KG_BENCH_MAX_PROCESSES)
        return KG_ERR(KG_EINVAL, "--bench-processes: expected an integer in [1, %d], got %d",
                      KG_BENCH_MAX_PROCESSES, n);
    if (!run->env.quiet)
        printf("\n== bench ==\nbench: %d separate processes (fresh worker, fresh CUDA context "
               "each), combined per case\n", n);
    for (; done < n; done++)
        KG_TRY(pb_one_pass(&ps[done], run, reg, bo, done, n));
    if (!run->env.quiet)
        printf("\n== bench: %d processes combined ==\n", n);
    for (size_t i = 0; i < run->sel.n; i++) {
        const kg_case_desc *d = kg_registry_get(reg, run->sel.idx[i]);
        const kg_run_row *pr[KG_BENCH_MAX_PROCESSES];
        for (int p = 0; p < n; p++)
            pr[p] = pb_row_of(&ps[p], d);
        KG_TRY(kg_production_bench_case(run, pr, n, d, bo));
    }
    pb_record(run, &ps[n - 1], n);
cleanup:
    for (int i = 0; i < KG_BENCH_MAX_PROCESSES; i++)
        pb_pass_free(&ps[i]);
    return rc;
}

void kg_production_note(const kg_bench_gate_opts *bo, int processes)
{
    int min_runs = bo->min_mark_runs > 0 ? bo->min_mark_runs
                                         : ((kg_decide_opts)KG_DECIDE_OPTS_INIT).min_mark_runs;
    if (processes < min_runs)
        printf("kgate: note: --bench-processes %d < --min-mark-runs %d: the marks this run sets "
               "will decide UNPROVEN until merged from more processes\n", processes, min_runs);
}
