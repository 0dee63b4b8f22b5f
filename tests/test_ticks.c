/* The charts' axis math (gates/report/svg.c), pure: every step is 1, 2 or 5 x 10^k, the ticks
 * cover the data and stay within their count, labels carry the step's decimals and the unit
 * (never "-0", never 0.30000000000000004), a long label is cut to its width. The planted
 * defect: a step of 3 or a range the ticks do not cover fails step_is_nice / covers. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "report/svg.h"
#include "kg_test.h"

static bool step_is_nice(double s)
{
    double e = pow(10, floor(log10(s) + 1e-9)), f = s / e;
    return fabs(f - 1) < 1e-9 || fabs(f - 2) < 1e-9 || fabs(f - 5) < 1e-9;
}

static bool covers(const kg_svg_ticks *t, double lo, double hi, int max)
{
    return t->lo <= lo + 1e-12 && t->hi >= hi - 1e-12 && t->n >= 2 && t->n <= max &&
           fabs(t->lo + t->step * (t->n - 1) - t->hi) < t->step * 1e-6;
}

static void test_nice(void)
{
    CHECK(kg_svg_nice_step(0.7) == 1);
    CHECK(kg_svg_nice_step(1) == 1);
    CHECK(kg_svg_nice_step(1.2) == 2);
    CHECK(kg_svg_nice_step(3) == 5);
    CHECK(kg_svg_nice_step(7) == 10);
    CHECK(fabs(kg_svg_nice_step(0.0031) - 0.005) < 1e-15);
    CHECK(kg_svg_nice_step(NAN) == 1 && kg_svg_nice_step(-2) == 1 && kg_svg_nice_step(0) == 1);
    /* the checker itself: a step of 3 is not nice, a range past the last tick not covered */
    CHECK(!step_is_nice(3) && !step_is_nice(0.25) && step_is_nice(0.05) && step_is_nice(200));
    kg_svg_ticks bad = { .lo = 0, .hi = 10, .step = 5, .n = 3 };
    CHECK(!covers(&bad, 0, 11, 6));
}

/* The y axis: 99.51, 100.2, 100.9 ... is what nice ticks replace. */
static void test_fit(void)
{
    static const double r[][2] = { { 99.51, 102.3 },    { 0, 1 },           { -3.2, 3.2 },
                                   { 20.3, 20.5 },      { 0.0012, 0.0019 }, { 140, 610 },
                                   { -100, 400 },       { 1e-6, 3e-6 },     { 5, 5 },
                                   { 1234567, 1239999 } };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
        for (int max = 3; max <= 11; max += 4) {
            kg_svg_ticks t;
            kg_svg_ticks_fit(&t, r[i][0], r[i][1], max);
            CHECK_MSG(step_is_nice(t.step), "[%g, %g] max %d: step %g", r[i][0], r[i][1], max,
                      t.step);
            double lo = r[i][0], hi = r[i][1] > r[i][0] ? r[i][1] : r[i][0] + 1e-9;
            CHECK_MSG(covers(&t, lo, hi, max), "[%g, %g] max %d: ticks [%g, %g] x%d step %g",
                      r[i][0], r[i][1], max, t.lo, t.hi, t.n, t.step);
        }
    kg_svg_ticks t;
    kg_svg_ticks_fit(&t, 99.51, 102.3, 6);
    CHECK_MSG(t.lo == 99 && t.hi == 103 && t.step == 1 && t.n == 5 && t.decimals == 0,
              "%g %g %d %d", t.lo, t.step, t.n, t.decimals);
    kg_svg_ticks_fit(&t, NAN, INFINITY, 5); /* nothing finite: still an axis */
    CHECK(t.n >= 2 && isfinite(t.lo) && isfinite(t.hi) && t.hi > t.lo);
    kg_svg_ticks_fit(&t, -1e308, 1e308, 5); /* hostile: wider than a double */
    CHECK(t.n >= 2 && isfinite(t.lo) && isfinite(t.hi) && t.hi > t.lo && t.step > 0);
    kg_svg_ticks_fit(&t, 3, 1, 5); /* reversed */
    CHECK(t.lo <= 1 && t.hi >= 3);
}

static void test_labels(void)
{
    kg_svg_ticks t;
    char buf[64];
    kg_svg_ticks_fit(&t, 0.1, 0.7, 7); /* step 0.1: 0.1 + 0.2 must read 0.3 */
    CHECK(t.decimals == 1);
    CHECK(kg_svg_tick(&t, 2) == 0.3);
    kg_svg_tick_label(buf, sizeof buf, &t, kg_svg_tick(&t, 2), "us", false);
    CHECK_MSG(strcmp(buf, "0.3 us") == 0, "%s", buf);
    kg_svg_ticks_fit(&t, -3.2, 3.2, 5);
    kg_svg_tick_label(buf, sizeof buf, &t, t.step, "%", true);
    CHECK_MSG(buf[0] == '+' && buf[strlen(buf) - 1] == '%' && !strchr(buf, ' '), "%s", buf);
    kg_svg_tick_label(buf, sizeof buf, &t, -1e-15, "%", true);
    CHECK_MSG(strcmp(buf, "0%") == 0, "no -0: %s", buf);
    kg_svg_ticks_fit(&t, 140, 610, 6);
    kg_svg_tick_label(buf, sizeof buf, &t, kg_svg_tick(&t, 1), "GB/s", false);
    CHECK_MSG(strcmp(buf, "200 GB/s") == 0, "%s (lo %g step %g)", buf, t.lo, t.step);
}

static void test_text(void)
{
    char buf[128];
    CHECK(fabs(kg_svg_text_width("abcd", 10) - 4 * 0.62 * 10) < 1e-9);
    CHECK(fabs(kg_svg_text_width("±µ", 10) - 2 * 0.62 * 10) < 1e-9); /* code points */
    kg_svg_fit_text(buf, sizeof buf, "softmax/rows=4096/cols=1024/f32", 10, 1000);
    CHECK(strcmp(buf, "softmax/rows=4096/cols=1024/f32") == 0);
    kg_svg_fit_text(buf, sizeof buf, "softmax/rows=4096/cols=1024/f32", 10, 100);
    CHECK_MSG(kg_svg_text_width(buf, 10) <= 100 && strstr(buf, "...") && !strncmp(buf, "soft", 4),
              "%s", buf);
    kg_svg_fit_text(buf, sizeof buf, "µµµµµµµµµµµµµµµµµµµµ", 10, 62); /* not mid-character */
    CHECK_MSG(strcmp(buf, "µµµµµµµ...") == 0 || kg_svg_text_width(buf, 10) <= 62, "%s", buf);
    CHECK(kg_svg_text_width(buf, 10) <= 62);
}

static void test_open(void)
{
    kg_sbuf b = KG_SBUF_INIT;
    kg_svg_open(&b, "chart-x", NULL, 600.4, 200, "a <chart>", false);
    CHECK(b.p && strncmp(b.p, "<svg id=\"chart-x\"", 17) == 0);
    CHECK(b.p && strstr(b.p, "viewBox=\"0 0 601 200\" width=\"100%\""));
    CHECK(b.p && strstr(b.p, "max-width:601px;height:auto"));
    CHECK(b.p && !strstr(b.p, "height=\"")); /* the height follows the width */
    CHECK(b.p && strstr(b.p, "aria-label=\"a &lt;chart&gt;\""));
    CHECK(b.p && !strstr(b.p, "xmlns")); /* inline in HTML: no namespace URL */
    kg_sbuf_free(&b);
    kg_svg_open(&b, NULL, "trend", 10, 10, NULL, true); /* an SVG file needs it */
    CHECK(b.p &&
          strncmp(b.p, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"trend\"", 52) == 0);
    kg_sbuf_free(&b);
}

int main(void)
{
    test_nice();
    test_fit();
    test_labels();
    test_text();
    test_open();
    return kg_test_done("test_ticks");
}
