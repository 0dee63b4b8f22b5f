/* The marks side of `kgate counters` (and of `run`'s counters gate): the gate decides against
 * counter marks (dram_bytes_per_launch, inst_per_launch, ... keyed like bench marks by device
 * class, case and metric) that it never loads itself; they live a layer above it. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "counters/counters.h"
#include "cli/cli.h"

int kg_cli_counters_prepare(kg_marks **out, kg_counters_gate_opts *o)
{
    int rc = 0;
    *out = NULL;
    o->marks_path = kg_marks_path_default(o->marks_path);
    if (o->marks_path) {
        KG_TRY(kg_marks_load(out, o->marks_path));
        o->lookup = kg_cli_marks_lookup;
        o->marks = *out;
    }
cleanup:
    return rc;
}

void kg_cli_counters_share(kg_counters_gate_opts *o, const kg_marks *marks, const char *path)
{
    if (!o || !marks)
        return;
    o->marks_path = path;
    o->lookup = kg_cli_marks_lookup;
    o->marks = marks;
}

int kg_cli_counters_check_save(const kg_counters_gate_opts *o)
{
    return kg_cli_save_marks_check(o->marks_path, o->save_marks);
}

/* One counter of a row as a mark (only a positive, finite count: a count of 0, e.g. no
 * spills, is stored as no mark, which the decision reads as 0). */
static int cc_put(kg_marks *m, kg_mark *mk, const char *metric, double v, kg_direction dir)
{
    if (!isfinite(v) || !(v > 0))
        return 0;
    mk->metric = (char *)metric;
    mk->direction = dir;
    mk->value = mk->run_median = mk->ci_lo = mk->ci_hi = v;
    return kg_marks_merge(m, mk);
}

static int cc_row(kg_marks *m, const kg_counters_row *b, const kg_case_desc *d,
                  const kg_run *run, kg_cli_mark_stamp *st)
{
    int rc = 0;
    kg_mark mk;
    memset(&mk, 0, sizeof mk);
    mk.device_class = (char *)b->device_class;
    mk.case_id = (char *)d->id;
    mk.band_rel = 0; /* counters: the tolerance is the decision's, not a noise band */
    mk.samples = 1;
    mk.runs = 1;
    mk.commit = (char *)kg_report_commit(run->rep);
    mk.date = st->date;
    mk.run_id = (char *)kg_report_run_id(run->rep);
    mk.driver = st->driver;
    mk.cuda = st->cuda;
    mk.set_by = "kgate counters --save-marks (diagnostic)";
    for (size_t i = 0; i < KG_CT_N_MARKS; i++) /* every count: a diagnostic seed, no ratchet */
        KG_TRY(cc_put(m, &mk, kg_ct_mark_defs[i].metric, kg_ct_mark_value(&b->c, i),
                      kg_ct_mark_defs[i].direction));
cleanup:
    return rc;
}

int kg_cli_counters_save(const kg_run *run, const kg_counters_gate_opts *o)
{
    int rc = 0;
    kg_marks *m = NULL;
    kg_cli_mark_stamp st;
    if (!o->save_marks || !run->env.dev)
        return 0;
    KG_TRY(kg_cli_save_marks_open(&m, &st, o->save_marks, run));
    for (size_t i = 0; i < run->n_rows; i++) {
        const kg_run_row *row = &run->rows[i];
        if (row->gate == &kg_gate_counters && row->res.data)
            KG_TRY(cc_row(m, row->res.data, row->desc, run, &st));
    }
    KG_TRY(kg_marks_save(m, o->save_marks));
    if (!run->env.quiet)
        printf("counters: marks of this run merged into %s\n", o->save_marks);
cleanup:
    kg_marks_free(m);
    return rc;
}
