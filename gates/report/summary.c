/* Markdown summary of a kgate report, for $GITHUB_STEP_SUMMARY and merge-request notes:
 * a DIAGNOSTIC banner when the run certifies nothing, an INCOMPLETE one when it was
 * interrupted, what needs attention first (failures, unexpected passes, regressions, errors and
 * faults), then per case each gate's verdict, time, change against the mark with its noise band,
 * and percent of the measured ceiling. */
#include <math.h>
#include <string.h>
#include "report/export.h"

static const char *verdict_icon(const kg_export_row *r)
{
    if (r->decision && strcmp(r->decision, KG_RV_DEC_REGRESSED) == 0)
        return "🔴";
    switch (r->verdict) {
    case KG_VERDICT_FAIL: return "❌";
    case KG_VERDICT_ERROR: return "💥";
    case KG_VERDICT_WARN: return "⚠️";
    case KG_VERDICT_SKIP: return "⏭️";
    case KG_VERDICT_XFAIL: return "☑️"; /* passes: the declared failure still fails */
    case KG_VERDICT_XPASS: return "❗";      /* fails: the declared failure now passes */
    default: return "✅";
    }
}

/* "+1.23% (band ±0.50%)" or "no mark" or "-". */
static void change_cell(kg_sbuf *b, const kg_export_row *r)
{
    if (r->decision && strcmp(r->decision, KG_RV_DEC_NO_MARK) == 0) {
        kg_sbuf_puts(b, "no mark");
        return;
    }
    if (isnan(r->change_pct)) {
        kg_sbuf_puts(b, "-");
        return;
    }
    kg_sbuf_printf(b, "%+.2f%%", r->change_pct);
    if (!isnan(r->band_pct))
        kg_sbuf_printf(b, " (band ±%.2f%%)", r->band_pct);
}

static void row_line(kg_sbuf *b, const kg_export_row *r, bool show_case)
{
    char t[32], c[32];
    kg_sbuf_puts(b, "| ");
    if (show_case)
        kg_sbuf_md_code(b, r->case_id, 120);
    kg_sbuf_puts(b, " | ");
    kg_sbuf_md(b, r->gate, 40);
    kg_sbuf_printf(b, " | %s %s", verdict_icon(r), kg_verdict_name(r->verdict));
    if (r->fault_class) { /* the worker died, hung or lost its context: say how, first */
        kg_sbuf_puts(b, " **FAULT ");
        kg_sbuf_md(b, r->fault_class, 20);
        kg_sbuf_puts(b, "**");
    }
    if (r->decision) {
        kg_sbuf_puts(b, " (");
        kg_sbuf_md(b, r->decision, 40);
        kg_sbuf_puts(b, ")");
    }
    /* The bench median when there is one, else the gate's own wall time for the case. */
    if (isnan(r->time_us) && r->seconds > 0)
        kg_sbuf_printf(b, " | %.2f s | ", r->seconds);
    else
        kg_sbuf_printf(b, " | %s | ", kg_fmt_num(t, sizeof t, r->time_us, "%.2f µs"));
    change_cell(b, r);
    kg_sbuf_printf(b, " | %s | ", kg_fmt_num(c, sizeof c, r->ceiling_pct, "%.1f%%"));
    kg_sbuf_md(b, r->message, 200);
    kg_sbuf_puts(b, " |\n");
}

static const char table_head[] =
    "| case | gate | verdict | time | vs mark | % of ceiling | message |\n"
    "| --- | --- | --- | ---: | ---: | ---: | --- |\n";

/* The headline and the cautions: never "passed" without a GPU or when interrupted. */
static void md_headline(kg_sbuf *b, const kg_export_view *v)
{
    const int *n = v->counts;
    int fails = n[KG_VERDICT_FAIL], errs = n[KG_VERDICT_ERROR];
    kg_sbuf_puts(b, "## kgate ");
    kg_sbuf_md(b, v->command ? v->command : "report", 40);
    /* No GPU and skipped results (exit 3): never "passed", the GPU gates did not run. */
    kg_sbuf_printf(b, ": %s%s\n\n", v->incomplete ? "⏹️ incomplete (interrupted), " : "",
                   fails + n[KG_VERDICT_XPASS]
                       ? (v->no_gpu ? "⏭️ incomplete: no GPU, ❌ failed" : "❌ failed")
                   : errs ? (v->no_gpu ? "⏭️ incomplete: no GPU, 💥 errors" : "💥 errors")
                   : v->no_gpu ? "⏭️ incomplete: no GPU"
                               : "✅ passed");
    if (v->no_gpu) {
        kg_sbuf_printf(b,
                       "> [!CAUTION]\n> **INCOMPLETE: NO GPU.** %d of %zu results were "
                       "skipped (",
                       n[KG_VERDICT_SKIP], v->n);
        kg_sbuf_md(b, v->no_device, 200);
        kg_sbuf_puts(b, "): the GPU gates did not run, and the run certifies nothing.\n\n");
    }
    if (v->incomplete)
        kg_sbuf_puts(b, "> [!CAUTION]\n> **INCOMPLETE (INTERRUPTED).** The run was stopped "
                        "(SIGINT/SIGTERM): these are the results so far, and the cases it had "
                        "not reached are missing.\n\n");
    if (v->diagnostic)
        kg_sbuf_puts(b, "> [!WARNING]\n> **DIAGNOSTIC RUN: NON-CERTIFYING.** These results "
                        "never advance high-water marks and certify nothing.\n\n");
}

/* The counts line and the run's context (mode, device, commit, seed, run id). */
static void md_counts(kg_sbuf *b, const kg_export_view *v)
{
    const int *n = v->counts;
    char cnt[64];
    kg_sbuf_printf(b, "**%d passed** (%d with warnings), **%d failed**, %d errors",
                   n[KG_VERDICT_PASS] + n[KG_VERDICT_WARN], n[KG_VERDICT_WARN], n[KG_VERDICT_FAIL],
                   n[KG_VERDICT_ERROR]);
    if (v->faults)
        kg_sbuf_printf(b, " (%s)", kg_fmt_count(cnt, sizeof cnt, v->faults, "fault"));
    kg_sbuf_printf(b, ", %d skipped", n[KG_VERDICT_SKIP]);
    /* Only where a case declares an expected failure (xfail_gate). */
    if (n[KG_VERDICT_XFAIL])
        kg_sbuf_printf(b, ", %s",
                       kg_fmt_count(cnt, sizeof cnt, n[KG_VERDICT_XFAIL], "expected failure"));
    if (n[KG_VERDICT_XPASS])
        kg_sbuf_printf(b, ", **%s**",
                       kg_fmt_count(cnt, sizeof cnt, n[KG_VERDICT_XPASS], "unexpected pass"));
    kg_sbuf_printf(b, " · mode `%s`", v->diagnostic ? "diagnostic" : "production");
    if (v->device_name) {
        kg_sbuf_puts(b, " · device ");
        kg_sbuf_md_code(b, v->device_class ? v->device_class : v->device_name, 80);
    } else {
        kg_sbuf_puts(b, " · no GPU");
    }
    if (v->commit) {
        kg_sbuf_puts(b, " · commit ");
        kg_sbuf_md_code(b, v->commit, 12);
        if (v->local_changes)
            kg_sbuf_puts(b, " + local changes");
    }
    if (!isnan(v->seed))
        kg_sbuf_printf(b, " · seed `%.0f`", v->seed);
    if (v->run_id) {
        kg_sbuf_puts(b, " · run ");
        kg_sbuf_md_code(b, v->run_id, 60);
    }
    kg_sbuf_puts(b, "\n\n");
}

/* "Needs attention" (severity <= 1) and "All results", then the legend. */
static void md_tables(kg_sbuf *b, const kg_export_view *v, const cJSON *report)
{
    size_t attention = 0, pct = 0;
    kg_export_ceilings ce;
    for (size_t i = 0; i < v->n; i++)
        attention += v->rows[i].severity <= 1;
    if (attention) {
        kg_sbuf_puts(b, "### Needs attention\n\n");
        kg_sbuf_puts(b, table_head);
        for (size_t i = 0; i < v->n; i++)
            if (v->rows[i].severity <= 1)
                row_line(b, &v->rows[i], true);
        kg_sbuf_puts(b, "\n");
    }
    kg_sbuf_puts(b, "### All results\n\n");
    if (v->n == 0)
        kg_sbuf_puts(b, "_The report has no results._\n");
    else
        kg_sbuf_puts(b, table_head);
    /* Rows are ordered worst case first; the case name is shown once per group. */
    for (size_t i = 0; i < v->n; i++)
        row_line(b, &v->rows[i], i == 0 || strcmp(v->rows[i].case_id, v->rows[i - 1].case_id));
    kg_sbuf_puts(
        b, "\n<sub>time: this run's median · vs mark: change against the high-water "
           "mark, positive = worse (slower), with the band the decision required it to clear · "
           "reproduce with <code>--seed</code>");
    for (size_t i = 0; i < v->n; i++)
        pct += !isnan(v->rows[i].ceiling_pct);
    if (pct) { /* % of ceiling names its ceilings */
        kg_export_ceilings_get(&ce, report);
        kg_sbuf_puts(b, " · % of ceiling: of this run's measured ");
        kg_export_ceilings_text(b, &ce);
    }
    if (v->counts[KG_VERDICT_XFAIL] || v->counts[KG_VERDICT_XPASS])
        kg_sbuf_puts(b, " · XFAIL: the gate a case declares it fails (xfail_gate) still fails "
                        "it, which passes · XPASS: that gate now passes it, which fails (remove "
                        "xfail_gate)");
    kg_sbuf_puts(b, "</sub>\n");
}

int kg_export_markdown(const cJSON *report, const char *path)
{
    int rc = 0;
    kg_export_view v;
    kg_sbuf b = KG_SBUF_INIT;
    KG_TRY(kg_export_view_build(&v, report));
    md_headline(&b, &v);
    md_counts(&b, &v);
    md_tables(&b, &v, report);
    kg_export_md_timing(&b, report);
    KG_TRY(kg_sbuf_write(&b, path));
cleanup:
    kg_sbuf_free(&b);
    kg_export_view_free(&v);
    return rc;
}
