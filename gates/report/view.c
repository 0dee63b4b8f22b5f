/* The helpers the exporters share (report loading, the row view; the string buffer is core/sbuf.c); the command
 * `kgate report --from FILE` is runners/cli/report.c. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "report/export.h"

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
    cJSON_ArrayForEach(it, res) {
        static const char *req[] = { KG_RES_GATE, KG_RES_CASE, KG_RES_VERDICT };
        kg_verdict v;
        for (size_t k = 0; k < KG_ARRAY_LEN(req); k++)
            if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(it, req[k])))
                return KG_ERR(KG_EPARSE, "%s: results[%d].%s: expected a string", name, i, req[k]);
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
    case KG_VERDICT_XPASS: return 0; /* an unexpected pass fails the run */
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
    cJSON_ArrayForEach(it, res) {
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
    v->local_changes = cJSON_IsTrue(
        cJSON_GetObjectItemCaseSensitive(prov, KG_RK_PROV_LOCAL_CHANGES));
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

/* ---- the run's ceilings ------------------------------------------------------------------- */

/* %.4g keeps a forged 1e308 to a few characters */
static double pos_num(const cJSON *o, const char *key)
{
    double x = fig_num(o, key);
    return x > 0 ? x : NAN; /* a ceiling or clock of 0 or less was not measured */
}

void kg_export_ceilings_get(kg_export_ceilings *out, const cJSON *report)
{
    const cJSON *ce =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(report, KG_RK_BENCH),
                                         KG_RK_BENCH_CEILINGS);
    const cJSON *gemm = fig_obj(fig_obj(ce, KG_RK_CEIL_DETAIL), KG_RK_CEIL_GEMM);
    const cJSON *ps = fig_obj(gemm, KG_RK_CEIL_POWER_STATE);
    out->copy_gbps = pos_num(ce, KG_RK_CEIL_COPY_GBPS);
    out->gemm_tflops = pos_num(ce, KG_RK_CEIL_GEMM_TFLOPS);
    out->gemm_mhz = pos_num(ps, KG_FIG_POWER_SM_MEDIAN);
    out->max_mhz = pos_num(ps, KG_FIG_POWER_MAX_MHZ);
}

void kg_export_ceilings_text(kg_sbuf *b, const kg_export_ceilings *c)
{
    bool copy = !isnan(c->copy_gbps), gemm = !isnan(c->gemm_tflops);
    if (copy)
        kg_sbuf_printf(b, "copy %.4g GB/s (memory-bound cases)", c->copy_gbps);
    if (!gemm)
        return;
    kg_sbuf_printf(b, "%sbf16 cuBLAS GEMM %.4g TFLOP/s", copy ? "; " : "", c->gemm_tflops);
    if (!isnan(c->gemm_mhz) && !isnan(c->max_mhz))
        kg_sbuf_printf(b, " at %.4g of %.4g MHz", c->gemm_mhz, c->max_mhz);
    else if (!isnan(c->gemm_mhz))
        kg_sbuf_printf(b, " at %.4g MHz", c->gemm_mhz);
    kg_sbuf_puts(b, " (compute-bound cases: a kernel faster than cuBLAS, or at a higher clock, "
                    "passes 100%)");
}
