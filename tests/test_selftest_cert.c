/* The selftest's certificate (runners/cli/selftest_cert.c, issue #29): a passing selftest's
 * rows and summary are taken only for the same kgate build, catalogue, driver and GPU, within
 * the maximum age, from a certificate whose selftest passed; each rule refuses its own planted
 * change, and a saved certificate is taken back whole into another run's report. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "core/report_keys.h"
#include "kg_test.h"

static kg_selftest_cert_key key(const char *dir)
{
    kg_selftest_cert_key k;
    memset(&k, 0, sizeof k);
    memset(k.build, 'a', 64);
    memset(k.catalogue, 'b', 64);
    snprintf(k.driver, sizeof k.driver, "580.159.04");
    snprintf(k.gpu_uuid, sizeof k.gpu_uuid, "GPU-5c89800f");
    snprintf(k.path, sizeof k.path, "%s/cache/sub/selftest-GPU-5c89800f.json", dir);
    return k;
}

/* A report whose selftest passed: two rows and the summary, as the selftest records them. */
static kg_report *passed_report(int escaped)
{
    kg_report *r = NULL;
    CHECK(kg_report_new(&r, "run", true) == 0);
    CHECK(kg_report_add(r, KG_RK_SELFTEST, "defect/a", KG_VERDICT_PASS, "caught by parity", NULL) ==
          0);
    CHECK(kg_report_add(r, KG_RK_SELFTEST, "defect/b", KG_VERDICT_PASS, "caught by bench", NULL) ==
          0);
    CHECK(kg_report_add(r, "parity", "axpy/n=1/f32", KG_VERDICT_PASS, "not a selftest row", NULL) ==
          0);
    cJSON *st = cJSON_CreateObject();
    cJSON_AddItemToObject(st, KG_RK_ST_MATRIX, cJSON_CreateArray());
    cJSON_AddNumberToObject(st, KG_RK_ST_CAUGHT, 2);
    cJSON_AddNumberToObject(st, KG_RK_ST_ESCAPED, escaped);
    cJSON_AddNumberToObject(st, KG_RK_ST_FALSE_ALARMS, 0);
    cJSON_AddNumberToObject(st, KG_RK_ST_NOT_RUN, 0);
    cJSON_AddNumberToObject(st, KG_RK_ST_INFORMATIONAL, 0);
    kg_report_set_extra(r, KG_RK_SELFTEST, st);
    return r;
}

static int n_selftest_rows(kg_report *r)
{
    int n = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(kg_report_json(r), KG_RK_RESULTS))
        n += strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(it, KG_RES_GATE)), "selftest") == 0;
    return n;
}

static cJSON *load(const char *path)
{
    cJSON *c = NULL;
    CHECK(kg_json_load(&c, path) == 0);
    return c;
}

/* One field of the saved certificate changed: refused, naming why. */
static void refused(const kg_selftest_cert_key *k, const char *field, cJSON *value, double now_s,
                    const char *words)
{
    char why[512] = "";
    cJSON *c = load(k->path);
    if (field)
        cJSON_ReplaceItemInObject(c, field, value);
    CHECK_MSG(kg_selftest_cert_invalid(c, k, now_s, 3600, why, sizeof why) == 1 &&
                  strstr(why, words),
              "%s changed: want refused with '%s', got '%s'", field ? field : "(nothing)", words,
              why);
    cJSON_Delete(c);
}

int main(void)
{
    char dir[] = "/tmp/kg-cert-XXXXXX", why[512];
    CHECK(mkdtemp(dir) != NULL);
    kg_selftest_cert_key k = key(dir);
    kg_report *r = passed_report(0), *next = NULL;
    CHECK(kg_selftest_cert_save(r, &k, 4242) == 0);
    cJSON *c = load(k.path);
    double made = cJSON_GetNumberValue(cJSON_GetObjectItem(c, "created_unix"));
    CHECK(kg_selftest_cert_invalid(c, &k, made + 10, 3600, why, sizeof why) == 0);
    cJSON_Delete(c);
    refused(&k, KG_RK_CERT_BUILD, cJSON_CreateString("0000"), made, "the kgate build changed");
    refused(&k, KG_RK_CERT_CATALOGUE, cJSON_CreateString("x"), made, "catalogue changed");
    refused(&k, KG_RK_CERT_DRIVER, cJSON_CreateString("575.1"), made, "the driver changed");
    refused(&k, KG_RK_CERT_GPU_UUID, cJSON_CreateString("GPU-other"), made, "the GPU changed");
    refused(&k, KG_RK_SCHEMA, cJSON_CreateString("kgate-report/1"), made, "not a kgate-selftest");
    refused(&k, NULL, NULL, made + 7200, "h old");
    refused(&k, "created_unix", cJSON_CreateNumber(made + 1e6), made, "not a time in the past");
    refused(&k, KG_RK_RESULTS, cJSON_CreateNull(), made, "no selftest rows");
    kg_report *bad = passed_report(1);
    kg_selftest_cert_key kb = k;
    snprintf(kb.path, sizeof kb.path, "%s/escaped.json", dir);
    CHECK(kg_selftest_cert_save(bad, &kb, 1) == 0);
    refused(&kb, NULL, NULL, made, "did not pass");
    /* Taken back: the two selftest rows (not the parity row), the summary with its certificate. */
    CHECK(kg_report_new(&next, "run", true) == 0);
    CHECK(kg_selftest_cert_reuse(next, &k, 3600, why, sizeof why) == 1);
    CHECK_MSG(n_selftest_rows(next) == 2, "%d selftest rows taken, want 2", n_selftest_rows(next));
    const cJSON *st = cJSON_GetObjectItem(kg_report_json(next), KG_RK_SELFTEST);
    const cJSON *ce = cJSON_GetObjectItem(st, KG_RK_ST_CERTIFICATE);
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(st, KG_RK_ST_CAUGHT)) == 2);
    CHECK(ce &&
          strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(ce, KG_RK_CERT_DRIVER)), "580.159.04") ==
              0 &&
          cJSON_GetNumberValue(cJSON_GetObjectItem(ce, KG_RK_CERT_SEED)) == 4242);
    /* Another GPU's key finds nothing to reuse; the report is left as it was. */
    kg_report *other = NULL;
    kg_selftest_cert_key ko = k;
    snprintf(ko.gpu_uuid, sizeof ko.gpu_uuid, "GPU-other");
    CHECK(kg_report_new(&other, "run", true) == 0);
    CHECK(kg_selftest_cert_reuse(other, &ko, 3600, why, sizeof why) == 0 && strstr(why, "GPU"));
    CHECK(n_selftest_rows(other) == 0);
    snprintf(ko.path, sizeof ko.path, "%s/none.json", dir);
    CHECK(kg_selftest_cert_reuse(other, &ko, 3600, why, sizeof why) == 0 &&
          strstr(why, "no certificate"));
    kg_report_free(r);
    kg_report_free(bad);
    kg_report_free(next);
    kg_report_free(other);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    return kg_test_done("test_selftest_cert");
}
