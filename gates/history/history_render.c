/* `kgate history render` (history_render.h): the records of the history branch as one trend
 * chart per (case, metric), each an SVG file, and one index.html holding them all with a
 * table of the latest run per device class. Lowerings come from the marks branch's log. */
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "history/history_render.h"
#include "core/report_keys.h" /* KG_RV_DEC_REGRESSED */
#include "marks/marks_git.h"
#include "marks/marks_ref.h"
#include "history/trend.h"

#define HR_LOWER_PREFIX "kgate marks lower: " /* set_by of a lowered mark (runners/cli/marks.c) */

/* A lowering found in the marks branch's log. */
typedef struct {
    char case_id[256], metric[64], device_class[256], date[24], text[300];
} hr_lowering;

typedef struct {
    const kg_history_render_opts *o;
    kg_history_recs all; /* selected records, in date order */
    hr_lowering *low;
    size_t nlow;
    kg_marks *prev; /* the walk's previous marks version */
} hr_ctx;

/* ---- the marks branch's lowerings ----------------------------------------------------------- */

static int hr_version(const git_oid *commit, const git_signature *author, const char *summary,
                      const char *data, size_t len, void *ud)
{
    hr_ctx *x = ud;
    kg_marks *m = NULL;
    KG_UNUSED(commit);
    KG_UNUSED(summary);
    KG_UNUSED(len);
    if (kg_marks_parse(&m, data, "marks") < 0)
        return 0; /* an old malformed version: not fatal */
    for (size_t i = 0; i < kg_marks_count(m); i++) {
        const kg_mark *mk = kg_marks_at(m, i);
        const kg_mark *was = x->prev
                                 ? kg_marks_find(x->prev, mk->device_class, mk->case_id, mk->metric)
                                 : NULL;
        if (!mk->set_by || strncmp(mk->set_by, HR_LOWER_PREFIX, strlen(HR_LOWER_PREFIX)) != 0 ||
            (was && was->value == mk->value))
            continue;
        hr_lowering *nl = realloc(x->low, (x->nlow + 1) * sizeof *nl);
        if (!nl) {
            kg_marks_free(m);
            return KG_ERR(KG_ENOMEM, "out of memory");
        }
        x->low = nl;
        hr_lowering *l = &x->low[x->nlow++];
        snprintf(l->case_id, sizeof l->case_id, "%s", mk->case_id);
        snprintf(l->metric, sizeof l->metric, "%s", mk->metric);
        snprintf(l->device_class, sizeof l->device_class, "%s", mk->device_class);
        time_t t = (time_t)author->when.time;
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(l->date, sizeof l->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
        snprintf(l->text, sizeof l->text, "lowered to %.4g: %s", mk->value,
                 mk->set_by + strlen(HR_LOWER_PREFIX));
    }
    kg_marks_free(x->prev);
    x->prev = m;
    return 0;
}

/* The marks ref: --marks-ref, else the local marks branch when it exists (else none). */
static int hr_lowerings(hr_ctx *x, kg_git *g)
{
    int rc = 0;
    git_oid start;
    char name[512];
    bool exists = false;
    const char *mb = kg_marks_branch_default(NULL);
    if (x->o->marks_ref) {
        KG_TRY(kg_git_rev_commit(g, x->o->marks_ref, &start));
        exists = true;
    } else if (mb) {
        snprintf(name, sizeof name, "refs/heads/%s", mb);
        KG_TRY(kg_git_tip(g, name, &start, &exists));
    }
    if (exists)
        KG_TRY(kg_git_file_history(g, &start, KG_MARKS_DEFAULT_PATH, hr_version, x));
cleanup:
    kg_marks_free(x->prev);
    x->prev = NULL;
    return rc;
}

/* ---- selecting and grouping ----------------------------------------------------------------- */

typedef struct {
    const kg_history_rec *r;
    size_t pos;
} hr_ix;

/* By date; equal dates keep their file order (a stable sort through the position). */
static int hr_date_cmp(const void *a, const void *b)
{
    const hr_ix *x = a, *y = b;
    int c = strcmp(x->r->date, y->r->date);
    return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

static int hr_sort(kg_history_recs *all)
{
    hr_ix *ix = malloc((all->n ? all->n : 1) * sizeof *ix);
    kg_history_rec *v = malloc((all->n ? all->n : 1) * sizeof *v);
    if (!ix || !v) {
        free(ix);
        free(v);
        return KG_ERR(KG_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < all->n; i++)
        ix[i] = (hr_ix){ &all->v[i], i };
    qsort(ix, all->n, sizeof *ix, hr_date_cmp);
    for (size_t i = 0; i < all->n; i++)
        v[i] = *ix[i].r;
    free(all->v);
    all->v = v;
    all->cap = all->n ? all->n : 1;
    free(ix);
    return 0;
}

static int hr_select(hr_ctx *x, const kg_history_recs *in)
{
    int rc = 0;
    regex_t re;
    bool have_re = false;
    if (x->o->case_regex) {
        int e = regcomp(&re, x->o->case_regex, REG_EXTENDED | REG_NOSUB);
        if (e != 0) {
            char why[256];
            regerror(e, &re, why, sizeof why);
            return KG_ERR(KG_EINVAL, "--case '%s': not a regular expression (%s)", x->o->case_regex,
                          why);
        }
        have_re = true;
    }
    for (size_t i = 0; i < in->n; i++) {
        const kg_history_rec *r = &in->v[i];
        if (have_re && regexec(&re, r->case_id, 0, NULL, 0) != 0)
            continue;
        if (x->o->device && strcmp(x->o->device, r->device_class) != 0)
            continue;
        KG_TRY(kg_history_recs_push(&x->all, r));
    }
    KG_TRY(hr_sort(&x->all));
cleanup:
    if (have_re)
        regfree(&re);
    return rc;
}

/* Index of s in list (appended when absent). */
static int hr_intern(const char ***list, size_t *n, const char *s, size_t *at)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*list)[i], s) == 0) {
            *at = i;
            return 0;
        }
    const char **nl = realloc(*list, (*n + 1) * sizeof *nl);
    if (!nl)
        return KG_ERR(KG_ENOMEM, "out of memory");
    *list = nl;
    nl[*n] = s;
    *at = (*n)++;
    return 0;
}

/* ---- one chart ------------------------------------------------------------------------------ */

typedef struct {
    kg_trend_chart c;
    const char **xl, **xkeys, **series; /* x labels (short), their slots' keys */
    char (*shortsha)[16];
    char (*keys)[96]; /* a run's slot: "<commit>#<k>", its commit's k-th run */
    kg_trend_point *p;
    kg_trend_note *notes;
    char (*tips)[720];
    const kg_history_rec **latest; /* per series */
    const kg_history_rec **rec;    /* per point */
    size_t *runs;
    char title[400];
} hr_chart;

static void hr_chart_free(hr_chart *h)
{
    free(h->xl);
    free(h->xkeys);
    free(h->series);
    free(h->shortsha);
    free(h->keys);
    free(h->p);
    free(h->notes);
    free(h->tips);
    free(h->latest);
    free(h->rec);
    free(h->runs);
    memset(h, 0, sizeof *h);
}

static bool hr_in_chart(const kg_history_rec *r, const kg_history_rec *key)
{
    return strcmp(r->case_id, key->case_id) == 0 && strcmp(r->metric, key->metric) == 0;
}

static int hr_chart_alloc(hr_chart *h, size_t n)
{
    size_t k = n ? n : 1;
    h->shortsha = calloc(k, sizeof *h->shortsha);
    h->keys = calloc(k, sizeof *h->keys);
    h->p = calloc(k, sizeof *h->p);
    h->tips = calloc(k, sizeof *h->tips);
    h->latest = calloc(k, sizeof *h->latest);
    h->rec = calloc(k, sizeof *h->rec);
    h->runs = calloc(k, sizeof *h->runs);
    if (!h->shortsha || !h->keys || !h->p || !h->tips || !h->latest || !h->rec || !h->runs)
        return KG_ERR(KG_ENOMEM, "out of memory");
    return 0;
}

/* The lowerings of this chart, each at the first run of its class dated after it. */
static int hr_chart_notes(hr_chart *h, const hr_ctx *x, const kg_history_rec *key)
{
    for (size_t i = 0; i < x->nlow; i++) {
        const hr_lowering *l = &x->low[i];
        size_t s, at = h->c.nx; /* after every run on record */
        bool found = false;
        if (strcmp(l->case_id, key->case_id) || strcmp(l->metric, key->metric))
            continue;
        for (s = 0; s < h->c.ns && strcmp(h->series[s], l->device_class); s++)
            ;
        if (s == h->c.ns)
            continue;
        for (size_t j = 0; j < h->c.np && !found; j++) {
            if (h->p[j].series == s && strcmp(h->rec[j]->date, l->date) >= 0) {
                at = h->p[j].x;
                found = true;
            }
        }
        kg_trend_note *nn = realloc(h->notes, (h->c.nn + 1) * sizeof *nn);
        if (!nn)
            return KG_ERR(KG_ENOMEM, "out of memory");
        h->notes = nn;
        nn[h->c.nn++] = (kg_trend_note){ .x = at, .series = s, .text = l->text };
    }
    h->c.notes = h->notes;
    return 0;
}

/* Point k's slot on the x axis: the k-th run of a commit in its series takes the commit's k-th
 * slot, so repeated runs of one commit stand side by side ("unknown", "unknown #2", ...) and
 * the first runs of two device classes on one commit share a slot. */
static void hr_slot(hr_chart *h, size_t k, const kg_history_rec *r, size_t si)
{
    size_t occ = 1;
    for (size_t j = 0; j < k; j++)
        occ += h->p[j].series == si && strcmp(h->rec[j]->commit, r->commit) == 0;
    snprintf(h->keys[k], sizeof h->keys[k], "%.72s#%zu", r->commit, occ);
    if (occ == 1)
        snprintf(h->shortsha[k], sizeof h->shortsha[k], "%.8s", r->commit);
    else
        snprintf(h->shortsha[k], sizeof h->shortsha[k], "%.8s #%zu", r->commit, occ % 10000);
}

static int hr_chart_build(hr_chart *h, const hr_ctx *x, const kg_history_rec *key)
{
    int rc = 0;
    memset(h, 0, sizeof *h);
    KG_TRY(hr_chart_alloc(h, x->all.n));
    for (size_t i = 0; i < x->all.n; i++) {
        const kg_history_rec *r = &x->all.v[i];
        size_t xi = 0, si = 0, k = h->c.np;
        if (!hr_in_chart(r, key))
            continue;
        size_t nkeys = h->c.nx;
        KG_TRY(hr_intern(&h->series, &h->c.ns, r->device_class, &si));
        hr_slot(h, k, r, si);
        KG_TRY(hr_intern(&h->xkeys, &nkeys, h->keys[k], &xi));
        if (nkeys > h->c.nx) { /* a new slot: its label (two may share one) */
            const char **nl = realloc(h->xl, nkeys * sizeof *nl);
            if (!nl) {
                rc = KG_ERR(KG_ENOMEM, "out of memory");
                goto cleanup;
            }
            h->xl = nl;
            h->xl[h->c.nx++] = h->shortsha[k];
        }
        snprintf(h->tips[k], sizeof h->tips[k],
                 "%.12s %s: median %.4g us, CI [%.4g, %.4g], "
                 "n=%ld, mark %s%.4g, %s %s run %.40s, %s",
                 r->commit, r->device_class, r->median, r->ci_lo, r->ci_hi, r->samples,
                 r->mark < 0 ? "none " : "", r->mark < 0 ? 0.0 : r->mark, r->mode, r->decision,
                 r->run_id, r->date);
        h->p[k] = (kg_trend_point){ .x = xi,
                                    .series = si,
                                    .median = r->median,
                                    .lo = r->ci_lo,
                                    .hi = r->ci_hi,
                                    .mark = r->mark,
                                    .tip = h->tips[k],
                                    .regressed = strcmp(r->decision, KG_RV_DEC_REGRESSED) == 0 };
        h->latest[si] = r;
        h->rec[k] = r;
        h->runs[si]++;
        h->c.np++;
    }
    snprintf(h->title, sizeof h->title, "%s  %s", key->case_id, key->metric);
    h->c.title = h->title;
    h->c.xlabels = h->xl;
    h->c.series = h->series;
    h->c.p = h->p;
    KG_TRY(hr_chart_notes(h, x, key));
cleanup:
    return rc;
}

/* ---- the page ------------------------------------------------------------------------------- */

static void hr_page_head(kg_sbuf *b, const char *rev, size_t nrec, size_t ncharts)
{
    kg_sbuf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<meta name=\"viewport\" content=\"width=device-width\">"
                    "<title>kgate run history</title>\n<style>\n"
                    "body{font-family:'DejaVu Sans',Arial,sans-serif;margin:16px;color:#222}\n"
                    "h1{font-size:20px;margin:0 0 4px}h2{font-size:15px;margin:18px 0 6px;"
                    "overflow-wrap:anywhere}\n"
                    ".chart,.scroll{overflow-x:auto;max-width:100%}\n"
                    "@media (max-width:600px){body{margin:8px}}\n"
                    "table{border-collapse:collapse;font-size:12px;margin:6px 0 4px}\n"
                    "td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;"
                    "overflow-wrap:break-word;vertical-align:top}\n" /* no mid-word break */
                    "td.num{text-align:right;white-space:nowrap}\n"
                    "p.meta{color:#555;font-size:12px;margin:0 0 8px;overflow-wrap:anywhere}\n"
                    "</style></head><body>\n<h1>kgate run history</h1>\n<p class=\"meta\">");
    kg_sbuf_printf(b, "%zu record(s), %zu chart(s), from ", nrec, ncharts);
    kg_sbuf_xml(b, rev);
    kg_sbuf_puts(b, ". Dots: a run's median, whiskers: its CI, a red ring: decided REGRESSED; "
                    "line: the mark it was decided against (a step: a mark holds until it moves); "
                    "dashed: a lowering. A commit's repeated runs stand side by side (#2, #3)."
                    "</p>\n");
}

static void hr_page_table(kg_sbuf *b, const hr_chart *h)
{
    kg_sbuf_puts(b, "<div class=\"scroll\"><table><tr><th>device class</th><th>runs</th>"
                    "<th>latest median (us)</th>"
                    "<th>CI</th><th>mark</th><th>decision</th><th>commit</th><th>date</th></tr>\n");
    for (size_t s = 0; s < h->c.ns; s++) {
        const kg_history_rec *r = h->latest[s];
        kg_sbuf_printf(b, "<tr><td><span style=\"color:%s\">&#9632;</span> ", kg_trend_colour(s));
        kg_sbuf_xml(b, r->device_class);
        kg_sbuf_printf(b,
                       "</td><td class=\"num\">%zu</td><td class=\"num\">%.4g</td><td "
                       "class=\"num\">[%.4g, %.4g]</td><td class=\"num\">",
                       h->runs[s], r->median, r->ci_lo, r->ci_hi);
        if (r->mark >= 0)
            kg_sbuf_printf(b, "%.4g", r->mark);
        else
            kg_sbuf_puts(b, "none");
        kg_sbuf_puts(b, "</td><td>");
        kg_sbuf_xml(b, r->decision[0] ? r->decision : "-");
        kg_sbuf_puts(b, " (");
        kg_sbuf_xml(b, r->mode);
        kg_sbuf_printf(b, ")</td><td><code>%.12s</code></td><td>", r->commit);
        kg_sbuf_xml(b, r->date);
        kg_sbuf_puts(b, "</td></tr>\n");
    }
    kg_sbuf_puts(b, "</table></div>\n");
}

/* DIR/NNN-<case>-<metric>.svg */
static void hr_chart_file(char *buf, size_t n, const char *dir, size_t i, const hr_chart *h)
{
    char slug[120];
    size_t j = 0;
    for (const char *p = h->title; *p && j + 1 < sizeof slug; p++) {
        char c = *p;
        bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (keep || (j > 0 && slug[j - 1] != '-'))
            slug[j++] = keep ? c : '-';
    }
    slug[j] = '\0';
    snprintf(buf, n, "%s/%03zu-%s.svg", dir, i + 1, slug);
}

/* Charts drawn at most: each scans every selected record, and a page of more is no page. */
#define HR_MAX_CHARTS 200

/* Each chart: its SVG file, and the same SVG with a table in the page. */
static int hr_charts(hr_ctx *x, kg_sbuf *page, size_t *ncharts)
{
    int rc = 0;
    hr_chart h = { 0 };
    kg_sbuf svg = KG_SBUF_INIT;
    char path[4096];
    const kg_history_rec **seen = calloc(x->all.n ? x->all.n : 1, sizeof *seen);
    size_t nseen = 0;
    if (!seen)
        return KG_ERR(KG_ENOMEM, "out of memory");
    for (size_t i = 0; i < x->all.n; i++) {
        bool first = true; /* the first record of its (case, metric): one chart each */
        for (size_t j = 0; j < nseen && first; j++)
            first = !hr_in_chart(seen[j], &x->all.v[i]);
        if (!first)
            continue;
        if (*ncharts == HR_MAX_CHARTS) { /* a flooded history stays a page */
            fprintf(stderr,
                    "history: drew the first %d (case, metric) charts; the selection "
                    "holds more: narrow it with --case or --device\n",
                    HR_MAX_CHARTS);
            kg_sbuf_printf(page,
                           "<p class=\"meta\">The first %d charts; the selection holds "
                           "more: narrow it with --case or --device.</p>\n",
                           HR_MAX_CHARTS);
            break;
        }
        seen[nseen++] = &x->all.v[i];
        KG_TRY(hr_chart_build(&h, x, &x->all.v[i]));
        hr_chart_file(path, sizeof path, x->o->out_dir, *ncharts, &h);
        kg_trend_svg(&svg, &h.c, NULL);
        KG_TRY(kg_sbuf_write(&svg, path));
        kg_sbuf_puts(page, "<section><h2>");
        kg_sbuf_xml(page, h.title);
        kg_sbuf_puts(page, "</h2>\n<div class=\"chart\">");
        h.c.no_title = true; /* the heading says it */
        kg_trend_svg(page, &h.c, NULL);
        kg_sbuf_puts(page, "</div>\n");
        hr_page_table(page, &h);
        for (size_t k = 0; k < h.c.nn; k++) {
            kg_sbuf_puts(page, "<p class=\"meta\">Mark ");
            kg_sbuf_xml(page, h.series[h.c.notes[k].series]);
            kg_sbuf_puts(page, ": ");
            kg_sbuf_xml(page, h.c.notes[k].text);
            kg_sbuf_puts(page, "</p>\n");
        }
        kg_sbuf_puts(page, "<p class=\"meta\"><a href=\"");
        kg_sbuf_xml(page, strrchr(path, '/') + 1);
        kg_sbuf_puts(page, "\">SVG</a></p></section>\n");
        kg_sbuf_free(&svg);
        hr_chart_free(&h);
        (*ncharts)++;
    }
cleanup:
    free(seen);
    kg_sbuf_free(&svg);
    hr_chart_free(&h);
    return rc;
}

static int hr_out_dir(const char *dir)
{
    char probe[4200];
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return KG_ERR(KG_EINVAL, "--out %s: cannot create the directory: %s", dir, strerror(errno));
    snprintf(probe, sizeof probe, "%s/index.html", dir);
    return kg_path_check_writable(probe);
}

int kg_history_render(kg_history_render_result *res, const kg_history_render_opts *o)
{
    int rc = 0;
    kg_git *g = NULL;
    hr_ctx x = { .o = o };
    kg_history_recs in = { 0 };
    kg_sbuf page = KG_SBUF_INIT, body = KG_SBUF_INIT;
    char path[4200];
    const char *rev = o->branch ? o->branch : kg_env(KG_HISTORY_BRANCH_ENV);
    size_t ncharts = 0;
    memset(res, 0, sizeof *res);
    if (!rev)
        rev = KG_HISTORY_BRANCH_DEFAULT;
    KG_TRY(hr_out_dir(o->out_dir));
    KG_TRY(kg_git_open(&g, o->repo_dir ? o->repo_dir : "."));
    rc = kg_history_load(&in, g, rev);
    if (rc == KG_ENOTFOUND)
        rc = KG_ERR(KG_ENOTFOUND,
                    "history %s: no such branch or ref (no `kgate history append` "
                    "has run here; fetch it: `git fetch origin %s`)",
                    rev, rev);
    KG_TRY(rc);
    KG_TRY(hr_select(&x, &in));
    KG_TRY(hr_lowerings(&x, g));
    KG_TRY(hr_charts(&x, &body, &ncharts));
    hr_page_head(&page, rev, x.all.n, ncharts);
    if (ncharts == 0)
        kg_sbuf_puts(&page, "<p>No runs on record for this selection.</p>\n");
    kg_sbuf_puts(&page, body.p ? body.p : "");
    kg_sbuf_puts(&page, "</body></html>\n");
    if (body.err)
        page.err = true;
    snprintf(path, sizeof path, "%s/index.html", o->out_dir);
    KG_TRY(kg_sbuf_write(&page, path));
    res->records = x.all.n;
    res->charts = ncharts;
cleanup:
    kg_sbuf_free(&page);
    kg_sbuf_free(&body);
    kg_history_recs_free(&in);
    kg_history_recs_free(&x.all);
    free(x.low);
    kg_git_free(g);
    return rc;
}
