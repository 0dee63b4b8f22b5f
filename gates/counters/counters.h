/* The counters gate's internals: the metric table (counters_metrics.c, pure), the
 * pure decision against the declared work model and the marks (counters_decide.c), the CUPTI
 * range-profiler session (counters_cupti.c), the gate (counters.c) and its figures
 * (counters_figures.c). Docs: docs/counters.md. */
#ifndef KG_COUNTERS_H
#define KG_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include "core/kg_core.h"
#include "core/mark.h"
#include "gate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The gate (counters.c); the driver finds it in its table (gates/driver/gates.c). */
extern const struct kg_gate kg_gate_counters;
/* Its production hooks (counters_production.c): its candidate counter marks. */
extern const struct kg_gate_production kg_counters_production;

/* ---- the metric table (pure) ----------------------------------------------------------- */

/* One wanted figure: the first of its candidate metric names that the device's metric
 * enumeration knows is collected (names differ between chips and CUPTI versions). */
typedef enum {
    KG_CT_DRAM_READ = 0, /* bytes */
    KG_CT_DRAM_WRITE,    /* bytes */
    KG_CT_SYSMEM,        /* L2 sectors whose aperture is system memory (x 32 bytes) */
    KG_CT_SYSMEM_RD,     /* ... of them reads (x 32 bytes) */
    KG_CT_SYSMEM_WR,     /* ... of them writes (x 32 bytes) */
    KG_CT_L2_SECTORS,    /* L1 -> L2 sectors (x 32 bytes): the traffic of L2-resident cases */
    KG_CT_FADD,
    KG_CT_FMUL,
    KG_CT_FFMA,
    KG_CT_DADD,
    KG_CT_DMUL,
    KG_CT_DFMA,
    KG_CT_HADD,
    KG_CT_HMUL,
    KG_CT_HFMA,
    KG_CT_TENSOR,      /* tensor-pipe warp instructions (on GH100 this includes HFMA2:
                          * used only where the hmma counter is missing) */
    KG_CT_TENSOR_HMMA, /* mma.sync / wmma warp instructions */
    KG_CT_TENSOR_GMMA, /* wgmma (sm_90), per warp (4 per warpgroup instruction) */
    KG_CT_TOPS_BF16,   /* tensor operations by path (FLOPs): bf16 -> fp32 */
    KG_CT_TOPS_FP16,   /* fp16 -> fp32 */
    KG_CT_TOPS_FP16H,  /* fp16 -> fp16 */
    KG_CT_TOPS_TF32,   /* tf32 -> fp32 */
    KG_CT_TOPS_FP64,   /* fp64 (DMMA) */
    KG_CT_LOCAL_LD,
    KG_CT_LOCAL_ST,  /* local-memory (spill) instructions or requests */
    KG_CT_INST,      /* warp instructions executed */
    KG_CT_OCCUPANCY, /* achieved occupancy, % of peak sustained active */
    KG_CT_SM_PCT,    /* SM throughput, % of peak sustained elapsed */
    KG_CT_DRAM_PCT,  /* DRAM throughput, % of peak sustained elapsed */
    KG_CT_DURATION,  /* ns */
    KG_CT_N
} kg_ct_metric;

#define KG_CT_MAX_ALTS 3
typedef struct {
    const char *key;                   /* short name (report figure "metrics".<key>) */
    const char *names[KG_CT_MAX_ALTS]; /* candidates, preferred first (NULL-terminated) */
    bool ratio;                        /* a % (averaged over kernels, weighted by time),
                                          * else a count (summed over kernels) */
    double scale;                      /* count -> unit (sectors -> bytes: 32) */
} kg_ct_metric_info;

extern const kg_ct_metric_info kg_ct_metrics[KG_CT_N];

/* The base name of a metric ("dram__bytes_read" of "dram__bytes_read.sum"), into buf. */
void kg_ct_base_name(char *buf, size_t n, const char *metric);
/* Resolve every wanted figure against a list of base names the device knows (sorted or not):
 * chosen[i] = index into kg_ct_metrics[i].names, or -1 when none exists. Returns how many
 * figures resolved. */
size_t kg_ct_resolve(int chosen[KG_CT_N], const char *const *known, size_t n_known);

/* ---- per-launch figures (pure) --------------------------------------------------------- */

/* One case's counters per launch(): NaN where a metric was unavailable. */
typedef struct {
    double v[KG_CT_N]; /* summed (counts) / time-weighted (ratios) over the kernels */
    bool have[KG_CT_N];
    int n_kernels;     /* ranges (kernels) profiled in the launch */
    double weight_sum; /* duration weights of the ratios (internal) */
    /* derived */
    double dram_bytes; /* read + write */
    double sysmem_bytes;
    double sysmem_read_bytes, sysmem_write_bytes; /* NaN: no split on this device */
    double l2_bytes;
    double flops;        /* fadd + fmul + 2 ffma, same for d and h (h: thread instructions),
                            * of the FP counters this device has, + tensor_flops (NaN: none) */
    double tensor_flops; /* the tensor ops-path counters summed (NaN: none resolved) */
    bool flops_partial;  /* some FP counter was unavailable, or tensor instructions ran whose
                            * FLOPs no ops-path counter saw (wgmma on GH100): a lower bound */
    double spill;        /* local ld + st */
    double tensor;       /* hmma + gmma instructions (generic tensor pipe without hmma) */
} kg_ct_counts;

/* Add one kernel's values (vals[i] for chosen metrics, NaN otherwise) into c. */
void kg_ct_add_kernel(kg_ct_counts *c, const double vals[KG_CT_N], const bool have[KG_CT_N]);
/* Compute the derived figures of c (after every kernel was added). */
void kg_ct_derive(kg_ct_counts *c);

/* ---- decision (pure) ------------------------------------------------------------------- */

typedef struct {
    double tolerance_rel;      /* growth of DRAM bytes / instructions per launch that regresses
                                  * (counters are near-deterministic: 0.01) */
    double model_factor;       /* the declared work model must be within this factor (1.5):
                                  * a memory-bound kernel's DRAM bytes match its compulsory
                                  * traffic within a few % (L2 write-back, ECC-free HBM), so a
                                  * declaration 2x off fails while 10-30% cache effects pass */
    double occupancy_step;     /* achieved-occupancy drop (percentage points) that regresses */
    double l2_bytes;           /* the device's L2 size: DRAM basis only for bytes >= 2x L2 */
    double ridge_ai;           /* FLOP/B of the run's ceilings (0: KG_CT_RIDGE_DEFAULT): a
                                  * case declared at or above it is compute-bound (no bytes check) */
    double min_bytes;          /* bytes_moved below this is too small to check (sectors) */
    double min_flops;          /* flops below this are too small to check */
    double min_tensor_flops;   /* ... for mostly-tensor work (whole mma tiles run) */
    double spill_share;        /* no mark: local traffic above this share of bytes_moved fails */
    double sysmem_floor_bytes; /* system-memory traffic above this "appeared" (GH100 shows
                                  * ~0.8 MB per kernel with no host memory touched) */
    double sysmem_rel, sysmem_abs; /* with a mark: growth beyond mark * (1 + rel) + abs */
    double dram_peak_bps;          /* the device's DRAM peak, bytes/s (0: unknown, not checked) */
    double rate_slack;             /* DRAM bytes / duration above peak * this cannot be true */
} kg_ct_decide_opts;
#define KG_CT_RIDGE_DEFAULT 10.0
/* occupancy: one warp of a 64-warp SM is 1.6 points; a lost block of 4+ warps is >= 6 */
#define KG_CT_DECIDE_OPTS_INIT                                                            \
    {                                                                                     \
        .tolerance_rel = 0.01, .model_factor = 1.5, .occupancy_step = 5.0, .l2_bytes = 0, \
        .ridge_ai = 0, .min_bytes = 1048576, .min_flops = 1e6, .min_tensor_flops = 1e8,   \
        .spill_share = 0.1, .sysmem_floor_bytes = 4194304, .sysmem_rel = 0.25,            \
        .sysmem_abs = 1048576, .dram_peak_bps = 0, .rate_slack = 1.15                     \
    }

/* What the case declares and what a mark (lookup results, NULL = none) says. */
typedef struct {
    double bytes_moved, flops; /* kg_case_desc work model of one launch() */
    bool uses_tensor_cores;    /* KG_CT_TAG_TENSOR in the case's tags */
    bool bytes_binding;        /* kg_case_desc.bytes_binding: excess DRAM traffic FAILs */
    bool launch_empty;         /* a stream capture of one launch() on kgate's stream
                                  * holds no node (false also when the capture failed) */
    const kg_mark *m_dram, *m_inst, *m_spill, *m_occ, *m_tensor, *m_sysmem;
} kg_ct_expect;

typedef enum {
    KG_CT_OK = 0,
    KG_CT_REGRESSED,   /* against the marks */
    KG_CT_MODEL_WRONG, /* declared work model off by more than the factor: FAIL */
    KG_CT_NO_DATA,     /* nothing measured that could decide */
    KG_CT_NO_MARK,     /* the rule passed and the case has no counter mark yet: PASS */
    KG_CT_INVALID,     /* the counts time nothing or cannot be true: ERROR, never a PASS */
    KG_CT_EXCESS       /* DRAM traffic beyond the factor of bytes_moved, not binding: WARN */
} kg_ct_decision;
const char *kg_ct_decision_name(kg_ct_decision d);

typedef struct {
    kg_ct_decision decision;
    double bytes_ratio; /* measured / declared (NaN: not checked) */
    double flops_ratio;
    const char *bytes_basis; /* "dram" | "l2" (streaming, < 2x L2) | NULL (not checked) */
    double dram_ratio;       /* DRAM bytes / bytes_moved where the excess check ran (every
                                * case of >= min_bytes not checked on the DRAM basis; NaN) */
    unsigned mark_moves;     /* KG_CT_MV_*: the counter marks this run may set or move */
    char why[640];           /* every finding, "; "-separated */
} kg_ct_verdict;

/* kg_ct_verdict.mark_moves: a counter mark is set when the case has none, and moves only when
 * this run beats it by the margin a regression would need the other way (tolerance, occupancy
 * step, sysmem rel + abs); DRAM bytes of a case under 2x L2 (not gated) never move once set.
 * A ratchet that took every lucky count would lock in one process's L2 state (an identical
 * second production run would move marks by noise alone). */
#define KG_CT_MV_DRAM 0x01u
#define KG_CT_MV_INST 0x02u
#define KG_CT_MV_SPILL 0x04u
#define KG_CT_MV_OCC 0x08u
#define KG_CT_MV_TENSOR 0x10u
#define KG_CT_MV_SYSMEM 0x20u

/* The rule (docs/counters.md, the thresholds are the opts above):
 *   ERROR     INVALID: the profiled launch ran no kernel, enqueued nothing on kgate's stream
 *             (e->launch_empty), executed no instruction, or its DRAM bytes over its duration
 *             exceed the device's peak * rate_slack (or DRAM throughput > 100% of peak): the
 *             counts time nothing or cannot be true, so nothing else is decided;
 *   FAIL      MODEL_WRONG: bytes_moved (>= min_bytes, declared AI below the ridge) vs DRAM
 *             bytes (bytes_moved >= 2x L2) or L1<->L2 bytes (smaller, AI < 1) off by more than
 *             model_factor either way; flops (declared > 0 and >= min_flops, min_tensor_flops
 *             for mostly-tensor work) vs FP + tensor FLOPs (not partial), same factor;
 *   REGRESSED DRAM bytes or instructions per launch above mark * (1 + tolerance); spills where
 *             the mark had 0 (no mark: local traffic > max(min_bytes, spill_share x bytes));
 *             tensor instructions 0 for a case tagged tensor-core (or whose mark had some);
 *             achieved occupancy below the mark by more than occupancy_step; system-memory
 *             bytes above max(sysmem_floor, mark * (1 + sysmem_rel) + sysmem_abs);
 *             DRAM bytes above model_factor x bytes_moved in a case declaring them binding
 *             (every bound; not already checked on the DRAM basis);
 *   WARN      EXCESS: the same excess where bytes_moved is not binding (dram_ratio says it);
 *   NO_MARK   passed, and the case has no counter mark; OK passed against marks.
 * and mark_moves (above). */
int kg_ct_decide(kg_ct_verdict *out, const kg_ct_counts *c, const kg_ct_expect *e,
                 const kg_ct_decide_opts *o);

/* The metrics a case keeps as marks (lower is better except occupancy and tensor). */
#define KG_CT_MARK_DRAM "dram_bytes_per_launch"
#define KG_CT_MARK_INST "inst_per_launch"
#define KG_CT_MARK_SPILL "spill_requests_per_launch"
#define KG_CT_MARK_OCC "achieved_occupancy_pct"
#define KG_CT_MARK_TENSOR "tensor_inst_per_launch"
#define KG_CT_MARK_SYSMEM "sysmem_bytes_per_launch"

/* The counter marks, each with its KG_CT_MV_* bit, the report figure it is read from and its
 * direction: one table for the production step (typed rows) and `marks advance --from-report`
 * (a recorded report's figures, whose mark_moves lists the metrics). */
typedef struct {
    unsigned bit;
    const char *metric; /* KG_CT_MARK_* */
    const char *figure; /* KG_FIG_CT_* */
    kg_direction direction;
} kg_ct_mark_def;
#define KG_CT_N_MARKS 6
extern const kg_ct_mark_def kg_ct_mark_defs[KG_CT_N_MARKS];
/* The index in kg_ct_mark_defs of the mark named `metric`, -1 when it is none. */
int kg_ct_mark_index(const char *metric);
/* The count of mark i (kg_ct_mark_defs order) in c, NaN when unavailable. */
double kg_ct_mark_value(const kg_ct_counts *c, size_t i);

/* A case declares tensor-core use with this tag (kg_case_desc.tags, source compatible). */
#define KG_CT_TAG_TENSOR "tensor-core" /* as the reference GEMM cases (kernels/gemm_bf16.cu) */
bool kg_ct_case_uses_tensor(const kg_case_desc *d);

/* ---- the CUPTI range-profiler session (counters_cupti.c) -------------------------------- */

typedef struct kg_ct_session kg_ct_session;
typedef enum {
    KG_CT_AVAIL_OK = 0,
    KG_CT_AVAIL_PRIVILEGE,  /* CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (RmProfilingAdminOnly) */
    KG_CT_AVAIL_BUSY,       /* another profiler holds the device */
    KG_CT_AVAIL_UNSUPPORTED /* chip, MIG, virtualized, confidential computing ... */
} kg_ct_avail;

/* Open a session on the current device's primary context: initialise the profiler, read the
 * chip name and counter availability, resolve the metric table, build the config image.
 * Every CUPTI call is logged to `log` (may be NULL) with its name and result string.
 * KG_ECUPTI with *avail != OK: the gate SKIPs with the error's message as reason. */
int kg_ct_session_open(kg_ct_session **out, kg_ct_avail *avail, int device, FILE *log);
void kg_ct_session_close(kg_ct_session *s);
/* Where the session logs from now on (NULL: nowhere); the caller keeps `log` open. */
void kg_ct_session_set_log(kg_ct_session *s, FILE *log);
const char *kg_ct_session_chip(const kg_ct_session *s);
/* The device's base metric names containing "tensor", "ops_path" or "sysmem", one per line
 * ("" when none): the probe prints them so a GPU run shows which candidates exist. */
const char *kg_ct_session_related(const kg_ct_session *s);
/* Replay passes the config needs (cuptiProfilerHostGetNumOfPasses). */
size_t kg_ct_session_passes(const kg_ct_session *s);
/* The resolved metric name of figure i (NULL: unavailable on this device). */
const char *kg_ct_session_metric(const kg_ct_session *s, kg_ct_metric i);

/* How the passes are replayed: "user" (kgate runs prepare, the L2 flush and the launch once a
 * pass: the L2 is clean and cold at the start of every pass, as with `ncu --cache-control
 * all`) or "kernel" (CUPTI replays each kernel, saving and restoring memory; the L2 is
 * flushed before the first pass only). User replay is the default; kernel replay when
 * KGATE_COUNTERS_REPLAY=kernel or when the profiler refuses user replay. */
const char *kg_ct_session_replay(const kg_ct_session *s);

/* Profile what `launch` enqueues (one range per kernel), sum it into c. `prepare` (NULL:
 * none) restores in-place inputs before each pass, outside the range. wall_s: the profiled
 * call's wall time (replays and flushes included). */
typedef int (*kg_ct_launch_fn)(void *arg, cudaStream_t stream);
typedef struct {
    kg_ct_launch_fn launch;
    kg_ct_launch_fn prepare;
    void *arg;
} kg_ct_work;
int kg_ct_session_profile(kg_ct_session *s, kg_ct_counts *c, double *wall_s, const kg_ct_work *w,
                          cudaStream_t stream);

/* Evict every line of the L2 through reads of `scratch` (>= 4x the L2, zeroed), so that it
 * holds no dirty line and none of the case's data; then synchronize the device
 * (counters_flush.cu says why reads and not writes). */
int kg_ct_l2_flush(const void *scratch, size_t bytes, unsigned *sink, cudaStream_t stream);

/* ---- the gate --------------------------------------------------------------------------- */

typedef struct {
    double tolerance;         /* --counter-tolerance */
    double model_factor;      /* --model-factor */
    double ridge_ai;          /* --ridge */
    const char *marks_path;   /* --marks (recorded) */
    const char *save_marks;   /* --save-marks FILE: merge this run's counters (command layer) */
    kg_mark_lookup_fn lookup; /* handed down by the command layer; NULL: no marks */
    const void *marks;
} kg_counters_gate_opts;
#define KG_COUNTERS_GATE_OPTS_INIT                                                                \
    {                                                                                             \
        .tolerance = 0, .model_factor = 0, .ridge_ai = 0, .marks_path = NULL, .save_marks = NULL, \
        .lookup = NULL, .marks = NULL                                                             \
    }

/* One case's typed result (flat: travels from the worker as bytes). */
typedef struct {
    kg_ct_counts c;
    kg_ct_verdict v;
    double declared_bytes, declared_flops;
    double wall_s; /* the profiled pass, replays included */
    size_t passes;
    double time_s;       /* the counters pass's own kernel time per launch (duration) */
    double ai;           /* measured FLOP / DRAM byte (NaN when either is missing) */
    double tflops, gbps; /* achieved, from time_s */
    char device_class[320];
    char bound[16];    /* "memory" | "compute" | "latency" | "" */
    bool launch_empty; /* a capture of launch() on kgate's stream held no node */
} kg_counters_row;

cJSON *kg_counters_figures(const kg_case_desc *d, const kg_case_result *res);
#define KG_COUNTERS_N_COLUMNS 9
extern const kg_gate_column kg_counters_columns[KG_COUNTERS_N_COLUMNS];

#ifdef __cplusplus
}
#endif
#endif
