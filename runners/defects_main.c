/* kgate-defects: the same command line over the defect catalogue (kernels/defects/): every
 * case carries one planted defect and names the gate that must catch it. */
#include "kgate/kgate.h"

int kg_defect_cases_register(kg_registry *reg);

int main(int argc, char **argv)
{
    kg_registry *reg = NULL;
    int rc = kg_registry_new(&reg);
    if (rc == 0)
        rc = kg_defect_cases_register(reg);
    return kg_cli_main(reg, rc, argc, argv);
}
