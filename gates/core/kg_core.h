/* kgate internal core: shared by every gate. Not installed. */
#ifndef KG_CORE_H
#define KG_CORE_H

#include <stdio.h>
#include <stdbool.h>
#include <sys/types.h> /* pid_t */
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
    char uuid[64];        /* "GPU-xxxxxxxx-..." */
    char serial[64];      /* the board's serial (NVML), "" when unavailable: */
    char serial_why[128]; /* why not ("NVML: not supported on this board", ...) */
    int cc_major, cc_minor;
    int sm_count;
    int driver_version; /* e.g. 13000 */
    int runtime_version;
    size_t global_mem;
    int l2_bytes;
    int max_smem_per_sm;
    int max_threads_per_sm;
    int max_blocks_per_sm;
    int regs_per_sm;
    int warp_size;
    double mem_clock_khz; /* 0 when the runtime does not report it */
    double sm_clock_khz;
} kg_device_info;

/* Probe the GPU: KG_ENODEV (with a one-line message) when there is none. Selects it. */
int kg_device_open(kg_device_info *info, int ordinal);
/* "NVIDIA H200/sm_90": the key marks are stored under. */
void kg_device_class(const kg_device_info *info, char *buf, size_t n);
cJSON *kg_device_to_json(const kg_device_info *info);
/* "13.0" from 13000 (cudaDriverGetVersion / cudaRuntimeGetVersion). */
void kg_device_version_str(char *buf, size_t n, int version);

/* ---- selection and common options ------------------------------------------------------ */

#define KG_DEVICES_MAX 64 /* --devices: the most GPUs of one run (KG_PHASE_SLOTS workers) */

typedef struct {
    const char *filter; /* POSIX extended regex over case ids; NULL = all */
    uint64_t seed;
    bool seed_set;
    int device;
    bool device_set;         /* --device was given (it must then be the first of --devices) */
    const char *report_path; /* NULL = no JSON report */
    bool diagnostic;         /* every command but `run --production` is non-certifying */
    bool quiet;              /* no console tables (`run --quiet`) */
    const char *exclude;     /* --exclude REGEX: cases left out after --filter */
    double case_timeout_s;   /* --case-timeout: the watchdog's limit per case (0: the gate's) */
    const char *tag;         /* --tag T[,U]: only cases with one of these tags; NULL = all */
    int shard_index, shard_count; /* --shard I/N (1-based; count 0: not sharded) */
    /* The expected seconds of a case's bench from its marks (<= 0: unknown) and its context:
     * set by the commands that load marks (run, bench); NULL balances by case count. */
    double (*shard_weight)(const void *ctx, const char *case_id);
    const void *shard_ctx;
    /* --devices 0,1,...: one worker per listed GPU; every gate but a KG_GATE_ONE_DEVICE one
     * runs different cases at once (gates/driver/pool.c); devices[0] is the run's device.
     * n_devices 0: --device alone. */
    int devices[KG_DEVICES_MAX];
    size_t n_devices;
    bool no_device; /* the gate needs no device and no random input (preflight
                       --static): none is probed, no seed printed, no worker */
} kg_common_opts;

#define KG_COMMON_OPTS_INIT                                                             \
    {                                                                                   \
        .filter = NULL, .seed = 0, .seed_set = false, .device = 0, .device_set = false, \
        .report_path = NULL, .diagnostic = true, .quiet = false, .exclude = NULL,       \
        .case_timeout_s = 0, .tag = NULL, .no_device = false                            \
    }

/* The common options as a kg_opt table over kg_common_opts (core/opt.c): --filter, --seed,
 * --device, --report, with kg_common_opt's checks and messages. */
extern const kg_opt kg_common_opt_table[];
extern const size_t kg_n_common_opts;

/* Parse an unsigned integer flag value strictly (whole string, range). */
int kg_parse_u64(const char *flag, const char *s, uint64_t *out);
int kg_parse_int(const char *flag, const char *s, int lo, int hi, int *out);
int kg_parse_double(const char *flag, const char *s, double *out);
/* The offset of the first byte of s[0..n) that is not strict UTF-8 (overlong forms,
 * surrogates and code points above U+10FFFF are invalid), or (size_t)-1 when it all is.
 * Marks files, --reason, --author and every mark string must be UTF-8. */
size_t kg_utf8_bad(const char *s, size_t n);

/* Cases selected by a filter: indexes into the registry. KG_ENOTFOUND when none match. */
typedef struct {
    size_t *idx;
    size_t n;
} kg_selection;
/* The cases whose id or one of whose tags matches `filter` (NULL: all) and, when `tags` is
 * given ("a,b"), that carry one of those tags. */
int kg_select(kg_selection *out, const kg_registry *reg, const char *filter, const char *tags);
/* Whether the case's tags (kg_case_desc.tags) hold `tag` (exactly). */
bool kg_case_has_tag(const kg_case_desc *d, const char *tag);
/* The timeout of one gate on the case: --timeout when given (> 0), else the case's, else 0
 * (none). */
double kg_case_timeout_s(const kg_case_desc *d, double cli_timeout_s);
void kg_selection_free(kg_selection *s);
/* Drop the selected cases whose id matches `exclude` (NULL: none); KG_ENOTFOUND when no case
 * is left. */
int kg_selection_exclude(kg_selection *s, const kg_registry *reg, const char *exclude);

/* --shard I/N (core/shard.c; the rule is at the top of that file). */
#define KG_SHARD_MAX 1024
#define KG_SHARD_CASE_COST_S 1.0 /* seconds a case costs the gates besides the bench's replays */
int kg_shard_parse(const char *v, int *index, int *count);
/* --devices "0,1,3": ordinals in [0, 1024), at most KG_DEVICES_MAX; KG_EINVAL naming --devices
 * otherwise. An ordinal listed twice gets two workers (driver/pool.c says what runs there). */
int kg_devices_parse(const char *v, int *devices, size_t *n);
/* Pure: shard_of[i] in 1..count for each of the n cases (ids[i], weight_s[i] its marks'
 * expected seconds, <= 0 unknown; weight_s may be NULL), longest first to the least loaded. */
int kg_shard_assign(int *shard_of, const char *const *ids, const double *weight_s, size_t n,
                    int count);
/* SHA-256 (hex) of the ids sorted, one per line: the selection's hash. */
int kg_shard_hash_ids(char hex[65], const char *const *ids, size_t n);
/* Keep this shard's cases of sel (o->shard_index of o->shard_count); *info is report.shard.
 * KG_EINVAL without o->seed_set or with more shards than cases. */
int kg_shard_select(kg_selection *sel, const kg_registry *reg, const kg_common_opts *o,
                    cJSON **info);

/* Replace every occurrence of `secret` in s, in place, by "***" (a shorter secret by as many
 * stars as it has characters): messages, logs and reports never carry a token. */
void kg_redact(char *s, const char *secret);
/* kg_redact of `secret` and of its encodings: percent-encoded (either case, fully or RFC 3986),
 * hex, base64 (standard and URL alphabets, at each of the three alignments, as inside a Basic
 * credential) and JSON \u escapes. Secrets under 4 characters are left alone. */
void kg_redact_all(char *s, const char *secret);
/* Copy `s` into buf (size n) with control characters (C0, DEL, C1 as UTF-8) written as \xNN,
 * so text from an input file never reaches a terminal raw. Returns buf. */
const char *kg_str_printable(char *buf, size_t n, const char *s);

/* Secrets in the environment (core/redact.c): "NAME=value" or "NAME" is one kgate reads (the
 * report key, push, status and comment tokens) or a CI job credential (*_TOKEN, *_SECRET,
 * *_PASSWORD, *_JWT). kg_env_scrub_self wipes and unsets them in this process (a forked
 * worker, before any case code); kg_env_scrubbed gives environ without them (an envp for exec:
 * *out holds environ's pointers, free only the array). Only the parent signs, pushes, posts. */
bool kg_env_is_secret(const char *entry);
void kg_env_scrub_self(void);
/* Moves the secrets out of this process's initial environment block, which a child can read
 * as /proc/$PPID/environ (kg_env_scrubbed and the worker's fork call it first). */
void kg_env_hide_initial(void);
int kg_env_scrubbed(char ***out);

/* Every child process kgate starts runs with a time limit: KGATE_CHILD_TIMEOUT (seconds) when
 * set, else the caller's estimate of the child's work, else KG_CHILD_DEFAULT_LIMIT_S. At the
 * limit the child's process group is killed (SIGKILL) and the wait reports it. */
#define KG_CHILD_TIMEOUT_ENV "KGATE_CHILD_TIMEOUT"
#define KG_CHILD_DEFAULT_LIMIT_S (4 * 3600.0)
typedef struct {
    int code;         /* exit status; 128 + signal when killed */
    int sig;          /* the signal that ended it (0: it exited) */
    bool timed_out;   /* killed at the limit */
    bool interrupted; /* killed because this process was interrupted (kg_interrupted) */
    char why[160];    /* "exited 3", "killed by signal 11 (Segmentation fault)", "timed out ..." */
} kg_child_status;
double kg_now_s(void); /* CLOCK_MONOTONIC, seconds */
/* SIGINT/SIGTERM (core/interrupt.c): kg_interrupt_catch installs the one handler (no
 * SA_RESTART); kg_interrupted is the signal caught so far (0: none), kg_interrupt_name its
 * name. A waiting loop that sees it stops: kg_child_wait kills the child's group at once. */
void kg_interrupt_catch(void);
int kg_interrupted(void);
const char *kg_interrupt_name(void);

/* A terminal's extras (core/tty.c). Colour of verdict words: kg_color_set decides it from
 * `--color WHEN` (auto: stdout a terminal, TERM not dumb, NO_COLOR unset or empty; always;
 * never; else KG_EINVAL naming `flag`), before the worker is forked; undecided, the first use
 * decides auto. kg_color_cell prints a (padded) table cell, its word coloured when it is a
 * verdict word (PASS, FAIL, REGRESSED, WARN, ERROR, SKIP, ...); kg_color_begin/end the SGR
 * around one such word ("" when off or not a verdict word). */
int kg_color_set(const char *flag, const char *when);
bool kg_color_on(void);
const char *kg_color_sgr(const char *word, size_t len);
void kg_color_cell(FILE *out, const char *cell);
const char *kg_color_begin(const char *word);
const char *kg_color_end(const char *word);
/* One progress line for a long step, on a terminal only: begin names it ("bench 3/31 ID"),
 * tick (from a waiting loop) draws "  ... LABEL (12 s)" in place once it ran 1 s, at most 5
 * times a second; clear erases it before other output (kept: the next tick redraws); end
 * erases and forgets it. */
void kg_progress_begin(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void kg_progress_tick(void);
void kg_progress_clear(void);
void kg_progress_end(void);
double kg_child_limit_s(double work_s);
/* What an ended child leaves running (core/reap.c). kg_reap_init makes this process
 * a child subreaper (once); kg_reap_child_setup, in a child after fork (before exec or case
 * code), makes the child one too, so what its code forks stays under it while it lives.
 * kg_reap_track/untrack: the children this process started and has not reaped. After a child
 * ended, kg_reap_orphans kills (SIGKILL) and reaps every direct child not tracked -- orphans
 * of ended children only: a living child's descendants are under that child -- and what they
 * started, says so on stderr (naming `who`) and returns how many it killed. Spawns and sweeps
 * run on one thread. */
void kg_reap_init(void);
void kg_reap_child_setup(void);
void kg_reap_track(pid_t pid);
void kg_reap_untrack(pid_t pid);
int kg_reap_orphans(const char *who);
/* Start argv (a path, or a name looked up in PATH) in its own process group, the environment
 * without secrets, stdout and stderr into `log` (appended or truncated), a child subreaper
 * (kg_reap_child_setup) tracked by kg_reap_track. */
int kg_child_spawn(pid_t *pid, const char *const *argv, const char *log, bool append,
                   const char *who);
/* Wait for pid (started at kg_now_s() `started`) at most limit_s (0: no limit); its process
 * group is killed once it is gone or at the limit. Interrupted (kg_interrupted), the group is
 * killed at once, reaped, and the wait is KG_EINTERNAL "WHO: interrupted by SIGINT ...". */
int kg_child_wait(kg_child_status *st, pid_t pid, double started, double limit_s, const char *who);
int kg_run_limited(kg_child_status *st, const char *const *argv, const char *log, bool append,
                   double limit_s, const char *who);
/* kg_run_limited with kg_child_limit_s(0): its exit status (128 + signal when killed); a
 * child killed at the limit is KG_EINTERNAL. `who` prefixes messages ("selftest", "ab"). */
int kg_run_logged(int *exit_code, const char *const *argv, const char *log, bool append,
                  const char *who);

/* A seed from /dev/urandom when the user gave none (it is printed and reported). */
uint64_t kg_seed_fresh(void);
/* getenv, with an empty value taken as unset (CI systems export empty variables). */
const char *kg_env(const char *name);
/* The running executable's path (/proc/self/exe); KG_EINTERNAL if unknown or too long. */
int kg_self_exe(char *buf, size_t n);
/* The kgate build id: 64 hex digits of SHA-256 over the gate library's and the command line's
 * sources and the toolchain they were built with (cmake/kg_build_id.cmake); the same in every
 * runner linked against one kgate build, whatever kernels it registers. */
const char *kg_build_id(void);

/* ---- case instances -------------------------------------------------------------------- */

/* A case set up on the device: state, output description and a private non-blocking stream. */
typedef struct {
    const kg_case_desc *desc;
    void *state;
    kg_case_io io;
    cudaStream_t stream;
    bool set_up;
} kg_instance;

/* After setup, io.n_outputs >= 1 and io.outputs describe every output (a one-output case's
 * out/out_count/out_dtype/rows as outputs[0], named "out"); io.out.. mirror outputs[0]. */
int kg_instance_open(kg_instance *inst, const kg_case_desc *desc, uint64_t seed, int device);
void kg_instance_close(kg_instance *inst);
/* Bytes of every output together (the host copies below hold them back to back). */
size_t kg_instance_out_bytes(const kg_instance *inst);
/* Byte offset of output i in such a copy. */
size_t kg_instance_out_offset(const kg_instance *inst, int i);
/* Fill every output with 0xFF bytes (a NaN in every float dtype) on the instance stream. */
int kg_instance_poison(kg_instance *inst);
/* Enqueue the copies of every output into host (kg_instance_out_bytes), back to back; the
 * caller synchronizes the stream. */
int kg_instance_copy_out(void *host, kg_instance *inst);
/* The case's prepare() (restore in-place inputs) on the instance stream, if it has one. */
int kg_instance_prepare(kg_instance *inst);
/* prepare(), launch(), then synchronize, returning a copy of the outputs in host (caller
 * frees). */
int kg_instance_run_copy(void **host_out, kg_instance *inst);
/* Derive a per-case seed so every case gets independent inputs from one printed seed. */
uint64_t kg_case_seed(uint64_t seed, const char *case_id);

/* ---- report ---------------------------------------------------------------------------- */

typedef enum {
    KG_VERDICT_PASS = 0,
    KG_VERDICT_WARN, /* passes, with something to look at */
    KG_VERDICT_FAIL,
    KG_VERDICT_SKIP,  /* not run (e.g. no GPU) */
    KG_VERDICT_ERROR, /* could not be decided (CUDA error, ...) */
    KG_VERDICT_XFAIL, /* failed the gate the case declares it fails (xfail_gate): passes */
    KG_VERDICT_XPASS  /* passed the gate it declares it fails: a failure */
} kg_verdict;
#define KG_VERDICT_N 7  /* counts indexed by every verdict */
#define KG_VERDICT_N5 5 /* counts of the five counting verdicts (kg_verdict_parse folds) */

const char *kg_verdict_name(kg_verdict v);
/* The counting verdict of a name: XFAIL counts as PASS and XPASS as FAIL, so a reader that
 * keeps one counter per PASS..ERROR (KG_VERDICT_N5) stays in range and judges them right. */
int kg_verdict_parse(const char *s, kg_verdict *out);
/* Any of the KG_VERDICT_N names, as written. */
int kg_verdict_parse_full(const char *s, kg_verdict *out);
/* The counting verdict of v (XFAIL -> PASS, XPASS -> FAIL, the rest as is). */
kg_verdict kg_verdict_counted(kg_verdict v);

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
/* The isolation worker forwards every extra a gate sets to its parent's report. */
typedef void (*kg_report_extra_fn)(const char *key, const cJSON *value);
void kg_report_forward_extras(kg_report_extra_fn fn);
/* Attach extra JSON under the top-level key (taken over, replacing any previous). */
void kg_report_set_extra(kg_report *r, const char *key, cJSON *value);
cJSON *kg_report_json(kg_report *r); /* borrowed */
/* The run id and the commit under test (provenance.commit, "unknown" when none) it records. */
const char *kg_report_run_id(const kg_report *r);
const char *kg_report_commit(const kg_report *r);
const char *kg_report_started_at(const kg_report *r);
/* Name the commit under test (a diagnostic run outside CI: HEAD of the repository). */
void kg_report_set_commit(kg_report *r, const char *commit);
/* Say that the code under test is that commit plus uncommitted changes to tracked files. */
void kg_report_set_local_changes(kg_report *r);
/* Counts of the counting verdicts over all results (kg_verdict_parse: XFAIL as PASS, XPASS as
 * FAIL). */
void kg_report_counts(const kg_report *r, int counts[KG_VERDICT_N5]);
/* Counts of every verdict as written. */
void kg_report_counts_full(const kg_report *r, int counts[KG_VERDICT_N]);
/* Write atomically: temp file in the same directory, fsync, rename. */
int kg_report_write(kg_report *r, const char *path);
/* Check early that `path` can be written (creates and removes a temp file beside it); "-"
 * (standard output) always can. */
int kg_path_check_writable(const char *path);

/* Write `len` bytes to `path` atomically (temp + fsync + rename); "-" writes them to standard
 * output, so every output flag takes "-" the same way. */
int kg_file_write_atomic(const char *path, const void *data, size_t len);
/* A command whose report goes to "-" while it prints tables: standard output is kept for the
 * data ("-" writes go there) and the console (fd 1) moves to standard error, so
 * `kgate preflight --report - | jq` reads JSON alone. Idempotent. */
int kg_stdout_for_data(void);
/* The same for a file made of n parts written one after the other (a header and a payload
 * without copying them together); a path, never "-". */
int kg_file_write_atomic_parts(const char *path, const void *const *parts, const size_t *lens,
                               int n);
/* The runner's cache directory: $KGATE_CACHE_DIR, else $XDG_CACHE_HOME/kgate, else
 * $HOME/.cache/kgate; KG_ENOTFOUND when none is set. Not created here. */
int kg_cache_dir(char *buf, size_t n);
/* The SHA-256 of a file's bytes as 64 hex digits (a build's id: the runner's own file). */
int kg_file_sha256(char hex[65], const char *path);
/* mkdir -p (0700); KG_EIO naming the directory that could not be made. */
int kg_mkdir_p(const char *dir);
/* Read a whole file (NUL-terminated); caller frees. Errors name the file and errno: missing is
 * KG_ENOTFOUND, unreadable or a directory KG_EINVAL (exit 2). */
int kg_file_read(char **out, size_t *len, const char *path);
/* The size limit of every input kgate parses (reports, marks, baselines, allowlists): a file
 * over it is refused (exit 2) naming it, and nothing is read past it (/dev/zero, a FIFO). */
#define KG_INPUT_MAX_BYTES ((size_t)64 * 1024 * 1024)
int kg_file_read_limit(char **out, size_t *len, const char *path, size_t limit);

/* ---- strict JSON (core/json.c): the one loader of every JSON input ---------------------- */

/* Parse `text` (`len` bytes, NUL-terminated): a NUL byte inside, anything but white space
 * after the value, invalid JSON or a key given twice in one object is KG_EPARSE naming `name`
 * (and the line/column or the object). */
int kg_json_parse_strict(cJSON **out, const char *text, size_t len, const char *name);
/* kg_file_read_limit(KG_INPUT_MAX_BYTES) + kg_json_parse_strict. */
int kg_json_load(cJSON **out, const char *path);

/* ---- authentic reports (core/sign.c): HMAC-SHA256 with mbedtls --------------------------- */

#define KG_REPORT_KEY_ENV "KGATE_REPORT_KEY"
#define KG_REPORT_KEY_MIN 16 /* characters; shorter keys are refused */
/* The key from KGATE_REPORT_KEY, NULL when unset or empty. Never printed: kg_error_set
 * redacts it (and its encodings) from every message. */
const char *kg_report_key(void);
/* Sign a report: a top-level "signature" {alg, value} (replacing any), the HMAC-SHA256 of the
 * report without it printed by cJSON_PrintUnformatted. KG_EREFUSED for a key under
 * KG_REPORT_KEY_MIN characters. Sign last: any later change to the report voids it. */
int kg_report_sign(kg_report *r, const char *key);
int kg_report_json_sign(cJSON *root, const char *key);
/* 0 when `root` carries a signature by `key` over its canonical bytes; KG_EREFUSED (exit 2)
 * naming `name` when it is unsigned, mis-signed, malformed, or `key` is NULL. */
int kg_report_json_verify(const cJSON *root, const char *key, const char *name);

/* ---- where a case is (for the isolation parent: the phase a fault happened in) -------------- */

/* Record the gate, case and phase this process is in. Writes into a page shared with the
 * isolation parent when kg_phase_share() mapped one (a no-op copy otherwise), so the parent
 * still knows the phase after the worker died. Cheap: three bounded string copies. */
void kg_phase_set(const char *gate, const char *case_id, const char *phase);
/* Map the shared pages (before fork), one per worker slot; 0 or KG_EIO. Slot 0 is current. */
#define KG_PHASE_SLOTS 64 /* --devices: at most this many workers at once (KG_DEVICES_MAX) */
int kg_phase_share(void);
/* Make slot `slot` the page this process writes and reads: a worker its own, the parent the
 * one of the worker it asks about (no-op before kg_phase_share or out of range). */
void kg_phase_slot(int slot);
/* The last recorded gate, case and phase (the parent reads them after a fault). */
void kg_phase_get(char *gate, char *case_id, char *phase, size_t n);
/* The recorded case is `case_id`. */
bool kg_phase_is_case(const char *case_id);
/* Evidence of the current case, for a parent whose worker died: worker side, set what a gate
 * observed the moment it is observed (e.g. "cudaMalloc [alloc/free] in launch under
 * observation (CUPTI)"); the first text per case wins; kg_phase_set with a gate or a case (the
 * start of a case, session.c) clears it, a phase alone keeps it. A bounded copy, no
 * allocation (callable from a CUPTI callback). */
void kg_phase_evidence_set(const char *text);
/* Parent side: the evidence into buf (n bytes, "" when none); true when there is some. */
bool kg_phase_evidence_get(char *buf, size_t n);
/* Where a case's wall time went: kg_phase_set charges the time since the last change to the
 * kind of the phase it leaves (setup, prepare, reference and teardown by their names, every
 * other phase is the gate's own work); a new case starts from zero. */
enum {
    KG_PHASE_SETUP,
    KG_PHASE_PREPARE,
    KG_PHASE_REFERENCE,
    KG_PHASE_WORK,
    KG_PHASE_TEARDOWN,
    KG_PHASE_N
};
const char *kg_phase_kind_name(int kind);
/* The case's account is closed (worker side, after run_case). */
void kg_phase_case_end(void);
/* The seconds per kind of the recorded case if it is `case_id` in `gate` (true), a still open
 * phase counted until now (a worker that died in it); zeros and false for another case. */
bool kg_phase_times(const char *gate, const char *case_id, double out[KG_PHASE_N]);
/* Seconds to the tenth of a millisecond (wall-clock accounting, not a measurement); 0 for
 * a negative or NaN time. */
double kg_report_round_s(double s);
/* The report key of each phase kind (KG_RK_PHASE_SETUP ... _TEARDOWN), by KG_PHASE_*. */
extern const char *const kg_report_phase_keys[KG_PHASE_N];
/* {wall_s, setup_s, prepare_s, reference_s, work_s, teardown_s} (report_keys.h) */
cJSON *kg_report_phase_json(const double s[KG_PHASE_N]);
/* The last recorded result gets its phase seconds (results[].timing). */
void kg_report_row_timing(kg_report *r, const double s[KG_PHASE_N]);
/* The last added row ran on GPU `ordinal` (--devices runs: every row says which). */
void kg_report_row_device(kg_report *r, int ordinal);

/* ---- exit codes (only the command line and the driver turn errors into them) ------------ */

/* Map a negative KG_E* code to a process exit code (usage/input vs runtime vs no GPU). */
int kg_exit_code_for_error(int rc);
/* Print "kgate: <message>" for the last error to stderr, then the usage line a usage error
 * left (kg_cli_usage_hint), and return the exit code. */
int kg_cli_fail(int rc);
/* The one line kg_cli_fail prints under the next error (NULL: none): a usage error's
 * "usage: kgate CMD [options]; ..." (opt.c), not the whole help. */
void kg_cli_usage_hint(const char *line);

#ifdef __cplusplus
}
#endif
#endif
