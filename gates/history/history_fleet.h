/* The run history as the fleet's input (the rules are core/fleet.h):
 * one (device class, case, metric)'s production runs in date order, each with its GPU. */
#ifndef KG_HISTORY_FLEET_H
#define KG_HISTORY_FLEET_H

#include "core/fleet.h"
#include "marks/advance.h"
#include "history/run_history.h"

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

/* Before the ratchet: each candidate mark records the GPU that
 * measured it (gpu_uuid/gpu_serial; a merged report's `parts` give each case its own), and
 * what the class's production runs in `hist` (may be empty) teach it: band_rel from the
 * setters (env_lo, run_median, env_hi) and the newest KG_FLEET_HISTORY_N runs
 * (kg_fleet_history_band; history_runs), and the class's cross-GPU spread of the case
 * (xgpu_spread_rel, xgpu_gpus). Prints a line for every band the history widened. */
int kg_history_fleet_apply(kg_advance_input *in, const kg_history_recs *hist, const char *gpu_uuid,
                           const char *gpu_serial, const cJSON *parts);
/* The history the advance learns from: $KGATE_HISTORY_BRANCH (else kgate-history), local or
 * origin's; none is not an error (*found false, out empty). */
int kg_history_fleet_load(kg_history_recs *out, bool *found, kg_git *g);

#ifdef __cplusplus
}
#endif
#endif
