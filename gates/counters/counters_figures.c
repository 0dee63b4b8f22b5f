/* The counters gate's report figures and console table (the measuring is in counters.c). */
#include <math.h>
#include <stdio.h>
#include "counters/counters.h"
#include "core/report_keys.h"

/* A finite number, else null (a counter this device does not have). */
static void cf_num(cJSON *o, const char *key, double v)
{
    cJSON_AddItemToObject(o, key, isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull());
}

/* The metrics of mark_moves, by name (what `marks advance --from-report` reads). */
static void cf_mark_moves(cJSON *fig, unsigned moves)
{
    cJSON *a = cJSON_AddArrayToObject(fig, KG_FIG_CT_MARK_MOVES);
    for (size_t i = 0; a && i < KG_CT_N_MARKS; i++)
        if (moves & kg_ct_mark_defs[i].bit)
            cJSON_AddItemToArray(a, cJSON_CreateString(kg_ct_mark_defs[i].metric));
}

static void cf_metrics(cJSON *fig, const kg_ct_counts *c)
{
    cJSON *m = cJSON_AddObjectToObject(fig, KG_FIG_CT_METRICS);
    for (int i = 0; m && i < KG_CT_N; i++)
        cf_num(m, kg_ct_metrics[i].key, c->have[i] ? c->v[i] : NAN);
}

cJSON *kg_counters_figures(const kg_case_desc *d, const kg_case_result *res)
{
    const kg_counters_row *b = res->data;
    cJSON *f;
    if (!b || !(f = cJSON_CreateObject()))
        return NULL;
    cJSON_AddStringToObject(f, KG_FIG_CT_DECISION, kg_ct_decision_name(b->v.decision));
    cJSON_AddStringToObject(f, KG_FIG_CT_WHY, b->v.why);
    cf_mark_moves(f, b->v.mark_moves);
    cJSON_AddStringToObject(f, KG_FIG_CT_DEVICE_CLASS, b->device_class);
    cJSON_AddNumberToObject(f, KG_FIG_CT_KERNELS, b->c.n_kernels);
    cJSON_AddNumberToObject(f, KG_FIG_CT_PASSES, (double)b->passes);
    cf_num(f, KG_FIG_CT_WALL, b->wall_s);
    cf_num(f, KG_FIG_CT_DECLARED_BYTES, b->declared_bytes);
    cf_num(f, KG_FIG_CT_DECLARED_FLOPS, b->declared_flops);
    cf_num(f, KG_FIG_CT_DRAM_BYTES, b->c.dram_bytes);
    cf_num(f, KG_FIG_CT_L2_BYTES, b->c.l2_bytes);
    cf_num(f, KG_FIG_CT_SYSMEM_BYTES, b->c.sysmem_bytes);
    cf_num(f, KG_FIG_CT_SYSMEM_READ, b->c.sysmem_read_bytes);
    cf_num(f, KG_FIG_CT_SYSMEM_WRITE, b->c.sysmem_write_bytes);
    cf_num(f, KG_FIG_CT_TENSOR_FLOPS, b->c.tensor_flops);
    cf_num(f, KG_FIG_CT_FLOPS, b->c.flops);
    cJSON_AddBoolToObject(f, KG_FIG_CT_FLOPS_PARTIAL, b->c.flops_partial);
    cf_num(f, KG_FIG_CT_INST, b->c.have[KG_CT_INST] ? b->c.v[KG_CT_INST] : NAN);
    cf_num(f, KG_FIG_CT_SPILL, b->c.spill);
    cf_num(f, KG_FIG_CT_TENSOR, b->c.tensor);
    cf_num(f, KG_FIG_CT_OCCUPANCY, b->c.have[KG_CT_OCCUPANCY] ? b->c.v[KG_CT_OCCUPANCY] : NAN);
    cf_num(f, KG_FIG_CT_BYTES_RATIO, b->v.bytes_ratio);
    if (b->v.bytes_basis)
        cJSON_AddStringToObject(f, KG_FIG_CT_BYTES_BASIS, b->v.bytes_basis);
    cf_num(f, KG_FIG_CT_FLOPS_RATIO, b->v.flops_ratio);
    cf_num(f, KG_FIG_CT_DRAM_RATIO, b->v.dram_ratio);
    cJSON_AddBoolToObject(f, KG_FIG_CT_BYTES_BINDING, d && d->bytes_binding);
    cJSON_AddBoolToObject(f, KG_FIG_CT_LAUNCH_EMPTY, b->launch_empty);
    cf_num(f, KG_FIG_CT_TIME, b->time_s);
    cf_num(f, KG_FIG_CT_AI, b->ai);
    cf_num(f, KG_FIG_CT_TFLOPS, b->tflops);
    cf_num(f, KG_FIG_CT_GBPS, b->gbps);
    if (b->bound[0])
        cJSON_AddStringToObject(f, KG_FIG_CT_BOUND, b->bound);
    cf_metrics(f, &b->c);
    return f;
}

static void cf_cell(char *buf, size_t n, double v, const char *fmt)
{
    if (isfinite(v))
        snprintf(buf, n, fmt, v);
    else
        snprintf(buf, n, "-");
}

#define CF_CELL(name, expr, fmt)                                                            \
    static void name(char *buf, size_t n, const kg_case_desc *d, const kg_case_result *res, \
                     size_t l)                                                              \
    {                                                                                       \
        const kg_counters_row *b = res->data;                                               \
        (void)d, (void)l;                                                                   \
        cf_cell(buf, n, b ? (expr) : NAN, fmt);                                             \
    }
CF_CELL(cf_dram, b->c.dram_bytes / 1e6, "%.3f")
/* the streaming check's ratio, else the excess check's DRAM / declared ("x" marks it) */
static void cf_ratio(char *buf, size_t n, const kg_case_desc *d, const kg_case_result *res,
                     size_t l)
{
    const kg_counters_row *b = res->data;
    (void)d, (void)l;
    if (b && isfinite(b->v.bytes_ratio))
        snprintf(buf, n, "%.2f", b->v.bytes_ratio);
    else if (b && isfinite(b->v.dram_ratio))
        snprintf(buf, n, "%.2fx", b->v.dram_ratio);
    else
        snprintf(buf, n, "-");
}
CF_CELL(cf_flops, b->c.flops / 1e6, "%.3f")
CF_CELL(cf_inst, b->c.v[KG_CT_INST] / 1e3, "%.1f")
CF_CELL(cf_spill, b->c.spill, "%.0f")
CF_CELL(cf_occ, b->c.v[KG_CT_OCCUPANCY], "%.1f")

static void cf_decision(char *buf, size_t n, const kg_case_desc *d, const kg_case_result *res,
                        size_t l)
{
    const kg_counters_row *b = res->data;
    (void)d, (void)l;
    snprintf(buf, n, "%s", b ? kg_ct_decision_name(b->v.decision) : "-");
}

const kg_gate_column kg_counters_columns[KG_COUNTERS_N_COLUMNS] = {
    KG_COL_CASE(-44),
    KG_COL_VERDICT("counters", -8),
    { .key = KG_FIG_CT_DECISION, .header = "decision", .width = -11, .cell = cf_decision },
    { .key = KG_FIG_CT_DRAM_BYTES, .header = "DRAM MB", .width = 9, .cell = cf_dram },
    { .key = KG_FIG_CT_BYTES_RATIO, .header = "meas/decl", .width = 9, .cell = cf_ratio },
    { .key = KG_FIG_CT_FLOPS, .header = "MFLOP", .width = 9, .cell = cf_flops },
    { .key = KG_FIG_CT_INST, .header = "kinst", .width = 9, .cell = cf_inst },
    { .key = KG_FIG_CT_SPILL, .header = "spill", .width = 6, .cell = cf_spill },
    { .key = KG_FIG_CT_OCCUPANCY, .header = "occ%", .width = 6, .cell = cf_occ },
};
