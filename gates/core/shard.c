/* --shard I/N: one CI job runs one part of the selection, and the parts'
 * reports merge into one (`kgate report --merge`, gates/report/merge.c). The CI system's own
 * job matrix is the distributed engine; kgate only splits and merges.
 *
 * The assignment rule (kg_shard_assign, pure): every case's expected seconds are
 * KG_SHARD_CASE_COST_S (what the gates cost a case besides the bench's timed replays) plus the
 * timed seconds of its marks (median x samples x k, the largest over its marks; the caller's
 * weight function); a case without a mark gets the median of the cases that have one (every
 * case the fixed cost when none has). Longest first (ties: the case id, strcmp), each case goes
 * to the shard with the least expected seconds so far (ties: the lowest shard). So the
 * assignment depends on the case list and the marks alone, never on the registration order,
 * the machine or the clock: every job of the matrix computes the same one, and the report
 * records the hash of the whole selection and of the weighted list so the merge can check. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <mbedtls/md.h>
#include "core/kg_core.h"
#include "core/report_keys.h"

typedef struct {
    const char *id;
    double w;
    size_t i;
} sh_item;

static int sh_cmp_id(const void *a, const void *b)
{
    return strcmp(((const sh_item *)a)->id, ((const sh_item *)b)->id);
}

static int sh_cmp_longest(const void *a, const void *b)
{
    const sh_item *x = a, *y = b;
    if (x->w != y->w)
        return x->w > y->w ? -1 : 1;
    return strcmp(x->id, y->id);
}

static int sh_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int kg_shard_parse(const char *v, int *index, int *count)
{
    char *e1 = NULL, *e2 = NULL;
    long i = 0, n = 0;
    if (v && *v >= '0' && *v <= '9')
        i = strtol(v, &e1, 10);
    if (e1 && *e1 == '/' && e1[1] >= '0' && e1[1] <= '9')
        n = strtol(e1 + 1, &e2, 10);
    if (!e2 || *e2 || n < 1 || n > KG_SHARD_MAX || i < 1 || i > n)
        return KG_ERR(KG_EINVAL,
                      "--shard: expected I/N with 1 <= I <= N <= %d (e.g. 2/4), got "
                      "'%s'",
                      KG_SHARD_MAX, v ? v : "");
    *index = (int)i;
    *count = (int)n;
    return 0;
}

int kg_shard_assign(int *shard_of, const char *const *ids, const double *weight_s, size_t n,
                    int count)
{
    int rc = 0;
    sh_item *it = calloc(n ? n : 1, sizeof *it);
    double *known = calloc(n ? n : 1, sizeof *known), *load = calloc((size_t)count, sizeof *load);
    size_t nk = 0;
    if (!it || !known || !load) {
        rc = KG_ERR(KG_ENOMEM, "out of memory assigning shards");
        goto cleanup;
    }
    for (size_t i = 0; i < n; i++)
        if (weight_s && weight_s[i] > 0 && isfinite(weight_s[i]))
            known[nk++] = weight_s[i];
    qsort(known, nk, sizeof *known, sh_cmp_double);
    double fill = nk == 0 ? 0 : nk % 2 ? known[nk / 2] : 0.5 * (known[nk / 2 - 1] + known[nk / 2]);
    for (size_t i = 0; i < n; i++) {
        bool k = weight_s && weight_s[i] > 0 && isfinite(weight_s[i]);
        it[i] = (sh_item){ .id = ids[i],
                           .w = KG_SHARD_CASE_COST_S + (k ? weight_s[i] : fill),
                           .i = i };
    }
    qsort(it, n, sizeof *it, sh_cmp_longest);
    for (size_t j = 0; j < n; j++) {
        int best = 0;
        for (int s = 1; s < count; s++)
            if (load[s] < load[best])
                best = s;
        load[best] += it[j].w;
        shard_of[it[j].i] = best + 1;
    }
cleanup:
    free(it);
    free(known);
    free(load);
    return rc;
}

/* SHA-256 of text as 64 lowercase hex digits. */
static int sh_sha256(char hex[65], const char *text)
{
    unsigned char d[32];
    const mbedtls_md_info_t *md = mbedtls_md_info_from_type(MBEDTLS_MD_SHA256);
    if (!md || mbedtls_md(md, (const unsigned char *)text, strlen(text), d) != 0)
        return KG_ERR(KG_EINTERNAL, "SHA-256 failed");
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    return 0;
}

int kg_shard_hash_ids(char hex[65], const char *const *ids, size_t n)
{
    int rc = 0;
    sh_item *it = calloc(n ? n : 1, sizeof *it);
    size_t len = 1;
    char *text = NULL;
    if (!it)
        return KG_ERR(KG_ENOMEM, "out of memory hashing a selection");
    for (size_t i = 0; i < n; i++) {
        it[i] = (sh_item){ .id = ids[i] };
        len += strlen(ids[i]) + 1;
    }
    qsort(it, n, sizeof *it, sh_cmp_id);
    if (!(text = malloc(len))) {
        rc = KG_ERR(KG_ENOMEM, "out of memory hashing a selection");
        goto cleanup;
    }
    text[0] = '\0';
    for (size_t i = 0, at = 0; i < n; i++)
        at += (size_t)sprintf(text + at, "%s\n", it[i].id);
    KG_TRY(sh_sha256(hex, text));
cleanup:
    free(text);
    free(it);
    return rc;
}

/* The hash of the weighted list the assignment was computed from ("id\tweight\n", by id):
 * shards that weighed the cases differently (other marks) do not merge. */
static int sh_hash_weights(char hex[65], const char *const *ids, const double *w, size_t n)
{
    int rc = 0;
    sh_item *it = calloc(n ? n : 1, sizeof *it);
    char *text = NULL;
    size_t len = 1, at = 0;
    if (!it)
        return KG_ERR(KG_ENOMEM, "out of memory hashing a selection");
    for (size_t i = 0; i < n; i++) {
        it[i] = (sh_item){ .id = ids[i], .w = w[i] > 0 && isfinite(w[i]) ? w[i] : 0 };
        len += strlen(ids[i]) + 32;
    }
    qsort(it, n, sizeof *it, sh_cmp_id);
    if (!(text = malloc(len))) {
        rc = KG_ERR(KG_ENOMEM, "out of memory hashing a selection");
        goto cleanup;
    }
    text[0] = '\0';
    for (size_t i = 0; i < n; i++)
        at += (size_t)snprintf(text + at, len - at, "%s\t%.17g\n", it[i].id, it[i].w);
    KG_TRY(sh_sha256(hex, text));
cleanup:
    free(text);
    free(it);
    return rc;
}

/* report.shard: the part this run is, and what the merge checks the parts against. */
static cJSON *sh_info(const kg_common_opts *o, const char *const *ids, const int *of, size_t n,
                      const char *sel_hash, const char *asg_hash, bool weighted)
{
    cJSON *s = cJSON_CreateObject(), *cases = cJSON_CreateArray();
    cJSON_AddNumberToObject(s, KG_RK_SHARD_INDEX, o->shard_index);
    cJSON_AddNumberToObject(s, KG_RK_SHARD_COUNT, o->shard_count);
    cJSON_AddNumberToObject(s, KG_RK_SHARD_SELECTION_N, (double)n);
    cJSON_AddStringToObject(s, KG_RK_SHARD_SELECTION_HASH, sel_hash);
    cJSON_AddStringToObject(s, KG_RK_SHARD_ASSIGNMENT_HASH, asg_hash);
    cJSON_AddStringToObject(s, KG_RK_SHARD_BALANCE,
                            weighted ? KG_RV_SHARD_BALANCE_MARKS : KG_RV_SHARD_BALANCE_COUNT);
    for (size_t i = 0; i < n; i++)
        if (of[i] == o->shard_index)
            cJSON_AddItemToArray(cases, cJSON_CreateString(ids[i]));
    cJSON_AddItemToObject(s, KG_RK_SHARD_CASES, cases);
    return s;
}

int kg_shard_select(kg_selection *sel, const kg_registry *reg, const kg_common_opts *o,
                    cJSON **info)
{
    int rc = 0;
    size_t n = sel->n, kept = 0;
    const char **ids = calloc(n ? n : 1, sizeof *ids);
    double *w = calloc(n ? n : 1, sizeof *w);
    int *of = calloc(n ? n : 1, sizeof *of);
    char sel_hash[65], asg_hash[65];
    bool weighted = false;
    *info = NULL;
    if (!ids || !w || !of) {
        rc = KG_ERR(KG_ENOMEM, "out of memory assigning shards");
        goto cleanup;
    }
    if (!o->seed_set) {
        rc = KG_ERR(KG_EINVAL,
                    "--shard %d/%d needs an explicit --seed N: every shard must draw "
                    "the same inputs (give all jobs of the matrix one seed)",
                    o->shard_index, o->shard_count);
        goto cleanup;
    }
    if ((size_t)o->shard_count > n) {
        rc = KG_ERR(KG_EINVAL,
                    "--shard %d/%d: %d shards for %zu selected case(s): at most one "
                    "shard per case",
                    o->shard_index, o->shard_count, o->shard_count, n);
        goto cleanup;
    }
    for (size_t i = 0; i < n; i++) {
        ids[i] = kg_registry_get(reg, sel->idx[i])->id;
        w[i] = o->shard_weight ? o->shard_weight(o->shard_ctx, ids[i]) : 0;
        weighted |= w[i] > 0 && isfinite(w[i]);
    }
    KG_TRY(kg_shard_assign(of, ids, w, n, o->shard_count));
    KG_TRY(kg_shard_hash_ids(sel_hash, ids, n));
    KG_TRY(sh_hash_weights(asg_hash, ids, w, n));
    if (!(*info = sh_info(o, ids, of, n, sel_hash, asg_hash, weighted))) {
        rc = KG_ERR(KG_ENOMEM, "out of memory assigning shards");
        goto cleanup;
    }
    for (size_t i = 0; i < n; i++)
        if (of[i] == o->shard_index)
            sel->idx[kept++] = sel->idx[i];
    printf("kgate: shard %d/%d: %zu of %zu selected case(s) (balanced by %s)\n", o->shard_index,
           o->shard_count, kept, n, weighted ? "the marks' expected times" : "case count");
    sel->n = kept;
cleanup:
    free(ids);
    free(w);
    free(of);
    return rc;
}
