/* A standalone HTML report of a kgate run: inline CSS and inline SVG charts that scale to the
 * page (this run against the high-water marks with their noise bands; percent of the measured
 * ceiling, named), the full result table (filtered and sorted by one small inline script;
 * complete without it) and the provenance. No script, font, image or style is fetched: it
 * opens offline. */
#include <math.h>
#include <string.h>
#include "report/export.h"
#include "report/roofline.h"
#include "report/svg.h"

static const char css[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d2430;background:#fff}"
    "@media (max-width:600px){body{margin:10px}}"
    "h1{font-size:22px;margin:0 0 8px;overflow-wrap:anywhere}h2{font-size:17px;margin:28px 0 8px}"
    ".banner{background:#fff3cd;border:2px solid #d39e00;padding:10px 14px;font-weight:700;"
    "margin:10px 0}.meta{color:#555;overflow-wrap:anywhere}table{border-collapse:collapse;margin:6px 0}"
    ".scroll{overflow-x:auto;max-width:100%}" /* a table wider than a phone scrolls, alone */
    "td,th{border:1px solid #d8dde6;padding:3px 8px;text-align:left;vertical-align:top}"
    "td:first-child{overflow-wrap:break-word;min-width:10em}" /* ids break at <wbr> only */
    "td:last-child{overflow-wrap:anywhere;min-width:10em}"
    "td:nth-child(2){white-space:nowrap}"
    "th{background:#f3f5f9}th.sortable{cursor:pointer}th[aria-sort=ascending]::after{content:' \\25B2'}"
    "th[aria-sort=descending]::after{content:' \\25BC'}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    ".filter{margin:6px 0}.filter input{width:16em;max-width:60vw}"
    ".PASS{color:#1a7f37}.WARN{color:#9a6700}.FAIL,.REGRESSED{color:#cf222e;font-weight:700}"
    ".ERROR{color:#8250df;font-weight:700}.SKIP{color:#6e7781}"
    ".XFAIL{color:#1a7f37;font-style:italic}.XPASS{color:#cf222e;font-weight:700}"
    ".fault{background:#8250df;color:#fff;padding:0 4px;border-radius:3px;font-weight:700}"
    ".incomplete{background:#ffebe9;border:2px solid #cf222e;padding:10px 14px;font-weight:700;"
    "margin:10px 0}pre{font-size:12px;margin:4px 0;white-space:pre-wrap}"
    "svg text{fill:#1d2430}code{font-size:12px}";

/* The two bar-row charts: a viewBox HT_W wide that scales to the page (report/svg.h); each
 * case a label line (the id on the left, its figure on the right) over its row of the plot. */
#define HT_W 640.0     /* design width (user units; the page shows it at most this wide) */
#define HT_FS 12.0     /* font size */
#define HT_ROW 36.0    /* a case: label line + plot row */
#define HT_TOP 40.0    /* title and the top tick labels */
#define HT_BOTTOM 28.0 /* the bottom tick labels */

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

static bool has_mark(const kg_export_row *r) { return !isnan(r->change_pct) && r->mark_us > 0; }

/* The chart's x range is clamped to [-100%, +400%] (a 1e10x or infinite change is drawn at the
 * edge; the table and the title keep the true figure). */
#define CH_PCT_MIN -100.0
#define CH_PCT_MAX 400.0
static double ht_clamp_pct(double x)
{
    return isnan(x) ? 0 : fmin(fmax(x, CH_PCT_MIN), CH_PCT_MAX);
}

static double ht_band(const kg_export_row *r)
{
    return isnan(r->band_pct) ? 0 : fmin(fmax(r->band_pct, 0), 100);
}

/* A chart's horizontal geometry: the plot [x0, x1] holds the ticks, and the outer tick labels
 * (centred on their tick) stay inside the viewBox. */
typedef struct {
    kg_svg_ticks t;
    double x0, x1, y0, rows_h, h;
    const char *unit;
    bool sign;
} ht_axis;

static void ht_axis_fit(ht_axis *a, double lo, double hi, int rows, const char *unit, bool sign)
{
    char buf[48];
    a->unit = unit, a->sign = sign;
    kg_svg_ticks_fit(&a->t, lo, hi, 8);
    double half = 0;
    for (int i = 0; i < a->t.n; i++) {
        kg_svg_tick_label(buf, sizeof buf, &a->t, kg_svg_tick(&a->t, i), unit, sign);
        half = fmax(half, kg_svg_text_width(buf, HT_FS) / 2);
    }
    a->x0 = fmax(12, half + 4), a->x1 = HT_W - fmax(12, half + 4);
    a->y0 = HT_TOP, a->rows_h = rows * HT_ROW, a->h = HT_TOP + a->rows_h + HT_BOTTOM;
}

static double ht_x(const ht_axis *a, double v)
{
    return a->x0 + (v - a->t.lo) / (a->t.hi - a->t.lo) * (a->x1 - a->x0);
}

/* Grid lines, tick labels above and below the rows, the plot's frame (class "plot": the
 * render check keeps every point inside it). */
static void ht_axis_draw(kg_sbuf *b, const ht_axis *a)
{
    char buf[48];
    double yb = a->y0 + a->rows_h;
    for (int i = 0; i < a->t.n; i++) {
        double v = kg_svg_tick(&a->t, i), x = ht_x(a, v);
        kg_svg_tick_label(buf, sizeof buf, &a->t, v, a->unit, a->sign);
        kg_sbuf_printf(b,
                       "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e7ec\"/>"
                       "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>"
                       "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                       x, a->y0, x, yb, x, a->y0 - 6, buf, x, yb + 16, buf);
    }
    kg_sbuf_printf(b,
                   "<rect class=\"plot\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                   "fill=\"none\" stroke=\"#d8dde6\"/>\n",
                   a->x0, a->y0, a->x1 - a->x0, a->rows_h);
}

/* A case's label line: the id on the left (cut to leave room), its figure on the right; a rule
 * above it between cases. */
static void ht_row_label(kg_sbuf *b, const ht_axis *a, double y, const char *id, const char *figure)
{
    char cut[300];
    if (y > a->y0)
        kg_sbuf_printf(b,
                       "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                       "stroke=\"#d8dde6\"/>",
                       a->x0, y, a->x1, y);
    double fw = kg_svg_text_width(figure, HT_FS);
    kg_svg_fit_text(cut, sizeof cut, id, HT_FS, a->x1 - a->x0 - fw - 12);
    kg_sbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\">", a->x0 + 2, y + 13);
    kg_sbuf_xml(b, cut);
    kg_sbuf_printf(b, "</text><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", a->x1 - 2, y + 13);
    kg_sbuf_xml(b, figure);
    kg_sbuf_puts(b, "</text>");
}

/* This run against the mark per case: 0 is the mark, the shaded band its noise band. */
static void chart_marks(kg_sbuf *b, const kg_export_view *v)
{
    double lo = -2, hi = 2;
    int rows = 0, k = 0;
    char fig[96];
    for (size_t i = 0; i < v->n; i++) {
        const kg_export_row *r = &v->rows[i];
        if (!has_mark(r))
            continue;
        double c = ht_clamp_pct(r->change_pct), band = ht_band(r);
        lo = fmin(lo, fmin(c, -band)), hi = fmax(hi, fmax(c, band));
        rows++;
    }
    if (!rows) {
        kg_sbuf_puts(b, "<p>No case in this report has a time and a mark to compare (bench "
                        "figures appear when the bench gate ran against a marks file).</p>\n");
        return;
    }
    ht_axis a;
    double pad = (hi - lo) * 0.06;
    ht_axis_fit(&a, lo - pad, hi + pad, rows, "%", true);
    kg_svg_open(b, "chart-marks", NULL, HT_W, a.h, "this run against the marks", false);
    kg_sbuf_printf(b,
                   "<g font-size=\"%g\"><text x=\"%.1f\" y=\"14\">change of the median against "
                   "its mark (left: faster, right: slower)</text>\n",
                   HT_FS, a.x0);
    ht_axis_draw(b, &a);
    kg_sbuf_printf(b,
                   "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#1d2430\" "
                   "stroke-dasharray=\"4 3\"/>\n",
                   ht_x(&a, 0), a.y0, ht_x(&a, 0), a.y0 + a.rows_h);
    for (size_t i = 0; i < v->n; i++) {
        const kg_export_row *r = &v->rows[i];
        if (!has_mark(r))
            continue;
        double y = a.y0 + k++ * HT_ROW, yc = y + 26, band = ht_band(r);
        snprintf(fig, sizeof fig, "%+.2f%% %s", r->change_pct, r->decision ? r->decision : "");
        ht_row_label(b, &a, y, r->case_id, fig);
        kg_sbuf_printf(b,
                       "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"12\" "
                       "fill=\"#2da44e\" fill-opacity=\"0.22\"/>",
                       ht_x(&a, -band), yc - 6, fmax(ht_x(&a, band) - ht_x(&a, -band), 1.0));
        kg_sbuf_printf(b,
                       "<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"><title>",
                       ht_x(&a, ht_clamp_pct(r->change_pct)), yc, dot_color(r));
        kg_sbuf_xml(b, r->case_id);
        kg_sbuf_printf(b, ": %.3f vs mark %.3f (%+.2f%%, band ±%.2f%%) ", r->time_us, r->mark_us,
                       r->change_pct, band);
        kg_sbuf_xml(b, r->decision ? r->decision : "");
        kg_sbuf_puts(b, "</title></circle>\n");
    }
    kg_sbuf_puts(b, "</g></svg>\n<p class=\"meta\"><span style=\"color:#cf222e\">&#9679;</span> "
                    "regressed &#160; <span style=\"color:#0969da\">&#9679;</span> improved "
                    "&#160; <span style=\"color:#1a7f37\">&#9679;</span> same (within the band)"
                    " &#160; shaded: the band a change must clear &#160; dashed line: the mark"
                    "</p>\n");
}

/* Which measured ceiling a row's percentage is of (view.c's choice: the one that bounds the
 * case, else whichever was measured). */
static bool ht_of_gemm(const kg_export_row *r)
{
    const cJSON *bound = cJSON_GetObjectItemCaseSensitive(r->figures, KG_FIG_BOUND);
    bool compute = cJSON_IsString(bound) && strcmp(bound->valuestring, KG_RV_BOUND_COMPUTE) == 0;
    bool copy = cJSON_IsNumber(
        cJSON_GetObjectItemCaseSensitive(r->figures, KG_FIG_PCT_COPY_CEILING));
    bool gemm = cJSON_IsNumber(
        cJSON_GetObjectItemCaseSensitive(r->figures, KG_FIG_PCT_GEMM_CEILING));
    return compute ? gemm : !copy;
}

/* The heading names the ceilings (kg_export_ceilings_text: plain text, nothing to escape). */
static void ht_ceiling_head(kg_sbuf *b, const cJSON *report)
{
    kg_export_ceilings ce;
    kg_export_ceilings_get(&ce, report);
    kg_sbuf_puts(b, "<h2>Percent of the measured ceiling</h2>\n<p class=\"meta\">Each case "
                    "against the ceiling that bounds it, measured on this device in this run "
                    "(bytes moved / time against the copy, FLOPs / time against the GEMM): ");
    kg_export_ceilings_text(b, &ce);
    kg_sbuf_puts(b, ".</p>\n");
}

/* Percent of the ceiling measured on the device in the same run. */
static void chart_ceiling(kg_sbuf *b, const kg_export_view *v, const cJSON *report)
{
    int rows = 0, k = 0;
    char fig[64];
    for (size_t i = 0; i < v->n; i++)
        rows += !isnan(v->rows[i].ceiling_pct);
    if (!rows)
        return;
    ht_ceiling_head(b, report);
    ht_axis a;
    ht_axis_fit(&a, 0, 100, rows, "%", false);
    kg_svg_open(b, "chart-ceiling", NULL, HT_W, a.h, "percent of the measured ceiling", false);
    kg_sbuf_printf(b,
                   "<g font-size=\"%g\"><text x=\"%.1f\" y=\"14\">percent of the measured "
                   "ceiling (copy or GEMM, this run)</text>\n",
                   HT_FS, a.x0);
    ht_axis_draw(b, &a);
    for (size_t i = 0; i < v->n; i++) {
        const kg_export_row *r = &v->rows[i];
        if (isnan(r->ceiling_pct))
            continue;
        double y = a.y0 + k++ * HT_ROW;
        const char *of = ht_of_gemm(r) ? "GEMM" : "copy";
        snprintf(fig, sizeof fig, "%.1f%% of %s", r->ceiling_pct, of);
        ht_row_label(b, &a, y, r->case_id, fig);
        kg_sbuf_printf(b,
                       "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"12\" "
                       "fill=\"#0969da\" fill-opacity=\"0.75\"><title>%.1f%% of the %s "
                       "ceiling</title></rect>\n",
                       a.x0, y + 20, ht_x(&a, fmin(fmax(r->ceiling_pct, 0), 100)) - a.x0,
                       r->ceiling_pct, of);
    }
    kg_sbuf_puts(b, "</g></svg>\n");
}

/* A faulted case's last output lines, folded under its message. */
static void fault_tail(kg_sbuf *b, const kg_export_row *r)
{
    const cJSON *line;
    if (!r->fault_class || cJSON_GetArraySize(r->fault_tail) == 0)
        return;
    kg_sbuf_puts(b, "<details><summary>the worker's last output</summary><pre>");
    cJSON_ArrayForEach(line, r->fault_tail) {
        if (!cJSON_IsString(line))
            continue;
        kg_sbuf_xml(b, line->valuestring);
        kg_sbuf_puts(b, "&#10;");
    }
    kg_sbuf_puts(b, "</pre></details>");
}

/* A case id that breaks only after '/', ',' and '=' and before an 'x' between digits
 * ("4096x1024"): <wbr> there, never inside a token. */
static void ht_id(kg_sbuf *b, const char *id)
{
    char seg[512];
    size_t n = 0;
    for (const char *p = id ? id : ""; *p; p++) {
        bool xdim = *p == 'x' && p > id && p[-1] >= '0' && p[-1] <= '9' && p[1] >= '0' &&
                    p[1] <= '9';
        if (xdim || n + 2 >= sizeof seg) {
            seg[n] = '\0';
            kg_sbuf_xml(b, seg);
            kg_sbuf_puts(b, xdim ? "<wbr>" : "");
            n = 0;
        }
        seg[n++] = *p;
        if (*p == '/' || *p == ',' || *p == '=') {
            seg[n] = '\0';
            kg_sbuf_xml(b, seg);
            kg_sbuf_puts(b, "<wbr>");
            n = 0;
        }
    }
    seg[n] = '\0';
    kg_sbuf_xml(b, seg);
}

/* Filtering and sorting the results table: a text box, a verdict menu and sortable headers,
 * shown only where scripts run (without them the table is complete, in report order). */
static const char table_js[] =
    "(function(){var t=document.getElementById('results');if(!t)return;"
    "var q=document.getElementById('rq'),s=document.getElementById('rv'),"
    "c=document.getElementById('rc'),tb=t.tBodies[0],rows=[].slice.call(tb.rows);"
    "document.getElementById('rf').hidden=false;rows.forEach(function(r,i){r.kgo=i});"
    "function f(){var x=q.value.toLowerCase(),v=s.value,n=0;rows.forEach(function(r){"
    "var ok=(!x||r.textContent.toLowerCase().indexOf(x)>=0)&&"
    "(!v||(' '+r.getAttribute('data-v')+' ').indexOf(' '+v+' ')>=0);r.hidden=!ok;n+=ok});"
    "c.textContent=n+' of '+rows.length+' rows'}"
    "function key(r,i){var x=r.cells[i].textContent.trim();"
    "return /^[+\\u2212\\-\\u00b1]?[0-9]/.test(x)?parseFloat(x.replace(/[+\\u00b1]/,'')):x}"
    "function cmp(a,b,i,d){var x=key(a,i),y=key(b,i),nx=typeof x=='number',ny=typeof y=='number';"
    "return nx&&ny?(x-y)*d:nx?-1:ny?1:x.localeCompare(y)*d}" /* '-' last either way */
    "var hs=t.tHead.rows[0].cells;[].forEach.call(hs,function(h,i){h.tabIndex=0;"
    "h.title='sort by '+h.textContent;h.className+=' sortable';"
    "h.onclick=h.onkeydown=function(e){if(e.type=='keydown'&&e.key!='Enter')return;"
    "var d=h.getAttribute('aria-sort')=='ascending'?-1:1;"
    "[].forEach.call(hs,function(o){o.removeAttribute('aria-sort')});"
    "h.setAttribute('aria-sort',d>0?'ascending':'descending');"
    "rows.sort(function(a,b){return cmp(a,b,i,d)||a.kgo-b.kgo});"
    "rows.forEach(function(r){tb.appendChild(r)})}});"
    "q.oninput=s.onchange=f;f()})();";

static void ht_table_head(kg_sbuf *b, const kg_export_view *v)
{
    static const char *const opt[] = {
        KG_RV_VERDICT_FAIL,  KG_RV_DEC_REGRESSED, KG_RV_VERDICT_ERROR,
        KG_RV_VERDICT_XPASS, KG_RV_VERDICT_WARN,  KG_RV_VERDICT_SKIP,
        KG_RV_VERDICT_PASS,  KG_RV_VERDICT_XFAIL, KG_RV_DEC_IMPROVED,
    };
    kg_sbuf_puts(b, "<div id=\"rf\" class=\"filter\" hidden><label>filter <input id=\"rq\" "
                    "type=\"search\" placeholder=\"case, gate or message\"></label> <label>"
                    "verdict <select id=\"rv\"><option value=\"\">all</option>"
                    "<option value=\"attention\">needs attention</option>");
    for (size_t i = 0; i < KG_ARRAY_LEN(opt); i++)
        kg_sbuf_printf(b, "<option>%s</option>", opt[i]);
    kg_sbuf_printf(b,
                   "</select></label> <span id=\"rc\" class=\"meta\">%zu rows</span> "
                   "<span class=\"meta\">(a header sorts)</span></div>\n",
                   v->n);
    kg_sbuf_puts(b, "<div class=\"scroll\"><table id=\"results\"><thead><tr><th>case</th>"
                    "<th>gate</th><th>verdict</th><th>time (µs)</th><th>mark (µs)</th>"
                    "<th>change</th><th>band</th><th>% of ceiling</th><th>message</th></tr>"
                    "</thead><tbody>\n");
}

/* The verdict cell: verdict, fault badge, expectation, decision. */
static void ht_verdict_cell(kg_sbuf *b, const kg_export_row *r, const char *cls)
{
    kg_sbuf_printf(b, "<td class=\"%s\">%s", cls, kg_verdict_name(r->verdict));
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
    kg_sbuf_puts(b, "</td>");
}

static void results_table(kg_sbuf *b, const kg_export_view *v)
{
    char t[32], m[32], c[32];
    ht_table_head(b, v);
    for (size_t i = 0; i < v->n; i++) {
        const kg_export_row *r = &v->rows[i];
        const char *cls = r->decision && strcmp(r->decision, KG_RV_DEC_REGRESSED) == 0
                              ? KG_RV_DEC_REGRESSED
                              : kg_verdict_name(r->verdict);
        kg_sbuf_printf(b, "<tr data-v=\"%s%s", kg_verdict_name(r->verdict),
                       r->severity <= 1 ? " attention" : "");
        if (r->decision) {
            kg_sbuf_puts(b, " ");
            kg_sbuf_xml(b, r->decision);
        }
        kg_sbuf_puts(b, "\"><td><code>");
        ht_id(b, r->case_id);
        kg_sbuf_puts(b, "</code></td><td>");
        kg_sbuf_xml(b, r->gate);
        kg_sbuf_puts(b, "</td>");
        ht_verdict_cell(b, r, cls);
        kg_sbuf_printf(b, "<td class=\"num\">%s</td><td class=\"num\">%s</td>",
                       kg_fmt_num(t, sizeof t, r->time_us, "%.3f"),
                       kg_fmt_num(m, sizeof m, r->mark_us, "%.3f"));
        kg_sbuf_printf(b, "<td class=\"num\">%s</td>",
                       kg_fmt_num(c, sizeof c, r->change_pct, "%+.2f%%"));
        kg_sbuf_printf(b, "<td class=\"num\">%s</td>",
                       kg_fmt_num(t, sizeof t, r->band_pct, "±%.2f%%"));
        kg_sbuf_printf(b, "<td class=\"num\">%s",
                       kg_fmt_num(c, sizeof c, r->ceiling_pct, "%.1f%%"));
        if (!isnan(r->ceiling_pct))
            kg_sbuf_printf(b, " <span class=\"meta\">of %s</span>",
                           ht_of_gemm(r) ? "GEMM" : "copy");
        kg_sbuf_puts(b, "</td><td>");
        kg_sbuf_xml(b, r->message);
        fault_tail(b, r);
        kg_sbuf_puts(b, "</td></tr>\n");
    }
    kg_sbuf_puts(b, "</tbody></table></div>\n");
}

static void provenance(kg_sbuf *b, const cJSON *report)
{
    const cJSON *p, *prov = cJSON_GetObjectItemCaseSensitive(report, KG_RK_PROVENANCE);
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(report, KG_RK_DEVICE);
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(report, KG_RK_MARKS_SOURCE);
    kg_sbuf_puts(b, "<h2>Provenance</h2>\n<div class=\"scroll\"><table>\n");
    const cJSON *groups[] = { prov, cJSON_IsObject(dev) ? dev : NULL,
                              cJSON_IsObject(ms) ? ms : NULL }; /* where the marks came from */
    static const char *const prefix[] = { "", KG_RK_DEVICE ".", KG_RK_MARKS_SOURCE "." };
    for (size_t g = 0; g < KG_ARRAY_LEN(groups); g++)
        cJSON_ArrayForEach(p, groups[g]) {
            char *val = cJSON_IsString(p) ? NULL : cJSON_PrintUnformatted(p);
            kg_sbuf_printf(b, "<tr><th>%s", prefix[g]);
            kg_sbuf_xml(b, p->string);
            kg_sbuf_puts(b, "</th><td>");
            kg_sbuf_xml(b, cJSON_IsString(p) ? p->valuestring : (val ? val : ""));
            kg_sbuf_puts(b, "</td></tr>\n");
            cJSON_free(val);
        }
    kg_sbuf_puts(b, "</table></div>\n");
}

/* The page's head and the headline: the same words as the Markdown's (a no-GPU run with skips
 * is never "passed"). */
static void ht_head(kg_sbuf *b, const kg_export_view *v)
{
    const int *n = v->counts;
    bool failed = n[KG_VERDICT_FAIL] || n[KG_VERDICT_XPASS];
    kg_sbuf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<meta name=\"viewport\" content=\"width=device-width\"><title>kgate ");
    kg_sbuf_xml(b, v->command ? v->command : "report");
    kg_sbuf_printf(b, "%s%s</title><style>%s</style></head><body>\n",
                   v->diagnostic ? " (DIAGNOSTIC)" : "",
                   v->incomplete ? " (incomplete, interrupted)"
                   : v->no_gpu   ? " (incomplete: no GPU)"
                                 : "",
                   css);
    kg_sbuf_puts(b, "<h1>kgate ");
    kg_sbuf_xml(b, v->command ? v->command : "report");
    kg_sbuf_printf(b, ": %s%s%s</h1>\n", v->incomplete ? "incomplete (interrupted), " : "",
                   v->no_gpu ? (failed || n[KG_VERDICT_ERROR] ? "incomplete: no GPU, "
                                                              : "incomplete: no GPU")
                             : "",
                   failed                ? "failed"
                   : n[KG_VERDICT_ERROR] ? "errors"
                   : v->no_gpu           ? ""
                                         : "passed");
}

static void ht_banners(kg_sbuf *b, const kg_export_view *v)
{
    if (v->no_gpu) {
        kg_sbuf_printf(b,
                       "<div class=\"incomplete\" id=\"no-gpu\">INCOMPLETE: NO GPU. %d of %zu "
                       "results were skipped (",
                       v->counts[KG_VERDICT_SKIP], v->n);
        kg_sbuf_xml(b, v->no_device);
        kg_sbuf_puts(b, "): the GPU gates did not run, and the run certifies nothing.</div>\n");
    }
    if (v->incomplete)
        kg_sbuf_puts(b, "<div class=\"incomplete\" id=\"incomplete\">INCOMPLETE (INTERRUPTED): "
                        "the run was stopped (SIGINT/SIGTERM). These are the results so far; "
                        "the cases it had not reached are missing.</div>\n");
    if (v->diagnostic)
        kg_sbuf_puts(b, "<div class=\"banner\" id=\"diagnostic\">DIAGNOSTIC RUN: NON-CERTIFYING. "
                        "These results never advance high-water marks and certify nothing."
                        "</div>\n");
}

/* The counts and the run's context (mode, device, commit, seed, run id). */
static void ht_meta(kg_sbuf *b, const kg_export_view *v)
{
    const int *n = v->counts;
    char cnt[64];
    kg_sbuf_printf(b, "<p class=\"meta\">%d passed (%d with warnings), %d failed, %d errors",
                   n[KG_VERDICT_PASS] + n[KG_VERDICT_WARN], n[KG_VERDICT_WARN], n[KG_VERDICT_FAIL],
                   n[KG_VERDICT_ERROR]);
    if (v->faults)
        kg_sbuf_printf(b, " (%s)", kg_fmt_count(cnt, sizeof cnt, v->faults, "fault"));
    kg_sbuf_printf(b, ", %d skipped", n[KG_VERDICT_SKIP]);
    if (n[KG_VERDICT_XFAIL]) /* only where a case declares an expected failure */
        kg_sbuf_printf(b, ", %s",
                       kg_fmt_count(cnt, sizeof cnt, n[KG_VERDICT_XFAIL], "expected failure"));
    if (n[KG_VERDICT_XPASS])
        kg_sbuf_printf(b, ", <strong class=\"XPASS\">%s</strong>",
                       kg_fmt_count(cnt, sizeof cnt, n[KG_VERDICT_XPASS], "unexpected pass"));
    kg_sbuf_printf(b, " · mode %s · device ", v->diagnostic ? "diagnostic" : "production");
    kg_sbuf_xml(b, v->device_class ? v->device_class : v->device_name ? v->device_name : "none");
    kg_sbuf_puts(b, " · commit ");
    kg_sbuf_xml(b, v->commit ? v->commit : "unknown");
    if (v->local_changes)
        kg_sbuf_puts(b, " + local changes");
    if (!isnan(v->seed))
        kg_sbuf_printf(b, " · seed %.0f", v->seed);
    kg_sbuf_puts(b, " · run ");
    kg_sbuf_xml(b, v->run_id ? v->run_id : "?");
    kg_sbuf_puts(b, "</p>\n");
}

int kg_export_html(const cJSON *report, const char *path)
{
    int rc = 0;
    kg_export_view v;
    kg_sbuf b = KG_SBUF_INIT;
    KG_TRY(kg_export_view_build(&v, report));
    ht_head(&b, &v);
    ht_banners(&b, &v);
    ht_meta(&b, &v);
    kg_sbuf_puts(&b, "<h2>This run against the marks</h2>\n");
    chart_marks(&b, &v);
    chart_ceiling(&b, &v, report);
    KG_TRY(kg_roofline_html(&b, report)); /* the counters gate's points */
    kg_sbuf_puts(&b, "<h2>Results</h2>\n");
    results_table(&b, &v);
    kg_export_html_timing(&b, report);
    provenance(&b, report);
    kg_sbuf_printf(&b, "<script>%s</script>\n</body></html>\n", table_js);
    KG_TRY(kg_sbuf_write(&b, path));
cleanup:
    kg_sbuf_free(&b);
    kg_export_view_free(&v);
    return rc;
}
