/* kgate: the gates over the built-in reference kernels. */
#include "kgate/kgate.h"

int kg_reference_cases_register(kg_registry *reg);

int main(int argc, char **argv)
{
    kg_registry *reg = NULL;
    int rc = kg_registry_new(&reg);
    if (rc == 0)
        rc = kg_reference_cases_register(reg);
    return kg_cli_main(reg, rc, argc, argv);
}
