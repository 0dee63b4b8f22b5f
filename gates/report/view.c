/* The helpers the exporters share (string buffer, report loading, the row view); the command
 * `kgate report --from FILE` is runners/cli/report.c. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "report/export.h"

/* ---- string buffer ---------------------------------------------------------------------- */

static bool sbuf_reserve(kg_sbuf *b, size_t extra)
{
    if (b->err)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->err = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

static void sbuf_putn(kg_sbuf *b, const char *s, size_t n)
{
    if (!sbuf_reserve(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void kg_sbuf_puts(kg_sbuf *b, const char *s) { sbuf_putn(b, s ? s : "", strlen(s ? s : "")); }

void kg_sbuf_printf(kg_sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !sbuf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void kg_sbuf_xml(kg_sbuf *b, const char *s)
{
    for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c; c++) {
        switch (*c) {
        case '&': kg_sbuf_puts(b, "&amp;"); break;
        case '<': kg_sbuf_puts(b, "&lt;"); break;
        case '>': kg_sbuf_puts(b, "&gt;"); break;
        case '"': kg_sbuf_puts(b, "&quot;"); break;
        case '\'': kg_sbuf_puts(b, "&#39;"); break;
        case '\n': kg_sbuf_puts(b, "&#10;"); break;
        case '\t': kg_sbuf_puts(b, "&#9;"); break;
        case '\r': break;
        default:
            if (*c < 0x20)
                sbuf_putn(b, "?", 1); /* not allowed anywhere in XML 1.0 */
            else
                sbuf_putn(b, (const char *)c, 1);
        }
    }
}

void kg_sbuf_md(kg_sbuf *b, const char *s, size_t max)
{
    size_t n = 0;
    for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c; c++, n++) {
        if (n >= max && (*c & 0xC0) != 0x80) { /* never cut inside a UTF-8 sequence */
            kg_sbuf_puts(b, "...");
            break;
        }
        if (*c == '|')
            kg_sbuf_puts(b, "\\|");
        else if (*c == '<')
            kg_sbuf_puts(b, "&lt;"); /* GitHub renders inline HTML: keep text as text */
        else if (*c == '>')
            kg_sbuf_puts(b, "&gt;");
        else if (*c == '&')
            kg_sbuf_puts(b, "&amp;");
        else if (*c < 0x20)
            sbuf_putn(b, " ", 1);
        else
            sbuf_putn(b, (const char *)c, 1);
    }
}

void kg_sbuf_free(kg_sbuf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
    b->err = false;
}

int kg_sbuf_write(kg_sbuf *b, const char *path)
{
    if (b->err)
        return KG_ERR(KG_ENOMEM, "out of memory formatting %s", path);
    if (strcmp(path, "-") == 0) {
        if (b->len && fwrite(b->p, 1, b->len, stdout) != b->len)
            return KG_ERR(KG_EIO, "cannot write to standard output");
        fflush(stdout);
        return 0;
    }
    return kg_file_write_atomic(path, b->p ? b->p : "", b->len);
}

const char *kg_fmt_num(char *buf, size_t n, double v, const char *fmt)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, fmt, v);
    return buf;
}

/* ---- report loading ----------------------------------------------------------------------- */

static int check_report(const cJSON *r, const char *name)
{
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(r, "schema");
    if (!cJSON_IsObject(r))
        return KG_ERR(KG_EPARSE, "%s: not a JSON object", name);
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, "kgate-report/1") != 0)
        return KG_ERR(KG_EPARSE, "%s: field 'schema': expected \"kgate-report/1\"", name);
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(r, "results");
    if (!cJSON_IsArray(res))
        return KG_ERR(KG_EPARSE, "%s: field 'results': expected an array", name);
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, res)
    {
        static const char *req[] = { "gate", "case", "verdict" };
        kg_verdict v;
        for (size_t k = 0; k < KG_ARRAY_LEN(req); k++)
            if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(it, req[k])))
                return KG_ERR(KG_EPARSE, "%s: results[%d].%s: expected a string", name, i,
                              req[k]);
        const char *vs = cJSON_GetObjectItemCaseSensitive(it, "verdict")->valuestring;
        if (kg_verdict_parse(vs, &v) < 0)
            return KG_ERR(KG_EPARSE, "%s: results[%d].verdict: unknown verdict '%s'", name, i,
                          vs);
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(it, "figures");
        if (f && !cJSON_IsObject(f) && !cJSON_IsNull(f))
            return KG_ERR(KG_EPARSE, "%s: results[%d].figures: expected an object", name, i);
        i++;
    }
    return 0;
}

int kg_report_load(cJSON **out, const char *path)
{
    int rc = 0;
    char *text = NULL;
    size_t len = 0;
    cJSON *r = NULL;
    *out = NULL;
    KG_TRY(kg_file_read(&text, &len, path));
    const char *end = NULL;
    r = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!r) {
        size_t at = end ? (size_t)(end - text) : 0;
        rc = KG_ERR(KG_EPARSE, "%s: malformed JSON near byte %zu", path, at);
        goto cleanup;
    }
    KG_TRY(check_report(r, path));
    *out = r;
    r = NULL;
cleanup:
    cJSON_Delete(r);
    free(text);
    return rc;
}

/* ---- the row view ------------------------------------------------------------------------- */

/* Gates name their figures; accept the few spellings in use so every command's report works. */
static double fig_num(const cJSON *f, const char *const *keys)
{
    for (; *keys; keys++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(f, *keys);
        if (cJSON_IsNumber(x) && isfinite(x->valuedouble))
            return x->valuedouble;
    }
    return NAN;
}

static const cJSON *fig_obj(const cJSON *f, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(f, key);
    return cJSON_IsObject(x) ? x : NULL;
}

static void row_figures(kg_export_row *r)
{
    static const char *const k_time[] = { "median_us", "time_us", "run_median_us", "median",
                                          NULL };
    static const char *const k_mark[] = { "mark_us", "mark_median_us", "mark_value", "mark",
                                          NULL };
    static const char *const k_change[] = { "change_pct", "delta_pct", NULL };
    static const char *const k_delta_rel[] = { "delta_rel", NULL }; /* bench: > 0 is worse */
    static const char *const k_band_pct[] = { "band_pct", "tolerance_pct", NULL };
    static const char *const k_band_rel[] = { "tolerance_rel", "band_rel", "band", NULL };
    static const char *const k_ceil[] = { "pct_of_ceiling", "ceiling_pct", "pct_ceiling",
                                          "percent_of_ceiling", NULL };
    static const char *const k_secs[] = { "elapsed_s", "wall_s", "seconds", NULL };
    static const char *const k_ms[] = { "elapsed_ms", "wall_ms", NULL };
    const cJSON *f = r->figures;
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(f, "decision");
    r->decision = cJSON_IsString(d) ? d->valuestring : NULL;
    r->time_us = fig_num(f, k_time);
    r->mark_us = fig_num(f, k_mark);
    const cJSON *mk = fig_obj(f, "mark"); /* a nested mark object: {"value": .., "band_rel": ..} */
    if (mk && isnan(r->mark_us)) {
        static const char *const k_v[] = { "value", "median_us", NULL };
        r->mark_us = fig_num(mk, k_v);
    }
    r->change_pct = fig_num(f, k_change);
    if (isnan(r->change_pct))
        r->change_pct = fig_num(f, k_delta_rel) * 100.0;
    if (isnan(r->change_pct) && r->mark_us > 0 && !isnan(r->time_us))
        r->change_pct = (r->time_us - r->mark_us) / r->mark_us * 100.0;
    r->band_pct = fig_num(f, k_band_pct);
    if (isnan(r->band_pct)) {
        double rel = fig_num(f, k_band_rel);
        if (isnan(rel) && mk)
            rel = fig_num(mk, k_band_rel);
        r->band_pct = rel * 100.0;
    }
    r->ceiling_pct = fig_num(f, k_ceil);
    if (isnan(r->ceiling_pct)) {
        /* bench: the ceiling that bounds the case (roofline), else whichever was measured */
        static const char *const k_copy[] = { "pct_copy_ceiling", NULL };
        static const char *const k_gemm[] = { "pct_gemm_ceiling", NULL };
        const cJSON *bound = cJSON_GetObjectItemCaseSensitive(f, "bound");
        bool compute = cJSON_IsString(bound) && strcmp(bound->valuestring, "compute") == 0;
        double copy = fig_num(f, k_copy), gemm = fig_num(f, k_gemm);
        r->ceiling_pct = compute ? (isnan(gemm) ? copy : gemm) : (isnan(copy) ? gemm : copy);
    }
    r->seconds = fig_num(f, k_secs);
    if (isnan(r->seconds))
        r->seconds = fig_num(f, k_ms) / 1000.0;
    if (isnan(r->seconds) || r->seconds < 0)
        r->seconds = 0;
}

static int row_severity(const kg_export_row *r)
{
    bool regressed = r->decision && strcmp(r->decision, "REGRESSED") == 0;
    switch (r->verdict) {
    case KG_VERDICT_FAIL: return 0;
    case KG_VERDICT_ERROR: return 1;
    case KG_VERDICT_WARN: return regressed ? 0 : 2;
    case KG_VERDICT_SKIP: return 3;
    default: return regressed ? 0 : 5;
    }
}

typedef struct {
    const char *case_id;
    int severity;
} case_sev;

static const case_sev *g_sev; /* qsort has no context argument in C11 */
static size_t g_nsev;

static int case_severity(const char *id)
{
    for (size_t i = 0; i < g_nsev; i++)
        if (strcmp(g_sev[i].case_id, id) == 0)
            return g_sev[i].severity;
    return 5;
}

static int row_cmp(const void *a, const void *b)
{
    const kg_export_row *x = a, *y = b;
    int sx = case_severity(x->case_id), sy = case_severity(y->case_id);
    if (sx != sy)
        return sx - sy;
    int c = strcmp(x->case_id, y->case_id);
    if (c)
        return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

static const char *str_at(const cJSON *o, const char *k)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

int kg_export_view_build(kg_export_view *v, const cJSON *report)
{
    int rc = 0;
    case_sev *sev = NULL;
    size_t nsev = 0;
    memset(v, 0, sizeof *v);
    KG_TRY(check_report(report, "report"));
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(report, "results");
    size_t n = (size_t)cJSON_GetArraySize(res);
    v->rows = calloc(n ? n : 1, sizeof *v->rows);
    sev = calloc(n ? n : 1, sizeof *sev);
    if (!v->rows || !sev) {
        rc = KG_ERR(KG_ENOMEM, "out of memory reading the report");
        goto cleanup;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, res)
    {
        kg_export_row *r = &v->rows[v->n];
        r->gate = str_at(it, "gate");
        r->case_id = str_at(it, "case");
        r->message = str_at(it, "message");
        if (!r->message)
            r->message = "";
        kg_verdict_parse(str_at(it, "verdict"), &r->verdict); /* checked above */
        r->figures = cJSON_GetObjectItemCaseSensitive(it, "figures");
        row_figures(r);
        r->severity = row_severity(r);
        r->order = v->n++;
        v->counts[r->verdict]++;
        size_t k = 0;
        while (k < nsev && strcmp(sev[k].case_id, r->case_id) != 0)
            k++;
        if (k == nsev)
            sev[nsev++] = (case_sev){ r->case_id, r->severity };
        else if (r->severity < sev[k].severity)
            sev[k].severity = r->severity;
    }
    g_sev = sev;
    g_nsev = nsev;
    qsort(v->rows, v->n, sizeof *v->rows, row_cmp);
    g_sev = NULL;
    g_nsev = 0;

    const cJSON *cert = cJSON_GetObjectItemCaseSensitive(report, "certifying");
    v->mode = str_at(report, "mode");
    /* Anything not explicitly a certifying production run is shown as diagnostic. */
    v->diagnostic = !cJSON_IsTrue(cert) || !v->mode || strcmp(v->mode, "production") != 0;
    v->command = str_at(report, "command");
    v->run_id = str_at(report, "run_id");
    v->started_at = str_at(report, "started_at");
    const cJSON *prov = cJSON_GetObjectItemCaseSensitive(report, "provenance");
    v->commit = str_at(prov, "commit");
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(report, "device");
    v->device_name = str_at(dev, "name");
    v->device_class = str_at(dev, "class");
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(report, "seed");
    v->seed = cJSON_IsNumber(seed) ? seed->valuedouble : NAN;
cleanup:
    free(sev);
    if (rc < 0)
        kg_export_view_free(v);
    return rc;
}

void kg_export_view_free(kg_export_view *v)
{
    free(v->rows);
    v->rows = NULL;
    v->n = 0;
}
