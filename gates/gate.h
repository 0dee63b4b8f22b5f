/* The gate interface (the models: curl's Curl_protocol and libgit2's backend
 * structs). A gate is one `const struct kg_gate`: its name, what it needs, its own options
 * (a kg_opt table over its options struct, with an _INIT), and three hooks: begin (once, may
 * refuse the run's inputs), run_case (one case into a typed result), end (after the last case).
 * It declares the columns of its console table; the report figures of a result come from its
 * `figures` hook.
 *
 * The driver around it (the case loop, the console table, the report rows, the exit-code
 * policy) is gates/driver/driver.h; a gate includes only this file.
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
#include "core/mark.h"
#include "core/opt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the driver hands every hook. */
typedef struct {
    uint64_t seed; /* the run's printed seed (kg_case_seed derives per case) */
    int device;
    const kg_device_info *dev; /* NULL without a GPU */
    bool diagnostic;
    bool quiet;           /* no console table */
    const char *self_exe; /* the running executable (static preflight reads its cubins) */
    const char *filter;   /* --filter, for gates that run child runners (ab) */
    kg_report *rep;       /* for run-level extras (kg_report_set_extra) in begin/end */
    bool in_worker;       /* an isolation worker (KG_GATE_RETIRES_WORKER: it exits after) */
    int lanes;            /* --devices: the GPUs a gate without KG_GATE_ONE_DEVICE spreads over (its
                  begin and end run in each GPU's worker, each end sees that worker's cases);
                  0 or 1: one */
} kg_gate_env;

/* One case's result: what every gate fills, and its own typed data. */
typedef struct {
    kg_verdict verdict;
    char message[1024];
    void *data;     /* the gate's typed result (its result_free frees it) */
    size_t n_lines; /* KG_GATE_MULTILINE: console lines this result prints */
} kg_case_result;

/* One console column: the report figure it shows, its header and width, and either a printf
 * format of a double field of the typed result (`offset` into res->data) or a cell function
 * (line `line` of a multi-line result). The last column is free text (never padded). */
typedef void (*kg_cell_fn)(char *buf, size_t n, const kg_case_desc *d, const kg_case_result *r,
                           size_t line);
typedef struct {
    const char *key; /* the report key of the figure (NULL: not a figure) */
    const char *header;
    int width;          /* printf width; negative = left-aligned */
    const char *format; /* "%.3g" of the double at `offset` (when cell is NULL) */
    size_t offset;
    kg_cell_fn cell;
} kg_gate_column;

/* Cells every gate's table starts with (inline: the gates sit below the driver). */
static inline void kg_cell_case(char *buf, size_t n, const kg_case_desc *d, const kg_case_result *r,
                                size_t l)
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
#define KG_COL_CASE(w)                                       \
    {                                                        \
        .header = "case", .width = (w), .cell = kg_cell_case \
    }
#define KG_COL_VERDICT(h, w)                                 \
    {                                                        \
        .header = (h), .width = (w), .cell = kg_cell_verdict \
    }
#define KG_COL_NUM(k, h, w, fmt, T, field)                                                     \
    {                                                                                          \
        .key = (k), .header = (h), .width = (w), .format = (fmt), .offset = offsetof(T, field) \
    }

/* What a gate needs of the driver, the selftest and the production step: they ask these flags
 * (and the marks hooks below), never a gate's name. */
enum {
    KG_GATE_NEEDS_GPU = 1u << 0,   /* without a GPU every case is SKIP ("no CUDA device") */
    KG_GATE_MULTILINE = 1u << 2,   /* a result prints n_lines table lines (preflight: one per
                                      kernel and architecture); else one, or "id ERROR message" */
    KG_GATE_DEVICE_WIDE = 1u << 3, /* it times or counts device-wide (a concurrent process would
                                      be in its figures): the selftest runs it alone, after the
                                      correctness gates */
    KG_GATE_PRODUCTION_PASSES = 1u << 4, /* run --production runs it in --bench-processes fresh
                                            processes and combines them per case
                                            (gates/production/) */
    KG_GATE_SELFTEST_TWINS = 1u << 5,    /* the selftest judges its defects (correct kernels that
                                            differ in speed) against marks it sets from their clean
                                            twins, not in the concurrent pass */
    KG_GATE_SELFTEST_FAULTS = 1u << 6,   /* the selftest also runs the planted faults through it
                                            (every fault class, under a short watchdog) */
    KG_GATE_RETIRES_WORKER = 1u << 7,    /* its end would undo process-wide state at a cost (the
                                            hot path's unified-memory counters: disabling them
                                            takes 2 s, an exit nothing): in an isolated run the
                                            driver retires the worker after the gate, the next
                                            gate gets a fresh one, and the gate's end leaves the
                                            state to the exit (env->in_worker) */
    KG_GATE_ONE_DEVICE = 1u << 8         /* with --devices it runs on the first device alone,
                                            every other GPU idle (driver/pool.c): it times (a
                                            busy neighbour's power and host load would be in its
                                            figures), or its end works on the whole selection
                                            (without the flag, begin and end run once per GPU's
                                            worker, an end sees only that worker's cases, and
                                            the extras the ends set meet in merge_extra) */
};

/* A gate that decides against marks. The marks live above the gates: the command layer loads
 * the file (--marks, --marks-ref), hands the lookup down through the slots of the gate's
 * options struct and, for --save-marks, merges the marks the gate's typed results set. */
typedef struct {
    const char **path;         /* --marks FILE (the command layer rewrites it to what it read) */
    const char **ref;          /* --marks-ref REF; NULL: the gate reads marks from files only */
    const char **save;         /* --save-marks FILE */
    kg_mark_lookup_fn *lookup; /* set by the command layer; NULL: no marks */
    const void **marks;
} kg_gate_marks_slots;

struct kg_gate_marks {
    /* The slots of `opts` (the gate's options struct). */
    void (*slots)(void *opts, kg_gate_marks_slots *out);
    /* The marks one typed result sets for --save-marks: at most `max` into out, their count
     * returned. Strings are borrowed from d, data and `stamp`, whose provenance fields
     * (commit, date, run_id, driver, cuda, set_by) every mark carries. */
    size_t (*row_marks)(kg_mark *out, size_t max, const kg_case_desc *d, const void *data,
                        const kg_mark *stamp);
};
#define KG_GATE_MARKS_MAX 16 /* the most marks row_marks returns for one result */

/* What the production step (gates/production/) asks of a gate, so that it names none. */
struct kg_gate_production {
    /* KG_GATE_PRODUCTION_PASSES: the results of one case from n separate passes (per[i]:
     * PASS, WARN or FAIL with typed data; n in [1, max_passes]) into one result, out->data
     * the gate's type (its result_free frees it), and its report figures (*figures; NULL:
     * none). Prints the case's console line unless env->quiet. The rows stay the caller's. */
    int (*combine)(kg_case_result *out, cJSON **figures, const kg_case_desc *d,
                   const kg_case_result *const *per, int n, const void *opts,
                   const kg_gate_env *env);
    int max_passes;
    /* A note before any GPU work on running `passes` passes with these options (NULL: none). */
    void (*note)(const void *opts, int passes);
    /* The key of the run-level report record its end() sets: the combined run keeps the last
     * pass's (NULL: none). */
    const char *record_key;
    /* The candidate marks one typed result offers the ratchet (kg_advance_add): at most max
     * into out, their count returned (0: none). `stamp` carries the run's provenance (commit,
     * date, driver, cuda, set_by) for every candidate. */
    size_t (*candidates)(kg_advance_obs *out, size_t max, const kg_case_desc *d,
                         const kg_case_result *res, const kg_advance_obs *stamp);
    const char *source; /* names the candidates in kg_advance_add's messages */
    bool after_pass;    /* candidates only of a run that passed, every gate over every
                           case (else of every row, before that check) */
    bool counted;       /* its results are the ones the marks message counts
                           (kg_advance_input.n_bench, "N bench result(s)") */
    /* The JSON path of `candidates` (`marks advance --from-report`, kg_advance_parse): the
     * candidate marks one result row of a recorded report offers (row: its gate, case, verdict
     * and figures; v: its verdict as written, XFAIL not folded), at most max into out, their
     * count returned (0: none); <0 refuses the report (KG_EPARSE naming `name`, the report).
     * Called only for a report with a device. `stamp` carries the report's provenance (commit,
     * date, driver, cuda, set_by); strings are borrowed from row and stamp. claimed(metric):
     * some gate's claims_metric owns it (a row of another gate may not move it). */
    int (*report_candidates)(kg_advance_obs *out, size_t max, const cJSON *row, kg_verdict v,
                             const kg_advance_obs *stamp, const char *name,
                             bool (*claimed)(const char *metric));
    /* True for a metric only this gate's marks may be (NULL: none). */
    bool (*claims_metric)(const char *metric);
};
#define KG_GATE_CANDIDATES_MAX 16 /* the most candidates one result offers */
#define KG_GATE_PASSES_MAX 16     /* the most passes max_passes may allow */

struct kg_gate {
    const char *name;        /* "parity": the command, the report's gate, selftest column */
    const char *summary;     /* one line for `kgate --help` */
    const char *description; /* the body of `kgate <name> --help` */
    unsigned flags;
    const kg_opt *opts; /* this gate's flags (also accepted by `run` unless standalone) */
    size_t n_opts;
    size_t opts_size;      /* sizeof its options struct */
    const void *opts_init; /* its _INIT value */
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
    /* True when these options never need the device (preflight --static reads this
     * executable's cubins): the command may skip opening it. NULL: always needs it. */
    bool (*deviceless)(const void *opts);
    /* NULL: the gate decides against no marks. */
    const struct kg_gate_marks *marks;
    /* NULL: the production step only counts its results. */
    const struct kg_gate_production *production;
    /* --devices: a report extra that two workers' ends set (`key`), merged into `into` (the
     * first's) from `from` (a later one's): sums and maxima of the workers' parts. NULL: the
     * last one's stands. Pure. */
    void (*merge_extra)(const char *key, cJSON *into, const cJSON *from);
    /* The selftest's scope: the defects of a gate with any of these flags are left out of this
     * gate, where running them proves nothing (the bench's slow variants differ only in speed,
     * the counters' defects only in traffic; their cells show "-"). */
    unsigned selftest_skips;
};

/* A session that saw only some of the cases (its worker was replaced): end() must not act on
 * the run as a whole (no baseline update, no run-level record). */
#define KG_EPARTIAL (-101)

/* begin() could not make the gate usable (a profiler holds CUPTI): every case is ERROR. */
#define KG_EUNAVAILABLE (-100)

#ifdef __cplusplus
}
#endif
#endif
