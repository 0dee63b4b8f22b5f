/* The production step: the advance input from the typed results of a run (or from a recorded
 * report: kg_advance_parse in advance.h), then the commit of the marks that moved. */
#ifndef KG_PRODUCTION_H
#define KG_PRODUCTION_H

#include "driver/driver.h"
#include "marks/advance.h"
#include "marks/marks_git.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The advance input of a run in memory: every gate's typed rows (the candidates of each
 * gate's kg_gate_production hooks), the report's counts (selftest rows included), the device
 * class. Same rules as kg_advance_parse: all_passed only with a GPU, no FAIL/ERROR/SKIP, every gate over every case. */
int kg_advance_from_run(kg_advance_input **out, const kg_run *run, const char *set_by);

/* run --production's passes of a gate with KG_GATE_PRODUCTION_PASSES and a combine hook (the
 * bench): the gate over the selection in n separate processes (each pass in a fresh worker: a
 * new process and CUDA context, its rows kept out of the report), then one report row and
 * typed row per case from g->production->combine (the bench: the median of the per-process
 * medians, IMPROVED only when every process was IMPROVED on its own, REGRESSED when the
 * combination is). A case some process could not time is that process's row (ERROR or SKIP).
 * The gate's run-level record (record_key) is the last pass's. n in [1, max_passes]. */
int kg_production_passes(kg_run *run, const kg_registry *reg, const struct kg_gate *g,
                         const void *opts, int n);

/* One case of it: the N processes' rows (pr[i]: process i's row of d, NULL if none) into one
 * recorded row (kg_run_record; the rows stay the caller's). A process whose row is not
 * PASS/WARN/FAIL with a typed result makes the case that row (its message names the process,
 * its figures the fault: faults[i], that process's figures.fault or NULL; faults may be NULL).
 * Pure apart from the record: CPU tests drive it with synthetic rows. */
int kg_production_case(kg_run *run, const struct kg_gate *g, const kg_run_row *const *pr,
                       const cJSON *const *faults, int n, const kg_case_desc *d, const void *opts);

/* run --production's note before any GPU work (the gate's note hook): the bench's, marks set
 * from fewer processes than --min-mark-runs would decide UNPROVEN until merged from more. */
void kg_production_note(const struct kg_gate *g, const void *opts, int passes);

/* Commit the advanced marks of a passing certifying input (compare-and-swap, push if asked);
 * *summary (may be NULL) receives the report's marks_update record. */
int kg_production_advance(kg_marks_target *t, const kg_marks_git_opts *o,
                          const kg_advance_input *in, cJSON **summary);

#ifdef __cplusplus
}
#endif
#endif
