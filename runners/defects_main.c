/* kgate-defects: the same command line over the defect catalogue (kernels/defects/): every
 * case carries one planted defect and names the gate that must catch it. Built again as
 * kgate-ab-base and kgate-ab-head with KG_RUNNER_CASES naming the A/B proof's cases
 * (scripts/ab-proof.sh): two builds of one runner, the head's kernels 2% slower. */
#include "kgate/kgate.h"

#ifndef KG_RUNNER_CASES
#define KG_RUNNER_CASES kg_defect_cases_register
#endif

int KG_RUNNER_CASES(kg_registry *reg);

int main(int argc, char **argv)
{
    kg_registry *reg = NULL;
    int rc = kg_registry_new(&reg);
    if (rc == 0)
        rc = KG_RUNNER_CASES(reg);
    return kg_cli_main(reg, rc, argc, argv);
}
