/* The marks side of `kgate <gate>` and `run` for every gate with marks hooks (gate.h): such a
 * gate decides against marks it never loads itself (they live a layer above it); the command
 * layer loads them into the gate's slots, and --save-marks merges the marks its typed rows set. */
#include <stdio.h>
#include <string.h>
#include <time.h>
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
        return KG_ERR(KG_EINVAL,
                      "--save-marks %s: would rewrite the marks this run is "
                      "compared against",
                      save_marks);
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

int kg_cli_marks_prepare(kg_cli_marks *b, const struct kg_gate *g, void *opts)
{
    int rc = 0;
    kg_gate_marks_slots sl;
    memset(b, 0, sizeof *b);
    kg_marks_source_set_file(&b->src, NULL);
    g->marks->slots(opts, &sl);
    if (sl.ref && *sl.ref) { /* the marks branch, never the file the PR could edit */
        KG_TRY(kg_marks_load_ref(&b->marks, ".", *sl.ref, *sl.path, &b->src));
        snprintf(b->shown, sizeof b->shown, "%s:%s", *sl.ref, b->src.path);
        *sl.path = b->shown;
        *sl.lookup = kg_cli_marks_lookup;
        *sl.marks = b->marks;
    } else if ((*sl.path = kg_marks_path_default(*sl.path))) {
        kg_marks_source_set_file(&b->src, *sl.path);
        KG_TRY(kg_marks_load(&b->marks, *sl.path));
        *sl.lookup = kg_cli_marks_lookup;
        *sl.marks = b->marks;
    }
    KG_TRY(kg_cli_save_marks_check(*sl.path, *sl.save));
cleanup:
    return rc;
}

void kg_cli_marks_share(const kg_cli_marks *b, const struct kg_gate *g, void *opts,
                        const char *path)
{
    kg_gate_marks_slots sl;
    if (!g->marks || !b->marks)
        return;
    g->marks->slots(opts, &sl);
    *sl.path = path;
    *sl.lookup = kg_cli_marks_lookup;
    *sl.marks = b->marks;
}

void kg_cli_marks_source(const kg_cli_marks *b, const kg_run *run)
{
    kg_report_set_extra(run->rep, KG_RK_MARKS_SOURCE, kg_marks_source_json(&b->src));
}

/* Merge the marks of g's typed rows of the run into b->save; a mark of another k or power
 * state stays as it was (named, counted in *n_skipped). */
static int gm_merge_rows(kg_cli_marks *b, const kg_run *run, const struct kg_gate *g,
                         const kg_mark *stamp, int *n_skipped)
{
    int rc = 0;
    kg_mark mk[KG_GATE_MARKS_MAX];
    for (size_t i = 0; i < run->n_rows; i++) {
        const kg_run_row *row = &run->rows[i];
        if (row->gate != g || !row->res.data)
            continue;
        size_t n = g->marks->row_marks(mk, KG_ARRAY_LEN(mk), row->desc, row->res.data, stamp);
        for (size_t k = 0; k < n; k++) {
            rc = kg_marks_merge(b->save, &mk[k]);
            if (rc == KG_ECONFLICT) {
                printf("%s: --save-marks: %s\n", g->name, kg_error_last());
                rc = 0;
                (*n_skipped)++;
            }
            KG_TRY(rc);
        }
    }
cleanup:
    return rc;
}

int kg_cli_marks_save(kg_cli_marks *b, const kg_run *run, const struct kg_gate *g, void *opts)
{
    int rc = 0, n_skipped = 0;
    kg_cli_mark_stamp st;
    kg_gate_marks_slots sl;
    char set_by[160];
    g->marks->slots(opts, &sl);
    if (sl.ref) /* a gate that may read its marks at a ref says where they came from */
        kg_cli_marks_source(b, run);
    if (!*sl.save || !run->env.dev)
        return 0;
    KG_TRY(kg_cli_save_marks_open(&b->save, &st, *sl.save, run));
    snprintf(set_by, sizeof set_by, "kgate %s --save-marks (diagnostic)", g->name);
    const kg_mark stamp = { .commit = (char *)kg_report_commit(run->rep),
                            .date = st.date,
                            .run_id = (char *)kg_report_run_id(run->rep),
                            .driver = st.driver,
                            .cuda = st.cuda,
                            .set_by = set_by };
    KG_TRY(gm_merge_rows(b, run, g, &stamp, &n_skipped));
    KG_TRY(kg_marks_save(b->save, *sl.save));
    if (!run->env.quiet || n_skipped)
        printf("%s: marks of this run merged into %s%s\n", g->name, *sl.save,
               n_skipped ? " (except the marks named above)" : "");
cleanup:
    return rc;
}

void kg_cli_marks_free(kg_cli_marks *b)
{
    kg_marks_free(b->marks);
    kg_marks_free(b->save);
    memset(b, 0, sizeof *b);
}
