/* Several GPUs of one host: the plan of a run over `--devices 0,1,...`, one
 * worker per GPU. Pure (no process, no GPU): the runner that executes a plan is not built yet;
 * this is the rule it will follow, CPU-tested (tests/test_schedule.c).
 *
 * The gates run in table order, in phases. Consecutive gates that may share the host (parity,
 * preflight, hotpath, counters: their figures do not depend on what another GPU does) form a
 * parallel phase: each case's gates of the phase are one job, and the jobs go longest first
 * (ties: the case id) to the device that is free first (ties: the first listed), so different
 * cases run at once on different GPUs and one case's gates stay in order on one GPU. An
 * exclusive gate (bench, ab: they time, and a busy neighbour is in their timings) is a phase
 * of its own behind a barrier: it starts when every device is idle and runs its cases one at
 * a time on the first listed device (the marks' GPU stays one), every other device idle. */
#ifndef KG_SCHEDULE_H
#define KG_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KG_SCHED_MAX_DEVICES 64

/* "0,1,3": distinct ordinals in [0, 1024), at most KG_SCHED_MAX_DEVICES; KG_EINVAL naming
 * --devices otherwise. */
int kg_devices_parse(const char *v, int *devices, size_t *n);

typedef struct {
    const char *name;
    bool exclusive; /* bench, ab */
} kg_sched_gate;

/* One task: gate g (index into the gates), case c, on a device, from start_s to end_s. */
typedef struct {
    size_t gate, case_ix;
    int device;
    double start_s, end_s;
} kg_sched_task;

typedef struct {
    kg_sched_task *tasks; /* one per (gate, case) it runs, phase by phase */
    size_t n;
    double makespan_s, serial_s; /* the plan's end; one device doing everything */
} kg_sched_plan;

/* cost_s[g * n_cases + c]: the expected seconds of gate g on case c (< 0: the gate skips it). */
int kg_sched_make(kg_sched_plan *out, const kg_sched_gate *gates, size_t n_gates,
                  const char *const *ids, const double *cost_s, size_t n_cases, const int *devices,
                  size_t n_devices);
void kg_sched_free(kg_sched_plan *p);

#ifdef __cplusplus
}
#endif
#endif
