/* The gates, listed once: `run` and `selftest` run them in this order, `kgate <gate>` finds
 * its gate here, and the top-level usage lists them. */
#include <string.h>
#include "driver/driver.h"

extern const struct kg_gate kg_gate_parity, kg_gate_preflight, kg_gate_hotpath, kg_gate_bench,
    kg_gate_counters;

const struct kg_gate *const kg_gates[] = { &kg_gate_parity, &kg_gate_preflight, &kg_gate_hotpath,
                                           &kg_gate_bench, &kg_gate_counters };
const size_t kg_n_gates = sizeof kg_gates / sizeof kg_gates[0];

const struct kg_gate *kg_gate_find(const char *name)
{
    for (size_t i = 0; name && i < kg_n_gates; i++)
        if (strcmp(kg_gates[i]->name, name) == 0)
            return kg_gates[i];
    return NULL;
}
