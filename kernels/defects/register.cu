/* Registration of the planted-defect cases (selftest runner only). */
#include "../cases.h"

extern "C" int kg_defect_cases_register(kg_registry *reg);
extern "C" int kg_preflight_defects_register(kg_registry *reg);
extern "C" int kg_hotpath_defects_register(kg_registry *reg);
extern "C" int kg_bench_defects_register(kg_registry *reg);
extern "C" int kg_fault_defects_register(kg_registry *reg);
extern "C" int kg_counters_defects_register(kg_registry *reg);
extern "C" int kg_fault_matrix_register(kg_registry *reg);

extern "C" int kg_defect_cases_register(kg_registry *reg)
{
    int rc = kg_registry_add_all(reg, kg_parity_defect_cases, kg_parity_defect_n_cases);
    if (rc == 0)
        rc = kg_preflight_defects_register(reg);
    if (rc == 0)
        rc = kg_hotpath_defects_register(reg);
    if (rc == 0)
        rc = kg_bench_defects_register(reg);
    if (rc == 0)
        rc = kg_fault_defects_register(reg);
    if (rc == 0)
        rc = kg_counters_defects_register(reg);
    if (rc == 0)
        rc = kg_fault_matrix_register(reg); /* KGATE_FAULT_MATRIX=1 only */
    return rc;
}
