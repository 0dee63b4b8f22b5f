/* The production step, shared by `run --production` (from the run's typed results) and
 * `marks advance --from-report` (from a recorded report): the advance input, then one
 * compare-and-swap commit of the marks that moved. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "core/report_keys.h"
#include "production/production.h"

static void pr_why(kg_advance_input *in, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
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

/* The run's provenance every candidate carries. */
static kg_advance_obs pr_stamp(const kg_run *run, const char *set_by, const char *drv,
                               const char *rt)
{
    return (kg_advance_obs){ .commit = kg_report_commit(run->rep),
                             .date = kg_report_started_at(run->rep),
                             .driver = drv,
                             .cuda = rt,
                             .set_by = set_by };
}

/* The candidate marks one row's gate offers (kg_gate_production.candidates). */
static int pr_offer(kg_advance_input *in, const kg_run_row *row, const kg_advance_obs *stamp)
{
    int rc = 0;
    const struct kg_gate_production *p = row->gate->production;
    kg_advance_obs o[KG_GATE_CANDIDATES_MAX];
    size_t n = p->candidates(o, KG_GATE_CANDIDATES_MAX, row->desc, &row->res, stamp);
    for (size_t k = 0; k < n; k++)
        KG_TRY(kg_advance_add(in, &o[k], p->source));
cleanup:
    return rc;
}

static int pr_rows(kg_advance_input *in, const kg_run *run, const char *set_by)
{
    int rc = 0, n_bad = 0;
    char drv[16], rt[16];
    kg_device_version_str(drv, sizeof drv, run->dev.driver_version);
    kg_device_version_str(rt, sizeof rt, run->dev.runtime_version);
    kg_advance_obs stamp = pr_stamp(run, set_by, drv, rt);
    for (size_t i = 0; i < run->n_rows; i++) {
        const kg_run_row *row = &run->rows[i];
        const struct kg_gate_production *p = row->gate->production;
        kg_verdict v = row->res.verdict;
        bool ok = v == KG_VERDICT_PASS || v == KG_VERDICT_WARN || v == KG_VERDICT_XFAIL;
        if (!ok && ++n_bad <= 3) /* the first few name the problem; the count says the rest */
            pr_why(in, "%s %s: %s", row->gate->name, row->desc->id, kg_verdict_name(v));
        else if (!ok)
            in->all_passed = false;
        if (!p)
            continue;
        in->n_bench += p->counted;
        if (!p->after_pass && p->candidates && in->device_class && row->res.data)
            KG_TRY(pr_offer(in, row, &stamp));
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

/* The candidates of gates that offer them only from a run that passed (after_pass). */
static int pr_rows_passed(kg_advance_input *in, const kg_run *run, const char *set_by)
{
    int rc = 0;
    char drv[16], rt[16];
    if (!in->device_class || !in->all_passed)
        return 0; /* nothing to ratchet: no device, or the run is not committed anyway */
    kg_device_version_str(drv, sizeof drv, run->dev.driver_version);
    kg_device_version_str(rt, sizeof rt, run->dev.runtime_version);
    kg_advance_obs stamp = pr_stamp(run, set_by, drv, rt);
    for (size_t i = 0; i < run->n_rows; i++) {
        const struct kg_gate_production *p = run->rows[i].gate->production;
        if (p && p->after_pass && p->candidates)
            KG_TRY(pr_offer(in, &run->rows[i], &stamp));
    }
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
    KG_TRY(pr_rows_passed(in, run, set_by));
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
        cJSON_AddItemToObject(*summary, KG_RK_MU_MOVED,
                              moves_json(res.committed ? &u.moves : &(kg_mark_moves){ 0 }));
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
        printf("  %s [%s] %s: %s -> %.6g (band +-%.2f%%)\n", m->case_id, m->device_class, m->metric,
               old, m->new_value, 100.0 * m->band_rel);
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
