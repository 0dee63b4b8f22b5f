/* The roofline drawing (gates/report/roofline.c) from synthetic rows, without a GPU: every
 * drawable point is a circle at its log-log position, hollow where a counter was unavailable,
 * no circle for a row without data; the roof follows the ceilings; a report's counters rows
 * take the bench median of the same case when there is one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/export.h"
#include "report/roofline.h"
#include "kg_test.h"

/* The n-th circle's cx, cy and fill ("none" or a colour); false when there is none. */
static bool circle(const char *svg, int n, double *cx, double *cy, char *fill, size_t fn)
{
    const char *p = svg;
    for (int i = 0; i <= n; i++) {
        if (!(p = strstr(p, "<circle class=\"pt\"")))
            return false;
        if (i < n)
            p++;
    }
    return sscanf(p, "<circle class=\"pt\" cx=\"%lf\" cy=\"%lf\" r=\"5\" fill=\"%63[^\"]\"", cx, cy,
                  fill) == 3 &&
           fn >= 64;
}

static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static void test_svg(void)
{
    kg_roof_point pts[] = {
        { "copy", 0.1, 0.4, false, "bench" },      { "gemm", 300, 500, false, "counters" },
        { "partial", 10, 5, true, "counters" },    { "no-data", NAN, NAN, false, "counters" },
        { "no-flops", 5, NAN, false, "counters" }, { "zero", 0, 1, false, "counters" },
    };
    kg_sbuf b = KG_SBUF_INIT;
    kg_roofline_svg(&b, pts, 6, 4000, 700);
    CHECK(!b.err && b.p);
    const char *svg = b.p;
    CHECK(strstr(svg, "<svg id=\"chart-roofline\"") != NULL);
    CHECK(count(svg, "<circle class=\"pt\"") == 3); /* never a point without data */
    kg_roof_axes a;
    kg_roof_axes_fit(&a, pts, 6, 4000, 700);
    /* decades that hold every point and the ridge (700e12 / 4000e9 = 175 FLOP/B) */
    CHECK(a.x_lo <= 0.1 && a.x_hi >= 1750 && a.y_lo <= 0.4 && a.y_hi >= 700);
    CHECK(fabs(log10(a.x_lo) - round(log10(a.x_lo))) < 1e-12);
    for (int i = 0; i < 3; i++) {
        double cx, cy;
        char fill[64];
        CHECK(circle(svg, i, &cx, &cy, fill, sizeof fill));
        CHECK_MSG(fabs(cx - kg_roof_x(&a, pts[i].ai)) < 0.01, "point %d x %.2f", i, cx);
        CHECK_MSG(fabs(cy - kg_roof_y(&a, pts[i].tflops)) < 0.01, "point %d y %.2f", i, cy);
        CHECK_MSG((strcmp(fill, "none") == 0) == pts[i].hollow, "point %d fill %s", i, fill);
    }
    /* log positions: one decade is the same distance everywhere */
    CHECK(fabs((kg_roof_x(&a, 10) - kg_roof_x(&a, 1)) -
               (kg_roof_x(&a, 1000) - kg_roof_x(&a, 100))) < 1e-9);
    CHECK(kg_roof_y(&a, 100) < kg_roof_y(&a, 10)); /* up is faster */
    CHECK(fabs(kg_roof_x(&a, a.x_lo) - a.px0) < 1e-9 && fabs(kg_roof_x(&a, a.x_hi) - a.px1) < 1e-9);
    CHECK(strstr(svg, "<polyline id=\"roof\"") != NULL);
    CHECK(strstr(svg, "4000 GB/s copy, 700.0 TFLOP/s") != NULL);
    kg_sbuf_free(&b);
    /* no ceilings measured: points, no roof */
    kg_sbuf c = KG_SBUF_INIT;
    kg_roofline_svg(&c, pts, 6, 0, 0);
    CHECK(strstr(c.p, "id=\"roof\"") == NULL && count(c.p, "<circle class=\"pt\"") == 3);
    kg_sbuf_free(&c);
}

/* Hostile values (a report is untrusted): no point, and axes that end (an axis out to 1e309 or
 * down to 0 looped forever). */
static void test_hostile(void)
{
    kg_roof_point pts[] = {
        { "huge", 1.5e308, 1.5e308, false, "counters" },
        { "tiny", 4.9e-324, 4.9e-324, false, "counters" },
        { "ok", 2, 1, false, "counters" },
    };
    kg_sbuf b = KG_SBUF_INIT;
    kg_roofline_svg(&b, pts, 3, 1e300, 4.9e-324);
    CHECK(!b.err && b.p);
    CHECK(count(b.p, "<circle class=\"pt\"") == 1);
    CHECK_MSG(count(b.p, "<line ") <= 60, "%d grid lines", count(b.p, "<line "));
    kg_roof_axes a;
    kg_roof_axes_fit(&a, pts, 3, 1e300, 1e300);
    CHECK(isfinite(a.x_hi) && isfinite(a.y_hi) && a.x_lo > 0 && a.y_lo > 0);
    kg_sbuf_free(&b);
}

static void test_report(void)
{
    const char
        *json = "{\"schema\":\"kgate-report/1\",\"bench\":{\"ceilings\":{\"copy_gbps\":4000,"
                "\"gemm_tflops\":700}},\"results\":["
                "{\"gate\":\"bench\",\"case\":\"a\",\"figures\":{\"median_us\":10}},"
                "{\"gate\":\"counters\",\"case\":\"a\",\"figures\":{\"flops\":1e9,\"ai\":2,"
                "\"time_s\":1e-3,\"flops_partial\":false}},"
                "{\"gate\":\"counters\",\"case\":\"b\",\"figures\":{\"flops\":1e9,\"ai\":2,"
                "\"time_s\":1e-3,\"flops_partial\":true}},"
                "{\"gate\":\"counters\",\"case\":\"c\",\"figures\":{\"flops\":null,\"ai\":null}},"
                "{\"gate\":\"counters\",\"case\":\"d\",\"figures\":{}}]}";
    cJSON *r = cJSON_Parse(json);
    kg_sbuf b = KG_SBUF_INIT;
    CHECK(r && kg_roofline_html(&b, r) == 0);
    CHECK(count(b.p, "<circle class=\"pt\"") == 2);
    /* a: 1e9 FLOP in the bench's 10 us = 100 TFLOP/s; b: counters' 1 ms = 1 TFLOP/s */
    /* the roof at 2 FLOP/B: 2 x 4000 GB/s = 8 TFLOP/s (below the 700 peak) */
    CHECK(strstr(b.p, "a: 2 FLOP/B, 100 TFLOP/s (time: bench), 1250% of the roof") != NULL);
    CHECK(strstr(b.p, "b: 2 FLOP/B, 1 TFLOP/s (time: counters), 12% of the roof; a counter was "
                      "unavailable") != NULL);
    CHECK(strstr(b.p, "2 of 3 profiled cases drawn") != NULL);
    /* the caption names the roof (no GEMM clock in this report: none said) */
    CHECK(strstr(b.p, "The roof: copy 4000 GB/s (memory-bound cases); bf16 cuBLAS GEMM 700 "
                      "TFLOP/s (compute-bound cases: a kernel faster than cuBLAS") != NULL);
    kg_sbuf_free(&b);
    cJSON_Delete(r);
    cJSON *e = cJSON_Parse("{\"results\":[{\"gate\":\"parity\",\"case\":\"a\",\"figures\":{}}]}");
    kg_sbuf c = KG_SBUF_INIT;
    CHECK(e && kg_roofline_html(&c, e) == 0);
    CHECK(strstr(c.p, "id=\"roofline-none\"") != NULL && !strstr(c.p, "<svg"));
    kg_sbuf_free(&c);
    cJSON_Delete(e);
}

/* The ceilings a report names: the GEMM's clock from its detail, a forged or missing figure
 * said as not measured, never a 309-digit number. */
static void test_ceilings_text(void)
{
    static const struct {
        const char *ceilings, *want;
    } t[] = {
        { "{\"copy_gbps\":4266.84,\"gemm_tflops\":665.783,\"detail\":{\"gemm\":{"
          "\"power_state\":{\"sm_mhz_median\":1498.95,\"max_sm_mhz\":1980}}}}",
          "copy 4267 GB/s (memory-bound cases); bf16 cuBLAS GEMM 665.8 TFLOP/s at 1499 of 1980 "
          "MHz (compute-bound cases: a kernel faster than cuBLAS, or at a higher clock, passes "
          "100%)" },
        { "{\"copy_gbps\":4000}", "copy 4000 GB/s (memory-bound cases)" },
        { "{\"copy_gbps\":-1,\"gemm_tflops\":1e308,\"detail\":{\"gemm\":{\"power_state\":"
          "{\"sm_mhz_median\":\"x\"}}}}",
          "bf16 cuBLAS GEMM 1e+308 TFLOP/s (compute-bound cases" },
        { "{}", "" },
    };
    for (size_t i = 0; i < KG_ARRAY_LEN(t); i++) {
        char json[512];
        snprintf(json, sizeof json, "{\"bench\":{\"ceilings\":%s}}", t[i].ceilings);
        cJSON *r = cJSON_Parse(json);
        kg_export_ceilings ce;
        kg_sbuf b = KG_SBUF_INIT;
        kg_export_ceilings_get(&ce, r);
        kg_export_ceilings_text(&b, &ce);
        const char *got = b.p ? b.p : "";
        CHECK_MSG(r && strncmp(got, t[i].want, strlen(t[i].want)) == 0 && (t[i].want[0] || !got[0]),
                  "ceilings %zu: '%s'", i, got);
        kg_sbuf_free(&b);
        cJSON_Delete(r);
    }
}

int main(void)
{
    test_ceilings_text();
    test_svg();
    test_hostile();
    test_report();
    return kg_test_done("test_roofline");
}
