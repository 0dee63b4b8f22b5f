/* The run history as the fleet's input (issue #27 items 2 and 3; the rules are core/fleet.h):
 * one (device class, case, metric)'s production runs in date order, each with its GPU. */
#ifndef KG_HISTORY_FLEET_H
#define KG_HISTORY_FLEET_H

#include "core/fleet.h"
#include "marks/run_history.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The production runs (mode "production", decision not REGRESSED: a regressed run is not the
 * mark's code) of one key in `all`, oldest first; *out points into `all` (free only the
 * array). metric NULL: time_us_warm. */
int kg_history_fleet_runs(kg_fleet_run **out, size_t *n, const kg_history_recs *all,
                          const char *device_class, const char *case_id, const char *metric);
/* The serial recorded with a GPU's UUID (the newest record's), "" when none. */
const char *kg_history_fleet_serial(const kg_history_recs *all, const char *gpu_uuid);

#ifdef __cplusplus
}
#endif
#endif
