/* The preflight gate's printer: report figures and table lines from the typed rows. */
#include <stdio.h>
#include <string.h>
#include "preflight/preflight_rows.h"

static cJSON *pff_row_json(const kg_pf_row *r)
{
    char arch[16];
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    snprintf(arch, sizeof arch, "sm_%d", r->arch);
    cJSON_AddStringToObject(o, "kernel", r->kernel);
    cJSON_AddStringToObject(o, "symbol", r->symbol);
    cJSON_AddStringToObject(o, "arch", arch);
    cJSON_AddStringToObject(o, "path", r->runtime ? "runtime" : "static");
    cJSON_AddStringToObject(o, "verdict", kg_verdict_name(r->v));
    cJSON_AddStringToObject(o, "reasons", r->reasons);
    if (r->v == KG_VERDICT_ERROR && !r->symbol[0])
        return o;
    cJSON_AddNumberToObject(o, "registers", r->regs);
    cJSON_AddNumberToObject(o, "local_bytes", r->local_bytes);
    cJSON_AddNumberToObject(o, "static_smem", r->static_smem);
    cJSON_AddNumberToObject(o, "const_bytes", r->const_bytes);
    cJSON_AddNumberToObject(o, "max_threads_per_block", r->max_threads);
    if (r->runtime) {
        cJSON_AddNumberToObject(o, "ptx_version", r->ptx_version);
        cJSON_AddNumberToObject(o, "binary_version", r->binary_version);
    }
    cJSON_AddNumberToObject(o, "block_threads", r->block_threads);
    cJSON_AddNumberToObject(o, "dynamic_smem", (double)r->dynamic_smem);
    cJSON_AddNumberToObject(o, "blocks_per_sm", r->blocks_per_sm);
    cJSON_AddNumberToObject(o, "calc_blocks_per_sm", r->occ.blocks_per_sm);
    cJSON_AddNumberToObject(o, "active_warps", r->occ.active_warps);
    cJSON_AddNumberToObject(o, "occupancy", r->occ.occupancy);
    cJSON_AddStringToObject(o, "limiter", kg_limiter_name(r->occ.limiter));
    cJSON_AddStringToObject(o, "limiter_words", r->occ.words);
    cJSON_AddNumberToObject(o, "reg_headroom", r->occ.reg_headroom);
    if (r->has_base) {
        cJSON *b = cJSON_AddObjectToObject(o, "baseline");
        cJSON_AddNumberToObject(b, "registers", r->base_regs);
        cJSON_AddNumberToObject(b, "blocks_per_sm", r->base_blocks);
    } else {
        cJSON_AddNullToObject(o, "baseline");
    }
    if (r->has_allow)
        cJSON_AddNumberToObject(o, "allowlisted_local_bytes", r->allow_local);
    if (r->runtime) {
        cJSON *g = cJSON_AddObjectToObject(o, "static_agreement");
        cJSON_AddBoolToObject(g, "static_found", r->have_static);
        if (r->have_static) {
            cJSON_AddBoolToObject(g, "agree", r->agree);
            cJSON_AddNumberToObject(g, "static_registers", r->s_regs);
            cJSON_AddNumberToObject(g, "static_local_bytes", r->s_local);
            cJSON_AddNumberToObject(g, "static_smem", r->s_smem);
            cJSON_AddNumberToObject(g, "static_blocks_per_sm", r->s_blocks);
        }
    }
    return o;
}

cJSON *kg_pf_figures(const kg_case_desc *d, const kg_case_result *res)
{
    const kg_preflight_result *p = res->data;
    cJSON *fig = cJSON_CreateObject(), *list = fig ? cJSON_AddArrayToObject(fig, "kernels") : NULL;
    KG_UNUSED(d);
    if (!list) {
        cJSON_Delete(fig);
        return NULL;
    }
    cJSON_AddStringToObject(fig, "path", p->path);
    for (size_t i = 0; i < p->n; i++)
        cJSON_AddItemToArray(list, pff_row_json(&p->rows[i]));
    return fig;
}

/* The kernel columns of one row: an unevaluated row shows its reasons only. */
static void pff_cell_row(char *b, size_t n, const kg_case_desc *d, const kg_case_result *res,
                         size_t line)
{
    const kg_pf_row *r = &((const kg_preflight_result *)res->data)->rows[line];
    char arch[16], occ[16];
    KG_UNUSED(d);
    snprintf(arch, sizeof arch, "sm_%d", r->arch);
    snprintf(occ, sizeof occ, "%.0f%%", r->occ.occupancy * 100);
    if (r->v == KG_VERDICT_ERROR && !r->symbol[0]) {
        snprintf(b, n, "%-30s %-6s %-5s %s %s", r->kernel, arch, r->runtime ? "rt" : "st",
                 kg_verdict_name(r->v), r->reasons);
        return;
    }
    snprintf(b, n, "%-30s %-6s %-3s %4d %6d %7d %3d %5s %-5s %s%s%s", r->kernel, arch,
             r->runtime ? "rt" : "st", r->regs, r->local_bytes, r->static_smem, r->blocks_per_sm,
             occ, kg_verdict_name(r->v), r->occ.words, r->reasons[0] ? " | " : "", r->reasons);
}

static void pff_cell_case(char *b, size_t n, const kg_case_desc *d, const kg_case_result *res,
                          size_t line)
{
    KG_UNUSED(res), KG_UNUSED(line);
    snprintf(b, n, "%s", d->id);
}

/* One line per kernel row; the header spells the kernel columns. */
const kg_gate_column kg_pf_columns[KG_PF_N_COLUMNS] = {
    { .header = "case", .width = -36, .cell = pff_cell_case },
    { .key = "kernels", .header = "kernel                         arch   via regs  local    smem "
                                  "blk   occ verd  limiter | reasons", .cell = pff_cell_row },
};
