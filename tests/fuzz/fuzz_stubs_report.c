/* The gate table the report fuzzer links instead of the driver's (gates/driver/gates.c, which
 * links every gate): the gates whose report_candidates hooks kg_advance_parse calls, with those
 * hooks (driver/gate_find.c finds in it). Keep it in step with kg_bench_production and
 * kg_counters_production. */
#include "bench/bench.h"
#include "core/report_keys.h"
#include "counters/counters.h"
#include "driver/driver.h"

static const struct kg_gate_production fz_bench_production = {
    .counted = true,
    .report_candidates = kg_bench_report_candidates,
};
static const struct kg_gate fz_bench = { .name = KG_BENCH_GATE,
                                         .production = &fz_bench_production };
static const struct kg_gate fz_counters = { .name = KG_RV_GATE_COUNTERS,
                                            .production = &kg_counters_production };

const struct kg_gate *const kg_gates[] = { &fz_bench, &fz_counters };
const size_t kg_n_gates = sizeof kg_gates / sizeof kg_gates[0];
