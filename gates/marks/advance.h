/* The advance logic: from a production report's bench results and the current marks to the new
 * marks. Pure (no git, no files): the pipeline calls it once per compare-and-swap attempt, each
 * time on the marks of the ref's current tip, so a race can neither lose nor lower a mark. */
#ifndef KG_ADVANCE_H
#define KG_ADVANCE_H

#include <stdbool.h>
#include <stddef.h>
#include "core/kg_core.h"
#include "marks/marks.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The report keys the advance relies on: all in one place (docs/production-ci.md, "Report
 * keys the marks pipeline reads"). Top level: */
#define KG_RK_MODE "mode"                 /* "production" | "diagnostic" */
#define KG_RK_CERTIFYING "certifying"     /* true only for `run --production` */
#define KG_RK_RUN_ID "run_id"
#define KG_RK_DEVICE "device"             /* object (null without a GPU) */
#define KG_RK_DEVICE_CLASS "class"        /* report.device.class: the marks' device key */
#define KG_RK_DRIVER "driver_cuda_version"
#define KG_RK_RUNTIME "runtime_version"
#define KG_RK_PROVENANCE "provenance"     /* .commit: the code under test */
#define KG_RK_GATES "gates"               /* `run` lists the gates it ran: each must cover
                                             every case */
#define KG_RK_RESULTS "results"           /* [{gate, case, verdict, message, figures}] */
/* Bench results (gate "bench"), figures.*: */
#define KG_BENCH_GATE "bench"
#define KG_FIG_DECISION "decision"        /* IMPROVED | NO_MARK | SAME | REGRESSED | ... */
#define KG_FIG_METRIC "metric"            /* "time_us_warm", ... */
#define KG_FIG_MEDIAN "median_us"
#define KG_FIG_CI_LO "ci_lo_us"
#define KG_FIG_CI_HI "ci_hi_us"
#define KG_FIG_BAND "band_rel"
#define KG_FIG_SAMPLES "samples"
#define KG_FIG_DIRECTION "direction"      /* optional: "higher_is_better"; default lower */

/* One bench result that may move a mark (decision IMPROVED or NO_MARK), already converted to
 * the mark it would set: value = the conservative edge of the run's interval. */
typedef struct {
    kg_mark cand;          /* strings owned by the kg_advance_input */
    char decision[16];
} kg_advance_cand;

typedef struct {
    char *run_id;
    char *device_class;    /* NULL when the report has no device */
    bool certifying;
    bool all_passed;       /* no FAIL / ERROR / SKIP, a device, every gate over every case */
    char why_not[512];     /* when !all_passed: what failed, for the message */
    int counts[5];         /* verdict counts over all results */
    int n_bench, n_same;   /* bench results; those that decided SAME */
    kg_advance_cand *cands;
    size_t n_cands;
} kg_advance_input;

/* Parse a report (as written by gates/report.c). Malformed structure or bench figures are
 * KG_EPARSE naming `name` and the entry. A diagnostic report is accepted here (certifying is
 * false): the caller refuses it (KG_EREFUSED) before anything else. */
int kg_advance_parse(kg_advance_input **out, const cJSON *report, const char *name,
                     const char *set_by);
void kg_advance_input_free(kg_advance_input *in);

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
