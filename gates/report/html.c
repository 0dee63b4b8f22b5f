/* A standalone HTML report of a kgate run: inline CSS and inline SVG charts (this run against
 * the high-water marks with their noise bands; percent of the measured ceiling), the full result
 * table and the provenance. No script, font, image or style is fetched: it opens offline. */
#include <math.h>
#include <string.h>
#include "report/export.h"
#include "report/roofline.h"

#define CH_W 900.0      /* chart width */
#define CH_LABEL 330.0  /* left column for case names */
#define CH_RIGHT 20.0
#define CH_ROW 24.0
#define CH_TOP 34.0

static const char css[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d2430;background:#fff}"
    "h1{font-size:22px;margin:0 0 8px}h2{font-size:17px;margin:28px 0 8px}"
    ".banner{background:#fff3cd;border:2px solid #d39e00;padding:10px 14px;font-weight:700;"
    "margin:10px 0}.meta{color:#555}table{border-collapse:collapse;margin:6px 0}"
    "td,th{border:1px solid #d8dde6;padding:3px 8px;text-align:left;vertical-align:top}"
    "td:first-child,td:last-child{overflow-wrap:anywhere}td:last-child{min-width:14em}"
    "td:first-child{min-width:17em}"
    "td:nth-child(2){white-space:nowrap}" /* long case ids and paths wrap: the table fits */
    "th{background:#f3f5f9}td.num{text-align:right;font-variant-numeric:tabular-nums;"
    "white-space:nowrap}"
    ".PASS{color:#1a7f37}.WARN{color:#9a6700}.FAIL,.REGRESSED{color:#cf222e;font-weight:700}"
    ".ERROR{color:#8250df;font-weight:700}.SKIP{color:#6e7781}"
    ".XFAIL{color:#1a7f37;font-style:italic}.XPASS{color:#cf222e;font-weight:700}"
    ".fault{background:#8250df;color:#fff;padding:0 4px;border-radius:3px;font-weight:700}"
    ".incomplete{background:#ffebe9;border:2px solid #cf222e;padding:10px 14px;font-weight:700;"
    "margin:10px 0}pre{font-size:12px;margin:4px 0;white-space:pre-wrap}"
    "svg text{font:12px system-ui,sans-serif;fill:#1d2430}code{font-size:12px}";

static const char *dot_color(const kg_export_row *r)
{
    if (!r->decision)
        return "#57606a";
    if (strcmp(r->decision, KG_RV_DEC_REGRESSED) == 0)
        return "#cf222e";
    if (strcmp(r->decision, KG_RV_DEC_IMPROVED) == 0)
        return "#0969da";
    return "#1a7f37";
}

static bool has_mark(const kg_export_row *r)
{
    return !isnan(r->change_pct) && r->mark_us > 0;
}

/* Position on the chart: 1.0 is the mark, > 1 worse (the bench's delta orientation). */
static double rel_to_mark(const kg_export_row *r) { return 1.0 + r->change_pct / 100.0; }

/* The chart's x range is clamped to [-100%, +400%] (a 1e10x or infinite change is drawn at the
 * edge; the table and the title keep the true figure), so its axis has at most ~50 ticks. */
#define CH_RATIO_MIN 0.0
#define CH_RATIO_MAX 5.0
static double clamp_ratio(double x)
{
    return isnan(x) ? 1.0 : fmin(fmax(x, CH_RATIO_MIN), CH_RATIO_MAX);
}

static void label(kg_sbuf *b, double y, const char *text)
{
    char cut[64];
    size_t n = strlen(text);
    if (n > 46) { /* cut on a character boundary */
        size_t k = 43;
        while (k > 0 && ((unsigned char)text[k] & 0xC0) == 0x80)
            k--;
        snprintf(cut, sizeof cut, "%.*s...", (int)k, text);
    }
    else
        snprintf(cut, sizeof cut, "%s", text);
    kg_sbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", CH_LABEL - 8, y + 4);
    kg_sbuf_xml(b, cut);
    kg_sbuf_puts(b, "</text>");
}

/* This run / mark per case: 1.0 is the mark, the shaded band its noise band. */
static void chart_marks(kg_sbuf *b, const kg_export_view *v)
{
    double lo = 0.98, hi = 1.02;
    int rows = 0;
    for (size_t i = 0; i < v->n; i++) {
        const kg_export_row *r = &v->rows[i];
        if (!has_mark(r))
            continue;
        double ratio = clamp_ratio(rel_to_mark(r));
        double band = isnan(r->band_pct) ? 0 : fmin(fmax(r->band_pct / 100, 0), 1);
        lo = fmin(lo, fmin(ratio, 1 - band));
        hi = fmax(hi, fmax(ratio, 1 + band));
        rows++;
    }
    if (!rows) {
        kg_sbuf_puts(b, "<p>No case in this report has a time and a mark to compare (bench "
                        "figures appear when the bench gate ran against a marks file).</p>\n");
        return;
    }
    double span = hi - lo;
    lo -= span * 0.08;
    hi += span * 0.08;
    static const double steps[] = { 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2 };
    lo = fmax(lo, CH_RATIO_MIN - 0.5);
    hi = fmin(hi, CH_RATIO_MAX + 0.5);
    double step = steps[KG_ARRAY_LEN(steps) - 1];
    for (size_t i = 0; i < KG_ARRAY_LEN(steps); i++)
        if ((hi - lo) / steps[i] <= 8) {
            step = steps[i];
            break;
        }
    double pw = CH_W - CH_LABEL - CH_RIGHT, h = CH_TOP + rows * CH_ROW + 30;
#define X(val) (CH_LABEL + ((val) - lo) / (hi - lo) * pw)
    kg_sbuf_printf(b, "<svg id=\"chart-marks\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f "
                      "%.0f\" role=\"img\" aria-label=\"this run against the marks\">\n",
                   CH_W, h, CH_W, h);
    kg_sbuf_printf(b, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#fff\"/>", CH_W,
                   h);
    kg_sbuf_puts(b, "<text x=\"8\" y=\"16\">change against the mark (left = better, right = "
                    "worse); shaded: the band a change must clear; dot: this run</text>\n");
    for (double t = ceil(lo / step) * step; t <= hi + 1e-12; t += step) {
        double x = X(t);
        kg_sbuf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e7ec\"/>"
                          "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%+.*f%%</text>\n",
                       x, CH_TOP - 8, x, h - 24, x, h - 8, step < 0.01 ? 1 : 0, (t - 1) * 100);
    }
    kg_sbuf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#1d2430\" "
                      "stroke-dasharray=\"4 3\"/>\n", X(1.0), CH_TOP - 8, X(1.0), h - 24);
    int k = 0;
    for (size_t i = 0; i < v->n; i++) {
        const kg_export_row *r = &v->rows[i];
        if (!has_mark(r))
            continue;
        double y = CH_TOP + k++ * CH_ROW + CH_ROW / 2, ratio = clamp_ratio(rel_to_mark(r));
        double band = isnan(r->band_pct) ? 0 : fmin(fmax(r->band_pct / 100, 0), 1);
        label(b, y, r->case_id);
        kg_sbuf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"12\" "
                          "fill=\"#2da44e\" fill-opacity=\"0.22\"/>",
                       X(1 - band), y - 6, fmax(X(1 + band) - X(1 - band), 1.0));
        kg_sbuf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                          "stroke=\"#1d2430\" stroke-width=\"2\"/>", X(1.0), y - 8, X(1.0), y + 8);
        kg_sbuf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"><title>", X(ratio),
                       y, dot_color(r));
        kg_sbuf_xml(b, r->case_id);
        kg_sbuf_printf(b, ": %.3f vs mark %.3f (%+.2f%%, band ±%.2f%%) ", r->time_us, r->mark_us,
                       (rel_to_mark(r) - 1) * 100, band * 100);
        kg_sbuf_xml(b, r->decision ? r->decision : "");
        kg_sbuf_puts(b, "</title></circle>\n");
    }
#undef X
    kg_sbuf_puts(b, "</svg>\n<p class=\"meta\"><span style=\"color:#cf222e\">&#9679;</span> "
                    "regressed &#160; <span style=\"color:#0969da\">&#9679;</span> improved "
                    "&#160; <span style=\"color:#1a7f37\">&#9679;</span> same (within the band)"
                    " &#160; dashed line: the mark</p>\n");
}

/* Percent of the ceiling measured on the device in the same run. */
static void chart_ceiling(kg_sbuf *b, const kg_export_view *v)
{
    int rows = 0;
    for (size_t i = 0; i < v->n; i++)
        rows += !isnan(v->rows[i].ceiling_pct);
    if (!rows)
        return;
    /* 60 px beyond the 100% line for the value label of a full bar ("101.2%") */
    double pw = CH_W - CH_LABEL - CH_RIGHT - 60, h = CH_TOP + rows * CH_ROW + 30;
    kg_sbuf_puts(b, "<h2>Percent of the measured ceiling</h2>\n");
    kg_sbuf_printf(b, "<svg id=\"chart-ceiling\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f "
                      "%.0f\" role=\"img\" aria-label=\"percent of ceiling\">\n", CH_W, h, CH_W, h);
    for (int t = 0; t <= 100; t += 20) {
        double x = CH_LABEL + t / 100.0 * pw;
        kg_sbuf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e7ec\"/>"
                          "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d%%</text>\n",
                       x, CH_TOP - 8, x, h - 24, x, h - 8, t);
    }
    int k = 0;
    for (size_t i = 0; i < v->n; i++) {
        const kg_export_row *r = &v->rows[i];
        if (isnan(r->ceiling_pct))
            continue;
        double y = CH_TOP + k++ * CH_ROW + CH_ROW / 2;
        double w = fmin(fmax(r->ceiling_pct, 0), 100) / 100.0 * pw;
        label(b, y, r->case_id);
        kg_sbuf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"14\" fill=\"#0969da\" "
                          "fill-opacity=\"0.75\"><title>%.1f%%</title></rect>"
                          "<text x=\"%.1f\" y=\"%.1f\">%.1f%%</text>\n",
                       CH_LABEL, y - 7, w, r->ceiling_pct, CH_LABEL + w + 4, y + 4,
                       r->ceiling_pct);
    }
    kg_sbuf_puts(b, "</svg>\n");
}

/* A faulted case's last output lines, folded under its message. */
static void fault_tail(kg_sbuf *b, const kg_export_row *r)
{
    const cJSON *line;
    if (!r->fault_class || cJSON_GetArraySize(r->fault_tail) == 0)
        return;
    kg_sbuf_puts(b, "<details><summary>the worker's last output</summary><pre>");
    cJSON_ArrayForEach(line, r->fault_tail)
    {
        if (!cJSON_IsString(line))
            continue;
        kg_sbuf_xml(b, line->valuestring);
        kg_sbuf_puts(b, "&#10;");
    }
    kg_sbuf_puts(b, "</pre></details>");
}

static void results_table(kg_sbuf *b, const kg_export_view *v)
{
    char t[32], m[32], c[32];
    kg_sbuf_puts(b, "<table id=\"results\"><tr><th>case</th><th>gate</th><th>verdict</th>"
                    "<th>time (µs)</th><th>mark (µs)</th><th>change</th><th>band</th>"
                    "<th>% of ceiling</th><th>message</th></tr>\n");
    for (size_t i = 0; i < v->n; i++) {
        const kg_export_row *r = &v->rows[i];
        const char *cls = r->decision && strcmp(r->decision, KG_RV_DEC_REGRESSED) == 0
                              ? KG_RV_DEC_REGRESSED : kg_verdict_name(r->verdict);
        kg_sbuf_puts(b, "<tr><td><code>");
        kg_sbuf_xml(b, r->case_id);
        kg_sbuf_puts(b, "</code></td><td>");
        kg_sbuf_xml(b, r->gate);
        kg_sbuf_printf(b, "</td><td class=\"%s\">%s", cls, kg_verdict_name(r->verdict));
        if (r->fault_class) {
            kg_sbuf_puts(b, " <span class=\"fault\">FAULT ");
            kg_sbuf_xml(b, r->fault_class);
            kg_sbuf_puts(b, "</span>");
        }
        if (r->verdict == KG_VERDICT_XFAIL)
            kg_sbuf_puts(b, " (expected failure)");
        else if (r->verdict == KG_VERDICT_XPASS)
            kg_sbuf_puts(b, " (unexpected pass)");
        if (r->decision) {
            kg_sbuf_puts(b, " (");
            kg_sbuf_xml(b, r->decision);
            kg_sbuf_puts(b, ")");
        }
        kg_sbuf_printf(b, "</td><td class=\"num\">%s</td><td class=\"num\">%s</td>",
                       kg_fmt_num(t, sizeof t, r->time_us, "%.3f"),
                       kg_fmt_num(m, sizeof m, r->mark_us, "%.3f"));
        kg_sbuf_printf(b, "<td class=\"num\">%s</td>",
                       kg_fmt_num(c, sizeof c, r->change_pct, "%+.2f%%"));
        kg_sbuf_printf(b, "<td class=\"num\">%s</td>",
                       kg_fmt_num(t, sizeof t, r->band_pct, "±%.2f%%"));
        kg_sbuf_printf(b, "<td class=\"num\">%s</td><td>",
                       kg_fmt_num(c, sizeof c, r->ceiling_pct, "%.1f%%"));
        kg_sbuf_xml(b, r->message);
        fault_tail(b, r);
        kg_sbuf_puts(b, "</td></tr>\n");
    }
    kg_sbuf_puts(b, "</table>\n");
}

static void provenance(kg_sbuf *b, const cJSON *report)
{
    const cJSON *p, *prov = cJSON_GetObjectItemCaseSensitive(report, KG_RK_PROVENANCE);
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(report, KG_RK_DEVICE);
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(report, KG_RK_MARKS_SOURCE);
    kg_sbuf_puts(b, "<h2>Provenance</h2>\n<table>\n");
    const cJSON *groups[] = { prov, cJSON_IsObject(dev) ? dev : NULL,
                              cJSON_IsObject(ms) ? ms : NULL }; /* where the marks came from */
    static const char *const prefix[] = { "", KG_RK_DEVICE ".", KG_RK_MARKS_SOURCE "." };
    for (size_t g = 0; g < KG_ARRAY_LEN(groups); g++)
        cJSON_ArrayForEach(p, groups[g])
        {
            char *val = cJSON_IsString(p) ? NULL : cJSON_PrintUnformatted(p);
            kg_sbuf_printf(b, "<tr><th>%s", prefix[g]);
            kg_sbuf_xml(b, p->string);
            kg_sbuf_puts(b, "</th><td>");
            kg_sbuf_xml(b, cJSON_IsString(p) ? p->valuestring : (val ? val : ""));
            kg_sbuf_puts(b, "</td></tr>\n");
            cJSON_free(val);
        }
    kg_sbuf_puts(b, "</table>\n");
}

int kg_export_html(const cJSON *report, const char *path)
{
    int rc = 0;
    kg_export_view v;
    kg_sbuf b = KG_SBUF_INIT;
    KG_TRY(kg_export_view_build(&v, report));
    const int *n = v.counts;
    char cnt[64];
    bool failed = n[KG_VERDICT_FAIL] || n[KG_VERDICT_XPASS];
    kg_sbuf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                     "<meta name=\"viewport\" content=\"width=device-width\"><title>kgate ");
    kg_sbuf_xml(&b, v.command ? v.command : "report");
    kg_sbuf_printf(&b, "%s%s</title><style>%s</style></head><body>\n",
                   v.diagnostic ? " (DIAGNOSTIC)" : "",
                   v.incomplete ? " (incomplete, interrupted)"
                   : v.no_gpu   ? " (incomplete: no GPU)"
                                : "",
                   css);
    kg_sbuf_puts(&b, "<h1>kgate ");
    kg_sbuf_xml(&b, v.command ? v.command : "report");
    /* The same headline as the Markdown: a no-GPU run with skips is never "passed". */
    kg_sbuf_printf(&b, ": %s%s%s</h1>\n", v.incomplete ? "incomplete (interrupted), " : "",
                   v.no_gpu ? (failed || n[KG_VERDICT_ERROR] ? "incomplete: no GPU, "
                                                             : "incomplete: no GPU")
                            : "",
                   failed ? "failed" : n[KG_VERDICT_ERROR] ? "errors" : v.no_gpu ? "" : "passed");
    if (v.no_gpu) {
        kg_sbuf_printf(&b, "<div class=\"incomplete\" id=\"no-gpu\">INCOMPLETE: NO GPU. %d of %zu "
                           "results were skipped (", n[KG_VERDICT_SKIP], v.n);
        kg_sbuf_xml(&b, v.no_device);
        kg_sbuf_puts(&b, "): the GPU gates did not run, and the run certifies nothing.</div>\n");
    }
    if (v.incomplete)
        kg_sbuf_puts(&b, "<div class=\"incomplete\" id=\"incomplete\">INCOMPLETE (INTERRUPTED): "
                         "the run was stopped (SIGINT/SIGTERM). These are the results so far; "
                         "the cases it had not reached are missing.</div>\n");
    if (v.diagnostic)
        kg_sbuf_puts(&b, "<div class=\"banner\" id=\"diagnostic\">DIAGNOSTIC RUN: NON-CERTIFYING. "
                         "These results never advance high-water marks and certify nothing."
                         "</div>\n");
    kg_sbuf_printf(&b, "<p class=\"meta\">%d passed (%d with warnings), %d failed, %d errors",
                   n[KG_VERDICT_PASS] + n[KG_VERDICT_WARN], n[KG_VERDICT_WARN],
                   n[KG_VERDICT_FAIL], n[KG_VERDICT_ERROR]);
    if (v.faults)
        kg_sbuf_printf(&b, " (%s)", kg_fmt_count(cnt, sizeof cnt, v.faults, "fault"));
    kg_sbuf_printf(&b, ", %d skipped", n[KG_VERDICT_SKIP]);
    if (n[KG_VERDICT_XFAIL]) /* only where a case declares an expected failure */
        kg_sbuf_printf(&b, ", %s", kg_fmt_count(cnt, sizeof cnt, n[KG_VERDICT_XFAIL],
                                                 "expected failure"));
    if (n[KG_VERDICT_XPASS])
        kg_sbuf_printf(&b, ", <strong class=\"XPASS\">%s</strong>",
                       kg_fmt_count(cnt, sizeof cnt, n[KG_VERDICT_XPASS], "unexpected pass"));
    kg_sbuf_printf(&b, " · mode %s · device ", v.diagnostic ? "diagnostic" : "production");
    kg_sbuf_xml(&b, v.device_class ? v.device_class : v.device_name ? v.device_name : "none");
    kg_sbuf_puts(&b, " · commit ");
    kg_sbuf_xml(&b, v.commit ? v.commit : "unknown");
    if (!isnan(v.seed))
        kg_sbuf_printf(&b, " · seed %.0f", v.seed);
    kg_sbuf_puts(&b, " · run ");
    kg_sbuf_xml(&b, v.run_id ? v.run_id : "?");
    kg_sbuf_puts(&b, "</p>\n<h2>This run against the marks</h2>\n");
    chart_marks(&b, &v);
    chart_ceiling(&b, &v);
    KG_TRY(kg_roofline_html(&b, report)); /* the counters gate's points */
    kg_sbuf_puts(&b, "<h2>Results</h2>\n");
    results_table(&b, &v);
    provenance(&b, report);
    kg_sbuf_puts(&b, "</body></html>\n");
    KG_TRY(kg_sbuf_write(&b, path));
cleanup:
    kg_sbuf_free(&b);
    kg_export_view_free(&v);
    return rc;
}
