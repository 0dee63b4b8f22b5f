/* run --production's passes: a gate with KG_GATE_PRODUCTION_PASSES (the bench) run over the
 * selection in N separate processes, then one report row and typed row per case from the
 * gate's combine hook (kg_gate_production, gate.h). Generic: the gate's name is only printed. */
#include <stdlib.h>
#include <string.h>
#include "production/production.h"

typedef struct {
    kg_run_row *rows; /* this pass's rows (typed results owned here) */
    size_t n;
    kg_report *rep; /* the pass's own report (its rows are not the run's) */
} pp_pass;

static void pp_pass_free(pp_pass *p)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->rows[i].res.data && p->rows[i].gate->result_free)
            p->rows[i].gate->result_free(p->rows[i].res.data);
    free(p->rows);
    kg_report_free(p->rep);
    memset(p, 0, sizeof *p);
}

/* One pass of the gate in a fresh worker, into its own report; its typed rows are moved out
 * of the run. */
static int pp_one_pass(pp_pass *p, kg_run *run, const kg_registry *reg, const struct kg_gate *g,
                       const void *opts, int i, int n)
{
    int rc = 0;
    kg_report *real = run->rep;
    size_t n0 = run->n_rows;
    KG_TRY(kg_report_new(&p->rep, run->command, run->env.diagnostic));
    if (run->env.dev)
        kg_report_set_device(p->rep, run->env.dev);
    if (!run->env.quiet)
        printf("\n== %s: process %d of %d ==\n", g->name, i + 1, n);
    run->rep = run->env.rep = p->rep; /* the fresh worker forks with this report */
    (void)kg_run_fresh_worker(run);
    rc = kg_run_gate(run, reg, g, opts, false);
    run->rep = run->env.rep = real;
    p->n = run->n_rows - n0;
    if (p->n && !(p->rows = malloc(p->n * sizeof *p->rows))) {
        for (size_t k = n0; k < run->n_rows; k++)
            if (run->rows[k].res.data)
                g->result_free(run->rows[k].res.data);
        run->n_rows = n0;
        p->n = 0;
        return KG_ERR(KG_ENOMEM, "out of memory keeping a %s pass", g->name);
    }
    if (p->n)
        memcpy(p->rows, run->rows + n0, p->n * sizeof *p->rows);
    run->n_rows = n0;
cleanup:
    return rc;
}

static const kg_run_row *pp_row_of(const pp_pass *p, const kg_case_desc *d)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->rows[i].desc == d)
            return &p->rows[i];
    return NULL;
}

/* The figures.fault of d's row in a pass's own report (what the worker saw), or NULL. */
static const cJSON *pp_fault_of(const pp_pass *p, const struct kg_gate *g, const kg_case_desc *d)
{
    const cJSON *it;
    cJSON_ArrayForEach(it,
                       cJSON_GetObjectItemCaseSensitive(kg_report_json(p->rep), KG_RK_RESULTS)) {
        const char *gn = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, KG_RES_GATE));
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, KG_RES_CASE));
        if (gn && id && strcmp(gn, g->name) == 0 && strcmp(id, d->id) == 0)
            return cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(it, KG_RES_FIGURES), KG_FIG_FAULT);
    }
    return NULL;
}

/* A case some process could not time: the first such row, its message naming the process,
 * with that process's figures.fault when it faulted (the evidence, as in any gate's row). */
static int pp_record_failed(kg_run *run, const struct kg_gate *g, const kg_case_desc *d,
                            const kg_run_row *bad, int i, const cJSON *fault)
{
    kg_case_result res = { .verdict = bad ? bad->res.verdict : KG_VERDICT_ERROR };
    cJSON *fig = NULL;
    snprintf(res.message, sizeof res.message, "%s process %d: %.990s", g->name, i + 1,
             bad ? bad->res.message : "no result for this case");
    if (res.verdict == KG_VERDICT_PASS || res.verdict == KG_VERDICT_WARN)
        res.verdict = KG_VERDICT_ERROR; /* a passing row without its typed result */
    if (fault) {
        cJSON *f = cJSON_Duplicate(fault, true);
        if (!f || !(fig = cJSON_CreateObject())) {
            cJSON_Delete(f);
            return KG_ERR(KG_ENOMEM, "out of memory for the fault of '%s'", d->id);
        }
        cJSON_AddNumberToObject(f, KG_FIG_FAULT_PROCESS, i + 1);
        cJSON_AddItemToObject(fig, KG_FIG_FAULT, f);
    }
    return kg_run_record(run, g, d, &res, fig);
}

int kg_production_case(kg_run *run, const struct kg_gate *g, const kg_run_row *const *pr,
                       const cJSON *const *faults, int n, const kg_case_desc *d, const void *opts)
{
    const kg_case_result *per[KG_GATE_PASSES_MAX];
    int max = g->production && g->production->combine ? g->production->max_passes : 0;
    if (n < 1 || n > max || n > KG_GATE_PASSES_MAX)
        return KG_ERR(KG_EINVAL, "%s combine: %d process(es), need 1..%d", g->name, n, max);
    for (int i = 0; i < n; i++) {
        const kg_run_row *r = pr[i];
        if (!r || !r->res.data ||
            (r->res.verdict != KG_VERDICT_PASS && r->res.verdict != KG_VERDICT_WARN &&
             r->res.verdict != KG_VERDICT_FAIL))
            return pp_record_failed(run, g, d, r, i, faults ? faults[i] : NULL);
        per[i] = &r->res;
    }
    int rc = 0;
    kg_case_result res = { .verdict = KG_VERDICT_ERROR };
    cJSON *fig = NULL;
    KG_TRY(g->production->combine(&res, &fig, d, per, n, opts, &run->env));
    KG_TRY(kg_run_record(run, g, d, &res, fig));
cleanup:
    return rc;
}

/* The gate's run-level record: the last pass's (settings, ceilings, NVML). */
static void pp_record(kg_run *run, const struct kg_gate *g, const pp_pass *last)
{
    const char *key = g->production->record_key;
    const cJSON *b = key ? cJSON_GetObjectItemCaseSensitive(kg_report_json(last->rep), key) : NULL;
    cJSON *copy = b ? cJSON_Duplicate(b, true) : NULL;
    if (copy)
        kg_report_set_extra(run->rep, key, copy);
}

int kg_production_passes(kg_run *run, const kg_registry *reg, const struct kg_gate *g,
                         const void *opts, int n)
{
    int rc = 0;
    pp_pass ps[KG_GATE_PASSES_MAX];
    int done = 0, max = g->production && g->production->combine ? g->production->max_passes : 0;
    memset(ps, 0, sizeof ps);
    if (n < 1 || n > max || n > KG_GATE_PASSES_MAX)
        return KG_ERR(KG_EINVAL, "--bench-processes: expected an integer in [1, %d], got %d", max,
                      n);
    if (!run->env.quiet)
        printf("\n== %s ==\n%s: %d separate processes (fresh worker, fresh CUDA context "
               "each), combined per case\n",
               g->name, g->name, n);
    for (; done < n; done++)
        KG_TRY(pp_one_pass(&ps[done], run, reg, g, opts, done, n));
    if (!run->env.quiet)
        printf("\n== %s: %d processes combined ==\n", g->name, n);
    for (size_t i = 0; i < run->sel.n; i++) {
        const kg_case_desc *d = kg_registry_get(reg, run->sel.idx[i]);
        const kg_run_row *pr[KG_GATE_PASSES_MAX];
        const cJSON *faults[KG_GATE_PASSES_MAX];
        for (int p = 0; p < n; p++) {
            pr[p] = pp_row_of(&ps[p], d);
            faults[p] = pp_fault_of(&ps[p], g, d);
        }
        KG_TRY(kg_production_case(run, g, pr, faults, n, d, opts));
    }
    pp_record(run, g, &ps[n - 1]);
cleanup:
    for (int i = 0; i < KG_GATE_PASSES_MAX; i++)
        pp_pass_free(&ps[i]);
    return rc;
}

void kg_production_note(const struct kg_gate *g, const void *opts, int passes)
{
    if (g->production && g->production->note)
        g->production->note(opts, passes);
}
