/* `kgate compare A.json B.json`: two kgate reports (from any command) side by side, for
 * diagnostic experiments. Results are matched by (gate, case); what changed is the verdict,
 * the bench median (with whether the change exceeds both runs' noise), the parity error
 * figures, and the cases only one report has. The command is runners/cli/compare.c. */
#ifndef KG_REPORT_COMPARE_H
#define KG_REPORT_COMPARE_H

#include "report/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The comparison JSON (`--json FILE`, "schema": KG_CMP_SCHEMA_V). It is not a report: its own
 * keys are these; a case's gate, case and verdict use the report's names (KG_RES_*). */
#define KG_CMP_SCHEMA_V "kgate-compare/1"
#define KG_CMP_A "a" /* {file, command, mode, run_id, device_class, */
#define KG_CMP_B "b" /*  bench_mode} of each report */
#define KG_CMP_FILE "file"
#define KG_CMP_DEVICE_CLASS "device_class"
#define KG_CMP_BENCH_MODE "bench_mode"
#define KG_CMP_WARNINGS "warnings" /* ["device classes differ: ...", ...] */
#define KG_CMP_SUMMARY "summary"   /* the counts of kg_compare_sum */
#define KG_CMP_MATCHED "matched"
#define KG_CMP_CHANGED "changed" /* also per case: anything below changed */
#define KG_CMP_VERDICT_CHANGES "verdict_changes"
#define KG_CMP_BENCH_CHANGES "bench_changes"
#define KG_CMP_BEYOND_NOISE "beyond_noise" /* also per case: true, false, null (no CI) */
#define KG_CMP_SLOWER "slower"
#define KG_CMP_FASTER "faster"
#define KG_CMP_PARITY_CHANGES "parity_changes"
#define KG_CMP_ONLY_A "only_a"
#define KG_CMP_ONLY_B "only_b"
#define KG_CMP_GATES "gates" /* [{gate, cases, changed, results: [...]}] */
#define KG_CMP_CASES "cases"
#define KG_CMP_RESULTS "results"
#define KG_CMP_IN "in"               /* "both" | "a" | "b" */
#define KG_CMP_VERDICT_A "verdict_a" /* null when the case is not in that report */
#define KG_CMP_VERDICT_B "verdict_b"
#define KG_CMP_MEDIAN_A "median_us_a" /* bench figures: median_us, */
#define KG_CMP_MEDIAN_B "median_us_b"
#define KG_CMP_HALF_A "ci_half_us_a" /* (ci_hi_us - ci_lo_us) / 2 */
#define KG_CMP_HALF_B "ci_half_us_b"
#define KG_CMP_CHANGE_PCT "change_pct" /* (B - A) / A x 100 */
#define KG_CMP_MAX_ABS_A "max_abs_a"   /* parity figures */
#define KG_CMP_MAX_ABS_B "max_abs_b"
#define KG_CMP_REL_L2_A "rel_l2_a"
#define KG_CMP_REL_L2_B "rel_l2_b"

typedef enum { KG_CMP_IN_BOTH = 0, KG_CMP_IN_A, KG_CMP_IN_B } kg_cmp_in;

/* One (gate, case): index 0 is A, 1 is B. Strings borrow from the reports. */
typedef struct {
    const char *gate, *case_id;
    kg_cmp_in in;
    const char *verdict[2];       /* NULL: not in that report */
    double median[2], half[2];    /* bench median_us and CI half-width (NAN: not reported);
                                     * the measured times when the sides' time_basis differ */
    bool raw_basis;               /* the sides' time_basis differed: measured times compared */
    double max_abs[2], rel_l2[2]; /* parity (NAN: not reported or not finite) */
    double change_pct;            /* of the median, B against A (NAN: not both) */
    int beyond_noise;             /* |B - A| > half A + half B: 1, within: 0, no CI: -1 */
    bool verdict_changed, bench_changed, parity_changed, changed;
} kg_cmp_row;

typedef struct {
    const char *name;
    size_t first, n, changed; /* rows[first, first + n) */
} kg_cmp_gate;

typedef struct {
    size_t matched, changed, verdict, bench, beyond_noise, slower, faster, parity, only_a, only_b;
} kg_compare_sum;

typedef struct {
    kg_cmp_row *rows; /* ordered by gate, then case */
    size_t n;
    kg_cmp_gate *gates;
    size_t n_gates;
    const char *file[2], *command[2], *mode[2], *run_id[2], *device_class[2], *bench_mode[2];
    char warning[2][400]; /* device classes differ, bench modes differ */
    size_t n_warnings;
    kg_compare_sum sum;
} kg_compare;

/* Compare two loaded reports (kg_report_load); names are the files, for messages. A (gate,
 * case) given twice in one report is KG_EPARSE naming the file and the entry. The result
 * borrows from both reports: keep them until kg_compare_free. */
int kg_compare_build(kg_compare *out, const cJSON *a, const char *a_name, const cJSON *b,
                     const char *b_name);
void kg_compare_free(kg_compare *c);
/* The text tables (one per gate, changed rows only), the warnings and the summary line. */
void kg_compare_text(const kg_compare *c, kg_sbuf *b);
/* The summary line alone, without a newline. */
void kg_compare_summary_line(const kg_compare *c, kg_sbuf *b);
/* Write path atomically ("-": stdout): the comparison as JSON (every case), or Markdown. */
int kg_compare_write_json(const kg_compare *c, const char *path);
int kg_compare_write_markdown(const kg_compare *c, const char *path);

#ifdef __cplusplus
}
#endif
#endif
