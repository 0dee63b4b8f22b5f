/* The JSON report every command writes: context (tool, device, seed, mode, provenance) and one
 * result per (gate, case). Diagnostic reports are stamped non-certifying at the top level. */
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "core/kg_core.h"
#include "core/report_keys.h"

struct kg_report {
    cJSON *root;
    cJSON *results;
};

static const char *verdict_names[KG_VERDICT_N] = { KG_RV_VERDICT_PASS,  KG_RV_VERDICT_WARN,
                                                   KG_RV_VERDICT_FAIL,  KG_RV_VERDICT_SKIP,
                                                   KG_RV_VERDICT_ERROR, KG_RV_VERDICT_XFAIL,
                                                   KG_RV_VERDICT_XPASS };

const char *kg_verdict_name(kg_verdict v)
{
    return ((unsigned)v < KG_ARRAY_LEN(verdict_names)) ? verdict_names[v] : "?";
}

int kg_verdict_parse_full(const char *s, kg_verdict *out)
{
    for (size_t i = 0; s && i < KG_ARRAY_LEN(verdict_names); i++)
        if (strcmp(s, verdict_names[i]) == 0) {
            *out = (kg_verdict)i;
            return 0;
        }
    return KG_ERR(KG_EPARSE, "unknown verdict '%s'", s ? s : "(null)");
}

kg_verdict kg_verdict_counted(kg_verdict v)
{
    return v == KG_VERDICT_XFAIL ? KG_VERDICT_PASS : v == KG_VERDICT_XPASS ? KG_VERDICT_FAIL : v;
}

int kg_verdict_parse(const char *s, kg_verdict *out)
{
    int rc = kg_verdict_parse_full(s, out);
    if (rc == 0)
        *out = kg_verdict_counted(*out);
    return rc;
}

static void add_provenance(cJSON *root)
{
    /* CI systems name the commit and run; locally KGATE_COMMIT may be set by the caller. */
    static const char *keys[] = { KG_RK_PROV_ENV_KEYS };
    cJSON *p = cJSON_AddObjectToObject(root, KG_RK_PROVENANCE);
    const char *commit = NULL;
    for (size_t i = 0; p && i < KG_ARRAY_LEN(keys); i++) {
        const char *v = getenv(keys[i]);
        if (v && *v) {
            cJSON_AddStringToObject(p, keys[i], v);
            if (!commit && (strcmp(keys[i], KG_RK_PROV_KGATE_COMMIT) == 0 ||
                            strcmp(keys[i], KG_RK_PROV_GITHUB_SHA) == 0 ||
                            strcmp(keys[i], KG_RK_PROV_CI_COMMIT_SHA) == 0))
                commit = v;
        }
    }
    if (p)
        cJSON_AddStringToObject(p, KG_RK_PROV_COMMIT, commit ? commit : "unknown");
#ifdef KG_BUILD_TYPE
    if (p && !getenv(KG_RK_PROV_KGATE_BUILD_TYPE))
        cJSON_AddStringToObject(p, KG_RK_PROV_BUILD_TYPE, KG_BUILD_TYPE);
#endif
}

int kg_report_new(kg_report **out, const char *command, bool diagnostic)
{
    int rc = 0;
    char buf[64];
    kg_report *r = calloc(1, sizeof *r);
    *out = NULL;
    if (!r || !(r->root = cJSON_CreateObject())) {
        rc = KG_ERR(KG_ENOMEM, "out of memory creating a report");
        goto cleanup;
    }
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    cJSON_AddStringToObject(r->root, KG_RK_SCHEMA, KG_RV_SCHEMA);
    cJSON *tool = cJSON_AddObjectToObject(r->root, KG_RK_TOOL);
    cJSON_AddStringToObject(tool, KG_RK_TOOL_NAME, "kgate");
    cJSON_AddStringToObject(tool, KG_RK_TOOL_VERSION, KG_VERSION_STRING);
    cJSON_AddStringToObject(tool, KG_RK_TOOL_BUILD, kg_build_id());
    cJSON_AddStringToObject(r->root, KG_RK_COMMAND, command);
    cJSON_AddStringToObject(r->root, KG_RK_MODE,
                            diagnostic ? KG_RV_MODE_DIAGNOSTIC : KG_RV_MODE_PRODUCTION);
    cJSON_AddBoolToObject(r->root, KG_RK_CERTIFYING, !diagnostic);
    if (diagnostic)
        cJSON_AddStringToObject(r->root, KG_RK_NOTICE,
                                "DIAGNOSTIC RUN: NON-CERTIFYING. These results never advance "
                                "high-water marks and certify nothing.");
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    cJSON_AddStringToObject(r->root, KG_RK_STARTED_AT, buf);
    snprintf(buf, sizeof buf, "%lld-%ld-%llx", (long long)now, (long)getpid(),
             (unsigned long long)kg_seed_fresh() & 0xffffffULL);
    cJSON_AddStringToObject(r->root, KG_RK_RUN_ID, buf);
    add_provenance(r->root);
    r->results = cJSON_AddArrayToObject(r->root, KG_RK_RESULTS);
    if (!tool || !r->results) {
        rc = KG_ERR(KG_ENOMEM, "out of memory creating a report");
        goto cleanup;
    }
    *out = r;
    r = NULL;
cleanup:
    kg_report_free(r);
    return rc;
}

void kg_report_free(kg_report *r)
{
    if (!r)
        return;
    cJSON_Delete(r->root);
    free(r);
}

void kg_report_set_seed(kg_report *r, uint64_t seed)
{
    char text[24];
    cJSON_DeleteItemFromObject(r->root, KG_RK_SEED);
    /* A double holds integers exactly only up to 2^53: above, the exact digits as a string. */
    if (seed <= (1ULL << 53)) {
        cJSON_AddNumberToObject(r->root, KG_RK_SEED, (double)seed);
    } else {
        snprintf(text, sizeof text, "%llu", (unsigned long long)seed);
        cJSON_AddStringToObject(r->root, KG_RK_SEED, text);
    }
}

void kg_report_set_device(kg_report *r, const kg_device_info *dev)
{
    kg_report_set_extra(r, KG_RK_DEVICE, kg_device_to_json(dev));
}

void kg_report_set_no_device(kg_report *r, const char *why)
{
    kg_report_set_extra(r, KG_RK_DEVICE, cJSON_CreateNull());
    kg_report_set_extra(r, KG_RK_NO_DEVICE, cJSON_CreateString(why));
}

static kg_report_extra_fn rep_forward;

void kg_report_forward_extras(kg_report_extra_fn fn) { rep_forward = fn; }

void kg_report_set_extra(kg_report *r, const char *key, cJSON *value)
{
    if (!value)
        return;
    if (rep_forward)
        rep_forward(key, value);
    if (cJSON_HasObjectItem(r->root, key))
        cJSON_ReplaceItemInObject(r->root, key, value);
    else
        cJSON_AddItemToObject(r->root, key, value);
}

cJSON *kg_report_json(kg_report *r) { return r->root; }

const char *kg_report_run_id(const kg_report *r)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r->root, KG_RK_RUN_ID));
}

const char *kg_report_started_at(const kg_report *r)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r->root, KG_RK_STARTED_AT));
}

const char *kg_report_commit(const kg_report *r)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(r->root, KG_RK_PROVENANCE);
    const char *c = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, KG_RK_PROV_COMMIT));
    return c ? c : "unknown";
}

void kg_report_set_commit(kg_report *r, const char *commit)
{
    cJSON *p = cJSON_GetObjectItemCaseSensitive(r->root, KG_RK_PROVENANCE);
    if (p && commit)
        cJSON_ReplaceItemInObjectCaseSensitive(p, KG_RK_PROV_COMMIT, cJSON_CreateString(commit));
}

void kg_report_set_local_changes(kg_report *r)
{
    cJSON *p = cJSON_GetObjectItemCaseSensitive(r->root, KG_RK_PROVENANCE);
    if (p && !cJSON_GetObjectItemCaseSensitive(p, KG_RK_PROV_LOCAL_CHANGES))
        cJSON_AddTrueToObject(p, KG_RK_PROV_LOCAL_CHANGES);
}

int kg_report_add(kg_report *r, const char *gate, const char *case_id, kg_verdict v,
                  const char *message, cJSON *figures)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) {
        cJSON_Delete(figures);
        return KG_ERR(KG_ENOMEM, "out of memory adding a result");
    }
    cJSON_AddStringToObject(o, KG_RES_GATE, gate);
    cJSON_AddStringToObject(o, KG_RES_CASE, case_id);
    cJSON_AddStringToObject(o, KG_RES_VERDICT, kg_verdict_name(v));
    cJSON_AddStringToObject(o, KG_RES_MESSAGE, message ? message : "");
    cJSON_AddItemToObject(o, KG_RES_FIGURES, figures ? figures : cJSON_CreateObject());
    cJSON_AddItemToArray(r->results, o);
    return 0;
}

double kg_report_round_s(double s) { return s > 0 ? floor(s * 1e4 + 0.5) / 1e4 : 0; }

const char *const kg_report_phase_keys[KG_PHASE_N] = {
    [KG_PHASE_SETUP] = KG_RK_PHASE_SETUP,         [KG_PHASE_PREPARE] = KG_RK_PHASE_PREPARE,
    [KG_PHASE_REFERENCE] = KG_RK_PHASE_REFERENCE, [KG_PHASE_WORK] = KG_RK_PHASE_WORK,
    [KG_PHASE_TEARDOWN] = KG_RK_PHASE_TEARDOWN,
};

cJSON *kg_report_phase_json(const double s[KG_PHASE_N])
{
    cJSON *o = cJSON_CreateObject();
    double sum = 0;
    for (int k = 0; k < KG_PHASE_N; k++)
        sum += s[k];
    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, KG_RK_PHASE_WALL, kg_report_round_s(sum));
    for (int k = 0; k < KG_PHASE_N; k++)
        cJSON_AddNumberToObject(o, kg_report_phase_keys[k], kg_report_round_s(s[k]));
    return o;
}

void kg_report_row_timing(kg_report *r, const double s[KG_PHASE_N])
{
    cJSON *row = cJSON_GetArrayItem(r->results, cJSON_GetArraySize(r->results) - 1);
    cJSON *t = kg_report_phase_json(s);
    if (row && t)
        cJSON_AddItemToObject(row, KG_RES_TIMING, t);
    else
        cJSON_Delete(t);
}

void kg_report_row_device(kg_report *r, int ordinal)
{
    cJSON *row = cJSON_GetArrayItem(r->results, cJSON_GetArraySize(r->results) - 1);
    if (row)
        cJSON_AddNumberToObject(row, KG_RES_DEVICE, ordinal);
}

void kg_report_counts_full(const kg_report *r, int counts[KG_VERDICT_N])
{
    memset(counts, 0, KG_VERDICT_N * sizeof counts[0]);
    const cJSON *it;
    cJSON_ArrayForEach(it, r->results) {
        kg_verdict v = KG_VERDICT_PASS;
        const cJSON *vs = cJSON_GetObjectItemCaseSensitive(it, KG_RES_VERDICT);
        if (cJSON_IsString(vs) && kg_verdict_parse_full(vs->valuestring, &v) == 0)
            counts[v]++;
    }
}

int kg_report_sign(kg_report *r, const char *key) { return kg_report_json_sign(r->root, key); }

void kg_report_counts(const kg_report *r, int counts[KG_VERDICT_N5])
{
    int full[KG_VERDICT_N];
    kg_report_counts_full(r, full);
    memset(counts, 0, KG_VERDICT_N5 * sizeof counts[0]);
    for (int v = 0; v < KG_VERDICT_N; v++)
        counts[kg_verdict_counted((kg_verdict)v)] += full[v];
}

int kg_report_write(kg_report *r, const char *path)
{
    int rc = 0;
    int c[KG_VERDICT_N];
    kg_report_counts_full(r, c);
    cJSON *s = cJSON_CreateObject();
    if (!s)
        return KG_ERR(KG_ENOMEM, "out of memory writing the report");
    /* The five always; XFAIL and XPASS only when a case declares an expected failure, so a
     * reader of the five keys never sees a total that does not add up. */
    for (int i = 0; i < KG_VERDICT_N; i++)
        if (i < KG_VERDICT_N5 || c[i])
            cJSON_AddNumberToObject(s, kg_verdict_name((kg_verdict)i), c[i]);
    kg_report_set_extra(r, KG_RK_SUMMARY, s);
    /* A production report is signed last, over everything it says (KGATE_REPORT_KEY). */
    const char *key = kg_report_key();
    const cJSON *mode = cJSON_GetObjectItemCaseSensitive(r->root, KG_RK_MODE);
    if (key && cJSON_IsString(mode) && strcmp(mode->valuestring, KG_RV_MODE_PRODUCTION) == 0)
        KG_TRY(kg_report_sign(r, key));
    char *text = cJSON_Print(r->root);
    if (!text)
        return KG_ERR(KG_ENOMEM, "out of memory writing the report");
    size_t len = strlen(text);
    text[len] = '\n'; /* cJSON's terminator becomes the final newline */
    rc = kg_file_write_atomic(path, text, len + 1);
    cJSON_free(text);
cleanup:
    return rc;
}
