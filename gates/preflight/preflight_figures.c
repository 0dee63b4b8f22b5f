/* The preflight gate's printer: report figures and table lines from the typed rows. */
#include <stdio.h>
#include <string.h>
#include "preflight/preflight_rows.h"
#include "core/report_keys.h"

static cJSON *pff_row_json(const kg_pf_row *r)
{
    char arch[16];
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    snprintf(arch, sizeof arch, "sm_%d", r->arch);
    cJSON_AddStringToObject(o, KG_FIG_PF_KERNEL, r->kernel);
    cJSON_AddStringToObject(o, KG_FIG_PF_SYMBOL, r->symbol);
    cJSON_AddStringToObject(o, KG_FIG_PF_ARCH, arch);
    cJSON_AddStringToObject(o, KG_FIG_PF_PATH, r->runtime ? "runtime" : "static");
    cJSON_AddStringToObject(o, KG_FIG_PF_VERDICT, kg_verdict_name(r->v));
    cJSON_AddStringToObject(o, KG_FIG_PF_REASONS, r->reasons);
    if (r->v == KG_VERDICT_ERROR && !r->symbol[0])
        return o;
    cJSON_AddNumberToObject(o, KG_FIG_PF_REGISTERS, r->regs);
    cJSON_AddNumberToObject(o, KG_FIG_PF_LOCAL_BYTES, r->local_bytes);
    cJSON_AddNumberToObject(o, KG_FIG_PF_STATIC_SMEM, r->static_smem);
    cJSON_AddNumberToObject(o, KG_FIG_PF_CONST_BYTES, r->const_bytes);
    cJSON_AddNumberToObject(o, KG_FIG_PF_MAX_THREADS, r->max_threads);
    if (r->runtime) {
        cJSON_AddNumberToObject(o, KG_FIG_PF_PTX_VERSION, r->ptx_version);
        cJSON_AddNumberToObject(o, KG_FIG_PF_BINARY_VERSION, r->binary_version);
    }
    cJSON_AddNumberToObject(o, KG_FIG_PF_BLOCK_THREADS, r->block_threads);
    cJSON_AddNumberToObject(o, KG_FIG_PF_DYNAMIC_SMEM, (double)r->dynamic_smem);
    cJSON_AddNumberToObject(o, KG_FIG_PF_BLOCKS_PER_SM, r->blocks_per_sm);
    cJSON_AddNumberToObject(o, KG_FIG_PF_CALC_BLOCKS_PER_SM, r->occ.blocks_per_sm);
    cJSON_AddNumberToObject(o, KG_FIG_PF_ACTIVE_WARPS, r->occ.active_warps);
    cJSON_AddNumberToObject(o, KG_FIG_PF_OCCUPANCY, r->occ.occupancy);
    cJSON_AddStringToObject(o, KG_FIG_PF_LIMITER, kg_limiter_name(r->occ.limiter));
    cJSON_AddStringToObject(o, KG_FIG_PF_LIMITER_WORDS, r->occ.words);
    cJSON_AddNumberToObject(o, KG_FIG_PF_REG_HEADROOM, r->occ.reg_headroom);
    if (r->has_base) {
        cJSON *b = cJSON_AddObjectToObject(o, KG_FIG_PF_BASELINE);
        cJSON_AddNumberToObject(b, KG_FIG_PF_REGISTERS, r->base_regs);
        cJSON_AddNumberToObject(b, KG_FIG_PF_BLOCKS_PER_SM, r->base_blocks);
    } else {
        cJSON_AddNullToObject(o, KG_FIG_PF_BASELINE);
    }
    if (r->has_allow)
        cJSON_AddNumberToObject(o, KG_FIG_PF_ALLOWLISTED_LOCAL, r->allow_local);
    if (r->runtime) {
        cJSON *g = cJSON_AddObjectToObject(o, KG_FIG_PF_STATIC_AGREEMENT);
        cJSON_AddBoolToObject(g, KG_FIG_PF_STATIC_FOUND, r->have_static);
        if (r->have_static) {
            cJSON_AddBoolToObject(g, KG_FIG_PF_AGREE, r->agree);
            cJSON_AddNumberToObject(g, KG_FIG_PF_STATIC_REGISTERS, r->s_regs);
            cJSON_AddNumberToObject(g, KG_FIG_PF_STATIC_LOCAL_BYTES, r->s_local);
            cJSON_AddNumberToObject(g, KG_FIG_PF_STATIC_SMEM, r->s_smem);
            cJSON_AddNumberToObject(g, KG_FIG_PF_STATIC_BLOCKS_PER_SM, r->s_blocks);
        }
    }
    return o;
}

cJSON *kg_pf_figures(const kg_case_desc *d, const kg_case_result *res)
{
    const kg_preflight_result *p = res->data;
    cJSON *fig = cJSON_CreateObject(),
          *list = fig ? cJSON_AddArrayToObject(fig, KG_FIG_PF_KERNELS) : NULL;
    KG_UNUSED(d);
    if (!list) {
        cJSON_Delete(fig);
        return NULL;
    }
    cJSON_AddStringToObject(fig, KG_FIG_PF_PATH, p->path);
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
    { .key = KG_FIG_PF_KERNELS,
      .header = "kernel                         arch   via regs  local    smem "
                "blk   occ verd  limiter | reasons",
      .cell = pff_cell_row },
};
