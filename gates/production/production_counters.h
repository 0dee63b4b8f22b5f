/* `run --production` for the counters gate (issue #18): a passing run's counters become
 * candidate counter marks, ratcheted like bench marks (production_counters.c). */
#ifndef KG_PRODUCTION_COUNTERS_H
#define KG_PRODUCTION_COUNTERS_H

#include "driver/driver.h"
#include "marks/advance.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every PASS row of the counters gate adds its positive, finite counts as candidates
 * (dram_bytes_per_launch, inst_per_launch, spill_requests_per_launch, achieved_occupancy_pct,
 * tensor_inst_per_launch, sysmem_bytes_per_launch). kg_advance_apply then moves a mark only
 * when the run beats it (never down), and the caller commits only an all-passed input. */
int kg_advance_counters_from_run(kg_advance_input *in, const kg_run *run, const char *set_by);

#ifdef __cplusplus
}
#endif
#endif
