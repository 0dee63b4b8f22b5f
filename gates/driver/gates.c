/* The gates, listed once: `run` and `selftest` run them in this order, `kgate <gate>` finds
 * its gate here (gate_find.c), and the top-level usage lists them. */
#include "driver/driver.h"

extern const struct kg_gate kg_gate_parity, kg_gate_preflight, kg_gate_hotpath, kg_gate_bench,
    kg_gate_counters;

const struct kg_gate *const kg_gates[] = { &kg_gate_parity, &kg_gate_preflight, &kg_gate_hotpath,
                                           &kg_gate_bench, &kg_gate_counters };
const size_t kg_n_gates = sizeof kg_gates / sizeof kg_gates[0];
