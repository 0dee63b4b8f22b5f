/* The roofline chart of the HTML report (roofline.h). Measured, never modelled: a case is a
 * point only when the counters gate measured both its FLOPs and its DRAM bytes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "report/roofline.h"
#include "report/svg.h"
#include "report/export.h" /* kg_export_ceilings */

static double rf_floor10(double v) { return pow(10, floor(log10(v))); }
static double rf_ceil10(double v) { return pow(10, ceil(log10(v))); }
/* A report is untrusted: a value outside [RF_MIN, RF_MAX] is no measurement (and an axis out
 * to 1e309 or down to 0 would never end its decade loop). */
#define RF_MIN 1e-12
#define RF_MAX 1e12
static bool rf_ok(double v) { return isfinite(v) && v >= RF_MIN && v <= RF_MAX; }
static double rf_clamp(double v) { return fmin(fmax(v, RF_MIN), RF_MAX); }

void kg_roof_axes_fit(kg_roof_axes *a, const kg_roof_point *p, size_t n, double copy_gbps,
                      double peak_tflops)
{
    double xl = INFINITY, xh = -INFINITY, yl = INFINITY, yh = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (!rf_ok(p[i].ai) || !rf_ok(p[i].tflops))
            continue;
        xl = fmin(xl, p[i].ai), xh = fmax(xh, p[i].ai);
        yl = fmin(yl, p[i].tflops), yh = fmax(yh, p[i].tflops);
    }
    if (rf_ok(copy_gbps) && rf_ok(peak_tflops)) {
        double ridge = peak_tflops * 1e12 / (copy_gbps * 1e9);
        xl = fmin(xl, ridge / 100), xh = fmax(xh, ridge * 10);
        yh = fmax(yh, peak_tflops);
    }
    if (!isfinite(xl))
        xl = 0.01, xh = 100, yl = 0.001, yh = 100;
    a->x_lo = rf_floor10(rf_clamp(xl)), a->x_hi = rf_ceil10(rf_clamp(xh));
    a->y_lo = rf_floor10(rf_clamp(yl)), a->y_hi = rf_ceil10(rf_clamp(yh));
    if (a->x_hi <= a->x_lo)
        a->x_hi = a->x_lo * 10;
    if (a->y_hi <= a->y_lo)
        a->y_hi = a->y_lo * 10;
    a->px0 = 70, a->px1 = KG_ROOF_W - 20, a->py0 = 30, a->py1 = KG_ROOF_H - 50;
}

double kg_roof_x(const kg_roof_axes *a, double ai)
{
    return a->px0 +
           (a->px1 - a->px0) * (log10(ai) - log10(a->x_lo)) / (log10(a->x_hi) - log10(a->x_lo));
}

double kg_roof_y(const kg_roof_axes *a, double tflops)
{
    return a->py1 -
           (a->py1 - a->py0) * (log10(tflops) - log10(a->y_lo)) / (log10(a->y_hi) - log10(a->y_lo));
}

static void rf_grid(kg_sbuf *b, const kg_roof_axes *a)
{
    for (double x = a->x_lo; x <= a->x_hi * 1.0001; x *= 10) {
        double px = kg_roof_x(a, x);
        kg_sbuf_printf(b,
                       "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e7ec\"/>"
                       "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n",
                       px, a->py0, px, a->py1, px, a->py1 + 16, x);
    }
    for (double y = a->y_lo; y <= a->y_hi * 1.0001; y *= 10) {
        double py = kg_roof_y(a, y);
        kg_sbuf_printf(b,
                       "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e7ec\"/>"
                       "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                       a->px0, py, a->px1, py, a->px0 - 6, py + 4, y);
    }
    kg_sbuf_printf(b,
                   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">arithmetic intensity "
                   "(FLOP per DRAM byte, measured)</text>\n",
                   (a->px0 + a->px1) / 2, KG_ROOF_H - 12);
    kg_sbuf_printf(b,
                   "<text x=\"14\" y=\"%.1f\" transform=\"rotate(-90 14 %.1f)\" "
                   "text-anchor=\"middle\">TFLOP/s achieved</text>\n",
                   (a->py0 + a->py1) / 2, (a->py0 + a->py1) / 2);
}

/* min(peak, ai * bandwidth), as a polyline over the x range. */
static void rf_roof(kg_sbuf *b, const kg_roof_axes *a, double copy_gbps, double peak_tflops)
{
    double ridge = peak_tflops * 1e12 / (copy_gbps * 1e9);
    double x0 = a->x_lo, y0 = x0 * copy_gbps * 1e9 / 1e12;
    if (y0 < a->y_lo) { /* start the slope where it enters the plot */
        x0 = a->y_lo * 1e12 / (copy_gbps * 1e9);
        y0 = a->y_lo;
    }
    kg_sbuf_printf(b,
                   "<polyline id=\"roof\" fill=\"none\" stroke=\"#1d2430\" stroke-width=\"2\" "
                   "points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>\n",
                   kg_roof_x(a, x0), kg_roof_y(a, y0), kg_roof_x(a, ridge),
                   kg_roof_y(a, peak_tflops), kg_roof_x(a, a->x_hi), kg_roof_y(a, peak_tflops));
    kg_sbuf_printf(b,
                   "<text x=\"%.1f\" y=\"%.1f\">%.0f GB/s copy, %.1f TFLOP/s bf16 GEMM "
                   "(measured in this run)</text>\n",
                   a->px0 + 8, a->py0 - 8, copy_gbps, peak_tflops);
}

/* What a filled and a hollow point mean, and the roof, in one row at baseline y. */
static void rf_legend(kg_sbuf *b, double y)
{
    kg_sbuf_printf(b,
                   "<g class=\"legend\"><circle cx=\"20\" cy=\"%.1f\" r=\"5\" fill=\"#0969da\" "
                   "stroke=\"#0969da\" stroke-width=\"1.5\"/><text x=\"30\" y=\"%.1f\">measured "
                   "FLOPs and DRAM bytes</text>",
                   y - 4, y);
    kg_sbuf_printf(b,
                   "<circle cx=\"250\" cy=\"%.1f\" r=\"5\" fill=\"none\" stroke=\"#0969da\" "
                   "stroke-width=\"1.5\"/><text x=\"260\" y=\"%.1f\">hollow: an FP counter "
                   "unavailable (a lower bound)</text>",
                   y - 4, y);
    kg_sbuf_printf(b,
                   "<line x1=\"600\" y1=\"%.1f\" x2=\"624\" y2=\"%.1f\" stroke=\"#1d2430\" "
                   "stroke-width=\"2\"/><text x=\"630\" y=\"%.1f\">roof (this run)</text></g>\n",
                   y - 4, y - 4, y);
}

void kg_roofline_svg(kg_sbuf *b, const kg_roof_point *p, size_t n, double copy_gbps,
                     double peak_tflops)
{
    kg_roof_axes a;
    kg_roof_axes_fit(&a, p, n, copy_gbps, peak_tflops);
    double h = KG_ROOF_H + 26; /* the legend's row under the axis title */
    kg_svg_open(b, "chart-roofline", NULL, KG_ROOF_W, h, "roofline of the measured counters",
                false);
    kg_sbuf_printf(b,
                   "<g font-size=\"11\"><rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
                   "fill=\"#fff\"/>\n<rect class=\"plot\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                   "height=\"%.1f\" fill=\"none\" stroke=\"#d8dde6\"/>\n",
                   KG_ROOF_W, h, a.px0, a.py0, a.px1 - a.px0, a.py1 - a.py0);
    rf_grid(b, &a);
    if (rf_ok(copy_gbps) && rf_ok(peak_tflops))
        rf_roof(b, &a, copy_gbps, peak_tflops);
    for (size_t i = 0; i < n; i++) {
        if (!rf_ok(p[i].ai) || !rf_ok(p[i].tflops))
            continue; /* never a fabricated point */
        kg_sbuf_printf(b,
                       "<circle class=\"pt\" cx=\"%.2f\" cy=\"%.2f\" r=\"5\" fill=\"%s\" "
                       "stroke=\"#0969da\" stroke-width=\"1.5\"><title>",
                       kg_roof_x(&a, p[i].ai), kg_roof_y(&a, p[i].tflops),
                       p[i].hollow ? "none" : "#0969da");
        kg_sbuf_xml(b, p[i].case_id ? p[i].case_id : "?");
        kg_sbuf_printf(b, ": %.3g FLOP/B, %.3g TFLOP/s (time: %s)", p[i].ai, p[i].tflops,
                       p[i].time_source ? p[i].time_source : "?");
        if (rf_ok(copy_gbps) && rf_ok(peak_tflops)) /* the roof at its intensity */
            kg_sbuf_printf(b, ", %.0f%% of the roof",
                           100 * p[i].tflops / fmin(peak_tflops, p[i].ai * copy_gbps / 1e3));
        kg_sbuf_printf(b, "%s</title></circle>\n",
                       p[i].hollow ? "; a counter was unavailable: a lower bound" : "");
    }
    rf_legend(b, h - 8);
    kg_sbuf_puts(b, "</g></svg>\n");
}

/* ---- from a report ------------------------------------------------------------------------ */

static double rf_num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* The bench median (us) of a case in the same report, NaN when none. */
static double rf_bench_us(const cJSON *results, const char *id)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, results) {
        const char *g = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, KG_RES_GATE));
        const char *c = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, KG_RES_CASE));
        if (g && c && strcmp(g, KG_RV_GATE_BENCH) == 0 && strcmp(c, id) == 0) {
            /* the measured time (a capped row's median_us is clock-normalised); the roof is
             * cuBLAS at the clock it ran at, named under the chart */
            const cJSON *f = cJSON_GetObjectItemCaseSensitive(r, KG_RES_FIGURES);
            double raw = rf_num(f, KG_FIG_RAW_MEDIAN);
            return rf_ok(raw) ? raw : rf_num(f, KG_FIG_MEDIAN);
        }
    }
    return NAN;
}

static void rf_point(kg_roof_point *p, const cJSON *results, const char *id, const cJSON *f)
{
    double flops = rf_num(f, KG_FIG_CT_FLOPS), bus = rf_bench_us(results, id);
    double t = rf_ok(bus) ? bus * 1e-6 : rf_num(f, KG_FIG_CT_TIME);
    p->case_id = id;
    p->ai = rf_num(f, KG_FIG_CT_AI);
    p->tflops = rf_ok(t) && rf_ok(flops) ? flops / t / 1e12 : NAN;
    p->time_source = rf_ok(bus) ? KG_RV_GATE_BENCH : KG_RV_GATE_COUNTERS;
    p->hollow = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, KG_FIG_CT_FLOPS_PARTIAL));
}

int kg_roofline_html(kg_sbuf *b, const cJSON *report)
{
    const cJSON *results = cJSON_GetObjectItemCaseSensitive(report, KG_RK_RESULTS), *r;
    kg_export_ceilings ec; /* the roof, and the caption that names it */
    kg_export_ceilings_get(&ec, report);
    size_t n = 0, cap = (size_t)cJSON_GetArraySize(results), drawn = 0;
    kg_roof_point *p = calloc(cap ? cap : 1, sizeof *p);
    if (!p)
        return KG_ERR(KG_ENOMEM, "out of memory for the roofline");
    cJSON_ArrayForEach(r, results) {
        const char *g = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, KG_RES_GATE));
        const char *c = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, KG_RES_CASE));
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(r, KG_RES_FIGURES);
        if (!g || !c || strcmp(g, KG_RV_GATE_COUNTERS) != 0 || !cJSON_GetArraySize(f))
            continue;
        rf_point(&p[n], results, c, f);
        drawn += rf_ok(p[n].ai) && rf_ok(p[n].tflops);
        n++;
    }
    kg_sbuf_puts(b, "<h2>Roofline (measured counters)</h2>\n");
    if (!drawn) {
        kg_sbuf_puts(b, "<p id=\"roofline-none\">No case has measured FLOPs and DRAM bytes "
                        "(the counters gate did not run, was skipped, or the counters were "
                        "unavailable): no roofline.</p>\n");
    } else {
        kg_roofline_svg(b, p, n, ec.copy_gbps, ec.gemm_tflops);
        kg_sbuf_printf(b,
                       "<p class=\"meta\">%zu of %zu profiled cases drawn (the others lack "
                       "FLOPs or DRAM bytes); hollow: an FP counter was unavailable. "
                       "Achieved TFLOP/s from the bench median of the same run where there "
                       "is one, else the counters pass's kernel time. The roof: ",
                       drawn, n);
        kg_export_ceilings_text(b, &ec);
        kg_sbuf_puts(b, ".</p>\n");
    }
    free(p);
    return 0;
}
