/* kgate internal core: shared by every gate. Not installed. */
#ifndef KG_CORE_H
#define KG_CORE_H

#include <getopt.h>
#include <stdio.h>
#include <stdbool.h>
#include <cjson/cJSON.h>
#include "kgate/kgate.h"
#include "core/opt.h" /* kg_opt: the common options table below */

#ifdef __cplusplus
extern "C" {
#endif

#define KG_ERR(code, ...) kg_error_set((code), __FILE__, __LINE__, __VA_ARGS__)
#define KG_UNUSED(x) ((void)(x))
#define KG_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- device ---------------------------------------------------------------------------- */

typedef struct {
    int ordinal;
    char name[256];
    char uuid[64];           /* "GPU-xxxxxxxx-..." */
    int cc_major, cc_minor;
    int sm_count;
    int driver_version;      /* e.g. 13000 */
    int runtime_version;
    size_t global_mem;
    int l2_bytes;
    int max_smem_per_sm;
    int max_threads_per_sm;
    int max_blocks_per_sm;
    int regs_per_sm;
    int warp_size;
    double mem_clock_khz;    /* 0 when the runtime does not report it */
    double sm_clock_khz;
} kg_device_info;

/* Probe the GPU: KG_ENODEV (with a one-line message) when there is none. Selects it. */
int kg_device_open(kg_device_info *info, int ordinal);
/* "NVIDIA H200/sm_90": the key marks are stored under. */
void kg_device_class(const kg_device_info *info, char *buf, size_t n);
cJSON *kg_device_to_json(const kg_device_info *info);

/* ---- selection and common options ------------------------------------------------------ */

typedef struct {
    const char *filter;      /* POSIX extended regex over case ids; NULL = all */
    uint64_t seed;
    bool seed_set;
    int device;
    const char *report_path; /* NULL = no JSON report */
    bool diagnostic;         /* every command but `run --production` is non-certifying */
} kg_common_opts;

#define KG_COMMON_OPTS_INIT { NULL, 0, false, 0, NULL, true }

/* Long options shared by the gate subcommands; their `val`s are >= 0x1000. */
enum { KG_OPT_FILTER = 0x1000, KG_OPT_SEED, KG_OPT_DEVICE, KG_OPT_REPORT, KG_OPT_HELP };
#define KG_COMMON_LONGOPTS                                     \
    { "filter", required_argument, NULL, KG_OPT_FILTER },      \
    { "seed", required_argument, NULL, KG_OPT_SEED },          \
    { "device", required_argument, NULL, KG_OPT_DEVICE },      \
    { "report", required_argument, NULL, KG_OPT_REPORT },      \
    { "help", no_argument, NULL, KG_OPT_HELP }

/* The common options as a kg_opt table over kg_common_opts (core/opt.c): --filter, --seed,
 * --device, --report, with kg_common_opt's checks and messages. */
extern const kg_opt kg_common_opt_table[];
extern const size_t kg_n_common_opts;

/* Handle one common option (returns 1 if handled, 0 if not common, <0 on a bad value). */
int kg_common_opt(kg_common_opts *o, int opt, const char *arg);
/* getopt_long refused argv[optind - 1]: print `usage` to stderr, set "CMD: unknown option or
 * missing value: 'ARG'" and return KG_EINVAL. */
int kg_opt_unknown(const char *command, const char *usage, char *const *argv);
/* Parse an unsigned integer flag value strictly (whole string, range). */
int kg_parse_u64(const char *flag, const char *s, uint64_t *out);
int kg_parse_int(const char *flag, const char *s, int lo, int hi, int *out);
int kg_parse_double(const char *flag, const char *s, double *out);

/* Cases selected by a filter: indexes into the registry. KG_ENOTFOUND when none match. */
typedef struct {
    size_t *idx;
    size_t n;
} kg_selection;
int kg_select(kg_selection *out, const kg_registry *reg, const char *filter);
void kg_selection_free(kg_selection *s);

/* Replace every occurrence of `secret` in s, in place, by "***" (a shorter secret by as many
 * stars as it has characters): messages, logs and reports never carry a token. */
void kg_redact(char *s, const char *secret);

/* Run argv (argv[0] a path, or a name looked up in PATH) with stdout and stderr into `log`
 * (appended or truncated), wait, and give its exit status (128 + signal when killed).
 * `who` prefixes the error messages ("selftest", "ab"). */
int kg_run_logged(int *exit_code, const char *const *argv, const char *log, bool append,
                  const char *who);

/* A seed from /dev/urandom when the user gave none (it is printed and reported). */
uint64_t kg_seed_fresh(void);
/* The running executable's path (/proc/self/exe); KG_EINTERNAL if unknown or too long. */
int kg_self_exe(char *buf, size_t n);

/* ---- case instances -------------------------------------------------------------------- */

/* A case set up on the device: state, output description and a private non-blocking stream. */
typedef struct {
    const kg_case_desc *desc;
    void *state;
    kg_case_io io;
    cudaStream_t stream;
    bool set_up;
} kg_instance;

int kg_instance_open(kg_instance *inst, const kg_case_desc *desc, uint64_t seed, int device);
void kg_instance_close(kg_instance *inst);
size_t kg_instance_out_bytes(const kg_instance *inst);
/* Fill the output with 0xFF bytes (a NaN in every float dtype) on the instance stream. */
int kg_instance_poison(kg_instance *inst);
/* launch() then synchronize, returning a copy of the output in host (caller frees). */
int kg_instance_run_copy(void **host_out, kg_instance *inst);
/* Derive a per-case seed so every case gets independent inputs from one printed seed. */
uint64_t kg_case_seed(uint64_t seed, const char *case_id);

/* ---- report ---------------------------------------------------------------------------- */

typedef enum {
    KG_VERDICT_PASS = 0,
    KG_VERDICT_WARN,     /* passes, with something to look at */
    KG_VERDICT_FAIL,
    KG_VERDICT_SKIP,     /* not run (e.g. no GPU) */
    KG_VERDICT_ERROR     /* could not be decided (CUDA error, ...) */
} kg_verdict;

const char *kg_verdict_name(kg_verdict v);
int kg_verdict_parse(const char *s, kg_verdict *out);

typedef struct kg_report kg_report;

/* `command` e.g. "parity"; `diagnostic` stamps every output non-certifying. */
int kg_report_new(kg_report **out, const char *command, bool diagnostic);
void kg_report_free(kg_report *r);
void kg_report_set_seed(kg_report *r, uint64_t seed);
void kg_report_set_device(kg_report *r, const kg_device_info *dev);
void kg_report_set_no_device(kg_report *r, const char *why);
/* Record one result. `figures` (may be NULL) is taken over. */
int kg_report_add(kg_report *r, const char *gate, const char *case_id, kg_verdict v,
                  const char *message, cJSON *figures);
/* Attach extra JSON under the top-level key (taken over, replacing any previous). */
void kg_report_set_extra(kg_report *r, const char *key, cJSON *value);
cJSON *kg_report_json(kg_report *r); /* borrowed */
/* Counts of verdicts over all results. */
void kg_report_counts(const kg_report *r, int counts[5]);
/* Write atomically: temp file in the same directory, fsync, rename. */
int kg_report_write(kg_report *r, const char *path);
/* Check early that `path` can be written (creates and removes a temp file beside it). */
int kg_path_check_writable(const char *path);

/* Write `len` bytes to `path` atomically (temp + fsync + rename). */
int kg_file_write_atomic(const char *path, const void *data, size_t len);
/* Read a whole file (NUL-terminated); caller frees. */
int kg_file_read(char **out, size_t *len, const char *path);

/* ---- gates ------------------------------------------------------------------------------ */

/* Everything a gate needs to run over a selection. `run` fills it once and runs every gate;
 * each `kgate <gate>` command fills it from its own flags. Gate-specific settings live here
 * too (one struct, so `run` can pass the flags through). */
typedef struct {
    uint64_t seed;
    int device;
    const kg_device_info *dev;   /* NULL when there is no GPU (gates SKIP or use a static path) */
    bool diagnostic;
    bool quiet;                  /* no table on stdout */
    /* preflight */
    const char *resource_baseline;   /* baselines/resources.json */
    const char *spill_allowlist;     /* baselines/spill_allowlist.json */
    const char *self_exe;            /* path of the running executable (static preflight) */
    /* bench */
    const char *marks_path;          /* baselines/high_water.json */
    int bench_mode;                  /* 0 warm, 1 cold */
    double bench_budget_s;           /* per case; 0 = default */
    /* hotpath */
    int hotpath_runs;                /* determinism runs per case; 0 = default (10) */
    /* bench (decision and proof settings; bench.c) */
    double bench_band_floor;         /* --band-floor, relative; 0 = default (0.005) */
    double bench_compute_floor;      /* --compute-floor, relative; 0 = default (0.15) */
    double bench_abs_floor_us;       /* --abs-floor, microseconds; 0 = default (0.1) */
    const char *bench_save_marks;    /* --save-marks FILE: merge this run's marks into FILE */
} kg_gate_ctx;

#define KG_GATE_CTX_INIT { 0, 0, NULL, true, false, NULL, NULL, NULL, NULL, 0, 0.0 }

/* A gate adds one result per selected case (per gate) to the report and prints its table.
 * It returns <0 only for errors that stop the whole run (bad input files, out of memory);
 * a case's own failure or CUDA error is that case's verdict. */
typedef int (*kg_gate_fn)(kg_report *rep, const kg_registry *reg, const kg_selection *sel,
                          const kg_gate_ctx *ctx);

int kg_gate_parity(kg_report *rep, const kg_registry *reg, const kg_selection *sel,
                   const kg_gate_ctx *ctx);
int kg_gate_preflight(kg_report *rep, const kg_registry *reg, const kg_selection *sel,
                      const kg_gate_ctx *ctx);
int kg_gate_hotpath(kg_report *rep, const kg_registry *reg, const kg_selection *sel,
                    const kg_gate_ctx *ctx); /* hotpath.c */
int kg_gate_bench(kg_report *rep, const kg_registry *reg, const kg_selection *sel,
                  const kg_gate_ctx *ctx); /* bench.c */

/* Shared front half of a gate command: parse common flags (calling `extra` for the others),
 * select cases, check the report path, open the device (dev NULL if none, with one line
 * printed). Returns 0, or <0 with the error set; *help_shown when --help was printed. */
typedef int (*kg_extra_opt_fn)(kg_gate_ctx *ctx, int opt, const char *arg);
typedef struct {
    const char *command;           /* "parity" */
    const char *usage;             /* full usage text printed by --help and usage errors */
    const struct option *longopts; /* must include KG_COMMON_LONGOPTS */
    kg_extra_opt_fn extra;         /* may be NULL */
} kg_cmd_spec;

typedef struct {
    kg_common_opts opts;
    kg_gate_ctx ctx;
    kg_selection sel;
    kg_device_info dev;
    kg_report *rep;
    bool help_shown;
    bool no_gpu;
} kg_cmd_state;

int kg_cmd_begin(kg_cmd_state *st, const kg_cmd_spec *spec, kg_registry *reg, int argc,
                 char **argv);
/* Write the report if asked, print the summary line, free; returns the exit code:
 * FAIL -> 1, else ERROR -> 4, else no GPU with SKIPs -> 3, else 0. `rc` is the gate's rc. */
int kg_cmd_end(kg_cmd_state *st, int rc);

/* ---- CLI --------------------------------------------------------------------------------- */

/* A subcommand: implemented by its gate (gates/<gate>.c or gates/cmd_<x>.c). */
typedef int (*kg_cmd_fn)(kg_registry *reg, int argc, char **argv);

int kg_cmd_list(kg_registry *reg, int argc, char **argv);
int kg_cmd_run(kg_registry *reg, int argc, char **argv);   /* pipeline.c */
int kg_cmd_marks(kg_registry *reg, int argc, char **argv); /* marks_cmd.c */
int kg_cmd_parity(kg_registry *reg, int argc, char **argv);
int kg_cmd_selftest(kg_registry *reg, int argc, char **argv); /* selftest.c */
/* Selftest: every gate over the defect runner and this runner's clean cases (selftest.c). */
int kg_selftest_defects_path(char *buf, size_t n, const char *given);
/* with_clean: also run every gate over this runner's clean cases (false alarms). `run` passes
 * false: its own gates run over the same clean cases right after, and a FAIL there blocks too. */
int kg_selftest_run(kg_report *rep, const char *defects_exe, const kg_common_opts *o,
                    const char *keep_dir, bool with_clean, int *exit_code);
int kg_cmd_report(kg_registry *reg, int argc, char **argv); /* export.c */
int kg_cmd_status(kg_registry *reg, int argc, char **argv); /* status.c */
int kg_cmd_preflight(kg_registry *reg, int argc, char **argv);
int kg_cmd_hotpath(kg_registry *reg, int argc, char **argv);   /* hotpath.c */
int kg_cmd_bench(kg_registry *reg, int argc, char **argv);     /* bench.c */
int kg_cmd_ab(kg_registry *reg, int argc, char **argv);        /* ab.c */

/* Map a negative KG_E* code to a process exit code (usage/input vs runtime vs no GPU). */
int kg_exit_code_for_error(int rc);
/* Print "kgate: <message>" for the last error to stderr and return the exit code. */
int kg_cli_fail(int rc);

/* ---- parity (the comparison math, used by other gates too) ----------------------------- */

typedef struct {
    size_t n;
    size_t nonfinite_out;    /* NaN/Inf elements in the output */
    size_t nonfinite_ref;
    size_t first_bad;        /* first element breaking the policy (or SIZE_MAX) */
    size_t mismatched_bytes; /* bitwise: differing elements */
    double max_abs;
    size_t max_abs_at;
    double rel_l2;
    double cosine;
    bool pass;
    char reason[160];
} kg_parity_result;

/* Compare n elements: out (dtype od) against ref (dtype rd) under policy p. */
int kg_parity_compare(kg_parity_result *res, const void *out, kg_dtype od, const void *ref,
                      kg_dtype rd, size_t n, const kg_parity_policy *p);
/* Parity of one case (instance, poison, launch, reference, compare) into the report. */
int kg_parity_run_case(kg_report *rep, const kg_case_desc *d, uint64_t seed, int device,
                       kg_verdict *verdict, kg_parity_result *res_out);
/* Convert element i of a typed buffer to double. */
double kg_value_at(const void *buf, kg_dtype t, size_t i);

#ifdef __cplusplus
}
#endif
#endif
