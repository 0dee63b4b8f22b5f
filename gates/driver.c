/* The driver: everything around a gate's run_case (gate.h). One case loop, one rule for a
 * case's own error, one SKIP without a GPU, one console table from the declared columns, one
 * place that adds report rows, one exit-code policy. */
#include <stdlib.h>
#include <string.h>
#include "gate.h"

int kg_exit_code_for_counts(const int counts[KG_VERDICT_N])
{
    return counts[KG_VERDICT_FAIL] || counts[KG_VERDICT_XPASS] ? KG_EXIT_GATE_FAILED
           : counts[KG_VERDICT_ERROR] ? KG_EXIT_RUNTIME
           : counts[KG_VERDICT_SKIP]  ? KG_EXIT_NO_GPU
                                      : KG_EXIT_PASS;
}

static void drv_print_device(const kg_device_info *d)
{
    printf("device %d: %s (sm_%d%d, %d SMs, %s), driver CUDA %d.%d, runtime %d.%d\n", d->ordinal,
           d->name, d->cc_major, d->cc_minor, d->sm_count, d->uuid, d->driver_version / 1000,
           (d->driver_version % 1000) / 10, d->runtime_version / 1000,
           (d->runtime_version % 1000) / 10);
}

int kg_run_begin(kg_run *run, const char *command, const kg_common_opts *o,
                 const kg_registry *reg, const char *banner)
{
    int rc = 0;
    memset(run, 0, sizeof *run);
    run->command = command;
    run->opts = *o;
    KG_TRY(kg_select(&run->sel, reg, o->filter, o->tag));
    if (o->report_path)
        KG_TRY(kg_path_check_writable(o->report_path));
    if (!run->opts.seed_set)
        run->opts.seed = kg_seed_fresh();
    KG_TRY(kg_report_new(&run->rep, command, o->diagnostic));
    kg_report_set_seed(run->rep, run->opts.seed);
    if (kg_self_exe(run->self_exe, sizeof run->self_exe) < 0)
        run->self_exe[0] = '\0'; /* preflight then reads /proc/self/exe itself */
    run->env = (kg_gate_env){ .seed = run->opts.seed, .device = o->device, .dev = NULL,
                              .diagnostic = o->diagnostic, .quiet = o->quiet,
                              .self_exe = run->self_exe[0] ? run->self_exe : NULL,
                              .filter = o->filter,
                              .rep = run->rep };
    printf("kgate %s: seed %llu (reproduce with --seed %llu), %zu case(s)%s%s\n", command,
           (unsigned long long)run->opts.seed, (unsigned long long)run->opts.seed, run->sel.n,
           banner ? ", " : (o->diagnostic ? ", diagnostic (non-certifying)" : ""),
           banner ? banner : "");
    rc = kg_device_open(&run->dev, o->device);
    if (rc == KG_ENODEV) {
        printf("kgate: %s: GPU checks are skipped\n", kg_error_last());
        kg_report_set_no_device(run->rep, kg_error_last());
        run->no_gpu = true;
        rc = 0;
    } else if (rc == 0) {
        run->env.dev = &run->dev;
        kg_report_set_device(run->rep, &run->dev);
        drv_print_device(&run->dev);
    }
cleanup:
    return rc;
}

static int drv_push(kg_run *run, const struct kg_gate *g, const kg_case_desc *d,
                    kg_case_result *res)
{
    if (run->n_rows == run->cap_rows) {
        size_t cap = run->cap_rows ? run->cap_rows * 2 : 64;
        kg_run_row *nr = realloc(run->rows, cap * sizeof *nr);
        if (!nr)
            return KG_ERR(KG_ENOMEM, "out of memory for the results of '%s'", d->id);
        run->rows = nr;
        run->cap_rows = cap;
    }
    run->rows[run->n_rows++] = (kg_run_row){ .gate = g, .desc = d, .res = *res };
    return 0;
}

static void drv_cell(char *buf, size_t n, const kg_gate_column *c, const kg_case_desc *d,
                     const kg_case_result *r, size_t line)
{
    if (c->cell)
        c->cell(buf, n, d, r, line);
    else if (r->data)
        snprintf(buf, n, c->format, *(const double *)((const char *)r->data + c->offset));
    else
        snprintf(buf, n, "-");
}

static void drv_print_header(const struct kg_gate *g)
{
    for (size_t c = 0; c < g->n_columns; c++)
        printf("%s%*s", c ? " " : "", g->columns[c].width, g->columns[c].header);
    printf("\n");
}

/* The table line(s) of one result; an ERROR without typed figures is "case ERROR message". */
static void drv_print_row(const struct kg_gate *g, const kg_case_desc *d, const kg_case_result *r)
{
    char cell[1100];
    bool multi = (g->flags & KG_GATE_MULTILINE) != 0;
    size_t lines = multi ? r->n_lines : 1;
    if ((r->verdict == KG_VERDICT_ERROR && !multi) || !r->data) {
        printf("%*s %-7s %s\n", g->columns[0].width, d->id, kg_verdict_name(r->verdict),
               r->message);
        return;
    }
    for (size_t l = 0; l < lines; l++) {
        for (size_t c = 0; c < g->n_columns; c++) {
            drv_cell(cell, sizeof cell, &g->columns[c], d, r, l);
            /* The last column is free text: never pad it. */
            if (c + 1 == g->n_columns)
                printf("%s%s", c ? " " : "", cell);
            else
                printf("%s%*s", c ? " " : "", g->columns[c].width, cell);
        }
        printf("\n");
    }
    if (g->detail && r->verdict == KG_VERDICT_FAIL)
        g->detail(stdout, d, r);
}

/* A declared expected failure (kg_case_desc.xfail_gate) of this gate: FAIL becomes XFAIL (the
 * run passes), PASS or WARN becomes XPASS (the run fails, so the stale mark is removed). An
 * ERROR or SKIP decided nothing and stays. */
static void drv_xfail(const struct kg_gate *g, const kg_case_desc *d, kg_case_result *res)
{
    char msg[sizeof res->message];
    if (!d->xfail_gate || strcmp(d->xfail_gate, g->name) != 0)
        return;
    if (res->verdict == KG_VERDICT_FAIL) {
        res->verdict = KG_VERDICT_XFAIL;
        snprintf(msg, sizeof msg, "expected failure (%.200s): %.800s", d->xfail_reason,
                 res->message);
    } else if (res->verdict == KG_VERDICT_PASS || res->verdict == KG_VERDICT_WARN) {
        res->verdict = KG_VERDICT_XPASS;
        snprintf(msg, sizeof msg, "passed, but the case declares an expected failure of %s "
                 "(%.200s): remove xfail_gate; %.700s", g->name, d->xfail_reason, res->message);
    } else {
        return;
    }
    snprintf(res->message, sizeof res->message, "%s", msg);
}

/* A case's own failure is its verdict; only running out of memory stops the run. */
static int drv_case(kg_run *run, const struct kg_gate *g, void *st, const kg_case_desc *d,
                    const char *unavailable)
{
    int rc = 0;
    kg_case_result res = { .verdict = KG_VERDICT_ERROR };
    if (unavailable) {
        snprintf(res.message, sizeof res.message, "%s", unavailable);
    } else if (!run->env.dev && (g->flags & KG_GATE_NEEDS_GPU)) {
        res.verdict = KG_VERDICT_SKIP;
        snprintf(res.message, sizeof res.message, "no CUDA device");
    } else {
        rc = g->run_case(st, d, &run->env, &res);
        if (rc < 0) {
            res.verdict = KG_VERDICT_ERROR;
            snprintf(res.message, sizeof res.message, "%s", kg_error_last());
            (void)cudaGetLastError(); /* a non-sticky error must not leak into the next case */
        }
        if (rc == KG_ENOMEM)
            goto cleanup;
        rc = 0;
        drv_xfail(g, d, &res);
        if (!run->env.quiet)
            drv_print_row(g, d, &res);
    }
    cJSON *fig = (res.data && g->figures) ? g->figures(d, &res) : NULL;
    KG_TRY(kg_report_add(run->rep, g->name, d->id, res.verdict, res.message, fig));
    KG_TRY(drv_push(run, g, d, &res));
    res.data = NULL;
cleanup:
    if (res.data && g->result_free)
        g->result_free(res.data);
    return rc;
}

int kg_run_gate(kg_run *run, const kg_registry *reg, const struct kg_gate *g, const void *opts,
                bool heading)
{
    int rc = 0, brc;
    void *st = NULL;
    char unavail[1024] = "";
    bool runs = run->env.dev || !(g->flags & KG_GATE_NEEDS_GPU);
    if (heading && !run->env.quiet)
        printf("\n== %s ==\n", g->name);
    brc = g->begin ? g->begin(&st, opts ? opts : g->opts_init, &run->env) : 0;
    if (brc == KG_EUNAVAILABLE) {
        snprintf(unavail, sizeof unavail, "%s", kg_error_last());
        if (!run->env.quiet)
            printf("kgate %s: %s\n", g->name, unavail);
    } else if (brc < 0) {
        return brc; /* the run's inputs are wrong: nothing was decided */
    }
    if (runs && !unavail[0] && !run->env.quiet && g->n_columns)
        drv_print_header(g);
    for (size_t i = 0; i < run->sel.n; i++)
        KG_TRY(drv_case(run, g, st, kg_registry_get(reg, run->sel.idx[i]),
                        unavail[0] ? unavail : NULL));
cleanup:
    if (g->end && brc != KG_EUNAVAILABLE) {
        int erc = g->end(st, &run->env, rc);
        if (rc == 0)
            rc = erc;
    }
    return rc;
}

void kg_run_counts(const kg_run *run, int counts[KG_VERDICT_N5])
{
    kg_report_counts(run->rep, counts);
}

int kg_run_summary(const kg_run *run)
{
    int n[KG_VERDICT_N];
    kg_report_counts_full(run->rep, n);
    printf("%s%s: %d passed, %d failed, %d errors, %d skipped, %d warnings",
           strcmp(run->command, "run") == 0 ? "\n" : "", run->command,
           n[KG_VERDICT_PASS] + n[KG_VERDICT_WARN], n[KG_VERDICT_FAIL], n[KG_VERDICT_ERROR],
           n[KG_VERDICT_SKIP], n[KG_VERDICT_WARN]);
    if (n[KG_VERDICT_XFAIL] || n[KG_VERDICT_XPASS])
        printf(", %d expected failures (XFAIL), %d unexpected passes (XPASS)",
               n[KG_VERDICT_XFAIL], n[KG_VERDICT_XPASS]);
    printf("\n");
    return kg_exit_code_for_counts(n);
}

int kg_run_write(kg_run *run)
{
    int rc = 0;
    if (!run->opts.report_path)
        return 0;
    KG_TRY(kg_report_write(run->rep, run->opts.report_path));
    printf("report: %s\n", run->opts.report_path);
cleanup:
    return rc;
}

int kg_run_finish(kg_run *run, int rc)
{
    int code;
    if (rc < 0 || !run->rep)
        return rc < 0 ? kg_cli_fail(rc) : KG_EXIT_PASS;
    code = kg_run_summary(run);
    rc = kg_run_write(run);
    return rc < 0 ? kg_cli_fail(rc) : code;
}

void kg_run_free(kg_run *run)
{
    for (size_t i = 0; i < run->n_rows; i++)
        if (run->rows[i].res.data && run->rows[i].gate->result_free)
            run->rows[i].gate->result_free(run->rows[i].res.data);
    free(run->rows);
    kg_report_free(run->rep);
    kg_selection_free(&run->sel);
    memset(run, 0, sizeof *run);
}
