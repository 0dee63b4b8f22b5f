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

/* One UTF-8 character at s: its code point and length; an invalid sequence (bad lead or
 * continuation, overlong, surrogate, above U+10FFFF) is U+FFFD of length 1. */
static size_t utf8_next(const unsigned char *s, unsigned *cp)
{
    unsigned c = s[0], n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3
                                       : (c >> 3) == 30 ? 4 : 0;
    unsigned v = n == 1 ? c : n == 2 ? c & 31 : n == 3 ? c & 15 : c & 7;
    for (unsigned k = 1; k < n; k++) {
        if ((s[k] & 0xC0) != 0x80) {
            n = 0;
            break;
        }
        v = (v << 6) | (s[k] & 63);
    }
    static const unsigned min[] = { 0, 0, 0x80, 0x800, 0x10000 };
    if (n == 0 || v < min[n] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
        *cp = 0xFFFD;
        return 1;
    }
    *cp = v;
    return n;
}

void kg_sbuf_xml(kg_sbuf *b, const char *s)
{
    const unsigned char *c = (const unsigned char *)(s ? s : "");
    while (*c) {
        unsigned cp;
        size_t n = utf8_next(c, &cp);
        switch (cp) {
        case '&': kg_sbuf_puts(b, "&amp;"); break;
        case '<': kg_sbuf_puts(b, "&lt;"); break;
        case '>': kg_sbuf_puts(b, "&gt;"); break;
        case '"': kg_sbuf_puts(b, "&quot;"); break;
        case '\'': kg_sbuf_puts(b, "&#39;"); break;
        case '\n': kg_sbuf_puts(b, "&#10;"); break;
        case '\t': kg_sbuf_puts(b, "&#9;"); break;
        case '\r': break;
        default:
            /* Not allowed anywhere in XML 1.0: C0 controls, U+FFFE, U+FFFF; invalid UTF-8
             * arrives here as U+FFFD. DEL and C1 are allowed but never wanted: replaced too. */
            if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F))
                sbuf_putn(b, "?", 1);
            else if (cp == 0xFFFE || cp == 0xFFFF || cp == 0xFFFD)
                kg_sbuf_puts(b, "\xEF\xBF\xBD");
            else
                sbuf_putn(b, (const char *)c, n);
        }
        c += n;
    }
}

/* Markdown text: table pipes, inline HTML, and the characters of emphasis, links, images and
 * code are escaped, so a field is shown as text; an @mention is broken (U+200B after the @) and
 * bidi controls are dropped. In a code span (`code`) backslashes are literal: a backtick
 * becomes U+02CB there. */
static void md_put(kg_sbuf *b, const char *s, size_t max, bool code)
{
    size_t n = 0;
    const unsigned char *c = (const unsigned char *)(s ? s : "");
    while (*c) {
        unsigned cp;
        size_t len = utf8_next(c, &cp);
        if (n >= max) {
            kg_sbuf_puts(b, "...");
            break;
        }
        if (cp == '|')
            kg_sbuf_puts(b, "\\|");
        else if (cp == '<')
            kg_sbuf_puts(b, "&lt;"); /* GitHub renders inline HTML: keep text as text */
        else if (cp == '>')
            kg_sbuf_puts(b, "&gt;");
        else if (cp == '&')
            kg_sbuf_puts(b, "&amp;");
        else if (cp == '`')
            kg_sbuf_puts(b, code ? "\xCB\x8B" : "\\`");
        else if (!code && cp < 128 && strchr("\\*[]~", (int)cp))
            kg_sbuf_printf(b, "\\%c", (int)cp);
        else if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F))
            sbuf_putn(b, " ", 1);
        else if ((cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) ||
                 cp == 0x200E || cp == 0x200F || cp == 0x061C)
            ; /* bidi controls: text that reads other than it is (dropped) */
        else if (cp == '@' && !code)
            kg_sbuf_puts(b, "@\xE2\x80\x8B"); /* + U+200B: a case's text mentions no one */
        else if (cp == 0xFFFD || cp == 0xFFFE || cp == 0xFFFF)
            kg_sbuf_puts(b, "\xEF\xBF\xBD");
        else
            sbuf_putn(b, (const char *)c, len);
        c += len;
        n += len;
    }
}

void kg_sbuf_md(kg_sbuf *b, const char *s, size_t max) { md_put(b, s, max, false); }

void kg_sbuf_md_code(kg_sbuf *b, const char *s, size_t max)
{
    kg_sbuf_puts(b, "`");
    md_put(b, s, max, true);
    kg_sbuf_puts(b, "`");
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

const char *kg_fmt_count(char *buf, size_t n, int count, const char *noun)
{
    size_t len = strlen(noun);
    bool es = len && (noun[len - 1] == 's' || noun[len - 1] == 'x');
    snprintf(buf, n, "%d %s%s", count, noun, count == 1 ? "" : es ? "es" : "s");
    return buf;
}

/* ---- report loading ----------------------------------------------------------------------- */

static int check_report(const cJSON *r, const char *name)
{
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(r, KG_RK_SCHEMA);
    if (!cJSON_IsObject(r))
        return KG_ERR(KG_EPARSE, "%s: not a JSON object", name);
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, KG_RV_SCHEMA) != 0)
        return KG_ERR(KG_EPARSE, "%s: field '" KG_RK_SCHEMA "': expected \"" KG_RV_SCHEMA "\"",
                      name);
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(r, KG_RK_RESULTS);
    if (!cJSON_IsArray(res))
        return KG_ERR(KG_EPARSE, "%s: field '" KG_RK_RESULTS "': expected an array", name);
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, res)
    {
        static const char *req[] = { KG_RES_GATE, KG_RES_CASE, KG_RES_VERDICT };
        kg_verdict v;
        for (size_t k = 0; k < KG_ARRAY_LEN(req); k++)
            if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(it, req[k])))
                return KG_ERR(KG_EPARSE, "%s: results[%d].%s: expected a string", name, i,
                              req[k]);
        const char *vs = cJSON_GetObjectItemCaseSensitive(it, KG_RES_VERDICT)->valuestring;
        if (kg_verdict_parse(vs, &v) < 0)
            return KG_ERR(KG_EPARSE, "%s: results[%d]." KG_RES_VERDICT ": unknown verdict '%s'",
                          name, i, vs);
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(it, KG_RES_FIGURES);
        if (f && !cJSON_IsObject(f) && !cJSON_IsNull(f))
            return KG_ERR(KG_EPARSE, "%s: results[%d]." KG_RES_FIGURES ": expected an object", name,
                          i);
        i++;
    }
    return 0;
}

int kg_report_load(cJSON **out, const char *path)
{
    int rc = 0;
    cJSON *r = NULL;
    *out = NULL;
    /* The strict loader: bounded size, no duplicate key, nothing after the value. */
    KG_TRY(kg_json_load(&r, path));
    KG_TRY(check_report(r, path));
    *out = r;
    r = NULL;
cleanup:
    cJSON_Delete(r);
    return rc;
}

/* ---- the row view ------------------------------------------------------------------------- */

static const char *str_at(const cJSON *o, const char *k)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

/* A figure under its one declared key (core/report_keys.h); NAN when absent or not finite. */
static double fig_num(const cJSON *f, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(f, key);
    return cJSON_IsNumber(x) && isfinite(x->valuedouble) ? x->valuedouble : NAN;
}

static const cJSON *fig_obj(const cJSON *f, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(f, key);
    return cJSON_IsObject(x) ? x : NULL;
}

/* The bench figures the outputs show; of the other gates only ab writes one (its decision). */
static void row_figures(kg_export_row *r)
{
    const cJSON *f = r->figures;
    bool ab = strcmp(r->gate, KG_RV_GATE_AB) == 0;
    r->decision = str_at(f, ab ? KG_FIG_AB_DECISION : KG_FIG_DECISION);
    r->time_us = fig_num(f, KG_FIG_MEDIAN);
    r->mark_us = fig_num(fig_obj(f, KG_FIG_MARK), KG_FIG_MARK_VALUE);
    r->change_pct = fig_num(f, KG_FIG_DELTA) * 100.0; /* written with a mark; > 0 is worse */
    /* The band the change had to clear; a case without a mark shows the run's own band. */
    double band = fig_num(f, KG_FIG_TOLERANCE);
    r->band_pct = (isnan(band) ? fig_num(f, KG_FIG_BAND) : band) * 100.0;
    /* The ceiling that bounds the case (roofline), else whichever was measured. */
    const char *bound = str_at(f, KG_FIG_BOUND);
    bool compute = bound && strcmp(bound, KG_RV_BOUND_COMPUTE) == 0;
    double copy = fig_num(f, KG_FIG_PCT_COPY_CEILING), gemm = fig_num(f, KG_FIG_PCT_GEMM_CEILING);
    r->ceiling_pct = compute ? (isnan(gemm) ? copy : gemm) : (isnan(copy) ? gemm : copy);
    r->seconds = fig_num(f, KG_FIG_ELAPSED);
    if (!isfinite(r->seconds) || r->seconds < 0 || r->seconds > 1e9) /* never time="inf" */
        r->seconds = 0;
    /* A faulted case (any gate): its worker died, hung or lost the CUDA context. */
    const cJSON *fault = fig_obj(f, KG_FIG_FAULT);
    r->fault_class = fault ? str_at(fault, KG_FIG_FAULT_CLASS) : NULL;
    if (fault && !r->fault_class)
        r->fault_class = "?";
    const cJSON *tail = cJSON_GetObjectItemCaseSensitive(fault, KG_FIG_FAULT_OUTPUT);
    r->fault_tail = cJSON_IsArray(tail) ? tail : NULL;
}

static int row_severity(const kg_export_row *r)
{
    bool regressed = r->decision && strcmp(r->decision, KG_RV_DEC_REGRESSED) == 0;
    switch (r->verdict) {
    case KG_VERDICT_FAIL: return 0;
    case KG_VERDICT_XPASS: return 0;   /* an unexpected pass fails the run */
    case KG_VERDICT_ERROR: return 1;
    case KG_VERDICT_WARN: return regressed ? 0 : 2;
    case KG_VERDICT_XFAIL: return regressed ? 0 : 2; /* passes, with a note (the known failure) */
    case KG_VERDICT_SKIP: return 3;
    default: return regressed ? 0 : 5;
    }
}

static int row_cmp(const void *a, const void *b)
{
    const kg_export_row *x = a, *y = b;
    if (x->case_severity != y->case_severity)
        return x->case_severity - y->case_severity;
    int c = strcmp(x->case_id, y->case_id);
    if (c)
        return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* The worst severity of each case, in linear time (a hash of the case ids over the rows). */
static int case_severities(kg_export_row *rows, size_t n)
{
    size_t ns = 16;
    while (ns < 2 * n)
        ns *= 2;
    size_t *slot = calloc(ns, sizeof *slot); /* row index + 1 of the case's first row */
    if (!slot)
        return KG_ERR(KG_ENOMEM, "out of memory reading the report");
    for (int pass = 0; pass < 2; pass++)
        for (size_t k = 0; k < n; k++) {
            size_t h = 1469598103934665603ULL;
            for (const char *p = rows[k].case_id; *p; p++)
                h = (h ^ (unsigned char)*p) * 1099511628211ULL;
            size_t i = h & (ns - 1);
            while (slot[i] && strcmp(rows[slot[i] - 1].case_id, rows[k].case_id) != 0)
                i = (i + 1) & (ns - 1);
            if (!slot[i]) {
                slot[i] = k + 1;
                rows[k].case_severity = rows[k].severity;
            }
            kg_export_row *first = &rows[slot[i] - 1];
            if (pass == 0 && rows[k].severity < first->case_severity)
                first->case_severity = rows[k].severity;
            if (pass == 1)
                rows[k].case_severity = first->case_severity;
        }
    free(slot);
    return 0;
}

int kg_export_view_build(kg_export_view *v, const cJSON *report)
{
    int rc = 0;
    memset(v, 0, sizeof *v);
    KG_TRY(check_report(report, "report"));
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(report, KG_RK_RESULTS);
    size_t n = (size_t)cJSON_GetArraySize(res);
    v->rows = calloc(n ? n : 1, sizeof *v->rows);
    if (!v->rows) {
        rc = KG_ERR(KG_ENOMEM, "out of memory reading the report");
        goto cleanup;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, res)
    {
        kg_export_row *r = &v->rows[v->n];
        r->gate = str_at(it, KG_RES_GATE);
        r->case_id = str_at(it, KG_RES_CASE);
        r->message = str_at(it, KG_RES_MESSAGE);
        if (!r->message)
            r->message = "";
        /* The exact verdict (XFAIL, XPASS as written; the name was checked above). */
        KG_TRY(kg_verdict_parse_full(str_at(it, KG_RES_VERDICT), &r->verdict));
        r->figures = cJSON_GetObjectItemCaseSensitive(it, KG_RES_FIGURES);
        row_figures(r);
        r->severity = row_severity(r);
        r->order = v->n++;
        v->counts[r->verdict]++;
        v->faults += r->fault_class != NULL;
    }
    KG_TRY(case_severities(v->rows, v->n));
    qsort(v->rows, v->n, sizeof *v->rows, row_cmp);

    const cJSON *cert = cJSON_GetObjectItemCaseSensitive(report, KG_RK_CERTIFYING);
    v->mode = str_at(report, KG_RK_MODE);
    /* Anything not explicitly a certifying production run is shown as diagnostic. */
    v->diagnostic = !cJSON_IsTrue(cert) || !v->mode || strcmp(v->mode, KG_RV_MODE_PRODUCTION) != 0;
    v->command = str_at(report, KG_RK_COMMAND);
    v->run_id = str_at(report, KG_RK_RUN_ID);
    v->started_at = str_at(report, KG_RK_STARTED_AT);
    const cJSON *prov = cJSON_GetObjectItemCaseSensitive(report, KG_RK_PROVENANCE);
    v->commit = str_at(prov, KG_RK_PROV_COMMIT);
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(report, KG_RK_DEVICE);
    v->device_name = str_at(dev, KG_RK_DEVICE_NAME);
    v->device_class = str_at(dev, KG_RK_DEVICE_CLASS);
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(report, KG_RK_SEED);
    v->seed = cJSON_IsNumber(seed) ? seed->valuedouble : NAN;
    v->incomplete = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(report, KG_RK_INCOMPLETE));
    v->no_device = str_at(report, KG_RK_NO_DEVICE);
    v->no_gpu = v->no_device && v->counts[KG_VERDICT_SKIP] > 0;
cleanup:
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
