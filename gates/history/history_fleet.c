/* The run history as the fleet's input: see history_fleet.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/report_keys.h"
#include "history/history_fleet.h"

typedef struct {
    const kg_history_rec *r;
    size_t i;
} hf_ix;

static int hf_by_date(const void *a, const void *b)
{
    const hf_ix *x = a, *y = b;
    int c = strcmp(x->r->date, y->r->date);
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

int kg_history_fleet_runs(kg_fleet_run **out, size_t *n, const kg_history_recs *all,
                          const char *device_class, const char *case_id, const char *metric)
{
    size_t k = 0;
    hf_ix *ix = calloc(all->n ? all->n : 1, sizeof *ix);
    *out = NULL;
    *n = 0;
    if (!ix)
        return KG_ERR(KG_ENOMEM, "out of memory reading the history");
    for (size_t i = 0; i < all->n; i++) {
        const kg_history_rec *r = &all->v[i];
        if (strcmp(r->device_class, device_class) == 0 && strcmp(r->case_id, case_id) == 0 &&
            strcmp(r->metric, metric ? metric : "time_us_warm") == 0 &&
            strcmp(r->mode, KG_RV_MODE_PRODUCTION) == 0 &&
            strcmp(r->decision, KG_RV_DEC_REGRESSED) != 0)
            ix[k++] = (hf_ix){ .r = r, .i = i };
    }
    qsort(ix, k, sizeof *ix, hf_by_date);
    kg_fleet_run *runs = calloc(k ? k : 1, sizeof *runs);
    if (!runs) {
        free(ix);
        return KG_ERR(KG_ENOMEM, "out of memory reading the history");
    }
    for (size_t j = 0; j < k; j++)
        runs[j] = (kg_fleet_run){ .gpu = ix[j].r->gpu_uuid, .median = ix[j].r->median };
    free(ix);
    *out = runs;
    *n = k;
    return 0;
}

const char *kg_history_fleet_serial(const kg_history_recs *all, const char *gpu_uuid)
{
    const char *s = "";
    for (size_t i = 0; gpu_uuid && i < all->n; i++)
        if (strcmp(all->v[i].gpu_uuid, gpu_uuid) == 0 && all->v[i].gpu_serial[0])
            s = all->v[i].gpu_serial;
    return s;
}

/* A merged report's part that ran the case: its GPU's UUID and serial. */
static void hf_part(const cJSON *parts, const char *case_id, const char **uuid, const char **serial)
{
    const cJSON *p, *c;
    cJSON_ArrayForEach(p, parts)
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(p, KG_RK_SHARD_CASES))
            if (cJSON_IsString(c) && strcmp(c->valuestring, case_id) == 0) {
                *uuid = cJSON_GetStringValue(
                    cJSON_GetObjectItemCaseSensitive(p, KG_RK_SHARD_PART_DEVICE_UUID));
                *serial = cJSON_GetStringValue(
                    cJSON_GetObjectItemCaseSensitive(p, KG_RK_SHARD_PART_DEVICE_SERIAL));
                return;
            }
}

/* What the history teaches one candidate. */
static int hf_learn(kg_mark *m, const kg_history_recs *hist)
{
    int rc = 0, counted = 0;
    kg_fleet_run *runs = NULL;
    kg_fleet_gpu gpus[64];
    size_t n = 0, ng = 0;
    double cls = 0, spread = -1, *med = NULL;
    double set[3] = { m->env_lo, m->run_median, m->env_hi };
    KG_TRY(kg_history_fleet_runs(&runs, &n, hist, m->device_class, m->case_id, m->metric));
    KG_TRY(kg_fleet_offsets(gpus, &ng, KG_ARRAY_LEN(gpus), &cls, &spread, runs, n));
    for (size_t g = 0; g < ng; g++)
        counted += gpus[g].runs >= KG_FLEET_MIN_RUNS;
    if (spread >= 0) {
        m->xgpu_spread_rel = fmin(spread, 0.999);
        m->xgpu_gpus = counted;
    }
    if (!(med = calloc(n ? n : 1, sizeof *med))) {
        rc = KG_ERR(KG_ENOMEM, "out of memory reading the history");
        goto cleanup;
    }
    for (size_t i = 0; i < n; i++)
        med[i] = runs[i].median;
    double band = kg_fleet_history_band(m->band_rel, m->env_lo > 0 ? set : set + 1,
                                        m->env_lo > 0 ? 3 : 1, med, n);
    if (n >= KG_FLEET_HISTORY_MIN) {
        m->history_runs = (int)(n < KG_FLEET_HISTORY_N ? n : KG_FLEET_HISTORY_N);
        if (band > m->band_rel)
            printf("marks: %s [%s] %s: band +-%.2f%% -> +-%.2f%%, learned from %d production "
                   "run(s) of the class\n",
                   m->case_id, m->device_class, m->metric, 100 * m->band_rel, 100 * band,
                   m->history_runs);
        m->band_rel = band;
    }
cleanup:
    free(med);
    free(runs);
    return rc;
}

static int hf_dup(char **dst, const char *s)
{
    free(*dst);
    *dst = NULL;
    if (s && *s && !(*dst = strdup(s)))
        return KG_ERR(KG_ENOMEM, "out of memory");
    return 0;
}

int kg_history_fleet_apply(kg_advance_input *in, const kg_history_recs *hist, const char *gpu_uuid,
                           const char *gpu_serial, const cJSON *parts)
{
    int rc = 0;
    for (size_t i = 0; i < in->n_cands; i++) {
        kg_mark *m = &in->cands[i].cand;
        const char *u = gpu_uuid, *s = gpu_serial;
        if (parts)
            hf_part(parts, m->case_id, &u, &s);
        KG_TRY(hf_dup(&m->gpu_uuid, u));
        KG_TRY(hf_dup(&m->gpu_serial, s));
        if (hist && hist->n && strncmp(m->metric, "time_", 5) == 0)
            KG_TRY(hf_learn(m, hist));
    }
cleanup:
    return rc;
}

int kg_history_fleet_load(kg_history_recs *out, bool *found, kg_git *g)
{
    const char *b = kg_env(KG_HISTORY_BRANCH_ENV);
    char remote[300];
    int rc;
    memset(out, 0, sizeof *out);
    b = b ? b : KG_HISTORY_BRANCH_DEFAULT;
    snprintf(remote, sizeof remote, "refs/remotes/origin/%s", b);
    rc = kg_history_load(out, g, b);
    if (rc == KG_ENOTFOUND)
        rc = kg_history_load(out, g, remote);
    *found = rc == 0;
    if (rc == KG_ENOTFOUND) {
        printf("marks: no run history (%s): bands from the setting processes alone\n", b);
        rc = 0;
    }
    return rc;
}
