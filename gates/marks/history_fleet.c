/* The run history as the fleet's input: see history_fleet.h. */
#include <stdlib.h>
#include <string.h>
#include "core/report_keys.h"
#include "marks/history_fleet.h"

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
