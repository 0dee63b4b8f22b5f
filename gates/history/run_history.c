/* The run history records (run_history.h): from an untrusted report, to and from JSON Lines,
 * merged and bounded. The git side (append, load) is run_history_git.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/report_keys.h"
#include "history/run_history.h"

void kg_history_recs_free(kg_history_recs *r)
{
    free(r->v);
    memset(r, 0, sizeof *r);
}

int kg_history_recs_push(kg_history_recs *r, const kg_history_rec *rec)
{
    if (r->n == r->cap) {
        size_t nc = r->cap ? r->cap * 2 : 64;
        kg_history_rec *nv = realloc(r->v, nc * sizeof *nv);
        if (!nv)
            return KG_ERR(KG_ENOMEM, "out of memory (%zu history records)", r->n);
        r->v = nv;
        r->cap = nc;
    }
    r->v[r->n++] = *rec;
    return 0;
}

/* ---- validation: every string and number a record holds ------------------------------------ */

/* A string field into dst: present, 1..cap-1 bytes, no control character (C0, DEL, C1). */
static int rh_text(char *dst, size_t cap, const cJSON *o, const char *key, const char *where,
                   bool required)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    dst[0] = '\0';
    if (!v || cJSON_IsNull(v)) {
        if (required)
            return KG_ERR(KG_EPARSE, "%s: '%s' is missing", where, key);
        return 0;
    }
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return KG_ERR(KG_EPARSE, "%s: '%s' must be a non-empty string", where, key);
    const unsigned char *s = (const unsigned char *)v->valuestring;
    size_t n = strlen(v->valuestring);
    if (n >= cap)
        return KG_ERR(KG_EPARSE, "%s: '%s' is %zu bytes, over the limit of %zu", where, key, n,
                      cap - 1);
    for (size_t i = 0; i < n; i++)
        if (s[i] < 0x20 || s[i] == 0x7f || (s[i] == 0xC2 && s[i + 1] >= 0x80 && s[i + 1] <= 0x9F))
            return KG_ERR(KG_EPARSE, "%s: '%s' has a control character at byte %zu", where, key, i);
    memcpy(dst, s, n + 1);
    return 0;
}

/* A finite number >= 0 (required), or *out = dflt when absent and not required. */
static int rh_num(double *out, const cJSON *o, const char *key, const char *where, bool required,
                  double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *out = dflt;
    if (!v || cJSON_IsNull(v)) {
        if (required)
            return KG_ERR(KG_EPARSE, "%s: '%s' is missing", where, key);
        return 0;
    }
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 ||
        v->valuedouble > 1e15)
        return KG_ERR(KG_EPARSE, "%s: '%s' must be a finite number in [0, 1e15]", where, key);
    *out = v->valuedouble;
    return 0;
}

static bool rh_metric_ok(const char *m)
{
    for (const char *p = m; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return false;
    return *m != '\0';
}

/* YYYY-MM-DDTHH:MM:SSZ */
static bool rh_date_ok(const char *d)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
    if (strlen(d) != sizeof shape - 1)
        return false;
    for (size_t i = 0; shape[i]; i++)
        if (shape[i] == 'd' ? !(d[i] >= '0' && d[i] <= '9') : d[i] != shape[i])
            return false;
    return true;
}

static bool rh_commit_ok(const char *c)
{
    size_t n = strlen(c);
    if (strcmp(c, "unknown") == 0)
        return true;
    if (n < 7 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((c[i] >= '0' && c[i] <= '9') || (c[i] >= 'a' && c[i] <= 'f')))
            return false;
    return true;
}

/* The fields shared by a record and by the report's top level: checked once. */
static int rh_check(const kg_history_rec *r, const char *where)
{
    if (!rh_metric_ok(r->metric))
        return KG_ERR(KG_EPARSE, "%s: metric '%s' is not [a-z0-9_]+", where, r->metric);
    if (!rh_date_ok(r->date))
        return KG_ERR(KG_EPARSE, "%s: date '%s' is not YYYY-MM-DDTHH:MM:SSZ", where, r->date);
    if (!rh_commit_ok(r->commit))
        return KG_ERR(KG_EPARSE, "%s: commit '%s' is neither a hex id nor \"unknown\"", where,
                      r->commit);
    if (strcmp(r->mode, KG_RV_MODE_PRODUCTION) != 0 && strcmp(r->mode, KG_RV_MODE_DIAGNOSTIC) != 0)
        return KG_ERR(KG_EPARSE, "%s: mode '%s' is neither production nor diagnostic", where,
                      r->mode);
    if (r->ci_lo > r->ci_hi)
        return KG_ERR(KG_EPARSE, "%s: the interval [%g, %g] is reversed", where, r->ci_lo,
                      r->ci_hi);
    if (r->samples < 0 || r->samples > 2000000000L || r->k < 0 || r->k > 1000000000L)
        return KG_ERR(KG_EPARSE, "%s: samples or k out of range", where);
    return 0;
}

/* ---- from a report -------------------------------------------------------------------------- */

typedef struct {
    kg_history_rec top; /* the report-level fields every record shares */
    const char *path;
    const cJSON *parts; /* a merged report's shard.parts: each case's own GPU */
} rh_report;

/* The GPU a case ran on in a merged report: its part's (shard.parts[].cases). */
static void rh_part_gpu(kg_history_rec *r, const rh_report *t)
{
    const cJSON *p, *c;
    cJSON_ArrayForEach(p, t->parts)
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(p, KG_RK_SHARD_CASES))
            if (cJSON_IsString(c) && strcmp(c->valuestring, r->case_id) == 0) {
                const char *u = cJSON_GetStringValue(
                    cJSON_GetObjectItemCaseSensitive(p, KG_RK_SHARD_PART_DEVICE_UUID));
                const char *sn = cJSON_GetStringValue(
                    cJSON_GetObjectItemCaseSensitive(p, KG_RK_SHARD_PART_DEVICE_SERIAL));
                snprintf(r->gpu_uuid, sizeof r->gpu_uuid, "%s", u ? u : "");
                snprintf(r->gpu_serial, sizeof r->gpu_serial, "%s", sn ? sn : "");
                return;
            }
}

static int rh_top(rh_report *t, const cJSON *root, bool *has_device)
{
    int rc = 0;
    const char *p = t->path;
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, KG_RK_SCHEMA);
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(root, KG_RK_DEVICE);
    const cJSON *prov = cJSON_GetObjectItemCaseSensitive(root, KG_RK_PROVENANCE);
    char where[1200];
    if (!cJSON_IsObject(root) || !cJSON_IsString(s) || strcmp(s->valuestring, KG_RV_SCHEMA) != 0)
        return KG_ERR(KG_EPARSE,
                      "%s: not a kgate report ('" KG_RK_SCHEMA "' is not \"" KG_RV_SCHEMA "\")", p);
    KG_TRY(rh_text(t->top.mode, sizeof t->top.mode, root, KG_RK_MODE, p, true));
    KG_TRY(rh_text(t->top.run_id, sizeof t->top.run_id, root, KG_RK_RUN_ID, p, true));
    KG_TRY(rh_text(t->top.date, sizeof t->top.date, root, KG_RK_STARTED_AT, p, true));
    snprintf(where, sizeof where, "%s: " KG_RK_PROVENANCE, p);
    if (!cJSON_IsObject(prov))
        return KG_ERR(KG_EPARSE, "%s: '" KG_RK_PROVENANCE "' is missing", p);
    KG_TRY(rh_text(t->top.commit, sizeof t->top.commit, prov, KG_RK_PROV_COMMIT, where, true));
    *has_device = cJSON_IsObject(dev);
    if (*has_device) {
        snprintf(where, sizeof where, "%s: " KG_RK_DEVICE, p);
        KG_TRY(rh_text(t->top.device_class, sizeof t->top.device_class, dev, KG_RK_DEVICE_CLASS,
                       where, true));
        KG_TRY(
            rh_text(t->top.gpu_uuid, sizeof t->top.gpu_uuid, dev, KG_RK_DEVICE_UUID, where, false));
        if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(dev, KG_RK_DEVICE_SERIAL)))
            KG_TRY(rh_text(t->top.gpu_serial, sizeof t->top.gpu_serial, dev, KG_RK_DEVICE_SERIAL,
                           where, false));
    }
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(root, KG_RK_SHARD);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sh, KG_RK_SHARD_MERGED)))
        t->parts = cJSON_GetObjectItemCaseSensitive(sh, KG_RK_SHARD_PARTS);
cleanup:
    return rc;
}

/* Issue #14's power state: the decided one (figures.run_power_state: the label and, for a
 * row decided on clock-normalised time, ":clock-normalised", so the two bases are never one
 * series), else figures.power_state.label (or a plain string there); absent, none. */
static int rh_power_state(kg_history_rec *r, const cJSON *fig, const char *where)
{
    r->power_state[0] = '\0';
    if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(fig, KG_FIG_RUN_POWER_STATE)))
        return rh_text(r->power_state, sizeof r->power_state, fig, KG_FIG_RUN_POWER_STATE, where,
                       false);
#ifdef KG_FIG_POWER_STATE
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(fig, KG_FIG_POWER_STATE);
#ifdef KG_FIG_POWER_LABEL
    if (cJSON_IsObject(ps)) {
        char w[1300];
        snprintf(w, sizeof w, "%s: " KG_FIG_POWER_STATE, where);
        return rh_text(r->power_state, sizeof r->power_state, ps, KG_FIG_POWER_LABEL, w, false);
    }
#endif
    if (ps && !cJSON_IsNull(ps))
        return rh_text(r->power_state, sizeof r->power_state, fig, KG_FIG_POWER_STATE, where,
                       false);
#else
    KG_UNUSED(fig);
    KG_UNUSED(where);
#endif
    return 0;
}

/* One bench row: 1 when it holds a measurement (added), 0 when it does not (skipped). */
static int rh_row(kg_history_rec *r, const rh_report *t, const cJSON *row, size_t i)
{
    int rc = 0;
    char where[1200];
    double samples = 0, k = 0;
    const cJSON *fig = cJSON_GetObjectItemCaseSensitive(row, KG_RES_FIGURES);
    *r = t->top;
    snprintf(where, sizeof where, "%s: " KG_RK_RESULTS "[%zu]", t->path, i);
    KG_TRY(rh_text(r->case_id, sizeof r->case_id, row, KG_RES_CASE, where, true));
    if (t->parts)
        rh_part_gpu(r, t);
    if (!cJSON_IsObject(fig) || !cJSON_GetObjectItemCaseSensitive(fig, KG_FIG_MEDIAN))
        return 0; /* SKIP, ERROR: nothing measured */
    KG_TRY(rh_text(r->metric, sizeof r->metric, fig, KG_FIG_METRIC, where, true));
    KG_TRY(rh_text(r->decision, sizeof r->decision, fig, KG_FIG_DECISION, where, false));
    KG_TRY(rh_num(&r->median, fig, KG_FIG_MEDIAN, where, true, 0));
    KG_TRY(rh_num(&r->ci_lo, fig, KG_FIG_CI_LO, where, true, 0));
    KG_TRY(rh_num(&r->ci_hi, fig, KG_FIG_CI_HI, where, true, 0));
    KG_TRY(rh_num(&samples, fig, KG_FIG_SAMPLES, where, false, 0));
    KG_TRY(rh_num(&k, fig, KG_FIG_LAUNCHES_PER_SAMPLE, where, false, 0));
    KG_TRY(rh_power_state(r, fig, where));
    const cJSON *mk = cJSON_GetObjectItemCaseSensitive(fig, KG_FIG_MARK);
    r->mark = -1;
    if (cJSON_IsObject(mk))
        KG_TRY(rh_num(&r->mark, mk, KG_FIG_MARK_VALUE, where, false, -1));
    r->samples = (long)samples;
    r->k = (long)k;
    KG_TRY(rh_check(r, where));
    rc = 1;
cleanup:
    return rc;
}

static int rh_rows(kg_history_recs *out, const rh_report *t, const cJSON *results,
                   size_t *n_skipped)
{
    int rc = 0;
    size_t i = 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, results) {
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(row, KG_RES_GATE);
        if (cJSON_IsString(g) && strcmp(g->valuestring, KG_RV_GATE_BENCH) == 0) {
            kg_history_rec r;
            int got;
            KG_TRY(got = rh_row(&r, t, row, i));
            if (got && out->n >= KG_HISTORY_MAX_ROWS) {
                rc = KG_ERR(KG_EINVAL, "%s: more than %d bench rows: refused", t->path,
                            KG_HISTORY_MAX_ROWS);
                goto cleanup;
            }
            if (got)
                KG_TRY(kg_history_recs_push(out, &r));
            else
                (*n_skipped)++;
        }
        i++;
    }
cleanup:
    return rc;
}

int kg_history_from_report(kg_history_recs *out, const char *path, size_t *n_skipped)
{
    int rc = 0;
    cJSON *root = NULL;
    bool has_device = false;
    rh_report t = { .path = path };
    memset(out, 0, sizeof *out);
    *n_skipped = 0;
    KG_TRY(kg_json_load(&root, path));
    KG_TRY(rh_top(&t, root, &has_device));
    if (strcmp(t.top.mode, KG_RV_MODE_PRODUCTION) == 0 && kg_report_key())
        KG_TRY(kg_report_json_verify(root, kg_report_key(), path));
    const cJSON *results = cJSON_GetObjectItemCaseSensitive(root, KG_RK_RESULTS);
    if (!cJSON_IsArray(results)) {
        rc = KG_ERR(KG_EPARSE, "%s: '" KG_RK_RESULTS "' must be an array", path);
        goto cleanup;
    }
    if (has_device)
        KG_TRY(rh_rows(out, &t, results, n_skipped));
cleanup:
    if (rc < 0)
        kg_history_recs_free(out);
    cJSON_Delete(root);
    return rc;
}

/* ---- JSON Lines ----------------------------------------------------------------------------- */

/* Every field or none: a record missing one (out of memory mid-way) would be committed and
 * then refused by every later load of the file. */
int kg_history_rec_json(char **out, const kg_history_rec *r)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL;
    *out = NULL;
    ok = ok && cJSON_AddStringToObject(o, KG_HK_CASE, r->case_id);
    ok = ok && cJSON_AddStringToObject(o, KG_HK_DEVICE, r->device_class);
    ok = ok && cJSON_AddStringToObject(o, KG_HK_METRIC, r->metric);
    ok = ok && cJSON_AddNumberToObject(o, KG_HK_MEDIAN, r->median);
    ok = ok && cJSON_AddNumberToObject(o, KG_HK_CI_LO, r->ci_lo);
    ok = ok && cJSON_AddNumberToObject(o, KG_HK_CI_HI, r->ci_hi);
    ok = ok && cJSON_AddNumberToObject(o, KG_HK_SAMPLES, (double)r->samples);
    if (r->power_state[0])
        ok = ok && cJSON_AddStringToObject(o, KG_HK_POWER_STATE, r->power_state);
    if (r->k > 0)
        ok = ok && cJSON_AddNumberToObject(o, KG_HK_K, (double)r->k);
    ok = ok && cJSON_AddStringToObject(o, KG_HK_COMMIT, r->commit);
    ok = ok && cJSON_AddStringToObject(o, KG_HK_RUN_ID, r->run_id);
    ok = ok && cJSON_AddStringToObject(o, KG_HK_DATE, r->date);
    ok = ok && cJSON_AddStringToObject(o, KG_HK_MODE, r->mode);
    if (r->decision[0])
        ok = ok && cJSON_AddStringToObject(o, KG_HK_DECISION, r->decision);
    if (r->mark >= 0)
        ok = ok && cJSON_AddNumberToObject(o, KG_HK_MARK, r->mark);
    else
        ok = ok && cJSON_AddNullToObject(o, KG_HK_MARK);
    if (r->gpu_uuid[0])
        ok = ok && cJSON_AddStringToObject(o, KG_HK_GPU_UUID, r->gpu_uuid);
    if (r->gpu_serial[0])
        ok = ok && cJSON_AddStringToObject(o, KG_HK_GPU_SERIAL, r->gpu_serial);
    if (ok)
        *out = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return *out ? 0 : KG_ERR(KG_ENOMEM, "out of memory writing a history record of %s", r->case_id);
}

int kg_history_rec_parse(kg_history_rec *r, const char *line, size_t len, const char *name)
{
    int rc = 0;
    cJSON *o = NULL;
    double samples = 0, k = 0;
    char *copy = NULL;
    memset(r, 0, sizeof *r);
    if (len > 65536) /* a record is a few hundred bytes */
        return KG_ERR(KG_EPARSE, "%s: a %zu-byte line, not a record", name, len);
    if (!(copy = malloc(len + 1)))
        return KG_ERR(KG_ENOMEM, "out of memory");
    memcpy(copy, line, len);
    copy[len] = '\0';
    KG_TRY(kg_json_parse_strict(&o, copy, len, name)); /* a NUL inside is refused there */
    if (!cJSON_IsObject(o)) {
        rc = KG_ERR(KG_EPARSE, "%s: not an object", name);
        goto cleanup;
    }
    KG_TRY(rh_text(r->case_id, sizeof r->case_id, o, KG_HK_CASE, name, true));
    KG_TRY(rh_text(r->device_class, sizeof r->device_class, o, KG_HK_DEVICE, name, true));
    KG_TRY(rh_text(r->metric, sizeof r->metric, o, KG_HK_METRIC, name, true));
    KG_TRY(rh_num(&r->median, o, KG_HK_MEDIAN, name, true, 0));
    KG_TRY(rh_num(&r->ci_lo, o, KG_HK_CI_LO, name, true, 0));
    KG_TRY(rh_num(&r->ci_hi, o, KG_HK_CI_HI, name, true, 0));
    KG_TRY(rh_num(&samples, o, KG_HK_SAMPLES, name, false, 0));
    KG_TRY(rh_text(r->power_state, sizeof r->power_state, o, KG_HK_POWER_STATE, name, false));
    KG_TRY(rh_num(&k, o, KG_HK_K, name, false, 0));
    KG_TRY(rh_text(r->commit, sizeof r->commit, o, KG_HK_COMMIT, name, true));
    KG_TRY(rh_text(r->run_id, sizeof r->run_id, o, KG_HK_RUN_ID, name, true));
    KG_TRY(rh_text(r->date, sizeof r->date, o, KG_HK_DATE, name, true));
    KG_TRY(rh_text(r->mode, sizeof r->mode, o, KG_HK_MODE, name, true));
    KG_TRY(rh_text(r->decision, sizeof r->decision, o, KG_HK_DECISION, name, false));
    KG_TRY(rh_num(&r->mark, o, KG_HK_MARK, name, false, -1));
    KG_TRY(rh_text(r->gpu_uuid, sizeof r->gpu_uuid, o, KG_HK_GPU_UUID, name, false));
    KG_TRY(rh_text(r->gpu_serial, sizeof r->gpu_serial, o, KG_HK_GPU_SERIAL, name, false));
    r->samples = (long)samples;
    r->k = (long)k;
    KG_TRY(rh_check(r, name));
cleanup:
    cJSON_Delete(o);
    free(copy);
    return rc;
}

void kg_history_file_of(char *buf, size_t n, const char *device_class)
{
    char slug[200];
    size_t j = 0;
    for (const char *p = device_class; *p && j + 1 < sizeof slug; p++) {
        char c = *p;
        bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '.';
        if (!keep && j > 0 && slug[j - 1] == '_')
            continue; /* one '_' for a run of others */
        slug[j++] = keep ? c : '_';
    }
    slug[j] = '\0';
    if (j == 0 || slug[0] == '.')
        snprintf(slug, sizeof slug, "device");
    snprintf(buf, n, KG_HISTORY_DIR "/%s.jsonl", slug);
}

/* ---- merge and bound ------------------------------------------------------------------------ */

static bool rh_same_key(const kg_history_rec *a, const kg_history_rec *b)
{
    return strcmp(a->case_id, b->case_id) == 0 && strcmp(a->metric, b->metric) == 0 &&
           strcmp(a->device_class, b->device_class) == 0;
}

/* The lines of a file; blank lines are allowed, anything else must be a record. */
static int rh_parse_text(kg_history_recs *out, const char *text, const char *name)
{
    int rc = 0;
    size_t line = 0;
    char where[1200];
    for (const char *p = text; p && *p;) {
        size_t n = strcspn(p, "\n");
        line++;
        if (n > 0) {
            kg_history_rec r;
            snprintf(where, sizeof where, "%s:%zu", name, line);
            KG_TRY(kg_history_rec_parse(&r, p, n, where));
            KG_TRY(kg_history_recs_push(out, &r));
        }
        p += n + (p[n] == '\n');
    }
cleanup:
    return rc;
}

/* Sort order of the bounding pass: by key, then date, then position (oldest first). */
typedef struct {
    const kg_history_rec *r;
    size_t pos;
} rh_ix;

/* By key (class, case, metric), then fx against fy (a field of each), then position. */
static int rh_key_cmp(const rh_ix *x, const rh_ix *y, const char *fx, const char *fy)
{
    int c = strcmp(x->r->device_class, y->r->device_class);
    if (!c)
        c = strcmp(x->r->case_id, y->r->case_id);
    if (!c)
        c = strcmp(x->r->metric, y->r->metric);
    if (!c)
        c = strcmp(fx, fy);
    return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

static int rh_ix_cmp(const void *a, const void *b)
{
    const rh_ix *x = a, *y = b;
    return rh_key_cmp(x, y, x->r->date, y->r->date);
}

/* drop[i]: record i is older than the newest `keep` of its key. */
static int rh_bound(bool *drop, const kg_history_recs *all, size_t keep)
{
    rh_ix *ix = malloc((all->n ? all->n : 1) * sizeof *ix);
    if (!ix)
        return KG_ERR(KG_ENOMEM, "out of memory");
    for (size_t i = 0; i < all->n; i++)
        ix[i] = (rh_ix){ &all->v[i], i };
    qsort(ix, all->n, sizeof *ix, rh_ix_cmp);
    for (size_t i = 0; i < all->n;) {
        size_t j = i;
        while (j < all->n && rh_same_key(ix[i].r, ix[j].r))
            j++;
        for (size_t m = i; j - i > keep && m < j - keep; m++)
            drop[ix[m].pos] = true;
        i = j;
    }
    free(ix);
    return 0;
}

/* Order of the duplicate pass: by key and run id, then position. */
static int rh_run_cmp(const void *a, const void *b)
{
    const rh_ix *x = a, *y = b;
    return rh_key_cmp(x, y, x->r->run_id, y->r->run_id);
}

/* The records from n_old on that the file (or an earlier one of them) holds already (same run
 * id, case, metric, class) are removed from `all`; the file's own lines stay as they are. One
 * sort (a flooded file of 100k records and a 10k-row report used to compare every
 * pair). */
static int rh_drop_known(kg_history_recs *all, size_t n_old)
{
    rh_ix *ix = malloc((all->n ? all->n : 1) * sizeof *ix);
    bool *dup = calloc(all->n ? all->n : 1, sizeof *dup);
    if (!ix || !dup) {
        free(ix);
        free(dup);
        return KG_ERR(KG_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < all->n; i++)
        ix[i] = (rh_ix){ &all->v[i], i };
    qsort(ix, all->n, sizeof *ix, rh_run_cmp);
    for (size_t i = 1; i < all->n; i++) /* sorted by position in a group: the first stays */
        if (rh_same_key(ix[i - 1].r, ix[i].r) && strcmp(ix[i - 1].r->run_id, ix[i].r->run_id) == 0)
            dup[ix[i].pos] = ix[i].pos >= n_old;
    size_t k = 0;
    for (size_t i = 0; i < all->n; i++)
        if (!dup[i])
            all->v[k++] = all->v[i];
    all->n = k;
    free(ix);
    free(dup);
    return 0;
}

/* A file kept under KG_HISTORY_MAX_FILE: its oldest lines (the file's first: appends go at its
 * end) left out, said once. */
static void rh_cap_size(char *buf, size_t *n, const char *name)
{
    if (*n <= KG_HISTORY_MAX_FILE)
        return;
    size_t cut = *n - KG_HISTORY_MAX_FILE, lines = 0;
    while (cut < *n && buf[cut - 1] != '\n')
        cut++;
    for (size_t i = 0; i < cut; i++)
        lines += buf[i] == '\n';
    fprintf(stderr,
            "history: %s would be %zu bytes, over the limit of %zu: its %zu oldest "
            "line(s) are left out (the branch's log keeps them)\n",
            name, *n, KG_HISTORY_MAX_FILE, lines);
    memmove(buf, buf + cut, *n - cut + 1);
    *n -= cut;
}

static int rh_serialize(char **out, const kg_history_recs *all, const bool *drop, const char *name)
{
    int rc = 0;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap), *line = NULL;
    if (!buf)
        return KG_ERR(KG_ENOMEM, "out of memory");
    buf[0] = '\0';
    for (size_t i = 0; i < all->n; i++) {
        if (drop[i])
            continue;
        KG_TRY(kg_history_rec_json(&line, &all->v[i]));
        size_t l = strlen(line);
        if (n + l + 2 > cap) {
            size_t nc = (n + l + 2) * 2;
            char *nb = realloc(buf, nc);
            if (!nb) {
                rc = KG_ERR(KG_ENOMEM, "out of memory");
                goto cleanup;
            }
            buf = nb;
            cap = nc;
        }
        memcpy(buf + n, line, l);
        n += l;
        buf[n++] = '\n';
        buf[n] = '\0';
        free(line);
        line = NULL;
    }
    rh_cap_size(buf, &n, name);
    *out = buf;
    buf = NULL;
cleanup:
    free(line);
    free(buf);
    return rc;
}

int kg_history_merge_text(char **out, size_t *added, const char *file_text,
                          const kg_history_recs *add, size_t keep, const char *name)
{
    int rc = 0;
    kg_history_recs all = { 0 };
    bool *drop = NULL;
    *out = NULL;
    *added = 0;
    KG_TRY(rh_parse_text(&all, file_text, name));
    size_t n_old = all.n;
    for (size_t i = 0; i < add->n; i++)
        KG_TRY(kg_history_recs_push(&all, &add->v[i]));
    KG_TRY(rh_drop_known(&all, n_old));
    if (!(drop = calloc(all.n ? all.n : 1, sizeof *drop))) {
        rc = KG_ERR(KG_ENOMEM, "out of memory");
        goto cleanup;
    }
    KG_TRY(rh_bound(drop, &all, keep ? keep : KG_HISTORY_KEEP));
    for (size_t i = n_old; i < all.n; i++)
        *added += !drop[i]; /* a record older than every kept one is not added */
    KG_TRY(rh_serialize(out, &all, drop, name));
cleanup:
    free(drop);
    kg_history_recs_free(&all);
    return rc;
}
