/* The charts' shared axis, text and element helpers (svg.h). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "report/svg.h"

#define SVG_EM 0.62

double kg_svg_nice_step(double raw)
{
    if (!isfinite(raw) || raw <= 0)
        return 1;
    double e = pow(10, floor(log10(raw))), f = raw / e;
    if (f > 1 + 1e-9 && f <= 2 + 1e-9)
        f = 2;
    else if (f > 2 + 1e-9 && f <= 5 + 1e-9)
        f = 5;
    else if (f > 5 + 1e-9)
        f = 10;
    else
        f = 1;
    return f * e;
}

/* A finite range with lo < hi from whatever came in. */
static void svg_range(double *lo, double *hi)
{
    if (!isfinite(*lo) && !isfinite(*hi))
        *lo = 0, *hi = 1;
    else if (!isfinite(*lo))
        *lo = *hi;
    else if (!isfinite(*hi))
        *hi = *lo;
    if (*lo > *hi) {
        double t = *lo;
        *lo = *hi, *hi = t;
    }
    if (*hi - *lo <= 1e-12 * fmax(1, fabs(*hi))) { /* one value: a range around it */
        double d = *lo == 0 ? 1 : fabs(*lo) * 0.05;
        *lo -= d, *hi += d;
    }
}

void kg_svg_ticks_fit(kg_svg_ticks *t, double lo, double hi, int max_ticks)
{
    if (max_ticks < 2)
        max_ticks = 2;
    svg_range(&lo, &hi);
    double step = kg_svg_nice_step((hi - lo) / (max_ticks - 1));
    t->n = 0;
    for (int guard = 0; guard < 8 && isfinite(hi - lo); guard++) {
        double a = floor(lo / step + 1e-9), z = ceil(hi / step - 1e-9);
        if (z - a + 1 <= max_ticks) {
            t->lo = a * step, t->hi = z * step, t->n = (int)(z - a) + 1;
            break;
        }
        step = kg_svg_nice_step(step * 1.5); /* 1 -> 2 -> 5 -> 10 */
    }
    if (t->n == 0) { /* a range no double step spans (1e308 wide): its two ends */
        t->lo = lo, t->hi = hi, t->n = 2;
        step = isfinite(hi - lo) ? hi - lo : DBL_MAX;
    }
    t->step = step;
    if (t->n < 2) {
        t->hi = t->lo + step;
        t->n = 2;
    }
    int d = (int)ceil(-log10(step) - 1e-9);
    t->decimals = d < 0 ? 0 : d > 12 ? 12 : d;
}

double kg_svg_tick(const kg_svg_ticks *t, int i)
{
    double v = t->lo + t->step * i, q = pow(10, t->decimals);
    v = round(v * q) / q;
    return v == 0 ? 0 : v; /* no -0 */
}

void kg_svg_tick_label(char *buf, size_t n, const kg_svg_ticks *t, double v, const char *unit,
                       bool sign)
{
    double q = pow(10, t->decimals);
    v = round(v * q) / q;
    if (v == 0)
        v = 0;
    const char *u = unit ? unit : "";
    snprintf(buf, n, "%s%.*f%s%s", sign && v > 0 ? "+" : "", t->decimals, v,
             *u && strcmp(u, "%") != 0 ? " " : "", u);
}

double kg_svg_text_width(const char *s, double size)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++)
        n += (*p & 0xC0) != 0x80; /* code points */
    return (double)n * SVG_EM * size;
}

void kg_svg_fit_text(char *buf, size_t n, const char *s, double size, double width)
{
    snprintf(buf, n, "%s", s ? s : "");
    if (kg_svg_text_width(buf, size) <= width || n < 4)
        return;
    size_t keep = (size_t)fmax(0, floor(width / (SVG_EM * size)) - 3), k = 0, cps = 0;
    while (buf[k] && cps < keep) { /* keep code points, not bytes */
        k++;
        while (((unsigned char)buf[k] & 0xC0) == 0x80)
            k++;
        cps++;
    }
    if (k + 4 > n)
        k = n - 4;
    while (k > 0 && ((unsigned char)buf[k] & 0xC0) == 0x80)
        k--;
    memcpy(buf + k, "...", 4);
}

void kg_svg_open(kg_sbuf *b, const char *id, const char *cls, double w, double h, const char *aria,
                 bool standalone)
{
    kg_sbuf_puts(b, "<svg");
    if (id) /* first: the tests and the page's links find a chart by '<svg id="..."' */
        kg_sbuf_printf(b, " id=\"%s\"", id);
    if (standalone)
        kg_sbuf_puts(b, " xmlns=\"http://www.w3.org/2000/svg\"");
    if (cls)
        kg_sbuf_printf(b, " class=\"%s\"", cls);
    kg_sbuf_printf(b,
                   " viewBox=\"0 0 %.0f %.0f\" width=\"100%%\" style=\"max-width:%.0fpx;"
                   "height:auto;display:block\" preserveAspectRatio=\"xMinYMin meet\" "
                   "font-family=\"%s\"",
                   ceil(w), ceil(h), ceil(w), KG_SVG_FONT);
    if (aria) {
        kg_sbuf_puts(b, " role=\"img\" aria-label=\"");
        kg_sbuf_xml(b, aria);
        kg_sbuf_puts(b, "\"");
    }
    kg_sbuf_puts(b, ">\n");
}
