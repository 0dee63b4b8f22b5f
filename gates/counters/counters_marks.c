/* The counter marks a case keeps (counters.h, kg_ct_mark_defs): the metric, the report figure
 * it is read from, its direction. Shared by the figures, the production step and `marks advance
 * --from-report`; self-contained, so the report fuzzer links it alone. */
#include <math.h>
#include <string.h>
#include "core/report_keys.h"
#include "counters/counters.h"

const kg_ct_mark_def kg_ct_mark_defs[KG_CT_N_MARKS] = {
    { KG_CT_MV_DRAM, KG_CT_MARK_DRAM, KG_FIG_CT_DRAM_BYTES, KG_LOWER_IS_BETTER },
    { KG_CT_MV_INST, KG_CT_MARK_INST, KG_FIG_CT_INST, KG_LOWER_IS_BETTER },
    { KG_CT_MV_SPILL, KG_CT_MARK_SPILL, KG_FIG_CT_SPILL, KG_LOWER_IS_BETTER },
    { KG_CT_MV_OCC, KG_CT_MARK_OCC, KG_FIG_CT_OCCUPANCY, KG_HIGHER_IS_BETTER },
    { KG_CT_MV_TENSOR, KG_CT_MARK_TENSOR, KG_FIG_CT_TENSOR, KG_HIGHER_IS_BETTER },
    { KG_CT_MV_SYSMEM, KG_CT_MARK_SYSMEM, KG_FIG_CT_SYSMEM_BYTES, KG_LOWER_IS_BETTER },
};

int kg_ct_mark_index(const char *metric)
{
    for (int i = 0; metric && i < KG_CT_N_MARKS; i++)
        if (strcmp(metric, kg_ct_mark_defs[i].metric) == 0)
            return i;
    return -1;
}

double kg_ct_mark_value(const kg_ct_counts *c, size_t i)
{
    switch (kg_ct_mark_defs[i].bit) {
    case KG_CT_MV_DRAM: return c->dram_bytes;
    case KG_CT_MV_INST: return c->have[KG_CT_INST] ? c->v[KG_CT_INST] : NAN;
    case KG_CT_MV_SPILL: return c->spill;
    case KG_CT_MV_OCC: return c->have[KG_CT_OCCUPANCY] ? c->v[KG_CT_OCCUPANCY] : NAN;
    case KG_CT_MV_TENSOR: return c->tensor;
    default: return c->sysmem_bytes;
    }
}
