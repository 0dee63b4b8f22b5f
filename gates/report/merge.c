/* `kgate report --merge` (see merge.h): shard reports of one run into one report. Every rule
 * refuses naming the file and the rule; nothing here touches a GPU or the network. */
#include <stdlib.h>
#include <string.h>
#include "core/report_keys.h"
#include "report/merge.h"

static const cJSON *mg_get(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *mg_str(const cJSON *o, const char *k)
{
    return cJSON_GetStringValue(mg_get(o, k));
}

/* What shards of one run share: the rule's words, and the value of a report. */
static const char *const mg_fields[] = {
    "command",
    "mode",
    "seed",
    "commit under test (provenance.commit)",
    "GPU class (device.class)",
    "gates",
    "marks source (kind and commit)",
    "shard count N",
    "selection size",
    "selection hash",
    "assignment hash (the marks' weights)",
};

static char *mg_text(const cJSON *v) { return v ? cJSON_PrintUnformatted(v) : strdup("(absent)"); }

static char *mg_field(const cJSON *r, size_t f)
{
    const cJSON *sh = mg_get(r, KG_RK_SHARD), *d = mg_get(r, KG_RK_DEVICE);
    const cJSON *ms = mg_get(r, KG_RK_MARKS_SOURCE);
    char buf[256];
    switch (f) {
    case 0: return mg_text(mg_get(r, KG_RK_COMMAND));
    case 1: return mg_text(mg_get(r, KG_RK_MODE));
    case 2: return mg_text(mg_get(r, KG_RK_SEED));
    case 3: return mg_text(mg_get(mg_get(r, KG_RK_PROVENANCE), KG_RK_PROV_COMMIT));
    case 4: return mg_text(cJSON_IsObject(d) ? mg_get(d, KG_RK_DEVICE_CLASS) : d);
    case 5: return mg_text(mg_get(r, KG_RK_GATES));
    case 6: /* a file's path differs between runners' work trees; its kind and commit do not */
        snprintf(buf, sizeof buf, "%s %s", ms ? mg_str(ms, KG_RK_MS_KIND) : "(absent)",
                 mg_str(ms, KG_RK_MS_COMMIT) ? mg_str(ms, KG_RK_MS_COMMIT) : "");
        return strdup(buf);
    case 7: return mg_text(mg_get(sh, KG_RK_SHARD_COUNT));
    case 8: return mg_text(mg_get(sh, KG_RK_SHARD_SELECTION_N));
    case 9: return mg_text(mg_get(sh, KG_RK_SHARD_SELECTION_HASH));
    default: return mg_text(mg_get(sh, KG_RK_SHARD_ASSIGNMENT_HASH));
    }
}

/* One shard report on its own: a shard, complete, authentic. */
static int mg_check_one(const cJSON *r, const char *name, const char *key, int *index)
{
    const cJSON *sh = mg_get(r, KG_RK_SHARD);
    const cJSON *ix = mg_get(sh, KG_RK_SHARD_INDEX), *ct = mg_get(sh, KG_RK_SHARD_COUNT);
    const char *schema = mg_str(r, KG_RK_SCHEMA), *mode = mg_str(r, KG_RK_MODE);
    bool production = mode && strcmp(mode, KG_RV_MODE_PRODUCTION) == 0;
    if (!cJSON_IsObject(r) || !schema || strcmp(schema, KG_RV_SCHEMA) != 0)
        return KG_ERR(KG_EREFUSED, "%s: not a kgate report of schema " KG_RV_SCHEMA, name);
    if (cJSON_IsTrue(mg_get(sh, KG_RK_SHARD_MERGED)))
        return KG_ERR(KG_EREFUSED,
                      "%s: refused: already a merged report (merge the shard "
                      "reports themselves)",
                      name);
    if (!cJSON_IsNumber(ix) || !cJSON_IsNumber(ct) || ct->valuedouble < 1 ||
        ct->valuedouble > KG_SHARD_MAX || ix->valuedouble < 1 ||
        ix->valuedouble > ct->valuedouble || ix->valuedouble != (int)ix->valuedouble ||
        !cJSON_IsArray(mg_get(sh, KG_RK_SHARD_CASES)))
        return KG_ERR(KG_EREFUSED,
                      "%s: refused: not a shard report (field '" KG_RK_SHARD "' "
                      "with index, count and cases: run with --shard I/N)",
                      name);
    if (cJSON_IsTrue(mg_get(r, KG_RK_INCOMPLETE)))
        return KG_ERR(KG_EREFUSED,
                      "%s: refused: shard %d/%d is incomplete (interrupted): its "
                      "cases lack results; rerun that shard",
                      name, (int)ix->valuedouble, (int)ct->valuedouble);
    *index = (int)ix->valuedouble;
    if (key && (production || cJSON_HasObjectItem(r, KG_RK_SIGNATURE)))
        return kg_report_json_verify(r, key, name);
    if (!key && cJSON_HasObjectItem(r, KG_RK_SIGNATURE))
        printf("report --merge: %s: signature not verified (" KG_REPORT_KEY_ENV " is unset): the "
               "merged report is unsigned\n",
               name);
    return 0;
}

/* Every shard against the first given, then the indexes: each of 1..N exactly once. by[i-1]
 * is shard i's report and bn[i-1] its file. */
static int mg_check_all(const cJSON **by, const char **bn, const cJSON *const *in,
                        const char *const *names, size_t n, const char *key)
{
    int rc = 0, count = 0, index = 0;
    char *a = NULL, *b = NULL;
    for (size_t i = 0; i < n; i++) {
        KG_TRY(mg_check_one(in[i], names[i], key, &index));
        for (size_t f = 0; i > 0 && f < KG_ARRAY_LEN(mg_fields); f++) {
            a = mg_field(in[0], f);
            b = mg_field(in[i], f);
            if (!a || !b || strcmp(a, b) != 0) {
                rc = KG_ERR(KG_EREFUSED,
                            "%s: refused: mismatched shard: its %s (%.120s) differs "
                            "from %s's (%.120s); the shards of one run share seed, "
                            "commit, GPU class, selection and N",
                            names[i], mg_fields[f], b ? b : "?", names[0], a ? a : "?");
                goto cleanup;
            }
            free(a), free(b);
            a = b = NULL;
        }
        count = (int)mg_get(mg_get(in[i], KG_RK_SHARD), KG_RK_SHARD_COUNT)->valuedouble;
        if (by[index - 1]) {
            rc = KG_ERR(KG_EREFUSED, "%s: refused: overlapping shards: %s is shard %d/%d too",
                        names[i], bn[index - 1], index, count);
            goto cleanup;
        }
        by[index - 1] = in[i];
        bn[index - 1] = names[i];
    }
    for (int s = 0; s < count; s++)
        if (!by[s]) {
            rc = KG_ERR(KG_EREFUSED,
                        "report --merge: refused: missing shard %d/%d (given %zu of "
                        "%d shard reports)",
                        s + 1, count, n, count);
            goto cleanup;
        }
cleanup:
    free(a);
    free(b);
    return rc;
}

typedef struct {
    const char *id;
    int shard;
} mg_case;

static int mg_case_cmp(const void *x, const void *y)
{
    return strcmp(((const mg_case *)x)->id, ((const mg_case *)y)->id);
}

/* The shards' cases: disjoint, and together the selection (its hash and size). */
static int mg_cases(mg_case **out, size_t *n_out, const cJSON **by, const char **bn, int count)
{
    int rc = 0;
    size_t n = 0, at = 0;
    const cJSON *it, *sh = mg_get(by[0], KG_RK_SHARD);
    const char **ids = NULL;
    char hex[65];
    for (int s = 0; s < count; s++)
        n += (size_t)cJSON_GetArraySize(mg_get(mg_get(by[s], KG_RK_SHARD), KG_RK_SHARD_CASES));
    mg_case *c = calloc(n ? n : 1, sizeof *c);
    ids = calloc(n ? n : 1, sizeof *ids);
    if (!c || !ids) {
        rc = KG_ERR(KG_ENOMEM, "out of memory merging reports");
        goto cleanup;
    }
    for (int s = 0; s < count; s++)
        cJSON_ArrayForEach(it, mg_get(mg_get(by[s], KG_RK_SHARD), KG_RK_SHARD_CASES)) {
            if (!cJSON_IsString(it)) {
                rc = KG_ERR(KG_EREFUSED, "%s: shard.cases holds a non-string", bn[s]);
                goto cleanup;
            }
            c[at++] = (mg_case){ .id = it->valuestring, .shard = s + 1 };
        }
    qsort(c, n, sizeof *c, mg_case_cmp);
    for (size_t i = 0; i < n; i++) {
        ids[i] = c[i].id;
        if (i && strcmp(c[i].id, c[i - 1].id) == 0) {
            rc = KG_ERR(KG_EREFUSED,
                        "%s: refused: overlapping shards: case '%.200s' is in shard "
                        "%d (%s) too",
                        bn[c[i].shard - 1], c[i].id, c[i - 1].shard, bn[c[i - 1].shard - 1]);
            goto cleanup;
        }
    }
    KG_TRY(kg_shard_hash_ids(hex, ids, n));
    if (strcmp(hex, mg_str(sh, KG_RK_SHARD_SELECTION_HASH)) != 0 ||
        (double)n != mg_get(sh, KG_RK_SHARD_SELECTION_N)->valuedouble) {
        rc = KG_ERR(KG_EREFUSED,
                    "report --merge: refused: the shards' %zu cases are not the "
                    "selection they were cut from (%g cases, hash %.12s...): a shard "
                    "is missing cases or was cut from other marks",
                    n, mg_get(sh, KG_RK_SHARD_SELECTION_N)->valuedouble,
                    mg_str(sh, KG_RK_SHARD_SELECTION_HASH));
        goto cleanup;
    }
    *out = c;
    *n_out = n;
    c = NULL;
cleanup:
    free(c);
    free(ids);
    return rc;
}

/* How bad a verdict is, for the selftest rows that every shard ran. */
static int mg_severity(const cJSON *row)
{
    kg_verdict v = KG_VERDICT_PASS;
    if (kg_verdict_parse(mg_str(row, KG_RES_VERDICT), &v) < 0)
        return 5;
    return v == KG_VERDICT_FAIL    ? 4
           : v == KG_VERDICT_ERROR ? 3
           : v == KG_VERDICT_SKIP  ? 2
           : v == KG_VERDICT_WARN  ? 1
                                   : 0;
}

/* The selftest rows: once per case, the worst verdict of the shards (ties: the lowest). */
static int mg_selftest(cJSON *results, const cJSON **by, int count)
{
    const cJSON *it;
    for (int s = 0; s < count; s++)
        cJSON_ArrayForEach(it, mg_get(by[s], KG_RK_RESULTS)) {
            const char *g = mg_str(it, KG_RES_GATE), *cs = mg_str(it, KG_RES_CASE);
            cJSON *have = NULL, *row;
            if (!g || strcmp(g, KG_RV_GATE_SELFTEST) != 0 || !cs)
                continue;
            cJSON_ArrayForEach(row, results)
                if (strcmp(mg_str(row, KG_RES_CASE), cs) == 0)
                    have = row;
            if (have && mg_severity(it) <= mg_severity(have))
                continue;
            if (!(row = cJSON_Duplicate(it, 1)))
                return KG_ERR(KG_ENOMEM, "out of memory merging reports");
            if (have)
                cJSON_ReplaceItemViaPointer(results, have, row);
            else
                cJSON_AddItemToArray(results, row);
        }
    return 0;
}

/* The gates' rows: per gate (in the order they first appear), by shard; each row's case must
 * be one of its shard's. */
static int mg_rows(cJSON *results, const cJSON **by, const char **bn, int count,
                   const mg_case *cases, size_t n_cases)
{
    const char *gates[64];
    size_t ng = 0;
    const cJSON *it;
    for (int s = 0; s < count; s++)
        cJSON_ArrayForEach(it, mg_get(by[s], KG_RK_RESULTS)) {
            const char *g = mg_str(it, KG_RES_GATE), *cs = mg_str(it, KG_RES_CASE);
            size_t k = 0;
            if (!g || !cs)
                return KG_ERR(KG_EREFUSED, "%s: a result without its gate or case", bn[s]);
            if (strcmp(g, KG_RV_GATE_SELFTEST) == 0)
                continue;
            mg_case key = { .id = cs }, *c = bsearch(&key, cases, n_cases, sizeof key, mg_case_cmp);
            if (!c || c->shard != s + 1)
                return KG_ERR(KG_EREFUSED,
                              "%s: refused: a %s result for '%.200s', which is not "
                              "one of shard %d's cases",
                              bn[s], g, cs, s + 1);
            while (k < ng && strcmp(gates[k], g) != 0)
                k++;
            if (k == ng && ng == KG_ARRAY_LEN(gates))
                return KG_ERR(KG_EREFUSED, "%s: more than %zu gates", bn[s], ng);
            if (k == ng)
                gates[ng++] = g;
        }
    for (size_t k = 0; k < ng; k++)
        for (int s = 0; s < count; s++)
            cJSON_ArrayForEach(it, mg_get(by[s], KG_RK_RESULTS)) {
                cJSON *row;
                if (strcmp(mg_str(it, KG_RES_GATE), gates[k]) != 0)
                    continue;
                if (!(row = cJSON_Duplicate(it, 1)))
                    return KG_ERR(KG_ENOMEM, "out of memory merging reports");
                cJSON_AddItemToArray(results, row);
            }
    return 0;
}

/* shard: the merged selection and where each part ran. */
static cJSON *mg_shard(const cJSON **by, const char **bn, int count, const mg_case *c, size_t n)
{
    const cJSON *sh = mg_get(by[0], KG_RK_SHARD);
    cJSON *o = cJSON_CreateObject(), *cases = cJSON_CreateArray(), *parts = cJSON_CreateArray();
    cJSON_AddNumberToObject(o, KG_RK_SHARD_COUNT, count);
    cJSON_AddNumberToObject(o, KG_RK_SHARD_SELECTION_N, (double)n);
    cJSON_AddStringToObject(o, KG_RK_SHARD_SELECTION_HASH, mg_str(sh, KG_RK_SHARD_SELECTION_HASH));
    cJSON_AddStringToObject(o, KG_RK_SHARD_ASSIGNMENT_HASH,
                            mg_str(sh, KG_RK_SHARD_ASSIGNMENT_HASH));
    cJSON_AddStringToObject(o, KG_RK_SHARD_BALANCE, mg_str(sh, KG_RK_SHARD_BALANCE));
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(cases, cJSON_CreateString(c[i].id));
    cJSON_AddItemToObject(o, KG_RK_SHARD_CASES, cases);
    cJSON_AddTrueToObject(o, KG_RK_SHARD_MERGED);
    for (int s = 0; s < count; s++) {
        cJSON *p = cJSON_CreateObject();
        const cJSON *prov = mg_get(by[s], KG_RK_PROVENANCE), *d = mg_get(by[s], KG_RK_DEVICE);
        const char *uuid = mg_str(d, KG_RK_DEVICE_UUID),
                   *runner = mg_str(prov, KG_RK_PROV_RUNNER_NAME)
                                 ? mg_str(prov, KG_RK_PROV_RUNNER_NAME)
                                 : mg_str(prov, KG_RK_PROV_CI_RUNNER_DESCRIPTION);
        cJSON_AddNumberToObject(p, KG_RK_SHARD_INDEX, s + 1);
        cJSON_AddStringToObject(p, KG_RK_SHARD_PART_REPORT, bn[s]); /* as given */
        cJSON_AddStringToObject(p, KG_RK_SHARD_PART_RUN_ID,
                                mg_str(by[s], KG_RK_RUN_ID) ? mg_str(by[s], KG_RK_RUN_ID) : "");
        cJSON_AddStringToObject(p, KG_RK_SHARD_PART_STARTED_AT,
                                mg_str(by[s], KG_RK_STARTED_AT) ? mg_str(by[s], KG_RK_STARTED_AT)
                                                                : "");
        cJSON_AddItemToObject(p, KG_RK_SHARD_PART_DEVICE_UUID,
                              uuid ? cJSON_CreateString(uuid) : cJSON_CreateNull());
        const cJSON *serial = mg_get(d, KG_RK_DEVICE_SERIAL);
        cJSON_AddItemToObject(p, KG_RK_SHARD_PART_DEVICE_SERIAL,
                              cJSON_IsString(serial) ? cJSON_CreateString(serial->valuestring)
                                                     : cJSON_CreateNull());
        if (runner)
            cJSON_AddStringToObject(p, KG_RK_SHARD_PART_RUNNER, runner);
        cJSON_AddItemToObject(p, KG_RK_SHARD_CASES,
                              cJSON_Duplicate(mg_get(mg_get(by[s], KG_RK_SHARD), KG_RK_SHARD_CASES),
                                              1));
        cJSON_AddItemToArray(parts, p);
    }
    cJSON_AddItemToObject(o, KG_RK_SHARD_PARTS, parts);
    return o;
}

/* The merged run's identity: the earliest start, and a run id derived from the parts'. */
static int mg_identity(cJSON *root, const cJSON **by, int count)
{
    int rc = 0;
    const char **ids = calloc(count > 0 ? (size_t)count : 1, sizeof *ids), *first = NULL;
    char hex[65], rid[40];
    if (!ids)
        return KG_ERR(KG_ENOMEM, "out of memory merging reports");
    for (int s = 0; s < count; s++) {
        const char *at = mg_str(by[s], KG_RK_STARTED_AT);
        ids[s] = mg_str(by[s], KG_RK_RUN_ID) ? mg_str(by[s], KG_RK_RUN_ID) : "";
        if (at && (!first || strcmp(at, first) < 0))
            first = at;
    }
    KG_TRY(kg_shard_hash_ids(hex, ids, (size_t)count));
    snprintf(rid, sizeof rid, "merged-%.24s", hex);
    cJSON_ReplaceItemInObjectCaseSensitive(root, KG_RK_RUN_ID, cJSON_CreateString(rid));
    if (first)
        cJSON_ReplaceItemInObjectCaseSensitive(root, KG_RK_STARTED_AT, cJSON_CreateString(first));
cleanup:
    free(ids);
    return rc;
}

/* The summary from the merged rows, as kg_report_write writes it. */
static void mg_summary(cJSON *root, int counts[KG_VERDICT_N])
{
    const cJSON *it;
    cJSON *s = cJSON_CreateObject();
    memset(counts, 0, KG_VERDICT_N * sizeof counts[0]);
    cJSON_ArrayForEach(it, mg_get(root, KG_RK_RESULTS)) {
        kg_verdict v = KG_VERDICT_PASS;
        if (kg_verdict_parse_full(mg_str(it, KG_RES_VERDICT), &v) == 0)
            counts[v]++;
    }
    for (int i = 0; i < KG_VERDICT_N; i++)
        if (i < KG_VERDICT_N5 || counts[i])
            cJSON_AddNumberToObject(s, kg_verdict_name((kg_verdict)i), counts[i]);
    cJSON_DeleteItemFromObjectCaseSensitive(root, KG_RK_SUMMARY);
    cJSON_AddItemToObject(root, KG_RK_SUMMARY, s);
}

int kg_report_merge(cJSON **out, const cJSON *const *in, const char *const *names, size_t n,
                    const char *key, int counts[KG_VERDICT_N])
{
    int rc = 0, count;
    const cJSON **by = calloc(KG_SHARD_MAX, sizeof *by);
    const char **bn = calloc(KG_SHARD_MAX, sizeof *bn);
    mg_case *cases = NULL;
    size_t n_cases = 0;
    cJSON *root = NULL, *results = cJSON_CreateArray();
    *out = NULL;
    if (!by || !bn || !results) {
        rc = KG_ERR(KG_ENOMEM, "out of memory merging reports");
        goto cleanup;
    }
    KG_TRY(mg_check_all(by, bn, in, names, n, key));
    count = (int)mg_get(mg_get(by[0], KG_RK_SHARD), KG_RK_SHARD_COUNT)->valuedouble;
    KG_TRY(mg_cases(&cases, &n_cases, by, bn, count));
    KG_TRY(mg_selftest(results, by, count));
    KG_TRY(mg_rows(results, by, bn, count, cases, n_cases));
    if (!(root = cJSON_Duplicate(by[0], 1))) {
        rc = KG_ERR(KG_ENOMEM, "out of memory merging reports");
        goto cleanup;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(root, KG_RK_SIGNATURE);
    cJSON_DeleteItemFromObjectCaseSensitive(root, KG_RK_MARKS_UPDATE); /* no shard commits */
    cJSON_ReplaceItemInObjectCaseSensitive(root, KG_RK_RESULTS, results);
    results = NULL;
    cJSON_ReplaceItemInObjectCaseSensitive(root, KG_RK_SHARD,
                                           mg_shard(by, bn, count, cases, n_cases));
    KG_TRY(mg_identity(root, by, count));
    mg_summary(root, counts);
    const char *mode = mg_str(root, KG_RK_MODE);
    if (key && mode && strcmp(mode, KG_RV_MODE_PRODUCTION) == 0)
        KG_TRY(kg_report_json_sign(root, key));
    *out = root;
    root = NULL;
cleanup:
    cJSON_Delete(results);
    cJSON_Delete(root);
    free(cases);
    free(by);
    free(bn);
    return rc;
}
