/* The run's results: kg_run_record puts one into the report and keeps its typed row in
 * kg_run.rows (what run --production and the marks read back). */
#include <stdlib.h>
#include "driver/driver.h"

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

/* Record one result: the report row and the typed row (data taken over). */
int kg_run_record(kg_run *run, const struct kg_gate *g, const kg_case_desc *d, kg_case_result *res,
                  cJSON *fig)
{
    double ph[KG_PHASE_N];
    bool timed = kg_phase_times(g->name, d->id, ph);
    return kg_run_record_timed(run, g, d, res, fig, timed ? ph : NULL, run->opts.device);
}

int kg_run_record_timed(kg_run *run, const struct kg_gate *g, const kg_case_desc *d,
                        kg_case_result *res, cJSON *fig, const double *phase_s, int device)
{
    int rc = 0;
    KG_TRY(kg_report_add(run->rep, g->name, d->id, res->verdict, res->message, fig));
    if (phase_s) {
        kg_report_row_timing(run->rep, phase_s);
        kg_run_part_case(run, phase_s);
    }
    if (run->opts.n_devices > 1)
        kg_report_row_device(run->rep, device);
    KG_TRY(drv_push(run, g, d, res));
    res->data = NULL;
cleanup:
    if (res->data && g->result_free)
        g->result_free(res->data);
    res->data = NULL;
    return rc;
}
