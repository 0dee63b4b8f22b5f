/* A kg_run filled the way the driver fills it, without a GPU (test_advance_run.c,
 * test_counters_production.c): two cases whose hooks are never called, and add_row, which
 * appends one typed row and its report row (from the gate's figures hook). */
#ifndef KG_TEST_FAKE_RUN_H
#define KG_TEST_FAKE_RUN_H

#include <stdio.h>
#include <stdlib.h>
#include "driver/driver.h"
#include "kg_test.h"

static int t_setup(const kg_setup_args *a, void **s, kg_case_io *io)
{
    (void)a, (void)s, (void)io;
    return KG_EINTERNAL;
}
static int t_launch(void *s, cudaStream_t st)
{
    (void)s, (void)st;
    return KG_EINTERNAL;
}
static int t_ref(void *s, cudaStream_t st, void *r)
{
    (void)s, (void)st, (void)r;
    return KG_EINTERNAL;
}

static const kg_case_desc cases[] = {
    { .id = "op/a", .op = "op", .setup = t_setup, .launch = t_launch, .reference = t_ref },
    { .id = "op/b", .op = "op", .setup = t_setup, .launch = t_launch, .reference = t_ref },
};

static void add_row(kg_run *run, const struct kg_gate *g, size_t c, kg_verdict v, void *data)
{
    kg_case_result res = { .verdict = v, .data = data };
    snprintf(res.message, sizeof res.message, "test");
    cJSON *fig = data && g->figures ? g->figures(&cases[c], &res) : NULL;
    kg_report_add(run->rep, g->name, cases[c].id, v, res.message, fig);
    if (run->n_rows == run->cap_rows) {
        run->cap_rows = run->cap_rows ? 2 * run->cap_rows : 16;
        run->rows = realloc(run->rows, run->cap_rows * sizeof *run->rows);
        if (!run->rows) {
            fprintf(stderr, "add_row: out of memory\n");
            exit(1);
        }
    }
    run->rows[run->n_rows++] = (kg_run_row){ .gate = g, .desc = &cases[c], .res = res };
}

#endif
