/* Trend charts (trend.h): layout from the text sizes, then the SVG. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "history/trend.h"
#include "report/svg.h"

#define TR_EM 0.62 /* advance of a monospace glyph, in em (DejaVu Sans Mono: 0.602) */
#define TR_TITLE 14.0
#define TR_TICK 11.0
#define TR_XLAB 10.0
#define TR_LEGEND 11.0
#define TR_NOTE 10.0
#define TR_PAD 10.0
#define TR_PLOT_H 260.0
#define TR_SIN45 0.70710678
#define TR_REGRESSED "#cf222e"
/* The legend's last line: what the marks on a run mean. */
#define TR_KEY "dot: a run's median, bar: its CI, red ring: REGRESSED, line: the mark"

static const char *const tr_palette[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                          "#ff7f0e", "#17becf", "#8c564b", "#e377c2" };

const char *kg_trend_colour(size_t i)
{
    return tr_palette[i % (sizeof tr_palette / sizeof tr_palette[0])];
}

double kg_trend_text_width(const char *s, double size)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++)
        n += (*p & 0xC0) != 0x80; /* code points */
    return (double)n * TR_EM * size;
}

typedef struct {
    const kg_trend_chart *c;
    kg_trend_layout *l;
    double lo, hi; /* y range: the first and the last tick */
    kg_svg_ticks ticks;
    double dx;    /* x slot width */
    size_t every; /* x label every n-th slot */
    double legend_y;
} tr_ctx;

static void tr_box(tr_ctx *t, double x, double y, double w, double h)
{
    if (t->l->nboxes < sizeof t->l->boxes / sizeof t->l->boxes[0])
        t->l->boxes[t->l->nboxes++] = (kg_trend_box){ x, y, w, h };
}

/* ---- scales --------------------------------------------------------------------------------- */

static void tr_yscale(tr_ctx *t)
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < t->c->np; i++) {
        const kg_trend_point *p = &t->c->p[i];
        lo = fmin(lo, fmin(p->lo, p->median));
        hi = fmax(hi, fmax(p->hi, p->median));
        if (p->mark >= 0) {
            lo = fmin(lo, p->mark);
            hi = fmax(hi, p->mark);
        }
    }
    if (!isfinite(lo)) {
        lo = 0;
        hi = 1;
    }
    double pad = (hi - lo) * 0.08;
    kg_svg_ticks_fit(&t->ticks, lo >= 0 ? fmax(0, lo - pad) : lo - pad, hi + pad, 7);
    t->lo = t->ticks.lo;
    t->hi = t->ticks.hi;
}

static double tr_y(const tr_ctx *t, double v)
{
    return t->l->plot_y + t->l->plot_h * (1 - (v - t->lo) / (t->hi - t->lo));
}

static double tr_x(const tr_ctx *t, size_t x) { return t->l->plot_x + t->dx * ((double)x + 0.5); }

/* A point's x: its slot, spread by series so classes at one commit do not hide each other. */
static double tr_px(const tr_ctx *t, const kg_trend_point *p)
{
    double spread = fmin(6.0, t->dx / (double)(t->c->ns + 1));
    return tr_x(t, p->x) + spread * ((double)p->series - (double)(t->c->ns - 1) / 2);
}

/* ---- layout: every margin from the text it holds -------------------------------------------- */

static void tr_tick_label(const tr_ctx *t, char *buf, size_t n, int i)
{
    kg_svg_tick_label(buf, n, &t->ticks, kg_svg_tick(&t->ticks, i), t->c->unit ? t->c->unit : "us",
                      false);
}

static void tr_layout(tr_ctx *t)
{
    kg_trend_layout *l = t->l;
    const kg_trend_chart *c = t->c;
    char buf[64];
    double ytw = 0, xlw = 0, legw = 0;
    tr_yscale(t);
    for (int i = 0; i < t->ticks.n; i++) {
        tr_tick_label(t, buf, sizeof buf, i);
        ytw = fmax(ytw, kg_trend_text_width(buf, TR_TICK));
    }
    for (size_t i = 0; i < c->nx; i++)
        xlw = fmax(xlw, kg_trend_text_width(c->xlabels[i], TR_XLAB));
    for (size_t i = 0; i < c->ns; i++)
        legw = fmax(legw, 24 + kg_trend_text_width(c->series[i], TR_LEGEND));
    size_t nx = c->nx ? c->nx : 1;
    t->dx = fmax(14.0, fmin(60.0, 900.0 / (double)nx));
    if (t->dx * (double)nx > 1400)
        t->dx = 1400.0 / (double)nx;
    if (t->dx * (double)nx < 480) /* a short history still gets a readable plot */
        t->dx = 480.0 / (double)nx;
    t->every = (size_t)ceil(14.0 / t->dx);
    /* A label rotated -45 degrees, anchored at its end on the tick, reaches left and down by
     * (w + h) * sin45: the left margin must hold the first one, the bottom the longest. */
    double reach = (xlw + TR_XLAB) * TR_SIN45;
    l->plot_x = fmax(TR_PAD + TR_TICK * 1.5 + ytw + 8, reach - t->dx / 2 + TR_PAD);
    l->plot_y = c->no_title ? TR_PAD : TR_PAD + TR_TITLE * 1.6;
    l->plot_w = t->dx * (double)nx;
    l->plot_h = TR_PLOT_H;
    t->legend_y = l->plot_y + l->plot_h + 8 + reach + 8;
    l->width = l->plot_x + l->plot_w + TR_PAD * 2;
    if (!c->no_title)
        l->width = fmax(l->width, TR_PAD * 2 + kg_trend_text_width(c->title, TR_TITLE));
    l->width = fmax(l->width, TR_PAD * 2 + legw);
    l->width = fmax(l->width, TR_PAD * 2 + kg_trend_text_width(TR_KEY, TR_LEGEND));
    l->height = t->legend_y + (double)(c->ns + 1) * (TR_LEGEND + 6) + TR_PAD;
}

/* ---- drawing -------------------------------------------------------------------------------- */

static void tr_text(tr_ctx *t, kg_sbuf *b, double x, double y, double size, const char *anchor,
                    const char *extra, const char *s)
{
    double w = kg_trend_text_width(s, size);
    double x0 = strcmp(anchor, "end") == 0 ? x - w : strcmp(anchor, "middle") == 0 ? x - w / 2 : x;
    tr_box(t, x0, y - size, w, size * 1.25);
    kg_sbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%g\" text-anchor=\"%s\"%s>", x, y,
                   size, anchor, extra ? extra : "");
    kg_sbuf_xml(b, s);
    kg_sbuf_puts(b, "</text>\n");
}

static void tr_axes(tr_ctx *t, kg_sbuf *b)
{
    const kg_trend_layout *l = t->l;
    char buf[64];
    kg_sbuf_printf(b,
                   "<rect class=\"plot\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                   "fill=\"#fff\" stroke=\"#999\"/>\n",
                   l->plot_x, l->plot_y, l->plot_w, l->plot_h);
    for (int i = 0; i < t->ticks.n; i++) {
        double y = tr_y(t, kg_svg_tick(&t->ticks, i));
        kg_sbuf_printf(b,
                       "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                       "stroke=\"#eee\"/>\n",
                       l->plot_x, y, l->plot_x + l->plot_w, y);
        tr_tick_label(t, buf, sizeof buf, i);
        tr_text(t, b, l->plot_x - 6, y + TR_TICK * 0.35, TR_TICK, "end", NULL, buf);
    }
    /* The y axis title, rotated: its box is the rotated one. */
    const char *yl = t->c->y_label ? t->c->y_label : "median time";
    double w = kg_trend_text_width(yl, TR_TICK), cy = l->plot_y + l->plot_h / 2;
    tr_box(t, TR_PAD - 1, cy - w / 2, TR_TICK * 1.25, w);
    kg_sbuf_printf(b,
                   "<text font-size=\"%g\" text-anchor=\"middle\" transform=\"translate(%.1f,"
                   "%.1f) rotate(-90)\">",
                   TR_TICK, TR_PAD + TR_TICK, cy);
    kg_sbuf_xml(b, yl);
    kg_sbuf_puts(b, "</text>\n");
    for (size_t i = 0; i < t->c->nx; i += t->every) {
        double x = tr_x(t, i), y = l->plot_y + l->plot_h + 6;
        double lw = kg_trend_text_width(t->c->xlabels[i], TR_XLAB);
        double r = (lw + TR_XLAB) * TR_SIN45;
        tr_box(t, x - r, y, r + TR_XLAB * TR_SIN45, r);
        kg_sbuf_printf(b,
                       "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>"
                       "\n<text class=\"xlabel\" font-size=\"%g\" text-anchor=\"end\" "
                       "transform=\"translate(%.1f,%.1f) rotate(-45)\">",
                       x, l->plot_y + l->plot_h, x, l->plot_y + l->plot_h + 4, TR_XLAB, x + 3,
                       y + TR_XLAB * 0.7);
        kg_sbuf_xml(b, t->c->xlabels[i]);
        kg_sbuf_puts(b, "</text>\n");
    }
}

/* The mark of one series as a step path: M x0 y0, then H to the next run, V to its mark. */
static void tr_steps(tr_ctx *t, kg_sbuf *b, size_t s)
{
    bool open = false;
    double last = -1, lx = 0;
    for (size_t i = 0; i < t->c->np; i++) {
        const kg_trend_point *p = &t->c->p[i];
        if (p->series != s || p->mark < 0)
            continue;
        double x = tr_x(t, p->x);
        if (!open) {
            kg_sbuf_printf(b,
                           "<path class=\"mark\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
                           "stroke-opacity=\"0.7\" d=\"M%.1f %.1f",
                           kg_trend_colour(s), x - t->dx / 2, tr_y(t, p->mark));
            open = true;
        } else if (p->mark != last) {
            kg_sbuf_printf(b, " H%.1f V%.1f", x, tr_y(t, p->mark));
            t->l->steps_h++;
            t->l->steps_v++;
        }
        last = p->mark;
        lx = x;
    }
    if (open) {
        kg_sbuf_printf(b, " H%.1f\"><title>mark (", lx + t->dx / 2);
        kg_sbuf_xml(b, t->c->series[s]);
        kg_sbuf_puts(b, ")</title></path>\n");
        t->l->steps_h++;
    }
}

static void tr_points(tr_ctx *t, kg_sbuf *b)
{
    for (size_t i = 0; i < t->c->np; i++) {
        const kg_trend_point *p = &t->c->p[i];
        const char *col = kg_trend_colour(p->series);
        double x = tr_px(t, p), ylo = tr_y(t, p->lo), yhi = tr_y(t, p->hi);
        /* the whisker over the dot, 1.5 wide with 8-wide caps: a CI the dot would hide shows */
        kg_sbuf_printf(b,
                       "<g class=\"run\"><circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" "
                       "fill=\"%s\" fill-opacity=\"0.55\"><title>",
                       x, tr_y(t, p->median), col);
        kg_sbuf_xml(b, p->tip ? p->tip : "");
        kg_sbuf_puts(b, "</title></circle>");
        kg_sbuf_printf(b,
                       "<path class=\"whisker\" stroke=\"%s\" stroke-width=\"1.5\" d=\"M%.1f "
                       "%.1f V%.1f M%.1f %.1f h8 M%.1f %.1f h8\"/>",
                       col, x, ylo, yhi, x - 4, ylo, x - 4, yhi);
        if (p->regressed)
            kg_sbuf_printf(b,
                           "<circle class=\"regressed\" cx=\"%.1f\" cy=\"%.1f\" r=\"6\" "
                           "fill=\"none\" stroke=\"%s\" stroke-width=\"2\"><title>",
                           x, tr_y(t, p->median), TR_REGRESSED);
        if (p->regressed) {
            kg_sbuf_xml(b, p->tip ? p->tip : "");
            kg_sbuf_puts(b, "</title></circle>");
        }
        kg_sbuf_puts(b, "</g>\n");
        t->l->whiskers++;
    }
}

/* Lowerings: a dashed line at the run where the lower mark took effect, the text beside it
 * (rotated, shortened to the plot's height). */
static void tr_notes(tr_ctx *t, kg_sbuf *b)
{
    const kg_trend_layout *l = t->l;
    for (size_t i = 0; i < t->c->nn; i++) {
        const kg_trend_note *n = &t->c->notes[i];
        double x = tr_x(t, n->x) - t->dx / 2;
        if (x > l->plot_x + l->plot_w - TR_NOTE * 1.5) /* after the last run: keep the text in */
            x = l->plot_x + l->plot_w - TR_NOTE * 1.5;
        char txt[512];
        size_t max = (size_t)((l->plot_h - 8) / (TR_EM * TR_NOTE));
        snprintf(txt, sizeof txt, "%s", n->text);
        if (strlen(txt) > max && max > 3) { /* cut on a code point boundary */
            size_t k = max - 3;
            while (k > 0 && ((unsigned char)txt[k] & 0xC0) == 0x80)
                k--;
            memcpy(txt + k, "...", 4);
        }
        double w = kg_trend_text_width(txt, TR_NOTE);
        kg_sbuf_printf(b,
                       "<line class=\"lowered\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                       "stroke=\"%s\" stroke-dasharray=\"4 3\"><title>",
                       x, l->plot_y, x, l->plot_y + l->plot_h, kg_trend_colour(n->series));
        kg_sbuf_xml(b, n->text); /* the whole text, however long */
        kg_sbuf_puts(b, "</title></line>\n");
        tr_box(t, x + 2, l->plot_y + 4, TR_NOTE * 1.25, w);
        kg_sbuf_printf(b,
                       "<text class=\"note\" font-size=\"%g\" fill=\"#555\" text-anchor=\"end\" "
                       "transform=\"translate(%.1f,%.1f) rotate(-90)\">",
                       TR_NOTE, x + 2 + TR_NOTE, l->plot_y + 4);
        kg_sbuf_xml(b, txt);
        kg_sbuf_puts(b, "</text>\n");
    }
}

static void tr_legend(tr_ctx *t, kg_sbuf *b)
{
    for (size_t s = 0; s < t->c->ns; s++) {
        double y = t->legend_y + (double)s * (TR_LEGEND + 6);
        kg_sbuf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"16\" height=\"%g\" fill=\"%s\"/>\n",
                       TR_PAD, y, TR_LEGEND - 2, kg_trend_colour(s));
        tr_text(t, b, TR_PAD + 22, y + TR_LEGEND - 2, TR_LEGEND, "start", NULL, t->c->series[s]);
    }
    double y = t->legend_y + (double)t->c->ns * (TR_LEGEND + 6);
    tr_text(t, b, TR_PAD, y + TR_LEGEND - 2, TR_LEGEND, "start", " fill=\"#555\"", TR_KEY);
}

void kg_trend_svg(kg_sbuf *b, const kg_trend_chart *c, kg_trend_layout *lay)
{
    static kg_trend_layout scratch;
    kg_trend_layout *l = lay ? lay : &scratch;
    memset(l, 0, sizeof *l);
    tr_ctx t = { .c = c, .l = l };
    tr_layout(&t);
    kg_svg_open(b, NULL, "trend", l->width, l->height, c->title, true);
    if (!c->no_title)
        tr_text(&t, b, TR_PAD, TR_PAD + TR_TITLE, TR_TITLE, "start", " font-weight=\"bold\"",
                c->title);
    tr_axes(&t, b);
    for (size_t s = 0; s < c->ns; s++)
        tr_steps(&t, b, s);
    tr_points(&t, b);
    tr_notes(&t, b);
    tr_legend(&t, b);
    kg_sbuf_puts(b, "</svg>\n");
}
