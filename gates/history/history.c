/* A mark's history drawn as SVG or HTML (history.h): walk the marks file's first-parent git
 * history, keep one point per change of each series, draw one chart per series. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "history/history.h"
#include "marks/marks_git.h"
#include "marks/marks_ref.h"
#include "core/sbuf.h"
#include "report/svg.h"

/* One chart's geometry (SVG user units): the plot is HIST_PLOT_H tall and at least
 * HIST_MIN_W - HIST_L - HIST_R wide; the bottom margin, the right margin and the width are
 * computed from the labels (monospace, so their widths are known): nothing is clipped. */
#define HIST_MIN_W 960.0
#define HIST_L 80.0
#define HIST_R 20.0
#define HIST_T 30.0
#define HIST_PLOT_H 180.0
#define HIST_EM 0.62 /* monospace advance, in em (DejaVu Sans Mono 0.602) */
#define HIST_SIN35 0.5736
#define HIST_COS35 0.8192

typedef struct {
    char commit[13], author[64], date[24], set_by[96], series[200];
    double value, band, ci_lo, ci_hi;
} hist_point;

typedef struct {
    const kg_marks_history_opts *o;
    hist_point *p;
    size_t n;
} hist_walk;

/* The scales of one chart: value range [lo, hi], cnt points spread dx apart, top at y0; the
 * plot's width and the chart's height (margins from the labels). */
typedef struct {
    double lo, hi, dx, y0, plot_w, h;
    size_t cnt;
    kg_svg_ticks ticks; /* nice ticks: [lo, hi] is their range */
    const char *unit;   /* "us" for a time metric, else none */
} hist_chart;

/* The whole SVG: its width, and the plot width every chart shares. */
typedef struct {
    double w, plot_w;
} hist_geom;

static double hist_text_w(const char *s, double size)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        n += (*p & 0xC0) != 0x80;
    return (double)n * HIST_EM * size;
}

/* A point's label under the plot: short commit and author. */
static void hist_label(char *buf, size_t n, const hist_point *p)
{
    snprintf(buf, n, "%.7s %s", p->commit, p->author);
}

int kg_marks_repo_open(kg_git **g, char **rel, const char *marks_path)
{
    int rc = 0;
    char dir[4096] = ".";
    if (marks_path) {
        snprintf(dir, sizeof dir, "%s", marks_path);
        char *slash = strrchr(dir, '/');
        if (!slash)
            snprintf(dir, sizeof dir, ".");
        else
            slash[slash == dir ? 1 : 0] = '\0';
    }
    KG_TRY(kg_git_open(g, dir));
    if (marks_path && (*g)->workdir)
        KG_TRY(kg_git_relpath(*g, marks_path, rel));
    else if (!(*rel = strdup(marks_path ? marks_path : KG_MARKS_DEFAULT_PATH)))
        rc = KG_ERR(KG_ENOMEM, "out of memory");
cleanup:
    return rc;
}

/* ---- the walk ----------------------------------------------------------------------------- */

static bool hist_selected(const hist_walk *h, const kg_mark *mk)
{
    return strcmp(mk->case_id, h->o->case_id) == 0 &&
           (!h->o->device || strcmp(mk->device_class, h->o->device) == 0) &&
           (!h->o->metric || strcmp(mk->metric, h->o->metric) == 0);
}

/* One point per change of a series (other marks' commits are not its history). */
static bool hist_changed(const hist_walk *h, const char *series, const kg_mark *mk)
{
    for (size_t j = h->n; j-- > 0;)
        if (strcmp(h->p[j].series, series) == 0)
            return !(h->p[j].value == mk->value && h->p[j].band == mk->band_rel);
    return true;
}

static int hist_add(hist_walk *h, const git_oid *commit, const git_signature *author,
                    const char *series, const kg_mark *mk)
{
    hist_point *np = realloc(h->p, (h->n + 1) * sizeof *np);
    if (!np)
        return KG_ERR(KG_ENOMEM, "out of memory");
    h->p = np;
    hist_point *p = &h->p[h->n++];
    memset(p, 0, sizeof *p);
    snprintf(p->commit, sizeof p->commit, "%.12s", git_oid_tostr_s(commit));
    snprintf(p->author, sizeof p->author, "%s", author->name);
    time_t t = (time_t)author->when.time;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(p->date, sizeof p->date, "%Y-%m-%d %H:%M", &tm);
    snprintf(p->set_by, sizeof p->set_by, "%s", mk->set_by ? mk->set_by : "");
    snprintf(p->series, sizeof p->series, "%s", series);
    p->value = mk->value;
    p->band = mk->band_rel;
    p->ci_lo = mk->ci_lo;
    p->ci_hi = mk->ci_hi;
    return 0;
}

static int hist_version(const git_oid *commit, const git_signature *author, const char *summary,
                        const char *data, size_t len, void *ud)
{
    hist_walk *h = ud;
    kg_marks *m = NULL;
    int rc = 0;
    KG_UNUSED(summary);
    KG_UNUSED(len);
    char name[64];
    snprintf(name, sizeof name, "marks at %.12s", git_oid_tostr_s(commit));
    if (kg_marks_parse(&m, data, name) < 0) /* an old malformed version: skip it, not fatal */
        return 0;
    for (size_t i = 0; i < kg_marks_count(m); i++) {
        const kg_mark *mk = kg_marks_at(m, i);
        if (!hist_selected(h, mk))
            continue;
        char series[200];
        snprintf(series, sizeof series, "%s %s", mk->device_class, mk->metric);
        if (hist_changed(h, series, mk))
            KG_TRY(hist_add(h, commit, author, series, mk));
    }
cleanup:
    kg_marks_free(m);
    return rc;
}

/* The distinct series in order of first appearance (borrowed from the points). */
static int hist_series(const char ***out, size_t *n, const hist_walk *h)
{
    const char **s = NULL;
    size_t ns = 0;
    for (size_t i = 0; i < h->n; i++) {
        bool seen = false;
        for (size_t j = 0; j < ns; j++)
            seen |= strcmp(s[j], h->p[i].series) == 0;
        if (seen)
            continue;
        const char **grown = realloc(s, (ns + 1) * sizeof *grown);
        if (!grown) {
            free(s);
            return KG_ERR(KG_ENOMEM, "out of memory");
        }
        s = grown;
        s[ns++] = h->p[i].series;
    }
    *out = s;
    *n = ns;
    return 0;
}

/* ---- drawing ------------------------------------------------------------------------------ */

static double hist_x(const hist_chart *c, size_t k)
{
    return HIST_L + (c->cnt > 1 ? c->dx * (double)k : c->plot_w / 2);
}

static double hist_y(const hist_chart *c, double v)
{
    return c->y0 + HIST_T + HIST_PLOT_H * (1 - (v - c->lo) / (c->hi - c->lo));
}

/* The width: the plot, the last label's reach to the right (rotated 35 degrees), the title. */
static hist_geom hist_layout(const hist_walk *h, const char *const *series, size_t ns)
{
    hist_geom g = { .w = HIST_MIN_W, .plot_w = HIST_MIN_W - HIST_L - HIST_R };
    char buf[128];
    for (size_t i = 0; i < h->n; i++) {
        hist_label(buf, sizeof buf, &h->p[i]);
        double reach = hist_text_w(buf, 10) * HIST_COS35 + 12; /* from the last x */
        g.w = fmax(g.w, HIST_L + g.plot_w + reach + 8);
    }
    for (size_t i = 0; i < ns; i++) {
        double tw = hist_text_w(h->o->case_id, 14) + hist_text_w(series[i], 14) +
                    hist_text_w(" - (mark per commit; shaded: noise band; bar: run CI)", 14);
        g.w = fmax(g.w, HIST_L + tw + HIST_R);
    }
    return g;
}

/* The value range covers every band and run CI of the series, padded 8%. */
static hist_chart hist_scale(const hist_walk *h, const char *series, double y0, const hist_geom *g)
{
    hist_chart c = { .lo = INFINITY, .hi = -INFINITY, .y0 = y0, .plot_w = g->plot_w };
    double reach = 0;
    char buf[128];
    for (size_t i = 0; i < h->n; i++)
        if (strcmp(h->p[i].series, series) == 0) {
            const hist_point *p = &h->p[i];
            c.lo = fmin(c.lo, fmin(p->value * (1 - p->band), p->ci_lo));
            c.hi = fmax(c.hi, fmax(p->value * (1 + p->band), p->ci_hi));
            c.cnt++;
            hist_label(buf, sizeof buf, p);
            reach = fmax(reach, hist_text_w(buf, 10) * HIST_SIN35 + 10 * HIST_COS35);
        }
    double pad = (c.hi - c.lo) * 0.08;
    kg_svg_ticks_fit(&c.ticks, c.lo - pad, c.hi + pad, 5);
    c.lo = c.ticks.lo;
    c.hi = c.ticks.hi;
    c.unit = strstr(series, "_us") ? "us" : NULL; /* time_us_warm, time_us_cold */
    c.dx = c.cnt > 1 ? c.plot_w / (double)(c.cnt - 1) : 0;
    c.h = HIST_T + HIST_PLOT_H + 14 + reach + 16; /* the labels hang below the plot */
    return c;
}

static void hist_frame(kg_sbuf *b, const hist_chart *c, const char *case_id, const char *series)
{
    kg_sbuf_printf(b, "<g><text x=\"%g\" y=\"%g\" font-size=\"14\" font-weight=\"bold\">", HIST_L,
                   c->y0 + 18);
    kg_sbuf_xml(b, case_id);
    kg_sbuf_printf(b, " &#8212; ");
    kg_sbuf_xml(b, series);
    kg_sbuf_printf(b, " (mark per commit; shaded: noise band; bar: run CI)</text>\n");
    kg_sbuf_printf(b,
                   "<rect class=\"plot\" x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" "
                   "fill=\"none\" stroke=\"#999\"/>\n",
                   HIST_L, c->y0 + HIST_T, c->plot_w, HIST_PLOT_H);
    for (int k = 0; k < c->ticks.n; k++) { /* 20 us, 20.5 us, 21 us: nice steps, the unit */
        char lab[48];
        double v = kg_svg_tick(&c->ticks, k);
        kg_svg_tick_label(lab, sizeof lab, &c->ticks, v, c->unit, false);
        kg_sbuf_printf(b,
                       "<line x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\" stroke=\"#eee\"/>"
                       "<text x=\"%g\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s</text>\n",
                       HIST_L, hist_y(c, v), HIST_L + c->plot_w, hist_y(c, v), HIST_L - 6,
                       hist_y(c, v) + 4, lab);
    }
}

/* The points of one series, in order (at most cap); returns how many. */
static size_t hist_of(const hist_walk *h, const char *series, const hist_point **out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < h->n && k < cap; i++)
        if (strcmp(h->p[i].series, series) == 0)
            out[k++] = &h->p[i];
    return k;
}

/* A mark holds until it moves: every edge is drawn as steps, horizontal then vertical. The
 * band: its upper edge left to right, its lower edge back; then the mark's line. */
static void hist_band_line(kg_sbuf *b, const hist_chart *c, const hist_walk *h, const char *series)
{
    const hist_point **p = malloc((h->n ? h->n : 1) * sizeof *p);
    if (!p) {
        b->err = true;
        return;
    }
    size_t n = hist_of(h, series, p, h->n);
    kg_sbuf_printf(b, "<polygon fill=\"#4a90d9\" fill-opacity=\"0.2\" stroke=\"none\" "
                      "points=\"");
    for (size_t k = 0; k < n; k++) {
        double y = hist_y(c, p[k]->value * (1 + p[k]->band));
        kg_sbuf_printf(b, "%g,%g %g,%g ", hist_x(c, k), y,
                       k + 1 < n ? hist_x(c, k + 1) : hist_x(c, k), y);
    }
    for (size_t k = n; k-- > 0;) {
        double y = hist_y(c, p[k]->value * (1 - p[k]->band));
        kg_sbuf_printf(b, "%g,%g %g,%g ", k + 1 < n ? hist_x(c, k + 1) : hist_x(c, k), y,
                       hist_x(c, k), y);
    }
    kg_sbuf_printf(b, "\"/>\n<polyline class=\"mark\" fill=\"none\" stroke=\"#1f5fa8\" "
                      "stroke-width=\"2\" points=\"");
    for (size_t k = 0; k < n; k++) {
        if (k > 0) /* horizontal at the old mark, then vertical to the new */
            kg_sbuf_printf(b, "%g,%g ", hist_x(c, k), hist_y(c, p[k - 1]->value));
        kg_sbuf_printf(b, "%g,%g ", hist_x(c, k), hist_y(c, p[k]->value));
    }
    kg_sbuf_printf(b, "\"/>\n");
    free(p);
}

/* Each point: its run CI bar, a dot with the details as a tooltip, commit and author below
 * (rotated 35 degrees; the chart's height and the SVG's width hold the longest). */
static void hist_points(kg_sbuf *b, const hist_chart *c, const hist_walk *h, const char *series)
{
    size_t k = 0;
    char label[128];
    for (size_t i = 0; i < h->n; i++) {
        const hist_point *p = &h->p[i];
        if (strcmp(p->series, series) != 0)
            continue;
        double x = hist_x(c, k++);
        kg_sbuf_printf(b, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"#555\"/>\n", x,
                       hist_y(c, p->ci_lo), x, hist_y(c, p->ci_hi));
        kg_sbuf_printf(b,
                       "<circle class=\"pt\" cx=\"%g\" cy=\"%g\" r=\"4\" fill=\"#1f5fa8\"><title>",
                       x, hist_y(c, p->value));
        kg_sbuf_printf(b, "%s by ", p->commit);
        kg_sbuf_xml(b, p->author);
        kg_sbuf_printf(b, " on %s: %.6g (band +-%.2f%%, run CI [%.6g, %.6g]) ", p->date, p->value,
                       100 * p->band, p->ci_lo, p->ci_hi);
        kg_sbuf_xml(b, p->set_by);
        kg_sbuf_printf(b, "</title></circle>\n");
        hist_label(label, sizeof label, p);
        kg_sbuf_printf(b, "<text font-size=\"10\" transform=\"translate(%g,%g) rotate(35)\">", x,
                       c->y0 + HIST_T + HIST_PLOT_H + 14);
        kg_sbuf_xml(b, label);
        kg_sbuf_printf(b, "</text>\n");
    }
}

static void hist_svg(kg_sbuf *b, const hist_walk *h, const char *const *series, size_t ns)
{
    hist_geom g = hist_layout(h, series, ns);
    double y0 = 0;
    kg_sbuf bodies = KG_SBUF_INIT;
    for (size_t i = 0; i < ns; i++) {
        hist_chart c = hist_scale(h, series[i], y0, &g);
        hist_frame(&bodies, &c, h->o->case_id, series[i]);
        hist_band_line(&bodies, &c, h, series[i]);
        hist_points(&bodies, &c, h, series[i]);
        kg_sbuf_printf(&bodies, "</g>\n");
        y0 += c.h;
    }
    kg_svg_open(b, NULL, "marks-history", g.w, y0, h->o->case_id, true);
    kg_sbuf_puts(b, bodies.p ? bodies.p : "");
    if (bodies.err)
        b->err = true;
    kg_sbuf_free(&bodies);
    kg_sbuf_printf(b, "</svg>\n");
}

/* The HTML page: the same SVG, then every point in a table. */
static void hist_html(kg_sbuf *b, const hist_walk *h, const char *const *series, size_t ns)
{
    kg_sbuf_printf(b,
                   "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
                   "content=\"width=device-width\"><title>kgate marks "
                   "history: ");
    kg_sbuf_xml(b, h->o->case_id);
    kg_sbuf_printf(b,
                   "</title><style>td,th{vertical-align:top}td:last-child{overflow-wrap:break-word}"
                   ".chart,.scroll{overflow-x:auto;max-width:100%%}</style></head>"
                   "<body style=\"font-family:sans-serif\">\n<div class=\"chart\">");
    hist_svg(b, h, series, ns);
    kg_sbuf_printf(b, "</div><div class=\"scroll\"><table border=\"1\" cellpadding=\"4\" "
                      "style=\"border-collapse:collapse\">"
                      "<tr><th>commit</th><th>date (UTC)</th><th>moved by</th><th>series</th>"
                      "<th>mark</th><th>band</th><th>run CI</th><th>set by</th></tr>\n");
    for (size_t i = 0; i < h->n; i++) {
        const hist_point *p = &h->p[i];
        kg_sbuf_printf(b, "<tr><td>%s</td><td>%s</td><td>", p->commit, p->date);
        kg_sbuf_xml(b, p->author);
        kg_sbuf_printf(b, "</td><td>");
        kg_sbuf_xml(b, p->series);
        kg_sbuf_printf(b, "</td><td>%.6g</td><td>&#177;%.2f%%</td><td>[%.6g, %.6g]</td><td>",
                       p->value, 100 * p->band, p->ci_lo, p->ci_hi);
        kg_sbuf_xml(b, p->set_by);
        kg_sbuf_printf(b, "</td></tr>\n");
    }
    kg_sbuf_printf(b, "</table></div></body></html>\n");
}

/* ---- the whole job ------------------------------------------------------------------------ */

/* Where the walk starts: --rev, else the tip of the marks ref. */
static int hist_start(git_oid *start, kg_git *g, const kg_marks_history_opts *o)
{
    int rc = 0;
    char *refname = NULL;
    bool is_head, exists;
    if (o->rev)
        return kg_git_rev_commit(g, o->rev, start);
    if (o->marks_ref) /* any ref: kgate-marks, origin/kgate-marks, refs/... */
        return kg_git_rev_commit(g, o->marks_ref, start);
    /* Neither: the local marks branch when there is one, else the checked-out branch. */
    const char *mb = kg_marks_branch_default(NULL);
    if (mb) {
        char name[512];
        snprintf(name, sizeof name, "refs/heads/%s", mb);
        KG_TRY(kg_git_tip(g, name, start, &exists));
        if (exists)
            goto cleanup;
    }
    KG_TRY(kg_git_target_ref(g, NULL, &refname, &is_head));
    KG_TRY(kg_git_tip(g, refname, start, &exists));
    if (!exists)
        rc = KG_ERR(KG_ENOTFOUND, "%s has no commits", refname);
cleanup:
    free(refname);
    return rc;
}

static bool hist_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcmp(s + n - k, suffix) == 0;
}

int kg_marks_history(kg_marks_history_result *res, const kg_marks_history_opts *o)
{
    int rc = 0;
    kg_git *g = NULL;
    char *rel = NULL;
    hist_walk h = { .o = o, .p = NULL, .n = 0 };
    kg_sbuf b = KG_SBUF_INIT;
    const char **series = NULL;
    size_t ns = 0;
    git_oid start;
    bool html = hist_ends_with(o->out, ".html");
    if (!html && !hist_ends_with(o->out, ".svg")) {
        rc = KG_ERR(KG_EINVAL, "--out %s: expected a .svg or .html file name", o->out);
        goto cleanup;
    }
    KG_TRY(kg_path_check_writable(o->out));
    KG_TRY(kg_marks_repo_open(&g, &rel, o->marks_path));
    KG_TRY(hist_start(&start, g, o));
    KG_TRY(kg_git_file_history(g, &start, rel, hist_version, &h));
    if (h.n == 0) {
        rc = KG_ERR(KG_ENOTFOUND, "no mark for case '%s'%s%s in the history of %s", o->case_id,
                    o->device ? " on " : "", o->device ? o->device : "", rel);
        goto cleanup;
    }
    KG_TRY(hist_series(&series, &ns, &h));
    if (html)
        hist_html(&b, &h, series, ns);
    else
        hist_svg(&b, &h, series, ns);
    if (b.err) {
        rc = KG_ERR(KG_ENOMEM, "out of memory drawing the history");
        goto cleanup;
    }
    KG_TRY(kg_sbuf_write(&b, o->out));
    *res = (kg_marks_history_result){ .points = h.n, .series = ns };
cleanup:
    free(series);
    kg_sbuf_free(&b);
    free(h.p);
    free(rel);
    kg_git_free(g);
    return rc;
}
