/* Every run on record (`kgate history append|render`): one compact record per bench row of a
 * report, as JSON Lines, one file per device class (history/<class>.jsonl) on a data branch
 * (default kgate-history; never the marks file), committed through libgit2 with the same
 * compare-and-swap and push rules as the marks (marks_git.c, git.c). Bounded: the last
 * KG_HISTORY_KEEP records of each (device class, case, metric) are kept.
 * Reports are untrusted input: the strict loader, report keys from report_keys.h only, ids
 * without control characters, sizes capped. */
#ifndef KG_RUN_HISTORY_H
#define KG_RUN_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include "git/git.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KG_HISTORY_BRANCH_DEFAULT "kgate-history"
#define KG_HISTORY_BRANCH_ENV "KGATE_HISTORY_BRANCH"
#define KG_HISTORY_DIR "history"  /* files in the branch's tree: history/<class>.jsonl */
#define KG_HISTORY_KEEP 500       /* records kept per (device class, case, metric) */
#define KG_HISTORY_MAX_ROWS 10000 /* bench rows taken from one report */
#define KG_HISTORY_MAX_FILE ((size_t)64 * 1024 * 1024)

/* The record's keys (history/<class>.jsonl; documented in docs/production-ci.md). */
#define KG_HK_CASE "case"
#define KG_HK_DEVICE "device_class"
#define KG_HK_METRIC "metric"
#define KG_HK_MEDIAN "median_us"
#define KG_HK_CI_LO "ci_lo_us"
#define KG_HK_CI_HI "ci_hi_us"
#define KG_HK_SAMPLES "samples"
#define KG_HK_POWER_STATE "power_state" /* when the row's figures carry it */
#define KG_HK_K "k"                     /* launches per sample, when the row carries it */
#define KG_HK_COMMIT "commit"           /* the code under test */
#define KG_HK_RUN_ID "run_id"
#define KG_HK_DATE "date" /* the report's started_at */
#define KG_HK_MODE "mode" /* "production" | "diagnostic" */
#define KG_HK_DECISION "decision"
#define KG_HK_MARK "mark"             /* the mark compared with, null when none */
#define KG_HK_GPU_UUID "gpu_uuid"     /* the GPU the row ran on, when known */
#define KG_HK_GPU_SERIAL "gpu_serial" /* its board serial, when NVML gave one */

typedef struct {
    char case_id[256], device_class[256], metric[64], commit[72], run_id[128], date[24];
    char mode[16], decision[24], power_state[64];
    char gpu_uuid[64], gpu_serial[64]; /* "" when unknown (older records) */
    double median, ci_lo, ci_hi, mark; /* mark < 0: none */
    long samples, k;                   /* k 0: unknown */
} kg_history_rec;

typedef struct {
    kg_history_rec *v;
    size_t n, cap;
} kg_history_recs;

void kg_history_recs_free(kg_history_recs *r);
int kg_history_recs_push(kg_history_recs *r, const kg_history_rec *rec);

/* The bench rows of a report (loaded strictly from `path`) as records: *n_skipped counts bench
 * rows without a measurement (SKIP, ERROR). A production report is verified against
 * KGATE_REPORT_KEY when it is set. KG_EPARSE / KG_EINVAL naming the file and the row. */
int kg_history_from_report(kg_history_recs *out, const char *path, size_t *n_skipped);

/* One record as a JSON line (no newline; caller frees), and back (strict: every required key,
 * the types and ranges the writer produces). */
int kg_history_rec_json(char **out, const kg_history_rec *r);
int kg_history_rec_parse(kg_history_rec *r, const char *line, size_t len, const char *name);

/* "NVIDIA H200/sm_90" -> "history/NVIDIA_H200_sm_90.jsonl". */
void kg_history_file_of(char *buf, size_t n, const char *device_class);

/* Append `add` to `file_text` (the file's JSON Lines, may be NULL), skipping records already
 * there (same run id, case, metric, device class), then bound each (class, case, metric) to
 * its newest `keep` by date. *out: the new text (caller frees); *added: new records kept. */
int kg_history_merge_text(char **out, size_t *added, const char *file_text,
                          const kg_history_recs *add, size_t keep, const char *name);

typedef struct {
    const char *repo_dir; /* NULL: the repository of the cwd */
    const char *branch;   /* NULL: $KGATE_HISTORY_BRANCH, else kgate-history */
    const char *remote;   /* NULL: no push */
    const char *author, *email;
    int max_attempts;
} kg_history_append_opts;
#define KG_HISTORY_APPEND_OPTS_INIT                                                      \
    {                                                                                    \
        .repo_dir = NULL, .branch = NULL, .remote = NULL, .author = NULL, .email = NULL, \
        .max_attempts = 16                                                               \
    }

typedef struct {
    size_t added; /* records the commit added (0: all were there already) */
    bool committed, pushed;
    git_oid commit;
    char file[300];
    char refname[300];
    int attempts;
} kg_history_append_result;

/* Commit `recs` (one device class) onto the history branch: compare-and-swap on the ref,
 * retried; with a remote, every attempt builds on the remote's tip (fetched) carrying over
 * local records it lacks, and a rejected push retries. */
int kg_history_append(kg_history_append_result *res, const kg_history_append_opts *o,
                      const kg_history_recs *recs);

/* Every record on the branch tip (all files under history/), in file order. KG_ENOTFOUND when
 * the branch does not exist. */
int kg_history_load(kg_history_recs *out, kg_git *g, const char *refname_or_rev);

#ifdef __cplusplus
}
#endif
#endif
