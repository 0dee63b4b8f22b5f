/* The marks side of `kgate bench` (and of `run`'s bench): the bench gate decides against marks
 * it never loads itself (they live a layer above it); --save-marks merges its typed rows. */
#include <string.h>
#include <time.h>
#include "bench/bench.h"
#include "cli/cli.h"
#include "core/report_keys.h"

const kg_mark *kg_cli_marks_lookup(const void *marks, const char *cls, const char *id,
                                  const char *metric)
{
    return kg_marks_find(marks, cls, id, metric);
}

int kg_cli_save_marks_check(const char *marks_path, const char *save_marks)
{
    int rc = 0;
    kg_marks *m = NULL;
    if (!save_marks)
        return 0;
    if (marks_path && strcmp(marks_path, save_marks) == 0)
        return KG_ERR(KG_EINVAL, "--save-marks %s: would rewrite the marks this run is "
                                 "compared against", save_marks);
    KG_TRY(kg_path_check_writable(save_marks));
    rc = kg_marks_load(&m, save_marks); /* an existing file must be valid: it is merged */
    kg_marks_free(m);
    if (rc == KG_ENOTFOUND)
        rc = 0;
cleanup:
    return rc;
}

int kg_cli_save_marks_open(kg_marks **m, kg_cli_mark_stamp *st, const char *save_marks,
                           const kg_run *run)
{
    time_t t = time(NULL);
    struct tm tm;
    int rc = kg_marks_load(m, save_marks);
    if (rc == KG_ENOTFOUND)
        rc = kg_marks_new(m);
    if (rc < 0)
        return rc;
    gmtime_r(&t, &tm);
    strftime(st->date, sizeof st->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(st->driver, sizeof st->driver, "%d.%d", run->dev.driver_version / 1000,
             (run->dev.driver_version % 1000) / 10);
    snprintf(st->cuda, sizeof st->cuda, "%d.%d", run->dev.runtime_version / 1000,
             (run->dev.runtime_version % 1000) / 10);
    return 0;
}

int kg_cli_bench_prepare(kg_cli_bench *b, kg_bench_gate_opts *o)
{
    int rc = 0;
    memset(b, 0, sizeof *b);
    kg_marks_source_set_file(&b->src, NULL);
    if (o->marks_ref) { /* the marks branch, never the file the PR could edit */
        KG_TRY(kg_marks_load_ref(&b->marks, ".", o->marks_ref, o->marks_path, &b->src));
        snprintf(b->shown, sizeof b->shown, "%s:%s", o->marks_ref, b->src.path);
        o->marks_path = b->shown;
        o->lookup = kg_cli_marks_lookup;
        o->marks = b->marks;
    } else if ((o->marks_path = kg_marks_path_default(o->marks_path))) {
        kg_marks_source_set_file(&b->src, o->marks_path);
        KG_TRY(kg_marks_load(&b->marks, o->marks_path));
        o->lookup = kg_cli_marks_lookup;
        o->marks = b->marks;
    }
    KG_TRY(kg_cli_save_marks_check(o->marks_path, o->save_marks));
cleanup:
    return rc;
}

/* The mark one row would set (strings borrowed; kg_marks_merge copies them). */
static void bc_row_mark(kg_mark *mk, const kg_bench_row *b, const kg_case_desc *d,
                        const kg_run *run, kg_cli_mark_stamp *st)
{
    const kg_summary *s = &b->r.sum;
    memset(mk, 0, sizeof *mk);
    mk->device_class = (char *)b->device_class;
    mk->case_id = (char *)d->id;
    mk->metric = (char *)b->metric;
    mk->direction = KG_LOWER_IS_BETTER;
    mk->value = mk->run_median = s->median;
    mk->ci_lo = s->ci_lo;
    mk->ci_hi = s->ci_hi;
    mk->band_rel = (s->ci_hi - s->ci_lo) / (2 * s->median);
    mk->samples = (int)b->r.kept;
    mk->runs = 1;
    mk->commit = (char *)kg_report_commit(run->rep);
    mk->date = st->date;
    mk->run_id = (char *)kg_report_run_id(run->rep);
    mk->driver = st->driver;
    mk->cuda = st->cuda;
    mk->set_by = "kgate bench --save-marks (diagnostic)";
    mk->kernels = b->kernels[0] ? (char *)b->kernels : NULL;
    /* What the row was measured with: a later run against this mark reuses k, and compares
     * only within its power state. */
    mk->k = b->v.run_k;
    mk->power_state = b->v.run_power_state[0] ? (char *)b->v.run_power_state : NULL;
    /* What users pay (issue #25): gated beside a replay-clock-normalised value. */
    mk->measured_median_us = b->v.run_measured;
    mk->measured_spread_rel = b->v.run_measured ? b->v.run_measured_spread : 0;
    mk->energy_per_launch_mj = b->v.run_energy;
    mk->energy_spread_rel = b->v.run_energy ? b->v.run_energy_spread : 0;
    if (b->v.processes >= 2) {
        mk->runs = b->v.processes;
        mk->env_lo = b->v.env_lo;
        mk->env_hi = b->v.env_hi;
    }
}

void kg_cli_bench_source(const kg_cli_bench *b, const kg_run *run)
{
    kg_report_set_extra(run->rep, KG_RK_MARKS_SOURCE, kg_marks_source_json(&b->src));
}

int kg_cli_bench_save(kg_cli_bench *b, const kg_run *run, const kg_bench_gate_opts *o)
{
    int rc = 0, n_skipped = 0;
    kg_cli_mark_stamp st;
    kg_cli_bench_source(b, run);
    if (!o->save_marks || !run->env.dev)
        return 0;
    KG_TRY(kg_cli_save_marks_open(&b->save, &st, o->save_marks, run));
    for (size_t i = 0; i < run->n_rows; i++) {
        const kg_run_row *row = &run->rows[i];
        kg_mark mk;
        if (row->gate != &kg_gate_bench || !row->res.data)
            continue;
        bc_row_mark(&mk, row->res.data, row->desc, run, &st);
        rc = kg_marks_merge(b->save, &mk);
        if (rc == KG_ECONFLICT) { /* another k or power state: that mark stays as it was */
            printf("bench: --save-marks: %s\n", kg_error_last());
            rc = 0;
            n_skipped++;
        }
        KG_TRY(rc);
    }
    KG_TRY(kg_marks_save(b->save, o->save_marks));
    if (!run->env.quiet || n_skipped)
        printf("bench: marks of this run merged into %s%s\n", o->save_marks,
               n_skipped ? " (except the marks named above)" : "");
cleanup:
    return rc;
}

void kg_cli_bench_free(kg_cli_bench *b)
{
    kg_marks_free(b->marks);
    kg_marks_free(b->save);
    memset(b, 0, sizeof *b);
}
