/* The hot-path gate's printer: report figures, table cells and the failure detail, all from
 * the typed kg_hotpath_result that hotpath.c measured. */
#include <stdint.h>
#include <string.h>
#include "hotpath/hotpath.h"

static void hpf_determinism(cJSON *fig, const kg_hp_determinism *d)
{
    cJSON *o = cJSON_AddObjectToObject(fig, "determinism");
    cJSON_AddNumberToObject(o, "runs", d->runs);
    cJSON_AddNumberToObject(o, "mismatched_runs", d->mismatched);
    if (d->first_run > 0) {
        cJSON_AddNumberToObject(o, "first_mismatch_run", d->first_run);
        cJSON_AddNumberToObject(o, "first_mismatch_byte", (double)d->first_byte);
    }
    cJSON_AddBoolToObject(o, "pass", d->pass);
}

static void hpf_calls(cJSON *fig, const kg_hp_calls *c)
{
    cJSON *o = cJSON_AddObjectToObject(fig, "calls");
    cJSON_AddNumberToObject(o, "observed_launches", c->observed_launches);
    cJSON_AddNumberToObject(o, "api_calls", (double)c->api_calls);
    cJSON *arr = cJSON_AddArrayToObject(o, "forbidden");
    for (size_t i = 0; arr && i < c->n; i++) {
        const kg_cw_violation *v = &c->v[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "api", v->api);
        if (v->via[0])
            cJSON_AddStringToObject(e, "via", v->via);
        cJSON_AddStringToObject(e, "category", kg_cw_category_name(v->category));
        if (v->detail[0])
            cJSON_AddStringToObject(e, "detail", v->detail);
        cJSON_AddNumberToObject(e, "count", (double)v->count);
        cJSON_AddItemToObject(e, "backtrace", kg_cw_backtrace_json(v));
        cJSON_AddItemToArray(arr, e);
    }
    cJSON_AddBoolToObject(o, "pass", c->pass);
}

static void hpf_batch(cJSON *fig, const kg_hp_batch *b)
{
    cJSON *o = cJSON_AddObjectToObject(fig, "batch_invariance");
    cJSON_AddBoolToObject(o, "checked", b->checked);
    if (!b->checked)
        return;
    cJSON_AddNumberToObject(o, "max_batch", b->max_batch);
    cJSON_AddNumberToObject(o, "row_bytes", (double)b->row_bytes);
    if (b->failed_batch) {
        cJSON_AddNumberToObject(o, "failed_batch", b->failed_batch);
        cJSON_AddNumberToObject(o, "failed_row", (double)b->failed_row);
    }
    cJSON_AddBoolToObject(o, "pass", b->pass);
}

static void hpf_graph(cJSON *fig, const kg_hp_graph *g)
{
    cJSON *o = cJSON_AddObjectToObject(fig, "graph");
    cJSON_AddStringToObject(o, "stage", g->stage ? g->stage : "ok");
    if (g->cuda_error[0])
        cJSON_AddStringToObject(o, "cuda_error", g->cuda_error);
    if (g->detail[0])
        cJSON_AddStringToObject(o, "detail", g->detail);
    else
        cJSON_AddNumberToObject(o, "replays", g->replays);
    cJSON_AddBoolToObject(o, "pass", g->pass);
}

cJSON *kg_hotpath_figures(const kg_case_desc *d, const kg_case_result *res)
{
    const kg_hotpath_result *r = res->data;
    cJSON *fig = cJSON_CreateObject();
    KG_UNUSED(d);
    if (!fig)
        return NULL;
    if (r->det.done)
        hpf_determinism(fig, &r->det);
    if (r->calls.done)
        hpf_calls(fig, &r->calls);
    if (r->batch.done)
        hpf_batch(fig, &r->batch);
    if (r->graph.done)
        hpf_graph(fig, &r->graph);
    return fig;
}

void kg_hotpath_detail(FILE *out, const kg_case_desc *d, const kg_case_result *res)
{
    const kg_hotpath_result *r = res->data;
    KG_UNUSED(d);
    fprintf(out, "    %s\n", res->message);
    if (!r || r->calls.n == 0)
        return;
    cJSON *bt = kg_cw_backtrace_json(&r->calls.v[0]);
    const cJSON *it;
    int k = 0;
    fprintf(out, "    first forbidden call %s, host backtrace:\n", r->calls.v[0].api);
    cJSON_ArrayForEach(it, bt)
    {
        if (k++ == 12)
            break;
        fprintf(out, "      %s\n", cJSON_GetStringValue(it));
    }
    cJSON_Delete(bt);
}

static const char *hpf_word(bool done, bool checked, bool pass)
{
    return !done ? "-" : !checked ? "n/a" : pass ? "ok" : "FAIL";
}

static void hpf_cell_calls(char *b, size_t n, const kg_case_desc *d, const kg_case_result *res,
                           size_t l)
{
    const kg_hotpath_result *r = res->data;
    KG_UNUSED(d), KG_UNUSED(l);
    snprintf(b, n, "%s", hpf_word(r->calls.done, true, r->calls.pass));
}

static void hpf_cell_graph(char *b, size_t n, const kg_case_desc *d, const kg_case_result *res,
                           size_t l)
{
    const kg_hotpath_result *r = res->data;
    KG_UNUSED(d), KG_UNUSED(l);
    snprintf(b, n, "%s", hpf_word(r->graph.done, true, r->graph.pass));
}

static void hpf_cell_determ(char *b, size_t n, const kg_case_desc *d, const kg_case_result *res,
                            size_t l)
{
    const kg_hotpath_result *r = res->data;
    KG_UNUSED(d), KG_UNUSED(l);
    snprintf(b, n, "%s", hpf_word(r->det.done, true, r->det.pass));
}

static void hpf_cell_batch(char *b, size_t n, const kg_case_desc *d, const kg_case_result *res,
                           size_t l)
{
    const kg_hotpath_result *r = res->data;
    KG_UNUSED(d), KG_UNUSED(l);
    snprintf(b, n, "%s", hpf_word(r->batch.done, r->batch.checked, r->batch.pass));
}

const kg_gate_column kg_hotpath_columns[KG_HOTPATH_N_COLUMNS] = {
    KG_COL_CASE(-46),
    KG_COL_VERDICT("hotpath", -7),
    { .key = "calls", .header = "calls", .width = -6, .cell = hpf_cell_calls },
    { .key = "graph", .header = "graph", .width = -6, .cell = hpf_cell_graph },
    { .key = "determinism", .header = "determ", .width = -6, .cell = hpf_cell_determ },
    { .key = "batch_invariance", .header = "batch", .width = -6, .cell = hpf_cell_batch },
};
