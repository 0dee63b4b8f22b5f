/* A gate begun in this process: begin, one case at a time (its table line printed), end (the
 * recording of a result into the run is rows.c). The in-process driver (driver.c) and the isolation
 * worker (worker.c) both run gates through this. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/report_keys.h"
#include "driver/driver.h"

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
        snprintf(cell, sizeof cell, "%-7s", kg_verdict_name(r->verdict));
        printf("%*s ", g->columns[0].width, d->id);
        kg_color_cell(stdout, cell);
        printf(" %s\n", r->message);
        return;
    }
    char padded[1200];
    for (size_t l = 0; l < lines; l++) {
        for (size_t c = 0; c < g->n_columns; c++) {
            drv_cell(cell, sizeof cell, &g->columns[c], d, r, l);
            /* The last column is free text: never pad it; only a verdict leading it is
             * coloured. */
            if (c + 1 == g->n_columns) {
                printf("%s", c ? " " : "");
                kg_color_cell(stdout, cell);
                continue;
            }
            snprintf(padded, sizeof padded, "%s%*s", c ? " " : "", g->columns[c].width, cell);
            kg_color_cell(stdout, padded); /* a verdict cell's word in colour (core/tty.c) */
        }
        printf("\n");
    }
    if (g->detail && r->verdict == KG_VERDICT_FAIL)
        g->detail(stdout, d, r);
}

/* Every case's xfail_gate names a gate of the table (the registry, below the table, cannot
 * know them): checked once the cases are registered, before any command runs. */
int kg_gates_check_cases(const kg_registry *reg)
{
    char names[256] = "";
    for (size_t i = 0; i < kg_registry_count(reg); i++) {
        const kg_case_desc *d = kg_registry_get(reg, i);
        if (!d->xfail_gate || kg_gate_find(d->xfail_gate))
            continue;
        for (size_t k = 0; k < kg_n_gates; k++) {
            size_t len = strlen(names);
            snprintf(names + len, sizeof names - len, "%s%s", k ? ", " : "", kg_gates[k]->name);
        }
        return KG_ERR(KG_EINVAL, "case '%s': xfail_gate '%.100s' is not a gate (%s)", d->id,
                      d->xfail_gate, names);
    }
    return 0;
}

/* A declared expected failure (kg_case_desc.xfail_gate) of this gate: FAIL becomes XFAIL (the
 * run passes), PASS or WARN becomes XPASS (the run fails, so the stale mark is removed). An
 * ERROR or SKIP decided nothing and stays. */
static void ses_xfail(const struct kg_gate *g, const kg_case_desc *d, kg_case_result *res)
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
        snprintf(msg, sizeof msg,
                 "passed, but the case declares an expected failure of %s "
                 "(%.200s): remove xfail_gate; %.700s",
                 g->name, d->xfail_reason, res->message);
    } else {
        return;
    }
    snprintf(res->message, sizeof res->message, "%s", msg);
}

/* ---- a gate begun in this process (in-process runs, and the isolation worker) ------------ */

int kg_session_begin(kg_gate_session *s, const struct kg_gate *g, const void *opts,
                     const kg_gate_env *env, bool header)
{
    bool runs = env->dev || !(g->flags & KG_GATE_NEEDS_GPU);
    memset(s, 0, sizeof *s);
    s->g = g;
    double t0 = kg_now_s();
    s->brc = g->begin ? g->begin(&s->st, opts ? opts : g->opts_init, env) : 0;
    s->begin_s = kg_now_s() - t0;
    if (s->brc == KG_EUNAVAILABLE) {
        snprintf(s->unavail, sizeof s->unavail, "%s", kg_error_last());
        if (!env->quiet)
            printf("kgate %s: %s\n", g->name, s->unavail);
    } else if (s->brc < 0) {
        return s->brc; /* the run's inputs are wrong: nothing was decided */
    }
    if (header && runs && !s->unavail[0] && !env->quiet && g->n_columns)
        drv_print_header(g);
    return 0;
}

/* A case's own failure is its verdict; only running out of memory is returned. */
int kg_session_case(kg_gate_session *s, const kg_case_desc *d, const kg_gate_env *env,
                    kg_case_result *res, cJSON **fig)
{
    int rc = 0;
    const struct kg_gate *g = s->g;
    *res = (kg_case_result){ .verdict = KG_VERDICT_ERROR };
    *fig = NULL;
    kg_phase_set(g->name, d->id, "run_case");
    if (s->unavail[0]) {
        snprintf(res->message, sizeof res->message, "%s", s->unavail);
    } else if (!env->dev && (g->flags & KG_GATE_NEEDS_GPU)) {
        res->verdict = KG_VERDICT_SKIP;
        snprintf(res->message, sizeof res->message, "no CUDA device");
    } else {
        rc = g->run_case(s->st, d, env, res);
        if (rc < 0) {
            res->verdict = KG_VERDICT_ERROR;
            snprintf(res->message, sizeof res->message, "%s", kg_error_last());
            (void)cudaGetLastError(); /* a non-sticky error must not leak into the next case */
        }
        if (rc == KG_ENOMEM)
            return rc;
        rc = 0;
        ses_xfail(g, d, res);
        if (!env->quiet)
            drv_print_row(g, d, res);
    }
    kg_phase_case_end();
    *fig = (res->data && g->figures) ? g->figures(d, res) : NULL;
    return rc;
}

int kg_session_end(kg_gate_session *s, const kg_gate_env *env, int rc)
{
    if (s->g && s->g->end && s->brc != KG_EUNAVAILABLE) {
        double t0 = kg_now_s();
        int erc = s->g->end(s->st, env, rc);
        s->end_s = kg_now_s() - t0;
        if (rc == 0)
            rc = erc;
    }
    s->g = NULL;
    return rc;
}

/* An interrupt: where the run stopped, into the run and its report (gate.h). */
int kg_run_stopped(kg_run *run, const char *fmt, ...)
{
    char where[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(where, sizeof where, fmt, ap);
    va_end(ap);
    run->incomplete = true;
    kg_report_set_extra(run->rep, KG_RK_STOPPED_AT, cJSON_CreateString(where));
    return KG_ERR(KG_EINTERNAL, "interrupted by %s in %s: the report is partial (incomplete)",
                  kg_interrupt_name(), where);
}
