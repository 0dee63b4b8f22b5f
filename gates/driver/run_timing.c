/* Where a run's wall time went: per part (a gate pass, the selftest and its passes) and, from
 * the shared phase page (core/phase.c), per case and kind of phase. Host wall clock: this
 * accounts for the runner's minutes, it is no kernel timing. */
#include <stdio.h>
#include <string.h>
#include "core/report_keys.h"
#include "driver/driver.h"

static kg_run_part *rt_part(kg_run *run, const char *name)
{
    for (size_t i = 0; i < run->n_parts; i++)
        if (strncmp(run->parts[i].name, name, sizeof run->parts[i].name - 1) == 0)
            return &run->parts[i];
    if (run->n_parts == KG_RUN_PARTS_MAX)
        return &run->parts[KG_RUN_PARTS_MAX - 1]; /* bounded: the last part takes the rest */
    kg_run_part *p = &run->parts[run->n_parts++];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    return p;
}

void kg_run_part_begin(kg_run *run, const char *name)
{
    kg_run_part *p = rt_part(run, name);
    p->started_s = kg_now_s();
    run->open_part = (int)(p - run->parts);
}

/* " (what S s" or ", what S s" onto tail at *off, from 5 ms on */
static void rt_item(char *tail, size_t n, size_t *off, const char *what, double s)
{
    if (s >= 0.005 && *off < n)
        *off += (size_t)snprintf(tail + *off, n - *off, "%s%s %.2f s", *off ? ", " : " (", what, s);
}

static void rt_print(const kg_run_part *p, int cases, double wall_s, const double *ph)
{
    char tail[320] = "";
    size_t off = 0;
    for (int k = 0; k < KG_PHASE_N; k++)
        rt_item(tail, sizeof tail, &off, kg_phase_kind_name(k), ph[k]);
    /* the gate's own begin and end: outside every case, and where a gate's fixed cost hides */
    rt_item(tail, sizeof tail, &off, "gate begin", p->begin_s);
    rt_item(tail, sizeof tail, &off, "gate end", p->end_s);
    if (off && off < sizeof tail - 1)
        snprintf(tail + off, sizeof tail - off, ")");
    printf("%s: %d case%s in %.2f s%s\n", p->name, cases, cases == 1 ? "" : "s", wall_s, tail);
}

void kg_run_part_end(kg_run *run)
{
    if (run->open_part < 0 || (size_t)run->open_part >= run->n_parts)
        return;
    kg_run_part *p = &run->parts[run->open_part];
    run->open_part = -1;
    if (p->started_s <= 0)
        return;
    double wall = kg_now_s() - p->started_s;
    p->wall_s += wall;
    p->started_s = 0;
    if (!run->env.quiet)
        rt_print(p, p->cases, p->wall_s, p->phase_s);
}

void kg_run_part_add(kg_run *run, const char *name, double wall_s, int cases)
{
    kg_run_part *p = rt_part(run, name);
    p->wall_s += wall_s > 0 ? wall_s : 0;
    p->cases += cases;
}

void kg_run_part_gate(kg_run *run, double begin_s, double end_s)
{
    if (run->open_part < 0 || (size_t)run->open_part >= run->n_parts)
        return;
    kg_run_part *p = &run->parts[run->open_part];
    p->begin_s += begin_s > 0 ? begin_s : 0;
    p->end_s += end_s > 0 ? end_s : 0;
}

void kg_run_part_case(kg_run *run, const double phase_s[KG_PHASE_N])
{
    if (run->open_part < 0 || (size_t)run->open_part >= run->n_parts)
        return;
    kg_run_part *p = &run->parts[run->open_part];
    p->cases++;
    for (int k = 0; k < KG_PHASE_N; k++)
        p->phase_s[k] += phase_s[k];
}

cJSON *kg_run_timing_json(const kg_run *run)
{
    cJSON *o = cJSON_CreateObject(), *parts = cJSON_CreateArray();
    if (!o || !parts) {
        cJSON_Delete(o);
        cJSON_Delete(parts);
        return NULL;
    }
    double total = run->began_s > 0 ? kg_now_s() - run->began_s : 0;
    cJSON_AddNumberToObject(o, KG_RK_TIMING_TOTAL, kg_report_round_s(total));
    for (size_t i = 0; i < run->n_parts; i++) {
        const kg_run_part *p = &run->parts[i];
        cJSON *e = cJSON_CreateObject();
        if (!e)
            break;
        cJSON_AddStringToObject(e, KG_RK_TIMING_NAME, p->name);
        cJSON_AddNumberToObject(e, KG_RK_TIMING_WALL, kg_report_round_s(p->wall_s));
        cJSON_AddNumberToObject(e, KG_RK_TIMING_CASES, p->cases);
        cJSON_AddItemToObject(e, KG_RK_TIMING_PHASES, kg_report_phase_json(p->phase_s));
        cJSON_AddNumberToObject(e, KG_RK_TIMING_BEGIN, kg_report_round_s(p->begin_s));
        cJSON_AddNumberToObject(e, KG_RK_TIMING_END, kg_report_round_s(p->end_s));
        cJSON_AddItemToArray(parts, e);
    }
    cJSON_AddItemToObject(o, KG_RK_TIMING_PARTS, parts);
    return o;
}
