/* High-water marks: strict loading (every field checked, unknown and duplicate keys refused),
 * canonical saving (sorted by key, fixed field order), and the per-mark operations shared by
 * the bench gate and the production pipeline. See marks.h and baselines/high_water.schema.json. */
#define _GNU_SOURCE /* strptime */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include "marks/marks.h"

struct kg_marks {
    kg_mark *v;
    size_t n, cap;
    size_t *slot; /* open addressing over the key: index + 1, 0 = empty (linear-time loads) */
    size_t nslot; /* a power of two >= 2 * cap, or 0 */
};

#define KG_MARKS_MAX_STR 1024

int kg_marks_new(kg_marks **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? 0 : KG_ERR(KG_ENOMEM, "out of memory for marks");
}

void kg_mark_clear(kg_mark *mk)
{
    char **s[] = { &mk->device_class, &mk->case_id,  &mk->metric,    &mk->commit, &mk->date,
                   &mk->run_id,       &mk->driver,   &mk->cuda,      &mk->set_by, &mk->kernels,
                   &mk->power_state,  &mk->gpu_uuid, &mk->gpu_serial };
    for (size_t i = 0; i < KG_ARRAY_LEN(s); i++) {
        free(*s[i]);
        *s[i] = NULL;
    }
}

void kg_marks_free(kg_marks *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++)
        kg_mark_clear(&m->v[i]);
    free(m->v);
    free(m->slot);
    free(m);
}

size_t kg_marks_count(const kg_marks *m) { return m ? m->n : 0; }

const kg_mark *kg_marks_at(const kg_marks *m, size_t i)
{
    return (m && i < m->n) ? &m->v[i] : NULL;
}

static bool same_key(const kg_mark *a, const char *dc, const char *id, const char *metric)
{
    return strcmp(a->device_class, dc) == 0 && strcmp(a->case_id, id) == 0 &&
           strcmp(a->metric, metric) == 0;
}

static size_t key_hash(const char *dc, const char *id, const char *metric)
{
    size_t h = 1469598103934665603ULL;
    const char *parts[] = { dc, id, metric };
    for (size_t k = 0; k < 3; k++) {
        for (const char *p = parts[k]; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ULL;
        h = (h ^ 0xff) * 1099511628211ULL;
    }
    return h;
}

static ptrdiff_t find_index(const kg_marks *m, const char *dc, const char *id, const char *metric)
{
    if (!m || !m->nslot)
        return -1;
    for (size_t i = key_hash(dc, id, metric) & (m->nslot - 1);; i = (i + 1) & (m->nslot - 1)) {
        size_t s = m->slot[i];
        if (!s)
            return -1;
        if (same_key(&m->v[s - 1], dc, id, metric))
            return (ptrdiff_t)(s - 1);
    }
}

/* Rebuild the index for `cap` marks (after growth or a removal). */
static int index_rebuild(kg_marks *m, size_t cap)
{
    size_t ns = 16;
    while (ns < 2 * cap)
        ns *= 2;
    size_t *slot = calloc(ns, sizeof *slot);
    if (!slot)
        return KG_ERR(KG_ENOMEM, "out of memory indexing marks");
    free(m->slot);
    m->slot = slot;
    m->nslot = ns;
    for (size_t k = 0; k < m->n; k++) {
        const kg_mark *mk = &m->v[k];
        size_t i = key_hash(mk->device_class, mk->case_id, mk->metric) & (ns - 1);
        while (slot[i])
            i = (i + 1) & (ns - 1);
        slot[i] = k + 1;
    }
    return 0;
}

const kg_mark *kg_marks_find(const kg_marks *m, const char *device_class, const char *case_id,
                             const char *metric)
{
    ptrdiff_t i = find_index(m, device_class, case_id, metric);
    return i < 0 ? NULL : &m->v[i];
}

static int dup_str(char **dst, const char *src)
{
    *dst = NULL;
    if (!src)
        return 0;
    *dst = strdup(src);
    return *dst ? 0 : KG_ERR(KG_ENOMEM, "out of memory copying a mark");
}

/* Deep copy; on failure dst holds nothing. */
static int copy_mark(kg_mark *dst, const kg_mark *src)
{
    int rc = 0;
    *dst = *src;
    dst->device_class = dst->case_id = dst->metric = dst->commit = dst->date = NULL;
    dst->run_id = dst->driver = dst->cuda = dst->set_by = dst->kernels = NULL;
    dst->power_state = dst->gpu_uuid = dst->gpu_serial = NULL;
    KG_TRY(dup_str(&dst->device_class, src->device_class));
    KG_TRY(dup_str(&dst->case_id, src->case_id));
    KG_TRY(dup_str(&dst->metric, src->metric));
    KG_TRY(dup_str(&dst->commit, src->commit));
    KG_TRY(dup_str(&dst->date, src->date));
    KG_TRY(dup_str(&dst->run_id, src->run_id));
    KG_TRY(dup_str(&dst->driver, src->driver));
    KG_TRY(dup_str(&dst->cuda, src->cuda));
    KG_TRY(dup_str(&dst->set_by, src->set_by));
    KG_TRY(dup_str(&dst->kernels, src->kernels));
    KG_TRY(dup_str(&dst->power_state, src->power_state));
    KG_TRY(dup_str(&dst->gpu_uuid, src->gpu_uuid));
    KG_TRY(dup_str(&dst->gpu_serial, src->gpu_serial));
cleanup:
    if (rc < 0)
        kg_mark_clear(dst);
    return rc;
}

static const char *or_unknown(const char *s);

/* The mark as saving writes it (absent provenance is "unknown"), checked by kg_mark_validate. */
static int put_check(const kg_mark *mk)
{
    kg_mark v = *mk;
    v.commit = (char *)or_unknown(mk->commit);
    v.run_id = (char *)or_unknown(mk->run_id);
    v.driver = (char *)or_unknown(mk->driver);
    v.cuda = (char *)or_unknown(mk->cuda);
    v.set_by = (char *)or_unknown(mk->set_by);
    if (!v.date) /* saving checks it again (it writes "unknown", which it refuses) */
        v.date = "1970-01-01T00:00:00Z";
    return kg_mark_validate(&v, NULL);
}

int kg_marks_put(kg_marks *m, const kg_mark *mk)
{
    int rc = 0;
    kg_mark c;
    if (!m || !mk || !mk->device_class || !mk->case_id || !mk->metric)
        return KG_ERR(KG_EINVAL, "kg_marks_put: a mark needs device_class, case_id and metric");
    KG_TRY(put_check(mk));
    KG_TRY(copy_mark(&c, mk));
    ptrdiff_t i = find_index(m, mk->device_class, mk->case_id, mk->metric);
    if (i >= 0) {
        kg_mark_clear(&m->v[i]);
        m->v[i] = c;
        return 0;
    }
    if (m->n == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 16;
        kg_mark *nv = realloc(m->v, nc * sizeof *nv);
        if (!nv) {
            kg_mark_clear(&c);
            return KG_ERR(KG_ENOMEM, "out of memory adding a mark");
        }
        m->v = nv;
        m->cap = nc;
    }
    m->v[m->n++] = c;
    if (m->nslot < 2 * m->n) {
        KG_TRY(index_rebuild(m, m->cap));
    } else {
        size_t j = key_hash(c.device_class, c.case_id, c.metric) & (m->nslot - 1);
        while (m->slot[j])
            j = (j + 1) & (m->nslot - 1);
        m->slot[j] = m->n;
    }
cleanup:
    return rc;
}

int kg_marks_remove(kg_marks *m, const char *device_class, const char *case_id, const char *metric)
{
    ptrdiff_t i = find_index(m, device_class, case_id, metric);
    if (i < 0)
        return KG_ERR(KG_ENOTFOUND, "no mark for %s / %s / %s", device_class, case_id, metric);
    kg_mark_clear(&m->v[i]);
    memmove(&m->v[i], &m->v[i + 1], (m->n - (size_t)i - 1) * sizeof *m->v);
    m->n--;
    return index_rebuild(m, m->cap);
}

bool kg_mark_better(const kg_mark *cand, const kg_mark *cur)
{
    return cand->direction == KG_LOWER_IS_BETTER ? cand->value < cur->value
                                                 : cand->value > cur->value;
}

static bool mk_state_known(const char *s) { return s && *s && strcmp(s, "unknown") != 0; }

/* Runs of another k or power state measure something else: merging them would widen the band
 * with a difference that is not noise. KG_ECONFLICT naming the mark and both values (a caller
 * merging many rows may skip that one mark and say so). */
static int mk_merge_check(const kg_mark *cur, const kg_mark *run)
{
    if (cur->k > 0 && run->k > 0 && cur->k != run->k)
        return KG_ERR(KG_ECONFLICT,
                      "mark %s / %s / %s: this run timed k=%d launches per replay, "
                      "the mark k=%d: not merged (time the run against this mark "
                      "with --marks so it reuses k, or pin --launches %d)",
                      run->device_class, run->case_id, run->metric, run->k, cur->k, cur->k);
    if (mk_state_known(cur->power_state) && mk_state_known(run->power_state) &&
        strcmp(cur->power_state, run->power_state) != 0)
        return KG_ERR(KG_ECONFLICT,
                      "mark %s / %s / %s: this run was measured %s, the mark %s: "
                      "not merged (runs of different power states are not one "
                      "spread)",
                      run->device_class, run->case_id, run->metric, run->power_state,
                      cur->power_state);
    return 0;
}

/* One figure and its spread merged: the union of the intervals [v(1-s), v(1+s)] of the mark
 * and the run (a spread never narrows); the value its centre. One side without it (a mark
 * from before these figures, a run without NVML energy): the other side's. */
static void mk_merge_interval(double *v, double *s, double cv, double cs, double rv, double rs)
{
    if (!(cv > 0) || !(rv > 0)) {
        *v = cv > 0 ? cv : rv > 0 ? rv : 0;
        *s = cv > 0 ? cs : rv > 0 ? rs : 0;
        return;
    }
    double lo = fmin(cv * (1 - cs), rv * (1 - rs)), hi = fmax(cv * (1 + cs), rv * (1 + rs));
    *v = (lo + hi) / 2;
    *s = fmin((hi - lo) / (hi + lo), 0.999);
}

/* The measured time and the energy per launch of a merge. */
static void mk_merge_power(kg_mark *mk, const kg_mark *cur, const kg_mark *run)
{
    mk_merge_interval(&mk->measured_median_us, &mk->measured_spread_rel, cur->measured_median_us,
                      cur->measured_spread_rel, run->measured_median_us, run->measured_spread_rel);
    mk_merge_interval(&mk->energy_per_launch_mj, &mk->energy_spread_rel, cur->energy_per_launch_mj,
                      cur->energy_spread_rel, run->energy_per_launch_mj, run->energy_spread_rel);
}

int kg_marks_merge(kg_marks *m, const kg_mark *run)
{
    int rc = 0;
    const kg_mark *cur = kg_marks_find(m, run->device_class, run->case_id, run->metric);
    kg_mark mk = *run;
    double rlo = run->env_lo > 0 ? run->env_lo : run->run_median;
    double rhi = run->env_hi > 0 ? run->env_hi : run->run_median;
    double half = run->run_median > 0 ? (run->ci_hi - run->ci_lo) / (2.0 * run->run_median) : 0;
    mk.runs = run->runs > 0 ? run->runs : 1;
    mk.env_lo = rlo;
    mk.env_hi = rhi;
    if (cur) {
        if (cur->direction != run->direction)
            return KG_ERR(KG_EINVAL, "mark %s / %s / %s: direction differs from the run's",
                          run->device_class, run->case_id, run->metric);
        KG_TRY(mk_merge_check(cur, run));
        if (cur->k > 0)
            mk.k = cur->k;
        if (mk_state_known(cur->power_state))
            mk.power_state = cur->power_state; /* kg_marks_put copies it before replacing cur */
        int r0 = cur->runs > 0 ? cur->runs : 1;
        double clo = cur->env_lo > 0 ? cur->env_lo : cur->run_median;
        double chi = cur->env_hi > 0 ? cur->env_hi : cur->run_median;
        double chalf = cur->value > 0 ? (cur->ci_hi - cur->ci_lo) / (2.0 * cur->value) : 0;
        mk.runs = r0 + mk.runs;
        mk.env_lo = fmin(clo, rlo);
        mk.env_hi = fmax(chi, rhi);
        mk.ci_lo = fmin(cur->ci_lo, run->ci_lo);
        mk.ci_hi = fmax(cur->ci_hi, run->ci_hi);
        half = fmax(half, chalf);
        mk_merge_power(&mk, cur, run);
    }
    mk.value = (mk.env_lo + mk.env_hi) / 2.0;
    if (mk.ci_lo > mk.value)
        mk.ci_lo = mk.value;
    if (mk.ci_hi < mk.value)
        mk.ci_hi = mk.value;
    /* r process medians under-sample the cross-process range: (r+1)/(r-1) times the observed
     * range is the unbiased estimate of a uniform spread's full range. */
    double env_half = (mk.env_hi - mk.env_lo) / (2.0 * mk.value);
    double k = mk.runs >= 2 ? (double)(mk.runs + 1) / (double)(mk.runs - 1) : 1.0;
    mk.band_rel = fmax(half, k * env_half);
    if (mk.band_rel >= 1.0)
        mk.band_rel = 0.999;
    KG_TRY(kg_marks_put(m, &mk));
cleanup:
    return rc;
}

/* ---- loading ---------------------------------------------------------------------------- */

typedef struct {
    const char *name; /* file name for messages */
    char where[600];  /* "marks[3] (class / case / metric)" */
} pctx;

#define PERR(pc, ...) perr_((pc), __FILE__, __LINE__, __VA_ARGS__)
static int perr_(const pctx *pc, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int perr_(const pctx *pc, const char *file, int line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return kg_error_set(KG_EPARSE, file, line, "%s: %s%s%s (nothing was changed)", pc->name,
                        pc->where, pc->where[0] ? ": " : "", msg);
}

/* Refuse keys outside `allowed` and keys given twice (cJSON keeps both; the first would win
 * silently). */
static int check_keys(const pctx *pc, const cJSON *obj, const char *const *allowed, size_t na)
{
    const cJSON *it, *jt;
    cJSON_ArrayForEach(it, obj) {
        bool ok = false;
        for (size_t i = 0; i < na && !ok; i++)
            ok = strcmp(it->string, allowed[i]) == 0;
        if (!ok)
            return PERR(pc, "unknown field '%s'", it->string);
        for (jt = it->next; jt; jt = jt->next)
            if (strcmp(it->string, jt->string) == 0)
                return PERR(pc, "field '%s' appears twice", it->string);
    }
    return 0;
}

static int get_str(const pctx *pc, const cJSON *obj, const char *key, bool required,
                   const char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = NULL;
    if (!v)
        return required ? PERR(pc, "missing field '%s'", key) : 0;
    if (!cJSON_IsString(v) || !v->valuestring)
        return PERR(pc, "field '%s' must be a string", key);
    size_t len = strlen(v->valuestring);
    if (len == 0 || len > KG_MARKS_MAX_STR)
        return PERR(pc, "field '%s' must be a non-empty string of at most %d bytes", key,
                    KG_MARKS_MAX_STR);
    for (const char *p = v->valuestring; *p; p++)
        if ((unsigned char)*p < 0x20)
            return PERR(pc, "field '%s' contains a control character", key);
    *out = v->valuestring;
    return 0;
}

/* A finite number in [lo, hi] (strictly above lo when lo_open). */
static int get_num(const pctx *pc, const cJSON *obj, const char *key, bool required, double lo,
                   bool lo_open, double hi, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) {
        if (required)
            return PERR(pc, "missing field '%s'", key);
        *out = 0;
        return 0;
    }
    if (!cJSON_IsNumber(v))
        return PERR(pc, "field '%s' must be a number", key);
    double d = v->valuedouble;
    if (!isfinite(d))
        return PERR(pc, "field '%s' must be finite, got %g", key, d);
    if (lo_open ? !(d > lo) : !(d >= lo))
        return PERR(pc, "field '%s' must be %s %g, got %.17g", key, lo_open ? ">" : ">=", lo, d);
    if (d > hi)
        return PERR(pc, "field '%s' must be <= %g, got %.17g", key, hi, d);
    *out = d;
    return 0;
}

static int get_int(const pctx *pc, const cJSON *obj, const char *key, bool required, int lo,
                   int *out)
{
    double d = 0;
    int rc = get_num(pc, obj, key, required, lo, false, 2e9, &d);
    if (rc < 0)
        return rc;
    if (d != floor(d))
        return PERR(pc, "field '%s' must be an integer, got %.17g", key, d);
    *out = (int)d;
    return 0;
}

static bool iso_utc(const char *s)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return end && *end == '\0' && strlen(s) == 20;
}

/* The one validation of a mark: what loading accepts, and what kg_marks_put, saving and
 * committing insist on, so kgate never writes a mark it would refuse to read back. */
static int mk_str(const pctx *pc, const char *field, const char *v, bool required)
{
    if (!v)
        return required ? PERR(pc, "missing field '%s'", field) : 0;
    size_t len = strlen(v);
    if (len == 0 || len > KG_MARKS_MAX_STR)
        return PERR(pc, "field '%s' must be a non-empty string of at most %d bytes", field,
                    KG_MARKS_MAX_STR);
    for (const unsigned char *p = (const unsigned char *)v; *p; p++)
        if (*p < 0x20 || *p == 0x7f || (p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F))
            return PERR(pc, "field '%s' contains a control character (byte %zu)", field,
                        (size_t)(p - (const unsigned char *)v));
    size_t bad = kg_utf8_bad(v, len);
    if (bad != (size_t)-1)
        return PERR(pc, "field '%s' is not valid UTF-8 (byte %zu)", field, bad);
    if (isspace((unsigned char)v[0]) || isspace((unsigned char)v[len - 1]))
        return PERR(pc,
                    "field '%s' starts or ends with white space (a blank or padded name is "
                    "no key)",
                    field);
    return 0;
}

/* A case id as the registry accepts one (registry.c): printable ASCII, no space, quote or
 * backslash. */
static int mk_case_id(const pctx *pc, const char *id)
{
    for (const char *p = id; *p; p++)
        if (*p <= ' ' || *p == '"' || *p == '\\' || (unsigned char)*p >= 0x7f)
            return PERR(pc,
                        "field 'case' must be a case id (printable ASCII without space, "
                        "quote or backslash), byte %zu is not",
                        (size_t)(p - id));
    return 0;
}

/* k (launches per timed replay) and power_state (a label such as "full-clock"), both optional
 * (0 / NULL: unknown, as in older marks). The label is the bench engine's
 * (kg_power_label): "full-clock", "power-capped", "thermal", "other:<reason>+<reason>". */
static int mk_k_state(const pctx *pc, const kg_mark *t)
{
    int rc = 0;
    if (t->k < 0 || t->k > KG_MARK_MAX_K)
        return PERR(pc,
                    "field 'k' must be an integer in [1, %d] (launches per timed replay), "
                    "got %d",
                    KG_MARK_MAX_K, t->k);
    KG_TRY(mk_str(pc, "power_state", t->power_state, false));
    if (t->power_state && strlen(t->power_state) > KG_MARK_MAX_STATE)
        return PERR(pc, "field 'power_state' must be at most %d bytes, got '%.70s...'",
                    KG_MARK_MAX_STATE, t->power_state);
    for (const char *p = t->power_state; p && *p; p++)
        if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || strchr("-_:+.", *p)))
            return PERR(pc,
                        "field 'power_state' must match [a-z0-9_:+.-]+ (a label such as "
                        "\"full-clock\" or \"other:hw_slowdown+sync_boost\"), got '%s'",
                        t->power_state);
cleanup:
    return rc;
}

/* The measured time and energy per launch with their spreads, optional: a value
 * finite and > 0 with a spread in [0, 0.999], or both absent (0). */
static int mk_power_figures(const pctx *pc, const kg_mark *t)
{
    const double v[] = { t->measured_median_us, t->energy_per_launch_mj };
    const double s[] = { t->measured_spread_rel, t->energy_spread_rel };
    const char *vn[] = { "measured_median_us", "energy_per_launch_mj" };
    const char *sn[] = { "measured_spread_rel", "energy_spread_rel" };
    for (size_t i = 0; i < KG_ARRAY_LEN(v); i++) {
        if (!isfinite(v[i]) || v[i] < 0)
            return PERR(pc, "field '%s' must be a finite number > 0, got %.17g", vn[i], v[i]);
        if (!isfinite(s[i]) || s[i] < 0 || s[i] > 0.999)
            return PERR(pc, "field '%s' must be in [0, 0.999], got %.17g", sn[i], s[i]);
        if (v[i] == 0 && s[i] > 0)
            return PERR(pc, "field '%s' needs '%s'", sn[i], vn[i]);
    }
    return 0;
}

static int mk_validate(const pctx *pc, const kg_mark *t)
{
    int rc = 0;
    KG_TRY(mk_str(pc, "device_class", t->device_class, true));
    KG_TRY(mk_str(pc, "case", t->case_id, true));
    KG_TRY(mk_case_id(pc, t->case_id));
    KG_TRY(mk_str(pc, "metric", t->metric, true));
    for (const char *p = t->metric; *p; p++)
        if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_'))
            return PERR(pc, "field 'metric' must match [a-z0-9_]+, got '%s'", t->metric);
    if (t->direction != KG_LOWER_IS_BETTER && t->direction != KG_HIGHER_IS_BETTER)
        return PERR(pc, "field 'direction' must be lower_is_better or higher_is_better");
    if (strncmp(t->metric, "time_", 5) == 0 && t->direction != KG_LOWER_IS_BETTER)
        return PERR(pc, "metric '%s' is a time: direction must be lower_is_better", t->metric);
    const double v[] = { t->value, t->run_median, t->ci_lo, t->ci_hi };
    const char *vn[] = { "value", "run_median", "ci_lo", "ci_hi" };
    for (size_t i = 0; i < KG_ARRAY_LEN(v); i++)
        if (!isfinite(v[i]) || !(v[i] > 0))
            return PERR(pc, "field '%s' must be a finite number > 0, got %.17g", vn[i], v[i]);
    if (!isfinite(t->band_rel) || t->band_rel < 0 || t->band_rel > 0.999)
        return PERR(pc, "field 'band_rel' must be in [0, 0.999], got %.17g", t->band_rel);
    if (!(t->ci_lo <= t->run_median && t->run_median <= t->ci_hi))
        return PERR(pc, "fields 'ci_lo' <= 'run_median' <= 'ci_hi' do not hold (%g, %g, %g)",
                    t->ci_lo, t->run_median, t->ci_hi);
    if (t->samples < 1 || t->samples > 2000000000 || t->runs < 0 || t->runs > 2000000000)
        return PERR(pc, "fields 'samples' (>= 1) and 'runs' must be integers up to 2e9");
    if (!isfinite(t->env_lo) || !isfinite(t->env_hi) || t->env_lo < 0 || t->env_hi < 0 ||
        (t->env_lo > 0) != (t->env_hi > 0) || t->env_lo > t->env_hi)
        return PERR(pc, "fields 'env_lo' <= 'env_hi' must both be > 0 or both absent");
    KG_TRY(mk_str(pc, "kernels", t->kernels, false));
    KG_TRY(mk_k_state(pc, t));
    KG_TRY(mk_power_figures(pc, t));
    pctx pp = *pc;
    snprintf(pp.where, sizeof pp.where, "%.560s provenance", pc->where);
    KG_TRY(mk_str(&pp, "commit", t->commit, true));
    KG_TRY(mk_str(&pp, "date", t->date, true));
    if (!iso_utc(t->date))
        return PERR(&pp, "field 'date' must be ISO 8601 UTC like 2026-01-31T12:00:00Z, got '%s'",
                    t->date);
    KG_TRY(mk_str(&pp, "run_id", t->run_id, true));
    KG_TRY(mk_str(&pp, "driver", t->driver, true));
    KG_TRY(mk_str(&pp, "cuda", t->cuda, true));
    KG_TRY(mk_str(&pp, "set_by", t->set_by, true));
cleanup:
    return rc;
}

static void mk_where(pctx *pc, const kg_mark *mk, const char *name)
{
    pc->name = name ? name : "(marks)";
    snprintf(pc->where, sizeof pc->where, "mark (%.150s / %.200s / %.60s)",
             mk->device_class ? mk->device_class : "?", mk->case_id ? mk->case_id : "?",
             mk->metric ? mk->metric : "?");
}

int kg_mark_validate(const kg_mark *mk, const char *name)
{
    pctx pc;
    mk_where(&pc, mk, name);
    return mk_validate(&pc, mk);
}

/* The figures of a mark entry: value, band, the setting run's interval, samples, runs and
 * envelope. */
static int parse_mark_figures(const pctx *pc, const cJSON *e, kg_mark *t)
{
    int rc = 0;
    KG_TRY(get_num(pc, e, "value", true, 0, true, INFINITY, &t->value));
    KG_TRY(get_num(pc, e, "band_rel", true, 0, false, 0.999, &t->band_rel));
    KG_TRY(get_num(pc, e, "run_median", true, 0, true, INFINITY, &t->run_median));
    KG_TRY(get_num(pc, e, "ci_lo", true, 0, true, INFINITY, &t->ci_lo));
    KG_TRY(get_num(pc, e, "ci_hi", true, 0, true, INFINITY, &t->ci_hi));
    if (!(t->ci_lo <= t->run_median && t->run_median <= t->ci_hi))
        return PERR(pc, "fields 'ci_lo' <= 'run_median' <= 'ci_hi' do not hold (%g, %g, %g)",
                    t->ci_lo, t->run_median, t->ci_hi);
    KG_TRY(get_int(pc, e, "samples", true, 1, &t->samples));
    KG_TRY(get_int(pc, e, "runs", false, 1, &t->runs));
    KG_TRY(get_num(pc, e, "env_lo", false, 0, true, INFINITY, &t->env_lo));
    KG_TRY(get_num(pc, e, "env_hi", false, 0, true, INFINITY, &t->env_hi));
    if ((t->env_lo > 0) != (t->env_hi > 0))
        return PERR(pc, "fields 'env_lo' and 'env_hi' come together");
    if (t->env_lo > t->env_hi)
        return PERR(pc, "field 'env_lo' (%g) exceeds 'env_hi' (%g)", t->env_lo, t->env_hi);
    KG_TRY(get_num(pc, e, "measured_median_us", false, 0, true, INFINITY, &t->measured_median_us));
    KG_TRY(get_num(pc, e, "measured_spread_rel", false, 0, false, 0.999, &t->measured_spread_rel));
    KG_TRY(
        get_num(pc, e, "energy_per_launch_mj", false, 0, true, INFINITY, &t->energy_per_launch_mj));
    KG_TRY(get_num(pc, e, "energy_spread_rel", false, 0, false, 0.999, &t->energy_spread_rel));
cleanup:
    return rc;
}

/* Issue #27: the GPU that set the mark and what the class's history taught it (t borrows the
 * strings). */
static int parse_mark_fleet(const pctx *pc, const cJSON *e, kg_mark *t)
{
    int rc = 0;
    const char *uuid = NULL, *serial = NULL;
    KG_TRY(get_str(pc, e, "gpu_uuid", false, &uuid));
    KG_TRY(get_str(pc, e, "gpu_serial", false, &serial));
    KG_TRY(mk_str(pc, "gpu_uuid", uuid, false));
    KG_TRY(mk_str(pc, "gpu_serial", serial, false));
    KG_TRY(get_num(pc, e, "xgpu_spread_rel", false, 0, false, 0.999, &t->xgpu_spread_rel));
    KG_TRY(get_int(pc, e, "xgpu_gpus", false, 2, &t->xgpu_gpus));
    KG_TRY(get_int(pc, e, "history_runs", false, 1, &t->history_runs));
    if (cJSON_HasObjectItem(e, "xgpu_spread_rel") != (t->xgpu_gpus > 0))
        return PERR(pc, "fields 'xgpu_spread_rel' and 'xgpu_gpus' come together");
    t->gpu_uuid = (char *)uuid;
    t->gpu_serial = (char *)serial;
cleanup:
    return rc;
}

/* The provenance object of a mark entry (t borrows its strings). */
static int parse_mark_provenance(const pctx *pc, const cJSON *e, kg_mark *t)
{
    static const char *const pkeys[] = { "commit", "date", "run_id", "driver", "cuda", "set_by" };
    int rc = 0;
    const char *commit, *date, *run_id, *driver, *cuda, *set_by;
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(e, "provenance");
    if (!p)
        return PERR(pc, "missing field 'provenance'");
    if (!cJSON_IsObject(p))
        return PERR(pc, "field 'provenance' must be an object");
    pctx pp = *pc;
    snprintf(pp.where, sizeof pp.where, "%.560s provenance", pc->where);
    KG_TRY(check_keys(&pp, p, pkeys, KG_ARRAY_LEN(pkeys)));
    KG_TRY(get_str(&pp, p, "commit", true, &commit));
    KG_TRY(get_str(&pp, p, "date", true, &date));
    if (!iso_utc(date))
        return PERR(&pp, "field 'date' must be ISO 8601 UTC like 2026-01-31T12:00:00Z, got '%s'",
                    date);
    KG_TRY(get_str(&pp, p, "run_id", true, &run_id));
    KG_TRY(get_str(&pp, p, "driver", true, &driver));
    KG_TRY(get_str(&pp, p, "cuda", true, &cuda));
    KG_TRY(get_str(&pp, p, "set_by", true, &set_by));
    t->commit = (char *)commit;
    t->date = (char *)date;
    t->run_id = (char *)run_id;
    t->driver = (char *)driver;
    t->cuda = (char *)cuda;
    t->set_by = (char *)set_by;
cleanup:
    return rc;
}

static int parse_mark(const pctx *pc, const cJSON *e, kg_mark *mk)
{
    static const char *const keys[] = { "device_class",
                                        "case",
                                        "metric",
                                        "direction",
                                        "value",
                                        "band_rel",
                                        "run_median",
                                        "ci_lo",
                                        "ci_hi",
                                        "samples",
                                        "runs",
                                        "env_lo",
                                        "env_hi",
                                        "kernels",
                                        "k",
                                        "power_state",
                                        "measured_median_us",
                                        "measured_spread_rel",
                                        "energy_per_launch_mj",
                                        "energy_spread_rel",
                                        "provenance",
                                        "gpu_uuid",
                                        "gpu_serial",
                                        "xgpu_spread_rel",
                                        "xgpu_gpus",
                                        "history_runs" };
    int rc = 0;
    const char *dc, *id, *metric, *dir, *kernels, *power_state;
    kg_mark t;
    memset(&t, 0, sizeof t);
    memset(mk, 0, sizeof *mk);
    if (!cJSON_IsObject(e))
        return PERR(pc, "must be an object");
    KG_TRY(check_keys(pc, e, keys, KG_ARRAY_LEN(keys)));
    KG_TRY(get_str(pc, e, "device_class", true, &dc));
    KG_TRY(get_str(pc, e, "case", true, &id));
    KG_TRY(get_str(pc, e, "metric", true, &metric));
    for (const char *p = metric; *p; p++)
        if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_'))
            return PERR(pc, "field 'metric' must match [a-z0-9_]+, got '%s'", metric);
    KG_TRY(get_str(pc, e, "direction", true, &dir));
    if (strcmp(dir, "lower_is_better") == 0)
        t.direction = KG_LOWER_IS_BETTER;
    else if (strcmp(dir, "higher_is_better") == 0)
        t.direction = KG_HIGHER_IS_BETTER;
    else
        return PERR(pc,
                    "field 'direction' must be \"lower_is_better\" or \"higher_is_better\", "
                    "got '%s'",
                    dir);
    if (strncmp(metric, "time_", 5) == 0 && t.direction != KG_LOWER_IS_BETTER)
        return PERR(pc, "metric '%s' is a time: direction must be lower_is_better", metric);
    KG_TRY(parse_mark_figures(pc, e, &t));
    KG_TRY(get_str(pc, e, "kernels", false, &kernels));
    KG_TRY(get_int(pc, e, "k", false, 1, &t.k));
    KG_TRY(get_str(pc, e, "power_state", false, &power_state));
    KG_TRY(parse_mark_provenance(pc, e, &t));
    KG_TRY(parse_mark_fleet(pc, e, &t));
    t.device_class = (char *)dc;
    t.case_id = (char *)id;
    t.metric = (char *)metric;
    t.kernels = (char *)kernels;
    t.power_state = (char *)power_state;
    KG_TRY(mk_validate(pc, &t));
    KG_TRY(copy_mark(mk, &t));
cleanup:
    return rc;
}

/* Bytes first: a BOM or invalid UTF-8 is refused with where it is, so the file is
 * repaired, not silently reinterpreted. */
static int mk_check_bytes(const pctx *pc, const char *text)
{
    size_t bad;
    if (strncmp(text, "\xEF\xBB\xBF", 3) == 0)
        return KG_ERR(KG_EPARSE,
                      "%s: starts with a UTF-8 byte-order mark (bytes 0-2, EF BB BF): "
                      "save it without one",
                      pc->name);
    if ((bad = kg_utf8_bad(text, strlen(text))) != (size_t)-1)
        return KG_ERR(KG_EPARSE,
                      "%s: not valid UTF-8 at byte offset %zu (0x%02x): repair or "
                      "re-save the file as UTF-8",
                      pc->name, bad, (unsigned char)text[bad]);
    return 0;
}

int kg_marks_parse(kg_marks **out, const char *text, const char *name)
{
    static const char *const top_keys[] = { "$schema", "version", "marks" };
    int rc = 0;
    kg_marks *m = NULL;
    cJSON *root = NULL;
    pctx pc = { name ? name : "(marks)", "" };
    *out = NULL;
    KG_TRY(mk_check_bytes(&pc, text));
    KG_TRY(kg_json_parse_strict(&root, text, strlen(text), pc.name));
    if (!cJSON_IsObject(root)) {
        rc = PERR(&pc, "top level must be an object {\"version\": %d, \"marks\": [...]}",
                  KG_MARKS_VERSION);
        goto cleanup;
    }
    KG_TRY(check_keys(&pc, root, top_keys, KG_ARRAY_LEN(top_keys)));
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
    if (!ver) {
        rc = PERR(&pc, "missing field 'version'");
        goto cleanup;
    }
    if (!cJSON_IsNumber(ver) || ver->valuedouble != (double)KG_MARKS_VERSION) {
        char *vs = cJSON_PrintUnformatted(ver);
        rc = PERR(&pc, "unsupported version %s (this kgate reads version %d)", vs ? vs : "?",
                  KG_MARKS_VERSION);
        cJSON_free(vs);
        goto cleanup;
    }
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "marks");
    if (!arr) {
        rc = PERR(&pc, "missing field 'marks'");
        goto cleanup;
    }
    if (!cJSON_IsArray(arr)) {
        rc = PERR(&pc, "field 'marks' must be an array");
        goto cleanup;
    }
    KG_TRY(kg_marks_new(&m));
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr) {
        kg_mark mk;
        const cJSON *dc = cJSON_GetObjectItemCaseSensitive(e, "device_class");
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "case");
        const cJSON *mt = cJSON_GetObjectItemCaseSensitive(e, "metric");
        snprintf(pc.where, sizeof pc.where, "marks[%d] (%.150s / %.200s / %.60s)", i,
                 cJSON_IsString(dc) ? dc->valuestring : "?",
                 cJSON_IsString(id) ? id->valuestring : "?",
                 cJSON_IsString(mt) ? mt->valuestring : "?");
        KG_TRY(parse_mark(&pc, e, &mk));
        ptrdiff_t d = find_index(m, mk.device_class, mk.case_id, mk.metric);
        if (d >= 0) {
            kg_mark_clear(&mk);
            rc = PERR(&pc, "duplicate key (same device_class, case and metric as marks[%td])", d);
            goto cleanup;
        }
        rc = kg_marks_put(m, &mk);
        kg_mark_clear(&mk);
        if (rc < 0)
            goto cleanup;
        i++;
    }
    *out = m;
    m = NULL;
cleanup:
    cJSON_Delete(root);
    kg_marks_free(m);
    return rc;
}

int kg_marks_load(kg_marks **out, const char *path)
{
    int rc = 0;
    char *text = NULL;
    size_t len = 0;
    *out = NULL;
    KG_TRY(kg_file_read_limit(&text, &len, path, KG_INPUT_MAX_BYTES));
    if (strlen(text) != len) {
        rc = KG_ERR(KG_EPARSE, "%s: contains a NUL byte at offset %zu (nothing was changed)", path,
                    strlen(text));
        goto cleanup;
    }
    KG_TRY(kg_marks_parse(out, text, path));
cleanup:
    free(text);
    return rc;
}

/* ---- saving ----------------------------------------------------------------------------- */

static int cmp_mark_ptr(const void *pa, const void *pb)
{
    const kg_mark *a = *(const kg_mark *const *)pa, *b = *(const kg_mark *const *)pb;
    int c = strcmp(a->device_class, b->device_class);
    if (!c)
        c = strcmp(a->case_id, b->case_id);
    if (!c)
        c = strcmp(a->metric, b->metric);
    return c;
}

static const char *or_unknown(const char *s) { return (s && *s) ? s : "unknown"; }

/* One mark as its JSON object, appended to arr (KG_ENOMEM without a message: the caller says). */
static int mk_mark_json(cJSON *arr, const kg_mark *k)
{
    cJSON *o = cJSON_CreateObject(), *p;
    if (!o)
        return KG_ENOMEM;
    cJSON_AddItemToArray(arr, o);
    cJSON_AddStringToObject(o, "device_class", k->device_class);
    cJSON_AddStringToObject(o, "case", k->case_id);
    cJSON_AddStringToObject(o, "metric", k->metric);
    cJSON_AddStringToObject(o, "direction",
                            k->direction == KG_LOWER_IS_BETTER ? "lower_is_better"
                                                               : "higher_is_better");
    cJSON_AddNumberToObject(o, "value", k->value);
    cJSON_AddNumberToObject(o, "band_rel", k->band_rel);
    cJSON_AddNumberToObject(o, "run_median", k->run_median);
    cJSON_AddNumberToObject(o, "ci_lo", k->ci_lo);
    cJSON_AddNumberToObject(o, "ci_hi", k->ci_hi);
    cJSON_AddNumberToObject(o, "samples", k->samples);
    cJSON_AddNumberToObject(o, "runs", k->runs > 0 ? k->runs : 1);
    if (k->env_lo > 0 && k->env_hi > 0) {
        cJSON_AddNumberToObject(o, "env_lo", k->env_lo);
        cJSON_AddNumberToObject(o, "env_hi", k->env_hi);
    }
    if (k->kernels && *k->kernels)
        cJSON_AddStringToObject(o, "kernels", k->kernels);
    if (k->k > 0)
        cJSON_AddNumberToObject(o, "k", k->k);
    if (k->power_state && *k->power_state)
        cJSON_AddStringToObject(o, "power_state", k->power_state);
    if (k->measured_median_us > 0) {
        cJSON_AddNumberToObject(o, "measured_median_us", k->measured_median_us);
        cJSON_AddNumberToObject(o, "measured_spread_rel", k->measured_spread_rel);
    }
    if (k->energy_per_launch_mj > 0) {
        cJSON_AddNumberToObject(o, "energy_per_launch_mj", k->energy_per_launch_mj);
        cJSON_AddNumberToObject(o, "energy_spread_rel", k->energy_spread_rel);
    }
    if (k->gpu_uuid && *k->gpu_uuid)
        cJSON_AddStringToObject(o, "gpu_uuid", k->gpu_uuid);
    if (k->gpu_serial && *k->gpu_serial)
        cJSON_AddStringToObject(o, "gpu_serial", k->gpu_serial);
    if (k->xgpu_gpus >= 2) {
        cJSON_AddNumberToObject(o, "xgpu_spread_rel", k->xgpu_spread_rel);
        cJSON_AddNumberToObject(o, "xgpu_gpus", k->xgpu_gpus);
    }
    if (k->history_runs > 0)
        cJSON_AddNumberToObject(o, "history_runs", k->history_runs);
    if (!(p = cJSON_AddObjectToObject(o, "provenance")))
        return KG_ENOMEM;
    cJSON_AddStringToObject(p, "commit", or_unknown(k->commit));
    cJSON_AddStringToObject(p, "date", or_unknown(k->date));
    cJSON_AddStringToObject(p, "run_id", or_unknown(k->run_id));
    cJSON_AddStringToObject(p, "driver", or_unknown(k->driver));
    cJSON_AddStringToObject(p, "cuda", or_unknown(k->cuda));
    cJSON_AddStringToObject(p, "set_by", or_unknown(k->set_by));
    return 0;
}

int kg_marks_serialize(char **out, const kg_marks *m)
{
    int rc = 0;
    const kg_mark **ord = NULL;
    cJSON *root = cJSON_CreateObject(), *arr = NULL;
    char *text = NULL;
    *out = NULL;
    if (!root)
        goto oom;
    cJSON_AddNumberToObject(root, "version", KG_MARKS_VERSION);
    if (!(arr = cJSON_AddArrayToObject(root, "marks")))
        goto oom;
    size_t n = kg_marks_count(m);
    ord = calloc(n ? n : 1, sizeof *ord);
    if (!ord)
        goto oom;
    for (size_t i = 0; i < n; i++)
        ord[i] = &m->v[i];
    qsort(ord, n, sizeof *ord, cmp_mark_ptr);
    for (size_t i = 0; i < n; i++) {
        if (mk_mark_json(arr, ord[i]) < 0)
            goto oom;
    }
    if (!(text = cJSON_Print(root)))
        goto oom;
    size_t len = strlen(text);
    *out = malloc(len + 2);
    if (!*out)
        goto oom;
    memcpy(*out, text, len);
    (*out)[len] = '\n';
    (*out)[len + 1] = '\0';
    goto cleanup;
oom:
    rc = KG_ERR(KG_ENOMEM, "out of memory serializing marks");
cleanup:
    cJSON_free(text);
    cJSON_Delete(root);
    free(ord);
    return rc;
}

int kg_marks_save(const kg_marks *m, const char *path)
{
    int rc = 0;
    char *text = NULL;
    kg_marks *check = NULL;
    KG_TRY(kg_marks_serialize(&text, m));
    /* Never write a file this kgate would refuse to read back. */
    rc = kg_marks_parse(&check, text, path);
    if (rc < 0) {
        rc = KG_ERR(KG_EINVAL, "refusing to save invalid marks: %s", kg_error_last());
        goto cleanup;
    }
    KG_TRY(kg_file_write_atomic(path, text, strlen(text)));
cleanup:
    kg_marks_free(check);
    free(text);
    return rc;
}

const char *kg_marks_path_default(const char *given)
{
    const char *env = getenv("KGATE_MARKS");
    return given ? given : (env && *env ? env : NULL);
}
