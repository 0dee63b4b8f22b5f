/* The hot-path gate's printer: report figures, table cells and the failure detail, all from
 * the typed kg_hotpath_result that hotpath.c measured. */
#include <stdint.h>
#include <string.h>
#include "hotpath/hotpath.h"
#include "core/report_keys.h"

static void hpf_determinism(cJSON *fig, const kg_hp_determinism *d)
{
    cJSON *o = cJSON_AddObjectToObject(fig, KG_FIG_HP_DETERMINISM);
    cJSON_AddNumberToObject(o, KG_FIG_HP_RUNS, d->runs);
    cJSON_AddNumberToObject(o, KG_FIG_HP_MISMATCHED_RUNS, d->mismatched);
    if (d->first_run > 0) {
        cJSON_AddNumberToObject(o, KG_FIG_HP_FIRST_MISMATCH_RUN, d->first_run);
        cJSON_AddNumberToObject(o, KG_FIG_HP_FIRST_MISMATCH_BYTE, (double)d->first_byte);
    }
    cJSON_AddBoolToObject(o, KG_FIG_HP_PASS, d->pass);
}

static void hpf_um(cJSON *calls, const kg_um_counts *u)
{
    cJSON *o = cJSON_AddObjectToObject(calls, KG_FIG_HP_UM);
    cJSON_AddBoolToObject(o, KG_FIG_HP_UM_AVAILABLE, u->available);
    if (u->why[0])
        cJSON_AddStringToObject(o, KG_FIG_HP_NOTE, u->why);
    if (!u->available && !u->records)
        return;
    cJSON_AddNumberToObject(o, KG_FIG_HP_UM_HTOD, (double)u->htod_bytes);
    cJSON_AddNumberToObject(o, KG_FIG_HP_UM_DTOH, (double)u->dtoh_bytes);
    cJSON_AddNumberToObject(o, KG_FIG_HP_UM_GPU_FAULTS, (double)u->gpu_faults);
    if (u->cpu_faults_counted)
        cJSON_AddNumberToObject(o, KG_FIG_HP_UM_CPU_FAULTS, (double)u->cpu_faults);
}

static void hpf_calls(cJSON *fig, const kg_hp_calls *c)
{
    cJSON *o = cJSON_AddObjectToObject(fig, KG_FIG_HP_CALLS);
    cJSON_AddNumberToObject(o, KG_FIG_HP_OBSERVED_LAUNCHES, c->observed_launches);
    cJSON_AddNumberToObject(o, KG_FIG_HP_API_CALLS, (double)c->api_calls);
    cJSON *arr = cJSON_AddArrayToObject(o, KG_FIG_HP_FORBIDDEN);
    for (size_t i = 0; arr && i < c->n; i++) {
        const kg_cw_violation *v = &c->v[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, KG_FIG_HP_API, v->api);
        if (v->via[0])
            cJSON_AddStringToObject(e, KG_FIG_HP_VIA, v->via);
        cJSON_AddStringToObject(e, KG_FIG_HP_CATEGORY, kg_cw_category_name(v->category));
        if (v->detail[0])
            cJSON_AddStringToObject(e, KG_FIG_HP_DETAIL, v->detail);
        cJSON_AddNumberToObject(e, KG_FIG_HP_COUNT, (double)v->count);
        cJSON_AddItemToObject(e, KG_FIG_HP_BACKTRACE, kg_cw_backtrace_json(v));
        cJSON_AddItemToArray(arr, e);
    }
    hpf_um(o, &c->um);
    cJSON_AddBoolToObject(o, KG_FIG_HP_PASS, c->pass);
}

static void hpf_launch_configs(cJSON *fig, const kg_case_desc *d, const kg_hp_launch_config *l)
{
    cJSON *o = cJSON_AddObjectToObject(fig, KG_FIG_HP_LAUNCH_CONFIGS);
    cJSON *arr = cJSON_AddArrayToObject(o, KG_FIG_HP_LC_OBSERVED);
    for (size_t i = 0; arr && i < l->n_rows; i++) {
        const kg_hp_lc_row *r = &l->rows[i];
        const kg_kernel_ref *k = &d->kernels[r->decl];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, KG_FIG_HP_LC_KERNEL, k->name ? k->name : "?");
        cJSON_AddNumberToObject(e, KG_FIG_HP_LC_THREADS, r->threads);
        cJSON_AddNumberToObject(e, KG_FIG_HP_LC_SMEM, (double)r->smem);
        cJSON_AddNumberToObject(e, KG_FIG_HP_LC_LAUNCHES, (double)r->count);
        cJSON_AddNumberToObject(e, KG_FIG_HP_LC_DECL_THREADS, k->block_threads);
        cJSON_AddNumberToObject(e, KG_FIG_HP_LC_DECL_SMEM, (double)k->dynamic_smem);
        cJSON_AddBoolToObject(e, KG_FIG_HP_LC_MATCH, r->match);
        cJSON_AddItemToArray(arr, e);
    }
    cJSON_AddNumberToObject(o, KG_FIG_HP_LC_UNDECLARED, (double)l->undeclared);
    if (l->dropped)
        cJSON_AddNumberToObject(o, KG_FIG_HP_LC_DROPPED, (double)l->dropped);
    if (l->note[0])
        cJSON_AddStringToObject(o, KG_FIG_HP_NOTE, l->note);
    cJSON_AddBoolToObject(o, KG_FIG_HP_PASS, l->pass);
}

static void hpf_batch(cJSON *fig, const kg_hp_batch *b)
{
    cJSON *o = cJSON_AddObjectToObject(fig, KG_FIG_HP_BATCH);
    cJSON_AddBoolToObject(o, KG_FIG_HP_CHECKED, b->checked);
    if (!b->checked)
        return;
    cJSON_AddNumberToObject(o, KG_FIG_HP_MAX_BATCH, b->max_batch);
    cJSON_AddNumberToObject(o, KG_FIG_HP_ROW_BYTES, (double)b->row_bytes);
    if (b->failed_batch) {
        cJSON_AddNumberToObject(o, KG_FIG_HP_FAILED_BATCH, b->failed_batch);
        cJSON_AddNumberToObject(o, KG_FIG_HP_FAILED_ROW, (double)b->failed_row);
    }
    cJSON_AddBoolToObject(o, KG_FIG_HP_PASS, b->pass);
}

static void hpf_graph(cJSON *fig, const kg_hp_graph *g)
{
    cJSON *o = cJSON_AddObjectToObject(fig, KG_FIG_HP_GRAPH);
    cJSON_AddStringToObject(o, KG_FIG_HP_STAGE, g->stage ? g->stage : "ok");
    if (g->cuda_error[0])
        cJSON_AddStringToObject(o, KG_FIG_HP_CUDA_ERROR, g->cuda_error);
    if (g->detail[0])
        cJSON_AddStringToObject(o, KG_FIG_HP_DETAIL, g->detail);
    else
        cJSON_AddNumberToObject(o, KG_FIG_HP_REPLAYS, g->replays);
    cJSON_AddBoolToObject(o, KG_FIG_HP_PASS, g->pass);
}

cJSON *kg_hotpath_figures(const kg_case_desc *d, const kg_case_result *res)
{
    const kg_hotpath_result *r = res->data;
    cJSON *fig = cJSON_CreateObject();
    if (!fig)
        return NULL;
    if (r->det.done)
        hpf_determinism(fig, &r->det);
    if (r->calls.done)
        hpf_calls(fig, &r->calls);
    if (r->lc.done && d)
        hpf_launch_configs(fig, d, &r->lc);
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
    cJSON_ArrayForEach(it, bt) {
        if (k++ == 12)
            break;
        fprintf(out, "      %s\n", cJSON_GetStringValue(it));
    }
    cJSON_Delete(bt);
}

/* "VOID": the check compared only poison (could not fail), see hotpath.c hp_vacuous. */
static const char *hpf_word(bool done, bool checked, bool pass, bool vacuous)
{
    return !done ? "-" : !checked ? "n/a" : pass ? "ok" : vacuous ? "VOID" : "FAIL";
}

static void hpf_cell_calls(char *b, size_t n, const kg_case_desc *d, const kg_case_result *res,
                           size_t l)
{
    const kg_hotpath_result *r = res->data;
    KG_UNUSED(d), KG_UNUSED(l);
    snprintf(b, n, "%s", hpf_word(r->calls.done, true, r->calls.pass, false));
}

static void hpf_cell_graph(char *b, size_t n, const kg_case_desc *d, const kg_case_result *res,
                           size_t l)
{
    const kg_hotpath_result *r = res->data;
    KG_UNUSED(d), KG_UNUSED(l);
    snprintf(b, n, "%s", hpf_word(r->graph.done, true, r->graph.pass, r->graph.vacuous));
}

static void hpf_cell_determ(char *b, size_t n, const kg_case_desc *d, const kg_case_result *res,
                            size_t l)
{
    const kg_hotpath_result *r = res->data;
    KG_UNUSED(d), KG_UNUSED(l);
    snprintf(b, n, "%s", hpf_word(r->det.done, true, r->det.pass, r->det.vacuous));
}

static void hpf_cell_batch(char *b, size_t n, const kg_case_desc *d, const kg_case_result *res,
                           size_t l)
{
    const kg_hotpath_result *r = res->data;
    KG_UNUSED(d), KG_UNUSED(l);
    snprintf(b, n, "%s",
             hpf_word(r->batch.done, r->batch.checked, r->batch.pass, r->batch.vacuous));
}

const kg_gate_column kg_hotpath_columns[KG_HOTPATH_N_COLUMNS] = {
    KG_COL_CASE(-46),
    KG_COL_VERDICT("hotpath", -7),
    { .key = KG_FIG_HP_CALLS, .header = "calls", .width = -6, .cell = hpf_cell_calls },
    { .key = KG_FIG_HP_GRAPH, .header = "graph", .width = -6, .cell = hpf_cell_graph },
    { .key = KG_FIG_HP_DETERMINISM, .header = "determ", .width = -6, .cell = hpf_cell_determ },
    { .key = KG_FIG_HP_BATCH, .header = "batch", .width = -6, .cell = hpf_cell_batch },
};
