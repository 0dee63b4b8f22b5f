/* The selftest's certificate. A selftest proves that the gates catch their
 * planted defects on this GPU, this driver and this kgate build. A passing one in `kgate run`
 * leaves a certificate in the runner's cache; `run --diagnostic --reuse-selftest` takes it
 * instead of a fresh selftest while nothing it proved for has changed: the same kgate build
 * (kg_build_id: the gates' sources and toolchain, not the runner's own kernels, which the
 * selftest never runs), the same catalogue (a hash of the defect runner), driver and GPU
 * (UUID), within its maximum age. A production run always runs the selftest fresh. The
 * certificate certifies nothing by itself: a diagnostic run certifies nothing either. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "cli.h"
#include "core/report_keys.h"

#define SC_SCHEMA "kgate-selftest-certificate/1"
#define SC_CREATED_UNIX "created_unix" /* the file's own key: epoch seconds */

/* The kernel module's version ("580.159.04": the first token of /proc/driver/nvidia/version's
 * first line that is digits and dots), else the CUDA driver API's ("cuda 13.0"). */
static void sc_driver(char *buf, size_t n, const kg_device_info *dev)
{
    char line[512];
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    bool found = false;
    if (f && fgets(line, sizeof line, f))
        for (char *t = strtok(line, " \t\n"); t && !found; t = strtok(NULL, " \t\n"))
            if (t[0] >= '0' && t[0] <= '9' && strchr(t, '.') &&
                strspn(t, "0123456789.") == strlen(t)) {
                snprintf(buf, n, "%.60s", t);
                found = true;
            }
    if (!found)
        snprintf(buf, n, "cuda %d.%d", dev->driver_version / 1000,
                 (dev->driver_version % 1000) / 10);
    if (f)
        fclose(f);
}

/* The runner's cache directory (kg_cache_dir); one file per GPU. */
static int sc_path(char *buf, size_t n, const char *uuid)
{
    char dir[PATH_MAX], name[80], why[256];
    size_t j = 0;
    int rc = kg_cache_dir(dir, sizeof dir);
    if (rc < 0) { /* the message names the variable; copied, KG_ERR rewrites its buffer */
        snprintf(why, sizeof why, "%s", kg_error_last());
        return KG_ERR(rc, "selftest certificate: %s", why);
    }
    for (const char *p = uuid; *p && j + 1 < sizeof name; p++) /* a file name, whatever it is */
        name[j++] = (char)((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
                                   (*p >= 'A' && *p <= 'Z') || *p == '-'
                               ? *p
                               : '_');
    name[j] = '\0';
    if ((size_t)snprintf(buf, n, "%s/selftest-%s.json", dir, name[0] ? name : "gpu") >= n)
        return KG_ERR(KG_EINVAL, "selftest certificate: cache path too long");
    return 0;
}

int kg_selftest_cert_key_make(kg_selftest_cert_key *k, const char *defects,
                              const kg_device_info *dev)
{
    int rc = 0;
    memset(k, 0, sizeof *k);
    snprintf(k->build, sizeof k->build, "%s", kg_build_id());
    KG_TRY(kg_file_sha256(k->catalogue, defects));
    sc_driver(k->driver, sizeof k->driver, dev);
    snprintf(k->gpu_uuid, sizeof k->gpu_uuid, "%s", dev->uuid);
    KG_TRY(sc_path(k->path, sizeof k->path, dev->uuid));
cleanup:
    return rc;
}

static const char *sc_str(const cJSON *o, const char *key)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
    return s ? s : "";
}

static double sc_num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* Pure: does `cert` prove the selftest for `k` at `now_s` (epoch seconds)? 0, or 1 with the
 * first reason it does not in why. */
int kg_selftest_cert_invalid(const cJSON *cert, const kg_selftest_cert_key *k, double now_s,
                             double max_age_s, char *why, size_t n)
{
    static const struct {
        const char *key, *what;
        size_t off;
    } same[] = {
        { KG_RK_CERT_BUILD, "the kgate build", offsetof(kg_selftest_cert_key, build) },
        { KG_RK_CERT_CATALOGUE, "the defect catalogue", offsetof(kg_selftest_cert_key, catalogue) },
        { KG_RK_CERT_DRIVER, "the driver", offsetof(kg_selftest_cert_key, driver) },
        { KG_RK_CERT_GPU_UUID, "the GPU", offsetof(kg_selftest_cert_key, gpu_uuid) },
    };
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(cert, KG_RK_SELFTEST);
    double made = sc_num(cert, SC_CREATED_UNIX);
    if (strcmp(sc_str(cert, KG_RK_SCHEMA), SC_SCHEMA) != 0)
        return snprintf(why, n, "not a %s", SC_SCHEMA), 1;
    for (size_t i = 0; i < KG_ARRAY_LEN(same); i++) {
        const char *want = (const char *)k + same[i].off;
        if (strcmp(sc_str(cert, same[i].key), want) != 0)
            return snprintf(why, n, "%s changed (%.16s, certified %.16s)", same[i].what, want,
                            sc_str(cert, same[i].key)),
                   1;
    }
    if (!isfinite(made) || made > now_s + 60)
        return snprintf(why, n, "its creation time is not a time in the past"), 1;
    if (now_s - made > max_age_s)
        return snprintf(why, n, "it is %.1f h old (at most %.1f h)", (now_s - made) / 3600,
                        max_age_s / 3600),
               1;
    if (!cJSON_IsObject(st) || sc_num(st, KG_RK_ST_ESCAPED) != 0 ||
        sc_num(st, KG_RK_ST_FALSE_ALARMS) != 0 || sc_num(st, KG_RK_ST_NOT_RUN) != 0 ||
        !(sc_num(st, KG_RK_ST_CAUGHT) > 0))
        return snprintf(why, n, "the selftest it records did not pass"), 1;
    if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(cert, KG_RK_RESULTS)))
        return snprintf(why, n, "it has no selftest rows"), 1;
    return 0;
}

/* After a selftest that passed on a GPU: its summary and rows, and what they were proved for. */
int kg_selftest_cert_save(const kg_report *rep, const kg_selftest_cert_key *k, uint64_t seed)
{
    int rc = 0;
    char *text = NULL, dir[PATH_MAX];
    cJSON *c = cJSON_CreateObject(), *rows = cJSON_CreateArray(), *it;
    const cJSON *root = kg_report_json((kg_report *)rep);
    if (!c || !rows) {
        rc = KG_ERR(KG_ENOMEM, "out of memory for the selftest certificate");
        goto cleanup;
    }
    cJSON_AddStringToObject(c, KG_RK_SCHEMA, SC_SCHEMA);
    cJSON_AddNumberToObject(c, SC_CREATED_UNIX, (double)time(NULL));
    cJSON_AddStringToObject(c, KG_RK_CERT_CREATED_AT, kg_report_started_at(rep));
    cJSON_AddStringToObject(c, KG_RK_CERT_BUILD, k->build);
    cJSON_AddStringToObject(c, KG_RK_CERT_CATALOGUE, k->catalogue);
    cJSON_AddStringToObject(c, KG_RK_CERT_DRIVER, k->driver);
    cJSON_AddStringToObject(c, KG_RK_CERT_GPU_UUID, k->gpu_uuid);
    cJSON_AddNumberToObject(c, KG_RK_CERT_SEED, (double)seed);
    cJSON_AddItemToObject(c, KG_RK_SELFTEST,
                          cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(root, KG_RK_SELFTEST),
                                          true));
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(root, KG_RK_RESULTS))
        if (strcmp(sc_str(it, KG_RES_GATE), KG_RK_SELFTEST) == 0)
            cJSON_AddItemToArray(rows, cJSON_Duplicate(it, true));
    cJSON_AddItemToObject(c, KG_RK_RESULTS, rows);
    rows = NULL;
    snprintf(dir, sizeof dir, "%s", k->path);
    if (strrchr(dir, '/'))
        *strrchr(dir, '/') = '\0';
    KG_TRY(kg_mkdir_p(dir));
    if (!(text = cJSON_Print(c))) {
        rc = KG_ERR(KG_ENOMEM, "out of memory for the selftest certificate");
        goto cleanup;
    }
    KG_TRY(kg_file_write_atomic(k->path, text, strlen(text)));
cleanup:
    cJSON_free(text);
    cJSON_Delete(rows);
    cJSON_Delete(c);
    return rc;
}

/* The certificate's rows and summary into the run's report, the summary saying whose they are. */
static int sc_take(kg_report *rep, const cJSON *cert, double now_s)
{
    int rc = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(cert, KG_RK_RESULTS)) {
        kg_verdict v;
        if (strcmp(sc_str(it, KG_RES_GATE), KG_RK_SELFTEST) != 0 ||
            kg_verdict_parse_full(sc_str(it, KG_RES_VERDICT), &v) < 0 ||
            !sc_str(it, KG_RES_CASE)[0])
            return KG_ERR(KG_EPARSE, "selftest certificate: a row that is no selftest row");
        KG_TRY(kg_report_add(rep, KG_RK_SELFTEST, sc_str(it, KG_RES_CASE), v,
                             sc_str(it, KG_RES_MESSAGE),
                             cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(it, KG_RES_FIGURES),
                                             true)));
    }
    cJSON *st = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(cert, KG_RK_SELFTEST), true);
    cJSON *c = cJSON_CreateObject();
    static const char *const copied[] = { KG_RK_CERT_CREATED_AT, KG_RK_CERT_BUILD,
                                          KG_RK_CERT_CATALOGUE, KG_RK_CERT_DRIVER,
                                          KG_RK_CERT_GPU_UUID };
    if (!st || !c) {
        cJSON_Delete(st);
        cJSON_Delete(c);
        return KG_ERR(KG_ENOMEM, "out of memory for the selftest certificate");
    }
    for (size_t i = 0; i < KG_ARRAY_LEN(copied); i++)
        cJSON_AddStringToObject(c, copied[i], sc_str(cert, copied[i]));
    cJSON_AddNumberToObject(c, KG_RK_CERT_AGE, floor(now_s - sc_num(cert, SC_CREATED_UNIX)));
    cJSON_AddNumberToObject(c, KG_RK_CERT_SEED, sc_num(cert, KG_RK_CERT_SEED));
    cJSON_DeleteItemFromObjectCaseSensitive(st, KG_RK_ST_CERTIFICATE);
    cJSON_AddItemToObject(st, KG_RK_ST_CERTIFICATE, c);
    kg_report_set_extra(rep, KG_RK_SELFTEST, st);
cleanup:
    return rc;
}

int kg_selftest_cert_reuse(kg_report *rep, const kg_selftest_cert_key *k, double max_age_s,
                           char *why, size_t n)
{
    cJSON *cert = NULL;
    struct stat sb;
    double now = (double)time(NULL);
    int rc = 0;
    if (stat(k->path, &sb) != 0) {
        snprintf(why, n, "no certificate at %s", k->path);
        return 0;
    }
    if (kg_json_load(&cert, k->path) < 0) {
        snprintf(why, n, "%s", kg_error_last());
        return 0;
    }
    if (kg_selftest_cert_invalid(cert, k, now, max_age_s, why, n) == 0) {
        rc = sc_take(rep, cert, now);
        rc = rc < 0 ? rc : 1;
    }
    cJSON_Delete(cert);
    return rc;
}
