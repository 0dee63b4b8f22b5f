/* The advance logic: from a production report's bench results and the current marks to the new
 * marks. Pure (no git, no files): the pipeline calls it once per compare-and-swap attempt, each
 * time on the marks of the ref's current tip, so a race can neither lose nor lower a mark. */
#ifndef KG_ADVANCE_H
#define KG_ADVANCE_H

#include <stdbool.h>
#include <stddef.h>
#include "core/kg_core.h"
#include "core/report_keys.h"
#include "git/git.h"
#include "marks/marks.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The report keys the advance relies on (docs/production-ci.md, "Report keys the marks
 * pipeline reads"): KG_RK_MODE, KG_RK_CERTIFYING, KG_RK_RUN_ID, KG_RK_DEVICE(_CLASS),
 * KG_RK_DRIVER, KG_RK_RUNTIME, KG_RK_PROVENANCE, KG_RK_STARTED_AT, KG_RK_GATES, KG_RK_RESULTS
 * and each result's KG_RES_GATE, _CASE, _VERDICT; a row's figures are read by its gate's
 * kg_gate_production.report_candidates hook (gate.h): the bench's KG_FIG_DECISION, _METRIC,
 * _MEDIAN, _CI_LO, _CI_HI, _BAND, _SAMPLES, _DIRECTION, _PROCESSES, _ENV_LO, _ENV_HI, _RUN_K,
 * _RUN_POWER_STATE, and when present _RAW_MEDIAN, _MEASURED_SPREAD, _ENERGY_PER_LAUNCH,
 * _ENERGY_SPREAD, the counters' KG_FIG_CT_DECISION, _MARK_MOVES and the figures these name;
 * defined with every other report key in core/report_keys.h. */

/* The most separate processes one bench result may combine (KG_BENCH_MAX_PROCESSES). */
#define KG_ADVANCE_MAX_PROCESSES 16

/* One bench result that may move a mark (decision IMPROVED or NO_MARK), already converted to
 * the mark it would set: value = the conservative edge of the run's interval. */
typedef struct {
    kg_mark cand; /* strings owned by the kg_advance_input */
    char decision[16];
} kg_advance_cand;

typedef struct {
    char *run_id;
    char *device_class; /* NULL when the report has no device */
    bool certifying;
    bool all_passed;     /* no FAIL / ERROR / SKIP, a device, every gate over every case */
    char why_not[512];   /* when !all_passed: what failed, for the message */
    int counts[5];       /* verdict counts over all results */
    int n_bench, n_same; /* bench results; those that decided SAME */
    int n_single;        /* IMPROVED / NO_MARK results of one process: never candidates */
    kg_advance_cand *cands;
    size_t n_cands;
    /* what the replay guard (kg_advance_guard) compares: the run's started_at and
     * commit under test (NULL when absent), and the marks commit its own marks_update names
     * (a report of a run that already committed its advance; NULL otherwise). */
    char *started_at;
    char *commit;
    char *applied_commit;
} kg_advance_input;

/* Parse a report (as written by gates/report.c). Malformed structure, or figures a gate's
 * report_candidates hook refuses, are KG_EPARSE naming `name` and the entry; a row's gate is
 * found in the gate table (kg_gate_find) by its name, and its candidates go through
 * kg_advance_add. A diagnostic report is accepted here (certifying is false): the caller
 * refuses it (KG_EREFUSED) before anything else. */
int kg_advance_parse(kg_advance_input **out, const cJSON *report, const char *name,
                     const char *set_by);
void kg_advance_input_free(kg_advance_input *in);

/* kg_advance_obs, one result as both paths see it, is in core/mark.h (gates fill it). */

/* Count a SAME, or turn an IMPROVED / NO_MARK result into a candidate mark (validated: the
 * interval, the band, an integer sample count); `name` names the source in messages.
 * Production never advances from one process: a result of fewer than 2 processes is no
 * candidate (counted in n_single). The candidate carries runs = processes, the envelope, a
 * band of max(the run's band, (N+1)/(N-1) x the envelope's half-width), k and power state. */
int kg_advance_add(kg_advance_input *in, const kg_advance_obs *o, const char *name);
/* "YYYY-MM-DDTHH:MM:SSZ", now. */
void kg_advance_now(char *buf, size_t n);

/* `marks advance --from-report` (advance_report.c): load `path` strictly (size limit, no
 * duplicate key, nothing trailing), kg_advance_parse it, refuse a diagnostic report, verify its
 * signature (kg_report_json_verify with KGATE_REPORT_KEY) and kg_advance_check_production.
 * *root gets the report (the caller frees both). Every refusal is KG_EREFUSED/KG_EPARSE. */
int kg_advance_load(kg_advance_input **out, cJSON **root, const char *path, const char *set_by);
/* A production report's shape: schema kgate-report/1, command run, `gates` exactly the gate
 * table (kg_gates), and selftest results. KG_EREFUSED naming `name` and the field. */
int kg_advance_check_production(const cJSON *root, const char *name);
/* provenance.commit is a full commit id the repository of `g` holds, in the history of
 * `refname` or HEAD. KG_EREFUSED otherwise. */
int kg_advance_check_commit(const cJSON *root, kg_git *g, const char *refname, const char *name);

/* The replay guard (advance_guard.c): a signature binds a report's content, not its
 * freshness, so before the ratchet runs on the marks `m` of the commit `base` (NULL: a branch
 * not created yet) a report is refused (KG_EREFUSED naming the rule) when
 *   replay:    its run id is already applied on `base` (a `Run-Id:` trailer of a kgate commit
 *              in base's history), or the marks commit its marks_update names is in it, and
 *              it would move a mark (a repeat that moves nothing passes: a rerun after a
 *              failed push finishes; a line says it was applied);
 *   freshness: it started before the last `marks lower` of a mark it would move (the
 *              `Kgate-Lowered:` trailers of base's history, and a mark's own date when its
 *              set_by is a lowering), or more than KG_ADVANCE_FUTURE_S in the future;
 *   ancestry:  a mark it would move was set from a commit that is not the report's commit
 *              under test nor one of its ancestors (older or side-branch code), or from one
 *              this repository lacks (a shallow clone: fetch the history).
 * The run id must be [A-Za-z0-9._:+-]{1,128} (it goes into a commit message). */
#define KG_ADVANCE_FUTURE_S 600
#define KG_ADVANCE_LOWERED_TRAILER "Kgate-Lowered: "
int kg_advance_guard(kg_git *g, const git_oid *base, const kg_marks *m, const kg_advance_input *in,
                     const char *name);
/* The `Kgate-Lowered:` trailer line (no newline) of a lowering or removal of the mark
 * (device_class, case_id, metric) at `at` ("YYYY-MM-DDTHH:MM:SSZ"). Caller frees. */
int kg_advance_lowered_trailer(char **out, const char *device_class, const char *case_id,
                               const char *metric, const char *at);

/* One mark that moved. */
typedef struct {
    char *device_class, *case_id, *metric;
    bool had_old;
    double old_value, new_value, band_rel;
    kg_direction direction;
} kg_mark_move;

typedef struct {
    kg_mark_move *v;
    size_t n;
} kg_mark_moves;
void kg_mark_moves_free(kg_mark_moves *mv);

/* The ratchet: for every candidate, put it when the key has no mark, or when it is strictly
 * better than the current mark; never lower one. `m` is modified in place (it is the marks of
 * the tip this attempt is based on); `moves` receives what moved (freed first). */
int kg_advance_apply(kg_marks *m, const kg_advance_input *in, kg_mark_moves *moves);

/* Commit message: a summary line, every move (case, device class, metric, old -> new, band)
 * and the run id. Caller frees. */
int kg_advance_message(char **out, const kg_advance_input *in, const kg_mark_moves *moves);

#ifdef __cplusplus
}
#endif
#endif
