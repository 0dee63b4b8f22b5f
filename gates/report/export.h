/* Outputs that CI systems read, made from a kgate report (the JSON every command writes):
 * JUnit XML, a Markdown summary, a standalone HTML report, and commit statuses.
 * They consume the report JSON only, so they work from any command (`kgate report --from FILE`)
 * and `kgate run` can call them on its in-memory report (kg_report_json()). */
#ifndef KG_EXPORT_H
#define KG_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include "core/kg_core.h"
#include "core/report_keys.h"
#include "core/sbuf.h" /* kg_sbuf */

#ifdef __cplusplus
extern "C" {
#endif

/* Each writes `path` atomically ("-" writes to stdout). KG_EPARSE when the report is not a
 * kgate report (names the field), KG_EIO when the file cannot be written. */
int kg_export_junit(const cJSON *report, const char *path);
int kg_export_markdown(const cJSON *report, const char *path);
int kg_export_html(const cJSON *report, const char *path);

/* Load and check a report file (schema "kgate-report/1", results[] with gate/case/verdict). */
int kg_report_load(cJSON **out, const char *path);

/* ---- shared by the exporters -------------------------------------------------------- */

/* "Where the time went" (the report's timing and its slowest cases) in Markdown; nothing for
 * a report without timing (report/timing_md.c). */
void kg_export_md_timing(kg_sbuf *b, const cJSON *report);
/* The order of both "slowest cases" (Markdown table, HTML chart): wall seconds descending,
 * ties (a coarse clock: many cases at 0.0001 s) by case id, then gate, then report position, so
 * the same report always lists the same cases in the same order. */
typedef struct {
    double wall;
    const char *case_id, *gate; /* NULL sorts as "" */
    size_t order;               /* position in results[] */
    const cJSON *item;          /* the result (the caller's; not compared) */
} kg_export_slow_key;
int kg_export_slow_cmp(const kg_export_slow_key *a, const kg_export_slow_key *b);
/* The same as SVG charts for the HTML report: a bar per part and the slowest cases, each
 * stacked by phase (report/timing_svg.c). */
void kg_export_html_timing(kg_sbuf *b, const cJSON *report);

/* One result with the figures the outputs show (NAN when the gate did not report them), each
 * read from its one key in core/report_keys.h (view.c row_figures). */
typedef struct {
    const char *gate, *case_id, *message;
    kg_verdict verdict;
    const cJSON *figures;
    const char *decision;    /* bench decision: SAME, IMPROVED, REGRESSED, NO_MARK (else NULL) */
    double time_us;          /* this run's median (median_us) */
    double mark_us;          /* the mark it was compared with (mark.value) */
    double change_pct;       /* change against the mark, percent, positive = worse (delta_rel) */
    double band_pct;         /* the band the change had to clear (tolerance_rel), percent; without
                                a mark the run's own noise band (band_rel) */
    double ceiling_pct;      /* percent of the ceiling that bounds the case (pct_*_ceiling) */
    double seconds;          /* wall time the gate spent on the case (elapsed_s), 0 if unknown */
    const char *fault_class; /* figures.fault.class (signal, exit, timeout, cuda, interrupted):
                                the case's worker faulted (verdict ERROR); NULL otherwise */
    const cJSON *fault_tail; /* figures.fault.output_tail: the worker's last lines, or NULL */
    int severity;            /* 0 = failed, regressed or XPASS ... 5 = passed; for ordering
                                (XFAIL, a pass with a note, ranks with WARN) */
    int case_severity;       /* the worst severity of the row\'s case (the order) */
    size_t order;            /* position in the report */
} kg_export_row;

typedef struct {
    kg_export_row *rows;
    size_t n;
    bool diagnostic; /* mode != production or certifying != true */
    const char *command, *mode, *run_id, *started_at, *commit, *device_name, *device_class;
    bool local_changes; /* provenance.local_changes: the commit plus uncommitted changes */
    double seed;
    bool incomplete;          /* "incomplete": true: the run was interrupted, results so far */
    const char *no_device;    /* report.no_device: why the run had no GPU (NULL: it had one) */
    bool no_gpu;              /* no GPU and some results SKIP (the run exits 3): headlined
                                 "incomplete: no GPU", never "passed" */
    int faults;               /* rows with figures.fault */
    int counts[KG_VERDICT_N]; /* by kg_verdict, as written (kg_verdict_parse_full): XFAIL and
                                 XPASS counted apart from PASS and FAIL */
} kg_export_view;

/* Build the view (rows borrow from report). Rows are ordered: cases with failures, unexpected
 * passes (XPASS) or regressions first, then errors, warnings and expected failures (XFAIL),
 * skips, passes; within a case, report order. */
int kg_export_view_build(kg_export_view *out, const cJSON *report);
void kg_export_view_free(kg_export_view *v);
/* The run's measured ceilings as the outputs quote them (NaN where not measured): the device
 * copy and the bf16 cuBLAS GEMM, with the SM clock the GEMM ran at and the device's max. */
typedef struct {
    double copy_gbps, gemm_tflops, gemm_mhz, max_mhz;
} kg_export_ceilings;
void kg_export_ceilings_get(kg_export_ceilings *out, const cJSON *report);
/* One sentence naming them, for the "% of ceiling" figures and the roofline: "copy 4267 GB/s
 * (memory-bound cases); bf16 cuBLAS GEMM 665.8 TFLOP/s at 1499 of 1980 MHz (compute-bound
 * cases: a kernel faster than cuBLAS, or at a higher clock, passes 100%)". Plain text (no
 * character HTML or Markdown would read); nothing when neither was measured. */
void kg_export_ceilings_text(kg_sbuf *b, const kg_export_ceilings *c);
/* A number formatted for tables ("-" when NAN). */
const char *kg_fmt_num(char *buf, size_t n, double v, const char *fmt);
/* "1 expected failure" / "2 expected failures": count and noun with its plural (noun + "s",
 * or "es" after s/x, as "pass"). */
const char *kg_fmt_count(char *buf, size_t n, int count, const char *noun);

#ifdef __cplusplus
}
#endif
#endif
