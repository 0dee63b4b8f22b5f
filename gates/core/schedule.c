/* The multi-GPU plan: see schedule.h for the rule. */
#include <stdlib.h>
#include <string.h>
#include "core/kg_core.h"
#include "core/schedule.h"

int kg_devices_parse(const char *v, int *devices, size_t *n)
{
    const char *p = v;
    *n = 0;
    while (p && *p) {
        char *e = NULL;
        long d = (*p >= '0' && *p <= '9') ? strtol(p, &e, 10) : -1;
        if (d < 0 || d >= 1024 || !e || (*e && *e != ',') || *n == KG_SCHED_MAX_DEVICES)
            return KG_ERR(KG_EINVAL,
                          "--devices: expected distinct ordinals 0,1,... (at most %d), "
                          "got '%s'",
                          KG_SCHED_MAX_DEVICES, v);
        for (size_t i = 0; i < *n; i++)
            if (devices[i] == (int)d)
                return KG_ERR(KG_EINVAL, "--devices: GPU %ld is listed twice in '%s'", d, v);
        devices[(*n)++] = (int)d;
        p = *e ? e + 1 : e;
        if (*e && !*p)
            return KG_ERR(KG_EINVAL, "--devices: a trailing ',' in '%s'", v);
    }
    if (*n == 0)
        return KG_ERR(KG_EINVAL, "--devices: expected distinct ordinals 0,1,..., got '%s'",
                      v ? v : "");
    return 0;
}

typedef struct {
    size_t c;
    double cost;
    const char *id;
} sc_job;

static int sc_longest(const void *a, const void *b)
{
    const sc_job *x = a, *y = b;
    return x->cost != y->cost ? (x->cost > y->cost ? -1 : 1) : strcmp(x->id, y->id);
}

static void sc_put(kg_sched_plan *p, size_t g, size_t c, int dev, double t0, double t1)
{
    p->tasks[p->n++] = (kg_sched_task){ .gate = g,
                                        .case_ix = c,
                                        .device = dev,
                                        .start_s = t0,
                                        .end_s = t1 };
}

/* A parallel phase: gates [g0, g1) over every case; returns when the last device is free. */
static double sc_parallel(kg_sched_plan *p, size_t g0, size_t g1, const char *const *ids,
                          const double *cost, size_t nc, const int *dev, size_t nd, double t,
                          sc_job *jobs, double *free_at)
{
    double end = t;
    for (size_t c = 0; c < nc; c++) {
        jobs[c] = (sc_job){ .c = c, .cost = 0, .id = ids[c] };
        for (size_t g = g0; g < g1; g++)
            jobs[c].cost += cost[g * nc + c] > 0 ? cost[g * nc + c] : 0;
    }
    qsort(jobs, nc, sizeof *jobs, sc_longest);
    for (size_t d = 0; d < nd; d++)
        free_at[d] = t;
    for (size_t j = 0; j < nc; j++) {
        size_t best = 0;
        for (size_t d = 1; d < nd; d++)
            if (free_at[d] < free_at[best])
                best = d;
        for (size_t g = g0; g < g1; g++) {
            double x = cost[g * nc + jobs[j].c];
            if (x < 0)
                continue;
            sc_put(p, g, jobs[j].c, dev[best], free_at[best], free_at[best] + x);
            free_at[best] += x;
        }
        end = free_at[best] > end ? free_at[best] : end;
    }
    return end;
}

int kg_sched_make(kg_sched_plan *out, const kg_sched_gate *gates, size_t n_gates,
                  const char *const *ids, const double *cost_s, size_t n_cases, const int *devices,
                  size_t n_devices)
{
    int rc = 0;
    double t = 0, *free_at = calloc(n_devices ? n_devices : 1, sizeof *free_at);
    sc_job *jobs = calloc(n_cases ? n_cases : 1, sizeof *jobs);
    memset(out, 0, sizeof *out);
    size_t n_tasks = n_gates * n_cases;
    out->tasks = calloc(n_tasks > 0 ? n_tasks : 1, sizeof *out->tasks);
    if (!free_at || !jobs || !out->tasks) {
        rc = KG_ERR(KG_ENOMEM, "out of memory planning the devices");
        goto cleanup;
    }
    if (n_devices == 0) {
        rc = KG_ERR(KG_EINVAL, "--devices: no device");
        goto cleanup;
    }
    for (size_t g = 0; g < n_gates;) {
        if (gates[g].exclusive) { /* behind the barrier, one case at a time on the first GPU */
            for (size_t c = 0; c < n_cases; c++)
                if (cost_s[g * n_cases + c] >= 0) {
                    sc_put(out, g, c, devices[0], t, t + cost_s[g * n_cases + c]);
                    t += cost_s[g * n_cases + c];
                }
            g++;
            continue;
        }
        size_t g1 = g;
        while (g1 < n_gates && !gates[g1].exclusive)
            g1++;
        t = sc_parallel(out, g, g1, ids, cost_s, n_cases, devices, n_devices, t, jobs, free_at);
        g = g1;
    }
    out->makespan_s = t;
    for (size_t i = 0; i < n_gates * n_cases; i++)
        out->serial_s += cost_s[i] > 0 ? cost_s[i] : 0;
cleanup:
    free(free_at);
    free(jobs);
    if (rc < 0)
        kg_sched_free(out);
    return rc;
}

void kg_sched_free(kg_sched_plan *p)
{
    free(p->tasks);
    memset(p, 0, sizeof *p);
}
