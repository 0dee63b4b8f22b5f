/* Two kgate reports compared (compare.h): the row views of both (view.c), sorted by
 * (gate, case) and merged; text, Markdown and JSON of what changed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "report/compare.h"

/* ---- building ------------------------------------------------------------------------------ */

static int cm_key_cmp(const kg_export_row *x, const kg_export_row *y)
{
    int c = strcmp(x->gate, y->gate);
    return c ? c : strcmp(x->case_id, y->case_id);
}

static int cm_ptr_cmp(const void *a, const void *b)
{
    return cm_key_cmp(*(const kg_export_row *const *)a, *(const kg_export_row *const *)b);
}

static double cm_num(const cJSON *f, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(f, key);
    return cJSON_IsNumber(x) && isfinite(x->valuedouble) ? x->valuedouble : NAN;
}

static const char *cm_str(const cJSON *o, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

/* The view's rows of one report as pointers in (gate, case) order; a key given twice is a bad
 * report. */
static int cm_sorted(const kg_export_row ***out, const kg_export_view *v, const char *name)
{
    const kg_export_row **p = calloc(v->n ? v->n : 1, sizeof *p);
    if (!p)
        return KG_ERR(KG_ENOMEM, "out of memory comparing %s", name);
    for (size_t i = 0; i < v->n; i++)
        p[i] = &v->rows[i];
    qsort(p, v->n, sizeof *p, cm_ptr_cmp);
    for (size_t i = 1; i < v->n; i++)
        if (cm_key_cmp(p[i - 1], p[i]) == 0) {
            size_t at = p[i]->order > p[i - 1]->order ? p[i]->order : p[i - 1]->order;
            int rc = KG_ERR(KG_EPARSE,
                            "%s: results[%zu]: gate '%s' case '%s' given twice (a "
                            "comparison matches results by gate and case)",
                            name, at, p[i]->gate, p[i]->case_id);
            free(p);
            return rc;
        }
    *out = p;
    return 0;
}

/* A figure changed when both sides measured it and the values differ: one that appears or
 * disappears (SKIP -> PASS: no median without a GPU) is the verdict's change, not a changed
 * median. */
static bool cm_num_differs(double a, double b) { return !isnan(a) && !isnan(b) && a != b; }

/* One side's figures into the row (s: 0 = A, 1 = B). */
static void cm_side(kg_cmp_row *r, int s, const kg_export_row *x)
{
    r->gate = x->gate;
    r->case_id = x->case_id;
    r->verdict[s] = kg_verdict_name(x->verdict);
    r->median[s] = cm_num(x->figures, KG_FIG_MEDIAN);
    double lo = cm_num(x->figures, KG_FIG_CI_LO), hi = cm_num(x->figures, KG_FIG_CI_HI);
    r->half[s] = isnan(lo) || isnan(hi) || hi < lo ? NAN : (hi - lo) / 2.0;
    r->max_abs[s] = cm_num(x->figures, KG_FIG_PARITY_MAX_ABS);
    r->rel_l2[s] = cm_num(x->figures, KG_FIG_PARITY_REL_L2);
}

/* A clock-normalised median (a capped row) is not comparable with a measured one,
 * nor with one of another normalisation (an older kgate's "clock-normalised", by the probe's
 * clock): when the sides' time_basis differ (absent: measured), each side that is not measured
 * has its measured times (raw_median_us; its half-width at least its placement-level one), or
 * none when it has none; a measured side keeps its figures. */
static void cm_basis(kg_cmp_row *r, const kg_export_row *a, const kg_export_row *b)
{
    const kg_export_row *x[2] = { a, b };
    const char *bs[2];
    for (int s = 0; s < 2; s++) {
        bs[s] = cJSON_GetStringValue(
            cJSON_GetObjectItemCaseSensitive(x[s]->figures, KG_FIG_TIME_BASIS));
        bs[s] = bs[s] ? bs[s] : KG_RV_TB_MEASURED;
    }
    if (strcmp(bs[0], bs[1]) == 0)
        return;
    r->raw_basis = true;
    for (int s = 0; s < 2; s++) {
        if (strcmp(bs[s], KG_RV_TB_MEASURED) == 0)
            continue;
        const cJSON *f = x[s]->figures;
        double m = cm_num(f, KG_FIG_RAW_MEDIAN), lo = cm_num(f, KG_FIG_RAW_CI_LO);
        double hi = cm_num(f, KG_FIG_RAW_CI_HI), ph = cm_num(f, KG_FIG_PLACEMENT_HALF);
        double half = isnan(lo) || isnan(hi) || hi < lo ? NAN : (hi - lo) / 2.0;
        if (!isnan(half) && !isnan(ph) && !isnan(m))
            half = fmax(half, ph * m);
        r->median[s] = m; /* NaN without measured times: no comparison */
        r->half[s] = half;
    }
}

/* What changed in a row, and its part of the summary. */
static void cm_judge(kg_cmp_row *r, kg_compare_sum *s)
{
    r->change_pct = NAN;
    r->beyond_noise = -1;
    if (r->in != KG_CMP_IN_BOTH) {
        r->changed = true;
        s->changed++;
        s->only_a += r->in == KG_CMP_IN_A;
        s->only_b += r->in == KG_CMP_IN_B;
        return;
    }
    s->matched++;
    r->verdict_changed = strcmp(r->verdict[0], r->verdict[1]) != 0;
    r->bench_changed = cm_num_differs(r->median[0], r->median[1]);
    r->parity_changed = cm_num_differs(r->max_abs[0], r->max_abs[1]) ||
                        cm_num_differs(r->rel_l2[0], r->rel_l2[1]);
    if (!isnan(r->median[0]) && !isnan(r->median[1])) {
        double d = r->median[1] - r->median[0];
        if (r->median[0] > 0)
            r->change_pct = d / r->median[0] * 100.0;
        if (!isnan(r->half[0]) && !isnan(r->half[1]))
            r->beyond_noise = fabs(d) > r->half[0] + r->half[1];
        if (r->beyond_noise == 1) {
            s->beyond_noise++;
            s->slower += d > 0;
            s->faster += d < 0;
        }
    }
    r->changed = r->verdict_changed || r->bench_changed || r->parity_changed;
    s->changed += r->changed;
    s->verdict += r->verdict_changed;
    s->bench += r->bench_changed;
    s->parity += r->parity_changed;
}

/* Merge the two sorted lists into c->rows, then the gates' spans. */
static int cm_merge(kg_compare *c, const kg_export_row **pa, size_t na, const kg_export_row **pb,
                    size_t nb)
{
    c->rows = calloc(na + nb ? na + nb : 1, sizeof *c->rows);
    c->gates = calloc(na + nb ? na + nb : 1, sizeof *c->gates);
    if (!c->rows || !c->gates)
        return KG_ERR(KG_ENOMEM, "out of memory comparing reports");
    size_t i = 0, j = 0;
    while (i < na || j < nb) {
        kg_cmp_row *r = &c->rows[c->n++];
        int k = i == na ? 1 : j == nb ? -1 : cm_key_cmp(pa[i], pb[j]);
        r->in = k < 0 ? KG_CMP_IN_A : k > 0 ? KG_CMP_IN_B : KG_CMP_IN_BOTH;
        for (int s = 0; s < 2; s++)
            r->median[s] = r->half[s] = r->max_abs[s] = r->rel_l2[s] = NAN;
        const kg_export_row *xa = k <= 0 ? pa[i] : NULL, *xb = k >= 0 ? pb[j] : NULL;
        if (xa)
            cm_side(r, 0, pa[i++]);
        if (xb)
            cm_side(r, 1, pb[j++]);
        if (xa && xb)
            cm_basis(r, xa, xb);
        cm_judge(r, &c->sum);
        kg_cmp_gate *g = c->n_gates ? &c->gates[c->n_gates - 1] : NULL;
        if (!g || strcmp(g->name, r->gate) != 0) {
            g = &c->gates[c->n_gates++];
            g->name = r->gate;
            g->first = c->n - 1;
        }
        g->n++;
        g->changed += r->changed;
    }
    return 0;
}

static const char *cm_or(const char *s, const char *dflt) { return s ? s : dflt; }

static void cm_warnings(kg_compare *c, bool any_bench)
{
    const char *d0 = cm_or(c->device_class[0], "(no device)");
    const char *d1 = cm_or(c->device_class[1], "(no device)");
    if (strcmp(d0, d1) != 0)
        snprintf(c->warning[c->n_warnings++], sizeof c->warning[0],
                 "device classes differ: A %s, B %s (times from different GPUs are not "
                 "comparable)",
                 d0, d1);
    const char *m0 = cm_or(c->bench_mode[0], "(none)"), *m1 = cm_or(c->bench_mode[1], "(none)");
    if (any_bench && strcmp(m0, m1) != 0)
        snprintf(c->warning[c->n_warnings++], sizeof c->warning[0],
                 "bench modes differ: A %s, B %s (warm and cold times are not comparable)", m0, m1);
}

static void cm_meta(kg_compare *c, int s, const kg_export_view *v, const cJSON *rep,
                    const char *name)
{
    c->file[s] = name;
    c->command[s] = v->command;
    c->mode[s] = v->mode;
    c->run_id[s] = v->run_id;
    c->device_class[s] = v->device_class;
    const cJSON *bench = cJSON_GetObjectItemCaseSensitive(rep, KG_RK_BENCH);
    c->bench_mode[s] = cm_str(cJSON_GetObjectItemCaseSensitive(bench, KG_RK_BENCH_SETTINGS),
                              KG_RK_BS_MODE);
}

int kg_compare_build(kg_compare *c, const cJSON *a, const char *a_name, const cJSON *b,
                     const char *b_name)
{
    int rc = 0;
    kg_export_view va = { 0 }, vb = { 0 };
    const kg_export_row **pa = NULL, **pb = NULL;
    memset(c, 0, sizeof *c);
    KG_TRY(kg_export_view_build(&va, a));
    KG_TRY(kg_export_view_build(&vb, b));
    KG_TRY(cm_sorted(&pa, &va, a_name));
    KG_TRY(cm_sorted(&pb, &vb, b_name));
    KG_TRY(cm_merge(c, pa, va.n, pb, vb.n));
    cm_meta(c, 0, &va, a, a_name);
    cm_meta(c, 1, &vb, b, b_name);
    bool any_bench = false;
    for (size_t i = 0; i < c->n; i++)
        any_bench |= c->rows[i].in == KG_CMP_IN_BOTH && !isnan(c->rows[i].median[0]) &&
                     !isnan(c->rows[i].median[1]);
    cm_warnings(c, any_bench);
cleanup:
    free(pb);
    free(pa);
    kg_export_view_free(&vb);
    kg_export_view_free(&va);
    if (rc < 0)
        kg_compare_free(c);
    return rc;
}

void kg_compare_free(kg_compare *c)
{
    free(c->rows);
    free(c->gates);
    c->rows = NULL;
    c->gates = NULL;
    c->n = c->n_gates = 0;
}

/* ---- the tables, text and Markdown --------------------------------------------------------- */

/* Report text on a terminal: control characters as '?', padded to width bytes. */
static void cm_put(kg_sbuf *b, const char *s, int width)
{
    int n = 0;
    for (const unsigned char *p = (const unsigned char *)cm_or(s, "-"); *p; p++, n++) {
        char ch = *p < 0x20 || *p == 0x7F ? '?' : (char)*p;
        kg_sbuf_printf(b, "%c", ch);
    }
    for (; n < width; n++)
        kg_sbuf_puts(b, " ");
}

/* Which figure columns a gate's table has: any changed row with the figure on either side. */
static void cm_columns(const kg_compare *c, const kg_cmp_gate *g, bool *bench, bool *parity,
                       int *case_w)
{
    *bench = *parity = false;
    *case_w = 4;
    for (size_t i = g->first; i < g->first + g->n; i++) {
        const kg_cmp_row *r = &c->rows[i];
        if (!r->changed)
            continue;
        for (int s = 0; s < 2; s++) {
            *bench |= !isnan(r->median[s]);
            *parity |= !isnan(r->max_abs[s]) || !isnan(r->rel_l2[s]);
        }
        int len = (int)strlen(r->case_id);
        *case_w = len > *case_w ? len : *case_w;
    }
}

static const char *cm_noise_word(const kg_cmp_row *r)
{
    return r->beyond_noise == 1 ? "beyond" : r->beyond_noise == 0 ? "within" : "-";
}

/* "only in A", "only in B", "verdict PASS -> FAIL" or "". */
static const char *cm_note(char *buf, size_t n, const kg_cmp_row *r)
{
    if (r->in == KG_CMP_IN_A)
        return "only in A";
    if (r->in == KG_CMP_IN_B)
        return "only in B";
    const char *basis = r->raw_basis ? "time bases differ: measured times" : "";
    if (!r->verdict_changed)
        return basis;
    snprintf(buf, n, "verdict %s -> %s%s%s", r->verdict[0], r->verdict[1], *basis ? "; " : "",
             basis);
    return buf;
}

/* One table format, curl's Curl_protocol style: what a gate's table of changed rows looks like
 * in it. cm_gate and cm_row print every format through one of these, so a column is added to
 * the text and the Markdown at once. */
struct cm_fmt {
    void (*title)(kg_sbuf *b, const char *gate);                   /* before "N cases, M changed" */
    void (*head)(kg_sbuf *b, bool bench, bool parity, int case_w); /* the column headers */
    void (*row_open)(kg_sbuf *b, const char *case_id, int case_w);
    void (*verdict)(kg_sbuf *b, const char *verdict);        /* NULL: "-" */
    void (*figure)(kg_sbuf *b, const char *cell, int width); /* width: the text's printf width */
    void (*row_close)(kg_sbuf *b, const char *note);
};

static void cm_text_title(kg_sbuf *b, const char *gate)
{
    kg_sbuf_puts(b, "\n");
    cm_put(b, gate, 0);
    kg_sbuf_puts(b, ": ");
}

static void cm_text_head(kg_sbuf *b, bool bench, bool parity, int case_w)
{
    kg_sbuf_puts(b, "  ");
    cm_put(b, "case", case_w + 2);
    kg_sbuf_puts(b, "A      B      ");
    if (bench)
        kg_sbuf_printf(b, "%12s %12s %9s %-7s ", "A us", "B us", "change", "noise");
    if (parity)
        kg_sbuf_printf(b, "%11s %11s %11s %11s ", "max_abs A", "max_abs B", "rel_l2 A", "rel_l2 B");
    kg_sbuf_puts(b, "\n");
}

static void cm_text_row_open(kg_sbuf *b, const char *case_id, int case_w)
{
    kg_sbuf_puts(b, "  ");
    cm_put(b, case_id, case_w + 2);
}

static void cm_text_verdict(kg_sbuf *b, const char *verdict) { cm_put(b, verdict, 7); }

static void cm_text_figure(kg_sbuf *b, const char *cell, int width)
{
    kg_sbuf_printf(b, "%*s ", width, cell);
}

static void cm_text_row_close(kg_sbuf *b, const char *note) { kg_sbuf_printf(b, "%s\n", note); }

static const struct cm_fmt cm_fmt_text = {
    .title = cm_text_title,
    .head = cm_text_head,
    .row_open = cm_text_row_open,
    .verdict = cm_text_verdict,
    .figure = cm_text_figure,
    .row_close = cm_text_row_close,
};

static void cm_md_title(kg_sbuf *b, const char *gate)
{
    kg_sbuf_puts(b, "\n### ");
    kg_sbuf_md(b, gate, 80);
    kg_sbuf_puts(b, "\n\n");
}

static void cm_md_head(kg_sbuf *b, bool bench, bool parity, int case_w)
{
    (void)case_w;
    kg_sbuf_puts(b, "\n| case | A | B |");
    if (bench)
        kg_sbuf_puts(b, " A µs | B µs | change | noise |");
    if (parity)
        kg_sbuf_puts(b, " max_abs A | max_abs B | rel_l2 A | rel_l2 B |");
    kg_sbuf_puts(b, " note |\n| --- | --- | --- |");
    if (bench)
        kg_sbuf_puts(b, " ---: | ---: | ---: | --- |");
    if (parity)
        kg_sbuf_puts(b, " ---: | ---: | ---: | ---: |");
    kg_sbuf_puts(b, " --- |\n");
}

static void cm_md_row_open(kg_sbuf *b, const char *case_id, int case_w)
{
    (void)case_w;
    kg_sbuf_puts(b, "| ");
    kg_sbuf_md_code(b, case_id, 120);
    kg_sbuf_puts(b, " |");
}

static void cm_md_verdict(kg_sbuf *b, const char *verdict)
{
    kg_sbuf_printf(b, " %s |", cm_or(verdict, "-"));
}

static void cm_md_figure(kg_sbuf *b, const char *cell, int width)
{
    (void)width;
    kg_sbuf_printf(b, " %s |", cell);
}

static void cm_md_row_close(kg_sbuf *b, const char *note) { kg_sbuf_printf(b, " %s |\n", note); }

static const struct cm_fmt cm_fmt_md = {
    .title = cm_md_title,
    .head = cm_md_head,
    .row_open = cm_md_row_open,
    .verdict = cm_md_verdict,
    .figure = cm_md_figure,
    .row_close = cm_md_row_close,
};

/* One changed row: case, verdicts A and B, the bench and parity figures its table has, note. */
static void cm_row(const struct cm_fmt *f, kg_sbuf *b, const kg_cmp_row *r, bool bench, bool parity,
                   int case_w)
{
    char x[32], note[96];
    f->row_open(b, r->case_id, case_w);
    f->verdict(b, r->verdict[0]);
    f->verdict(b, r->verdict[1]);
    if (bench) {
        f->figure(b, kg_fmt_num(x, sizeof x, r->median[0], "%.3f"), 12);
        f->figure(b, kg_fmt_num(x, sizeof x, r->median[1], "%.3f"), 12);
        f->figure(b, kg_fmt_num(x, sizeof x, r->change_pct, "%+.2f%%"), 9);
        f->figure(b, cm_noise_word(r), -7);
    }
    if (parity) {
        f->figure(b, kg_fmt_num(x, sizeof x, r->max_abs[0], "%.3g"), 11);
        f->figure(b, kg_fmt_num(x, sizeof x, r->max_abs[1], "%.3g"), 11);
        f->figure(b, kg_fmt_num(x, sizeof x, r->rel_l2[0], "%.3g"), 11);
        f->figure(b, kg_fmt_num(x, sizeof x, r->rel_l2[1], "%.3g"), 11);
    }
    f->row_close(b, cm_note(note, sizeof note, r));
}

/* A gate's title, its counts and, when any changed, the table of what did. */
static void cm_gate(const struct cm_fmt *f, const kg_compare *c, const kg_cmp_gate *g, kg_sbuf *b)
{
    bool bench, parity;
    int case_w;
    char n[64];
    f->title(b, g->name);
    kg_sbuf_printf(b, "%s, %zu changed\n", kg_fmt_count(n, sizeof n, (int)g->n, "case"),
                   g->changed);
    if (!g->changed)
        return;
    cm_columns(c, g, &bench, &parity, &case_w);
    f->head(b, bench, parity, case_w);
    for (size_t i = g->first; i < g->first + g->n; i++)
        if (c->rows[i].changed)
            cm_row(f, b, &c->rows[i], bench, parity, case_w);
}

void kg_compare_summary_line(const kg_compare *c, kg_sbuf *b)
{
    const kg_compare_sum *s = &c->sum;
    if (!s->changed) {
        kg_sbuf_printf(b, "compare: %zu matched, no changes", s->matched);
        return;
    }
    kg_sbuf_printf(b,
                   "compare: %zu matched, %zu changed: %zu verdict change%s, %zu bench "
                   "median%s changed (%zu beyond noise: %zu slower, %zu faster), %zu parity "
                   "change%s, %zu only in A, %zu only in B",
                   s->matched, s->changed, s->verdict, s->verdict == 1 ? "" : "s", s->bench,
                   s->bench == 1 ? "" : "s", s->beyond_noise, s->slower, s->faster, s->parity,
                   s->parity == 1 ? "" : "s", s->only_a, s->only_b);
}

static void cm_text_files(const kg_compare *c, kg_sbuf *b)
{
    for (int s = 0; s < 2; s++) {
        kg_sbuf_printf(b, "%s: ", s ? "B" : "A");
        cm_put(b, c->file[s], 0);
        kg_sbuf_puts(b, " (");
        cm_put(b, cm_or(c->command[s], "?"), 0);
        kg_sbuf_puts(b, ", ");
        cm_put(b, cm_or(c->mode[s], "?"), 0);
        kg_sbuf_puts(b, ", ");
        cm_put(b, cm_or(c->device_class[s], "no device"), 0);
        if (c->bench_mode[s]) {
            kg_sbuf_puts(b, ", bench ");
            cm_put(b, c->bench_mode[s], 0);
        }
        kg_sbuf_puts(b, ")\n");
    }
    for (size_t i = 0; i < c->n_warnings; i++) {
        kg_sbuf_puts(b, "warning: ");
        cm_put(b, c->warning[i], 0);
        kg_sbuf_puts(b, "\n");
    }
}

void kg_compare_text(const kg_compare *c, kg_sbuf *b)
{
    cm_text_files(c, b);
    for (size_t i = 0; i < c->n_gates; i++)
        cm_gate(&cm_fmt_text, c, &c->gates[i], b);
    kg_sbuf_puts(b, "\n");
    kg_compare_summary_line(c, b);
    kg_sbuf_puts(b, "\n");
}

/* ---- Markdown ------------------------------------------------------------------------------ */

int kg_compare_write_markdown(const kg_compare *c, const char *path)
{
    kg_sbuf b = KG_SBUF_INIT;
    kg_sbuf_puts(&b, "## kgate compare\n\n");
    for (int s = 0; s < 2; s++) {
        kg_sbuf_printf(&b, "- %s: ", s ? "B" : "A");
        kg_sbuf_md_code(&b, c->file[s], 200);
        kg_sbuf_puts(&b, " (");
        kg_sbuf_md(&b, cm_or(c->command[s], "?"), 40);
        kg_sbuf_puts(&b, ", ");
        kg_sbuf_md(&b, cm_or(c->device_class[s], "no device"), 80);
        kg_sbuf_puts(&b, ")\n");
    }
    for (size_t i = 0; i < c->n_warnings; i++) {
        kg_sbuf_puts(&b, "\n> ⚠️ ");
        kg_sbuf_md(&b, c->warning[i], 400);
        kg_sbuf_puts(&b, "\n");
    }
    for (size_t i = 0; i < c->n_gates; i++)
        cm_gate(&cm_fmt_md, c, &c->gates[i], &b);
    kg_sbuf_puts(&b, "\n**");
    kg_compare_summary_line(c, &b);
    kg_sbuf_puts(&b, "**\n");
    int rc = kg_sbuf_write(&b, path);
    kg_sbuf_free(&b);
    return rc;
}

/* ---- JSON ---------------------------------------------------------------------------------- */

static void cm_add_num(cJSON *o, const char *key, double v)
{
    if (isnan(v))
        cJSON_AddNullToObject(o, key);
    else
        cJSON_AddNumberToObject(o, key, v);
}

static void cm_add_str(cJSON *o, const char *key, const char *s)
{
    if (s)
        cJSON_AddStringToObject(o, key, s);
    else
        cJSON_AddNullToObject(o, key);
}

static cJSON *cm_json_side(const kg_compare *c, int s)
{
    cJSON *o = cJSON_CreateObject();
    cm_add_str(o, KG_CMP_FILE, c->file[s]);
    cm_add_str(o, KG_RK_COMMAND, c->command[s]);
    cm_add_str(o, KG_RK_MODE, c->mode[s]);
    cm_add_str(o, KG_RK_RUN_ID, c->run_id[s]);
    cm_add_str(o, KG_CMP_DEVICE_CLASS, c->device_class[s]);
    cm_add_str(o, KG_CMP_BENCH_MODE, c->bench_mode[s]);
    return o;
}

static cJSON *cm_json_summary(const kg_compare_sum *s)
{
    cJSON *o = cJSON_CreateObject();
    cm_add_num(o, KG_CMP_MATCHED, (double)s->matched);
    cm_add_num(o, KG_CMP_CHANGED, (double)s->changed);
    cm_add_num(o, KG_CMP_VERDICT_CHANGES, (double)s->verdict);
    cm_add_num(o, KG_CMP_BENCH_CHANGES, (double)s->bench);
    cm_add_num(o, KG_CMP_BEYOND_NOISE, (double)s->beyond_noise);
    cm_add_num(o, KG_CMP_SLOWER, (double)s->slower);
    cm_add_num(o, KG_CMP_FASTER, (double)s->faster);
    cm_add_num(o, KG_CMP_PARITY_CHANGES, (double)s->parity);
    cm_add_num(o, KG_CMP_ONLY_A, (double)s->only_a);
    cm_add_num(o, KG_CMP_ONLY_B, (double)s->only_b);
    return o;
}

static cJSON *cm_json_row(const kg_cmp_row *r)
{
    static const char *const in[] = { "both", "a", "b" };
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, KG_RES_CASE, r->case_id);
    cJSON_AddStringToObject(o, KG_CMP_IN, in[r->in]);
    cJSON_AddBoolToObject(o, KG_CMP_CHANGED, r->changed);
    cm_add_str(o, KG_CMP_VERDICT_A, r->verdict[0]);
    cm_add_str(o, KG_CMP_VERDICT_B, r->verdict[1]);
    if (!isnan(r->median[0]) || !isnan(r->median[1])) {
        cm_add_num(o, KG_CMP_MEDIAN_A, r->median[0]);
        cm_add_num(o, KG_CMP_MEDIAN_B, r->median[1]);
        cm_add_num(o, KG_CMP_HALF_A, r->half[0]);
        cm_add_num(o, KG_CMP_HALF_B, r->half[1]);
        cm_add_num(o, KG_CMP_CHANGE_PCT, r->change_pct);
        if (r->beyond_noise < 0)
            cJSON_AddNullToObject(o, KG_CMP_BEYOND_NOISE);
        else
            cJSON_AddBoolToObject(o, KG_CMP_BEYOND_NOISE, r->beyond_noise == 1);
    }
    if (!isnan(r->max_abs[0]) || !isnan(r->max_abs[1]) || !isnan(r->rel_l2[0]) ||
        !isnan(r->rel_l2[1])) {
        cm_add_num(o, KG_CMP_MAX_ABS_A, r->max_abs[0]);
        cm_add_num(o, KG_CMP_MAX_ABS_B, r->max_abs[1]);
        cm_add_num(o, KG_CMP_REL_L2_A, r->rel_l2[0]);
        cm_add_num(o, KG_CMP_REL_L2_B, r->rel_l2[1]);
    }
    return o;
}

static cJSON *cm_json(const kg_compare *c)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, KG_RK_SCHEMA, KG_CMP_SCHEMA_V);
    cJSON_AddItemToObject(root, KG_CMP_A, cm_json_side(c, 0));
    cJSON_AddItemToObject(root, KG_CMP_B, cm_json_side(c, 1));
    cJSON *w = cJSON_AddArrayToObject(root, KG_CMP_WARNINGS);
    for (size_t i = 0; i < c->n_warnings; i++)
        cJSON_AddItemToArray(w, cJSON_CreateString(c->warning[i]));
    cJSON_AddItemToObject(root, KG_CMP_SUMMARY, cm_json_summary(&c->sum));
    cJSON *gates = cJSON_AddArrayToObject(root, KG_CMP_GATES);
    for (size_t i = 0; i < c->n_gates; i++) {
        const kg_cmp_gate *g = &c->gates[i];
        cJSON *go = cJSON_CreateObject();
        cJSON_AddStringToObject(go, KG_RES_GATE, g->name);
        cm_add_num(go, KG_CMP_CASES, (double)g->n);
        cm_add_num(go, KG_CMP_CHANGED, (double)g->changed);
        cJSON *res = cJSON_AddArrayToObject(go, KG_CMP_RESULTS);
        for (size_t k = g->first; k < g->first + g->n; k++)
            cJSON_AddItemToArray(res, cm_json_row(&c->rows[k]));
        cJSON_AddItemToArray(gates, go);
    }
    return root;
}

int kg_compare_write_json(const kg_compare *c, const char *path)
{
    int rc = 0;
    cJSON *root = cm_json(c);
    char *text = root ? cJSON_Print(root) : NULL;
    kg_sbuf b = KG_SBUF_INIT;
    if (!text) {
        rc = KG_ERR(KG_ENOMEM, "out of memory formatting %s", path);
        goto cleanup;
    }
    kg_sbuf_puts(&b, text);
    kg_sbuf_puts(&b, "\n");
    KG_TRY(kg_sbuf_write(&b, path));
cleanup:
    kg_sbuf_free(&b);
    cJSON_free(text);
    cJSON_Delete(root);
    return rc;
}
