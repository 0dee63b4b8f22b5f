/* "Where the time went" in the Markdown summary: the run's parts and its slowest cases, from
 * the report's timing (gates/driver/run_timing.c) and results[].timing (core/phase.c). */
#include <stdlib.h>
#include <string.h>
#include "report/export.h"

#define TM_SLOWEST 10

static double tm_num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* One seconds cell: empty below half a millisecond. */
static void tm_cell(kg_sbuf *b, double s)
{
    if (s >= 0.0005)
        kg_sbuf_printf(b, " %.3f |", s);
    else
        kg_sbuf_puts(b, " |");
}

static void tm_phase_cells(kg_sbuf *b, const cJSON *ph)
{
    for (size_t k = 0; k < KG_PHASE_N; k++)
        tm_cell(b, ph ? tm_num(ph, kg_report_phase_keys[k]) : 0);
}

static void tm_parts(kg_sbuf *b, const cJSON *timing)
{
    const cJSON *p;
    kg_sbuf_printf(b,
                   "### Where the time went\n\n%.1f s in all (wall clock of the runner).\n\n"
                   "| part | wall s | results | setup | prepare | reference | work | teardown "
                   "| gate begin | gate end |\n"
                   "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
                   tm_num(timing, KG_RK_TIMING_TOTAL));
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(timing, KG_RK_TIMING_PARTS)) {
        kg_sbuf_puts(b, "| ");
        kg_sbuf_md(b, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, KG_RK_TIMING_NAME)),
                   64);
        kg_sbuf_printf(b, " | %.2f | %.0f |", tm_num(p, KG_RK_TIMING_WALL),
                       tm_num(p, KG_RK_TIMING_CASES));
        tm_phase_cells(b, cJSON_GetObjectItemCaseSensitive(p, KG_RK_TIMING_PHASES));
        tm_cell(b, tm_num(p, KG_RK_TIMING_BEGIN)); /* a gate's own, outside every case */
        tm_cell(b, tm_num(p, KG_RK_TIMING_END));
        kg_sbuf_puts(b, "\n");
    }
}

int kg_export_slow_cmp(const kg_export_slow_key *a, const kg_export_slow_key *b)
{
    if (a->wall != b->wall)
        return a->wall < b->wall ? 1 : -1;
    int c = strcmp(a->case_id ? a->case_id : "", b->case_id ? b->case_id : "");
    if (!c)
        c = strcmp(a->gate ? a->gate : "", b->gate ? b->gate : "");
    return c ? c : (a->order > b->order) - (a->order < b->order);
}

static int tm_slower(const void *a, const void *b) { return kg_export_slow_cmp(a, b); }

/* A result's place in the slowest cases (wall seconds, case, gate, position). */
static kg_export_slow_key tm_key(const cJSON *r, size_t order)
{
    kg_export_slow_key k = {
        .wall = tm_num(cJSON_GetObjectItemCaseSensitive(r, KG_RES_TIMING), KG_RK_PHASE_WALL),
        .case_id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, KG_RES_CASE)),
        .gate = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, KG_RES_GATE)),
        .order = order,
        .item = r
    };
    return k;
}

static void tm_slowest(kg_sbuf *b, const cJSON *results)
{
    const cJSON *it;
    size_t n = 0, cap = (size_t)cJSON_GetArraySize(results);
    kg_export_slow_key *rows = cap ? malloc(cap * sizeof *rows) : NULL;
    if (!rows)
        return;
    cJSON_ArrayForEach(it, results) {
        if (!cJSON_GetObjectItemCaseSensitive(it, KG_RES_TIMING) || n >= cap)
            continue;
        rows[n] = tm_key(it, n);
        n++;
    }
    qsort(rows, n, sizeof *rows, tm_slower);
    if (n)
        kg_sbuf_printf(b,
                       "\nThe %zu slowest cases:\n\n| gate | case | wall s | setup | prepare | "
                       "reference | work | teardown |\n| --- | --- | ---: | ---: | ---: | "
                       "---: | ---: | ---: |\n",
                       n < TM_SLOWEST ? n : TM_SLOWEST);
    for (size_t i = 0; i < n && i < TM_SLOWEST; i++) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(rows[i].item, KG_RES_TIMING);
        kg_sbuf_puts(b, "| ");
        kg_sbuf_md(b, rows[i].gate, 32);
        kg_sbuf_puts(b, " | ");
        kg_sbuf_md_code(b, rows[i].case_id, 160);
        kg_sbuf_printf(b, " | %.3f |", tm_num(t, KG_RK_PHASE_WALL));
        tm_phase_cells(b, t);
        kg_sbuf_puts(b, "\n");
    }
    free(rows);
}

void kg_export_md_timing(kg_sbuf *b, const cJSON *report)
{
    const cJSON *timing = cJSON_GetObjectItemCaseSensitive(report, KG_RK_TIMING);
    if (!cJSON_IsObject(timing))
        return; /* a report from before timing, or a command that writes none */
    tm_parts(b, timing);
    tm_slowest(b, cJSON_GetObjectItemCaseSensitive(report, KG_RK_RESULTS));
    kg_sbuf_puts(b, "\n");
}
