/* Marks file: a valid file round-trips canonically; every schema error is KG_EPARSE with a
 * message naming the file and the entry; a failed save leaves the file as it was. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/kg_core.h"
#include "kg_test.h"
#include "marks/marks.h"

static cJSON *valid_mark(const char *id, double value)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "device_class", "NVIDIA H200/sm_90");
    cJSON_AddStringToObject(m, "case", id);
    cJSON_AddStringToObject(m, "metric", "time_us_warm");
    cJSON_AddStringToObject(m, "direction", "lower_is_better");
    cJSON_AddNumberToObject(m, "value", value);
    cJSON_AddNumberToObject(m, "band_rel", 0.004);
    cJSON_AddNumberToObject(m, "run_median", value * 0.999);
    cJSON_AddNumberToObject(m, "ci_lo", value * 0.998);
    cJSON_AddNumberToObject(m, "ci_hi", value);
    cJSON_AddNumberToObject(m, "samples", 40);
    cJSON *p = cJSON_AddObjectToObject(m, "provenance");
    cJSON_AddStringToObject(p, "commit", "0123456789abcdef0123456789abcdef01234567");
    cJSON_AddStringToObject(p, "date", "2026-11-30T12:00:00Z");
    cJSON_AddStringToObject(p, "run_id", "1700000000-42-abc");
    cJSON_AddStringToObject(p, "driver", "13.0");
    cJSON_AddStringToObject(p, "cuda", "13.0");
    cJSON_AddStringToObject(p, "set_by", "kgate run --production");
    return m;
}

/* A valid file with two marks, deliberately out of order. */
static cJSON *valid_root(void)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, "version", 1);
    cJSON *a = cJSON_AddArrayToObject(r, "marks");
    cJSON_AddItemToArray(a, valid_mark("softmax/rows=1,cols=1/f32", 3.25));
    cJSON_AddItemToArray(a, valid_mark("axpy/n=33554433/f32", 545.125));
    return r;
}

static cJSON *entry(cJSON *r, int i)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItem(r, "marks"), i);
}

/* Parse the text of `r` (freed) and expect KG_EPARSE with every `want` in the message. */
static void expect_error_text(const char *what, const char *text, const char *want1,
                              const char *want2)
{
    kg_marks *m = NULL;
    int rc = kg_marks_parse(&m, text, "marks.json");
    const char *msg = kg_error_last();
    CHECK_MSG(rc == KG_EPARSE && m == NULL, "%s: rc %d (%s), want KG_EPARSE", what, rc, msg);
    CHECK_MSG(strstr(msg, "marks.json") != NULL, "%s: message lacks the file name: %s", what, msg);
    CHECK_MSG(!want1 || strstr(msg, want1), "%s: message lacks '%s': %s", what, want1, msg);
    CHECK_MSG(!want2 || strstr(msg, want2), "%s: message lacks '%s': %s", what, want2, msg);
    kg_marks_free(m);
}

static void expect_error(const char *what, cJSON *r, const char *want1, const char *want2)
{
    char *t = cJSON_Print(r);
    expect_error_text(what, t, want1, want2);
    cJSON_free(t);
    cJSON_Delete(r);
}

static void test_valid_roundtrip(void)
{
    cJSON *r = valid_root();
    char *t = cJSON_Print(r), *s1 = NULL, *s2 = NULL;
    kg_marks *m = NULL, *m2 = NULL;
    CHECK(kg_marks_parse(&m, t, "marks.json") == 0);
    CHECK(kg_marks_count(m) == 2);
    const kg_mark *k = kg_marks_find(m, "NVIDIA H200/sm_90", "axpy/n=33554433/f32", "time_us_warm");
    CHECK(k && k->value == 545.125 && k->samples == 40 && k->runs == 0 && k->band_rel == 0.004);
    CHECK(k && strcmp(k->set_by, "kgate run --production") == 0);
    CHECK(kg_marks_find(m, "NVIDIA H200/sm_90", "axpy/n=33554433/f32", "time_us_cold") == NULL);
    CHECK(kg_marks_serialize(&s1, m) == 0);
    /* Canonical: sorted by key, so axpy comes first; parse + serialize is a fixed point. */
    CHECK(s1 && strstr(s1, "axpy/") < strstr(s1, "softmax/"));
    CHECK(kg_marks_parse(&m2, s1, "again") == 0 && kg_marks_serialize(&s2, m2) == 0);
    CHECK(s1 && s2 && strcmp(s1, s2) == 0);
    /* put replaces, remove removes, better follows the direction. */
    kg_mark nk = *k;
    nk.value = 500;
    CHECK(kg_mark_better(&nk, k));
    CHECK(kg_marks_put(m2, &nk) == 0 && kg_marks_count(m2) == 2);
    CHECK(kg_marks_find(m2, nk.device_class, nk.case_id, nk.metric)->value == 500);
    CHECK(kg_marks_remove(m2, nk.device_class, nk.case_id, nk.metric) == 0);
    CHECK(kg_marks_count(m2) == 1);
    CHECK(kg_marks_remove(m2, nk.device_class, nk.case_id, nk.metric) == KG_ENOTFOUND);
    /* An empty file of the current version is valid (baselines/high_water.json starts so). */
    kg_marks *e = NULL;
    CHECK(kg_marks_parse(&e, "{\"version\": 1, \"marks\": []}", "empty") == 0);
    CHECK(kg_marks_count(e) == 0);
    kg_marks_free(e);
    kg_marks_free(m);
    kg_marks_free(m2);
    cJSON_free(t);
    free(s1);
    free(s2);
    cJSON_Delete(r);
}

static void test_merge(void)
{
    kg_marks *m = NULL;
    CHECK(kg_marks_new(&m) == 0);
    const double med[] = { 100.0, 102.0, 101.0 };
    for (int i = 0; i < 3; i++) {
        kg_mark r = { "GPU/sm_90",
                      "c",
                      "time_us_warm",
                      KG_LOWER_IS_BETTER,
                      med[i],
                      0.001,
                      med[i],
                      med[i] * 0.999,
                      med[i] * 1.001,
                      30,
                      "abc",
                      "2026-11-30T12:00:00Z",
                      "run",
                      "13.0",
                      "13.0",
                      "test",
                      0,
                      0,
                      0,
                      NULL };
        CHECK(kg_marks_merge(m, &r) == 0);
    }
    const kg_mark *k = kg_marks_at(m, 0);
    CHECK(kg_marks_count(m) == 1 && k->runs == 3);
    CHECK(k->env_lo == 100.0 && k->env_hi == 102.0 && k->value == 101.0);
    /* envelope half-width 1/101, times (3+1)/(3-1) = 2 */
    CHECK_MSG(fabs(k->band_rel - 2.0 / 101.0) < 1e-12, "band %g", k->band_rel);
    CHECK(k->ci_lo == 100.0 * 0.999 && k->ci_hi == 102.0 * 1.001);
    char *s = NULL;
    kg_marks *back = NULL;
    CHECK(kg_marks_serialize(&s, m) == 0 && kg_marks_parse(&back, s, "merged") == 0);
    CHECK(back && kg_marks_at(back, 0)->runs == 3 && kg_marks_at(back, 0)->env_hi == 102.0);
    free(s);
    kg_marks_free(back);
    kg_marks_free(m);
}

/* k and power_state (issue #14): parsed, validated strictly, written back, kept by a merge; a
 * merge of another k or power state refused (KG_ECONFLICT) with the mark unchanged. */
static void test_k_state(void)
{
    cJSON *r = valid_root();
    cJSON_AddNumberToObject(entry(r, 0), "k", 8);
    cJSON_AddStringToObject(entry(r, 0), "power_state", "full-clock");
    char *t = cJSON_Print(r), *out = NULL;
    kg_marks *m = NULL, *back = NULL;
    CHECK(kg_marks_parse(&m, t, "marks.json") == 0 && m);
    const kg_mark *k = kg_marks_find(m, "NVIDIA H200/sm_90", "softmax/rows=1,cols=1/f32",
                                     "time_us_warm");
    CHECK(k && k->k == 8 && k->power_state && strcmp(k->power_state, "full-clock") == 0);
    const kg_mark *k2 = kg_marks_find(m, "NVIDIA H200/sm_90", "axpy/n=33554433/f32",
                                      "time_us_warm");
    CHECK(k2 && k2->k == 0 && k2->power_state == NULL); /* absent: unknown */
    CHECK(kg_marks_serialize(&out, m) == 0 && strstr(out, "\"k\":\t8") &&
          strstr(out, "\"power_state\":\t\"full-clock\""));
    CHECK(kg_marks_parse(&back, out, "again") == 0 && back);
    k = back ? kg_marks_find(back, "NVIDIA H200/sm_90", "softmax/rows=1,cols=1/f32", "time_us_warm")
             : NULL;
    CHECK(k && k->k == 8 && k->power_state && strcmp(k->power_state, "full-clock") == 0);
    /* A merge keeps k and the state; a run of another k or state is refused. */
    kg_mark run = { "NVIDIA H200/sm_90",
                    "softmax/rows=1,cols=1/f32",
                    "time_us_warm",
                    KG_LOWER_IS_BETTER,
                    3.25,
                    0.001,
                    3.25,
                    3.24,
                    3.26,
                    30,
                    "abc",
                    "2026-11-30T12:00:00Z",
                    "run",
                    "13.0",
                    "13.0",
                    "test",
                    1,
                    0,
                    0,
                    NULL,
                    8,
                    "full-clock" }; /* its strings are static: the merge replaces the mark */
    CHECK(kg_marks_merge(back, &run) == 0);
    k = kg_marks_at(back, 1);
    CHECK(k && k->k == 8 && strcmp(k->power_state, "full-clock") == 0 && k->runs == 2);
    run.k = 16;
    CHECK(kg_marks_merge(back, &run) == KG_ECONFLICT);
    CHECK_MSG(strstr(kg_error_last(), "k=16") && strstr(kg_error_last(), "k=8"), "%s",
              kg_error_last());
    run.k = 0; /* unknown: merges, the mark's k stays */
    run.power_state = "power-capped";
    CHECK(kg_marks_merge(back, &run) == KG_ECONFLICT);
    CHECK_MSG(strstr(kg_error_last(), "power-capped") && strstr(kg_error_last(), "full-clock"),
              "%s", kg_error_last());
    run.power_state = "full-clock:replay-clock-normalised"; /* another time basis: not one spread */
    CHECK(kg_marks_merge(back, &run) == KG_ECONFLICT);
    k = kg_marks_at(back, 1);
    CHECK(k && k->runs == 2); /* unchanged by the refusals */
    run.power_state = NULL;
    CHECK(kg_marks_merge(back, &run) == 0);
    k = kg_marks_at(back, 1);
    CHECK(k && k->runs == 3 && k->k == 8 && strcmp(k->power_state, "full-clock") == 0);
    free(out);
    cJSON_free(t);
    cJSON_Delete(r);
    kg_marks_free(m);
    kg_marks_free(back);
}

/* Bad k and power_state values: the file and the field named, on load and on put. */
static void test_k_state_errors(void)
{
    cJSON *r;
    char *t;
    kg_marks *m = NULL;
    r = valid_root();
    cJSON_AddNumberToObject(entry(r, 1), "k", 0);
    expect_error("k 0", r, "marks[1]", "'k'");
    r = valid_root();
    cJSON_AddNumberToObject(entry(r, 0), "k", 2.5);
    expect_error("k 2.5", r, "'k'", "integer");
    r = valid_root();
    cJSON_AddNumberToObject(entry(r, 0), "k", 4194304);
    expect_error("k too large", r, "'k'", "1048576");
    r = valid_root();
    cJSON_AddStringToObject(entry(r, 0), "k", "8");
    expect_error("k string", r, "'k'", "number");
    r = valid_root();
    cJSON_AddStringToObject(entry(r, 0), "power_state", "Full Clock");
    expect_error("state charset", r, "'power_state'", "[a-z0-9_:+.-]+");
    r = valid_root();
    cJSON_AddStringToObject(entry(r, 0), "power_state", "");
    expect_error("state empty", r, "'power_state'", NULL);
    r = valid_root();
    cJSON_AddNumberToObject(entry(r, 0), "power_state", 1);
    expect_error("state number", r, "'power_state'", "string");
    r = valid_root();
    cJSON_AddStringToObject(entry(r, 0), "power_state",
                            "other:hw_slowdown+sync_boost+sw_thermal+hw_thermal+hw_power_brake");
    expect_error("state long", r, "'power_state'", "63");
    /* every label the engine writes loads: "other:<reason>+<reason>" too */
    r = valid_root();
    cJSON_AddStringToObject(entry(r, 0), "power_state", "other:hw_slowdown+sync_boost");
    t = cJSON_Print(r);
    CHECK(kg_marks_parse(&m, t, "marks.json") == 0 && m);
    kg_marks_free(m);
    cJSON_free(t);
    cJSON_Delete(r);
    /* kg_marks_put refuses what loading would (the one validation). */
    kg_mark bad = { "GPU/sm_90",
                    "c",
                    "time_us_warm",
                    KG_LOWER_IS_BETTER,
                    1.0,
                    0.001,
                    1.0,
                    0.9,
                    1.1,
                    30,
                    "abc",
                    "2026-11-30T12:00:00Z",
                    "run",
                    "13.0",
                    "13.0",
                    "test",
                    0,
                    0,
                    0,
                    NULL,
                    -1,
                    NULL };
    CHECK(kg_marks_new(&m) == 0);
    CHECK(kg_marks_put(m, &bad) == KG_EPARSE && strstr(kg_error_last(), "'k'"));
    bad.k = 4;
    bad.power_state = "Capped!";
    CHECK(kg_marks_put(m, &bad) == KG_EPARSE && strstr(kg_error_last(), "'power_state'"));
    kg_marks_free(m);
}

static void test_schema_errors(void)
{
    cJSON *r;
    /* Not JSON at all, truncated, NaN literal, NUL handled by load (below). */
    expect_error_text("garbage", "not json", "not valid JSON", "line 1");
    char *full = cJSON_Print(r = valid_root());
    full[strlen(full) / 2] = '\0';
    expect_error_text("truncated", full, "truncated", NULL);
    cJSON_free(full);
    cJSON_Delete(r);
    expect_error_text("NaN literal", "{\"version\": 1, \"marks\": [{\"value\": NaN}]}",
                      "not valid JSON", "NaN");
    expect_error_text("trailing garbage", "{\"version\": 1, \"marks\": []} x", "not valid JSON",
                      NULL);
    expect_error_text("top-level array", "[1]", "top level must be an object", NULL);
    expect_error_text("missing version", "{\"marks\": []}", "missing field 'version'", NULL);
    expect_error_text("version 2", "{\"version\": 2, \"marks\": []}", "unsupported version 2",
                      NULL);
    expect_error_text("version string", "{\"version\": \"1\", \"marks\": []}",
                      "unsupported version", NULL);
    expect_error_text("missing marks", "{\"version\": 1}", "missing field 'marks'", NULL);
    expect_error_text("marks object", "{\"version\": 1, \"marks\": {}}", "must be an array", NULL);
    expect_error_text("unknown top key", "{\"version\": 1, \"marks\": [], \"extra\": 1}",
                      "unknown field 'extra'", NULL);
    expect_error_text("entry not object", "{\"version\": 1, \"marks\": [3]}", "marks[0]",
                      "must be an object");
}

/* Every required field missing, and each field of the wrong type or out of range. */
static void test_schema_fields(void)
{
    cJSON *r;
    static const char *required[] = { "device_class", "case",     "metric",     "direction",
                                      "value",        "band_rel", "run_median", "ci_lo",
                                      "ci_hi",        "samples",  "provenance" };
    for (size_t i = 0; i < KG_ARRAY_LEN(required); i++) {
        char want[64];
        snprintf(want, sizeof want, "missing field '%s'", required[i]);
        r = valid_root();
        cJSON_DeleteItemFromObject(entry(r, 1), required[i]);
        expect_error(required[i], r, "marks[1]", want);
    }
    static const char *prov[] = { "commit", "date", "run_id", "driver", "cuda", "set_by" };
    for (size_t i = 0; i < KG_ARRAY_LEN(prov); i++) {
        char want[64];
        snprintf(want, sizeof want, "missing field '%s'", prov[i]);
        r = valid_root();
        cJSON_DeleteItemFromObject(cJSON_GetObjectItem(entry(r, 0), "provenance"), prov[i]);
        expect_error(prov[i], r, "marks[0] (NVIDIA H200/sm_90 / softmax", want);
    }

#define MUTATE(what, key, item, w1, w2)                    \
    do {                                                   \
        r = valid_root();                                  \
        cJSON_ReplaceItemInObject(entry(r, 0), key, item); \
        expect_error(what, r, w1, w2);                     \
    } while (0)
    MUTATE("case not string", "case", cJSON_CreateNumber(3), "'case' must be a string", NULL);
    MUTATE("empty metric", "metric", cJSON_CreateString(""), "'metric' must be a non-empty", NULL);
    MUTATE("metric chars", "metric", cJSON_CreateString("Time us"), "[a-z0-9_]+", NULL);
    MUTATE("control char", "case", cJSON_CreateString("a\tb"), "control character", NULL);
    MUTATE("direction", "direction", cJSON_CreateString("down"), "'direction' must be", NULL);
    MUTATE("time higher", "direction", cJSON_CreateString("higher_is_better"), "is a time", NULL);
    MUTATE("value string", "value", cJSON_CreateString("545"), "'value' must be a number", NULL);
    MUTATE("negative time", "value", cJSON_CreateNumber(-1), "'value' must be > 0", "-1");
    MUTATE("zero time", "value", cJSON_CreateNumber(0), "'value' must be > 0", NULL);
    MUTATE("infinite time", "value", cJSON_CreateNumber(INFINITY), "'value'", NULL);
    MUTATE("band negative", "band_rel", cJSON_CreateNumber(-0.1), "'band_rel' must be >= 0", NULL);
    MUTATE("band >= 1", "band_rel", cJSON_CreateNumber(1.5), "'band_rel' must be <=", NULL);
    MUTATE("ci order", "ci_lo", cJSON_CreateNumber(1e6), "'ci_lo' <= 'run_median'", NULL);
    MUTATE("samples 0", "samples", cJSON_CreateNumber(0), "'samples' must be >= 1", NULL);
    MUTATE("samples frac", "samples", cJSON_CreateNumber(1.5), "'samples' must be an integer",
           NULL);
    MUTATE("provenance string", "provenance", cJSON_CreateString("x"),
           "'provenance' must be an object", NULL);
#undef MUTATE
}

/* Values a file can spell that cJSON cannot print, the optional fields' rules, unknown and
 * duplicate fields and keys. */
static void test_schema_values(void)
{
    cJSON *r;
    /* An infinite value prints as null in cJSON; 1e999 is how a file spells it. */
    r = valid_root();
    char *t = cJSON_Print(r);
    char *at = strstr(t, "545.125");
    CHECK(at != NULL);
    if (at) {
        char *nt = malloc(strlen(t) + 8);
        sprintf(nt, "%.*s1e999%s", (int)(at - t), t, at + 7);
        expect_error_text("1e999", nt, "'value' must be finite", NULL);
        free(nt);
    }
    cJSON_free(t);
    cJSON_Delete(r);

    r = valid_root();
    cJSON_AddNumberToObject(entry(r, 0), "runs", 0);
    expect_error("runs 0", r, "'runs' must be >= 1", NULL);
    r = valid_root();
    cJSON_AddNumberToObject(entry(r, 0), "env_lo", 3.0);
    expect_error("env_lo alone", r, "come together", NULL);
    r = valid_root();
    cJSON_AddNumberToObject(entry(r, 0), "env_lo", 4.0);
    cJSON_AddNumberToObject(entry(r, 0), "env_hi", 3.0);
    expect_error("env order", r, "exceeds 'env_hi'", NULL);
    r = valid_root();
    cJSON_AddNumberToObject(entry(r, 0), "valeu", 3.0);
    expect_error("unknown field", r, "unknown field 'valeu'", "marks[0]");
    r = valid_root();
    cJSON_AddNumberToObject(entry(r, 0), "value", 3.0);
    expect_error("duplicate field", r, "'value' appears twice", NULL);
    r = valid_root();
    cJSON_AddStringToObject(cJSON_GetObjectItem(entry(r, 0), "provenance"), "token", "x");
    expect_error("unknown provenance field", r, "unknown field 'token'", "provenance");
    r = valid_root();
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(entry(r, 0), "provenance"), "date",
                              cJSON_CreateString("yesterday"));
    expect_error("bad date", r, "ISO 8601", NULL);
    r = valid_root();
    cJSON_AddItemToArray(cJSON_GetObjectItem(r, "marks"), valid_mark("axpy/n=33554433/f32", 1));
    expect_error("duplicate key", r, "marks[2]", "duplicate key");
}

/* issue #28: bytes before JSON (a BOM, invalid UTF-8, with the offset) and keys that are no
 * keys (blank, padded, or outside the case-id charset). */
static void test_bytes_and_keys(void)
{
    cJSON *r = valid_root();
    char *t = cJSON_Print(r), *nt = malloc(strlen(t) + 4);
    sprintf(nt, "\xEF\xBB\xBF%s", t);
    expect_error_text("BOM", nt, "byte-order mark", "bytes 0-2");
    char *at = strstr(t, "axpy");
    CHECK(at != NULL);
    if (at) {
        at[1] = (char)0xC3; /* a lead byte followed by 'p': invalid UTF-8 */
        char want[64];
        snprintf(want, sizeof want, "not valid UTF-8 at byte offset %zu", (size_t)(at + 1 - t));
        expect_error_text("invalid UTF-8", t, want, NULL);
        at[1] = (char)0xC0;
        at[2] = (char)0xAF; /* overlong '/' */
        expect_error_text("overlong UTF-8", t, "not valid UTF-8", NULL);
    }
    free(nt);
    cJSON_free(t);
    cJSON_Delete(r);
    CHECK(kg_utf8_bad("ok \xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80", 14) == (size_t)-1);
    CHECK(kg_utf8_bad("\xED\xA0\x80", 3) == 0);       /* a surrogate */
    CHECK(kg_utf8_bad("ab\xF4\x90\x80\x80", 6) == 2); /* above U+10FFFF */
    CHECK(kg_utf8_bad("ab\xE2\x82", 4) == 2);         /* truncated */
    static const char *const bad_cases[] = {
        "                ", " axpy", "axpy ", "a b", "a\"b", "a\\b"
    };
    for (size_t i = 0; i < KG_ARRAY_LEN(bad_cases); i++) {
        r = valid_root();
        cJSON_ReplaceItemInObject(entry(r, 0), "case", cJSON_CreateString(bad_cases[i]));
        expect_error(bad_cases[i], r, "field 'case'", NULL);
    }
    r = valid_root();
    cJSON_ReplaceItemInObject(entry(r, 0), "device_class", cJSON_CreateString("   "));
    expect_error("blank device class", r, "'device_class' starts or ends with white space", NULL);
}

static void test_files(void)
{
    char dir[] = "/tmp/kg_test_marks_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[128], nul[128];
    snprintf(path, sizeof path, "%s/high_water.json", dir);
    snprintf(nul, sizeof nul, "%s/nul.json", dir);
    kg_marks *m = NULL;
    CHECK(kg_marks_load(&m, path) == KG_ENOTFOUND && m == NULL);
    FILE *f = fopen(nul, "wb");
    fwrite("{\"version\": 1,\0 \"marks\": []}", 1, 29, f);
    fclose(f);
    CHECK(kg_marks_load(&m, nul) == KG_EPARSE && strstr(kg_error_last(), "NUL"));

    cJSON *r = valid_root();
    char *t = cJSON_Print(r);
    CHECK(kg_marks_parse(&m, t, "x") == 0);
    CHECK(kg_marks_save(m, path) == 0);
    char *before = NULL, *after = NULL;
    size_t lb = 0, la = 0;
    CHECK(kg_file_read(&before, &lb, path) == 0);
    /* An invalid mark is never taken in (one validation: put refuses what load refuses), so it
     * is never written: the file keeps its bytes. */
    kg_mark bad = *kg_marks_at(m, 0);
    bad.case_id = "new/case";
    bad.value = NAN;
    CHECK(kg_marks_put(m, &bad) == KG_EPARSE && strstr(kg_error_last(), "field 'value'"));
    bad.value = 1.0;
    bad.set_by = "kgate marks lower: two\nlines";
    CHECK(kg_marks_put(m, &bad) == KG_EPARSE && strstr(kg_error_last(), "'set_by'") &&
          strstr(kg_error_last(), "control character"));
    CHECK(kg_marks_count(m) == 2);
    CHECK(kg_marks_save(m, path) == 0);
    CHECK(kg_file_read(&after, &la, path) == 0);
    CHECK(before && after && la == lb && memcmp(before, after, la) == 0);
    kg_marks *back = NULL;
    CHECK(kg_marks_load(&back, path) == 0 && kg_marks_count(back) == 2);
    kg_marks_free(back);
    kg_marks_free(m);
    cJSON_free(t);
    cJSON_Delete(r);
    free(before);
    free(after);
    unlink(path);
    unlink(nul);
    rmdir(dir);
}

/* issue #25: the optional measured time and energy per launch. A mark without them (before)
 * loads and saves without them; with them they round-trip; bad values are refused naming the
 * field; a merge takes the union of the intervals, and a side without them the other's. */
static void test_pay_fields(void)
{
    cJSON *r = valid_root();
    char *t, *out = NULL;
    kg_marks *m = NULL;
    const kg_mark *k;
    cJSON_AddNumberToObject(entry(r, 0), "measured_median_us", 1300.0);
    cJSON_AddNumberToObject(entry(r, 0), "measured_spread_rel", 0.01);
    cJSON_AddNumberToObject(entry(r, 0), "energy_per_launch_mj", 700.0);
    cJSON_AddNumberToObject(entry(r, 0), "energy_spread_rel", 0.02);
    t = cJSON_Print(r);
    CHECK(kg_marks_parse(&m, t, "marks.json") == 0 && m);
    k = m ? kg_marks_find(m, "NVIDIA H200/sm_90", "softmax/rows=1,cols=1/f32", "time_us_warm")
          : NULL;
    CHECK(k && k->measured_median_us == 1300.0 && k->measured_spread_rel == 0.01 &&
          k->energy_per_launch_mj == 700.0 && k->energy_spread_rel == 0.02);
    k = m ? kg_marks_find(m, "NVIDIA H200/sm_90", "axpy/n=33554433/f32", "time_us_warm") : NULL;
    CHECK(k && k->measured_median_us == 0 && k->energy_per_launch_mj == 0); /* an old mark */
    CHECK(m && kg_marks_serialize(&out, m) == 0 && out);
    CHECK(out && strstr(out, "\"measured_median_us\":\t1300") &&
          strstr(out, "\"energy_spread_rel\":\t0.02"));
    /* the old mark stays without them: exactly one of each */
    int seen = 0;
    for (const char *q = out; q && (q = strstr(q, "measured_median_us")); q++)
        seen++;
    CHECK_MSG(seen == 1, "measured_median_us written %d times", seen);
    /* merge: union of [1300 x (1 -+ 0.01)] and [1400 x (1 -+ 0.01)] = [1287, 1414] */
    kg_mark run = { "NVIDIA H200/sm_90",
                    "softmax/rows=1,cols=1/f32",
                    "time_us_warm",
                    KG_LOWER_IS_BETTER,
                    3.25,
                    0.001,
                    3.25,
                    3.24,
                    3.26,
                    30,
                    "abc",
                    "2026-11-30T12:00:00Z",
                    "run",
                    "13.0",
                    "13.0",
                    "test",
                    1,
                    0,
                    0,
                    NULL,
                    0,
                    NULL,
                    1400.0,
                    0.01,
                    0,
                    0 };
    CHECK(m && kg_marks_merge(m, &run) == 0);
    k = m ? kg_marks_find(m, run.device_class, run.case_id, run.metric) : NULL;
    CHECK_MSG(k && fabs(k->measured_median_us - 1350.5) < 1e-9 &&
                  fabs(k->measured_spread_rel - 63.5 / 1350.5) < 1e-12,
              "merged measured %g spread %g", k ? k->measured_median_us : -1,
              k ? k->measured_spread_rel : -1);
    CHECK(k && k->energy_per_launch_mj == 700.0 && k->energy_spread_rel == 0.02); /* kept */
    /* an old mark merged with a run that has them: the run's */
    run.case_id = "axpy/n=33554433/f32";
    run.value = run.run_median = 545.0;
    run.ci_lo = 544.0;
    run.ci_hi = 546.0;
    run.energy_per_launch_mj = 50.0;
    run.energy_spread_rel = 0.03;
    CHECK(m && kg_marks_merge(m, &run) == 0);
    k = m ? kg_marks_find(m, run.device_class, run.case_id, run.metric) : NULL;
    CHECK(k && k->measured_median_us == 1400.0 && k->energy_per_launch_mj == 50.0 &&
          k->energy_spread_rel == 0.03);
    free(out);
    cJSON_free(t);
    cJSON_Delete(r);
    kg_marks_free(m);
    /* bad values: named */
    r = valid_root();
    cJSON_AddNumberToObject(entry(r, 0), "measured_median_us", -1);
    expect_error("measured negative", r, "'measured_median_us'", NULL);
    r = valid_root();
    cJSON_AddNumberToObject(entry(r, 0), "energy_spread_rel", 1.5);
    expect_error("energy spread > 0.999", r, "'energy_spread_rel'", NULL);
    r = valid_root();
    cJSON_AddStringToObject(entry(r, 0), "energy_per_launch_mj", "700");
    expect_error("energy string", r, "'energy_per_launch_mj'", "number");
    kg_mark bad = { "GPU/sm_90",
                    "c",
                    "time_us_warm",
                    KG_LOWER_IS_BETTER,
                    1.0,
                    0.001,
                    1.0,
                    0.9,
                    1.1,
                    30,
                    "abc",
                    "2026-11-30T12:00:00Z",
                    "run",
                    "13.0",
                    "13.0",
                    "test",
                    0,
                    0,
                    0,
                    NULL,
                    0,
                    NULL,
                    0,
                    0.01,
                    0,
                    0 };
    CHECK(kg_mark_validate(&bad, "put") == KG_EPARSE &&
          strstr(kg_error_last(), "'measured_spread_rel' needs 'measured_median_us'"));
}

int main(void)
{
    test_bytes_and_keys();
    test_valid_roundtrip();
    test_merge();
    test_k_state();
    test_k_state_errors();
    test_schema_errors();
    test_schema_fields();
    test_schema_values();
    test_files();
    test_pay_fields();
    return kg_test_done("test_marks");
}
