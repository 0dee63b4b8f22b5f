/* "Where the time went" in the HTML report: the run's parts (the selftest, its passes, each
 * gate) and its slowest cases as stacked bars of their phases, in the style of the report's
 * other charts (a viewBox that scales, report/svg.h), from the report's timing
 * (gates/driver/run_timing.c) and results[].timing (core/phase.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "report/export.h"
#include "report/svg.h"

#define TS_W 640.0 /* design width, as the report's other charts */
#define TS_FS 12.0
#define TS_ROW 36.0 /* a label line over a bar */
#define TS_TOP 40.0
#define TS_BOTTOM 28.0
#define TS_SLOWEST 10
#define TS_NPH KG_PHASE_N
#define TS_NSEG (TS_NPH + 2) /* the phases, then a gate's own begin and end (parts only) */

static const char *const ts_names[TS_NSEG] = { "setup",    "prepare",    "reference", "work",
                                               "teardown", "gate begin", "gate end" };
static const char *const ts_colors[TS_NSEG] = { "#8c959f", "#bf8700", "#8250df", "#0969da",
                                                "#57606a", "#1a7f37", "#cf222e" };

typedef struct {
    const char *label;
    double wall, ph[TS_NSEG];
    kg_export_slow_key key; /* a case's place in the slowest cases (not for the parts) */
} ts_bar;

static double ts_num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble > 0 ? v->valuedouble : 0;
}

/* part: a timing part (its gate's own begin and end), NULL for a case */
static void ts_fill(ts_bar *r, const char *label, double wall, const cJSON *phases,
                    const cJSON *part)
{
    r->label = label ? label : "?";
    r->wall = wall;
    for (int k = 0; k < TS_NPH; k++)
        r->ph[k] = ts_num(phases, kg_report_phase_keys[k]);
    r->ph[TS_NPH] = ts_num(part, KG_RK_TIMING_BEGIN);
    r->ph[TS_NPH + 1] = ts_num(part, KG_RK_TIMING_END);
}

/* One chart: a label line (name left, seconds right) over each bar; a bar is the wall time,
 * grey where no phase accounts for it (a part's own work between cases, the selftest's
 * children), its phases stacked from the left, then a gate's own begin and end. */
static void ts_chart(kg_sbuf *b, const char *id, const char *title, const ts_bar *rows, size_t n)
{
    kg_svg_ticks t;
    char buf[48], cut[300];
    double hi = 0, half = 0;
    for (size_t i = 0; i < n; i++)
        hi = fmax(hi, rows[i].wall);
    /* milliseconds below a second: "0.2 ms" reads, "0.00020 s" does not */
    const char *unit = hi < 1 ? "ms" : "s";
    double sc = hi < 1 ? 1e3 : 1;
    kg_svg_ticks_fit(&t, 0, hi > 0 ? hi * sc : 1, 6);
    for (int i = 0; i < t.n; i++) {
        kg_svg_tick_label(buf, sizeof buf, &t, kg_svg_tick(&t, i), unit, false);
        half = fmax(half, kg_svg_text_width(buf, TS_FS) / 2);
    }
    double x0 = fmax(12, half + 4), x1 = TS_W - fmax(12, half + 4), y0 = TS_TOP;
    double rows_h = (double)n * TS_ROW, h = TS_TOP + rows_h + TS_BOTTOM;
#define TS_X(v) (x0 + ((v)-t.lo) / (t.hi - t.lo) * (x1 - x0))
    kg_svg_open(b, id, NULL, TS_W, h, title, false);
    kg_sbuf_printf(b, "<g font-size=\"%g\"><text x=\"%.1f\" y=\"14\">", TS_FS, x0);
    kg_sbuf_xml(b, title);
    kg_sbuf_puts(b, "</text>\n");
    for (int i = 0; i < t.n; i++) {
        double v = kg_svg_tick(&t, i), x = TS_X(v);
        kg_svg_tick_label(buf, sizeof buf, &t, v, unit, false);
        kg_sbuf_printf(b,
                       "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e7ec\"/>"
                       "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>"
                       "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                       x, y0, x, y0 + rows_h, x, y0 - 6, buf, x, y0 + rows_h + 16, buf);
    }
    kg_sbuf_printf(b,
                   "<rect class=\"plot\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                   "fill=\"none\" stroke=\"#d8dde6\"/>\n",
                   x0, y0, x1 - x0, rows_h);
    for (size_t i = 0; i < n; i++) {
        const ts_bar *r = &rows[i];
        double y = y0 + (double)i * TS_ROW, x = x0;
        snprintf(buf, sizeof buf, "%.3g %s", r->wall * sc, unit);
        kg_svg_fit_text(cut, sizeof cut, r->label, TS_FS,
                        x1 - x0 - kg_svg_text_width(buf, TS_FS) - 12);
        if (i)
            kg_sbuf_printf(b,
                           "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                           "stroke=\"#d8dde6\"/>",
                           x0, y, x1, y);
        kg_sbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\">", x0 + 2, y + 13);
        kg_sbuf_xml(b, cut);
        kg_sbuf_printf(b, "</text><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
                       x1 - 2, y + 13, buf);
        kg_sbuf_printf(b,
                       "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"12\" "
                       "fill=\"#d0d7de\"><title>",
                       x0, y + 20, TS_X(r->wall * sc) - x0);
        kg_sbuf_xml(b, r->label);
        kg_sbuf_printf(b, ": %.3g %s wall</title></rect>", r->wall * sc, unit);
        for (int k = 0; k < TS_NSEG; k++) {
            double w = fmin(TS_X(t.lo + r->ph[k] * sc) - x0, x1 - x); /* never past the plot */
            if (w < 0.05)
                continue;
            kg_sbuf_printf(b,
                           "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"12\" "
                           "fill=\"%s\"><title>",
                           x, y + 20, w, ts_colors[k]);
            kg_sbuf_xml(b, r->label);
            kg_sbuf_printf(b, ": %s %.3g %s</title></rect>", ts_names[k], r->ph[k] * sc, unit);
            x += w;
        }
        kg_sbuf_puts(b, "\n");
    }
#undef TS_X
    kg_sbuf_puts(b, "</g></svg>\n");
}

static int ts_slower(const void *a, const void *b)
{
    return kg_export_slow_cmp(&((const ts_bar *)a)->key, &((const ts_bar *)b)->key);
}

/* The results with timing, slowest first (labels "gate: case", owned by `labels`). */
static size_t ts_slowest(ts_bar **out, char ***labels, const cJSON *results)
{
    const cJSON *it;
    size_t n = 0, cap = (size_t)cJSON_GetArraySize(results);
    *out = cap ? calloc(cap, sizeof **out) : NULL;
    *labels = cap ? calloc(cap, sizeof **labels) : NULL;
    if (!*out || !*labels)
        return 0;
    cJSON_ArrayForEach(it, results) {
        const cJSON *tm = cJSON_GetObjectItemCaseSensitive(it, KG_RES_TIMING);
        const char *g = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, KG_RES_GATE));
        const char *c = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, KG_RES_CASE));
        if (!cJSON_IsObject(tm) || n >= cap)
            continue;
        size_t len = strlen(g ? g : "?") + strlen(c ? c : "?") + 3;
        if (!((*labels)[n] = malloc(len)))
            break;
        snprintf((*labels)[n], len, "%s: %s", g ? g : "?", c ? c : "?");
        ts_fill(&(*out)[n], (*labels)[n], ts_num(tm, KG_RK_PHASE_WALL), tm, NULL);
        (*out)[n].key = (kg_export_slow_key){ .wall = (*out)[n].wall,
                                              .case_id = c,
                                              .gate = g,
                                              .order = n,
                                              .item = it };
        n++;
    }
    qsort(*out, n, sizeof **out, ts_slower);
    return n;
}

void kg_export_html_timing(kg_sbuf *b, const cJSON *report)
{
    const cJSON *timing = cJSON_GetObjectItemCaseSensitive(report, KG_RK_TIMING), *p;
    const cJSON *parts = cJSON_GetObjectItemCaseSensitive(timing, KG_RK_TIMING_PARTS);
    size_t n = 0, cap = (size_t)cJSON_GetArraySize(parts), ns = 0;
    ts_bar *rows = NULL, *slow = NULL;
    char **labels = NULL;
    if (!cJSON_IsObject(timing))
        return; /* a report from before timing, or a command that writes none */
    kg_sbuf_printf(b,
                   "<h2>Where the time went</h2>\n<p class=\"meta\">%.1f s in all (wall clock "
                   "of the runner).</p>\n",
                   ts_num(timing, KG_RK_TIMING_TOTAL));
    rows = cap ? calloc(cap, sizeof *rows) : NULL;
    cJSON_ArrayForEach(p, parts)
        if (rows && n < cap)
            ts_fill(&rows[n++],
                    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, KG_RK_TIMING_NAME)),
                    ts_num(p, KG_RK_TIMING_WALL),
                    cJSON_GetObjectItemCaseSensitive(p, KG_RK_TIMING_PHASES), p);
    if (n)
        ts_chart(b, "chart-timing",
                 "wall seconds of each part (the selftest, its passes, "
                 "each gate)",
                 rows, n);
    ns = ts_slowest(&slow, &labels, cJSON_GetObjectItemCaseSensitive(report, KG_RK_RESULTS));
    if (ns)
        ts_chart(b, "chart-slowest", "the slowest cases and their phases", slow,
                 ns < TS_SLOWEST ? ns : TS_SLOWEST);
    if (n || ns) {
        kg_sbuf_puts(b, "<p class=\"meta\">");
        for (int k = 0; k < TS_NSEG; k++)
            kg_sbuf_printf(b, "<span style=\"color:%s\">&#9632;</span> %s &#160; ", ts_colors[k],
                           ts_names[k]);
        kg_sbuf_puts(b, "<span style=\"color:#d0d7de\">&#9632;</span> not in a case's phases "
                        "(the part's own work, the selftest's child runs)</p>\n");
    }
    for (size_t i = 0; labels && i < ns; i++)
        free(labels[i]);
    free(labels);
    free(slow);
    free(rows);
}
