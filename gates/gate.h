/* The gate interface and the driver (the models: curl's Curl_protocol and libgit2's backend
 * structs). A gate is one `const struct kg_gate`: its name, what it needs, its own options
 * (a kg_opt table over its options struct, with an _INIT), and three hooks: begin (once, may
 * refuse the run's inputs), run_case (one case into a typed result), end (after the last case).
 * It declares the columns of its console table; the report figures of a result come from its
 * `figures` hook.
 *
 * The driver (driver.c) owns everything around run_case: the case loop, SKIP without a GPU,
 * a case's error as its ERROR verdict, the console table from the declared columns, the report
 * rows, and the one exit-code policy (kg_exit_code_for_counts). `kgate <gate>`, `run`,
 * `selftest` and `ab` all go through it.
 *
 *   gate->begin(&state, opts, env)           inputs, per-run setup (ceilings, CUPTI subscriber)
 *   for each selected case:
 *       gate->run_case(state, desc, env, &res)   res.verdict, res.message, res.data
 *       driver: print the row, report row <- gate->figures(&res)
 *   gate->end(state, env)                    run-level report extras; frees state
 */
#ifndef KG_GATE_H
#define KG_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "core/kg_core.h"
#include "core/opt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the driver hands every hook. */
typedef struct {
    uint64_t seed;               /* the run's printed seed (kg_case_seed derives per case) */
    int device;
    const kg_device_info *dev;   /* NULL without a GPU */
    bool diagnostic;
    bool quiet;                  /* no console table */
    const char *self_exe;        /* the running executable (static preflight reads its cubins) */
    const char *filter;          /* --filter, for gates that run child runners (ab) */
    kg_report *rep;              /* for run-level extras (kg_report_set_extra) in begin/end */
} kg_gate_env;

/* One case's result: what every gate fills, and its own typed data. */
typedef struct {
    kg_verdict verdict;
    char message[1024];
    void *data;                  /* the gate's typed result (its result_free frees it) */
    size_t n_lines;              /* KG_GATE_MULTILINE: console lines this result prints */
} kg_case_result;

/* One console column: the report figure it shows, its header and width, and either a printf
 * format of a double field of the typed result (`offset` into res->data) or a cell function
 * (line `line` of a multi-line result). The last column is free text (never padded). */
typedef void (*kg_cell_fn)(char *buf, size_t n, const kg_case_desc *d, const kg_case_result *r,
                           size_t line);
typedef struct {
    const char *key;             /* the report key of the figure (NULL: not a figure) */
    const char *header;
    int width;                   /* printf width; negative = left-aligned */
    const char *format;          /* "%.3g" of the double at `offset` (when cell is NULL) */
    size_t offset;
    kg_cell_fn cell;
} kg_gate_column;

/* Cells every gate's table starts with (inline: the gates sit below the driver). */
static inline void kg_cell_case(char *buf, size_t n, const kg_case_desc *d,
                                const kg_case_result *r, size_t l)
{
    (void)r, (void)l;
    snprintf(buf, n, "%s", d->id);
}
static inline void kg_cell_verdict(char *buf, size_t n, const kg_case_desc *d,
                                   const kg_case_result *r, size_t l)
{
    (void)d, (void)l;
    snprintf(buf, n, "%s", kg_verdict_name(r->verdict));
}
#define KG_COL_CASE(w) { .header = "case", .width = (w), .cell = kg_cell_case }
#define KG_COL_VERDICT(h, w) { .header = (h), .width = (w), .cell = kg_cell_verdict }
#define KG_COL_NUM(k, h, w, fmt, T, field) \
    { .key = (k), .header = (h), .width = (w), .format = (fmt), .offset = offsetof(T, field) }

enum {
    KG_GATE_NEEDS_GPU = 1u << 0, /* without a GPU every case is SKIP ("no CUDA device") */
    KG_GATE_STATIC = 1u << 1,    /* decides without a GPU too (preflight's static path) */
    KG_GATE_MULTILINE = 1u << 2  /* a result prints n_lines table lines (preflight: one per
                                    kernel and architecture); else one, or "id ERROR message" */
};

struct kg_gate {
    const char *name;            /* "parity": the command, the report's gate, selftest column */
    const char *summary;         /* one line for `kgate --help` */
    const char *description;     /* the body of `kgate <name> --help` */
    unsigned flags;
    const kg_opt *opts;          /* this gate's flags (also accepted by `run` unless standalone) */
    size_t n_opts;
    size_t opts_size;            /* sizeof its options struct */
    const void *opts_init;       /* its _INIT value */
    /* Once per run, before any case; env->dev may be NULL. <0 stops the run (bad input file:
     * exit 2). KG_ECUPTI-like failures that make the gate unusable: return KG_EUNAVAILABLE
     * (defined below) with the reason set, and every case becomes ERROR with it. */
    int (*begin)(void **state, const void *opts, const kg_gate_env *env);
    /* One case. 0 with res->verdict set, or <0: the case's ERROR with kg_error_last() (the
     * driver records it); KG_ENOMEM stops the run. May leave res->data set either way. */
    int (*run_case)(void *state, const kg_case_desc *d, const kg_gate_env *env,
                    kg_case_result *res);
    /* The report figures of a result (NULL = none; the driver writes {}). */
    cJSON *(*figures)(const kg_case_desc *d, const kg_case_result *res);
    void (*result_free)(void *data);
    /* After the last case (also after a stopped run): extras, files; frees state. */
    int (*end)(void *state, const kg_gate_env *env, int rc);
    const kg_gate_column *columns;
    size_t n_columns;
    /* Optional lines after a row (the hot path's first forbidden call and its backtrace). */
    void (*detail)(FILE *out, const kg_case_desc *d, const kg_case_result *res);
    /* Isolation: a result travels back from the worker as result_size bytes; result_flatten
     * clears, in that copy, every pointer that is not valid in the parent (owned buffers made
     * after the fork). NULL with result_size 0: only verdict, message and figures travel. */
    size_t result_size;
    void (*result_flatten)(void *copy);
    /* The watchdog's limit for one case of this gate (NULL: the default, 120 s). */
    double (*case_timeout_s)(const void *opts);
};

/* A session that saw only some of the cases (its worker was replaced): end() must not act on
 * the run as a whole (no baseline update, no run-level record). */
#define KG_EPARTIAL (-101)

/* begin() could not make the gate usable (a profiler holds CUPTI): every case is ERROR. */
#define KG_EUNAVAILABLE (-100)

/* The gates, in the order `run` and `selftest` run them: the one list. */
extern const struct kg_gate kg_gate_parity, kg_gate_preflight, kg_gate_hotpath, kg_gate_bench,
    kg_gate_counters;
extern const struct kg_gate *const kg_gates[];
extern const size_t kg_n_gates;
const struct kg_gate *kg_gate_find(const char *name);

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
    double wall_s, started_s;    /* started_s > 0: the part is open (kg_run_part_begin) */
    int cases;
    double phase_s[KG_PHASE_N];  /* its cases' summed phase seconds */
} kg_run_part;

typedef struct {
    const char *command;         /* "parity", "run", ... */
    kg_common_opts opts;
    kg_selection sel;
    kg_device_info dev;
    kg_gate_env env;
    kg_report *rep;
    bool no_gpu;
    kg_run_row *rows;
    size_t n_rows, cap_rows;
    char self_exe[4096];
    struct kg_worker *worker;    /* the isolation worker (worker.c); NULL: none right now */
    bool isolated;               /* cases run in workers: never in this process, also while
                                    no worker is alive (after a fault the next case starts one) */
    bool incomplete;             /* interrupted (SIGINT/SIGTERM): the report says so */
    bool header_done;            /* the current gate's table header was printed */
    double began_s;              /* kg_now_s() at kg_run_begin */
    kg_run_part parts[KG_RUN_PARTS_MAX];
    size_t n_parts;
    int open_part;               /* index of the open part, -1: none */
} kg_run;

/* The front half of every command: select cases (KG_ENOTFOUND when none), check the report
 * path, draw a seed when none was given, create the report, print the seed line, open the
 * device (no GPU: one line printed, run->no_gpu). `banner` (may be NULL) replaces the mode
 * words of the seed line. */
int kg_run_begin(kg_run *run, const char *command, const kg_common_opts *o,
                 const kg_registry *reg, const char *banner);
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
/* An interrupted run (run->incomplete): the report with "incomplete": true. */
int kg_run_write_partial(kg_run *run);
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
/* {total_s, parts: [{name, wall_s, cases, phases}]} for the report. */
cJSON *kg_run_timing_json(const kg_run *run);

/* Record one result: the report row and the typed row (res->data taken over). */
int kg_run_record(kg_run *run, const struct kg_gate *g, const kg_case_desc *d,
                  kg_case_result *res, cJSON *fig);

/* A gate begun in this process: what an in-process run and the isolation worker both do. */
typedef struct {
    const struct kg_gate *g;
    void *st;
    int brc;
    char unavail[1024];
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
int kg_worker_gate(kg_run *run, const kg_registry *reg, const struct kg_gate *g,
                   const void *opts);
void kg_worker_stop(kg_run *run);

/* The one exit-code policy over counts of every verdict: FAIL or XPASS -> 1, else ERROR -> 4,
 * else SKIP -> 3, else 0 (XFAIL passes). */
int kg_exit_code_for_counts(const int counts[KG_VERDICT_N]);

#ifdef __cplusplus
}
#endif
#endif
