/* The driver: the one gate table, a run (kg_run), a gate session in one process and case
 * isolation (the worker), over the gate interface of gates/gate.h.
 *
 * The driver (driver.c) owns everything around run_case: the case loop, SKIP without a GPU,
 * a case's error as its ERROR verdict, the console table from the declared columns, the report
 * rows, and the one exit-code policy (kg_exit_code_for_counts). `kgate <gate>`, `run`,
 * `selftest` and `ab` all go through it.
 */
#ifndef KG_DRIVER_H
#define KG_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include "gate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The gates, in the order `run` and `selftest` run them: the one list (gates.c). Code outside
 * a gate's folder iterates it and asks the gate's flags and hooks (gate.h), never its name. */
extern const struct kg_gate *const kg_gates[];
extern const size_t kg_n_gates;
const struct kg_gate *kg_gate_find(const char *name);
/* KG_EINVAL naming the case where a case's xfail_gate is no gate of the table. */
int kg_gates_check_cases(const kg_registry *reg);

/* ---- the driver -------------------------------------------------------------------------- */

typedef struct {
    const struct kg_gate *gate;
    const kg_case_desc *desc;
    kg_case_result res;
} kg_run_row;

/* One run: a selection of cases, the gates run over it so far, their typed results, the
 * report. */
/* Where a run's wall time went (run_timing.c): one part per name (a gate, "selftest", ...);
 * a name that comes again (run --production's bench passes) adds to its part. */
#define KG_RUN_PARTS_MAX 24
typedef struct {
    char name[64];
    double wall_s, started_s; /* started_s > 0: the part is open (kg_run_part_begin) */
    int cases;
    double phase_s[KG_PHASE_N]; /* its cases' summed phase seconds */
    double begin_s, end_s;      /* a gate's own begin and end (gate->begin, gate->end) */
} kg_run_part;

typedef struct {
    const char *command; /* "parity", "run", ... */
    kg_common_opts opts;
    kg_selection sel;
    kg_device_info dev;
    kg_gate_env env;
    kg_report *rep;
    bool no_gpu;
    kg_run_row *rows;
    size_t n_rows, cap_rows;
    char self_exe[4096];
    struct kg_worker *worker; /* the isolation worker (worker.c); NULL: none right now */
    /* --devices: lanes[i] (i >= 1) is the worker of GPU opts.devices[i] (pool.c); lane 0 is
     * `worker`. NULL: none right now. */
    struct kg_worker *lanes[KG_DEVICES_MAX];
    bool isolated;    /* cases run in workers: never in this process, also while
                                 no worker is alive (after a fault the next case starts one) */
    bool incomplete;  /* interrupted (SIGINT/SIGTERM): the report says so */
    bool header_done; /* the current gate's table header was printed */
    double began_s;   /* kg_now_s() at kg_run_begin */
    kg_run_part parts[KG_RUN_PARTS_MAX];
    size_t n_parts;
    int open_part; /* index of the open part, -1: none */
} kg_run;

/* The front half of every command: select cases (KG_ENOTFOUND when none), check the report
 * path, draw a seed when none was given, create the report, print the seed line, open the
 * device (no GPU: one line printed, run->no_gpu; already interrupted: none probed). `banner`
 * (may be NULL) replaces the mode words of the seed line. */
int kg_run_begin(kg_run *run, const char *command, const kg_common_opts *o, const kg_registry *reg,
                 const char *banner);
/* Run one gate over the selection with its options struct (NULL = its _INIT). The section
 * heading ("== parity ==") is printed when `heading`. */
int kg_run_gate(kg_run *run, const kg_registry *reg, const struct kg_gate *g, const void *opts,
                bool heading);
/* End the worker so that the next gate pass runs in a fresh process (a new CUDA context):
 * run --production's bench passes. 1 when a worker was ended, 0 when the run has none
 * (in-process, KGATE_ISOLATION=0: the passes then share this process). */
int kg_run_fresh_worker(kg_run *run);
/* Counting-verdict counts over the report's rows (every gate, selftest rows too; XFAIL as
 * PASS, XPASS as FAIL: kg_report_counts). */
void kg_run_counts(const kg_run *run, int counts[KG_VERDICT_N5]);
/* Print "<command>: N passed, ..." and return the exit code by the one policy. */
int kg_run_summary(const kg_run *run);
/* Write the report atomically if --report was given (and say where). */
int kg_run_write(kg_run *run);
/* An interrupted run (run->incomplete, or kg_interrupted): the report with "incomplete": true
 * (and "stopped_at" where it was set). */
int kg_run_write_partial(kg_run *run);
/* The run was interrupted at WHERE (printf format): run->incomplete, the report's "stopped_at",
 * and KG_EINTERNAL "interrupted by SIGINT in WHERE: the report is partial (incomplete)". */
int kg_run_stopped(kg_run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* kg_run_summary + kg_run_write; the error's exit code when rc < 0. Frees nothing. */
int kg_run_finish(kg_run *run, int rc);
void kg_run_free(kg_run *run);

/* ---- where the time went (run_timing.c) ---- */
/* Open the part `name` (its cases' phase seconds add to it until kg_run_part_end). */
void kg_run_part_begin(kg_run *run, const char *name);
/* Close the open part; prints "<name>: N cases in S s (setup ..., ...)" unless quiet. */
void kg_run_part_end(kg_run *run);
/* A part timed by its caller (the selftest's passes, which run in child processes). */
void kg_run_part_add(kg_run *run, const char *name, double wall_s, int cases);
/* One recorded case's phase seconds, into the open part. */
void kg_run_part_case(kg_run *run, const double phase_s[KG_PHASE_N]);
/* A gate's begin and end seconds (kg_gate_session), into the open part. */
void kg_run_part_gate(kg_run *run, double begin_s, double end_s);
/* {total_s, parts: [{name, wall_s, cases, phases, begin_s, end_s}]} for the report. */
cJSON *kg_run_timing_json(const kg_run *run);

/* Record one result: the report row and the typed row (res->data taken over). */
int kg_run_record(kg_run *run, const struct kg_gate *g, const kg_case_desc *d, kg_case_result *res,
                  cJSON *fig);
/* The same with the case's phase seconds given (NULL: none), not read from the phase page
 * (pool.c records a case after its worker has moved on), and the GPU that ran it (the report
 * says which in a --devices run). */
int kg_run_record_timed(kg_run *run, const struct kg_gate *g, const kg_case_desc *d,
                        kg_case_result *res, cJSON *fig, const double *phase_s, int device);

/* A gate begun in this process: what an in-process run and the isolation worker both do. */
typedef struct {
    const struct kg_gate *g;
    void *st;
    int brc;
    char unavail[1024];
    double begin_s, end_s; /* wall seconds of gate->begin and gate->end */
} kg_gate_session;
/* begin (prints the gate's own lines and the table header); <0: the run's inputs are wrong. */
int kg_session_begin(kg_gate_session *s, const struct kg_gate *g, const void *opts,
                     const kg_gate_env *env, bool header);
/* One case: res filled (its verdict also for SKIP and ERROR), its table line printed, *fig
 * the report figures (or NULL). Only KG_ENOMEM is returned. */
int kg_session_case(kg_gate_session *s, const kg_case_desc *d, const kg_gate_env *env,
                    kg_case_result *res, cJSON **fig);
int kg_session_end(kg_gate_session *s, const kg_gate_env *env, int rc);

/* ---- case isolation (worker.c) -------------------------------------------------------------
 * The cases run in a worker: a child forked from this process before it ever touched CUDA (so
 * the child holds the only CUDA context and every pointer of the parent is valid in it). The
 * parent sends (gate, case) requests and gets typed results back; a worker that dies (signal,
 * exit), leaves a dead context (sticky CUDA error) or overruns the case timeout is replaced,
 * and that case's verdict is ERROR with figures.fault naming the class, the gate, the phase
 * and the last lines it printed. KGATE_ISOLATION=0 runs everything in-process. */
int kg_worker_start(kg_run *run);
int kg_worker_gate(kg_run *run, const kg_registry *reg, const struct kg_gate *g, const void *opts);
/* Every worker of the run (the lanes' too) ends. */
void kg_worker_stop(kg_run *run);

/* ---- several GPUs of one host (pool.c; the rule is at the top of that file) --------------
 * --devices 0,1,...: kg_pool_start starts a worker on each further GPU (KG_EINVAL naming
 * --devices for a GPU that does not open or is of another class) and lists them in the report;
 * kg_pool_gate runs a gate without KG_GATE_ONE_DEVICE over every GPU's worker at once. */
int kg_pool_start(kg_run *run);
/* The distinct GPUs of --devices (0 without it). */
int kg_pool_gpus(const kg_run *run);
int kg_pool_gate(kg_run *run, const kg_registry *reg, const struct kg_gate *g, const void *opts);

/* The one exit-code policy over counts of every verdict: FAIL or XPASS -> 1, else ERROR -> 4,
 * else SKIP -> 3, else 0 (XFAIL passes). */
int kg_exit_code_for_counts(const int counts[KG_VERDICT_N]);

#ifdef __cplusplus
}
#endif
#endif
