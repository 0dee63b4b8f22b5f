/* The command line's internals: one kg_cmd_* per command (one file each), dispatched by
 * main.c. Only this layer turns KG_E* codes into exit codes. */
#ifndef KG_CLI_H
#define KG_CLI_H

#include <limits.h>
#include "driver/driver.h"
#include "bench/bench.h"
#include "counters/counters.h"
#include "marks/marks.h"
#include "marks/marks_ref.h"
#include "ab/ab.h"
#include "selftest/selftest.h"
#include "marks/advance.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One file a command: */
/* A subcommand: implemented by its gate (gates/<gate>.c or gates/cmd_<x>.c). */
typedef int (*kg_cmd_fn)(kg_registry *reg, int argc, char **argv);

int kg_cmd_list(kg_registry *reg, int argc, char **argv);
int kg_cmd_run(kg_registry *reg, int argc, char **argv);
int kg_cmd_marks(kg_registry *reg, int argc, char **argv);
int kg_cmd_history(kg_registry *reg, int argc, char **argv); /* history.c: the run history */
int kg_cmd_selftest(kg_registry *reg, int argc, char **argv);
/* The selftest's certificate (selftest_cert.c): what a passing selftest was proved for. */
typedef struct {
    char build[65], catalogue[65]; /* kg_build_id() and the defect runner's SHA-256 */
    char driver[64], gpu_uuid[64];
    char path[PATH_MAX]; /* its file in the runner's cache */
} kg_selftest_cert_key;
int kg_selftest_cert_key_make(kg_selftest_cert_key *k, const char *defects,
                              const kg_device_info *dev);
/* Pure: 0 when `cert` holds for `k` at now_s, else 1 with the reason in why. */
int kg_selftest_cert_invalid(const cJSON *cert, const kg_selftest_cert_key *k, double now_s,
                             double max_age_s, char *why, size_t n);
int kg_selftest_cert_save(const kg_report *rep, const kg_selftest_cert_key *k, uint64_t seed);
/* 1: the certificate's rows and summary are in rep; 0: none valid (why says why); <0 error. */
int kg_selftest_cert_reuse(kg_report *rep, const kg_selftest_cert_key *k, double max_age_s,
                           char *why, size_t n);
int kg_cmd_report(kg_registry *reg, int argc, char **argv);
int kg_cmd_compare(kg_registry *reg, int argc, char **argv);
int kg_cmd_status(kg_registry *reg, int argc, char **argv);
int kg_cmd_comment(kg_registry *reg, int argc, char **argv);
int kg_cmd_ab(kg_registry *reg, int argc, char **argv);
int kg_cmd_marks_advance(int argc, char **argv); /* run.c: the production step from a report */
int kg_cmd_gate(kg_registry *reg, const struct kg_gate *g, int argc, char **argv);

/* The marks side shared by the gates with marks hooks (gate_marks.c): the gates'
 * lookup over kg_marks; --save-marks FILE checked up front (not the compared file, writable,
 * valid if it exists; 0 when save_marks is NULL); FILE's marks to merge into (new when absent)
 * with the date, driver and CUDA versions this run's marks carry. */
typedef struct {
    char date[32], driver[16], cuda[16];
} kg_cli_mark_stamp;
const kg_mark *kg_cli_marks_lookup(const void *marks, const char *cls, const char *id,
                                   const char *metric);
int kg_cli_save_marks_check(const char *marks_path, const char *save_marks);
int kg_cli_save_marks_open(kg_marks **m, kg_cli_mark_stamp *st, const char *save_marks,
                           const kg_run *run);

/* The marks of a gate with marks hooks (gate.h; gate_marks.c), for `kgate <gate>` and `run`:
 * loaded before the device is touched (--marks-ref REF, else --marks, else $KGATE_MARKS), the
 * gate's lookup pointed at them, and --save-marks. */
typedef struct {
    kg_marks *marks;
    kg_marks *save;
    kg_marks_source src; /* where `marks` came from (the report's marks_source) */
    char shown[1400];    /* --marks-ref: "REF:PATH", the settings' marks entry */
} kg_cli_marks;

/* Load the marks into g's slots of opts (a bad file is exit 2 with or without a GPU), check
 * --save-marks (not the compared file, writable, valid if it exists). */
int kg_cli_marks_prepare(kg_cli_marks *b, const struct kg_gate *g, void *opts);
/* Point another gate's slots at marks already loaded (`run`: one marks file for every gate). */
void kg_cli_marks_share(const kg_cli_marks *b, const struct kg_gate *g, void *opts,
                        const char *path);
/* The report's marks_source: the file, the ref and commit, or none. */
void kg_cli_marks_source(const kg_cli_marks *b, const kg_run *run);
/* After the gate ran: marks_source (a gate that may read a ref), then the marks of its typed
 * rows merged into --save-marks, if given. */
int kg_cli_marks_save(kg_cli_marks *b, const kg_run *run, const struct kg_gate *g, void *opts);
void kg_cli_marks_free(kg_cli_marks *b);

/* --shard (shard.c): a case's bench seconds from its marks (kg_common_opts.shard_weight), set
 * on co by the commands that load marks; `report --merge OUT SHARD...`: the exit code of the
 * merged rows (kg_exit_code_for_counts), or <0 with the refusal set. */
double kg_cli_shard_weight(const void *marks, const char *case_id);
void kg_cli_shard_weigh(kg_common_opts *co, const kg_marks *marks);
int kg_cli_report_merge(const char *out, const char *const *shards, size_t n);
/* fleet.c: before the ratchet, each candidate's GPU (dev, else the report's device
 * or merged parts) and what the class's run history teaches its band (history/history_fleet.h). */
int kg_cli_fleet_learn(kg_advance_input *in, kg_git *g, const kg_device_info *dev,
                       const cJSON *report);
/* `kgate history offsets` (history_offsets.c): per-GPU offsets of a case from the history. */
int kg_cmd_history_offsets(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
