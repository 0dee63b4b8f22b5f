/* Registration of the planted-defect cases (selftest runner only). */
#include "../cases.h"

extern "C" int kg_defect_cases_register(kg_registry *reg);

extern "C" int kg_defect_cases_register(kg_registry *reg)
{
    return kg_registry_add_all(reg, kg_parity_defect_cases, kg_parity_defect_n_cases);
}
